//! decrypt(encrypt(x)) == x for every suite over lengths 0..=9000 (dense up
//! to 300, every block boundary of interest, then stepped), and tamper
//! rejection for every AEAD: single-bit flips in ciphertext, tag, nonce and
//! associated data.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and benches may panic

mod common;

use common::Rng;
use nameway_crypto::{CryptoError, PayloadCipher, Suite};

fn lengths() -> Vec<usize> {
    let mut v: Vec<usize> = (0..=300).collect();
    for b in [
        511, 512, 513, 1023, 1024, 1025, 1500, 1535, 1536, 1537, 2047, 2048, 2049,
    ] {
        v.push(b);
    }
    for b in [3071, 3072, 3073, 4095, 4096, 4097, 8800, 8999, 9000] {
        v.push(b);
    }
    v.extend((301..9000).step_by(173));
    v.sort_unstable();
    v.dedup();
    v
}

fn cipher(suite: Suite, rng: &mut Rng) -> Box<dyn PayloadCipher> {
    let mut key = rng.bytes(suite.key_len());
    key[0] |= 0x80; // never the all-zero CPA key
    suite.danger_new_cipher(&key).unwrap()
}

#[test]
fn every_suite_round_trips_every_length() {
    let mut rng = Rng::new(1);
    let aad = b"/example/name/v=1/seg=0";
    for suite in Suite::ALL {
        let c = cipher(suite, &mut rng);
        for len in lengths() {
            let nonce = rng.bytes(suite.nonce_len());
            let pt = rng.bytes(len);
            let mut buf = pt.clone();
            let tag = c.seal_in_place_detached(&nonce, aad, &mut buf).unwrap();
            assert_eq!(tag.len(), suite.tag_len());
            if suite.is_encryption() && len >= 16 {
                assert_ne!(buf, pt, "{suite} len {len} left the payload as it was");
            }
            c.open_in_place_detached(&nonce, aad, &mut buf, tag.as_bytes())
                .unwrap();
            assert_eq!(buf, pt, "{suite} len {len}");
        }
    }
}

#[test]
fn appended_tag_round_trips() {
    let mut rng = Rng::new(2);
    for suite in Suite::ALL {
        let c = cipher(suite, &mut rng);
        for len in [0, 1, 64, 1500] {
            let nonce = rng.bytes(suite.nonce_len());
            let pt = rng.bytes(len);
            let mut buf = pt.clone();
            c.seal_in_place_append(&nonce, b"aad", &mut buf).unwrap();
            assert_eq!(buf.len(), len + suite.tag_len());
            let plain = c.open_in_place_appended(&nonce, b"aad", &mut buf).unwrap();
            assert_eq!(plain, &pt[..], "{suite}");
        }
        if suite.authenticates() {
            let nonce = vec![0; suite.nonce_len()];
            let mut short = [0u8; 15];
            assert_eq!(
                c.open_in_place_appended(&nonce, b"", &mut short).err(),
                Some(CryptoError::Truncated)
            );
        }
    }
}

/// Positions of the bits to flip in a buffer of `len` bytes: all of them
/// for short buffers, otherwise the first and last 64 and 64 random ones.
fn sample_bits(len: usize, rng: &mut Rng) -> Vec<usize> {
    let bits = 8 * len;
    if bits <= 256 {
        return (0..bits).collect();
    }
    let mut v: Vec<usize> = (0..64).chain(bits - 64..bits).collect();
    v.extend((0..64).map(|_| rng.below(bits)));
    v
}

fn flip(buf: &mut [u8], bit: usize) {
    buf[bit / 8] ^= 1 << (bit % 8);
}

#[test]
fn aeads_reject_every_single_bit_flip() {
    let mut rng = Rng::new(3);
    for suite in Suite::ALL.into_iter().filter(|s| s.authenticates()) {
        let c = cipher(suite, &mut rng);
        for len in [0usize, 1, 17, 64, 1500] {
            let nonce = rng.bytes(suite.nonce_len());
            let aad = rng.bytes(21);
            let mut ct = rng.bytes(len);
            let tag = c.seal_in_place_detached(&nonce, &aad, &mut ct).unwrap();
            let tag = tag.as_bytes().to_vec();

            let reject = |nonce: &[u8], aad: &[u8], ct: &[u8], tag: &[u8], what: &str| {
                let mut buf = ct.to_vec();
                assert_eq!(
                    c.open_in_place_detached(nonce, aad, &mut buf, tag),
                    Err(CryptoError::AuthenticationFailed),
                    "{suite} len {len}: flipped {what}"
                );
                // No unauthenticated plaintext is handed back: ring decrypts
                // while it authenticates, so every AEAD zeroes the buffer.
                assert_eq!(
                    buf,
                    vec![0; ct.len()],
                    "{suite}: buffer not zeroed on failure"
                );
            };
            for bit in sample_bits(len, &mut rng) {
                let mut bad = ct.clone();
                flip(&mut bad, bit);
                reject(&nonce, &aad, &bad, &tag, "ciphertext");
            }
            for bit in 0..8 * tag.len() {
                let mut bad = tag.clone();
                flip(&mut bad, bit);
                reject(&nonce, &aad, &ct, &bad, "tag");
            }
            for bit in 0..8 * nonce.len() {
                let mut bad = nonce.clone();
                flip(&mut bad, bit);
                reject(&bad, &aad, &ct, &tag, "nonce");
            }
            for bit in 0..8 * aad.len() {
                let mut bad = aad.clone();
                flip(&mut bad, bit);
                reject(&nonce, &bad, &ct, &tag, "aad");
            }
            // Dropping or adding a byte of AAD also fails.
            reject(&nonce, &aad[1..], &ct, &tag, "aad length");
            // The untouched message still opens.
            let mut buf = ct.clone();
            c.open_in_place_detached(&nonce, &aad, &mut buf, &tag)
                .unwrap();
        }
    }
}
