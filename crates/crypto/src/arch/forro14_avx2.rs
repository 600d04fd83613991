//! Forro14 with AVX2: one block per 32-bit lane, 8 blocks per vector.
//!
//! As in the AVX-512 kernel, independent 8-block batches are interleaved to
//! hide the serial quarter-round chain: up to four per pass (32 blocks), and
//! a message takes as few passes as it can ([`pass_width`]). AVX2 has no vector
//! rotate: rotations by 10 and 27 are two shifts and an OR, the rotation by 8
//! is a byte shuffle. With 16 ymm registers the 32 state words do not all fit,
//! so the compiler keeps the words a quarter-round does not touch on the stack.

use core::arch::x86_64::{
    __m256i, _mm256_add_epi32, _mm256_cmpgt_epi32, _mm256_loadu_si256, _mm256_or_si256,
    _mm256_permute2x128_si256, _mm256_set1_epi32, _mm256_setr_epi32, _mm256_setr_epi8,
    _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_slli_epi32, _mm256_srli_epi32,
    _mm256_storeu_si256, _mm256_sub_epi32, _mm256_unpackhi_epi32, _mm256_unpackhi_epi64,
    _mm256_unpacklo_epi32, _mm256_unpacklo_epi64, _mm256_xor_si256,
};

use zeroize::Zeroize;

use crate::forro14::{scalar, BLOCK_LEN, DOUBLE_ROUNDS};

/// Blocks per vector.
const LANES: usize = 8;
/// Bytes per 8-block batch.
const BATCH: usize = LANES * BLOCK_LEN;
/// Blocks in two batches.
const TWO_BATCHES: usize = 2 * LANES;

/// Sixteen vectors: word-major rows before the transpose; after it, block
/// `j` is vectors `2j` (bytes 0..32) and `2j + 1` (bytes 32..64).
pub(super) type Rows = [__m256i; 16];

#[inline]
#[target_feature(enable = "avx2")]
fn rol10(x: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_slli_epi32::<10>(x), _mm256_srli_epi32::<22>(x))
}

#[inline]
#[target_feature(enable = "avx2")]
fn rol27(x: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_slli_epi32::<27>(x), _mm256_srli_epi32::<5>(x))
}

#[inline]
#[target_feature(enable = "avx2")]
fn rol8(x: __m256i) -> __m256i {
    let m = _mm256_setr_epi8(
        3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10,
        15, 12, 13, 14,
    );
    _mm256_shuffle_epi8(x, m)
}

/// One quarter-round on each of the given batches, one batch after the other, and on the
/// scalar block after `|` if one is given.
macro_rules! qr {
    ($($x:ident),+ $(| $s:ident)? ; $a:literal, $b:literal, $c:literal, $d:literal, $e:literal) => {
        $( qr1!($x; $a, $b, $c, $d, $e); )+
        $( scalar::quarter_round(&mut $s, $a, $b, $c, $d, $e); )?
    };
}

/// One quarter-round on one batch.
macro_rules! qr1 {
    ($x:ident ; $a:literal, $b:literal, $c:literal, $d:literal, $e:literal) => {
        $x[$d] = _mm256_add_epi32($x[$d], $x[$e]);
        $x[$c] = _mm256_xor_si256($x[$c], $x[$d]);
        $x[$b] = rol10(_mm256_add_epi32($x[$b], $x[$c]));
        $x[$a] = _mm256_add_epi32($x[$a], $x[$b]);
        $x[$e] = _mm256_xor_si256($x[$e], $x[$a]);
        $x[$d] = rol27(_mm256_add_epi32($x[$d], $x[$e]));
        $x[$c] = _mm256_add_epi32($x[$c], $x[$d]);
        $x[$b] = _mm256_xor_si256($x[$b], $x[$c]);
        $x[$a] = rol8(_mm256_add_epi32($x[$a], $x[$b]));
    };
}

/// XORs the keystream for counters `counter, counter + 1, ...` into `buf`.
/// Words 4 and 5 of `state` are replaced by the per-block counter.
#[target_feature(enable = "avx2")]
pub(super) fn xor_keystream(state: &[u32; 16], counter: u64, buf: &mut [u8]) {
    let mut ctr = counter;
    // Whole four-batch passes first, leaving two to six batches to the planned passes below.
    let bulk = buf.len().saturating_sub(2 * BATCH) / (4 * BATCH) * (4 * BATCH);
    let (bulk, mut rest) = buf.split_at_mut(bulk);
    for pass in bulk.chunks_exact_mut(4 * BATCH) {
        xor_pass_x4(state, ctr, pass);
        ctr = ctr.wrapping_add(4 * LANES as u64);
    }
    while !rest.is_empty() {
        let width = pass_width(rest.len().div_ceil(BATCH));
        let (now, later) = rest.split_at_mut(rest.len().min(width * BATCH));
        match width {
            0 | 1 => xor_pass_x1(state, ctr, now),
            2 => xor_pass_x2(state, ctr, now),
            3 => xor_pass_x3(state, ctr, now),
            _ => xor_pass_x4(state, ctr, now),
        }
        ctr = ctr.wrapping_add((width * LANES) as u64);
        rest = later;
    }
}

