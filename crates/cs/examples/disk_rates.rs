//! Insert and look-up rates of the content store's tiers, with real files:
//!
//!   cargo run --release -p nameway-cs --example disk_rates -- [PACKETS=20000] [PAYLOAD=8192] [RUNS=5]
//!
//! Prints the median of RUNS runs for: memory-tier inserts and hits; disk-tier inserts (group
//! commits of 256, durable), disk hits with the memory tier empty (cold: a 1 MiB page cache),
//! and a store reopen with its full checksum scan.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Instant;

use bytes::Bytes;
use nameway_cs::{CsConfig, CsServer, PolicyKind, Query};
use nameway_wire::{Data, MetaInfo, Name};

fn packet(i: usize, payload: usize) -> Bytes {
    let mut d = Data::new(
        format!("/bench/cs/obj/{i}").parse().unwrap(),
        Bytes::from(vec![(i % 251) as u8; payload]),
    );
    d.meta_info = Some(MetaInfo {
        freshness_period: Some(60_000),
        ..MetaInfo::default()
    });
    d.sign(&nameway_wire::security::DigestSha256).unwrap();
    d.encode()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap())
        .collect();
    let n = args.first().copied().unwrap_or(20_000);
    let payload = args.get(1).copied().unwrap_or(8192);
    let runs = args.get(2).copied().unwrap_or(5);
    let packets: Vec<Bytes> = (0..n).map(|i| packet(i, payload)).collect();
    let queries: Vec<Query> = (0..n)
        .map(|i| {
            Query::new(
                &format!("/bench/cs/obj/{i}").parse::<Name>().unwrap(),
                false,
                false,
            )
        })
        .collect();
    let (mut mem_ins, mut mem_hit, mut disk_ins, mut disk_hit, mut reopen) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let (mut m, _) = CsServer::open(CsConfig {
            policy: PolicyKind::Lru,
            memory_packets: n,
            memory_bytes: usize::MAX,
            disk_path: None,
            ..CsConfig::default()
        });
        let t = Instant::now();
        for p in &packets {
            m.insert(p.clone(), 0).unwrap();
        }
        mem_ins.push(n as f64 / t.elapsed().as_secs_f64());
        let t = Instant::now();
        for q in &queries {
            assert!(m.lookup(q, 0).is_some());
        }
        mem_hit.push(n as f64 / t.elapsed().as_secs_f64());

        let dir = tempfile::tempdir().unwrap();
        let config = CsConfig {
            policy: PolicyKind::Lru,
            memory_packets: 0,
            memory_bytes: 0,
            disk_path: Some(dir.path().join("cs.redb")),
            disk_packets: usize::MAX,
            disk_bytes: u64::MAX,
            disk_cache_bytes: 1 << 20,
        };
        let (mut d, _) = CsServer::open(config.clone());
        let t = Instant::now();
        for p in &packets {
            d.insert(p.clone(), 0).unwrap();
        }
        d.flush();
        disk_ins.push(n as f64 / t.elapsed().as_secs_f64());
        drop(d);
        let t = Instant::now();
        let (mut d, report) = CsServer::open(config);
        assert_eq!(report.unwrap().packets, n);
        reopen.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for q in &queries {
            assert!(d.lookup(q, 0).is_some());
        }
        disk_hit.push(n as f64 / t.elapsed().as_secs_f64());
    }
    let mb = |rate: f64| rate * (payload as f64) / 1e6;
    println!("{n} packets of {payload} B payload, median of {runs} runs");
    for (what, v) in [
        ("memory insert", median(mem_ins)),
        ("memory hit", median(mem_hit)),
        ("disk insert (durable, groups of 256)", median(disk_ins)),
        (
            "disk hit (memory tier off, 1 MiB page cache)",
            median(disk_hit),
        ),
    ] {
        println!("{what:48} {:>10.0} packets/s {:>8.0} MB/s", v, mb(v));
    }
    println!(
        "{:48} {:>10.3} s",
        "reopen with checksum scan",
        median(reopen)
    );
}
