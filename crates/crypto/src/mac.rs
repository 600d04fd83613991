//! Poly1305 (RFC 8439 §2.5) for XForro14-Poly1305, written here so a short message's tag
//! costs tens of nanoseconds rather than the `poly1305` crate's set-up and finalisation, and
//! a long one runs on AVX-512 IFMA where the CPU has it.
//!
//! The accumulator is kept in radix 2^64 (three words, the top one a few bits) and multiplied
//! with 64 x 64 -> 128-bit products: `r` is clamped so its high word is a multiple of 4, which
//! lets `h1 * r1 * 2^128` fold into `h1 * (5 * r1 / 4)` (2^130 = 5 mod p). Long runs go to a
//! vector kernel: the eight-lane IFMA one (`arch::poly1305_ifma`) from 256 bytes when the CPU
//! has AVX-512 IFMA, else the four-lane AVX2 one (`arch::poly1305_avx2`) from 640 bytes;
//! everything else, and every other CPU, uses the scalar code below. All give the same tag;
//! the tests compare them with the `poly1305` crate.
//!
//! Every message block here is a full 16-byte block with the 2^128 bit set: the AEAD pads
//! associated data and ciphertext to 16 bytes with zeros (RFC 8439 §2.8), which is all this
//! module is used for.

use zeroize::Zeroize;

/// Without a vector kernel or OpenSSL, messages up to this many bytes are authenticated here;
/// longer ones go to the `poly1305` crate, which is faster once its set-up is repaid (Zen 3,
/// scalar against the crate's AVX2 code: 835 vs 843 ns at 2560 bytes, 992 vs 961 at 3072).
pub(crate) const SCALAR_MAX: usize = 2560;

/// A Poly1305 computation in progress. Key material (`r`, `s`), the accumulator and the
/// final pad are zeroized on drop.
pub(crate) struct Poly1305 {
    /// Clamped `r`, low and high word.
    r: [u64; 2],
    /// The accumulator `h`, radix 2^64; `h[2]` stays below 8.
    h: [u64; 3],
    /// `s` (key bytes 16..32), added at the end.
    pad: [u64; 2],
    /// Bytes of input from which the vector kernel is used (`usize::MAX`: never), from the
    /// CPU's kernels, checked once per message.
    vector_min: usize,
}

