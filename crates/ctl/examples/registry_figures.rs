#![allow(clippy::unwrap_used)] // fixed, valid inputs: a failure is a broken measurement
//! C3 figures that criterion does not give: restart with 10^6 names, and the latency
//! percentiles of durable single registrations under group commit (against one commit per
//! registration, measured in the same run).
//!
//! `cargo run --release -p nameway-ctl --example registry_figures [-- NAMES]` (default 10^6).

use std::sync::Arc;
use std::time::{Duration, Instant};

use nameway_ctl::{Durability, GroupCommitConfig, Registration, Registry, SqliteStore};
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

/// This process's CPU time (user + system), from /proc/self/stat (clock ticks of 10 ms).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<u64> = after
        .split(' ')
        .skip(11)
        .take(2)
        .map(|x| x.parse().unwrap())
        .collect();
    Duration::from_millis((f[0] + f[1]) * 10)
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn latencies(
    path: &std::path::Path,
    config: GroupCommitConfig,
    threads: u64,
    each: u64,
    base: u64,
) -> (Vec<Duration>, f64, u64) {
    let store = SqliteStore::open(path, Durability::Normal).unwrap();
    let (r, _) = Registry::open(store, nameway_ctl::now_ms(), config).unwrap();
    let r = Arc::new(r);
    let expires = nameway_ctl::now_ms() + 3_600_000;
    let t0 = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let r = Arc::clone(&r);
            std::thread::spawn(move || {
                let mut v = Vec::new();
                for i in 0..each {
                    let g = reg(base + t * each + i, expires);
                    let s = Instant::now();
                    r.register(g).unwrap();
                    v.push(s.elapsed());
                }
                v
            })
        })
        .collect();
    let mut all: Vec<Duration> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let secs = t0.elapsed().as_secs_f64();
    all.sort();
    let commits = r.commit_stats().commits;
    (all, secs, commits)
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let chunk: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ctl.db");
    let now = nameway_ctl::now_ms();

    // Bulk load.
    let regs: Vec<Registration> = (0..n).map(|i| reg(i, now + 3_600_000)).collect();
    let store = SqliteStore::open(&path, Durability::Normal).unwrap();
    let (r, _) = Registry::open(store, now, GroupCommitConfig::default()).unwrap();
    let t = Instant::now();
    let cpu = cpu_time();
    for c in regs.chunks(chunk) {
        r.register_all(c.to_vec()).unwrap();
    }
    let load = t.elapsed();
    let load_cpu = cpu_time() - cpu;
    println!(
        "bulk load      {n} names in {:.2} s: {:.0} names/s ({chunk} per commit)",
        load.as_secs_f64(),
        n as f64 / load.as_secs_f64()
    );
    println!(
        "               CPU {:.2} s (both threads): {:.0} names per CPU-second",
        load_cpu.as_secs_f64(),
        n as f64 / load_cpu.as_secs_f64()
    );
    drop(r.close().unwrap());
    let size = std::fs::metadata(&path).unwrap().len();
    println!("file           {:.1} MiB", size as f64 / 1048576.0);

    // Restart: open, load the name tree, answer a look-up.
    let t = Instant::now();
    let store = SqliteStore::open(&path, Durability::Normal).unwrap();
    let (r, report) = Registry::open(store, now, GroupCommitConfig::default()).unwrap();
    let probe: Name = format!("{}/seg=0", regs[n as usize / 2].prefix)
        .parse()
        .unwrap();
    assert_eq!(r.lookup_count(&probe), 1);
    let restart = t.elapsed();
    println!(
        "restart        {} names serving after {:.2} s",
        report.loaded,
        restart.as_secs_f64()
    );

    // Look-ups (one thread, longest-prefix match below registered prefixes).
    let names: Vec<Name> = (0..100_000u64)
        .map(|i| {
            format!("{}/seg={i}", regs[((i * 7919) % n) as usize].prefix)
                .parse()
                .unwrap()
        })
        .collect();
    let t = Instant::now();
    let mut hits = 0;
    for _ in 0..10 {
        for q in &names {
            hits += r.lookup_count(q);
        }
    }
    let el = t.elapsed();
    assert_eq!(hits, 10 * names.len());
    println!(
        "look-ups       {:.0}/s (one thread, LPM in {n})",
        hits as f64 / el.as_secs_f64()
    );
    drop(r.close().unwrap());
    drop(regs);

    // Durable single registrations: 16 callers, one registration at a time each.
    for (k, (label, cfg)) in [
        (
            "group commit 10 ms",
            GroupCommitConfig {
                window: Duration::from_millis(10),
                ..Default::default()
            },
        ),
        (
            "group commit 2 ms ",
            GroupCommitConfig {
                window: Duration::from_millis(2),
                ..Default::default()
            },
        ),
        (
            "group commit 0 ms ",
            GroupCommitConfig {
                window: Duration::ZERO,
                ..Default::default()
            },
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let (l, secs, commits) = latencies(&path, cfg, 16, 300, n + 10_000_000 * (k as u64 + 1));
        println!(
            "{label}  16 callers: p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms  {:.0} reg/s  {} commits",
            pct(&l, 0.5).as_secs_f64() * 1e3,
            pct(&l, 0.99).as_secs_f64() * 1e3,
            l.last().unwrap().as_secs_f64() * 1e3,
            l.len() as f64 / secs,
            commits
        );
    }
    // Baseline: one caller, so every registration is its own fsync'd (FULL) commit.
    let base_path = dir.path().join("baseline.db");
    let store = SqliteStore::open(&base_path, Durability::Full).unwrap();
    let (r, _) = Registry::open(
        store,
        now,
        GroupCommitConfig {
            window: Duration::ZERO,
            ..Default::default()
        },
    )
    .unwrap();
    let t = Instant::now();
    let mut l = Vec::new();
    for i in 0..300 {
        let s = Instant::now();
        r.register(reg(i, now + 3_600_000)).unwrap();
        l.push(s.elapsed());
    }
    let el = t.elapsed();
    l.sort();
    println!(
        "baseline: one FULL commit per registration: p50 {:.2} ms  p99 {:.2} ms  {:.0} reg/s",
        pct(&l, 0.5).as_secs_f64() * 1e3,
        pct(&l, 0.99).as_secs_f64() * 1e3,
        300.0 / el.as_secs_f64()
    );
}
