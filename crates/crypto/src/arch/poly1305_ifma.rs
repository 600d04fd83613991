//! Poly1305 blocks with AVX-512 IFMA: eight independent accumulators, one per 64-bit lane.
//!
//! Elements mod p = 2^130 - 5 are three limbs of 44, 44 and 42 bits, so every product of two
//! limbs fits the 52 x 52 -> 104-bit multiply of `vpmadd52luq` / `vpmadd52huq` (low and high
//! 52 bits of the product, added to an accumulator). Lane `j` absorbs blocks `j, j + 8,
//! j + 16, ...` of a run, each group of eight multiplied by r^8; the last group is multiplied
//! by r^8, r^7, ..., r^1 lane by lane instead, so the sum of the lanes is the Poly1305
//! accumulator after the whole run. The caller's accumulator enters in lane 0. Partial
//! reductions keep every limb below 2^52 (bounds on each step below).

use core::arch::x86_64::{
    __m512i, _mm512_add_epi64, _mm512_and_si512, _mm512_loadu_si512, _mm512_madd52hi_epu64,
    _mm512_madd52lo_epu64, _mm512_or_si512, _mm512_permutex2var_epi64, _mm512_reduce_add_epi64,
    _mm512_set1_epi64, _mm512_setr_epi64, _mm512_setzero_si512, _mm512_slli_epi64,
    _mm512_srli_epi64,
};

use crate::mac::powers;

/// Blocks per group (one per lane) and bytes per group.
const LANES: usize = 8;
const GROUP: usize = LANES * 16;
const M44: u64 = (1 << 44) - 1;
const M42: u64 = (1 << 42) - 1;

/// One element per lane in limbs of 44, 44 and 42 bits.
#[derive(Clone, Copy)]
struct Limbs {
    l0: __m512i,
    l1: __m512i,
    l2: __m512i,
}

/// A multiplier per lane: its limbs and 20 times its two upper limbs (2^132 = 20 mod p).
#[derive(Clone, Copy)]
struct Multiplier {
    r: Limbs,
    s1: __m512i,
    s2: __m512i,
}

/// Absorbs the largest multiple of 128 bytes of `data` (at least one group) into `h`
/// (radix 2^64, top word below 8) under the clamped `r`; returns how many bytes it absorbed.
///
/// Two accumulators take the groups in turn (even groups, odd groups), each multiplied by
/// r^16 per step, so two independent chains hide the multiplier's latency. The last group
/// is multiplied by r^8 .. r^1 lane by lane and the one before it by r^16 .. r^9, so the sum
/// of all lanes of both is the Poly1305 accumulator after the run.
#[target_feature(enable = "avx512f,avx512ifma")]
pub(super) fn blocks(h: &mut [u64; 3], r: [u64; 2], data: &[u8]) -> usize {
    let groups = data.len() / GROUP;
    if groups == 0 {
        return 0;
    }
    // r^1 .. r^8 in radix 2^64 (each below 2^131).
    let powers: [[u64; 3]; LANES] = powers(r);
    // Lane j: r^(8 - j), and r^8 in every lane.
    let low = multiplier(limbs(&|lane| powers[LANES - 1 - lane]));
    let r8 = multiplier(limbs(&|_| powers[LANES - 1]));
    // Lane j: r^(16 - j) = r^8 * r^(8 - j), and r^16 in every lane.
    let high = multiplier(mul(low.r, &r8));
    let r16 = multiplier(mul(r8.r, &r8));
    let step = |g: usize| {
        if g + 1 == groups {
            &low
        } else if g + 2 == groups {
            &high
        } else {
            &r16
        }
    };
    let mut acc = [
        limbs(&|lane| if lane == 0 { *h } else { [0; 3] }),
        zero_limbs(),
    ];
    for (g, chunk) in data.chunks_exact(GROUP).enumerate() {
        let a = &mut acc[g % 2];
        *a = mul(add(*a, load_group(chunk)), step(g));
    }
    *h = sum_lanes(add(acc[0], acc[1]));
    groups * GROUP
}

