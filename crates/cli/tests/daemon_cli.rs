//! `nameway` against a real `namewayd`: management round trips with `--json`, ping against
//! ping-server, peek/poke, Nacks, a burst of 10^4 Interests, and the errors a user sees.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{free_port, run, Background, Daemon};
use serde_json::Value;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn array(v: &Value) -> &Vec<Value> {
    v.as_array().unwrap_or_else(|| panic!("not an array: {v}"))
}

#[test]
fn no_daemon_means_exit_1_and_a_message_naming_the_socket() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("nfd.sock");
    let uri = format!("unix://{}", sock.display());
    for args in [
        vec!["--transport".to_owned(), uri.clone(), "status".to_owned()],
        vec![
            "face".to_owned(),
            "list".to_owned(),
            "--transport".to_owned(),
            uri.clone(),
        ],
    ] {
        let out = run(&args, b"");
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!("cannot connect to the forwarder at {uri}")),
            "{err}"
        );
        assert!(
            err.contains("is namewayd running? set NDN_CLIENT_TRANSPORT or --transport"),
            "{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    // Without --transport, NDN_CLIENT_TRANSPORT or client.conf: the platform default.
    if !std::path::Path::new("/run/nfd/nfd.sock").exists()
        && !std::path::Path::new("/run/nfd.sock").exists()
    {
        let out = run(&["status".to_owned()], b"");
        assert_eq!(out.status.code(), Some(1));
        assert!(
            stderr(&out).contains("cannot connect to the forwarder at unix:///run/nfd/nfd.sock"),
            "{}",
            stderr(&out)
        );
    }
    // TCP with nothing listening, and a URI that is not one.
    let port = free_port();
    let out = run(
        &[
            "--transport".to_owned(),
            format!("tcp://127.0.0.1:{port}"),
            "route".to_owned(),
            "list".to_owned(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains(&format!("at tcp://127.0.0.1:{port}")));
    let out = run(
        &[
            "--transport".to_owned(),
            "unix://relative".to_owned(),
            "status".to_owned(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("use unix:///path"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn status_reports_the_forwarder() {
    let d = Daemon::start("");
    let s = d.json(&["status", "--json"]);
    assert!(s["version"].as_str().unwrap().starts_with("nameway"), "{s}");
    assert!(s["n_faces"].as_u64().unwrap() >= 1, "{s}");
    assert!(s["n_fib_entries"].as_u64().unwrap() >= 1, "{s}");
    assert!(s["current_timestamp_ms"].as_u64() >= s["start_timestamp_ms"].as_u64());
    let text = d.nameway(&["status"]);
    assert!(text.status.success());
    assert!(String::from_utf8_lossy(&text.stdout).contains("nFibEntries"));
}

#[test]
fn faces_are_created_listed_and_destroyed() {
    let d = Daemon::start("");
    let port = free_port();
    let uri = format!("udp4://127.0.0.1:{port}");
    let created = d.json(&["face", "create", &uri, "--json"]);
    let id = created["face_id"].as_u64().unwrap();
    assert_eq!(created["uri"], uri.as_str());
    assert_eq!(created["persistency"], "persistent");
    let faces = d.json(&["face", "list", "--json"]);
    let face = array(&faces)
        .iter()
        .find(|f| f["face_id"] == id)
        .unwrap_or_else(|| panic!("face {id} not listed: {faces}"));
    assert_eq!(face["uri"], uri.as_str());
    assert_eq!(face["scope"], "non-local");
    assert_eq!(face["persistency"], "persistent");
    // Creating it again succeeds as nfdc's does (409 face-exists, exit 0) and names it.
    let again = d.nameway(&["face", "create", &uri]);
    assert!(again.status.success(), "{}", stderr(&again));
    let said = String::from_utf8_lossy(&again.stdout).to_string();
    assert!(said.contains(&format!("face-exists id={id}")), "{said}");
    assert!(said.contains("persistency=persistent"), "{said}");
    // Asking for more persistency upgrades it (namewayd raises it on faces/create; against
    // NFD the CLI sends faces/update, as nfdc does); asking for less leaves it.
    let up = d.json(&[
        "face",
        "create",
        &uri,
        "--persistency",
        "permanent",
        "--json",
    ]);
    assert!(
        up["result"] == "face-exists" || up["result"] == "face-updated",
        "{up}"
    );
    assert_eq!(up["face"]["face_id"], id, "{up}");
    assert_eq!(up["face"]["persistency"], "permanent", "{up}");
    let same = d.json(&["face", "create", &uri, "--json"]);
    assert_eq!(same["result"], "face-exists", "{same}");
    assert_eq!(same["face"]["persistency"], "permanent", "{same}");
    let faces = d.json(&["face", "list", "--json"]);
    let face = array(&faces).iter().find(|f| f["face_id"] == id).unwrap();
    assert_eq!(face["persistency"], "permanent", "{faces}");
    // A route toward it, by URI, then destroy it by id: its routes go too.
    d.json(&["route", "add", "/via/udp", &uri, "--json"]);
    let destroyed = d.json(&["face", "destroy", &id.to_string(), "--json"]);
    assert_eq!(destroyed["face_id"], id);
    let faces = d.json(&["face", "list", "--json"]);
    assert!(!array(&faces).iter().any(|f| f["face_id"] == id), "{faces}");
    let routes = d.json(&["route", "list", "--json"]);
    assert!(!array(&routes).iter().any(|r| r["prefix"] == "/via/udp"));
    let gone = d.nameway(&["face", "destroy", &id.to_string()]);
    assert_eq!(gone.status.code(), Some(1));
    assert!(
        stderr(&gone).contains("nameway face list"),
        "{}",
        stderr(&gone)
    );
}

#[test]
fn routes_are_added_listed_and_removed() {
    let d = Daemon::start("");
    let port = free_port();
    let created = d.json(&[
        "face",
        "create",
        &format!("udp4://127.0.0.1:{port}"),
        "--json",
    ]);
    let id = created["face_id"].as_u64().unwrap();
    let ids = id.to_string();
    let added = d.json(&[
        "route",
        "add",
        "/test/route",
        &ids,
        "--cost",
        "7",
        "--expires",
        "600000",
        "--json",
    ]);
    assert_eq!(added["prefix"], "/test/route");
    assert_eq!(added["face_id"], id);
    assert_eq!(added["cost"], 7);
    let routes = d.json(&["route", "list", "--json"]);
    let r = array(&routes)
        .iter()
        .find(|r| r["prefix"] == "/test/route")
        .unwrap_or_else(|| panic!("route not listed: {routes}"));
    assert_eq!(r["face_id"], id);
    assert_eq!(r["cost"], 7);
    assert_eq!(r["origin"], 255);
    assert_eq!(r["child_inherit"], true);
    assert!(r["expires_ms"].as_u64().unwrap() <= 600_000);
    let fib = d.json(&["route", "list", "--fib", "--json"]);
    assert!(
        array(&fib)
            .iter()
            .any(|h| h["prefix"] == "/test/route" && h["face_id"] == id && h["cost"] == 7),
        "{fib}"
    );
    d.json(&["route", "remove", "/test/route", &ids, "--json"]);
    let routes = d.json(&["route", "list", "--json"]);
    assert!(!array(&routes).iter().any(|r| r["prefix"] == "/test/route"));
    let fib = d.json(&["route", "list", "--fib", "--json"]);
    assert!(!array(&fib).iter().any(|h| h["prefix"] == "/test/route"));
    // Toward a face that does not exist.
    let bad = d.nameway(&["route", "add", "/x", "999999"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).contains("no face 999999"), "{}", stderr(&bad));
}

#[test]
fn strategies_are_set_listed_and_unset() {
    let d = Daemon::start("");
    let set = d.json(&["strategy", "set", "/test/s", "multicast", "--json"]);
    assert_eq!(set["prefix"], "/test/s");
    let list = d.json(&["strategy", "list", "--json"]);
    let choice = array(&list)
        .iter()
        .find(|c| c["prefix"] == "/test/s")
        .unwrap_or_else(|| panic!("not listed: {list}"));
    let strategy = choice["strategy"].as_str().unwrap();
    assert!(
        strategy.starts_with("/localhost/nfd/strategy/multicast/v="),
        "{strategy}"
    );
    assert!(array(&list).iter().any(|c| c["prefix"] == "/"));
    d.json(&["strategy", "unset", "/test/s", "--json"]);
    let list = d.json(&["strategy", "list", "--json"]);
    assert!(!array(&list).iter().any(|c| c["prefix"] == "/test/s"));
    // Non-200 → exit 1 with the code and the text.
    let bad = d.nameway(&["strategy", "set", "/test/s", "no-such-strategy"]);
    assert_eq!(bad.status.code(), Some(1));
    let err = stderr(&bad);
    assert!(err.contains("strategy-choice/set failed: 404"), "{err}");
}

#[test]
fn asf_is_chosen_with_nfd_parameters_and_bad_ones_are_refused() {
    let d = Daemon::start("");
    d.json(&["strategy", "set", "/test/asf", "asf", "--json"]);
    d.json(&[
        "strategy",
        "set",
        "/test/asf2",
        "/localhost/nfd/strategy/asf/v=5/probing-interval~30000/n-silent-timeouts~2",
        "--json",
    ]);
    let list = d.json(&["strategy", "list", "--json"]);
    let of = |p: &str| {
        array(&list)
            .iter()
            .find(|c| c["prefix"] == p)
            .map(|c| c["strategy"].as_str().unwrap().to_string())
    };
    assert_eq!(
        of("/test/asf").as_deref(),
        Some("/localhost/nfd/strategy/asf/v=5")
    );
    assert_eq!(
        of("/test/asf2").as_deref(),
        Some("/localhost/nfd/strategy/asf/v=5/probing-interval~30000/n-silent-timeouts~2")
    );
    let bad = d.nameway(&[
        "strategy",
        "set",
        "/test/asf3",
        "/localhost/nfd/strategy/asf/v=5/probing-interval~10",
    ]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).contains("400"), "{}", stderr(&bad));
    let s = d.json(&["status", "--json"]);
    assert!(s["n_measurements_entries"].is_u64(), "{s}");
}

#[test]
fn content_store_is_configured_and_erased() {
    let d = Daemon::start("");
    let done = d.json(&["cs", "config", "--capacity", "1234", "--json"]);
    assert_eq!(done["capacity"], 1234);
    let info = d.json(&["cs", "info", "--json"]);
    assert_eq!(info["capacity"], 1234);
    assert_eq!(info["admit"], true);
    assert_eq!(info["serve"], true);
    let done = d.json(&["cs", "config", "--admit", "off", "--serve", "on", "--json"]);
    assert_eq!(done["admit"], false);
    let info = d.json(&["cs", "info", "--json"]);
    assert_eq!(info["admit"], false);
    assert_eq!(info["serve"], true);
    assert_eq!(info["capacity"], 1234);
    let erased = d.json(&["cs", "erase", "/nothing/here", "--json"]);
    assert_eq!(erased["prefix"], "/nothing/here");
    assert_eq!(erased["n_erased"], 0);
}

#[test]
fn cached_data_is_erased() {
    let d = Daemon::start("");
    let mut poke = d.spawn(&["poke", "/cached/item", "-f", "60000"], b"payload");
    d.wait_for_route("/cached/item");
    assert!(d.nameway(&["peek", "/cached/item"]).status.success());
    assert_eq!(poke.wait(10), Some(0));
    // The producer is gone; the CS still answers, until erased.
    let again = d.nameway(&["peek", "/cached/item", "--payload-only"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(again.stdout, b"payload");
    let erased = d.json(&["cs", "erase", "/cached", "--json"]);
    assert_eq!(erased["n_erased"], 1, "{erased}");
    let after = d.nameway(&["peek", "/cached/item"]);
    assert_eq!(after.status.code(), Some(4), "{}", stderr(&after));
}

#[test]
fn ping_against_ping_server_loses_nothing() {
    let d = Daemon::start("");
    let server = d.spawn(&["ping-server", "/test/pinger", "--size", "100"], b"");
    assert_eq!(server.next_line(20), "PING SERVER /test/pinger");
    let summary = d.json(&[
        "ping",
        "/test/pinger",
        "-c",
        "10",
        "-i",
        "20",
        "-n",
        "100",
        "--json",
    ]);
    assert_eq!(summary["transmitted"], 10, "{summary}");
    assert_eq!(summary["received"], 10, "{summary}");
    assert_eq!(summary["lost"], 0);
    assert_eq!(summary["lost_percent"], 0.0);
    let rtt = &summary["rtt_ms"];
    assert!(rtt["min"].as_f64() <= rtt["avg"].as_f64());
    assert!(rtt["avg"].as_f64() <= rtt["max"].as_f64());
    // The server saw ndnping names: <prefix>/ping/<seq>.
    for seq in 100..110 {
        assert_eq!(server.next_line(5), format!("interest received: seq={seq}"));
    }
    // Text output, like ndnping's.
    let out = d.nameway(&["ping", "/test/pinger", "-c", "3", "-i", "10", "-n", "7"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("PING /test/pinger\n"), "{text}");
    assert!(
        text.contains("content from /test/pinger: seq=7 time="),
        "{text}"
    );
    assert!(text.contains("3 packets transmitted, 3 received"), "{text}");
    assert!(text.contains("rtt min/avg/max/mdev = "), "{text}");
}

#[test]
fn ping_without_a_server_is_nacked() {
    let d = Daemon::start("");
    let out = d.nameway(&["ping", "/nobody", "-c", "2", "-i", "10", "-n", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("nack from /nobody: seq=1 time="), "{text}");
    assert!(text.contains("reason=NoRoute"), "{text}");
    assert!(text.contains("2 nacked"), "{text}");
}

#[test]
fn peek_and_poke_round_trip() {
    let d = Daemon::start("");
    let content = b"hello from poke\n";
    let mut poke = d.spawn(&["poke", "/test/poke/item", "-f", "1000"], content);
    d.wait_for_route("/test/poke/item");
    let out = d.nameway(&["peek", "/test/poke/item", "--payload-only"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(out.stdout, content);
    assert_eq!(poke.wait(10), Some(0));
    // Without --payload-only: the whole Data, which `nameway dissect` reads.
    let mut poke = d.spawn(&["poke", "/test/other/whole"], b"abc");
    d.wait_for_route("/test/other/whole");
    let out = d.nameway(&["peek", "/test/other", "-p", "--hex"]);
    assert_eq!(
        out.status.code(),
        Some(4),
        "no route for the shorter /test/other, nothing cached under it"
    );
    let out = d.nameway(&["peek", "/test/other/whole", "--hex"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let tree = run(&["dissect".to_owned(), "--hex".to_owned()], &out.stdout);
    assert!(tree.status.success(), "{}", stderr(&tree));
    let tree = String::from_utf8_lossy(&tree.stdout);
    assert!(tree.contains("/test/other/whole"), "{tree}");
    assert_eq!(poke.wait(10), Some(0));
}

#[test]
fn poke_gives_up_after_its_timeout() {
    let d = Daemon::start("");
    let mut poke = d.spawn(&["poke", "/test/nobody/asks", "-w", "300"], b"x");
    assert_eq!(poke.wait(20), Some(3));
}

#[test]
fn peek_without_route_exits_4_with_noroute() {
    let d = Daemon::start("");
    let out = d.nameway(&["peek", "/no/route/here"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("NoRoute"), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
}

#[test]
fn the_null_face_black_holes_a_prefix_and_cannot_be_destroyed() {
    // A route to null:// from the config, and two from the CLI (by URI and by FaceId).
    let d = Daemon::start("[[route]]\nprefix = \"/bh/config\"\nface = \"null://\"\n");
    let faces = d.json(&["face", "list", "--json"]);
    let null = array(&faces)
        .iter()
        .find(|f| f["face_id"] == 255)
        .unwrap_or_else(|| panic!("no face 255: {faces}"))
        .clone();
    assert_eq!(null["uri"], "null://", "{null}");
    assert_eq!(null["local_uri"], "null://", "{null}");
    assert_eq!(null["persistency"], "permanent", "{null}");
    d.json(&["route", "add", "/bh/uri", "null://", "--json"]);
    d.json(&["route", "add", "/bh/id", "255", "--json"]);
    let fib = d.json(&["route", "list", "--fib", "--json"]);
    for p in ["/bh/config", "/bh/uri", "/bh/id"] {
        assert!(
            array(&fib)
                .iter()
                .any(|e| e["prefix"] == p && e.to_string().contains("255")),
            "{p} not routed to 255: {fib}"
        );
    }
    // Interests under each prefix time out (no Nack) and the null face counts them.
    for name in ["/bh/config/x", "/bh/uri/x", "/bh/id/x"] {
        let out = d.nameway(&["peek", name, "-l", "300"]);
        assert_eq!(out.status.code(), Some(3), "{name}: {}", stderr(&out));
        assert!(stderr(&out).contains("timeout"), "{}", stderr(&out));
    }
    let faces = d.json(&["face", "list", "--json"]);
    let null = array(&faces).iter().find(|f| f["face_id"] == 255).unwrap();
    assert_eq!(null["n_out_interests"], 3, "{null}");
    assert!(null["n_out_bytes"].as_u64().unwrap() > 0, "{null}");
    // Permanent: destroying it is refused, and it stays.
    let out = d.nameway(&["face", "destroy", "255"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("403") || stderr(&out).contains("permanent"),
        "{}",
        stderr(&out)
    );
    let faces = d.json(&["face", "list", "--json"]);
    assert!(array(&faces).iter().any(|f| f["face_id"] == 255));
}

#[test]
fn peek_timeout_exits_3() {
    let d = Daemon::start("");
    // A route toward a UDP face where nobody answers: the Interest times out.
    let port = free_port();
    let created = d.json(&[
        "face",
        "create",
        &format!("udp4://127.0.0.1:{port}"),
        "--json",
    ]);
    let id = created["face_id"].as_u64().unwrap().to_string();
    d.json(&["route", "add", "/silent", &id, "--json"]);
    let out = d.nameway(&["peek", "/silent/x", "-l", "300"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("timeout"), "{}", stderr(&out));
}

#[test]
fn management_over_tcp_works_and_over_udp_explains_why_not() {
    let d = Daemon::start("");
    let tcp = format!("tcp://127.0.0.1:{}", d.tcp);
    let out = run(
        &[
            "--transport".to_owned(),
            tcp,
            "cs".to_owned(),
            "info".to_owned(),
            "--json".to_owned(),
        ],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let udp = format!("udp://127.0.0.1:{}", d.udp);
    let out = run(&["--transport".to_owned(), udp, "status".to_owned()], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("not a local face"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_burst_of_ten_thousand_interests_completes() {
    let d = Daemon::start("");
    let pid = d.child.id().to_string();
    let report = d.json(&[
        "bench",
        "--interests",
        "10000",
        "--window",
        "8",
        "--runs",
        "1",
        "--daemon-pid",
        &pid,
        "--json",
    ]);
    let r = &report["results"][0];
    assert_eq!(r["consumers"], 1);
    assert_eq!(r["completed"], 10_000, "{report}");
    assert_eq!(r["nacks"], 0);
    assert_eq!(r["timeouts"], 0);
    assert_eq!(
        r["producer_answered"], 10_000,
        "unique names: no cache hits"
    );
    assert!(r["median_exchanges_per_s"].as_f64().unwrap() > 0.0);
    assert!(
        r["daemon_cpu_us_per_exchange"].as_f64().is_some(),
        "{report}"
    );
    assert_eq!(report["daemon_pid"], d.child.id());
}

#[test]
fn bench_over_udp_with_a_local_producer_and_cache_hits() {
    let d = Daemon::start("");
    let udp = format!("udp://127.0.0.1:{}", d.udp);
    let args = [
        "--transport",
        &udp,
        "bench",
        "--producer-transport",
        &d.transport(),
        "--consumers",
        "1,2",
        "--interests",
        "2000",
        "--window",
        "4",
        "--runs",
        "1",
        "--json",
    ];
    let out = run(&args.map(str::to_owned), b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["transport"], udp.as_str());
    for r in array(&report["results"]) {
        assert_eq!(r["completed"], 2000, "{report}");
    }
    // The pool is fetched once in the warm-up; the measured run is served by the CS.
    let report = d.json(&[
        "bench",
        "--cache-hit",
        "--interests",
        "2000",
        "--window",
        "4",
        "--runs",
        "1",
        "--json",
    ]);
    let r = &report["results"][0];
    assert_eq!(r["completed"], 2000, "{report}");
    assert_eq!(r["producer_answered"], 0, "{report}");
    // A UDP consumer transport alone cannot register the producer: say what to do.
    let out = run(
        &[
            "--transport".to_owned(),
            udp,
            "bench".to_owned(),
            "--producer-transport".to_owned(),
            format!("udp://127.0.0.1:{}", d.udp),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("--producer-transport unix://"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_list_right_after_a_change_is_not_served_stale_from_the_cache() {
    let d = Daemon::start("");
    // Datasets are fresh for 1 s in the Content Store: list, change, list again at once.
    let before = d.json(&["face", "list", "--json"]);
    let port = free_port();
    let uri = format!("udp4://127.0.0.1:{port}");
    let id = d.json(&["face", "create", &uri, "--json"])["face_id"].clone();
    let after = d.json(&["face", "list", "--json"]);
    assert!(!array(&before).iter().any(|f| f["face_id"] == id));
    assert!(array(&after).iter().any(|f| f["face_id"] == id), "{after}");
}

#[test]
fn management_commands_answer_at_once_one_after_another() {
    // The CLI used to be answered from the Content Store by the previous command's dataset,
    // and then slept until that copy went stale (~1 s per command). Management Data is now
    // NoCache, so every command reaches management and needs no wait.
    let d = Daemon::start("");
    // Thirteen commands, each a new process: with the old wait they took at least 12 s in all.
    // The bound is on the total, so one slow process start on a loaded machine does not fail
    // the test.
    let commands: Vec<&[&str]> = [&["status"][..]; 10]
        .into_iter()
        .chain([&["face", "list"][..], &["route", "list"], &["cs", "info"]])
        .collect();
    let started = std::time::Instant::now();
    for args in &commands {
        let out = d.nameway(args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    let took = started.elapsed();
    assert!(
        took < std::time::Duration::from_secs(6),
        "{} commands took {took:?}",
        commands.len()
    );
    let cs = d.json(&["cs", "info", "--json"]);
    assert_eq!(cs["n_entries"], 0, "management Data was cached: {cs}");
}

/// Rewrites the running daemon's config file (the fixture's first lines kept) and sends SIGHUP.
fn reload(d: &Daemon, extra: &str) {
    let path = d.dir.path().join("namewayd.toml");
    let config = format!(
        "[faces]\nunix = {:?}\ntcp = [\"127.0.0.1:{}\"]\nudp = [\"127.0.0.1:{}\"]\n{extra}\n",
        d.unix, d.tcp, d.udp
    );
    std::fs::write(&path, config).unwrap();
    let status = std::process::Command::new("kill")
        .args(["-HUP", &d.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Polls `args` until `check` holds (the reload is applied asynchronously), within 10 s.
fn eventually(d: &Daemon, args: &[&str], check: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let v = d.json(args);
        if check(&v) {
            return v;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{args:?} never matched: {v}\n{}",
            d.log()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn sighup_reloads_routes_strategies_and_the_content_store() {
    let face = format!("udp4://127.0.0.1:{}", free_port());
    let first = format!(
        "[cs]\ncapacity = 1000\n[[face]]\nuri = \"{face}\"\n[[route]]\nprefix = \"/old\"\nface = \"{face}\"\n\
         [[route]]\nprefix = \"/kept\"\nface = \"{face}\"\n[[strategy]]\nprefix = \"/m\"\nstrategy = \"/localhost/nfd/strategy/multicast\"\n"
    );
    let d = Daemon::start(&first);
    let prefixes = |v: &Value| -> Vec<String> {
        array(v)
            .iter()
            .map(|r| r["prefix"].as_str().unwrap().to_string())
            .collect()
    };
    let routes = d.json(&["route", "list", "--json"]);
    assert!(prefixes(&routes).contains(&"/old".to_string()), "{routes}");
    // A route added by management must survive reloads.
    assert!(d
        .nameway(&["route", "add", "/mine", &face])
        .status
        .success());

    let second = format!(
        "[log]\nlevel = \"debug\"\n[cs]\ncapacity = 2000\nadmit = false\n[[face]]\nuri = \"{face}\"\n\
         [[route]]\nprefix = \"/kept\"\nface = \"{face}\"\n[[route]]\nprefix = \"/new\"\nface = \"{face}\"\n\
         [[strategy]]\nprefix = \"/n\"\nstrategy = \"/localhost/nfd/strategy/multicast\"\n"
    );
    reload(&d, &second);
    let routes = eventually(&d, &["route", "list", "--json"], |v| {
        let p = prefixes(v);
        p.contains(&"/new".to_string()) && !p.contains(&"/old".to_string())
    });
    let p = prefixes(&routes);
    assert!(
        p.contains(&"/kept".to_string()) && p.contains(&"/mine".to_string()),
        "{routes}"
    );
    let cs = d.json(&["cs", "info", "--json"]);
    assert_eq!(cs["capacity"], 2000, "{cs}");
    assert_eq!(cs["admit"], false, "{cs}");
    let choices = d.json(&["strategy", "list", "--json"]);
    let chosen: Vec<&str> = array(&choices)
        .iter()
        .map(|c| c["prefix"].as_str().unwrap())
        .collect();
    assert!(
        chosen.contains(&"/n") && !chosen.contains(&"/m"),
        "{choices}"
    );

    // A refused file changes nothing and the daemon keeps running.
    reload(&d, "[cs]\ncapacty = 5\n");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !d.log().contains("configuration refused") {
        assert!(std::time::Instant::now() < deadline, "{}", d.log());
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(d.log().contains("capacty"), "{}", d.log());
    assert_eq!(d.json(&["cs", "info", "--json"])["capacity"], 2000);
    assert!(prefixes(&d.json(&["route", "list", "--json"])).contains(&"/new".to_string()));
}

/// Gives a `nameway capture` just started time to connect and send `capture/start` (answered
/// at once by management); the tests check what was captured, never how fast.
/// Waits for `nameway capture` to say it has started (its first line on stderr), so that the
/// forwarder mirrors from then on and Ctrl-C is caught.
fn wait_for_capture_start(cap: &mut Background) {
    let err = cap.child.stderr.as_mut().unwrap();
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while std::io::Read::read(err, &mut byte).unwrap() == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    let line = String::from_utf8_lossy(&line);
    assert!(line.contains("capturing"), "capture did not start: {line}");
}

#[test]
fn capture_writes_a_pcap_that_dissect_and_tcpdump_read() {
    let d = Daemon::start("");
    let mut server = d.spawn(&["ping-server", "/cap"], b"");
    d.wait_for_route("/cap/ping");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cap.pcap");
    let file_s = file.to_str().unwrap().to_owned();
    let mut cap = d.spawn(
        &["capture", "-w", &file_s, "-c", "8", "--duration", "20"],
        b"",
    );
    wait_for_capture_start(&mut cap);
    let out = d.nameway(&["ping", "/cap", "-c", "2", "-i", "100"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let status = cap.child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(cap.child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{status}: {err}");
    assert!(err.contains("8 packets"), "{err}");
    assert!(err.contains("dropped 0"), "{err}");
    // The dissection shows both Interests and both Data, in and out.
    let dis = d.nameway(&["dissect", "--pcap", &file_s]);
    assert!(dis.status.success(), "{}", stderr(&dis));
    let text = String::from_utf8_lossy(&dis.stdout);
    assert_eq!(text.matches("# packet").count(), 8, "{text}");
    assert_eq!(text.matches("5 (Interest)").count(), 4, "{text}");
    assert_eq!(text.matches("6 (Data)").count(), 4, "{text}");
    assert!(text.contains("/cap/ping/"), "{text}");
    // Standard tools read the file (tcpdump comes with scripts/setup-system.sh).
    match std::process::Command::new("tcpdump")
        .args(["-nn", "-r", &file_s])
        .output()
    {
        Ok(t) => {
            assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
            let lines = String::from_utf8_lossy(&t.stdout);
            assert_eq!(lines.lines().count(), 8, "{lines}");
            assert!(lines.contains("127.0.0.1.6363"), "{lines}");
        }
        Err(_) => {
            let required = std::env::var_os("NAMEWAY_REQUIRE_INTEROP").is_some()
                || std::env::var_os("CI").is_some();
            assert!(!required, "tcpdump missing: run scripts/setup-system.sh");
        }
    }
    let _ = server.child.kill();
}

#[test]
fn a_capture_that_is_not_read_neither_slows_nor_stops_forwarding() {
    let d = Daemon::start("");
    // A capture whose reader is stopped (SIGSTOP): its records pile up in its send queue.
    let mut cap = d.spawn(&["capture", "--duration", "60"], b"");
    wait_for_capture_start(&mut cap);
    let pid = cap.child.id().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-STOP", &pid])
        .status()
        .unwrap()
        .success());
    // Ten thousand exchanges through the forwarder meanwhile: all complete.
    let out = d.nameway(&["bench", "--interests", "10000", "--runs", "1", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["results"][0]["completed"], 10000, "{v}");
    assert_eq!(v["results"][0]["timeouts"], 0, "{v}");
    // Resume the reader, end it: the forwarder dropped records instead of waiting for it.
    assert!(std::process::Command::new("kill")
        .args(["-CONT", &pid])
        .status()
        .unwrap()
        .success());
    assert!(std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    let status = cap.child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(cap.child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{status}: {err}");
    let dropped: u64 = err
        .split("dropped ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no drop count: {err}"));
    assert!(dropped > 0, "{err}");
}

#[test]
fn datasets_of_several_segments_are_fetched_whole() {
    // 3000 static routes of some 100 bytes each: rib/list and fib/list are over 300 KB, so
    // more segments than the client keeps in flight at once (32).
    let mut config = String::from("[[face]]\nuri = \"udp4://127.0.0.1:9\"\n");
    for i in 0..3000 {
        config.push_str(&format!(
            "[[route]]\nprefix = \"/segmented/dataset/with/a/long/name/padded-to-make-the-dataset-larger/{i}\"\nface = \"udp4://127.0.0.1:9\"\n"
        ));
    }
    let d = Daemon::start(&config);
    let routes = d.json(&["route", "list", "--json"]);
    let listed = array(&routes)
        .iter()
        .filter(|r| r["prefix"].as_str().unwrap().starts_with("/segmented/"))
        .count();
    assert_eq!(listed, 3000);
    let raw = serde_json::to_vec(&routes).unwrap();
    assert!(raw.len() > 33 * 8000, "only {} bytes of routes", raw.len());
    let fib = d.json(&["route", "list", "--fib", "--json"]);
    assert!(array(&fib).len() > 3000, "{}", array(&fib).len());
    let s = d.json(&["status", "--json"]);
    assert_eq!(s["n_rib_entries"], 3000);
    assert_eq!(s["n_routes"], 3000);
    // namewayd counts these itself (status/counters); they must agree with the lists.
    // `route list --fib --json` has a row per next hop.
    let hops = array(&fib).len();
    assert_eq!(s["n_next_hops"].as_u64().unwrap() as usize, hops, "{s}");
    let faces = d.json(&["face", "list", "--json"]);
    assert_eq!(
        s["n_faces"].as_u64().unwrap() as usize,
        array(&faces).len(),
        "{s}"
    );
}

/// `nameway face list` shows what the forwarder refused on each face, by reason, the PIT
/// entries each holds and its rate limit.
#[test]
fn face_list_shows_drops_pit_entries_and_rate_limits() {
    let d = Daemon::start("interest_rate_limit = 500\ninterest_burst = 50\n");
    // An Interest with no route, from a UDP peer: its on-demand face stays up, one no-route drop.
    let peer = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut i = nameway_wire::Interest::new("/no/route/here".parse().unwrap());
    i.nonce = Some(7);
    peer.send_to(&i.encode(), ("127.0.0.1", d.udp)).unwrap();
    let peer_uri = format!("udp4://{}", peer.local_addr().unwrap());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let face = loop {
        let faces = d.json(&["face", "list", "--json"]);
        let face = array(&faces)
            .iter()
            .find(|f| f["uri"] == peer_uri.as_str())
            .cloned();
        if let Some(face) = face.filter(|f| f["drops"]["no-route"] == 1) {
            break face;
        }
        assert!(std::time::Instant::now() < deadline, "{faces}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(face["pit_entries"], 0, "{face}");
    assert_eq!(face["interest_rate_limit"]["per_second"], 500, "{face}");
    assert_eq!(face["interest_rate_limit"]["burst"], 50, "{face}");
    let table = d.nameway(&["face", "list"]);
    assert!(table.status.success());
    let text = String::from_utf8_lossy(&table.stdout).to_string();
    assert!(
        text.contains("PitEntries") && text.contains("Drops"),
        "{text}"
    );
    let row = text.lines().find(|l| l.contains(&peer_uri)).unwrap();
    assert!(row.contains("1 no-route"), "{row}");
}

#[test]
fn a_rate_limit_is_set_changed_and_lifted_at_run_time() {
    let d = Daemon::start("");
    let peer = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let peer_uri = format!("udp4://{}", peer.local_addr().unwrap());
    let mut nonce = 0u32;
    let mut send = |n: usize| {
        for _ in 0..n {
            nonce += 1;
            let mut i = nameway_wire::Interest::new(format!("/limited/{nonce}").parse().unwrap());
            i.nonce = Some(nonce);
            peer.send_to(&i.encode(), ("127.0.0.1", d.udp)).unwrap();
        }
    };
    let drops = |reason: &str| -> u64 {
        let faces = d.json(&["face", "list", "--json"]);
        array(&faces)
            .iter()
            .find(|f| f["uri"] == peer_uri.as_str())
            .and_then(|f| f["drops"][reason].as_u64())
            .unwrap_or(0)
    };
    let settle = |reason: &str, at_least: u64| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while drops(reason) < at_least {
            assert!(
                std::time::Instant::now() < deadline,
                "{reason} < {at_least}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    send(1);
    settle("no-route", 1);

    // 10 per second, burst 10: of 100 Interests at once, 10 pass (and find no route).
    let set = d.json(&[
        "face",
        "update",
        &peer_uri,
        "--rate-limit",
        "10",
        "--burst",
        "10",
        "--json",
    ]);
    assert_eq!(set["interest_rate_limit"], 10, "{set}");
    assert_eq!(set["interest_burst"], 10, "{set}");
    send(100);
    settle("rate-limit", 85);
    let limited = drops("rate-limit");
    assert!((85..=90).contains(&limited), "{limited}");
    let listed = d.json(&["face", "list", "--json"]);
    let face = array(&listed)
        .iter()
        .find(|f| f["uri"] == peer_uri.as_str())
        .unwrap();
    assert_eq!(face["interest_rate_limit"]["per_second"], 10, "{face}");

    // Lifted: 100 more all pass.
    let lifted = d.json(&["face", "update", &peer_uri, "--rate-limit", "0", "--json"]);
    assert_eq!(lifted["interest_rate_limit"], 0, "{lifted}");
    let before = drops("no-route");
    send(100);
    settle("no-route", before + 100);
    assert_eq!(drops("rate-limit"), limited, "nothing limited once lifted");

    // Out of range: refused, nothing changed.
    let out = d.nameway(&["face", "update", &peer_uri, "--rate-limit", "99999999999"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("409 Invalid properties"),
        "{}",
        stderr(&out)
    );

    // faces/create with a limit: the new face starts limited.
    let other = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let uri = format!("udp4://{}", other.local_addr().unwrap());
    let created = d.json(&["face", "create", &uri, "--rate-limit", "500", "--json"]);
    assert_eq!(created["interest_rate_limit"], 500, "{created}");
    let listed = d.json(&["face", "list", "--json"]);
    let face = array(&listed)
        .iter()
        .find(|f| f["uri"] == uri.as_str())
        .unwrap();
    assert_eq!(face["interest_rate_limit"]["per_second"], 500, "{face}");
    assert_eq!(face["interest_rate_limit"]["burst"], 500, "{face}");
}

#[test]
fn the_decoupled_store_is_reconfigured_at_run_time() {
    let d = Daemon::start("");
    // The inline store has no tiers: a clear refusal.
    let out = d.nameway(&["cs", "config", "--policy", "arc"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("need the decoupled content store"),
        "{}",
        stderr(&out)
    );
    drop(d);

    let dir = tempfile::tempdir().unwrap();
    let disk = dir.path().join("cs.redb");
    let d = Daemon::start(&format!(
        "[cs]\ndecoupled = true\npolicy = \"lru\"\nmemory_capacity = \"64MiB\"\ndisk_path = {disk:?}\ndisk_capacity = \"1GiB\"\n"
    ));
    let done = d.json(&[
        "cs", "config", "--policy", "arc", "--memory", "1MiB", "--disk", "10MiB", "--json",
    ]);
    assert_eq!(done["policy"], "arc", "{done}");
    assert_eq!(done["memory_bytes"], 1 << 20, "{done}");
    assert_eq!(done["disk_bytes"], 10 << 20, "{done}");
    // The server applied it: cs info reads the tiers from the server itself.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let info = d.json(&["cs", "info", "--json"]);
        if info["policy"] == "arc"
            && info["memory"]["capacity_bytes"] == 1 << 20
            && info["disk"]["capacity_bytes"] == 10 << 20
        {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{info}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = d.nameway(&["cs", "config", "--policy", "fifo"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("409 Unknown policy"),
        "{}",
        stderr(&out)
    );
    let out = d.nameway(&["cs", "config", "--memory", "lots"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("is not a size"), "{}", stderr(&out));
}

/// Sizes and counts far past what a command can use are refused before it connects, with
/// one line naming the option: they used to abort on an allocation ("capacity overflow").
#[test]
fn sizes_and_counts_past_any_use_are_refused_before_connecting() {
    let huge = "18446744073709551615";
    for (args, names) in [
        (vec!["ping-server", "/p", "--size", huge], "--size"),
        (vec!["ping-server", "/p", "--size", "9000"], "--size"),
        (vec!["bench", "--consumers", huge], "--consumers"),
        (vec!["bench", "--consumers", "1,100000"], "--consumers"),
        (vec!["bench", "--threads", huge], "--threads"),
        (vec!["bench", "--window", huge], "--window"),
    ] {
        // No forwarder at this address: an error about the option, not the socket.
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_nameway"))
            .args(["--transport", "unix:///nonexistent/nfd.sock"])
            .args(&args)
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(names), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn a_static_tcp_face_to_a_neighbour_not_up_yet_connects_when_it_is() {
    // Forwarders of one network start in any order: a [[face]] whose neighbour is down must
    // not keep this one from starting (it used to: "cannot create face ... Connection refused").
    let port = free_port();
    let uri = format!("tcp4://127.0.0.1:{port}");
    let d = Daemon::start(&format!(
        "[[face]]\nuri = \"{uri}\"\n[[route]]\nprefix = \"/later\"\nface = \"{uri}\"\n"
    ));
    let faces = d.json(&["face", "list", "--json"]);
    let face = array(&faces)
        .iter()
        .find(|f| f["uri"] == uri.as_str())
        .unwrap_or_else(|| panic!("no face to {uri}: {faces}"))
        .clone();
    assert_eq!(face["persistency"], "permanent", "{face}");
    assert!(d.log().contains("keeps trying"), "{}", d.log());
    // The neighbour comes up: the forwarder connects to it (the reconnection backoff: 1, 2,
    // 4 s...) and forwards the /later Interest over the connection.
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    listener.set_nonblocking(true).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut stream = loop {
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                assert!(
                    std::time::Instant::now() < deadline,
                    "never connected: {}",
                    d.log()
                );
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(e) => panic!("{e}"),
        }
    };
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let mut peek = d.spawn(&["peek", "/later/x", "-l", "8000"], b"");
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !seen.windows(5).any(|w| w == b"later") {
        let n = std::io::Read::read(&mut stream, &mut buf).expect("no Interest forwarded");
        assert!(n > 0, "connection closed");
        seen.extend_from_slice(&buf[..n]);
    }
    let _ = peek.child.kill();
    let faces = d.json(&["face", "list", "--json"]);
    let face = array(&faces)
        .iter()
        .find(|f| f["uri"] == uri.as_str())
        .unwrap()
        .clone();
    assert_ne!(face["local_uri"], "tcp4://0.0.0.0:0", "{face}");
}

#[test]
fn face_create_errors_say_what_is_wrong() {
    // A malformed URI or one of the wrong address family used to be "406 Unsupported
    // protocol", like an unknown scheme.
    let d = Daemon::start("");
    for (uri, want) in [
        ("foo://bar", "406 Unsupported protocol"),
        (
            "udp6://127.0.0.1:6363",
            "400 Bad FaceUri: address family does not match the scheme",
        ),
        ("udp4://", "400 Bad FaceUri: malformed FaceUri"),
        (
            "tcp4://127.0.0.1:1",
            "504 Face creation failed: cannot connect",
        ),
    ] {
        let out = d.nameway(&["face", "create", uri]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{uri}: {err}");
        assert!(err.contains(want), "{uri}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{uri}: {err}");
    }
}

/// Many applications sharing one producer: 1024 consumers with 4 Interests each in flight
/// over Unix toward one producer. Before, the producer face's send queue (1024 packets)
/// overflowed and about 4 % of the Interests were dropped silently, their consumers waiting
/// out the lifetime. Now the queue is sized in bytes and, toward a local face, holds the burst
/// while the consumers are slowed down; an Interest that still cannot be queued is answered
/// with a Nack. None may time out.
#[test]
fn a_thousand_apps_sharing_one_producer_lose_no_interest() {
    let d = Daemon::start("");
    let out = d.nameway(&[
        "bench",
        "--consumers",
        "1024",
        "--window",
        "4",
        "--interests",
        "40960",
        "--runs",
        "1",
        "--warm-up",
        "4",
        "--payload",
        "100",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["results"][0];
    assert_eq!(r["timeouts"], 0, "{v}");
    let answered = r["completed"].as_u64().unwrap() + r["nacks"].as_u64().unwrap();
    assert!(answered >= 40960, "{v}");
    // The forwarder-wide drop totals say what happened, even after the faces closed.
    let s = d.json(&["status", "--json"]);
    eprintln!("drops after the burst: {}", s["drops"]);
}
