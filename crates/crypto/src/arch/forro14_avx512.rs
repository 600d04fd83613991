//! Forro14 with AVX-512F/VL: one block per 32-bit lane, 16 blocks per zmm.
//!
//! Forro's quarter-rounds form one serial chain per block (spec §6), so a
//! single 16-block batch runs at the latency of that chain (about 15 cycles
//! per quarter-round on Zen 4, `vprold` having a latency of 2) and leaves most
//! execution ports idle. The bulk loop therefore runs two independent 16-block
//! batches per pass, so the out-of-order core overlaps the two chains; the
//! 2 x 16 state words fill the 32 zmm registers and every step (`vpaddd`,
//! `vpxord`, `vprold`) works in place. After the feed-forward a 16 x 16
//! transpose (4 stages of 16 shuffles) turns word-major rows into blocks.
//!
//! The source issues the two batches' quarter-rounds one after the other
//! rather than step by step: on Zen 4 that measured about 8% faster (155 vs
//! 169 cycles per double round for both batches), because the compiler
//! spills less. Tails use the smallest shape that covers them: 8 blocks in a
//! ymm batch (AVX-512VL `vprold` on 256 bits), 16 in one zmm batch, 24 as one
//! zmm plus one ymm batch, 32 as two zmm batches.

use core::arch::x86_64::{
    __m512i, _mm256_add_epi32, _mm256_rol_epi32, _mm256_xor_si256, _mm512_add_epi32,
    _mm512_cmplt_epu32_mask, _mm512_loadu_si512, _mm512_mask_add_epi32, _mm512_rol_epi32,
    _mm512_set1_epi32, _mm512_setr_epi32, _mm512_setzero_si512, _mm512_shuffle_i32x4,
    _mm512_storeu_si512, _mm512_unpackhi_epi32, _mm512_unpackhi_epi64, _mm512_unpacklo_epi32,
    _mm512_unpacklo_epi64, _mm512_xor_si512,
};

use super::forro14_asm::{Batches, MAX_BATCHES};
use super::forro14_avx2 as ymm;
use crate::forro14::{scalar, BLOCK_LEN, DOUBLE_ROUNDS};

/// Blocks per vector.
const LANES: usize = 16;
/// Bytes per 16-block batch.
const BATCH: usize = LANES * BLOCK_LEN;

/// Sixteen vectors: word-major rows before the transpose, blocks after it.
type Rows = [__m512i; 16];

/// One quarter-round on each of the given batches, one batch after the other.
macro_rules! qr {
    ($($x:ident),+ ; $a:literal, $b:literal, $c:literal, $d:literal, $e:literal) => {
        $( qr1!($x; $a, $b, $c, $d, $e); )+
    };
}

/// One quarter-round on one batch.
macro_rules! qr1 {
    ($x:ident ; $a:literal, $b:literal, $c:literal, $d:literal, $e:literal) => {
        $x[$d] = _mm512_add_epi32($x[$d], $x[$e]);
        $x[$c] = _mm512_xor_si512($x[$c], $x[$d]);
        $x[$b] = _mm512_rol_epi32::<10>(_mm512_add_epi32($x[$b], $x[$c]));
        $x[$a] = _mm512_add_epi32($x[$a], $x[$b]);
        $x[$e] = _mm512_xor_si512($x[$e], $x[$a]);
        $x[$d] = _mm512_rol_epi32::<27>(_mm512_add_epi32($x[$d], $x[$e]));
        $x[$c] = _mm512_add_epi32($x[$c], $x[$d]);
        $x[$b] = _mm512_xor_si512($x[$b], $x[$c]);
        $x[$a] = _mm512_rol_epi32::<8>(_mm512_add_epi32($x[$a], $x[$b]));
    };
}

/// One quarter-round on one 8-block ymm batch (AVX-512VL rotates).
macro_rules! qr_ymm {
    ($x:ident ; $a:literal, $b:literal, $c:literal, $d:literal, $e:literal) => {
        $x[$d] = _mm256_add_epi32($x[$d], $x[$e]);
        $x[$c] = _mm256_xor_si256($x[$c], $x[$d]);
        $x[$b] = _mm256_rol_epi32::<10>(_mm256_add_epi32($x[$b], $x[$c]));
        $x[$a] = _mm256_add_epi32($x[$a], $x[$b]);
        $x[$e] = _mm256_xor_si256($x[$e], $x[$a]);
        $x[$d] = _mm256_rol_epi32::<27>(_mm256_add_epi32($x[$d], $x[$e]));
        $x[$c] = _mm256_add_epi32($x[$c], $x[$d]);
        $x[$b] = _mm256_xor_si256($x[$b], $x[$c]);
        $x[$a] = _mm256_rol_epi32::<8>(_mm256_add_epi32($x[$a], $x[$b]));
    };
}

