#![allow(missing_docs)] // criterion_group! generates an undocumented pub fn
#![allow(clippy::unwrap_used)] // fixed, valid inputs: a failure is a broken benchmark
//! The codec on the forwarding path, at 4 and 11 name components:
//! `cargo bench -p nameway-wire --bench codec -- --warm-up-time 1 --measurement-time 3`.
//!
//! - `decode/*`: the checked views the forwarder uses (`InterestView::new_checked`,
//!   `DataView::new_checked`) and the full owned decoders (`Interest::decode`, which also hashes
//!   the parameters when there are any, and `Data::decode`);
//! - `encode/*`: `Interest::encode` and `Data::encode` (1 KiB Content, DigestSha256 signature
//!   computed once beforehand);
//! - `name/prefix_hashes`: `NameHasher::prefix_hashes`, the per-packet hashing of docs/design.md §3;
//! - `name/parse_uri`: `Name::from_str` on the canonical URI.
//!
//! Decoding takes a `Bytes` by value, so each iteration includes one reference-count bump.

use std::hint::black_box;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use nameway_wire::data::MetaInfo;
use nameway_wire::security::DigestSha256;
use nameway_wire::{Data, DataView, Interest, InterestView, Name, NameHasher};

/// URIs of 4 and 11 components, typical of application names (generic components, then a
/// version and a segment for the long one).
const URIS: [(usize, &str); 2] = [
    (4, "/ndn/edu/arizona/video"),
    (
        11,
        "/ndn/edu/arizona/cs/lab/users/alice/videos/lecture-01/v=1700000000000/seg=42",
    ),
];

fn interest(name: &Name) -> Interest {
    Interest {
        must_be_fresh: true,
        nonce: Some(0x7e7c_f9ce),
        lifetime_ms: Some(4000),
        hop_limit: Some(64),
        ..Interest::new(name.clone())
    }
}

fn data(name: &Name) -> Data {
    let content: Vec<u8> = (0..1024u32).map(|i| i as u8).collect();
    let mut d = Data::new(name.clone(), content);
    d.meta_info = Some(MetaInfo {
        freshness_period: Some(10_000),
        ..MetaInfo::default()
    });
    d.sign(&DigestSha256).unwrap();
    d
}

fn names() -> Vec<(usize, Name)> {
    URIS.iter()
        .map(|&(n, uri)| (n, uri.parse().unwrap()))
        .collect()
}

fn decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode");
    for (n, name) in names() {
        let iwire: Bytes = interest(&name).encode();
        let dwire: Bytes = data(&name).encode();
        group.bench_with_input(BenchmarkId::new("interest_view", n), &iwire, |b, w| {
            b.iter(|| InterestView::new_checked(black_box(w.clone())).unwrap())
        });
        group.bench_with_input(BenchmarkId::new("interest_owned", n), &iwire, |b, w| {
            b.iter(|| Interest::decode(black_box(w)).unwrap())
        });
        group.bench_with_input(BenchmarkId::new("data_view", n), &dwire, |b, w| {
            b.iter(|| DataView::new_checked(black_box(w.clone())).unwrap())
        });
        group.bench_with_input(BenchmarkId::new("data_owned", n), &dwire, |b, w| {
            b.iter(|| Data::decode(black_box(w)).unwrap())
        });
    }
    group.finish();
}

fn encode(c: &mut Criterion) {
    let mut group = c.benchmark_group("encode");
    for (n, name) in names() {
        let i = interest(&name);
        let d = data(&name);
        group.bench_with_input(BenchmarkId::new("interest", n), &i, |b, i| {
            b.iter(|| black_box(i).encode())
        });
        group.bench_with_input(BenchmarkId::new("data", n), &d, |b, d| {
            b.iter(|| black_box(d).encode())
        });
    }
    group.finish();
}

fn name(c: &mut Criterion) {
    let mut group = c.benchmark_group("name");
    let hasher = NameHasher::with_seed(0x6e61_6d65);
    for (n, name) in names() {
        group.bench_with_input(BenchmarkId::new("prefix_hashes", n), &name, |b, name| {
            b.iter(|| hasher.prefix_hashes(black_box(name)))
        });
        let uri = name.to_string();
        group.bench_with_input(BenchmarkId::new("parse_uri", n), &uri, |b, uri| {
            b.iter(|| black_box(uri.as_str()).parse::<Name>().unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, decode, encode, name);
criterion_main!(benches);
