//! Scenarios on the simulated network (`nameway_fw::sim`), each written once and run over
//! every strategy where it makes sense, in the manner of NFD's `strategy-no-route` tests.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use core::time::Duration;

use bytes::Bytes;
use nameway_fw::sim::{
    make_data, make_interest, make_nack, with_pit_token, Endpoint, LinkConfig, Received, Sim,
};
use nameway_fw::sim::{AppId, NodeId};
use nameway_fw::{Config, DropReason, FaceScope, Forwarder, LinkType, NackReason, Time};
use nameway_wire::{Component, DataView, InterestView, Name};

const BEST_ROUTE: &str = "/localhost/nfd/strategy/best-route";
const MULTICAST: &str = "/localhost/nfd/strategy/multicast";
const MULTICAST_V4: &str = "/localhost/nfd/strategy/multicast/v=4";
const ALL: [&str; 2] = [BEST_ROUTE, MULTICAST];

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn name(s: &str) -> Name {
    s.parse().unwrap()
}

fn config() -> Config {
    Config {
        hasher: Some(nameway_wire::NameHasher::with_seed(42)),
        ..Config::default()
    }
}

fn set_strategy(sim: &mut Sim, node: NodeId, strategy: &str) {
    sim.node_mut(node)
        .set_strategy(&name("/"), &name(strategy))
        .unwrap();
}

/// consumer app — A ==5 ms== B — producer app; routes for /p.
struct Line {
    sim: Sim,
    a: NodeId,
    b: NodeId,
    consumer: AppId,
    producer: AppId,
    link: nameway_fw::sim::Link,
}

fn line(strategy: &str) -> Line {
    let mut sim = Sim::new(1);
    let (a, b) = (sim.add_node(config()), sim.add_node(config()));
    set_strategy(&mut sim, a, strategy);
    set_strategy(&mut sim, b, strategy);
    let link = sim.connect(a, b, LinkConfig::wan(ms(5)));
    let consumer = sim.add_app(a);
    let producer = sim.add_app(b);
    sim.route(a, "/p", link.a_face, 10);
    let pf = sim.app_face(producer);
    sim.route(b, "/p", pf, 0);
    sim.serve(producer, 10_000);
    Line {
        sim,
        a,
        b,
        consumer,
        producer,
        link,
    }
}

fn drops(fw: &Forwarder, reason: DropReason) -> u64 {
    fw.counters().drops.get(reason)
}

#[test]
fn two_consumers_are_aggregated_and_both_get_the_data() {
    for strategy in ALL {
        let mut l = line(strategy);
        let c2 = l.sim.add_app(l.a);
        l.sim.express(l.consumer, "/p/x", 1);
        l.sim.express(c2, "/p/x", 2);
        l.sim.run_for(ms(100));
        assert_eq!(l.sim.interests_received(l.producer).len(), 1, "{strategy}");
        assert_eq!(l.sim.data_received(l.consumer).len(), 1, "{strategy}");
        assert_eq!(l.sim.data_received(c2).len(), 1, "{strategy}");
        let st = l.sim.node(l.a).status();
        assert_eq!(st.counters.n_satisfied_interests, 1, "{strategy}");
        assert_eq!(st.counters.n_out_data, 2, "{strategy}");
    }
}

#[test]
fn lost_interest_is_retransmitted_with_new_nonce_and_satisfied() {
    for strategy in ALL {
        let mut l = line(strategy);
        l.sim.set_link_up(l.link.id, false);
        l.sim.express(l.consumer, "/p/x", 1);
        l.sim.run_for(ms(200));
        assert!(l.sim.data_received(l.consumer).is_empty());
        l.sim.set_link_up(l.link.id, true);
        l.sim.express(l.consumer, "/p/x", 2);
        l.sim.run_for(ms(100));
        let got = l.sim.interests_received(l.producer);
        assert_eq!(got.len(), 1, "{strategy}");
        assert_eq!(got[0].nonce(), Some(2));
        assert_eq!(l.sim.data_received(l.consumer).len(), 1, "{strategy}");
    }
}

#[test]
fn retransmission_inside_suppression_interval_is_not_forwarded() {
    for strategy in ALL {
        let mut l = line(strategy);
        l.sim.set_link_up(l.link.id, false);
        l.sim.express(l.consumer, "/p/x", 1);
        l.sim.run_for(ms(2));
        l.sim.express(l.consumer, "/p/x", 2); // 2 ms later: suppressed (interval 10 ms)
        l.sim.run_for(ms(20));
        l.sim.express(l.consumer, "/p/x", 3); // 22 ms later: forwarded, interval now 20 ms
        l.sim.run_for(ms(5));
        l.sim.express(l.consumer, "/p/x", 4); // 5 ms later: suppressed
        l.sim.run_for(ms(5));
        let sent = l.sim.sent_on(l.link.id, Endpoint::Node(l.a, l.link.a_face));
        let nonces: Vec<_> = sent
            .iter()
            .filter_map(|r| match r {
                Received::Interest { interest, .. } => interest.nonce(),
                _ => None,
            })
            .collect();
        assert_eq!(nonces, [1, 3], "{strategy}");
    }
}

