use bytes::Bytes;
use nameway_wire::security::DigestSha256;
use nameway_wire::{Data, MetaInfo, Name};

use super::*;
use crate::key::NameKey;

fn unhex(s: &str) -> Bytes {
    let clean: String = s.split_whitespace().collect();
    Bytes::from(hex::decode(clean).unwrap())
}

/// The Prefix Announcement of ndn-cxx's unit tests (tests/unit/prefix-announcement.t.cpp):
/// /net/example, version 1, expires in one hour, valid 2018-10-30 to 2018-11-24T23:59:59,
/// DigestSha256 with an all-zero value.
const NDN_CXX_PA: &str = "
    0678
    0718 08036e6574 08076578616d706c65 20025041 360101 320100
    1403 180105
    1530 6d040036ee80
         fd00fd26 fd00fe0f323031383130333054303030303030 fd00ff0f323031383131323454323335393539
    1603 1b0100
    1720 0000000000000000000000000000000000000000000000000000000000000000";

#[test]
fn decodes_ndn_cxx_vector() {
    let pa = Announcement::decode(unhex(NDN_CXX_PA)).unwrap();
    assert_eq!(pa.prefix(), &"/net/example".parse::<Name>().unwrap());
    assert_eq!((pa.version(), pa.segment()), (1, 0));
    assert_eq!(pa.expiration_ms(), 3_600_000);
    assert_eq!(
        pa.validity(),
        Some(Validity {
            not_before_ms: 1_540_857_600_000,
            not_after_ms: 1_543_103_999_000,
        })
    );
    assert_eq!((pa.delegate(), pa.public_key()), (None, None));
    assert_eq!(pa.signature_type(), 0);
    assert_eq!(pa.key_hash(), None);
    assert_eq!(pa.expires_at_ms(), 3_600_001);
}

/// A DigestSha256-signed Data named `name` with ContentType `ct` and `content`.
fn data(name: &str, ct: Option<u64>, content: Option<&str>) -> Bytes {
    let mut d = Data::new(name.parse().unwrap(), Bytes::new());
    d.content = content.map(unhex);
    d.meta_info = ct.map(|t| MetaInfo {
        content_type: Some(t),
        ..MetaInfo::default()
    });
    d.sign(&DigestSha256).unwrap();
    d.encode()
}

const NAME: &str = "/net/example/32=PA/v=1/seg=0";
const EXPIRE: &str = "6d040036ee80";
const VALIDITY: &str = "fd00fd26 fd00fe0f323031383130333054303030303030 \
                        fd00ff0f323031383131323454323335393539";

#[test]
fn accepts_what_ndn_cxx_accepts() {
    // Reordered, with an unknown non-critical element (32 is even and above 31).
    let pa = Announcement::decode(data(
        NAME,
        Some(5),
        Some(&format!("{VALIDITY} {EXPIRE} 2000")),
    ))
    .unwrap();
    assert_eq!(pa.expiration_ms(), 3_600_000);
    assert!(pa.validity().is_some());
    // Without ValidityPeriod; another segment number (ndn-cxx checks the type only).
    let pa = Announcement::decode(data("/a/32=PA/v=9/seg=3", Some(5), Some(EXPIRE))).unwrap();
    assert_eq!((pa.version(), pa.segment(), pa.validity()), (9, 3, None));
    // Announcing the root prefix.
    let pa = Announcement::decode(data("/32=PA/v=9/seg=0", Some(5), Some(EXPIRE))).unwrap();
    assert!(pa.prefix().is_empty());
}

