//! Entry points for the fuzz targets in `fuzz/`: the announcement, locator record and RIB
//! message decoders, and the chain verifier fed whatever they accept.
//!
//! Each function takes untrusted bytes and, when decoding succeeds, checks invariants that
//! hold for every accepted input (fields re-encode to the same fields, the name structure is
//! what the decoder claims, the verifier's result agrees with the records). A panic here is
//! the point: an invariant does not hold. Not part of the stable API. A target is one line:
//! `fuzz_target!(|d: &[u8]| nameway_routing::fuzzing::decode_announcement(d));`

#![doc(hidden)]
// Fuzzing entry points panic on purpose when an invariant breaks.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bytes::Bytes;
use nameway_wire::security::DigestSha256;
use nameway_wire::tlv;

use crate::announcement::{Announcement, AnnouncementParams};
use crate::error::RejectReason;
use crate::locator::{LocatorRecord, MAX_FACE_URIS};
use crate::rib::{self, Answer};
use crate::sc::KeyHash;
use crate::verifier::{ChainVerifier, Origin, VerifierConfig};

/// The wall-clock time the chain target verifies at (its seeds are signed a second before).
pub const FUZZ_NOW_MS: u64 = 1_760_000_000_000;

/// Decodes an announcement; an accepted one's fields re-encode (in Nameway's order, with a
/// DigestSha256 signature) to an announcement with the same fields.
pub fn decode_announcement(data: &[u8]) {
    nameway_wire::fuzzing::decode_data(data);
    let Ok(pa) = Announcement::decode(Bytes::copy_from_slice(data)) else {
        return;
    };
    let name = pa.view().name();
    assert_eq!(name.len(), pa.prefix().len() + 3);
    assert!(pa.prefix().is_prefix_of(name));
    assert!(pa.expires_at_ms() <= pa.version().saturating_add(pa.expiration_ms()));
    if let Some(v) = pa.validity() {
        assert!(pa.expires_at_ms() <= v.not_after_ms);
    }
    match pa.key_hash() {
        Some(h) => assert!(h.is_name(pa.prefix())),
        None => assert!(pa.prefix().len() != 2 || KeyHash::from_name(pa.prefix()).is_none()),
    }
    if let Some(k) = pa.public_key() {
        let _ = pa.check_signature(k);
    }
    let params = AnnouncementParams {
        prefix: pa.prefix().clone(),
        version: pa.version(),
        expiration_ms: pa.expiration_ms(),
        validity: pa.validity(),
        delegate: pa.delegate().cloned(),
        public_key: pa.public_key().cloned(),
    };
    let Ok(again) = Announcement::build(&params, &DigestSha256) else {
        // Only an input near the size limit may grow past it (another signature).
        assert!(
            data.len() > tlv::MAX_PACKET_SIZE - 128,
            "{params:?} does not re-encode"
        );
        return;
    };
    assert_eq!(again.prefix(), pa.prefix());
    assert_eq!(again.version(), pa.version());
    assert_eq!(again.expiration_ms(), pa.expiration_ms());
    assert_eq!(again.validity(), pa.validity());
    assert_eq!(again.delegate(), pa.delegate());
    assert_eq!(again.public_key(), pa.public_key());
    assert_eq!(again.segment(), 0);
}

/// Decodes a locator record; an accepted one's fields are within bounds and name its router.
pub fn decode_locator(data: &[u8]) {
    nameway_wire::fuzzing::decode_data(data);
    let Ok(loc) = LocatorRecord::decode(Bytes::copy_from_slice(data)) else {
        return;
    };
    assert_eq!(KeyHash::from_name(loc.view().name()), Some(loc.router()));
    assert_eq!(loc.view().name().len(), 4);
    assert!(loc.face_uris().len() <= MAX_FACE_URIS);
    assert!(loc.face_uris().iter().all(|u| !u.is_empty()));
    assert!(!loc.public_key().is_empty());
    if let (Some(e), Some(x)) = (loc.expiration_ms(), loc.expires_at_ms()) {
        assert_eq!(x, loc.version().saturating_add(e));
    }
    let _ = loc.check_signature();
}

/// Decodes a RIB answer (and the same bytes as a registration reply); an accepted answer
/// re-encodes to the same answer, and a found one's chain goes through [`verify_pair`].
pub fn decode_rib_answer(data: &[u8]) {
    let wire = Bytes::copy_from_slice(data);
    if let Ok(status) = rib::decode_registration_reply(&wire) {
        let name = "/r/32=REG".parse().unwrap();
        let back = rib::encode_registration_reply(&name, status, &DigestSha256).unwrap();
        assert_eq!(rib::decode_registration_reply(&back).unwrap(), status);
    }
    let Ok(d) = rib::decode_answer(&wire) else {
        return;
    };
    let again = rib::encode_answer(&d.name, &d.answer, d.freshness_ms, &DigestSha256);
    match &d.answer {
        Answer::NotFound { ttl_ms } => assert_eq!(*ttl_ms, d.freshness_ms),
        Answer::Found {
            announcement,
            locator,
        } => verify_pair(announcement, locator),
    }
    // Re-encoding can only grow past the packet limit if the input was near it.
    if let Ok(again) = again {
        let back = rib::decode_answer(&again).unwrap();
        assert_eq!((back.name, back.answer), (d.name, d.answer));
    }
}

/// Splits the input into an announcement (its first TLV element) and a locator record (the
/// rest) and verifies the chain.
pub fn verify_chain(data: &[u8]) {
    let Ok(e) = tlv::Reader::new(data).read_element() else {
        return;
    };
    let (a, l) = data.split_at(e.end().min(data.len()));
    verify_pair(&Bytes::copy_from_slice(a), &Bytes::copy_from_slice(l));
}

