//! Secure routing through real daemons (docs/routing.md): three or more namewayd processes on
//! loopback, real python-ndn (and NDNts) applications, no static route anywhere (only the
//! faces toward the RIB service, from `[[routing.rib]] uri`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{python, App, Daemon};
use nameway_routing::KeyHash;
use serde_json::Value;
use sha2::{Digest as _, Sha256};

const RIB: &str = "/example/32=RIB";

/// A router: a daemon with secure routing, its routing key made first so its name is known.
struct Router {
    d: Daemon,
    me: KeyHash,
    _keys: tempfile::TempDir,
}

/// The RIB host's section: the service, its database, the routing key.
fn rib_host(key: &Path, database: &Path, extra: &str) -> String {
    format!(
        "[routing]\nmode = \"secure\"\nidentity = {key:?}\nrib_service = true\ndatabase = {database:?}\n{extra}\n[[routing.rib]]\nprefix = \"{RIB}\"\n"
    )
}

/// A router reaching the RIB service at `rib_udp`.
fn router_config(key: &Path, rib_udp: u16, extra: &str) -> String {
    format!(
        "[routing]\nmode = \"secure\"\nidentity = {key:?}\n{extra}\n[[routing.rib]]\nprefix = \"{RIB}\"\nuri = \"udp4://127.0.0.1:{rib_udp}\"\n"
    )
}

fn new_key() -> (tempfile::TempDir, PathBuf, KeyHash) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("routing.key");
    let (key, created) = namewayd::routing::identity::load_or_create(&path).unwrap();
    assert!(created);
    (dir, path, key.hash())
}

fn start_rib(database: &Path, extra: &str) -> Router {
    let (keys, path, me) = new_key();
    let d = Daemon::start(&rib_host(&path, database, extra));
    Router { d, me, _keys: keys }
}

fn start_router(rib_udp: u16, extra: &str) -> Router {
    let (keys, path, me) = new_key();
    let d = Daemon::start(&router_config(&path, rib_udp, extra));
    Router { d, me, _keys: keys }
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/routing/pyndn_sc.py")
}

/// The python-ndn app of self-certifying names (tests/routing/pyndn_sc.py).
fn sc_app(py: &Path, d: &Daemon, args: &[&str]) -> App {
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
fn uri(h: &str, suffix: &str) -> String {
    let escaped: String = hex::decode(h)
        .unwrap()
        .iter()
        .map(|b| format!("%{b:02X}"))
        .collect();
    format!("/32=sc/{escaped}{suffix}")
}

fn sha_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A management dataset of `d` as JSON (namewayd's own JSON datasets).
fn dataset(d: &Daemon, module: &str, verb: &str) -> Value {
    use nameway_transport::client::{Client, Transport};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = Client::connect(Transport::parse(&d.transport()).unwrap())
            .await
            .unwrap();
        let raw = c.dataset(module, verb).await.unwrap();
        serde_json::from_slice(&raw).unwrap()
    })
}

fn stats(d: &Daemon) -> Value {
    dataset(d, "routing", "status")["stats"].clone()
}

/// Waits until `f` holds (polling every 50 ms), or panics after `secs` with `what`.
fn wait_for(secs: u64, what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether the RIB host's registry holds `h` delegated to `router`.
fn registered(rib: &Daemon, h: &str, router: &KeyHash) -> bool {
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
fn producer(py: &Path, router: &Router, rib: &Daemon, args: &[&str]) -> (App, String) {
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
fn consume(py: &Path, d: &Daemon, name: &str) -> Value {
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

#[test]
fn three_daemons_resolve_a_self_certifying_name_with_no_static_route() {
    let Some(py) = python() else { return };
    let db = tempfile::tempdir().unwrap();
    let rib = start_rib(&db.path().join("rib.redb"), "");
    let r1 = start_router(rib.d.udp, "");
    let r2 = start_router(rib.d.udp, "");
    let (_owner, h) = producer(&py, &r1, &rib.d, &[]);
    // The consumer's first Interest, with no route for the name on its forwarder, is held
    // while the name is resolved, then forwarded with a ForwardingHint: no retry by the app.
    let got = consume(&py, &r2.d, &uri(&h, "/hello"));
    assert_eq!(
        got["sha256"],
        sha_hex(format!("owner {h}").as_bytes()),
        "{got}"
    );
    let s2 = stats(&r2.d);
    assert_eq!(s2["lookups"], 1, "{s2}");
    assert_eq!(s2["lookup_results"]["found"], 1, "{s2}");
    assert_eq!(s2["misses_held"], 1, "{s2}");
    assert_eq!(s2["hinted"], 1, "{s2}");
    assert_eq!(s2["delegate_faces"], 1, "{s2}");
    assert_eq!(s2["chains_verified"], 1, "{s2}");
    // A second Interest: the route is held, no look-up, no signature.
    let again = consume(&py, &r2.d, &uri(&h, "/again"));
    assert_eq!(again["size"], format!("owner {h}").len(), "{again}");
    let s2b = stats(&r2.d);
    assert_eq!(s2b["lookups"], 1, "{s2b}");
    assert_eq!(
        s2b["signatures_verified"], s2["signatures_verified"],
        "{s2b}"
    );
    assert_eq!(s2b["hinted"], 2, "{s2b}");
    // The routes on the consumer's router: to the RIB (configured) and to the producer's
    // router (from its verified locator record); none for the name itself.
    let fib = dataset(&r2.d, "routing", "list");
    let route = &fib["routes"][0];
    assert_eq!(route["name"], format!("sc:{h}"), "{fib}");
    assert_eq!(route["hint"], format!("sc:{}", r1.me.to_hex()), "{fib}");
    let s3 = stats(&rib.d);
    assert_eq!(s3["service_lookups"]["found"], 1, "{s3}");
    assert_eq!(s3["service_registrations"]["stored"], 1, "{s3}");
}
