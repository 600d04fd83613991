//! The consumer against a producer on the other end of a real Unix socket (no forwarder in
//! between, so that losses and tampering are exactly those the test makes): whole objects
//! arrive identical under every signature kind, with manifests, under loss, with every
//! congestion controller; a tampered segment fails verification naming the segment.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use nameway_transport::client::{Client, Transport};
use nameway_transport::{
    fetch, CcKind, CcOptions, FetchError, FetchOptions, Publication, PublishOptions, SignatureKind,
    SigningKey, VerifyKey,
};
use nameway_wire::StreamFramer;
use nameway_wire::{Data, InterestView, Name};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixListener;

fn object(len: usize) -> Bytes {
    let mut x = 0x1234_5678_u32;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// A Unix socket listening in a fresh directory (kept as long as the `TempDir` lives).
fn listen() -> (tempfile::TempDir, std::path::PathBuf, UnixListener) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.sock");
    let listener = UnixListener::bind(&path).unwrap();
    (dir, path, listener)
}

/// Answers Interests from `publication` on one accepted connection, dropping every Interest
/// for which `drop(i)` is true (`i` counts Interests received). Returns the Interest counter.
async fn producer(
    publication: Publication,
    drop: impl Fn(u64) -> bool + Send + 'static,
) -> (Transport, Arc<AtomicU64>) {
    producer_injecting(publication, drop, Vec::new()).await
}

/// [`producer`] that also sends `inject`, unasked, right after its first answer.
async fn producer_injecting(
    publication: Publication,
    drop: impl Fn(u64) -> bool + Send + 'static,
    mut inject: Vec<Bytes>,
) -> (Transport, Arc<AtomicU64>) {
    let (dir, path, listener) = listen();
    let count = Arc::new(AtomicU64::new(0));
    let seen = count.clone();
    let mut publication = publication;
    tokio::spawn(async move {
        let _dir = dir;
        common::serve_one(listener, move |packet| {
            let i = seen.fetch_add(1, Ordering::Relaxed);
            if drop(i) {
                return Vec::new();
            }
            let view = InterestView::new_checked(packet).unwrap();
            let Some(data) = publication.answer(&view) else {
                return Vec::new();
            };
            let mut out = data.to_vec();
            for extra in inject.drain(..) {
                out.extend_from_slice(&extra);
            }
            out
        })
        .await;
    });
    (Transport::Unix(path), count)
}

async fn get(
    transport: Transport,
    name: &str,
    options: &FetchOptions,
) -> (Vec<u8>, Result<nameway_transport::FetchReport, FetchError>) {
    let mut client = Client::connect(transport).await.unwrap();
    let mut out = Vec::new();
    let result = fetch(
        &mut client,
        &name.parse::<Name>().unwrap(),
        options,
        &mut out,
        &mut |_| {},
    )
    .await;
    (out, result)
}

fn publish(data: &Bytes, key: SigningKey, payload: usize, manifest: Option<usize>) -> Publication {
    Publication::from_bytes(
        "/obj".parse().unwrap(),
        data.clone(),
        key,
        PublishOptions {
            payload_size: payload,
            manifest,
            version: Some(7),
            ..PublishOptions::default()
        },
    )
    .unwrap()
}

/// An Ed25519-signed publication of `data` in 1000-B segments (signed one by one, or by
/// manifests of `manifest`) and fetch options that verify it against its key.
fn signed(data: &Bytes, manifest: Option<usize>) -> (Publication, FetchOptions) {
    let key = SigningKey::generate(SignatureKind::Ed25519).unwrap();
    let options = FetchOptions {
        verify: key.verify_key(),
        ..FetchOptions::default()
    };
    (publish(data, key, 1000, manifest), options)
}

