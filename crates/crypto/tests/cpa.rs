//! CPA (`docs/cpa.md`): the worked examples of §2, round trips for
//! several codeword sizes, the §1.3 edge rules, and the known-plaintext key
//! recovery of §3, kept as a test so CPA stays documented as broken.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and benches may panic

mod common;

use common::Rng;
use nameway_crypto::cpa::{Cpa, CpaParams};
use nameway_crypto::{CryptoError, Suite};

fn check(cpa: &Cpa, pt: &[u8], ct: &[u8]) {
    let mut buf = pt.to_vec();
    cpa.encrypt(&mut buf);
    assert_eq!(hex::encode(&buf), hex::encode(ct));
    cpa.decrypt(&mut buf);
    assert_eq!(buf, pt);
}

#[test]
fn example_1_bytes_key_1011001() {
    let cpa = Cpa::danger_new(&[0xb2], 8, 8).unwrap();
    check(&cpa, b"ABCDEFGH", b"HAGFBCED");
    assert_eq!(hex::encode(b"HAGFBCED"), "4841474642434544");
}

#[test]
fn example_2_edge_keys() {
    // x = 0000000 (x8 = 1 so the key is accepted; x8 is unused for n = 8).
    let cpa = Cpa::danger_new(&[0x01], 8, 8).unwrap();
    check(&cpa, b"ABCDEFGH", b"ABCDEFGH");
    // x = 1111111: full reversal.
    let cpa = Cpa::danger_new(&[0xfe], 8, 8).unwrap();
    check(&cpa, b"ABCDEFGH", b"HGFEDCBA");
}

#[test]
fn example_3_nibbles() {
    let cpa = Cpa::danger_new(&[0x68], 8, 4).unwrap();
    check(&cpa, &[0xde, 0xad, 0xbe, 0xef], &[0xdf, 0xee, 0xea, 0xdb]);
}

#[test]
fn example_4_partial_codeword_and_short_key() {
    // K = 3 bits (101), w = 12: four codewords plus an untouched 8-bit tail.
    let cpa = Cpa::danger_new(&[0b1010_0000], 3, 12).unwrap();
    check(
        &cpa,
        &[0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66],
        &[0x45, 0x50, 0x01, 0x33, 0x41, 0x22, 0x66],
    );
}

#[test]
fn example_5_paper_parameters() {
    let key: [u8; 16] = core::array::from_fn(|i| i as u8);
    let cpa = Cpa::danger_paper(&key).unwrap();
    assert_eq!(CpaParams::PAPER.payload_len, 128);
    assert_eq!((cpa.key_bits(), cpa.codeword_bits()), (128, 8));
    let pt: Vec<u8> = (0..128u8).collect();
    let ct = hex::decode(concat!(
        "000102030405060708090a0b0c0d0e7f0f10111213147e15161718191a1b7d7c",
        "1c1d1e1f207b212223242526277a2879292a2b2c2d78772e2f30313233767574",
        "343536377338393a3b3c3d3e723f40714142434470456f464748494a6e4b6d6c",
        "4c4d4e4f6b6a505152535455696856675758595a6665645b5c5d5e5f63626160",
    ))
    .unwrap();
    check(&cpa, &pt, &ct);

    // The same through the registry's `cpa` suite (paper preset).
    let suite = Suite::Cpa.danger_new_cipher(&key).unwrap();
    let mut buf = pt.clone();
    let tag = suite.seal_in_place_detached(&[], &[], &mut buf).unwrap();
    assert!(tag.is_empty());
    assert_eq!(buf, ct);
}

#[test]
fn block_mode_1500_bytes_uses_12_blocks() {
    // 11 blocks of 129 bytes and one of 81 (docs/cpa.md §1.3 rule 2): each block
    // is permuted on its own, so a change in block 3 stays in block 3.
    let key: [u8; 16] = core::array::from_fn(|i| 0x5a ^ i as u8);
    let cpa = Cpa::danger_paper(&key).unwrap();
    let pt: Vec<u8> = (0..1500u32).map(|i| (i % 251) as u8).collect();
    let mut a = pt.clone();
    cpa.encrypt(&mut a);
    let mut changed = pt.clone();
    changed[3 * 129 + 5] ^= 0xff;
    let mut b = changed.clone();
    cpa.encrypt(&mut b);
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        if x != y {
            assert_eq!(i / 129, 3, "byte {i} changed outside block 3");
        }
    }
    // The last, short block (81 bytes) is permuted too.
    assert_ne!(a[1419..], pt[1419..]);
    cpa.decrypt(&mut a);
    assert_eq!(a, pt);
}

