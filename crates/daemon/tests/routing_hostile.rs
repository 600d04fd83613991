//! Hostile input to secure routing, each through real daemons and counted by reason
//! (docs/routing.md): hijacks, registrations of a name without its key, forged delegations,
//! expired and not-yet-valid announcements, malformed commands and registrations, and a flood
//! of look-ups for names that do not exist.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "common/routing.rs"]
mod net;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{python, App};
use nameway_routing::rib::{self, RegistrationStatus};
use nameway_routing::{
    Announcement, AnnouncementParams, KeyHash, LocatorRecord, NameKey, RejectReason, Validity,
};
use nameway_wire::mgmt::ControlResponse;
use nameway_wire::security::DigestSha256;
use nameway_wire::signature::signature_type;
use nameway_wire::{Component, Interest, Name, SignatureInfo};
use net::*;

fn now_ms() -> u64 {
    namewayd::wall_ms()
}

#[test]
fn a_hijack_is_refused_and_the_consumer_only_ever_gets_the_owners_content() {
    let Some(py) = python() else { return };
    let (_db, rib, [r1, r2]) = net(["", ""]);
    let (_owner, h) = producer(&py, &r1, &rib.d, &[]);
    // Someone announces the owner's name with another key: on the owner's router, and on the
    // consumer's own router (whose FIB the consumer's Interests meet first).
    for r in [&r1, &r2] {
        let me = r.me.to_hex();
        let hijacker = sc_app(
            &py,
            &r.d,
            &["hijack", "--router", me.as_str(), "--target", h.as_str()],
        );
        assert_eq!(hijacker.next(20)["announce"], 403);
    }
    // rib/register of the name: by another key, by a command whose signature is not its
    // NwPublicKey's, and by python-ndn's own (DigestSha256) registration.
    let other = sc_app(&py, &r2.d, &["register", "--target", h.as_str()]).next(20);
    assert_eq!(other["register"], 403, "{other}");
    let forged = sc_app(&py, &r2.d, &["register", "--target", "self", "--wrong-key"]).next(20);
    assert_eq!(forged["register"], 403, "{forged}");
    let plain = App::run(
        &py,
        &r2.d.transport(),
        &[
            "command",
            "--module",
            "rib",
            "--verb",
            "register",
            "--name",
            &uri(&h, ""),
        ],
    );
    assert_eq!(plain["status_code"], 403, "{plain}");
    // The key's owner may register its own name.
    let own = sc_app(&py, &r2.d, &["register", "--target", "self"]).next(20);
    assert_eq!(own["register"], 200, "{own}");
    for i in 0..3 {
        let got = consume(&py, &r2.d, &uri(&h, &format!("/{i}")));
        assert_eq!(
            got["sha256"],
            sha_hex(format!("owner {h}").as_bytes()),
            "{got}"
        );
    }
    let s1 = stats(&r1.d);
    assert_eq!(s1["rejected_announcements"]["name_key_mismatch"], 1, "{s1}");
    let s2 = stats(&r2.d);
    let refused = &s2["rejected_announcements"];
    assert_eq!(refused["name_key_mismatch"], 2, "{s2}");
    assert_eq!(refused["bad_sig"], 2, "{s2}");
    // Nothing but the owner's registration reached the RIB service.
    let s3 = stats(&rib.d);
    assert_eq!(s3["service_registrations"]["stored"], 1, "{s3}");
    assert_eq!(s3["service_registrations"]["refused"], 0, "{s3}");
}

#[test]
fn expired_not_yet_valid_and_malformed_announcements_are_refused() {
    let Some(py) = python() else { return };
    let (_db, rib, [r1]) = net([""]);
    let me = r1.me.to_hex();
    let long_ago = (now_ms() - 3_600_000).to_string();
    let expired = sc_app(
        &py,
        &r1.d,
        &[
            "produce",
            "--router",
            &me,
            "--lifetime",
            "60000",
            "--not-before-ms",
            &long_ago,
        ],
    );
    assert_eq!(expired.next(20)["announce"], 403);
    let later = (now_ms() + 3_600_000).to_string();
    let early = sc_app(
        &py,
        &r1.d,
        &["produce", "--router", &me, "--not-before-ms", &later],
    );
    assert_eq!(early.next(20)["announce"], 403);
    // A rib/announce whose ApplicationParameters are no Prefix Announcement.
    let code = with_client(&r1.d, async |c| {
        let mut i = Interest::new("/localhost/nfd/rib/announce".parse().unwrap());
        i.nonce = Some(1);
        i.app_parameters = Some(Bytes::from_static(b"\x06\x03\x07\x01\x08"));
        let info = SignatureInfo {
            nonce: Some(Bytes::from_static(b"12345678")),
            time: Some(now_ms()),
            ..SignatureInfo::new(signature_type::DIGEST_SHA256)
        };
        i.sign(&DigestSha256, info).unwrap();
        let data = c.express(&i, Duration::from_secs(4)).await.unwrap();
        ControlResponse::decode(&data.content.unwrap())
            .unwrap()
            .status_code
    });
    assert_eq!(code, 400);
    let s1 = stats(&r1.d);
    let refused = &s1["rejected_announcements"];
    assert_eq!(refused["expired"], 1, "{s1}");
    assert_eq!(refused["not_yet_valid"], 1, "{s1}");
    assert_eq!(s1["registrations"]["stored"], 0, "{s1}");
    assert_eq!(stats(&rib.d)["service_names"], 0);
}