/// One quarter-round on a zmm batch `x` and a ymm batch `y`.
macro_rules! qr_zmm_ymm {
    ($x:ident, $y:ident ; $a:literal, $b:literal, $c:literal, $d:literal, $e:literal) => {
        qr1!($x; $a, $b, $c, $d, $e);
        qr_ymm!($y; $a, $b, $c, $d, $e);
    };
}

/// A message's last bytes after a full pass go to the scalar code up to this length.
const SCALAR_TAIL: usize = 2 * BLOCK_LEN;

/// XORs the keystream for counters `counter, counter + 1, ...` into `buf`.
/// Words 4 and 5 of `state` are replaced by the per-block counter.
#[target_feature(enable = "avx512f,avx512vl")]
pub(super) fn xor_keystream(state: &[u32; 16], counter: u64, buf: &mut [u8]) {
    xor_passes(state, counter, buf, false);
}

/// [`xor_keystream`]; `after_pass` says a pass came just before (for the tail choice).
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn xor_passes(state: &[u32; 16], counter: u64, buf: &mut [u8], after_pass: bool) {
    let mut ctr = counter;
    let mut passes = buf.chunks_exact_mut(MAX_BATCHES * BATCH);
    let mut passed = after_pass;
    for pass in &mut passes {
        xor_full_pass(state, ctr, pass);
        ctr = ctr.wrapping_add((MAX_BATCHES * LANES) as u64);
        passed = true;
    }
    let rest = passes.into_remainder();
    if passed && rest.len() <= SCALAR_TAIL {
        // One or two blocks after a pass: the scalar pair's chain (1-cycle rotates, no
        // transpose) is shorter than a vector pass's.
        scalar::xor_keystream(state, ctr, rest);
    } else if !rest.is_empty() {
        xor_pass(state, ctr, None, rest);
    }
}

/// Keystream block `counter` into `head` and blocks `counter + 1, ...` XORed
/// into `buf`, the first up to 95 of them from the same pass as `head`: an
/// AEAD's one-time-key block then costs no pass of its own.
#[target_feature(enable = "avx512f,avx512vl")]
pub(super) fn head_and_xor_keystream(
    state: &[u32; 16],
    counter: u64,
    head: &mut [u8; BLOCK_LEN],
    buf: &mut [u8],
) {
    let first = buf.len().min(MAX_BATCHES * BATCH - BLOCK_LEN);
    let (now, later) = buf.split_at_mut(first);
    xor_pass(state, counter, Some(head), now);
    if !later.is_empty() {
        xor_keystream(
            state,
            counter.wrapping_add((MAX_BATCHES * LANES) as u64),
            later,
        );
    }
}

/// One pass over up to 96 blocks from counter `ctr`: block `ctr` into `head` if there is
/// one, and the rest XORed into `out` (at most 95 blocks with a head, 96 without). The shape
/// is the smallest that covers the blocks: 8 (ymm), 16, 24 (zmm + ymm), or 2 to 6 zmm
/// batches.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn xor_pass(state: &[u32; 16], ctr: u64, head: Option<&mut [u8; BLOCK_LEN]>, out: &mut [u8]) {
    let skip = usize::from(head.is_some());
    let blocks = skip + out.len().div_ceil(BLOCK_LEN);
    if blocks <= LANES / 2 {
        let y = blocks_ymm(state, ctr);
        if let Some(head) = head {
            ymm::store_first_block(&y, head);
        }
        ymm::xor_blocks(y.get(2 * skip..).unwrap_or_default(), out);
        return;
    }
    if blocks <= LANES + LANES / 2 && blocks > LANES {
        let (x, y) = blocks_zmm_ymm(state, ctr);
        if let Some(head) = head {
            store_first_block(&x, head);
        }
        let (first, second) = out.split_at_mut((BATCH - skip * BLOCK_LEN).min(out.len()));
        xor_blocks(x.get(skip..).unwrap_or_default(), first);
        ymm::xor_blocks(&y, second);
        return;
    }
    match blocks.div_ceil(LANES) {
        1 => {
            let mut x = initial_rows(state, ctr);
            rounds_x1(&mut x);
            finish_batch(&x, state, ctr, head, out);
        }
        2 => zmm_pass::<2>(state, ctr, head, out),
        3 => zmm_pass::<3>(state, ctr, head, out),
        4 => zmm_pass::<4>(state, ctr, head, out),
        5 => zmm_pass::<5>(state, ctr, head, out),
        _ => zmm_pass::<MAX_BATCHES>(state, ctr, head, out),
    }
}

