//! The disk tier's choice of store, measured: redb (what `nameway-cs` uses) against fjall (an
//! LSM-tree store), same run, same records, same access pattern as the disk tier:
//!
//!   cargo run --release -p nameway-cs --example kv_compare -- [RECORDS=20000] [PAYLOAD=8192] [RUNS=3]
//!
//! Each record is what the disk tier stores for a packet: the name's TLV-VALUE as the key and
//! about PAYLOAD bytes of incompressible content (cached video or files do not compress) as the
//! value, plus a second table/partition from an insertion sequence number to the key (the tier's
//! eviction order). Measured, medians of RUNS runs, each on a fresh directory:
//! - durable insert: group commits of 256 records, each synced to disk before the next (the
//!   tier's write-behind queue does exactly this);
//! - reopen: opening the store again (the daemon's start; our tier adds its checksum scan);
//! - cold exact look-ups in random order after the reopen, with a 1 MiB cache (the tier serves
//!   far more data than it caches);
//! - cold CanBePrefix look-ups: the first key at or after a prefix, as the tier's range scan;
//! - bytes on disk after the inserts.
//!
//! fjall is measured twice: with its defaults (LZ4 blocks, values in the tree) and with
//! key-value separation (`with_kv_separation`, its mode for large values).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::Path;
use std::time::Instant;

use fjall::{Config, KvSeparationOptions, PartitionCreateOptions, PersistMode};
use redb::{Database, Durability, ReadableDatabase, TableDefinition};

const PACKETS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("packets");
const FIFO: TableDefinition<u64, &[u8]> = TableDefinition::new("fifo");
const GROUP: usize = 256;
const CACHE: usize = 1 << 20;

fn key(i: usize) -> Vec<u8> {
    // The TLV-VALUE of /bench/cs/obj/<i>: four GenericNameComponents.
    let mut k = Vec::new();
    for c in ["bench", "cs", "obj", &i.to_string()] {
        k.push(8);
        k.push(c.len() as u8);
        k.extend_from_slice(c.as_bytes());
    }
    k
}