/// Sends a registration of `pa` with `loc` to the RIB service of `d`; its reply.
fn register(d: &common::Daemon, pa: &Bytes, loc: &Bytes) -> RegistrationStatus {
    let prefix: Name = RIB.parse().unwrap();
    let nonce = getrandom::u32().unwrap();
    let interest = rib::registration_interest(&prefix, pa, loc, 2000, nonce).unwrap();
    // Named as sent: with its ParametersSha256DigestComponent, which the reply's name has.
    let interest = Interest::decode(&interest.encode()).unwrap();
    with_client(d, async |c| {
        let wire = c
            .express_wire(&interest, Duration::from_secs(3))
            .await
            .unwrap();
        rib::decode_registration_reply(&wire).unwrap()
    })
}

#[test]
fn forged_delegations_and_invalid_chains_are_refused_by_the_rib_service() {
    let (_db, rib, []) = net([]);
    let owner = NameKey::generate().unwrap();
    let (router_a, router_b) = (NameKey::generate().unwrap(), NameKey::generate().unwrap());
    let now = now_ms();
    let uris = ["udp4://127.0.0.1:9"];
    let loc_a = LocatorRecord::build(&router_a, &uris, now, 600_000).unwrap();
    let loc_b = LocatorRecord::build(&router_b, &uris, now, 600_000).unwrap();
    let pa = Announcement::delegation(&owner, &router_a.hash(), now, 600_000).unwrap();
    let refused = |r| RegistrationStatus::Refused(r);
    // Router B replays the owner's announcement (delegated to A) with its own locator record.
    assert_eq!(
        register(&rib.d, pa.wire(), loc_b.wire()),
        refused(RejectReason::BadLocator)
    );
    // An attacker announces the owner's name with its own key.
    let attacker = NameKey::generate().unwrap();
    let hijack = Announcement::build(
        &AnnouncementParams {
            prefix: owner.name(),
            version: now,
            expiration_ms: 600_000,
            validity: Some(Validity {
                not_before_ms: now,
                not_after_ms: now + 600_000,
            }),
            delegate: Some(router_b.hash().name()),
            public_key: Some(attacker.spki().clone()),
        },
        &attacker,
    )
    .unwrap();
    assert_eq!(
        register(&rib.d, hijack.wire(), loc_b.wire()),
        refused(RejectReason::NameKeyMismatch)
    );
    // Expired, not yet valid, and a flipped signature.
    let old = Announcement::delegation(&owner, &router_a.hash(), now - 7_200_000, 60_000).unwrap();
    assert_eq!(
        register(&rib.d, old.wire(), loc_a.wire()),
        refused(RejectReason::Expired)
    );
    let future =
        Announcement::delegation(&owner, &router_a.hash(), now + 3_600_000, 600_000).unwrap();
    assert_eq!(
        register(&rib.d, future.wire(), loc_a.wire()),
        refused(RejectReason::NotYetValid)
    );
    let mut bad = pa.wire().to_vec();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    assert_eq!(
        register(&rib.d, &Bytes::from(bad), loc_a.wire()),
        refused(RejectReason::BadSig)
    );
    // The genuine chain is stored; replayed, it changes nothing.
    assert_eq!(
        register(&rib.d, pa.wire(), loc_a.wire()),
        RegistrationStatus::Stored
    );
    assert_eq!(
        register(&rib.d, pa.wire(), loc_a.wire()),
        RegistrationStatus::NotNewer {
            current_version: now
        }
    );
    // A registration that does not decode gets no answer and is counted.
    with_client(&rib.d, async |c| {
        let mut i = Interest::new(format!("{RIB}/32=REG").parse().unwrap());
        i.nonce = Some(3);
        i.lifetime_ms = Some(300);
        i.app_parameters = Some(Bytes::from_static(b"junk"));
        assert!(c.express(&i, Duration::from_millis(500)).await.is_err());
    });
    let s = stats(&rib.d);
    let r = &s["rejected_registrations"];
    for reason in [
        "bad_locator",
        "name_key_mismatch",
        "expired",
        "not_yet_valid",
        "bad_sig",
    ] {
        assert_eq!(r[reason], 1, "{reason}: {s}");
    }
    assert_eq!(s["service_registrations"]["refused"], 5, "{s}");
    assert_eq!(s["service_registrations"]["malformed"], 1, "{s}");
    assert_eq!(s["service_names"], 1, "{s}");
    let list = dataset(&rib.d, "routing", "list");
    assert_eq!(
        list["registry"][0]["delegate"],
        format!("sc:{}", router_a.hash().to_hex()),
        "{list}"
    );
}

