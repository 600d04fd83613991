use bytes::Bytes;
use proptest::prelude::*;
use sha2::{Digest, Sha256};

use super::*;
use crate::signature::{signature_type, KeyLocator};
use crate::testutil::{
    arb_component, arb_name, assert_paths_agree, generic_name, name_fields, octet_variants,
    packet_variants,
};

fn b(hex_str: &str) -> Bytes {
    let clean: String = hex_str.split_whitespace().collect();
    Bytes::from(hex::decode(clean).unwrap())
}

fn sample() -> Data {
    Data {
        name: "/example/data/seg=3".parse().unwrap(),
        meta_info: Some(MetaInfo {
            content_type: Some(content_type::BLOB),
            freshness_period: Some(10_000),
            final_block_id: Some(Component::segment(9)),
        }),
        content: Some(Bytes::from_static(b"hello")),
        signature_info: SignatureInfo {
            signature_type: signature_type::SHA256_WITH_ECDSA,
            key_locator: Some(KeyLocator::Name("/key/KEY/1".parse().unwrap())),
            ..SignatureInfo::default()
        },
        signature_value: Bytes::from_static(&[0x55; 64]),
    }
}

#[test]
fn round_trip_and_view() {
    let d = sample();
    let wire = d.encode();
    assert_eq!(Data::decode(&wire).unwrap(), d);
    let v = DataView::new_checked(wire.clone()).unwrap();
    assert_eq!(v.name(), &d.name);
    assert_eq!(v.freshness_period_ms(), 10_000);
    assert_eq!(v.content_type(), content_type::BLOB);
    assert_eq!(v.final_block_id(), Some(Component::segment(9)));
    assert_eq!(&v.content()[..], b"hello");
    assert_eq!(v.signature_info(), d.signature_info);
    assert_eq!(v.signature_value(), d.signature_value);
    let digest: [u8; 32] = Sha256::digest(&wire).into();
    assert_eq!(v.implicit_digest(), digest);
    assert_eq!(v.full_name().len(), 4);
    assert_eq!(v.full_name().last().unwrap().value(), &digest[..]);
    // The signed portion runs from Name to the end of SignatureInfo.
    let portion = v.signed_portion();
    assert_eq!(portion[0], 0x07);
    assert!(wire.ends_with(&[&[0x17, 0x40][..], &[0x55; 64][..]].concat()));
    assert_eq!(portion.len(), wire.len() - 2 - 2 - 64);
}

#[test]
fn content_is_shared_not_copied() {
    let wire = sample().encode();
    let v = DataView::new_checked(wire.clone()).unwrap();
    let c = v.content();
    let off = c.as_ptr() as usize - wire.as_ptr() as usize;
    assert_eq!(&wire[off..off + 5], b"hello");
}

