//! Secure routing through real daemons (docs/routing.md): three or more namewayd processes on
//! loopback, real python-ndn (and NDNts) applications, no static route anywhere (only the
//! faces toward the RIB service, from `[[routing.rib]] uri`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "common/routing.rs"]
mod net;

use std::time::{Duration, Instant};

use common::python;
use net::*;

#[test]
fn three_daemons_resolve_a_self_certifying_name_with_no_static_route() {
    let Some(py) = python() else { return };
    let (_db, rib, [r1, r2]) = net(["", ""]);
    let (_owner, h) = producer(&py, &r1, &rib.d, &[]);
    // The consumer's first Interest, with no route for the name on its forwarder, is held
    // while the name is resolved, then forwarded with a ForwardingHint: no retry by the app.
    let got = consume(&py, &r2.d, &uri(&h, "/hello"));
    assert_eq!(
        got["sha256"],
        sha_hex(format!("owner {h}").as_bytes()),
        "{got}"
    );
    let s2 = stats(&r2.d);
    assert_eq!(s2["lookups"], 1, "{s2}");
    assert_eq!(s2["lookup_results"]["found"], 1, "{s2}");
    assert_eq!(s2["misses_held"], 1, "{s2}");
    assert_eq!(s2["hinted"], 1, "{s2}");
    assert_eq!(s2["delegate_faces"], 1, "{s2}");
    assert_eq!(s2["chains_verified"], 1, "{s2}");
    // A second Interest: the route is held, no look-up, no signature.
    let again = consume(&py, &r2.d, &uri(&h, "/again"));
    assert_eq!(again["size"], format!("owner {h}").len(), "{again}");
    let s2b = stats(&r2.d);
    assert_eq!(s2b["lookups"], 1, "{s2b}");
    assert_eq!(
        s2b["signatures_verified"], s2["signatures_verified"],
        "{s2b}"
    );
    assert_eq!(s2b["hinted"], 2, "{s2b}");
    // The routes on the consumer's router: to the RIB (configured) and to the producer's
    // router (from its verified locator record); none for the name itself.
    let fib = dataset(&r2.d, "routing", "list");
    let route = &fib["routes"][0];
    assert_eq!(route["name"], format!("sc:{h}"), "{fib}");
    assert_eq!(route["hint"], format!("sc:{}", r1.me.to_hex()), "{fib}");
    let s3 = stats(&rib.d);
    assert_eq!(s3["service_lookups"]["found"], 1, "{s3}");
    assert_eq!(s3["service_registrations"]["stored"], 1, "{s3}");
}

#[test]
fn ndnts_and_python_ndn_announcements_are_accepted() {
    let Some(py) = python() else { return };
    let (_db, rib, [r1, r2]) = net(["", ""]);
    // python-ndn: a plain announcement of any prefix (no Nameway field, ECDSA) is taken as
    // NFD takes it, a route of origin prefixann (129) on the app's face.
    let plain = sc_app(&py, &r1.d, &["plain", "--prefix", "/example/pyndn"]);
    assert_eq!(plain.next(20)["announce"], 200);
    assert_eq!(plain.next(10)["ready"], true);
    let routes = rib_routes(&r1.d);
    assert!(
        routes
            .iter()
            .any(|(n, _, o)| n.to_string() == "/example/pyndn" && *o == 129),
        "{routes:?}"
    );
    let got = consume(&py, &r1.d, "/example/pyndn/x");
    assert_eq!(got["sha256"], sha_hex(b"plain"), "{got}");
    // NDNts: NfdPrefixReg with PrefixAnn sends rib/announce for a plain announcement and for
    // a delegation of a self-certifying name; the latter is registered and resolved.
    let Some(node) = common::node() else { return };
    let app = ndnts_announcer(&node, &r1.d, &r1.me);
    let h = app.next(30)["h"].as_str().unwrap().to_owned();
    let ready = app.next(30);
    assert_eq!(ready["ready"], true, "{ready}");
    let routes = rib_routes(&r1.d);
    assert!(
        routes
            .iter()
            .any(|(n, _, o)| n.to_string() == "/example/ndnts" && *o == 129),
        "{routes:?}"
    );
    wait_for(10, "the NDNts name's registration", || {
        registered(&rib.d, &h, &r1.me)
    });
    let got = consume(&py, &r2.d, &uri(&h, "/x"));
    assert_eq!(
        got["sha256"],
        sha_hex(format!("ndnts owner {h}").as_bytes()),
        "{got}"
    );
    let s1 = stats(&r1.d);
    assert_eq!(s1["announcements"]["plain"], 2, "{s1}");
    assert_eq!(s1["announcements"]["self_certifying"], 1, "{s1}");
}

