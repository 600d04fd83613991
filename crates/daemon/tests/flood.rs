//! One application's Interest flood must not lock out management or the other applications: a
//! real namewayd with a small PIT, python-ndn processes writing tens of thousands of distinct
//! Interests toward a peer that never answers, and meanwhile management answers and a
//! python-ndn consumer gets every segment of an object from a live producer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use common::{free_port, App, Daemon};
use nameway_wire::{Data, Interest};
use serde_json::Value;

/// `status/general` over a raw Unix connection, within `secs`: whether management answered.
fn management_answers(d: &Daemon, secs: u64) -> bool {
    let Ok(mut s) = UnixStream::connect(&d.unix) else {
        return false;
    };
    s.set_read_timeout(Some(Duration::from_secs(secs))).unwrap();
    let mut i = Interest::new("/localhost/nfd/status/general".parse().unwrap());
    i.can_be_prefix = true;
    i.must_be_fresh = true;
    i.nonce = Some(4242);
    s.write_all(&i.encode()).unwrap();
    let mut buf = vec![0u8; 65536];
    let mut have = 0;
    loop {
        match s.read(&mut buf[have..]) {
            Ok(0) | Err(_) => return false,
            Ok(n) => have += n,
        }
        if Data::decode(&bytes::Bytes::copy_from_slice(&buf[..have])).is_ok() {
            return true;
        }
    }
}

/// `/api/status` of the daemon's HTTP listener.
fn api_status(port: u16) -> Value {
    let (_, _, body) = common::http_get(&format!("http://127.0.0.1:{port}"), "/api/status");
    serde_json::from_slice(&body).unwrap()
}

fn flood_daemon(pit_capacity: usize) -> (Daemon, u16) {
    let http = free_port();
    let dead = free_port();
    let d = Daemon::start(&format!(
        "[forwarder]\npit_capacity = {pit_capacity}\n[http]\nlisten = \"127.0.0.1:{http}\"\n\
         [[face]]\nuri = \"udp4://127.0.0.1:{dead}\"\n\
         [[route]]\nprefix = \"/flood\"\nface = \"udp4://127.0.0.1:{dead}\"\n"
    ));
    (d, http)
}

/// Drops for `reason` on each application face: Unix (`fd://`) and UDP peers, the silent
/// upstream aside.
fn drops(status: &Value, reason: &str) -> Vec<u64> {
    status["faces"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            let remote = f["remote"].as_str().unwrap_or("");
            remote.starts_with("fd://")
                || (remote.starts_with("udp4://") && f["scope"] == "non-local" && {
                    f["n_in_interests"].as_u64().unwrap_or(0) > 0
                })
        })
        .map(|f| f["drops"][reason].as_u64().unwrap_or(0))
        .collect()
}

/// Interests each flooder sends.
const FLOOD: u32 = 30_000;

/// 30,000 distinct Interests (lifetime 60 s) from one UDP socket, paced so the kernel's
/// socket buffer does not drop them; the socket is kept open so its face stays up.
fn udp_flood(port: u16, prefix: &str) -> std::net::UdpSocket {
    let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    for i in 0..FLOOD {
        let mut interest = Interest::new(format!("{prefix}/{i}").parse().unwrap());
        interest.nonce = Some(i.wrapping_mul(2_654_435_761));
        interest.lifetime_ms = Some(60_000);
        s.send_to(&interest.encode(), ("127.0.0.1", port)).unwrap();
        if i % 100 == 99 {
            std::thread::sleep(Duration::from_micros(500));
        }
    }
    s
}

