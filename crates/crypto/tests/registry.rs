//! The suite registry and the provider trait's contract: names, parameters,
//! argument checks, and that no `Debug` output shows key bytes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and benches may panic

use nameway_crypto::forro14::{Forro14, XForro14, XForro14Poly1305};
use nameway_crypto::{CryptoError, SecretKey, Suite};

#[test]
fn names_and_parameters() {
    let expected = [
        ("cpa", 16, 0, 0, false),
        ("chacha20", 32, 12, 0, false),
        ("forro14", 32, 8, 0, false),
        ("chacha20-poly1305", 32, 12, 16, true),
        ("xchacha20-poly1305", 32, 24, 16, true),
        ("xforro14-poly1305", 32, 24, 16, true),
        ("aes-128-gcm", 16, 12, 16, true),
        ("aes-256-gcm", 32, 12, 16, true),
    ];
    assert_eq!(Suite::ALL.len(), expected.len());
    for (suite, (name, key, nonce, tag, auth)) in Suite::ALL.into_iter().zip(expected) {
        assert_eq!(suite.name(), name);
        assert_eq!(suite.to_string(), name);
        assert_eq!(name.parse::<Suite>(), Ok(suite));
        assert_eq!(
            (
                suite.key_len(),
                suite.nonce_len(),
                suite.tag_len(),
                suite.authenticates()
            ),
            (key, nonce, tag, auth),
            "{name}"
        );
    }
    assert_eq!("ChaCha20".parse::<Suite>(), Err(CryptoError::UnknownSuite));
    assert_eq!(Suite::from_name("rot13"), Err(CryptoError::UnknownSuite));
}

#[test]
fn argument_checks() {
    for suite in Suite::ALL {
        assert_eq!(
            suite.danger_new_cipher(&[1; 15]).err(),
            Some(CryptoError::KeyLength {
                expected: suite.key_len(),
                actual: 15
            })
        );
        let c = suite.danger_new_cipher(&vec![1; suite.key_len()]).unwrap();
        assert_eq!(c.suite(), suite);
        let bad_nonce = vec![0; suite.nonce_len() + 1];
        let mut buf = [0u8; 10];
        assert_eq!(
            c.seal_in_place_detached(&bad_nonce, &[], &mut buf).err(),
            Some(CryptoError::NonceLength {
                expected: suite.nonce_len(),
                actual: suite.nonce_len() + 1
            }),
            "{suite}"
        );
        let nonce = vec![0; suite.nonce_len()];
        let bad_tag = vec![0; suite.tag_len() + 1];
        assert_eq!(
            c.open_in_place_detached(&nonce, &[], &mut buf, &bad_tag)
                .err(),
            Some(CryptoError::TagLength {
                expected: suite.tag_len(),
                actual: suite.tag_len() + 1
            }),
            "{suite}"
        );
    }
}

#[test]
fn raw_keystream_only_for_stream_suites() {
    for suite in Suite::ALL {
        let c = suite.danger_new_cipher(&vec![9; suite.key_len()]).unwrap();
        let nonce = vec![3; suite.nonce_len()];
        let mut a = vec![0u8; 300];
        let r = c.apply_keystream(&nonce, 0, &mut a);
        if matches!(suite, Suite::ChaCha20 | Suite::Forro14) {
            r.unwrap();
            // seal == keystream from counter 0, and counter 1 is one block on.
            let mut b = vec![0u8; 300];
            c.seal_in_place_detached(&nonce, b"ignored", &mut b)
                .unwrap();
            assert_eq!(a, b);
            let mut c1 = vec![0u8; 236];
            c.apply_keystream(&nonce, 1, &mut c1).unwrap();
            assert_eq!(c1, a[64..]);
        } else {
            assert_eq!(
                r,
                Err(CryptoError::Unsupported {
                    suite,
                    operation: "apply_keystream"
                })
            );
        }
    }
}

#[test]
fn counter_limits() {
    let chacha = Suite::ChaCha20.new_cipher(&[1; 32]).unwrap();
    let mut block = [0u8; 64];
    assert_eq!(
        chacha.apply_keystream(&[0; 12], 1 << 32, &mut block),
        Err(CryptoError::MessageTooLong)
    );
    let mut two = [0u8; 128];
    assert_eq!(
        chacha.apply_keystream(&[0; 12], u64::from(u32::MAX), &mut two),
        Err(CryptoError::MessageTooLong)
    );
    let forro = Suite::Forro14.new_cipher(&[1; 32]).unwrap();
    assert!(forro.apply_keystream(&[0; 8], 1 << 32, &mut two).is_ok());
    assert_eq!(
        forro.apply_keystream(&[0; 8], u64::MAX, &mut two),
        Err(CryptoError::MessageTooLong)
    );
}

#[test]
fn debug_never_shows_key_bytes() {
    let key: Vec<u8> = (0..32).map(|i| 0xa0 + i).collect();
    let needles = [
        hex::encode(&key[..4]),
        format!("{:?}", &key[..3]),
        format!(
            "{:#x}",
            u32::from_le_bytes([key[0], key[1], key[2], key[3]])
        ),
        format!("{}", u32::from_le_bytes([key[0], key[1], key[2], key[3]])),
        "160,".to_string(),
    ];
    let mut outputs = Vec::new();
    for suite in Suite::ALL {
        let c = suite.danger_new_cipher(&key[..suite.key_len()]).unwrap();
        outputs.push(format!("{c:?}"));
    }
    let k: [u8; 32] = key.clone().try_into().unwrap();
    outputs.push(format!("{:?}", Forro14::new(&k)));
    outputs.push(format!("{:?}", XForro14::new(&k)));
    outputs.push(format!("{:?}", XForro14Poly1305::new(&k)));
    let secret = SecretKey::from(key.clone());
    outputs.push(format!("{secret:?}"));
    outputs.push(format!("{secret:#?}"));
    assert_eq!(format!("{secret:?}"), "SecretKey { len: 32, .. }");
    for out in &outputs {
        for n in &needles {
            assert!(!out.contains(n.as_str()), "{out:?} contains {n:?}");
        }
    }
}

#[test]
fn errors_display() {
    let e = CryptoError::InsecureSuite(Suite::Cpa);
    assert!(e.to_string().contains("danger_"));
    let e: Box<dyn std::error::Error> = Box::new(CryptoError::AuthenticationFailed);
    assert_eq!(e.to_string(), "authentication failed");
}

#[test]
fn ciphers_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Box<dyn nameway_crypto::PayloadCipher>>();
    check::<Forro14>();
    check::<XForro14Poly1305>();
    check::<SecretKey>();
}
