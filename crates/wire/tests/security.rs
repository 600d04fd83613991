//! Signing and verifying Interests and Data with every signature type in
//! `nameway_wire::security`: round trips, exhaustive single-bit flips, wrong keys, key encodings,
//! and the signed Interests captured from python-ndn and NDNts (docs/nfd-interop.md §4.1).

// Test helpers outside #[test] functions may unwrap too (clippy.toml covers only the tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ops::Range;
use std::sync::OnceLock;

use bytes::Bytes;
use chacha20::ChaCha20Rng;
use nameway_wire::data::content_type;
use nameway_wire::security::{
    verify_data_wire, verify_interest_wire, DigestSha256, EcdsaP256Signer, EcdsaP256Verifier,
    Ed25519Signer, Ed25519Verifier, HmacSha256, KeyError, RsaSha256Signer, RsaSha256Verifier,
};
use nameway_wire::signature::signature_type;
use nameway_wire::tlv::{self, types, Reader};
use nameway_wire::{
    Component, Data, DataView, Interest, InterestView, KeyLocator, LpPacket, MetaInfo, Name,
    SignatureInfo, Signer, Verifier, VerifyError,
};
use rand_core::SeedableRng;
use sha2::{Digest, Sha256};

/// python-ndn appv2 rib/register, v0.3 signed Interest, DigestSha256 (docs/nfd-interop.md §4.1).
const APPV2_REGISTER: &str = "
0599075008096c6f63616c686f737408036e6664080372696208087265676973746572080d680b070908076578616d706c65
02205388a7740003e4e3f8f064137f530cc278fdc25a63f754706b09b761feda420e0a04c892b7b40c0203e8
24002c171b01002608e5f8c7c792645cd82808000001a1ff7ade8c2e20af32d7091b4ae52a2b55c35fa668fb83fbd8d85e9ae4879b002ca4b896dcc8c8";

/// python-ndn legacy rib/register, v0.2 command Interest (docs/nfd-interop.md §4.1).
const LEGACY_REGISTER: &str = "
0579076d08096c6f63616c686f737408036e6664080372696208087265676973746572080d680b070908076578616d706c65
0808000001a1ff7b0d3d080874dbb8bcddd2397e080516031b0100082217207585aa52b2300f1bdf0a8e4a6ac2048cd19c45
2ed3af9f3894a824c2a7247e7e0a0433abfeb50c0203e8";

/// NDNts rib/register: LpPacket{PitToken 4167ffffffff, Fragment = v0.3 signed Interest}.
const NDNTS_REGISTER_LP: &str = "
64b462064167ffffffff50aa05a8075f08096c6f63616c686f737408036e6664080372696208087265676973746572081c68
1a070908076578616d706c656f01416a01006c01026d0400124f8002202cae6bf5f381a9876b6dadc4d461a4a9d22e247c8bef
30c8f2f265d699edd8fd0a0455e5f61d0c020f9f24002c171b010026080d0ecf283cdad6972808000001a1ff7cfc5a2e20f340
a4d95d2db4ab94724aae9d87871806bfe45e00f064e2ab53605eb3010558";

/// An Ed25519 key pair exported by PyCryptodome (`ECC.generate(curve='Ed25519')`) as PEM.
const ED25519_PKCS8_PEM: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIOus07ALrCMrN98uKIGqJ+L4Ucb6T6b6PUaqp4/92wD+
-----END PRIVATE KEY-----";
const ED25519_SPKI_PEM: &str = "-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEANR7Ye97kCogn6VPpfvVMe1ET+FbZMNR4kdRPGXJ6mq4=
-----END PUBLIC KEY-----";
/// A P-256 key pair exported by PyCryptodome (`ECC.generate(curve='P-256')`) as PEM.
const ECDSA_PKCS8_PEM: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgBbBltNj9BCb31s2+
92wwYm0PFEZ0PoIGdd7kmrF8wl2hRANCAAQ3D3azyOrcqsA14WCssAwTKWCHJJZg
K6xTliPRWQi0evLI4pDR81WLa6MXD4VUDWfm74cVJACJdlXCVRTSSL/d
-----END PRIVATE KEY-----";
const ECDSA_SPKI_PEM: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAENw92s8jq3KrANeFgrLAMEylghySW
YCusU5Yj0VkItHryyOKQ0fNVi2ujFw+FVA1n5u+HFSQAiXZVwlUU0ki/3Q==
-----END PUBLIC KEY-----";

