//! Resident memory per pending Interest: `cargo run --release -p nameway-fw --example
//! pit_memory -- [N] [datagram|stream]` (default 10^6, datagram) sends N distinct 4-component
//! Interests (lifetime 60 s) from one face toward a producer that never answers, and prints
//! the growth of the process's RSS (from `/proc/self/statm`) divided by the entries pending.
//!
//! How the Interests arrive decides what each costs besides the PIT's own tables:
//! - `datagram`: each Interest is its own allocation, as a UDP face copies each datagram (and
//!   the first clone of such a buffer, for the packet sent upstream, allocates the shared
//!   header `bytes` needs): the figure of earlier rounds;
//! - `stream`: the Interests are cut out of one byte stream, read 16 KiB at a time into
//!   `StreamFramer`, as a Unix or TCP face does, so they share the read buffers.
//!
//! Either way the packets' memory is counted (the PIT keeps it alive); the byte stream a
//! socket would hold is made before the first measurement. `scripts/pit-memory.sh` measures
//! the same in a running `namewayd` with a real client.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use bytes::Bytes;
use nameway_fw::{Config, FaceScope, Forwarder, LinkType, PitEntry, Time};
use nameway_wire::{Interest, NameHasher, StreamFramer};

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn encode(i: usize) -> Bytes {
    let mut interest = Interest::new(format!("/flood/app/x/seq={i}").parse().unwrap());
    interest.nonce = Some(i as u32);
    interest.lifetime_ms = Some(60_000);
    interest.encode()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let stream = match args.next().as_deref() {
        None | Some("datagram") => false,
        Some("stream") => true,
        Some(other) => panic!("unknown mode {other:?}: datagram or stream"),
    };
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
    let now = Time::ZERO + Duration::from_millis(1);
    // The byte stream a socket would hold: made before the first measurement and kept until
    // after the last, so that it counts on neither side.
    let source: Vec<u8> = if stream {
        (0..n).flat_map(|i| encode(i).to_vec()).collect()
    } else {
        Vec::new()
    };
    let before = rss_bytes();
    let mut wire_bytes = 0;
    if stream {
        let mut framer = StreamFramer::default();
        for chunk in source.chunks(16 * 1024) {
            framer.read_buffer().extend_from_slice(chunk);
            while let Some(wire) = framer.next_packet().unwrap() {
                wire_bytes += wire.len();
                fw.handle_packet(now, consumer, wire);
                while fw.poll_transmit().is_some() {}
            }
        }
    } else {
        for i in 0..n {
            let wire = encode(i);
            wire_bytes += wire.len();
            fw.handle_packet(now, consumer, wire);
            while fw.poll_transmit().is_some() {}
        }
    }
    let after = rss_bytes();
    drop(source);
    let pending = fw.status().n_pit_entries;
    assert_eq!(pending, n, "every Interest should be pending");
    println!(
        "{pending} pending Interests ({:.1} B on the wire each, {}): RSS {:.1} MiB -> {:.1} MiB, \
         {:.0} B per entry (PitEntry: {} B)",
        wire_bytes as f64 / n as f64,
        if stream { "stream" } else { "datagram" },
        before as f64 / (1 << 20) as f64,
        after as f64 / (1 << 20) as f64,
        after.saturating_sub(before) as f64 / pending as f64,
        core::mem::size_of::<PitEntry>(),
    );
}
