//! UDP faces on real sockets: on-demand creation, scope, idle timeout, NDNLPv2 fragmentation
//! and reassembly between two face systems, management-created faces, fault injection.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::*;
use nameway_face::{
    DownReason, FaceError, FaceKind, FaceOptions, FaceScope, FaceUri, FaultConfig, Persistency,
};
use nameway_wire::lp::{fragment, LpPacket};
use tokio::net::UdpSocket;

fn udp_config() -> nameway_face::FaceSystemConfig {
    let mut c = config();
    c.udp = vec!["127.0.0.1:0".parse().unwrap()];
    c
}

async fn recv(sock: &UdpSocket) -> Bytes {
    let mut buf = vec![0; 65536];
    let n = tokio::time::timeout(PATIENCE, sock.recv(&mut buf))
        .await
        .unwrap()
        .unwrap();
    buf.truncate(n);
    Bytes::from(buf)
}

#[tokio::test]
async fn first_datagram_creates_an_on_demand_face() {
    let (system, mut events) = start(udp_config()).await;
    let server = system.udp_listener(0).unwrap();
    let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    client.connect(server).await.unwrap();

    client.send(&interest(1)).await.unwrap();
    let info = events.up().await;
    assert_eq!(info.kind, FaceKind::Udp);
    assert_eq!(info.scope, FaceScope::NonLocal, "UDP is non-local, as NFD");
    assert_eq!(info.persistency, Persistency::OnDemand);
    assert_eq!(info.remote, FaceUri::udp(client.local_addr().unwrap()));
    assert_eq!(info.local, FaceUri::udp(server));
    assert_eq!(info.mtu, Some(8800));
    assert_eq!(events.packet().await, (info.id, interest(1)));

    // More datagrams reuse the face; IDLE packets are consumed.
    client.send(&[0x64, 0x00]).await.unwrap();
    client.send(&interest(2)).await.unwrap();
    assert_eq!(events.packet().await, (info.id, interest(2)));
    // Replies go back to the peer, unfragmented below the MTU.
    system.send(info.id, data(8800)).unwrap();
    assert_eq!(recv(&client).await, data(8800));

    let c = system.info(info.id).unwrap().counters;
    assert_eq!((c.in_packets, c.in_network, c.in_idle), (3, 2, 1));
    // The on-demand face and the null face (255).
    let ids: Vec<_> = system.list().iter().map(|f| f.id).collect();
    assert_eq!(ids, [nameway_face::FaceId::NULL, info.id]);
    system.shutdown().await;
}

#[tokio::test]
async fn loopback_udp_can_be_made_local() {
    let mut config = udp_config();
    config.udp_loopback_is_local = true;
    let (system, mut events) = start(config).await;
    let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    client
        .send_to(&interest(1), system.udp_listener(0).unwrap())
        .await
        .unwrap();
    assert_eq!(events.up().await.scope, FaceScope::Local);
    system.shutdown().await;
}

#[tokio::test]
async fn idle_on_demand_face_is_closed() {
    let mut config = udp_config();
    config.udp_idle_timeout = Duration::from_millis(200);
    let (system, mut events) = start(config).await;
    let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    client
        .send_to(&interest(1), system.udp_listener(0).unwrap())
        .await
        .unwrap();
    let face = events.up().await.id;
    events.packet().await;
    assert_eq!(events.down().await, (face, DownReason::IdleTimeout));
    assert_eq!(system.counters().closed_idle, 1);
    // The peer comes back: a new face.
    client
        .send_to(&interest(2), system.udp_listener(0).unwrap())
        .await
        .unwrap();
    let again = events.up().await.id;
    assert!(again > face);
    system.shutdown().await;
}