fn b(hex_str: &str) -> Bytes {
    let clean: String = hex_str.split_whitespace().collect();
    Bytes::from(hex::decode(clean).unwrap())
}

fn name(uri: &str) -> Name {
    uri.parse().unwrap()
}

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// RSA key generation takes a while in debug builds: two keys, shared by every test.
fn rsa_keys() -> &'static (RsaSha256Signer, RsaSha256Signer) {
    static KEYS: OnceLock<(RsaSha256Signer, RsaSha256Signer)> = OnceLock::new();
    KEYS.get_or_init(|| {
        let a = RsaSha256Signer::generate_with_rng(&mut rng(10), 2048).unwrap();
        let b = RsaSha256Signer::generate_with_rng(&mut rng(11), 2048).unwrap();
        (a, b)
    })
}

/// One signature type: a signer, its verifier, and a verifier holding another key (none for
/// DigestSha256, which has no key).
struct Suite {
    label: &'static str,
    /// Verification takes microseconds, not milliseconds (no public-key arithmetic).
    cheap: bool,
    typ: u64,
    signer: Box<dyn Signer>,
    verifier: Box<dyn Verifier>,
    wrong_key: Option<Box<dyn Verifier>>,
}

fn suites() -> Vec<Suite> {
    let key_name = name("/example/KEY/%01%02");
    let hmac = HmacSha256::new(&[0x11; 32])
        .unwrap()
        .with_key_name(key_name.clone());
    let ecdsa = EcdsaP256Signer::generate_with_rng(&mut rng(1)).with_key_name(key_name.clone());
    let ed = Ed25519Signer::generate_with_rng(&mut rng(2)).with_key_name(key_name.clone());
    let (rsa, rsa_other) = rsa_keys();
    vec![
        Suite {
            label: "DigestSha256",
            cheap: true,
            typ: signature_type::DIGEST_SHA256,
            signer: Box::new(DigestSha256),
            verifier: Box::new(DigestSha256),
            wrong_key: None,
        },
        Suite {
            label: "HmacWithSha256",
            cheap: true,
            typ: signature_type::HMAC_WITH_SHA256,
            verifier: Box::new(hmac.clone()),
            signer: Box::new(hmac),
            wrong_key: Some(Box::new(HmacSha256::new(&[0x12; 32]).unwrap())),
        },
        Suite {
            label: "Sha256WithEcdsa",
            cheap: false,
            typ: signature_type::SHA256_WITH_ECDSA,
            verifier: Box::new(ecdsa.verifier()),
            signer: Box::new(ecdsa),
            wrong_key: Some(Box::new(
                EcdsaP256Signer::generate_with_rng(&mut rng(3)).verifier(),
            )),
        },
        Suite {
            label: "Sha256WithRsa",
            cheap: false,
            typ: signature_type::SHA256_WITH_RSA,
            verifier: Box::new(rsa.verifier()),
            signer: Box::new(rsa.clone().with_key_name(key_name)),
            wrong_key: Some(Box::new(rsa_other.verifier())),
        },
        Suite {
            label: "Ed25519",
            cheap: false,
            typ: signature_type::ED25519,
            verifier: Box::new(ed.verifier()),
            signer: Box::new(ed),
            wrong_key: Some(Box::new(
                Ed25519Signer::generate_with_rng(&mut rng(4)).verifier(),
            )),
        },
    ]
}

fn interest_info() -> SignatureInfo {
    SignatureInfo {
        nonce: Some(Bytes::from_static(&[1, 2, 3, 4, 5, 6, 7, 8])),
        time: Some(0x0000_01a1_ff7a_de8c),
        seq_num: Some(7),
        ..SignatureInfo::default()
    }
}

