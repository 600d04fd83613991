//! The end-to-end tests' UDP relay (`common/relay.rs`) between two plain UDP sockets: it
//! passes both ways from stable addresses, records and searches, flips exactly one bit, drops,
//! replays the exact bytes, swaps two datagrams, and stops promptly on drop.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use common::relay::{Action, Direction, Fault, Matcher, Relay, LINK_SECURITY, REORDER_HOLD_MAX};

const WAIT: Duration = Duration::from_secs(2);

/// Side A (connected to the relay, as a daemon's face to its remote), side B (a listener the
/// relay forwards to), and the relay between them.
struct Link {
    a: UdpSocket,
    b: UdpSocket,
    relay: Relay,
}

fn link() -> Link {
    let b = UdpSocket::bind("127.0.0.1:0").unwrap();
    b.set_read_timeout(Some(WAIT)).unwrap();
    let relay = Relay::start(b.local_addr().unwrap());
    let a = UdpSocket::bind("127.0.0.1:0").unwrap();
    a.set_read_timeout(Some(WAIT)).unwrap();
    a.connect(relay.a_facing_addr()).unwrap();
    Link { a, b, relay }
}

fn recv_from(s: &UdpSocket) -> (Vec<u8>, SocketAddr) {
    let mut buf = [0u8; 2048];
    let (n, from) = s.recv_from(&mut buf).expect("a datagram");
    (buf[..n].to_vec(), from)
}

fn recv(s: &UdpSocket) -> Vec<u8> {
    recv_from(s).0
}

/// True when nothing arrives within 100 ms.
fn quiet(s: &UdpSocket) -> bool {
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let r = s.recv_from(&mut [0u8; 2048]);
    s.set_read_timeout(Some(WAIT)).unwrap();
    matches!(r, Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut))
}

/// A datagram of `len` bytes carrying LinkSecurity's type bytes after `tag`.
fn secured(tag: u8, len: usize) -> Vec<u8> {
    let mut d = vec![0x64, tag];
    d.extend_from_slice(&LINK_SECURITY);
    d.resize(len, 0xa5);
    d
}

fn bit_differences(x: &[u8], y: &[u8]) -> Vec<usize> {
    assert_eq!(x.len(), y.len());
    (0..x.len() * 8)
        .filter(|&i| (x[i / 8] ^ y[i / 8]) & (1 << (i % 8)) != 0)
        .collect()
}

#[test]
fn passes_both_ways_from_stable_addresses() {
    let l = link();
    l.a.send(b"ping").unwrap();
    let (got, from) = recv_from(&l.b);
    assert_eq!(got, b"ping");
    assert_eq!(from, l.relay.b_facing_addr());
    assert_eq!(l.relay.a_source(), Some(l.a.local_addr().unwrap()));
    l.b.send_to(b"pong", from).unwrap();
    assert_eq!(recv(&l.a), b"pong");
    // A second datagram toward B leaves from the same socket: one on-demand face at B.
    l.a.send(b"again").unwrap();
    let (got, again) = recv_from(&l.b);
    assert_eq!((got.as_slice(), again), (&b"again"[..], from));
    // The relay counts a datagram forwarded just after sending it: let it finish.
    let settled = |r: &Relay| {
        Direction::ALL.iter().all(|&d| {
            let c = r.counters(d);
            c.received == c.forwarded
        })
    };
    assert!(l.relay.wait_until(WAIT, settled));
    for dir in Direction::ALL {
        let c = l.relay.counters(dir);
        assert_eq!(c.received, c.forwarded, "{dir:?}: {c:?}");
        assert_eq!(c.errors, 0, "{dir:?}: {c:?}");
    }
    assert_eq!(l.relay.counters(Direction::AtoB).received, 2);
}

