//! Real NDNts applications (npm `@ndn/*` 0.0.20250307, unmodified, driven by
//! tests/interop/ndnts/app.mjs) exchange Data through a real namewayd process, over Unix and TCP:
//! NDNts ↔ NDNts, NDNts ↔ python-ndn in both directions, a segmented transfer with
//! `@ndn/segmented-object`, `@ndn/nfdmgmt` datasets and commands decoded by NDNts's strict TLV
//! decoders, NDNts's idle keep-alive, and route removal when an NDNts producer exits.
//!
//! Needs `bash scripts/setup-node.sh` (and `bash scripts/setup-python.sh` for the python-ndn
//! parts). Without them the tests print SKIPPED and pass, unless `CI` or
//! `NAMEWAY_REQUIRE_INTEROP` is set; `NAMEWAY_NODE` names another node binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{ndnts_dir, node, App, Daemon};
use serde_json::Value;

/// A background NDNts process (app.mjs) whose JSON lines are read by a thread.
struct Js {
    child: Child,
    lines: mpsc::Receiver<Value>,
}

impl Js {
    /// Spawns `node app.mjs args` with NDNTS_UPLINK=`uplink` and extra environment `env`.
    fn spawn_env(node: &Path, uplink: &str, env: &[(&str, &str)], args: &[&str]) -> Js {
        let mut child = Command::new(node)
            .arg(ndnts_dir().join("app.mjs"))
            .args(args)
            .current_dir(ndnts_dir())
            .env("NDNTS_UPLINK", uplink)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str(&line) {
                    if tx.send(v).is_err() {
                        break;
                    }
                }
            }
        });
        Js { child, lines: rx }
    }

    fn spawn(node: &Path, uplink: &str, args: &[&str]) -> Js {
        Js::spawn_env(node, uplink, &[], args)
    }

    /// The next JSON line that is not a transport `event`, within `secs`. A `down` or `rxerror`
    /// event fails the test: namewayd closed the face or sent something NDNts cannot decode.
    fn next(&self, secs: u64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = self
                .lines
                .recv_timeout(left)
                .expect("NDNts app said nothing in time");
            match v["event"].as_str() {
                None => return v,
                Some("down" | "rxerror") => panic!("NDNts uplink trouble: {v}"),
                Some(_) => {}
            }
        }
    }

    /// Transport events and other lines printed so far, without waiting.
    fn pending(&self) -> Vec<Value> {
        self.lines.try_iter().collect()
    }

    /// Starts a producer (produce, serve-object) and waits until it reports its prefix
    /// registered, i.e. namewayd answered NDNts's rib/register with 200.
    fn producer(node: &Path, uplink: &str, args: &[&str]) -> (Js, Value) {
        Js::producer_env(node, uplink, &[], args)
    }

    fn producer_env(node: &Path, uplink: &str, env: &[(&str, &str)], args: &[&str]) -> (Js, Value) {
        let app = Js::spawn_env(node, uplink, env, args);
        let first = app.next(30);
        assert_eq!(first["ready"], true, "NDNts producer not ready: {first}");
        (app, first)
    }

    /// Runs a one-shot mode (consume, fetch-object, dataset) and returns its JSON result.
    fn run(node: &Path, uplink: &str, args: &[&str]) -> Value {
        let mut app = Js::spawn(node, uplink, args);
        let v = app.next(60);
        let _ = app.child.wait();
        v
    }

    /// Runs the mgmt mode: every line up to {"done":true}.
    fn run_all(node: &Path, uplink: &str, args: &[&str]) -> Vec<Value> {
        let mut app = Js::spawn(node, uplink, args);
        let mut out = Vec::new();
        loop {
            let v = app.next(60);
            if v["done"] == true {
                break;
            }
            out.push(v);
        }
        let _ = app.child.wait();
        out
    }
}