fn signed_interest(s: &Suite) -> Bytes {
    let mut i = Interest::new(name("/a/b"));
    i.must_be_fresh = true;
    i.nonce = Some(0x0102_0304);
    i.lifetime_ms = Some(1000);
    i.app_parameters = Some(Bytes::from_static(b"pp"));
    i.sign(s.signer.as_ref(), interest_info()).unwrap();
    i.encode()
}

fn signed_data(s: &Suite) -> Bytes {
    let mut d = Data::new(name("/a/b"), Bytes::from_static(b"hello"));
    d.meta_info = Some(MetaInfo {
        freshness_period: Some(1000),
        ..MetaInfo::default()
    });
    d.sign(s.signer.as_ref()).unwrap();
    d.encode()
}

#[test]
fn interest_round_trip_every_type() {
    for s in suites() {
        let wire = signed_interest(&s);
        let i = Interest::decode(&wire).unwrap();
        let info = i.signature_info.as_ref().unwrap();
        assert_eq!(info.signature_type, s.typ, "{}", s.label);
        assert_eq!(info.key_locator, s.signer.key_locator(), "{}", s.label);
        assert_eq!(info.time, Some(0x0000_01a1_ff7a_de8c));
        assert_eq!(i.app_parameters.as_deref(), Some(&b"pp"[..]));
        assert_eq!(i.verify(s.verifier.as_ref()), Ok(()), "{}", s.label);
        let view = InterestView::new_checked(wire.clone()).unwrap();
        assert_eq!(
            verify_interest_wire(&view, s.verifier.as_ref()),
            Ok(()),
            "{}",
            s.label
        );
        assert_eq!(i.encode(), wire, "{}: re-encoding is byte-exact", s.label);
    }
}

#[test]
fn interest_without_parameters_gets_empty_ones_when_signed() {
    for s in suites() {
        let mut i = Interest::new(name("/localhost/nfd/rib/register"));
        i.sign(s.signer.as_ref(), interest_info()).unwrap();
        let i = Interest::decode(&i.encode()).unwrap();
        assert_eq!(i.app_parameters.as_deref(), Some(&b""[..]), "{}", s.label);
        assert_eq!(
            i.name.last().unwrap().typ(),
            types::PARAMETERS_SHA256_DIGEST_COMPONENT,
            "{}",
            s.label
        );
        assert_eq!(i.verify(s.verifier.as_ref()), Ok(()), "{}", s.label);
    }
}

#[test]
fn data_round_trip_every_type() {
    for s in suites() {
        let wire = signed_data(&s);
        let d = Data::decode(&wire).unwrap();
        assert_eq!(d.signature_info.signature_type, s.typ, "{}", s.label);
        assert_eq!(
            d.signature_info.key_locator,
            s.signer.key_locator(),
            "{}",
            s.label
        );
        assert_eq!(d.content.as_deref(), Some(&b"hello"[..]));
        assert_eq!(d.verify(s.verifier.as_ref()), Ok(()), "{}", s.label);
        let view = DataView::new_checked(wire.clone()).unwrap();
        assert_eq!(
            verify_data_wire(&view, s.verifier.as_ref()),
            Ok(()),
            "{}",
            s.label
        );
        assert_eq!(d.encode(), wire, "{}: re-encoding is byte-exact", s.label);
    }
}

#[test]
fn data_with_large_content_and_meta_info() {
    for s in suites() {
        for len in [0, 1, 100, 8000] {
            let content: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let mut d = Data::new(name("/big/seg=3"), Bytes::from(content));
            d.meta_info = Some(MetaInfo {
                content_type: Some(content_type::KEY),
                freshness_period: Some(10_000),
                final_block_id: Some(Component::segment(3)),
            });
            d.sign(s.signer.as_ref()).unwrap();
            let d2 = Data::decode(&d.encode()).unwrap();
            assert_eq!(d2, d, "{} len {len}", s.label);
            assert_eq!(
                d2.verify(s.verifier.as_ref()),
                Ok(()),
                "{} len {len}",
                s.label
            );
        }
    }
}

