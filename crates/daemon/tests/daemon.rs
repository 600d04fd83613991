//! The real namewayd process: two daemons joined by a UDP face, faces that send garbage,
//! configuration checking, and clean shutdown on SIGTERM.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{App, Daemon};

#[test]
fn two_daemons_joined_by_a_udp_face() {
    let Some(py) = common::python() else { return };
    let b = Daemon::start("");
    let a = Daemon::start(&format!(
        "[[face]]\nuri = \"udp4://127.0.0.1:{port}\"\n[[route]]\nprefix = \"/remote\"\nface = \"udp4://127.0.0.1:{port}\"\ncost = 10\n",
        port = b.udp
    ));
    let _producer = App::producer(
        &py,
        &b.transport(),
        &["produce", "--prefix", "/remote", "--size", "5000"],
    );
    let r = App::run(
        &py,
        &a.transport(),
        &["consume", "--name", "/remote/over/udp", "--must-be-fresh"],
    );
    assert_eq!(
        r["name"],
        "/remote/over/udp",
        "{r}\nA: {}\nB: {}",
        a.log(),
        b.log()
    );
    assert_eq!(r["size"], 5000);
}

/// Reads from `s` until EOF or `limit`; true when the daemon closed the connection.
fn closed_by_peer(s: &mut impl Read, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    let mut buf = [0u8; 256];
    while Instant::now() < deadline {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => return true,
        }
    }
    false
}

#[test]
fn garbage_closes_only_the_offending_face() {
    let Some(py) = common::python() else { return };
    let d = Daemon::start("");
    let t = d.transport();
    let _producer = App::producer(&py, &t, &["produce", "--prefix", "/survivor"]);

    // Unix: a TLV-TYPE of 0 is not a packet.
    let mut unix = UnixStream::connect(&d.unix).unwrap();
    unix.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    unix.write_all(&[0x00, 0x05, 1, 2, 3, 4, 5]).unwrap();
    assert!(
        closed_by_peer(&mut unix, Duration::from_secs(10)),
        "unix face not closed"
    );

    // TCP: a packet longer than 8800 bytes.
    let mut tcp = std::net::TcpStream::connect(("127.0.0.1", d.tcp)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    tcp.write_all(&[0x05, 0xfd, 0x30, 0x00]).unwrap();
    assert!(
        closed_by_peer(&mut tcp, Duration::from_secs(10)),
        "tcp face not closed"
    );

    // UDP garbage is dropped; the listener keeps working.
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.send_to(&[0xff; 64], ("127.0.0.1", d.udp)).unwrap();

    // The producer's face and new faces are unaffected.
    let r = App::run(&py, &t, &["consume", "--name", "/survivor/x"]);
    assert_eq!(r["name"], "/survivor/x", "{r}\n{}", d.log());
}

#[test]
fn check_config_reports_errors_and_accepts_the_sample() {
    let bin = env!("CARGO_BIN_EXE_namewayd");
    let sample = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/namewayd.sample.toml"
    );
    let ok = Command::new(bin)
        .args(["--check-config", "--config", sample])
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(String::from_utf8_lossy(&ok.stdout).contains("configuration OK"));

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[cs]\ncapacty = 10\n").unwrap();
    let out = Command::new(bin)
        .args(["--check-config", "--config"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("capacty"), "{err}");
}

#[test]
fn a_refused_config_is_one_message_with_its_cause_and_no_backtrace() {
    // Many Rust users have RUST_BACKTRACE set; the operator must still see one clear message.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[faces]\nunxi = \"/tmp/x.sock\"\n").unwrap();
    let err = common::refused_start(&bad);
    assert!(err.starts_with("namewayd: error: "), "{err}");
    assert_eq!(err.matches("error:").count(), 1, "{err}");
    // One line: the file, line and column, the table, the key (it was a five-line block).
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    let expect = format!(
        "namewayd: error: {}: line 2, column 1: in [faces]: unknown key `unxi`",
        bad.display()
    );
    assert!(err.starts_with(&expect), "{err}");
    assert!(err.contains("expected one of `unix`"), "{err}");
    assert!(!err.to_lowercase().contains("backtrace"), "{err}");
    assert!(
        !err.contains("Caused by") && !err.contains("src/main.rs"),
        "{err}"
    );

    let err = common::refused_start(&dir.path().join("missing.toml"));
    assert!(
        err.contains("cannot read") && err.contains("No such file"),
        "{err}"
    );
    assert!(!err.to_lowercase().contains("backtrace"), "{err}");
}

#[test]
fn the_systemd_unit_verifies_and_is_hardened() {
    let unit_path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../dist/systemd/namewayd.service"
    );
    let unit = std::fs::read_to_string(unit_path).unwrap();
    for line in [
        "DynamicUser=yes",
        "RuntimeDirectory=nfd",
        "CapabilityBoundingSet=\n",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "ExecReload=/bin/kill -HUP $MAINPID",
    ] {
        assert!(unit.contains(line), "the unit lacks {line:?}");
    }
    let Ok(analyze) = which("systemd-analyze") else {
        assert!(
            !common::interop_required(),
            "systemd-analyze missing: run scripts/setup-system.sh"
        );
        eprintln!("SKIPPED: systemd-analyze missing (run scripts/setup-system.sh)");
        return;
    };
    // verify checks that ExecStart exists: point it at the binary under test.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("namewayd.service");
    std::fs::write(
        &copy,
        unit.replace("/usr/local/bin/namewayd", env!("CARGO_BIN_EXE_namewayd")),
    )
    .unwrap();
    let out = Command::new(analyze)
        .arg("verify")
        .arg(&copy)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.trim().is_empty(),
        "systemd-analyze verify: {err}"
    );
}