/// Incompressible bytes (xorshift64*), different for every record.
fn value(i: usize, len: usize) -> Vec<u8> {
    let mut x = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        v.extend_from_slice(&x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    v.truncate(len);
    v
}

fn dir_bytes(p: &Path) -> u64 {
    std::fs::read_dir(p)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| {
                    let m = e.metadata().unwrap();
                    if m.is_dir() {
                        dir_bytes(&e.path())
                    } else {
                        m.len()
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}

/// A random permutation of 0..n (fixed seed).
fn shuffled(n: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    let mut x = 0x1234_5678_9abc_def1u64;
    for i in (1..n).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
    v
}

/// One run's figures: insert/s, reopen s, exact look-ups/s, prefix look-ups/s, bytes on disk.
type Figures = [f64; 5];

fn redb_run(dir: &Path, keys: &[Vec<u8>], values: &[Vec<u8>], order: &[usize]) -> Figures {
    let path = dir.join("cs.redb");
    let db = Database::builder()
        .set_cache_size(CACHE)
        .create(&path)
        .unwrap();
    let t = Instant::now();
    for chunk in (0..keys.len()).collect::<Vec<_>>().chunks(GROUP) {
        let mut tx = db.begin_write().unwrap();
        tx.set_durability(Durability::Immediate).unwrap();
        {
            let mut packets = tx.open_table(PACKETS).unwrap();
            let mut fifo = tx.open_table(FIFO).unwrap();
            for &i in chunk {
                packets.insert(&keys[i][..], &values[i][..]).unwrap();
                fifo.insert(i as u64, &keys[i][..]).unwrap();
            }
        }
        tx.commit().unwrap();
    }
    let insert = keys.len() as f64 / t.elapsed().as_secs_f64();
    drop(db);
    let disk = dir_bytes(dir) as f64;
    let t = Instant::now();
    let db = Database::builder()
        .set_cache_size(CACHE)
        .create(&path)
        .unwrap();
    let reopen = t.elapsed().as_secs_f64();
    let t = Instant::now();
    {
        let rx = db.begin_read().unwrap();
        let packets = rx.open_table(PACKETS).unwrap();
        for &i in order {
            let v = packets.get(&keys[i][..]).unwrap().unwrap();
            assert_eq!(v.value().len(), values[i].len());
        }
    }
    let exact = order.len() as f64 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    {
        let rx = db.begin_read().unwrap();
        let packets = rx.open_table(PACKETS).unwrap();
        for &i in order {
            let (k, _) = packets
                .range(&keys[i][..]..)
                .unwrap()
                .next()
                .unwrap()
                .unwrap();
            assert_eq!(k.value(), &keys[i][..]);
        }
    }
    let prefix = order.len() as f64 / t.elapsed().as_secs_f64();
    [insert, reopen, exact, prefix, disk]
}

fn fjall_run(
    dir: &Path,
    keys: &[Vec<u8>],
    values: &[Vec<u8>],
    order: &[usize],
    separated: bool,
) -> Figures {
    let options = || {
        let o = PartitionCreateOptions::default();
        if separated {
            o.with_kv_separation(KvSeparationOptions::default())
        } else {
            o
        }
    };
    let open = || Config::new(dir).cache_size(CACHE as u64).open().unwrap();
    let ks = open();
    let packets = ks.open_partition("packets", options()).unwrap();
    let fifo = ks
        .open_partition("fifo", PartitionCreateOptions::default())
        .unwrap();
    let t = Instant::now();
    for chunk in (0..keys.len()).collect::<Vec<_>>().chunks(GROUP) {
        let mut batch = ks.batch().durability(Some(PersistMode::SyncAll));
        for &i in chunk {
            batch.insert(&packets, keys[i].clone(), values[i].clone());
            batch.insert(&fifo, (i as u64).to_be_bytes().to_vec(), keys[i].clone());
        }
        batch.commit().unwrap();
    }
    let insert = keys.len() as f64 / t.elapsed().as_secs_f64();
    ks.persist(PersistMode::SyncAll).unwrap();
    drop((packets, fifo, ks));
    let disk = dir_bytes(dir) as f64;
    let t = Instant::now();
    let ks = open();
    let packets = ks.open_partition("packets", options()).unwrap();
    let reopen = t.elapsed().as_secs_f64();
    let t = Instant::now();
    for &i in order {
        let v = packets.get(&keys[i]).unwrap().unwrap();
        assert_eq!(v.len(), values[i].len());
    }
    let exact = order.len() as f64 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    for &i in order {
        let (k, _) = packets.range(keys[i].clone()..).next().unwrap().unwrap();
        assert_eq!(&k[..], &keys[i][..]);
    }
    let prefix = order.len() as f64 / t.elapsed().as_secs_f64();
    [insert, reopen, exact, prefix, disk]
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
    let runs = args.get(2).copied().unwrap_or(3);
    let keys: Vec<Vec<u8>> = (0..n).map(key).collect();
    let values: Vec<Vec<u8>> = (0..n).map(|i| value(i, payload + 160)).collect();
    let order = shuffled(n);
    let mut results: Vec<(&str, Vec<Figures>)> = vec![
        ("redb", Vec::new()),
        ("fjall", Vec::new()),
        ("fjall (kv separation)", Vec::new()),
    ];
    for _ in 0..runs {
        // Interleaved, so that a change of machine load hits every store alike.
        for (name, figures) in &mut results {
            let dir = tempfile::tempdir().unwrap();
            figures.push(match *name {
                "redb" => redb_run(dir.path(), &keys, &values, &order),
                "fjall" => fjall_run(dir.path(), &keys, &values, &order, false),
                _ => fjall_run(dir.path(), &keys, &values, &order, true),
            });
        }
    }
    println!(
        "{n} records of {} bytes, group commits of {GROUP}, 1 MiB cache, medians of {runs} runs",
        payload + 160
    );
    println!(
        "{:<24}{:>14}{:>10}{:>14}{:>14}{:>12}",
        "store", "insert rec/s", "MB/s", "exact get/s", "prefix get/s", "reopen ms"
    );
    for (name, figures) in &results {
        let col = |c: usize| median(figures.iter().map(|f| f[c]).collect());
        let insert = col(0);
        println!(
            "{:<24}{:>14.0}{:>10.0}{:>14.0}{:>14.0}{:>12.1}   {:.0} MB on disk",
            name,
            insert,
            insert * (payload + 160) as f64 / 1e6,
            col(2),
            col(3),
            col(1) * 1e3,
            col(4) / 1e6
        );
    }
}