/// A ring A → B → C → A for /p; the consumer is on A.
fn ring(strategy: &str) -> (Sim, [NodeId; 3], [nameway_fw::sim::Link; 3], AppId) {
    let mut sim = Sim::new(2);
    let nodes = [
        sim.add_node(config()),
        sim.add_node(config()),
        sim.add_node(config()),
    ];
    for n in nodes {
        set_strategy(&mut sim, n, strategy);
    }
    let ab = sim.connect(nodes[0], nodes[1], LinkConfig::wan(ms(1)));
    let bc = sim.connect(nodes[1], nodes[2], LinkConfig::wan(ms(1)));
    let ca = sim.connect(nodes[2], nodes[0], LinkConfig::wan(ms(1)));
    sim.route(nodes[0], "/p", ab.a_face, 1);
    sim.route(nodes[1], "/p", bc.a_face, 1);
    sim.route(nodes[2], "/p", ca.a_face, 1);
    let consumer = sim.add_app(nodes[0]);
    (sim, nodes, [ab, bc, ca], consumer)
}

#[test]
fn looping_interest_gets_nack_duplicate_and_is_not_forwarded_again() {
    for strategy in [BEST_ROUTE, MULTICAST_V4] {
        let (mut sim, [a, _, _], [ab, _, ca], consumer) = ring(strategy);
        sim.express(consumer, "/p/x", 7);
        sim.run_for(ms(50));
        // A sent the Interest to B once, and answered C's copy with Nack Duplicate.
        let to_b = sim.sent_on(ab.id, Endpoint::Node(a, ab.a_face));
        assert_eq!(
            to_b.iter()
                .filter(|r| matches!(r, Received::Interest { .. }))
                .count(),
            1,
            "{strategy}"
        );
        let to_c = sim.sent_on(ca.id, Endpoint::Node(a, ca.b_face));
        assert!(
            matches!(
                to_c.as_slice(),
                [Received::Nack {
                    reason: NackReason::Duplicate,
                    ..
                }]
            ),
            "{strategy}: {to_c:?}"
        );
        assert_eq!(drops(sim.node(a), DropReason::DuplicateNonce), 1);
        // The Nack travels back around; the consumer learns of the loop.
        assert_eq!(
            sim.nacks_received(consumer),
            [NackReason::Duplicate],
            "{strategy}"
        );
    }
}

#[test]
fn multicast_v5_drops_loops_silently() {
    let (mut sim, [a, _, _], [_, _, ca], consumer) = ring(MULTICAST);
    sim.express(consumer, "/p/x", 7);
    sim.run_for(ms(50));
    assert!(sim.sent_on(ca.id, Endpoint::Node(a, ca.b_face)).is_empty());
    assert_eq!(drops(sim.node(a), DropReason::DuplicateNonce), 1);
    assert!(sim.nacks_received(consumer).is_empty());
}

#[test]
fn second_request_is_a_cache_hit() {
    for strategy in ALL {
        let mut l = line(strategy);
        l.sim.express(l.consumer, "/p/x", 1);
        l.sim.run_for(ms(100));
        let c2 = l.sim.add_app(l.a);
        l.sim.express(c2, "/p/x", 2);
        l.sim.run_for(ms(100));
        assert_eq!(l.sim.interests_received(l.producer).len(), 1, "{strategy}");
        assert_eq!(l.sim.data_received(c2).len(), 1, "{strategy}");
        assert_eq!(l.sim.node(l.a).status().cs.hits, 1, "{strategy}");
        // also the same consumer again, after the straggler time
        l.sim.express(l.consumer, "/p/x", 3);
        l.sim.run_for(ms(10));
        assert_eq!(l.sim.data_received(l.consumer).len(), 2, "{strategy}");
        assert_eq!(l.sim.interests_received(l.producer).len(), 1, "{strategy}");
    }
}

#[test]
fn must_be_fresh_refuses_stale_data() {
    for strategy in ALL {
        let mut l = line(strategy);
        l.sim.serve(l.producer, 100);
        let mbf = |nonce| make_interest("/p/x", nonce, |i| i.must_be_fresh = true);
        l.sim.app_send(l.consumer, mbf(1));
        l.sim.run_for(ms(20));
        l.sim.app_send(l.consumer, mbf(2));
        l.sim.run_for(ms(20));
        assert_eq!(
            l.sim.interests_received(l.producer).len(),
            1,
            "fresh hit, {strategy}"
        );
        l.sim.run_for(ms(200));
        l.sim.app_send(l.consumer, mbf(3));
        l.sim.run_for(ms(20));
        assert_eq!(
            l.sim.interests_received(l.producer).len(),
            2,
            "stale refused, {strategy}"
        );
        assert_eq!(l.sim.data_received(l.consumer).len(), 3, "{strategy}");
        // without MustBeFresh the stale copy would do; with FreshnessPeriod 0 it is never fresh
        let mut l = line(strategy);
        l.sim.serve(l.producer, 0);
        l.sim.app_send(l.consumer, mbf(1));
        l.sim.run_for(ms(20));
        l.sim.app_send(l.consumer, mbf(2));
        l.sim.run_for(ms(20));
        assert_eq!(
            l.sim.interests_received(l.producer).len(),
            2,
            "never fresh, {strategy}"
        );
        l.sim.express(l.consumer, "/p/x", 3);
        l.sim.run_for(ms(20));
        assert_eq!(
            l.sim.interests_received(l.producer).len(),
            2,
            "stale ok, {strategy}"
        );
    }
}

