//! Real python-ndn applications driven by the end-to-end tests (shared by the daemon's and
//! the CLI's tests): the interop venv's python, and a background app whose JSON lines are read.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use super::read_lines;

/// The venv's python, or None when the interop venv is not installed (then the test must fail
/// if NAMEWAY_REQUIRE_INTEROP or CI is set).
pub fn python() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("NAMEWAY_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let py = repo.join(".venv/bin/python");
    if py.exists() {
        return Some(py);
    }
    assert!(
        !interop_required(),
        "python-ndn venv missing: run scripts/setup-python.sh"
    );
    eprintln!("SKIPPED: python-ndn venv missing (run scripts/setup-python.sh)");
    None
}

/// Whether a missing interop tool must fail the test (in CI and with NAMEWAY_REQUIRE_INTEROP)
/// rather than skip it.
pub fn interop_required() -> bool {
    std::env::var_os("NAMEWAY_REQUIRE_INTEROP").is_some() || std::env::var_os("CI").is_some()
}

pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/pyndn_app.py")
}

/// A background python-ndn process whose JSON lines are read by a thread.
pub struct App {
    pub child: Child,
    pub lines: mpsc::Receiver<serde_json::Value>,
}

impl App {
    /// Spawns the script with `args`, talking to `transport`.
    pub fn spawn(python: &Path, transport: &str, args: &[&str]) -> App {
        let mut child = Command::new(python)
            .arg(script())
            .args(args)
            .env("NDN_CLIENT_TRANSPORT", transport)
            .env("HOME", std::env::temp_dir())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let lines = read_lines(stdout, |line| serde_json::from_str(&line).ok());
        App { child, lines }
    }

    /// The next JSON line, within `secs`.
    pub fn next(&self, secs: u64) -> serde_json::Value {
        self.lines
            .recv_timeout(Duration::from_secs(secs))
            .expect("python app said nothing in time")
    }

    /// Starts a producer and waits until it reports its prefix registered.
    pub fn producer(python: &Path, transport: &str, args: &[&str]) -> App {
        let app = App::spawn(python, transport, args);
        let first = app.next(20);
        assert_eq!(first["ready"], true, "producer not ready: {first}");
        app
    }

    /// Runs a one-shot mode (consume, fetch-object) and returns its JSON result. The bound
    /// guards against a hang only (a 200 MiB fetch on a loaded 2-core machine took over 60 s).
    pub fn run(python: &Path, transport: &str, args: &[&str]) -> serde_json::Value {
        let mut app = App::spawn(python, transport, args);
        let v = app.next(300);
        let _ = app.child.wait();
        v
    }
}

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// tests/interop/ndnts.
pub fn ndnts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/ndnts")
}

/// The node binary when node and the NDNts packages are installed; otherwise None (and a panic
/// when the interop tests are required).
pub fn node() -> Option<PathBuf> {
    let node = PathBuf::from(std::env::var("NAMEWAY_NODE").unwrap_or_else(|_| "node".into()));
    let runs = Command::new(&node)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let installed = ndnts_dir()
        .join("node_modules/@ndn/nfdmgmt/package.json")
        .exists()
        && ndnts_dir()
            .join("node_modules/@ndn/node-transport/package.json")
            .exists();
    if runs && installed {
        return Some(node);
    }
    let why = if runs {
        "NDNts packages missing (run scripts/setup-node.sh)"
    } else {
        "node not found (install Node >= 20, then run scripts/setup-node.sh)"
    };
    assert!(!interop_required(), "NDNts interop: {why}");
    eprintln!("SKIPPED: NDNts interop: {why}");
    None
}
