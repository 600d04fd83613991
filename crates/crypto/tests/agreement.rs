//! The AEAD backends agree with independent implementations:
//!
//! * the ring-backed suites (`chacha20-poly1305`, `xchacha20-poly1305`,
//!   `aes-128-gcm`, `aes-256-gcm`) with the RustCrypto crates they replaced,
//!   both ways, over many lengths and associated-data sizes;
//! * `xforro14-poly1305` with its definition (spec §8.4) rebuilt from this
//!   crate's public parts (HForro14, the IETF-layout Forro14) and the
//!   `poly1305` crate, on every backend and across the length where it stops
//!   staging the keystream next to the one-time key;
//! * every AEAD rejects bad nonce and tag lengths without touching the buffer;
//! * where OpenSSL is installed, messages of `libcrypto::LARGE` bytes or more
//!   go through it (the comparisons above then check OpenSSL's output too),
//!   tampering is still caught, and threads sharing one key (which fall back
//!   to the Rust path when the OpenSSL context is busy) all get right output.
//!
//! RFC 8439 and draft-irtf-cfrg-xchacha vectors are in `chacha20_vectors.rs`,
//! tamper rejection in `roundtrip.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and benches may panic

mod common;

use aes_gcm::aead::{AeadInOut, KeyInit};
use aes_gcm::{Aes128Gcm, Aes256Gcm};
use chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};
use common::Rng;
use nameway_crypto::forro14::{hforro14, Forro14Backend, Forro14Ietf, XForro14Poly1305};
use nameway_crypto::{CryptoError, Suite};
use poly1305::universal_hash::UniversalHash;
use poly1305::Poly1305;

fn lengths() -> Vec<usize> {
    let mut v: Vec<usize> = (0..=130).collect();
    v.extend([
        255, 256, 257, 447, 448, 449, 511, 512, 513, 959, 960, 961, 1023, 1024, 1025, 1471, 1472,
        1473, 1500, 1983, 1984, 1985, 2047, 2048, 2049, 4095, 4096, 4097, 8800, 9000, 16384, 65541,
    ]);
    v
}

/// RustCrypto's detached seal: (ciphertext, tag).
fn rustcrypto_seal<A: AeadInOut + KeyInit>(
    key: &[u8],
    nonce: &[u8],
    aad: &[u8],
    pt: &[u8],
) -> (Vec<u8>, Vec<u8>) {
    let aead = A::new_from_slice(key).unwrap();
    let mut buf = pt.to_vec();
    let tag = aead
        .encrypt_inout_detached(nonce.try_into().unwrap(), aad, buf.as_mut_slice().into())
        .unwrap();
    (buf, tag.to_vec())
}

/// RustCrypto's detached open, or `None` if the tag does not match.
fn rustcrypto_open<A: AeadInOut + KeyInit>(
    key: &[u8],
    nonce: &[u8],
    aad: &[u8],
    ct: &[u8],
    tag: &[u8],
) -> Option<Vec<u8>> {
    let aead = A::new_from_slice(key).unwrap();
    let mut buf = ct.to_vec();
    aead.decrypt_inout_detached(
        nonce.try_into().unwrap(),
        aad,
        buf.as_mut_slice().into(),
        tag.try_into().unwrap(),
    )
    .ok()
    .map(|()| buf)
}

type SealFn = fn(&[u8], &[u8], &[u8], &[u8]) -> (Vec<u8>, Vec<u8>);
type OpenFn = fn(&[u8], &[u8], &[u8], &[u8], &[u8]) -> Option<Vec<u8>>;

#[test]
fn ring_suites_agree_with_rustcrypto_both_ways() {
    let cases: [(Suite, SealFn, OpenFn); 4] = [
        (
            Suite::ChaCha20Poly1305,
            rustcrypto_seal::<ChaCha20Poly1305>,
            rustcrypto_open::<ChaCha20Poly1305>,
        ),
        (
            Suite::XChaCha20Poly1305,
            rustcrypto_seal::<XChaCha20Poly1305>,
            rustcrypto_open::<XChaCha20Poly1305>,
        ),
        (
            Suite::Aes128Gcm,
            rustcrypto_seal::<Aes128Gcm>,
            rustcrypto_open::<Aes128Gcm>,
        ),
        (
            Suite::Aes256Gcm,
            rustcrypto_seal::<Aes256Gcm>,
            rustcrypto_open::<Aes256Gcm>,
        ),
    ];
    let mut rng = Rng::new(0x5eed);
    for (suite, seal, open) in cases {
        let key = rng.bytes(suite.key_len());
        let ours = suite.new_cipher(&key).unwrap();
        for (i, len) in lengths().into_iter().enumerate() {
            let mut nonce = rng.bytes(suite.nonce_len());
            // XChaCha20: every other nonce has the secure links' all-zero prefix, whose
            // subkey is derived once per key.
            if suite == Suite::XChaCha20Poly1305 && i % 2 == 0 {
                nonce[..16].fill(0);
            }
            let aad_len = rng.below(40);
            let aad = rng.bytes(aad_len);
            let pt = rng.bytes(len);

            let mut buf = pt.clone();
            let tag = ours.seal_in_place_detached(&nonce, &aad, &mut buf).unwrap();
            let (ct, their_tag) = seal(&key, &nonce, &aad, &pt);
            assert_eq!(buf, ct, "{suite} len {len}: ciphertext");
            assert_eq!(tag.as_bytes(), their_tag, "{suite} len {len}: tag");

            assert_eq!(
                open(&key, &nonce, &aad, &ct, tag.as_bytes()),
                Some(pt.clone()),
                "{suite} len {len}: RustCrypto opens ours"
            );
            let mut buf = ct.clone();
            ours.open_in_place_detached(&nonce, &aad, &mut buf, &their_tag)
                .unwrap();
            assert_eq!(buf, pt, "{suite} len {len}: ours opens RustCrypto's");
        }
    }
}