#[test]
fn wrong_key_fails() {
    for s in suites() {
        let Some(wrong) = &s.wrong_key else { continue };
        let i = Interest::decode(&signed_interest(&s)).unwrap();
        assert_eq!(
            i.verify(wrong.as_ref()),
            Err(VerifyError::Mismatch),
            "{}",
            s.label
        );
        let d = Data::decode(&signed_data(&s)).unwrap();
        assert_eq!(
            d.verify(wrong.as_ref()),
            Err(VerifyError::Mismatch),
            "{}",
            s.label
        );
    }
}

#[test]
fn verifier_rejects_other_signature_types() {
    let all = suites();
    for signer in &all {
        let d = Data::decode(&signed_data(signer)).unwrap();
        for verifier in &all {
            if verifier.typ == signer.typ {
                continue;
            }
            assert_eq!(
                d.verify(verifier.verifier.as_ref()),
                Err(VerifyError::WrongType(signer.typ)),
                "{} verifier on {} Data",
                verifier.label,
                signer.label
            );
        }
    }
}

#[test]
fn unsigned_interest_is_reported() {
    let i = Interest::new(name("/a"));
    assert_eq!(i.verify(&DigestSha256), Err(VerifyError::Unsigned));
}

#[test]
fn malformed_signature_values() {
    for s in suites() {
        let parts: [&[u8]; 2] = [b"signed", b"portion"];
        for bad in [&[][..], &[0x30, 0x00][..], &[0u8; 31][..], &[0xff; 600][..]] {
            let r = s.verifier.verify(s.typ, &parts, bad);
            assert!(
                matches!(r, Err(VerifyError::Malformed | VerifyError::Mismatch)),
                "{}: {r:?}",
                s.label
            );
        }
    }
}

/// Element ranges of an Interest: (signed portion pieces, SignatureValue TLV-VALUE).
fn interest_signed_ranges(wire: &[u8]) -> (Vec<Range<usize>>, Range<usize>) {
    let top = tlv::read_single(wire).unwrap();
    let mut r = top.children();
    let name_el = r.expect(types::NAME).unwrap();
    let mut pieces: Vec<Range<usize>> = Vec::new();
    let mut comps = name_el.children();
    while let Some(c) = comps.read().unwrap() {
        if c.typ != types::PARAMETERS_SHA256_DIGEST_COMPONENT {
            pieces.push(c.range());
        }
    }
    let (mut params_start, mut info_end, mut value) = (0, 0, 0..0);
    while let Some(e) = r.read().unwrap() {
        match e.typ {
            types::APPLICATION_PARAMETERS => params_start = e.start,
            types::INTEREST_SIGNATURE_INFO => info_end = e.end(),
            types::INTEREST_SIGNATURE_VALUE => value = e.value_range(),
            _ => {}
        }
    }
    pieces.push(params_start..info_end);
    (pieces, value)
}

/// Rewrites the ParametersSha256DigestComponent so that a tampered Interest still passes the
/// parameters digest check and reaches the signature check. Leaves unparseable bytes alone.
fn refresh_parameters_digest(wire: &mut [u8]) {
    let Ok(top) = tlv::read_single(wire) else {
        return;
    };
    let mut r = top.children();
    let (mut digest_at, mut params_start) = (None, None);
    while let Ok(Some(e)) = r.read() {
        if e.typ == types::NAME {
            let mut comps = e.children();
            while let Ok(Some(c)) = comps.read() {
                if c.typ == types::PARAMETERS_SHA256_DIGEST_COMPONENT && c.value.len() == 32 {
                    digest_at = Some(c.value_start);
                }
            }
        } else if e.typ == types::APPLICATION_PARAMETERS {
            params_start = Some(e.start);
        }
    }
    if let (Some(at), Some(start)) = (digest_at, params_start) {
        let digest = Sha256::digest(&wire[start..]);
        wire[at..at + 32].copy_from_slice(&digest);
    }
}