#[tokio::test]
async fn every_signature_kind_and_manifests_arrive_identical_and_verified() {
    let data = object(300_000);
    for kind in SignatureKind::ALL {
        for manifest in [None, Some(32)] {
            if kind == SignatureKind::Digest && manifest.is_some() {
                continue;
            }
            let key = SigningKey::generate(kind).unwrap();
            let verify = key.verify_key();
            let publication = publish(&data, key, 1400, manifest);
            assert_eq!(publication.segment_count(), 300_000u64.div_ceil(1400));
            let (transport, _) = producer(publication, |_| false).await;
            let options = FetchOptions {
                verify,
                ..FetchOptions::default()
            };
            let (out, report) = get(transport, "/obj", &options).await;
            let report = report.unwrap_or_else(|e| panic!("{kind} {manifest:?}: {e}"));
            assert!(out == data, "{kind} {manifest:?}: content differs");
            assert_eq!(report.name.to_string(), "/obj/v=7");
            assert_eq!(report.bytes, 300_000);
            let expected = match (kind, manifest) {
                (SignatureKind::Digest, _) => "none".to_owned(),
                (k, None) => format!("packet {k}"),
                (k, Some(_)) => format!("manifest {k}"),
            };
            assert_eq!(report.verification, expected);
            if manifest.is_some() {
                assert_eq!(report.manifests, 215u64.div_ceil(32));
            }
        }
    }
}

/// Options for the loss tests: controller `kind` from a window of 8 up to 64, a 20 ms RTO floor.
fn lossy_options(kind: CcKind, verify: Option<VerifyKey>) -> FetchOptions {
    FetchOptions {
        cc: CcOptions {
            kind,
            initial_window: 8.0,
            max_window: 64.0,
        },
        min_rto: std::time::Duration::from_millis(20),
        verify,
        ..FetchOptions::default()
    }
}

#[tokio::test]
async fn losses_are_recovered_by_every_controller() {
    let data = object(200_000);
    for kind in CcKind::ALL {
        let publication = publish(&data, SigningKey::Digest, 1000, None);
        // Every 20th Interest is lost (5 %).
        let (transport, _) = producer(publication, |i| i % 20 == 19).await;
        let options = lossy_options(kind, None);
        let (out, report) = get(transport, "/obj/v=7", &options).await;
        let report = report.unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert!(out == data, "{kind}: content differs");
        assert!(report.retransmissions >= 9, "{kind}: {report:?}");
        // Found lost early (later Interests were answered), not by waiting for the RTO.
        assert!(report.fast_retransmits >= 9, "{kind}: {report:?}");
        if kind != CcKind::Fixed {
            assert!(report.window_decreases > 0, "{kind}: {report:?}");
        }
    }
}

/// Manifests under loss: lost manifests and segments are asked for again, the worker's batches
/// (256 jobs, digests in groups of 16, manifests riding with full batches) all come back, and
/// the object arrives whole and verified under every controller.
#[tokio::test]
async fn losses_with_manifests_are_recovered_and_verified() {
    let data = object(600_000);
    let key = SigningKey::generate(SignatureKind::Ed25519).unwrap();
    for kind in CcKind::ALL {
        let publication = publish(&data, key.clone(), 1000, Some(32));
        // Every 20th Interest is lost (5 %), manifests' and segments' alike.
        let (transport, _) = producer(publication, |i| i % 20 == 19).await;
        let options = lossy_options(kind, key.verify_key());
        let (out, report) = get(transport, "/obj/v=7", &options).await;
        let report = report.unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert!(out == data, "{kind}: content differs");
        assert_eq!(report.verification, "manifest ed25519", "{kind}");
        assert_eq!(report.manifests, 600u64.div_ceil(32), "{kind}");
        assert!(report.retransmissions >= 30, "{kind}: {report:?}");
    }
}

#[tokio::test]
async fn a_segment_lost_for_good_is_a_timeout_naming_it() {
    let data = object(50_000);
    let publication = publish(&data, SigningKey::Digest, 1000, None);
    // Segment 0 arrives (first Interest), then nothing ever again.
    let (transport, _) = producer(publication, |i| i > 0).await;
    let options = FetchOptions {
        max_retries: 2,
        min_rto: std::time::Duration::from_millis(10),
        max_rto: std::time::Duration::from_millis(50),
        ..FetchOptions::default()
    };
    let (out, report) = get(transport, "/obj/v=7", &options).await;
    let err = report.unwrap_err().to_string();
    // Segments 1 and 2 are in flight (window 2); whichever runs out of retries first (the
    // newest also gets the tail loss probe) is named.
    assert!(
        (err.contains("/obj/v=7/seg=1 ") || err.contains("/obj/v=7/seg=2 "))
            && err.contains("after 2 retransmissions"),
        "{err}"
    );
    assert_eq!(out.len(), 1000, "only what arrived in order was written");
}