/// XForro14-Poly1305 from its definition: subkey = HForro14(key, n[0..16]);
/// block 0 of Forro14-IETF(subkey, 0000 || n[16..24]) gives the Poly1305 key,
/// blocks 1.. encrypt; the tag is RFC 8439's over aad and ciphertext.
fn xforro14_poly1305_model(
    key: &[u8; 32],
    nonce: &[u8; 24],
    aad: &[u8],
    pt: &[u8],
) -> (Vec<u8>, [u8; 16]) {
    let subkey = hforro14(key, nonce[..16].try_into().unwrap());
    let mut n12 = [0u8; 12];
    n12[4..].copy_from_slice(&nonce[16..]);
    let inner = Forro14Ietf::with_backend(&subkey, Forro14Backend::Scalar).unwrap();
    let mut ks = vec![0u8; 64 + pt.len()];
    inner.apply_keystream(&n12, 0, &mut ks).unwrap();
    let ct: Vec<u8> = pt.iter().zip(&ks[64..]).map(|(p, k)| p ^ k).collect();

    let mut mac = Poly1305::new(ks[..32].try_into().unwrap());
    mac.update_padded(aad);
    mac.update_padded(&ct);
    let mut lengths = poly1305::Block::default();
    lengths[..8].copy_from_slice(&(aad.len() as u64).to_le_bytes());
    lengths[8..].copy_from_slice(&(ct.len() as u64).to_le_bytes());
    mac.update(&[lengths]);
    (ct, mac.finalize().into())
}

#[test]
fn xforro14_poly1305_matches_its_definition_on_every_backend() {
    let mut rng = Rng::new(0xf0440);
    let key: [u8; 32] = rng.bytes(32).try_into().unwrap();
    let backends: Vec<_> = Forro14Backend::ALL
        .into_iter()
        .filter(|b| b.is_available())
        .collect();
    for (i, len) in lengths().into_iter().enumerate() {
        let mut nonce: [u8; 24] = rng.bytes(24).try_into().unwrap();
        // Every other nonce has an all-zero prefix, a counter in its last 8 bytes (the secure
        // links' layout, whose subkey is computed once per key).
        if i % 2 == 0 {
            nonce[..16].fill(0);
        }
        let aad_len = rng.below(40);
        let aad = rng.bytes(aad_len);
        let pt = rng.bytes(len);
        let (ct, tag) = xforro14_poly1305_model(&key, &nonce, &aad, &pt);
        let aeads = backends
            .iter()
            .map(|&b| XForro14Poly1305::with_backend(&key, b).unwrap())
            .chain([XForro14Poly1305::new(&key)]);
        for aead in aeads {
            let mut buf = pt.clone();
            let got = aead.seal_in_place_detached(&nonce, &aad, &mut buf).unwrap();
            assert_eq!((&buf, got), (&ct, tag), "len {len}, {aead:?}");
            aead.open_in_place_detached(&nonce, &aad, &mut buf, &tag)
                .unwrap();
            assert_eq!(buf, pt, "len {len}, {aead:?}");
        }
    }
}

#[test]
fn bad_nonce_or_tag_lengths_leave_the_buffer_alone() {
    let mut rng = Rng::new(77);
    for suite in Suite::ALL.into_iter().filter(|s| s.authenticates()) {
        let c = suite.new_cipher(&rng.bytes(suite.key_len())).unwrap();
        let nonce = rng.bytes(suite.nonce_len());
        let mut buf = rng.bytes(100);
        let original = buf.clone();
        for bad in [0, suite.nonce_len() - 1, suite.nonce_len() + 1, 12, 24] {
            if bad == suite.nonce_len() {
                continue;
            }
            let expected = CryptoError::NonceLength {
                expected: suite.nonce_len(),
                actual: bad,
            };
            let bad_nonce = vec![1u8; bad];
            assert_eq!(
                c.seal_in_place_detached(&bad_nonce, b"a", &mut buf).err(),
                Some(expected),
                "{suite}"
            );
            assert_eq!(
                c.open_in_place_detached(&bad_nonce, b"a", &mut buf, &[0; 16])
                    .err(),
                Some(expected),
                "{suite}"
            );
            assert_eq!(buf, original, "{suite}: buffer changed");
        }
        for bad in [0, 8, 15, 17, 32] {
            assert_eq!(
                c.open_in_place_detached(&nonce, b"a", &mut buf, &vec![0; bad])
                    .err(),
                Some(CryptoError::TagLength {
                    expected: 16,
                    actual: bad
                }),
                "{suite}"
            );
            assert_eq!(buf, original, "{suite}: buffer changed");
        }
        // A wrong tag of the right length is an authentication failure, and
        // the buffer is zeroed.
        assert_eq!(
            c.open_in_place_detached(&nonce, b"a", &mut buf, &[0; 16]),
            Err(CryptoError::AuthenticationFailed),
            "{suite}"
        );
        assert_eq!(buf, vec![0; 100], "{suite}");
    }
}

