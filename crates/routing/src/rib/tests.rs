use nameway_wire::security::DigestSha256;

use super::*;
use crate::announcement::Announcement;
use crate::key::NameKey;
use crate::locator::LocatorRecord;

const T: u64 = 1_760_000_000_000;

fn rib() -> Name {
    "/example/32=RIB".parse().unwrap()
}

fn chain() -> (Bytes, Bytes) {
    let owner = NameKey::generate().unwrap();
    let router = NameKey::generate().unwrap();
    let pa = Announcement::delegation(&owner, &router.hash(), T, 600_000).unwrap();
    let loc = LocatorRecord::build(&router, &["udp4://192.0.2.1:6363"], T, 600_000).unwrap();
    (pa.wire().clone(), loc.wire().clone())
}

#[test]
fn lookup_names_and_interests() {
    let h = KeyHash::from_bytes([7; 32]);
    let name = lookup_name(&rib(), &h).unwrap();
    assert_eq!(
        name.to_string(),
        format!("/example/32=RIB/32=sc/{}", "%07".repeat(32))
    );
    assert_eq!(parse_lookup(&rib(), &name), Some(h));
    assert_eq!(parse_lookup(&"/other/32=RIB".parse().unwrap(), &name), None);
    assert_eq!(
        parse_lookup(&rib(), &name.append(&Component::segment(0)).unwrap()),
        None
    );
    assert_eq!(parse_lookup(&rib(), &h.name()), None);
    let wire = lookup_interest(&rib(), &h, 1000, 0xabcd).unwrap().encode();
    let i = Interest::decode(&wire).unwrap();
    assert_eq!(i.name, name);
    assert!(i.must_be_fresh && !i.can_be_prefix);
    assert_eq!((i.lifetime_ms, i.nonce), (Some(1000), Some(0xabcd)));
}

#[test]
fn answers_round_trip() {
    let (pa, loc) = chain();
    let name = lookup_name(&rib(), &KeyHash::from_bytes([1; 32])).unwrap();
    let found = Answer::Found {
        announcement: pa.clone(),
        locator: loc.clone(),
    };
    let wire = encode_answer(&name, &found, 1000, &DigestSha256).unwrap();
    let d = decode_answer(&wire).unwrap();
    assert_eq!(
        (d.name, d.answer, d.freshness_ms),
        (name.clone(), found, 1000)
    );
    assert_eq!(d.signature_info.signature_type, 0);
    let missing = Answer::NotFound { ttl_ms: 5000 };
    let wire = encode_answer(&name, &missing, 1000, &DigestSha256).unwrap();
    let view = DataView::new_checked(wire.clone()).unwrap();
    assert_eq!(view.content_type(), content_type::NACK);
    assert_eq!(view.freshness_period_ms(), 5000);
    let d = decode_answer(&wire).unwrap();
    assert_eq!(d.answer, missing);
    assert_eq!(found_freshness(T, T + 300_000, 1000), 1000);
    assert_eq!(found_freshness(T, T + 300, 1000), 300);
    assert_eq!(found_freshness(T, T - 300, 1000), 0);
}

fn blob(content: &str, ct: u64) -> Bytes {
    let mut d = Data::new(
        "/example/32=RIB/x".parse().unwrap(),
        hex::decode(content).unwrap(),
    );
    d.meta_info = Some(MetaInfo {
        content_type: Some(ct),
        ..MetaInfo::default()
    });
    d.sign(&DigestSha256).unwrap();
    d.encode()
}

#[test]
fn malformed_answers() {
    let data = "0603070100"; // the smallest thing that reads as a Data element
    let cases = [
        (String::new(), 0, FormatError::Missing("NwAnnouncement")),
        (
            format!("fd8e0605{data}"),
            0,
            FormatError::Missing("NwLocator"),
        ),
        (
            format!("fd8e0805{data}"),
            0,
            FormatError::Missing("NwAnnouncement"),
        ),
        (
            format!("fd8e0605{data} fd8e0605{data} fd8e0805{data}"),
            0,
            FormatError::Repeated("NwAnnouncement"),
        ),
        (
            format!("fd8e0603050100 fd8e0805{data}"),
            0,
            FormatError::Invalid("NwAnnouncement (not one Data)"),
        ),
        (
            format!("fd8e0605{data} fd8e08060603070100ff"),
            0,
            FormatError::Invalid("NwLocator (not one Data)"),
        ),
        (
            format!("fd8e0605{data} fd8e0805{data} fd8e0700"),
            0,
            FormatError::UnrecognizedCritical(0x8e07),
        ),
        (
            String::new(),
            2,
            FormatError::ContentType {
                expected: 0,
                found: 2,
            },
        ),
    ];
    for (content, ct, want) in cases {
        let content = content.replace(' ', "");
        assert_eq!(
            decode_answer(&blob(&content, ct)).unwrap_err(),
            want,
            "{content}"
        );
    }
    // Unknown non-critical elements are skipped.
    let ok = blob(&format!("fd8e0605{data}fd8e0805{data}fd8e4000"), 0);
    assert!(matches!(
        decode_answer(&ok).unwrap().answer,
        Answer::Found { .. }
    ));
}

#[test]
fn registrations_round_trip_and_are_bound_by_their_digest() {
    let (pa, loc) = chain();
    let i = registration_interest(&rib(), &pa, &loc, 4000, 9).unwrap();
    let wire = i.encode();
    let r = parse_registration(&rib(), &wire).unwrap();
    assert_eq!((&r.announcement, &r.locator), (&pa, &loc));
    assert_eq!(r.name.len(), rib().len() + 2);
    assert_eq!(r.name.get(2).unwrap().to_string(), "32=REG");
    // Changing a byte of the parameters breaks the digest.
    let mut bad = wire.to_vec();
    let i = bad.len() - 10;
    bad[i] ^= 1;
    assert!(matches!(
        parse_registration(&rib(), &Bytes::from(bad)),
        Err(FormatError::Packet(_))
    ));
    // Sent to another RIB prefix, or not a registration.
    assert!(matches!(
        parse_registration(&"/other".parse().unwrap(), &wire),
        Err(FormatError::Name(_))
    ));
    let lookup = lookup_interest(&rib(), &KeyHash::default(), 10, 1)
        .unwrap()
        .encode();
    assert!(matches!(
        parse_registration(&rib(), &lookup),
        Err(FormatError::Name(_))
    ));
}

#[test]
fn registration_replies_round_trip() {
    let name: Name = "/example/32=RIB/32=REG".parse().unwrap();
    for status in [
        RegistrationStatus::Stored,
        RegistrationStatus::NotNewer { current_version: T },
        RegistrationStatus::Refused(RejectReason::NameKeyMismatch),
        RegistrationStatus::Refused(RejectReason::BadLocator),
    ] {
        let wire = encode_registration_reply(&name, status, &DigestSha256).unwrap();
        assert_eq!(decode_registration_reply(&wire).unwrap(), status);
    }
    for (content, want) in [
        ("", FormatError::Missing("NwStatus")),
        ("fd8e0a0103", FormatError::Invalid("NwStatus")),
        ("fd8e0a0101", FormatError::Missing("NwCurrentVersion")),
        ("fd8e0a0102", FormatError::Invalid("NwRejectReason")),
        (
            "fd8e0a0102fd8e0c0109",
            FormatError::Invalid("NwRejectReason"),
        ),
        ("fd8e0a0100fd8e0a0100", FormatError::Repeated("NwStatus")),
    ] {
        assert_eq!(
            decode_registration_reply(&blob(content, 0)).unwrap_err(),
            want,
            "{content}"
        );
    }
}