#[test]
fn the_registry_survives_a_restart_and_one_restarted_empty_is_refilled_by_renewals() {
    let Some(py) = python() else { return };
    // r1 renews every 400 s (the default lifetime): nothing it sends during the test can
    // refill the registry. r2 renews every 2 s (2/3 of 3 s).
    let (db, rib, [r1, r2]) = net(["", "announce_lifetime = \"3s\""]);
    let database = db.path().join("rib.redb");
    let (_a, ha) = producer(&py, &r1, &rib.d, &[]);
    let (_b, hb) = producer(&py, &r2, &rib.d, &[]);
    let (tcp, udp) = (rib.d.tcp, rib.d.udp);
    let key = rib.keys.path().join("routing.key");
    // Flushed within 200 ms: a registration survives SIGKILL after that.
    std::thread::sleep(Duration::from_millis(600));
    let Router { d, keys: _keys, .. } = rib;
    drop(d);
    let restarted = start_at(tcp, udp, &rib_host(&key, &database, ""));
    assert!(
        registered(&restarted, &ha, &r1.me),
        "the registry was not reloaded from {}",
        database.display()
    );
    assert_eq!(
        stats(&r1.d)["registrations"]["stored"],
        1,
        "r1 sent nothing more"
    );
    drop(restarted);
    // Restarted with an empty registry (another file): r2 renews within one renewal period.
    let empty = db.path().join("empty.redb");
    let started = Instant::now();
    let fresh = start_at(tcp, udp, &rib_host(&key, &empty, ""));
    assert!(!registered(&fresh, &ha, &r1.me));
    wait_for(10, "the renewal", || registered(&fresh, &hb, &r2.me));
    eprintln!(
        "refilled {} ms after the restart (renewal period 2000 ms)",
        started.elapsed().as_millis()
    );
    let r3 = start_router(udp, "");
    let got = consume(&py, &r3.d, &uri(&hb, "/after-restart"));
    assert_eq!(
        got["sha256"],
        sha_hex(format!("owner {hb}").as_bytes()),
        "{got}"
    );
}

#[test]
fn a_producer_that_moves_is_reached_at_once_through_its_new_router() {
    let Some(py) = python() else { return };
    let (db, rib, [r1, r2, r3]) = net(["", "", ""]);
    let key = db.path().join("owner.der");
    let key = key.to_str().unwrap();
    let (first, h) = producer(&py, &r1, &rib.d, &["--key", key, "--marker", "at r1"]);
    let got = consume(&py, &r2.d, &uri(&h, "/1"));
    assert_eq!(got["sha256"], sha_hex(b"at r1"), "{got}");
    // The owner moves to r3 and announces again (a newer version): the RIB replaces the
    // route at once, whatever the old one's lifetime.
    drop(first);
    let (_second, h2) = producer(&py, &r3, &rib.d, &["--key", key, "--marker", "at r3"]);
    assert_eq!(h, h2);
    // The consumer's router still hints r1; r1 Nacks (its producer is gone), the first hop
    // looks the name up again and follows the newer announcement: one Interest, no retry.
    let got = consume(&py, &r2.d, &uri(&h, "/2"));
    assert_eq!(got["sha256"], sha_hex(b"at r3"), "{got}");
    let s2 = stats(&r2.d);
    assert_eq!(s2["upstream_nacks"], 1, "{s2}");
    assert_eq!(s2["route_changes"]["replaced"], 1, "{s2}");
    assert_eq!(s2["lookups"], 2, "{s2}");
}

#[test]
fn nack_mode_answers_a_miss_with_retry_after_and_the_route_is_there_next_time() {
    let Some(py) = python() else { return };
    let (_db, rib, [r1, r2]) = net(["", "miss = \"nack\""]);
    let (_owner, h) = producer(&py, &r1, &rib.d, &[]);
    let name: nameway_wire::Name = uri(&h, "/first").parse().unwrap();
    let retry_after = with_client(&r2.d, async |c| {
        use nameway_transport::client::Incoming;
        let mut i = nameway_wire::Interest::new(name.clone());
        i.nonce = Some(7);
        c.conn().send(&i.encode()).await.unwrap();
        loop {
            if let Incoming::Nack {
                reason,
                retry_after,
                ..
            } = c.conn().recv().await.unwrap()
            {
                assert_eq!(reason, nameway_wire::NackReason::NoRoute);
                return retry_after;
            }
        }
    });
    let retry_after = retry_after.expect("Nack without RetryAfter");
    assert!((10..=1000).contains(&retry_after), "{retry_after}");
    std::thread::sleep(Duration::from_millis(retry_after));
    wait_for(5, "the route", || stats(&r2.d)["routes"] == 1);
    let got = consume(&py, &r2.d, &uri(&h, "/second"));
    assert_eq!(
        got["sha256"],
        sha_hex(format!("owner {h}").as_bytes()),
        "{got}"
    );
    let s2 = stats(&r2.d);
    assert_eq!(s2["misses_nacked"], 1, "{s2}");
    assert_eq!(s2["misses_held"], 1, "{s2}");
}

#[test]
fn nack_mode_a_segmented_fetch_waits_out_retry_after_for_its_segments() {
    let Some(py) = python() else { return };
    let (_db, rib, [r1, r2]) = net(["", "miss = \"nack\""]);
    let (_owner, h) = producer(&py, &r1, &rib.d, &["--segments", "6"]);
    // A versioned name (what `nameway get` fetches once it knows the version): no discovery,
    // so the first segment Interest itself meets the miss on r2 and its Nack RetryAfter.
    let name: nameway_wire::Name = uri(&h, "/obj/v=1").parse().unwrap();
    let (out, report) = with_client(&r2.d, async |c| {
        let mut out = Vec::new();
        let options = nameway_transport::FetchOptions::default();
        let report = nameway_transport::fetch(c, &name, &options, &mut out, &mut |_| {}).await;
        (out, report)
    });
    let report = report.unwrap_or_else(|e| panic!("{e}\n{}", r2.d.log()));
    let want: Vec<u8> = (0..6)
        .flat_map(|k| format!("owner {h} {k}").into_bytes())
        .collect();
    assert_eq!(out, want);
    assert_eq!(report.segments, 6);
    assert!(report.retry_after_waits >= 1, "{report:?}");
    let s2 = stats(&r2.d);
    assert!(s2["misses_nacked"].as_u64().unwrap() >= 1, "{s2}");
    assert_eq!(s2["lookups"], 1, "{s2}");
}