/// How many batches the next pass makes when `batches` are still to make. A pass costs
/// about one quarter-round chain (14 rounds of serial quarter-rounds) however many batches
/// run side by side, up to four, where the core's vector units are full (measured on a
/// Zen 3: 281, 354, 414 and 494 ns for one to four batches; five took 759 ns, with
/// 80 state words for 16 registers). So every message takes as few passes as it can,
/// none wider than four, and a rest of five batches is three and two rather than four and
/// one.
const fn pass_width(batches: usize) -> usize {
    match batches {
        0..=4 => batches,
        5 => 3,
        _ => 4,
    }
}

/// Keystream block `counter` into `head` and blocks `counter + 1, ...` XORed into `buf`: the
/// first pass (as wide as [`pass_width`] makes it for the head and `buf` together) yields
/// both, so an AEAD's one-time-key block costs no chain of its own.
#[target_feature(enable = "avx2")]
pub(super) fn head_and_xor_keystream(
    state: &[u32; 16],
    counter: u64,
    head: &mut [u8; BLOCK_LEN],
    buf: &mut [u8],
) {
    // A message of exactly one or two batches would take one more for the head; the scalar
    // code makes the head inside their pass instead (measured on a Zen 3, 512 and 1,024
    // bytes: 6-12 % less time). Not with three or four batches, whose pass already keeps
    // the core's dispatch busy: there the scalar chain cost as much as the extra batch.
    match buf.len().div_ceil(BLOCK_LEN) {
        LANES => return scalar_head_pass_x1(state, counter, head, buf),
        TWO_BATCHES => return scalar_head_pass_x2(state, counter, head, buf),
        _ => {}
    }
    let width = pass_width((BLOCK_LEN + buf.len()).div_ceil(BATCH));
    let first = buf.len().min(width * BATCH - BLOCK_LEN);
    let (now, later) = buf.split_at_mut(first);
    match width {
        0 | 1 => head_pass_x1(state, counter, head, now),
        2 => head_pass_x2(state, counter, head, now),
        3 => head_pass_x3(state, counter, head, now),
        _ => head_pass_x4(state, counter, head, now),
    }
    if !later.is_empty() {
        xor_keystream(state, counter.wrapping_add((width * LANES) as u64), later);
    }
}

/// Finishes batch `$k` of a pass (`$x`, its rows after the rounds, counters from `$ctr`) into
/// keystream blocks: the feed-forward of the batch's initial rows, then the transpose.
macro_rules! finish {
    ($state:expr, $ctr:expr, $k:expr, $x:expr) => {{
        let x: &Rows = $x;
        let mut y = initial_rows($state, $ctr.wrapping_add(($k * LANES) as u64));
        for (y, x) in y.iter_mut().zip(x) {
            *y = _mm256_add_epi32(*x, *y);
        }
        transpose(&y)
    }};
}

/// Finishes a pass's batches (`$rows`, counters from `$ctr`) and XORs them into `$out` (at
/// most the pass's length; a short `$out` uses a prefix).
macro_rules! xor_rows {
    ($state:expr, $ctr:expr, $rows:expr, $out:expr) => {
        for (k, (x, out)) in $rows.iter().zip($out.chunks_mut(BATCH)).enumerate() {
            xor_batch(&finish!($state, $ctr, k, x), out);
        }
    };
}

/// The state rows of one pass after the rounds: one batch per identifier (counters from
/// `$ctr`, eight per batch), computed side by side; a scalar block given after `|` (a
/// `[u32; 16]` state) gets its rounds in the same loop, quarter-round by quarter-round.
macro_rules! rounds {
    ($state:expr, $ctr:expr; $($x:ident),+ $(| $s:ident)?) => {{
        let mut k = 0u64;
        $(
            let mut $x = initial_rows($state, $ctr.wrapping_add(k * LANES as u64));
            k += 1;
        )+
        let _ = k;
        for _ in 0..DOUBLE_ROUNDS {
            forro_double_round!(qr; $($x),+ $(| $s)?);
        }
        [$($x),+]
    }};
}

