//! An object offered by the controller and fetched by the agent over an in-memory stream
//! bridged the way the channel bridges it (Interests one way, Data the other).

use bytes::Bytes;
use nameway_transport::client::{Client, Conn, Incoming};
use nameway_wire::Name;

use super::*;
use crate::ca::Authority;
use crate::routes::{Fib, NextHop};

fn authority(dir: &std::path::Path, tag: &str) -> Authority {
    Authority::create(
        &"/example".parse().unwrap(),
        &dir.join(format!("{tag}.key")),
        &dir.join(format!("{tag}.cert")),
    )
    .unwrap()
}

fn fib_object(version: u64, prefixes: usize) -> ConfigObject {
    let mut fib = Fib::new();
    for i in 0..prefixes {
        let p: Name = format!("/example/app-{i}/videos").parse().unwrap();
        fib.insert(
            p,
            vec![NextHop {
                face: 257 + i as u64 % 7,
                cost: 10,
            }],
        );
    }
    ConfigObject {
        router: "/example/r1".parse().unwrap(),
        kind: ConfigKind::Fib,
        version,
        base: None,
        body: ConfigBody::FibSnapshot(fib),
    }
}

/// The controller's end: answers Interests from `offers`, passing each Data through
/// `tamper`; returns the offers when the agent's end closes.
fn controller(
    conn: tokio::io::DuplexStream,
    mut offers: Offers,
    mut tamper: impl FnMut(Bytes) -> Bytes + Send + 'static,
) -> tokio::task::JoinHandle<Offers> {
    tokio::spawn(async move {
        let mut conn = Conn::over_memory(conn, "controller");
        while let Ok(p) = conn.recv().await {
            if let Incoming::Interest(wire) = p {
                if let Some(data) = offers.answer(wire) {
                    if conn.send(&tamper(data)).await.is_err() {
                        break;
                    }
                }
            }
        }
        offers
    })
}

async fn fetch_through_bridge(
    offers: Offers,
    name: &Name,
    anchor: &nameway_transport::Certificate,
    tamper: impl FnMut(Bytes) -> Bytes + Send + 'static,
) -> (Result<ConfigObject, ObjectFetchError>, Offers) {
    let (a, b) = tokio::io::duplex(1 << 20);
    let server = controller(b, offers, tamper);
    let mut client = Client::over(Conn::over_memory(a, "agent"));
    let got = fetch_object(&mut client, name, anchor).await;
    drop(client);
    (got, server.await.unwrap())
}

#[tokio::test]
async fn a_fib_of_a_thousand_routes_is_fetched_verified_and_whole() {
    let dir = tempfile::tempdir().unwrap();
    let ca = authority(dir.path(), "ca");
    let object = fib_object(3, 1000);
    let publication = object.publish(&ca).unwrap();
    let segments = publication.segment_count();
    assert!(
        publication.segment_count() > 3,
        "{} segments",
        publication.segment_count()
    );
    let mut offers = Offers::new();
    let name = offers.offer(publication);
    assert_eq!(name, object.versioned_name(&ca).unwrap());
    let (got, offers) = fetch_through_bridge(offers, &name, ca.certificate(), |d| d).await;
    let got = got.unwrap();
    assert_eq!(got, object);
    // Every segment and the manifest were asked for through the bridge.
    // Every segment and the manifest asked for through the bridge (segment 0 and the
    // manifest twice: the signer's lookup asks for them first).
    assert_eq!(offers.answered(), segments + 3);
}

#[tokio::test]
async fn a_small_object_is_one_segment() {
    let dir = tempfile::tempdir().unwrap();
    let ca = authority(dir.path(), "ca");
    let object = fib_object(1, 5);
    let publication = object.publish(&ca).unwrap();
    assert_eq!(publication.segment_count(), 1);
    let mut offers = Offers::new();
    let name = offers.offer(publication);
    let (got, offers) = fetch_through_bridge(offers, &name, ca.certificate(), |d| d).await;
    assert_eq!(got.unwrap(), object);
    // Its segment and manifest, and the two asked once more when the signer is looked up.
    assert_eq!(offers.answered(), 4);
}

#[tokio::test]
async fn a_segment_tampered_on_the_way_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ca = authority(dir.path(), "ca");
    let object = fib_object(2, 1000);
    let mut offers = Offers::new();
    let name = offers.offer(object.publish(&ca).unwrap());
    let seg1 = nameway_transport::naming::segment_name(&name, 1).unwrap();
    // One bit of segment 1's Content flipped between the controller and the agent.
    let tamper = move |d: Bytes| {
        let view = nameway_wire::DataView::new_checked(d.clone()).unwrap();
        if *view.name() != seg1 {
            return d;
        }
        let mut v = d.to_vec();
        let mid = v.len() / 2;
        v[mid] ^= 1;
        Bytes::from(v)
    };
    let (got, _) = fetch_through_bridge(offers, &name, ca.certificate(), tamper).await;
    assert!(
        matches!(got, Err(ObjectFetchError::Verification(_))),
        "{got:?}"
    );
}

#[tokio::test]
async fn an_object_signed_by_another_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ca = authority(dir.path(), "ca");
    let forger = authority(dir.path(), "forger");
    for prefixes in [5, 1000] {
        let mut offers = Offers::new();
        let name = offers.offer(fib_object(2, prefixes).publish(&forger).unwrap());
        let (got, _) = fetch_through_bridge(offers, &name, ca.certificate(), |d| d).await;
        assert!(
            matches!(got, Err(ObjectFetchError::Verification(_))),
            "{prefixes} routes: {got:?}"
        );
    }
}

#[tokio::test]
async fn a_name_not_offered_is_not_answered() {
    let dir = tempfile::tempdir().unwrap();
    let ca = authority(dir.path(), "ca");
    let mut offers = Offers::new();
    offers.offer(fib_object(2, 5).publish(&ca).unwrap());
    let other = fib_object(3, 5).versioned_name(&ca).unwrap();
    let interest = nameway_wire::Interest {
        name: nameway_transport::naming::segment_name(&other, 0).unwrap(),
        ..nameway_wire::Interest::default()
    };
    assert!(offers.answer(interest.encode()).is_none());
    assert!(offers.answer(Bytes::from_static(b"\x05\x00")).is_none());
    assert_eq!(offers.unanswered(), 2);
}

#[test]
fn offers_keep_only_the_recent_ones() {
    let dir = tempfile::tempdir().unwrap();
    let ca = authority(dir.path(), "ca");
    let mut offers = Offers::new();
    for v in 1..=(RECENT_OFFERS as u64 + 4) {
        offers.offer(fib_object(v, 2).publish(&ca).unwrap());
    }
    assert_eq!(offers.len(), RECENT_OFFERS);
    let oldest = fib_object(1, 2).versioned_name(&ca).unwrap();
    let interest = nameway_wire::Interest {
        name: nameway_transport::naming::segment_name(&oldest, 0).unwrap(),
        ..nameway_wire::Interest::default()
    };
    assert!(offers.answer(interest.encode()).is_none());
}
