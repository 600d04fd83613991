//! Helpers for the lab's end-to-end tests: the real `nameway`, `namewayd` and `namewayctl`
//! binaries (built once per test process with the test's profile), root, and checks that
//! nothing is left.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The folder with `nameway`, `namewayd` and `namewayctl` (`NAMEWAY_BIN_DIR` overrides it): the test's own
/// target folder, where `cargo test --workspace` has just built both. When a source file of
/// the workspace is newer than either (a run of this package's tests alone, after an edit),
/// they are built first. Building them unconditionally would rebuild shared dependencies
/// with this package's feature set and back again at every run.
pub fn bin_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(d) = std::env::var_os("NAMEWAY_BIN_DIR") {
            return PathBuf::from(d);
        }
        // target/<profile>/deps/<test> -> target/<profile>
        let exe = std::env::current_exe().unwrap();
        let dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
        let built = ["nameway", "namewayd", "namewayctl"]
            .iter()
            .map(|b| modified(&dir.join(b)))
            .min()
            .flatten();
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        if built.is_none_or(|b| newest_source(&workspace) > b) {
            let mut build = Command::new(env!("CARGO"));
            build.args([
                "build",
                "--quiet",
                "-p",
                "nameway",
                "-p",
                "namewayd",
                "-p",
                "nameway-ctl",
            ]);
            if dir.file_name().is_some_and(|d| d == "release") {
                build.arg("--release");
            }
            let status = build.current_dir(&workspace).status().unwrap();
            assert!(
                status.success(),
                "cargo build -p nameway -p namewayd -p nameway-ctl failed"
            );
        }
        dir
    })
    .clone()
}

fn modified(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The newest modification time of what the binaries are built from: the manifests, the lock
/// file, and each crate's `src/` and `assets/` (not its tests).
fn newest_source(workspace: &Path) -> std::time::SystemTime {
    let mut newest = std::time::SystemTime::UNIX_EPOCH;
    let mut stack = Vec::new();
    for f in ["Cargo.toml", "Cargo.lock"] {
        newest = newest.max(modified(&workspace.join(f)).unwrap_or(newest));
    }
    for c in std::fs::read_dir(workspace.join("crates"))
        .unwrap()
        .flatten()
    {
        newest = newest.max(modified(&c.path().join("Cargo.toml")).unwrap_or(newest));
        stack.push(c.path().join("src"));
        stack.push(c.path().join("assets"));
    }
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                newest = newest.max(modified(&path).unwrap_or(newest));
            }
        }
    }
    newest
}

/// Whether the test may run: root is needed. Without root the test is skipped with a
/// message, unless CI or NAMEWAY_REQUIRE_INTEROP says everything must run.
pub fn root() -> bool {
    if rustix::process::geteuid().is_root() {
        return true;
    }
    let required =
        std::env::var_os("CI").is_some() || std::env::var_os("NAMEWAY_REQUIRE_INTEROP").is_some();
    assert!(!required, "the lab tests need root (network namespaces)");
    eprintln!("skipped: the lab tests need root");
    false
}

/// `nameway lab --dir DIR --bin-dir BIN ARGS...`.
pub fn lab(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin_dir().join("nameway"));
    c.arg("lab")
        .arg("--dir")
        .arg(dir)
        .arg("--bin-dir")
        .arg(bin_dir())
        .args(args);
    c
}

/// Runs `nameway lab ...` to completion.
pub fn lab_output(dir: &Path, args: &[&str]) -> Output {
    lab(dir, args).output().unwrap()
}

/// The network namespaces of lab `name`.
pub fn namespaces(name: &str) -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let prefix = format!("nwl-{name}-");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(&prefix))
        .map(str::to_owned)
        .collect()
}

/// Processes whose command line mentions `needle` (the lab's folder, say).
pub fn processes_with(needle: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        let state = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = state
            .rsplit(')')
            .next()
            .is_some_and(|s| s.trim_start().starts_with('Z'));
        if cmd.contains(needle) && !zombie && pid != std::process::id() {
            pids.push(pid);
        }
    }
    pids
}

/// Sockets left under `dir`.
pub fn sockets_under(dir: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::FileTypeExt as _;
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_socket() {
                out.push(e.path());
            }
        }
    }
    out
}

/// Polls `f` until it is true or `secs` pass; returns whether it became true.
pub fn eventually(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if f() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The lab's state file as JSON, once it says the lab is up under `runner`.
pub fn wait_up(dir: &Path, name: &str, runner: u32, secs: u64) -> serde_json::Value {
    let path = dir.join(name).join("state.json");
    let mut state = serde_json::Value::Null;
    let up = eventually(secs, || {
        state = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        state["up"] == true && state["runner"]["pid"] == runner
    });
    assert!(up, "lab {name} not up after {secs} s; state: {state}");
    state
}

/// veth interfaces of the root namespace whose peer is in one of lab `name`'s namespaces.
pub fn root_veths(name: &str) -> Vec<String> {
    let out = Command::new("ip")
        .args(["-o", "link", "show", "type", "veth"])
        .output()
        .unwrap();
    let needle = format!("link-netns nwl-{name}-");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(&needle))
        .map(str::to_owned)
        .collect()
}

/// Asserts that lab `name` under `dir` left no namespace, veth, process or socket.
pub fn assert_nothing_left(dir: &Path, name: &str) {
    assert_eq!(root_veths(name), Vec::<String>::new(), "veths left");
    let lab_dir = dir.join(name);
    assert!(
        eventually(10, || namespaces(name).is_empty()),
        "namespaces left: {:?}",
        namespaces(name)
    );
    let needle = lab_dir.display().to_string();
    assert!(
        eventually(10, || processes_with(&needle).is_empty()),
        "processes left: {:?}",
        processes_with(&needle)
    );
    assert_eq!(
        sockets_under(&lab_dir),
        Vec::<PathBuf>::new(),
        "sockets left"
    );
    assert!(!lab_dir.join("state.json").exists(), "state file left");
    assert!(!lab_dir.join("nodes").exists(), "node folders left");
}
