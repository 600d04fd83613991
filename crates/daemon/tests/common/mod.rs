//! Helpers for the end-to-end tests: start the real `namewayd` on temporary sockets and run
//! real python-ndn applications against it.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

#[path = "daemon.rs"]
mod daemon;
pub use daemon::*;

impl Daemon {
    /// Starts this package's namewayd with `extra` appended to its config.
    pub fn start(extra: &str) -> Self {
        Self::start_with(Path::new(env!("CARGO_BIN_EXE_namewayd")), extra)
    }
}

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

/// Runs namewayd with `config` (and `RUST_BACKTRACE=1`, as many users have it), expects it to
/// refuse to start with status 1, and returns what it printed on stderr.
pub fn refused_start(config: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_namewayd"))
        .arg("--config")
        .arg(config)
        .env("RUST_BACKTRACE", "1")
        .env("RUST_LIB_BACKTRACE", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    err
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

    /// Runs a one-shot mode (consume, fetch-object) and returns its JSON result.
    pub fn run(python: &Path, transport: &str, args: &[&str]) -> serde_json::Value {
        let mut app = App::spawn(python, transport, args);
        let v = app.next(60);
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

/// One GET with std only (`base` is `http://host:port`): status line, head and body.
pub fn http_get(base: &str, path: &str) -> (String, String, Vec<u8>) {
    let addr = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let status = head.lines().next().unwrap().to_string();
    (status, head, raw[split + 4..].to_vec())
}
