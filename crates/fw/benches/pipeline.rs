//! Forwarding-plane benchmarks: one full exchange (Interest in → out upstream, Data in → CS
//! insert → out downstream) at 4 and 11 name components with 1, 10^3 and 10^6 FIB routes; the
//! content-store hit path; PIT insert (and expiry) with 10^5 pending entries; the security
//! policy's look-up (hashing inside, or from the per-packet prefix hashes).
//!
//! Two exchange groups: `exchange` hands the forwarder packets pre-encoded in a pool of 2^17
//! (cold in cache, as a worst case); `exchange_rx` writes each packet into a receive buffer
//! first, as a socket read delivers it (the copy is part of the measured time).
//!
//! `cargo bench -p nameway-fw --bench pipeline -- --warm-up-time 1 --measurement-time 3`

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use core::time::Duration;
use std::hint::black_box;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nameway_fw::{CsFilter, CsRequest, Forwarder, SecurityLevel, SecurityPolicy, Time};
use nameway_wire::NameHasher;

mod fixture;
use fixture::{
    assert_all_satisfied, data, interest, names, one_exchange, pool_packets, setup, RxBuffer,
    Setup, CS_CAPACITY, POOL,
};

fn exchange(c: &mut Criterion) {
    let mut group = c.benchmark_group("exchange");
    group.throughput(Throughput::Elements(1));
    for components in [4, 11] {
        let (interests, datas) = pool_packets(components);
        for routes in [1, 1_000, 1_000_000] {
            let Setup {
                mut fw,
                consumer,
                producer,
            } = setup(routes, CS_CAPACITY);
            let mut i = 0;
            let mut now = Time::ZERO;
            let id = BenchmarkId::new(format!("{components}c"), format!("{routes}routes"));
            group.bench_function(id, |b| {
                b.iter(|| {
                    let k = i % POOL;
                    i += 1;
                    now += Duration::from_micros(10);
                    let pair = (interests[k].clone(), datas[k].clone());
                    black_box(one_exchange(&mut fw, now, consumer, producer, pair));
                });
            });
            assert_all_satisfied(&fw);
        }
    }
    group.finish();
}

fn exchange_rx(c: &mut Criterion) {
    let mut group = c.benchmark_group("exchange_rx");
    group.throughput(Throughput::Elements(1));
    for components in [4, 11] {
        for routes in [1, 1_000, 1_000_000] {
            let Setup {
                mut fw,
                consumer,
                producer,
            } = setup(routes, CS_CAPACITY);
            let mut rx = RxBuffer::new(components);
            let mut i: u32 = 0;
            let mut now = Time::ZERO;
            let id = BenchmarkId::new(format!("{components}c"), format!("{routes}routes"));
            group.bench_function(id, |b| {
                b.iter(|| {
                    // 2^17 distinct names cycled, more than the CS holds: every exchange misses
                    // and evicts.
                    let k = i % POOL as u32;
                    i = i.wrapping_add(1);
                    now += Duration::from_micros(10);
                    let packets = rx.exchange(k, i);
                    black_box(one_exchange(&mut fw, now, consumer, producer, packets));
                });
            });
            assert_all_satisfied(&fw);
        }
    }
    group.finish();
}

/// The miss path with the decoupled store's CS-list in front, against today's in-process store,
/// in one group. The forwarder thread's share of the server's work is included: each admitted
/// Data enters the filter (from the hashes its insert request carries, as the server's report
/// gives them back) and the one admitted `CS_CAPACITY` earlier leaves it, as a full store's
/// evictions would.
fn cs_list_miss(c: &mut Criterion) {
    let mut group = c.benchmark_group("cs_miss_path");
    group.throughput(Throughput::Elements(1));
    for mode in ["inline", "cs_list"] {
        let Setup {
            mut fw,
            consumer,
            producer,
        } = setup(1, CS_CAPACITY);
        if mode == "cs_list" {
            fw.enable_external_cs(CsFilter::new(CS_CAPACITY, 0.01));
        }
        let mut stored: std::collections::VecDeque<nameway_wire::PrefixHashes> =
            std::collections::VecDeque::new();
        let mut rx = RxBuffer::new(4);
        let mut i: u32 = 0;
        let mut now = Time::ZERO;
        group.bench_function(BenchmarkId::new("4c", mode), |b| {
            b.iter(|| {
                let k = i % POOL as u32;
                i = i.wrapping_add(1);
                now += Duration::from_micros(10);
                let packets = rx.exchange(k, i);
                black_box(one_exchange(&mut fw, now, consumer, producer, packets));
                while let Some(r) = fw.poll_cs_request() {
                    match r {
                        CsRequest::Insert { hashes, .. } => {
                            fw.cs_filter_insert_hashes(hashes.as_slice());
                            stored.push_back(hashes);
                            if stored.len() > CS_CAPACITY {
                                let old = stored.pop_front().unwrap();
                                fw.cs_filter_remove_hashes(old.as_slice());
                            }
                        }
                        // A false positive of the filter (nothing here is cached): the server
                        // answers "no", as namewayd's would, and the Interest goes on.
                        CsRequest::Lookup { token, .. } => fw.handle_cs_answer(now, token, None),
                    }
                }
            });
        });
        assert_all_satisfied(&fw);
    }
    group.finish();
}

