//! Hop-by-hop encryption between two real `namewayd` processes joined by a UDP face, with a
//! relay of the test's own between them that records every datagram and can flip bits, drop,
//! reorder and replay (crates/daemon/tests/common/relay.rs):
//!
//! ```text
//!   consumer ── A ══ secure UDP face ══▶ relay ══▶ B ── producer
//! ```
//!
//! Applications see plaintext, the wire shows ciphertext for protected names; tampered and
//! replayed packets are dropped and counted; untrusted peers and peers without the feature get
//! nothing; a rekey every 100 packets loses nothing. The last test runs the same link over TCP,
//! through a recording TCP proxy.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "../../daemon/tests/common/relay.rs"]
#[allow(dead_code, unreachable_pub)]
mod relay;

use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::*;
use relay::{Direction, Fault, Matcher, Relay};
use serde_json::Value;

const MIB: usize = 1 << 20;

/// How a pair is set up.
#[derive(Clone)]
struct Setup {
    level: &'static str,
    link_wide: bool,
    /// B runs with `[security]` (an identity).
    b_secure: bool,
    a_trusts_b: bool,
    b_trusts_a: bool,
    /// Extra `[security]` keys for B (e.g. `rekey_packets = 100`).
    b_extra: &'static str,
}

impl Setup {
    fn level(level: &'static str) -> Self {
        Self {
            level,
            link_wide: false,
            b_secure: true,
            a_trusts_b: true,
            b_trusts_a: true,
            b_extra: "",
        }
    }
}

/// consumer side A, producer side B, the relay between, A's secure face toward B.
struct Pair {
    a: Daemon,
    b: Daemon,
    relay: Relay,
    face: u64,
    _keys: tempfile::TempDir,
}

fn security_section(keys: &Path, who: &str, extra: &str) -> String {
    format!(
        "[security]\nidentity = {:?}\n{extra}\n",
        keys.join(format!("{who}.key"))
    )
}

fn ok(d: &Daemon, args: &[&str]) -> String {
    let out = d.nameway(args);
    assert!(
        out.status.success(),
        "nameway {args:?} failed: {}\ndaemon log:\n{}",
        String::from_utf8_lossy(&out.stderr),
        d.log()
    );
    String::from_utf8(out.stdout).unwrap()
}

fn pair(s: &Setup) -> Pair {
    let keys = tempfile::tempdir().unwrap();
    let a = Daemon::start(&security_section(keys.path(), "a", ""));
    let b = Daemon::start(&if s.b_secure {
        security_section(keys.path(), "b", s.b_extra)
    } else {
        String::new()
    });
    let ka = ok(&a, &["identity", "show"]).trim().to_owned();
    assert_eq!(ka.len(), 64, "{ka}");
    if s.b_secure {
        let kb = ok(&b, &["identity", "show"]).trim().to_owned();
        if s.a_trusts_b {
            ok(&a, &["neighbour", "trust", &kb]);
        }
        if s.b_trusts_a {
            ok(&b, &["neighbour", "trust", &ka]);
        }
        ok(&b, &["security", "set", "/secret", s.level]);
    }
    ok(&a, &["security", "set", "/secret", s.level]);
    let relay = Relay::start(SocketAddr::from(([127, 0, 0, 1], b.udp)));
    let uri = format!("udp4://{}", relay.a_facing_addr());
    let mut args = vec!["face", "create", &uri, "--secure", "--json"];
    if s.link_wide {
        args.push("--link-wide");
    }
    let created = a.json(&args);
    let face = created["face_id"].as_u64().unwrap();
    let face_s = face.to_string();
    for prefix in ["/secret", "/public"] {
        ok(&a, &["route", "add", prefix, &face_s]);
    }
    Pair {
        a,
        b,
        relay,
        face,
        _keys: keys,
    }
}

/// A's view of its secure link toward B.
fn neighbour(d: &Daemon, face: u64) -> Option<Value> {
    let list = d.json(&["neighbour", "list", "--json"]);
    list.as_array()
        .unwrap()
        .iter()
        .find(|n| n["face_id"] == face)
        .cloned()
}