/// Flips every bit of `ranges` in `wire` one at a time; `check` gets the tampered packet, the
/// byte position and the bit, and returns whether the packet was decoded (and so reached the
/// verifier). Returns how many were.
fn flip_every_bit(
    wire: &[u8],
    ranges: &[Range<usize>],
    mut check: impl FnMut(Bytes, usize, usize) -> bool,
) -> usize {
    let mut verified = 0;
    for range in ranges {
        for pos in range.clone() {
            for bit in 0..8 {
                let mut w = wire.to_vec();
                w[pos] ^= 1 << bit;
                if check(Bytes::from(w), pos, bit) {
                    verified += 1;
                }
            }
        }
    }
    verified
}

/// Flips every bit of the signed portion and of the SignatureValue: each tampered packet that
/// still decodes must fail verification. The field-based verifier checks every flip; the
/// wire-exact one checks every flip for the cheap types and one bit per byte for the others
/// (public-key verification is slow in debug builds).
#[test]
fn any_bit_flip_in_a_signed_interest_fails() {
    for s in suites() {
        let wire = signed_interest(&s);
        let (mut ranges, value) = interest_signed_ranges(&wire);
        ranges.push(value);
        let total: usize = ranges.iter().map(|r| r.len() * 8).sum();
        let reached = flip_every_bit(&wire, &ranges, |tampered, pos, bit| {
            let mut w = tampered.to_vec();
            refresh_parameters_digest(&mut w);
            let w = Bytes::from(w);
            let Ok(i) = Interest::decode(&w) else {
                return false;
            };
            assert!(
                i.verify(s.verifier.as_ref()).is_err(),
                "{}: flip at {pos}",
                s.label
            );
            if s.cheap || bit == pos % 8 {
                let view = InterestView::new_checked(w).unwrap();
                let by_wire = verify_interest_wire(&view, s.verifier.as_ref());
                assert!(by_wire.is_err(), "{}: flip at {pos} (wire)", s.label);
            }
            true
        });
        // Most flips land in values and still decode: the signature itself rejected them.
        assert!(
            reached * 2 > total,
            "{}: only {reached} of {total} flips decoded",
            s.label
        );
    }
}

/// As [`any_bit_flip_in_a_signed_interest_fails`], for Data.
#[test]
fn any_bit_flip_in_signed_data_fails() {
    for s in suites() {
        let wire = signed_data(&s);
        let top = tlv::read_single(&wire).unwrap();
        let mut r = top.children();
        let first = r.read().unwrap().unwrap().start;
        let (mut info_end, mut value) = (0, 0..0);
        while let Some(e) = r.read().unwrap() {
            match e.typ {
                types::SIGNATURE_INFO => info_end = e.end(),
                types::SIGNATURE_VALUE => value = e.value_range(),
                _ => {}
            }
        }
        let ranges = [first..info_end, value];
        let total: usize = ranges.iter().map(|r| r.len() * 8).sum();
        let reached = flip_every_bit(&wire, &ranges, |tampered, pos, bit| {
            let Ok(d) = Data::decode(&tampered) else {
                return false;
            };
            assert!(
                d.verify(s.verifier.as_ref()).is_err(),
                "{}: flip at {pos}",
                s.label
            );
            if s.cheap || bit == pos % 8 {
                let view = DataView::new_checked(tampered).unwrap();
                let by_wire = verify_data_wire(&view, s.verifier.as_ref());
                assert!(by_wire.is_err(), "{}: flip at {pos} (wire)", s.label);
            }
            true
        });
        assert!(
            reached * 2 > total,
            "{}: only {reached} of {total} flips decoded",
            s.label
        );
    }
}

#[test]
fn captured_python_appv2_interest_verifies() {
    let i = Interest::decode(&b(APPV2_REGISTER)).unwrap();
    let info = i.signature_info.as_ref().unwrap();
    assert_eq!(info.signature_type, signature_type::DIGEST_SHA256);
    assert_eq!(info.key_locator, None);
    assert_eq!(info.time, Some(0x0000_01a1_ff7a_de8c));
    assert_eq!(i.verify(&DigestSha256), Ok(()));
    let view = InterestView::new_checked(b(APPV2_REGISTER)).unwrap();
    assert_eq!(verify_interest_wire(&view, &DigestSha256), Ok(()));
}