impl Poly1305 {
    /// A computation under the one-time key `key` (`r || s`).
    pub(crate) fn new(key: &[u8; 32]) -> Self {
        let w = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(key.get(i..i + 8).unwrap_or(&[0; 8]));
            u64::from_le_bytes(b)
        };
        Self {
            r: [w(0) & 0x0fff_fffc_0fff_ffff, w(8) & 0x0fff_fffc_0fff_fffc],
            h: [0; 3],
            pad: [w(16), w(24)],
            vector_min: crate::arch::poly1305_vector_min().unwrap_or(usize::MAX),
        }
    }

    /// A computation that never uses a vector kernel (for the tests that compare them).
    #[cfg(test)]
    pub(crate) fn new_scalar(key: &[u8; 32]) -> Self {
        let mut p = Self::new(key);
        p.vector_min = usize::MAX;
        p
    }

    /// A computation that uses the vector kernel for every run it can take (one group or
    /// more), so the tests reach it at short lengths too.
    #[cfg(test)]
    pub(crate) fn new_vector(key: &[u8; 32]) -> Self {
        let mut p = Self::new(key);
        p.vector_min = 0;
        p
    }

    /// Absorbs `data` followed by zeros up to a multiple of 16 bytes (RFC 8439's `pad16`).
    pub(crate) fn update_padded(&mut self, data: &[u8]) {
        let mut rest = data;
        if rest.len() >= self.vector_min {
            let done = crate::arch::poly1305_blocks_vector(&mut self.h, self.r, rest);
            rest = rest.get(done..).unwrap_or_default();
        }
        let mut blocks = rest.chunks_exact(16);
        for b in &mut blocks {
            self.block(le64(b, 0), le64(b, 8));
        }
        let tail = blocks.remainder();
        if !tail.is_empty() {
            let mut last = [0u8; 16];
            last.get_mut(..tail.len())
                .unwrap_or_default()
                .copy_from_slice(tail);
            self.block(le64(&last, 0), le64(&last, 8));
            last.zeroize();
        }
    }

    /// Absorbs one full 16-byte block given as two little-endian words.
    pub(crate) fn update_block(&mut self, lo: u64, hi: u64) {
        self.block(lo, hi);
    }

    /// `h = (h + m + 2^128) * r`, partially reduced.
    #[inline(always)]
    fn block(&mut self, m0: u64, m1: u64) {
        self.h = mul_r(add_block(self.h, m0, m1), self.r);
    }

    /// The 16-byte tag: `h` fully reduced mod 2^130 - 5, plus `s`, mod 2^128.
    pub(crate) fn finalize(mut self) -> [u8; 16] {
        let [h0, h1, h2] = self.h;
        // g = h + 5; if g >= 2^130 then h >= p and h - p = g - 2^130.
        let t = u128::from(h0) + 5;
        let g0 = t as u64;
        let t = u128::from(h1) + (t >> 64);
        let g1 = t as u64;
        let g2 = h2.wrapping_add((t >> 64) as u64);
        let use_g = 0u64.wrapping_sub(g2 >> 2); // all ones if g >= 2^130 (constant time)
        let f0 = (h0 & !use_g) | (g0 & use_g);
        let f1 = (h1 & !use_g) | (g1 & use_g);
        let t = u128::from(f0) + u128::from(self.pad[0]);
        let t0 = t as u64;
        let t1 = f1.wrapping_add(self.pad[1]).wrapping_add((t >> 64) as u64);
        let mut tag = [0u8; 16];
        tag[..8].copy_from_slice(&t0.to_le_bytes());
        tag[8..].copy_from_slice(&t1.to_le_bytes());
        self.h.zeroize();
        tag
    }
}

impl Drop for Poly1305 {
    fn drop(&mut self) {
        self.r.zeroize();
        self.h.zeroize();
        self.pad.zeroize();
    }
}

/// `h + m + 2^128` for the block (`m0`, `m1`).
#[inline(always)]
pub(crate) fn add_block(h: [u64; 3], m0: u64, m1: u64) -> [u64; 3] {
    let t = u128::from(h[0]) + u128::from(m0);
    let a0 = t as u64;
    let t = u128::from(h[1]) + u128::from(m1) + (t >> 64);
    let a1 = t as u64;
    let a2 = h[2] + (t >> 64) as u64 + 1;
    [a0, a1, a2]
}

/// `h * r mod 2^130 - 5`, partially reduced: the result is below 2^130 + 2^64 or so (its top
/// word at most 4), and `h[2]` must be below 8 on entry.
#[inline(always)]
pub(crate) fn mul_r(h: [u64; 3], r: [u64; 2]) -> [u64; 3] {
    let [h0, h1, h2] = h;
    let [r0, r1] = r;
    // r1 is a multiple of 4, so h * r1 * 2^128 = h * (r1 / 4) * 2^130 = h * (5 * r1 / 4).
    let s1 = r1 + (r1 >> 2);
    let d0 = u128::from(h0) * u128::from(r0) + u128::from(h1) * u128::from(s1);
    let d1 = u128::from(h0) * u128::from(r1)
        + u128::from(h1) * u128::from(r0)
        + u128::from(h2 * s1)
        + (d0 >> 64);
    let d2 = h2 * r0 + (d1 >> 64) as u64;
    // Bits from 2^130 up fold back multiplied by 5: (d2 >> 2) * 5 = (d2 & !3) + (d2 >> 2).
    let c = (d2 & !3) + (d2 >> 2);
    let t = u128::from(d0 as u64) + u128::from(c);
    let o0 = t as u64;
    let t = u128::from(d1 as u64) + (t >> 64);
    let o1 = t as u64;
    let o2 = (d2 & 3) + (t >> 64) as u64;
    [o0, o1, o2]
}

