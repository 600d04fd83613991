use bytes::Bytes;
use nameway_wire::security::{EcdsaP256Signer, Ed25519Signer};
use nameway_wire::{Component, Data, KeyLocator, Signer};

use std::sync::Arc;

use super::*;
use crate::announcement::{AnnouncementParams, Validity};
use crate::key::NameKey;
use crate::locator::{loc_component, LocatorRecord};
use crate::time::DEFAULT_LIFETIME_MS;
use crate::tlv;

const T: u64 = 1_760_000_000_000;
const MIN: u64 = 60_000;

struct World {
    owner: NameKey,
    router: NameKey,
    mallory: NameKey,
    loc: LocatorRecord,
}

fn world() -> World {
    let router = NameKey::generate().unwrap();
    let loc =
        LocatorRecord::build(&router, &["udp4://192.0.2.1:6363"], T, DEFAULT_LIFETIME_MS).unwrap();
    World {
        owner: NameKey::generate().unwrap(),
        router,
        mallory: NameKey::generate().unwrap(),
        loc,
    }
}

fn verifier() -> ChainVerifier {
    ChainVerifier::new(VerifierConfig::default())
}

fn pa(w: &World, at: u64) -> Bytes {
    Announcement::delegation(&w.owner, &w.router.hash(), at, DEFAULT_LIFETIME_MS)
        .unwrap()
        .wire()
        .clone()
}

fn params(w: &World, at: u64) -> AnnouncementParams {
    AnnouncementParams {
        prefix: w.owner.name(),
        version: at,
        expiration_ms: DEFAULT_LIFETIME_MS,
        validity: Some(Validity {
            not_before_ms: at,
            not_after_ms: at + DEFAULT_LIFETIME_MS,
        }),
        delegate: Some(w.router.name()),
        public_key: Some(w.owner.spki().clone()),
    }
}

fn build(p: &AnnouncementParams, signer: &dyn Signer) -> Bytes {
    Announcement::build(p, signer).unwrap().wire().clone()
}

/// A record named as `router`'s locator record but carrying `key`'s public key, signed by it.
fn loc_named(router: &NameKey, key: &NameKey) -> Bytes {
    let name = router
        .name()
        .append(&loc_component())
        .unwrap()
        .append(&Component::version(T))
        .unwrap();
    let mut content = Vec::new();
    nameway_wire::tlv::put_nni_tlv(&mut content, tlv::EXPIRATION_PERIOD, DEFAULT_LIFETIME_MS);
    nameway_wire::tlv::put_tlv(&mut content, tlv::NW_PUBLIC_KEY, key.spki());
    let mut d = Data::new(name, content);
    d.sign(key).unwrap();
    d.encode()
}

fn reason(r: Result<Arc<VerifiedRoute>, Rejected>) -> RejectReason {
    r.unwrap_err().reason
}

#[test]
fn a_good_chain_verifies_once_then_comes_from_the_cache() {
    let w = world();
    let mut v = verifier();
    let pa = pa(&w, T);
    let route = v
        .verify(T + 1000, &pa, w.loc.wire(), Origin::Direct)
        .unwrap();
    assert_eq!(route.h, w.owner.hash());
    assert_eq!(route.name(), w.owner.name());
    assert_eq!(route.delegate, w.router.hash());
    assert_eq!(route.delegate_name, w.router.name());
    assert_eq!(route.face_uris, ["udp4://192.0.2.1:6363"]);
    assert_eq!(route.version, T);
    assert_eq!(route.locator_version, T);
    assert_eq!(route.expires_at_ms, T + DEFAULT_LIFETIME_MS);
    assert_eq!(&route.announcement, &pa);
    let c = *v.counters();
    assert_eq!(
        (c.signatures_verified, c.chains_verified, c.cache_hits),
        (2, 1, 0)
    );
    // Steady state: the same chain again, many times, checks no signature.
    for i in 0..1000 {
        let again = v
            .verify(T + 2000 + i, &pa, w.loc.wire(), Origin::Direct)
            .unwrap();
        assert_eq!(again, route);
    }
    let c = *v.counters();
    assert_eq!(
        (c.signatures_verified, c.chains_verified, c.cache_hits),
        (2, 1, 1000)
    );
    // A new announcement to a router whose locator record is known: one signature.
    let newer = self::pa(&w, T + 5000);
    let r2 = v
        .verify(T + 6000, &newer, w.loc.wire(), Origin::Direct)
        .unwrap();
    assert_eq!(r2.version, T + 5000);
    let c = *v.counters();
    assert_eq!((c.signatures_verified, c.locator_cache_hits), (3, 1));
    assert_eq!(c.rejected.total(), 0);
    assert_eq!(v.cached_chains(), 2);
}