#[test]
fn captured_ndnts_interest_verifies_after_stripping_lp() {
    let lp = b(NDNTS_REGISTER_LP);
    // By hand with the TLV reader: the LpPacket's Fragment is the Interest.
    let top = tlv::read_single(&lp).unwrap();
    assert_eq!(top.typ, types::LP_PACKET);
    let mut r = top.children();
    let mut fragment = None;
    while let Some(e) = r.read().unwrap() {
        if e.typ == types::FRAGMENT {
            fragment = Some(lp.slice(e.value_range()));
        }
    }
    let fragment = fragment.unwrap();
    // The LP decoder agrees.
    let packet = LpPacket::decode(&lp).unwrap();
    assert_eq!(
        packet.pit_token.as_deref(),
        Some(&[0x41, 0x67, 0xff, 0xff, 0xff, 0xff][..])
    );
    assert_eq!(packet.fragment.as_ref(), Some(&fragment));

    let i = Interest::decode(&fragment).unwrap();
    assert_eq!(i.lifetime_ms, Some(3999));
    assert_eq!(
        i.signature_info.as_ref().unwrap().signature_type,
        signature_type::DIGEST_SHA256
    );
    assert_eq!(i.verify(&DigestSha256), Ok(()));
    let view = InterestView::new_checked(fragment).unwrap();
    assert_eq!(verify_interest_wire(&view, &DigestSha256), Ok(()));
}

#[test]
fn captured_legacy_command_interest_verifies_by_hand() {
    let i = Interest::decode(&b(LEGACY_REGISTER)).unwrap();
    assert_eq!(
        i.signature_info, None,
        "v0.2 signs in the name, not in Interest fields"
    );
    let comps: Vec<_> = i.name.iter().collect();
    assert_eq!(comps.len(), 9);
    // [7]: the whole SignatureInfo TLV.
    let info_bytes = Bytes::copy_from_slice(comps[7].value());
    let info_el = Reader::new(&info_bytes).read_element().unwrap();
    let info = SignatureInfo::decode(&info_el, &info_bytes).unwrap();
    assert_eq!(info.signature_type, signature_type::DIGEST_SHA256);
    // [8]: the whole SignatureValue TLV, over the TLVs of components [0] to [7].
    let value = tlv::read_single(comps[8].value()).unwrap();
    assert_eq!(value.typ, types::SIGNATURE_VALUE);
    let parts: Vec<&[u8]> = comps[..8].iter().map(|c| c.wire()).collect();
    assert_eq!(
        DigestSha256.verify(info.signature_type, &parts, value.value),
        Ok(())
    );

    let mut tampered = parts.clone();
    tampered[5] = &[0x08, 0x08, 0, 0, 1, 0xa1, 0xff, 0x7b, 0x0d, 0x3e];
    assert_eq!(
        DigestSha256.verify(info.signature_type, &tampered, value.value),
        Err(VerifyError::Mismatch)
    );
}

#[test]
fn keys_round_trip_through_pkcs8_and_spki() {
    let ecdsa = EcdsaP256Signer::generate_with_rng(&mut rng(20));
    let again = EcdsaP256Signer::from_pkcs8_der(&ecdsa.to_pkcs8_der().unwrap()).unwrap();
    assert_eq!(again.verifier(), ecdsa.verifier());
    let spki = ecdsa.verifier().to_public_key_der().unwrap();
    assert_eq!(
        EcdsaP256Verifier::from_public_key_der(&spki).unwrap(),
        ecdsa.verifier()
    );

    let ed = Ed25519Signer::generate_with_rng(&mut rng(21));
    let again = Ed25519Signer::from_pkcs8_der(&ed.to_pkcs8_der().unwrap()).unwrap();
    assert_eq!(again.verifier(), ed.verifier());
    let spki = ed.verifier().to_public_key_der().unwrap();
    assert_eq!(
        Ed25519Verifier::from_public_key_der(&spki).unwrap(),
        ed.verifier()
    );

    let (rsa, _) = rsa_keys();
    assert_eq!(rsa.bits(), 2048);
    let again = RsaSha256Signer::from_pkcs8_der(&rsa.to_pkcs8_der().unwrap()).unwrap();
    assert_eq!(again.verifier(), rsa.verifier());
    let spki = rsa.verifier().to_public_key_der().unwrap();
    assert_eq!(
        RsaSha256Verifier::from_public_key_der(&spki).unwrap(),
        rsa.verifier()
    );
}

