//! Every SIMD backend this CPU supports, forced explicitly, against the
//! scalar reference on random inputs: random lengths (including every batch
//! shape boundary), and counters just below 2^32 so that one SIMD batch holds
//! blocks on both sides of the carry into state word 5.
//!
//! Backends the CPU lacks are skipped; run with `-- --nocapture` to see
//! which were compared.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and benches may panic

mod common;

use common::Rng;
use nameway_crypto::forro14::{Forro14, Forro14Backend, Forro14Ietf, XForro14, XForro14Poly1305};
use nameway_crypto::CryptoError;
use proptest::prelude::*;

fn simd_backends() -> Vec<Forro14Backend> {
    let all: Vec<_> = Forro14Backend::ALL
        .into_iter()
        .filter(|b| *b != Forro14Backend::Scalar)
        .collect();
    let (have, lack): (Vec<_>, Vec<_>) = all.into_iter().partition(|b| b.is_available());
    println!("SIMD backends compared with scalar: {have:?}; skipped (CPU lacks them): {lack:?}");
    have
}

/// Lengths that hit every shape of every kernel: 1..=8 blocks (ymm), 9..=16
/// (one zmm batch), 17..=24 (zmm + ymm), 25..=32, 33..=48 and 49..=64 (two,
/// three and four zmm batches), full 64-block passes followed by each tail
/// shape, and partial last blocks around each boundary.
fn interesting_lengths() -> Vec<usize> {
    let mut v: Vec<usize> = (0..=200).collect();
    for blocks in [
        8usize, 16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 112, 128, 136, 192,
    ] {
        for delta in [-65i64, -64, -63, -1, 0, 1, 63, 64, 65] {
            v.push((blocks as i64 * 64 + delta) as usize);
        }
    }
    v.extend([1500, 4096, 8800, 9000]);
    v
}

fn forro_output(
    key: &[u8; 32],
    b: Forro14Backend,
    nonce: &[u8; 8],
    ctr: u64,
    pt: &[u8],
) -> Vec<u8> {
    let mut buf = pt.to_vec();
    Forro14::with_backend(key, b)
        .unwrap()
        .apply_keystream(nonce, ctr, &mut buf)
        .unwrap();
    buf
}

#[test]
fn simd_matches_scalar_on_every_shape_and_around_the_word_5_carry() {
    let backends = simd_backends();
    let mut rng = Rng::new(0x5eed);
    let counters = [
        0u64,
        1,
        u64::from(u32::MAX) - 40,
        u64::from(u32::MAX) - 17,
        u64::from(u32::MAX) - 1,
        u64::from(u32::MAX),
        1 << 32,
        (7 << 32) - 9,
        u64::MAX - 200,
    ];
    for len in interesting_lengths() {
        for &ctr in &counters {
            if u128::from(ctr) + (len as u128).div_ceil(64) > 1 << 64 {
                continue;
            }
            let key: [u8; 32] = rng.bytes(32).try_into().unwrap();
            let nonce: [u8; 8] = rng.bytes(8).try_into().unwrap();
            let pt = rng.bytes(len);
            let expected = forro_output(&key, Forro14Backend::Scalar, &nonce, ctr, &pt);
            for &b in &backends {
                assert_eq!(
                    forro_output(&key, b, &nonce, ctr, &pt),
                    expected,
                    "{b:?} len {len} counter {ctr:#x}"
                );
            }
            // The default (detected, length-tuned) engine agrees too.
            let mut buf = pt.clone();
            Forro14::new(&key)
                .apply_keystream(&nonce, ctr, &mut buf)
                .unwrap();
            assert_eq!(buf, expected, "auto len {len}");
        }
    }
}

#[test]
fn simd_matches_scalar_on_random_inputs() {
    let backends = simd_backends();
    let mut rng = Rng::new(0xfeed);
    for _ in 0..300 {
        let len = rng.below(6000);
        // Half the counters just below the 2^32 carry, half anywhere.
        let ctr = if rng.below(2) == 0 {
            u64::from(u32::MAX) - rng.below(100) as u64
        } else {
            rng.next_u64() >> 1
        };
        let key: [u8; 32] = rng.bytes(32).try_into().unwrap();
        let nonce: [u8; 8] = rng.bytes(8).try_into().unwrap();
        let pt = rng.bytes(len);
        let expected = forro_output(&key, Forro14Backend::Scalar, &nonce, ctr, &pt);
        for &b in &backends {
            assert_eq!(forro_output(&key, b, &nonce, ctr, &pt), expected, "{b:?}");
        }
    }
}

