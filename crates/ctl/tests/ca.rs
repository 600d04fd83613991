//! The domain CA: anchor files, enrolment tokens, router certificates, the deny list, and
//! configuration objects signed by the anchor.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a failure is a failed test

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use bytes::Bytes;
use nameway_ctl::ca::{
    self, anchor_cert_path, anchor_key_path, verify_router_cert, Authority, CaError, DenyList,
};
use nameway_ctl::objects::{ConfigBody, ConfigKind, ConfigObject, FibVersions};
use nameway_ctl::{Durability, Fib, NextHop, SqliteStore};
use nameway_transport::{SignatureKind, SigningKey};
use nameway_wire::Name;

const NOW_MS: u64 = 1_800_000_000_000;
const NOW_S: u64 = NOW_MS / 1000;

fn name(s: &str) -> Name {
    s.parse().unwrap()
}

fn setup(dir: &Path) -> (SqliteStore, Authority) {
    let db = dir.join("ctl.db");
    let mut store = SqliteStore::open(&db, Durability::Full).unwrap();
    store.set_meta("domain", "/example").unwrap();
    let ca = Authority::create(
        &name("/example"),
        &anchor_key_path(&db),
        &anchor_cert_path(&db),
    )
    .unwrap();
    (store, ca)
}

fn router_key() -> (SigningKey, Vec<u8>) {
    let k = SigningKey::generate(SignatureKind::Ed25519).unwrap();
    let der = k.public_der().unwrap();
    (k, der)
}

#[test]
fn the_anchor_key_is_private_and_reloads() {
    let dir = tempfile::tempdir().unwrap();
    let (_, ca) = setup(dir.path());
    let db = dir.path().join("ctl.db");
    let mode = std::fs::metadata(anchor_key_path(&db))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let again = Authority::load(&anchor_key_path(&db), &anchor_cert_path(&db)).unwrap();
    assert_eq!(again.certificate().wire(), ca.certificate().wire());
    assert_eq!(again.domain(), &name("/example"));
    // A second init does not replace the anchor.
    let e = Authority::create(
        &name("/example"),
        &anchor_key_path(&db),
        &anchor_cert_path(&db),
    )
    .unwrap_err();
    assert!(matches!(e, CaError::KeyFile(_)), "{e:?}");
}

#[test]
fn a_token_enrols_its_router_once() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, ca) = setup(dir.path());
    let r1 = name("/example/r1");
    let token = ca::create_token(&mut store, &r1, 3_600_000, NOW_MS).unwrap();
    let (_, der) = router_key();
    let cert = ca::enrol(&mut store, &ca, &token, &r1, &der, None, NOW_MS).unwrap();

    // /example/r1/KEY/<id>/ctl/v=<ms>, valid 7 days, the router's key, signed by the anchor.
    assert_eq!(cert.identity(), &r1);
    let n = cert.name();
    assert_eq!(n.len(), r1.len() + 4);
    assert_eq!(n.get(r1.len() + 2).unwrap().value(), b"ctl");
    assert_eq!(n.last().unwrap().as_version(), Some(NOW_S * 1000));
    assert_eq!(cert.key_der(), &der[..]);
    assert_eq!(cert.issuer(), Some(&ca.certificate().key_name()));
    let ok = verify_router_cert(
        cert.wire().clone(),
        ca.certificate(),
        &DenyList::default(),
        NOW_S + 6 * 86_400,
    );
    assert!(ok.is_ok(), "{ok:?}");
    let late = verify_router_cert(
        cert.wire().clone(),
        ca.certificate(),
        &DenyList::default(),
        NOW_S + 8 * 86_400,
    );
    assert!(matches!(late, Err(CaError::NotValidNow { .. })), "{late:?}");

    // Single use.
    let again = ca::enrol(&mut store, &ca, &token, &r1, &der, None, NOW_MS + 1);
    assert!(matches!(again, Err(CaError::TokenUsed)), "{again:?}");
    // The token is not stored in clear.
    let db = std::fs::read(dir.path().join("ctl.db")).unwrap();
    let wal = std::fs::read(dir.path().join("ctl.db-wal")).unwrap_or_default();
    let needle = token.as_bytes();
    assert!(!db.windows(needle.len()).any(|w| w == needle));
    assert!(!wal.windows(needle.len()).any(|w| w == needle));
    // The node is recorded.
    use nameway_ctl::RegistryStore as _;
    let nodes = store.nodes().unwrap();
    assert_eq!(nodes.len(), 1);
    assert_eq!(nodes[0].cert.as_deref(), Some(&cert.wire()[..]));
}

