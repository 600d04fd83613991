//! Two controllers on one PostgreSQL database route each other's registrations live and
//! share one CA, with real processes: two `namewayctl serve` (A and B, one domain: B's CA
//! file is a copy of A's, for the anchor's key; tokens, certificates, the deny list and group
//! keys are in the database), two `namewayd` (r1 the agent of A, r2 the agent of B) joined by
//! a secure UDP link that each end reports to its own controller and that comes up on the
//! domain's trust alone, `nameway put` at r1 and `nameway get` at r2. A second test: a
//! forwarder admitted by no controller cannot bring a secure link up, and a router denied
//! through A loses its session at B and its link everywhere.
//!
//! Runs against the server of `scripts/postgres-test-server.sh` (`NAMEWAY_TEST_POSTGRES`);
//! skipped without it, failed without it under `NAMEWAY_REQUIRE_INTEROP` (CI).
//!
//! With `NAMEWAY_PG_LIVE_ROUNDS=N` the test also measures, N times, a registration at r1 to
//! the FIB entry at r2 (put, then poll the routes every 5 ms), with the FIB entry at r1
//! itself as the baseline, and prints the medians and p99s: `scripts/bench-ctl-pg-live.sh`
//! runs it so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::ctl::{bin, run, wait, Controller, Proc, SERIAL};
use common::{free_port, Daemon};
use serde_json::Value;

/// Origin of the routes the agent installs.
const CTL: u64 = 131;

#[path = "../../ctl/tests/support/postgres.rs"]
mod pg;

/// How often the controllers read the CA's tables again while the database's notifications
/// are heard (`--ca-poll`): long, so that a deny seen within seconds was woken by its
/// notification, not found by the poll.
const CA_POLL_S: u64 = 30;

/// `namewayctl serve --db <pg> --ca <ca>`, its log in a folder of its own.
fn serve(pg: &str, ca: &Path) -> Controller {
    let ca = ca.to_str().unwrap();
    let poll = format!("{CA_POLL_S}s");
    Controller::launch(
        tempfile::tempdir().unwrap(),
        "127.0.0.1:0",
        &["--db", pg, "--ca", ca],
        &["--ca-poll", &poll],
    )
}

/// A forwarder with its secure-link identity and ports.
struct Router {
    name: String,
    udp: u16,
    tcp: u16,
    link_key: String,
    identity: PathBuf,
    d: Option<Daemon>,
}

impl Router {
    fn new(dir: &Path, i: usize) -> Self {
        let identity = dir.join(format!("r{i}.key"));
        let (id, _) = nameway_face::secure::Identity::load_or_create(&identity).unwrap();
        Self {
            name: format!("/example/r{i}"),
            udp: free_port(),
            tcp: free_port(),
            link_key: hex::encode(id.public_key().0),
            identity,
            d: None,
        }
    }

    /// Starts the daemon: a secure face to each of `peers`, trusting only the keys in
    /// `trusted` by configuration (the domain's trust comes from the controller), the agent
    /// of `ctl` with `token` when given.
    fn start(
        &mut self,
        peers: &[&Router],
        trusted: &[&Router],
        ctl: Option<(&Controller, String)>,
        dir: &Path,
    ) {
        let state = dir.join(format!("state-{}", self.name.replace('/', "_")));
        let trusted: Vec<String> = trusted
            .iter()
            .map(|r| format!("{:?}", r.link_key))
            .collect();
        let mut cfg = format!(
            "[security]\nidentity = {:?}\ntrusted_peers = [{}]\n",
            self.identity,
            trusted.join(", ")
        );
        for p in peers {
            cfg += &format!(
                "[[face]]\nuri = \"udp4://127.0.0.1:{}\"\nsecure = true\n",
                p.udp
            );
        }
        if let Some((ctl, token)) = ctl {
            cfg += &format!(
                "[controller]\nuri = \"tcp://{}\"\nkey = {:?}\nname = {:?}\ntoken = {:?}\n\
                 state_dir = {state:?}\nreport_interval_ms = 50\n",
                ctl.listen, ctl.pin, self.name, token,
            );
        }
        self.d = Some(Daemon::start_on(&bin("namewayd"), self.tcp, self.udp, &cfg));
    }

    /// The state of this forwarder's secure link to `peer` (`established`, `refused`, ...),
    /// if there is one.
    fn link_state(&self, peer: &Router) -> Option<String> {
        let v: Value =
            serde_json::from_str(&self.nameway(&["neighbour", "list", "--json"])).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .find(|n| n["peer"] == peer.link_key.as_str())
            .and_then(|n| n["state"].as_str().map(str::to_owned))
    }