impl Drop for Js {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn unix(d: &Daemon) -> String {
    format!("unix://{}", d.unix.display())
}

fn tcp(d: &Daemon) -> String {
    format!("tcp://127.0.0.1:{}", d.tcp)
}

/// sha256 of the deterministic payload both app.mjs and pyndn_app.py produce.
fn payload_sha(node: &Path, size: usize, seed: &str) -> Value {
    let size = size.to_string();
    let v = Js::run(
        node,
        "unix:///nonexistent",
        &["payload", "--size", &size, "--seed", seed],
    );
    v["sha256"].clone()
}

#[test]
fn ndnts_producer_and_consumer_over_unix_and_tcp() {
    let Some(node) = node() else { return };
    let d = Daemon::start("");
    let (u, t) = (unix(&d), tcp(&d));
    let (_p, ready) = Js::producer(
        &node,
        &u,
        &["produce", "--prefix", "/nt/a", "--size", "1024"],
    );
    let r = Js::run(
        &node,
        &u,
        &["consume", "--name", "/nt/a/x", "--must-be-fresh"],
    );
    assert_eq!(r["name"], "/nt/a/x", "{r}\n{}", d.log());
    assert_eq!(r["size"], 1024);
    assert_eq!(r["sha256"], ready["sha256"]);
    // Over TCP (127.0.0.1 on both ends, so NDNts also treats it as local: /localhost/nfd).
    let r = Js::run(&node, &t, &["consume", "--name", "/nt/a/y"]);
    assert_eq!(r["name"], "/nt/a/y", "{r}\n{}", d.log());
    assert_eq!(r["sha256"], ready["sha256"]);
    // CanBePrefix on the prefix is answered from the content store.
    let r = Js::run(
        &node,
        &t,
        &["consume", "--name", "/nt/a", "--can-be-prefix"],
    );
    let name = r["name"].as_str().unwrap_or_default();
    assert!(name == "/nt/a/x" || name == "/nt/a/y", "{r}");
    // A producer that registers over TCP, fetched over Unix.
    let (_q, ready) = Js::producer(
        &node,
        &t,
        &["produce", "--prefix", "/nt/tcp", "--size", "5000"],
    );
    let r = Js::run(
        &node,
        &u,
        &["consume", "--name", "/nt/tcp/z", "--must-be-fresh"],
    );
    assert_eq!(r["name"], "/nt/tcp/z", "{r}\n{}", d.log());
    assert_eq!(r["size"], 5000);
    assert_eq!(r["sha256"], ready["sha256"]);
}

#[test]
fn ndnts_over_websocket_with_python_ndn_on_the_unix_socket() {
    let Some(node) = node() else { return };
    let Some(py) = common::python() else { return };
    let port = common::free_port();
    // No /localhop/nfd here: the WebSocket face is loopback to loopback, so local scope, and
    // /localhost/nfd commands over it are accepted.
    let d = Daemon::start(&format!("websocket = [\"127.0.0.1:{port}\"]\n"));
    let ws = format!("ws://127.0.0.1:{port}");
    // An NDNts consumer in a "browser" (@ndn/ws-transport) fetches from python-ndn on Unix.
    let _p = App::producer(
        &py,
        &d.transport(),
        &["produce", "--prefix", "/ws/py", "--size", "3000"],
    );
    let r = Js::run(&node, &ws, &["consume", "--name", "/ws/py/x"]);
    assert_eq!(r["name"], "/ws/py/x", "{r}\n{}", d.log());
    assert_eq!(r["size"], 3000);
    // An NDNts producer over WebSocket, told its face is local (NDNTS_LOCAL), registers its
    // prefix with rib/register under /localhost/nfd and serves a python-ndn consumer on Unix.
    let (q, ready) = Js::producer_env(
        &node,
        &ws,
        &[("NDNTS_LOCAL", "1")],
        &["produce", "--prefix", "/ws/nt", "--size", "2000"],
    );
    let r = App::run(&py, &d.transport(), &["consume", "--name", "/ws/nt/y"]);
    assert_eq!(r["name"], "/ws/nt/y", "{r}\n{}", d.log());
    assert_eq!(r["size"], 2000);
    assert_eq!(r["sha256"], ready["sha256"]);
    // The producer exits: its WebSocket face closes and its route goes with it (python-ndn
    // then gets Nack NoRoute, not a timeout).
    drop(q);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = App::run(
            &py,
            &d.transport(),
            &["consume", "--name", "/ws/nt/z", "--lifetime", "1000"],
        );
        if r["nack"] == 150 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "route of the closed WebSocket face not removed: {r}\n{}",
            d.log()
        );
    }
}

#[test]
fn ndnts_over_websocket_registers_under_localhop_when_enabled() {
    let Some(node) = node() else { return };
    let Some(py) = common::python() else { return };
    let port = common::free_port();
    // NDNts as a web page runs it by default: the WebSocket face taken as non-local, so
    // rib/register goes under /localhop/nfd, which namewayd serves with [mgmt] localhop_rib.
    let d = Daemon::start(&format!(
        "websocket = [\"127.0.0.1:{port}\"]\n[mgmt]\nlocalhop_rib = true\n"
    ));
    let ws = format!("ws://127.0.0.1:{port}");
    let (_q, ready) = Js::producer(
        &node,
        &ws,
        &["produce", "--prefix", "/ws/hop", "--size", "1500"],
    );
    let r = App::run(&py, &d.transport(), &["consume", "--name", "/ws/hop/y"]);
    assert_eq!(r["name"], "/ws/hop/y", "{r}\n{}", d.log());
    assert_eq!(r["sha256"], ready["sha256"]);
}