#[test]
fn bad_tokens_are_refused_with_their_reason() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, ca) = setup(dir.path());
    let (_, der) = router_key();
    let r1 = name("/example/r1");
    let t = ca::create_token(&mut store, &r1, 1_000, NOW_MS).unwrap();
    let e = ca::enrol(&mut store, &ca, &t, &r1, &der, None, NOW_MS + 1_000).unwrap_err();
    assert!(matches!(e, CaError::TokenExpired), "{e:?}");
    let t = ca::create_token(&mut store, &r1, 60_000, NOW_MS).unwrap();
    let e = ca::enrol(
        &mut store,
        &ca,
        &t,
        &name("/example/r2"),
        &der,
        None,
        NOW_MS,
    )
    .unwrap_err();
    assert!(matches!(e, CaError::WrongRouter { .. }), "{e:?}");
    let e = ca::enrol(&mut store, &ca, "not-a-token", &r1, &der, None, NOW_MS).unwrap_err();
    assert!(matches!(e, CaError::UnknownToken), "{e:?}");
    // A key that is not Ed25519 does not burn the token.
    let e = ca::enrol(&mut store, &ca, &t, &r1, b"junk", None, NOW_MS).unwrap_err();
    assert!(matches!(e, CaError::BadRouterKey), "{e:?}");
    assert!(ca::enrol(&mut store, &ca, &t, &r1, &der, None, NOW_MS).is_ok());
    // Outside the domain.
    let t = ca::create_token(&mut store, &name("/other/r9"), 60_000, NOW_MS).unwrap();
    let e = ca::enrol(&mut store, &ca, &t, &name("/other/r9"), &der, None, NOW_MS).unwrap_err();
    assert!(matches!(e, CaError::OutsideDomain { .. }), "{e:?}");
}

#[test]
fn certificates_of_another_anchor_and_denied_routers_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, ca) = setup(dir.path());
    let other_dir = tempfile::tempdir().unwrap();
    let (_, forger) = setup(other_dir.path());
    let (_, der) = router_key();
    let forged = forger
        .issue_router_cert(&name("/example/r1"), &der, NOW_S)
        .unwrap();
    let e = verify_router_cert(
        forged.wire().clone(),
        ca.certificate(),
        &DenyList::default(),
        NOW_S,
    );
    assert!(matches!(e, Err(CaError::Cert(_))), "{e:?}");

    let cert = ca
        .issue_router_cert(&name("/example/r1"), &der, NOW_S)
        .unwrap();
    ca::deny(&mut store, &name("/example/r1"), "stolen", NOW_MS).unwrap();
    let names = ca::denied(&mut store).unwrap();
    let signed = ca.sign_deny_list(&names, 3).unwrap();
    let deny = DenyList::decode_verified(signed.clone(), ca.certificate()).unwrap();
    assert_eq!(deny.version, 3);
    assert_eq!(deny.names, vec![name("/example/r1")]);
    let e = verify_router_cert(cert.wire().clone(), ca.certificate(), &deny, NOW_S);
    assert!(matches!(e, Err(CaError::Denied(_))), "{e:?}");
    // A deny list signed by another key, or altered, is refused.
    let fake = forger.sign_deny_list(&[], 4).unwrap();
    assert!(DenyList::decode_verified(fake, ca.certificate()).is_err());
    let mut altered = signed.to_vec();
    let n = altered.len();
    altered[n - 70] ^= 1;
    assert!(DenyList::decode_verified(Bytes::from(altered), ca.certificate()).is_err());
    // A denied router cannot enrol.
    let t = ca::create_token(&mut store, &name("/example/r1"), 60_000, NOW_MS).unwrap();
    let e = ca::enrol(
        &mut store,
        &ca,
        &t,
        &name("/example/r1"),
        &der,
        None,
        NOW_MS,
    )
    .unwrap_err();
    assert!(matches!(e, CaError::Denied(_)), "{e:?}");
}

