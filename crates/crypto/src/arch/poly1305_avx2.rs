//! Poly1305 blocks with AVX2: four independent accumulators, one per 64-bit lane.
//!
//! Elements mod p = 2^130 - 5 are five limbs of 26 bits, so every product of two limbs fits
//! the 32 x 32 -> 64-bit multiply of `vpmuludq`, and a sum of five such products (with the
//! reduction factor 5 folded into the multiplier) fits 64 bits. The scheme is the IFMA
//! kernel's (`poly1305_ifma.rs`) with four lanes: lane `j` absorbs every fourth block of a
//! run, the last group of four is multiplied lane by lane by r^4 .. r^1 and the one before it
//! by r^8 .. r^5, the others by r^8 (two accumulators take the groups in turn, so two
//! independent chains hide the multiply's latency), and the sum of all lanes is the Poly1305
//! accumulator after the run. The caller's accumulator enters in lane 0.
//!
//! Bounds: a multiplier's limbs are below 2^27 (its value below 2^131) and its `5 r` below
//! 2^30; an accumulator's limbs leave [`mul`] below 2^26 (l1 below 2^26 + 2^13), so with a
//! block added every limb is below 2^28, each product below 2^58 and each sum of five below
//! 2^61.

use core::arch::x86_64::{
    __m256i, _mm256_add_epi64, _mm256_and_si256, _mm256_loadu_si256, _mm256_mul_epu32,
    _mm256_or_si256, _mm256_set1_epi64x, _mm256_setr_epi64x, _mm256_setzero_si256,
    _mm256_slli_epi64, _mm256_srli_epi64, _mm256_storeu_si256, _mm256_unpackhi_epi64,
    _mm256_unpacklo_epi64,
};

use crate::mac::powers;

/// Blocks per group (one per lane) and bytes per group.
const LANES: usize = 4;
const GROUP: usize = LANES * 16;
const M26: u64 = (1 << 26) - 1;
/// The message block each lane holds after [`load_group`]'s unpacking (blocks 0 and 2 share
/// the low 128 bits of the two lanes' vectors, 1 and 3 the high).
const BLOCK_OF_LANE: [usize; LANES] = [0, 2, 1, 3];

/// One element per lane in five limbs of 26 bits.
#[derive(Clone, Copy)]
struct Limbs([__m256i; 5]);

/// A multiplier per lane: its limbs and 5 times limbs 1..4 (2^130 = 5 mod p).
#[derive(Clone, Copy)]
struct Multiplier {
    r: [__m256i; 5],
    s: [__m256i; 5],
}

/// Absorbs the largest multiple of 64 bytes of `data` (at least one group) into `h` (radix
/// 2^64, top word below 8) under the clamped `r`; returns how many bytes it absorbed.
#[target_feature(enable = "avx2")]
pub(super) fn blocks(h: &mut [u64; 3], r: [u64; 2], data: &[u8]) -> usize {
    let groups = data.len() / GROUP;
    if groups == 0 {
        return 0;
    }
    // r^1 .. r^8 in radix 2^64 (each below 2^131).
    let powers: [[u64; 3]; 2 * LANES] = powers(r);
    let power = |e: usize| powers.get(e.wrapping_sub(1)).copied().unwrap_or_default();
    // Lane L: r^(4 - b) and r^(8 - b) for its block b; r^8 in every lane.
    let low = multiplier(limbs(&|lane| power(LANES - BLOCK_OF_LANE[lane])));
    let high = multiplier(limbs(&|lane| power(2 * LANES - BLOCK_OF_LANE[lane])));
    let r8 = multiplier(limbs(&|_| power(2 * LANES)));
    let step = |g: usize| {
        if g + 1 == groups {
            &low
        } else if g + 2 == groups {
            &high
        } else {
            &r8
        }
    };
    let mut acc = [
        limbs(&|lane| if lane == 0 { *h } else { [0; 3] }),
        Limbs([_mm256_setzero_si256(); 5]),
    ];
    for (g, chunk) in data.chunks_exact(GROUP).enumerate() {
        let a = &mut acc[g % 2];
        *a = mul(add(*a, load_group(chunk)), step(g));
    }
    *h = sum_lanes(add(acc[0], acc[1]));
    groups * GROUP
}

/// A multiplier with limbs `r` (each below 2^27).
#[inline]
#[target_feature(enable = "avx2")]
fn multiplier(r: Limbs) -> Multiplier {
    let mut s = r.0;
    for s in &mut s {
        // 5 * x = 4x + x, below 2^30.
        *s = _mm256_add_epi64(_mm256_slli_epi64::<2>(*s), *s);
    }
    Multiplier { r: r.0, s }
}

