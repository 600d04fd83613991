//! namewayd with `[forwarder] threads = 2`: real daemons, real sockets. An Interest and its
//! retransmission from faces placed on different shards aggregate; a flood pinned to one shard
//! locks out nobody; a per-prefix dispatch `K` spreads a dominating prefix over both shards;
//! a route removed while traffic flows is never used after the command's reply.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{Read, Write};
use std::net::UdpSocket;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{free_port, Daemon};
use nameway_wire::framing::StreamFramer;
use nameway_wire::mgmt::{ControlParameters, ControlResponse};
use nameway_wire::{Component, Data, Interest, Name, Packet};
use serde_json::Value;

/// An application on the daemon's Unix socket.
struct Conn {
    s: UnixStream,
    f: StreamFramer,
}

impl Conn {
    fn open(d: &Daemon) -> Self {
        Self {
            s: UnixStream::connect(&d.unix).unwrap(),
            f: StreamFramer::new(8800),
        }
    }

    fn send(&mut self, wire: &Bytes) {
        self.s.write_all(wire).unwrap();
    }

    /// The next Data within `limit` (other packets are skipped).
    fn data(&mut self, limit: Duration) -> Option<Data> {
        let deadline = Instant::now() + limit;
        loop {
            while let Ok(Some(p)) = self.f.next_packet() {
                if let Ok(d) = Data::decode(&p) {
                    return Some(d);
                }
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            self.s
                .set_read_timeout(Some(left.max(Duration::from_millis(1))))
                .unwrap();
            let mut buf = [0u8; 65536];
            match self.s.read(&mut buf) {
                Ok(0) => return None,
                Ok(n) => self.f.extend(&buf[..n]),
                Err(_) => return None,
            }
        }
    }

    /// Expresses `name` and waits for its Data.
    fn fetch(&mut self, name: &str, nonce: u32) -> Option<Data> {
        self.send(&interest(name, nonce));
        self.data(Duration::from_secs(5))
    }
}

fn interest(name: &str, nonce: u32) -> Bytes {
    let mut i = Interest::new(name.parse().unwrap());
    i.nonce = Some(nonce);
    i.lifetime_ms = Some(4000);
    i.encode()
}

/// A producer on a UDP socket (a static `[[face]]` of the daemon): answers every Interest
/// after `delay`, and notes the names it was asked for.
struct Producer {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Producer {
    fn start(delay: Duration) -> Self {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = sock.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let noted = seen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 9000];
            loop {
                let Ok((n, from)) = sock.recv_from(&mut buf) else {
                    return;
                };
                let wire = Bytes::copy_from_slice(&buf[..n]);
                let frag = match Packet::classify(wire) {
                    Ok(Packet::Interest(w)) => w,
                    Ok(Packet::Lp(lp)) if lp.nack.is_none() => match lp.fragment {
                        Some(f) => f,
                        None => continue,
                    },
                    _ => continue,
                };
                let Ok(i) = Interest::decode(&frag) else {
                    continue;
                };
                noted.lock().unwrap().push(i.name.to_string());
                if !delay.is_zero() {
                    std::thread::sleep(delay);
                }
                let d = Data::new(i.name.clone(), Bytes::from_static(b"payload"));
                let _ = sock.send_to(&d.encode(), from);
            }
        });
        Self { port, seen }
    }

    fn uri(&self) -> String {
        format!("udp4://127.0.0.1:{}", self.port)
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

fn api_status(http: u16) -> Value {
    let (_, _, body) = common::http_get(&format!("http://127.0.0.1:{http}"), "/api/status");
    serde_json::from_slice(&body).unwrap()
}

/// Per-shard `nameway_shard_packets` local + received, from `/metrics`.
fn shard_packets(http: u16) -> Vec<u64> {
    let (_, _, body) = common::http_get(&format!("http://127.0.0.1:{http}"), "/metrics");
    let text = String::from_utf8(body).unwrap();
    let mut per = vec![0u64; 2];
    for line in text.lines() {
        if !line.starts_with("nameway_shard_packets_total{") || line.contains("handed_off") {
            continue;
        }
        let shard: usize = line.split("shard=\"").nth(1).unwrap()[..1].parse().unwrap();
        let n: u64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        per[shard] += n;
    }
    per
}

/// The id of the face whose remote URI is `remote`.
fn face_id(http: u16, remote: &str) -> u64 {
    let status = api_status(http);
    status["faces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["remote"] == remote)
        .unwrap_or_else(|| panic!("no face {remote}: {status}"))["id"]
        .as_u64()
        .unwrap()
}

fn config(http: u16, rest: &str) -> String {
    format!("[forwarder]\nthreads = 2\n[http]\nlisten = \"127.0.0.1:{http}\"\n{rest}")
}

/// Two applications (faces 0 and 1 mod 2: one on each shard) ask for the same name with
/// different Nonces while the producer is slow: one Interest goes upstream, both get the Data.
#[test]
fn an_interest_and_its_retransmission_from_faces_on_two_shards_aggregate() {
    let p = Producer::start(Duration::from_millis(400));
    let http = free_port();
    let d = Daemon::start(&config(
        http,
        &format!(
            "[[face]]\nuri = \"{0}\"\n[[route]]\nprefix = \"/agg\"\nface = \"{0}\"\n",
            p.uri()
        ),
    ));
    let mut a = Conn::open(&d);
    let mut b = Conn::open(&d);
    // Both are known (Up handled) before the test goes on.
    std::thread::sleep(Duration::from_millis(200));
    let status = api_status(http);
    let apps: Vec<u64> = status["faces"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["remote"].as_str().unwrap().starts_with("fd://"))
        .map(|f| f["id"].as_u64().unwrap())
        .collect();
    assert_eq!(apps.len(), 2, "{status}");
    assert_ne!(apps[0] % 2, apps[1] % 2, "placed on different shards");
    for round in 0..5u32 {
        let name = format!("/agg/object/{round}");
        // Within the strategy's retransmission suppression interval (10 ms): aggregated.
        a.send(&interest(&name, 10 + round));
        b.send(&interest(&name, 1000 + round));
        let da = a
            .data(Duration::from_secs(5))
            .expect("first consumer answered");
        let db = b
            .data(Duration::from_secs(5))
            .expect("second consumer answered");
        assert_eq!(da.name.to_string(), name);
        assert_eq!(db.name.to_string(), name);
    }
    std::thread::sleep(Duration::from_millis(200));
    let seen = p.seen();
    assert_eq!(seen.len(), 5, "one upstream Interest per name: {seen:?}");
}

/// 6,000 Interests (lifetime 60 s) for names that all dispatch to one shard (`/flood/0/i`:
/// the default K = 2 hashes `/flood/0`) toward a peer that never answers, through a PIT of
/// 2,000 (1,000 per shard): applications on both shards, with names on both shards, are
/// still answered.
#[test]
fn a_flood_pinned_to_one_shard_locks_out_nobody() {
    let p = Producer::start(Duration::ZERO);
    let dead = free_port();
    let http = free_port();
    let d = Daemon::start(&format!(
        "[forwarder]\nthreads = 2\npit_capacity = 2000\n[http]\nlisten = \"127.0.0.1:{http}\"\n\
         [[face]]\nuri = \"udp4://127.0.0.1:{dead}\"\n\
         [[route]]\nprefix = \"/flood\"\nface = \"udp4://127.0.0.1:{dead}\"\n\
         [[face]]\nuri = \"{0}\"\n[[route]]\nprefix = \"/live\"\nface = \"{0}\"\n",
        p.uri()
    ));
    let flooder = UdpSocket::bind("127.0.0.1:0").unwrap();
    for i in 0..6000u32 {
        let mut it = Interest::new(format!("/flood/0/{i}").parse().unwrap());
        it.nonce = Some(i.wrapping_mul(2_654_435_761));
        it.lifetime_ms = Some(60_000);
        flooder.send_to(&it.encode(), ("127.0.0.1", d.udp)).unwrap();
        if i % 100 == 99 {
            std::thread::sleep(Duration::from_micros(500));
        }
    }
    // The flood sits in one shard's PIT.
    let deadline = Instant::now() + Duration::from_secs(20);
    let pits = loop {
        let status = api_status(http);
        let pits: Vec<u64> = status["shards"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["pit_entries"].as_u64().unwrap())
            .collect();
        if pits.iter().max().copied().unwrap_or(0) >= 500 {
            break pits;
        }
        assert!(Instant::now() < deadline, "{status}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(pits.iter().filter(|&&n| n >= 500).count(), 1, "{pits:?}");
    assert!(pits.contains(&0), "pinned to one shard: {pits:?}");
    // Two applications (one per shard), 16 names each with distinct first two components:
    // with overwhelming odds (all on one shard: 2^-15) some live on each shard.
    for k in 0..2u32 {
        let mut app = Conn::open(&d);
        for j in 0..16u32 {
            let name = format!("/live/{k}-{j}/x");
            let got = app.fetch(&name, k * 100 + j);
            assert!(
                got.is_some(),
                "{name} not answered during the flood\n{}",
                d.log()
            );
        }
    }
}

/// Two applications, one on each shard, write 40,000 Interests each at once, all for names of
/// one dispatch key (`/burst/0/i`, toward a peer that never answers, a PIT with room for
/// all): the owning shard forwards its own application's flood and the other's, which the
/// other shard hands it faster than it can take them. That shard stops reading while its ring
/// has no room for a burst, so the rest waits in the socket: every Interest reaches the PIT
/// and none is dropped at a full ring. (Before, the reader went on reading and the ring
/// dropped what did not fit: 11,264 of a python-ndn flood of 30,000 in one run.)
#[test]
fn a_burst_for_another_shard_waits_in_its_socket_instead_of_being_dropped() {
    const N: u32 = 40_000;
    let dead = free_port();
    let http = free_port();
    let d = Daemon::start(&config(
        http,
        &format!(
            "[[face]]\nuri = \"udp4://127.0.0.1:{dead}\"\n\
             [[route]]\nprefix = \"/burst\"\nface = \"udp4://127.0.0.1:{dead}\"\n"
        ),
    ));
    let (on_1, _) = conn_on_shard_1(&d, http);
    let (on_0, _) = conn_on_shard(&d, http, 0);
    let writers: Vec<_> = [on_0, on_1]
        .into_iter()
        .enumerate()
        .map(|(k, mut app)| {
            std::thread::spawn(move || {
                let mut chunk = Vec::new();
                for i in 0..N {
                    let n = k as u32 * N + i;
                    let mut it = Interest::new(format!("/burst/0/{n}").parse().unwrap());
                    it.nonce = Some(n.wrapping_mul(2_654_435_761));
                    it.lifetime_ms = Some(60_000);
                    chunk.extend_from_slice(&it.encode());
                    if i % 1000 == 999 {
                        app.send(&Bytes::from(std::mem::take(&mut chunk)));
                    }
                }
                app
            })
        })
        .collect();
    let _apps: Vec<Conn> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        let status = api_status(http);
        let shards = status["shards"].as_array().unwrap();
        let ring_full: Vec<u64> = shards
            .iter()
            .map(|s| s["ring_full"].as_u64().unwrap())
            .collect();
        assert_eq!(ring_full, [0, 0], "dropped at a full ring\n{status:#}");
        let pit = status["forwarder"]["pit_entries"].as_u64().unwrap();
        if pit >= u64::from(2 * N) {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "{pit} of {} in the PIT\n{status:#}",
            2 * N
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let shards = status["shards"].as_array().unwrap();
    let handed: Vec<u64> = shards
        .iter()
        .map(|s| s["handed_off"].as_u64().unwrap())
        .collect();
    assert!(handed.contains(&u64::from(N)), "{handed:?}");
}

/// `/video/title/seg=i` under the default K = 2 all land on one shard; with
/// `[[forwarder.dispatch]] prefix = "/video", k = 3` they spread over both.
#[test]
fn a_dominating_prefix_spreads_over_both_shards_with_its_own_k() {
    let shares = |dispatch: &str| {
        let p = Producer::start(Duration::ZERO);
        let http = free_port();
        let d = Daemon::start(&format!(
            "[forwarder]\nthreads = 2\n{dispatch}[http]\nlisten = \"127.0.0.1:{http}\"\n\
             [[face]]\nuri = \"{0}\"\n[[route]]\nprefix = \"/video\"\nface = \"{0}\"\n",
            p.uri()
        ));
        let mut app = Conn::open(&d);
        let before = shard_packets(http);
        for i in 0..200u32 {
            let name = format!("/video/title/seg={i}");
            assert!(app.fetch(&name, i).is_some(), "{name}\n{}", d.log());
        }
        let after = shard_packets(http);
        let per: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
        let total: u64 = per.iter().sum();
        assert!(total >= 400, "every Interest and Data counted: {per:?}");
        per.iter()
            .map(|&n| n as f64 / total as f64)
            .collect::<Vec<f64>>()
    };
    let flat = shares("");
    assert!(
        flat.iter().any(|&s| s < 0.05),
        "K = 2 pins the prefix on one shard: {flat:?}"
    );
    let spread = shares("[[forwarder.dispatch]]\nprefix = \"/video\"\nk = 3\n");
    assert!(
        spread.iter().all(|&s| s > 0.25),
        "K = 3 spreads the segments: {spread:?}"
    );
}

/// A management command over `c`; its ControlResponse status code.
fn command(c: &mut Conn, verb: &str, params: &ControlParameters) -> u32 {
    let name: Name = format!("/localhost/nfd/{verb}").parse().unwrap();
    let name = name.append(&Component::generic(params.encode())).unwrap();
    let mut i = Interest::new(name);
    i.nonce = Some(nameway_wire::random::u64() as u32);
    c.send(&i.encode());
    let data = c.data(Duration::from_secs(5)).expect("command answered");
    ControlResponse::decode(&data.content.unwrap())
        .unwrap()
        .status_code
}

/// Traffic flows toward `/m` over two next hops (P1 cost 0, P2 cost 10); the test removes P1
/// while it flows. Every Interest sent after the command's reply goes to P2: no shard routes by
/// the old FIB. Then P1 comes back and takes the traffic again.
#[test]
fn a_route_removed_under_load_is_not_used_after_the_reply() {
    let p1 = Producer::start(Duration::ZERO);
    let p2 = Producer::start(Duration::ZERO);
    let http = free_port();
    let d = Daemon::start(&config(
        http,
        &format!(
            "[[face]]\nuri = \"{0}\"\n[[route]]\nprefix = \"/m\"\nface = \"{0}\"\n\
             [[face]]\nuri = \"{1}\"\n[[route]]\nprefix = \"/m\"\nface = \"{1}\"\ncost = 10\n",
            p1.uri(),
            p2.uri()
        ),
    ));
    let p1_face = face_id(http, &p1.uri());
    // One management connection for the whole test: a face going down makes the RIB
    // recompute the FIB, which would bring back a next hop removed with fib/remove-nexthop.
    let mut mgmt = Conn::open(&d);
    let phase = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicUsize::new(0));
    // The phase of the fetch each consumer has under way.
    let started: Arc<Vec<AtomicUsize>> = Arc::new((0..4).map(|_| AtomicUsize::new(0)).collect());
    // Several consumers, each with a window of one: names /m/<consumer>-<i>/<phase>, spread
    // over both shards by their second component.
    let consumers: Vec<_> = (0..4u32)
        .map(|k| {
            let (phase, stop, answered) = (phase.clone(), stop.clone(), answered.clone());
            let started = started.clone();
            let mut app = Conn::open(&d);
            std::thread::spawn(move || {
                let mut i = 0u32;
                while !stop.load(Ordering::Acquire) {
                    let ph = phase.load(Ordering::Acquire);
                    started[k as usize].store(ph, Ordering::Release);
                    let name = format!("/m/{k}-{i}/phase{ph}");
                    if app.fetch(&name, k * 1_000_000 + i).is_some() {
                        answered.fetch_add(1, Ordering::Relaxed);
                    }
                    i += 1;
                }
            })
        })
        .collect();
    let wait_for = |n: usize| {
        let deadline = Instant::now() + Duration::from_secs(20);
        let start = answered.load(Ordering::Relaxed);
        while answered.load(Ordering::Relaxed) < start + n {
            assert!(Instant::now() < deadline, "traffic stalled\n{}", d.log());
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    wait_for(200);
    let remove = ControlParameters {
        name: Some("/m".parse().unwrap()),
        face_id: Some(p1_face),
        ..ControlParameters::default()
    };
    assert_eq!(command(&mut mgmt, "fib/remove-nexthop", &remove), 200);
    phase.store(1, Ordering::Release);
    wait_for(200);
    // Interests sent while the next command is under way may meet either FIB: phase 2. A
    // consumer may have read phase 1 just before this and send its Interest later: the command
    // waits until each has started a phase-2 fetch (a window of one: its last phase-1 fetch is
    // over).
    phase.store(2, Ordering::Release);
    let deadline = Instant::now() + Duration::from_secs(20);
    while started.iter().any(|s| s.load(Ordering::Acquire) < 2) {
        assert!(Instant::now() < deadline, "consumers stalled\n{}", d.log());
        std::thread::sleep(Duration::from_millis(1));
    }
    let add = ControlParameters {
        cost: Some(0),
        ..remove.clone()
    };
    assert_eq!(command(&mut mgmt, "fib/add-nexthop", &add), 200);
    phase.store(3, Ordering::Release);
    wait_for(200);
    stop.store(true, Ordering::Release);
    for c in consumers {
        c.join().unwrap();
    }
    let (s1, s2) = (p1.seen(), p2.seen());
    let count = |v: &[String], ph: &str| v.iter().filter(|n| n.ends_with(ph)).count();
    assert!(
        count(&s1, "phase0") >= 100,
        "P1 served before: {}",
        s1.len()
    );
    assert_eq!(
        count(&s1, "phase1"),
        0,
        "an Interest sent after the reply used the removed route: {:?}",
        s1.iter()
            .filter(|n| n.ends_with("phase1"))
            .collect::<Vec<_>>()
    );
    assert!(count(&s2, "phase1") >= 150, "P2 took over: {}", s2.len());
    assert!(count(&s1, "phase3") >= 150, "P1 back: {}", s1.len());
    assert_eq!(count(&s2, "phase3"), 0, "P1 is the cheaper next hop again");
}

/// `threads = 2` with a feature that needs one thread is refused with one message naming it.
#[test]
fn a_feature_that_needs_one_thread_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("namewayd.toml");
    std::fs::write(&path, "[forwarder]\nthreads = 2\n[cs]\ndecoupled = true\n").unwrap();
    let err = common::refused_start(&path);
    assert!(
        err.contains("forwarder.threads = 2 cannot be used with the decoupled content store"),
        "{err}"
    );
}

/// CPU time (utime + stime, in clock ticks) of each of `pid`'s threads, by thread name.
fn thread_ticks(pid: u32) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let dir = task.unwrap().path();
        let (Ok(comm), Ok(stat)) = (
            std::fs::read_to_string(dir.join("comm")),
            std::fs::read_to_string(dir.join("stat")),
        ) else {
            continue;
        };
        // Fields after the parenthesised name: state is field 3, utime 14, stime 15.
        let rest: Vec<&str> = stat
            .rsplit_once(')')
            .unwrap()
            .1
            .split_whitespace()
            .collect();
        let ticks = rest[11].parse::<u64>().unwrap() + rest[12].parse::<u64>().unwrap();
        out.push((comm.trim().to_owned(), ticks));
    }
    out
}

/// The ticks of the thread named `name` (summed if several).
fn ticks_of(all: &[(String, u64)], name: &str) -> u64 {
    all.iter().filter(|(n, _)| n == name).map(|(_, t)| t).sum()
}

/// An application producer on the Unix socket (face `face`): routes `prefix` to itself, then
/// answers every Interest with a Data of 100 bytes until the daemon closes the connection.
fn unix_producer(mut c: Conn, face: u64, prefix: &str) -> std::thread::JoinHandle<()> {
    let params = ControlParameters {
        name: Some(prefix.parse().unwrap()),
        face_id: Some(face),
        ..ControlParameters::default()
    };
    assert_eq!(command(&mut c, "fib/add-nexthop", &params), 200);
    serve(c)
}

/// Answers every Interest on `c` with a Data of 100 bytes until the daemon closes it.
fn serve(mut c: Conn) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 65536];
        c.s.set_read_timeout(None).unwrap();
        loop {
            let mut out = Vec::new();
            while let Ok(Some(p)) = c.f.next_packet() {
                if let Ok(i) = Interest::decode(&p) {
                    let d = Data::new(i.name.clone(), Bytes::from(vec![7u8; 100]));
                    out.extend_from_slice(&d.encode());
                }
            }
            if !out.is_empty() && c.s.write_all(&out).is_err() {
                return;
            }
            match c.s.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => c.f.extend(&buf[..n]),
            }
        }
    })
}