#[test]
fn can_be_prefix_matches_longer_names_in_pit_and_cs() {
    for strategy in ALL {
        let mut l = line(strategy);
        l.sim.set_responder(
            l.producer,
            Box::new(|i: &InterestView| {
                Some(make_data(&format!("{}/v=1/seg=0", i.name()), 10_000))
            }),
        );
        let cbp = |nonce| make_interest("/p/obj", nonce, |i| i.can_be_prefix = true);
        l.sim.app_send(l.consumer, cbp(1));
        l.sim.run_for(ms(50));
        let got = l.sim.data_received(l.consumer);
        assert_eq!(got.len(), 1, "{strategy}");
        assert_eq!(got[0].name().to_string(), "/p/obj/v=1/seg=0");
        let c2 = l.sim.add_app(l.a);
        l.sim.app_send(c2, cbp(2));
        l.sim.run_for(ms(50));
        assert_eq!(l.sim.data_received(c2).len(), 1, "cache hit, {strategy}");
        assert_eq!(l.sim.interests_received(l.producer).len(), 1, "{strategy}");
        // without CanBePrefix the cached /p/obj/v=1/seg=0 does not answer /p/obj
        l.sim.express(c2, "/p/obj", 3);
        l.sim.run_for(ms(50));
        assert_eq!(l.sim.interests_received(l.producer).len(), 2, "{strategy}");
    }
}

#[test]
fn hop_limit_runs_out() {
    for strategy in ALL {
        let mut l = line(strategy);
        let hop = |nonce, h| make_interest("/p/x", nonce, |i| i.hop_limit = Some(h));
        l.sim.app_send(l.consumer, hop(1, 0));
        l.sim.app_send(l.consumer, hop(2, 1));
        l.sim.run_for(ms(50));
        assert!(
            l.sim.interests_received(l.producer).is_empty(),
            "{strategy}"
        );
        assert_eq!(
            drops(l.sim.node(l.a), DropReason::HopLimitExpired),
            2,
            "{strategy}"
        );
        let mut l = line(strategy);
        l.sim.app_send(l.consumer, hop(3, 2));
        l.sim.run_for(ms(50));
        let got = l.sim.interests_received(l.producer);
        assert_eq!(got.len(), 1, "{strategy}");
        assert_eq!(got[0].hop_limit(), Some(0), "decremented at each hop");
        assert_eq!(l.sim.data_received(l.consumer).len(), 1, "{strategy}");
    }
}

#[test]
fn localhost_is_refused_from_and_toward_non_local_faces() {
    let mut l = line(BEST_ROUTE);
    // toward: A has a route for /localhost/x over the non-local link, but will not use it
    let af = l.link.a_face;
    l.sim.route(l.a, "/localhost/x", af, 1);
    l.sim.express(l.consumer, "/localhost/x/y", 1);
    l.sim.run_for(ms(20));
    assert!(l.sim.sent_on(l.link.id, Endpoint::Node(l.a, af)).is_empty());
    assert_eq!(l.sim.nacks_received(l.consumer), [NackReason::NoRoute]);
    // from: a non-local face on B sends /localhost Interests and Data
    let remote = l.sim.add_app_with(l.b, LinkConfig::wan(ms(1)));
    l.sim.express(remote, "/localhost/nfd/rib/list", 2);
    l.sim.app_send(remote, make_data("/localhost/nfd/x", 0));
    l.sim.run_for(ms(20));
    assert_eq!(drops(l.sim.node(l.b), DropReason::LocalhostViolation), 2);
    assert!(l.sim.interests_received(l.producer).is_empty());
}