#[test]
fn the_delegates_link_key_comes_with_the_route() {
    let w = world();
    assert_eq!(
        verifier()
            .verify(T, &pa(&w, T), w.loc.wire(), Origin::Direct)
            .unwrap()
            .delegate_link_key,
        None
    );
    let loc = LocatorRecord::build_with_link_key(&w.router, &["x"], Some([9; 32]), T, MIN).unwrap();
    let route = verifier()
        .verify(T, &pa(&w, T), loc.wire(), Origin::Direct)
        .unwrap();
    assert_eq!(route.delegate_link_key, Some([9; 32]));
}

#[test]
fn an_ecdsa_owner_is_accepted() {
    let w = world();
    let owner = NameKey::from_ecdsa_p256(EcdsaP256Signer::generate().unwrap()).unwrap();
    let pa = Announcement::delegation(&owner, &w.router.hash(), T, MIN).unwrap();
    let route = verifier()
        .verify(T, pa.wire(), w.loc.wire(), Origin::Direct)
        .unwrap();
    assert_eq!(route.h, owner.hash());
}

#[test]
fn hijack_with_another_key_is_a_name_key_mismatch() {
    let w = world();
    let mut v = verifier();
    // Mallory announces the owner's name with her own key (and signs it).
    let mut p = params(&w, T);
    p.public_key = Some(w.mallory.spki().clone());
    let hijack = build(&p, &w.mallory);
    assert_eq!(
        reason(v.verify(T, &hijack, w.loc.wire(), Origin::Direct)),
        RejectReason::NameKeyMismatch
    );
    // The owner's key in NwPublicKey, Mallory's KeyLocator: the locator names another key.
    let p = params(&w, T);
    let hijack = build(&p, &w.mallory);
    assert_eq!(
        reason(v.verify(T, &hijack, w.loc.wire(), Origin::Direct)),
        RejectReason::NameKeyMismatch
    );
    assert_eq!(v.counters().rejected.get(RejectReason::NameKeyMismatch), 2);
    assert_eq!(
        v.counters().signatures_verified,
        0,
        "refused before any signature"
    );
}

#[test]
fn a_signature_by_another_key_or_a_changed_byte_is_bad_sig() {
    let w = world();
    let mut v = verifier();
    // Everything names the owner's key, but Mallory signed.
    let mallory = Ed25519Signer::generate()
        .unwrap()
        .with_key_locator(KeyLocator::KeyDigest(Bytes::copy_from_slice(
            w.owner.hash().as_bytes(),
        )));
    let forged = build(&params(&w, T), &mallory);
    assert_eq!(
        reason(v.verify(T, &forged, w.loc.wire(), Origin::Direct)),
        RejectReason::BadSig
    );
    // A genuine announcement with one bit of its signature flipped.
    let mut bytes = pa(&w, T).to_vec();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    assert_eq!(
        reason(v.verify(T, &Bytes::from(bytes), w.loc.wire(), Origin::Direct)),
        RejectReason::BadSig
    );
    // A signature type other than Ed25519 and ECDSA.
    let mut p = params(&w, T);
    p.prefix = w.owner.name();
    let digest = build(&p, &nameway_wire::security::DigestSha256);
    assert_eq!(
        reason(v.verify(T, &digest, w.loc.wire(), Origin::Direct)),
        RejectReason::BadSig
    );
    assert_eq!(v.counters().rejected.get(RejectReason::BadSig), 3);
}

