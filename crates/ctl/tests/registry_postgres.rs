//! The registry on a real PostgreSQL server: the SQLite store's behaviour tests (register,
//! look up, restart, sweep, nodes, links, audit, backup), two controllers sharing one
//! database, the change feed (migration 2), another application's database refused, the
//! server going away.
//!
//! The server is the one `scripts/postgres-test-server.sh` starts (scripts/test.sh runs the
//! suite under it): its conninfo is in `NAMEWAY_TEST_POSTGRES`. Without it every test says
//! it is skipped, and fails when `NAMEWAY_REQUIRE_INTEROP` is set (CI). Each test works in
//! a database of its own, created (afresh) on that server.
#![cfg(feature = "postgres")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a failure is a failed test

use std::process::Command;
use std::sync::Arc;

use nameway_ctl::{
    GroupCommitConfig, LinkRecord, NodeRecord, PostgresStore, Registration, Registry,
    RegistryStore, StoreError,
};

const NOW: u64 = 1_800_000_000_000;

#[path = "support/postgres.rs"]
mod pg;
use pg::{psql, server};

/// A new, empty database named after the test; its conninfo.
fn fresh_db(test: &str) -> Option<String> {
    let base = server(test)?;
    Some(pg::fresh_db(&base, &format!("nw_{test}")))
}

fn reg(prefix: &str, node: &str, face: u64, expires_ms: u64) -> Registration {
    Registration {
        prefix: prefix.parse().unwrap(),
        node: node.into(),
        face,
        origin: 255,
        cost: 10,
        flags: 1,
        expires_ms,
        owner_key: Some(vec![0xAB; 44]),
        announcement: Some(vec![0x06, 0x02, 0xCA, 0xFE]),
    }
}

fn open(conninfo: &str, now: u64) -> Registry<PostgresStore> {
    let store = PostgresStore::connect(conninfo).unwrap();
    Registry::open(store, now, GroupCommitConfig::default())
        .unwrap()
        .0
}

#[test]
fn registrations_survive_a_restart() {
    let Some(db) = fresh_db("restart") else {
        return;
    };
    let r = open(&db, NOW);
    r.register(reg("/example/video", "/example/r1", 3, NOW + 60_000))
        .unwrap();
    r.register_all(
        (0..100)
            .map(|i| reg(&format!("/example/n/{i}"), "/example/r2", 1, NOW + 60_000))
            .collect(),
    )
    .unwrap();
    assert!(r
        .unregister(&reg("/example/n/7", "/example/r2", 1, 0).key())
        .unwrap());
    // A renewal replaces the row in place.
    r.register(reg("/example/n/8", "/example/r2", 1, NOW + 90_000))
        .unwrap();
    r.close().unwrap();

    let (r, report) = Registry::open(
        PostgresStore::connect(&db).unwrap(),
        NOW,
        GroupCommitConfig::default(),
    )
    .unwrap();
    assert_eq!(report.loaded, 100);
    assert_eq!(r.len(), 100);
    assert_eq!(
        r.lookup(&"/example/video/seg=3".parse().unwrap()),
        vec![reg("/example/video", "/example/r1", 3, NOW + 60_000)]
    );
    assert!(r.lookup(&"/example/n/7/x".parse().unwrap()).is_empty());
    assert_eq!(
        r.lookup(&"/example/n/8/x".parse().unwrap()),
        vec![reg("/example/n/8", "/example/r2", 1, NOW + 90_000)]
    );
}

#[test]
fn a_batch_applies_its_operations_in_order() {
    let Some(db) = fresh_db("batch_order") else {
        return;
    };
    let mut s = PostgresStore::connect(&db).unwrap();
    let a = reg("/a", "/r1", 1, NOW + 1);
    let b = reg("/b", "/r1", 1, NOW + 1);
    let a2 = reg("/a", "/r1", 1, NOW + 2);
    use nameway_ctl::RegistryOp::{Put, Remove};
    s.apply(&[
        Put(a.clone()),
        Put(b.clone()),
        Remove(b.key()),
        Put(a2.clone()),
        Remove(a.key()),
        Put(a2.clone()),
    ])
    .unwrap();
    assert_eq!(s.load_registrations().unwrap(), vec![a2]);
}

