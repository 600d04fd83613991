//! Random numbers for the whole workspace, in one place: the operating system's generator with
//! one fallback, and a small seeded generator for reproducible choices.
//!
//! [`fill`], [`u64()`] and [`u32()`] ask the operating system (`getrandom`). If it fails (no
//! `getrandom` system call, no `/dev/urandom`), std's per-process random hash keys stand in,
//! which come from the same source when it works and from the time and addresses of the
//! process when it does not: never a fixed value, never a panic. That is enough for what they
//! serve (Nonces, sequence numbers, hash seeds, key ids that must not collide); keys are made
//! with `getrandom` directly and fail when it does.
//!
//! [`SplitMix64`] is seeded and fast, for faults in tests and choices a forwarder makes
//! reproducibly from its configured seed; it is not for anything secret.

use core::hash::BuildHasher;
use std::collections::hash_map::RandomState;

/// Fills `buf` with random bytes from the operating system, or from the fallback above.
pub fn fill(buf: &mut [u8]) {
    if getrandom::fill(buf).is_ok() {
        return;
    }
    for chunk in buf.chunks_mut(8) {
        for (b, r) in chunk.iter_mut().zip(fallback().to_le_bytes()) {
            *b = r;
        }
    }
}

/// A random 64-bit number (the operating system's, or the fallback above).
pub fn u64() -> u64 {
    getrandom::u64().unwrap_or_else(|_| fallback())
}

/// A random 32-bit number (the operating system's, or the fallback above).
pub fn u32() -> u32 {
    getrandom::u32().unwrap_or_else(|_| fallback() as u32)
}

/// 64 bits from a fresh set of std's random hash keys (each `RandomState::new` in a thread
/// takes new keys).
fn fallback() -> u64 {
    RandomState::new().hash_one(0x6e61_6d65_7761_7900_u64)
}

/// SplitMix64 (Steele, Lea and Flood, 2014): 64 bits of state, one addition and three
/// multiply-xorshift steps per number. Its sequence is fixed by the seed.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator whose sequence is fixed by `seed`.
    pub const fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// The next 32 random bits (the high half of [`SplitMix64::next_u64`]).
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in `[0, 1)`, with 53 bits of precision.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first outputs for seed 0 of the reference implementation (Vigna's `splitmix64.c`),
    /// so that seeded runs stay what they were.
    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        let mut r = SplitMix64::new(0);
        let got: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        assert_eq!(
            got,
            [
                0xe220_a839_7b1d_cdaf,
                0x6e78_9e6a_a1b9_65f4,
                0x06c4_5d18_8009_454f
            ]
        );
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u32(), 0xe220_a839);
        let x = SplitMix64::new(7).next_f64();
        assert!((0.0..1.0).contains(&x));
    }

    #[test]
    fn splitmix64_is_reproducible() {
        let (mut a, mut b) = (SplitMix64::new(7), SplitMix64::new(7));
        let xs: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        assert_ne!(SplitMix64::new(8).next_u64(), xs[0]);
    }

    #[test]
    fn the_fallback_changes_from_call_to_call() {
        let a: Vec<u64> = (0..4).map(|_| fallback()).collect();
        assert!(a.windows(2).all(|w| w[0] != w[1]), "{a:x?}");
        let mut buf = [0u8; 20];
        fill(&mut buf);
        assert_ne!(buf, [0u8; 20]);
    }
}
