//! Every vector of `tests/vectors/forro14.json`,
//! on every Forro14 backend this CPU supports. The quarter-round, block
//! trace and Forro12 vectors need internal access and are unit tests in
//! `src/forro14/scalar.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and benches may panic

mod common;

use common::{arr, forro14_vectors, hx, list};
use nameway_crypto::forro14::{
    hforro14, Forro14, Forro14Backend, Forro14Ietf, XForro14, XForro14Poly1305,
};
use nameway_crypto::CryptoError;

fn backends() -> Vec<Forro14Backend> {
    Forro14Backend::ALL
        .into_iter()
        .filter(|b| b.is_available())
        .collect()
}

fn forro(key: &[u8; 32], b: Forro14Backend) -> Forro14 {
    Forro14::with_backend(key, b).unwrap()
}

fn keystream(f: &Forro14, nonce: &[u8; 8], counter: u64, len: usize) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    f.apply_keystream(nonce, counter, &mut buf).unwrap();
    buf
}

#[test]
fn keystream_blocks() {
    let v = forro14_vectors();
    let vectors = list(&v, &["keystream"]);
    assert_eq!(vectors.len(), 11);
    for t in vectors {
        let key = arr::<32>(t, "key");
        let nonce = arr::<8>(t, "nonce");
        let ctr = t["counter"].as_u64().unwrap();
        let expected = [hx(t, "block0"), hx(t, "block1"), hx(t, "block2")].concat();
        let after = t["counter_after_3_blocks"].as_u64().unwrap();
        assert_eq!(ctr + 3, after);
        for b in backends() {
            let f = forro(&key, b);
            assert_eq!(keystream(&f, &nonce, ctr, 192), expected, "{t} on {b:?}");
            // The stream continues at counter_after_3_blocks.
            let four = keystream(&f, &nonce, ctr, 256);
            assert_eq!(four[192..], keystream(&f, &nonce, after, 64)[..], "{b:?}");
            for (i, block) in expected.chunks(64).enumerate() {
                assert_eq!(f.keystream_block(&nonce, ctr + i as u64), block);
            }
        }
    }
}

#[test]
fn counter_carries_into_word_5_at_2_pow_32() {
    let v = forro14_vectors();
    let ks = list(&v, &["keystream"]);
    let below = ks
        .iter()
        .find(|t| t["counter"].as_u64() == Some(u64::from(u32::MAX)))
        .unwrap();
    let at = ks
        .iter()
        .find(|t| t["counter"].as_u64() == Some(1 << 32))
        .unwrap();
    assert_eq!(hx(below, "block1"), hx(at, "block0"));
    assert_eq!(hx(below, "block2"), hx(at, "block1"));
}

#[test]
fn encryption() {
    let v = forro14_vectors();
    let vectors = list(&v, &["encryption"]);
    assert_eq!(vectors.len(), 14);
    for t in vectors {
        let key = arr::<32>(t, "key");
        let nonce = arr::<8>(t, "nonce");
        let ctr = t["counter"].as_u64().unwrap();
        let pt = hx(t, "plaintext");
        let ct = hx(t, "ciphertext");
        assert_eq!(pt.len() as u64, t["length"].as_u64().unwrap());
        assert!(pt.iter().enumerate().all(|(i, &b)| b == i as u8));
        for b in backends() {
            let f = forro(&key, b);
            let mut buf = pt.clone();
            f.apply_keystream(&nonce, ctr, &mut buf).unwrap();
            assert_eq!(buf, ct, "len {} on {b:?}", pt.len());
            f.apply_keystream(&nonce, ctr, &mut buf).unwrap();
            assert_eq!(buf, pt);
        }
    }
}

#[test]
fn reference_repo_vectors() {
    let v = forro14_vectors();
    for t in list(&v, &["reference_repo_test_vectors", "vectors"]) {
        let key = arr::<32>(t, "key");
        assert_eq!(&key[..], t["key_ascii"].as_str().unwrap().as_bytes());
        let nonce = arr::<8>(t, "nonce");
        assert_eq!(&nonce[..], t["nonce_ascii"].as_str().unwrap().as_bytes());
        let expected = hx(t, "keystream");
        for b in backends() {
            let f = forro(&key, b);
            let ctr = t["counter"].as_u64().unwrap();
            assert_eq!(
                keystream(&f, &nonce, ctr, expected.len()),
                expected,
                "{b:?}"
            );
        }
    }
}

