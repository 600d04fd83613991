//! Outgoing TCP faces created by management: persistent and permanent (reconnecting).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::*;
use nameway_face::{DownReason, FaceError, FaceScope, FaceUri, Persistency};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

#[tokio::test]
async fn tcp4_face_between_two_systems() {
    let (a, mut a_events) = start(config()).await;
    let (b, mut b_events) = start(tcp_udp_config()).await;
    let uri: FaceUri = format!("tcp4://{}", b.tcp_listener(0).unwrap())
        .parse()
        .unwrap();
    let face = a.create(&uri, Persistency::Persistent).await.unwrap();
    let info = a_events.up().await;
    assert_eq!(
        (info.id, &info.remote, info.scope),
        (face, &uri, FaceScope::Local)
    );
    assert_eq!(info.persistency, Persistency::Persistent);

    a.send(face, data(8800)).unwrap();
    let b_info = b_events.up().await;
    assert_eq!(b_info.persistency, Persistency::OnDemand);
    assert_eq!(b_events.packet().await, (b_info.id, data(8800)));
    b.send(b_info.id, interest(4)).unwrap();
    assert_eq!(a_events.packet().await, (face, interest(4)));

    assert!(
        matches!(a.create(&uri, Persistency::Persistent).await, Err(FaceError::Exists(id)) if id == face)
    );
    // A persistent face closes when the peer goes away.
    assert!(b.destroy(b_info.id));
    assert_eq!(b_events.down().await, (b_info.id, DownReason::Destroyed));
    assert_eq!(a_events.down().await, (face, DownReason::PeerClosed));
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test]
async fn connect_failure_is_an_error() {
    let (a, _events) = start(config()).await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let uri = FaceUri::tcp(closed.local_addr().unwrap());
    drop(closed);
    let err = a.create(&uri, Persistency::Persistent).await.unwrap_err();
    assert!(matches!(err, FaceError::Connect(_)), "{err}");
    let err = a
        .create(&FaceUri::Fd(3), Persistency::Persistent)
        .await
        .unwrap_err();
    assert!(matches!(err, FaceError::UnsupportedScheme));
    a.shutdown().await;
}

#[tokio::test]
async fn permanent_face_reconnects() {
    let mut config = config();
    config.reconnect_initial = Duration::from_millis(20);
    config.reconnect_max = Duration::from_millis(100);
    let (a, mut events) = start(config).await;
    let peer = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let uri = FaceUri::tcp(peer.local_addr().unwrap());
    let face = a.create(&uri, Persistency::Permanent).await.unwrap();
    events.up().await;

    let (mut conn, _) = tokio::time::timeout(PATIENCE, peer.accept())
        .await
        .unwrap()
        .unwrap();
    a.send(face, interest(1)).unwrap();
    let mut buf = [0u8; 7];
    conn.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf[..], &interest(1)[..]);
    drop(conn); // the link breaks

    let (mut conn, _) = tokio::time::timeout(PATIENCE, peer.accept())
        .await
        .unwrap()
        .unwrap();
    // Same face, same id: packets flow again both ways.
    conn.write_all(&interest(2)).await.unwrap();
    assert_eq!(events.packet().await, (face, interest(2)));
    eventually("reconnected", || a.info(face).unwrap().connected).await;
    a.send(face, interest(3)).unwrap();
    conn.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf[..], &interest(3)[..]);
    assert_eq!(a.counters().reconnects, 1);
    // The reconnected face and the null face (255), no second face.
    let ids: Vec<_> = a.list().iter().map(|f| f.id).collect();
    assert_eq!(ids, [nameway_face::FaceId::NULL, face]);

    a.destroy(face);
    assert_eq!(events.down().await, (face, DownReason::Destroyed));
    a.shutdown().await;
}
