//! `nameway put` and `nameway get` through a real namewayd: whole objects arrive identical under
//! every signature kind and with manifests, across a lossy link between two forwarders, and to
//! and from python-ndn's and NDNts's segmented-object tools; a tampered segment is refused
//! naming the segment, with no output file left behind.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use serde_json::Value;

const MIB: usize = 1 << 20;

/// `nameway get NAME -o OUT --json extra...`, which must succeed; returns its summary.
fn get(d: &Daemon, name: &str, out: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["get", name, "-o", out.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    d.json(&args)
}

fn file_sha(path: &Path) -> String {
    sha256_hex(&std::fs::read(path).unwrap())
}

fn keygen(d: &Daemon, kind: &str) -> (PathBuf, PathBuf) {
    let private = d.dir.path().join(format!("{kind}.key"));
    let out = d.nameway(&["key", "generate", kind, private.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    (private, printed)
}

/// Publishes `file` under a fresh prefix with `sign` (and a manifest size), fetches it with the
/// matching key, and checks the content and how it was verified.
fn round_trip(
    d: &Daemon,
    file: &Path,
    sha: &str,
    kind: &str,
    payload: usize,
    manifest: Option<usize>,
) {
    let prefix = format!("/rt/{kind}/{payload}/{}", manifest.unwrap_or(0));
    let payload_s = payload.to_string();
    let manifest_s = manifest.map(|m| m.to_string());
    let (private, public) = keygen_cached(d, kind);
    let mut put_args = vec!["--payload", &payload_s, "--sign", kind];
    if let Some(k) = &private {
        put_args.extend(["--key", k.to_str().unwrap()]);
    }
    if let Some(m) = &manifest_s {
        put_args.extend(["--manifest", m]);
    }
    let (_producer, name) = put(d, file, &prefix, &put_args);
    assert!(name.starts_with(&format!("{prefix}/v=")), "{name}");
    let out = d
        .dir
        .path()
        .join(format!("out-{kind}-{payload}-{}", manifest.unwrap_or(0)));
    let mut get_args = Vec::new();
    match (kind, &public) {
        ("hmac", Some(p)) => get_args.extend(["--hmac-key", p.to_str().unwrap()]),
        (_, Some(p)) => get_args.extend(["--key", p.to_str().unwrap()]),
        _ => {}
    }
    let summary = get(d, &prefix, &out, &get_args);
    assert_eq!(
        file_sha(&out),
        sha,
        "{kind} {payload} {manifest:?}: content differs"
    );
    let expected = match (kind, manifest) {
        ("digest", _) => "none".to_owned(),
        (k, None) => format!("packet {k}"),
        (k, Some(_)) => format!("manifest {k}"),
    };
    assert_eq!(summary["verification"], expected.as_str(), "{summary}");
    assert_eq!(summary["name"], name.as_str());
    let segments = summary["segments"].as_u64().unwrap();
    assert_eq!(segments, (16 * MIB).div_ceil(payload) as u64, "{summary}");
    if let Some(m) = manifest {
        assert_eq!(
            summary["manifests"].as_u64().unwrap(),
            segments.div_ceil(m as u64)
        );
    }
    std::fs::remove_file(out).unwrap();
}

/// One key per kind per daemon: (private for put, public or secret for get); none for digest.
fn keygen_cached(d: &Daemon, kind: &str) -> (Option<PathBuf>, Option<PathBuf>) {
    if kind == "digest" {
        return (None, None);
    }
    let private = d.dir.path().join(format!("{kind}.key"));
    if !private.exists() {
        keygen(d, kind);
    }
    let public = if kind == "hmac" {
        private.clone()
    } else {
        d.dir.path().join(format!("{kind}.key.pub"))
    };
    (Some(private), Some(public))
}

#[test]
fn key_generate_writes_a_private_key_for_the_owner_and_a_public_key() {
    let d = Daemon::start("");
    let (private, public) = keygen(&d, "ed25519");
    assert_eq!(public, d.dir.path().join("ed25519.key.pub"));
    let text = std::fs::read_to_string(&public).unwrap();
    assert!(text.starts_with("-----BEGIN PUBLIC KEY-----"), "{text}");
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(&private).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let out = d.nameway(&["key", "generate", "blake3", "x"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown signature kind"));
}

#[test]
fn sixteen_mib_per_packet_signatures_of_every_kind_at_1400_and_8000() {
    let d = Daemon::start("");
    let (file, sha) = write_object(&d, "obj", 16 * MIB, 1);
    for kind in ["digest", "ed25519", "ecdsa", "hmac", "rsa"] {
        for payload in [1400, 8000] {
            round_trip(&d, &file, &sha, kind, payload, None);
        }
    }
}

#[test]
fn sixteen_mib_with_manifests_of_32_and_256_digests() {
    let d = Daemon::start("");
    let (file, sha) = write_object(&d, "obj", 16 * MIB, 2);
    for payload in [1400, 8000] {
        for manifest in [32, 256] {
            round_trip(&d, &file, &sha, "ed25519", payload, Some(manifest));
        }
    }
    for kind in ["ecdsa", "rsa", "hmac"] {
        round_trip(&d, &file, &sha, kind, 8000, Some(256));
    }
}

/// A producer built on the library that serves segment 40 with one payload byte changed.
fn tampered_producer(
    d: &Daemon,
    prefix: &str,
    manifest: Option<usize>,
) -> std::thread::JoinHandle<()> {
    use nameway_transport::client::{Client, Transport};
    use nameway_transport::{Publication, PublishOptions, SignatureKind, SigningKey};

    let key_path = d.dir.path().join("ed25519.key");
    if !key_path.exists() {
        keygen(d, "ed25519");
    }
    let key = SigningKey::load(SignatureKind::Ed25519, &key_path).unwrap();
    let mut publication = Publication::from_bytes(
        prefix.parse().unwrap(),
        object(100 * 1000, 3).into(),
        key,
        PublishOptions {
            payload_size: 1000,
            manifest,
            ..PublishOptions::default()
        },
    )
    .unwrap();
    let mut data = nameway_wire::Data::decode(&publication.segment(40).unwrap()).unwrap();
    let mut content = data.content.clone().unwrap().to_vec();
    content[123] ^= 0x01;
    data.content = Some(content.into());
    publication.replace_segment(40, data.encode());
    let transport = Transport::Unix(d.unix.clone());
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let mut client = Client::connect(transport).await.unwrap();
            client.register(publication.prefix()).await.unwrap();
            ready_tx.send(()).unwrap();
            let _ =
                nameway_transport::producer::serve_registered(&mut client, &mut publication).await;
        });
    });
    ready_rx.recv_timeout(Duration::from_secs(30)).unwrap();
    thread
}

#[test]
fn a_tampered_segment_is_refused_naming_it_and_no_output_is_left() {
    let d = Daemon::start("");
    for (prefix, manifest) in [("/tamper/packet", None), ("/tamper/manifest", Some(32))] {
        let _producer = tampered_producer(&d, prefix, manifest);
        let public = d.dir.path().join("ed25519.key.pub");
        let out = d.dir.path().join("tampered");
        let result = d.nameway(&[
            "get",
            prefix,
            "-o",
            out.to_str().unwrap(),
            "--key",
            public.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&result.stderr);
        assert!(
            !result.status.success(),
            "{manifest:?}: fetch of a tampered object succeeded"
        );
        assert!(
            err.contains("verification failed for segment 40"),
            "{manifest:?}: {err}"
        );
        assert!(err.contains("seg=40"), "{err}");
        assert_eq!(err.lines().count(), 1, "one line, no backtrace: {err}");
        assert!(!out.exists(), "a corrupt output file was left");
        assert!(
            !d.dir.path().join("tampered.part").exists(),
            "a partial file was left"
        );
        // Without a key nothing is verified, and the altered byte comes through: what the key
        // protects against.
        let plain = d.dir.path().join("unverified");
        get(&d, prefix, &plain, &[]);
        let mut expected = object(100 * 1000, 3);
        expected[40 * 1000 + 123] ^= 0x01;
        assert_eq!(std::fs::read(&plain).unwrap(), expected);
    }
}

/// `nameway key generate KIND DIR/FILE`; returns the private key's path.
fn keygen_as(d: &Daemon, kind: &str, file: &str) -> String {
    let private = d.dir.path().join(file);
    let out = d.nameway(&["key", "generate", kind, private.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    private.to_str().unwrap().to_owned()
}

/// `nameway key cert ...` for `key`, under `identity`, issued by `issuer` (key, kind, cert) or
/// self-signed; returns the certificate file and the name it printed.
fn cert(
    d: &Daemon,
    (key, kind): (&str, &str),
    identity: &str,
    issuer: Option<(&str, &str, &str)>,
    days: &str,
    file: &str,
) -> (String, String) {
    let path = d.dir.path().join(file).to_str().unwrap().to_owned();
    let mut args = vec![
        "key",
        "cert",
        "--key",
        key,
        "--kind",
        kind,
        "--identity",
        identity,
        "--days",
        days,
        "-o",
        &path,
    ];
    if let Some((k, kd, c)) = issuer {
        args.extend(["--issuer-key", k, "--issuer-kind", kd, "--issuer-cert", c]);
    }
    let out = d.nameway(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let name = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    assert!(name.starts_with(&format!("{identity}/KEY/")), "{name}");
    (path, name)
}

/// `nameway get` that must fail; returns its one-line error.
fn get_fails(d: &Daemon, name: &str, extra: &[&str]) -> String {
    let out_file = d.dir.path().join("refused");
    let mut args = vec!["get", name, "-o", out_file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = d.nameway(&args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success(),
        "fetch of {name} succeeded: {extra:?}"
    );
    assert_eq!(err.lines().count(), 1, "one line, no backtrace: {err}");
    assert!(!out_file.exists() && !d.dir.path().join("refused.part").exists());
    err
}

#[test]
fn a_certificate_chain_to_a_trust_anchor_is_checked_before_the_object_is_accepted() {
    let d = Daemon::start("");
    // /org (anchor, Ed25519) -> /org/site (ECDSA P-256) -> /org/site/producer (Ed25519).
    let org_key = keygen_as(&d, "ed25519", "org.key");
    let site_key = keygen_as(&d, "ecdsa", "site.key");
    let prod_key = keygen_as(&d, "ed25519", "producer.key");
    let (org, org_name) = cert(&d, (&org_key, "ed25519"), "/org", None, "365", "org.cert");
    let issuer = Some((org_key.as_str(), "ed25519", org.as_str()));
    let (site, _) = cert(
        &d,
        (&site_key, "ecdsa"),
        "/org/site",
        issuer,
        "30",
        "site.cert",
    );
    let site_issuer = Some((site_key.as_str(), "ecdsa", site.as_str()));
    let (prod, prod_name) = cert(
        &d,
        (&prod_key, "ed25519"),
        "/org/site/producer",
        site_issuer,
        "30",
        "producer.cert",
    );
    let (file, sha) = write_object(&d, "signed-object", 3 * MIB + 17, 11);
    let chain = [
        "--sign",
        "ed25519",
        "--key",
        &prod_key,
        "--cert",
        &prod,
        "--serve-cert",
        &site,
    ];
    // Per-packet signatures, and manifests of 32: both verified through the chain.
    for (prefix, manifest) in [
        ("/org/site/producer/packet", None),
        ("/org/site/producer/manifest", Some("32")),
    ] {
        let mut args = chain.to_vec();
        if let Some(m) = manifest {
            args.extend(["--manifest", m]);
        }
        let (_p, _) = put(&d, &file, prefix, &args);
        let out = d.dir.path().join("chained");
        let summary = get(&d, prefix, &out, &["--anchor", &org]);
        assert_eq!(file_sha(&out), sha, "{prefix}");
        let how = summary["verification"].as_str().unwrap();
        let mode = if manifest.is_some() {
            "manifest ed25519"
        } else {
            "packet ed25519"
        };
        assert!(how.starts_with(mode), "{how}");
        assert!(how.contains(&format!("certificate {prod_name}")), "{how}");
        std::fs::remove_file(out).unwrap();

        // Another anchor for the same identity (another key): the chain leads to a
        // certificate that is not it, which nobody serves.
        let other_key = keygen_as(&d, "ed25519", "other.key");
        let (other, _) = cert(
            &d,
            (&other_key, "ed25519"),
            "/org",
            None,
            "365",
            "other.cert",
        );
        let err = get_fails(&d, prefix, &["--anchor", &other]);
        assert!(
            err.contains("untrusted signer") && err.contains("could not be fetched"),
            "{err}"
        );
    }
    assert!(org_name.starts_with("/org/KEY/"));

    // A key certified for /org/site/producer may not sign under /org/elsewhere.
    let (elsewhere, _) = put(&d, &file, "/org/elsewhere/obj", &chain);
    let err = get_fails(&d, "/org/elsewhere/obj", &["--anchor", &org]);
    assert!(
        err.contains("may not sign") && err.contains("/org/elsewhere/obj"),
        "{err}"
    );

    // A certificate out of its validity period breaks the chain.
    let (short, _) = cert(
        &d,
        (&prod_key, "ed25519"),
        "/org/site/short",
        site_issuer,
        "0",
        "short.cert",
    );
    let short_chain = [
        "--sign",
        "ed25519",
        "--key",
        &prod_key,
        "--cert",
        &short,
        "--serve-cert",
        &site,
    ];
    let (short_producer, _) = put(&d, &file, "/org/site/short/obj", &short_chain);
    std::thread::sleep(Duration::from_millis(1100));
    let err = get_fails(&d, "/org/site/short/obj", &["--anchor", &org]);
    assert!(err.contains("is not valid now"), "{err}");

    // An intermediate nobody serves (and so in no cache either): the chain cannot be
    // fetched, and the error says which certificate.
    drop((elsewhere, short_producer));
    let (hidden, hidden_name) = cert(
        &d,
        (&site_key, "ecdsa"),
        "/org/hidden",
        issuer,
        "30",
        "hidden.cert",
    );
    let hidden_issuer = Some((site_key.as_str(), "ecdsa", hidden.as_str()));
    let (leaf, _) = cert(
        &d,
        (&prod_key, "ed25519"),
        "/org/hidden/producer",
        hidden_issuer,
        "30",
        "hidden-producer.cert",
    );
    let (_p, _) = put(
        &d,
        &file,
        "/org/hidden/producer/obj",
        &["--sign", "ed25519", "--key", &prod_key, "--cert", &leaf],
    );
    let err = get_fails(&d, "/org/hidden/producer/obj", &["--anchor", &org]);
    assert!(
        err.contains("could not be fetched") && err.contains(&hidden_name),
        "{err}"
    );
}

#[test]
fn get_of_a_missing_object_or_without_route_says_so() {
    let d = Daemon::start("");
    let out = d.nameway(&[
        "get",
        "/nothing/here",
        "-o",
        d.dir.path().join("x").to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Nack NoRoute for /nothing/here"), "{err}");
    assert!(!d.dir.path().join("x").exists() && !d.dir.path().join("x.part").exists());
}

/// Sends `signal` (`-INT`, `-TERM`) to `child` with kill(1), as a user or a service manager does.
fn send(child: &std::process::Child, signal: &str) {
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args([signal, &pid])
        .status()
        .unwrap()
        .success());
}

#[test]
fn ctrl_c_or_sigterm_stops_get_and_put_cleanly() {
    // A prefix routed to the null face: the fetch waits (its Interests are never answered)
    // until it is stopped.
    let d = Daemon::start("[[route]]\nprefix = \"/hole\"\nface = \"null://\"\n");
    for (signal, code, named) in [("-INT", 130, "SIGINT"), ("-TERM", 143, "SIGTERM")] {
        let out = d.dir.path().join(format!("got{code}"));
        let part = d.dir.path().join(format!("got{code}.part"));
        let mut get = d.spawn(
            &[
                "get",
                "/hole/obj",
                "-o",
                out.to_str().unwrap(),
                "--lifetime",
                "60000",
            ],
            b"",
        );
        // FILE.part exists once the fetch has begun, and the handlers are installed before it.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !part.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "no {}",
                part.display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        send(&get.child, signal);
        let status = get.child.wait().unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(get.child.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert_eq!(status.code(), Some(code), "{status}: {err}");
        assert!(
            err.contains(&format!("stopped by {named} before /hole/obj was whole")),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!part.exists() && !out.exists(), "{err}");
    }

    // `put` serves until stopped: SIGTERM (as from systemd) ends it like Ctrl-C, exit 0.
    let (file, _) = write_object(&d, "obj", 1000, 1);
    let (mut producer, _) = put(&d, &file, "/served/obj", &[]);
    send(&producer.child, "-TERM");
    let status = producer.child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status}");
}

#[test]
fn put_stops_when_its_file_is_written_to_rather_than_serve_a_mix() {
    // Segments past `--memory-mib` are rebuilt from the file when asked for, and re-signed: a
    // file changed in place after `put` used to be served half old, half new, every segment
    // validly signed, so `get` wrote a file that was neither.
    let d = Daemon::start("");
    let (file, _) = write_object(&d, "obj", 2 * MIB, 9);
    let (mut producer, name) = put(&d, &file, "/changing/obj", &["--memory-mib", "0"]);
    std::thread::sleep(Duration::from_millis(50)); // the file clock is coarse
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, &[0u8; 1000], MIB as u64).unwrap();
    drop(f);
    let out = d.dir.path().join("mixed");
    let got = d.nameway(&[
        "get",
        &name,
        "-o",
        out.to_str().unwrap(),
        "--lifetime",
        "1000",
        "--retries",
        "2",
    ]);
    assert!(!got.status.success());
    assert!(!out.exists());
    let status = producer.child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(producer.child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(
        err.contains("changed since it was published") && err.contains("publish it again"),
        "{err}"
    );
}

#[test]
fn get_into_a_fifo_or_standard_output_leaves_no_file_behind() {
    use std::os::unix::fs::FileTypeExt as _;
    let d = Daemon::start("");
    let (file, sha) = write_object(&d, "obj", MIB, 5);
    let (_producer, name) = put(&d, &file, "/fifo/obj", &[]);
    let fifo = d.dir.path().join("pipe");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let summary = get(&d, &name, &fifo, &[]);
    assert_eq!(summary["bytes"].as_u64(), Some(MIB as u64));
    // Renaming FILE.part over it would have replaced the FIFO with a regular file (and left the
    // reader waiting for a writer), so this is checked before joining the reader.
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "{kind:?}");
    assert!(!d.dir.path().join("pipe.part").exists());
    assert_eq!(sha256_hex(&reader.join().unwrap()), sha);

    // `-o -` is standard output, where a JSON summary cannot go as well.
    let out = d.nameway(&["get", &name, "-o", "-", "-q"]);
    assert!(out.status.success());
    assert_eq!(sha256_hex(&out.stdout), sha);
    let out = d.nameway(&["get", &name, "-o", "-", "--json"]);
    assert!(!out.status.success() && out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--json prints on standard output"), "{err}");
}

/// Daemon B serves; daemon A reaches it over a UDP face whose packets B drops with `loss`.
fn lossy_pair(loss: f64) -> (Daemon, Daemon) {
    let b = Daemon::start(&format!("[faces.fault]\nloss = {loss}\nseed = 11\n"));
    let uri = format!("udp4://127.0.0.1:{}", b.udp);
    let a = Daemon::start(&format!(
        "[[face]]\nuri = \"{uri}\"\n[[route]]\nprefix = \"/lossy\"\nface = \"{uri}\"\n"
    ));
    (a, b)
}

#[test]
fn transfers_across_a_lossy_link_complete_with_retransmissions() {
    for loss in [0.01, 0.05] {
        let (a, b) = lossy_pair(loss);
        let (file, sha) = write_object(&b, "obj", 4 * MIB, 4);
        let (_producer, name) = put(&b, &file, "/lossy/obj", &["--payload", "8000"]);
        let out = a.dir.path().join("got");
        let summary = get(&a, &name, &out, &["--min-rto", "50"]);
        assert_eq!(file_sha(&out), sha, "loss {loss}");
        let retx = summary["retransmissions"].as_u64().unwrap();
        // 525 Data cross the lossy face: at 5 %, about 26 are lost.
        assert!(retx > 0, "loss {loss}: {summary}");
        let dropped = b.json(&["face", "list", "--json"]);
        let fault_drops: u64 = dropped
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["link_drops"]["fault"].as_u64())
            .sum();
        assert!(fault_drops > 0, "no fault drops counted: {dropped}");
        assert!(
            retx >= fault_drops / 2,
            "loss {loss}: {retx} retransmissions for {fault_drops} drops"
        );
    }
}

#[test]
fn a_congested_bottleneck_drops_are_counted_and_every_controller_completes() {
    // B's link toward A: 40 Mbit/s, 5 ms, a 64 KiB drop-tail buffer; the Interests' way 5 ms.
    let b = Daemon::start(
        "[faces.fault]\nrate_mbps = 40\nqueue_kib = 64\ndelay_ms = 5\nseed = 3\n[cs]\nserve = false\nadmit = false\n",
    );
    let uri = format!("udp4://127.0.0.1:{}", b.udp);
    let a = Daemon::start(&format!(
        "[faces.fault]\ndelay_ms = 5\n[cs]\nserve = false\nadmit = false\n\
         [[face]]\nuri = \"{uri}\"\n[[route]]\nprefix = \"/wan\"\nface = \"{uri}\"\n"
    ));
    let (file, sha) = write_object(&b, "obj", MIB, 6);
    let (_producer, name) = put(&b, &file, "/wan/obj", &["--payload", "8000"]);
    let queue_drops = || -> u64 {
        b.json(&["face", "list", "--json"])
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["link_drops"]["fault-queue"].as_u64())
            .sum()
    };
    let out = a.dir.path().join("got");
    // 64 segments in flight are about 500 KiB, where the path holds 50 KiB plus the buffer:
    // the buffer overflows, and the losses are recovered.
    let before = queue_drops();
    let summary = get(&a, &name, &out, &["--cc", "fixed", "-w", "64"]);
    assert_eq!(file_sha(&out), sha);
    let dropped = queue_drops() - before;
    let retx = summary["retransmissions"].as_u64().unwrap();
    assert!(dropped > 0, "no buffer drops: {summary}");
    assert!(
        retx >= dropped,
        "{retx} retransmissions for {dropped} drops"
    );
    for cc in ["aimd", "cubic", "delay"] {
        let summary = get(&a, &name, &out, &["--cc", cc]);
        assert_eq!(file_sha(&out), sha, "{cc}");
        assert!(
            summary["rtt_min_ms"].as_f64().unwrap() >= 10.0,
            "{cc}: {summary}"
        );
    }
}

fn node_app(node: &Path, uplink: &str, args: &[&str]) -> Background {
    let mut child = Command::new(node)
        .arg(ndnts_dir().join("app.mjs"))
        .args(args)
        .env("NDNTS_UPLINK", uplink)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    // Transport events are not results.
    let lines = read_lines(stdout, |l| (!l.contains("\"event\"")).then_some(l));
    Background { child, lines }
}

fn json_line(bg: &Background, secs: u64) -> Value {
    serde_json::from_str(&bg.next_line(secs)).unwrap()
}

#[test]
fn put_objects_are_fetched_by_python_ndn_and_ndnts() {
    let d = Daemon::start("");
    let (file, sha) = write_object(&d, "obj", 3 * MIB, 5);
    let (_producer, name) = put(&d, &file, "/interop/put", &["--payload", "4400"]);
    if let Some(py) = python() {
        let r = App::run(&py, &d.transport(), &["fetch-object", "--name", &name]);
        assert_eq!(r["sha256"], sha.as_str(), "python-ndn: {r}");
        assert_eq!(r["segments"], (3 * MIB).div_ceil(4400));
    }
    if let Some(node) = node() {
        let uplink = format!("unix://{}", d.unix.display());
        let mut app = node_app(&node, &uplink, &["fetch-object", "--name", &name]);
        let r = json_line(&app, 120);
        assert_eq!(r["sha256"], sha.as_str(), "NDNts: {r}");
        app.wait(30);
    }
}

#[test]
fn get_fetches_objects_served_by_python_ndn_and_ndnts() {
    let d = Daemon::start("");
    let size = (2 * MIB + 123).to_string();
    if let Some(py) = python() {
        let producer = App::producer(
            &py,
            &d.transport(),
            &[
                "serve-object",
                "--prefix",
                "/interop/py",
                "--size",
                &size,
                "--segment",
                "4000",
            ],
        );
        let _ = &producer;
        let out = d.dir.path().join("from-python");
        let summary = get(&d, "/interop/py", &out, &[]);
        let produced = App::run(
            &py,
            &d.transport(),
            &["fetch-object", "--name", "/interop/py"],
        );
        assert_eq!(file_sha(&out), produced["sha256"].as_str().unwrap());
        assert_eq!(
            summary["name"], "/interop/py",
            "unversioned object: {summary}"
        );
    }
    if let Some(node) = node() {
        let uplink = format!("unix://{}", d.unix.display());
        let producer = node_app(
            &node,
            &uplink,
            &[
                "serve-object",
                "--prefix",
                "/interop/js",
                "--size",
                &size,
                "--segment",
                "4000",
            ],
        );
        let ready = json_line(&producer, 60);
        assert_eq!(ready["ready"], true, "{ready}");
        let out = d.dir.path().join("from-ndnts");
        get(&d, "/interop/js", &out, &[]);
        assert_eq!(file_sha(&out), ready["sha256"].as_str().unwrap());
    }
}

/// Builds the C ABI library (same profile as this test) and crates/transport-ffi's C example.
fn c_example(d: &Daemon) -> PathBuf {
    let nameway = Path::new(env!("CARGO_BIN_EXE_nameway"));
    let target = nameway.parent().unwrap();
    let mut build = Command::new(env!("CARGO"));
    build.args(["build", "--quiet", "-p", "nameway-transport-ffi"]);
    if target.file_name().is_some_and(|n| n == "release") {
        build.arg("--release");
    }
    let status = build
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .unwrap();
    assert!(
        status.success(),
        "cargo build -p nameway-transport-ffi failed"
    );
    let ffi = Path::new(env!("CARGO_MANIFEST_DIR")).join("../transport-ffi");
    let exe = d.dir.path().join("transfer");
    let out = Command::new("cc")
        .arg("-Wall")
        .arg("-Werror")
        .arg("-I")
        .arg(ffi.join("include"))
        .arg(ffi.join("examples/transfer.c"))
        .arg("-L")
        .arg(target)
        .arg("-lnameway")
        .arg(format!("-Wl,-rpath,{}", target.display()))
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

#[test]
fn the_c_example_sends_and_receives_an_object_through_the_daemon() {
    let d = Daemon::start("");
    let exe = c_example(&d);
    let (file, _) = write_object(&d, "obj", 3 * MIB + 17, 6);
    let (private, public) = keygen(&d, "ed25519");
    for (prefix, extra) in [
        ("/c/plain", vec![]),
        (
            "/c/signed",
            vec![
                "ed25519",
                private.to_str().unwrap(),
                public.to_str().unwrap(),
                "32",
            ],
        ),
    ] {
        let out = Command::new(&exe)
            .arg(d.transport())
            .arg(prefix)
            .arg(&file)
            .args(&extra)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{prefix}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.starts_with(&format!("{prefix}/v=")), "{stdout}");
        assert!(stdout.contains(&format!("ok {}", 3 * MIB + 17)), "{stdout}");
    }
    // A wrong key: the consumer socket reports the verification failure.
    let (_other_private, other_public) = keygen(&d, "ecdsa");
    let out = Command::new(&exe)
        .arg(d.transport())
        .arg("/c/wrong")
        .arg(&file)
        .args([
            "ed25519",
            private.to_str().unwrap(),
            other_public.to_str().unwrap(),
            "0",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("transfer: recv: verification failed for segment 0"),
        "{err}"
    );
}

/// A window is a number of segments, at least one (or `inf`, no limit): `nan` or `0` used to
/// be taken as a window of 1 without a word.
#[test]
fn a_window_that_is_not_a_number_of_segments_is_refused() {
    for (flag, value) in [
        ("--window", "nan"),
        ("--window", "0"),
        ("--window", "0.5"),
        ("--max-window", "NaN"),
        ("--max-window", "0"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_nameway"))
            .args(["get", "/x", flag, value])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {err}");
        assert!(
            err.contains("a number of segments, 1 or more"),
            "{flag} {value}: {err}"
        );
    }
}

/// The daemon's resident memory, from /proc.
fn rss_bytes(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// A producer faster than the content store's disk: a 1 GiB object at full speed through a
/// daemon whose store has a 64 MiB memory tier and a disk tier. The queue toward the
/// content-store server is bounded in bytes, so the daemon's memory stays under its configured
/// sizes plus a fixed margin whatever the disk does, and the Data not cached for want of room
/// are counted, the same in `nameway cs info` and in `/metrics`.
#[test]
fn a_gigabyte_through_a_64_mib_store_keeps_the_daemon_within_its_memory() {
    let http = free_port();
    let store = tempfile::tempdir().unwrap();
    let d = Daemon::start(&format!(
        "[cs]\nmemory_capacity = \"64MiB\"\ndisk_path = {:?}\ndisk_capacity = \"256MiB\"\n\
         [http]\nlisten = \"127.0.0.1:{http}\"\n",
        store.path().join("cs.redb")
    ));
    let file = d.dir.path().join("gigabyte");
    std::fs::File::create(&file)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let (_producer, _) = put(&d, &file, "/big", &["--payload", "8000"]);
    let pid = d.child.id();
    let base = rss_bytes(pid);
    let sampling = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampler = std::thread::spawn({
        let sampling = sampling.clone();
        move || {
            let mut most = 0;
            while sampling.load(std::sync::atomic::Ordering::Relaxed) {
                most = most.max(rss_bytes(pid));
                std::thread::sleep(Duration::from_millis(50));
            }
            most
        }
    });
    let summary = get(&d, "/big", Path::new("/dev/null"), &[]);
    sampling.store(false, std::sync::atomic::Ordering::Relaxed);
    let most = sampler.join().unwrap();
    assert_eq!(summary["bytes"], 1u64 << 30, "{summary}");
    // 64 MiB of memory tier, 16 MiB of insert queue, 16 MiB of the disk store's cache, the
    // faces' queues and the CS-list: under 64 MiB + 192 MiB over the idle daemon.
    let margin = 192 << 20;
    assert!(
        most < base + (64 << 20) + margin,
        "RSS {} MiB (idle {} MiB)",
        most >> 20,
        base >> 20
    );
    let info = d.json(&["cs", "info", "--json"]);
    let drops = info["details"]["insert_drops"].as_u64().unwrap();
    let (_, _, metrics) = http_get(&format!("http://127.0.0.1:{http}"), "/metrics");
    let metrics = String::from_utf8(metrics).unwrap();
    let exported = metrics
        .lines()
        .find_map(|l| l.strip_prefix("nameway_cs_insert_drops_total "))
        .and_then(|v| v.trim().parse::<u64>().ok());
    assert_eq!(exported, Some(drops), "{metrics}");
    eprintln!(
        "1 GiB at full speed: daemon RSS at most {} MiB (idle {} MiB), {drops} Data not cached \
         because the store was behind",
        most >> 20,
        base >> 20
    );
}