#[test]
fn expired_registrations_are_swept_and_not_loaded() {
    let Some(db) = fresh_db("sweep") else {
        return;
    };
    let r = open(&db, NOW);
    r.register(reg("/short", "/r1", 1, NOW + 1_000)).unwrap();
    r.register(reg("/long", "/r1", 1, NOW + 100_000)).unwrap();
    assert_eq!(r.sweep_expired(NOW).unwrap(), 0);
    assert_eq!(r.sweep_expired(NOW + 1_000).unwrap(), 1);
    assert!(r.lookup(&"/short".parse().unwrap()).is_empty());
    assert_eq!(r.len(), 1);
    r.register(reg("/stale", "/r1", 1, NOW + 5_000)).unwrap();
    let mut store = r.close().unwrap();
    let mut swept = store.sweep_expired(NOW + 5_000).unwrap();
    swept.sort_by_key(|k| k.prefix.to_string());
    assert_eq!(swept, vec![reg("/stale", "/r1", 1, 0).key()]);
    store
        .apply(&[nameway_ctl::RegistryOp::Put(reg(
            "/stale",
            "/r1",
            1,
            NOW + 5_000,
        ))])
        .unwrap();
    drop(store);

    let (r, report) = Registry::open(
        PostgresStore::connect(&db).unwrap(),
        NOW + 10_000,
        GroupCommitConfig::default(),
    )
    .unwrap();
    assert_eq!(report.expired, 1);
    assert!(r.lookup(&"/stale".parse().unwrap()).is_empty());
    assert_eq!(r.sweep_expired(NOW + 10_000).unwrap(), 1);
}

