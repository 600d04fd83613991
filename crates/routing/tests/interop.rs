//! Prefix Announcements across implementations: python-ndn (tests/interop/pa_python.py) and
//! NDNts (tests/interop/pa_ndnts.mjs) build announcements that Nameway decodes — plain ones
//! as applications send them, and self-certifying delegations with Nameway's fields, whose
//! chains Nameway verifies — and they read Nameway's announcements (python-ndn also checks
//! the Ed25519 signature; both skip Nameway's non-critical fields with their plain models).
//!
//! python-ndn runs from `$REPO/.venv` (`bash scripts/setup-python.sh`) or `NAMEWAY_PYTHON`;
//! NDNts from `tests/interop/ndnts/node_modules` (`bash scripts/setup-node.sh`) with `node` or
//! `NAMEWAY_NODE`. Without them the tests pass with a loud notice, unless `CI` or
//! `NAMEWAY_REQUIRE_INTEROP` is set: then they fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use nameway_routing::time::format_iso;
use nameway_routing::{
    Announcement, ChainVerifier, KeyHash, LocatorRecord, NameKey, Origin, VerifierConfig,
};
use serde_json::Value;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn flag(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// Panics when interop is required, otherwise prints a loud notice; returns None.
fn missing(msg: &str) -> Option<PathBuf> {
    if flag("CI") || flag("NAMEWAY_REQUIRE_INTEROP") {
        panic!("{msg}; CI / NAMEWAY_REQUIRE_INTEROP is set, so this is a failure");
    }
    let bar = "!".repeat(100);
    let _ = writeln!(std::io::stderr(), "\n{bar}\n!!! SKIPPED: {msg}\n{bar}\n");
    None
}

fn python() -> Option<PathBuf> {
    let python = std::env::var_os("NAMEWAY_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".venv/bin/python"));
    let usable = Command::new(&python)
        .args(["-c", "import ndn.encoding, Cryptodome"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if usable {
        return Some(python);
    }
    missing(&format!(
        "python-ndn interop tests need {} with python-ndn installed: run `bash \
         scripts/setup-python.sh` (or set NAMEWAY_PYTHON)",
        python.display()
    ))
}

fn ndnts_dir() -> PathBuf {
    repo_root().join("tests/interop/ndnts")
}

fn node() -> Option<PathBuf> {
    let node = PathBuf::from(std::env::var("NAMEWAY_NODE").unwrap_or_else(|_| "node".into()));
    let runs = Command::new(&node)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let installed = ndnts_dir()
        .join("node_modules/@ndn/nfdmgmt/package.json")
        .exists()
        && ndnts_dir()
            .join("node_modules/@ndn/keychain/package.json")
            .exists();
    if runs && installed {
        return Some(node);
    }
    missing(
        "NDNts interop tests need node and the NDNts packages: run `bash scripts/setup-node.sh`",
    )
}

fn run_python(python: &Path, args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/pa_python.py");
    let out = Command::new(python)
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pa_python.py {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn run_ndnts(node: &Path, args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/pa_ndnts.mjs");
    let mut child = Command::new(node)
        .arg("--input-type=module")
        .current_dir(ndnts_dir())
        .env("NDNTS_ARGS", serde_json::to_string(args).unwrap())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let source = std::fs::read(script).unwrap();
    child.stdin.take().unwrap().write_all(&source).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "pa_ndnts.mjs {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn wire(v: &Value) -> Bytes {
    Bytes::from(hex::decode(v.as_str().unwrap()).unwrap())
}

/// Decodes another implementation's delegation of `/32=sc/<h>` to `router` and verifies the
/// chain with `router`'s locator record.
fn check_foreign_delegation(sc: &Value, router: &NameKey) {
    let pa = Announcement::decode(wire(&sc["wire"])).unwrap();
    let h = KeyHash::from_hex(sc["h"].as_str().unwrap()).unwrap();
    assert_eq!(pa.key_hash(), Some(h));
    assert_eq!(pa.delegate(), Some(&router.name()));
    assert_eq!(KeyHash::of_spki(pa.public_key().unwrap()), h);
    assert_eq!(pa.version(), sc["version"].as_u64().unwrap());
    assert_eq!((pa.expiration_ms(), pa.signature_type()), (600_000, 5));
    let now = now_ms();
    let loc =
        LocatorRecord::build(&router.clone(), &["udp4://192.0.2.1:6363"], now, 600_000).unwrap();
    let mut v = ChainVerifier::new(VerifierConfig::default());
    let route = v
        .verify(now, pa.wire(), loc.wire(), Origin::Direct)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((route.h, route.delegate), (h, router.hash()));
    assert_eq!(v.counters().signatures_verified, 2);
}

/// Checks what another implementation read from `ours` (a delegation of `owner` to `router`).
fn check_read_back(read: &Value, ours: &Announcement, owner: &NameKey) {
    let v = ours.validity().unwrap();
    assert_eq!(read["expiration"], 600_000);
    let nb = String::from_utf8(format_iso(v.not_before_ms).to_vec()).unwrap();
    let na = String::from_utf8(format_iso(v.not_after_ms).to_vec()).unwrap();
    if read["not_before"].is_string() {
        assert_eq!(
            (read["not_before"].as_str(), read["not_after"].as_str()),
            (Some(&nb[..]), Some(&na[..]))
        );
    } else {
        // NDNts gives ms since the epoch.
        assert_eq!(read["not_before"], v.not_before_ms);
        assert_eq!(read["not_after"], v.not_after_ms);
    }
    assert_eq!(read["key_digest"], hex::encode(owner.hash().as_bytes()));
}

#[test]
fn python_ndn_announcements_decode_and_their_chains_verify() {
    let Some(python) = python() else { return };
    let router = NameKey::generate().unwrap();
    let made = run_python(&python, &["make", &router.hash().to_hex()]);
    check_foreign_delegation(&made["sc"], &router);
    // The plain announcement an application sends: any prefix, ECDSA, a key name.
    let plain = Announcement::decode(wire(&made["plain"]["wire"])).unwrap();
    assert_eq!(plain.prefix().to_string(), "/example/pyndn");
    assert_eq!(
        (plain.expiration_ms(), plain.signature_type()),
        (3_600_000, 3)
    );
    assert_eq!(
        (plain.delegate(), plain.public_key(), plain.validity()),
        (None, None, None)
    );
    assert_eq!(plain.key_hash(), None);
    plain
        .check_signature(&hex::decode(made["plain"]["spki"].as_str().unwrap()).unwrap())
        .unwrap();
}

#[test]
fn python_ndn_reads_nameway_announcements_and_verifies_them() {
    let Some(python) = python() else { return };
    let (owner, router) = (NameKey::generate().unwrap(), NameKey::generate().unwrap());
    let pa = Announcement::delegation(&owner, &router.hash(), now_ms(), 600_000).unwrap();
    let read = run_python(&python, &["parse", &hex::encode(pa.wire())]);
    assert_eq!(read["name"], hex::encode(pa.view().name().to_wire()));
    assert_eq!(read["content_type"], 5);
    assert_eq!(read["delegate"], hex::encode(router.name().to_wire()));
    assert_eq!(read["public_key"], hex::encode(owner.spki()));
    assert_eq!(read["signature_type"], 5);
    assert_eq!(read["signature_verified"], true);
    // NFD's model of the Content, without Nameway's fields, skips them.
    assert_eq!(read["plain_expiration"], 600_000);
    assert_eq!(read["plain_has_validity"], true);
    check_read_back(&read, &pa, &owner);
}

#[test]
fn ndnts_announcements_decode_and_their_chains_verify() {
    let Some(node) = node() else { return };
    let router = NameKey::generate().unwrap();
    let made = run_ndnts(&node, &["make", &router.hash().to_hex()]);
    check_foreign_delegation(&made["sc"], &router);
    let plain = Announcement::decode(wire(&made["plain"]["wire"])).unwrap();
    assert_eq!(plain.prefix().to_string(), "/example/ndnts");
    assert_eq!(plain.version(), made["plain"]["version"].as_u64().unwrap());
    assert_eq!(
        (plain.expiration_ms(), plain.signature_type()),
        (3_600_000, 3)
    );
    let v = plain.validity().unwrap();
    assert_eq!(v.not_after_ms - v.not_before_ms, 3_600_000);
    assert_eq!((plain.delegate(), plain.public_key()), (None, None));
}

#[test]
fn ndnts_reads_nameway_announcements() {
    let Some(node) = node() else { return };
    let (owner, router) = (NameKey::generate().unwrap(), NameKey::generate().unwrap());
    let pa = Announcement::delegation(&owner, &router.hash(), now_ms(), 600_000).unwrap();
    let read = run_ndnts(&node, &["parse", &hex::encode(pa.wire())]);
    assert_eq!(read["announced"], hex::encode(owner.name().to_wire()));
    assert_eq!(read["sig_type"], 5);
    check_read_back(&read, &pa, &owner);
}