#[tokio::test]
async fn data_never_asked_for_is_ignored_however_far_ahead_its_number() {
    // A forwarder passes on only Data that an Interest asked for; a consumer connected to one
    // that does not (or to a producer directly) must not plan for segment 2^40 when it
    // arrives: that meant a table of 2^40 slots, an allocation failure and an abort.
    let data = object(100_000);
    for manifest in [None, Some(32)] {
        let (mut publication, options) = signed(&data, manifest);
        let mut inject = Vec::new();
        for name in [
            "/obj/v=7/seg=1099511627776",
            "/obj/v=7/32=manifest/seg=1099511627776",
            "/obj/v=7/seg=99",
        ] {
            let mut d = Data::decode(&publication.segment(1).unwrap()).unwrap();
            d.name = name.parse().unwrap();
            inject.push(d.encode());
        }
        let (transport, _) = producer_injecting(publication, |_| false, inject).await;
        let (out, report) = get(transport, "/obj", &options).await;
        report.unwrap_or_else(|e| panic!("{manifest:?}: {e}"));
        assert!(out == data, "{manifest:?}: object differs");
    }
}

#[tokio::test]
async fn a_final_block_id_at_the_largest_number_ends_in_a_timeout_not_a_crash() {
    let data = object(20_000);
    let mut publication = publish(&data, SigningKey::Digest, 1000, None);
    let mut d = Data::decode(&publication.segment(0).unwrap()).unwrap();
    d.meta_info.as_mut().unwrap().final_block_id = Some(nameway_wire::Component::segment(u64::MAX));
    publication.replace_segment(0, d.encode());
    let (transport, _) = producer(publication, |_| false).await;
    let options = FetchOptions {
        max_retries: 1,
        min_rto: std::time::Duration::from_millis(10),
        max_rto: std::time::Duration::from_millis(20),
        ..FetchOptions::default()
    };
    let (out, report) = get(transport, "/obj/v=7", &options).await;
    let err = report.unwrap_err();
    assert!(matches!(err, FetchError::Timeout { .. }), "{err}");
    assert!(err.to_string().contains("seg=20"), "{err}");
    assert!(out == data, "the object itself arrived whole");
}

#[tokio::test]
async fn the_segment_discovery_brings_is_not_asked_for_again() {
    // A producer without RDR metadata (as python-ndn's): discovery's CanBePrefix Interest
    // brings segment 0, and the fetch goes on from segment 1.
    let data = object(10_000);
    let publication = publish(&data, SigningKey::Digest, 1000, None);
    let (transport, seen) = producer(publication, |i| i == 0).await;
    let (out, report) = get(transport, "/obj", &FetchOptions::default()).await;
    let report = report.unwrap();
    assert!(out == data, "object differs");
    assert_eq!(report.interests, 9, "segments 1 to 9 once each: {report:?}");
    assert_eq!(
        seen.load(Ordering::Relaxed),
        11,
        "two for discovery, nine segments"
    );
}

