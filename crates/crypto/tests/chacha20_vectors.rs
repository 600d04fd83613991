//! Every vector of `tests/vectors/chacha20.json` (RFC 8439 and
//! draft-irtf-cfrg-xchacha-03), copied to tests/vectors/.
//!
//! Keystreams, Poly1305 tags and AEAD outputs are checked against the
//! RustCrypto crates this crate uses, through the same suites a forwarder
//! uses. The quarter-round and intermediate-state vectors describe internals
//! those crates do not expose; they are checked against a small ChaCha model
//! in this file, and the model's block output is checked against the crate's
//! keystream, so both describe the same cipher.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and benches may panic

mod common;

use chacha20::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
use chacha20::{ChaCha20, XChaCha20};
use common::{arr, chacha20_vectors, hx, list};
use nameway_crypto::Suite;
use poly1305::universal_hash::KeyInit;
use poly1305::Poly1305;
use serde_json::Value;

// ---- a test-only ChaCha model (RFC 8439 §2.1–§2.3) ----

fn qr(x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(16);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(12);
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(8);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(7);
}

fn rounds20(x: &mut [u32; 16]) {
    for _ in 0..10 {
        qr(x, 0, 4, 8, 12);
        qr(x, 1, 5, 9, 13);
        qr(x, 2, 6, 10, 14);
        qr(x, 3, 7, 11, 15);
        qr(x, 0, 5, 10, 15);
        qr(x, 1, 6, 11, 12);
        qr(x, 2, 7, 8, 13);
        qr(x, 3, 4, 9, 14);
    }
}

fn le(b: &[u8]) -> u32 {
    u32::from_le_bytes(b.try_into().unwrap())
}

/// State for a 32-byte key and the 16 bytes of words 12..16.
fn setup(key: &[u8], tail16: &[u8]) -> [u32; 16] {
    let mut s = [0u32; 16];
    s[..4].copy_from_slice(&[0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]);
    for i in 0..8 {
        s[4 + i] = le(&key[4 * i..4 * i + 4]);
    }
    for i in 0..4 {
        s[12 + i] = le(&tail16[4 * i..4 * i + 4]);
    }
    s
}

fn ietf_setup(key: &[u8], nonce: &[u8], counter: u32) -> [u32; 16] {
    let tail = [&counter.to_le_bytes()[..], nonce].concat();
    setup(key, &tail)
}

fn block(s: &[u32; 16]) -> [u32; 16] {
    let mut x = *s;
    rounds20(&mut x);
    for (o, i) in x.iter_mut().zip(s) {
        *o = o.wrapping_add(*i);
    }
    x
}

fn serialize(w: &[u32; 16]) -> Vec<u8> {
    w.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn words(v: &Value) -> [u32; 16] {
    let w: Vec<u32> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|x| u32::from_str_radix(x.as_str().unwrap(), 16).unwrap())
        .collect();
    w.try_into().unwrap()
}

fn word(v: &Value) -> u32 {
    u32::from_str_radix(v.as_str().unwrap(), 16).unwrap()
}

// ---- helpers over the crates ----

fn chacha_keystream(key: &[u8], nonce: &[u8], counter: u32, len: usize) -> Vec<u8> {
    let mut c = ChaCha20::new_from_slices(key, nonce).unwrap();
    c.seek(u64::from(counter) * 64);
    let mut buf = vec![0u8; len];
    c.apply_keystream(&mut buf);
    buf
}

fn poly1305(key: &[u8], msg: &[u8]) -> Vec<u8> {
    Poly1305::new_from_slice(key)
        .unwrap()
        .compute_unpadded(msg)
        .to_vec()
}

fn pad16(v: &mut Vec<u8>) {
    while !v.len().is_multiple_of(16) {
        v.push(0);
    }
}

fn aead_mac_input(aad: &[u8], ct: &[u8]) -> Vec<u8> {
    let mut m = aad.to_vec();
    pad16(&mut m);
    m.extend_from_slice(ct);
    pad16(&mut m);
    m.extend_from_slice(&(aad.len() as u64).to_le_bytes());
    m.extend_from_slice(&(ct.len() as u64).to_le_bytes());
    m
}

fn u32_of(t: &Value, field: &str) -> u32 {
    u32::try_from(t[field].as_u64().unwrap()).unwrap()
}

// ---- RFC 8439 §2 ----

#[test]
fn rfc8439_2_1_1_quarter_round() {
    let v = chacha20_vectors();
    let t = &v["rfc8439_2.1.1_quarter_round"];
    let mut x = [0u32; 16];
    for (i, n) in ["a", "b", "c", "d"].iter().enumerate() {
        x[i] = word(&t["input"][n]);
    }
    qr(&mut x, 0, 1, 2, 3);
    for (i, n) in ["a", "b", "c", "d"].iter().enumerate() {
        assert_eq!(x[i], word(&t["output"][n]));
    }
}

