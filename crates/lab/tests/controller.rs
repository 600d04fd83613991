//! The controller in the lab: `crates/lab/topologies/ctl10.toml` (ten forwarders that take
//! their routes from `namewayctl serve` on the management network) comes up, the controller
//! routes the server's object everywhere, a link on the path fails silently during a `nameway
//! get` (both veth ends down: no face goes down) and the routes move off it while the get
//! completes with the right bytes; registrations at one edge become routes at the other; and
//! teardown leaves nothing, the controller and its namespace included. Correctness only: the
//! times are measured by scripts/bench-ctl-lab.sh.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::*;
use nameway_lab::plan::Plan;
use nameway_lab::Topology;

const LAB: &str = "t-ctl10";
const OBJ: &str = "/lab/object";

fn nw(sock: &Path, args: &[&str]) -> String {
    let out = Command::new(bin_dir().join("nameway"))
        .arg("--transport")
        .arg(format!("unix://{}", sock.display()))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "nameway {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The faces of the controller's routes (origin 131) for `prefix` at the node of `sock`.
fn ctl_faces(sock: &Path, prefix: &str) -> Vec<u64> {
    let routes: serde_json::Value =
        serde_json::from_str(&nw(sock, &["route", "list", "--json"])).unwrap();
    let mut faces: Vec<u64> = routes
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["prefix"] == prefix && r["origin"] == 131)
        .map(|r| r["face_id"].as_u64().unwrap())
        .collect();
    faces.sort_unstable();
    faces
}

/// The face of `node` whose remote URI is `uri`.
fn face(sock: &Path, uri: &str) -> u64 {
    let faces: serde_json::Value =
        serde_json::from_str(&nw(sock, &["face", "list", "--json"])).unwrap();
    faces
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["uri"] == uri)
        .and_then(|f| f["face_id"].as_u64())
        .unwrap_or_else(|| panic!("no face {uri}: {faces}"))
}