/// Whether the `openssl` tool runs here (then its libcrypto is installed).
fn openssl_installed() -> bool {
    std::process::Command::new("openssl")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn long_messages_take_openssl_where_it_is_installed_and_tampering_is_caught() {
    if openssl_installed() {
        let lib = nameway_crypto::libcrypto::load().expect("openssl is installed, libcrypto loads");
        assert!(lib.version().starts_with("OpenSSL 3"), "{lib:?}");
    }
    let mut rng = Rng::new(0x7a4);
    let len = nameway_crypto::libcrypto::LARGE * 2 + 5;
    for suite in [
        Suite::ChaCha20Poly1305,
        Suite::XChaCha20Poly1305,
        Suite::XForro14Poly1305,
    ] {
        let c = suite.new_cipher(&rng.bytes(32)).unwrap();
        for zero_prefix in [false, true] {
            let mut nonce = rng.bytes(suite.nonce_len());
            if zero_prefix && suite.nonce_len() == 24 {
                nonce[..16].fill(0);
            }
            let aad = rng.bytes(21);
            let pt = rng.bytes(len);
            let mut sealed = pt.clone();
            let tag = c.seal_in_place_detached(&nonce, &aad, &mut sealed).unwrap();
            assert_ne!(sealed, pt);
            // One flipped bit anywhere (ciphertext, associated data, tag) is refused and the
            // buffer wiped.
            for (what, bit) in [
                ("ciphertext", 0usize),
                ("ciphertext", len * 8 - 1),
                ("aad", 3),
                ("tag", 100),
            ] {
                let mut buf = sealed.clone();
                let mut a = aad.clone();
                let mut t = tag.as_bytes().to_vec();
                match what {
                    "ciphertext" => buf[bit / 8] ^= 1 << (bit % 8),
                    "aad" => a[bit / 8] ^= 1 << (bit % 8),
                    _ => t[(bit / 8) % 16] ^= 1 << (bit % 8),
                }
                assert_eq!(
                    c.open_in_place_detached(&nonce, &a, &mut buf, &t),
                    Err(CryptoError::AuthenticationFailed),
                    "{suite}: flipped {what} bit {bit}"
                );
                assert!(buf.iter().all(|&b| b == 0), "{suite}: buffer not wiped");
            }
            let mut buf = sealed.clone();
            c.open_in_place_detached(&nonce, &aad, &mut buf, tag.as_bytes())
                .unwrap();
            assert_eq!(buf, pt, "{suite}");
        }
    }
}

#[test]
fn threads_sharing_one_key_all_get_the_right_output() {
    let mut rng = Rng::new(0x7b5);
    let key = rng.bytes(32);
    let c = std::sync::Arc::new(Suite::ChaCha20Poly1305.new_cipher(&key).unwrap());
    let x = std::sync::Arc::new(Suite::XForro14Poly1305.new_cipher(&key).unwrap());
    let handles: Vec<_> = (0..4u8)
        .map(|t| {
            let (c, x, key) = (c.clone(), x.clone(), key.clone());
            std::thread::spawn(move || {
                let mut rng = Rng::new(1000 + u64::from(t));
                let xkey: [u8; 32] = key.clone().try_into().unwrap();
                for _ in 0..150 {
                    let pt = rng.bytes(8800);
                    let nonce = rng.bytes(12);
                    let mut buf = pt.clone();
                    let tag = c.seal_in_place_detached(&nonce, b"ad", &mut buf).unwrap();
                    let (ct, their_tag) =
                        rustcrypto_seal::<ChaCha20Poly1305>(&key, &nonce, b"ad", &pt);
                    assert_eq!((buf, tag.as_bytes().to_vec()), (ct, their_tag));

                    let xnonce: [u8; 24] = rng.bytes(24).try_into().unwrap();
                    let mut buf = pt.clone();
                    let tag = x.seal_in_place_detached(&xnonce, b"ad", &mut buf).unwrap();
                    let (ct, model_tag) = xforro14_poly1305_model(&xkey, &xnonce, b"ad", &pt);
                    assert_eq!((buf, tag.as_bytes()), (ct, &model_tag[..]));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}