#[test]
fn rfc8439_2_2_1_quarter_round_on_state() {
    let v = chacha20_vectors();
    let t = &v["rfc8439_2.2.1_quarter_round_on_state"];
    assert_eq!(t["operation"], "QUARTERROUND(2, 7, 8, 13)");
    let mut x = words(&t["state_before"]);
    qr(&mut x, 2, 7, 8, 13);
    assert_eq!(x, words(&t["state_after"]));
}

#[test]
fn rfc8439_2_3_2_block_function() {
    let v = chacha20_vectors();
    let t = &v["rfc8439_2.3.2_block_function"];
    let (key, nonce) = (hx(t, "key"), hx(t, "nonce"));
    let ctr = u32_of(t, "counter");
    let s = ietf_setup(&key, &nonce, ctr);
    assert_eq!(s, words(&t["state_after_setup"]));
    let mut x = s;
    rounds20(&mut x);
    assert_eq!(x, words(&t["state_after_20_rounds"]));
    assert_eq!(block(&s), words(&t["state_after_feed_forward"]));
    let expected = hx(t, "serialized_block");
    assert_eq!(serialize(&block(&s)), expected);
    assert_eq!(chacha_keystream(&key, &nonce, ctr, 64), expected);
}

#[test]
fn rfc8439_2_4_2_encryption() {
    let v = chacha20_vectors();
    let t = &v["rfc8439_2.4.2_encryption"];
    let (key, nonce) = (hx(t, "key"), hx(t, "nonce"));
    let ctr = u32_of(t, "initial_counter");
    let pt = hx(t, "plaintext");
    assert_eq!(pt, t["plaintext_ascii"].as_str().unwrap().as_bytes());
    assert_eq!(
        ietf_setup(&key, &nonce, ctr),
        words(&t["first_block_setup"])
    );
    assert_eq!(
        ietf_setup(&key, &nonce, ctr + 1),
        words(&t["second_block_setup"])
    );
    let b0 = words(&t["first_block_after_block_function"]);
    let b1 = words(&t["second_block_after_block_function"]);
    assert_eq!(block(&ietf_setup(&key, &nonce, ctr)), b0);
    assert_eq!(block(&ietf_setup(&key, &nonce, ctr + 1)), b1);
    let ks = hx(t, "keystream");
    assert_eq!(ks, [serialize(&b0), serialize(&b1)].concat()[..pt.len()]);
    assert_eq!(chacha_keystream(&key, &nonce, ctr, pt.len()), ks);

    // Through the `chacha20` suite with an explicit counter.
    let cipher = Suite::ChaCha20.new_cipher(&key).unwrap();
    let mut buf = pt.clone();
    cipher
        .apply_keystream(&nonce, u64::from(ctr), &mut buf)
        .unwrap();
    assert_eq!(buf, hx(t, "ciphertext"));
}

#[test]
fn rfc8439_2_5_2_poly1305() {
    let v = chacha20_vectors();
    let t = &v["rfc8439_2.5.2_poly1305"];
    let key = hx(t, "key");
    assert_eq!(key[..16], hx(t, "r_before_clamping")[..]);
    // r clamped as in RFC 8439 §2.5, as a little-endian number.
    let mut r = u128::from_le_bytes(key[..16].try_into().unwrap());
    r &= 0x0fff_fffc_0fff_fffc_0fff_fffc_0fff_ffff;
    assert_eq!(
        r,
        u128::from_str_radix(t["r_clamped_as_number"].as_str().unwrap(), 16).unwrap()
    );
    let s = u128::from_le_bytes(key[16..].try_into().unwrap());
    assert_eq!(
        s,
        u128::from_str_radix(t["s_as_number"].as_str().unwrap(), 16).unwrap()
    );
    let msg = hx(t, "message");
    assert_eq!(msg, t["message_ascii"].as_str().unwrap().as_bytes());
    let tag = poly1305(&key, &msg);
    assert_eq!(tag, hx(t, "tag"));
    // The tag is the low 128 bits of (accumulator + s), little-endian.
    let acc_s = t["accumulator_plus_s"].as_str().unwrap();
    let low = u128::from_str_radix(&acc_s[acc_s.len() - 32..], 16).unwrap();
    assert_eq!(tag, low.to_le_bytes());
}

#[test]
fn rfc8439_2_6_2_poly1305_key_generation() {
    let v = chacha20_vectors();
    let t = &v["rfc8439_2.6.2_poly1305_key_generation"];
    let (key, nonce) = (hx(t, "key"), hx(t, "nonce"));
    let ctr = u32_of(t, "counter");
    let s = ietf_setup(&key, &nonce, ctr);
    assert_eq!(s, words(&t["state_after_setup"]));
    // Labelled "after 20 rounds" in the RFC, but with the feed-forward (see note).
    assert_eq!(block(&s), words(&t["state_printed_as_after_20_rounds"]));
    assert_eq!(
        chacha_keystream(&key, &nonce, ctr, 32),
        hx(t, "one_time_key")
    );
}