#[test]
fn concurrent_registrations_share_commits() {
    let Some(db) = fresh_db("group_commit") else {
        return;
    };
    let r = Arc::new(open(&db, NOW));
    let threads: Vec<_> = (0..32)
        .map(|t| {
            let r = Arc::clone(&r);
            std::thread::spawn(move || {
                for i in 0..20 {
                    r.register(reg(&format!("/t{t}/{i}"), "/r1", 1, NOW + 60_000))
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let stats = r.commit_stats();
    assert_eq!(stats.ops, 640);
    assert!(stats.commits < 640 / 2, "no batching: {stats:?}");
    let mut store = Arc::into_inner(r).unwrap().close().unwrap();
    assert_eq!(store.load_registrations().unwrap().len(), 640);
}

#[test]
fn two_controllers_share_one_database() {
    let Some(db) = fresh_db("shared") else {
        return;
    };
    // Two controllers starting together: the migration runs once.
    let (c1, c2) = std::thread::scope(|s| {
        let a = s.spawn(|| open(&db, NOW));
        let b = s.spawn(|| open(&db, NOW));
        (a.join().unwrap(), b.join().unwrap())
    });
    c1.register(reg("/east/app", "/example/r1", 1, NOW + 60_000))
        .unwrap();
    c2.register(reg("/west/app", "/example/r9", 2, NOW + 60_000))
        .unwrap();
    // Each controller's name tree holds what it wrote; the database holds both.
    assert!(c1.lookup(&"/west/app".parse().unwrap()).is_empty());
    let mut s1 = c1.close().unwrap();
    let mut s2 = c2.close().unwrap();
    let mut seen1: Vec<String> = s1
        .load_registrations()
        .unwrap()
        .iter()
        .map(|r| r.prefix.to_string())
        .collect();
    seen1.sort();
    assert_eq!(seen1, vec!["/east/app", "/west/app"]);
    assert_eq!(s2.load_registrations().unwrap().len(), 2);
    // A registry opened on the shared database answers for names the other registered.
    let (r, report) = Registry::open(s1, NOW, GroupCommitConfig::default()).unwrap();
    assert_eq!(report.loaded, 2);
    assert_eq!(
        r.lookup(&"/west/app/x".parse().unwrap()),
        vec![reg("/west/app", "/example/r9", 2, NOW + 60_000)]
    );
    // The schema was made once.
    let mut s3 = PostgresStore::connect(&db).unwrap();
    assert_eq!(s3.schema_version().unwrap(), nameway_ctl::SCHEMA_VERSION);
    assert_eq!(
        psql(&db, &["-c", "SELECT count(*) FROM nameway_schema"]).trim(),
        nameway_ctl::SCHEMA_VERSION.to_string()
    );
    // A removal by one is seen by the other.
    s2.apply(&[nameway_ctl::RegistryOp::Remove(
        reg("/east/app", "/example/r1", 1, 0).key(),
    )])
    .unwrap();
    assert_eq!(s3.load_registrations().unwrap().len(), 1);
}

#[test]
fn nodes_links_and_audit_round_trip() {
    let Some(db) = fresh_db("nodes_links") else {
        return;
    };
    let mut s = PostgresStore::connect(&db).unwrap();
    let node = NodeRecord {
        name: "/example/r1".into(),
        pubkey: vec![1, 2, 3],
        kem_pubkey: Some(vec![9; 32]),
        cert: None,
        enrolled_ms: NOW,
        last_seen_ms: NOW + 5,
    };
    s.put_node(&node).unwrap();
    let renewed = NodeRecord {
        cert: Some(vec![6, 0]),
        last_seen_ms: NOW + 9,
        ..node.clone()
    };
    s.put_node(&renewed).unwrap(); // replaces
    let link = |a: &str, b: &str, up| LinkRecord {
        a: a.into(),
        b: b.into(),
        face_a: 257,
        face_b: 258,
        cost: u32::MAX,
        rtt_us: 1500,
        up,
        updated_ms: NOW,
    };
    s.put_link(&link("/example/r1", "/example/r2", true))
        .unwrap();
    s.put_link(&link("/example/r2", "/example/r1", false))
        .unwrap();
    s.put_link(&link("/example/r1", "/example/r2", false))
        .unwrap(); // replaces
    s.audit(NOW, "operator", "test", "detail").unwrap();
    drop(s);
    let mut s = PostgresStore::connect(&db).unwrap();
    assert_eq!(s.nodes().unwrap(), vec![renewed]);
    assert_eq!(
        s.links().unwrap(),
        vec![
            link("/example/r1", "/example/r2", false),
            link("/example/r2", "/example/r1", false)
        ]
    );
    assert_eq!(
        psql(&db, &["-c", "SELECT actor, action, detail FROM audit"]).trim(),
        "operator|test|detail"
    );
}

#[test]
fn a_backup_restores_with_psql() {
    let Some(db) = fresh_db("backup") else {
        return;
    };
    let Some(copy_db) = fresh_db("backup_copy") else {
        return;
    };
    let r = open(&db, NOW);
    r.register_all(
        (0..50)
            .map(|i| reg(&format!("/b/{i}"), "/r1", 1, NOW + 60_000))
            .collect(),
    )
    .unwrap();
    let mut no_keys = reg("/b/plain", "/r1", 2, NOW + 60_000);
    no_keys.owner_key = None;
    no_keys.announcement = None;
    r.register(no_keys.clone()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ctl.sql");
    r.backup(file.clone()).unwrap();
    // The copy refuses to be overwritten.
    assert!(matches!(
        r.backup(file.clone()),
        Err(StoreError::Backup { .. })
    ));
    r.register(reg("/after", "/r1", 1, NOW + 60_000)).unwrap();
    let mut original = r.close().unwrap();
    original.audit(NOW, "operator", "backup", "x").unwrap();

    psql(&copy_db, &["-f", file.to_str().unwrap()]);
    let b = open(&copy_db, NOW);
    assert_eq!(b.len(), 51);
    assert!(b.lookup(&"/after".parse().unwrap()).is_empty());
    assert_eq!(b.lookup(&"/b/plain".parse().unwrap()), vec![no_keys]);
    assert_eq!(
        b.lookup(&"/b/7".parse().unwrap()),
        vec![reg("/b/7", "/r1", 1, NOW + 60_000)]
    );
    // The restored database takes new registrations (its ids continue).
    b.register(reg("/new", "/r1", 1, NOW + 60_000)).unwrap();
}

#[test]
fn a_database_of_another_application_is_refused() {
    let Some(db) = fresh_db("foreign") else {
        return;
    };
    psql(
        &db,
        &[
            "-c",
            "CREATE TABLE invoices (id int); CREATE TABLE customers (id int)",
        ],
    );
    let e = PostgresStore::connect(&db).unwrap_err();
    assert!(
        matches!(&e, StoreError::ForeignDatabase { tables, .. } if tables == "customers, invoices"),
        "{e:?}"
    );
    let line = e.to_string();
    assert!(!line.contains('\n'), "{line}");
    assert!(line.contains("not Nameway's"), "{line}");
    // Nothing of ours was created in it.
    assert_eq!(
        psql(
            &db,
            &[
                "-c",
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
            ]
        )
        .trim(),
        "2"
    );
}

#[test]
fn a_newer_schema_is_refused() {
    let Some(db) = fresh_db("too_new") else {
        return;
    };
    drop(PostgresStore::connect(&db).unwrap());
    psql(&db, &["-c", "INSERT INTO nameway_schema VALUES (99, 0)"]);
    let e = PostgresStore::connect(&db).unwrap_err();
    assert!(matches!(e, StoreError::TooNew { found: 99, .. }), "{e:?}");
}

#[test]
fn the_server_going_away_is_a_typed_error() {
    let Some(db) = fresh_db("server_gone") else {
        return;
    };
    let mut s = PostgresStore::connect(&db).unwrap();
    s.apply(&[nameway_ctl::RegistryOp::Put(reg("/x", "/r1", 1, NOW + 1))])
        .unwrap();
    let r = Registry::open(s, NOW, GroupCommitConfig::default())
        .unwrap()
        .0;
    // The server ends every connection to this database (as a restart or failover does).
    psql(
        &db,
        &[
            "-c",
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
        ],
    );
    let e = r.register(reg("/y", "/r1", 1, NOW + 60_000)).unwrap_err();
    assert!(matches!(e, StoreError::CommitFailed(_)), "{e:?}");
    assert!(r.lookup(&"/y".parse().unwrap()).is_empty());
    let mut s = r.close().unwrap();
    let e = s.load_registrations().unwrap_err();
    match &e {
        // Closed, or the I/O error of writing to it (which one comes first is a race).
        StoreError::Postgres { error, .. } => assert!(
            error.is_closed()
                || std::error::Error::source(error).is_some_and(|c| c.is::<std::io::Error>()),
            "{error:?}"
        ),
        other => panic!("{other:?}"),
    }
    assert!(!e.to_string().contains('\n'), "{e}");
    // Nothing listening: a typed error, promptly.
    let t0 = std::time::Instant::now();
    let e = PostgresStore::connect("host=127.0.0.1 port=1 user=postgres dbname=x").unwrap_err();
    assert!(matches!(e, StoreError::Postgres { .. }), "{e:?}");
    assert!(t0.elapsed() < std::time::Duration::from_secs(10));
    // A conninfo that does not parse: typed too.
    let e = PostgresStore::connect("host=").unwrap_err();
    assert!(matches!(e, StoreError::Postgres { .. }), "{e:?}");
}

#[test]
fn namewayctl_takes_a_postgres_conninfo() {
    let Some(db) = fresh_db("cli") else {
        return;
    };
    let ctl = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_namewayctl"))
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, _, err) = ctl(&[
        "registry",
        "add",
        "/example/video",
        "--node",
        "/example/r1",
        "--face",
        "7",
        "--db",
        &db,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) = ctl(&["registry", "list", "--db", &db]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("/example/video  node /example/r1  face 7"),
        "{out}"
    );
    // A second controller's store sees it.
    let mut s = PostgresStore::connect(&db).unwrap();
    assert_eq!(s.load_registrations().unwrap().len(), 1);
    let (code, _, err) = ctl(&[
        "registry",
        "remove",
        "/example/video",
        "--node",
        "/example/r1",
        "--face",
        "7",
        "--db",
        &db,
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(s.load_registrations().unwrap().is_empty());
    assert_eq!(
        psql(&db, &["-c", "SELECT action FROM audit ORDER BY ts"]).trim(),
        "registry add\nregistry remove"
    );
    // The CA's commands need the anchor's file (--ca): refused in one line without it.
    let (code, _, err) = ctl(&["keys", "--db", &db]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("--ca"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // With it, tokens and the deny list go to the shared database.
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.db");
    let ca = ca.to_str().unwrap();
    let (code, _, err) = ctl(&["init", "--domain", "/example", "--db", ca]);
    assert_eq!(code, Some(0), "{err}");
    let (code, token, err) = ctl(&["token", "--router", "/example/r1", "--db", &db, "--ca", ca]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!token.trim().is_empty());
    assert_eq!(
        psql(&db, &["-c", "SELECT router FROM tokens"]).trim(),
        "/example/r1"
    );
    let (code, _, err) = ctl(&["deny", "/example/r9", "--db", &db, "--ca", ca]);
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) = ctl(&["keys", "--db", &db, "--ca", ca]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("denied  /example/r9"), "{out}");
    // The database is the anchor's domain now: another domain's anchor is refused.
    let other = dir.path().join("other.db");
    let other = other.to_str().unwrap();
    let (code, _, err) = ctl(&["init", "--domain", "/elsewhere", "--db", other]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = ctl(&["keys", "--db", &db, "--ca", other]);
    assert_ne!(code, Some(0), "{err}");
    assert!(err.contains("/example"), "{err}");
    // Another application's database: exit 3 and one line.
    let Some(foreign) = fresh_db("cli_foreign") else {
        return;
    };
    psql(&foreign, &["-c", "CREATE TABLE invoices (id int)"]);
    let (code, _, err) = ctl(&["registry", "list", "--db", &foreign]);
    assert_eq!(code, Some(3), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

fn link(a: &str, b: &str, cost: u32, updated_ms: u64) -> LinkRecord {
    LinkRecord {
        a: a.into(),
        b: b.into(),
        face_a: 7,
        face_b: 0,
        cost,
        rtt_us: 0,
        up: true,
        updated_ms,
    }
}

#[test]
fn the_change_feed_gives_what_changed_since_a_cursor_and_renewals_cost_nothing() {
    use nameway_ctl::RegistryOp::{Put, Remove};
    let Some(db) = fresh_db("feed") else {
        return;
    };
    let mut writer = PostgresStore::connect(&db).unwrap();
    let mut reader = PostgresStore::connect(&db).unwrap();
    let a = reg("/a", "/example/r1", 1, NOW + 60_000);
    let b = reg("/b", "/example/r1", 1, NOW + 60_000);
    writer.apply(&[Put(a.clone()), Put(b.clone())]).unwrap();
    let all = reader.changes_since(0).unwrap();
    assert_eq!(all.registrations, vec![Put(a.clone()), Put(b.clone())]);
    assert!(!all.behind && !all.links_changed);
    let cursor = all.cursor;
    assert!(cursor > 0);
    // Nothing new: nothing read.
    let none = reader.changes_since(cursor).unwrap();
    assert!(none.registrations.is_empty());
    assert_eq!(none.cursor, cursor);
    // A renewal (only `expires` moves) is not a change; a new cost is.
    let renewed = reg("/a", "/example/r1", 1, NOW + 120_000);
    writer.apply(&[Put(renewed)]).unwrap();
    assert!(reader
        .changes_since(cursor)
        .unwrap()
        .registrations
        .is_empty());
    let mut costlier = b.clone();
    costlier.cost = 99;
    writer.apply(&[Put(costlier.clone())]).unwrap();
    let c = reader.changes_since(cursor).unwrap();
    assert_eq!(c.registrations, vec![Put(costlier)]);
    // A removal, and a sweep, leave tombstones read in order.
    writer.apply(&[Remove(a.key())]).unwrap();
    writer
        .apply(&[Put(reg("/old", "/example/r2", 1, NOW - 1))])
        .unwrap();
    assert_eq!(writer.sweep_expired(NOW).unwrap().len(), 1);
    let d = reader.changes_since(c.cursor).unwrap();
    let shown: Vec<String> = d
        .registrations
        .iter()
        .map(|op| match op {
            Put(r) => format!("put {}", r.prefix),
            Remove(k) => format!("remove {}", k.prefix),
        })
        .collect();
    // /old was put and swept before the read: only its tombstone is left.
    assert_eq!(shown, vec!["remove /a", "remove /old"]);
    // Links: written, replaced and expired are changes; renewed is not.
    writer
        .replace_links(
            "/example/r1",
            &[link("/example/r1", "/example/r2", 10, NOW)],
        )
        .unwrap();
    let e = reader.changes_since(d.cursor).unwrap();
    assert!(e.links_changed);
    writer
        .renew_links(&["/example/r1".to_owned()], NOW + 1_000)
        .unwrap();
    let f = reader.changes_since(e.cursor).unwrap();
    assert!(!f.links_changed);
    assert_eq!(reader.live_links(NOW + 500).unwrap().len(), 1);
    assert_eq!(writer.expire_links(NOW + 1_001).unwrap(), 1);
    assert!(reader.changes_since(f.cursor).unwrap().links_changed);
    assert!(reader.live_links(0).unwrap().is_empty());
}

#[test]
fn a_change_wakes_a_listener_at_once_and_a_renewal_wakes_nobody() {
    use nameway_ctl::RegistryOp::{Put, Remove};
    use std::time::Duration;
    let Some(db) = fresh_db("feed_notify") else {
        return;
    };
    let mut writer = PostgresStore::connect(&db).unwrap();
    let mut listener = writer.listener_source().listener().unwrap();
    let quiet = Duration::from_millis(300);
    let soon = Duration::from_secs(5);
    assert!(!listener.wait(quiet).unwrap(), "nothing written yet");
    // A new registration, then several in one transaction: one wake-up each.
    let a = reg("/a", "/example/r1", 1, NOW + 60_000);
    writer.apply(&[Put(a.clone())]).unwrap();
    assert!(listener.wait(soon).unwrap(), "a new registration notifies");
    writer
        .apply(&[
            Put(reg("/b", "/example/r1", 1, NOW + 60_000)),
            Put(reg("/c", "/example/r1", 1, NOW + 60_000)),
        ])
        .unwrap();
    assert!(listener.wait(soon).unwrap());
    assert!(
        !listener.wait(quiet).unwrap(),
        "one transaction, one wake-up"
    );
    // A renewal moves only `expires`: no change numbered, nobody woken.
    writer
        .apply(&[Put(reg("/a", "/example/r1", 1, NOW + 120_000))])
        .unwrap();
    assert!(!listener.wait(quiet).unwrap(), "a renewal wakes nobody");
    // A removal and link writes are changes; a link renewal is not.
    writer.apply(&[Remove(a.key())]).unwrap();
    assert!(listener.wait(soon).unwrap(), "a removal notifies");
    writer
        .replace_links(
            "/example/r1",
            &[link("/example/r1", "/example/r2", 10, NOW)],
        )
        .unwrap();
    assert!(listener.wait(soon).unwrap(), "a new link notifies");
    writer
        .renew_links(&["/example/r1".to_owned()], NOW + 1_000)
        .unwrap();
    assert!(
        !listener.wait(quiet).unwrap(),
        "a link renewal wakes nobody"
    );
    assert_eq!(writer.expire_links(NOW + 1_001).unwrap(), 1);
    assert!(listener.wait(soon).unwrap(), "an expired link notifies");
}

#[test]
fn a_reader_behind_the_forgotten_tombstones_reloads_everything() {
    use nameway_ctl::RegistryOp::{Put, Remove};
    let Some(db) = fresh_db("feed_behind") else {
        return;
    };
    let mut writer = PostgresStore::connect(&db).unwrap();
    let mut reader = PostgresStore::connect(&db).unwrap();
    let a = reg("/a", "/example/r1", 1, NOW + 60_000);
    let b = reg("/b", "/example/r1", 1, NOW + 60_000);
    writer.apply(&[Put(a.clone()), Put(b.clone())]).unwrap();
    let cursor = reader.changes_since(0).unwrap().cursor;
    writer.apply(&[Remove(a.key())]).unwrap();
    // The tombstone of /a is forgotten (made an hour old, then a sweep): the reader cannot
    // know /a went from the tombstones, so it is told to reload, and gets only /b.
    psql(
        &db,
        &["-c", "UPDATE registrations_gone SET at = at - 3600000"],
    );
    writer.sweep_expired(NOW).unwrap();
    writer.apply(&[Put(b.clone())]).unwrap();
    let c = reader.changes_since(cursor).unwrap();
    assert!(c.behind);
    assert_eq!(c.registrations, vec![Put(b)]);
}