#[test]
fn control_response_example_decodes() {
    // docs/nfd-interop.md §5.3, with a short name: MetaInfo{FreshnessPeriod 1000},
    // Content = ControlResponse, DigestSha256.
    let wire = b("0636 0703 080161 1403 180100 1523 65 21 6601c8 67024f4b 6818 0709 0807 6578616d706c65 6902 0100 6f0100 6a0100 6c0101
                  16031b0100 1700");
    let d = Data::decode(&wire).unwrap();
    assert_eq!(d.meta_info.unwrap().content_type, Some(0));
    assert_eq!(d.content.unwrap()[0], 0x65);
    assert_eq!(
        d.signature_info.signature_type,
        signature_type::DIGEST_SHA256
    );
}

#[test]
fn negative_cases() {
    let cases: &[(&str, ErrorKind)] = &[
        // no SignatureInfo
        (
            "0605 0703 080161",
            ErrorKind::Missing {
                typ: types::SIGNATURE_INFO,
            },
        ),
        // SignatureInfo but no SignatureValue
        (
            "060a 0703 080161 16031b0100",
            ErrorKind::Missing {
                typ: types::SIGNATURE_VALUE,
            },
        ),
        // Content before MetaInfo
        (
            "0610 0703 080161 1500 1400 16031b0100 1700",
            ErrorKind::OutOfOrder {
                typ: types::META_INFO,
            },
        ),
        // unknown critical element in MetaInfo
        (
            "0610 0703 080161 1402 1b00 16031b0100 1700",
            ErrorKind::UnrecognizedCritical { typ: 0x1b },
        ),
        // SignatureValue without SignatureInfo (found by the fuzzer)
        (
            "0604 0700 1700",
            ErrorKind::Missing {
                typ: types::SIGNATURE_INFO,
            },
        ),
        // SignatureInfo without SignatureType
        (
            "0609 0703 080161 1600 1700",
            ErrorKind::Missing {
                typ: types::SIGNATURE_TYPE,
            },
        ),
        // FreshnessPeriod of 3 bytes
        (
            "0613 0703 080161 1405 1903 000001 16031b0100 1700",
            ErrorKind::BadNonNegativeInteger,
        ),
        // ContentType after FreshnessPeriod in MetaInfo
        (
            "0614 0703 080161 1406 190100 180100 16031b0100 1700",
            ErrorKind::OutOfOrder {
                typ: types::CONTENT_TYPE,
            },
        ),
        // ContentType twice in MetaInfo
        (
            "0614 0703 080161 1406 180100 180100 16031b0100 1700",
            ErrorKind::OutOfOrder {
                typ: types::CONTENT_TYPE,
            },
        ),
        // KeyLocator after SignatureNonce in SignatureInfo
        (
            "0611 0703 080161 1608 1b0100 2601ff 1c00 1700",
            ErrorKind::OutOfOrder {
                typ: types::KEY_LOCATOR,
            },
        ),
        // SignatureNonce twice in SignatureInfo
        (
            "0612 0703 080161 1609 1b0100 2601ff 2601ff 1700",
            ErrorKind::OutOfOrder {
                typ: types::SIGNATURE_NONCE,
            },
        ),
        // unknown critical element in SignatureInfo
        (
            "060e 0703 080161 1605 1b0100 fb00 1700",
            ErrorKind::UnrecognizedCritical { typ: 0xfb },
        ),
    ];
    for (hex_str, kind) in cases {
        let wire = b(hex_str);
        let err = Data::decode(&wire).unwrap_err();
        assert_eq!(err.kind, *kind, "{hex_str}: {err}");
        assert!(DataView::new_checked(wire).is_err());
    }
}

/// Unknown non-critical elements (even TLV-TYPE above 31) are skipped in Data, MetaInfo and
/// SignatureInfo, and the known elements around them still decode.
#[test]
fn unknown_non_critical_elements_are_skipped() {
    // Data{Name /a, MetaInfo{ContentType 0, 0xfc00 unknown, FreshnessPeriod 0}, 0xfa00 unknown,
    // SignatureInfo{SignatureType 0, 0xfc00 unknown, SignatureNonce ff}, SignatureValue}
    let wire = b("061d 0703 080161 1408 180100 fc00 190100 fa00 1608 1b0100 fc00 2601ff 1700");
    let d = Data::decode(&wire).unwrap();
    let meta = d.meta_info.unwrap();
    assert_eq!(meta.content_type, Some(0));
    assert_eq!(meta.freshness_period, Some(0));
    assert_eq!(d.signature_info.nonce.as_deref(), Some(&[0xff][..]));
    assert!(DataView::new_checked(wire).is_ok());
}

#[test]
fn data_with_empty_name_is_allowed() {
    // Only Interests must have a non-empty name.
    let d = Data {
        name: Name::root(),
        ..sample()
    };
    assert_eq!(Data::decode(&d.encode()).unwrap(), d);
}

fn arb_data() -> impl Strategy<Value = Data> {
    (
        arb_name(0, 8),
        proptest::option::of((
            proptest::option::of(0u64..10),
            proptest::option::of(any::<u64>()),
            proptest::option::of(arb_component()),
        )),
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..300)),
        0u64..6,
        proptest::option::of(arb_name(0, 3)),
        proptest::collection::vec(any::<u8>(), 0..80),
    )
        .prop_map(|(name, meta, content, st, kl, sig)| Data {
            name,
            meta_info: meta.map(|(t, f, fb)| MetaInfo {
                content_type: t,
                freshness_period: f,
                final_block_id: fb,
            }),
            content: content.map(Bytes::from),
            signature_info: SignatureInfo {
                signature_type: st,
                key_locator: kl.map(KeyLocator::Name),
                ..SignatureInfo::default()
            },
            signature_value: Bytes::from(sig),
        })
}

proptest! {
    #[test]
    fn data_round_trip(d in arb_data()) {
        let wire = d.encode();
        prop_assert_eq!(Data::decode(&wire).unwrap(), d.clone());
        let v = DataView::new_checked(wire).unwrap();
        prop_assert_eq!(v.name(), &d.name);
        prop_assert_eq!(v.freshness_period_ms(), d.freshness_period());
        prop_assert_eq!(v.content(), d.content.clone().unwrap_or_default());
        assert_fast_path_agrees(v.wire());
    }

    #[test]
    fn data_decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let wire = Bytes::from(bytes);
        assert_fast_path_agrees(&wire);
        let owned = Data::decode(&wire);
        let view = DataView::new_checked(wire);
        prop_assert_eq!(owned.is_ok(), view.is_ok());
    }
}

#[test]
fn a_view_and_its_name_share_one_handle() {
    let d = Data::new("/a/b".parse().unwrap(), Bytes::from_static(b"x"));
    let wire = Bytes::from(d.encode().to_vec());
    let view = DataView::new_checked(wire).unwrap();
    assert!(view.wire().is_unique(), "the view holds a second handle");
    assert_eq!(view.name().to_string(), "/a/b");
    assert!(view
        .wire()
        .as_ptr_range()
        .contains(&view.name().value_bytes().as_ptr()));
    // A prefix shares the buffer too, and still reads only its own components.
    let p = view.name().prefix(1);
    assert_eq!(p.to_string(), "/a");
    assert_eq!(p.value_bytes(), b"\x08\x01a");
}

