//! Helpers for the end-to-end tests: start the real `namewayd` on temporary sockets, run
//! real python-ndn applications against it, and put a recording, fault-injecting UDP relay
//! between two daemons (`relay`).
#![allow(
    dead_code,
    unused_imports,
    unreachable_pub,
    clippy::unwrap_used,
    clippy::expect_used
)]

use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

#[path = "daemon.rs"]
mod daemon;
pub use daemon::*;
#[path = "apps.rs"]
mod apps;
pub use apps::*;
pub mod relay;

impl Daemon {
    /// Starts this package's namewayd with `extra` appended to its config.
    pub fn start(extra: &str) -> Self {
        Self::start_with(Path::new(env!("CARGO_BIN_EXE_namewayd")), extra)
    }
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

/// One GET with std only (`base` is `http://host:port`): status line, head and body.
pub fn http_get(base: &str, path: &str) -> (String, String, Vec<u8>) {
    let addr = base.trim_start_matches("http://");
    // The daemon opens its HTTP listener after the Unix socket the tests wait for: a
    // connection right after start may be refused for a moment.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut s = loop {
        match std::net::TcpStream::connect(addr) {
            Ok(s) => break s,
            Err(e)
                if e.kind() == std::io::ErrorKind::ConnectionRefused
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("cannot connect to {addr}: {e}"),
        }
    };
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
