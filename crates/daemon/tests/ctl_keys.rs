//! The controller's keys end to end, with real processes on loopback: `namewayctl serve`
//! issuing short-lived router certificates (`--cert-lifetime`), `namewayd` agents renewing
//! theirs over the channel before they expire and staying joined, while an agent whose
//! certificate expired, or a denied router, cannot come back.
//!
//! `namewayctl` is built beside `namewayd` (once per test process).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use common::{free_port, http_get, Daemon};
use serde_json::Value;

/// The tests start several processes each on a 2-core machine: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn bin(name: &str) -> PathBuf {
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
        assert!(status.success(), "cargo build -p nameway-ctl failed");
    });
    let path = daemon.with_file_name(name);
    assert!(path.exists(), "{} is missing", path.display());
    path
}

fn run(bin_name: &str, args: &[&str]) -> String {
    let out = Command::new(bin(bin_name)).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{bin_name} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn wait(timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    done()
}

/// `namewayctl serve` on a fresh database for /example.
struct Controller {
    child: Child,
    dir: tempfile::TempDir,
    listen: String,
    http: String,
    pin: String,
}

impl Controller {
    fn start(extra: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("ctl.db");
        let db_s = db.to_str().unwrap();
        run(
            "namewayctl",
            &["init", "--domain", "/example", "--db", db_s],
        );
        let log = std::fs::File::create(dir.path().join("ctl.log")).unwrap();
        let mut child = Command::new(bin("namewayctl"))
            .args(["serve", "--db", db_s, "--listen", "127.0.0.1:0"])
            .args(["--http", "127.0.0.1:0"])
            .args(extra)
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut next = |prefix: &str| {
            let line = lines.next().unwrap().unwrap();
            line.strip_prefix(prefix).unwrap().to_owned()
        };
        let listen = next("listening ");
        let http = format!("http://{}", next("http "));
        let pin = next("anchor ");
        Self {
            child,
            dir,
            listen,
            http,
            pin,
        }
    }

    fn db(&self) -> String {
        self.dir.path().join("ctl.db").to_str().unwrap().to_owned()
    }

    fn token(&self, router: &str) -> String {
        run(
            "namewayctl",
            &["token", "--router", router, "--db", &self.db()],
        )
        .trim()
        .to_owned()
    }

    fn metric(&self, line_prefix: &str) -> u64 {
        let (_, _, body) = http_get(&self.http, "/metrics");
        let text = String::from_utf8(body).unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix(line_prefix))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {line_prefix} in {text}"))
    }

    fn connected(&self, router: &str) -> bool {
        let (_, _, body) = http_get(&self.http, "/status");
        let v: Value = serde_json::from_slice(&body).unwrap();
        v["routers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == router && r["connected"] == true)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("ctl.log")).unwrap_or_default()
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A forwarder with a secure-link identity and an agent; its state directory survives
/// restarts.
struct Agent {
    cfg: String,
    state: PathBuf,
    d: Option<Daemon>,
}

impl Agent {
    fn new(ctl: &Controller, dir: &Path, i: usize) -> Self {
        let name = format!("/example/r{i}");
        let identity = dir.join(format!("r{i}.key"));
        let state = dir.join(format!("state-r{i}"));
        let cfg = format!(
            "[security]\nidentity = {identity:?}\n[controller]\nuri = \"tcp://{}\"\nkey = {:?}\nname = {name:?}\ntoken = {:?}\nstate_dir = {state:?}\n",
            ctl.listen,
            ctl.pin,
            ctl.token(&name)
        );
        let mut a = Self {
            cfg,
            state,
            d: None,
        };
        a.start();
        a
    }

    fn start(&mut self) {
        self.d = None;
        self.d = Some(Daemon::start_on(
            &bin("namewayd"),
            free_port(),
            free_port(),
            &self.cfg,
        ));
    }

    fn stop(&mut self) {
        self.d = None;
    }

    fn cert(&self) -> Option<Vec<u8>> {
        std::fs::read(self.state.join("router.cert")).ok()
    }

    /// The NotAfter of the certificate kept in the state directory.
    fn not_after(&self) -> String {
        let c = nameway_transport::Certificate::load(&self.state.join("router.cert")).unwrap();
        c.validity().1.to_owned()
    }

    fn log(&self) -> String {
        self.d.as_ref().map(Daemon::log).unwrap_or_default()
    }
}

#[test]
fn agents_renew_short_lived_certificates_and_stay_joined_while_expired_and_denied_ones_cannot() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // 6 s certificates: renewed 4 s after issue.
    let ctl = Controller::start(&["--cert-lifetime", "6s"]);
    let dir = tempfile::tempdir().unwrap();
    let mut r1 = Agent::new(&ctl, dir.path(), 1);
    let mut r2 = Agent::new(&ctl, dir.path(), 2);
    assert!(
        wait(Duration::from_secs(20), || ctl.connected("/example/r1")
            && ctl.connected("/example/r2")),
        "agents did not join\n{}\n{}",
        ctl.log(),
        r1.log()
    );
    let first = r1.cert().unwrap();
    let first_not_after = r1.not_after();
    // r2 goes away with its 6 s certificate.
    r2.stop();

    // r1 renews before its certificate expires, more than once, without leaving.
    let started = Instant::now();
    let mut always_joined = true;
    while started.elapsed() < Duration::from_secs(11) {
        always_joined &= ctl.connected("/example/r1");
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(always_joined, "r1 left the controller\n{}", r1.log());
    assert_ne!(
        r1.cert().unwrap(),
        first,
        "r1's certificate was not renewed"
    );
    assert!(
        r1.not_after() > first_not_after,
        "{} <= {first_not_after}",
        r1.not_after()
    );
    assert!(
        ctl.metric("namewayctl_renewals_total{result=\"renewed\"}") >= 2,
        "{}",
        ctl.log()
    );
    assert!(r1.log().contains("router certificate renewed and kept"));
    assert_eq!(
        ctl.metric("namewayctl_agents_total{result=\"refused_certificate\"}"),
        0
    );

    // r1 restarted long after its first certificate expired comes back with the renewed one.
    let admitted = ctl.metric("namewayctl_agents_total{result=\"admitted\"}");
    r1.start();
    assert!(
        wait(Duration::from_secs(15), || ctl
            .metric("namewayctl_agents_total{result=\"admitted\"}")
            > admitted
            && ctl.connected("/example/r1")),
        "r1 restarted was not admitted\n{}",
        ctl.log()
    );

    // r2, back after its certificate expired, cannot join: its certificate is refused.
    r2.start();
    assert!(
        wait(Duration::from_secs(15), || ctl.metric(
            "namewayctl_agents_total{result=\"refused_certificate\"}"
        ) >= 1),
        "{}",
        ctl.log()
    );
    assert!(!ctl.connected("/example/r2"));
    assert!(r2.log().contains("certificate refused"), "{}", r2.log());

    // r1 denied: its next renewal is refused, the session ends and it cannot come back.
    run("namewayctl", &["deny", "/example/r1", "--db", &ctl.db()]);
    assert!(
        wait(Duration::from_secs(15), || ctl.metric(
            "namewayctl_renewals_total{result=\"refused_denied\"}"
        ) >= 1),
        "{}",
        ctl.log()
    );
    assert!(
        wait(Duration::from_secs(15), || !ctl.connected("/example/r1")),
        "r1 denied is still connected"
    );
    assert!(
        wait(Duration::from_secs(15), || ctl
            .metric("namewayctl_agents_total{result=\"refused_denied\"}")
            >= 1),
        "{}",
        ctl.log()
    );
    std::thread::sleep(Duration::from_secs(2));
    assert!(!ctl.connected("/example/r1"));
}