/// `/api/status` once `floods` faces have each taken all 30,000 Interests of a flood (within
/// 60 s).
fn flood_taken(port: u16, floods: usize) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let status = api_status(port);
        let done = status["faces"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["n_in_interests"].as_u64().unwrap_or(0) >= u64::from(FLOOD))
            .count();
        if done == floods {
            return status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{done} of {floods} flooders' Interests all taken\n{status:#}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn run_flood(floods: usize, over_udp: bool) {
    let Some(py) = common::python() else { return };
    let (d, http) = flood_daemon(20_000);
    let t = d.transport();
    let producer = App::spawn(
        &py,
        &t,
        &[
            "serve-object",
            "--prefix",
            "/live",
            "--size",
            "100000",
            "--segment",
            "1000",
        ],
    );
    let ready = producer.next(20);
    assert_eq!(ready["ready"], true, "{ready}");
    // The flood: 30,000 distinct Interests per flooding app (lifetime 60 s) toward a peer that
    // never answers, through a PIT of 20,000.
    let mut udp_flooders = Vec::new();
    let mut app_flooders = Vec::new();
    for k in 0..floods {
        let prefix = format!("/flood/{k}");
        if over_udp {
            udp_flooders.push(udp_flood(d.udp, &prefix));
        } else {
            app_flooders.push(App::spawn(
                &py,
                &t,
                &[
                    "flood",
                    "--prefix",
                    &prefix,
                    "--count",
                    &FLOOD.to_string(),
                    "--hold",
                    "60",
                ],
            ));
        }
    }
    for f in &app_flooders {
        assert_eq!(f.next(60)["sent"], FLOOD);
    }
    // During the flood: management answers, and another app gets all 100 segments.
    assert!(
        management_answers(&d, 10),
        "management did not answer during the flood\n{}",
        d.log()
    );
    let r = App::run(&py, &t, &["fetch-object", "--name", "/live"]);
    assert_eq!(r["segments"], 100, "{r}\n{}", d.log());
    assert_eq!(r["sha256"], ready["sha256"], "{r}");
    // Every flooder's 30,000 Interests taken by the forwarder (under load some may still be
    // in the socket or on their way to a shard when the fetch is done).
    let status = flood_taken(http, floods);
    let quota = drops(&status, "face-quota");
    let flooded: Vec<u64> = quota.iter().copied().filter(|&n| n > 0).collect();
    assert_eq!(
        flooded.len(),
        floods,
        "every flooder pays, nobody else: {quota:?}\n{status:#}\n{}",
        d.log()
    );
    assert!(
        flooded.iter().all(|&n| n >= 10_000),
        "{quota:?}\n{status:#}\n{}",
        d.log()
    );
    assert!(
        drops(&status, "pit-full").iter().all(|&n| n == 0),
        "{status}"
    );
    // With threads = 2, nothing was dropped between the shards (the reading shard waits).
    for shard in status["shards"].as_array().into_iter().flatten() {
        assert_eq!(shard["ring_full"], 0, "{status:#}");
    }
    // The table is bounded and not full: a share was left for the others.
    let pit = status["forwarder"]["pit_entries"].as_u64().unwrap();
    assert!(pit < 20_000, "{pit}");
    // Each entry is charged to the face that created it; no face holds more than half.
    let held: Vec<u64> = status["faces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["pit_entries"].as_u64().unwrap())
        .collect();
    assert_eq!(held.iter().sum::<u64>(), pit, "{held:?}");
    assert!(held.iter().all(|&n| n <= 10_000), "{held:?}");
}

#[test]
fn a_flood_from_one_application_locks_out_nobody() {
    run_flood(1, false);
}

#[test]
fn two_flooding_applications_lock_out_nobody() {
    run_flood(2, false);
}

/// A face limited to 1,000 Interests/s (burst 1,000) that sends 10,000 at once gets about
/// 1,000 forwarded; the rest are counted as `rate-limit` on that face, and management from a
/// limited face still answers.
#[test]
fn a_rate_limited_face_gets_its_rate_and_the_rest_is_counted() {
    let Some(py) = common::python() else { return };
    let http = free_port();
    // (The lines before the first table header belong to `[faces]`.)
    let d = Daemon::start(&format!(
        "interest_rate_limit = 1000\n[http]\nlisten = \"127.0.0.1:{http}\"\n\
         [[route]]\nprefix = \"/flood\"\nface = \"null://\"\n"
    ));
    let t = d.transport();
    let flooder = App::spawn(
        &py,
        &t,
        &[
            "flood", "--prefix", "/flood/r", "--count", "10000", "--hold", "60",
        ],
    );
    let sent = flooder.next(60);
    assert_eq!(sent["sent"], 10000, "{sent}");
    // Wait until the forwarder has taken all 10,000.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let face = loop {
        let status = api_status(http);
        let face = status["faces"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["n_in_interests"].as_u64() == Some(10_000))
            .cloned();
        if let Some(face) = face {
            break face;
        }
        assert!(std::time::Instant::now() < deadline, "{status}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let limited = face["drops"]["rate-limit"].as_u64().unwrap_or(0);
    let forwarded = 10_000 - limited;
    // The burst, plus what the rate refilled while the 10,000 arrived (well under a second).
    assert!(
        (1000..=2000).contains(&forwarded),
        "forwarded {forwarded}, sent in {} s: {face}",
        sent["seconds"]
    );
    assert_eq!(face["pit_entries"].as_u64(), Some(forwarded), "{face}");
    assert!(
        management_answers(&d, 10),
        "management from a rate-limited face did not answer\n{}",
        d.log()
    );
}

/// An Interest of `params` bytes of parameters.
fn big_interest(name: &str, nonce: u32, params: usize) -> bytes::Bytes {
    let mut i = Interest::new(name.parse().unwrap());
    i.nonce = Some(nonce);
    i.app_parameters = Some(bytes::Bytes::from(vec![0x42; params]));
    i.encode()
}

/// A UDP peer that sends only first fragments (never completing a packet) fills its own
/// reassembly buffers only (256 partial packets per face): another UDP peer whose fragmented
/// Interests are each split by 300 of those first fragments gets all of them reassembled and
/// forwarded. (With one buffer shared by all faces, each would have been evicted.)
#[test]
fn fragments_that_never_complete_hurt_only_their_sender() {
    let http = free_port();
    let d = Daemon::start(&format!(
        "[http]\nlisten = \"127.0.0.1:{http}\"\n\
         [[route]]\nprefix = \"/x\"\nface = \"null://\"\n"
    ));
    let to = ("127.0.0.1", d.udp);
    let attacker = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let legit = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut seq = 0;
    for n in 0..100u32 {
        let wire = big_interest(&format!("/x/legit/{n}"), 7_000_000 + n, 3000);
        let frags = nameway_wire::lp::fragment(&wire, 1200, seq);
        seq += frags.len() as u64;
        legit.send_to(&frags[0], to).unwrap();
        // 300 first fragments of packets that never complete...
        for k in 0..300u32 {
            let id = n * 1000 + k;
            let wire = big_interest(&format!("/x/attack/{n}/{k}"), id, 600);
            let first = nameway_wire::lp::fragment(&wire, 400, u64::from(id) * 8);
            assert!(first.len() > 1);
            attacker.send_to(&first[0], to).unwrap();
            if k % 50 == 49 {
                // Paced, so the kernel's socket buffer does not drop (that is not the test).
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        // ...then the rest of the other peer's Interest.
        for f in &frags[1..] {
            legit.send_to(f, to).unwrap();
        }
    }
    let port = |s: &std::net::UdpSocket| s.local_addr().unwrap().port();
    let (attacker_port, legit_port) = (port(&attacker), port(&legit));
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let status = api_status(http);
        let faces = status["faces"].as_array().unwrap();
        let by_port = |p: u16| {
            faces
                .iter()
                .find(|f| f["remote"].as_str().unwrap().ends_with(&format!(":{p}")))
                .cloned()
        };
        if let (Some(a), Some(l)) = (by_port(attacker_port), by_port(legit_port)) {
            if l["n_in_interests"].as_u64() == Some(100) {
                assert_eq!(a["n_in_interests"], 0, "{a}");
                assert!(a["in_packets"].as_u64().unwrap() > 25_000, "{a}");
                assert!(
                    a["link_drops"]["reassembly"].as_u64().unwrap_or(0) > 0,
                    "the attacker's partial packets are dropped and counted: {a}"
                );
                assert!(l["link_drops"].as_object().unwrap().is_empty(), "{l}");
                return;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{status}\n{}",
            d.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_flood_over_udp_locks_out_nobody() {
    run_flood(1, true);
}