#[test]
fn records_and_searches_both_directions() {
    let l = link();
    l.a.send(b"hello marker-1").unwrap();
    l.a.send(b"other").unwrap();
    let (_, relay_b) = recv_from(&l.b);
    recv(&l.b);
    l.b.send_to(b"marker-1 back", relay_b).unwrap();
    recv(&l.a);
    assert!(l.relay.wait_until(WAIT, |r| r.records().len() == 3));
    assert_eq!(l.relay.search(b"marker-1"), 2);
    assert_eq!(l.relay.search_in(Direction::AtoB, b"marker-1"), 1);
    assert_eq!(l.relay.search_in(Direction::BtoA, b"marker-1"), 1);
    assert_eq!(l.relay.search(b"absent"), 0);
    assert_eq!(l.relay.search(b""), 3);
    let records = l.relay.records();
    let seen: Vec<(Direction, &[u8], Action)> = records
        .iter()
        .map(|r| (r.direction, r.bytes.as_slice(), r.action))
        .collect();
    assert_eq!(
        seen,
        [
            (Direction::AtoB, &b"hello marker-1"[..], Action::Forwarded),
            (Direction::AtoB, &b"other"[..], Action::Forwarded),
            (Direction::BtoA, &b"marker-1 back"[..], Action::Forwarded),
        ]
    );
    assert!(records.windows(2).all(|w| w[0].at <= w[1].at));
    l.relay.clear_records();
    assert!(l.relay.records().is_empty());
}

#[test]
fn flip_changes_exactly_one_bit_of_matching_datagrams() {
    let l = link();
    l.relay.set_fault(
        Direction::AtoB,
        Fault::flip_next(1, Matcher::link_security()),
    );
    // Not matching: untouched, and the fault still waits.
    l.a.send(b"clear").unwrap();
    assert_eq!(recv(&l.b), b"clear");
    assert_eq!(l.relay.fault_remaining(Direction::AtoB), 1);
    let sent = secured(1, 200);
    l.a.send(&sent).unwrap();
    let got = recv(&l.b);
    let diff = bit_differences(&sent, &got);
    assert_eq!(diff.len(), 1, "{diff:?}");
    let records = l.relay.records();
    assert_eq!(
        records.last().unwrap().action,
        Action::Flipped { bit: diff[0] }
    );
    assert_eq!(
        records.last().unwrap().bytes,
        sent,
        "records keep the bytes received"
    );
    // The one flip done, the fault is over.
    l.a.send(&sent).unwrap();
    assert_eq!(recv(&l.b), sent);
    assert_eq!(l.relay.fault_remaining(Direction::AtoB), 0);

    // Within the last 16 bytes (a tag), over many random positions.
    l.relay.set_fault(
        Direction::AtoB,
        Fault::flip_next_within_last(30, 16, Matcher::link_security()),
    );
    for i in 0..30 {
        let sent = secured(i, 100);
        l.a.send(&sent).unwrap();
        let diff = bit_differences(&sent, &recv(&l.b));
        assert_eq!(diff.len(), 1, "{diff:?}");
        assert!(
            diff[0] >= (100 - 16) * 8,
            "bit {} outside the tail",
            diff[0]
        );
    }
    assert_eq!(l.relay.counters(Direction::AtoB).flipped, 31);
}

#[test]
fn drops_the_next_n_matching() {
    let l = link();
    l.relay.set_fault(
        Direction::AtoB,
        Fault::drop_next(2, Matcher::contains(b"drop-me")),
    );
    for d in ["keep-1", "drop-me-1", "keep-2", "drop-me-2", "drop-me-3"] {
        l.a.send(d.as_bytes()).unwrap();
    }
    for want in ["keep-1", "keep-2", "drop-me-3"] {
        assert_eq!(recv(&l.b), want.as_bytes());
    }
    assert!(quiet(&l.b));
    let c = l.relay.counters(Direction::AtoB);
    assert_eq!((c.received, c.dropped, c.forwarded), (5, 2, 3));
    let dropped: Vec<Vec<u8>> = l
        .relay
        .records()
        .into_iter()
        .filter(|r| r.action == Action::Dropped)
        .map(|r| r.bytes)
        .collect();
    assert_eq!(dropped, [b"drop-me-1".to_vec(), b"drop-me-2".to_vec()]);
    // The other direction was never affected.
    let (_, relay_b) = {
        l.a.send(b"x").unwrap();
        recv_from(&l.b)
    };
    l.b.send_to(b"drop-me too", relay_b).unwrap();
    assert_eq!(recv(&l.a), b"drop-me too");
}

