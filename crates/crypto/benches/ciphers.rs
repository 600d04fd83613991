//! Every suite in one criterion group, so they are comparable in one run:
//! `cargo bench -p nameway-crypto --bench ciphers -- --warm-up-time 1 --measurement-time 3`.
//!
//! Each iteration seals one payload in place through the provider trait
//! (`PayloadCipher::seal_in_place_detached`, empty associated data), exactly
//! as `nameway_crypto::bench::run` does. CPA is built with the `danger_`
//! constructor because it is the published baseline, not encryption.
#![allow(missing_docs)] // criterion_group! generates an undocumented pub fn
#![allow(clippy::unwrap_used)] // a bench may panic on a broken suite

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nameway_crypto::bench::DEFAULT_SIZES;
use nameway_crypto::forro14::Forro14Backend;
use nameway_crypto::Suite;

fn ciphers(c: &mut Criterion) {
    eprintln!("forro14 backend: {}", Forro14Backend::detect().name());
    let mut group = c.benchmark_group("ciphers");
    for suite in Suite::ALL {
        let key: Vec<u8> = (0..suite.key_len()).map(|i| 0x5a ^ i as u8).collect();
        let cipher = suite.danger_new_cipher(&key).unwrap();
        let nonce = vec![0x24u8; suite.nonce_len()];
        for size in DEFAULT_SIZES {
            let mut buf = vec![0xa5u8; size];
            group.throughput(Throughput::Bytes(size as u64));
            group.bench_with_input(BenchmarkId::new(suite.name(), size), &size, |b, _| {
                b.iter(|| {
                    cipher
                        .seal_in_place_detached(black_box(&nonce), &[], black_box(&mut buf))
                        .unwrap()
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, ciphers);
criterion_main!(benches);