fn which(tool: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
        .ok_or(())
}

#[test]
fn sigterm_shuts_down_cleanly_and_removes_the_socket() {
    let mut d = Daemon::start("");
    let pid = d.child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(s) = d.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "namewayd did not exit on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "exit status {status}: {}", d.log());
    assert!(!d.unix.exists(), "socket file left behind");
    assert!(d.log().contains("shutting down"), "{}", d.log());
}

/// Sends one Interest on a fresh Unix connection and returns the Data that answers it.
fn express(unix: &std::path::Path, interest: nameway_wire::Interest) -> nameway_wire::Data {
    let mut s = UnixStream::connect(unix).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(&interest.encode()).unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 9000];
    loop {
        let n = s.read(&mut chunk).unwrap();
        assert!(n > 0, "connection closed before the Data");
        buf.extend_from_slice(&chunk[..n]);
        let mut r = nameway_wire::tlv::Reader::new(&buf);
        if let Ok(e) = r.read_element() {
            let wire = bytes::Bytes::copy_from_slice(&buf[..e.end()]);
            return nameway_wire::Data::decode(&wire).unwrap();
        }
    }
}

#[test]
fn channels_dataset_lists_every_listener() {
    let d = Daemon::start("");
    let mut i = nameway_wire::Interest::new("/localhost/nfd/faces/channels".parse().unwrap());
    i.can_be_prefix = true;
    i.must_be_fresh = true;
    i.nonce = Some(7);
    let data = express(&d.unix, i);
    assert_eq!(data.name.len(), 6, "{}", data.name); // .../v=<ts>/seg=0
    let list = nameway_wire::mgmt::ChannelStatus::decode_list(&data.content.unwrap()).unwrap();
    let uris: Vec<String> = list.into_iter().map(|c| c.local_uri).collect();
    assert!(
        uris.contains(&format!("tcp4://127.0.0.1:{}", d.tcp)),
        "{uris:?}"
    );
    assert!(
        uris.contains(&format!("udp4://127.0.0.1:{}", d.udp)),
        "{uris:?}"
    );
    assert!(uris.iter().any(|u| u.starts_with("unix://")), "{uris:?}");
}