/// Verifies `announcement` + `locator` at [`FUZZ_NOW_MS`] from several origins; an accepted
/// chain agrees with its records, and verifying it again costs no signature.
pub fn verify_pair(announcement: &Bytes, locator: &Bytes) {
    let mut v = ChainVerifier::new(VerifierConfig::default());
    let result = v.verify(FUZZ_NOW_MS, announcement, locator, Origin::Direct);
    let sigs = v.counters().signatures_verified;
    assert!(sigs <= 2);
    let Ok(route) = result else {
        assert_eq!(v.counters().rejected.total(), 1);
        return;
    };
    let pa = Announcement::decode(announcement.clone()).unwrap();
    let loc = LocatorRecord::decode(locator.clone()).unwrap();
    assert_eq!(pa.key_hash(), Some(route.h));
    assert_eq!(KeyHash::of_spki(pa.public_key().unwrap()), route.h);
    assert_eq!(loc.router(), route.delegate);
    assert_eq!(KeyHash::of_spki(loc.public_key()), route.delegate);
    assert!(route.expires_at_ms <= pa.expires_at_ms());
    assert_eq!(route.face_uris, loc.face_uris());
    assert_eq!(route.delegate_link_key.as_ref(), loc.link_key());
    pa.check_signature(pa.public_key().unwrap()).unwrap();
    loc.check_signature().unwrap();
    let again = v
        .verify(FUZZ_NOW_MS, announcement, locator, Origin::Direct)
        .unwrap();
    assert_eq!(again, route);
    assert_eq!(
        v.counters().signatures_verified,
        sigs,
        "a cached chain costs no signature"
    );
    let untrusted = v.verify(FUZZ_NOW_MS, announcement, locator, Origin::Neighbour(None));
    assert_eq!(untrusted.unwrap_err().reason, RejectReason::UntrustedPeer);
    let from_delegate = Origin::Neighbour(Some(route.delegate));
    assert!(v
        .verify(FUZZ_NOW_MS, announcement, locator, from_delegate)
        .is_ok());
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::key::NameKey;
    use crate::time::DEFAULT_LIFETIME_MS;

    /// Every truncation and every single-byte change of `wire`.
    fn mutations(wire: &[u8], check: fn(&[u8])) {
        check(wire);
        for cut in 0..wire.len() {
            check(&wire[..cut]);
        }
        for i in 0..wire.len() {
            for v in [0x00, 0x01, 0x7f, 0xfd, 0xff, wire[i] ^ 0x01] {
                let mut m = wire.to_vec();
                m[i] = v;
                check(&m);
            }
        }
    }

    fn chain() -> (Bytes, Bytes) {
        let owner = NameKey::generate().unwrap();
        let router = NameKey::generate().unwrap();
        let pa = Announcement::delegation(
            &owner,
            &router.hash(),
            FUZZ_NOW_MS - 1000,
            DEFAULT_LIFETIME_MS,
        )
        .unwrap();
        let loc = LocatorRecord::build(
            &router,
            &["udp4://192.0.2.1:6363"],
            FUZZ_NOW_MS - 1000,
            DEFAULT_LIFETIME_MS,
        )
        .unwrap();
        (pa.wire().clone(), loc.wire().clone())
    }

    #[test]
    fn mutated_records_keep_the_invariants() {
        let (pa, loc) = chain();
        mutations(&pa, decode_announcement);
        mutations(&loc, decode_locator);
        let name = rib::lookup_name(&"/r/32=RIB".parse().unwrap(), &KeyHash::default()).unwrap();
        let found = Answer::Found {
            announcement: pa.clone(),
            locator: loc.clone(),
        };
        let answer = rib::encode_answer(&name, &found, 1000, &DigestSha256).unwrap();
        mutations(&answer, decode_rib_answer);
        let mut pair = pa.to_vec();
        pair.extend_from_slice(&loc);
        mutations(&pair, verify_chain);
    }

    /// The seeds of one fuzz target (`fuzz/seeds/<target>/`), sorted.
    fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fuzz/seeds")
            .join(target);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no seeds in {}", dir.display());
        files
            .into_iter()
            .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
            .collect()
    }

    #[test]
    fn the_fuzz_seeds_decode_and_keep_the_invariants() {
        for (path, wire) in seeds("routing_announcement") {
            Announcement::decode(Bytes::from(wire.clone()))
                .unwrap_or_else(|e| panic!("{path}: {e}"));
            decode_announcement(&wire);
        }
        for (path, wire) in seeds("routing_locator") {
            LocatorRecord::decode(Bytes::from(wire.clone()))
                .unwrap_or_else(|e| panic!("{path}: {e}"));
            decode_locator(&wire);
        }
        for (path, wire) in seeds("routing_answer") {
            let ok = rib::decode_answer(&Bytes::from(wire.clone())).is_ok()
                || rib::decode_registration_reply(&Bytes::from(wire.clone())).is_ok();
            assert!(ok, "{path} is neither an answer nor a reply");
            decode_rib_answer(&wire);
        }
        let mut verified = 0;
        for (path, wire) in seeds("routing_chain") {
            let e = tlv::Reader::new(&wire).read_element().unwrap();
            let (a, l) = wire.split_at(e.end());
            let mut v = ChainVerifier::new(VerifierConfig::default());
            let ok = v.verify(
                FUZZ_NOW_MS,
                &Bytes::copy_from_slice(a),
                &Bytes::copy_from_slice(l),
                Origin::Direct,
            );
            verified += usize::from(ok.is_ok());
            assert!(ok.is_ok() || path.contains("reject"), "{path}: {ok:?}");
            verify_chain(&wire);
        }
        assert!(verified > 0, "at least one seed chain verifies");
    }
}