#[test]
fn replay_resends_the_exact_bytes() {
    let l = link();
    let r1 = secured(1, 64);
    let r2 = secured(2, 80);
    for d in [&r1[..], b"plain", &r2[..]] {
        l.a.send(d).unwrap();
    }
    let (_, relay_b) = recv_from(&l.b);
    recv(&l.b);
    recv(&l.b);
    let n = l
        .relay
        .replay(Direction::AtoB, &Matcher::link_security(), 10);
    assert_eq!(n, 2);
    let (got, from) = recv_from(&l.b);
    assert_eq!((got, from), (r1.clone(), relay_b));
    assert_eq!(recv(&l.b), r2);
    assert!(quiet(&l.b));
    assert_eq!(l.relay.replay(Direction::AtoB, &Matcher::any(), 1), 1);
    assert_eq!(recv(&l.b), r1, "count limits, oldest first");
    // Toward A as well.
    l.b.send_to(b"reply", relay_b).unwrap();
    assert_eq!(recv(&l.a), b"reply");
    assert_eq!(l.relay.replay(Direction::BtoA, &Matcher::any(), 5), 1);
    assert_eq!(recv(&l.a), b"reply");
    assert_eq!(l.relay.counters(Direction::AtoB).replayed, 3);
    assert_eq!(l.relay.counters(Direction::BtoA).replayed, 1);
    assert_eq!(l.relay.records().len(), 4, "replays are not recorded");
}

#[test]
fn reorder_swaps_two() {
    let l = link();
    l.relay.set_fault(
        Direction::AtoB,
        Fault::reorder_next(1, Matcher::contains(b"first")),
    );
    for d in ["zero", "first", "second", "third"] {
        l.a.send(d.as_bytes()).unwrap();
    }
    for want in ["zero", "second", "first", "third"] {
        assert_eq!(recv(&l.b), want.as_bytes());
    }
    assert_eq!(l.relay.counters(Direction::AtoB).reordered, 1);
    assert_eq!(l.relay.fault_remaining(Direction::AtoB), 0);
    assert_eq!(l.relay.records()[1].action, Action::Held);

    // A held datagram with nothing after it still goes, late.
    l.relay
        .set_fault(Direction::AtoB, Fault::reorder_next(1, Matcher::any()));
    let t = Instant::now();
    l.a.send(b"lonely").unwrap();
    assert_eq!(recv(&l.b), b"lonely");
    assert!(t.elapsed() >= REORDER_HOLD_MAX, "{:?}", t.elapsed());
    // And replacing the fault releases what is held at once.
    l.a.send(b"held").unwrap();
    assert!(l.relay.wait_until(WAIT, |r| r
        .records()
        .last()
        .is_some_and(|r| r.action == Action::Held)));
    l.relay.set_fault(Direction::AtoB, Fault::Pass);
    assert_eq!(recv(&l.b), b"held");
}

#[test]
fn replies_before_a_spoke_are_counted_not_sent() {
    let l = link();
    l.b.send_to(b"early", l.relay.b_facing_addr()).unwrap();
    assert!(l
        .relay
        .wait_until(WAIT, |r| r.counters(Direction::BtoA).errors == 1));
    assert_eq!(l.relay.records()[0].action, Action::Undeliverable);
    assert_eq!(l.relay.replay(Direction::BtoA, &Matcher::any(), 1), 0);
}

#[test]
fn stops_promptly_on_drop() {
    let l = link();
    let a_facing = l.relay.a_facing_addr();
    let t = Instant::now();
    drop(l.relay);
    assert!(
        t.elapsed() < Duration::from_millis(500),
        "{:?}",
        t.elapsed()
    );
    // Its sockets are closed: the port can be bound again.
    UdpSocket::bind(a_facing).unwrap();
}