/// Opens Unix connections until one gets a face id with home shard 1 (odd); returns it and
/// its id. The others are dropped.
fn conn_on_shard_1(d: &Daemon, http: u16) -> (Conn, u64) {
    conn_on_shard(d, http, 1)
}

/// Opens Unix connections until one gets a face id with home shard `shard` (of two: the id's
/// parity); returns it and its id. The others are dropped.
fn conn_on_shard(d: &Daemon, http: u16, shard: u64) -> (Conn, u64) {
    let apps = |http| -> Vec<u64> {
        api_status(http)["faces"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["remote"].as_str().unwrap().starts_with("fd://"))
            .map(|f| f["id"].as_u64().unwrap())
            .collect()
    };
    for _ in 0..4 {
        let before = apps(http);
        let c = Conn::open(d);
        let deadline = Instant::now() + Duration::from_secs(5);
        let id = loop {
            if let Some(&id) = apps(http).iter().find(|id| !before.contains(id)) {
                break id;
            }
            assert!(
                Instant::now() < deadline,
                "the connection's face never came up"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        if id % 2 == shard {
            return (c, id);
        }
    }
    panic!("four connections in a row missed shard {shard}");
}

/// With `threads = 2`, a consumer and a producer whose faces live on shard 1, exchanging
/// names that shard 1 owns, are served by shard 1's thread alone: their sockets are read and
/// written there, so the main thread (shard 0, which accepted them) does almost no work during
/// 30,000 exchanges. Before the faces' I/O ran on their home shard, every read and write of
/// every socket was the main thread's, about as much CPU as the shard's own.
#[test]
fn faces_on_shard_1_are_read_and_written_by_its_thread() {
    let http = free_port();
    let d = Daemon::start(&config(http, ""));
    let (producer, producer_face) = conn_on_shard_1(&d, http);
    let (consumer, _) = conn_on_shard_1(&d, http);
    let _serve = unix_producer(producer, producer_face, "/own");
    let (main, shard) = exchanges_on_shard_1(&d, http, consumer, 30_000);
    assert!(
        main * 10 <= shard,
        "the main thread did the faces' I/O: {main} ticks against shard 1's {shard}"
    );
}

/// Runs `total` exchanges (window 16) from `consumer` (a face on shard 1) under a prefix
/// `/own/<k>` that shard 1 owns, answered by a producer of `/own` on shard 1; asserts they
/// stayed on shard 1 (no hand-off) and that shard 1's thread forwarded them; returns the CPU
/// ticks of the main thread and of shard 1's during the exchanges.
fn exchanges_on_shard_1(d: &Daemon, http: u16, mut consumer: Conn, total: u32) -> (u64, u64) {
    // K = 2 hashes `/own/<k>`: one exchange, then the counters say whether it stayed on
    // shard 1 (no packet handed to or received by shard 0).
    let prefix = (0..64u32)
        .map(|k| format!("/own/{k}"))
        .find(|p| {
            let before = handed_total(http);
            assert!(consumer.fetch(&format!("{p}/probe"), 1).is_some());
            handed_total(http) == before
        })
        .expect("a prefix owned by shard 1 among 64");
    let pid = d.child.id();
    let handed_before = handed_total(http);
    let before = thread_ticks(pid);
    let window = 16u32;
    let mut sent = 0u32;
    let mut wire = Vec::new();
    while sent < window {
        wire.extend_from_slice(&interest(&format!("{prefix}/{sent}"), sent));
        sent += 1;
    }
    consumer.s.write_all(&wire).unwrap();
    for got in 0..total {
        assert!(
            consumer.data(Duration::from_secs(5)).is_some(),
            "exchange {got} not answered\n{}",
            d.log()
        );
        if sent < total {
            consumer.send(&interest(&format!("{prefix}/{sent}"), sent));
            sent += 1;
        }
    }
    let after = thread_ticks(pid);
    let main = ticks_of(&after, "namewayd") - ticks_of(&before, "namewayd");
    let shard = ticks_of(&after, "nameway-shard-1") - ticks_of(&before, "nameway-shard-1");
    println!("CPU ticks during the exchanges: main thread {main}, shard 1 {shard}\n{after:?}");
    assert_eq!(
        handed_total(http),
        handed_before,
        "the exchanges stayed on shard 1"
    );
    assert!(
        shard >= 20,
        "shard 1's thread forwarded the exchanges: {shard} ticks, main {main}\n{after:?}"
    );
    (main, shard)
}

/// A producer on a TCP connection that namewayd made (`faces/create`): answers every Interest
/// with a Data of 100 bytes until the connection ends.
fn tcp_producer(mut s: std::net::TcpStream) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut f = StreamFramer::new(8800);
        let mut buf = vec![0u8; 65536];
        loop {
            let mut out = Vec::new();
            while let Ok(Some(p)) = f.next_packet() {
                if let Ok(i) = Interest::decode(&p) {
                    let d = Data::new(i.name.clone(), Bytes::from(vec![7u8; 100]));
                    out.extend_from_slice(&d.encode());
                }
            }
            if !out.is_empty() && s.write_all(&out).is_err() {
                return;
            }
            match s.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => f.extend(&buf[..n]),
            }
        }
    })
}