#[test]
fn libsodium_fork_original_layout() {
    let v = forro14_vectors();
    for t in list(
        &v,
        &["forro14_original_from_libsodium_fork_tests", "vectors"],
    ) {
        let key = arr::<32>(t, "key");
        let nonce = arr::<8>(t, "nonce");
        let expected = hx(t, "keystream_160");
        for b in backends() {
            let f = forro(&key, b);
            let ctr = t["counter"].as_u64().unwrap();
            assert_eq!(keystream(&f, &nonce, ctr, 160), expected, "{b:?}");
        }
    }
}

#[test]
fn ietf_layout() {
    let v = forro14_vectors();
    let vectors = list(&v, &["forro14_ietf", "vectors"]);
    assert_eq!(vectors.len(), 10);
    for t in vectors {
        let key = arr::<32>(t, "key");
        let nonce = arr::<12>(t, "nonce");
        let ctr = u32::try_from(t["counter"].as_u64().unwrap()).unwrap();
        let expected = if t.get("keystream_128").is_some() {
            hx(t, "keystream_128")
        } else {
            hx(t, "keystream_160")
        };
        for b in backends() {
            let f = Forro14Ietf::with_backend(&key, b).unwrap();
            let mut buf = vec![0u8; expected.len()];
            f.apply_keystream(&nonce, ctr, &mut buf).unwrap();
            assert_eq!(buf, expected, "{t} on {b:?}");
        }
    }
}

#[test]
fn ietf_layout_refuses_to_carry_into_the_nonce() {
    let f = Forro14Ietf::new(&[1; 32]);
    let mut one_block = [0u8; 64];
    assert!(f
        .apply_keystream(&[0; 12], u32::MAX, &mut one_block)
        .is_ok());
    let mut two_blocks = [0u8; 65];
    assert_eq!(
        f.apply_keystream(&[0; 12], u32::MAX, &mut two_blocks),
        Err(CryptoError::MessageTooLong)
    );
    assert_eq!(two_blocks, [0u8; 65], "nothing written on refusal");
}

