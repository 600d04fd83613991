//! The resolver on a virtual clock, against a RIB service played by the test.

use std::collections::HashMap;

use nameway_wire::security::DigestSha256;

use super::*;
use crate::announcement::{Announcement, AnnouncementParams, Validity};
use crate::key::NameKey;
use crate::locator::LocatorRecord;
use crate::rib::encode_answer;
use crate::time::{CLOCK_GRACE_MS, DEFAULT_LIFETIME_MS};

const T: u64 = 1_760_000_000_000;

fn rib_a() -> Name {
    "/a/32=RIB".parse().unwrap()
}

fn rib_b() -> Name {
    "/b/32=RIB".parse().unwrap()
}

fn config() -> ResolverConfig {
    ResolverConfig {
        rib_prefixes: vec![rib_a()],
        ..ResolverConfig::default()
    }
}

/// A RIB service: h -> (announcement, locator record).
#[derive(Default)]
struct Rib {
    names: HashMap<KeyHash, (Bytes, Bytes)>,
}

impl Rib {
    fn register(&mut self, pa: &Announcement, loc: &LocatorRecord) {
        let h = pa.key_hash().unwrap();
        self.names
            .insert(h, (pa.wire().clone(), loc.wire().clone()));
    }

    /// The answer Data to a query, "no such name" (FreshnessPeriod `ttl`) when unknown.
    fn answer(&self, q: &Query, ttl: u64) -> Bytes {
        let answer = match self.names.get(&q.h) {
            Some((a, l)) => Answer::Found {
                announcement: a.clone(),
                locator: l.clone(),
            },
            None => Answer::NotFound { ttl_ms: ttl },
        };
        encode_answer(&q.name, &answer, 1000, &DigestSha256).unwrap()
    }
}

struct Router {
    key: NameKey,
    loc: LocatorRecord,
}

fn router(uri: &str) -> Router {
    let key = NameKey::generate().unwrap();
    let loc = LocatorRecord::build(&key, &[uri], T, 3_600_000).unwrap();
    Router { key, loc }
}

fn announce(owner: &NameKey, r: &Router, at: u64) -> Announcement {
    Announcement::delegation(owner, &r.key.hash(), at, DEFAULT_LIFETIME_MS).unwrap()
}

fn events(res: &mut Resolver) -> Vec<ResolverEvent> {
    std::iter::from_fn(|| res.poll_event()).collect()
}

fn queries(res: &mut Resolver, now: u64) -> Vec<Query> {
    std::iter::from_fn(|| res.poll_query(now)).collect()
}

#[test]
fn a_miss_becomes_a_verified_route() {
    let (owner, r1) = (
        NameKey::generate().unwrap(),
        router("udp4://192.0.2.1:6363"),
    );
    let mut rib = Rib::default();
    rib.register(&announce(&owner, &r1, T), &r1.loc);
    let mut res = Resolver::new(config(), T).unwrap();
    let h = owner.hash();
    assert_eq!(res.on_miss(T, h), MissOutcome::Pending);
    let q = res.poll_query(T).unwrap();
    assert_eq!(q.h, h);
    assert_eq!(q.name, rib::lookup_name(&rib_a(), &h).unwrap());
    assert_eq!((q.attempt, q.lifetime_ms), (0, 1000));
    let i = q.interest(7);
    assert!(i.must_be_fresh && i.nonce == Some(7));
    assert_eq!(res.poll_query(T), None, "one query per look-up");
    assert_eq!(res.poll_timeout(), Some(T + 1000));
    assert!(res.on_answer(T + 20, rib.answer(&q, 0)));
    let ev = events(&mut res);
    let [ResolverEvent::RouteReady(route)] = &ev[..] else {
        panic!("{ev:?}");
    };
    assert_eq!(route.h, h);
    assert_eq!(route.delegate_name, r1.key.name());
    assert_eq!(route.face_uris, ["udp4://192.0.2.1:6363"]);
    assert_eq!(res.on_miss(T + 30, h), MissOutcome::Known(route.clone()));
    assert!(!res.is_pending(&h));
    assert_eq!(res.pending_len(), 0);
    let c = res.counters();
    assert_eq!(
        (c.misses, c.lookups_started, c.queries_sent, c.answers_found),
        (2, 1, 1, 1)
    );
    assert_eq!(c.routes_installed, 1);
    // The route's expiry is the only timer left.
    assert_eq!(
        res.poll_timeout(),
        Some(T + DEFAULT_LIFETIME_MS + CLOCK_GRACE_MS + 1)
    );
}