    fn d(&self) -> &Daemon {
        self.d.as_ref().unwrap()
    }

    fn nameway(&self, args: &[&str]) -> String {
        let out = Command::new(bin("nameway"))
            .args(["--transport", &self.d().transport()])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "nameway {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            self.d().log()
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Whether the controller's route for `prefix` is in this forwarder's FIB.
    fn has_route(&self, prefix: &str) -> bool {
        let v: Value = serde_json::from_str(&self.nameway(&["route", "list", "--json"])).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .any(|r| r["prefix"] == prefix && r["origin"] == CTL)
    }
}

/// `nameway put` of `bytes` under `name` at `r`, serving until dropped.
fn put(r: &Router, name: &str, bytes: &[u8], dir: &Path) -> Proc {
    let file = dir.join(name.replace('/', "_"));
    std::fs::write(&file, bytes).unwrap();
    let mut child = Command::new(bin("nameway"))
        .args(["--transport", &r.d().transport(), "put", "--json"])
        .arg(&file)
        .arg(name)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains(name), "{line}");
    Proc(child)
}

fn get(r: &Router, name: &str, dir: &Path) -> Vec<u8> {
    let out = dir.join("got");
    let _ = std::fs::remove_file(&out);
    r.nameway(&[
        "get",
        "-q",
        "--lifetime",
        "1000",
        "-o",
        out.to_str().unwrap(),
        name,
    ]);
    std::fs::read(out).unwrap()
}

/// Controller A's CA file `namewayctl init` made, and its copy for controller B (one
/// domain, one anchor: each controller keeps the CA in a local file).
fn two_cas(dir: &Path) -> (PathBuf, PathBuf) {
    let a = dir.join("a");
    let b = dir.join("b");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let ca = a.join("ctl.db");
    run(
        "namewayctl",
        &["init", "--domain", "/example", "--db", ca.to_str().unwrap()],
    );
    for e in std::fs::read_dir(&a).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), b.join(e.file_name())).unwrap();
    }
    (ca, b.join("ctl.db"))
}

/// A one-time token for `router`, made with `namewayctl token` on the shared database
/// through the CA file `ca` (the token is a row of the database, usable at any controller).
fn token(pg: &str, ca: &Path, router: &str) -> String {
    run(
        "namewayctl",
        &[
            "token",
            "--router",
            router,
            "--db",
            pg,
            "--ca",
            ca.to_str().unwrap(),
        ],
    )
    .trim()
    .to_owned()
}