#[test]
fn pem_keys_from_pycryptodome_load_and_match() {
    let ecdsa = EcdsaP256Signer::from_pkcs8_pem(ECDSA_PKCS8_PEM).unwrap();
    assert_eq!(
        ecdsa.verifier(),
        EcdsaP256Verifier::from_public_key_pem(ECDSA_SPKI_PEM).unwrap()
    );
    let ed = Ed25519Signer::from_pkcs8_pem(ED25519_PKCS8_PEM).unwrap();
    assert_eq!(
        ed.verifier(),
        Ed25519Verifier::from_public_key_pem(ED25519_SPKI_PEM).unwrap()
    );
}

#[test]
fn mismatched_or_bad_keys_are_refused() {
    let ecdsa_der = EcdsaP256Signer::generate_with_rng(&mut rng(30))
        .to_pkcs8_der()
        .unwrap();
    let ed_der = Ed25519Signer::generate_with_rng(&mut rng(31))
        .to_pkcs8_der()
        .unwrap();
    assert_eq!(
        Ed25519Signer::from_pkcs8_der(&ecdsa_der).unwrap_err(),
        KeyError::Malformed("Ed25519")
    );
    assert!(matches!(
        EcdsaP256Signer::from_pkcs8_der(&ed_der),
        Err(KeyError::Malformed(_))
    ));
    assert!(matches!(
        RsaSha256Signer::from_pkcs8_der(&ed_der),
        Err(KeyError::Malformed(_))
    ));
    assert!(matches!(
        EcdsaP256Verifier::from_public_key_der(b"\x30\x00"),
        Err(KeyError::Malformed(_))
    ));
    assert!(matches!(
        HmacSha256::new(b""),
        Err(KeyError::Unsupported(_))
    ));

    // RSA below 2048 bits is refused, for loading and for generation.
    use rsa::pkcs8::EncodePrivateKey;
    let small = rsa::PrivateKey::new(&mut rng(32), 1024).unwrap();
    let small_der = small.to_pkcs8_der().unwrap();
    assert!(matches!(
        RsaSha256Signer::from_pkcs8_der(small_der.as_bytes()),
        Err(KeyError::Unsupported(_))
    ));
    assert!(matches!(
        RsaSha256Signer::generate_with_rng(&mut rng(33), 1024),
        Err(KeyError::Unsupported(_))
    ));
}

#[test]
fn generation_is_deterministic_with_a_seeded_rng_and_random_otherwise() {
    let a = EcdsaP256Signer::generate_with_rng(&mut rng(40)).verifier();
    assert_eq!(
        a,
        EcdsaP256Signer::generate_with_rng(&mut rng(40)).verifier()
    );
    assert_ne!(
        EcdsaP256Signer::generate().unwrap().verifier(),
        EcdsaP256Signer::generate().unwrap().verifier()
    );
    assert_ne!(
        Ed25519Signer::generate().unwrap().verifier(),
        Ed25519Signer::generate().unwrap().verifier()
    );
    assert_ne!(
        HmacSha256::generate().unwrap().expose_secret(),
        HmacSha256::generate().unwrap().expose_secret()
    );
    assert_eq!(
        HmacSha256::generate_with_rng(&mut rng(41))
            .expose_secret()
            .len(),
        32
    );
}

