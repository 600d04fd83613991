//! The registry over a real SQLite file: restart, soft state, backup, damaged and foreign
//! files, group commit, and the stock `sqlite3` tool.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a failure is a failed test

use std::path::Path;
use std::sync::Arc;

use nameway_ctl::{
    Durability, GroupCommitConfig, Registration, Registry, RegistryStore, SqliteStore, StoreError,
};

const NOW: u64 = 1_800_000_000_000;

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

fn open(path: &Path, now: u64) -> Registry<SqliteStore> {
    let store = SqliteStore::open(path, Durability::Normal).unwrap();
    Registry::open(store, now, GroupCommitConfig::default())
        .unwrap()
        .0
}

fn open_err(path: &Path) -> StoreError {
    SqliteStore::open(path, Durability::Normal)
        .and_then(|s| Registry::open(s, NOW, GroupCommitConfig::default()).map(drop))
        .unwrap_err()
}

#[test]
fn registrations_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ctl.db");
    let r = open(&path, NOW);
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
    r.close().unwrap();

    let (r, report) = Registry::open(
        SqliteStore::open(&path, Durability::Normal).unwrap(),
        NOW,
        GroupCommitConfig::default(),
    )
    .unwrap();
    assert_eq!(report.loaded, 100);
    assert_eq!(r.len(), 100);
    let hit = r.lookup(&"/example/video/seg=3".parse().unwrap());
    assert_eq!(
        hit,
        vec![reg("/example/video", "/example/r1", 3, NOW + 60_000)]
    );
    assert!(r.lookup(&"/example/n/7/x".parse().unwrap()).is_empty());
    assert_eq!(r.lookup_count(&"/example/n/8/x".parse().unwrap()), 1);
}

#[test]
fn expired_registrations_are_swept_and_not_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ctl.db");
    let r = open(&path, NOW);
    r.register(reg("/short", "/r1", 1, NOW + 1_000)).unwrap();
    r.register(reg("/long", "/r1", 1, NOW + 100_000)).unwrap();
    assert_eq!(r.sweep_expired(NOW).unwrap(), 0);
    assert_eq!(r.sweep_expired(NOW + 1_000).unwrap(), 1);
    assert!(r.lookup(&"/short".parse().unwrap()).is_empty());
    assert_eq!(r.len(), 1);
    r.close().unwrap();

    // Left in the file past its expiry, a registration is not served after a restart.
    let r = open(&path, NOW);
    r.register(reg("/stale", "/r1", 1, NOW + 5_000)).unwrap();
    r.close().unwrap();
    let (r, report) = Registry::open(
        SqliteStore::open(&path, Durability::Normal).unwrap(),
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
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ctl.db");
    let r = Arc::new(open(&path, NOW));
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
    let r = Arc::into_inner(r).unwrap();
    let mut store = r.close().unwrap();
    assert_eq!(store.load_registrations().unwrap().len(), 640);
}

#[test]
fn the_wal_is_checkpointed_while_the_registry_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ctl.db");
    let r = open(&path, NOW);
    let before = std::fs::metadata(&path).unwrap().len();
    r.register_all(
        (0..5_000)
            .map(|i| reg(&format!("/w/{i}"), "/r1", 1, NOW + 60_000))
            .collect(),
    )
    .unwrap();
    // Commits go to the WAL; the checkpoint thread copies them into the file within ~100 ms.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let now = std::fs::metadata(&path).unwrap().len();
        if now > before + 400_000 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not checkpointed: {before} -> {now} bytes"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(r);
}

#[test]
fn online_backup_is_a_readable_copy() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ctl.db");
    let r = open(&path, NOW);
    r.register_all(
        (0..50)
            .map(|i| reg(&format!("/b/{i}"), "/r1", 1, NOW + 60_000))
            .collect(),
    )
    .unwrap();
    let copy = dir.path().join("copy.db");
    r.backup(copy.clone()).unwrap();
    // The copy refuses to be overwritten.
    assert!(r.backup(copy.clone()).is_err());
    r.register(reg("/after", "/r1", 1, NOW + 60_000)).unwrap();
    let b = open(&copy, NOW);
    assert_eq!(b.len(), 50);
    assert!(b.lookup(&"/after".parse().unwrap()).is_empty());
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ctl.db");
    std::fs::write(&path, b"this is a text file, not a database\n".repeat(200)).unwrap();
    let e = open_err(&path);
    assert!(matches!(e, StoreError::NotADatabase { .. }), "{e:?}");
    let line = e.to_string();
    assert!(!line.contains('\n') && line.contains("ctl.db"), "{line}");
}

#[test]
fn damaged_pages_are_refused_as_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ctl.db");
    let r = open(&path, NOW);
    r.register_all(
        (0..5_000)
            .map(|i| reg(&format!("/c/{i}"), "/r1", 1, NOW + 60_000))
            .collect(),
    )
    .unwrap();
    drop(r.close().unwrap()); // last connection: the WAL is checkpointed into the file
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 40 * 4096, "file too small: {}", bytes.len());
    // Keep the header page and the schema; destroy everything after page 4.
    for b in &mut bytes[4 * 4096..] {
        *b = 0x5A;
    }
    std::fs::write(&path, &bytes).unwrap();
    let e = open_err(&path);
    assert!(matches!(e, StoreError::Corrupt { .. }), "{e:?}");
    assert!(!e.to_string().contains('\n'));
}