#[test]
fn round_trips_for_several_codeword_sizes() {
    let mut rng = Rng::new(0xc0de);
    for w in [1u32, 4, 8, 12, 16] {
        for key_bits in [1usize, 7, 64, 128] {
            let mut key = rng.bytes(key_bits.div_ceil(8));
            key[0] |= 0x80; // x_1 = 1, so the key is not all zero
            let cpa = Cpa::danger_new(&key, key_bits, w).unwrap();
            for _ in 0..25 {
                let len = rng.below(2001);
                let pt = rng.bytes(len);
                let mut buf = pt.clone();
                cpa.encrypt(&mut buf);
                assert_eq!(buf.len(), pt.len());
                cpa.decrypt(&mut buf);
                assert_eq!(buf, pt, "w={w} K={key_bits} len={len}");
            }
        }
    }
}

#[test]
fn short_inputs_are_unchanged() {
    let cpa = Cpa::danger_new(&[0xff], 8, 8).unwrap();
    for pt in [&b""[..], b"A"] {
        check(&cpa, pt, pt);
    }
    // w = 16 with an odd length: one 16-bit codeword would need 2 bytes.
    let cpa = Cpa::danger_new(&[0xff], 8, 16).unwrap();
    check(&cpa, &[1], &[1]);
    check(&cpa, &[1, 2, 3, 4, 5], &[3, 4, 1, 2, 5]);
}

#[test]
fn weak_and_invalid_keys_are_refused() {
    assert_eq!(
        Cpa::danger_new(&[0; 16], 128, 8).err(),
        Some(CryptoError::WeakKey)
    );
    assert_eq!(
        Cpa::danger_new(&[0xff], 0, 8).err(),
        Some(CryptoError::WeakKey)
    );
    assert!(matches!(
        Cpa::danger_new(&[0xff], 9, 8),
        Err(CryptoError::InvalidParameter(_))
    ));
    assert!(matches!(
        Cpa::danger_new(&[0xff], 8, 0),
        Err(CryptoError::InvalidParameter(_))
    ));
    assert!(matches!(
        Cpa::danger_new(&[0xff], 8, 65),
        Err(CryptoError::InvalidParameter(_))
    ));
    // Only bit x_1 of 128: accepted, but flagged as low weight.
    let mut key = [0u8; 16];
    key[0] = 0x80;
    let cpa = Cpa::danger_paper(&key).unwrap();
    assert_eq!(cpa.hamming_weight(), 1);
    assert!(cpa.is_low_weight());
    assert!(!Cpa::danger_paper(&[0xff; 16]).unwrap().is_low_weight());
}

#[test]
fn registry_refuses_cpa_without_danger() {
    assert_eq!(
        Suite::Cpa.new_cipher(&[1; 16]).err(),
        Some(CryptoError::InsecureSuite(Suite::Cpa))
    );
    assert!(!Suite::Cpa.is_encryption());
    assert!(!Suite::Cpa.authenticates());
}

#[test]
fn debug_does_not_print_the_key() {
    let cpa = Cpa::danger_new(&[0xb2], 8, 8).unwrap();
    assert_eq!(
        format!("{cpa:?}"),
        "Cpa { key_bits: 8, codeword_bits: 8, .. }"
    );
}

/// docs/cpa.md §3: one known (plaintext, ciphertext) pair with distinct codewords
/// reveals every key bit by replaying the steps.
fn recover_key(pt: &[u8], ct: &[u8]) -> Vec<u8> {
    let mut a = pt.to_vec();
    let mut bits = Vec::new();
    for i in 0..a.len() - 1 {
        let bit = u8::from(ct[i] != a[i]);
        if bit == 1 {
            a[i..].rotate_right(1);
        }
        bits.push(bit);
    }
    bits
}

#[test]
fn one_known_plaintext_reveals_the_key() {
    let mut rng = Rng::new(42);
    for _ in 0..200 {
        let key = rng.bytes(16);
        let Ok(cpa) = Cpa::danger_paper(&key.clone().try_into().unwrap()) else {
            continue;
        };
        // Distinct codewords: a permutation of 0..128.
        let mut pt: Vec<u8> = (0..128u8).collect();
        for i in (1..pt.len()).rev() {
            pt.swap(i, rng.below(i + 1));
        }
        let mut ct = pt.clone();
        cpa.encrypt(&mut ct);
        let bits = recover_key(&pt, &ct);
        let expected: Vec<u8> = (0..127).map(|i| (key[i / 8] >> (7 - i % 8)) & 1).collect();
        assert_eq!(bits, expected);
        // And it leaks every value: the multiset is unchanged.
        let (mut a, mut b) = (pt.clone(), ct.clone());
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }
}
