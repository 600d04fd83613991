//! The controller's registry on PostgreSQL, and NFD agent mode, with real processes:
//! `namewayctl serve`, `namewayd`, `nameway-nfd-agent`, `nameway`.
//!
//! - `serve --db postgres://... --ca ctl.db`: an agent's registration is written to the
//!   PostgreSQL database (not to the CA's SQLite file), and a controller started again on
//!   that database, with no agent connected, serves it. Runs against the server of
//!   `scripts/postgres-test-server.sh` (`NAMEWAY_TEST_POSTGRES`); skipped without it, failed
//!   without it under `NAMEWAY_REQUIRE_INTEROP` (CI).
//! - NFD agent mode: two `namewayd` with no `[controller]` section (managed only through
//!   their NFD management, as a stock NFD is), each joined to the controller by a
//!   `nameway-nfd-agent` with the link between them declared; a prefix registered at one is
//!   routed (origin 131) at the other and fetched, and withdrawn when the producer leaves,
//!   while a static route is left alone.
//! - A `namewayd` with a `[controller]` section and a forwarder driven by `nameway-nfd-agent`,
//!   joined by a plain UDP face declared on both sides (`[controller] neighbours` and
//!   `--neighbour`): the controller sees the link up and routes over it both ways.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::ctl::{bin, run, wait, Controller, Proc, SERIAL};
use common::{free_port, Daemon};
use serde_json::Value;

const CTL: u64 = 131;

