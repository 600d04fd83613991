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

use std::path::Path;
use std::process::Command;
use std::time::Duration;

#[path = "daemon.rs"]
mod daemon;
pub use daemon::*;
#[path = "apps.rs"]
mod apps;
pub use apps::*;
pub mod ctl;
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