/// ndn-cxx's Face integration suite (`Consumer/ExpressInterestData`) asks for `/localhost` with
/// CanBePrefix and expects a Data, which NFD answers from its content store (management Data
/// are cached like any other). The management Data of namewayd are cached too.
#[test]
fn an_interest_for_localhost_with_can_be_prefix_is_answered_from_the_store() {
    use nameway_transport::client::{Client, Transport};
    use nameway_wire::Interest;

    let d = common::Daemon::start("");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = Client::connect(Transport::parse(&d.transport()).unwrap())
            .await
            .unwrap();
        c.dataset("status", "general").await.unwrap();
        let mut i = Interest::new("/localhost".parse().unwrap());
        i.can_be_prefix = true;
        let data = c
            .express(&i, Duration::from_secs(2))
            .await
            .unwrap_or_else(|e| panic!("no Data for /localhost: {e}\n{}", d.log()));
        assert!(
            data.name
                .to_string()
                .starts_with("/localhost/nfd/status/general/"),
            "{}",
            data.name
        );
    });
}

/// An Interest that cannot be queued toward another forwarder (its face's queue is full) is
/// answered downstream with a Nack Congestion at once, so the consumer retries instead of
/// waiting out the lifetime; the drop is counted as queue-full.
#[test]
fn an_interest_dropped_at_a_full_upstream_queue_is_nacked_congestion() {
    use nameway_transport::client::{Client, Transport};
    use nameway_wire::mgmt::{ControlParameters, FaceStatus};
    use nameway_wire::{Interest, NackReason, Packet};
    use std::io::Read as _;

    let d = common::Daemon::start("tcp_loopback_is_local = false\ntx_queue_bytes = \"16KiB\"\n");
    // "Another forwarder" over TCP that never reads.
    let upstream = std::net::TcpStream::connect(("127.0.0.1", d.tcp)).unwrap();
    let upstream_uri = format!("tcp4://{}", upstream.local_addr().unwrap());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = Client::connect(Transport::parse(&d.transport()).unwrap())
            .await
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let face = loop {
            let faces: Vec<FaceStatus> = c.list("faces", "list").await.unwrap();
            if let Some(f) = faces.iter().find(|f| f.uri == upstream_uri) {
                break f.face_id;
            }
            assert!(Instant::now() < deadline, "no face for {upstream_uri}");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut p = ControlParameters::with_name("/slow".parse().unwrap());
        p.face_id = Some(face);
        c.command_ok("fib", "add-nexthop", &p).await.unwrap();
    });
    // A consumer sends far more Interests than the kernel's buffers and the 16 KiB queue hold.
    let mut consumer = UnixStream::connect(&d.unix).unwrap();
    let count = 40_000u32;
    let mut burst = Vec::new();
    for i in 0..count {
        let mut interest = Interest::new(format!("/slow/{i}").parse().unwrap());
        interest.nonce = Some(i);
        interest.lifetime_ms = Some(60_000);
        burst.extend_from_slice(&interest.encode());
    }
    let writer = std::thread::spawn({
        let mut w = consumer.try_clone().unwrap();
        move || w.write_all(&burst).unwrap()
    });
    // Nacks Congestion come back at once (the lifetime is a minute).
    consumer
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut framer = nameway_face::StreamFramer::default();
    let mut congestion = 0;
    let deadline = Instant::now() + Duration::from_secs(20);
    while congestion < 100 {
        assert!(
            Instant::now() < deadline,
            "{congestion} Nacks Congestion\n{}",
            d.log()
        );
        let mut buf = [0u8; 65536];
        let n = consumer.read(&mut buf).unwrap();
        assert!(n > 0);
        framer.read_buffer().extend_from_slice(&buf[..n]);
        while let Ok(Some(pkt)) = framer.next_packet() {
            if let Ok(Packet::Lp(lp)) = Packet::classify(pkt) {
                if lp.nack == Some(NackReason::Congestion) {
                    congestion += 1;
                }
            }
        }
    }
    writer.join().unwrap();
    drop(upstream);
}