fn nameway(d: &Daemon, args: &[&str]) -> String {
    let out = Command::new(bin("nameway"))
        .args(["--transport", &d.transport()])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "nameway {args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        d.log()
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `nameway put` of `bytes` under `name` at `d`, serving until dropped.
fn put(d: &Daemon, name: &str, bytes: &[u8], dir: &Path) -> Proc {
    let file = dir.join(name.replace('/', "_"));
    std::fs::write(&file, bytes).unwrap();
    let mut child = Command::new(bin("nameway"))
        .args(["--transport", &d.transport(), "put", "--json"])
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

/// Routes of `d` as (prefix, face, origin).
fn routes(d: &Daemon) -> Vec<(String, u64, u64)> {
    let v: Value = serde_json::from_str(&nameway(d, &["route", "list", "--json"])).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["prefix"].as_str().unwrap().to_owned(),
                r["face_id"].as_u64().unwrap(),
                r["origin"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The faces of `d`'s routes of origin 131 for `prefix`.
fn ctl_route(d: &Daemon, prefix: &str) -> Vec<u64> {
    routes(d)
        .into_iter()
        .filter(|(p, _, o)| p == prefix && *o == CTL)
        .map(|(_, f, _)| f)
        .collect()
}

fn face_to(d: &Daemon, uri: &str) -> u64 {
    let v: Value = serde_json::from_str(&nameway(d, &["face", "list", "--json"])).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .find(|f| f["uri"] == uri)
        .unwrap_or_else(|| panic!("no face to {uri}: {v}"))["face_id"]
        .as_u64()
        .unwrap()
}

// ---------------------------------------------------------------------------------------
// serve on PostgreSQL

#[path = "../../ctl/tests/support/postgres.rs"]
mod pg;
use pg::{fresh_db, server as postgres};

/// `psql -c sql` on `conninfo`: its output.
fn psql(conninfo: &str, sql: &str) -> String {
    pg::psql(conninfo, &["-c", sql])
}

#[test]
fn serve_on_postgresql_keeps_the_registry_there_and_serves_it_after_a_restart() {
    let Some(base) = postgres("serve_on_postgresql") else {
        return;
    };
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let pg = fresh_db(&base, "nw_serve_restart");
    let dir = tempfile::tempdir().unwrap();
    let ctl_dir = tempfile::tempdir().unwrap();
    let ca = ctl_dir.path().join("ctl.db");
    let ca_s = ca.to_str().unwrap().to_owned();
    run(
        "namewayctl",
        &["init", "--domain", "/example", "--db", &ca_s],
    );
    let args = ["--db", pg.as_str(), "--ca", &ca_s];
    let ctl = Controller::launch(ctl_dir, "127.0.0.1:0", &args, &[]);
    // A PostgreSQL --db without the CA's file is refused in one line.
    let out = Command::new(bin("namewayctl"))
        .args(["serve", "--db", &pg, "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--ca"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let state = dir.path().join("state-r1");
    let cfg = format!(
        "[controller]\nuri = \"tcp://{}\"\nkey = {:?}\nname = \"/example/r1\"\ntoken = {:?}\nstate_dir = {state:?}\nreport_interval_ms = 50\n",
        ctl.listen,
        ctl.pin,
        ctl.token("/example/r1"),
    );
    let r1 = Daemon::start_on(&bin("namewayd"), free_port(), free_port(), &cfg);
    let producer = put(&r1, "/example/pg/video", b"kept in postgresql", dir.path());
    let wanted = ("/example/pg/video".to_owned(), "/example/r1".to_owned());
    assert!(
        wait(Duration::from_secs(10), || ctl.registry().contains(&wanted)),
        "registry: {:?}\n{}",
        ctl.registry(),
        r1.log()
    );
    // In PostgreSQL, with the router's record; not in the CA's SQLite file.
    assert_eq!(
        psql(&pg, "SELECT uri || ' ' || node FROM registrations").trim(),
        "/example/pg/video /example/r1"
    );
    assert_eq!(psql(&pg, "SELECT name FROM nodes").trim(), "/example/r1");
    let in_sqlite = run("namewayctl", &["registry", "list", "--db", &ca_s]);
    assert!(!in_sqlite.contains("/example/pg/video"), "{in_sqlite}");

    // Controller and forwarder gone; a controller started again on the same database,
    // with no agent to report anything, serves the registration from PostgreSQL.
    drop(producer);
    drop(r1);
    let stopped = ctl.restart_later();
    let again = Controller::launch(stopped.dir, &stopped.listen, &args, &[]);
    assert_eq!(
        again.api("/api/topology")["routers"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    assert!(again.registry().contains(&wanted), "{:?}", again.registry());
    let listed = run("namewayctl", &["registry", "list", "--db", &pg]);
    assert!(listed.contains("/example/pg/video"), "{listed}");
}

// ---------------------------------------------------------------------------------------
// NFD agent mode

/// A `nameway-nfd-agent` for the forwarder `d`.
fn nfd_agent(
    ctl: &Controller,
    d: &Daemon,
    name: &str,
    token: &str,
    state: &Path,
    neighbours: &[String],
    log: &Path,
) -> Proc {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_nameway-nfd-agent"));
    cmd.args(["--nfd", &d.transport(), "--controller"])
        .arg(format!("tcp://{}", ctl.listen))
        .args(["--key", &ctl.pin, "--name", name, "--token", token])
        .arg("--state-dir")
        .arg(state)
        .args(["--report-interval-ms", "100"]);
    for n in neighbours {
        cmd.args(["--neighbour", n]);
    }
    let child = cmd
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    Proc(child)
}

/// The link key a `nameway-nfd-agent` with `state` will have (made now, kept there).
fn link_key(state: &Path) -> String {
    std::fs::create_dir_all(state).unwrap();
    let (id, _) = nameway_face::secure::Identity::load_or_create(&state.join("link.key")).unwrap();
    hex::encode(id.public_key().0)
}

#[test]
fn an_nfd_agent_reports_the_forwarders_registrations_and_installs_the_controllers_routes_with_rib_commands(
) {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir().unwrap();
    let ctl = Controller::start();
    // Two forwarders joined by a plain UDP link, no [controller] section.
    let (udp_a, udp_b) = (free_port(), free_port());
    let uri_a = format!("udp4://127.0.0.1:{udp_a}");
    let uri_b = format!("udp4://127.0.0.1:{udp_b}");
    let a = Daemon::start_on(
        &bin("namewayd"),
        free_port(),
        udp_a,
        &format!("[[face]]\nuri = {uri_b:?}\n"),
    );
    let b = Daemon::start_on(
        &bin("namewayd"),
        free_port(),
        udp_b,
        &format!("[[face]]\nuri = {uri_a:?}\n"),
    );
    let face_ab = face_to(&a, &uri_b);
    // A route of another origin, which the agent must leave alone.
    nameway(
        &a,
        &[
            "route",
            "add",
            "/example/static",
            &face_ab.to_string(),
            "--origin",
            "255",
        ],
    );

    let (state_a, state_b) = (dir.path().join("state-a"), dir.path().join("state-b"));
    let (key_a, key_b) = (link_key(&state_a), link_key(&state_b));
    let _agent_a = nfd_agent(
        &ctl,
        &a,
        "/example/n1",
        &ctl.token("/example/n1"),
        &state_a,
        &[format!("{key_b}={uri_b}")],
        &dir.path().join("agent-a.log"),
    );
    let _agent_b = nfd_agent(
        &ctl,
        &b,
        "/example/n2",
        &ctl.token("/example/n2"),
        &state_b,
        &[format!("{key_a}={uri_a}")],
        &dir.path().join("agent-b.log"),
    );
    let logs = || {
        format!(
            "agent a:\n{}\nagent b:\n{}\nctl:\n{}",
            std::fs::read_to_string(dir.path().join("agent-a.log")).unwrap_or_default(),
            std::fs::read_to_string(dir.path().join("agent-b.log")).unwrap_or_default(),
            ctl.log(),
        )
    };
    // Both enrolled, and the link counts: both ends report it.
    assert!(
        wait(Duration::from_secs(15), || link_up(
            &ctl,
            "/example/n1",
            "/example/n2"
        )),
        "{}",
        logs()
    );

    // An application's registration at b is routed at a, by rib/register with origin 131.
    let bytes: Vec<u8> = (0..20_000u32).map(|i| (i * 7) as u8).collect();
    let producer = put(&b, "/example/nfd/video", &bytes, dir.path());
    let ctl_route = |d: &Daemon| ctl_route(d, "/example/nfd/video");
    assert!(
        wait(Duration::from_secs(10), || ctl_route(&a) == vec![face_ab]),
        "a's routes: {:?}\n{}",
        routes(&a),
        logs()
    );
    assert!(
        ctl.registry()
            .contains(&("/example/nfd/video".into(), "/example/n2".into())),
        "{:?}",
        ctl.registry()
    );
    assert_eq!(get(&a, "/example/nfd/video", dir.path()), bytes);

    // The producer leaves: the controller's route is withdrawn with rib/unregister; the
    // static route stays.
    drop(producer);
    assert!(
        wait(Duration::from_secs(10), || ctl_route(&a).is_empty()),
        "a's routes: {:?}\n{}",
        routes(&a),
        logs()
    );
    assert!(
        routes(&a).contains(&("/example/static".into(), face_ab, 255)),
        "{:?}",
        routes(&a)
    );
    // Only the agent's own routes are of origin 131 at a, and none is left.
    assert!(
        routes(&a).iter().all(|(_, _, o)| *o != CTL),
        "{:?}",
        routes(&a)
    );
}

// ---------------------------------------------------------------------------------------
// A namewayd and an NFD agent's forwarder, joined by a declared link

/// Whether the controller has the link `x` – `y` up (both ends report it).
fn link_up(ctl: &Controller, x: &str, y: &str) -> bool {
    ctl.api("/api/topology")["links"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| {
            let ends = (l["a"].as_str(), l["b"].as_str());
            (ends == (Some(x), Some(y)) || ends == (Some(y), Some(x))) && l["up"] == true
        })
}

/// `nameway get` of `name` at `d`: the bytes.
fn get(d: &Daemon, name: &str, dir: &Path) -> Vec<u8> {
    let out = dir.join(format!("got{}", name.replace('/', "_")));
    nameway(
        d,
        &[
            "get",
            "-q",
            "--lifetime",
            "1000",
            "-o",
            out.to_str().unwrap(),
            name,
        ],
    );
    std::fs::read(&out).unwrap()
}

#[test]
fn a_namewayd_and_an_nfd_agents_forwarder_use_a_plain_link_declared_on_both_sides() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir().unwrap();
    let ctl = Controller::start();
    let (udp_a, udp_b) = (free_port(), free_port());
    let uri_a = format!("udp4://127.0.0.1:{udp_a}");
    let uri_b = format!("udp4://127.0.0.1:{udp_b}");
    let (state_a, state_b) = (dir.path().join("state-a"), dir.path().join("state-b"));
    // a's key is the one its agent makes in state_dir/link.key (no [security] section).
    let (key_a, key_b) = (link_key(&state_a), link_key(&state_b));
    // a: namewayd with its own agent, the link to b declared; b: namewayd with no
    // [controller] section, driven by nameway-nfd-agent as a stock NFD would be.
    let a = Daemon::start_on(
        &bin("namewayd"),
        free_port(),
        udp_a,
        &format!(
            "[controller]\nuri = \"tcp://{}\"\nkey = {:?}\nname = \"/example/r1\"\ntoken = {:?}\nstate_dir = {state_a:?}\nreport_interval_ms = 50\nneighbours = [{{ key = \"{key_b}\", face = {uri_b:?} }}]\n\n[[face]]\nuri = {uri_b:?}\n",
            ctl.listen,
            ctl.pin,
            ctl.token("/example/r1"),
        ),
    );
    let b = Daemon::start_on(
        &bin("namewayd"),
        free_port(),
        udp_b,
        &format!("[[face]]\nuri = {uri_a:?}\n"),
    );
    let (face_ab, face_ba) = (face_to(&a, &uri_b), face_to(&b, &uri_a));
    let _agent_b = nfd_agent(
        &ctl,
        &b,
        "/example/n2",
        &ctl.token("/example/n2"),
        &state_b,
        &[format!("{key_a}={uri_a}")],
        &dir.path().join("agent-b.log"),
    );
    let logs = || {
        format!(
            "a:\n{}\nagent b:\n{}\nctl:\n{}",
            a.log(),
            std::fs::read_to_string(dir.path().join("agent-b.log")).unwrap_or_default(),
            ctl.log(),
        )
    };
    assert!(
        wait(Duration::from_secs(15), || link_up(
            &ctl,
            "/example/r1",
            "/example/n2"
        )),
        "topology: {}\n{}",
        ctl.api("/api/topology"),
        logs()
    );

    // Behind b (the NFD agent's side), fetched at a through the route the controller gave
    // namewayd's agent over the declared face.
    let from_b: Vec<u8> = (0..20_000u32).map(|i| (i * 13) as u8).collect();
    let _producer_b = put(&b, "/example/mixed/b", &from_b, dir.path());
    assert!(
        wait(Duration::from_secs(10), || ctl_route(
            &a,
            "/example/mixed/b"
        ) == vec![face_ab]),
        "a's routes: {:?}\n{}",
        routes(&a),
        logs()
    );
    assert_eq!(get(&a, "/example/mixed/b", dir.path()), from_b);

    // And the other way: behind a, routed at b with rib/register.
    let from_a: Vec<u8> = (0..20_000u32).map(|i| (i * 5 + 1) as u8).collect();
    let _producer_a = put(&a, "/example/mixed/a", &from_a, dir.path());
    assert!(
        wait(Duration::from_secs(10), || ctl_route(
            &b,
            "/example/mixed/a"
        ) == vec![face_ba]),
        "b's routes: {:?}\n{}",
        routes(&b),
        logs()
    );
    assert_eq!(get(&b, "/example/mixed/a", dir.path()), from_a);
}

/// `nameway-nfd-agent` on `tls://` takes the TLS files as flags, and says in one line which
/// one is missing or unusable before it dials anything.
#[test]
fn the_nfd_agents_tls_flags_are_checked_with_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let agent = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_nameway-nfd-agent"))
            .args(["--nfd", "unix:///nonexistent.sock", "--controller"])
            .arg("tls://127.0.0.1:9")
            .args(["--key", &format!("ed25519:{}", "ab".repeat(32))])
            .args(["--name", "/example/n1", "--state-dir"])
            .arg(dir.path().join("state"))
            .args(extra)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8(out.stderr).unwrap()
    };
    let e = agent(&[]);
    assert!(e.contains("controller.tls_ca must be set"), "{e}");
    let missing = dir.path().join("ca.pem");
    let m = missing.to_str().unwrap();
    let e = agent(&["--tls-ca", m, "--tls-cert", m, "--tls-key", m]);
    assert!(e.contains("controller.tls_*: ") && e.contains(m), "{e}");
    assert!(!e.contains("panicked") && !e.contains("backtrace"), "{e}");
}