#[test]
fn full_pit_drops_and_counts_and_the_flooding_face_pays() {
    let mut sim = Sim::new(3);
    let a = sim.add_node(Config {
        pit_capacity: 4,
        ..config()
    });
    let b = sim.add_node(config());
    let link = sim.connect(a, b, LinkConfig::wan(ms(1)));
    sim.route(a, "/p", link.a_face, 1);
    sim.set_link_up(link.id, false);
    let (c1, c2, c3) = (sim.add_app(a), sim.add_app(a), sim.add_app(a));
    let mut nonce = 0;
    let mut send = |sim: &mut Sim, app, n: u32| {
        for _ in 0..n {
            nonce += 1;
            sim.express(app, &format!("/p/{nonce}"), nonce);
        }
        sim.run_for(ms(10));
    };
    // c1 alone fills half the table (2), then is over its share: 3 FaceQuota drops.
    send(&mut sim, c1, 5);
    // c2 arrives: its share is a third (1): 1 admitted, 2 FaceQuota.
    send(&mut sim, c2, 3);
    // c3: a quarter (1): admitted, and the table is full: the next is PitFull.
    send(&mut sim, c3, 2);
    let st = sim.node(a).status();
    assert_eq!(st.n_pit_entries, 4);
    assert_eq!(st.counters.drops.get(DropReason::FaceQuota), 5);
    assert_eq!(st.counters.drops.get(DropReason::PitFull), 1);
    let face_drops = |sim: &Sim, app, reason| {
        sim.node(a)
            .face(sim.app_face(app))
            .unwrap()
            .counters()
            .drops
            .get(reason)
    };
    assert_eq!(face_drops(&sim, c1, DropReason::FaceQuota), 3);
    assert_eq!(face_drops(&sim, c2, DropReason::FaceQuota), 2);
    assert_eq!(face_drops(&sim, c3, DropReason::PitFull), 1);
    let held = |sim: &Sim, app| sim.node(a).face(sim.app_face(app)).unwrap().pit_entries();
    assert_eq!((held(&sim, c1), held(&sim, c2), held(&sim, c3)), (2, 1, 1));
    // A /localhost Interest from a local face still gets in (management is never locked out):
    // here it has no route, so it reaches the strategy and is Nacked, instead of PitFull.
    sim.express(c3, "/localhost/nfd/status/general", 999);
    sim.run_for(ms(10));
    assert_eq!(face_drops(&sim, c3, DropReason::PitFull), 1);
    assert_eq!(face_drops(&sim, c3, DropReason::NoRoute), 1);
    // They expire, and room is made.
    sim.run_for(ms(5000));
    assert_eq!(sim.node(a).status().n_pit_entries, 0);
    assert_eq!((held(&sim, c1), held(&sim, c2), held(&sim, c3)), (0, 0, 0));
    // The charges are released: c2 alone may again fill half the table.
    send(&mut sim, c2, 3);
    assert_eq!(held(&sim, c2), 2);
}

/// consumer — A, with two upstreams: B1 (cost 10) and B2 (cost 20), each with a producer.
struct Diamond {
    sim: Sim,
    a: NodeId,
    b1: NodeId,
    l1: nameway_fw::sim::Link,
    consumer: AppId,
    p1: AppId,
    p2: AppId,
}

fn diamond(strategy: &str) -> Diamond {
    let mut sim = Sim::new(4);
    let (a, b1, b2) = (
        sim.add_node(config()),
        sim.add_node(config()),
        sim.add_node(config()),
    );
    for n in [a, b1, b2] {
        set_strategy(&mut sim, n, strategy);
    }
    let l1 = sim.connect(a, b1, LinkConfig::wan(ms(5)));
    let l2 = sim.connect(a, b2, LinkConfig::wan(ms(5)));
    sim.route(a, "/p", l1.a_face, 10);
    sim.route(a, "/p", l2.a_face, 20);
    let consumer = sim.add_app(a);
    let (p1, p2) = (sim.add_app(b1), sim.add_app(b2));
    for (node, p) in [(b1, p1), (b2, p2)] {
        let f = sim.app_face(p);
        sim.route(node, "/p", f, 0);
        sim.serve(p, 10_000);
    }
    Diamond {
        sim,
        a,
        b1,
        l1,
        consumer,
        p1,
        p2,
    }
}

#[test]
fn best_route_fails_over_on_nack() {
    let mut d = diamond(BEST_ROUTE);
    // B1 loses its route: it answers Nack NoRoute, and A tries B2 at once.
    let pf = d.sim.app_face(d.p1);
    d.sim.node_mut(d.b1).remove_nexthop(&name("/p"), pf);
    d.sim.express(d.consumer, "/p/x", 1);
    d.sim.run_for(ms(50));
    assert_eq!(d.sim.data_received(d.consumer).len(), 1);
    assert!(d.sim.nacks_received(d.consumer).is_empty());
    assert_eq!(d.sim.interests_received(d.p2).len(), 1);
}

#[test]
fn best_route_fails_over_on_timeout_by_retransmission() {
    let mut d = diamond(BEST_ROUTE);
    d.sim.express(d.consumer, "/p/a", 1);
    d.sim.run_for(ms(50));
    assert_eq!(d.sim.interests_received(d.p1).len(), 1, "best route first");
    d.sim.set_link_up(d.l1.id, false);
    d.sim.express(d.consumer, "/p/b", 2);
    d.sim.run_for(ms(300));
    assert_eq!(
        d.sim.data_received(d.consumer).len(),
        1,
        "the best link is dead"
    );
    d.sim.express(d.consumer, "/p/b", 3); // the consumer retransmits
    d.sim.run_for(ms(50));
    assert_eq!(d.sim.data_received(d.consumer).len(), 2);
    assert_eq!(d.sim.interests_received(d.p2).len(), 1);
}

