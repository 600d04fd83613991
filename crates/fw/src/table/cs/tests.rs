use bytes::Bytes;
use nameway_wire::{Data, Interest, MetaInfo, NameHasher};

use super::*;

const H: NameHasher = NameHasher::with_seed(5);

fn data(name: &str, fresh_ms: u64) -> DataView {
    let mut d = Data::new(name.parse().unwrap(), Bytes::from(name.to_owned()));
    if fresh_ms > 0 {
        d.meta_info = Some(MetaInfo {
            freshness_period: Some(fresh_ms),
            ..MetaInfo::default()
        });
    }
    DataView::new_checked(d.encode()).unwrap()
}

fn interest(name: &str, cbp: bool, mbf: bool) -> InterestView {
    let mut i = Interest::new(name.parse().unwrap());
    i.can_be_prefix = cbp;
    i.must_be_fresh = mbf;
    i.nonce = Some(1);
    InterestView::new_checked(i.encode()).unwrap()
}

fn put(cs: &mut InMemoryCs, name: &str, fresh_ms: u64, now: Time) {
    let d = data(name, fresh_ms);
    let h = H.prefix_hashes(d.name());
    cs.insert(d, &h, now);
}

fn get(cs: &mut InMemoryCs, name: &str, cbp: bool, mbf: bool, now: Time) -> Option<String> {
    let i = interest(name, cbp, mbf);
    let wire = cs.lookup(&i, &H.prefix_hashes(i.name()), now)?;
    Some(DataView::new_checked(wire).unwrap().name().to_string())
}

fn erase(cs: &mut InMemoryCs, prefix: &str, limit: usize) -> usize {
    let p: Name = prefix.parse().unwrap();
    cs.erase(&p, &H.prefix_hashes(&p), limit)
}

const T0: Time = Time::ZERO;

#[test]
fn exact_and_prefix_lookups() {
    let mut cs = InMemoryCs::new(10);
    put(&mut cs, "/a/b/c", 0, T0);
    put(&mut cs, "/a/b/d/e", 0, T0);
    assert_eq!(
        get(&mut cs, "/a/b/c", false, false, T0).as_deref(),
        Some("/a/b/c")
    );
    assert_eq!(get(&mut cs, "/a/b", false, false, T0), None);
    assert!(get(&mut cs, "/a/b", true, false, T0).is_some());
    assert_eq!(
        get(&mut cs, "/a/b/d", true, false, T0).as_deref(),
        Some("/a/b/d/e")
    );
    assert_eq!(
        get(&mut cs, "/a/b/c", true, false, T0).as_deref(),
        Some("/a/b/c")
    );
    assert_eq!(get(&mut cs, "/a/x", true, false, T0), None);
    assert_eq!(get(&mut cs, "/a/b/c/d", true, false, T0), None);
    assert_eq!(cs.len(), 2);
    let c = cs.counters();
    assert_eq!((c.hits, c.misses, c.inserts), (4, 3, 2));
}

#[test]
fn freshness() {
    let mut cs = InMemoryCs::new(10);
    put(&mut cs, "/f", 100, T0);
    put(&mut cs, "/never", 0, T0);
    assert!(get(&mut cs, "/f", false, true, Time::from_millis(99)).is_some());
    assert!(get(&mut cs, "/f", false, true, Time::from_millis(100)).is_none());
    assert!(get(&mut cs, "/f", false, false, Time::from_millis(100)).is_some());
    assert!(get(&mut cs, "/never", false, true, T0).is_none());
    assert!(get(&mut cs, "/never", false, false, T0).is_some());
    // a prefix look-up skips the stale packet for a fresh one
    put(&mut cs, "/p/1", 0, T0);
    put(&mut cs, "/p/2", 50, T0);
    assert_eq!(get(&mut cs, "/p", true, true, T0).as_deref(), Some("/p/2"));
    // re-inserting refreshes
    put(&mut cs, "/f", 100, Time::from_millis(150));
    assert!(get(&mut cs, "/f", false, true, Time::from_millis(200)).is_some());
    assert_eq!(cs.len(), 4);
}