#[test]
fn extensions_agree_across_backends() {
    let backends = simd_backends();
    let mut rng = Rng::new(7);
    for len in [0usize, 1, 63, 64, 65, 1500, 1984, 1985, 2048, 2049, 5000] {
        let key: [u8; 32] = rng.bytes(32).try_into().unwrap();
        let n24: [u8; 24] = rng.bytes(24).try_into().unwrap();
        let n12: [u8; 12] = rng.bytes(12).try_into().unwrap();
        let aad = rng.bytes(13);
        let pt = rng.bytes(len);
        let ietf_ctr = u32::MAX - 200;
        let run = |b: Forro14Backend| {
            let mut ietf = pt.clone();
            Forro14Ietf::with_backend(&key, b)
                .unwrap()
                .apply_keystream(&n12, ietf_ctr, &mut ietf)
                .unwrap();
            let mut x = pt.clone();
            XForro14::with_backend(&key, b)
                .unwrap()
                .apply_keystream(&n24, u64::from(u32::MAX) - 3, &mut x)
                .unwrap();
            let mut sealed = pt.clone();
            let tag = XForro14Poly1305::with_backend(&key, b)
                .unwrap()
                .seal_in_place_detached(&n24, &aad, &mut sealed)
                .unwrap();
            (ietf, x, sealed, tag)
        };
        let expected = run(Forro14Backend::Scalar);
        for &b in &backends {
            assert_eq!(run(b), expected, "{b:?} len {len}");
        }
    }
}

#[test]
fn forcing_a_missing_backend_is_an_error() {
    for b in Forro14Backend::ALL {
        let r = Forro14::with_backend(&[0; 32], b);
        if b.is_available() {
            assert_eq!(r.unwrap().backend(), b);
        } else {
            assert_eq!(r.err(), Some(CryptoError::BackendUnavailable(b)));
        }
    }
    assert!(Forro14Backend::detect().is_available());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn proptest_simd_equals_scalar(
        key in any::<[u8; 32]>(),
        nonce in any::<[u8; 8]>(),
        below_carry in 0u64..64,
        len in 0usize..9000,
        seed in any::<u64>(),
    ) {
        let ctr = u64::from(u32::MAX) - below_carry;
        let pt = Rng::new(seed).bytes(len);
        let expected = forro_output(&key, Forro14Backend::Scalar, &nonce, ctr, &pt);
        for b in Forro14Backend::ALL.into_iter().filter(|b| b.is_available()) {
            prop_assert_eq!(forro_output(&key, b, &nonce, ctr, &pt), expected.clone());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every backend at any byte offset (the kernels load and store unaligned), on
    /// counters near the end of the 64-bit space: a message that fits gives the scalar
    /// output and touches nothing around it; one that would wrap is refused with
    /// `MessageTooLong` and leaves the buffer as it was.
    #[test]
    fn proptest_any_offset_and_the_end_of_the_counter(
        key in any::<[u8; 32]>(),
        nonce in any::<[u8; 8]>(),
        offset in 0usize..64,
        len in 0usize..7000,
        left in 0u64..160,
        seed in any::<u64>(),
    ) {
        let ctr = u64::MAX - left;
        let mut rng = Rng::new(seed);
        let original = rng.bytes(offset + len + 9);
        let fits = (len as u128).div_ceil(64) <= u128::from(left) + 1;
        let expected = fits.then(|| {
            let mut b = original.clone();
            Forro14::with_backend(&key, Forro14Backend::Scalar)
                .unwrap()
                .apply_keystream(&nonce, ctr, &mut b[offset..offset + len])
                .unwrap();
            b
        });
        for b in Forro14Backend::ALL.into_iter().filter(|b| b.is_available()) {
            let mut buf = original.clone();
            let r = Forro14::with_backend(&key, b)
                .unwrap()
                .apply_keystream(&nonce, ctr, &mut buf[offset..offset + len]);
            match &expected {
                Some(want) => {
                    prop_assert!(r.is_ok());
                    prop_assert_eq!(&buf, want, "{:?}", b);
                }
                None => {
                    prop_assert_eq!(r, Err(CryptoError::MessageTooLong));
                    prop_assert_eq!(&buf, &original, "{:?} wrote on refusal", b);
                }
            }
        }
    }
}
