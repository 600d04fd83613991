//! Secure links: the link-service cost per packet of every level (seal on the sender, open on
//! the receiver) for a Data of 1500 bytes on the wire, and the cost of one Noise XX handshake
//! (both sides' work, in one thread); and, for each AEAD level, the same Data sealed with a
//! group key against the pairwise session key (`group_key_1500B`, same run).
//!
//! `cargo bench -p nameway-face --bench secure -- --warm-up-time 1 --measurement-time 3`

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::sync::Arc;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use nameway_face::secure::{
    GroupKeyGrant, Identity, LevelLookup, SecureLink, SecureMode, SecurityContext, SecuritySettings,
};
use nameway_wire::lp::{LpPacket, SecurityLevel};
use nameway_wire::{Data, Name};

#[derive(Debug)]
struct All(SecurityLevel);

impl LevelLookup for All {
    fn level(&self, _: &Name) -> SecurityLevel {
        self.0
    }

    fn is_empty(&self) -> bool {
        self.0 == SecurityLevel::None
    }
}

fn ctx(me: &Identity, peer: &Identity, level: SecurityLevel) -> Arc<SecurityContext> {
    Arc::new(SecurityContext::new(
        me.clone(),
        [peer.public_key()],
        Arc::new(All(level)),
        SecuritySettings::default(),
    ))
}

fn value(pkt: &Bytes) -> Bytes {
    LpPacket::decode(pkt).unwrap().link_handshake.unwrap()
}

/// Runs a whole handshake; returns the two links.
fn handshake(a: &SecureLink, b: &SecureLink) {
    let init = a.poll(0).unwrap();
    let resp = b.on_handshake(0, &value(&init)).unwrap();
    let fin = a.on_handshake(0, &value(&resp)).unwrap();
    let confirm = b.on_handshake(0, &value(&fin)).unwrap();
    a.on_handshake(0, &value(&confirm));
}

fn pair(level: SecurityLevel, mode: SecureMode) -> (SecureLink, SecureLink) {
    pair_with(level, mode, |_| {})
}

/// A pair whose contexts `setup` prepared before the handshake.
fn pair_with(
    level: SecurityLevel,
    mode: SecureMode,
    setup: impl Fn(&SecurityContext),
) -> (SecureLink, SecureLink) {
    let (ia, ib) = (Identity::generate().unwrap(), Identity::generate().unwrap());
    let (ca, cb) = (ctx(&ia, &ib, level), ctx(&ib, &ia, level));
    setup(&ca);
    setup(&cb);
    let a = SecureLink::new(ca, Some(mode));
    let b = SecureLink::new(cb, None);
    handshake(&a, &b);
    (a, b)
}

/// A Data of 1500 bytes on the wire, named like a segment.
fn data_1500() -> Bytes {
    let name: Name = "/bench/object/v=1/seg=42".parse().unwrap();
    let probe = Data::new(name.clone(), Bytes::new()).encode().len();
    let content = vec![0x5a; 1500 - probe - 4];
    let d = Data::new(name, Bytes::from(content)).encode();
    assert!((1490..=1510).contains(&d.len()), "{}", d.len());
    d
}

fn per_packet(c: &mut Criterion) {
    let data = data_1500();
    let mut group = c.benchmark_group("secure_link_1500B");
    group.throughput(Throughput::Bytes(data.len() as u64));
    for level in SecurityLevel::ALL {
        let (a, b) = pair(level, SecureMode::PerPrefix);
        group.bench_with_input(BenchmarkId::new("seal", level.name()), &data, |bch, d| {
            bch.iter(|| black_box(a.seal(1, d.clone()).unwrap()));
        });
        group.bench_with_input(BenchmarkId::new("open", level.name()), &data, |bch, d| {
            bch.iter_batched(
                || a.seal(1, d.clone()).unwrap(),
                |sealed| black_box(b.open(1, sealed).unwrap()),
                BatchSize::SmallInput,
            );
        });
    }
    // Link-wide mode: the whole packet, with the default link level.
    let (a, b) = pair(SecurityLevel::None, SecureMode::LinkWide);
    group.bench_with_input(
        BenchmarkId::new("seal", "link-wide-xforro14-poly1305"),
        &data,
        |bch, d| bch.iter(|| black_box(a.seal(1, d.clone()).unwrap())),
    );
    group.bench_with_input(
        BenchmarkId::new("open", "link-wide-xforro14-poly1305"),
        &data,
        |bch, d| {
            bch.iter_batched(
                || a.seal(1, d.clone()).unwrap(),
                |sealed| black_box(b.open(1, sealed).unwrap()),
                BatchSize::SmallInput,
            );
        },
    );
    group.finish();
}