#[test]
fn expired_and_not_yet_valid_with_a_minute_of_grace() {
    let w = world();
    let mut v = verifier();
    let loc = w.loc.wire();
    // Signed 11 minutes ago for 10 minutes: expired a minute ago, past the grace.
    let old = pa(&w, T - 11 * MIN - 1);
    let loc_old = LocatorRecord::build(&w.router, &["x"], T - 11 * MIN, 60 * MIN).unwrap();
    assert_eq!(
        reason(v.verify(T, &old, loc_old.wire(), Origin::Direct)),
        RejectReason::Expired
    );
    // Expired 30 s ago: within the grace.
    let recent = pa(&w, T - 10 * MIN - 30_000);
    assert!(v.verify(T, &recent, loc_old.wire(), Origin::Direct).is_ok());
    // Signed 2 minutes in the future: not yet valid; 30 s in the future: accepted.
    let future = pa(&w, T + 2 * MIN);
    assert_eq!(
        reason(v.verify(T, &future, loc, Origin::Direct)),
        RejectReason::NotYetValid
    );
    assert!(v
        .verify(T, &pa(&w, T + 30_000), loc, Origin::Direct)
        .is_ok());
    // A ValidityPeriod that starts later than the signing time.
    let mut p = params(&w, T);
    p.validity = Some(Validity {
        not_before_ms: T + 5 * MIN,
        not_after_ms: T + 10 * MIN,
    });
    assert_eq!(
        reason(v.verify(T, &build(&p, &w.owner), loc, Origin::Direct)),
        RejectReason::NotYetValid
    );
    // NotAfter before version + ExpirationPeriod: NotAfter wins.
    let mut p = params(&w, T - 5 * MIN);
    p.validity = Some(Validity {
        not_before_ms: T - 5 * MIN,
        not_after_ms: T - 2 * MIN,
    });
    assert_eq!(
        reason(v.verify(T, &build(&p, &w.owner), loc, Origin::Direct)),
        RejectReason::Expired
    );
    assert_eq!(v.counters().rejected.get(RejectReason::Expired), 2);
    assert_eq!(v.counters().rejected.get(RejectReason::NotYetValid), 2);
}

#[test]
fn a_cached_chain_expires_with_its_announcement() {
    let w = world();
    let mut v = verifier();
    let pa = pa(&w, T);
    let route = v.verify(T, &pa, w.loc.wire(), Origin::Direct).unwrap();
    let last_ok = route.expires_at_ms + CLOCK_GRACE_MS;
    assert!(v.verify(last_ok, &pa, w.loc.wire(), Origin::Direct).is_ok());
    assert_eq!(v.counters().cache_hits, 1);
    assert_eq!(
        reason(v.verify(last_ok + 1, &pa, w.loc.wire(), Origin::Direct)),
        RejectReason::Expired
    );
}

#[test]
fn an_expired_or_future_locator_record_is_refused() {
    let w = world();
    let mut v = verifier();
    let pa = pa(&w, T);
    let stale = LocatorRecord::build(&w.router, &["x"], T - 20 * MIN, 10 * MIN).unwrap();
    assert_eq!(
        reason(v.verify(T, &pa, stale.wire(), Origin::Direct)),
        RejectReason::Expired
    );
    let future = LocatorRecord::build(&w.router, &["x"], T + 5 * MIN, 10 * MIN).unwrap();
    assert_eq!(
        reason(v.verify(T, &pa, future.wire(), Origin::Direct)),
        RejectReason::NotYetValid
    );
}

#[test]
fn forged_delegation_from_a_neighbour() {
    let w = world();
    let mut v = verifier();
    let pa = pa(&w, T);
    let loc = w.loc.wire();
    // Mallory's router replays the owner's announcement (delegated to R) as her own.
    let m = Origin::Neighbour(Some(w.mallory.hash()));
    assert_eq!(
        reason(v.verify(T, &pa, loc, m)),
        RejectReason::DelegateMismatch
    );
    // From R (the delegate) or from the owner itself it is fine.
    assert!(v
        .verify(T, &pa, loc, Origin::Neighbour(Some(w.router.hash())))
        .is_ok());
    assert!(v
        .verify(T, &pa, loc, Origin::Neighbour(Some(w.owner.hash())))
        .is_ok());
    // Now cached: the rule still holds on the cached path.
    assert_eq!(
        reason(v.verify(T, &pa, loc, m)),
        RejectReason::DelegateMismatch
    );
    // A link without an authenticated identity cannot vouch for anything.
    assert_eq!(
        reason(v.verify(T, &pa, loc, Origin::Neighbour(None))),
        RejectReason::UntrustedPeer
    );
    let c = v.counters();
    assert_eq!(c.rejected.get(RejectReason::DelegateMismatch), 2);
    assert_eq!(c.rejected.get(RejectReason::UntrustedPeer), 1);
    // The refused replay cost one signature (step 2 comes before step 4), then R's chain two.
    assert_eq!(c.signatures_verified, 3);
}