#[test]
fn refuses_what_ndn_cxx_refuses() {
    let cases: &[(&str, Option<u64>, Option<&str>, FormatError)] = &[
        (
            NAME,
            Some(0),
            Some(EXPIRE),
            FormatError::ContentType {
                expected: 5,
                found: 0,
            },
        ),
        (
            NAME,
            None,
            Some(EXPIRE),
            FormatError::ContentType {
                expected: 5,
                found: 0,
            },
        ),
        (
            "/net/example/32=not-PA/v=1/seg=0",
            Some(5),
            Some(EXPIRE),
            FormatError::Name("not <prefix>/32=PA/<version>/<segment>"),
        ),
        (
            "/net/example/32=PA/not-version/seg=0",
            Some(5),
            Some(EXPIRE),
            FormatError::Name("not <prefix>/32=PA/<version>/<segment>"),
        ),
        (
            "/net/example/32=PA/v=1/not-segment",
            Some(5),
            Some(EXPIRE),
            FormatError::Name("not <prefix>/32=PA/<version>/<segment>"),
        ),
        (
            "/v=1/seg=0",
            Some(5),
            Some(EXPIRE),
            FormatError::Name("not <prefix>/32=PA/<version>/<segment>"),
        ),
        (NAME, Some(5), None, FormatError::Missing("Content")),
        (NAME, Some(5), Some(""), FormatError::Missing("Content")),
        (
            NAME,
            Some(5),
            Some(VALIDITY),
            FormatError::Missing("ExpirationPeriod"),
        ),
        (
            NAME,
            Some(5),
            Some(&format!("{EXPIRE} {EXPIRE}")),
            FormatError::Repeated("ExpirationPeriod"),
        ),
        (
            NAME,
            Some(5),
            Some(&format!("{EXPIRE} 2100")),
            FormatError::UnrecognizedCritical(0x21),
        ),
        (
            NAME,
            Some(5),
            Some(&format!("{EXPIRE} fd8e0100")),
            FormatError::UnrecognizedCritical(0x8e01),
        ),
        (
            NAME,
            Some(5),
            Some(&format!(
                "{EXPIRE} fd00fd13 fd00fe0f323031383130333054303030303030"
            )),
            FormatError::Invalid("ValidityPeriod"),
        ),
        (
            NAME,
            Some(5),
            Some(&format!(
                "{EXPIRE} fd00fd25 fd00fe0e3230313831303330543030303030 \
                 fd00ff0f323031383131323454323335393539"
            )),
            FormatError::Invalid("ValidityPeriod"),
        ),
        (
            NAME,
            Some(5),
            Some(&format!("{EXPIRE} fd8e0003 080161")),
            FormatError::Invalid("NwDelegate (not one Name)"),
        ),
        (
            NAME,
            Some(5),
            Some(&format!("{EXPIRE} fd8e0200")),
            FormatError::Invalid("NwPublicKey (empty)"),
        ),
    ];
    for (name, ct, content, want) in cases {
        let wire = data(name, *ct, *content);
        assert_eq!(
            Announcement::decode(wire).unwrap_err(),
            *want,
            "{name} {ct:?} {content:?}"
        );
    }
    // A malformed ExpirationPeriod (3 octets) is a packet-level TLV error.
    let wire = data(NAME, Some(5), Some("6d03000001"));
    assert!(matches!(
        Announcement::decode(wire),
        Err(FormatError::Packet(_))
    ));
    // Not a Data at all.
    assert!(matches!(
        Announcement::decode(unhex("0503 070100")),
        Err(FormatError::Packet(_))
    ));
}

#[test]
fn delegation_round_trips_and_lays_out_the_content_in_order() {
    let key = NameKey::generate().unwrap();
    let router = NameKey::generate().unwrap();
    let now = 1_760_000_000_123;
    let pa = Announcement::delegation(&key, &router.hash(), now, 600_000).unwrap();
    assert_eq!(pa.prefix(), &key.name());
    assert_eq!(pa.key_hash(), Some(key.hash()));
    assert_eq!(pa.version(), now);
    assert_eq!(pa.segment(), 0);
    assert_eq!(pa.expiration_ms(), 600_000);
    assert_eq!(pa.delegate(), Some(&router.name()));
    assert_eq!(pa.public_key(), Some(key.spki()));
    assert_eq!(pa.signature_type(), 5);
    assert_eq!(
        pa.key_locator(),
        Some(KeyLocator::KeyDigest(Bytes::copy_from_slice(
            key.hash().as_bytes()
        )))
    );
    // Whole seconds on the wire: NotBefore 1760000000000, NotAfter 1760000600000.
    assert_eq!(
        pa.validity(),
        Some(Validity {
            not_before_ms: 1_760_000_000_000,
            not_after_ms: 1_760_000_600_000,
        })
    );
    assert_eq!(pa.expires_at_ms(), 1_760_000_600_000);
    pa.check_signature(key.spki()).unwrap();
    assert!(pa.check_signature(router.spki()).is_err());
    // Content: ExpirationPeriod, ValidityPeriod, NwDelegate, NwPublicKey, in that order.
    let content = pa.view().content();
    let types: Vec<u32> = {
        let mut r = nameway_wire::tlv::Reader::new(&content);
        std::iter::from_fn(|| r.read().unwrap().map(|e| e.typ)).collect()
    };
    assert_eq!(types, [0x6d, 0xfd, 0x8e00, 0x8e02]);
    assert_eq!(&content[..6], &[0x6d, 0x04, 0x00, 0x09, 0x27, 0xc0]);
    // Decoding the bytes again gives the same announcement.
    assert_eq!(Announcement::decode(pa.wire().clone()).unwrap(), pa);
}

#[test]
fn any_changed_byte_breaks_the_signature_or_the_decoding() {
    let key = NameKey::generate().unwrap();
    let pa = Announcement::delegation(&key, &key.hash(), 1_760_000_000_000, 600_000).unwrap();
    let wire = pa.wire().to_vec();
    for i in 0..wire.len() {
        let mut w = wire.clone();
        w[i] ^= 0x01;
        if let Ok(p) = Announcement::decode(Bytes::from(w)) {
            assert!(p.check_signature(key.spki()).is_err(), "byte {i}");
        }
    }
}

#[test]
fn build_takes_any_prefix_and_signer() {
    let params = AnnouncementParams {
        prefix: "/example/app".parse().unwrap(),
        version: 42,
        expiration_ms: 5000,
        validity: None,
        delegate: None,
        public_key: None,
    };
    let pa = Announcement::build(&params, &DigestSha256).unwrap();
    assert_eq!(
        pa.view().name().to_string(),
        "/example/app/32=PA/v=42/seg=0"
    );
    assert_eq!((pa.signature_type(), pa.expires_at_ms()), (0, 5042));
    assert_eq!(pa.key_hash(), None);
}