#[test]
fn misses_for_one_name_share_one_look_up() {
    let mut res = Resolver::new(config(), T).unwrap();
    let h = KeyHash::from_bytes([1; 32]);
    for i in 0..100 {
        assert_eq!(res.on_miss(T + i, h), MissOutcome::Pending);
    }
    assert_eq!(queries(&mut res, T + 100).len(), 1);
    let c = res.counters();
    assert_eq!(
        (c.lookups_started, c.deduplicated, c.queries_sent),
        (1, 99, 1)
    );
}

#[test]
fn look_ups_go_out_at_the_configured_rate() {
    let mut res = Resolver::new(
        ResolverConfig {
            resolve_rate: 10,
            resolve_burst: 5,
            query_lifetime_ms: 60_000,
            ..config()
        },
        T,
    )
    .unwrap();
    for i in 0..200u8 {
        res.on_miss(T, KeyHash::from_bytes([i; 32]));
    }
    // The burst at once, then one per 100 ms: poll_timeout says when.
    assert_eq!(queries(&mut res, T).len(), 5);
    assert_eq!(res.poll_timeout(), Some(T + 100));
    assert_eq!(queries(&mut res, T + 99).len(), 0);
    assert_eq!(queries(&mut res, T + 100).len(), 1);
    let mut sent = 6;
    let mut now = T + 100;
    while now < T + 10_100 {
        now = res.poll_timeout().unwrap();
        res.on_timeout(now);
        sent += queries(&mut res, now).len();
    }
    // 10 s at 10 per second after the burst and the first token.
    assert_eq!(sent, 106);
    assert_eq!(res.counters().queries_sent, 106);
    assert_eq!(res.pending_len(), 200);
}

#[test]
fn pending_look_ups_are_bounded() {
    let mut res = Resolver::new(
        ResolverConfig {
            max_pending: 8,
            ..config()
        },
        T,
    )
    .unwrap();
    for i in 0..8u8 {
        assert_eq!(
            res.on_miss(T, KeyHash::from_bytes([i; 32])),
            MissOutcome::Pending
        );
    }
    let extra = KeyHash::from_bytes([99; 32]);
    assert_eq!(res.on_miss(T, extra), MissOutcome::Overloaded);
    // A pending name still joins its look-up.
    assert_eq!(
        res.on_miss(T, KeyHash::from_bytes([0; 32])),
        MissOutcome::Pending
    );
    // One look-up ends ("no such name"): room for one more.
    let qs = queries(&mut res, T);
    assert_eq!(qs.len(), 8);
    assert!(res.on_answer(T + 5, Rib::default().answer(&qs[3], 1000)));
    assert_eq!(res.on_miss(T + 6, extra), MissOutcome::Pending);
    assert_eq!(
        res.on_miss(T + 6, KeyHash::from_bytes([100; 32])),
        MissOutcome::Overloaded
    );
    assert_eq!(res.counters().overloaded, 2);
    assert_eq!(res.pending_len(), 8);
}

#[test]
fn a_name_that_does_not_exist_is_cached_negatively() {
    let mut res = Resolver::new(config(), T).unwrap();
    let h = KeyHash::from_bytes([5; 32]);
    res.on_miss(T, h);
    let q = res.poll_query(T).unwrap();
    assert!(res.on_answer(T + 10, Rib::default().answer(&q, 3000)));
    assert_eq!(
        events(&mut res),
        [ResolverEvent::Failed {
            h,
            failure: Failure::NoSuchName {
                retry_after_ms: 3000
            }
        }]
    );
    for t in [T + 10, T + 1010, T + 3010] {
        assert_eq!(
            res.on_miss(t, h),
            MissOutcome::NoSuchName {
                retry_after_ms: T + 3010 - t
            }
        );
    }
    assert_eq!(res.poll_query(T + 3010), None, "no look-up while cached");
    assert_eq!(res.on_miss(T + 3011, h), MissOutcome::Pending);
    assert!(res.poll_query(T + 3011).is_some());
    assert_eq!(res.counters().negative_hits, 3);
}

