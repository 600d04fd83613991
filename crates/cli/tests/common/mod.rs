//! Helpers for the end-to-end tests of the `nameway` command: start the real `namewayd` on a
//! temporary Unix socket and free TCP/UDP ports, and run `nameway` against it.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "../../../daemon/tests/common/daemon.rs"]
mod daemon;
pub use daemon::*;
#[path = "../../../daemon/tests/common/apps.rs"]
mod apps;
#[allow(unused_imports)] // not every test binary runs python-ndn apps
pub use apps::*;

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
    /// Starts namewayd (see [`namewayd`]) with `extra` appended to its config.
    pub fn start(extra: &str) -> Self {
        Self::start_with(&namewayd(), extra)
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
        let stdout = child.stdout.take().unwrap();
        let lines = read_lines(stdout, Some);
        Background { child, lines }
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

/// A deterministic, incompressible object.
pub fn object(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// Lower-case hexadecimal SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// Writes `object(len, seed)` to `name` in the daemon's directory; returns the path and its
/// sha256.
pub fn write_object(d: &Daemon, name: &str, len: usize, seed: u64) -> (PathBuf, String) {
    let data = object(len, seed);
    let path = d.dir.path().join(name);
    std::fs::write(&path, &data).unwrap();
    (path, sha256_hex(&data))
}

/// `nameway put FILE PREFIX --json extra...` in the background; returns it and the versioned
/// name it serves.
pub fn put(d: &Daemon, file: &Path, prefix: &str, extra: &[&str]) -> (Background, String) {
    let mut args = vec!["put", file.to_str().unwrap(), prefix, "--json"];
    args.extend_from_slice(extra);
    let bg = d.spawn(&args, b"");
    let line = bg.next_line(300);
    let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    (bg, v["name"].as_str().unwrap().to_owned())
}