fn cs_hit(c: &mut Criterion) {
    let mut group = c.benchmark_group("cs_hit");
    group.throughput(Throughput::Elements(1));
    for components in [4, 11] {
        const CACHED: usize = 1 << 14;
        let pool = names(components, CACHED);
        let Setup {
            mut fw,
            consumer,
            producer,
        } = setup(1, CACHED);
        let mut now = Time::ZERO;
        for (i, n) in pool.iter().enumerate() {
            fw.handle_packet(now, consumer, interest(n, i as u32, None));
            fw.handle_packet(now, producer, data(n));
            while fw.poll_transmit().is_some() {}
        }
        now += Duration::from_secs(1);
        fw.handle_timeout(now);
        let interests: Vec<Bytes> = pool
            .iter()
            .enumerate()
            .map(|(i, n)| interest(n, 1 << 20 | i as u32, None))
            .collect();
        let mut i = 0;
        group.bench_function(format!("{components}c"), |b| {
            b.iter(|| {
                let k = i % CACHED;
                i += 1;
                fw.handle_packet(now, consumer, interests[k].clone());
                black_box(fw.poll_transmit());
            });
        });
        // Only when criterion ran it (a filter on the command line may skip it).
        assert!(i == 0 || fw.status().cs.hits > 0);
    }
    group.finish();
}

fn pit_insert(c: &mut Criterion) {
    // 4 s lifetime, one Interest per 40 µs: 10^5 entries pending in steady state, one expiring
    // (unsatisfied, its Nonce going to the dead-nonce list) per new one.
    const PENDING: usize = 100_000;
    let mut group = c.benchmark_group("pit_insert");
    group.throughput(Throughput::Elements(1));
    let pool = names(4, 4 * PENDING);
    let interests: Vec<Bytes> = pool
        .iter()
        .enumerate()
        .map(|(i, n)| interest(n, i as u32, Some(4000)))
        .collect();
    let Setup {
        mut fw, consumer, ..
    } = setup(1, 0);
    let mut i = 0;
    let mut now = Time::ZERO;
    let mut step = |fw: &mut Forwarder| {
        let k = i % interests.len();
        i += 1;
        now += Duration::from_micros(40);
        fw.handle_packet(now, consumer, interests[k].clone());
        if fw.poll_timeout().is_some_and(|t| t <= now) {
            fw.handle_timeout(now);
        }
        black_box(fw.poll_transmit());
    };
    for _ in 0..PENDING + 1000 {
        step(&mut fw);
    }
    assert!(fw.status().n_pit_entries >= PENDING - 10);
    group.bench_function("4c/100k-pending", |b| b.iter(|| step(&mut fw)));
    group.finish();
}

/// A policy of 1,000 prefixes at lengths 1 to 3 plus `/bench` (as the FIB of `setup`), looked
/// up for names of 4 and 11 components: hashing inside (`lookup`), or from the prefix hashes
/// the forwarder computes once per packet (`lookup_hashes`).
fn security_policy_lookup(c: &mut Criterion) {
    let mut group = c.benchmark_group("security_policy_lookup");
    group.throughput(Throughput::Elements(1));
    let mut policy = SecurityPolicy::with_hasher(NameHasher::with_seed(1));
    policy
        .set("/bench".parse().unwrap(), SecurityLevel::Aes256Gcm)
        .unwrap();
    for i in 1..1_000 {
        let p = match i % 3 {
            0 => format!("/x{i}"),
            1 => format!("/bench/x{i}"),
            _ => format!("/bench/a/x{i}"),
        };
        policy
            .set(p.parse().unwrap(), SecurityLevel::ChaCha20Poly1305)
            .unwrap();
    }
    for components in [4, 11] {
        let pool = names(components, 1 << 10);
        let hashes: Vec<_> = pool
            .iter()
            .map(|n| policy.hasher().prefix_hashes(n))
            .collect();
        let mut i = 0;
        group.bench_function(BenchmarkId::new(format!("{components}c"), "lookup"), |b| {
            b.iter(|| {
                i = (i + 1) % pool.len();
                black_box(policy.lookup(&pool[i]))
            });
        });
        group.bench_function(
            BenchmarkId::new(format!("{components}c"), "lookup_hashes"),
            |b| {
                b.iter(|| {
                    i = (i + 1) % pool.len();
                    black_box(policy.lookup_hashes(&pool[i], &hashes[i]))
                });
            },
        );
        assert_eq!(policy.lookup(&pool[0]), SecurityLevel::Aes256Gcm);
    }
    group.finish();
}

criterion_group!(
    benches,
    exchange,
    exchange_rx,
    cs_list_miss,
    cs_hit,
    pit_insert,
    security_policy_lookup
);
criterion_main!(benches);
