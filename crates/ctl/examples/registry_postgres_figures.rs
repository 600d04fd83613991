#![allow(clippy::unwrap_used)] // fixed, valid inputs: a failure is a broken measurement
//! C3's registry figures on PostgreSQL against SQLite, measured in the same run: bulk load,
//! restart (load every registration and answer), look-ups, and durable single registrations
//! from 16 callers under group commit.
//!
//! Needs the server of `scripts/postgres-test-server.sh` (its conninfo in
//! `NAMEWAY_TEST_POSTGRES`); `scripts/bench-registry-postgres.sh [NAMES]` runs it under one.
//!
//! `cargo run --release -p nameway-ctl --example registry_postgres_figures [-- NAMES [RUNS [PER_COMMIT]]]`
//! (defaults 10^5 names, 3 runs, 10^5 names per bulk-load commit as C3's figure).

use std::sync::Arc;
use std::time::{Duration, Instant};

use nameway_ctl::{
    Durability, GroupCommitConfig, PostgresStore, Registration, Registry, RegistryStore,
    SqliteStore,
};
use nameway_wire::Name;

fn reg(i: u64, expires_ms: u64) -> Registration {
    Registration {
        prefix: format!("/example/site{}/app{}/obj{i}", i % 97, i % 1013)
            .parse()
            .unwrap(),
        node: format!("/example/r{}", i % 1000),
        face: 256 + i % 7,
        origin: 255,
        cost: 10,
        flags: 1,
        expires_ms,
        owner_key: Some(vec![0xAB; 44]),
        announcement: Some(vec![0xCD; 150]),
    }
}

/// One measured run's figures.
#[derive(Default, Clone, Copy)]
struct Figures {
    load_per_s: f64,
    restart_s: f64,
    lookups_per_s: f64,
    single_per_s: f64,
    single_p50_ms: f64,
    single_p99_ms: f64,
}

/// Reads one figure.
type Getter = fn(&Figures) -> f64;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs the workload on the stores `open` makes (each call: the same, already-used database).
fn measure<S, F>(n: u64, chunk: usize, open: F) -> Figures
where
    S: RegistryStore + Send + 'static,
    F: Fn() -> S,
{
    let now = nameway_ctl::now_ms();
    let regs: Vec<Registration> = (0..n).map(|i| reg(i, now + 3_600_000)).collect();
    let mut f = Figures::default();

    // Bulk load, `chunk` names per commit.
    let (r, _) = Registry::open(open(), now, GroupCommitConfig::default()).unwrap();
    let t = Instant::now();
    for c in regs.chunks(chunk) {
        r.register_all(c.to_vec()).unwrap();
    }
    f.load_per_s = n as f64 / t.elapsed().as_secs_f64();
    drop(r.close().unwrap());

    // Restart: open, load the name tree, answer one look-up.
    let t = Instant::now();
    let (r, report) = Registry::open(open(), now, GroupCommitConfig::default()).unwrap();
    let probe: Name = format!("{}/seg=0", regs[n as usize / 2].prefix)
        .parse()
        .unwrap();
    assert_eq!(r.lookup_count(&probe), 1);
    assert_eq!(report.loaded as u64, n);
    f.restart_s = t.elapsed().as_secs_f64();

    // Look-ups: answered from the in-memory name tree whichever the store.
    let names: Vec<Name> = (0..100_000u64)
        .map(|i| {
            format!("{}/seg={i}", regs[((i * 7919) % n) as usize].prefix)
                .parse()
                .unwrap()
        })
        .collect();
    let t = Instant::now();
    let hits: usize = names.iter().map(|q| r.lookup_count(q)).sum();
    assert_eq!(hits, names.len());
    f.lookups_per_s = hits as f64 / t.elapsed().as_secs_f64();
    drop(r.close().unwrap());

    // 16 callers, one durable registration at a time each, 2 ms group-commit window.
    let cfg = GroupCommitConfig {
        window: Duration::from_millis(2),
        ..Default::default()
    };
    let r = Arc::new(Registry::open(open(), now, cfg).unwrap().0);
    let t = Instant::now();
    let handles: Vec<_> = (0..16u64)
        .map(|c| {
            let r = Arc::clone(&r);
            std::thread::spawn(move || {
                (0..200u64)
                    .map(|i| {
                        let g = reg(n + 1_000_000 + c * 1000 + i, now + 3_600_000);
                        let s = Instant::now();
                        r.register(g).unwrap();
                        s.elapsed()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut lat: Vec<Duration> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    f.single_per_s = lat.len() as f64 / t.elapsed().as_secs_f64();
    lat.sort();
    f.single_p50_ms = lat[lat.len() / 2].as_secs_f64() * 1e3;
    f.single_p99_ms = lat[lat.len() * 99 / 100].as_secs_f64() * 1e3;
    f
}

fn fresh_postgres(base: &str) -> String {
    let mut admin = postgres::Client::connect(base, postgres::NoTls).unwrap();
    // Two statements: DROP DATABASE refuses to run inside a (multi-statement) transaction.
    admin
        .batch_execute("DROP DATABASE IF EXISTS nw_bench WITH (FORCE)")
        .unwrap();
    admin.batch_execute("CREATE DATABASE nw_bench").unwrap();
    format!("{base} dbname=nw_bench")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let runs: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(3);
    let chunk: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let Ok(base) = std::env::var("NAMEWAY_TEST_POSTGRES") else {
        eprintln!("NAMEWAY_TEST_POSTGRES is unset: run scripts/bench-registry-postgres.sh");
        std::process::exit(2);
    };
    let mut sqlite = Vec::new();
    let mut pg = Vec::new();
    for run in 0..runs {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ctl.db");
        sqlite.push(measure(n, chunk, || {
            SqliteStore::open(&path, Durability::Normal).unwrap()
        }));
        let conninfo = fresh_postgres(&base);
        pg.push(measure(n, chunk, || {
            PostgresStore::connect(&conninfo).unwrap()
        }));
        eprintln!("run {}/{runs} done", run + 1);
    }
    let m = |v: &[Figures], g: fn(&Figures) -> f64| median(v.iter().map(g).collect());
    println!(
        "{n} names, {chunk} per bulk commit, median of {runs} runs (SQLite and PostgreSQL \
         alternate in each run)"
    );
    println!(
        "{:<34}{:>14}{:>14}{:>10}",
        "", "SQLite", "PostgreSQL", "PG/SQLite"
    );
    let rows: [(&str, Getter); 6] = [
        ("bulk load, names/s", |f| f.load_per_s),
        ("restart to serving, s", |f| f.restart_s),
        ("look-ups/s (one thread)", |f| f.lookups_per_s),
        ("16 callers single, reg/s", |f| f.single_per_s),
        ("16 callers single, p50 ms", |f| f.single_p50_ms),
        ("16 callers single, p99 ms", |f| f.single_p99_ms),
    ];
    for (label, g) in rows {
        let (s, p) = (m(&sqlite, g), m(&pg, g));
        println!("{label:<34}{s:>14.2}{p:>14.2}{:>10.2}", p / s);
    }
}