/// `nameway get` of the object at the node of `sock` into `out` (a fixed window of 2, so
/// that it is still running when a failure comes).
fn start_get(sock: &Path, out: &Path) -> std::process::Child {
    Command::new(bin_dir().join("nameway"))
        .arg("--transport")
        .arg(format!("unix://{}", sock.display()))
        .args(["get", "-q", "--cc", "fixed", "-w", "2", "-o"])
        .arg(out)
        .arg(OBJ)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for a get from [`start_get`]: it succeeded and wrote `want`.
fn finish_get(mut get: std::process::Child, out: &Path, want: &[u8], what: &str) {
    let status = get.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(get.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "the get{what} failed: {err}");
    assert!(
        std::fs::read(out).unwrap() == want,
        "the get{what} returned other bytes"
    );
}

fn ip(args: &[&str]) {
    let status = Command::new("ip").args(args).status().unwrap();
    assert!(status.success(), "ip {args:?}");
}

#[test]
fn ctl10_routes_around_a_silent_link_failure_and_a_router_crash_and_tears_down_clean() {
    if !root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("topologies/ctl10.toml"),
    )
    .unwrap()
    .replace("name = \"ctl10\"", &format!("name = \"{LAB}\""))
    // 4 MiB keeps the test short; the benchmark fetches 16.
    .replace("head -c 16777216", "head -c 4194304");
    let file = dir.path().join("ctl10.toml");
    std::fs::write(&file, &text).unwrap();
    let t = Topology::parse(&text, "x").unwrap();
    let plan = Plan::new(&t, dir.path());

    let mut runner = lab(dir.path(), &["up", file.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let state = wait_up(dir.path(), LAB, runner.id(), 120);
    // Ten forwarders' namespaces and the controller's, and namewayctl serve running there.
    let mut all = namespaces(LAB);
    all.sort();
    assert_eq!(all.len(), 11, "{all:?}");
    assert!(all.contains(&format!("nwl-{LAB}-ctl")), "{all:?}");
    let ctl_pid = state["extra"][0]["pid"].as_u64().unwrap();
    let cmdline = std::fs::read(format!("/proc/{ctl_pid}/cmdline")).unwrap();
    assert!(
        String::from_utf8_lossy(&cmdline).contains("namewayctl\0serve"),
        "{}",
        String::from_utf8_lossy(&cmdline)
    );

    let sock = |n: &str| plan.node(n).unwrap().socket.clone();
    let (r1, r10) = (t.node_index("r1").unwrap(), t.node_index("r10").unwrap());
    // r1 reaches r10 through r3 (the chords make it 5 hops); its other link goes to r2.
    let toward = |peer: &str| {
        let p = t.node_index(peer).unwrap();
        plan.nodes[r1]
            .interfaces
            .iter()
            .find(|i| i.peer == p)
            .unwrap()
            .clone()
    };
    let (via_r3, via_r2) = (toward("r3"), toward("r2"));
    let (f3, f2) = (
        face(&sock("r1"), &via_r3.peer_uri()),
        face(&sock("r1"), &via_r2.peer_uri()),
    );
    // Every forwarder but r10 gets the controller's route to the server's object.
    assert!(
        eventually(60, || (0..10).filter(|&i| i != r10).all(|i| !ctl_faces(
            &plan.nodes[i].socket,
            OBJ
        )
        .is_empty())),
        "the controller did not route {OBJ} everywhere"
    );
    assert_eq!(ctl_faces(&sock("r1"), OBJ), vec![f3]);

    // C1: the r1-r3 link goes silent while r1 fetches the object.
    let got = dir.path().join("got.bin");
    let get = start_get(&sock("r1"), &got);
    std::thread::sleep(std::time::Duration::from_millis(200));
    let r3 = t.node_index("r3").unwrap();
    let r3_end = plan.nodes[r3]
        .interfaces
        .iter()
        .find(|i| i.link == via_r3.link)
        .unwrap()
        .clone();
    ip(&[
        "-n",
        &plan.nodes[r1].netns,
        "link",
        "set",
        &via_r3.name,
        "down",
    ]);
    ip(&[
        "-n",
        &plan.nodes[r3].netns,
        "link",
        "set",
        &r3_end.name,
        "down",
    ]);
    assert!(
        eventually(30, || ctl_faces(&sock("r1"), OBJ) == vec![f2]),
        "r1 still routes {OBJ} through {:?} 30 s after its link to r3 failed",
        ctl_faces(&sock("r1"), OBJ)
    );
    // No face went down: the hellos found the failure.
    assert_eq!(face(&sock("r1"), &via_r3.peer_uri()), f3);
    let want = std::fs::read(plan.nodes[r10].dir.join("object.bin")).unwrap();
    assert_eq!(want.len(), 4 << 20);
    finish_get(get, &got, &want, "");
    // The link comes back, and so does the shorter route.
    ip(&[
        "-n",
        &plan.nodes[r1].netns,
        "link",
        "set",
        &via_r3.name,
        "up",
    ]);
    ip(&[
        "-n",
        &plan.nodes[r3].netns,
        "link",
        "set",
        &r3_end.name,
        "up",
    ]);
    assert!(
        eventually(30, || ctl_faces(&sock("r1"), OBJ) == vec![f3]),
        "r1 did not route through r3 again"
    );

    // C2: an application's registration at r10 becomes the controller's route at r1.
    for k in 0..3 {
        let prefix = format!("/lab/c2/{k}");
        nw(
            &sock("r10"),
            &["route", "add", &prefix, "255", "--origin", "0"],
        );
        assert!(
            eventually(10, || ctl_faces(&sock("r1"), &prefix) == vec![f3]),
            "{prefix} registered at r10 is not routed at r1"
        );
    }

    // A router crash: r9 (SIGKILL through `nameway lab kill`) while r1 fetches the object.
    // r7 reaches r10 through r9 and through r8 (equal cost); without r9, through r8 only.
    // The lab stays up, the get completes, and r9 restarted takes its share back.
    let r7 = t.node_index("r7").unwrap();
    let r7_toward = |peer: &str| {
        let p = t.node_index(peer).unwrap();
        let i = plan.nodes[r7]
            .interfaces
            .iter()
            .find(|i| i.peer == p)
            .unwrap();
        face(&sock("r7"), &i.peer_uri())
    };
    let (f78, f79) = (r7_toward("r8"), r7_toward("r9"));
    let mut both = vec![f78, f79];
    both.sort_unstable();
    assert_eq!(ctl_faces(&sock("r7"), OBJ), both);
    let _ = std::fs::remove_file(&got);
    let get = start_get(&sock("r1"), &got);
    std::thread::sleep(std::time::Duration::from_millis(200));
    let r9_pid = state["nodes"][t.node_index("r9").unwrap()]["proc"]["pid"]
        .as_u64()
        .unwrap();
    let out = lab_output(dir.path(), &["kill", LAB, "r9"]);
    assert!(
        out.status.success(),
        "lab kill: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("r9 killed"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Killed and reaped before the runner answered.
    assert!(
        !Path::new(&format!("/proc/{r9_pid}")).exists(),
        "r9 (pid {r9_pid}) still there"
    );
    assert!(
        eventually(30, || ctl_faces(&sock("r7"), OBJ) == vec![f78]),
        "r7 still routes {OBJ} through r9 30 s after r9 crashed: {:?}",
        ctl_faces(&sock("r7"), OBJ)
    );
    finish_get(get, &got, &want, " across r9's crash");
    // The lab is still up (its runner did not tear it down for the crash) ...
    assert!(runner.try_wait().unwrap().is_none(), "the runner ended");
    // ... a second kill is refused with its reason ...
    let out = lab_output(dir.path(), &["kill", LAB, "r9"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not running"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // ... and r9 restarted (its identity and certificate kept) is routed through again.
    let out = lab_output(dir.path(), &["restart", LAB, "r9"]);
    assert!(
        out.status.success(),
        "lab restart: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        eventually(60, || ctl_faces(&sock("r7"), OBJ) == both),
        "r7 does not route {OBJ} through the restarted r9: {:?}",
        ctl_faces(&sock("r7"), OBJ)
    );

    // Teardown (SIGTERM to the runner) leaves nothing, the controller included.
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(i32::try_from(runner.id()).unwrap()).unwrap(),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    assert!(runner.wait().unwrap().success());
    assert_nothing_left(dir.path(), LAB);
    assert!(
        !Path::new(&format!("/proc/{ctl_pid}")).exists(),
        "namewayctl serve left running"
    );
    assert!(dir.path().join(LAB).join("logs/ctl.log").exists());
}

#[test]
fn a_killed_runner_takes_the_controller_and_down_removes_its_namespace() {
    if !root() {
        return;
    }
    let name = "t-ctl-kill";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("two.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"{name}\"\n[controller]\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[link]]\na = \"a\"\nb = \"b\"\nsecure = \"per-prefix\"\n"
        ),
    )
    .unwrap();
    let mut runner = lab(dir.path(), &["up", file.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let state = wait_up(dir.path(), name, runner.id(), 60);
    let ctl_pid = state["extra"][0]["pid"].as_u64().unwrap();
    assert!(Path::new(&format!("/proc/{ctl_pid}")).exists());
    assert_eq!(namespaces(name).len(), 3);
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(i32::try_from(runner.id()).unwrap()).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    runner.wait().unwrap();
    // The controller dies with the runner (parent-death signal); the namespaces stay.
    let needle = dir.path().join(name).display().to_string();
    assert!(
        eventually(10, || processes_with(&needle).is_empty()),
        "processes outlived the runner: {:?}",
        processes_with(&needle)
    );
    assert_eq!(namespaces(name).len(), 3);
    let out = lab_output(dir.path(), &["down", name]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("3 namespaces deleted"), "{text}");
    assert_nothing_left(dir.path(), name);
}
