//! `[forwarder] coalesce`: a real namewayd with a consumer that writes one Interest per system
//! call (as the ndn-cxx tools do) and a producer, over Unix sockets. With coalescing on, every
//! Interest is answered and the daemon counts its waits; `"auto"` measures epochs; `"off"`
//! exports nothing about it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{free_port, Daemon};
use nameway_wire::framing::StreamFramer;
use nameway_wire::mgmt::{ControlParameters, ControlResponse};
use nameway_wire::{Component, Data, Interest, Name};
use serde_json::Value;

struct Conn {
    s: UnixStream,
    f: StreamFramer,
    buf: Vec<u8>,
}

impl Conn {
    fn open(d: &Daemon) -> Self {
        let s = UnixStream::connect(&d.unix).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        Self {
            s,
            f: StreamFramer::new(8800),
            buf: vec![0; 65536],
        }
    }

    /// The next packet, or None after 5 s or when the daemon closes.
    fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Ok(Some(p)) = self.f.next_packet() {
                return Some(p);
            }
            match self.s.read(&mut self.buf) {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.f.extend(&self.buf[..n]),
            }
        }
    }
}

fn interest(name: &Name, nonce: u32) -> Bytes {
    let mut i = Interest::new(name.clone());
    i.nonce = Some(nonce);
    i.lifetime_ms = Some(4000);
    i.encode()
}

/// Makes `c` the next hop of `prefix` (FaceId 0: the requesting face) and answers every
/// Interest on it with 100 bytes, one write per Data, until the daemon closes it.
fn producer(mut c: Conn, prefix: &str) -> std::thread::JoinHandle<()> {
    let params = ControlParameters {
        name: Some(prefix.parse().unwrap()),
        ..ControlParameters::default()
    };
    let name: Name = "/localhost/nfd/fib/add-nexthop".parse().unwrap();
    let name = name.append(&Component::generic(params.encode())).unwrap();
    c.s.write_all(&interest(&name, 1)).unwrap();
    let reply = Data::decode(&c.next().expect("command answered")).unwrap();
    let status = ControlResponse::decode(&reply.content.unwrap()).unwrap();
    assert_eq!(status.status_code, 200);
    std::thread::spawn(move || {
        c.s.set_read_timeout(None).unwrap();
        while let Some(p) = c.next() {
            if let Ok(i) = Interest::decode(&p) {
                let d = Data::new(i.name.clone(), Bytes::from(vec![7u8; 100]));
                if c.s.write_all(&d.encode()).is_err() {
                    return;
                }
            }
        }
    })
}

/// Fetches `/co/<run>/<i>` for i in 0..n with `window` Interests outstanding, one Interest per
/// write; every Data must be the one asked for, in order. Returns the time it took.
fn fetch(d: &Daemon, run: &str, n: u32, window: u32) -> Duration {
    let mut c = Conn::open(d);
    let name = |i: u32| -> Name { format!("/co/{run}/{i}").parse().unwrap() };
    let t0 = Instant::now();
    let mut sent = 0;
    for _ in 0..window.min(n) {
        c.s.write_all(&interest(&name(sent), sent)).unwrap();
        sent += 1;
    }
    for got in 0..n {
        let p = c
            .next()
            .unwrap_or_else(|| panic!("Data {got} of {n} not answered within 5 s"));
        let data = Data::decode(&p).unwrap();
        assert_eq!(data.name, name(got), "Data out of order");
        assert_eq!(data.content.unwrap().len(), 100);
        if sent < n {
            c.s.write_all(&interest(&name(sent), sent)).unwrap();
            sent += 1;
        }
    }
    t0.elapsed()
}

fn start(http: u16, forwarder: &str) -> Daemon {
    Daemon::start(&format!(
        "[forwarder]\n{forwarder}\n[http]\nlisten = \"127.0.0.1:{http}\"\n"
    ))
}

fn metrics(http: u16) -> String {
    let (_, _, body) = common::http_get(&format!("http://127.0.0.1:{http}"), "/metrics");
    String::from_utf8(body).unwrap()
}

