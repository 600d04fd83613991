//! The controller's end-to-end tests (ctl.rs, ctl_keys.rs, ctl_nfd.rs): the CLI binaries built
//! beside `namewayd`, `namewayctl serve` on a fresh database for the domain /example, and a
//! child process killed when dropped.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::http_get;

/// The tests start up to five processes each on a 2-core machine: one at a time.
pub static SERIAL: Mutex<()> = Mutex::new(());

pub fn bin(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    let daemon = Path::new(env!("CARGO_BIN_EXE_namewayd"));
    BUILT.get_or_init(|| {
        let release = daemon
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|d| d == "release");
        let mut build = Command::new(env!("CARGO"));
        build.args(["build", "--quiet", "-p", "nameway-ctl", "-p", "nameway"]);
        if release {
            build.arg("--release");
        }
        let status = build
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .unwrap();
        assert!(
            status.success(),
            "cargo build -p nameway-ctl -p nameway failed"
        );
    });
    let path = daemon.with_file_name(name);
    assert!(path.exists(), "{} is missing", path.display());
    path
}

pub fn run(bin_name: &str, args: &[&str]) -> String {
    let out = Command::new(bin(bin_name)).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{bin_name} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub fn wait(timeout: Duration, done: impl FnMut() -> bool) -> bool {
    wait_every(timeout, Duration::from_millis(50), done)
}

/// [`wait`], checking every `step` (to act within milliseconds of an event).
pub fn wait_every(timeout: Duration, step: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(step);
    }
    done()
}

/// `namewayctl serve` on a fresh database for the domain /example.
pub struct Controller {
    pub child: Child,
    pub dir: tempfile::TempDir,
    pub listen: String,
    /// The mutual-TLS listener, when `serve` was given `--tls-listen`.
    pub tls: Option<String>,
    pub http: String,
    pub pin: String,
    /// The CA's SQLite file (`--ca`, or the `--db` file when there is no `--ca`): where
    /// [`Controller::token`] makes tokens, or whose anchor it names with `shared`.
    pub ca: PathBuf,
    /// The PostgreSQL `--db` when there is a `--ca`: the CA's records are there.
    pub shared: Option<String>,
}

impl Controller {
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// [`Controller::start`] with more `serve` arguments.
    pub fn start_with(extra: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("ctl.db");
        run(
            "namewayctl",
            &["init", "--domain", "/example", "--db", db.to_str().unwrap()],
        );
        Self::serve_with(dir, "127.0.0.1:0", extra)
    }

    /// `namewayctl serve` on the database in `dir`, listening on `listen`.
    pub fn serve(dir: tempfile::TempDir, listen: &str) -> Self {
        Self::serve_with(dir, listen, &[])
    }

    /// [`Controller::serve`] with more arguments.
    pub fn serve_with(dir: tempfile::TempDir, listen: &str, extra: &[&str]) -> Self {
        let db = dir.path().join("ctl.db");
        let db_s = db.to_str().unwrap().to_owned();
        Self::launch(dir, listen, &["--db", &db_s], extra)
    }

