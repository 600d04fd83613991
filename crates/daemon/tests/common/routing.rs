//! Helpers of the secure-routing tests (`routing.rs`, `routing_hostile.rs`, which include this
//! file by path): a RIB host and routers in one call ([`net`]), routers with
//! their routing keys made first, the python-ndn and NDNts apps of self-certifying names, the
//! routing datasets.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use nameway_routing::KeyHash;
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use super::common::{self, App, Daemon};

pub const RIB: &str = "/example/32=RIB";

/// A router: a daemon with secure routing, its routing key made first so its name is known.
pub struct Router {
    pub d: Daemon,
    pub me: KeyHash,
    pub keys: tempfile::TempDir,
}

/// The RIB host's section: the service, its database, the routing key.
pub fn rib_host(key: &Path, database: &Path, extra: &str) -> String {
    format!(
        "[routing]\nmode = \"secure\"\nidentity = {key:?}\nrib_service = true\ndatabase = {database:?}\n{extra}\n[[routing.rib]]\nprefix = \"{RIB}\"\n"
    )
}

/// A router reaching the RIB service at `rib_udp`.
pub fn router_config(key: &Path, rib_udp: u16, extra: &str) -> String {
    format!(
        "[routing]\nmode = \"secure\"\nidentity = {key:?}\n{extra}\n[[routing.rib]]\nprefix = \"{RIB}\"\nuri = \"udp4://127.0.0.1:{rib_udp}\"\n"
    )
}

pub fn new_key() -> (tempfile::TempDir, PathBuf, KeyHash) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("routing.key");
    let (key, created) = namewayd::routing::identity::load_or_create(&path).unwrap();
    assert!(created);
    (dir, path, key.hash())
}

pub fn start_rib(database: &Path, extra: &str) -> Router {
    let (keys, path, me) = new_key();
    let d = Daemon::start(&rib_host(&path, database, extra));
    Router { d, me, keys }
}

pub fn start_router(rib_udp: u16, extra: &str) -> Router {
    let (keys, path, me) = new_key();
    let d = Daemon::start(&router_config(&path, rib_udp, extra));
    Router { d, me, keys }
}

/// The set-up of most routing tests: a RIB host (its database `rib.redb` in the returned
/// folder, which must outlive it) and one router per entry of `extras`, each reaching the
/// RIB service with that entry's extra `[routing]` lines (`""`, `miss = "nack"`, ...).
pub fn net<const N: usize>(extras: [&str; N]) -> (tempfile::TempDir, Router, [Router; N]) {
    let db = tempfile::tempdir().unwrap();
    let rib = start_rib(&db.path().join("rib.redb"), "");
    let routers = extras.map(|extra| start_router(rib.d.udp, extra));
    (db, rib, routers)
}

pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/routing/pyndn_sc.py")
}

/// The python-ndn app of self-certifying names (tests/routing/pyndn_sc.py).
pub fn sc_app(py: &Path, d: &Daemon, args: &[&str]) -> App {
    let mut child = Command::new(py)
        .arg(script())
        .args(args)
        .env("NDN_CLIENT_TRANSPORT", d.transport())
        .env("HOME", std::env::temp_dir())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let lines = common::read_lines(stdout, |line| serde_json::from_str(&line).ok());
    App { child, lines }
}

/// `/32=sc/<h>` + suffix in URI form (percent-escaped), as python-ndn takes it.
pub fn uri(h: &str, suffix: &str) -> String {
    let escaped: String = hex::decode(h)
        .unwrap()
        .iter()
        .map(|b| format!("%{b:02X}"))
        .collect();
    format!("/32=sc/{escaped}{suffix}")
}