/// Zero in every lane.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn zero_limbs() -> Limbs {
    let z = _mm512_setzero_si512();
    Limbs {
        l0: z,
        l1: z,
        l2: z,
    }
}

/// A multiplier with limbs `r` (each below 2^44 + 2^16, the top one below 2^43).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn multiplier(r: Limbs) -> Multiplier {
    let twenty = |x: __m512i| {
        // 20 * x = 16x + 4x; x < 2^45 so the result is below 2^50.
        _mm512_add_epi64(_mm512_slli_epi64::<4>(x), _mm512_slli_epi64::<2>(x))
    };
    Multiplier {
        s1: twenty(r.l1),
        s2: twenty(r.l2),
        r,
    }
}

/// Limbs whose lane `j` is `value(j)` (radix 2^64, below 2^131).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn limbs(value: &dyn Fn(usize) -> [u64; 3]) -> Limbs {
    let split = |lane: usize| {
        let [a0, a1, a2] = value(lane);
        // l2 < 2^43 for a value below 2^131.
        [
            a0 & M44,
            ((a0 >> 44) | (a1 << 20)) & M44,
            (a1 >> 24) | (a2 << 40),
        ]
    };
    let v: [[u64; 3]; LANES] = core::array::from_fn(split);
    let vec = |k: usize| {
        let w = |lane: usize| v[lane][k] as i64;
        _mm512_setr_epi64(w(0), w(1), w(2), w(3), w(4), w(5), w(6), w(7))
    };
    Limbs {
        l0: vec(0),
        l1: vec(1),
        l2: vec(2),
    }
}

/// Eight message blocks as limbs, lane `j` holding block `j` with its 2^128 bit.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn load_group(chunk: &[u8]) -> Limbs {
    let p = chunk.as_ptr().cast::<__m512i>();
    // SAFETY: `chunk` is exactly 128 bytes (a `chunks_exact(GROUP)` item), two __m512i at `p`
    // and `p + 1`; the loads are unaligned.
    let (a, b) = unsafe { (_mm512_loadu_si512(p), _mm512_loadu_si512(p.add(1))) };
    // a = lo0 hi0 lo1 hi1 lo2 hi2 lo3 hi3, b the same for blocks 4..8.
    let lo = _mm512_permutex2var_epi64(a, _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), b);
    let hi = _mm512_permutex2var_epi64(a, _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15), b);
    let m44 = _mm512_set1_epi64(M44 as i64);
    Limbs {
        l0: _mm512_and_si512(lo, m44),
        l1: _mm512_and_si512(
            _mm512_or_si512(_mm512_srli_epi64::<44>(lo), _mm512_slli_epi64::<20>(hi)),
            m44,
        ),
        // 2^128 is bit 40 of the top limb.
        l2: _mm512_or_si512(_mm512_srli_epi64::<24>(hi), _mm512_set1_epi64(1 << 40)),
    }
}

#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn add(a: Limbs, b: Limbs) -> Limbs {
    Limbs {
        l0: _mm512_add_epi64(a.l0, b.l0),
        l1: _mm512_add_epi64(a.l1, b.l1),
        l2: _mm512_add_epi64(a.l2, b.l2),
    }
}