#[test]
fn the_locator_record_must_be_the_delegates() {
    let w = world();
    let mut v = verifier();
    let pa = pa(&w, T);
    // Mallory's genuine locator record: another router.
    let other = LocatorRecord::build(&w.mallory, &["x"], T, MIN).unwrap();
    assert_eq!(
        reason(v.verify(T, &pa, other.wire(), Origin::Direct)),
        RejectReason::BadLocator
    );
    // Named as R's, carrying and signed by Mallory's key.
    let fake = loc_named(&w.router, &w.mallory);
    assert_eq!(
        reason(v.verify(T, &pa, &fake, Origin::Direct)),
        RejectReason::BadLocator
    );
    // R's record with a changed signature byte.
    let mut bytes = w.loc.wire().to_vec();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x80;
    assert_eq!(
        reason(v.verify(T, &pa, &Bytes::from(bytes), Origin::Direct)),
        RejectReason::BadLocator
    );
    // A cached record of another router does not serve this delegate either.
    let w2 = World {
        owner: NameKey::generate().unwrap(),
        router: w.mallory.clone(),
        mallory: w.router.clone(),
        loc: other.clone(),
    };
    assert!(v
        .verify(T, &self::pa(&w2, T), other.wire(), Origin::Direct)
        .is_ok());
    assert_eq!(
        reason(v.verify(T, &pa, other.wire(), Origin::Direct)),
        RejectReason::BadLocator
    );
    assert_eq!(v.counters().rejected.get(RejectReason::BadLocator), 4);
}

#[test]
fn malformed_chains() {
    let w = world();
    let mut v = verifier();
    let loc = w.loc.wire().clone();
    let good = pa(&w, T);
    let mut cases: Vec<(Bytes, Bytes)> = vec![
        (Bytes::from_static(b"\x06\x00"), loc.clone()),
        (good.clone(), Bytes::from_static(b"garbage")),
        (good.slice(..good.len() - 1), loc.clone()),
    ];
    let mut p = params(&w, T);
    p.prefix = "/example".parse().unwrap();
    cases.push((build(&p, &w.owner), loc.clone()));
    let mut p = params(&w, T);
    p.prefix = w
        .owner
        .name()
        .append(&Component::generic(&b"x"[..]))
        .unwrap();
    cases.push((build(&p, &w.owner), loc.clone()));
    let mut p = params(&w, T);
    p.public_key = None;
    cases.push((build(&p, &w.owner), loc.clone()));
    let mut p = params(&w, T);
    p.delegate = None;
    cases.push((build(&p, &w.owner), loc.clone()));
    let mut p = params(&w, T);
    p.delegate = Some("/router/a".parse().unwrap());
    cases.push((build(&p, &w.owner), loc.clone()));
    let n = cases.len() as u64;
    for (i, (a, l)) in cases.into_iter().enumerate() {
        assert_eq!(
            reason(v.verify(T, &a, &l, Origin::Direct)),
            RejectReason::Malformed,
            "case {i}"
        );
    }
    assert_eq!(v.counters().rejected.get(RejectReason::Malformed), n);
    assert_eq!(v.counters().rejected.total(), n);
}

#[test]
fn a_full_cache_keeps_working() {
    let w = world();
    let mut v = ChainVerifier::new(VerifierConfig {
        chain_cache_capacity: 2,
        ..VerifierConfig::default()
    });
    let chains: Vec<Bytes> = (0..4).map(|i| pa(&w, T + i)).collect();
    for c in &chains {
        v.verify(T + 10, c, w.loc.wire(), Origin::Direct).unwrap();
    }
    assert_eq!(v.cached_chains(), 2);
    for c in &chains {
        v.verify(T + 10, c, w.loc.wire(), Origin::Direct).unwrap();
    }
    assert!(v.counters().chains_verified >= 6);
}