#[test]
fn negative_answers_are_capped_and_defaulted() {
    let mut res = Resolver::new(
        ResolverConfig {
            negative_ttl_ms: 700,
            negative_ttl_max_ms: 9000,
            ..config()
        },
        T,
    )
    .unwrap();
    for (i, (ttl, want)) in [(0, 700), (u64::MAX, 9000), (4000, 4000)]
        .into_iter()
        .enumerate()
    {
        let h = KeyHash::from_bytes([i as u8; 32]);
        res.on_miss(T, h);
        let q = res.poll_query(T).unwrap();
        res.on_answer(T, Rib::default().answer(&q, ttl));
        assert_eq!(
            res.on_miss(T, h),
            MissOutcome::NoSuchName {
                retry_after_ms: want
            }
        );
    }
}

#[test]
fn timeouts_retry_with_doubling_back_off_through_each_rib_then_give_up() {
    let mut res = Resolver::new(
        ResolverConfig {
            rib_prefixes: vec![rib_a(), rib_b()],
            max_retries: 3,
            retry_backoff_ms: 100,
            retry_backoff_max_ms: 300,
            ..config()
        },
        T,
    )
    .unwrap();
    let h = KeyHash::from_bytes([9; 32]);
    res.on_miss(T, h);
    let mut sent = vec![(T, res.poll_query(T).unwrap())];
    let mut now = T;
    while let Some(t) = res.poll_timeout() {
        now = t;
        res.on_timeout(now);
        if let Some(q) = res.poll_query(now) {
            sent.push((now, q));
        }
    }
    // Sent at 0; timed out at 1000, back-off 100; 2100, back-off 200; 3300, back-off 300
    // (capped); gave up when the fourth attempt timed out at 4600.
    let times: Vec<u64> = sent.iter().map(|(t, _)| t - T).collect();
    assert_eq!(times, [0, 1100, 2300, 3600]);
    let prefixes: Vec<bool> = sent
        .iter()
        .map(|(_, q)| rib_a().is_prefix_of(&q.name))
        .collect();
    assert_eq!(
        prefixes,
        [true, false, true, false],
        "retries alternate RIBs"
    );
    assert_eq!(
        sent.iter().map(|(_, q)| q.attempt).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    assert_eq!(now - T, 4600);
    assert_eq!(
        events(&mut res),
        [ResolverEvent::Failed {
            h,
            failure: Failure::TimedOut { attempts: 4 }
        }]
    );
    let c = res.counters();
    assert_eq!(
        (c.queries_sent, c.retries, c.timeouts, c.lookups_timed_out),
        (4, 3, 4, 1)
    );
    assert!(!res.is_pending(&h));
    // Timeouts are not cached: the next miss starts over.
    assert_eq!(res.on_miss(now, h), MissOutcome::Pending);
}

#[test]
fn a_nack_is_retried_and_a_late_answer_still_counts() {
    let (owner, r1) = (NameKey::generate().unwrap(), router("x"));
    let mut rib = Rib::default();
    rib.register(&announce(&owner, &r1, T), &r1.loc);
    let mut res = Resolver::new(config(), T).unwrap();
    let h = owner.hash();
    res.on_miss(T, h);
    let q = res.poll_query(T).unwrap();
    assert!(res.on_query_nack(T + 5, &q.name));
    assert!(!res.on_query_nack(T + 6, &q.name), "nothing in flight now");
    assert_eq!(res.poll_query(T + 6), None, "backing off");
    assert_eq!(res.poll_timeout(), Some(T + 105));
    // The first attempt's answer arrives during the back-off: taken.
    assert!(res.on_answer(T + 50, rib.answer(&q, 0)));
    assert!(matches!(
        &events(&mut res)[..],
        [ResolverEvent::RouteReady(_)]
    ));
    assert_eq!(res.counters().nacks, 1);
    res.on_timeout(T + 105);
    assert_eq!(res.poll_query(T + 105), None, "the retry was cancelled");
}

#[test]
fn unsolicited_answers_are_counted_and_ignored() {
    let mut res = Resolver::new(config(), T).unwrap();
    let q = Query {
        h: KeyHash::from_bytes([3; 32]),
        name: rib::lookup_name(&rib_a(), &KeyHash::from_bytes([3; 32])).unwrap(),
        lifetime_ms: 1000,
        attempt: 0,
    };
    assert!(!res.on_answer(T, Rib::default().answer(&q, 10)));
    assert!(!res.on_answer(T, Bytes::from_static(b"junk")));
    assert!(!res.on_query_nack(T, &q.name));
    assert_eq!(res.counters().unsolicited, 3);
    assert!(events(&mut res).is_empty());
}

#[test]
fn a_hijacked_answer_fails_and_is_cached_negatively() {
    let owner = NameKey::generate().unwrap();
    let mallory = NameKey::generate().unwrap();
    let r = router("x");
    let mut res = Resolver::new(config(), T).unwrap();
    let h = owner.hash();
    res.on_miss(T, h);
    let q = res.poll_query(T).unwrap();
    // The RIB hands out an announcement of the owner's name signed with Mallory's key.
    let params = AnnouncementParams {
        prefix: owner.name(),
        version: T,
        expiration_ms: DEFAULT_LIFETIME_MS,
        validity: Some(Validity {
            not_before_ms: T,
            not_after_ms: T + DEFAULT_LIFETIME_MS,
        }),
        delegate: Some(r.key.name()),
        public_key: Some(mallory.spki().clone()),
    };
    let forged = Announcement::build(&params, &mallory).unwrap();
    let answer = Answer::Found {
        announcement: forged.wire().clone(),
        locator: r.loc.wire().clone(),
    };
    res.on_answer(
        T,
        encode_answer(&q.name, &answer, 1000, &DigestSha256).unwrap(),
    );
    let ev = events(&mut res);
    let [ResolverEvent::Failed {
        failure: Failure::Rejected(rej),
        ..
    }] = &ev[..]
    else {
        panic!("{ev:?}");
    };
    assert_eq!(rej.reason, RejectReason::NameKeyMismatch);
    assert!(matches!(
        res.on_miss(T + 1, h),
        MissOutcome::NoSuchName { .. }
    ));
    assert_eq!(
        res.verify_counters()
            .rejected
            .get(RejectReason::NameKeyMismatch),
        1
    );
    assert!(res.route(&h).is_none());
}

#[test]
fn an_answer_for_another_name_or_a_broken_envelope_is_malformed() {
    let (owner, other, r) = (
        NameKey::generate().unwrap(),
        NameKey::generate().unwrap(),
        router("x"),
    );
    let mut res = Resolver::new(config(), T).unwrap();
    res.on_miss(T, owner.hash());
    res.on_miss(T, other.hash());
    let qs = queries(&mut res, T);
    // A genuine chain, but of `other`, answering the look-up of `owner`.
    let answer = Answer::Found {
        announcement: announce(&other, &r, T).wire().clone(),
        locator: r.loc.wire().clone(),
    };
    res.on_answer(
        T,
        encode_answer(&qs[0].name, &answer, 1000, &DigestSha256).unwrap(),
    );
    // A Data for the second look-up whose content is not an answer.
    let mut d = nameway_wire::Data::new(qs[1].name.clone(), &b"\x01\x00"[..]);
    d.sign(&DigestSha256).unwrap();
    res.on_answer(T, d.encode());
    let reasons: Vec<RejectReason> = events(&mut res)
        .into_iter()
        .map(|e| match e {
            ResolverEvent::Failed {
                failure: Failure::Rejected(r),
                ..
            } => r.reason,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(reasons, [RejectReason::Malformed, RejectReason::Malformed]);
    assert_eq!(
        res.verify_counters().rejected.get(RejectReason::Malformed),
        2
    );
    assert_eq!(res.counters().answers_rejected, 2);
}

#[test]
fn mobility_a_newer_version_replaces_at_once_an_older_never() {
    let owner = NameKey::generate().unwrap();
    let (r1, r2) = (
        router("udp4://192.0.2.1:6363"),
        router("udp4://192.0.2.2:6363"),
    );
    let mut rib = Rib::default();
    let v1 = announce(&owner, &r1, T);
    rib.register(&v1, &r1.loc);
    let mut res = Resolver::new(config(), T).unwrap();
    let h = owner.hash();
    res.on_miss(T, h);
    let q = res.poll_query(T).unwrap();
    res.on_answer(T + 10, rib.answer(&q, 0));
    events(&mut res);
    assert_eq!(res.route(&h).unwrap().delegate, r1.key.hash());
    // The producer moves to R2 and re-announces (newer version) with the RIB.
    let v2 = announce(&owner, &r2, T + 60_000);
    rib.register(&v2, &r2.loc);
    assert_eq!(res.refresh(h), MissOutcome::Pending);
    let q = res.poll_query(T + 60_100).unwrap();
    res.on_answer(T + 60_120, rib.answer(&q, 0));
    let ev = events(&mut res);
    let [ResolverEvent::RouteReplaced { old, new }] = &ev[..] else {
        panic!("{ev:?}");
    };
    assert_eq!((old.delegate, new.delegate), (r1.key.hash(), r2.key.hash()));
    assert_eq!(res.route(&h).unwrap().version, T + 60_000);
    // A stale RIB replica still answers v1: the route stays v2.
    let mut stale = Rib::default();
    stale.register(&v1, &r1.loc);
    res.refresh(h);
    let q = res.poll_query(T + 61_000).unwrap();
    res.on_answer(T + 61_010, stale.answer(&q, 0));
    let ev = events(&mut res);
    assert!(matches!(&ev[..], [ResolverEvent::RouteReady(r) ] if r.delegate == r2.key.hash()));
    // Pushed chains follow the same rule: v1 again (equal or older) changes nothing...
    let kept = res
        .on_announcement(T + 62_000, v1.wire(), r1.loc.wire(), Origin::Direct)
        .unwrap();
    assert_eq!(kept.version, T);
    let again = res
        .on_announcement(T + 62_000, v2.wire(), r2.loc.wire(), Origin::Direct)
        .unwrap();
    assert_eq!(again.version, T + 60_000);
    assert_eq!(res.route(&h).unwrap().delegate, r2.key.hash());
    // ...a newer one pushed by its delegate replaces it at once.
    let v3 = announce(&owner, &r1, T + 120_000);
    res.on_announcement(
        T + 120_000,
        v3.wire(),
        r1.loc.wire(),
        Origin::Neighbour(Some(r1.key.hash())),
    )
    .unwrap();
    assert_eq!(res.route(&h).unwrap().delegate, r1.key.hash());
    let c = res.counters();
    assert_eq!(
        (c.routes_installed, c.routes_replaced, c.stale_chains),
        (1, 2, 3)
    );
    // A pushed replay by a router that is not the delegate is refused and changes nothing.
    let rej = res
        .on_announcement(
            T + 121_000,
            v2.wire(),
            r2.loc.wire(),
            Origin::Neighbour(Some(r1.key.hash())),
        )
        .unwrap_err();
    assert_eq!(rej.reason, RejectReason::DelegateMismatch);
    assert_eq!(res.route(&h).unwrap().version, T + 120_000);
}

#[test]
fn a_pushed_chain_ends_a_pending_look_up_and_a_negative_entry() {
    let owner = NameKey::generate().unwrap();
    let r = router("x");
    let mut res = Resolver::new(config(), T).unwrap();
    let h = owner.hash();
    res.on_miss(T, h);
    let q = res.poll_query(T).unwrap();
    res.on_answer(T, Rib::default().answer(&q, 30_000));
    events(&mut res);
    let pa = announce(&owner, &r, T + 1000);
    res.on_announcement(T + 1000, pa.wire(), r.loc.wire(), Origin::Direct)
        .unwrap();
    assert!(matches!(res.on_miss(T + 1001, h), MissOutcome::Known(_)));
    // Queued (not yet sent) look-ups are ended too.
    let other = NameKey::generate().unwrap();
    let mut res = Resolver::new(
        ResolverConfig {
            resolve_burst: 1,
            resolve_rate: 1,
            ..config()
        },
        T,
    )
    .unwrap();
    res.on_miss(T, KeyHash::from_bytes([0; 32]));
    res.on_miss(T, other.hash());
    assert!(res.poll_query(T).is_some());
    let pa = announce(&other, &r, T);
    res.on_announcement(T, pa.wire(), r.loc.wire(), Origin::Direct)
        .unwrap();
    assert!(!res.is_pending(&other.hash()));
    assert_eq!(res.poll_query(T + 5000), None, "nothing left queued");
}

#[test]
fn routes_expire_and_the_table_is_bounded() {
    let r = router("x");
    let mut res = Resolver::new(
        ResolverConfig {
            max_routes: 2,
            ..config()
        },
        T,
    )
    .unwrap();
    let owners: Vec<NameKey> = (0..3).map(|_| NameKey::generate().unwrap()).collect();
    for (i, o) in owners.iter().enumerate() {
        let pa = announce(o, &r, T + i as u64 * 1000);
        res.on_announcement(T + 2000, pa.wire(), r.loc.wire(), Origin::Direct)
            .unwrap();
    }
    // The third pushed out the one expiring first.
    let ev = events(&mut res);
    assert!(ev.iter().any(|e| matches!(e,
        ResolverEvent::RouteRemoved { route, reason: RemoveReason::Evicted }
            if route.h == owners[0].hash())));
    assert_eq!(res.routes().count(), 2);
    let first_end = T + 1000 + DEFAULT_LIFETIME_MS + CLOCK_GRACE_MS;
    assert_eq!(res.poll_timeout(), Some(first_end + 1));
    res.on_timeout(first_end);
    assert!(
        events(&mut res).is_empty(),
        "valid through its last millisecond"
    );
    res.on_timeout(first_end + 1);
    let ev = events(&mut res);
    assert!(
        matches!(&ev[..], [ResolverEvent::RouteRemoved { route, reason: RemoveReason::Expired }]
        if route.h == owners[1].hash())
    );
    assert_eq!(res.counters().routes_expired, 1);
    assert_eq!(res.counters().routes_evicted, 1);

    assert!(res.remove_route(&owners[2].hash()).is_some());
    assert_eq!(res.poll_timeout(), None);
}

#[test]
fn a_route_past_its_end_is_not_handed_out_before_on_timeout_runs() {
    let (owner, r) = (NameKey::generate().unwrap(), router("x"));
    let mut res = Resolver::new(config(), T).unwrap();
    let pa = announce(&owner, &r, T);
    res.on_announcement(T, pa.wire(), r.loc.wire(), Origin::Direct)
        .unwrap();
    let end = T + DEFAULT_LIFETIME_MS + CLOCK_GRACE_MS;
    assert!(matches!(
        res.on_miss(end, owner.hash()),
        MissOutcome::Known(_)
    ));
    assert_eq!(res.on_miss(end + 1, owner.hash()), MissOutcome::Pending);
    assert!(res.poll_query(end + 1).is_some());
}

#[test]
fn bad_configurations_are_refused() {
    assert_eq!(
        Resolver::new(ResolverConfig::default(), T).err(),
        Some(ConfigError::NoRib)
    );
    assert_eq!(
        Resolver::new(
            ResolverConfig {
                resolve_rate: 0,
                ..config()
            },
            T
        )
        .err(),
        Some(ConfigError::ZeroRate)
    );
    assert_eq!(
        Resolver::new(
            ResolverConfig {
                max_pending: 0,
                ..config()
            },
            T
        )
        .err(),
        Some(ConfigError::ZeroPending)
    );
}
