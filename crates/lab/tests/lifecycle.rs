//! Bring-up and teardown leave nothing behind: after Ctrl-C or SIGTERM, after the runner is
//! killed with SIGKILL (then `lab down`, or the next `lab up`, cleans up), and a bad topology
//! starts nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::{Child, Stdio};

use common::*;

/// Two forwarders and an app; every name is unique to the test (namespaces are global).
fn topology(dir: &Path, name: &str) -> std::path::PathBuf {
    let text = format!(
        "name = \"{name}\"\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[node]]\nname = \"srv\"\nkind = \"app\"\non = \"b\"\ncommand = \"nameway ping-server /t\"\nready = \"PING SERVER\"\n[[link]]\na = \"a\"\nb = \"b\"\nrate_mbps = 50\ndelay_ms = 1\n[[route]]\nprefix = \"/t\"\nto = \"b\"\n"
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

fn start(dir: &Path, file: &Path) -> Child {
    lab(dir, &["up", file.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn pids(state: &serde_json::Value) -> Vec<u32> {
    state["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["proc"]["pid"].as_u64())
        .map(|p| u32::try_from(p).unwrap())
        .collect()
}

fn alive(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !stat.is_empty()
        && !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
}

fn signal(pid: u32, sig: rustix::process::Signal) {
    let pid = rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap();
    rustix::process::kill_process(pid, sig).unwrap();
}

#[test]
fn sigterm_and_sigint_tear_everything_down() {
    if !root() {
        return;
    }
    for (name, sig) in [
        ("t-term", rustix::process::Signal::TERM),
        ("t-int", rustix::process::Signal::INT),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let file = topology(dir.path(), name);
        let mut runner = start(dir.path(), &file);
        let state = wait_up(dir.path(), name, runner.id(), 60);
        assert_eq!(namespaces(name).len(), 2);
        let procs = pids(&state);
        assert_eq!(procs.len(), 3, "{state}");
        assert!(procs.iter().all(|p| alive(*p)));
        assert_eq!(sockets_under(dir.path()).len(), 2);
        // The lab answers while it is up.
        let status = lab_output(dir.path(), &["status", name, "--json"]);
        let json: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
        let nodes = json[0]["nodes"].as_array().unwrap();
        assert_eq!(nodes.len(), 2);
        assert!(
            nodes
                .iter()
                .all(|n| n["error"].is_null() && n["faces"].as_u64().unwrap() >= 2),
            "{json}"
        );
        signal(runner.id(), sig);
        let code = runner.wait().unwrap();
        assert!(code.success(), "{name}: runner exited with {code}");
        assert_nothing_left(dir.path(), name);
        assert!(procs.iter().all(|p| !alive(*p)));
        // Logs stay.
        assert!(dir.path().join(name).join("logs/a.log").is_file());
    }
}

#[test]
fn a_killed_runner_takes_its_processes_and_down_removes_the_rest() {
    if !root() {
        return;
    }
    let name = "t-kill";
    let dir = tempfile::tempdir().unwrap();
    let file = topology(dir.path(), name);
    let mut runner = start(dir.path(), &file);
    let state = wait_up(dir.path(), name, runner.id(), 60);
    let procs = pids(&state);
    signal(runner.id(), rustix::process::Signal::KILL);
    runner.wait().unwrap();
    // The processes die with the runner (parent-death signal); the namespaces stay.
    assert!(
        eventually(10, || procs.iter().all(|p| !alive(*p))),
        "processes outlived the runner"
    );
    assert_eq!(namespaces(name).len(), 2);
    let out = lab_output(dir.path(), &["down", name]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("2 namespaces deleted"), "{text}");
    assert_nothing_left(dir.path(), name);
    // Nothing more to do the second time.
    let again = lab_output(dir.path(), &["down", name]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("nothing was up"));
}

#[test]
fn the_next_up_cleans_what_a_killed_runner_left() {
    if !root() {
        return;
    }
    let name = "t-reup";
    let dir = tempfile::tempdir().unwrap();
    let file = topology(dir.path(), name);
    let mut first = start(dir.path(), &file);
    let old = wait_up(dir.path(), name, first.id(), 60);
    signal(first.id(), rustix::process::Signal::KILL);
    first.wait().unwrap();
    assert_eq!(namespaces(name).len(), 2);
    // While a runner is alive a second `up` is refused.
    let mut second = start(dir.path(), &file);
    let new = wait_up(dir.path(), name, second.id(), 60);
    assert_ne!(old["runner"]["pid"], new["runner"]["pid"]);
    let refused = lab_output(dir.path(), &["up", file.to_str().unwrap()]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains(&format!("lab {name} is up")), "{err}");
    assert_eq!(namespaces(name).len(), 2);
    let down = lab_output(dir.path(), &["down", name]);
    assert!(down.status.success());
    second.wait().unwrap();
    assert_nothing_left(dir.path(), name);
}

#[test]
fn a_bad_topology_starts_nothing() {
    if !root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("name = \"t-bad1\"\n[[node]]\nname = \"a\"\n[[link]]\na = \"a\"\nb = \"a\"\n", "link a-a: a link from a node to itself"),
        ("name = \"t-bad2\"\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[link]]\na = \"a\"\nb = \"b\"\nrate_mbps = 0\n", "link a-b: rate_mbps must be above 0"),
        // Only namewayd itself knows its keys: the lab asks it before starting anything.
        ("name = \"t-bad3\"\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\nconfig = \"[cs]\\ncapacty = 5\\n\"\n", "node b: namewayd refuses its configuration"),
    ];
    for (text, want) in cases {
        let file = dir.path().join("bad.toml");
        std::fs::write(&file, text).unwrap();
        let out = lab_output(dir.path(), &["up", file.to_str().unwrap()]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "not one line: {err}");
        assert!(err.contains(want), "want {want:?}, got {err}");
        let name = text.split('"').nth(1).unwrap();
        assert!(namespaces(name).is_empty());
        assert!(processes_with(&dir.path().display().to_string()).is_empty());
        assert!(!dir.path().join(name).join("state.json").exists());
    }
}