/// Interests for `n` random self-certifying names, sent on one connection to `d` as fast as
/// it takes them, never read.
fn flood(transport: &str, n: usize) -> Duration {
    with_client_at(transport, async |c| {
        let start = Instant::now();
        for i in 0..n {
            let mut h = [0u8; 32];
            getrandom::fill(&mut h).unwrap();
            let name = KeyHash::from_bytes(h)
                .name()
                .append(&Component::generic(Bytes::from_static(b"x")))
                .unwrap();
            let mut interest = Interest::new(name);
            interest.nonce = Some(i as u32);
            interest.lifetime_ms = Some(2000);
            c.conn().queue(&interest.encode());
            if i % 64 == 63 {
                c.conn().flush().await.unwrap();
            }
        }
        c.conn().flush().await.unwrap();
        // Keep the face (and its Interests) a moment, as a real flooder would.
        tokio::time::sleep(Duration::from_millis(500)).await;
        start.elapsed()
    })
}

#[test]
fn a_flood_of_look_ups_for_names_that_do_not_exist_stays_bounded() {
    let Some(py) = python() else { return };
    let pit_capacity = 4000;
    let rate = 200;
    let limits = format!(
        "resolve_rate = {rate}\nmax_pending = 100\n[forwarder]\npit_capacity = {pit_capacity}\n"
    );
    let (_db, rib, [r1, r2]) = net(["", &limits]);
    let (_owner, h) = producer(&py, &r1, &rib.d, &[]);
    // The known flow: its route is resolved before the flood.
    let got = consume(&py, &r2.d, &uri(&h, "/before"));
    assert_eq!(got["size"], format!("owner {h}").len(), "{got}");
    let before = stats(&r2.d);
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let done = done.clone();
        let unix = r2.d.transport();
        std::thread::spawn(move || {
            // Management answers throughout, and the PIT never passes its capacity.
            let mut most = 0u64;
            let mut answered = 0;
            while !done.load(Ordering::Relaxed) {
                let c = dataset_at(&unix, "status", "counters");
                most = most.max(c["forwarder"]["pit_entries"].as_u64().unwrap());
                answered += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            (most, answered)
        })
    };
    let flooder = {
        let unix = r2.d.transport();
        std::thread::spawn(move || flood(&unix, 6000))
    };
    // The known flow during the flood.
    std::thread::sleep(Duration::from_millis(200));
    let during = consume(&py, &r2.d, &uri(&h, "/during"));
    let took = flooder.join().unwrap();
    done.store(true, Ordering::Relaxed);
    let (most, answered) = watcher.join().unwrap();
    assert_eq!(during["size"], format!("owner {h}").len(), "{during}");
    assert!(answered >= 2, "management answered {answered} times");
    assert!(most <= pit_capacity, "PIT held {most} entries");
    let s = stats(&r2.d);
    let queries =
        s["lookup_queries"].as_u64().unwrap() - before["lookup_queries"].as_u64().unwrap();
    let elapsed = took.as_secs_f64() + 1.0;
    let cap = (f64::from(rate) * elapsed) as u64 + 200;
    assert!(
        queries <= cap,
        "{queries} look-ups in {elapsed:.1} s, cap {cap}: {s}"
    );
    assert!(s["overloaded"].as_u64().unwrap() > 0, "{s}");
    assert!(s["misses_nacked"].as_u64().unwrap() > 0, "{s}");
    eprintln!(
        "flood of 6000 names in {:.2} s: {queries} look-ups (cap {cap}), PIT at most {most}, {} overloaded, {} Nacked, management answered {answered} times",
        took.as_secs_f64(),
        s["overloaded"],
        s["misses_nacked"]
    );
}