#[test]
fn rfc8439_2_8_2_aead() {
    let v = chacha20_vectors();
    let t = &v["rfc8439_2.8.2_aead_chacha20_poly1305"];
    let (key, nonce, aad, pt) = (
        hx(t, "key"),
        hx(t, "nonce"),
        hx(t, "aad"),
        hx(t, "plaintext"),
    );
    assert_eq!(nonce, [hx(t, "fixed_common_part"), hx(t, "iv")].concat());
    assert_eq!(pt, t["plaintext_ascii"].as_str().unwrap().as_bytes());
    let s = ietf_setup(&key, &nonce, 0);
    assert_eq!(s, words(&t["poly1305_keygen_state_setup"]));
    assert_eq!(block(&s), words(&t["poly1305_keygen_block_output_words"]));
    let otk = chacha_keystream(&key, &nonce, 0, 32);
    assert_eq!(otk, hx(t, "poly1305_one_time_key"));
    assert_eq!(
        chacha_keystream(&key, &nonce, 1, pt.len()),
        hx(t, "keystream_counter1")
    );
    let ct = hx(t, "ciphertext");
    let mac_input = aead_mac_input(&aad, &ct);
    assert_eq!(mac_input, hx(t, "poly1305_input"));
    let tag = hx(t, "tag");
    assert_eq!(poly1305(&otk, &mac_input), tag);

    let aead = Suite::ChaCha20Poly1305.new_cipher(&key).unwrap();
    let mut buf = pt.clone();
    let got = aead.seal_in_place_detached(&nonce, &aad, &mut buf).unwrap();
    assert_eq!(buf, ct);
    assert_eq!(got.as_bytes(), tag);
    aead.open_in_place_detached(&nonce, &aad, &mut buf, &tag)
        .unwrap();
    assert_eq!(buf, pt);
}

// ---- RFC 8439 appendix A ----

#[test]
fn rfc8439_a_1_block_function() {
    let v = chacha20_vectors();
    let vectors = list(&v, &["rfc8439_A.1_block_function"]);
    assert_eq!(vectors.len(), 5);
    for t in vectors {
        let (key, nonce) = (hx(t, "key"), hx(t, "nonce"));
        let ctr = u32_of(t, "counter");
        let ks = hx(t, "keystream");
        assert_eq!(
            block(&ietf_setup(&key, &nonce, ctr)),
            words(&t["state_at_end"])
        );
        assert_eq!(
            chacha_keystream(&key, &nonce, ctr, 64),
            ks,
            "TV {}",
            t["test_vector"]
        );
    }
}

#[test]
fn rfc8439_a_2_encryption() {
    let v = chacha20_vectors();
    let vectors = list(&v, &["rfc8439_A.2_encryption"]);
    assert_eq!(vectors.len(), 3);
    for t in vectors {
        let (key, nonce) = (hx(t, "key"), hx(t, "nonce"));
        let ctr = u64::from(u32_of(t, "initial_counter"));
        let mut buf = hx(t, "plaintext");
        let cipher = Suite::ChaCha20.new_cipher(&key).unwrap();
        cipher.apply_keystream(&nonce, ctr, &mut buf).unwrap();
        assert_eq!(buf, hx(t, "ciphertext"), "TV {}", t["test_vector"]);
        if ctr == 0 {
            // Counter 0 is what `seal` uses for bare stream suites.
            let mut buf = hx(t, "plaintext");
            let tag = cipher
                .seal_in_place_detached(&nonce, &[], &mut buf)
                .unwrap();
            assert!(tag.is_empty());
            assert_eq!(buf, hx(t, "ciphertext"));
        }
    }
}

#[test]
fn rfc8439_a_3_poly1305() {
    let v = chacha20_vectors();
    let vectors = list(&v, &["rfc8439_A.3_poly1305"]);
    assert_eq!(vectors.len(), 11);
    for t in vectors {
        assert_eq!(
            poly1305(&hx(t, "key"), &hx(t, "message")),
            hx(t, "tag"),
            "TV {}",
            t["test_vector"]
        );
    }
}

#[test]
fn rfc8439_a_4_poly1305_key_generation() {
    let v = chacha20_vectors();
    let vectors = list(&v, &["rfc8439_A.4_poly1305_key_generation"]);
    assert_eq!(vectors.len(), 3);
    for t in vectors {
        assert_eq!(
            chacha_keystream(&hx(t, "key"), &hx(t, "nonce"), 0, 32),
            hx(t, "one_time_key")
        );
    }
}