fn fib(entries: &[(&str, &[(u64, u64)])]) -> Fib {
    entries
        .iter()
        .map(|(p, hops)| {
            (
                name(p),
                hops.iter()
                    .map(|&(face, cost)| NextHop { face, cost })
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn configuration_objects_verify_on_decode_and_diffs_rebuild_the_fib() {
    let dir = tempfile::tempdir().unwrap();
    let (_, ca) = setup(dir.path());
    let r1 = name("/example/site/r1");
    let mut v = FibVersions::new();
    let f1 = fib(&[("/a", &[(1, 10), (2, 10)]), ("/b", &[(3, 5)])]);
    let f2 = fib(&[("/a", &[(2, 10)]), ("/c/d", &[(4, 1)])]);
    assert_eq!(v.publish(f1.clone()), Some(1));
    assert_eq!(v.publish(f1.clone()), None);
    v.ack(1);
    assert_eq!(v.publish(f2.clone()), Some(2));

    let snap = v.snapshot(&r1);
    let wire = snap.sign(&ca).unwrap();
    let back = ConfigObject::decode_verified(wire.clone(), ca.certificate()).unwrap();
    assert_eq!(back, snap);
    assert_eq!(back.body, ConfigBody::FibSnapshot(f2.clone()));

    let diff = v.diff(&r1);
    assert_eq!(diff.base, Some(1));
    let back = ConfigObject::decode_verified(diff.sign(&ca).unwrap(), ca.certificate()).unwrap();
    let ConfigBody::FibDiff(d) = &back.body else {
        panic!("{back:?}")
    };
    assert_eq!(d.apply(&f1), f2);
    assert_eq!(d.removals, vec![name("/b")]);

    // Another anchor's key, or one flipped byte: refused.
    let other_dir = tempfile::tempdir().unwrap();
    let (_, forger) = setup(other_dir.path());
    let forged = snap.sign(&forger).unwrap();
    assert!(ConfigObject::decode_verified(forged, ca.certificate()).is_err());
    for i in [wire.len() / 2, wire.len() - 1] {
        let mut t = wire.to_vec();
        t[i] ^= 0x01;
        assert!(
            ConfigObject::decode_verified(Bytes::from(t), ca.certificate()).is_err(),
            "byte {i}"
        );
    }

    // Other kinds carry a document.
    let cs = ConfigObject {
        router: r1.clone(),
        kind: ConfigKind::Cs,
        version: 7,
        base: None,
        body: ConfigBody::Document(Bytes::from_static(b"policy = \"lru\"\n")),
    };
    let back = ConfigObject::decode_verified(cs.sign(&ca).unwrap(), ca.certificate()).unwrap();
    assert_eq!(back, cs);
}

/// A `--ca` file as a controller before schema version 3 left it (its CA next to a
/// PostgreSQL registry): schema version 2 with the CA's rows, each group key's level a
/// `meta` row `key_level <id>`.
fn pre_v3_file(path: &Path, now: i64) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(PRE_V3_SCHEMA).unwrap();
    conn.execute_batch(&format!(
        "PRAGMA user_version = 2; PRAGMA application_id = {};",
        nameway_ctl::APPLICATION_ID
    ))
    .unwrap();
    let exec = |sql: &str, p: &[&dyn rusqlite::ToSql]| {
        conn.execute(sql, p).unwrap();
    };
    exec(
        "INSERT INTO meta (key, value) VALUES ('domain', '/example')",
        &[],
    );
    // Tokens: one unused and valid, one expired (not carried), one used.
    let later = now + 3_600_000;
    let ins = "INSERT INTO tokens (hash, router, expires, used) VALUES (?1, ?2, ?3, ?4)";
    exec(ins, &[&vec![1u8; 32], &"/example/r5", &later, &None::<i64>]);
    exec(
        ins,
        &[&vec![2u8; 32], &"/example/r6", &(now - 1), &None::<i64>],
    );
    exec(
        ins,
        &[&vec![3u8; 32], &"/example/r1", &later, &Some(now - 10)],
    );
    // Routers: r1 enrolled later in the store than in the file (the store's kept), r2 only
    // in the file.
    let node = "INSERT INTO nodes (name, pubkey, kem_pubkey, cert, enrolled, last_seen) \
                VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
    exec(
        node,
        &[
            &"/example/r1",
            &vec![0x11u8; 44],
            &vec![0x12u8; 32],
            &vec![0x13u8],
            &(now - 5000),
            &(now - 5000),
        ],
    );
    exec(
        node,
        &[
            &"/example/r2",
            &vec![0x21u8; 44],
            &vec![0x22u8; 32],
            &vec![0x23u8],
            &(now - 5000),
            &(now - 5000),
        ],
    );
    // The deny list: r2, and r3 (denied in the store later, for another reason).
    let deny = "INSERT OR REPLACE INTO deny (name, added, reason) VALUES (?1, ?2, ?3)";
    exec(deny, &[&"/example/r2", &(now - 4000), &"lost"]);
    exec(deny, &[&"/example/r3", &(now - 4000), &"old reason"]);
    // A group key with its level in `meta`, and an expired one (not carried).
    let key = "INSERT INTO keys (key_id, scope, not_before, not_after, sealed_per_node) \
               VALUES (?1, ?2, ?3, ?4, ?5)";
    exec(
        key,
        &[
            &"/example/app#0000000000000001",
            &"/example/app",
            &(now - 1000),
            &later,
            &vec![9u8; 8],
        ],
    );
    exec(
        key,
        &[
            &"/example/app#0000000000000000",
            &"/example/app",
            &(now - 9000),
            &(now - 2000),
            &vec![8u8; 8],
        ],
    );
    exec(
        "INSERT INTO meta (key, value) VALUES ('key_level /example/app#0000000000000001', 'aes-256-gcm')",
        &[],
    );
}

const PRE_V3_SCHEMA: &str = "
CREATE TABLE nodes (
    name       TEXT PRIMARY KEY,
    pubkey     BLOB NOT NULL,
    kem_pubkey BLOB,
    cert       BLOB,
    enrolled   INTEGER NOT NULL,
    last_seen  INTEGER NOT NULL
);
CREATE TABLE links (
    a       TEXT NOT NULL,
    b       TEXT NOT NULL,
    face_a  INTEGER NOT NULL,
    face_b  INTEGER NOT NULL,
    cost    INTEGER NOT NULL,
    rtt_us  INTEGER NOT NULL,
    state   TEXT NOT NULL CHECK (state IN ('up', 'down')),
    updated INTEGER NOT NULL,
    PRIMARY KEY (a, b)
);
CREATE TABLE registrations (
    id           INTEGER PRIMARY KEY,
    prefix       BLOB NOT NULL,
    uri          TEXT NOT NULL,
    node         TEXT NOT NULL,
    face         INTEGER NOT NULL,
    origin       INTEGER NOT NULL,
    cost         INTEGER NOT NULL,
    flags        INTEGER NOT NULL,
    expires      INTEGER NOT NULL,
    owner_key    BLOB,
    announcement BLOB,
    UNIQUE (prefix, node, face)
);
CREATE INDEX registrations_node ON registrations (node);
CREATE INDEX registrations_expires ON registrations (expires);
CREATE TABLE policies (
    prefix         TEXT PRIMARY KEY,
    security_level TEXT NOT NULL,
    cs_admit       INTEGER NOT NULL,
    cs_priority    INTEGER NOT NULL
);
CREATE TABLE keys (
    key_id          TEXT PRIMARY KEY,
    scope           TEXT NOT NULL,
    not_before      INTEGER NOT NULL,
    not_after       INTEGER NOT NULL,
    sealed_per_node BLOB NOT NULL
);
CREATE TABLE tokens (
    hash     BLOB PRIMARY KEY,
    router   TEXT NOT NULL,
    expires  INTEGER NOT NULL,
    used     INTEGER
);
CREATE TABLE deny (
    name    TEXT PRIMARY KEY,
    added   INTEGER NOT NULL,
    reason  TEXT NOT NULL
);
CREATE TABLE config_versions (
    node       TEXT NOT NULL,
    kind       TEXT NOT NULL,
    version    INTEGER NOT NULL,
    digest     BLOB NOT NULL,
    applied_at INTEGER,
    PRIMARY KEY (node, kind, version)
);
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE audit (
    ts     INTEGER NOT NULL,
    actor  TEXT NOT NULL,
    action TEXT NOT NULL,
    detail TEXT NOT NULL
);
";

#[test]
fn the_ca_rows_of_a_pre_v3_ca_file_are_carried_over_once_never_over_newer_rows() {
    use nameway_ctl::ca_carry::{carry_over, CarriedOver, CARRIED_META};
    use nameway_ctl::ca_store::{CaStore as _, TokenUse};
    use nameway_ctl::{NodeRecord, RegistryStore as _};
    let dir = tempfile::tempdir().unwrap();
    let now = i64::try_from(nameway_ctl::now_ms()).unwrap();
    let now_u = u64::try_from(now).unwrap();
    let old = dir.path().join("ca.db");
    pre_v3_file(&old, now);
    // The shared store (another file here; PostgreSQL runs the same statements): r1
    // re-enrolled since, r3 denied since.
    let mut store = SqliteStore::open(&dir.path().join("shared.db"), Durability::Normal).unwrap();
    store
        .put_node(&NodeRecord {
            name: "/example/r1".into(),
            pubkey: vec![0x31; 44],
            kem_pubkey: Some(vec![0x32; 32]),
            cert: Some(vec![0x33]),
            enrolled_ms: now_u - 1000,
            last_seen_ms: now_u - 1000,
        })
        .unwrap();
    store
        .put_deny("/example/r3", now_u - 1000, "new reason")
        .unwrap();
    // Before: the file's deny of r2 unknown to the store (r2 would be admitted).
    assert_eq!(store.deny_names().unwrap(), vec!["/example/r3".to_owned()]);

    let done = carry_over(&old, &mut store, now_u).unwrap().unwrap();
    assert_eq!(
        done,
        CarriedOver {
            tokens: 2,
            routers: 1,
            denied: 1,
            group_keys: 1,
            found: 7,
        }
    );
    assert_eq!(
        store.deny_names().unwrap(),
        vec!["/example/r2".to_owned(), "/example/r3".to_owned()]
    );
    let nodes = store.nodes().unwrap();
    let r1 = nodes.iter().find(|n| n.name == "/example/r1").unwrap();
    assert_eq!(
        r1.pubkey,
        vec![0x31; 44],
        "the store's later enrolment kept"
    );
    let r2 = nodes.iter().find(|n| n.name == "/example/r2").unwrap();
    assert_eq!(r2.kem_pubkey, Some(vec![0x22; 32]));
    // The valid token enrols at the store; the used one stays used; the expired one is gone.
    assert_eq!(
        store.consume_token(&[1; 32], "/example/r5", now_u).unwrap(),
        TokenUse::Consumed
    );
    assert_eq!(
        store.consume_token(&[3; 32], "/example/r1", now_u).unwrap(),
        TokenUse::Used
    );
    assert_eq!(
        store.consume_token(&[2; 32], "/example/r6", now_u).unwrap(),
        TokenUse::Unknown
    );
    let keys = store.group_key_rows().unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0].key_id, "/example/app#0000000000000001");
    assert_eq!(keys[0].level, "aes-256-gcm", "the level moved from meta");

    // Once: the file is marked, and a second run reads nothing (a deny lifted in the store
    // by hand is not brought back).
    let mut file = SqliteStore::open(&old, Durability::Normal).unwrap();
    assert!(file.meta(CARRIED_META).unwrap().is_some());
    drop(file);
    rusqlite::Connection::open(dir.path().join("shared.db"))
        .unwrap()
        .execute("DELETE FROM deny WHERE name = '/example/r2'", [])
        .unwrap();
    assert_eq!(carry_over(&old, &mut store, now_u + 1).unwrap(), None);
    assert_eq!(store.deny_names().unwrap(), vec!["/example/r3".to_owned()]);
}
