//! Partitioned placement against every forwarder caching everything, on a simulated path
//! (crates/fw/src/sim.rs): consumer - n1 - ... - nk - producer, each forwarder's store of
//! `capacity` packets, Zipf(alpha) requests over `objects` names, one at a time. Prints the
//! hit ratio (requests answered before the producer), the producer's load and the entries
//! held, for both policies at the same total capacity.
//!
//! `cargo run --release -p nameway-fw --example placement -- [k] [capacity] [objects] [alpha] [requests]`

#![allow(clippy::expect_used)] // an example: a refused partition is a bug here

use core::time::Duration;

use nameway_fw::sim::{LinkConfig, Sim};
use nameway_fw::{Config, Partition};
use nameway_wire::random::SplitMix64;

fn arg(i: usize, default: f64) -> f64 {
    std::env::args()
        .nth(i)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

/// Cumulative Zipf weights over `n` ranks.
fn zipf_cdf(n: usize, alpha: f64) -> Vec<f64> {
    let w: Vec<f64> = (1..=n).map(|r| 1.0 / (r as f64).powf(alpha)).collect();
    let total: f64 = w.iter().sum();
    let mut acc = 0.0;
    w.iter()
        .map(|x| {
            acc += x / total;
            acc
        })
        .collect()
}

fn run(k: usize, capacity: usize, objects: usize, alpha: f64, requests: usize, partitioned: bool) {
    let mut sim = Sim::new(11);
    let config = Config {
        cs_capacity: capacity,
        ..Config::default()
    };
    let nodes: Vec<_> = (0..k).map(|_| sim.add_node(config.clone())).collect();
    let consumer = sim.add_app(nodes[0]);
    let producer = sim.add_app(nodes[k - 1]);
    let delay = LinkConfig::wan(Duration::from_millis(1));
    let links: Vec<_> = nodes
        .windows(2)
        .map(|w| sim.connect(w[0], w[1], delay))
        .collect();
    for (i, l) in links.iter().enumerate() {
        sim.route(nodes[i], "/p", l.a_face, 10);
    }
    sim.route(nodes[k - 1], "/p", sim.app_face(producer), 0);
    sim.serve(producer, 3_600_000);
    if partitioned {
        for (i, n) in nodes.iter().enumerate() {
            let p = Partition {
                index: i as u32,
                k: k as u32,
            };
            sim.node_mut(*n)
                .set_cs_policy(&[], Some(p))
                .expect("partition");
        }
    }
    let cdf = zipf_cdf(objects, alpha);
    let mut rng = SplitMix64::new(5);
    for i in 0..requests {
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let rank = cdf.partition_point(|c| *c < u);
        sim.express(consumer, &format!("/p/obj{rank}"), i as u32 + 1);
        sim.run_for(Duration::from_millis(20));
    }
    let served = sim.interests_received(producer).len();
    let got = sim.data_received(consumer).len();
    let entries: usize = nodes
        .iter()
        .map(|n| sim.node(*n).status().n_cs_entries)
        .sum();
    println!(
        "{:<12} k={k} capacity/node={capacity} objects={objects} alpha={alpha} requests={requests}: hit ratio {:.3}, producer answered {served}, consumer got {got}, entries held {entries}",
        if partitioned { "partitioned" } else { "everywhere" },
        1.0 - served as f64 / requests as f64
    );
}

fn main() {
    let k = arg(1, 3.0) as usize;
    let capacity = arg(2, 100.0) as usize;
    let objects = arg(3, 2000.0) as usize;
    let alpha = arg(4, 0.8);
    let requests = arg(5, 20000.0) as usize;
    run(k, capacity, objects, alpha, requests, false);
    run(k, capacity, objects, alpha, requests, true);
}