#[tokio::test]
async fn reassembles_ndnts_style_fragments() {
    let (system, mut events) = start(udp_config()).await;
    let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    client
        .connect(system.udp_listener(0).unwrap())
        .await
        .unwrap();
    let pkt = data(6000);
    let frags = fragment(&pkt, 1400, 0x1234);
    assert!(frags.len() > 4);
    for f in frags.iter().rev() {
        client.send(f).await.unwrap();
    }
    let face = events.up().await.id;
    assert_eq!(events.packet().await, (face, pkt));
    let c = system.info(face).unwrap().counters;
    assert_eq!(c.in_reassembled, 1);
    assert_eq!(c.in_packets, frags.len() as u64);
    system.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fragmentation_end_to_end_between_two_systems() {
    let mut config = udp_config();
    config.udp_mtu = 1400;
    let (a, mut a_events) = start(config.clone()).await;
    let (b, mut b_events) = start(config).await;
    let b_addr = b.udp_listener(0).unwrap();

    let uri: FaceUri = format!("udp4://{b_addr}").parse().unwrap();
    let a_face = a.create(&uri, Persistency::Persistent).await.unwrap();
    let a_info = a_events.up().await;
    assert_eq!(a_info.id, a_face);
    assert_eq!(a_info.persistency, Persistency::Persistent);
    assert_eq!(a_info.remote, uri);
    assert_eq!(
        a_info.local,
        FaceUri::udp(a.udp_listener(0).unwrap()),
        "replies must come back"
    );
    assert_eq!(a_info.mtu, Some(1400));

    // 8000 bytes over MTU 1400, with a PitToken: fragmented by A, reassembled by B.
    let inner = data(8000);
    let token = Bytes::from_static(&[1, 2, 3, 4, 5, 6]);
    let wire = LpPacket {
        pit_token: Some(token.clone()),
        ..LpPacket::wrap(inner.clone())
    }
    .encode();
    a.send(a_face, wire).unwrap();
    let b_info = b_events.up().await;
    assert_eq!(b_info.remote, FaceUri::udp(a.udp_listener(0).unwrap()));
    let (b_face, up) = b_events.packet().await;
    assert_eq!(b_face, b_info.id);
    let up = LpPacket::decode(&up).unwrap();
    assert_eq!((up.pit_token, up.fragment), (Some(token), Some(inner)));

    // And back: B's on-demand face answers on the face A created.
    let reply = data(7999);
    b.send(b_face, reply.clone()).unwrap();
    assert_eq!(a_events.packet().await, (a_face, reply));

    let ac = a.info(a_face).unwrap().counters;
    assert_eq!((ac.out_fragmented, ac.in_reassembled), (1, 1));
    eventually("fragments counted as sent", || {
        a.info(a_face).unwrap().counters.out_packets >= 6
            && b.info(b_face).unwrap().counters.out_packets >= 6
    })
    .await;
    let bc = b.info(b_face).unwrap().counters;
    assert_eq!(
        (bc.in_reassembled, bc.out_fragmented, bc.drop_reassembly),
        (1, 1, 0)
    );

    // A second create toward the same peer finds the face, and can raise its persistency.
    let again = a.create(&uri, Persistency::Permanent).await.unwrap_err();
    assert!(
        matches!(again, FaceError::Exists(id) if id == a_face),
        "{again}"
    );
    assert_eq!(a.info(a_face).unwrap().persistency, Persistency::Permanent);
    // Management may not create on-demand faces.
    let err = a.create(&uri, Persistency::OnDemand).await.unwrap_err();
    assert!(matches!(err, FaceError::InvalidPersistency));

    assert!(a.destroy(a_face));
    assert_eq!(a_events.down().await, (a_face, DownReason::Destroyed));
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test]
async fn create_without_listener_uses_an_unlistened_socket() {
    let (server, mut server_events) = start(udp_config()).await;
    let (client, mut client_events) = start(config()).await;
    let uri = FaceUri::udp(server.udp_listener(0).unwrap());
    let face = client.create(&uri, Persistency::Persistent).await.unwrap();
    let info = client_events.up().await;
    assert!(
        matches!(info.local, FaceUri::Udp(a) if a.ip().is_unspecified()),
        "{}",
        info.local
    );
    client.send(face, interest(1)).unwrap();
    let server_face = server_events.up().await.id;
    assert_eq!(server_events.packet().await, (server_face, interest(1)));
    server.send(server_face, interest(2)).unwrap();
    assert_eq!(client_events.packet().await, (face, interest(2)));
    client.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn fault_injection_loss_and_delay() {
    let (server, mut server_events) = start(udp_config()).await;
    let (client, mut client_events) = start(config()).await;
    let uri = FaceUri::udp(server.udp_listener(0).unwrap());

    // Everything lost: counted, nothing arrives (checked below by what does arrive).
    let lossy = FaceOptions {
        fault: Some(FaultConfig {
            loss: 1.0,
            ..FaultConfig::default()
        }),
        ..FaceOptions::default()
    };
    let face = client
        .create_with(&uri, Persistency::Persistent, lossy)
        .await
        .unwrap();
    client_events.up().await;
    for i in 0..5 {
        client.send(face, interest(i)).unwrap();
    }
    let sender = client.sender(face).unwrap();
    eventually("fault drops", || {
        client.info(face).unwrap().counters.drop_fault == 5
    })
    .await;
    assert!(!sender.is_closed());
    client.destroy(face);
    client_events.down().await;

    // Delayed (and rate-limited) but delivered, in order.
    let slow = FaceOptions {
        fault: Some(FaultConfig {
            delay: Duration::from_millis(20),
            jitter: Duration::from_millis(5),
            rate_bps: Some(10_000_000),
            ..FaultConfig::default()
        }),
        ..FaceOptions::default()
    };
    let face = client
        .create_with(&uri, Persistency::Persistent, slow)
        .await
        .unwrap();
    client_events.up().await;
    for i in 10..15 {
        client.send(face, interest(i)).unwrap();
    }
    let server_face = server_events.up().await.id;
    for i in 10..15 {
        assert_eq!(server_events.packet().await, (server_face, interest(i)));
    }
    client.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn udp6_faces() {
    if std::net::UdpSocket::bind("[::1]:0").is_err() {
        return; // no IPv6 loopback here
    }
    let mut config = config();
    config.udp = vec!["[::1]:0".parse().unwrap()];
    let (system, mut events) = start(config).await;
    let addr = system.udp_listener(0).unwrap();
    let client = UdpSocket::bind("[::1]:0").await.unwrap();
    client.send_to(&interest(3), addr).await.unwrap();
    let info = events.up().await;
    assert!(
        info.remote.to_string().starts_with("udp6://[::1]:"),
        "{}",
        info.remote
    );
    assert_eq!(events.packet().await, (info.id, interest(3)));
    system.shutdown().await;
}

#[tokio::test]
async fn malformed_datagrams_are_dropped_not_fatal() {
    let (system, mut events) = start(udp_config()).await;
    let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    client
        .connect(system.udp_listener(0).unwrap())
        .await
        .unwrap();
    client.send(&interest(1)).await.unwrap();
    let face = events.up().await.id;
    events.packet().await;
    client.send(b"garbage").await.unwrap();
    client.send(&data(9000)).await.unwrap();
    client.send(&interest(2)).await.unwrap();
    assert_eq!(events.packet().await, (face, interest(2)));
    let c = system.info(face).unwrap().counters;
    assert_eq!((c.drop_malformed, c.drop_too_large), (1, 1));
    system.shutdown().await;
}

/// The channel reads a batch of up to 32 datagrams per call and, after a batch that was not
/// full, waits for the socket's next readiness instead of reading again: bursts of every size
/// around the batch, each after the reader went quiet, and single datagrams after a pause,
/// all arrive, in order.
#[tokio::test]
async fn bursts_around_the_batch_size_all_arrive_in_order() {
    let (system, mut events) = start(udp_config()).await;
    let server = system.udp_listener(0).unwrap();
    let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    client.connect(server).await.unwrap();
    client.send(&interest(0)).await.unwrap();
    let face = events.up().await.id;
    assert_eq!(events.packet().await, (face, interest(0)));

    // Tags wrap at 256; within a burst of at most 100 they are distinct.
    let mut next = 1u64;
    let tag = |n: u64| interest((n % 256) as u8);
    for burst in [1usize, 2, 5, 31, 32, 33, 64, 65, 100, 1, 1] {
        let first = next;
        for _ in 0..burst {
            client.send(&tag(next)).await.unwrap();
            next += 1;
        }
        for n in first..next {
            assert_eq!(events.packet().await, (face, tag(n)), "burst of {burst}");
        }
        // The reader has drained the socket and waits for readiness again.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let c = system.info(face).unwrap().counters;
    assert_eq!(c.in_network, next);
    system.shutdown().await;
}
