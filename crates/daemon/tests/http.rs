//! The HTTP listener of a real namewayd: Prometheus metrics scraped during a real python-ndn
//! exchange and parsed by the reference parser (`prometheus_client`), the series of a closed
//! face going away, `/api/status`, and the status page in a real headless Chromium.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{free_port, http_get as get, App, Daemon};
use serde_json::Value;

fn http_daemon() -> (Daemon, String) {
    let port = free_port();
    let d = Daemon::start(&format!("[http]\nlisten = \"127.0.0.1:{port}\"\n"));
    (d, format!("http://127.0.0.1:{port}"))
}

/// Scrapes `/metrics` through the `prometheus_client` parser; returns the parsed samples.
fn scrape(py: &Path, base: &str) -> Value {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/scrape_metrics.py");
    let out = Command::new(py)
        .arg(script)
        .arg(format!("{base}/metrics"))
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert!(
        out.status.success() && v["samples"].is_array(),
        "the exposition did not parse: {v} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    v
}

/// The value of the sample `name` whose labels include every pair of `labels`.
fn sample(v: &Value, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    v["samples"].as_array().unwrap().iter().find_map(|s| {
        let matches = s["name"] == name
            && labels
                .iter()
                .all(|(k, want)| s["labels"][*k].as_str() == Some(*want));
        matches.then(|| s["value"].as_f64().unwrap())
    })
}

fn face_ids(v: &Value) -> Vec<String> {
    v["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == "nameway_face_info")
        .map(|s| s["labels"]["face"].as_str().unwrap().to_string())
        .collect()
}

fn has_face_series(v: &Value, face: &str) -> bool {
    v["samples"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["labels"]["face"].as_str() == Some(face))
}

#[test]
fn metrics_count_a_python_ndn_exchange_and_closed_faces_leave() {
    let Some(py) = common::python() else { return };
    let (d, base) = http_daemon();
    let t = d.transport();
    let before = scrape(&py, &base);
    assert_eq!(
        before["types"]["nameway_forwarder_packets"], "counter",
        "{before}"
    );
    assert_eq!(before["types"]["nameway_pit_entries"], "gauge");
    let out_data = |v: &Value| {
        sample(
            v,
            "nameway_forwarder_packets_total",
            &[("direction", "out"), ("type", "data")],
        )
        .unwrap()
    };

    let producer = App::producer(
        &py,
        &t,
        &[
            "serve-object",
            "--prefix",
            "/metrics/obj",
            "--size",
            "40000",
            "--segment",
            "4000",
        ],
    );
    let with_producer = scrape(&py, &base);
    // The producer's face, besides the null face (255).
    let ids: Vec<String> = face_ids(&with_producer)
        .into_iter()
        .filter(|f| f != "255")
        .collect();
    assert_eq!(ids.len(), 1, "only the producer's face: {ids:?}");
    let pf = ids[0].clone();

    let r = App::run(&py, &t, &["fetch-object", "--name", "/metrics/obj"]);
    assert_eq!(r["size"], 40000, "{r}\n{}", d.log());
    let segments = r["segments"].as_f64().unwrap();
    assert_eq!(segments, 10.0);

    let after = scrape(&py, &base);
    // Ten segments came from the producer's face and went down to the consumer.
    let rx_data = sample(
        &after,
        "nameway_face_rx_packets_total",
        &[("face", &pf), ("type", "data")],
    )
    .unwrap();
    let tx_interests = sample(
        &after,
        "nameway_face_tx_packets_total",
        &[("face", &pf), ("type", "interest")],
    )
    .unwrap();
    assert!(rx_data >= segments, "producer face rx data {rx_data}");
    assert!(
        tx_interests >= segments,
        "producer face tx interests {tx_interests}"
    );
    assert!(
        out_data(&after) - out_data(&before) >= segments,
        "forwarder out data {} -> {}",
        out_data(&before),
        out_data(&after)
    );
    assert!(sample(&after, "nameway_face_rx_bytes_total", &[("face", &pf)]).unwrap() > 40000.0);
    assert_eq!(sample(&after, "nameway_pit_entries", &[]), Some(0.0));
    assert!(sample(&after, "nameway_cs_entries", &[]).unwrap() >= segments);
    assert!(
        sample(&after, "nameway_forwarder_satisfied_interests_total", &[]).unwrap() >= segments
    );
    assert!(sample(&after, "process_resident_memory_bytes", &[]).unwrap() > 1e6);
    assert!(sample(&after, "process_cpu_seconds_total", &[]).is_some());
    assert_eq!(
        sample(&after, "nameway_strategy_choice_info", &[("prefix", "/")]),
        Some(1.0)
    );

    // The producer exits: its face closes and every series labelled with it goes.
    drop(producer);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let v = scrape(&py, &base);
        if !has_face_series(&v, &pf) {
            assert!(
                sample(&v, "nameway_faces_closed_total", &[("reason", "peer")]).unwrap() >= 2.0
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "face {pf} still has series after it closed"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn api_status_is_json_and_unknown_paths_are_404() {
    let (_d, base) = http_daemon();
    let (status, head, body) = get(&base, "/api/status");
    assert!(status.contains("200"), "{status}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/json"),
        "{head}"
    );
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert!(
        v["version"].as_str().unwrap().starts_with("nameway "),
        "{v}"
    );
    assert!(v["forwarder"]["pit_capacity"].as_u64().unwrap() > 0, "{v}");
    assert!(v["routes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["prefix"] == "/localhost/nfd"));
    assert_eq!(v["strategies"][0]["prefix"], "/");
    assert!(v["process"]["resident_memory_bytes"].as_u64().unwrap() > 0);
    assert!(v["history"]["t"].is_array());

    let (status, _, body) = get(&base, "/");
    assert!(status.contains("200"), "{status}");
    assert!(String::from_utf8_lossy(&body).contains("<title>Nameway status</title>"));
    for asset in [
        "/app.js",
        "/style.css",
        "/uPlot.iife.min.js",
        "/uPlot.min.css",
    ] {
        let (status, _, body) = get(&base, asset);
        assert!(
            status.contains("200") && !body.is_empty(),
            "{asset}: {status}"
        );
    }
    assert!(get(&base, "/nothing").0.contains("404"));
}

#[test]
fn an_http_listener_that_cannot_bind_is_one_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(
        &config,
        format!(
            "[faces]\nunix = \"{}\"\ntcp = []\nudp = []\n[http]\nlisten = \"127.0.0.1:{port}\"\n",
            dir.path().join("s.sock").display()
        ),
    )
    .unwrap();
    let err = common::refused_start(&config);
    assert!(
        err.contains(&format!(
            "cannot open the HTTP listener on 127.0.0.1:{port}"
        )),
        "{err}"
    );
    assert!(err.contains("in use"), "{err}");
}

fn browser_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/browser");
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if dir.join("node_modules/playwright-core").exists() && Path::new(&chromium).exists() {
        return Some(dir);
    }
    assert!(
        !common::interop_required(),
        "Chromium or playwright-core missing: run scripts/setup-system.sh"
    );
    eprintln!("SKIPPED: Chromium or playwright-core missing (run scripts/setup-system.sh)");
    None
}

#[test]
fn the_status_page_plots_live_traffic_in_a_real_browser() {
    let Some(py) = common::python() else { return };
    let Some(browser) = browser_dir() else { return };
    let (d, base) = http_daemon();
    let t = d.transport();
    let _producer = App::producer(
        &py,
        &t,
        &[
            "serve-object",
            "--prefix",
            "/page/obj",
            "--size",
            "400000",
            "--segment",
            "4000",
        ],
    );
    // Traffic for the whole time the page is open: fetch the object over and over.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let traffic = {
        let (py, t, stop) = (py.clone(), t.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut fetched = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let r = App::run(&py, &t, &["fetch-object", "--name", "/page/obj"]);
                assert_eq!(r["size"], 400000, "{r}");
                fetched += 1;
            }
            fetched
        })
    };
    let artifacts = Path::new(env!("CARGO_TARGET_TMPDIR")).join("status-page");
    let out = Command::new("node")
        .arg(browser.join("status_page.mjs"))
        .arg(format!("{base}/"))
        .arg(&artifacts)
        .arg("8")
        .output()
        .unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let fetched = traffic.join().unwrap();
    assert!(fetched >= 1);
    assert!(
        out.status.success(),
        "browser run failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(line.lines().last().unwrap()).unwrap();
    assert_eq!(v["errors"], serde_json::json!([]), "{v}");
    assert_eq!(v["state"], "live", "{v}");
    assert!(
        v["plots"]["p-rate"].as_f64().unwrap() > 0.0,
        "no exchanges plotted: {v}"
    );
    assert!(
        v["plots"]["p-bytes"].as_f64().unwrap() > 0.0,
        "no throughput plotted: {v}"
    );
    assert!(v["faces_rows"].as_u64().unwrap() >= 1, "{v}");
    assert_eq!(
        v["desktop_overflow_x"], 0,
        "the page scrolls sideways on a laptop: {v}"
    );
    assert_eq!(
        v["phone_overflow_x"], 0,
        "the page scrolls sideways on a phone: {v}"
    );
    for shot in v["screenshots"].as_array().unwrap() {
        let len = std::fs::metadata(shot.as_str().unwrap()).unwrap().len();
        assert!(len > 10_000, "{shot}: {len} bytes");
    }
    eprintln!("status page screenshots: {}", artifacts.display());
}

#[test]
fn running_out_of_descriptors_is_counted_logged_once_and_survived() {
    // namewayd under a 64-descriptor limit, as a unit with a low LimitNOFILE would be.
    let dir = tempfile::tempdir().unwrap();
    let wrapper = dir.path().join("namewayd-64-fds");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nulimit -n 64 || exit 1\nexec {:?} \"$@\"\n",
            env!("CARGO_BIN_EXE_namewayd")
        ),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&wrapper).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&wrapper, perms).unwrap();
    let port = free_port();
    let d = Daemon::start_with(
        &wrapper,
        &format!("[http]\nlisten = \"127.0.0.1:{port}\"\n"),
    );
    let base = format!("http://127.0.0.1:{port}");
    // Wait for the HTTP listener, then take every descriptor the daemon has left, and more.
    let created_before = poll_status(&base)["face_system"]["faces_created"]
        .as_u64()
        .unwrap();
    let held: Vec<_> = (0..120)
        .map(|_| std::os::unix::net::UnixStream::connect(&d.unix).unwrap())
        .collect();
    // Ten and more failed accepts (one every 100 ms) while they are held.
    std::thread::sleep(Duration::from_millis(1500));
    drop(held);
    // Once the connections close, the daemon accepts again: its HTTP listener answers, and
    // the failures are counted.
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        let v = poll_status(&base);
        if v["face_system"]["faces_created"].as_u64().unwrap() >= created_before + 120 {
            break v;
        }
        assert!(Instant::now() < deadline, "connections never accepted: {v}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let errors = status["face_system"]["accept_errors"].as_u64().unwrap();
    assert!(errors >= 5, "{status}");
    let (_, _, metrics) = get(&base, "/metrics");
    let metrics = String::from_utf8_lossy(&metrics);
    let exported: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("nameway_accept_errors_total "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no nameway_accept_errors_total: {metrics}"));
    assert!(exported >= errors, "{exported} < {errors}");
    // Counter names carry `_total` once (three families used to be named `..._total_total`).
    assert!(!metrics.contains("_total_total"), "{metrics}");
    assert!(metrics.contains("# TYPE nameway_dead_nonce_evictions_total counter"));
    // Each family once.
    let mut families: Vec<&str> = metrics
        .lines()
        .filter(|l| l.starts_with("# TYPE "))
        .collect();
    let listed = families.len();
    families.sort_unstable();
    families.dedup();
    assert_eq!(
        families.len(),
        listed,
        "a family is exported twice: {metrics}"
    );
    // One warning for all of them, naming the listener and the remedy, not ten a second.
    let log = d.log();
    let warnings: Vec<_> = log
        .lines()
        .filter(|l| l.contains("accept failed"))
        .collect();
    assert_eq!(warnings.len(), 1, "{log}");
    assert!(warnings[0].contains("Too many open files"), "{log}");
    assert!(warnings[0].contains("raise the open-files limit"), "{log}");
    assert!(warnings[0].contains(&d.unix.display().to_string()), "{log}");
}

/// `/api/status` as JSON, retried until the HTTP listener answers (it opens after the Unix
/// socket, and cannot accept while the daemon has no descriptor left).
fn poll_status(base: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let answer = std::panic::catch_unwind(|| get(base, "/api/status"));
        if let Ok((status, _, body)) = answer {
            if status.contains("200") {
                return serde_json::from_slice(&body).unwrap();
            }
        }
        assert!(Instant::now() < deadline, "no /api/status at {base}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every declared field of `fields` is in each JSON surface, every key of the first surface
/// is declared (nothing exported outside the declaration), and every field with a metric family
/// is in `/metrics` unless its value is empty (a map with no reason yet, an absent option).
fn on_every_surface(
    what: &str,
    fields: &[namewayd::metrics::FieldDecl],
    surfaces: &[(&str, &Value)],
    metrics: &str,
) {
    let (first_name, first) = surfaces[0];
    for key in first.as_object().unwrap().keys() {
        assert!(
            fields.iter().any(|f| f.field == key),
            "{what}: {first_name} has {key:?}, which is not declared"
        );
    }
    for f in fields {
        for (name, s) in surfaces {
            assert!(
                s.get(f.field).is_some(),
                "{what}.{} is missing from {name}: {s}",
                f.field
            );
        }
        let Some(family) = f.family else { continue };
        let value = &first[f.field];
        let empty = value.is_null() || value.as_object().is_some_and(|m| m.is_empty());
        let exported = metrics.contains(&format!("# TYPE {family} "))
            || metrics.contains(&format!("# TYPE {family}_total "));
        assert!(
            exported || empty,
            "{what}.{} ({family}) is missing from /metrics",
            f.field
        );
    }
}

#[test]
fn every_declared_counter_is_on_every_surface() {
    use nameway_transport::client::{Client, Transport};
    use nameway_wire::Interest;
    use namewayd::mgmt::cs::{Tier, Tiers};
    use namewayd::mgmt::faces::FaceStats;
    use namewayd::mgmt::status::{FaceSystemStats, ForwarderStats};

    let port = free_port();
    let store = tempfile::tempdir().unwrap();
    let disk = store.path().join("cs.redb");
    let key = store.path().join("routing.key");
    let d = Daemon::start(&format!(
        "[http]\nlisten = \"127.0.0.1:{port}\"\n[forwarder]\ncoalesce = \"auto\"\n\
         [cs]\ndisk_path = {disk:?}\n\
         [routing]\nmode = \"secure\"\nidentity = {key:?}\nrib_service = true\n\
         [[routing.rib]]\nprefix = \"/example/32=RIB\"\n"
    ));
    let base = format!("http://127.0.0.1:{port}");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = Client::connect(Transport::parse(&d.transport()).unwrap())
            .await
            .unwrap();
        // A drop on this face (no route), so the per-face drop families have a sample.
        let nowhere = Interest::new("/nowhere/at/all".parse().unwrap());
        let _ = c.express(&nowhere, Duration::from_secs(2)).await;
        let json = |raw: bytes::Bytes| serde_json::from_slice::<Value>(&raw).unwrap();
        let counters = json(c.dataset("status", "counters").await.unwrap());
        let faces = json(c.dataset("faces", "drops").await.unwrap());
        let tiers = json(c.dataset("cs", "tiers").await.unwrap());
        let routing = json(c.dataset("routing", "status").await.unwrap());
        let (_, _, body) = get(&base, "/api/status");
        let status: Value = serde_json::from_slice(&body).unwrap();
        let (_, _, body) = get(&base, "/metrics");
        let metrics = String::from_utf8(body).unwrap();

        on_every_surface(
            "forwarder",
            ForwarderStats::FIELDS,
            &[
                ("/api/status", &status["forwarder"]),
                ("status/counters", &counters["forwarder"]),
            ],
            &metrics,
        );
        on_every_surface(
            "face_system",
            FaceSystemStats::FIELDS,
            &[
                ("/api/status", &status["face_system"]),
                ("status/counters", &counters["face_system"]),
            ],
            &metrics,
        );
        // This client's face: the one that dropped the Interest.
        let mine = |list: &Value| {
            list.as_array()
                .unwrap()
                .iter()
                .find(|f| f["drops"]["no-route"].as_u64() > Some(0))
                .cloned()
                .unwrap_or_else(|| panic!("no face with a no-route drop: {list}"))
        };
        let (api_face, mgmt_face) = (mine(&status["faces"]), mine(&faces));
        on_every_surface(
            "face",
            FaceStats::FIELDS,
            &[("/api/status", &api_face), ("faces/drops", &mgmt_face)],
            &metrics,
        );
        on_every_surface(
            "cs",
            Tiers::FIELDS,
            &[("/api/status", &status["cs"]), ("cs/tiers", &tiers)],
            &metrics,
        );
        for tier in ["memory", "disk"] {
            on_every_surface(
                tier,
                Tier::FIELDS,
                &[
                    ("/api/status", &status["cs"][tier]),
                    ("cs/tiers", &tiers[tier]),
                ],
                &metrics,
            );
        }
        assert!(
            metrics.contains("nameway_cs_tier_entries{tier=\"disk\"}"),
            "{metrics}"
        );
        on_every_surface(
            "routing",
            namewayd::routing::stats::RoutingStats::FIELDS,
            &[
                ("/api/status", &status["routing"]),
                ("routing/status", &routing["stats"]),
            ],
            &metrics,
        );
        assert!(
            metrics.contains(
                "nameway_routing_rejected_total{where=\"announce\",reason=\"name_key_mismatch\"} 0"
            ),
            "{metrics}"
        );
        on_every_surface(
            "coalesce",
            namewayd::coalesce::CoalesceStats::FIELDS,
            &[("/api/status", &status["coalesce"])],
            &metrics,
        );
        on_every_surface(
            "process",
            namewayd::http::Process::FIELDS,
            &[("/api/status", &status["process"])],
            &metrics,
        );
        drop(c);
    });
}