/// With `threads = 2`, a TCP face made by `faces/create` whose home is shard 1 (a producer
/// here) runs its connection on shard 1's runtime: exchanges between it and a consumer on
/// shard 1 cost the main thread almost nothing. Before, such a face's I/O stayed on the main
/// thread's runtime, where the command ran.
#[test]
fn a_created_tcp_face_on_shard_1_is_served_by_its_thread() {
    let http = free_port();
    let d = Daemon::start(&config(http, ""));
    let (mut consumer, _) = conn_on_shard_1(&d, http);
    let mut producer = None;
    for _ in 0..6 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let remote = format!("tcp4://{}", listener.local_addr().unwrap());
        let params = ControlParameters {
            uri: Some(remote.clone()),
            ..ControlParameters::default()
        };
        assert_eq!(command(&mut consumer, "faces/create", &params), 200);
        let (s, _) = listener.accept().unwrap();
        let id = face_id(http, &remote);
        if id % 2 == 1 {
            producer = Some((s, id));
            break;
        }
    }
    let (s, id) = producer.expect("a created face with an odd id in six");
    let params = ControlParameters {
        name: Some("/own".parse().unwrap()),
        face_id: Some(id),
        ..ControlParameters::default()
    };
    assert_eq!(command(&mut consumer, "fib/add-nexthop", &params), 200);
    let _serve = tcp_producer(s);
    let (main, shard) = exchanges_on_shard_1(&d, http, consumer, 30_000);
    assert!(
        main * 10 <= shard,
        "the main thread did the created face's I/O: {main} ticks against shard 1's {shard}"
    );
}