#[test]
fn rfc8439_a_5_aead_decryption() {
    let v = chacha20_vectors();
    let t = &v["rfc8439_A.5_aead_decryption"];
    let (key, nonce, aad) = (hx(t, "key"), hx(t, "nonce"), hx(t, "aad"));
    let (ct, tag) = (hx(t, "ciphertext"), hx(t, "tag"));
    let otk = chacha_keystream(&key, &nonce, 0, 32);
    assert_eq!(otk, hx(t, "poly1305_one_time_key"));
    let mac_input = aead_mac_input(&aad, &ct);
    assert_eq!(mac_input, hx(t, "poly1305_input"));
    assert_eq!(poly1305(&otk, &mac_input), tag);

    let aead = Suite::ChaCha20Poly1305.new_cipher(&key).unwrap();
    let mut buf = ct.clone();
    aead.open_in_place_detached(&nonce, &aad, &mut buf, &tag)
        .unwrap();
    assert_eq!(buf, hx(t, "plaintext"));
}

// ---- draft-irtf-cfrg-xchacha-03 ----

#[test]
fn xchacha_2_2_1_hchacha20() {
    let v = chacha20_vectors();
    let t = &v["xchacha_draft03_2.2.1_hchacha20"];
    let key = arr::<32>(t, "key");
    let input = arr::<16>(t, "nonce16");
    let s = setup(&key, &input);
    assert_eq!(s, words(&t["state_after_setup"]));
    let mut x = s;
    rounds20(&mut x);
    assert_eq!(x, words(&t["state_after_20_rounds"]));
    let model: Vec<u8> = [&x[..4], &x[12..]]
        .concat()
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    assert_eq!(model, hx(t, "subkey"));
    let subkey = chacha20::hchacha::<chacha20::R20>(&key.into(), &input.into());
    assert_eq!(subkey.to_vec(), hx(t, "subkey"));
}

#[test]
fn xchacha_a_3_1_aead() {
    let v = chacha20_vectors();
    let t = &v["xchacha_draft03_A.3.1_aead_xchacha20_poly1305"];
    let key = arr::<32>(t, "key");
    let nonce = hx(t, "nonce24");
    let (aad, pt, ct, tag) = (
        hx(t, "aad"),
        hx(t, "plaintext"),
        hx(t, "ciphertext"),
        hx(t, "tag"),
    );
    let input: [u8; 16] = nonce[..16].try_into().unwrap();
    let subkey = chacha20::hchacha::<chacha20::R20>(&key.into(), &input.into());
    assert_eq!(subkey.to_vec(), hx(t, "subkey_hchacha20"));
    let nonce12 = [&[0u8; 4][..], &nonce[16..]].concat();
    assert_eq!(nonce12, hx(t, "chacha20_nonce12"));
    assert_eq!(
        chacha_keystream(&subkey, &nonce12, 0, 32),
        hx(t, "poly1305_one_time_key")
    );

    let aead = Suite::XChaCha20Poly1305.new_cipher(&key).unwrap();
    let mut buf = pt.clone();
    let got = aead.seal_in_place_detached(&nonce, &aad, &mut buf).unwrap();
    assert_eq!(buf, ct);
    assert_eq!(got.as_bytes(), tag);
    aead.open_in_place_detached(&nonce, &aad, &mut buf, &tag)
        .unwrap();
    assert_eq!(buf, pt);
}

#[test]
fn xchacha_a_3_2_stream() {
    let v = chacha20_vectors();
    let vectors = list(&v, &["xchacha_draft03_A.3.2_xchacha20_stream"]);
    assert_eq!(vectors.len(), 2);
    for t in vectors {
        let key = arr::<32>(t, "key");
        let nonce = arr::<24>(t, "nonce24");
        let input: [u8; 16] = nonce[..16].try_into().unwrap();
        let subkey = chacha20::hchacha::<chacha20::R20>(&key.into(), &input.into());
        assert_eq!(subkey.to_vec(), hx(t, "subkey_hchacha20"));
        let pt = hx(t, "plaintext");
        let mut c = XChaCha20::new(&key.into(), &nonce.into());
        c.seek(t["counter"].as_u64().unwrap() * 64);
        let mut ks = vec![0u8; pt.len()];
        c.apply_keystream(&mut ks);
        assert_eq!(ks, hx(t, "keystream"), "{}", t["section"]);
        let ct: Vec<u8> = pt.iter().zip(&ks).map(|(p, k)| p ^ k).collect();
        assert_eq!(ct, hx(t, "ciphertext"));
    }
}

#[test]
fn every_section_is_covered() {
    let v = chacha20_vectors();
    let verified: Vec<&str> = list(&v, &["verified"])
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    // One test above per entry of the file's own list.
    assert_eq!(verified.len(), 15);
}
