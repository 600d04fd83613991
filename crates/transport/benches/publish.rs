//! Publication throughput in process: segments built and signed per second, per-packet with
//! each signature kind and with manifests of 32 and 256 digests (one signature per manifest,
//! DigestSha256 on the segments). The table of manifest against per-packet signing.
//!
//!     cargo bench -p nameway-transport --bench publish
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nameway_transport::{Publication, PublishOptions, SignatureKind, SigningKey};

/// 1 MiB at 1400-byte payloads: 749 segments.
const SIZE: usize = 1 << 20;
const PAYLOAD: usize = 1400;

fn publish(c: &mut Criterion) {
    let data: Bytes = (0..SIZE).map(|i| (i * 7 + i / 251) as u8).collect();
    let segments = SIZE.div_ceil(PAYLOAD) as u64;
    let mut group = c.benchmark_group("publish");
    group.sample_size(10);
    group.throughput(Throughput::Elements(segments));
    for kind in SignatureKind::ALL {
        let key = SigningKey::generate(kind).unwrap();
        let manifests: &[Option<usize>] = if kind == SignatureKind::Digest {
            &[None]
        } else {
            &[None, Some(32), Some(256)]
        };
        for &manifest in manifests {
            let id = match manifest {
                None => format!("{kind}/packet"),
                Some(n) => format!("{kind}/manifest{n}"),
            };
            group.bench_function(BenchmarkId::from_parameter(id), |b| {
                b.iter(|| {
                    Publication::from_bytes(
                        "/bench/object".parse().unwrap(),
                        data.clone(),
                        key.clone(),
                        PublishOptions {
                            payload_size: PAYLOAD,
                            manifest,
                            version: Some(1),
                            ..PublishOptions::default()
                        },
                    )
                    .unwrap()
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, publish);
criterion_main!(benches);