#[test]
fn ndnts_producer_python_ndn_consumer() {
    let Some(node) = node() else { return };
    let Some(py) = common::python() else { return };
    let d = Daemon::start("");
    let u = unix(&d);
    let (_p, ready) = Js::producer(
        &node,
        &u,
        &["produce", "--prefix", "/nt/js", "--size", "3000"],
    );
    for (api, name) in [("app", "/nt/js/legacy"), ("appv2", "/nt/js/v2")] {
        let r = App::run(
            &py,
            &d.transport(),
            &["consume", "--api", api, "--name", name],
        );
        assert_eq!(r["name"], name, "{api}: {r}\n{}", d.log());
        assert_eq!(r["size"], 3000, "{api}: {r}");
        assert_eq!(r["sha256"], ready["sha256"], "{api}: {r}");
    }
    let r = App::run(
        &py,
        &tcp(&d),
        &["consume", "--name", "/nt/js/tcp", "--must-be-fresh"],
    );
    assert_eq!(r["sha256"], ready["sha256"], "{r}");
}

#[test]
fn python_ndn_producer_ndnts_consumer() {
    let Some(node) = node() else { return };
    let Some(py) = common::python() else { return };
    let d = Daemon::start("");
    let expected = payload_sha(&node, 3000, "nameway");
    let py_transport = d.transport();
    let _p1 = App::producer(
        &py,
        &py_transport,
        &[
            "produce",
            "--api",
            "app",
            "--prefix",
            "/py/legacy",
            "--size",
            "3000",
        ],
    );
    let _p2 = App::producer(
        &py,
        &py_transport,
        &[
            "produce", "--api", "appv2", "--prefix", "/py/v2", "--size", "3000",
        ],
    );
    for (uplink, name) in [
        (unix(&d), "/py/legacy/a"),
        (tcp(&d), "/py/legacy/b"),
        (unix(&d), "/py/v2/a"),
        (tcp(&d), "/py/v2/b"),
    ] {
        let r = Js::run(
            &node,
            &uplink,
            &["consume", "--name", name, "--must-be-fresh"],
        );
        assert_eq!(r["name"], name, "{uplink}: {r}\n{}", d.log());
        assert_eq!(r["size"], 3000, "{r}");
        assert_eq!(r["sha256"], expected, "{r}");
    }
}

#[test]
fn segmented_object_transfer_with_digest() {
    let Some(node) = node() else { return };
    let d = Daemon::start("");
    let (u, t) = (unix(&d), tcp(&d));
    let (_p, ready) = Js::producer(
        &node,
        &u,
        &[
            "serve-object",
            "--prefix",
            "/nt/file",
            "--size",
            "300000",
            "--segment",
            "4000",
        ],
    );
    assert_eq!(ready["segments"], 75);
    for uplink in [&u, &t] {
        let r = Js::run(&node, uplink, &["fetch-object", "--name", "/nt/file"]);
        assert_eq!(r["size"], 300_000, "{uplink}: {r}\n{}", d.log());
        assert_eq!(r["segments"], 75, "{r}");
        assert_eq!(r["sha256"], ready["sha256"], "{r}");
    }
    // The other way round with python-ndn: its segment fetcher against NDNts serve(), and NDNts
    // fetch() against python-ndn's segmented producer.
    let Some(py) = common::python() else { return };
    let r = App::run(&py, &d.transport(), &["fetch-object", "--name", "/nt/file"]);
    assert_eq!(
        r["sha256"],
        ready["sha256"],
        "python-ndn fetch: {r}\n{}",
        d.log()
    );
    let p = App::spawn(
        &py,
        &d.transport(),
        &["serve-object", "--prefix", "/py/file", "--size", "250000"],
    );
    let py_ready = p.next(20);
    assert_eq!(py_ready["ready"], true);
    let r = Js::run(&node, &u, &["fetch-object", "--name", "/py/file"]);
    assert_eq!(r["size"], 250_000, "NDNts fetch: {r}\n{}", d.log());
    assert_eq!(r["segments"], py_ready["segments"]);
    assert_eq!(r["sha256"], py_ready["sha256"]);
}