#[test]
fn hforro14_vectors() {
    let v = forro14_vectors();
    let h = &v["hforro14"];
    let order: Vec<u64> = h["output_word_order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(order, [6, 7, 14, 15, 4, 5, 12, 13]);
    let vectors = list(h, &["vectors"]);
    assert_eq!(vectors.len(), 14);
    for t in vectors {
        let out = hforro14(&arr::<32>(t, "key"), &arr::<16>(t, "input"));
        assert_eq!(out.to_vec(), hx(t, "output"), "{t}");
    }
}

/// The superseded word order (4,5,6,7,12,13,14,15) must not be what we
/// produce, but it is the same eight words: a reordering of our output.
#[test]
fn hforro14_old_order_is_rejected_but_consistent() {
    let v = forro14_vectors();
    let old = &v["hforro14"]["old_order_vectors_DO_NOT_USE"];
    for t in list(old, &["vectors"]) {
        let ours = hforro14(&arr::<32>(t, "key"), &arr::<16>(t, "input"));
        let theirs = hx(t, "output");
        assert_ne!(ours.to_vec(), theirs);
        // Our word k is state word [6,7,14,15,4,5,12,13][k]; old word j is
        // state word [4,5,6,7,12,13,14,15][j].
        let ours_words: Vec<&[u8]> = ours.chunks(4).collect();
        let reordered: Vec<u8> = [4, 5, 0, 1, 6, 7, 2, 3]
            .iter()
            .flat_map(|&k| ours_words[k].to_vec())
            .collect();
        assert_eq!(reordered, theirs);
    }
}

#[test]
fn xforro14_stream() {
    let v = forro14_vectors();
    let vectors = list(&v, &["xforro14", "vectors"]);
    assert_eq!(vectors.len(), 14);
    for t in vectors {
        let key = arr::<32>(t, "key");
        let nonce = arr::<24>(t, "nonce");
        let ctr = t["counter"].as_u64().unwrap();
        let expected = if t.get("keystream_192").is_some() {
            hx(t, "keystream_192")
        } else {
            hx(t, "keystream")
        };
        for b in backends() {
            let x = XForro14::with_backend(&key, b).unwrap();
            let mut buf = vec![0u8; expected.len()];
            x.apply_keystream(&nonce, ctr, &mut buf).unwrap();
            assert_eq!(buf, expected, "{t} on {b:?}");
        }
    }
}

#[test]
fn xforro14_poly1305() {
    let v = forro14_vectors();
    let vectors = list(&v, &["xforro14_poly1305_ietf", "vectors"]);
    assert_eq!(vectors.len(), 5);
    for t in vectors {
        let key = arr::<32>(t, "key");
        let nonce = arr::<24>(t, "nonce");
        let aad = hx(t, "aad");
        let pt = hx(t, "plaintext");
        let ct = hx(t, "ciphertext");
        let tag = arr::<16>(t, "tag");

        let subkey = hforro14(&key, &nonce[..16].try_into().unwrap());
        assert_eq!(subkey.to_vec(), hx(t, "subkey_hforro14"));
        let otk = Forro14::new(&subkey).keystream_block(&nonce[16..].try_into().unwrap(), 0);
        assert_eq!(otk[..32].to_vec(), hx(t, "poly1305_one_time_key"));

        for b in backends() {
            let aead = XForro14Poly1305::with_backend(&key, b).unwrap();
            let mut buf = pt.clone();
            let got = aead.seal_in_place_detached(&nonce, &aad, &mut buf).unwrap();
            assert_eq!(buf, ct, "{b:?}");
            assert_eq!(got, tag, "{b:?}");
            aead.open_in_place_detached(&nonce, &aad, &mut buf, &tag)
                .unwrap();
            assert_eq!(buf, pt);
        }
    }
}

#[test]
fn not_the_non_canonical_simd_variant() {
    let v = forro14_vectors();
    let t = &v["non_canonical_x86_simd_variant_DO_NOT_IMPLEMENT"];
    let key = arr::<32>(t, "key");
    let nonce = arr::<8>(t, "nonce");
    let ctr = t["counter"].as_u64().unwrap();
    let canonical = hx(t, "canonical_output_first_128_bytes");
    let wrong = hx(t, "simd_output_first_128_bytes");
    for b in backends() {
        let f = forro(&key, b);
        // Long enough that every SIMD path runs full batches, too.
        let ks = keystream(&f, &nonce, ctr, 4096);
        assert_eq!(ks[..128], canonical[..], "{b:?}");
        assert_ne!(ks[..128], wrong[..], "{b:?}");
    }
}

#[test]
fn not_the_incompatible_third_party_crate() {
    let v = forro14_vectors();
    let t = &v["third_party_incompatibility_evidence"];
    let key: [u8; 32] = core::array::from_fn(|i| 0x80 + i as u8);
    let nonce: [u8; 24] = hex::decode("404142434445464748494a4b4c4d4e4f5051525354555658")
        .unwrap()
        .try_into()
        .unwrap();
    let mut ours = [0u8; 128];
    XForro14::new(&key)
        .apply_keystream(&nonce, 0, &mut ours)
        .unwrap();
    let theirs = hx(
        t,
        "xforro14_key_8081..9f_nonce_4041..5658_counter0_first128",
    );
    assert_ne!(ours.to_vec(), theirs);

    // Their AEAD XORs plaintext bytes 32..64 with the Poly1305 key. Ours
    // encrypts with blocks 1, 2, ... and never reuses block 0.
    let aead = XForro14Poly1305::new(&[0; 32]);
    let mut ct = [0u8; 200];
    aead.seal_in_place_detached(&[0; 24], &[], &mut ct).unwrap();
    let subkey = hforro14(&[0; 32], &[0; 16]);
    let f = Forro14::new(&subkey);
    let block0 = f.keystream_block(&[0; 8], 0);
    assert_eq!(ct.to_vec(), keystream(&f, &[0; 8], 1, 200));
    assert_ne!(ct[32..64], block0[..32]);
    assert_ne!(ct[..32], block0[32..]);
}

#[test]
fn counter_overflow_is_refused() {
    let f = Forro14::new(&[3; 32]);
    let mut buf = [0u8; 64];
    assert!(f.apply_keystream(&[0; 8], u64::MAX, &mut buf).is_ok());
    let mut buf = [0u8; 65];
    assert_eq!(
        f.apply_keystream(&[0; 8], u64::MAX, &mut buf),
        Err(CryptoError::MessageTooLong)
    );
    assert_eq!(buf, [0u8; 65]);
    // An empty message uses no counter value and is always fine.
    assert!(f.apply_keystream(&[0; 8], u64::MAX, &mut []).is_ok());
}