#[test]
fn a_database_of_another_application_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute_batch("PRAGMA application_id = 1234; CREATE TABLE photos (id INTEGER PRIMARY KEY);")
        .unwrap();
    drop(c);
    let e = open_err(&path);
    assert!(matches!(e, StoreError::Foreign { .. }), "{e:?}");
    // Untouched: its table is still there and ours were not added.
    let c = rusqlite::Connection::open(&path).unwrap();
    let tables: String = c
        .query_row(
            "SELECT group_concat(name) FROM sqlite_schema WHERE type='table'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, "photos");
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ctl.db");
    open(&path, NOW).close().unwrap();
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("PRAGMA user_version = 99")
        .unwrap();
    let e = open_err(&path);
    assert!(matches!(e, StoreError::TooNew { found: 99, .. }), "{e:?}");
}

#[test]
fn the_stock_sqlite3_tool_reads_the_registry() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ctl.db");
    let r = open(&path, NOW);
    r.register(reg("/example/video", "/example/r1", 3, NOW + 60_000))
        .unwrap();
    // While the controller still has the file open (WAL).
    let Some(out) = sqlite3(&path, "SELECT uri, node, face, cost FROM registrations") else {
        return;
    };
    assert_eq!(out.trim(), "/example/video|/example/r1|3|10");
    let out = sqlite3(&path, "PRAGMA journal_mode").unwrap();
    assert_eq!(out.trim(), "wal");
    let out = sqlite3(&path, "PRAGMA integrity_check").unwrap();
    assert_eq!(out.trim(), "ok");
}

/// Runs the stock `sqlite3` tool; `None` (and a visible note) when it is not installed.
fn sqlite3(db: &Path, sql: &str) -> Option<String> {
    match std::process::Command::new("sqlite3")
        .arg(db)
        .arg(sql)
        .output()
    {
        Ok(o) => {
            assert!(
                o.status.success(),
                "sqlite3: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            Some(String::from_utf8(o.stdout).unwrap())
        }
        Err(_) => {
            eprintln!("SKIPPED: the sqlite3 tool is not installed (apt-get install sqlite3)");
            None
        }
    }
}

/// Not a test on its own: the child process of `acknowledged_registrations_survive_a_kill`
/// (which sets `NAMEWAY_CTL_CHILD_DB`). It registers names one at a time and prints each
/// one's number once `register` has returned; without the variable it returns at once.
#[test]
fn child_registers_until_killed() {
    let Ok(path) = std::env::var("NAMEWAY_CTL_CHILD_DB") else {
        return; // only meaningful as the child
    };
    use std::io::Write as _;
    let r = open(Path::new(&path), NOW);
    let mut out = std::io::stdout().lock();
    for i in 0.. {
        r.register(reg(&format!("/k/{i}"), "/r1", 1, NOW + 60_000))
            .unwrap();
        writeln!(out, "ack {i}").unwrap();
        out.flush().unwrap();
    }
}

#[test]
fn acknowledged_registrations_survive_a_kill() {
    use std::io::BufRead as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ctl.db");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_registers_until_killed",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("NAMEWAY_CTL_CHILD_DB", &path)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut last = None;
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if let Some(i) = line.strip_prefix("ack ") {
            let i: u64 = i.parse().unwrap();
            last = Some(i);
            if i >= 200 {
                break;
            }
        }
    }
    child.kill().unwrap(); // SIGKILL: no destructor, no final checkpoint
    child.wait().unwrap();
    let last = last.expect("the child acknowledged nothing");
    let r = open(&path, NOW);
    for i in 0..=last {
        assert_eq!(
            r.lookup_count(&format!("/k/{i}").parse().unwrap()),
            1,
            "/k/{i} was acknowledged and is gone"
        );
    }
}

#[test]
fn nodes_links_and_audit_round_trip() {
    use nameway_ctl::{LinkRecord, NodeRecord};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ctl.db");
    let mut s = SqliteStore::open(&path, Durability::Full).unwrap();
    let node = NodeRecord {
        name: "/example/r1".into(),
        pubkey: vec![1, 2, 3],
        kem_pubkey: Some(vec![9; 32]),
        cert: None,
        enrolled_ms: NOW,
        last_seen_ms: NOW + 5,
    };
    s.put_node(&node).unwrap();
    let link = |a: &str, b: &str, up| LinkRecord {
        a: a.into(),
        b: b.into(),
        face_a: 257,
        face_b: 258,
        cost: 10,
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
    let mut s = SqliteStore::open(&path, Durability::Normal).unwrap();
    assert_eq!(s.nodes().unwrap(), vec![node]);
    assert_eq!(
        s.links().unwrap(),
        vec![
            link("/example/r1", "/example/r2", false),
            link("/example/r2", "/example/r1", false)
        ]
    );
    if let Some(out) = sqlite3(&path, "SELECT actor, action, detail FROM audit") {
        assert_eq!(out.trim(), "operator|test|detail");
    }
}