/// The `{"op":name}` line of a mgmt run.
fn op<'a>(lines: &'a [Value], name: &str) -> &'a Value {
    lines
        .iter()
        .find(|l| l["op"] == name)
        .unwrap_or_else(|| panic!("no {name} in {lines:?}"))
}

fn items(v: &Value) -> &Vec<Value> {
    v["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items: {v}"))
}

#[test]
fn nfdmgmt_datasets_and_commands() {
    let Some(node) = node() else { return };
    let d = Daemon::start("");
    let u = unix(&d);
    // A producer's registration, as NDNts makes it: Origin 65 (client), Flags 2 (Capture),
    // ExpirationPeriod max(4 × 300 s refresh, 60 s).
    let (_p, _) = Js::producer(&node, &u, &["produce", "--prefix", "/nt/reg"]);
    for uplink in [u.clone(), tcp(&d)] {
        let lines = Js::run_all(&node, &uplink, &["mgmt", "--prefix", "/nt/mgmt"]);
        let ctx = format!(
            "over {uplink}:\n{}",
            serde_json::to_string_pretty(&lines).unwrap()
        );
        for name in [
            "status/general",
            "faces/list",
            "faces/query",
            "cs/info",
            "rib/register",
            "fib/list",
            "rib/list",
            "strategy-choice/set",
            "strategy-choice/list",
            "strategy-choice/unset",
            "rib/unregister",
            "rib/list#after",
        ] {
            assert_eq!(
                op(&lines, name)["ok"],
                true,
                "{name} failed {ctx}\n{}",
                d.log()
            );
        }
        // status/general decodes with every required field.
        let general = &items(op(&lines, "status/general"))[0];
        assert!(
            general["nfdVersion"]
                .as_str()
                .is_some_and(|v| !v.is_empty()),
            "{ctx}"
        );
        assert!(
            general["currentTimestamp"].as_u64() >= general["startTimestamp"].as_u64(),
            "{ctx}"
        );
        assert!(general["nFibEntries"].as_u64() >= Some(2), "{ctx}");
        // faces/list: the producer's and this client's faces, Unix ones local.
        let faces = items(op(&lines, "faces/list"));
        assert!(faces.len() >= 2, "{ctx}");
        assert!(
            faces.iter().any(|f| f["localUri"]
                .as_str()
                .is_some_and(|l| l.starts_with("unix://"))
                && f["faceScope"] == 1),
            "{ctx}"
        );
        // faces/query with UriScheme "unix" (NFD matches the local URI too): the Unix faces.
        let unix_faces = items(op(&lines, "faces/query"));
        assert!(!unix_faces.is_empty(), "{ctx}");
        assert!(
            unix_faces
                .iter()
                .all(|f| f["localUri"].as_str().unwrap().starts_with("unix://")),
            "{ctx}"
        );
        // A filter that does not decode: ControlResponse 400, as NFD.
        let malformed = op(&lines, "faces/query#malformed");
        assert_eq!(malformed["statusCode"], 400, "{ctx}");
        let cs = &items(op(&lines, "cs/info"))[0];
        assert!(cs["capacity"].as_u64() > Some(0), "{ctx}");
        // rib/register without FaceId: the requesting face, NFD's defaults echoed.
        let reg = &op(&lines, "rib/register")["body"];
        assert_eq!(reg["name"], "/nt/mgmt", "{ctx}");
        assert_eq!(reg["cost"], 7, "{ctx}");
        assert_eq!(reg["origin"], 0, "{ctx}");
        assert_eq!(reg["flags"], 1, "ChildInherit {ctx}");
        let me = reg["faceId"].as_u64().unwrap();
        // fib/list: the new route and the producer's.
        let fib = items(op(&lines, "fib/list"));
        let entry = |n: &str| fib.iter().find(|e| e["name"] == n).cloned();
        let m = entry("/nt/mgmt").unwrap_or_else(|| panic!("/nt/mgmt not in FIB {ctx}"));
        assert_eq!(m["nextHops"][0]["faceId"], me, "{ctx}");
        assert_eq!(m["nextHops"][0]["cost"], 7, "{ctx}");
        assert!(entry("/nt/reg").is_some(), "{ctx}");
        // rib/list: NDNts's own registration as the spec says.
        let rib = items(op(&lines, "rib/list"));
        let reg_entry = rib
            .iter()
            .find(|e| e["name"] == "/nt/reg")
            .unwrap_or_else(|| panic!("{ctx}"));
        let route = &reg_entry["route"][0];
        assert_eq!(route["origin"], 65, "{ctx}");
        assert_eq!(route["flags"], 2, "Capture {ctx}");
        let exp = route["expirationPeriod"].as_u64().unwrap_or(0);
        assert!(exp > 1_100_000 && exp <= 1_200_000, "{ctx}");
        assert!(rib.iter().any(|e| e["name"] == "/nt/mgmt"), "{ctx}");
        // strategy-choice/set echoes the versioned strategy, list shows it, unset removes it.
        let set = &op(&lines, "strategy-choice/set")["body"];
        assert!(
            set["strategy"]
                .as_str()
                .unwrap()
                .starts_with("/localhost/nfd/strategy/multicast"),
            "{ctx}"
        );
        let choices = items(op(&lines, "strategy-choice/list"));
        assert!(choices.iter().any(|c| c["name"] == "/"), "{ctx}");
        assert!(
            choices.iter().any(|c| c["name"] == "/nt/mgmt"
                && c["strategy"]
                    .as_str()
                    .unwrap()
                    .starts_with("/localhost/nfd/strategy/multicast")),
            "{ctx}"
        );
        assert_eq!(op(&lines, "rib/unregister")["body"]["faceId"], me, "{ctx}");
        let after = items(op(&lines, "rib/list#after"));
        assert!(!after.iter().any(|e| e["name"] == "/nt/mgmt"), "{ctx}");
        assert!(after.iter().any(|e| e["name"] == "/nt/reg"), "{ctx}");
    }
}

