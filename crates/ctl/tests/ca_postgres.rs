//! The CA on a PostgreSQL database two controllers share (schema version 3): each
//! "controller" here is its own connection to the database and, where it admits routers, its
//! own `Auth` with the domain's anchor (the anchor's key is a file each is given; it is never
//! in the database).
//!
//! Runs against the server of `scripts/postgres-test-server.sh` (`NAMEWAY_TEST_POSTGRES`);
//! skipped without it, failed without it under `NAMEWAY_REQUIRE_INTEROP` (CI).
#![cfg(feature = "postgres")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Barrier};

use bytes::Bytes;
use nameway_ctl::ca::{self, anchor_cert_path, anchor_key_path, Authority, CaError};
use nameway_ctl::channel::messages::router_proof;
use nameway_ctl::channel::{self, Credential, Hello};
use nameway_ctl::group_keys::{self, DEFAULT_LEVEL};
use nameway_ctl::sealed::{open_key, KemKeyPair};
use nameway_ctl::serve::auth::{Auth, Refusal};
use nameway_ctl::{now_ms, PostgresStore, RegistryStore, SCHEMA_VERSION};
use nameway_transport::{SignatureKind, SigningKey};
use nameway_wire::Name;

#[path = "support/postgres.rs"]
mod pg;

fn fresh_db(test: &str) -> Option<String> {
    let base = pg::server(test)?;
    Some(pg::fresh_db(&base, &format!("nw_ca_{test}")))
}

/// The domain's anchor (files in `dir`) and a copy of it as a second controller loads it.
fn anchors(dir: &std::path::Path) -> (Authority, Authority) {
    let db = dir.join("ctl.db");
    let domain: Name = "/example".parse().unwrap();
    let a = Authority::create(&domain, &anchor_key_path(&db), &anchor_cert_path(&db)).unwrap();
    let b = Authority::load(&anchor_key_path(&db), &anchor_cert_path(&db)).unwrap();
    (a, b)
}

fn name(s: &str) -> Name {
    s.parse().unwrap()
}

/// A router's Ed25519 key and X25519 link key.
struct RouterKeys {
    key: SigningKey,
    der: Vec<u8>,
    kem: KemKeyPair,
}

fn router_keys() -> RouterKeys {
    let key = SigningKey::generate(SignatureKind::Ed25519).unwrap();
    let der = key.public_der().unwrap();
    RouterKeys {
        key,
        der,
        kem: KemKeyPair::generate().unwrap(),
    }
}

/// The Hello of `router` presenting its certificate `cert` on a session with hash `hh`.
fn cert_hello(router: &str, keys: &RouterKeys, cert: Bytes, hh: &[u8]) -> Hello {
    Hello {
        router: name(router),
        credential: Credential::Certificate(cert),
        signature: channel::sign(&keys.key, &router_proof(hh)).unwrap(),
        applied: 0,
    }
}

