//! The real `namewayctl` binary: init, token, enrol, registry, routes, backup, keys; one-line
//! errors with their exit codes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a failure is a failed test

use std::path::Path;
use std::process::{Command, Output};

fn ctl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_namewayctl"))
        .args(args)
        .output()
        .unwrap()
}

fn ok(args: &[&str]) -> String {
    let o = ctl(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn fails(args: &[&str], code: i32) -> String {
    let o = ctl(args);
    assert_eq!(
        o.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "not one line: {err}");
    err
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn init_token_enrol_keys_and_backup() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ctl.db");
    let out = ok(&["init", "--domain", "/example", "--db", s(&db)]);
    assert!(out.contains("/example/KEY/"), "{out}");
    // A second init is refused.
    fails(&["init", "--domain", "/example", "--db", s(&db)], 1);

    let token = ok(&[
        "token",
        "--router",
        "/example/r1",
        "--ttl",
        "1h",
        "--db",
        s(&db),
    ]);
    let token = token.trim();
    assert!(token.len() >= 50, "{token}");
    fails(&["token", "--router", "/other/r1", "--db", s(&db)], 4);

    // The router's key (the transport library writes ndnsec-compatible files).
    let key =
        nameway_transport::SigningKey::generate(nameway_transport::SignatureKind::Ed25519).unwrap();
    let key_path = dir.path().join("r1.key");
    let pubkey = key.save(&key_path).unwrap().unwrap();
    let cert = dir.path().join("r1.cert");
    let name = ok(&[
        "enrol",
        "--router",
        "/example/r1",
        "--token",
        token,
        "--key",
        s(&pubkey),
        "--out",
        s(&cert),
        "--db",
        s(&db),
    ]);
    assert!(name.trim().starts_with("/example/r1/KEY/"), "{name}");
    let c = nameway_transport::Certificate::load(&cert).unwrap();
    assert_eq!(c.key_der(), &key.public_der().unwrap()[..]);
    let err = fails(
        &[
            "enrol",
            "--router",
            "/example/r1",
            "--token",
            token,
            "--key",
            s(&pubkey),
            "--out",
            s(&cert),
            "--db",
            s(&db),
        ],
        4,
    );
    assert!(err.contains("already used"), "{err}");

    // A group key sealed to r2 (enrolled with an X25519 key) opens with r2's private key.
    let token2 = ok(&["token", "--router", "/example/r2", "--db", s(&db)]);
    let kem = nameway_ctl::sealed::KemKeyPair::generate().unwrap();
    let key2 =
        nameway_transport::SigningKey::generate(nameway_transport::SignatureKind::Ed25519).unwrap();
    let pub2 = key2.save(&dir.path().join("r2.key")).unwrap().unwrap();
    let kem_hex = hex::encode(kem.public());
    ok(&[
        "enrol",
        "--router",
        "/example/r2",
        "--token",
        token2.trim(),
        "--key",
        s(&pub2),
        "--out",
        s(&dir.path().join("r2.cert")),
        "--kem-key",
        &kem_hex,
        "--db",
        s(&db),
    ]);
    let id = ok(&[
        "keys",
        "--group",
        "/example/video",
        "--member",
        "/example/r2",
        "--db",
        s(&db),
    ]);
    let id = id.trim();
    assert!(id.starts_with("/example/video#"), "{id}");
    // r1 has no X25519 key: refused.
    fails(
        &[
            "keys",
            "--group",
            "/example/video",
            "--member",
            "/example/r1",
            "--db",
            s(&db),
        ],
        1,
    );
    let mut store = nameway_ctl::SqliteStore::open(&db, nameway_ctl::Durability::Full).unwrap();
    let sealed = nameway_ctl::group_keys::sealed_for(&mut store, id, "/example/r2")
        .unwrap()
        .unwrap();
    assert!(nameway_ctl::sealed::open_key(&kem, "/example/r2", id, &sealed).is_ok());
    drop(store);

    let keys = ok(&["keys", "--db", s(&db)]);
    assert!(
        keys.contains(&format!("group   {id}  members /example/r2")),
        "{keys}"
    );
    assert!(keys.contains("anchor  /example/KEY/"), "{keys}");
    assert!(keys.contains("/example/r1  /example/r1/KEY/"), "{keys}");

    // Deny r1: the signed list verifies against the anchor and names it; keys shows it.
    let list = dir.path().join("deny.tlv");
    let out = ok(&[
        "deny",
        "/example/r1",
        "--reason",
        "lost",
        "--out",
        s(&list),
        "--db",
        s(&db),
    ]);
    assert_eq!(out.trim(), "1 names denied");
    let anchor =
        nameway_transport::Certificate::load(&nameway_ctl::ca::anchor_cert_path(&db)).unwrap();
    let deny =
        nameway_ctl::ca::DenyList::decode_verified(std::fs::read(&list).unwrap().into(), &anchor)
            .unwrap();
    assert_eq!(deny.names, vec!["/example/r1".parse().unwrap()]);
    assert!(ok(&["keys", "--db", s(&db)]).contains("denied  /example/r1"));
    fails(&["deny", "/other/r2", "--db", s(&db)], 4);

    let copy = dir.path().join("copy.db");
    ok(&["backup", "--db", s(&db), "--to", s(&copy)]);
    assert!(ok(&["check", "--db", s(&copy)]).starts_with("ok"));
}

#[test]
fn registry_add_list_remove() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ctl.db");
    ok(&["init", "--domain", "/example", "--db", s(&db)]);
    ok(&[
        "registry",
        "add",
        "/example/video",
        "--node",
        "/example/r3",
        "--face",
        "5",
        "--db",
        s(&db),
    ]);
    ok(&[
        "registry",
        "add",
        "/example/a",
        "--node",
        "/example/r1",
        "--db",
        s(&db),
    ]);
    let list = ok(&["registry", "list", "--db", s(&db)]);
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 2, "{list}");
    assert!(
        lines[1].starts_with("/example/video  node /example/r3  face 5"),
        "{list}"
    );
    ok(&[
        "registry",
        "remove",
        "/example/a",
        "--node",
        "/example/r1",
        "--db",
        s(&db),
    ]);
    fails(
        &[
            "registry",
            "remove",
            "/example/a",
            "--node",
            "/example/r1",
            "--db",
            s(&db),
        ],
        1,
    );
    assert_eq!(ok(&["registry", "list", "--db", s(&db)]).lines().count(), 1);
}