/// Limbs whose lane `j` is `value(j)` (radix 2^64, below 2^131).
#[inline]
#[target_feature(enable = "avx2")]
fn limbs(value: &dyn Fn(usize) -> [u64; 3]) -> Limbs {
    let split = |lane: usize| {
        let [a0, a1, a2] = value(lane);
        [
            a0 & M26,
            (a0 >> 26) & M26,
            ((a0 >> 52) | (a1 << 12)) & M26,
            (a1 >> 14) & M26,
            // Below 2^27 for a value below 2^131.
            (a1 >> 40) | (a2 << 24),
        ]
    };
    let v: [[u64; 5]; LANES] = core::array::from_fn(split);
    Limbs(core::array::from_fn(|k| {
        let w = |lane: usize| v[lane][k] as i64;
        _mm256_setr_epi64x(w(0), w(1), w(2), w(3))
    }))
}

/// Four message blocks as limbs with their 2^128 bit, lane `L` holding block
/// `BLOCK_OF_LANE[L]`.
#[inline]
#[target_feature(enable = "avx2")]
fn load_group(chunk: &[u8]) -> Limbs {
    let p = chunk.as_ptr().cast::<__m256i>();
    // SAFETY: `chunk` is exactly 64 bytes (a `chunks_exact(GROUP)` item), two __m256i at `p`
    // and `p + 1`; the loads are unaligned.
    let (a, b) = unsafe { (_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1))) };
    // a = lo0 hi0 lo1 hi1, b = lo2 hi2 lo3 hi3; per 128-bit half the unpacks pair them up.
    let lo = _mm256_unpacklo_epi64(a, b);
    let hi = _mm256_unpackhi_epi64(a, b);
    let m26 = _mm256_set1_epi64x(M26 as i64);
    Limbs([
        _mm256_and_si256(lo, m26),
        _mm256_and_si256(_mm256_srli_epi64::<26>(lo), m26),
        _mm256_and_si256(
            _mm256_or_si256(_mm256_srli_epi64::<52>(lo), _mm256_slli_epi64::<12>(hi)),
            m26,
        ),
        _mm256_and_si256(_mm256_srli_epi64::<14>(hi), m26),
        // 2^128 is bit 24 of the top limb.
        _mm256_or_si256(_mm256_srli_epi64::<40>(hi), _mm256_set1_epi64x(1 << 24)),
    ])
}

#[inline]
#[target_feature(enable = "avx2")]
fn add(a: Limbs, b: Limbs) -> Limbs {
    let mut out = a.0;
    for (o, b) in out.iter_mut().zip(b.0) {
        *o = _mm256_add_epi64(*o, b);
    }
    Limbs(out)
}

/// `h * m` per lane, partially reduced (bounds in the module comment).
#[inline]
#[target_feature(enable = "avx2")]
fn mul(h: Limbs, m: &Multiplier) -> Limbs {
    let [h0, h1, h2, h3, h4] = h.0;
    let [r0, r1, r2, r3, r4] = m.r;
    let [_, s1, s2, s3, s4] = m.s;
    let dot = |terms: [(__m256i, __m256i); 5]| {
        let mut sum = _mm256_setzero_si256();
        for (a, b) in terms {
            sum = _mm256_add_epi64(sum, _mm256_mul_epu32(a, b));
        }
        sum
    };
    let d0 = dot([(h0, r0), (h1, s4), (h2, s3), (h3, s2), (h4, s1)]);
    let d1 = dot([(h0, r1), (h1, r0), (h2, s4), (h3, s3), (h4, s2)]);
    let d2 = dot([(h0, r2), (h1, r1), (h2, r0), (h3, s4), (h4, s3)]);
    let d3 = dot([(h0, r3), (h1, r2), (h2, r1), (h3, r0), (h4, s4)]);
    let d4 = dot([(h0, r4), (h1, r3), (h2, r2), (h3, r1), (h4, r0)]);
    let m26 = _mm256_set1_epi64x(M26 as i64);
    let carry = |from: __m256i, to: __m256i| {
        (
            _mm256_and_si256(from, m26),
            _mm256_add_epi64(to, _mm256_srli_epi64::<26>(from)),
        )
    };
    let (d0, d1) = carry(d0, d1);
    let (d1, d2) = carry(d1, d2);
    let (d2, d3) = carry(d2, d3);
    let (d3, d4) = carry(d3, d4);
    // Weight 2^130 and up, times 5, back into limb 0 (below 2^26 + 2^38), then one more carry.
    let c = _mm256_srli_epi64::<26>(d4);
    let d4 = _mm256_and_si256(d4, m26);
    let d0 = _mm256_add_epi64(d0, _mm256_add_epi64(_mm256_slli_epi64::<2>(c), c));
    let (d0, d1) = carry(d0, d1);
    Limbs([d0, d1, d2, d3, d4])
}