#[test]
fn debug_output_hides_secret_keys() {
    let hmac = HmacSha256::new(&[0xab; 32])
        .unwrap()
        .with_key_name(name("/k"));
    let text = format!("{hmac:?}");
    assert!(
        text.contains("<redacted>") && !text.contains("171") && !text.contains("ab"),
        "{text}"
    );

    let ecdsa = EcdsaP256Signer::generate_with_rng(&mut rng(50));
    let ed = Ed25519Signer::generate_with_rng(&mut rng(51));
    let secrets = [
        (format!("{ecdsa:?}"), ecdsa.to_pkcs8_der().unwrap()),
        (format!("{ed:?}"), ed.to_pkcs8_der().unwrap()),
        (
            format!("{:?}", rsa_keys().0),
            rsa_keys().0.to_pkcs8_der().unwrap(),
        ),
    ];
    for (text, der) in secrets {
        assert!(text.contains("<redacted>"), "{text}");
        assert!(text.len() < 200, "{text}");
        // No 4-byte window of the private key shows up, in decimal or in hex.
        for w in der.windows(4).skip(der.len().saturating_sub(36)) {
            assert!(!text.contains(&hex::encode(w)), "{text}");
            assert!(
                !text.contains(&format!("{}, {}, {}, {}", w[0], w[1], w[2], w[3])),
                "{text}"
            );
        }
    }
}

#[test]
fn key_locator_options() {
    let digest = Bytes::from_static(&[0x5a; 32]);
    let s = EcdsaP256Signer::generate_with_rng(&mut rng(60))
        .with_key_locator(KeyLocator::KeyDigest(digest.clone()));
    let mut d = Data::new(name("/x"), Bytes::new());
    d.sign(&s).unwrap();
    let d = Data::decode(&d.encode()).unwrap();
    assert_eq!(
        d.signature_info.key_locator,
        Some(KeyLocator::KeyDigest(digest))
    );
    assert_eq!(d.verify(&s.verifier()), Ok(()));

    let plain = Ed25519Signer::generate_with_rng(&mut rng(61));
    assert_eq!(plain.key_locator(), None);
}

/// Packets with elements the decoders skip: the wire-exact verifiers hash what was received.
#[test]
fn wire_verification_covers_skipped_non_critical_elements() {
    // Data whose SignatureInfo carries a non-critical AdditionalDescription (TLV-TYPE 0x0102).
    let head = b("0703 080161 1501 78 1609 1b0100 fd0102 02 aabb");
    let digest = Sha256::digest(&head);
    let mut wire = Vec::new();
    tlv::put_header(&mut wire, types::DATA, head.len() + 34);
    wire.extend_from_slice(&head);
    tlv::put_tlv(&mut wire, types::SIGNATURE_VALUE, &digest);
    let view = DataView::new_checked(Bytes::from(wire)).unwrap();
    assert_eq!(verify_data_wire(&view, &DigestSha256), Ok(()));

    // Interest with a non-critical element between ApplicationParameters and the signature.
    let comp = b("080161");
    let block = b("2400 fd010200 2c03 1b0100");
    let sig = Sha256::digest([&comp[..], &block[..]].concat());
    let mut tail = block.to_vec();
    tlv::put_tlv(&mut tail, types::INTEREST_SIGNATURE_VALUE, &sig);
    let mut name_value = comp.to_vec();
    let params_digest = Sha256::digest(&tail);
    tlv::put_tlv(
        &mut name_value,
        types::PARAMETERS_SHA256_DIGEST_COMPONENT,
        &params_digest,
    );
    let mut body = Vec::new();
    tlv::put_tlv(&mut body, types::NAME, &name_value);
    body.extend_from_slice(&tail);
    let mut wire = Vec::new();
    tlv::put_tlv(&mut wire, types::INTEREST, &body);
    let wire = Bytes::from(wire);
    Interest::decode(&wire).unwrap();
    let view = InterestView::new_checked(wire).unwrap();
    assert_eq!(verify_interest_wire(&view, &DigestSha256), Ok(()));
}

#[test]
fn wire_verification_of_unsigned_interest() {
    let view = InterestView::new_checked(b("0505 0703 080161")).unwrap();
    assert_eq!(
        verify_interest_wire(&view, &DigestSha256),
        Err(VerifyError::Unsigned)
    );
}