/// `N` zmm batches (2 to 6) from counter `ctr` through the assembly kernel: block `ctr` into
/// `head` if given, the next ones XORed into `out` (at most 16 * N blocks in all).
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn zmm_pass<const N: usize>(
    state: &[u32; 16],
    ctr: u64,
    head: Option<&mut [u8; BLOCK_LEN]>,
    out: &mut [u8],
) {
    let batch_ctr = |k: usize| ctr.wrapping_add((k * LANES) as u64);
    let mut rows = Batches::<N>(core::array::from_fn(|k| initial_rows(state, batch_ctr(k))));
    super::forro14_asm::rounds(&mut rows);
    let mut head = head;
    let mut out = out;
    for (k, x) in rows.0.iter().enumerate() {
        let h = if k == 0 { head.take() } else { None };
        let len = (BATCH - BLOCK_LEN * usize::from(h.is_some())).min(out.len());
        let (now, rest) = core::mem::take(&mut out).split_at_mut(len);
        finish_batch(x, state, batch_ctr(k), h, now);
        out = rest;
    }
}

/// The bulk pass: 96 blocks from counter `ctr` XORed into `out` (exactly 6144 bytes), six
/// batches in the assembly kernel.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn xor_full_pass(state: &[u32; 16], ctr: u64, out: &mut [u8]) {
    let batch_ctr = |k: usize| ctr.wrapping_add((k * LANES) as u64);
    let mut rows =
        Batches::<MAX_BATCHES>(core::array::from_fn(|k| initial_rows(state, batch_ctr(k))));
    super::forro14_asm::rounds(&mut rows);
    for (k, (x, chunk)) in rows.0.iter().zip(out.chunks_exact_mut(BATCH)).enumerate() {
        finish_batch(x, state, batch_ctr(k), None, chunk);
    }
}

/// Feed-forward, transpose and XOR for one batch whose rounds are done: block `ctr` into
/// `head` if given, the following blocks XORed into `out` (at most 16 blocks in all). A
/// whole 16-block `out` is XORed straight from registers.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn finish_batch(
    x: &Rows,
    state: &[u32; 16],
    ctr: u64,
    head: Option<&mut [u8; BLOCK_LEN]>,
    out: &mut [u8],
) {
    let s = initial_rows(state, ctr);
    let mut v = *x;
    for (r, i) in v.iter_mut().zip(s) {
        *r = _mm512_add_epi32(*r, i);
    }
    let ks = transpose(&v);
    let mut ks: &[__m512i] = &ks;
    if let Some(h) = head {
        store_first_block(ks, h);
        ks = ks.get(1..).unwrap_or_default();
    }
    if out.len() == BATCH {
        let p = out.as_mut_ptr().cast::<__m512i>();
        for (j, k) in ks.iter().enumerate() {
            // SAFETY: `out` is BATCH = 16 * 64 bytes and `ks` has at most 16 vectors, so
            // `p + j` is one whole __m512i inside `out`; unaligned load and store.
            unsafe {
                let q = p.add(j);
                _mm512_storeu_si512(q, _mm512_xor_si512(_mm512_loadu_si512(q), *k));
            }
        }
    } else {
        xor_blocks(ks, out);
    }
}

/// Stores the first keystream block of `blocks` into `head`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn store_first_block(blocks: &[__m512i], head: &mut [u8; BLOCK_LEN]) {
    if let Some(b) = blocks.first() {
        // SAFETY: `head` is 64 writable bytes, exactly one __m512i; unaligned store.
        unsafe { _mm512_storeu_si512(head.as_mut_ptr().cast::<__m512i>(), *b) };
    }
}

/// Keystream blocks `ctr .. ctr + 16` (zmm) and `ctr + 16 .. ctr + 24`
/// (ymm), computed together.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn blocks_zmm_ymm(state: &[u32; 16], ctr: u64) -> (Rows, ymm::Rows) {
    let s0 = initial_rows(state, ctr);
    let s1 = ymm::initial_rows(state, ctr.wrapping_add(LANES as u64));
    let mut x = s0;
    let mut y = s1;
    for _ in 0..DOUBLE_ROUNDS {
        forro_double_round!(qr_zmm_ymm; x, y);
    }
    for i in 0..16 {
        x[i] = _mm512_add_epi32(x[i], s0[i]);
        y[i] = _mm256_add_epi32(y[i], s1[i]);
    }
    (transpose(&x), ymm::transpose(&y))
}

/// Keystream blocks `ctr .. ctr + 8` in one ymm batch.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn blocks_ymm(state: &[u32; 16], ctr: u64) -> ymm::Rows {
    let s0 = ymm::initial_rows(state, ctr);
    let mut y = s0;
    for _ in 0..DOUBLE_ROUNDS {
        forro_double_round!(qr_ymm; y);
    }
    for i in 0..16 {
        y[i] = _mm256_add_epi32(y[i], s0[i]);
    }
    ymm::transpose(&y)
}

