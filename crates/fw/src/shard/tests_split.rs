//! Automatic splits of a dominating dispatch key, played in one thread ([`super::split`]).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::split::{DRAIN_MS, SKEWED_IN_A_ROW};
use super::tests::{
    data, feed, interest, name, owner, set_up, settle, to, APP1, APP2, HASHER, PRODUCER, WINDOW,
};
use super::*;
use crate::forwarder::Config;
use crate::pipeline::Kind;
use crate::time::Time;

/// The shard of `n` under the rule after the split (its first three components).
fn new_shard(shards: &[Shard], n: &str) -> usize {
    let h = HASHER.prefix_hashes(&name(n)).get(3).unwrap();
    shards[0].dispatcher().shard_of_hash(h)
}

/// Reads 2,000 Interests `names(i)` on shard 0 at `now`: shard 1 receives between 30 and 70 %
/// of them.
fn read_on_shard_0_spreads(shards: &mut [Shard], now: Time, names: impl Fn(u32) -> String) {
    let before = shards[1].counters().n_received;
    for i in 0..2_000u32 {
        shards[0].handle_packet(now, APP1, interest(&names(i), 900_000 + i, false));
        settle(shards, now);
    }
    let moved = shards[1].counters().n_received - before;
    assert!(
        (600..1_400).contains(&moved),
        "shard 1 took {moved} of 2000"
    );
}

fn auto_split_shards() -> Vec<Shard> {
    let mut table = DispatchTable::new(HASHER, 2).unwrap();
    table.set_auto_split(true);
    set_up(2, table, Config::default()).0
}

/// `/video/title/seg=i` read on one shard keeps it busy: after three skewed windows in a row
/// the key is split and both shards take the load; an Interest pending from before the split
/// still meets its retransmission and its Data; a new Interest of the key goes to its new
/// shard.
#[test]
fn a_dominating_key_is_split_and_what_is_in_flight_still_meets() {
    let mut shards = auto_split_shards();
    let old = owner(&shards, &interest("/video/title/seg=0", 1, false));
    // Before the split: an Interest whose name moves to the other shard with the split.
    let early = (0..)
        .map(|j| format!("/video/title/early{j}"))
        .find(|n| new_shard(&shards, n) != old)
        .unwrap();
    shards[0].handle_packet(Time::ZERO, APP1, interest(&early, 1, false));
    let out = settle(&mut shards, Time::ZERO);
    assert_eq!(to(PRODUCER, Kind::Interest, &out), [old]);

    let reports = feed(&mut shards, (SKEWED_IN_A_ROW + 1) * WINDOW, |i| {
        format!("/video/title/seg={i}")
    });
    let split: Vec<_> = reports.iter().filter(|r| r.split).collect();
    assert_eq!(split.len(), 1, "{reports:?}");
    assert_eq!(split[0].windows_in_a_row, SKEWED_IN_A_ROW);
    assert_eq!(
        (split[0].prefix.clone(), split[0].recommended_k()),
        (name("/video/title"), 3)
    );
    assert_eq!(shards[0].dispatcher().splits().len(), 1);
    assert_eq!(shards[0].counters().n_splits, 1);
    // The window after the split is not skewed: both shards forward the key's names.
    let now = Time::from_millis(2_000);
    read_on_shard_0_spreads(&mut shards, now, |i| {
        format!("/video/title/seg={}", 1_000_000 + i)
    });

    // Within the drain period: the retransmission (another Nonce, read on both shards in turn)
    // goes to the old shard, which knows the Interest and keeps it.
    for reader in [0, 1] {
        let wire = interest(&early, 2 + reader as u32, false);
        shards[reader].handle_packet(now, if reader == 0 { APP1 } else { APP2 }, wire);
        let out = settle(&mut shards, now);
        assert!(
            to(PRODUCER, Kind::Interest, &out).iter().all(|&s| s == old),
            "{out:?}"
        );
    }
    assert!(shards[old].counters().n_drain_kept >= 2);
    // Its Data goes to the new shard and is copied to the old one, which answers both apps.
    let other = 1 - old;
    shards[other].handle_packet(now, PRODUCER, data(&early));
    let out = settle(&mut shards, now);
    assert_eq!(to(APP1, Kind::Data, &out), [old]);
    assert_eq!(to(APP2, Kind::Data, &out), [old]);

    // A new Interest of the key during the drain: moved to its new shard.
    let fresh = (0..)
        .map(|j| format!("/video/title/fresh{j}"))
        .find(|n| new_shard(&shards, n) != old)
        .unwrap();
    let moved_before = shards[old].counters().n_drain_moved;
    shards[old].handle_packet(now, APP1, interest(&fresh, 5, false));
    let out = settle(&mut shards, now);
    assert_eq!(to(PRODUCER, Kind::Interest, &out), [other]);
    assert_eq!(shards[old].counters().n_drain_moved, moved_before + 1);

    // After the drain period: straight to the new shard.
    let late = Time::from_millis(2_000 + DRAIN_MS);
    let last = (0..)
        .map(|j| format!("/video/title/late{j}"))
        .find(|n| new_shard(&shards, n) == other)
        .unwrap();
    shards[old].handle_packet(late, APP1, interest(&last, 6, false));
    let out = settle(&mut shards, late);
    assert_eq!(to(PRODUCER, Kind::Interest, &out), [other]);
    assert_eq!(shards[old].counters().n_drain_moved, moved_before + 1);
}

/// With automatic splits off (the table's default) the key is reported, never split.
#[test]
fn without_auto_split_a_dominating_key_is_only_reported() {
    let (mut shards, _) = set_up(2, DispatchTable::new(HASHER, 2).unwrap(), Config::default());
    let reports = feed(&mut shards, (SKEWED_IN_A_ROW + 1) * WINDOW, |i| {
        format!("/video/title/seg={i}")
    });
    assert_eq!(reports.len(), SKEWED_IN_A_ROW as usize + 1);
    assert!(reports.iter().all(|r| !r.split));
    assert!(shards[0].dispatcher().splits().is_empty());
}

/// Names `/bench/c0/r<0..2>/<seq>` (a component with few values under the key, as the run tag
/// of `nameway bench`): the split hashes four components, where the sampled names take many
/// values, not three.
#[test]
fn the_split_goes_as_deep_as_the_names_differ() {
    let mut shards = auto_split_shards();
    let reports = feed(&mut shards, (SKEWED_IN_A_ROW + 1) * WINDOW, |i| {
        format!("/bench/c0/r{}/{i}", i / WINDOW % 3)
    });
    let split: Vec<_> = reports.iter().filter(|r| r.split).collect();
    assert_eq!(split.len(), 1, "{reports:?}");
    assert_eq!(split[0].prefix, name("/bench/c0"));
    assert_eq!(split[0].recommended_k(), 4);
    // The next names spread over both shards.
    read_on_shard_0_spreads(&mut shards, Time::from_millis(2_000), |i| {
        format!("/bench/c0/r1/x{i}")
    });
}

/// One name asked again and again (each with a new Nonce) dominates, but nothing below its key
/// differs: no split, the report says so.
#[test]
fn a_key_whose_names_do_not_differ_is_not_split() {
    let mut shards = auto_split_shards();
    let reports = feed(&mut shards, (SKEWED_IN_A_ROW + 1) * WINDOW, |i| {
        let _ = i;
        "/one/name/0".to_owned()
    });
    assert!(reports.len() > SKEWED_IN_A_ROW as usize, "{reports:?}");
    assert!(reports.iter().all(|r| !r.split && !r.spreadable()));
    assert!(shards[0].dispatcher().splits().is_empty());
}