/// Every one-octet corruption and truncation of MetaInfo values, FreshnessPeriod alone (the
/// shape the parser takes a fast path for) and with other fields: the fast path reads what
/// the general walk reads and refuses what it refuses, with the same error.
#[test]
fn meta_info_fast_path_agrees_with_the_general_walk() {
    let values: [&[u8]; 7] = [
        &[0x19, 0x02, 0x27, 0x10],
        &[0x19, 0x00],
        &[0x19, 0x03, 0x01, 0x02, 0x03],
        &[0x19, 0x01, 0x05],
        &[0x19, 0x08, 1, 2, 3, 4, 5, 6, 7, 8],
        &[0x18, 0x01, 0x00, 0x19, 0x02, 0x27, 0x10],
        &[0x19, 0x02, 0x27, 0x10, 0x1a, 0x03, 0x08, 0x01, 0x61],
    ];
    let variants: Vec<Vec<u8>> = values
        .iter()
        .flat_map(|v| octet_variants(v, &[0x00, 0x01, 0x03, 0x04, 0x18, 0x19, 0x1a, 0xfd]))
        .collect();
    for value in &variants {
        let mut wire = vec![0x14, value.len() as u8];
        wire.extend_from_slice(value);
        let e = Reader::with_base(&wire, 20).read_element().unwrap();
        assert_eq!(
            Meta::parse(e.value, || e),
            Meta::walk(&e),
            "{}",
            hex::encode(value)
        );
    }
}

/// Everything a view holds, for comparing two ways of building it.
fn view_fields(v: &DataView) -> impl PartialEq + core::fmt::Debug {
    (
        name_fields(v.wire(), v.name()),
        (v.content_type, v.freshness_period, v.final_block_id),
        (v.content, v.signature_info, v.signature_value, v.signed),
    )
}

fn assert_fast_path_agrees(wire: &[u8]) {
    assert_paths_agree(
        wire,
        DataView::new_checked,
        DataView::new_checked_general,
        view_fields,
    );
}

/// Every truncation and one-octet corruption of Data of the fast path's shape and around it:
/// the view reads what the general parser reads and refuses what it refuses, with the same
/// error.
#[test]
fn view_fast_path_agrees_with_the_general_parser() {
    let mut bench = Data::new(
        "/bench/a/b"
            .parse::<Name>()
            .unwrap()
            .append(&Component::sequence_num(0xa1b2_c3d4))
            .unwrap(),
        Bytes::from(vec![0x5a; 20]),
    );
    bench.meta_info = Some(MetaInfo {
        freshness_period: Some(10_000),
        ..MetaInfo::default()
    });
    bench.signature_value = Bytes::from(vec![0; 32]);
    let mut datas = vec![bench.clone(), sample()];
    for (n, len) in [(0, 0), (1, 1), (16, 1), (17, 1), (16, 20), (1, 300)] {
        let mut d = bench.clone();
        d.name = generic_name(n, len);
        datas.push(d);
    }
    let mut bare = bench.clone();
    bare.meta_info = None;
    bare.content = None;
    datas.push(bare.clone());
    let mut long = bare.clone();
    long.content = Some(Bytes::from(vec![0x5a; 300]));
    long.signature_value = Bytes::from(vec![0x5b; 260]);
    datas.push(long);
    let mut empty_meta = bare.clone();
    empty_meta.meta_info = Some(MetaInfo::default());
    empty_meta.content = Some(Bytes::new());
    datas.push(empty_meta);
    let mut key_digest = bare;
    key_digest.signature_info.key_locator = Some(KeyLocator::KeyDigest(Bytes::from_static(b"k")));
    datas.push(key_digest);
    let mut wires: Vec<Bytes> = datas.iter().map(Data::encode).collect();
    wires.extend([
        // unrecognized non-critical elements
        b("0610 0703 080161 3000 1500 16031b0100 1700"),
        b("0610 0703 080161 1500 16031b0100 1700 3000"),
        // three-octet lengths in their shortest form and not
        b("06fd000f 0703 080161 1500 16031b0100 1701 aa"),
        b("0611 07fd0003 080161 1500 16031b0100 1701 aa"),
        b("0611 0703 080161 15fd0000 16031b0100 1701 aa"),
    ]);
    let (mut checked, mut fast) = (0, 0);
    for wire in &wires {
        for w in packet_variants(wire) {
            assert_fast_path_agrees(&w);
            checked += 1;
            let w = Bytes::from(w);
            fast += usize::from(matches!(Simple::parse(&w, &mut [0; 16]), Ok(Some(_))));
        }
    }
    assert!(
        checked > 10_000 && fast > 1_000,
        "{checked} variants, {fast} fast"
    );
}
