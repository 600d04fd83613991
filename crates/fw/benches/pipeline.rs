//! Forwarding-plane benchmarks: one full exchange (Interest in → out upstream, Data in → CS
//! insert → out downstream) at 4 and 11 name components with 1, 10^3 and 10^6 FIB routes; the
//! content-store hit path; PIT insert (and expiry) with 10^5 pending entries.
//!
//! Two exchange groups: `exchange` hands the forwarder packets pre-encoded in a pool of 2^17
//! (cold in cache, as a worst case); `exchange_rx` writes each packet into a receive buffer
//! first, as a socket read delivers it (the copy is part of the measured time).
//!
//! `cargo bench -p nameway-fw --bench pipeline -- --warm-up-time 1 --measurement-time 3`

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use core::time::Duration;
use std::hint::black_box;

use bytes::{BufMut, Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nameway_fw::{Config, FaceId, FaceScope, Forwarder, LinkType, Time, Transmit};
use nameway_wire::{Component, Data, Interest, MetaInfo, Name, NameHasher};

/// Distinct names cycled through; more than the CS capacity, so every exchange misses the CS
/// and evicts (LRU with a cyclic pattern larger than the cache never hits).
const POOL: usize = 1 << 17;
const CS_CAPACITY: usize = 1 << 16;

fn prefix(components: usize) -> String {
    let mut s = String::from("/bench");
    for c in ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
        .iter()
        .take(components - 2)
    {
        s.push('/');
        s.push_str(c);
    }
    s
}

fn names(components: usize, n: usize) -> Vec<Name> {
    let p = prefix(components);
    (0..n)
        .map(|i| format!("{p}/seq={i}").parse().unwrap())
        .collect()
}

fn interest(name: &Name, nonce: u32, lifetime_ms: Option<u64>) -> Bytes {
    let mut i = Interest::new(name.clone());
    i.nonce = Some(nonce);
    i.lifetime_ms = lifetime_ms;
    i.encode()
}

fn data(name: &Name) -> Bytes {
    let mut d = Data::new(name.clone(), Bytes::from(vec![0x5a; 100]));
    d.meta_info = Some(MetaInfo {
        freshness_period: Some(10_000),
        ..MetaInfo::default()
    });
    d.signature_value = Bytes::from(vec![0; 32]);
    d.encode()
}

struct Setup {
    fw: Forwarder,
    consumer: FaceId,
    producer: FaceId,
}

/// A forwarder with a consumer face, a producer face holding `/bench`, and `routes - 1` other
/// routes spread over lengths 1 to 3 so that a look-up probes three large tables.
fn setup(routes: usize, cs_capacity: usize) -> Setup {
    let config = Config {
        hasher: Some(NameHasher::with_seed(1)),
        cs_capacity,
        ..Config::default()
    };
    let mut fw = Forwarder::new(config);
    let consumer = fw.add_face(FaceScope::Local, LinkType::PointToPoint);
    let producer = fw.add_face(FaceScope::NonLocal, LinkType::PointToPoint);
    fw.add_nexthop(&"/bench".parse().unwrap(), producer, 10)
        .unwrap();
    let other = fw.add_face(FaceScope::NonLocal, LinkType::PointToPoint);
    for i in 1..routes {
        let p = match i % 3 {
            0 => format!("/x{i}"),
            1 => format!("/bench/x{i}"),
            _ => format!("/bench/a/x{i}"),
        };
        fw.add_nexthop(&p.parse().unwrap(), other, 1).unwrap();
    }
    Setup {
        fw,
        consumer,
        producer,
    }
}

/// Interest from the consumer, out to the producer; Data back, out to the consumer; timers.
fn one_exchange(
    fw: &mut Forwarder,
    now: Time,
    consumer: FaceId,
    producer: FaceId,
    (interest, data): (Bytes, Bytes),
) -> (Option<Transmit>, Option<Transmit>) {
    fw.handle_packet(now, consumer, interest);
    let up = fw.poll_transmit();
    fw.handle_packet(now, producer, data);
    let down = fw.poll_transmit();
    if fw.poll_timeout().is_some_and(|t| t <= now) {
        fw.handle_timeout(now);
    }
    (up, down)
}

fn assert_all_satisfied(fw: &Forwarder) {
    let st = fw.status();
    assert_eq!(
        st.counters.n_satisfied_interests, st.counters.n_in_interests,
        "every exchange satisfied"
    );
}

fn exchange(c: &mut Criterion) {
    let mut group = c.benchmark_group("exchange");
    group.throughput(Throughput::Elements(1));
    for components in [4, 11] {
        let pool = names(components, POOL);
        let interests: Vec<Bytes> = pool
            .iter()
            .enumerate()
            .map(|(i, n)| interest(n, i as u32, None))
            .collect();
        let datas: Vec<Bytes> = pool.iter().map(data).collect();
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

/// A receive buffer: packets are copied in from a template, with their sequence number (a
/// four-octet SequenceNum component) and Nonce patched, and split off as a face's read
/// would hand them over.
struct RxBuffer {
    buf: BytesMut,
}

impl RxBuffer {
    fn new() -> Self {
        Self {
            buf: BytesMut::with_capacity(1 << 16),
        }
    }

    fn receive(&mut self, template: &[u8], patches: &[(usize, u32)]) -> Bytes {
        if self.buf.capacity() < template.len() {
            self.buf = BytesMut::with_capacity(1 << 16);
        }
        self.buf.put_slice(template);
        for &(at, v) in patches {
            self.buf[at..at + 4].copy_from_slice(&v.to_be_bytes());
        }
        self.buf.split().freeze()
    }
}

fn offset_of(hay: &[u8], needle: u32) -> usize {
    let needle = needle.to_be_bytes();
    hay.windows(4).position(|w| w == needle).unwrap()
}

fn exchange_rx(c: &mut Criterion) {
    const SEQ: u32 = 0xa1b2_c3d4;
    const NONCE: u32 = 0x5566_7788;
    let mut group = c.benchmark_group("exchange_rx");
    group.throughput(Throughput::Elements(1));
    for components in [4, 11] {
        let name = prefix(components)
            .parse::<Name>()
            .unwrap()
            .append(&Component::sequence_num(u64::from(SEQ)))
            .unwrap();
        let it = interest(&name, NONCE, None);
        let dt = data(&name);
        let (i_seq, i_nonce, d_seq) = (
            offset_of(&it, SEQ),
            offset_of(&it, NONCE),
            offset_of(&dt, SEQ),
        );
        for routes in [1, 1_000, 1_000_000] {
            let Setup {
                mut fw,
                consumer,
                producer,
            } = setup(routes, CS_CAPACITY);
            let mut rx = RxBuffer::new();
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
                    let interest = rx.receive(&it, &[(i_seq, k), (i_nonce, i)]);
                    let data = rx.receive(&dt, &[(d_seq, k)]);
                    black_box(one_exchange(
                        &mut fw,
                        now,
                        consumer,
                        producer,
                        (interest, data),
                    ));
                });
            });
            assert_all_satisfied(&fw);
        }
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
        assert!(fw.status().cs.hits > 0);
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

criterion_group!(benches, exchange, exchange_rx, cs_hit, pit_insert);
criterion_main!(benches);