#[test]
fn implicit_digest_lookup() {
    let mut cs = InMemoryCs::new(10);
    let d = data("/a/b", 0);
    let h = H.prefix_hashes(d.name());
    cs.insert(d.clone(), &h, T0);
    let full = d.full_name().to_string();
    assert_eq!(
        get(&mut cs, &full, false, false, T0).as_deref(),
        Some("/a/b")
    );
    assert_eq!(
        get(&mut cs, &full, true, false, T0).as_deref(),
        Some("/a/b")
    );
    let wrong = format!("/a/b/sha256digest={}", "00".repeat(32));
    assert_eq!(get(&mut cs, &wrong, false, false, T0), None);
}

#[test]
fn lru_eviction_and_pruning() {
    let mut cs = InMemoryCs::new(3);
    put(&mut cs, "/a/1", 0, T0);
    put(&mut cs, "/a/2", 0, T0);
    put(&mut cs, "/b/1", 0, T0);
    assert!(get(&mut cs, "/a/1", false, false, T0).is_some()); // /a/2 is now the oldest
    put(&mut cs, "/c/1", 0, T0);
    assert_eq!(cs.len(), 3);
    assert!(get(&mut cs, "/a/2", false, false, T0).is_none());
    assert!(get(&mut cs, "/a/1", false, false, T0).is_some());
    assert_eq!(cs.counters().evictions, 1);
    // nodes: root, /a, /a/1, /b, /b/1, /c, /c/1
    assert_eq!(cs.node_count(), 7);
    cs.set_capacity(0);
    assert_eq!(cs.len(), 0);
    assert_eq!(cs.node_count(), 1, "only the root is left");
    put(&mut cs, "/d", 0, T0);
    assert_eq!(cs.len(), 0, "capacity 0 stores nothing");
}

#[test]
fn inner_nodes_can_hold_packets() {
    let mut cs = InMemoryCs::new(10);
    put(&mut cs, "/a/b/c", 0, T0);
    put(&mut cs, "/a/b", 0, T0);
    assert_eq!(
        get(&mut cs, "/a/b", false, false, T0).as_deref(),
        Some("/a/b")
    );
    assert_eq!(erase(&mut cs, "/a/b/c", 10), 1);
    assert_eq!(
        get(&mut cs, "/a/b", true, false, T0).as_deref(),
        Some("/a/b")
    );
    assert_eq!(cs.node_count(), 3);
}

#[test]
fn erase_by_prefix_with_limit() {
    let mut cs = InMemoryCs::new(100);
    for i in 0..10 {
        put(&mut cs, &format!("/x/{i}"), 0, T0);
    }
    put(&mut cs, "/y", 0, T0);
    assert_eq!(erase(&mut cs, "/x", 4), 4);
    assert_eq!(cs.len(), 7);
    assert_eq!(erase(&mut cs, "/x", 100), 6);
    assert_eq!(erase(&mut cs, "/nothing", 100), 0);
    assert_eq!(cs.len(), 1);
    assert_eq!(erase(&mut cs, "/", 100), 1);
    assert_eq!(cs.node_count(), 1);
}

#[test]
fn prefix_walk_is_bounded() {
    let mut cs = InMemoryCs::new(10_000);
    for i in 0..(2 * LOOKUP_BUDGET) {
        put(&mut cs, &format!("/s/{i}"), 0, T0); // stale
    }
    put(&mut cs, "/s/zzz-fresh", 1000, T0);
    // whether the fresh one is found depends on the walk order; the walk must stop either way
    let _ = get(&mut cs, "/s", true, true, T0);
    assert!(cs.counters().hits + cs.counters().misses == 1);
}

