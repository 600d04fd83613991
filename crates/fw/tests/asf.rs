//! ASF on the simulated network: two paths to the producer, 5 ms and 50 ms one way. Most
//! Interests take the fast one; when it drops everything, traffic moves to the slow one within
//! a few timeouts; when it recovers, probing finds it again. A Nack NoRoute from one path sends
//! the namespace to the other.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use core::time::Duration;

use nameway_fw::sim::{AppId, Endpoint, Link, LinkConfig, NodeId, Received, Sim};
use nameway_fw::Config;
use nameway_wire::Name;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn name(s: &str) -> Name {
    s.parse().unwrap()
}

struct TwoPaths {
    sim: Sim,
    a: NodeId,
    consumer: AppId,
    fast: Link,
    slow: Link,
    next: u32,
}

/// consumer — A; A ==5 ms== F — producer; A ==50 ms== S — producer. The slow path has the
/// lower routing cost, so only measurement can prefer the fast one.
fn two_paths(strategy: &str, serve_q_on_fast: bool) -> TwoPaths {
    let config = || Config {
        hasher: Some(nameway_wire::NameHasher::with_seed(7)),
        ..Config::default()
    };
    let mut sim = Sim::new(3);
    let (a, f, s) = (
        sim.add_node(config()),
        sim.add_node(config()),
        sim.add_node(config()),
    );
    sim.node_mut(a)
        .set_strategy(&name("/"), &name(strategy))
        .unwrap();
    let fast = sim.connect(a, f, LinkConfig::wan(ms(5)));
    let slow = sim.connect(a, s, LinkConfig::wan(ms(50)));
    let consumer = sim.add_app(a);
    for (node, serves_q) in [(f, serve_q_on_fast), (s, true)] {
        let producer = sim.add_app(node);
        let face = sim.app_face(producer);
        sim.route(node, "/p", face, 0);
        if serves_q {
            sim.route(node, "/q", face, 0);
        }
        sim.serve(producer, 0);
    }
    for prefix in ["/p", "/q"] {
        sim.route(a, prefix, fast.a_face, 10);
        sim.route(a, prefix, slow.a_face, 1);
    }
    TwoPaths {
        sim,
        a,
        consumer,
        fast,
        slow,
        next: 0,
    }
}

impl TwoPaths {
    /// One Interest every 10 ms for `n` Interests, then 200 ms for the last answers.
    fn run(&mut self, prefix: &str, n: u32) {
        for _ in 0..n {
            self.next += 1;
            let i = self.next;
            self.sim.express(self.consumer, &format!("{prefix}/{i}"), i);
            self.sim.run_for(ms(10));
        }
        self.sim.run_for(ms(200));
    }

    /// Interests A sent on each path, by sequence number of the name's last component.
    fn sent(&self, link: Link) -> Vec<u32> {
        self.sim
            .sent_on(link.id, Endpoint::Node(self.a, link.a_face))
            .into_iter()
            .filter_map(|r| match r {
                Received::Interest { interest, .. } => interest
                    .name()
                    .last()
                    .and_then(|c| std::str::from_utf8(c.value()).ok()?.parse().ok()),
                _ => None,
            })
            .collect()
    }

    fn share_fast(&self, from: u32, to: u32) -> f64 {
        let in_range = |v: Vec<u32>| v.into_iter().filter(|i| (from..to).contains(i)).count();
        let fast = in_range(self.sent(self.fast));
        fast as f64 / f64::from(to - from)
    }

    fn data_received(&self, from: u32, to: u32) -> usize {
        self.sim
            .data_received(self.consumer)
            .iter()
            .filter_map(|d| {
                std::str::from_utf8(d.name().last()?.value())
                    .ok()?
                    .parse::<u32>()
                    .ok()
            })
            .filter(|i| (from..to).contains(i))
            .count()
    }
}

const ASF: &str = "/localhost/nfd/strategy/asf/v=5/probing-interval~1000";

#[test]
fn asf_prefers_the_fast_path_fails_over_and_finds_it_again() {
    let mut t = two_paths(ASF, true);
    // Phase 1: both paths work.
    t.run("/p/obj", 200);
    let share = t.share_fast(1, 201);
    assert!(share >= 0.9, "fast path share {share}");
    assert!(
        t.data_received(1, 201) >= 199,
        "{}",
        t.data_received(1, 201)
    );

    // Phase 2: the fast path drops everything.
    t.sim.set_link_up(t.fast.id, false);
    t.run("/p/obj", 300);
    let lost = 300 - t.data_received(201, 501);
    // A timeout is noticed one RTO (200 ms) after the first unanswered send: about 20 lost.
    assert!(lost <= 40, "{lost} Interests lost before the failover");
    assert!(
        t.data_received(301, 501) >= 199,
        "after the failover the slow path answers: {}",
        t.data_received(301, 501)
    );

    let via_slow = t
        .sent(t.slow)
        .into_iter()
        .filter(|i| (301..501).contains(i))
        .count();
    assert!(
        via_slow >= 190,
        "{via_slow} of 200 Interests went the slow way after the failover"
    );

    // Phase 3: the fast path recovers; probing finds it within a probing interval or two.
    t.sim.set_link_up(t.fast.id, true);
    t.run("/p/obj", 500);
    let share = t.share_fast(801, 1001);
    assert!(share >= 0.9, "fast path share after recovery {share}");
    assert_eq!(t.data_received(801, 1001), 200);
    // One measurements entry (the namespace /p/obj), counted for nMeasurementsEntries.
    assert_eq!(t.sim.node(t.a).n_measurements_entries(), 1);
    eprintln!(
        "ASF: fast share {:.3} before, {lost} lost at the failover, fast share {share:.3} after recovery",
        t.share_fast(1, 201)
    );
}

#[test]
fn best_route_keeps_the_lowest_cost_path_for_comparison() {
    // The same network with best-route: the slow path's lower cost wins every time.
    let mut t = two_paths("/localhost/nfd/strategy/best-route", true);
    t.run("/p/obj", 100);
    assert_eq!(t.share_fast(1, 101), 0.0);
    assert_eq!(t.sim.node(t.a).n_measurements_entries(), 0);
}

#[test]
fn a_nack_no_route_sends_the_namespace_to_the_other_path() {
    // F has no route for /q and answers Nack NoRoute; for /q the fast path has the lower cost,
    // so ASF tries it first (the namespace is unmeasured), probing the slow one.
    let mut t = two_paths(ASF, false);
    let (a, fast) = (t.a, t.fast.a_face);
    t.sim.route(a, "/q", fast, 0);
    t.run("/q/obj", 50);
    assert_eq!(t.data_received(1, 51), 50, "every Interest satisfied");
    assert!(t.sim.nacks_received(t.consumer).is_empty());
    // After the Nack the fast path is passed over: it saw the first Interest and at most one
    // probe (one probing interval is 1 s, the run 0.7 s).
    let to_fast = t.sent(t.fast);
    assert!(
        to_fast.len() <= 2,
        "Interests sent to the Nacking path: {to_fast:?}"
    );
    assert_eq!(to_fast.first(), Some(&1));
}