/// Group sealing against pairwise sealing, per AEAD level: the same Data, the same link; the
/// group pair holds a group key for `/bench`.
fn group_vs_pairwise(c: &mut Criterion) {
    let data = data_1500();
    let mut group = c.benchmark_group("group_key_1500B");
    group.throughput(Throughput::Bytes(data.len() as u64));
    for level in SecurityLevel::ALL.into_iter().filter(|l| l.authenticates()) {
        let pairwise = pair(level, SecureMode::PerPrefix);
        let grouped = pair_with(level, SecureMode::PerPrefix, |ctx| {
            let errors = ctx.group_keys().install(vec![GroupKeyGrant {
                prefix: "/bench".parse().unwrap(),
                level,
                id: 0x0123_4567_89ab_cdef,
                label: "/bench#0123456789abcdef".into(),
                key: zeroize::Zeroizing::new([7; 32]),
                not_before_ms: 0,
                not_after_ms: u64::MAX,
            }]);
            assert!(errors.is_empty());
        });
        let sealed = grouped.0.seal(1, data.clone()).unwrap();
        assert!(LpPacket::decode(&sealed)
            .unwrap()
            .link_security
            .unwrap()
            .group
            .is_some());
        for (what, (a, b)) in [("pairwise", &pairwise), ("group", &grouped)] {
            let id = format!("{}/{what}", level.name());
            group.bench_with_input(BenchmarkId::new("seal", &id), &data, |bch, d| {
                bch.iter(|| black_box(a.seal(1, d.clone()).unwrap()));
            });
            group.bench_with_input(BenchmarkId::new("open", &id), &data, |bch, d| {
                bch.iter_batched(
                    || a.seal(1, d.clone()).unwrap(),
                    |sealed| black_box(b.open(1, sealed).unwrap()),
                    BatchSize::SmallInput,
                );
            });
        }
    }
    group.finish();
}

fn handshakes(c: &mut Criterion) {
    let (ia, ib) = (Identity::generate().unwrap(), Identity::generate().unwrap());
    let ca = ctx(&ia, &ib, SecurityLevel::ChaCha20Poly1305);
    let cb = ctx(&ib, &ia, SecurityLevel::ChaCha20Poly1305);
    let mut group = c.benchmark_group("handshake");
    group.throughput(Throughput::Elements(1));
    group.bench_function("noise_xx_both_sides", |bch| {
        bch.iter(|| {
            let a = SecureLink::new(ca.clone(), Some(SecureMode::PerPrefix));
            let b = SecureLink::new(cb.clone(), None);
            handshake(&a, &b);
            black_box((a, b))
        });
    });
    // What a responder spends per handshake it serves: answering an Init, then taking the
    // Finish (the two add up to its share).
    let fresh = || {
        let a = SecureLink::new(ca.clone(), Some(SecureMode::PerPrefix));
        let b = SecureLink::new(cb.clone(), None);
        let init = a.poll(0).unwrap();
        (a, b, init)
    };
    group.bench_function("responder_init", |bch| {
        bch.iter_batched(
            fresh,
            |(_a, b, init)| black_box(b.on_handshake(0, &value(&init)).unwrap()),
            BatchSize::SmallInput,
        );
    });
    group.bench_function("responder_finish", |bch| {
        bch.iter_batched(
            || {
                let (a, b, init) = fresh();
                let resp = b.on_handshake(0, &value(&init)).unwrap();
                let fin = a.on_handshake(0, &value(&resp)).unwrap();
                (b, fin)
            },
            |(b, fin)| black_box(b.on_handshake(0, &value(&fin)).unwrap()),
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

criterion_group!(benches, per_packet, group_vs_pairwise, handshakes);
criterion_main!(benches);