/// r^1 .. r^N in radix 2^64 for the clamped `r`, each partially reduced by [`mul_r`] (below
/// 2^131): the multipliers the vector kernels build their lanes from.
pub(crate) fn powers<const N: usize>(r: [u64; 2]) -> [[u64; 3]; N] {
    let mut out = [[0u64; 3]; N];
    let mut p = [r[0], r[1], 0];
    for slot in &mut out {
        *slot = p;
        p = mul_r(p, r);
    }
    out
}

/// Little-endian word at `at` of `b` (zero if out of range).
#[inline(always)]
fn le64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        w.copy_from_slice(s);
    }
    u64::from_le_bytes(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use poly1305::universal_hash::{KeyInit, UniversalHash};

    fn reference(key: &[u8; 32], parts: &[&[u8]]) -> [u8; 16] {
        let mut mac = poly1305::Poly1305::new(&poly1305::Key::from(*key));
        for p in parts {
            mac.update_padded(p);
        }
        mac.finalize().into()
    }

    fn ours(key: &[u8; 32], parts: &[&[u8]], vector: bool) -> [u8; 16] {
        let mut mac = if vector {
            Poly1305::new_vector(key)
        } else {
            Poly1305::new_scalar(key)
        };
        for p in parts {
            mac.update_padded(p);
        }
        mac.finalize()
    }

    /// RFC 8439 §2.5.2's example: the message is 34 bytes, so its last block is not padded
    /// with zeros but carries the 2^128 bit after 2 bytes; this module only does padded
    /// blocks, so the check is on a padded reference instead, plus the RFC's key clamping.
    #[test]
    fn clamps_r_as_rfc_8439() {
        let key: [u8; 32] =
            hex::decode("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b")
                .unwrap()
                .try_into()
                .unwrap();
        let p = Poly1305::new(&key);
        // RFC 8439 §2.5.2: clamped r = 806d5400e52447c036d555408bed685.
        assert_eq!(p.r, [0x036d_5554_08be_d685, 0x0806_d540_0e52_447c]);
    }

    #[test]
    fn matches_the_poly1305_crate_at_every_length_and_key() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let data: Vec<u8> = (0..5000).map(|_| next() as u8).collect();
        let mut keys: Vec<[u8; 32]> = vec![[0u8; 32], [0xffu8; 32]];
        for _ in 0..6 {
            keys.push(core::array::from_fn(|_| next() as u8));
        }
        for key in &keys {
            for len in (0..600).chain([1023, 1024, 1025, 1500, 2048, 4095, 4999]) {
                let aad = &data[len % 17..len % 17 + len % 29];
                let msg = &data[..len];
                let want = reference(key, &[aad, msg]);
                assert_eq!(ours(key, &[aad, msg], false), want, "scalar len {len}");
                assert_eq!(ours(key, &[aad, msg], true), want, "vector len {len}");
            }
        }
    }

    /// Accumulator values next to p and to 2^130 exercise the final reduction: all-ones
    /// blocks under the largest clamped r drive h to its limits.
    #[test]
    fn extreme_inputs_match_the_poly1305_crate() {
        let ones = vec![0xffu8; 4096];
        for key in [[0xffu8; 32], {
            let mut k = [0xffu8; 32];
            k[16..].fill(0);
            k
        }] {
            for len in [16usize, 32, 256, 272, 4096] {
                let want = reference(&key, &[&ones[..len]]);
                assert_eq!(ours(&key, &[&ones[..len]], false), want, "len {len}");
                assert_eq!(ours(&key, &[&ones[..len]], true), want, "len {len}");
            }
        }
    }
}