fn percentile(sorted: &[Duration], p: usize) -> Duration {
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

#[test]
fn two_controllers_on_one_postgresql_route_each_others_registrations_live() {
    let Some(base) = pg::server("two_controllers_live") else {
        return;
    };
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let db = pg::fresh_db(&base, "nw_live");
    let dir = tempfile::tempdir().unwrap();
    let (ca_a, ca_b) = two_cas(dir.path());
    let ctl_a = serve(&db, &ca_a);
    let ctl_b = serve(&db, &ca_b);
    let (a_log, b_log) = (
        ctl_a.dir.path().join("ctl.log"),
        ctl_b.dir.path().join("ctl.log"),
    );
    assert_eq!(ctl_a.pin, ctl_b.pin, "one domain, one anchor");

    let mut r1 = Router::new(dir.path(), 1);
    let mut r2 = Router::new(dir.path(), 2);
    // Both tokens are made through A's CA file: r2's enrols at B (one shared CA). Neither
    // forwarder trusts the other by configuration: only the domain's trust objects.
    let (t1, t2) = (token(&db, &ca_a, &r1.name), token(&db, &ca_a, &r2.name));
    r1.start(&[&r2], &[], Some((&ctl_a, t1)), dir.path());
    r2.start(&[&r1], &[], Some((&ctl_b, t2)), dir.path());
    let logs = || {
        format!(
            "A: {}\nB: {}\nB topology: {}\nr2: {}",
            std::fs::read_to_string(&a_log).unwrap_or_default(),
            std::fs::read_to_string(&b_log).unwrap_or_default(),
            ctl_b.api("/api/topology"),
            r2.d().log()
        )
    };

    // B sees the link r1-r2 usable: r2's end from its own agent, r1's from A's rows.
    assert!(
        wait(Duration::from_secs(20), || ctl_b.api("/api/topology")
            ["links"]
            .as_array()
            .is_some_and(|l| l.iter().any(|l| l["up"] == true))),
        "B never saw the link: {}",
        logs()
    );

    // r2, admitted by B, is trusted by r1, admitted by A (and back): the secure link is
    // established on the domain's trust alone.
    assert!(
        wait(Duration::from_secs(10), || r1.link_state(&r2).as_deref()
            == Some("established")
            && r2.link_state(&r1).as_deref() == Some("established")),
        "r1-r2 never established: r1 {:?}, r2 {:?}: {}",
        r1.link_state(&r2),
        r2.link_state(&r1),
        logs()
    );

    // Registered at r1 (A's agent): routed at r2 (B's agent) and fetched through it.
    let name = "/example/live/video";
    let body: Vec<u8> = (0..3000u32).map(|i| (i * 7) as u8).collect();
    let producer = put(&r1, name, &body, dir.path());
    assert!(
        wait(Duration::from_secs(10), || r2.has_route(name)),
        "r2 never got a route to {name}: {}",
        logs()
    );
    assert_eq!(get(&r2, name, dir.path()), body);

    // The producer leaves: A deletes the registration, B withdraws the route at r2.
    drop(producer);
    assert!(
        wait(Duration::from_secs(10), || !r2.has_route(name)),
        "r2 kept the route after the producer left: {}",
        logs()
    );

    // The bound: registration at r1 to the FIB entry at r2, N rounds (the bench script).
    let rounds: usize = std::env::var("NAMEWAY_PG_LIVE_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    if rounds > 0 {
        // Baseline in the same rounds: the same registration to the FIB entry at r1 itself
        // (A's own path: report, computation, push), without the database in between.
        let (mut at_r2, mut at_r1) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
        for i in 0..rounds {
            let name = format!("/example/live/bench/{i}");
            let t0 = Instant::now();
            let p = put(&r1, &name, b"x", dir.path());
            let (mut t1, mut t2) = (None, None);
            while t1.is_none() || t2.is_none() {
                assert!(t0.elapsed() < Duration::from_secs(10), "{}", logs());
                if t1.is_none() && r1.has_route(&name) {
                    t1 = Some(t0.elapsed());
                }
                if t2.is_none() && r2.has_route(&name) {
                    t2 = Some(t0.elapsed());
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            at_r1.extend(t1);
            at_r2.extend(t2);
            drop(p);
            assert!(wait(Duration::from_secs(10), || !r2.has_route(&name)));
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        for (what, took) in [("B's r2", &mut at_r2), ("A's r1 (baseline)", &mut at_r1)] {
            took.sort_unstable();
            println!(
                "pg-live: registration at A's r1 to FIB entry at {what}, {rounds} rounds: \
                 median {:.0} ms, p99 {:.0} ms, min {:.0} ms, max {:.0} ms",
                ms(percentile(took, 50)),
                ms(percentile(took, 99)),
                ms(took[0]),
                ms(took[took.len() - 1]),
            );
        }
        println!(
            "pg-live: median ratio r2/r1 {:.2}",
            ms(percentile(&at_r2, 50)) / ms(percentile(&at_r1, 50))
        );
    }

    // Soft state: controller A dies; its routers' link rows are no longer renewed and
    // expire, so B drops r1 from its graph and the route at r2 goes with it.
    let again = put(&r1, name, &body, dir.path());
    assert!(
        wait(Duration::from_secs(10), || r2.has_route(name)),
        "r2 never got the route back: {}",
        logs()
    );
    drop(ctl_a);
    assert!(
        wait(Duration::from_secs(20), || !r2.has_route(name)),
        "r2 kept the route of a dead controller's router: {}",
        logs()
    );
    drop(again);
}

/// Whether the controller sees a usable link.
fn any_link_up(ctl: &Controller) -> bool {
    ctl.api("/api/topology")["links"]
        .as_array()
        .is_some_and(|l| l.iter().any(|l| l["up"] == true))
}

#[test]
fn a_forwarder_admitted_nowhere_gets_no_link_and_a_router_denied_at_a_is_dropped_at_b() {
    let Some(base) = pg::server("ca_trust_live") else {
        return;
    };
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let db = pg::fresh_db(&base, "nw_trust_live");
    let dir = tempfile::tempdir().unwrap();
    let (ca_a, ca_b) = two_cas(dir.path());
    let ctl_a = serve(&db, &ca_a);
    let ctl_b = serve(&db, &ca_b);
    let mut r1 = Router::new(dir.path(), 1);
    let mut r2 = Router::new(dir.path(), 2);
    // r3 has an identity but was admitted by no controller; it trusts r1 by configuration,
    // so only r1's side can refuse.
    let mut r3 = Router::new(dir.path(), 3);
    let (t1, t2) = (token(&db, &ca_a, &r1.name), token(&db, &ca_b, &r2.name));
    r1.start(&[&r2, &r3], &[], Some((&ctl_a, t1)), dir.path());
    r2.start(&[&r1], &[], Some((&ctl_b, t2)), dir.path());
    r3.start(&[&r1], &[&r1], None, dir.path());
    let logs = || {
        format!(
            "A: {}\nB: {}\nr1: {}\nr2: {}",
            ctl_a.log(),
            ctl_b.log(),
            r1.d().log(),
            r2.d().log()
        )
    };
    assert!(
        wait(Duration::from_secs(15), || r1.link_state(&r2).as_deref()
            == Some("established")),
        "r1-r2 never established: {}",
        logs()
    );
    assert!(
        wait(Duration::from_secs(10), || any_link_up(&ctl_a)),
        "A never saw r1-r2 up: {}",
        logs()
    );

    // r3: refused by r1, and in no controller's topology.
    assert!(
        wait(Duration::from_secs(10), || r1.link_state(&r3).as_deref()
            == Some("refused")),
        "r1 did not refuse r3: {:?}: {}",
        r1.link_state(&r3),
        logs()
    );
    std::thread::sleep(Duration::from_secs(2));
    // (r3's own view may say established: an initiator installs its keys on the response,
    // before the responder's Finish check refuses it; r1 then holds no session with r3.)
    assert_ne!(r1.link_state(&r3).as_deref(), Some("established"));
    for ctl in [&ctl_a, &ctl_b] {
        let topo = ctl.api("/api/topology");
        let text = topo.to_string();
        assert!(!text.contains("/example/r3"), "{text}");
        let links = topo["links"].as_array().unwrap();
        assert_eq!(links.len(), 1, "{text}");
    }

    // r2, admitted by B, is denied through A: B ends its session, r1 stops trusting it
    // (A's next trust object), the link goes down at both controllers.
    run(
        "namewayctl",
        &[
            "deny",
            &r2.name,
            "--db",
            &db,
            "--ca",
            ca_a.to_str().unwrap(),
        ],
    );
    // The deny is committed when the command returns; B's check is woken by its
    // notification: well under the poll's period (margin of seconds for a loaded machine).
    let denied_at = Instant::now();
    assert!(
        wait(Duration::from_secs(10), || ctl_b
            .metric("namewayctl_agents_total{result=\"ended_denied\"} ")
            >= 1),
        "B kept r2's session: {}",
        logs()
    );
    let took = denied_at.elapsed();
    eprintln!(
        "deny through A to r2's session ended at B: {} ms",
        took.as_millis()
    );
    assert!(
        took < Duration::from_secs(5) && took < Duration::from_secs(CA_POLL_S) / 4,
        "B ended r2's session {took:?} after the deny (its poll is every {CA_POLL_S} s): \
         not woken by the notification: {}",
        logs()
    );
    assert!(
        wait(Duration::from_secs(10), || r1.link_state(&r2).as_deref()
            != Some("established")
            && !any_link_up(&ctl_a)
            && !any_link_up(&ctl_b)),
        "r2's link outlived its denial: r1 {:?}, A {}, B {}: {}",
        r1.link_state(&r2),
        ctl_a.api("/api/topology"),
        ctl_b.api("/api/topology"),
        logs()
    );
    // r1 no longer reports r2 at all (its session with r2 ended: no neighbour, up or down),
    // though r2's unprotected hellos may still cross the face in the clear.
    let r1_reports_r2 = || {
        ctl_a.api("/api/topology")["links"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| {
                (l["a"] == r1.name.as_str() && l["b"] == r2.name.as_str() && !l["a_up"].is_null())
                    || (l["b"] == r1.name.as_str()
                        && l["a"] == r2.name.as_str()
                        && !l["b_up"].is_null())
            })
    };
    assert!(
        wait(Duration::from_secs(10), || !r1_reports_r2()),
        "r1 still reports the denied r2: A {}: {}",
        ctl_a.api("/api/topology"),
        logs()
    );
}
