//! Resident memory per pending Interest: `cargo run --release -p nameway-fw --example
//! pit_memory [N]` (default 10^6) sends N distinct 4-component Interests (lifetime 60 s) from
//! one face toward a producer that never answers, and prints the growth of the process's RSS
//! (from `/proc/self/statm`) divided by the entries pending. Each Interest is its own
//! allocation, as one received alone; what the PIT keeps is counted with it.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use nameway_fw::{Config, FaceScope, Forwarder, LinkType, Time};
use nameway_wire::{Interest, NameHasher};

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let mut fw = Forwarder::new(Config {
        hasher: Some(NameHasher::with_seed(1)),
        // One face may hold half the table (fair admission): room for all N.
        pit_capacity: 2 * n + 2,
        ..Config::default()
    });
    let consumer = fw.add_face(FaceScope::Local, LinkType::PointToPoint);
    let producer = fw.add_face(FaceScope::NonLocal, LinkType::PointToPoint);
    fw.add_nexthop(&"/flood".parse().unwrap(), producer, 10)
        .unwrap();
    let before = rss_bytes();
    let mut wire_bytes = 0;
    let now = Time::ZERO + Duration::from_millis(1);
    for i in 0..n {
        let mut interest = Interest::new(format!("/flood/app/x/seq={i}").parse().unwrap());
        interest.nonce = Some(i as u32);
        interest.lifetime_ms = Some(60_000);
        let wire = interest.encode();
        wire_bytes += wire.len();
        fw.handle_packet(now, consumer, wire);
        while fw.poll_transmit().is_some() {}
    }
    let after = rss_bytes();
    let pending = fw.status().n_pit_entries;
    assert_eq!(pending, n, "every Interest should be pending");
    println!(
        "{pending} pending Interests ({:.1} B on the wire each): RSS {:.1} MiB -> {:.1} MiB, \
         {:.0} B per entry",
        wire_bytes as f64 / n as f64,
        before as f64 / (1 << 20) as f64,
        after as f64 / (1 << 20) as f64,
        (after - before) as f64 / pending as f64
    );
}