#[test]
fn best_route_nacks_with_least_severe_reason_when_all_upstreams_nack() {
    let mut d = diamond(BEST_ROUTE);
    let pf = d.sim.app_face(d.p1);
    d.sim.node_mut(d.b1).remove_nexthop(&name("/p"), pf);
    // B2's producer answers with Nack Congestion
    d.sim.set_responder(d.p2, Box::new(|_| None));
    d.sim.express(d.consumer, "/p/x", 1);
    d.sim.run_for(ms(20));
    let i = d.sim.interests_received(d.p2)[0].wire().clone();
    d.sim.app_send(d.p2, make_nack(i, NackReason::Congestion));
    d.sim.run_for(ms(50));
    assert_eq!(d.sim.nacks_received(d.consumer), [NackReason::Congestion]);
    assert_eq!(d.sim.node(d.a).status().n_pit_entries, 0);
}

#[test]
fn multicast_reaches_every_upstream() {
    let mut d = diamond(MULTICAST);
    d.sim.express(d.consumer, "/p/x", 1);
    d.sim.run_for(ms(50));
    assert_eq!(d.sim.interests_received(d.p1).len(), 1);
    assert_eq!(d.sim.interests_received(d.p2).len(), 1);
    assert_eq!(
        d.sim.data_received(d.consumer).len(),
        1,
        "the second Data is not sent again"
    );
    assert_eq!(drops(d.sim.node(d.a), DropReason::Unsolicited), 1);
}

#[test]
fn multicast_suppresses_retransmissions_per_upstream() {
    let mut d = diamond(MULTICAST);
    d.sim.set_link_up(d.l1.id, false);
    d.sim.set_responder(d.p2, Box::new(|_| None));
    d.sim.express(d.consumer, "/p/x", 1);
    d.sim.run_for(ms(5));
    d.sim.express(d.consumer, "/p/x", 2); // suppressed on both upstreams
    d.sim.run_for(ms(15));
    d.sim.express(d.consumer, "/p/x", 3); // forwarded to both
    d.sim.run_for(ms(20));
    assert_eq!(d.sim.interests_received(d.p2).len(), 2);
    let to_b1 = d.sim.sent_on(d.l1.id, Endpoint::Node(d.a, d.l1.a_face));
    assert_eq!(to_b1.len(), 2);
}

#[test]
fn no_route_gets_nack_no_route() {
    let mut l = line(BEST_ROUTE);
    l.sim.express(l.consumer, "/q/x", 1);
    l.sim.run_for(ms(10));
    assert_eq!(l.sim.nacks_received(l.consumer), [NackReason::NoRoute]);
    assert_eq!(drops(l.sim.node(l.a), DropReason::NoRoute), 1);
    assert_eq!(l.sim.node(l.a).status().n_pit_entries, 0);
    // the Nack carries the Interest exactly as sent
    let sent = make_interest("/q/x", 1, |_| {});
    match &l.sim.received(l.consumer)[0].1 {
        Received::Nack { interest, .. } => assert_eq!(interest.wire(), &sent),
        other => panic!("{other:?}"),
    }
    // next hop is the downstream itself: also no route
    let cf = l.sim.app_face(l.consumer);
    l.sim.route(l.a, "/r", cf, 0);
    l.sim.express(l.consumer, "/r/x", 2);
    l.sim.run_for(ms(10));
    assert_eq!(
        l.sim.nacks_received(l.consumer),
        [NackReason::NoRoute, NackReason::NoRoute]
    );
}