/// The value of the `/metrics` sample that starts with `series`.
fn sample(text: &str, series: &str) -> u64 {
    text.lines()
        .find(|l| l.starts_with(series))
        .unwrap_or_else(|| panic!("no {series} in /metrics:\n{text}"))
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn api_status(http: u16) -> Value {
    let (_, _, body) = common::http_get(&format!("http://127.0.0.1:{http}"), "/api/status");
    serde_json::from_slice(&body).unwrap()
}

#[test]
fn with_coalescing_on_every_interest_is_answered_and_the_waits_are_counted() {
    let http = free_port();
    let d = start(http, "coalesce = \"on\"\ncoalesce_wait_us = 200");
    let _p = producer(Conn::open(&d), "/co");
    fetch(&d, "on", 3000, 16);
    // The thread may still be in its last wait after the consumer had its last Data, and
    // the consumer's close (an event too) is still to be handled.
    std::thread::sleep(Duration::from_millis(300));
    let m = metrics(http);
    assert!(m.contains("nameway_coalesce_info{mode=\"on\"} 1"), "{m}");
    assert_eq!(sample(&m, "nameway_coalesce_wait_microseconds "), 200);
    let waits = sample(&m, "nameway_coalesce_waits_total ");
    assert!(waits > 0, "no wait counted under load:\n{m}");
    // At most one wait per turn that handled packets: never more than the packets read
    // (3000 Interests and 3000 Data, and the command).
    assert!(waits <= 6001, "{waits} waits for 6001 packets");
    let status = api_status(http);
    // Every forwarding thread coalesces (one, or two in the NAMEWAY_THREADS=2 pass).
    let threads = status["shards"].as_array().unwrap().len().max(1) as u64;
    assert_eq!(sample(&m, "nameway_coalesce_threads "), threads);
    assert_eq!(status["coalesce"]["mode"], "on", "{}", status["coalesce"]);
    assert_eq!(status["coalesce"]["waits"].as_u64().unwrap(), waits);

    // Idle: a thread that handled no packet since it last parked parks without waiting
    // (so the first packet after a pause is read at once): no wait is counted while the
    // daemon's timers and these scrapes wake it.
    std::thread::sleep(Duration::from_millis(500));
    let idle = sample(&metrics(http), "nameway_coalesce_waits_total ");
    assert_eq!(idle, waits, "waits counted while idle");
    fetch(&d, "one", 1, 1);
}

#[test]
fn auto_measures_both_ways_and_keeps_answering() {
    let http = free_port();
    let d = start(http, "coalesce = \"auto\"");
    let _p = producer(Conn::open(&d), "/co");
    // 2 x 24,000 packets read: at least five epochs of 4,096 on each of two threads.
    fetch(&d, "auto", 24_000, 16);
    let m = metrics(http);
    assert!(m.contains("nameway_coalesce_info{mode=\"auto\"} 1"), "{m}");
    let on = sample(&m, "nameway_coalesce_epochs_total{coalescing=\"on\"}");
    let off = sample(&m, "nameway_coalesce_epochs_total{coalescing=\"off\"}");
    assert!(on + off >= 4, "epochs on {on}, off {off}:\n{m}");
    // It starts plain and probes coalescing after two epochs.
    assert!(off >= 2, "epochs on {on}, off {off}");
    assert!(
        on >= 1,
        "never probed coalescing: epochs on {on}, off {off}"
    );
    assert!(sample(&m, "nameway_coalesce_waits_total ") > 0, "{m}");
}

#[test]
fn off_by_default_exports_nothing_about_it() {
    let http = free_port();
    let d = start(http, "");
    let _p = producer(Conn::open(&d), "/co");
    fetch(&d, "off", 500, 16);
    let m = metrics(http);
    assert!(!m.contains("nameway_coalesce"), "{m}");
    assert!(api_status(http)["coalesce"].is_null());
}

#[test]
fn coalescing_with_io_threads_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(&path, "[forwarder]\ncoalesce = \"auto\"\nio_threads = 2\n").unwrap();
    let err = common::refused_start(&path);
    assert!(
        err.contains("forwarder.coalesce needs forwarder.io_threads = 0"),
        "{err}"
    );
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
}