#[test]
fn idle_keepalive_is_accepted() {
    let Some(node) = node() else { return };
    let d = Daemon::start("");
    let u = unix(&d);
    // NDNts sends an empty LpPacket (64 00) after `keepAlive` ms of idle; 100 ms instead of 60 s.
    let (p, _) = Js::producer_env(
        &node,
        &u,
        &[("NDNTS_KEEPALIVE", "100")],
        &["produce", "--prefix", "/nt/idle"],
    );
    let rib = Js::run(&node, &u, &["dataset", "--name", "rib/list"]);
    let face = rib["items"]
        .as_array()
        .and_then(|a| a.iter().find(|e| e["name"] == "/nt/idle"))
        .map(|e| e["route"][0]["faceId"].clone())
        .unwrap_or_else(|| panic!("{rib}"));
    let in_bytes = || {
        let faces = Js::run(&node, &u, &["dataset", "--name", "faces/list"]);
        faces["items"]
            .as_array()
            .and_then(|a| a.iter().find(|f| f["faceId"] == face))
            .and_then(|f| f["nInBytes"].as_u64())
            .unwrap_or_else(|| panic!("producer face {face} gone: {faces}\n{}", d.log()))
    };
    let before = in_bytes();
    std::thread::sleep(Duration::from_millis(1500));
    let after = in_bytes();
    // About 2 bytes every 100 ms arrived, and the face stayed up.
    assert!(
        after >= before + 10,
        "no keep-alives seen: {before} -> {after}"
    );
    let r = Js::run(&node, &u, &["consume", "--name", "/nt/idle/x"]);
    assert_eq!(r["name"], "/nt/idle/x", "{r}\n{}", d.log());
    let events = p.pending();
    assert!(
        !events
            .iter()
            .any(|e| e["event"] == "down" || e["event"] == "rxerror"),
        "{events:?}"
    );
}

#[test]
fn producer_exit_removes_its_route() {
    let Some(node) = node() else { return };
    let d = Daemon::start("");
    let u = unix(&d);
    let (producer, _) = Js::producer(&node, &u, &["produce", "--prefix", "/nt/gone"]);
    let r = Js::run(&node, &u, &["consume", "--name", "/nt/gone/a"]);
    assert_eq!(r["name"], "/nt/gone/a", "{r}");
    // SIGKILL: the socket closes without any rib/unregister.
    drop(producer);
    // An NDNts consumer never sees the Nack (NDNts's forwarder drops it): it times out.
    let r = Js::run(
        &node,
        &u,
        &["consume", "--name", "/nt/gone/b", "--lifetime", "1000"],
    );
    assert_eq!(r["timeout"], true, "{r}");
    // A python-ndn consumer does see it: Nack NoRoute once the face and its route are gone.
    let Some(py) = common::python() else { return };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = App::run(
            &py,
            &d.transport(),
            &["consume", "--name", "/nt/gone/c", "--lifetime", "1000"],
        );
        if r["nack"] == 150 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "route not removed: {r}\n{}",
            d.log()
        );
    }
    let rib = Js::run(&node, &u, &["dataset", "--name", "rib/list"]);
    assert!(
        !rib["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "/nt/gone"),
        "{rib}"
    );
}