/// The 14 rounds on one batch (its chain's latency: the tail of a message).
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn rounds_x1(x: &mut Rows) {
    for _ in 0..DOUBLE_ROUNDS {
        forro_double_round!(qr; x);
    }
}

/// Every word broadcast to all lanes, except words 4 and 5, which hold the
/// 64-bit counter `ctr + lane` (low, high) with the carry between them.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn initial_rows(state: &[u32; 16], ctr: u64) -> Rows {
    let mut rows = [_mm512_setzero_si512(); 16];
    for (r, w) in rows.iter_mut().zip(state) {
        *r = _mm512_set1_epi32(*w as i32);
    }
    let iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let lo = _mm512_add_epi32(_mm512_set1_epi32(ctr as u32 as i32), iota);
    // The low word wrapped in exactly the lanes where it ended up below its offset.
    let carry = _mm512_cmplt_epu32_mask(lo, iota);
    let hi = _mm512_set1_epi32((ctr >> 32) as u32 as i32);
    rows[4] = lo;
    rows[5] = _mm512_mask_add_epi32(hi, carry, hi, _mm512_set1_epi32(1));
    rows
}

/// 16 x 16 transpose of 32-bit words: row `i` lane `j` (word `i` of block
/// `j`) becomes vector `j` lane `i`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn transpose(x: &Rows) -> Rows {
    // After the two unpack stages, g[grp][r] holds, in its 128-bit lane L,
    // words 4*grp .. 4*grp + 3 of block 4*L + r.
    let mut g = [[_mm512_setzero_si512(); 4]; 4];
    for (grp, out) in g.iter_mut().enumerate() {
        let [a, b, c, d] = [x[4 * grp], x[4 * grp + 1], x[4 * grp + 2], x[4 * grp + 3]];
        let ab_lo = _mm512_unpacklo_epi32(a, b);
        let ab_hi = _mm512_unpackhi_epi32(a, b);
        let cd_lo = _mm512_unpacklo_epi32(c, d);
        let cd_hi = _mm512_unpackhi_epi32(c, d);
        out[0] = _mm512_unpacklo_epi64(ab_lo, cd_lo);
        out[1] = _mm512_unpackhi_epi64(ab_lo, cd_lo);
        out[2] = _mm512_unpacklo_epi64(ab_hi, cd_hi);
        out[3] = _mm512_unpackhi_epi64(ab_hi, cd_hi);
    }
    // Gather 128-bit lane L of g[0..4][r] into block 4*L + r.
    let mut blocks = [_mm512_setzero_si512(); 16];
    for r in 0..4 {
        let p = _mm512_shuffle_i32x4::<0x88>(g[0][r], g[1][r]);
        let q = _mm512_shuffle_i32x4::<0xdd>(g[0][r], g[1][r]);
        let s = _mm512_shuffle_i32x4::<0x88>(g[2][r], g[3][r]);
        let t = _mm512_shuffle_i32x4::<0xdd>(g[2][r], g[3][r]);
        blocks[r] = _mm512_shuffle_i32x4::<0x88>(p, s);
        blocks[r + 4] = _mm512_shuffle_i32x4::<0x88>(q, t);
        blocks[r + 8] = _mm512_shuffle_i32x4::<0xdd>(p, s);
        blocks[r + 12] = _mm512_shuffle_i32x4::<0xdd>(q, t);
    }
    blocks
}

/// XORs keystream blocks into `out` (at most `blocks.len()` blocks; a partial
/// last block uses a prefix of its keystream block).
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn xor_blocks(blocks: &[__m512i], out: &mut [u8]) {
    let full = out.len() / BLOCK_LEN;
    let mut chunks = out.chunks_exact_mut(BLOCK_LEN);
    for (chunk, ks) in (&mut chunks).zip(blocks) {
        let p = chunk.as_mut_ptr().cast::<__m512i>();
        // SAFETY: `chunk` is 64 writable bytes, exactly one __m512i; the
        // unaligned load and store have no alignment requirement.
        unsafe { _mm512_storeu_si512(p, _mm512_xor_si512(_mm512_loadu_si512(p), *ks)) };
    }
    let tail = chunks.into_remainder();
    if let (false, Some(ks)) = (tail.is_empty(), blocks.get(full)) {
        let mut bytes = [0u8; BLOCK_LEN];
        // SAFETY: `bytes` is 64 writable bytes; unaligned store.
        unsafe { _mm512_storeu_si512(bytes.as_mut_ptr().cast::<__m512i>(), *ks) };
        for (b, k) in tail.iter_mut().zip(bytes) {
            *b ^= k;
        }
        zeroize::Zeroize::zeroize(&mut bytes);
    }
}
