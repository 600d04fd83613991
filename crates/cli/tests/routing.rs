//! `nameway routing ...`, `sc:` names and RetryAfter through real daemons with secure routing:
//! a RIB host, the producer's router and a consumer's router in nack mode.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{put, sha256_hex, write_object, Daemon};
use nameway_routing::{KeyHash, NameKey};
use serde_json::Value;

const RIB: &str = "/example/32=RIB";

/// A daemon with secure routing; `rib_udp`: reach the RIB service there (else it is served
/// here).
fn secure(key: &Path, extra: &str, rib_udp: Option<u16>) -> String {
    let uri = rib_udp.map_or(String::new(), |p| {
        format!("uri = \"udp4://127.0.0.1:{p}\"\n")
    });
    format!(
        "[routing]\nmode = \"secure\"\nidentity = {key:?}\n{extra}\n[[routing.rib]]\nprefix = \"{RIB}\"\n{uri}"
    )
}

fn router(keys: &Path, name: &str, rib_udp: u16, extra: &str) -> Daemon {
    Daemon::start(&secure(&keys.join(name), extra, Some(rib_udp)))
}

fn wait_for(secs: u64, what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn registry_has(rib: &Daemon, name: &str) -> bool {
    let l = rib.json(&["routing", "list", "--json"]);
    l["list"]["registry"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["name"] == name)
}

#[test]
fn routing_commands_sc_names_and_get_honouring_retry_after() {
    let keys = tempfile::tempdir().unwrap();
    let db = keys.path().join("rib.redb");
    let rib = Daemon::start(&secure(
        &keys.path().join("rib.key"),
        &format!("rib_service = true\ndatabase = {db:?}"),
        None,
    ));
    let r1 = router(keys.path(), "r1.key", rib.udp, "");
    let r2 = router(keys.path(), "r2.key", rib.udp, "miss = \"nack\"");
    let id = r1.json(&["routing", "id", "--json"]);
    let r1_name = id["router"].as_str().unwrap().to_owned();
    assert!(r1_name.starts_with("sc:") && r1_name.len() == 67, "{id}");
    assert_eq!(id["rib"][0], RIB, "{id}");
    // The owner's key, made by nameway, names the object.
    let owner_key = keys.path().join("owner.key");
    let made = r1.nameway(&["key", "generate", "ed25519", owner_key.to_str().unwrap()]);
    assert!(made.status.success());
    let owner = NameKey::from_file_bytes(&std::fs::read(&owner_key).unwrap()).unwrap();
    let sc = format!("sc:{}", owner.hash().to_hex());
    // routing name: the key's own name, from the file alone.
    let named = r1.nameway(&["routing", "name", owner_key.to_str().unwrap()]);
    assert!(named.status.success(), "{named:?}");
    assert_eq!(String::from_utf8_lossy(&named.stdout).trim(), sc);
    // put announces the self-certifying name it publishes with the owner's key.
    let (file, sha) = write_object(&r1, "obj.bin", 200_000, 7);
    let prefix = format!("{sc}/obj");
    let (_put, served) = put(
        &r1,
        &file,
        &prefix,
        &["--sign", "ed25519", "--key", owner_key.to_str().unwrap()],
    );
    assert!(served.starts_with(&format!("{prefix}/v=")), "{served}");
    wait_for(20, "the registration", || registry_has(&rib, &sc));
    // r1's RIB shows the announced route with the sc: shorthand.
    let routes = r1.json(&["route", "list", "--json"]);
    let announced = routes
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["prefix"] == sc.as_str())
        .unwrap_or_else(|| panic!("{routes}"));
    assert_eq!(announced["origin"], 129, "{announced}");
    // get on the consumer's router (nack mode): the first Interests are Nacked with
    // RetryAfter, get waits as told and fetches.
    let out = keys.path().join("copy.bin");
    let pubkey = format!("{}.pub", owner_key.display());
    let got = r2.nameway(&[
        "get",
        &prefix,
        "-o",
        out.to_str().unwrap(),
        "--key",
        &pubkey,
        "--json",
    ]);
    assert!(
        got.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&got.stderr),
        r2.log()
    );
    assert_eq!(sha256_hex(&std::fs::read(&out).unwrap()), sha);
    let summary: Value = serde_json::from_slice(&got.stdout).unwrap();
    assert!(
        summary["name"].as_str().unwrap().starts_with(&prefix),
        "{summary}"
    );
    let status = r2.json(&["status", "--json"]);
    assert!(
        status["routing"]["misses_nacked"].as_u64().unwrap() >= 1,
        "get went through a Nack with RetryAfter: {status}"
    );
    // lookup verifies the RIB's answer here.
    let found = r2.json(&["routing", "lookup", &sc, "--json"]);
    assert_eq!(found["result"], "found", "{found}");
    assert_eq!(found["delegate"], r1_name, "{found}");
    // explain walks registry, chain, FIB, hint.
    let ok = r2.json(&["routing", "explain", &prefix, "--json"]);
    assert_eq!(ok["fails_at"], Value::Null, "{ok}");
    assert_eq!(ok["steps"].as_array().unwrap().len(), 4, "{ok}");
    let unknown = format!("sc:{}", KeyHash::from_bytes([7; 32]).to_hex());
    let missing = r2.json(&["routing", "explain", &unknown, "--json"]);
    assert_eq!(missing["fails_at"], "registry", "{missing}");
    let text = r2.nameway(&["routing", "explain", &unknown]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("fails at: registry"), "{text}");
    // list shows the route held by the first hop, with its hint.
    let list = r2.nameway(&["routing", "list"]);
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(list.contains(&sc) && list.contains(&r1_name), "{list}");
    // announce: a newer delegation of the name, on put's face.
    let face = announced["face_id"].as_u64().unwrap().to_string();
    let again = r1.json(&[
        "routing",
        "announce",
        "--key",
        owner_key.to_str().unwrap(),
        "--face",
        &face,
        "--json",
    ]);
    assert_eq!(again["name"], sc, "{again}");
    assert_eq!(again["delegate"], r1_name, "{again}");
    // A name that is not the key's is refused before anything is sent.
    let wrong = r1.nameway(&[
        "routing",
        "announce",
        &unknown,
        "--key",
        owner_key.to_str().unwrap(),
    ]);
    assert!(!wrong.status.success());
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("is not the name of this key"));
}