pub fn sha_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A management dataset of `d` as JSON (namewayd's own JSON datasets).
pub fn dataset(d: &Daemon, module: &str, verb: &str) -> Value {
    dataset_at(&d.transport(), module, verb)
}

/// [`dataset`] of the forwarder at `transport`.
pub fn dataset_at(transport: &str, module: &str, verb: &str) -> Value {
    with_client_at(transport, async |c| {
        let raw = c.dataset(module, verb).await.unwrap();
        serde_json::from_slice(&raw).unwrap()
    })
}

pub fn stats(d: &Daemon) -> Value {
    dataset(d, "routing", "status")["stats"].clone()
}

/// Waits until `f` holds (polling every 50 ms), or panics after `secs` with `what`.
pub fn wait_for(secs: u64, what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether the RIB host's registry holds `h` delegated to `router`.
pub fn registered(rib: &Daemon, h: &str, router: &KeyHash) -> bool {
    let l = dataset(rib, "routing", "list");
    let name = format!("sc:{h}");
    let delegate = format!("sc:{}", router.to_hex());
    l["registry"].as_array().unwrap().iter().any(|r| {
        r["name"].as_str() == Some(name.as_str())
            && r["delegate"].as_str() == Some(delegate.as_str())
    })
}

/// Starts an owner producing on `router`, returns it and its name's hash once the RIB host
/// holds its registration.
pub fn producer(py: &Path, router: &Router, rib: &Daemon, args: &[&str]) -> (App, String) {
    let me = router.me.to_hex();
    let mut all = vec!["produce", "--router", me.as_str()];
    all.extend_from_slice(args);
    let app = sc_app(py, &router.d, &all);
    let first = app.next(20);
    assert_eq!(first["announce"], 200, "announce refused: {first}");
    let h = first["h"].as_str().unwrap().to_owned();
    assert_eq!(app.next(10)["ready"], true);
    wait_for(10, "the registration at the RIB service", || {
        registered(rib, &h, &router.me)
    });
    (app, h)
}

/// A python-ndn consumer (tests/interop/pyndn_app.py, appv2) asking once for `name`.
pub fn consume(py: &Path, d: &Daemon, name: &str) -> Value {
    App::run(
        py,
        &d.transport(),
        &[
            "consume",
            "--api",
            "appv2",
            "--name",
            name,
            "--lifetime",
            "4000",
        ],
    )
}

/// Starts namewayd on the given TCP and UDP ports (a restart of a daemon that had them).
pub fn start_at(tcp: u16, udp: u16, extra: &str) -> Daemon {
    let dir = tempfile::tempdir().unwrap();
    let unix = dir.path().join("nfd.sock");
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
        .stdout(std::process::Stdio::null())
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
    wait_for(30, "namewayd to start", || d.unix.exists());
    d
}

/// The NDNts announcing producer (tests/routing/ndnts_announce.mjs) on `d`, for `router`.
pub fn ndnts_announcer(node: &Path, d: &Daemon, router: &KeyHash) -> App {
    use std::io::Write as _;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/routing/ndnts_announce.mjs");
    let mut child = Command::new(node)
        .arg("--input-type=module")
        .current_dir(common::ndnts_dir())
        .env("NDNTS_UPLINK", d.transport())
        .env(
            "NDNTS_ARGS",
            serde_json::to_string(&[router.to_hex()]).unwrap(),
        )
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let source = std::fs::read(script).unwrap();
    child.stdin.take().unwrap().write_all(&source).unwrap();
    let stdout = child.stdout.take().unwrap();
    let lines = common::read_lines(stdout, |line| serde_json::from_str(&line).ok());
    App { child, lines }
}

/// Runs `f` with a management client of `d`.
pub fn with_client<T>(
    d: &Daemon,
    f: impl AsyncFnOnce(&mut nameway_transport::client::Client) -> T,
) -> T {
    with_client_at(&d.transport(), f)
}

/// [`with_client`] of the forwarder at `transport`.
pub fn with_client_at<T>(
    transport: &str,
    f: impl AsyncFnOnce(&mut nameway_transport::client::Client) -> T,
) -> T {
    use nameway_transport::client::{Client, Transport};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = Client::connect(Transport::parse(transport).unwrap())
            .await
            .unwrap();
        f(&mut c).await
    })
}

/// The routes of `d`'s RIB as (name, face, origin).
pub fn rib_routes(d: &Daemon) -> Vec<(nameway_wire::Name, u64, u64)> {
    with_client(d, async |c| {
        let rib: Vec<nameway_wire::mgmt::RibEntry> = c.list("rib", "list").await.unwrap();
        rib.into_iter()
            .flat_map(|e| {
                let name = e.name.clone();
                e.routes
                    .into_iter()
                    .map(move |r| (name.clone(), r.face_id, r.origin))
            })
            .collect()
    })
}