    /// `namewayctl serve` with the database options `db_args` (`--db PATH`, or
    /// `--db postgres://… --ca PATH`) and `extra`, listening on `listen`, its log in
    /// `dir/ctl.log`.
    pub fn launch(dir: tempfile::TempDir, listen: &str, db_args: &[&str], extra: &[&str]) -> Self {
        let log_path = dir.path().join("ctl.log");
        let log = std::fs::File::create(&log_path).unwrap();
        let mut child = Command::new(bin("namewayctl"))
            .arg("serve")
            .args(db_args)
            .args(["--listen", listen, "--http", "127.0.0.1:0"])
            .args(extra)
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut next = |prefix: &str| {
            let line = lines
                .next()
                .unwrap_or_else(|| {
                    panic!(
                        "namewayctl serve ended before {prefix:?}: {}",
                        std::fs::read_to_string(&log_path).unwrap_or_default()
                    )
                })
                .unwrap();
            line.strip_prefix(prefix)
                .unwrap_or_else(|| panic!("{line:?} does not start with {prefix:?}"))
                .to_owned()
        };
        let listen = next("listening ");
        let mut http = next("");
        let tls = http.strip_prefix("tls ").map(str::to_owned);
        if tls.is_some() {
            http = next("");
        }
        let http = format!(
            "http://{}",
            http.strip_prefix("http ")
                .unwrap_or_else(|| panic!("{http:?} does not start with \"http \""))
        );
        let pin = next("anchor ");
        let after = |flag: &str| {
            db_args
                .iter()
                .position(|a| *a == flag)
                .and_then(|i| db_args.get(i + 1))
                .map(PathBuf::from)
        };
        let shared = after("--ca")
            .and(after("--db"))
            .map(|p| p.to_string_lossy().into_owned());
        let ca = after("--ca")
            .or_else(|| after("--db"))
            .unwrap_or_else(|| dir.path().join("ctl.db"));
        Self {
            child,
            dir,
            listen,
            tls,
            http,
            pin,
            ca,
            shared,
        }
    }

    /// `GET path` of the HTTP API, as JSON.
    pub fn api(&self, path: &str) -> Value {
        let (_, _, body) = http_get(&self.http, path);
        serde_json::from_slice(&body).unwrap()
    }

    /// (prefix, router) of every registration in the registry (`/api/registry`).
    pub fn registry(&self) -> Vec<(String, String)> {
        self.api("/api/registry")["registrations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["prefix"].as_str().unwrap().to_owned(),
                    r["router"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    pub fn token(&self, router: &str) -> String {
        let ca = self.ca.to_str().unwrap();
        let mut args = vec!["token", "--router", router];
        match &self.shared {
            Some(db) => args.extend(["--db", db.as_str(), "--ca", ca]),
            None => args.extend(["--db", ca]),
        }
        run("namewayctl", &args).trim().to_owned()
    }

    pub fn status(&self) -> Value {
        let (_, _, body) = http_get(&self.http, "/status");
        serde_json::from_slice(&body).unwrap()
    }

    pub fn metric(&self, line_prefix: &str) -> u64 {
        let (_, _, body) = http_get(&self.http, "/metrics");
        let text = String::from_utf8(body).unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix(line_prefix))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {line_prefix} in {text}"))
    }

    /// The database's path.
    pub fn db(&self) -> String {
        self.dir.path().join("ctl.db").to_str().unwrap().to_owned()
    }

    /// Whether `router` has a session now (`/status`).
    pub fn connected(&self, router: &str) -> bool {
        self.status()["routers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == router && r["connected"] == true)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("ctl.log")).unwrap_or_default()
    }

    /// `nameway ctl --controller <http> ARGS --json`.
    pub fn cli(&self, args: &[&str]) -> Value {
        let mut all = vec!["ctl", "--controller", &self.http];
        all.extend(args);
        all.push("--json");
        serde_json::from_str(&run("nameway", &all)).unwrap()
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Controller {
    /// Kills the service, keeping its database and address for [`Stopped::start_again`].
    pub fn restart_later(mut self) -> Stopped {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let listen = self.listen.clone();
        let dir = std::mem::replace(&mut self.dir, tempfile::tempdir().unwrap());
        Stopped { dir, listen }
    }

    pub fn registry_list(&self) -> String {
        let db = self.dir.path().join("ctl.db");
        run(
            "namewayctl",
            &["registry", "list", "--db", db.to_str().unwrap()],
        )
    }

    pub fn deny(&self, router: &str) {
        let db = self.dir.path().join("ctl.db");
        run(
            "namewayctl",
            &["deny", router, "--db", db.to_str().unwrap()],
        );
    }
}

/// A controller killed, to be started again on the same database.
pub struct Stopped {
    pub dir: tempfile::TempDir,
    pub listen: String,
}

impl Stopped {
    pub fn start_again(self) -> Controller {
        Controller::serve(self.dir, &self.listen)
    }
}

/// A child process killed when dropped.
pub struct Proc(pub Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