/// Packets handed between shards so far (both directions, every shard), from `/metrics`.
fn handed_total(http: u16) -> u64 {
    let (_, _, body) = common::http_get(&format!("http://127.0.0.1:{http}"), "/metrics");
    String::from_utf8(body)
        .unwrap()
        .lines()
        .filter(|l| {
            l.starts_with("nameway_shard_packets_total{")
                && (l.contains("handed_off") || l.contains("received"))
        })
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum()
}

/// The ids of the faces whose remote URI starts with `scheme`.
fn faces_of(http: u16, scheme: &str) -> Vec<u64> {
    api_status(http)["faces"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["remote"].as_str().unwrap().starts_with(scheme))
        .map(|f| f["id"].as_u64().unwrap())
        .collect()
}

/// As `faces_on_shard_1_are_read_and_written_by_its_thread`, with the consumer on a WebSocket
/// connection: accepted WebSocket faces (handshake, reads and writes) run on their home
/// shard's runtime like the Unix and TCP ones. Before, their I/O stayed on the main thread,
/// which then spent about as much CPU as shard 1 on these exchanges.
#[test]
fn a_websocket_face_on_shard_1_is_served_by_its_thread() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let (http, ws_port) = (free_port(), free_port());
    let d = Daemon::start(&format!(
        "websocket = [\"127.0.0.1:{ws_port}\"]\n{}",
        config(http, "")
    ));
    let (producer, producer_face) = conn_on_shard_1(&d, http);
    let _serve = unix_producer(producer, producer_face, "/own");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let connect = || {
        rt.block_on(async {
            let tcp = tokio::net::TcpStream::connect(("127.0.0.1", ws_port))
                .await
                .unwrap();
            let url = format!("ws://127.0.0.1:{ws_port}/");
            tokio_tungstenite::client_async(url, tcp).await.unwrap().0
        })
    };
    // Connections until one's face has home shard 1 (odd id); the others are dropped.
    let mut ws = None;
    for _ in 0..6 {
        let before = faces_of(http, "ws://");
        let c = connect();
        let deadline = Instant::now() + Duration::from_secs(5);
        let id = loop {
            if let Some(&id) = faces_of(http, "ws://").iter().find(|i| !before.contains(i)) {
                break id;
            }
            assert!(
                Instant::now() < deadline,
                "the WebSocket face never came up"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        if id % 2 == 1 {
            ws = Some(c);
            break;
        }
    }
    let mut ws = ws.expect("a WebSocket face with an odd id in six connections");
    let mut exchange = |names: &[String]| {
        rt.block_on(async {
            for (n, name) in names.iter().enumerate() {
                let wire = interest(name, n as u32);
                ws.feed(Message::Binary(wire.to_vec().into()))
                    .await
                    .unwrap();
            }
            ws.flush().await.unwrap();
            for _ in names {
                loop {
                    let msg = tokio::time::timeout(Duration::from_secs(5), ws.next())
                        .await
                        .expect("a Data within 5 s")
                        .unwrap()
                        .unwrap();
                    if let Message::Binary(b) = msg {
                        Data::decode(&Bytes::from(b.to_vec())).unwrap();
                        break;
                    }
                }
            }
        })
    };
    let prefix = (0..64u32)
        .map(|k| format!("/own/{k}"))
        .find(|p| {
            let before = handed_total(http);
            exchange(&[format!("{p}/probe")]);
            handed_total(http) == before
        })
        .expect("a prefix owned by shard 1 among 64");
    let pid = d.child.id();
    let handed_before = handed_total(http);
    let before = thread_ticks(pid);
    for round in 0..1250u32 {
        let names: Vec<String> = (0..16)
            .map(|i| format!("{prefix}/{}", round * 16 + i))
            .collect();
        exchange(&names);
    }
    let after = thread_ticks(pid);
    let main = ticks_of(&after, "namewayd") - ticks_of(&before, "namewayd");
    let shard = ticks_of(&after, "nameway-shard-1") - ticks_of(&before, "nameway-shard-1");
    println!("CPU ticks during 20,000 WebSocket exchanges: main thread {main}, shard 1 {shard}");
    assert_eq!(
        handed_total(http),
        handed_before,
        "the exchanges stayed on shard 1"
    );
    assert!(
        shard >= 20,
        "shard 1's thread forwarded the exchanges: {shard} ticks, main {main}\n{after:?}"
    );
    assert!(
        main * 10 <= shard,
        "the main thread did the WebSocket face's I/O: {main} ticks against shard 1's {shard}\n{after:?}"
    );
}

/// `[forwarder] placement = "traffic"`: a consumer's face lives on the shard its names belong
/// to. Six consumers, each under its own prefix `/own/<k>` (K = 2: each prefix is one
/// shard's), send their first Interest at once; every one of their exchanges is answered (none
/// lost while the face was being placed), the shard that forwards their names is found from the
/// per-shard counters, and each consumer's face id has that shard as its home. With round robin
/// the six would match by chance once in 64 runs.
#[test]
fn a_consumer_is_placed_on_the_shard_of_its_first_interest() {
    let http = free_port();
    let d = Daemon::start(
        &config(http, "").replace("threads = 2\n", "threads = 2\nplacement = \"traffic\"\n"),
    );
    let (producer, producer_face) = conn_on_shard_1(&d, http);
    let _serve = unix_producer(producer, producer_face, "/own");
    let mut homes = Vec::new();
    for k in 0..6u32 {
        let before_faces = faces_of(http, "fd://");
        let before = shard_packets(http);
        let mut c = Conn::open(&d);
        for i in 0..20u32 {
            assert!(
                c.fetch(&format!("/own/{k}/{i}"), i).is_some(),
                "consumer {k}: exchange {i} not answered\n{}",
                d.log()
            );
        }
        let after = shard_packets(http);
        let grew: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
        // Interest and Data of each exchange are forwarded by the shard of their name.
        let shard = grew
            .iter()
            .position(|&g| g >= 40)
            .expect("one shard forwarded them");
        assert_eq!(grew[1 - shard], 0, "consumer {k}: {grew:?}");
        let id = *faces_of(http, "fd://")
            .iter()
            .find(|i| !before_faces.contains(i))
            .expect("the consumer's face");
        homes.push((k, id, shard));
        drop(c);
    }
    for &(k, id, shard) in &homes {
        assert_eq!(
            (id % 2) as usize,
            shard,
            "consumer {k}: face {id} is not on shard {shard}, which owns its names: {homes:?}"
        );
    }
}

/// A producer that opens one connection per forwarding thread and registers the same prefix
/// on each (`rib/register`, its first packet): with `placement = "traffic"` the two
/// connections land one per shard (a one-component prefix names no shard: round robin), and
/// each shard forwards the Interests it owns to the connection homed on it, so consumers
/// placed on the shard of their names exchange without a packet crossing threads.
#[test]
fn a_producer_with_a_connection_per_shard_is_served_shard_locally() {
    let http = free_port();
    let d = Daemon::start(
        &config(http, "[mgmt]\nrequire_signed_rib_commands = false\n")
            .replace("threads = 2\n", "threads = 2\nplacement = \"traffic\"\n"),
    );
    let mut producers = Vec::new();
    let mut ids = Vec::new();
    for n in 0..2u64 {
        let before = faces_of(http, "fd://");
        let mut c = Conn::open(&d);
        // Unsigned commands of equal parameters have equal names, and the second would be
        // answered from the content store: an hour's expiry, a millisecond apart.
        let params = ControlParameters {
            name: Some("/own".parse().unwrap()),
            expiration_period: Some(3_600_000 + n),
            ..ControlParameters::default()
        };
        assert_eq!(command(&mut c, "rib/register", &params), 200);
        ids.extend(
            faces_of(http, "fd://")
                .into_iter()
                .filter(|i| !before.contains(i)),
        );
        producers.push(serve(c));
    }
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert_ne!(
        ids[0] % 2,
        ids[1] % 2,
        "one producer connection per shard: {ids:?}"
    );
    // Each consumer, placed by its first Interest, fetches 50 names of its own prefix; at
    // least 6 of them, until both shards own some (the hash key is drawn per process).
    let mut seen: Vec<(u32, u64, Vec<u64>, u64)> = Vec::new();
    for k in 0..24u32 {
        let owners = |s: &[(u32, u64, Vec<u64>, u64)]| -> Vec<bool> {
            s.iter().map(|(_, _, g, _)| g[1] > g[0]).collect()
        };
        let o = owners(&seen);
        if k >= 6 && o.contains(&true) && o.contains(&false) {
            break;
        }
        let before_faces = faces_of(http, "fd://");
        let (before, shards_before) = (handed_total(http), shard_packets(http));
        let mut c = Conn::open(&d);
        for i in 0..50u32 {
            let name = format!("/own/{k}/{i}");
            assert!(c.fetch(&name, 10 + i).is_some(), "{name}\n{}", d.log());
        }
        let grew: Vec<u64> = shard_packets(http)
            .iter()
            .zip(&shards_before)
            .map(|(a, b)| a - b)
            .collect();
        let id = faces_of(http, "fd://")
            .into_iter()
            .find(|i| !before_faces.contains(i))
            .expect("the consumer's face");
        seen.push((k, id, grew, handed_total(http) - before));
    }
    let owners: Vec<usize> = seen
        .iter()
        .map(|(_, _, g, _)| usize::from(g[1] > g[0]))
        .collect();
    assert!(
        owners.contains(&0) && owners.contains(&1),
        "both shards own names: {seen:?}"
    );
    let routes = api_status(http)["routes"].to_string();
    assert!(
        routes.contains(&format!("\"face\":{}", ids[0]))
            && routes.contains(&format!("\"face\":{}", ids[1])),
        "both connections registered /own: {routes}"
    );
    for (k, id, grew, handed) in &seen {
        assert_eq!(
            *handed, 0,
            "consumer {k} (face {id}, per-shard packets {grew:?}): nothing crosses shards \
             (producers {ids:?}; all: {seen:?})"
        );
    }
}