/// The pass functions of one width (one batch per identifier): `$xor` XORs the pass's
/// keystream into `out` (at most the pass's length; a short `out` uses a prefix), `$head`
/// puts the pass's first block into `head` and XORs the rest into `out`. Macros rather than
/// functions, so each pass finishes its batches straight into the output: with the rounds
/// and the finishing in separate functions, neither inlined, and the rows took round trips
/// through memory, which cost 15-25 %.
///
/// Four batches are the vector units' limit, not the stores': a double round is 512 vector
/// operations (128 cycles at four per cycle) and the compiler's code for it, which spills and
/// stores 153 vectors, took 148-155 cycles on a Zen 3; a hand-allocated assembly version that
/// stored 112 took the same time (tried in session 15, not kept).
macro_rules! pass_fns {
    ($xor:ident, $head:ident; $($x:ident),+) => {
        #[target_feature(enable = "avx2")]
        fn $xor(state: &[u32; 16], ctr: u64, out: &mut [u8]) {
            xor_rows!(state, ctr, &rounds!(state, ctr; $($x),+), out);
        }

        #[target_feature(enable = "avx2")]
        fn $head(state: &[u32; 16], ctr: u64, head: &mut [u8; BLOCK_LEN], out: &mut [u8]) {
            let rows = rounds!(state, ctr; $($x),+);
            let (in_first, rest) = out.split_at_mut((BATCH - BLOCK_LEN).min(out.len()));
            let mut rest = rest.chunks_mut(BATCH);
            for (k, x) in rows.iter().enumerate() {
                let blocks = finish!(state, ctr, k, x);
                if k == 0 {
                    store_first_block(&blocks, head);
                    xor_blocks(blocks.get(2..).unwrap_or_default(), in_first);
                } else if let Some(out) = rest.next() {
                    xor_batch(&blocks, out);
                }
            }
        }
    };
}

/// `$shead`: the head pass of [`pass_fns`] for a message that fills the pass's batches
/// exactly, where the head would take a batch of its own. The head comes from the scalar
/// code, whose serial chain runs on the integer units inside the rounds of the pass (a Forro
/// block is one chain either way); the pass XORs blocks `ctr + 1, ...` into `out`.
macro_rules! scalar_head_fn {
    ($shead:ident; $($x:ident),+) => {
        #[target_feature(enable = "avx2")]
        fn $shead(state: &[u32; 16], ctr: u64, head: &mut [u8; BLOCK_LEN], out: &mut [u8]) {
            let first = ctr.wrapping_add(1);
            let mut start = *state;
            scalar::set_counter(&mut start, ctr);
            let mut block = start;
            let rows = rounds!(state, first; $($x),+ | block);
            for (w, s) in block.iter_mut().zip(&start) {
                *w = w.wrapping_add(*s);
            }
            *head = scalar::serialize(&block);
            block.zeroize();
            start.zeroize();
            xor_rows!(state, first, &rows, out);
        }
    };
}

pass_fns!(xor_pass_x1, head_pass_x1; x);
pass_fns!(xor_pass_x2, head_pass_x2; x, y);
pass_fns!(xor_pass_x3, head_pass_x3; x, y, z);
pass_fns!(xor_pass_x4, head_pass_x4; x, y, z, w);
scalar_head_fn!(scalar_head_pass_x1; x);
scalar_head_fn!(scalar_head_pass_x2; x, y);

/// XORs one batch of keystream blocks into `out` (a whole batch inline, a shorter `out`
/// through [`xor_blocks`]).
#[inline]
#[target_feature(enable = "avx2")]
fn xor_batch(blocks: &Rows, out: &mut [u8]) {
    if out.len() != BATCH {
        return xor_blocks(blocks, out);
    }
    let p = out.as_mut_ptr().cast::<__m256i>();
    for (i, ks) in blocks.iter().enumerate() {
        // SAFETY: `out` is BATCH = 16 * 32 writable bytes, so `p + i` for i < 16 is in it;
        // unaligned loads and stores.
        unsafe {
            let q = p.add(i);
            _mm256_storeu_si256(q, _mm256_xor_si256(_mm256_loadu_si256(q), *ks));
        }
    }
}

