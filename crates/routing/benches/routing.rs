#![allow(missing_docs)] // criterion_group! generates an undocumented pub fn
#![allow(clippy::unwrap_used)] // fixed, valid inputs: a failure is a broken benchmark
//! Chain verification and the RIB service's look-ups:
//! `cargo bench -p nameway-routing --bench routing`.
//!
//! Times are the benchmark thread's CPU time (Linux `/proc/thread-self/schedstat`), not wall
//! time, so that other processes on a shared machine do not count (wall time is inflated by
//! the time the thread waits for a core). "Per core" figures are 1 / time. The kernel updates
//! that counter at scheduler ticks (every few ms), so every sample runs about half a second
//! (20 flat samples in 10 s): the tick is then below 1 % of a sample.
//!
//! - `baseline/*`, measured in the same run to compare against: one Ed25519 signature check
//!   over an announcement's signed portion with the key already parsed, one key parse from
//!   SubjectPublicKeyInfo DER (a point decompression), one SHA-256 of a chain's bytes;
//! - `verify/cold_two_signatures`: distinct chains (each its own owner and its own router,
//!   so its own locator record), caches of one entry: every iteration checks two Ed25519
//!   signatures, parses two keys and hashes both records: chains per second = 1 / time;
//! - `verify/cold_shared_router`: distinct announcements delegated to one router: the locator
//!   record comes from its cache, one signature per chain (the usual case: many names per
//!   router);
//! - `verify/cached`: the same chain again: the steady state, a SHA-256 of both records and
//!   a table look-up;
//! - `registry/get`: a registry of 100 000 names (100 routers), a random name's record;
//! - `registry/answer`: the same plus the answer Data a RIB service sends (DigestSha256).

use std::hint::black_box;
use std::time::Duration;

use bytes::Bytes;
use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use nameway_routing::rib::{self, Answer};
use nameway_routing::{
    Announcement, ChainVerifier, KeyHash, LocatorRecord, NameKey, Origin, Registry, VerifierConfig,
};
use nameway_wire::security::{DigestSha256, Ed25519Verifier};
use nameway_wire::Verifier;
use sha2::{Digest, Sha256};

/// CPU time of the calling thread in ns (`/proc/thread-self/schedstat`, first field).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Criterion measurement: the benchmark thread's CPU time.
struct ThreadCpu {
    wall: WallTime,
}

impl Measurement for ThreadCpu {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        thread_cpu_ns()
    }

    fn end(&self, start: u64) -> u64 {
        thread_cpu_ns().saturating_sub(start)
    }

    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }

    fn zero(&self) -> u64 {
        0
    }

    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        // Values are nanoseconds, as wall-time values are.
        self.wall.formatter()
    }
}

const T: u64 = 1_760_000_000_000;
const LIFE: u64 = 600_000;

fn router(i: usize) -> (NameKey, LocatorRecord) {
    let k = NameKey::generate().unwrap();
    let loc = LocatorRecord::build(
        &k,
        &[format!("udp4://10.0.{}.{}:6363", i / 250, i % 250)],
        T,
        LIFE,
    )
    .unwrap();
    (k, loc)
}

fn chain(router: &(NameKey, LocatorRecord)) -> (Bytes, Bytes) {
    let owner = NameKey::generate().unwrap();
    let pa = Announcement::delegation(&owner, &router.0.hash(), T, LIFE).unwrap();
    (pa.wire().clone(), router.1.wire().clone())
}

/// A verifier that remembers one chain and one locator record: no hits on distinct inputs.
fn cold_verifier() -> ChainVerifier {
    ChainVerifier::new(VerifierConfig {
        chain_cache_capacity: 1,
        locator_cache_capacity: 1,
        ..VerifierConfig::default()
    })
}