#[test]
fn routes_from_a_topology_file_and_the_registry() {
    let dir = tempfile::tempdir().unwrap();
    let topo = dir.path().join("topo.toml");
    // r1 - r2 - r4 and r1 - r3 - r4 (equal cost), r4 - r5 reported by r4 only.
    std::fs::write(
        &topo,
        r#"
max_nexthops = 2
[[link]]
a = "/example/r1"
b = "/example/r2"
face_a = 12
[[link]]
a = "/example/r1"
b = "/example/r3"
face_a = 13
[[link]]
a = "/example/r2"
b = "/example/r4"
[[link]]
a = "/example/r3"
b = "/example/r4"
[[link]]
a = "/example/r4"
b = "/example/r5"
reported_by = "a"
[[prefix]]
name = "/example/video"
origin = "/example/r4"
face = 9
"#,
    )
    .unwrap();
    let out = ok(&["routes", "/example/video/seg=1", "--topology", s(&topo)]);
    let r1: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("/example/r1 "))
        .collect();
    assert_eq!(
        r1,
        [
            "/example/r1  /example/video  face 12  cost 2  via /example/r2",
            "/example/r1  /example/video  face 13  cost 2  via /example/r3"
        ],
        "{out}"
    );
    assert!(
        out.contains("/example/r4  /example/video  face 9  cost 0  (local)"),
        "{out}"
    );
    // The half-reported link carries nothing.
    assert!(
        out.contains("/example/r5  /example/video/seg=1  no route"),
        "{out}"
    );

    // An origin from the registry: r5 is unreachable, r2 is nearer to r1 than r4.
    let db = dir.path().join("ctl.db");
    ok(&["init", "--domain", "/example", "--db", s(&db)]);
    ok(&[
        "registry",
        "add",
        "/example/video",
        "--node",
        "/example/r2",
        "--face",
        "4",
        "--db",
        s(&db),
    ]);
    let out = ok(&[
        "routes",
        "/example/video",
        "--topology",
        s(&topo),
        "--db",
        s(&db),
    ]);
    assert!(
        out.contains("/example/r1  /example/video  face 12  cost 1  via /example/r2"),
        "{out}"
    );
    assert!(!out.contains("face 13"), "{out}");
}

#[test]
fn bad_databases_and_input_give_one_line_and_an_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, "not a database at all, just text\n").unwrap();
    let err = fails(&["registry", "list", "--db", s(&junk)], 3);
    assert!(err.contains("not a Nameway controller database"), "{err}");
    let missing = dir.path().join("missing.db");
    fails(&["registry", "list", "--db", s(&missing)], 1);
    let topo = dir.path().join("t.toml");
    std::fs::write(
        &topo,
        "[[link]]\na = \"/x\"\nb = \"/y\"\nreported_by = \"c\"\n",
    )
    .unwrap();
    let err = fails(&["routes", "/x", "--topology", s(&topo)], 1);
    assert!(err.contains("reported_by"), "{err}");
    std::fs::write(&topo, "[[link]]\na = \"/x\"\nbogus = 1\n").unwrap();
    fails(&["routes", "/x", "--topology", s(&topo)], 1);
    let o = ctl(&["token", "--router"]);
    assert_eq!(o.status.code(), Some(2));
}
