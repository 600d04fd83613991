//! The RIB service's registry at scale: how long 10^6 names take to load from the redb store,
//! how much memory they take, and how many look-ups per second one core answers.
//!
//! ```text
//! cargo run --release -p nameway-routing --features redb --example registry_load -- [NAMES] [FILE]
//! ```
//!
//! NAMES defaults to 1 000 000, FILE to `target/routing-registry-<NAMES>.redb`. The first run
//! writes FILE: NAMES fresh Ed25519 keys, each announcing its own name delegated to one of
//! 1000 routers, valid 30 days (so the file can be reused), on two threads. Then the program
//! runs itself again (`load`) so that the measurement starts in a fresh process, and prints:
//! the load time (`PersistentRegistry::open`: read, decode and check every record), wall and
//! CPU (the thread's, from `/proc/thread-self/schedstat`: on a shared machine the wall time
//! includes waiting for a core), resident memory before and after it (`/proc/self/status`;
//! it includes redb's page cache, at most 16 MiB), the record bytes held, and the rate of
//! random look-ups answered as a RIB service answers them (record + answer Data).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use nameway_routing::redb_store::RedbStore;
use nameway_routing::rib::{self, Answer};
use nameway_routing::{
    Announcement, KeyHash, LocatorRecord, NameKey, PersistentRegistry, RecordKind, RegistryStore,
};
use nameway_wire::security::DigestSha256;

const ROUTERS: usize = 1000;
const LIFETIME_MS: u64 = 30 * 86_400_000;

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// CPU time of the calling thread in seconds (`/proc/thread-self/schedstat`; updated at
/// scheduler ticks, far finer than the seconds measured here).
fn cpu_s() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0.0, |ns| ns as f64 / 1e9)
}

/// Resident set size in bytes.
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn generate(path: &Path, names: usize) {
    let at = now_ms();
    let routers: Vec<(NameKey, LocatorRecord)> = (0..ROUTERS)
        .map(|i| {
            let k = NameKey::generate().unwrap();
            let uri = format!("udp4://10.{}.{}.1:6363", i / 250, i % 250);
            let loc = LocatorRecord::build(&k, &[uri], at, LIFETIME_MS).unwrap();
            (k, loc)
        })
        .collect();
    let t = Instant::now();
    let half = names / 2;
    let make = |range: std::ops::Range<usize>| -> Vec<(KeyHash, Vec<u8>)> {
        range
            .map(|i| {
                let owner = NameKey::generate().unwrap();
                let r = &routers[i % ROUTERS].0;
                let pa = Announcement::delegation(&owner, &r.hash(), at, LIFETIME_MS).unwrap();
                (owner.hash(), pa.wire().to_vec())
            })
            .collect()
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| make(0..half));
        let b = make(half..names);
        (a.join().unwrap(), b)
    });
    eprintln!(
        "signed {names} announcements in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_file(path);
    let mut store = RedbStore::open(path).unwrap();
    for (k, loc) in &routers {
        store
            .put(RecordKind::Locator, &k.hash(), loc.wire())
            .unwrap();
    }
    for (h, wire) in a.iter().chain(&b) {
        store.put(RecordKind::Announcement, h, wire).unwrap();
    }
    store.flush().unwrap();
    eprintln!("wrote {}", path.display());
}

fn load(path: &Path) {
    let rss0 = rss();
    let t = Instant::now();
    let c = cpu_s();
    let store = RedbStore::open(path).unwrap();
    let (reg, report) = PersistentRegistry::open(store, now_ms()).unwrap();
    let load_s = t.elapsed().as_secs_f64();
    let load_cpu = cpu_s() - c;
    let rss1 = rss();
    let (reg, store) = reg.into_parts();
    drop(store);
    let rss2 = rss();
    let n = reg.len();
    assert_eq!(report.refused_count, 0, "{:?}", report.refused);
    let names: Vec<KeyHash> = reg.iter().map(|i| i.h).collect();
    let wire_bytes: usize = names
        .iter()
        .map(|h| reg.get(h, now_ms()).unwrap().announcement.len())
        .sum();
    println!(
        "names loaded:        {n} ({} locator records)",
        report.locators
    );
    println!(
        "load time:           {load_s:.2} s wall, {load_cpu:.2} s CPU ({:.0} names per CPU second)",
        n as f64 / load_cpu
    );
    println!(
        "resident memory:     {:.1} MiB before, {:.1} MiB after load, {:.1} MiB with the store closed",
        rss0 as f64 / 1048576.0,
        rss1 as f64 / 1048576.0,
        rss2 as f64 / 1048576.0
    );
    let per_name = rss2.saturating_sub(rss0) as f64 / n as f64;
    let wire_per_name = wire_bytes as f64 / n as f64;
    println!(
        "per name:            {per_name:.0} B resident, of which {wire_per_name:.0} B announcement bytes: {:.0} B beyond the wire",
        per_name - wire_per_name
    );
    let prefix = "/example/32=RIB".parse().unwrap();
    let now = now_ms();
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let lookups: u32 = 1_000_000;
    let t = Instant::now();
    let c = cpu_s();
    let mut bytes = 0usize;
    for _ in 0..lookups {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let h = &names[(x % names.len() as u64) as usize];
        let rec = reg.get(h, now).unwrap();
        let name = rib::lookup_name(&prefix, h).unwrap();
        let answer = Answer::Found {
            announcement: rec.announcement,
            locator: rec.locator,
        };
        bytes += rib::encode_answer(&name, &answer, 1000, &DigestSha256)
            .unwrap()
            .len();
    }
    let s = t.elapsed().as_secs_f64();
    let cpu = cpu_s() - c;
    println!(
        "look-ups:            {:.0} per CPU second ({:.0} per wall second) (record + answer Data of {} B)",
        f64::from(lookups) / cpu,
        f64::from(lookups) / s,
        bytes / lookups as usize
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("load") {
        load(Path::new(&args[1]));
        return;
    }
    let names: usize = args.first().map_or(1_000_000, |a| a.parse().unwrap());
    let path = args.get(1).map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../../target/routing-registry-{names}.redb"))
    });
    let reusable = RedbStore::open(&path).is_ok_and(|s| {
        let mut count = 0;
        s.for_each(RecordKind::Announcement, &mut |_, _| count += 1)
            .is_ok()
            && count == names
    });
    if !reusable {
        generate(&path, names);
    }
    let status = Command::new(std::env::current_exe().unwrap())
        .arg("load")
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success());
}