#[tokio::test]
async fn a_cached_earlier_version_does_not_hide_the_one_the_producer_serves_now() {
    // A file published again under the same prefix: a cache still holds the earlier version's
    // segments, fresh, and answers the CanBePrefix Interest first; the producer's RDR metadata
    // names the current version and comes right after. The current version is fetched.
    let old = object(10_000);
    let new: Bytes = old.iter().map(|b| b ^ 0x5a).collect();
    let mut earlier = publish(&old, SigningKey::Digest, 1000, None);
    let mut current = Publication::from_bytes(
        "/obj".parse().unwrap(),
        new.clone(),
        SigningKey::Digest,
        PublishOptions {
            payload_size: 1000,
            version: Some(8),
            ..PublishOptions::default()
        },
    )
    .unwrap();
    let (_dir, path, listener) = listen();
    tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let mut framer = StreamFramer::default();
        let mut metadata: Option<Bytes> = None;
        loop {
            if sock.read_buf(framer.read_buffer()).await.unwrap_or(0) == 0 {
                return;
            }
            let mut out = Vec::new();
            while let Some(packet) = framer.next_packet().unwrap() {
                let view = InterestView::new_checked(packet).unwrap();
                let wanted = view.name().to_string();
                if wanted.contains("metadata") {
                    // Held until the cache has answered the CanBePrefix Interest.
                    metadata = current.answer(&view);
                } else if wanted == "/obj" {
                    out.extend_from_slice(&earlier.answer(&view).unwrap());
                    out.extend_from_slice(&metadata.take().unwrap());
                } else if let Some(d) = current.answer(&view).or_else(|| earlier.answer(&view)) {
                    out.extend_from_slice(&d);
                }
            }
            if sock.write_all(&out).await.is_err() {
                return;
            }
        }
    });
    let (out, report) = get(Transport::Unix(path), "/obj", &FetchOptions::default()).await;
    let report = report.unwrap();
    assert!(out == new, "the earlier version was fetched");
    assert_eq!(report.name.to_string(), "/obj/v=8", "{report:?}");
}

#[tokio::test]
async fn a_repeated_nack_for_the_metadata_interest_does_not_end_discovery() {
    // The forwarder Nacks the metadata Interest twice (say, once per upstream it tried) and
    // the CanBePrefix Interest finds the producer: two Nacks used to count as "both Nacked".
    use nameway_wire::lp::LpPacket;
    use nameway_wire::NackReason;
    let data = object(10_000);
    let mut publication = publish(&data, SigningKey::Digest, 1000, None);
    let (_dir, path, listener) = listen();
    tokio::spawn(common::serve_one_pausing(listener, move |packet| {
        let view = InterestView::new_checked(packet.clone()).unwrap();
        if view.name().to_string().contains("metadata") {
            let nack = LpPacket::nack(NackReason::NoRoute, packet, None).encode();
            // The Nacks go first, on their own.
            let pause = std::time::Duration::from_millis(20);
            return ([nack.clone(), nack].concat(), Some(pause));
        }
        let answer = publication.answer(&view);
        (answer.map(|d| d.to_vec()).unwrap_or_default(), None)
    }));
    let (out, report) = get(Transport::Unix(path), "/obj", &FetchOptions::default()).await;
    report.unwrap();
    assert!(out == data, "object differs");
}

#[tokio::test]
async fn duplicates_do_not_put_off_the_tail_loss_probe() {
    // The last segment's first Interest is lost, while a stale copy of segment 0 keeps
    // arriving every 5 ms: duplicates are no progress, so the probe (two RTTs, at least
    // 10 ms) finds the loss, not the RTO (200 ms at least). Duplicates used to count as
    // progress and put the probe off until the RTO fired.
    let data = object(10_000);
    let mut publication = publish(&data, SigningKey::Digest, 1000, None);
    let stale = publication.segment(0).unwrap();
    let (_dir, path, listener) = listen();
    tokio::spawn(async move {
        let (sock, _) = listener.accept().await.unwrap();
        let (mut rx, mut tx) = sock.into_split();
        let (out_tx, mut out_rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
        let stale_tx = out_tx.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                if stale_tx.send(stale.to_vec()).is_err() {
                    return;
                }
            }
        });
        tokio::spawn(async move {
            while let Some(bytes) = out_rx.recv().await {
                if tx.write_all(&bytes).await.is_err() {
                    return;
                }
            }
        });
        let mut framer = StreamFramer::default();
        let mut last_dropped = false;
        loop {
            if rx.read_buf(framer.read_buffer()).await.unwrap_or(0) == 0 {
                return;
            }
            while let Some(packet) = framer.next_packet().unwrap() {
                let view = InterestView::new_checked(packet).unwrap();
                if !last_dropped && view.name().to_string().ends_with("seg=9") {
                    last_dropped = true;
                    continue;
                }
                if let Some(d) = publication.answer(&view) {
                    let _ = out_tx.send(d.to_vec());
                }
            }
        }
    });
    let options = FetchOptions {
        cc: CcOptions {
            kind: CcKind::Fixed,
            initial_window: 16.0,
            max_window: 16.0,
        },
        ..FetchOptions::default()
    };
    let (out, report) = get(Transport::Unix(path), "/obj/v=7", &options).await;
    let report = report.unwrap();
    assert!(out == data, "object differs");
    assert_eq!((report.probes, report.timeouts), (1, 0), "{report:?}");
}