#[test]
fn a_token_issued_through_one_controller_enrols_at_another_exactly_once() {
    let Some(db) = fresh_db("token") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (ca_a, ca_b) = anchors(dir.path());
    let mut at_a = PostgresStore::connect(&db).unwrap();
    assert_eq!(at_a.schema_version().unwrap(), SCHEMA_VERSION);
    let token = ca::create_token(&mut at_a, &name("/example/r1"), 60_000, now_ms()).unwrap();

    // Two controllers (B and C) are presented the token at the same moment: one enrols.
    let cas = [Arc::new(ca_b), Arc::new(ca_a)];
    let start = Arc::new(Barrier::new(2));
    let keys = Arc::new(router_keys());
    let results: Vec<Result<_, CaError>> = cas
        .iter()
        .map(|ca| {
            let (ca, start, keys, db, token) = (
                ca.clone(),
                start.clone(),
                keys.clone(),
                db.clone(),
                token.clone(),
            );
            std::thread::spawn(move || {
                let mut store = PostgresStore::connect(&db).unwrap();
                start.wait();
                ca::enrol(
                    &mut store,
                    &ca,
                    &token,
                    &name("/example/r1"),
                    &keys.der,
                    Some(&keys.kem.public()),
                    now_ms(),
                )
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    let ok = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(ok, 1, "{results:?}");
    assert!(
        results.iter().any(|r| matches!(r, Err(CaError::TokenUsed))),
        "{results:?}"
    );
    // The router's record and certificate are seen by the controller that made the token.
    let nodes = at_a.nodes().unwrap();
    let r1 = nodes.iter().find(|n| n.name == "/example/r1").unwrap();
    assert!(r1.cert.is_some());
    // And the token stays used for every controller.
    let again = ca::enrol(
        &mut at_a,
        &cas[1],
        &token,
        &name("/example/r1"),
        &keys.der,
        None,
        now_ms(),
    );
    assert!(matches!(again, Err(CaError::TokenUsed)), "{again:?}");
}

#[test]
fn a_router_denied_at_one_controller_is_refused_and_untrusted_at_another() {
    let Some(db) = fresh_db("deny") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (ca_a, ca_b) = anchors(dir.path());
    let mut at_a = PostgresStore::connect(&db).unwrap();
    let r1 = router_keys();
    let r2 = router_keys();
    let mut certs = Vec::new();
    for (router, keys) in [("/example/r1", &r1), ("/example/r2", &r2)] {
        let t = ca::create_token(&mut at_a, &name(router), 60_000, now_ms()).unwrap();
        let cert = ca::enrol(
            &mut at_a,
            &ca_a,
            &t,
            &name(router),
            &keys.der,
            Some(&keys.kem.public()),
            now_ms(),
        )
        .unwrap();
        certs.push(cert.wire().clone());
    }
    // Controller B admits r1 with the certificate A issued, and trusts both link keys.
    let auth_b = Auth::new(ca_b, PostgresStore::connect(&db).unwrap());
    let hh = [7u8; 32];
    let admitted = auth_b
        .admit(
            &cert_hello("/example/r1", &r1, certs[0].clone(), &hh),
            &hh,
            now_ms(),
        )
        .unwrap();
    assert_eq!(admitted.router, name("/example/r1"));
    let trusted = auth_b.trusted_link_keys(now_ms()).unwrap();
    assert!(trusted.contains(&r1.kem.public()) && trusted.contains(&r2.kem.public()));

    // Denied through A: B refuses r1 and drops its key from the trust it hands out.
    ca::deny(&mut at_a, &name("/example/r1"), "lost", now_ms()).unwrap();
    let refused = auth_b
        .admit(
            &cert_hello("/example/r1", &r1, certs[0].clone(), &hh),
            &hh,
            now_ms(),
        )
        .unwrap_err();
    assert!(matches!(refused, Refusal::Denied(_)), "{refused:?}");
    let trusted = auth_b.trusted_link_keys(now_ms()).unwrap();
    assert!(
        !trusted.contains(&r1.kem.public()),
        "denied r1 still trusted"
    );
    assert!(trusted.contains(&r2.kem.public()));
    // A router not enrolled anywhere is in nobody's trust.
    assert_eq!(trusted.len(), 1);
}

#[test]
fn a_group_key_made_at_one_controller_is_sealed_to_a_member_enrolled_at_another() {
    let Some(db) = fresh_db("group") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (ca_a, ca_b) = anchors(dir.path());
    let mut at_a = PostgresStore::connect(&db).unwrap();
    let mut at_b = PostgresStore::connect(&db).unwrap();
    // r2 enrols at B.
    let r2 = router_keys();
    let t = ca::create_token(&mut at_b, &name("/example/r2"), 60_000, now_ms()).unwrap();
    ca::enrol(
        &mut at_b,
        &ca_b,
        &t,
        &name("/example/r2"),
        &r2.der,
        Some(&r2.kem.public()),
        now_ms(),
    )
    .unwrap();
    // A makes a key for /example/video with r2 as a member, at a level B must see.
    let now = now_ms();
    let id = group_keys::create_group_key(
        &mut at_a,
        "/example/video",
        "aes-256-gcm",
        &["/example/r2"],
        now,
        now + 60_000,
    )
    .unwrap();
    // B hands r2 its grant, which r2 opens.
    let auth_b = Auth::new(ca_a, at_b);
    let grants = auth_b.grants_for(&name("/example/r2"), now_ms()).unwrap();
    assert_eq!(grants.len(), 1, "{grants:?}");
    assert_eq!(grants[0].key_id, id);
    assert_eq!(grants[0].level.name(), "aes-256-gcm");
    let key = open_key(&r2.kem, "/example/r2", &id, &grants[0].sealed).unwrap();
    assert_eq!(key.len(), 32);
    // A rotation made at A retires the old key for B's members too.
    let next = group_keys::create_group_key(
        &mut at_a,
        "/example/video",
        DEFAULT_LEVEL,
        &["/example/r2"],
        now + 1,
        now + 60_000,
    )
    .unwrap();
    group_keys::retire_others(&mut at_a, "/example/video", &next, now + 2).unwrap();
    let grants = auth_b.grants_for(&name("/example/r2"), now + 10).unwrap();
    let ids: Vec<&str> = grants.iter().map(|g| g.key_id.as_str()).collect();
    assert_eq!(ids, [next.as_str()]);
}

#[test]
fn the_cas_writes_wake_a_listener_on_the_ca_channel_and_a_router_seen_wakes_nobody() {
    use std::time::Duration;
    let Some(db) = fresh_db("ca_notify") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (ca_a, _) = anchors(dir.path());
    let mut at_a = PostgresStore::connect(&db).unwrap();
    let mut listener = at_a.listener_source().listener().unwrap();
    let quiet = Duration::from_millis(300);
    let soon = Duration::from_secs(5);
    let ca_only = nameway_ctl::Woken {
        changes: false,
        ca: true,
    };
    assert!(!listener.wait(quiet).unwrap(), "nothing written yet");
    // A token is nobody's business until it is used.
    let r1 = router_keys();
    let t = ca::create_token(&mut at_a, &name("/example/r1"), 60_000, now_ms()).unwrap();
    assert!(!listener.wait(quiet).unwrap(), "a token wakes nobody");
    // An enrolment writes the router's record: a new link key to trust.
    ca::enrol(
        &mut at_a,
        &ca_a,
        &t,
        &name("/example/r1"),
        &r1.der,
        Some(&r1.kem.public()),
        now_ms(),
    )
    .unwrap();
    assert_eq!(listener.wait_any(soon).unwrap(), ca_only, "an enrolment");
    // The router seen again (only `last_seen` moves): nobody.
    let mut node = at_a.nodes().unwrap().pop().unwrap();
    node.last_seen_ms += 1000;
    at_a.put_node(&node).unwrap();
    assert!(!listener.wait(quiet).unwrap(), "last_seen wakes nobody");
    // A new certificate (a renewal) does.
    node.cert = Some(vec![1, 2, 3]);
    at_a.put_node(&node).unwrap();
    assert_eq!(listener.wait_any(soon).unwrap(), ca_only, "a renewal");
    // A deny, and a deny of the same name again (its reason replaced).
    ca::deny(&mut at_a, &name("/example/r9"), "lost", now_ms()).unwrap();
    assert_eq!(listener.wait_any(soon).unwrap(), ca_only, "a deny");
    ca::deny(&mut at_a, &name("/example/r9"), "stolen", now_ms()).unwrap();
    assert_eq!(listener.wait_any(soon).unwrap(), ca_only, "a deny again");
    // A group key made, then a rotation's retirement; a retirement of nothing wakes nobody.
    let now = now_ms();
    let id = group_keys::create_group_key(
        &mut at_a,
        "/example/app",
        DEFAULT_LEVEL,
        &["/example/r1"],
        now,
        now + 3_600_000,
    )
    .unwrap();
    assert_eq!(listener.wait_any(soon).unwrap(), ca_only, "a group key");
    assert_eq!(
        group_keys::retire_others(&mut at_a, "/example/app", &id, now + 1000).unwrap(),
        0
    );
    assert!(!listener.wait(quiet).unwrap(), "nothing retired");
    let next = group_keys::create_group_key(
        &mut at_a,
        "/example/app",
        DEFAULT_LEVEL,
        &["/example/r1"],
        now,
        now + 7_200_000,
    )
    .unwrap();
    assert_eq!(listener.wait_any(soon).unwrap(), ca_only, "the next key");
    assert_eq!(
        group_keys::retire_others(&mut at_a, "/example/app", &next, now + 1000).unwrap(),
        1
    );
    assert_eq!(listener.wait_any(soon).unwrap(), ca_only, "a rotation");
    assert!(!listener.wait(quiet).unwrap(), "nothing more");
}

#[test]
fn the_ca_rows_of_an_old_ca_file_are_carried_over_to_postgresql_once() {
    use nameway_ctl::ca_carry::carry_over;
    use nameway_ctl::ca_store::{CaStore as _, TokenUse};
    use nameway_ctl::{Durability, SqliteStore};
    let Some(db) = fresh_db("carry") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let now = now_ms();
    // The file as the CA of an older controller: a deny, a token, a router's record.
    let file_path = dir.path().join("ca.db");
    let mut file = SqliteStore::open(&file_path, Durability::Normal).unwrap();
    file.put_deny("/example/r2", now - 4000, "lost").unwrap();
    file.put_token(&[1; 32], "/example/r5", now + 60_000)
        .unwrap();
    let r2 = router_keys();
    file.put_node(&nameway_ctl::NodeRecord {
        name: "/example/r2".into(),
        pubkey: r2.der.clone(),
        kem_pubkey: Some(r2.kem.public().to_vec()),
        cert: None,
        enrolled_ms: now - 5000,
        last_seen_ms: now - 5000,
    })
    .unwrap();
    drop(file);
    let mut store = PostgresStore::connect(&db).unwrap();
    store.put_deny("/example/r3", now, "new").unwrap();
    let mut listener = store.listener_source().listener().unwrap();
    let done = carry_over(&file_path, &mut store, now).unwrap().unwrap();
    assert_eq!(
        (done.tokens, done.routers, done.denied, done.found),
        (1, 1, 1, 3)
    );
    assert!(
        listener
            .wait_any(std::time::Duration::from_secs(5))
            .unwrap()
            .ca,
        "the running controllers are woken"
    );
    assert_eq!(
        store.deny_names().unwrap(),
        vec!["/example/r2".to_owned(), "/example/r3".to_owned()]
    );
    assert_eq!(store.nodes().unwrap().len(), 1);
    assert_eq!(
        store.consume_token(&[1; 32], "/example/r5", now).unwrap(),
        TokenUse::Consumed
    );
    // Once, and the same again is no change.
    assert_eq!(carry_over(&file_path, &mut store, now).unwrap(), None);
}