#[test]
fn pit_token_is_echoed_on_data_and_nack_and_stripped_upstream() {
    for strategy in ALL {
        let mut l = line(strategy);
        let token = [0x41, 0x67, 0xff, 0xff, 0xff, 0xff];
        l.sim.app_send(
            l.consumer,
            with_pit_token(make_interest("/p/x", 1, |_| {}), &token),
        );
        l.sim.run_for(ms(50));
        // upstream: a bare Interest
        let up = l.sim.sent_on(l.link.id, Endpoint::Node(l.a, l.link.a_face));
        assert!(
            matches!(
                &up[..],
                [Received::Interest {
                    pit_token: None,
                    ..
                }]
            ),
            "{strategy}"
        );
        match l.sim.received(l.consumer) {
            [(
                _,
                Received::Data {
                    pit_token: Some(t), ..
                },
            )] => assert_eq!(&t[..], &token),
            other => panic!("{strategy}: {other:?}"),
        }
        // a CS hit echoes the token too; an Interest without token gets bare Data
        l.sim.app_send(
            l.consumer,
            with_pit_token(make_interest("/p/x", 2, |_| {}), &[9]),
        );
        l.sim.express(l.consumer, "/p/x", 3);
        l.sim.run_for(ms(5));
        match &l.sim.received(l.consumer)[1..] {
            [(
                _,
                Received::Data {
                    pit_token: Some(t), ..
                },
            ), (
                _,
                Received::Data {
                    pit_token: None, ..
                },
            )] => {
                assert_eq!(&t[..], &[9])
            }
            other => panic!("{strategy}: {other:?}"),
        }
    }
    let mut l = line(BEST_ROUTE);
    l.sim.app_send(
        l.consumer,
        with_pit_token(make_interest("/q/x", 1, |_| {}), &[1, 2]),
    );
    l.sim.run_for(ms(5));
    match l.sim.received(l.consumer) {
        [(
            _,
            Received::Nack {
                reason: NackReason::NoRoute,
                pit_token: Some(t),
                ..
            },
        )] => {
            assert_eq!(&t[..], &[1, 2])
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn data_is_never_returned_to_the_face_it_came_from() {
    for strategy in ALL {
        let mut fw = Forwarder::new(config());
        fw.set_strategy(&name("/"), &name(strategy)).unwrap();
        let app = fw.add_face(FaceScope::Local, LinkType::PointToPoint);
        let up = fw.add_face(FaceScope::NonLocal, LinkType::PointToPoint);
        fw.add_nexthop(&name("/p"), up, 1).unwrap();
        let t0 = Time::ZERO;
        fw.handle_packet(t0, app, make_interest("/p/x", 1, |_| {}));
        // the upstream also asks for /p/x (it is a downstream too)
        fw.handle_packet(t0, up, make_interest("/p/x", 2, |_| {}));
        fw.handle_packet(t0, up, make_data("/p/x", 1000));
        let sent: Vec<_> = std::iter::from_fn(|| fw.poll_transmit()).collect();
        let data_to: Vec<_> = sent
            .iter()
            .filter(|t| matches!(Received::parse(t.wire.clone()), Received::Data { .. }))
            .map(|t| t.face)
            .collect();
        assert_eq!(data_to, [app], "{strategy}");
    }
}

#[test]
fn implicit_digest_is_satisfied_from_cs_and_from_upstream() {
    for strategy in ALL {
        let mut l = line(strategy);
        // the producer answers /p/y/sha256digest=... with /p/y
        l.sim.set_responder(
            l.producer,
            Box::new(|i: &InterestView| {
                let n = i.name();
                let plain = n.prefix(n.len() - 1);
                Some(make_data(&plain.to_string(), 10_000))
            }),
        );
        let digest = |n: &str| {
            let d = DataView::new_checked(make_data(n, 10_000))
                .unwrap()
                .implicit_digest();
            name(n)
                .append(&Component::implicit_digest(d))
                .unwrap()
                .to_string()
        };
        // from upstream: both PITs match by digest
        l.sim.express(l.consumer, &digest("/p/y"), 1);
        l.sim.run_for(ms(50));
        let got = l.sim.data_received(l.consumer);
        assert_eq!(got.len(), 1, "{strategy}");
        assert_eq!(got[0].name().to_string(), "/p/y");
        // from the CS: a second consumer with the same full name
        let c2 = l.sim.add_app(l.a);
        l.sim.express(c2, &digest("/p/y"), 2);
        l.sim.run_for(ms(50));
        assert_eq!(l.sim.data_received(c2).len(), 1, "{strategy}");
        assert_eq!(l.sim.interests_received(l.producer).len(), 1, "{strategy}");
        // a wrong digest is not answered from the CS
        let wrong = name("/p/y")
            .append(&Component::implicit_digest([7; 32]))
            .unwrap()
            .to_string();
        l.sim.express(c2, &wrong, 3);
        l.sim.run_for(ms(50));
        assert_eq!(l.sim.interests_received(l.producer).len(), 2, "{strategy}");
        assert_eq!(
            l.sim.data_received(c2).len(),
            1,
            "the producer's Data does not match it"
        );
        assert_eq!(drops(l.sim.node(l.b), DropReason::Unsolicited), 1);
    }
}

#[test]
fn forwarding_hint_steers_the_fib_lookup() {
    let mut l = line(BEST_ROUTE);
    // /other has no route on A; the hint /p does
    let hinted = make_interest("/other/x", 1, |i| {
        i.forwarding_hint = vec![name("/nowhere"), name("/p/region")]
    });
    l.sim.app_send(l.consumer, hinted);
    l.sim.run_for(ms(20));
    let up = l.sim.sent_on(l.link.id, Endpoint::Node(l.a, l.link.a_face));
    assert_eq!(up.len(), 1);
    assert_eq!(up[0].name().unwrap().to_string(), "/other/x");
}

#[test]
fn nacks_and_idle_packets_from_the_wire() {
    let mut fw = Forwarder::new(config());
    let app = fw.add_face(FaceScope::Local, LinkType::PointToPoint);
    let ma = fw.add_face(FaceScope::NonLocal, LinkType::MultiAccess);
    let t0 = Time::ZERO;
    fw.handle_packet(t0, app, Bytes::from_static(&[0x64, 0x00])); // IDLE
                                                                  // fragmented
    fw.handle_packet(
        t0,
        app,
        Bytes::from_static(&[0x64, 0x08, 0x53, 0x01, 0x02, 0x50, 0x03, 0x05, 0x01, 0x00]),
    );
    fw.handle_packet(t0, app, Bytes::from_static(&[0x05, 0x00])); // malformed
    fw.handle_packet(
        t0,
        ma,
        make_nack(make_interest("/p/x", 1, |_| {}), NackReason::NoRoute),
    );
    fw.handle_packet(
        t0,
        app,
        make_nack(make_interest("/p/x", 1, |_| {}), NackReason::NoRoute),
    );
    fw.handle_packet(
        t0,
        nameway_fw::FaceId(9999),
        make_interest("/p/x", 1, |_| {}),
    );
    let c = fw.face(app).unwrap().counters();
    assert_eq!(c.n_in_idle, 1);
    assert_eq!(c.drops.get(DropReason::Fragmented), 1);
    assert_eq!(c.drops.get(DropReason::Malformed), 1);
    assert_eq!(c.drops.get(DropReason::NackUnsolicited), 1);
    assert_eq!(
        fw.face(ma)
            .unwrap()
            .counters()
            .drops
            .get(DropReason::NackOnMultiAccess),
        1
    );
    assert_eq!(fw.counters().drops.get(DropReason::UnknownFace), 1);
    assert!(fw.poll_transmit().is_none());
}

#[test]
fn loops_on_multi_access_faces_are_dropped_silently() {
    let mut fw = Forwarder::new(config());
    let ma = fw.add_face(FaceScope::NonLocal, LinkType::MultiAccess);
    let up = fw.add_face(FaceScope::NonLocal, LinkType::PointToPoint);
    fw.add_nexthop(&name("/p"), up, 1).unwrap();
    let t0 = Time::ZERO;
    fw.handle_packet(t0, ma, make_interest("/p/x", 5, |_| {}));
    assert_eq!(fw.poll_transmit().map(|t| t.face), Some(up));
    fw.handle_packet(t0, ma, make_interest("/p/x", 5, |_| {}));
    assert!(fw.poll_transmit().is_none());
    assert_eq!(
        fw.face(ma)
            .unwrap()
            .counters()
            .drops
            .get(DropReason::DuplicateNonce),
        1
    );
}

#[test]
fn removing_a_face_removes_its_routes_and_records() {
    let mut l = line(BEST_ROUTE);
    l.sim.set_link_up(l.link.id, false);
    l.sim.express(l.consumer, "/p/x", 1);
    l.sim.run_for(ms(5));
    assert_eq!(l.sim.node(l.a).status().n_pit_entries, 1);
    let cf = l.sim.app_face(l.consumer);
    assert!(l.sim.node_mut(l.a).remove_face(l.link.a_face));
    assert!(l.sim.node(l.a).fib_lookup(&name("/p/x")).is_none());
    // the entry keeps its in-record; removing the consumer face removes the entry
    assert_eq!(l.sim.node(l.a).status().n_pit_entries, 1);
    assert!(l.sim.node_mut(l.a).remove_face(cf));
    assert_eq!(l.sim.node(l.a).status().n_pit_entries, 0);
    assert!(!l.sim.node_mut(l.a).remove_face(cf));
}

#[test]
fn strategy_choice_is_per_prefix() {
    let mut fw = Forwarder::new(config());
    assert_eq!(
        fw.effective_strategy(&name("/a/b")).unwrap().to_string(),
        "/localhost/nfd/strategy/best-route/v=5"
    );
    let set = fw.set_strategy(&name("/a"), &name(MULTICAST_V4)).unwrap();
    assert_eq!(set.to_string(), MULTICAST_V4);
    assert_eq!(
        fw.effective_strategy(&name("/a/b")).unwrap().to_string(),
        MULTICAST_V4
    );
    assert_eq!(fw.strategy_choices().count(), 2);
    assert!(fw
        .set_strategy(&name("/a"), &name("/localhost/nfd/strategy/nope"))
        .is_err());
    assert_eq!(fw.unset_strategy(&name("/a")), Ok(true));
    assert!(fw.unset_strategy(&name("/")).is_err());
    assert!(fw
        .effective_strategy(&name("/a/b"))
        .unwrap()
        .to_string()
        .contains("best-route"));
}

#[test]
fn cs_management_switches() {
    let mut l = line(BEST_ROUTE);
    l.sim.node_mut(l.a).set_cs_admit(false);
    l.sim.express(l.consumer, "/p/x", 1);
    l.sim.run_for(ms(50));
    assert_eq!(l.sim.node(l.a).content_store().len(), 0);
    l.sim.node_mut(l.a).set_cs_admit(true);
    l.sim.express(l.consumer, "/p/y", 2);
    l.sim.run_for(ms(50));
    assert_eq!(l.sim.node(l.a).content_store().len(), 1);
    l.sim.node_mut(l.a).set_cs_serve(false);
    l.sim.node_mut(l.b).set_cs_serve(false);
    l.sim.express(l.consumer, "/p/y", 3);
    l.sim.run_for(ms(150));
    assert_eq!(
        l.sim.interests_received(l.producer).len(),
        3,
        "serve off: not answered from the CS"
    );
    assert_eq!(l.sim.node_mut(l.a).cs_erase(&name("/p"), 10), 1);
    assert_eq!(l.sim.node(l.a).content_store().len(), 0);
}

#[test]
fn lossy_links_still_deliver_with_retransmissions() {
    // A long chain with 20% loss per link: a consumer retransmitting every 50 ms gets all
    // 20 objects; the run is reproducible from the seed.
    let mut sim = Sim::new(99);
    let nodes: Vec<_> = (0..4).map(|_| sim.add_node(config())).collect();
    let mut links = Vec::new();
    for w in nodes.windows(2) {
        links.push(sim.connect(w[0], w[1], LinkConfig::wan(ms(2)).with_loss(0.2)));
    }
    for (i, l) in links.iter().enumerate() {
        sim.route(nodes[i], "/p", l.a_face, 1);
    }
    let consumer = sim.add_app(nodes[0]);
    let producer = sim.add_app(nodes[3]);
    let pf = sim.app_face(producer);
    sim.route(nodes[3], "/p", pf, 0);
    sim.serve(producer, 10_000);
    let mut nonce = 0;
    for seg in 0..20 {
        let n = format!("/p/obj/seg={seg}");
        for _ in 0..20 {
            let before = sim.data_received(consumer).len();
            nonce += 1;
            sim.express(consumer, &n, nonce);
            sim.run_for(ms(50));
            if sim.data_received(consumer).len() > before {
                break;
            }
        }
    }
    assert_eq!(sim.data_received(consumer).len(), 20);
}

#[test]
fn late_duplicate_after_data_is_still_a_loop() {
    let mut fw = Forwarder::new(config());
    let app = fw.add_face(FaceScope::Local, LinkType::PointToPoint);
    let up = fw.add_face(FaceScope::NonLocal, LinkType::PointToPoint);
    let side = fw.add_face(FaceScope::NonLocal, LinkType::PointToPoint);
    fw.add_nexthop(&name("/p"), up, 1).unwrap();
    let t0 = Time::ZERO;
    fw.handle_packet(t0, app, make_interest("/p/x", 8, |_| {}));
    fw.handle_packet(Time::from_millis(10), up, make_data("/p/x", 1000));
    while fw.poll_transmit().is_some() {}
    // the same Interest comes back on another face 50 ms later: a loop, not a cache hit
    fw.handle_packet(
        Time::from_millis(60),
        side,
        make_interest("/p/x", 8, |_| {}),
    );
    let t = fw.poll_transmit().unwrap();
    assert_eq!(t.face, side);
    assert!(matches!(
        Received::parse(t.wire),
        Received::Nack {
            reason: NackReason::Duplicate,
            ..
        }
    ));
    // after the straggler time the entry is gone and the CS answers
    fw.handle_timeout(Time::from_millis(200));
    assert_eq!(fw.status().n_pit_entries, 0);
    fw.handle_packet(
        Time::from_millis(200),
        side,
        make_interest("/p/x", 8, |_| {}),
    );
    assert!(matches!(
        Received::parse(fw.poll_transmit().unwrap().wire),
        Received::Data { .. }
    ));
}

/// A Data still wrapped in Nameway's LinkSecurity header (its face did not decrypt it) never
/// satisfies an Interest: it would deliver ciphertext as content.
#[test]
fn an_undecrypted_data_is_dropped_not_delivered() {
    use nameway_wire::lp::{LinkSecurity, LpPacket, SecurityLevel};
    let mut fw = Forwarder::new(config());
    let app = fw.add_face(FaceScope::Local, LinkType::PointToPoint);
    let up = fw.add_face(FaceScope::NonLocal, LinkType::PointToPoint);
    fw.add_nexthop(&name("/p"), up, 10).unwrap();
    let t0 = Time::ZERO;
    fw.handle_packet(t0, app, make_interest("/p/x", 1, |_| {}));
    let sent = fw.poll_transmit().unwrap();
    assert_eq!(sent.face, up);
    let sealed = LpPacket {
        link_security: Some(LinkSecurity {
            level: SecurityLevel::ChaCha20,
            whole_packet: false,
            key_id: 1,
            counter: 1,
            tag: None,
            group: None,
        }),
        fragment: Some(make_data("/p/x", 0)),
        ..LpPacket::default()
    };
    fw.handle_packet(t0, up, sealed.encode());
    assert!(
        fw.poll_transmit().is_none(),
        "ciphertext reached the consumer"
    );
    let c = fw.face(up).unwrap().counters();
    assert_eq!(c.drops.get(DropReason::Undecrypted), 1);
    // The same Data in clear satisfies the Interest.
    fw.handle_packet(t0, up, make_data("/p/x", 0));
    assert_eq!(fw.poll_transmit().unwrap().face, app);
}