#[tokio::test]
async fn a_tampered_segment_fails_verification_naming_it() {
    let data = object(100_000);
    for manifest in [None, Some(32)] {
        let key = SigningKey::generate(SignatureKind::Ed25519).unwrap();
        let verify = key.verify_key();
        let mut publication = publish(&data, key, 1000, manifest);
        // Segment 40 with one payload byte changed, re-encoded with its old signature.
        let mut d = Data::decode(&publication.segment(40).unwrap()).unwrap();
        let mut content = d.content.clone().unwrap().to_vec();
        content[500] ^= 1;
        d.content = Some(content.into());
        publication.replace_segment(40, d.encode());
        let (transport, _) = producer(publication, |_| false).await;
        let options = FetchOptions {
            verify,
            ..FetchOptions::default()
        };
        let (out, report) = get(transport, "/obj", &options).await;
        let err = report.unwrap_err();
        assert!(
            matches!(err, FetchError::Verification { segment: 40, .. }),
            "{manifest:?}: {err}"
        );
        assert!(err.to_string().contains("seg=40"), "{err}");
        assert!(
            out.len() <= 40_000,
            "nothing past the bad segment is written"
        );
        assert!(out == data[..out.len()], "what was written is correct");
    }
}

#[tokio::test]
async fn a_wrong_key_is_refused_before_any_byte_is_written() {
    let data = object(10_000);
    let publication = publish(
        &data,
        SigningKey::generate(SignatureKind::Ed25519).unwrap(),
        1000,
        None,
    );
    let (transport, _) = producer(publication, |_| false).await;
    let other = SigningKey::generate(SignatureKind::Ed25519).unwrap();
    let options = FetchOptions {
        verify: other.verify_key(),
        ..FetchOptions::default()
    };
    let (out, report) = get(transport, "/obj", &options).await;
    let err = report.unwrap_err().to_string();
    assert!(
        err.contains("segment 0") && err.contains("ed25519"),
        "{err}"
    );
    assert!(out.is_empty());
}

