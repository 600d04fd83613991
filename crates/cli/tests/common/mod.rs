//! Helpers for the end-to-end tests of the `nameway` command: start the real `namewayd` on a
//! temporary Unix socket and free TCP/UDP ports, and run `nameway` against it.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A running namewayd with its own Unix socket, TCP and UDP ports.
pub struct Daemon {
    pub child: Child,
    pub dir: tempfile::TempDir,
    pub unix: PathBuf,
    pub tcp: u16,
    pub udp: u16,
}

/// A port free for both TCP and UDP a moment ago.
pub fn free_port() -> u16 {
    loop {
        let t = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = t.local_addr().unwrap().port();
        if UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// The namewayd binary next to the nameway binary under test, built (or brought up to date)
/// once per test process with the same profile; `NAMEWAYD` overrides it.
pub fn namewayd() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        if let Some(p) = std::env::var_os("NAMEWAYD") {
            return PathBuf::from(p);
        }
        let nameway = Path::new(env!("CARGO_BIN_EXE_nameway"));
        let path = nameway.with_file_name("namewayd");
        let release = nameway
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|d| d == "release");
        let mut build = Command::new(env!("CARGO"));
        build.args(["build", "--quiet", "-p", "namewayd"]);
        if release {
            build.arg("--release");
        }
        let status = build
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo build -p namewayd");
        assert!(
            status.success() || path.exists(),
            "cargo build -p namewayd failed and {} does not exist",
            path.display()
        );
        path
    })
    .clone()
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
        let child = Command::new(namewayd())
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
        let deadline = Instant::now() + Duration::from_secs(30);
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

    /// `--transport` for the daemon's Unix socket.
    pub fn transport(&self) -> String {
        format!("unix://{}", self.unix.display())
    }

    /// Runs `nameway --transport <unix> args...` with `stdin`.
    pub fn nameway(&self, args: &[&str]) -> Output {
        let mut all = vec!["--transport".to_owned(), self.transport()];
        all.extend(args.iter().map(|s| (*s).to_owned()));
        run(&all, b"")
    }

    /// Runs nameway, asserts success, parses stdout as JSON.
    pub fn json(&self, args: &[&str]) -> Value {
        let out = self.nameway(args);
        assert!(
            out.status.success(),
            "nameway {args:?} failed: {}\ndaemon log:\n{}",
            String::from_utf8_lossy(&out.stderr),
            self.log()
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "nameway {args:?} printed no JSON ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        })
    }

    /// Starts `nameway --transport <unix> args...` in the background.
    pub fn spawn(&self, args: &[&str], stdin: &[u8]) -> Background {
        let mut child = Command::new(env!("CARGO_BIN_EXE_nameway"))
            .arg("--transport")
            .arg(self.transport())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Background { child, lines: rx }
    }

    /// Waits until the RIB has a route for `prefix`.
    pub fn wait_for_route(&self, prefix: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let routes = self.json(&["route", "list", "--json"]);
            if routes
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["prefix"] == prefix)
            {
                return;
            }
            assert!(Instant::now() < deadline, "no route for {prefix}: {routes}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A nameway process running in the background; stdout lines arrive on `lines`.
pub struct Background {
    pub child: Child,
    pub lines: mpsc::Receiver<String>,
}

impl Background {
    /// The next stdout line, within `secs`.
    pub fn next_line(&self, secs: u64) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(secs))
            .expect("the background nameway printed nothing in time")
    }

    /// Waits for the process to exit within `secs`; returns its exit code.
    pub fn wait(&mut self, secs: u64) -> Option<i32> {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "background nameway did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `nameway args...` with `stdin`, with no NDN_CLIENT_TRANSPORT and a HOME without
/// client.conf, so only the arguments choose the transport.
pub fn run(args: &[String], stdin: &[u8]) -> Output {
    let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join("empty-home");
    std::fs::create_dir_all(&home).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_nameway"))
        .args(args)
        .env_remove("NDN_CLIENT_TRANSPORT")
        .env("HOME", &home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}