#[test]
fn stale_index_entries_are_swept_and_never_answer() {
    let mut cs = InMemoryCs::new(100);
    let t = Time::ZERO;
    for i in 0..10_000 {
        put(&mut cs, &format!("/s/{}/{i}", i % 7), 10_000, t);
        // At most half the slots used, in a table of at most three times the live nodes at
        // the last rebuild (rounded up to a power of two).
        assert!(cs.index.used() * 2 <= cs.index.capacity());
        assert!(
            cs.index.capacity() <= 8 * cs.node_count().next_power_of_two(),
            "index of {} slots for {} nodes",
            cs.index.capacity(),
            cs.node_count()
        );
    }
    // the last 100 answer; the evicted ones do not, although their node ids were reused
    for i in 9_900..10_000 {
        let n = format!("/s/{}/{i}", i % 7);
        assert_eq!(get(&mut cs, &n, false, false, t), Some(n));
    }
    for i in (0..9_900).step_by(97) {
        let n = format!("/s/{}/{i}", i % 7);
        assert_eq!(get(&mut cs, &n, false, false, t), None);
    }
    assert_eq!(cs.len(), 100);
}

#[test]
fn a_node_is_one_cache_line() {
    // Evicting reads one node written a whole store ago; it must cost one miss, not two.
    assert_eq!(core::mem::size_of::<super::Node>(), 64);
    assert_eq!(core::mem::align_of::<super::Node>(), 64);
}

#[test]
fn implicit_digests_follow_their_packet() {
    let mut cs = InMemoryCs::new(2);
    let first = data("/a/b", 0);
    let h = H.prefix_hashes(first.name());
    cs.insert(first.clone(), &h, T0);
    let first_full = first.full_name().to_string();
    assert!(get(&mut cs, &first_full, false, false, T0).is_some());
    assert_eq!(
        cs.digests.len(),
        1,
        "the digest is kept for the next look-up"
    );

    // A new packet under the same name: the old digest must not answer any more.
    let second = data("/a/b", 1000);
    assert_ne!(first.full_name(), second.full_name());
    let h = H.prefix_hashes(second.name());
    cs.insert(second.clone(), &h, T0);
    assert_eq!(cs.digests.len(), 0);
    assert_eq!(get(&mut cs, &first_full, false, false, T0), None);
    assert!(get(&mut cs, &second.full_name().to_string(), false, false, T0).is_some());

    // Evicted packets take their digest with them.
    put(&mut cs, "/c", 0, T0);
    put(&mut cs, "/d", 0, T0);
    assert_eq!(get(&mut cs, "/a/b", false, false, T0), None);
    assert_eq!(cs.digests.len(), 0);
}

#[test]
fn a_packet_named_by_an_inner_node_still_respects_the_capacity() {
    // /a is an inner node (the prefix of two cached packets) when a packet named /a comes:
    // the store must make room for it like for any new packet, and the inner node must
    // survive its only child being the one evicted.
    let mut cs = InMemoryCs::new(2);
    put(&mut cs, "/a/1", 0, T0);
    put(&mut cs, "/a/2", 0, T0);
    put(&mut cs, "/a", 0, T0);
    assert_eq!(cs.len(), 2);
    assert_eq!(cs.counters().evictions, 1);
    assert!(
        get(&mut cs, "/a/1", false, false, T0).is_none(),
        "the oldest went"
    );
    assert_eq!(get(&mut cs, "/a", false, false, T0).as_deref(), Some("/a"));
    assert_eq!(
        get(&mut cs, "/a/2", false, false, T0).as_deref(),
        Some("/a/2")
    );

    // Capacity 1: the inner node's only child is the victim, and the node itself stays.
    let mut cs = InMemoryCs::new(1);
    put(&mut cs, "/b/1", 0, T0);
    put(&mut cs, "/b", 0, T0);
    assert_eq!(cs.len(), 1);
    assert_eq!(get(&mut cs, "/b", false, false, T0).as_deref(), Some("/b"));
    assert!(get(&mut cs, "/b/1", false, false, T0).is_none());
    assert_eq!(cs.node_count(), 2, "root and /b");
    // And it is evicted like any packet.
    put(&mut cs, "/c", 0, T0);
    assert_eq!(cs.len(), 1);
    assert!(get(&mut cs, "/b", false, false, T0).is_none());
    assert_eq!(cs.node_count(), 2, "root and /c");
}