/// `h * m` per lane, partially reduced: on entry every limb of `h` is below 2^47 (a reduced
/// accumulator, below 2^44 + 2^17, plus a block) and `m`'s limbs are below 2^44 + 2^17
/// (so its `s` below 2^50); on exit l0 < 2^44, l1 < 2^44 + 2^17, l2 < 2^42.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn mul(h: Limbs, m: &Multiplier) -> Limbs {
    let z = _mm512_setzero_si512();
    let Limbs {
        l0: h0,
        l1: h1,
        l2: h2,
    } = h;
    let Limbs {
        l0: r0,
        l1: r1,
        l2: r2,
    } = m.r;
    let (s1, s2) = (m.s1, m.s2);
    // d0 = h0 r0 + h1 s2 + h2 s1, d1 = h0 r1 + h1 r0 + h2 s2, d2 = h0 r2 + h1 r1 + h2 r0.
    // Each product is below 2^47 * 2^50 = 2^97: its low 52 bits (`lo`) and the rest (`hi`,
    // below 2^45, weight 2^52) are summed separately.
    let lo0 = _mm512_madd52lo_epu64(
        _mm512_madd52lo_epu64(_mm512_madd52lo_epu64(z, h0, r0), h1, s2),
        h2,
        s1,
    );
    let hi0 = _mm512_madd52hi_epu64(
        _mm512_madd52hi_epu64(_mm512_madd52hi_epu64(z, h0, r0), h1, s2),
        h2,
        s1,
    );
    let lo1 = _mm512_madd52lo_epu64(
        _mm512_madd52lo_epu64(_mm512_madd52lo_epu64(z, h0, r1), h1, r0),
        h2,
        s2,
    );
    let hi1 = _mm512_madd52hi_epu64(
        _mm512_madd52hi_epu64(_mm512_madd52hi_epu64(z, h0, r1), h1, r0),
        h2,
        s2,
    );
    let lo2 = _mm512_madd52lo_epu64(
        _mm512_madd52lo_epu64(_mm512_madd52lo_epu64(z, h0, r2), h1, r1),
        h2,
        r0,
    );
    let hi2 = _mm512_madd52hi_epu64(
        _mm512_madd52hi_epu64(_mm512_madd52hi_epu64(z, h0, r2), h1, r1),
        h2,
        r0,
    );
    let m44 = _mm512_set1_epi64(M44 as i64);
    let m42 = _mm512_set1_epi64(M42 as i64);
    // lo sums < 3 * 2^52; hi sums < 3 * 2^45, and hi << 8 moves weight 2^52 to the next limb.
    let o0 = _mm512_and_si512(lo0, m44);
    let lo1 = _mm512_add_epi64(
        lo1,
        _mm512_add_epi64(_mm512_srli_epi64::<44>(lo0), _mm512_slli_epi64::<8>(hi0)),
    );
    let o1 = _mm512_and_si512(lo1, m44);
    let lo2 = _mm512_add_epi64(
        lo2,
        _mm512_add_epi64(_mm512_srli_epi64::<44>(lo1), _mm512_slli_epi64::<8>(hi1)),
    );
    let o2 = _mm512_and_si512(lo2, m42);
    // Weight 2^130 and up: lo2's bits from 42, and hi2 (weight 2^140 = 2^130 * 2^10); times 5.
    let c = _mm512_add_epi64(_mm512_srli_epi64::<42>(lo2), _mm512_slli_epi64::<10>(hi2));
    let o0 = _mm512_add_epi64(o0, _mm512_add_epi64(c, _mm512_slli_epi64::<2>(c)));
    // c < 2^58, so o0 < 2^61: one more carry keeps l0 below 2^44.
    let o1 = _mm512_add_epi64(o1, _mm512_srli_epi64::<44>(o0));
    let o0 = _mm512_and_si512(o0, m44);
    Limbs {
        l0: o0,
        l1: o1,
        l2: o2,
    }
}

/// The sum of the eight lanes, carried and folded into radix 2^64 with a top word below 8.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn sum_lanes(acc: Limbs) -> [u64; 3] {
    // Each lane's limbs are below 2^45, so the sums are below 2^48.
    let mut l0 = _mm512_reduce_add_epi64(acc.l0) as u64;
    let mut l1 = _mm512_reduce_add_epi64(acc.l1) as u64;
    let mut l2 = _mm512_reduce_add_epi64(acc.l2) as u64;
    l1 += l0 >> 44;
    l0 &= M44;
    l2 += l1 >> 44;
    l1 &= M44;
    let c = l2 >> 42;
    l2 &= M42;
    l0 += c * 5;
    l1 += l0 >> 44;
    l0 &= M44;
    l2 += l1 >> 44;
    l1 &= M44;
    // l0, l1 < 2^44, l2 < 2^42 + 1: the value is below 2^131.
    // Bits 0..128 (at most 2^128 - 1 with these bounds), then the bits of l2 from 2^128 up.
    let t = u128::from(l0) + (u128::from(l1) << 44) + (u128::from(l2 & ((1 << 40) - 1)) << 88);
    [t as u64, (t >> 64) as u64, l2 >> 40]
}