fn baseline(c: &mut Criterion<ThreadCpu>) {
    let mut g = c.benchmark_group("baseline");
    g.sampling_mode(SamplingMode::Flat);
    let (a, l) = chain(&router(0));
    let pa = Announcement::decode(a.clone()).unwrap();
    let spki = pa.public_key().unwrap().clone();
    let key = Ed25519Verifier::from_public_key_der(&spki).unwrap();
    let signed = pa.view().signed_portion().to_vec();
    let sig = pa.view().signature_value();
    g.bench_function("ed25519_verify", |b| {
        b.iter(|| key.verify(5, &[black_box(&signed)], &sig).unwrap())
    });
    g.bench_function("ed25519_parse_spki", |b| {
        b.iter(|| Ed25519Verifier::from_public_key_der(black_box(&spki)).unwrap())
    });
    g.bench_function("sha256_chain", |b| {
        b.iter(|| {
            let mut h = Sha256::new();
            h.update(black_box(&a));
            h.update(black_box(&l));
            h.finalize()
        })
    });
    g.finish();
}

fn verify(c: &mut Criterion<ThreadCpu>) {
    let mut g = c.benchmark_group("verify");
    g.sampling_mode(SamplingMode::Flat);
    let distinct: Vec<(Bytes, Bytes)> = (0..512).map(|i| chain(&router(i))).collect();
    let mut v = cold_verifier();
    let mut i = 0;
    g.bench_function("cold_two_signatures", |b| {
        b.iter(|| {
            let (a, l) = &distinct[i % distinct.len()];
            i += 1;
            black_box(v.verify(T, a, l, Origin::Direct).unwrap());
        })
    });
    assert_eq!(v.counters().cache_hits + v.counters().locator_cache_hits, 0);

    let r = router(0);
    let shared: Vec<(Bytes, Bytes)> = (0..512).map(|_| chain(&r)).collect();
    let mut v = ChainVerifier::new(VerifierConfig {
        chain_cache_capacity: 1,
        ..VerifierConfig::default()
    });
    let mut i = 0;
    g.bench_function("cold_shared_router", |b| {
        b.iter(|| {
            let (a, l) = &shared[i % shared.len()];
            i += 1;
            black_box(v.verify(T, a, l, Origin::Direct).unwrap());
        })
    });
    assert_eq!(v.counters().cache_hits, 0);

    let (a, l) = &distinct[0];
    let mut v = ChainVerifier::new(VerifierConfig::default());
    v.verify(T, a, l, Origin::Direct).unwrap();
    let before = v.counters().signatures_verified;
    g.bench_function("cached", |b| {
        b.iter(|| black_box(v.verify(T, a, l, Origin::Direct).unwrap()))
    });
    assert_eq!(v.counters().signatures_verified, before);
    g.finish();
}

fn registry(c: &mut Criterion<ThreadCpu>) {
    let mut g = c.benchmark_group("registry");
    g.sampling_mode(SamplingMode::Flat);
    let routers: Vec<_> = (0..100).map(router).collect();
    let mut v = ChainVerifier::new(VerifierConfig::default());
    let mut reg = Registry::with_capacity(100_000);
    let mut names = Vec::with_capacity(100_000);
    for i in 0..100_000 {
        let (a, l) = chain(&routers[i % routers.len()]);
        let route = v.verify(T, &a, &l, Origin::Direct).unwrap();
        names.push(route.h);
        reg.insert(&route);
    }
    // A fixed pseudo-random order, so look-ups miss the CPU caches as a RIB service's would.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let order: Vec<KeyHash> = (0..65_536)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            names[(x % names.len() as u64) as usize]
        })
        .collect();
    let mut i = 0;
    g.bench_function("get", |b| {
        b.iter(|| {
            let h = &order[i % order.len()];
            i += 1;
            black_box(reg.get(h, T).unwrap());
        })
    });
    let prefix = "/example/32=RIB".parse().unwrap();
    let mut i = 0;
    g.bench_function("answer", |b| {
        b.iter(|| {
            let h = &order[i % order.len()];
            i += 1;
            let rec = reg.get(h, T).unwrap();
            let name = rib::lookup_name(&prefix, h).unwrap();
            let answer = Answer::Found {
                announcement: rec.announcement,
                locator: rec.locator,
            };
            black_box(rib::encode_answer(&name, &answer, 1000, &DigestSha256).unwrap());
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .with_measurement(ThreadCpu { wall: WallTime })
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10));
    targets = baseline, verify, registry
}
criterion_main!(benches);