/// The only secure link of a daemon (B's on-demand face toward the relay).
fn only_neighbour(d: &Daemon) -> Value {
    let list = d.json(&["neighbour", "list", "--json"]);
    let all = list.as_array().unwrap();
    assert_eq!(all.len(), 1, "{list}");
    all[0].clone()
}

fn wait_established(p: &Pair) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(n) = neighbour(&p.a, p.face) {
            if n["state"] == "established" {
                return;
            }
        }
        assert!(
            Instant::now() < deadline,
            "no session: {:?}\nA log:\n{}\nB log:\n{}",
            neighbour(&p.a, p.face),
            p.a.log(),
            p.b.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `nameway get NAME` through A, which must fail quickly (nothing may arrive).
fn get_fails(p: &Pair, name: &str) {
    let out = p.a.dir.path().join("never.bin");
    let got = p.a.nameway(&[
        "get",
        name,
        "-o",
        out.to_str().unwrap(),
        "--lifetime",
        "500",
        "--retries",
        "2",
    ]);
    assert!(!got.status.success(), "{name} was delivered");
    assert!(!out.exists());
}

fn drops(n: &Value, reason: &str) -> u64 {
    n["drops"][reason].as_u64().unwrap()
}

/// Publishes `len` bytes under `prefix` on B, fetches them through A, checks the sha256;
/// returns the fetch summary.
fn transfer(p: &Pair, prefix: &str, len: usize, get_extra: &[&str]) -> Value {
    let (file, sha) = write_object(&p.b, "object.bin", len, len as u64);
    let (_producer, name) = put(&p.b, &file, prefix, &["--payload", "4400"]);
    let out = p.a.dir.path().join("fetched.bin");
    let mut args = vec!["get", &name, "-o", out.to_str().unwrap(), "--json"];
    args.extend_from_slice(get_extra);
    let summary = p.a.json(&args);
    assert_eq!(sha256_hex(&std::fs::read(&out).unwrap()), sha, "{summary}");
    summary
}

/// A's and B's views of the link once every packet B sealed has been opened by A (duplicates
/// answering retransmitted Interests may still be on their way when the fetch ends).
fn drained(p: &Pair) -> (Value, Value) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let a = neighbour(&p.a, p.face).unwrap();
        let b = only_neighbour(&p.b);
        if a["decrypted"] == b["encrypted"] || Instant::now() > deadline {
            return (a, b);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn level_round_trip(level: &'static str) {
    let p = pair(&Setup::level(level));
    wait_established(&p);
    let summary = transfer(&p, "/secret/object", MIB, &[]);
    let segments = summary["segments"].as_u64().unwrap();
    let (a, b) = drained(&p);
    assert_eq!(a["mode"], "per-prefix");
    assert!(
        a["decrypted"].as_u64().unwrap() >= segments,
        "{level}: {a} for {segments} segments"
    );
    // At most what B sealed (loopback may drop a datagram at a full socket buffer under load).
    assert!(
        a["decrypted"].as_u64() <= b["encrypted"].as_u64(),
        "{level}: {a} {b}"
    );
    for reason in [
        "bad-tag",
        "replay",
        "unknown-key",
        "clear-refused",
        "malformed",
    ] {
        assert_eq!(drops(&a, reason), 0, "{level}: {reason} {a}");
    }
    // Every Data crossed the wire sealed: each B→A datagram that is a Data carries LinkSecurity.
    let sealed = p.relay.search_in(Direction::BtoA, &relay::LINK_SECURITY);
    assert!(
        sealed as u64 >= segments,
        "{level}: {sealed} sealed datagrams"
    );
}

macro_rules! level_tests {
    ($($test:ident => $level:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            level_round_trip($level);
        }
    )*};
}

level_tests! {
    one_mib_arrives_intact_under_cpa => "cpa",
    one_mib_arrives_intact_under_chacha20 => "chacha20",
    one_mib_arrives_intact_under_forro14 => "forro14",
    one_mib_arrives_intact_under_chacha20_poly1305 => "chacha20-poly1305",
    one_mib_arrives_intact_under_xforro14_poly1305 => "xforro14-poly1305",
    one_mib_arrives_intact_under_aes_256_gcm => "aes-256-gcm",
}

#[test]
fn python_ndn_gets_secret_and_public_data_and_the_wire_shows_only_the_public_marker() {
    let Some(py) = python() else {
        assert!(
            !interop_required(),
            "python-ndn is required (NAMEWAY_PYTHON)"
        );
        eprintln!("skipped: no python with python-ndn");
        return;
    };
    let p = pair(&Setup::level("xforro14-poly1305"));
    wait_established(&p);
    let tb = p.b.transport();
    let ta = p.a.transport();
    let secret_marker = "SECRET-MARKER-7f3a";
    let public_marker = "PUBLIC-MARKER-19c2";
    let _s = App::producer(
        &py,
        &tb,
        &[
            "produce",
            "--prefix",
            "/secret",
            "--size",
            "3000",
            "--marker",
            secret_marker,
        ],
    );
    let _p = App::producer(
        &py,
        &tb,
        &[
            "produce",
            "--prefix",
            "/public",
            "--size",
            "3000",
            "--marker",
            public_marker,
        ],
    );
    let expect = |marker: &str| {
        let text = marker.as_bytes().repeat(3000 / marker.len() + 1);
        sha256_hex(&text[..3000])
    };
    for (name, marker) in [
        ("/secret/doc/1", secret_marker),
        ("/public/doc/1", public_marker),
    ] {
        let r = App::run(&py, &ta, &["consume", "--name", name]);
        assert_eq!(r["sha256"], expect(marker).as_str(), "{name}: {r}");
    }
    assert_eq!(
        p.relay.search(secret_marker.as_bytes()),
        0,
        "secret payload in clear"
    );
    assert!(
        p.relay.search(public_marker.as_bytes()) >= 1,
        "public payload not in clear"
    );
    // The secret Data's name still travels in clear (routers need it); its payload does not.
    assert!(p.relay.search(b"secret") >= 1);
}

#[test]
fn a_link_wide_face_hides_names_and_payloads() {
    let mut s = Setup::level("chacha20-poly1305");
    s.link_wide = true;
    let p = pair(&s);
    wait_established(&p);
    transfer(&p, "/public/wide-object", MIB / 4, &[]);
    let a = neighbour(&p.a, p.face).unwrap();
    assert_eq!(a["mode"], "link-wide");
    assert!(
        a["encrypted"].as_u64().unwrap() > 0,
        "Interests sealed: {a}"
    );
    assert_eq!(p.relay.search(b"wide-object"), 0, "a name crossed in clear");
}

#[test]
fn every_tampered_secure_data_is_dropped_as_bad_tag_and_the_consumer_recovers() {
    let p = pair(&Setup::level("xforro14-poly1305"));
    wait_established(&p);
    // Half the sealed Data, picked at random (seeded), get one bit flipped in their last 16
    // bytes (the SignatureValue: authenticated, in clear), 1,000 in all; a retransmitted
    // segment can be hit again.
    let state = std::sync::Mutex::new(0x9e37_79b9_7f4a_7c15_u64);
    let half = Matcher::new(move |d: &[u8]| {
        let mut x = state.lock().unwrap();
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        d.windows(3).any(|w| w == relay::LINK_SECURITY) && *x & 1 == 1
    });
    p.relay.set_fault(
        Direction::BtoA,
        Fault::flip_next_within_last(1000, 16, half),
    );
    let summary = transfer(
        &p,
        "/secret/tampered",
        8 * MIB,
        // The forwarder suppresses most of a consumer's quick retransmissions (exponentially
        // spaced), so the consumer must not give up after a fixed count.
        &[
            "--min-rto",
            "50",
            "--retries",
            "100000",
            "--cc",
            "fixed",
            "--window",
            "32",
        ],
    );
    assert_eq!(p.relay.counters(Direction::BtoA).flipped, 1000);
    let a = neighbour(&p.a, p.face).unwrap();
    assert_eq!(drops(&a, "bad-tag"), 1000, "{a}");
    assert!(
        summary["retransmissions"].as_u64().unwrap() >= 1000,
        "{summary}"
    );
}

#[test]
fn every_replayed_secure_packet_is_dropped_and_counted() {
    let p = pair(&Setup::level("aes-256-gcm"));
    wait_established(&p);
    transfer(&p, "/secret/replayed", 5 * MIB, &[]);
    let face_in_data = |d: &Daemon| {
        let faces = d.json(&["face", "list", "--json"]);
        faces
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["face_id"] == p.face)
            .map(|f| f["n_in_data"].as_u64().unwrap())
            .unwrap()
    };
    let before = face_in_data(&p.a);
    // 1,000 distinct recorded packets, sent again in batches of 50 (a burst of 4.5 MB at once
    // would overflow the receiving socket's buffer and test the kernel, not the replay window).
    let mut replayed = 0;
    for batch in 0..20 {
        let seen = std::sync::atomic::AtomicUsize::new(0);
        let window = Matcher::new(move |d: &[u8]| {
            d.windows(3).any(|w| w == relay::LINK_SECURITY)
                && seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= batch * 50
        });
        replayed += p.relay.replay(Direction::BtoA, &window, 50);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(replayed, 1000);
    let deadline = Instant::now() + Duration::from_secs(10);
    let a = loop {
        let a = neighbour(&p.a, p.face).unwrap();
        if drops(&a, "replay") >= 1000 || Instant::now() > deadline {
            break a;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(drops(&a, "replay"), 1000, "{a}");
    // None reached the forwarder.
    assert_eq!(face_in_data(&p.a), before);
}

#[test]
fn an_untrusted_initiator_is_refused_and_nothing_is_delivered() {
    let mut s = Setup::level("chacha20-poly1305");
    s.b_trusts_a = false;
    let p = pair(&s);
    let (file, _) = write_object(&p.b, "x.bin", 20_000, 1);
    let (_producer, name) = put(&p.b, &file, "/secret/untrusted", &[]);
    let deadline = Instant::now() + Duration::from_secs(10);
    let b = loop {
        let list = p.b.json(&["neighbour", "list", "--json"]);
        let n = list.as_array().unwrap().first().cloned();
        if let Some(n) = n.filter(|n| drops(n, "untrusted-peer") >= 1) {
            break n;
        }
        assert!(
            Instant::now() < deadline,
            "no refusal: {list}\n{}",
            p.b.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(b["state"], "refused", "{b}");
    assert_eq!(b["trusted"], false);
    assert!(p.b.log().contains("not trusted"), "{}", p.b.log());
    get_fails(&p, &name);
    let a = neighbour(&p.a, p.face).unwrap();
    // A sealed what it sent under keys B never installed: nothing was decrypted at B.
    assert_eq!(only_neighbour(&p.b)["decrypted"], 0);
    assert_eq!(a["decrypted"], 0);
}

#[test]
fn an_untrusted_responder_is_refused_by_the_initiator() {
    let mut s = Setup::level("chacha20-poly1305");
    s.a_trusts_b = false;
    let p = pair(&s);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let a = neighbour(&p.a, p.face);
        if a.as_ref().is_some_and(|a| drops(a, "untrusted-peer") >= 1) {
            assert_eq!(a.unwrap()["state"], "refused");
            break;
        }
        assert!(Instant::now() < deadline, "no refusal: {a:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The trust is granted at run time: the next attempt (after the back-off) succeeds.
    let kb = ok(&p.b, &["identity", "show"]).trim().to_owned();
    ok(&p.a, &["neighbour", "trust", &kb]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while neighbour(&p.a, p.face).unwrap()["state"] != "established" {
        assert!(Instant::now() < deadline, "not established after trust");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_peer_without_security_gets_no_handshake_and_its_clear_secret_data_is_refused() {
    let mut s = Setup::level("xforro14-poly1305");
    s.b_secure = false;
    let p = pair(&s);
    let (file, _) = write_object(&p.b, "x.bin", 20_000, 2);
    let (_producer, name) = put(&p.b, &file, "/secret/plainpeer", &[]);
    get_fails(&p, &name);
    let a = neighbour(&p.a, p.face).unwrap();
    assert_eq!(a["state"], "handshaking");
    assert!(drops(&a, "clear-refused") >= 1, "{a}");
    // B dropped the handshakes it does not understand.
    let faces = p.b.json(&["face", "list", "--json"]);
    let dropped: u64 = faces
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["link_drops"]["malformed"].as_u64())
        .sum();
    assert!(dropped >= 1, "{faces}");
}

#[test]
fn a_forwarder_without_the_feature_drops_encrypted_data_instead_of_delivering_it() {
    use nameway_wire::lp::{LinkSecurity, LpPacket, SecurityLevel};
    let d = Daemon::start("");
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    peer.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let uri = format!("udp4://{}", peer.local_addr().unwrap());
    let created = d.json(&["face", "create", &uri, "--json"]);
    let face_id = created["face_id"].as_u64().unwrap();
    let face = face_id.to_string();
    ok(&d, &["route", "add", "/secret", &face]);
    let mut consumer = d.spawn(&["peek", "/secret/x", "--timeout", "3000"], b"");
    let mut buf = [0u8; 9000];
    let (n, from) = peer.recv_from(&mut buf).unwrap();
    let interest = Bytes::copy_from_slice(&buf[..n]);
    let name = nameway_wire::InterestView::new_checked(interest)
        .map(|i| i.name().clone())
        .unwrap_or_else(|_| "/secret/x".parse().unwrap());
    let data = nameway_wire::Data::new(name, Bytes::from_static(b"ciphertext?")).encode();
    let sealed = LpPacket {
        link_security: Some(LinkSecurity {
            level: SecurityLevel::ChaCha20Poly1305,
            whole_packet: false,
            key_id: 1,
            counter: 1,
            tag: Some([7; 16]),
            group: None,
        }),
        fragment: Some(data),
        ..LpPacket::default()
    }
    .encode();
    peer.send_to(&sealed, from).unwrap();
    assert_eq!(consumer.wait(10), Some(3), "the consumer got something");
    let drops = d.json(&["face", "list", "--json"]);
    let f = drops
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["face_id"] == face_id)
        .cloned()
        .unwrap();
    assert_eq!(f["drops"]["undecrypted"], 1, "{f}");
}

#[test]
fn a_rekey_every_100_packets_loses_nothing() {
    let mut s = Setup::level("xforro14-poly1305");
    s.b_extra = "rekey_packets = 100";
    let p = pair(&s);
    wait_established(&p);
    let summary = transfer(&p, "/secret/rekeyed", 4 * MIB, &[]);
    let (a, b) = drained(&p);
    let segments = summary["segments"].as_u64().unwrap();
    assert!(
        b["rekeys"].as_u64().unwrap() >= segments / 100 - 1,
        "{b} for {segments} segments"
    );
    // Every sealed packet that reached A was opened, across every key change: the rekeys
    // caused no drop, hence no loss and no retransmission. (Loopback can still drop a datagram
    // at a full socket buffer under load; that is not the rekey's doing and is not asserted on.)
    assert!(a["decrypted"].as_u64().unwrap() >= segments, "{a}");
    for reason in ["bad-tag", "replay", "unknown-key", "malformed"] {
        assert_eq!(drops(&a, reason), 0, "{reason}: {a} {summary}");
    }
}

/// A TCP proxy of the test's own: forwards every connection to `upstream` and records the
/// bytes that come back from it (the Data direction: B toward A).
fn tcp_recorder(upstream: SocketAddr) -> (SocketAddr, std::sync::Arc<std::sync::Mutex<Vec<u8>>>) {
    use std::io::{Read as _, Write as _};
    use std::net::{TcpListener, TcpStream};
    use std::sync::{Arc, Mutex};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let record = Arc::new(Mutex::new(Vec::new()));
    let rec = record.clone();
    std::thread::spawn(move || {
        for down in listener.incoming() {
            let Ok(down) = down else { return };
            let Ok(up) = TcpStream::connect(upstream) else {
                return;
            };
            let (mut d_r, mut u_w) = (down.try_clone().unwrap(), up.try_clone().unwrap());
            std::thread::spawn(move || {
                let mut buf = [0u8; 65536];
                while let Ok(n @ 1..) = d_r.read(&mut buf) {
                    if u_w.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            });
            let (mut u_r, mut d_w) = (up, down);
            let rec = rec.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 65536];
                while let Ok(n @ 1..) = u_r.read(&mut buf) {
                    rec.lock().unwrap().extend_from_slice(&buf[..n]);
                    if d_w.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            });
        }
    });
    (addr, record)
}

#[test]
fn a_secure_tcp_face_carries_ciphertext_for_secret_names_and_plaintext_for_public_ones() {
    let keys = tempfile::tempdir().unwrap();
    let a = Daemon::start(&security_section(keys.path(), "a", ""));
    // B accepts the connection from loopback: not an application's local face here.
    let b = Daemon::start(&format!(
        "tcp_loopback_is_local = false\n{}",
        security_section(keys.path(), "b", "")
    ));
    let ka = ok(&a, &["identity", "show"]).trim().to_owned();
    let kb = ok(&b, &["identity", "show"]).trim().to_owned();
    ok(&a, &["neighbour", "trust", &kb]);
    ok(&b, &["neighbour", "trust", &ka]);
    for d in [&a, &b] {
        ok(d, &["security", "set", "/secret", "xforro14-poly1305"]);
    }
    let (proxy, record) = tcp_recorder(SocketAddr::from(([127, 0, 0, 1], b.tcp)));
    let created = a.json(&[
        "face",
        "create",
        &format!("tcp4://{proxy}"),
        "--secure",
        "--json",
    ]);
    let face = created["face_id"].as_u64().unwrap();
    for prefix in ["/secret", "/public"] {
        ok(&a, &["route", "add", prefix, &face.to_string()]);
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    while neighbour(&a, face).is_none_or(|n| n["state"] != "established") {
        assert!(
            Instant::now() < deadline,
            "no session over TCP: {:?}\nA log:\n{}\nB log:\n{}",
            neighbour(&a, face),
            a.log(),
            b.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    for (prefix, marker) in [
        ("/secret/tcp", "SECRET-TCP-5b1e"),
        ("/public/tcp", "PUBLIC-TCP-c07d"),
    ] {
        let content = marker.as_bytes().repeat(300_000 / marker.len());
        let file = b.dir.path().join(marker);
        std::fs::write(&file, &content).unwrap();
        let (_producer, name) = put(&b, &file, prefix, &["--payload", "4400"]);
        let out = a.dir.path().join(format!("{marker}.out"));
        a.json(&["get", &name, "-o", out.to_str().unwrap(), "--json"]);
        assert_eq!(std::fs::read(&out).unwrap(), content, "{prefix}");
    }
    let wire = record.lock().unwrap().clone();
    let has = |m: &str| wire.windows(m.len()).any(|w| w == m.as_bytes());
    assert!(
        has("PUBLIC-TCP-c07d"),
        "the public payload crosses in clear"
    );
    assert!(
        !has("SECRET-TCP-5b1e"),
        "the secret payload crossed the TCP link in clear"
    );
    let n = neighbour(&a, face).unwrap();
    assert!(n["decrypted"].as_u64().unwrap() >= 69, "{n}");
    assert_eq!(drops(&n, "bad-tag") + drops(&n, "replay"), 0, "{n}");
}
