//! `[forwarder] auto_split` end to end: `nameway bench` with one consumer puts every Interest
//! under one dispatch key, so with two forwarding threads one thread does the work; the daemon
//! splits the key by itself, nothing is lost while it switches, and afterwards both threads
//! forward the key's names.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{free_port, http_get, Daemon};
use serde_json::Value;

/// Per-shard (local + received) packets and the splits, from `/metrics`.
fn shard_metrics(http: u16) -> (Vec<u64>, u64) {
    let (_, _, body) = http_get(&format!("http://127.0.0.1:{http}"), "/metrics");
    let text = String::from_utf8(body).unwrap();
    let mut per = vec![0u64; 2];
    let mut splits = 0;
    for line in text.lines() {
        let value = || line.rsplit(' ').next().unwrap().parse::<u64>().unwrap();
        let shard = || usize::from(line.contains("shard=\"1\""));
        if line.starts_with("nameway_shard_packets_total{") && !line.contains("handed_off") {
            per[shard()] += value();
        } else if line.starts_with("nameway_shard_splits_total{") {
            splits += value();
        }
    }
    (per, splits)
}

fn bench(d: &Daemon, interests: u32) -> Value {
    let n = interests.to_string();
    let report = d.json(&[
        "bench",
        "--prefix",
        "/video",
        "--interests",
        &n,
        "--window",
        "16",
        "--runs",
        "1",
        "--json",
    ]);
    let r = report["results"][0].clone();
    assert_eq!(r["completed"], interests, "{report}\n{}", d.log());
    assert_eq!(r["nacks"], 0, "{report}");
    assert_eq!(r["timeouts"], 0, "{report}");
    r
}

#[test]
fn a_dominating_key_is_split_without_losing_an_exchange_and_then_spreads() {
    let http = free_port();
    let d = Daemon::start(&format!(
        "[forwarder]\nthreads = 2\n[http]\nlisten = \"127.0.0.1:{http}\"\n"
    ));
    // Names /video/c0/r1/<seq>: one key (/video/c0) until the split, which hashes four
    // components (the third is the same in every name).
    bench(&d, 80_000);
    let (_, splits) = shard_metrics(http);
    assert_eq!(splits, 1, "{}", d.log());
    assert!(
        d.log()
            .contains("are now dispatched by their first 4 components"),
        "{}",
        d.log()
    );
    // The same names again once the switch is over (Interests of the key go to their old
    // thread first for 8 s): both threads forward them.
    // (`nameway_fw::shard::split::DRAIN_MS`).
    std::thread::sleep(std::time::Duration::from_millis(8_500));
    let (before, _) = shard_metrics(http);
    bench(&d, 20_000);
    let (after, splits) = shard_metrics(http);
    let per: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    let total: u64 = per.iter().sum();
    assert!(
        per.iter().all(|&n| n * 4 > total),
        "each thread forwards a share: {per:?}"
    );
    assert_eq!(splits, 1, "split once");
}
