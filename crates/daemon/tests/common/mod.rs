//! Helpers for the end-to-end tests: start the real `namewayd` on temporary sockets and run
//! real python-ndn applications against it.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A running namewayd with its own Unix socket, TCP and UDP ports.
pub struct Daemon {
    pub child: Child,
    pub dir: tempfile::TempDir,
    pub unix: PathBuf,
    pub tcp: u16,
    pub udp: u16,
}

/// A port that was free a moment ago.
pub fn free_port() -> u16 {
    let t = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = t.local_addr().unwrap().port();
    // also free for UDP?
    if UdpSocket::bind(("127.0.0.1", port)).is_ok() {
        return port;
    }
    free_port()
}

impl Daemon {
    /// Starts namewayd with `extra` appended to its config.
    pub fn start(extra: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let unix = dir.path().join("nfd.sock");
        let tcp = free_port();
        let udp = free_port();
        let config = format!(
            "[faces]\nunix = {unix:?}\ntcp = [\"127.0.0.1:{tcp}\"]\nudp = [\"127.0.0.1:{udp}\"]\n{extra}\n"
        );
        let path = dir.path().join("namewayd.toml");
        std::fs::write(&path, config).unwrap();
        let log = std::fs::File::create(dir.path().join("namewayd.log")).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_namewayd"))
            .arg("--config")
            .arg(&path)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let d = Daemon {
            child,
            dir,
            unix,
            tcp,
            udp,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !d.unix.exists() {
            assert!(
                Instant::now() < deadline,
                "namewayd did not start: {}",
                d.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        d
    }

    /// The daemon's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("namewayd.log")).unwrap_or_default()
    }

    /// NDN_CLIENT_TRANSPORT for python-ndn.
    pub fn transport(&self) -> String {
        format!("unix://{}", self.unix.display())
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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
    let required =
        std::env::var_os("NAMEWAY_REQUIRE_INTEROP").is_some() || std::env::var_os("CI").is_some();
    assert!(
        !required,
        "python-ndn venv missing: run scripts/setup-python.sh"
    );
    eprintln!("SKIPPED: python-ndn venv missing (run scripts/setup-python.sh)");
    None
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
        let stdout: ChildStdout = child.stdout.take().unwrap();
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
        App { child, lines: rx }
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