/// Every word broadcast to all lanes, except words 4 and 5, which hold the
/// 64-bit counter `ctr + lane` (low, high) with the carry between them.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn initial_rows(state: &[u32; 16], ctr: u64) -> Rows {
    let mut rows = [_mm256_setzero_si256(); 16];
    for (r, w) in rows.iter_mut().zip(state) {
        *r = _mm256_set1_epi32(*w as i32);
    }
    let iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let lo = _mm256_add_epi32(_mm256_set1_epi32(ctr as u32 as i32), iota);
    // Unsigned `lo < iota` (the low word wrapped) via a biased signed compare;
    // the mask is -1 in those lanes, so subtracting it adds the carry.
    let bias = _mm256_set1_epi32(i32::MIN);
    let carry = _mm256_cmpgt_epi32(_mm256_xor_si256(iota, bias), _mm256_xor_si256(lo, bias));
    rows[4] = lo;
    rows[5] = _mm256_sub_epi32(_mm256_set1_epi32((ctr >> 32) as u32 as i32), carry);
    rows
}

/// Transposes two 8 x 8 halves (words 0..8 and 8..16): afterwards block `j`
/// is vector `2j` (words 0..8) followed by vector `2j + 1` (words 8..16).
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn transpose(x: &Rows) -> Rows {
    let mut blocks = [_mm256_setzero_si256(); 16];
    for half in 0..2 {
        // g[grp][r] holds, in 128-bit lane L, words 8*half + 4*grp .. + 3
        // of block 4*L + r.
        let mut g = [[_mm256_setzero_si256(); 4]; 2];
        for (grp, out) in g.iter_mut().enumerate() {
            let w = 8 * half + 4 * grp;
            let [a, b, c, d] = [x[w], x[w + 1], x[w + 2], x[w + 3]];
            let ab_lo = _mm256_unpacklo_epi32(a, b);
            let ab_hi = _mm256_unpackhi_epi32(a, b);
            let cd_lo = _mm256_unpacklo_epi32(c, d);
            let cd_hi = _mm256_unpackhi_epi32(c, d);
            out[0] = _mm256_unpacklo_epi64(ab_lo, cd_lo);
            out[1] = _mm256_unpackhi_epi64(ab_lo, cd_lo);
            out[2] = _mm256_unpacklo_epi64(ab_hi, cd_hi);
            out[3] = _mm256_unpackhi_epi64(ab_hi, cd_hi);
        }
        for r in 0..4 {
            blocks[2 * r + half] = _mm256_permute2x128_si256::<0x20>(g[0][r], g[1][r]);
            blocks[2 * (r + 4) + half] = _mm256_permute2x128_si256::<0x31>(g[0][r], g[1][r]);
        }
    }
    blocks
}

/// Stores the first keystream block of `blocks` (vectors 0 and 1) into `head`.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn store_first_block(blocks: &Rows, head: &mut [u8; BLOCK_LEN]) {
    let p = head.as_mut_ptr().cast::<__m256i>();
    // SAFETY: `head` is 64 writable bytes, two __m256i; unaligned stores.
    unsafe {
        _mm256_storeu_si256(p, blocks[0]);
        _mm256_storeu_si256(p.add(1), blocks[1]);
    }
}

/// XORs keystream blocks (two vectors each) into `out` (at most
/// `blocks.len() / 2` blocks; a partial last block uses a prefix of its
/// keystream block).
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn xor_blocks(blocks: &[__m256i], out: &mut [u8]) {
    let full = out.len() / BLOCK_LEN;
    let mut chunks = out.chunks_exact_mut(BLOCK_LEN);
    for (chunk, ks) in (&mut chunks).zip(blocks.chunks_exact(2)) {
        let p = chunk.as_mut_ptr().cast::<__m256i>();
        // SAFETY: `chunk` is 64 writable bytes, exactly two __m256i at `p`
        // and `p + 1`; unaligned loads and stores.
        unsafe {
            _mm256_storeu_si256(p, _mm256_xor_si256(_mm256_loadu_si256(p), ks[0]));
            let p1 = p.add(1);
            _mm256_storeu_si256(p1, _mm256_xor_si256(_mm256_loadu_si256(p1), ks[1]));
        }
    }
    let tail = chunks.into_remainder();
    if let (false, Some(ks)) = (tail.is_empty(), blocks.chunks_exact(2).nth(full)) {
        let mut bytes = [0u8; BLOCK_LEN];
        let p = bytes.as_mut_ptr().cast::<__m256i>();
        // SAFETY: `bytes` is 64 writable bytes, two __m256i; unaligned stores.
        unsafe {
            _mm256_storeu_si256(p, ks[0]);
            _mm256_storeu_si256(p.add(1), ks[1]);
        }
        for (b, k) in tail.iter_mut().zip(bytes) {
            *b ^= k;
        }
        bytes.zeroize();
    }
}