/// The sum of the four lanes, folded into radix 2^64 with a top word below 8.
#[inline]
#[target_feature(enable = "avx2")]
fn sum_lanes(acc: Limbs) -> [u64; 3] {
    // Each lane's limbs are below 2^28, so the sums are below 2^30.
    let mut l = [0u64; 5];
    for (sum, v) in l.iter_mut().zip(acc.0) {
        let mut lanes = [0u64; LANES];
        // SAFETY: `lanes` is 32 writable bytes, one __m256i; the store is unaligned.
        unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast::<__m256i>(), v) };
        *sum = lanes.iter().sum();
    }
    let [l0, l1, l2, l3, l4] = l.map(u128::from);
    let w0 = l0 + (l1 << 26) + (l2 << 52) + (l3 << 78);
    let w1 = (w0 >> 64) + (l4 << 40);
    let (h0, h1, h2) = (w0 as u64, w1 as u64, (w1 >> 64) as u64);
    // h2 < 2^7: fold its bits from 2^130 up (times 5) into the low words.
    let c = h2 >> 2;
    let t = u128::from(h0) + u128::from(c) * 5;
    let t1 = u128::from(h1) + (t >> 64);
    [t as u64, t1 as u64, (h2 & 3) + (t1 >> 64) as u64]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mac::{add_block, mul_r};

    /// The scalar chain over whole 16-byte blocks, the reference for the kernel.
    fn scalar(mut h: [u64; 3], r: [u64; 2], data: &[u8]) -> [u64; 3] {
        for b in data.chunks_exact(16) {
            let w = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
            h = mul_r(add_block(h, w(0), w(8)), r);
        }
        h
    }

    /// The value of `h` mod 2^130 - 5, fully reduced, as (bits 0..128, bits 128..130): the
    /// kernel and the scalar code reduce partially, at different points.
    fn reduced(h: [u64; 3]) -> (u128, u64) {
        let mut x = h;
        for _ in 0..2 {
            let c = x[2] >> 2;
            x[2] &= 3;
            let t = u128::from(x[0]) + u128::from(c) * 5;
            let t1 = u128::from(x[1]) + (t >> 64);
            x = [t as u64, t1 as u64, x[2] + (t1 >> 64) as u64];
        }
        // Now x < 2^130 + 2^64 or so; x >= p iff x + 5 >= 2^130, and then x - p = x + 5 - 2^130.
        let t = u128::from(x[0]) + 5;
        let t1 = u128::from(x[1]) + (t >> 64);
        let top = x[2] + (t1 >> 64) as u64;
        if top >> 2 != 0 {
            (
                u128::from(t as u64) | (u128::from(t1 as u64) << 64),
                top & 3,
            )
        } else {
            (u128::from(x[0]) | (u128::from(x[1]) << 64), x[2])
        }
    }

    #[test]
    fn matches_the_scalar_chain_at_every_group_count() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let clamp = |r: [u64; 2]| [r[0] & 0x0fff_fffc_0fff_ffff, r[1] & 0x0fff_fffc_0fff_fffc];
        let random: Vec<u8> = (0..4096).map(|_| next() as u8).collect();
        let ones = vec![0xffu8; 4096];
        let keys = [
            clamp([u64::MAX, u64::MAX]),
            clamp([1, 0]),
            clamp([next(), next()]),
            clamp([next(), next()]),
        ];
        for r in keys {
            for data in [&random, &ones] {
                for groups in 0..=40 {
                    let len = groups * GROUP + (groups % 3) * 16;
                    let msg = &data[..len];
                    for h0 in [[0u64; 3], [u64::MAX, u64::MAX, 3], [next(), next(), 7]] {
                        let mut h = h0;
                        // SAFETY: AVX2 is present (checked above).
                        let done = unsafe { blocks(&mut h, r, msg) };
                        assert_eq!(done, groups * GROUP, "len {len}");
                        assert!(h[2] < 8, "top word {} after {len} bytes", h[2]);
                        let want = scalar(h0, r, &msg[..done]);
                        assert_eq!(reduced(h), reduced(want), "len {len} r {r:x?} h {h0:x?}");
                    }
                }
            }
        }
    }
}