#[tokio::test]
async fn a_manifest_signed_by_another_key_is_refused_naming_it_and_nothing_is_written() {
    // Manifests are checked on the consumer's worker thread; its answer must still stop the
    // fetch with the manifest's name and the reason, before any segment reaches the sink.
    let data = object(100_000);
    let publication = publish(
        &data,
        SigningKey::generate(SignatureKind::Ed25519).unwrap(),
        1000,
        Some(32),
    );
    let (transport, _) = producer(publication, |_| false).await;
    let other = SigningKey::generate(SignatureKind::Ed25519).unwrap();
    let options = FetchOptions {
        verify: other.verify_key(),
        ..FetchOptions::default()
    };
    let (out, report) = get(transport, "/obj/v=7", &options).await;
    let err = report.unwrap_err();
    assert!(
        matches!(err, FetchError::Verification { segment: 0, .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("bad ed25519 signature on manifest") && text.contains("manifest"),
        "{text}"
    );
    assert!(out.is_empty());
}

#[tokio::test]
async fn nothing_there_is_not_found_after_three_discovery_tries() {
    let data = object(10);
    let publication = publish(&data, SigningKey::Digest, 1000, None);
    let (transport, count) = producer(publication, |_| false).await;
    let options = FetchOptions {
        discovery_timeout: std::time::Duration::from_millis(50),
        ..FetchOptions::default()
    };
    let (_, report) = get(transport, "/other", &options).await;
    let err = report.unwrap_err().to_string();
    assert!(err.contains("no object under /other"), "{err}");
    assert_eq!(
        count.load(Ordering::Relaxed),
        6,
        "metadata and CanBePrefix, three times"
    );
}

#[tokio::test]
async fn manifests_are_all_asked_for_when_a_wide_window_runs_ahead_of_them() {
    // A fixed window of 256 asks for segments 0..255 before manifest 0 (8 digests) arrives:
    // manifests 1..31 must still be asked for (once, in order), or the fetch stalls.
    let data = object(400 * 500);
    for kind in [CcKind::Fixed, CcKind::Cubic] {
        let key = SigningKey::generate(SignatureKind::Ed25519).unwrap();
        let verify = key.verify_key();
        let publication = publish(&data, key, 500, Some(8));
        let (transport, count) = producer(publication, |_| false).await;
        let options = FetchOptions {
            verify,
            cc: CcOptions {
                kind,
                initial_window: 256.0,
                max_window: 256.0,
            },
            ..FetchOptions::default()
        };
        let (out, report) = get(transport, "/obj/v=7", &options).await;
        let report = report.unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert!(out == data, "{kind}: content differs");
        assert_eq!(report.manifests, 50, "{kind}");
        // Each asked for once, apart from the fetch's own retransmissions: none on an idle
        // machine, but a tail loss probe fires after 2 SRTT (10 ms at least) without Data, as
        // on a machine loaded enough to stall the producer task (seen in CI).
        assert_eq!(
            count.load(Ordering::Relaxed),
            400 + 50 + report.retransmissions,
            "{kind}: each asked for once ({} retransmissions)",
            report.retransmissions
        );
        assert!(report.retransmissions <= 2, "{kind}: {report:?}");
    }
}

#[tokio::test]
async fn a_nack_for_an_interest_never_sent_is_ignored_however_far_ahead_its_number() {
    // As for Data: a Nack names the Interest it refuses, and one for an Interest this fetch
    // never sent (a buggy or hostile forwarder) must not plan for segment or manifest 2^40
    // (a table of 2^40 slots: an allocation failure and an abort), nor end the fetch.
    use nameway_wire::lp::LpPacket;
    use nameway_wire::{Interest, NackReason};
    let data = object(100_000);
    for manifest in [None, Some(32)] {
        let (publication, options) = signed(&data, manifest);
        let inject = [
            "/obj/v=7/seg=1099511627776",
            "/obj/v=7/32=manifest/seg=1099511627776",
        ]
        .into_iter()
        .map(|name| {
            let interest = Interest {
                nonce: Some(1),
                ..Interest::new(name.parse().unwrap())
            };
            LpPacket::nack(NackReason::NoRoute, interest.encode(), None).encode()
        })
        .collect();
        let (transport, _) = producer_injecting(publication, |_| false, inject).await;
        let (out, report) = get(transport, "/obj/v=7", &options).await;
        let report = report.unwrap_or_else(|e| panic!("{manifest:?}: {e}"));
        assert!(out == data, "{manifest:?}: object differs");
        assert_eq!(report.nacks, 0, "{manifest:?}: not a Nack of ours");
    }
}

#[tokio::test]
async fn as_many_retries_as_a_u32_holds_recovers_losses() {
    // `--retries 4294967295` (retry without end): the bound on early retransmissions, four
    // times it, overflowed u32 (a debug panic; in release it wrapped to 0, failing the fetch
    // at its first early retransmission).
    let data = object(100_000);
    let publication = publish(&data, SigningKey::Digest, 1000, None);
    let (transport, _) = producer(publication, |i| i % 20 == 19).await;
    let options = FetchOptions {
        max_retries: u32::MAX,
        ..lossy_options(CcKind::Aimd, None)
    };
    let (out, report) = get(transport, "/obj/v=7", &options).await;
    let report = report.unwrap();
    assert!(out == data, "content differs");
    assert!(report.retransmissions >= 4, "{report:?}");
}

#[tokio::test]
async fn an_unbounded_window_with_verification_fetches_the_whole_object() {
    // `--max-window inf` (or any window past 2^64): how far ahead of delivery a verified
    // fetch may ask, the window as u64, saturated to u64::MAX and overflowed when added to.
    let data = object(100_000);
    for manifest in [None, Some(32)] {
        let (publication, options) = signed(&data, manifest);
        let (transport, _) = producer(publication, |_| false).await;
        let options = FetchOptions {
            cc: CcOptions {
                kind: CcKind::Aimd,
                initial_window: 8.0,
                max_window: f64::INFINITY,
            },
            ..options
        };
        let (out, report) = get(transport, "/obj/v=7", &options).await;
        report.unwrap_or_else(|e| panic!("{manifest:?}: {e}"));
        assert!(out == data, "{manifest:?}: object differs");
    }
}

#[tokio::test]
async fn durations_without_end_in_the_options_fetch_the_whole_object() {
    // Duration::MAX for "never" (no progress calls, no timeout): `Instant::now() + d`
    // overflowed and panicked. Signed under a trust anchor, so that the lifetime also bounds
    // the wait for the first signed packet (to find the signer).
    let data = object(20_000);
    let key = SigningKey::generate(SignatureKind::Ed25519).unwrap();
    let anchor =
        nameway_transport::Certificate::issue(&key, &"/obj".parse().unwrap(), None, 1).unwrap();
    let signer = key.with_certificate(&anchor).unwrap();
    type Set = fn(&mut FetchOptions);
    let fields: [(&str, Set); 5] = [
        ("progress_interval", |o| {
            o.progress_interval = std::time::Duration::MAX
        }),
        ("lifetime", |o| o.lifetime = std::time::Duration::MAX),
        ("discovery_timeout", |o| {
            o.discovery_timeout = std::time::Duration::MAX
        }),
        ("min_rto", |o| o.min_rto = std::time::Duration::MAX),
        ("max_rto", |o| o.max_rto = std::time::Duration::MAX),
    ];
    for (field, set) in fields {
        let publication = publish(&data, signer.clone(), 1000, None);
        let (transport, _) = producer(publication, |_| false).await;
        let mut options = FetchOptions {
            anchor: Some(nameway_transport::Certificate::decode(anchor.wire().clone()).unwrap()),
            ..FetchOptions::default()
        };
        set(&mut options);
        let (out, report) = get(transport, "/obj", &options).await;
        let report = report.unwrap_or_else(|e| panic!("{field}: {e}"));
        assert!(out == data, "{field}: object differs");
        assert!(
            report.verification.starts_with("packet ed25519, anchor"),
            "{field}: {}",
            report.verification
        );
    }
}

#[tokio::test]
async fn a_forged_segment_claiming_to_be_past_the_end_cannot_cut_the_object_short() {
    // FinalBlockId is optional: a producer may leave it off its first segments. A forged
    // segment 1 (not signed by the key) saying the object ended at segment 0 used to set the
    // end, then be dropped unverified as past that end: the fetch "completed", verified,
    // with segment 0 alone. It must fail verification naming segment 1 instead.
    let data = object(10_000);
    let key = SigningKey::generate(SignatureKind::Ed25519).unwrap();
    let verify = key.verify_key();
    let mut publication = publish(&data, key.clone(), 1000, None);
    let mut first = Data::decode(&publication.segment(0).unwrap()).unwrap();
    first.meta_info.as_mut().unwrap().final_block_id = None;
    first.sign(key.signer()).unwrap();
    publication.replace_segment(0, first.encode());
    let mut forged = Data::decode(&publication.segment(1).unwrap()).unwrap();
    forged.meta_info.as_mut().unwrap().final_block_id = Some(nameway_wire::Component::segment(0));
    forged.content = Some(Bytes::from_static(b"forged"));
    publication.replace_segment(1, forged.encode());
    let (transport, _) = producer(publication, |_| false).await;
    let options = FetchOptions {
        verify,
        ..FetchOptions::default()
    };
    let (out, report) = get(transport, "/obj/v=7", &options).await;
    let err = match report {
        Ok(r) => panic!(
            "completed with {} of {} bytes, verification {}",
            r.bytes,
            data.len(),
            r.verification
        ),
        Err(e) => e,
    };
    assert!(
        matches!(err, FetchError::Verification { segment: 1, .. }),
        "{err}"
    );
    assert!(out == data[..out.len()], "what was written is correct");
}
