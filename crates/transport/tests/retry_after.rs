//! A fetch whose segment Interests meet Nack NoRoute with NDNLPv2 RetryAfter (a forwarder in
//! secure routing's `nack` miss mode, resolving the name): each such segment waits as told and
//! is asked for again, within bounds; a Nack NoRoute without RetryAfter still ends the fetch.
//! The producer is on the other end of a real Unix socket and sends the Nacks itself.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use nameway_transport::client::{Client, Transport};
use nameway_transport::{
    fetch, FetchError, FetchOptions, FetchReport, Publication, PublishOptions, SignatureKind,
    SigningKey,
};
use nameway_wire::{InterestView, LpPacket, NackReason, Name};
use tokio::net::UnixListener;

/// What the producer does with an Interest: answer it, or Nack it NoRoute with this RetryAfter.
type Decide = dyn FnMut(u64, u32) -> Option<Option<u64>> + Send;

/// Every Interest the producer received: when, and for which segment.
type Log = Arc<Mutex<Vec<(Instant, u64)>>>;

fn object(len: usize) -> Bytes {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

/// Serves `data` in 1000-byte segments under `/obj/v=7` on one Unix connection. For each
/// Interest, `decide(segment, times this segment was asked)` returns `Some(retry_after)` to
/// Nack it NoRoute instead of answering.
async fn producer(data: &Bytes, mut decide: Box<Decide>) -> (Transport, Log, tempfile::TempDir) {
    let key = SigningKey::generate(SignatureKind::Digest).unwrap();
    let mut publication = Publication::from_bytes(
        "/obj".parse().unwrap(),
        data.clone(),
        key,
        PublishOptions {
            payload_size: 1000,
            version: Some(7),
            ..PublishOptions::default()
        },
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.sock");
    let listener = UnixListener::bind(&path).unwrap();
    let log: Log = Arc::default();
    let seen = log.clone();
    tokio::spawn(async move {
        let mut asked = std::collections::HashMap::<u64, u32>::new();
        common::serve_one(listener, move |packet| {
            let view = InterestView::new_checked(packet.clone()).unwrap();
            let segment = view
                .name()
                .iter()
                .last()
                .and_then(|c| c.as_segment())
                .unwrap();
            seen.lock().unwrap().push((Instant::now(), segment));
            let times = asked.entry(segment).or_default();
            *times += 1;
            match decide(segment, *times) {
                Some(retry_after) => {
                    let mut nack = LpPacket::nack(NackReason::NoRoute, packet, None);
                    nack.retry_after = retry_after;
                    nack.encode().to_vec()
                }
                None => publication.answer(&view).unwrap().to_vec(),
            }
        })
        .await;
    });
    (Transport::Unix(path), log, dir)
}

async fn get(
    transport: Transport,
    options: &FetchOptions,
) -> (Vec<u8>, Result<FetchReport, FetchError>) {
    let mut client = Client::connect(transport).await.unwrap();
    let mut out = Vec::new();
    // The versioned name: no discovery, the segment Interests meet the Nacks themselves.
    let name: Name = "/obj/v=7".parse().unwrap();
    let result = fetch(&mut client, &name, options, &mut out, &mut |_| {}).await;
    (out, result)
}

/// When `segment` was asked for, in order.
fn times_asked(log: &Log, segment: u64) -> Vec<Instant> {
    let log = log.lock().unwrap();
    log.iter()
        .filter(|(_, s)| *s == segment)
        .map(|(t, _)| *t)
        .collect()
}

#[tokio::test]
async fn segments_nacked_with_retry_after_are_asked_again_after_it_and_the_fetch_completes() {
    let data = object(40_000);
    // The first segment (the route is being resolved) and, later, segments 10 and 25 twice
    // (the route withdrawn, then announced again).
    let (transport, log, _dir) = producer(
        &data,
        Box::new(|segment, times| match (segment, times) {
            (0, 1) => Some(Some(80)),
            (10 | 25, 1 | 2) => Some(Some(60)),
            _ => None,
        }),
    )
    .await;
    let (out, report) = get(transport, &FetchOptions::default()).await;
    let report = report.unwrap();
    assert!(out == data, "content differs");
    assert_eq!(report.retry_after_waits, 5);
    assert_eq!(report.nacks, 5);
    for (segment, wait) in [(0, 80), (10, 60), (25, 60)] {
        let asked = times_asked(&log, segment);
        assert!(asked.len() > 1, "segment {segment} asked again: {asked:?}");
        for pair in asked.windows(2).take(if segment == 0 { 1 } else { 2 }) {
            let gap = pair[1] - pair[0];
            assert!(
                gap >= Duration::from_millis(wait),
                "segment {segment} asked again after {gap:?}, before its RetryAfter {wait} ms"
            );
        }
    }
}

#[tokio::test]
async fn a_segment_nacked_past_the_bounds_fails_with_a_typed_error() {
    let data = object(8_000);
    // Segment 3 never gets a route: 100 ms each time, 350 ms allowed in all.
    let (transport, log, _dir) = producer(
        &data,
        Box::new(|segment, _| (segment == 3).then_some(Some(100))),
    )
    .await;
    let options = FetchOptions {
        max_retry_after: Duration::from_millis(350),
        ..FetchOptions::default()
    };
    let started = Instant::now();
    let (_, report) = get(transport, &options).await;
    match report {
        Err(FetchError::NoRouteAfterRetry {
            name,
            waits,
            waited,
        }) => {
            assert_eq!(name.to_string(), "/obj/v=7/seg=3");
            assert_eq!(waits, 4);
            assert_eq!(waited, Duration::from_millis(400));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(times_asked(&log, 3).len(), 4);
    assert!(started.elapsed() >= Duration::from_millis(300));
    // The count of Nacks is bounded too: max_retries.
    let (transport, _log, _dir) = producer(
        &data,
        Box::new(|segment, _| (segment == 3).then_some(Some(1))),
    )
    .await;
    let options = FetchOptions {
        max_retries: 5,
        ..FetchOptions::default()
    };
    match get(transport, &options).await.1 {
        Err(FetchError::NoRouteAfterRetry { waits, .. }) => assert_eq!(waits, 6),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_nack_no_route_without_retry_after_still_ends_the_fetch() {
    let data = object(8_000);
    let (transport, log, _dir) =
        producer(&data, Box::new(|segment, _| (segment == 2).then_some(None))).await;
    match get(transport, &FetchOptions::default()).await.1 {
        Err(FetchError::Nack { name, reason }) => {
            assert_eq!(name.to_string(), "/obj/v=7/seg=2");
            assert_eq!(reason, NackReason::NoRoute);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(times_asked(&log, 2).len(), 1);
}
