//! Unix and TCP faces on real sockets: framing, limits, IDLE packets, scope, the Unix socket
//! file, sending and closing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::{FileTypeExt, PermissionsExt};

use common::*;
use nameway_face::{
    DownReason, FaceKind, FaceScope, FaceUri, FramingError, Persistency, SendError,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};

/// Reads exactly `n` bytes (with patience).
async fn read_n<R: AsyncReadExt + Unpin>(r: &mut R, n: usize) -> Vec<u8> {
    let mut buf = vec![0; n];
    tokio::time::timeout(PATIENCE, r.read_exact(&mut buf))
        .await
        .unwrap()
        .unwrap();
    buf
}

/// Reads until EOF (with patience).
async fn read_to_end<R: AsyncReadExt + Unpin>(r: &mut R) -> Vec<u8> {
    let mut buf = Vec::new();
    tokio::time::timeout(PATIENCE, r.read_to_end(&mut buf))
        .await
        .unwrap()
        .unwrap();
    buf
}

#[tokio::test]
async fn unix_framing_split_and_coalesced() {
    let dir = tempfile::tempdir().unwrap();
    let (config, path) = unix_config(&dir);
    let (system, mut events) = start(config).await;
    let mut client = UnixStream::connect(&path).await.unwrap();
    let info = events.up().await;
    assert_eq!(info.kind, FaceKind::Unix);
    assert_eq!(info.scope, FaceScope::Local);
    assert_eq!(info.persistency, Persistency::OnDemand);
    assert_eq!(info.local, FaceUri::Unix(path.clone()));
    assert!(matches!(info.remote, FaceUri::Fd(_)), "{}", info.remote);
    assert_eq!(info.mtu, None);

    // One packet written a byte at a time (split across many reads).
    let big = data(3000);
    for b in big.iter() {
        client.write_all(&[*b]).await.unwrap();
        tokio::task::yield_now().await;
    }
    let (face, wire) = events.packet().await;
    assert_eq!((face, &wire), (info.id, &big));

    // Several packets in one write, and one split across two writes.
    let (a, b, c) = (interest(1), data(8800), interest(3));
    let mut all = [a.as_ref(), b.as_ref(), c.as_ref()].concat();
    let tail = all.split_off(all.len() - 3);
    client.write_all(&all).await.unwrap();
    client.write_all(&tail).await.unwrap();
    for expected in [a, b, c] {
        assert_eq!(events.packet().await, (info.id, expected));
    }

    // The forwarder's packets reach the client back to back, unchanged.
    let out = [interest(7), data(5000), data(100)];
    for p in &out {
        system.send(info.id, p.clone()).unwrap();
    }
    let expected = out.concat();
    assert_eq!(read_n(&mut client, expected.len()).await, expected);

    drop(client);
    assert_eq!(events.down().await, (info.id, DownReason::PeerClosed));
    let counters = system.counters();
    assert_eq!((counters.faces_created, counters.closed_peer), (1, 1));
    system.shutdown().await;
}

#[tokio::test]
async fn unix_socket_file_mode_stale_and_removal() {
    let dir = tempfile::tempdir().unwrap();
    let (config, path) = unix_config(&dir);
    // A stale socket file (nobody accepts on it) is replaced.
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert!(path.exists());

    let (system, _events) = start(config.clone()).await;
    let meta = std::fs::metadata(&path).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.permissions().mode() & 0o777, 0o666);
    assert_eq!(system.unix_path(), Some(path.as_path()));
    assert_eq!(system.listeners(), [FaceUri::Unix(path.clone())]);

    // A second system on the same path finds it in use.
    let err = nameway_face::FaceSystem::start(config).await.unwrap_err();
    assert!(
        matches!(err, nameway_face::FaceError::UnixPathInUse(_)),
        "{err}"
    );
    assert!(
        path.exists(),
        "the failed start must not remove the live socket"
    );

    system.shutdown().await;
    assert!(!path.exists());
}

#[tokio::test]
async fn tcp_loopback_is_local_and_framing_works() {
    let mut config = config();
    config.tcp = vec!["127.0.0.1:0".parse().unwrap()];
    let (system, mut events) = start(config).await;
    let addr = system.tcp_listener(0).unwrap();
    assert_ne!(addr.port(), 0);
    let mut client = TcpStream::connect(addr).await.unwrap();
    client.set_nodelay(true).unwrap();
    let info = events.up().await;
    assert_eq!(info.kind, FaceKind::Tcp);
    assert_eq!(info.scope, FaceScope::Local);
    assert_eq!(info.remote, FaceUri::tcp(client.local_addr().unwrap()));
    assert_eq!(info.local, FaceUri::tcp(addr));

    let p = data(8000);
    client.write_all(&p[..10]).await.unwrap();
    client.flush().await.unwrap();
    tokio::task::yield_now().await;
    client.write_all(&p[10..]).await.unwrap();
    assert_eq!(events.packet().await, (info.id, p));

    system.send(info.id, interest(9)).unwrap();
    assert_eq!(read_n(&mut client, 7).await, interest(9));
    system.shutdown().await;
}

#[tokio::test]
async fn tcp6_listener_works() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        return; // no IPv6 loopback here
    }
    let mut config = config();
    config.tcp = vec!["[::1]:0".parse().unwrap()];
    let (system, mut events) = start(config).await;
    let addr = system.tcp_listener(0).unwrap();
    assert!(system.listeners()[0]
        .to_string()
        .starts_with("tcp6://[::1]:"));
    let mut client = TcpStream::connect(addr).await.unwrap();
    let info = events.up().await;
    assert_eq!(info.scope, FaceScope::Local);
    client.write_all(&interest(1)).await.unwrap();
    assert_eq!(events.packet().await, (info.id, interest(1)));
    system.shutdown().await;
}

/// Opens two Unix clients; the first sends `bad` and must be closed with `why`, while the
/// second keeps working.
async fn bad_stream_closes_only_its_face(
    bad: &[u8],
    why: FramingError,
) -> nameway_face::SystemCounters {
    let dir = tempfile::tempdir().unwrap();
    let (config, path) = unix_config(&dir);
    let (system, mut events) = start(config).await;
    let mut bad_client = UnixStream::connect(&path).await.unwrap();
    let bad_face = events.up().await.id;
    let mut good_client = UnixStream::connect(&path).await.unwrap();
    let good_face = events.up().await.id;

    bad_client.write_all(&interest(1)).await.unwrap();
    assert_eq!(events.packet().await, (bad_face, interest(1)));
    bad_client.write_all(bad).await.unwrap();
    assert_eq!(events.down().await, (bad_face, DownReason::Framing(why)));
    // The server closed the bad connection.
    assert!(read_to_end(&mut bad_client).await.is_empty());
    assert_eq!(
        system.send(bad_face, interest(2)),
        Err(SendError::NoSuchFace)
    );

    good_client.write_all(&interest(5)).await.unwrap();
    assert_eq!(events.packet().await, (good_face, interest(5)));
    system.send(good_face, interest(6)).unwrap();
    assert_eq!(read_n(&mut good_client, 7).await, interest(6));
    let counters = system.counters();
    system.shutdown().await;
    counters
}

#[tokio::test]
async fn too_large_tlv_closes_the_face() {
    // An Interest header announcing 8801 bytes in all.
    let c = bad_stream_closes_only_its_face(
        &[0x05, 0xfd, 0x22, 0x5d],
        FramingError::TooLarge { len: 8801 },
    )
    .await;
    assert_eq!(c.closed_too_large, 1);
}

#[tokio::test]
async fn garbage_closes_the_face() {
    let c = bad_stream_closes_only_its_face(
        b"GET / HTTP/1.1\r\n\r\n",
        FramingError::UnknownType { typ: 0x47 },
    )
    .await;
    assert_eq!(c.closed_unknown_type, 1);
}

#[tokio::test]
async fn malformed_var_number_closes_the_face() {
    // TLV-LENGTH 0x10 in the 3-byte form: not the shortest encoding.
    let c =
        bad_stream_closes_only_its_face(&[0x06, 0xfd, 0x00, 0x10], FramingError::Malformed).await;
    assert_eq!(c.closed_malformed, 1);
}

#[tokio::test]
async fn idle_lp_packet_is_consumed() {
    let mut config = config();
    config.tcp = vec!["127.0.0.1:0".parse().unwrap()];
    let (system, mut events) = start(config).await;
    let mut client = TcpStream::connect(system.tcp_listener(0).unwrap())
        .await
        .unwrap();
    let face = events.up().await.id;
    // NDNts: keep-alive, then an Interest wrapped with a PitToken.
    let wrapped = [
        &[0x64, 0x00][..],
        &[0x64, 0x11, 0x62, 0x06, 1, 2, 3, 4, 5, 6, 0x50, 0x07],
        &interest(4),
    ]
    .concat();
    client.write_all(&wrapped).await.unwrap();
    let (_, wire) = events.packet().await;
    assert_eq!(wire, wrapped[2..]);
    let counters = system.info(face).unwrap().counters;
    assert_eq!(
        (counters.in_idle, counters.in_network, counters.in_packets),
        (1, 1, 2)
    );
    system.shutdown().await;
}

#[tokio::test]
async fn destroy_flushes_then_closes() {
    let mut config = config();
    config.tcp = vec!["127.0.0.1:0".parse().unwrap()];
    let (system, mut events) = start(config).await;
    let mut client = TcpStream::connect(system.tcp_listener(0).unwrap())
        .await
        .unwrap();
    let face = events.up().await.id;
    let sender = system.sender(face).unwrap();
    for i in 0..10 {
        sender.send(interest(i)).unwrap();
    }
    assert!(system.destroy(face));
    assert_eq!(events.down().await, (face, DownReason::Destroyed));
    let got = read_to_end(&mut client).await;
    let expected: Vec<u8> = (0..10).flat_map(|i| interest(i).to_vec()).collect();
    assert_eq!(got, expected);
    assert!(sender.is_closed());
    assert!(!system.destroy(face));
    assert_eq!(system.counters().closed_destroyed, 1);
    system.shutdown().await;
}

#[tokio::test]
async fn shutdown_closes_faces_and_listeners() {
    let dir = tempfile::tempdir().unwrap();
    let (mut config, path) = unix_config(&dir);
    config.tcp = vec!["127.0.0.1:0".parse().unwrap()];
    let (system, mut events) = start(config).await;
    let tcp = system.tcp_listener(0).unwrap();
    let mut a = UnixStream::connect(&path).await.unwrap();
    let mut b = TcpStream::connect(tcp).await.unwrap();
    let fa = events.up().await.id;
    let fb = events.up().await.id;
    system.send(fa, interest(1)).unwrap();
    system.shutdown().await;
    let mut downs = vec![events.down().await, events.down().await];
    downs.sort_by_key(|d| d.0);
    assert_eq!(
        downs,
        [(fa, DownReason::Shutdown), (fb, DownReason::Shutdown)]
    );
    assert_eq!(read_to_end(&mut a).await, interest(1));
    assert!(read_to_end(&mut b).await.is_empty());
    assert!(!path.exists());
    assert!(system.list().is_empty());
    assert!(TcpStream::connect(tcp).await.is_err());
}

/// Sends `packet` to `face` until the send queue refuses it, letting the face's writer run
/// between sends (the peer does not read, so the kernel's socket buffers fill first, then the
/// face's own queue); returns every answer but the last, and the last.
async fn fill(
    system: &nameway_face::FaceSystem,
    face: nameway_face::FaceId,
    packet: &bytes::Bytes,
) -> (Vec<nameway_face::Queued>, SendError) {
    let mut said = Vec::new();
    for _ in 0..100_000 {
        match system.send(face, packet.clone()) {
            Ok(q) => said.push(q),
            Err(e) => return (said, e),
        }
        tokio::task::yield_now().await;
    }
    panic!("the queue never filled");
}

/// A local face (an application) past its queue's bound in bytes still takes packets, up to
/// four times the bound, and says it is congested; the face that caused them is then not
/// read until the congested face has drained.
#[tokio::test]
async fn a_local_face_holds_a_burst_past_its_bound_and_slows_its_senders() {
    let dir = tempfile::tempdir().unwrap();
    let (mut config, path) = unix_config(&dir);
    config.tx_queue_bytes = 64 << 10;
    let (system, mut events) = start(config).await;
    let mut producer = UnixStream::connect(&path).await.unwrap();
    let p = events.up().await.id;
    let mut consumer = UnixStream::connect(&path).await.unwrap();
    let c = events.up().await.id;

    let big = data(8000);
    let (said, refused) = fill(&system, p, &big).await;
    // Past the bound the queue still took packets (congested), up to four times it; then it
    // dropped, and counted.
    let over = said
        .iter()
        .filter(|q| **q == nameway_face::Queued::Congested)
        .count();
    assert!(
        over * big.len() >= 2 * (64 << 10),
        "held {over} packets past the bound"
    );
    assert_eq!(refused, SendError::QueueFull);
    let queue_full = system.info(p).unwrap().counters.drop_queue_full;
    assert_eq!(queue_full, 1);

    // The consumer fed it: it is slowed down. The read already waiting completes; the next
    // packet waits.
    assert!(system.slow_down(c, p));
    consumer.write_all(&interest(1)).await.unwrap();
    assert_eq!(events.packet().await, (c, interest(1)));
    consumer.write_all(&interest(2)).await.unwrap();
    let early = tokio::time::timeout(std::time::Duration::from_millis(100), events.packet()).await;
    assert!(
        early.is_err(),
        "read while its congested face had not drained: {early:?}"
    );
    // The producer reads everything: its queue drains and the consumer is read again.
    let drain = tokio::spawn(async move {
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match producer.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    });
    assert_eq!(events.packet().await, (c, interest(2)));
    drain.abort();
}

/// A non-local face (another forwarder) drops at its bound: it never holds more.
#[tokio::test]
async fn a_non_local_face_drops_at_its_bound() {
    let mut config = tcp_udp_config();
    config.tcp_loopback_is_local = false;
    config.tx_queue_bytes = 64 << 10;
    let (system, mut events) = start(config).await;
    let addr = system.listeners().iter().find_map(|l| match l {
        FaceUri::Tcp(a) => Some(*a),
        _ => None,
    });
    let _peer = TcpStream::connect(addr.unwrap()).await.unwrap();
    let info = events.up().await;
    assert_eq!(info.scope, FaceScope::NonLocal);
    let (said, refused) = fill(&system, info.id, &data(8000)).await;
    assert!(!said.contains(&nameway_face::Queued::Congested), "{said:?}");
    assert_eq!(refused, SendError::QueueFull);
    assert_eq!(system.info(info.id).unwrap().counters.drop_queue_full, 1);
}

/// The send queue's bound in packets (`tx_queue`) holds as the byte bound does: past it a send
/// drops and counts; once the writer has drained the queue, sends are taken again, and every
/// packet taken reaches the peer in order.
#[tokio::test]
async fn the_send_queue_is_bounded_in_packets_and_taken_again_once_drained() {
    let dir = tempfile::tempdir().unwrap();
    let (mut config, path) = unix_config(&dir);
    config.tx_queue = 4;
    let (system, mut events) = start(config).await;
    let mut client = UnixStream::connect(&path).await.unwrap();
    let id = events.up().await.id;

    // The writer runs on this test's thread: nothing leaves the queue until the test waits.
    for tag in 1..=4 {
        assert_eq!(
            system.send(id, interest(tag)),
            Ok(nameway_face::Queued::Within)
        );
    }
    assert_eq!(system.send(id, interest(5)), Err(SendError::QueueFull));
    assert_eq!(system.info(id).unwrap().counters.drop_queue_full, 1);
    let first: Vec<u8> = (1..=4).flat_map(|t| interest(t).to_vec()).collect();
    assert_eq!(read_n(&mut client, first.len()).await, first);

    // Drained (and its memory given back): the queue takes packets again.
    for tag in 6..=9 {
        assert_eq!(
            system.send(id, interest(tag)),
            Ok(nameway_face::Queued::Within)
        );
    }
    let second: Vec<u8> = (6..=9).flat_map(|t| interest(t).to_vec()).collect();
    assert_eq!(read_n(&mut client, second.len()).await, second);
    assert_eq!(system.info(id).unwrap().counters.drop_queue_full, 1);
    assert_eq!(system.info(id).unwrap().counters.out_network, 8);
}

/// The event masks the process's epoll instances watch descriptor `fd` with (from
/// /proc/self/fdinfo; matched on the socket's inode too, as tests running beside this one
/// have descriptors of the same number in epoll instances of their own).
fn epoll_masks(fd: u64) -> Vec<u32> {
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata(format!("/proc/self/fd/{fd}"))
        .unwrap()
        .ino();
    let mut masks = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fdinfo").unwrap() {
        let Ok(info) = std::fs::read_to_string(entry.unwrap().path()) else {
            continue;
        };
        for line in info.lines() {
            // "tfd:        9 events:       19 data: ...  pos:0 ino:1234 sdev:8"
            let words: Vec<&str> = line.split_whitespace().collect();
            let fd_here = words.first() == Some(&"tfd:") && words.get(1) == Some(&&*fd.to_string());
            let ino_here = words.iter().any(|w| *w == format!("ino:{ino:x}"));
            if let (true, true, Some(&"events:"), Some(mask)) =
                (fd_here, ino_here, words.get(2), words.get(3))
            {
                masks.push(u32::from_str_radix(mask, 16).unwrap());
            }
        }
    }
    masks
}

#[tokio::test]
async fn a_unix_face_is_watched_for_reads_only() {
    // Watched for writes too, the forwarder would wake each time the client reads a packet.
    let dir = tempfile::tempdir().unwrap();
    let (config, path) = unix_config(&dir);
    let (system, mut events) = start(config).await;
    let mut client = UnixStream::connect(&path).await.unwrap();
    let info = events.up().await;
    let FaceUri::Fd(fd) = info.remote else {
        panic!("{}", info.remote)
    };
    let masks = epoll_masks(fd);
    assert!(!masks.is_empty(), "the socket is not watched");
    const EPOLLIN: u32 = 0x1;
    const EPOLLOUT: u32 = 0x4;
    for mask in &masks {
        assert_eq!(mask & (EPOLLIN | EPOLLOUT), EPOLLIN, "{masks:x?}");
    }

    // Both ways still work, a write larger than the socket holds too (it waits for room).
    client.write_all(&interest(1)).await.unwrap();
    assert_eq!(events.packet().await, (info.id, interest(1)));
    let big: Vec<_> = (0..64).map(|_| data(8000)).collect();
    for p in &big {
        system.send(info.id, p.clone()).unwrap();
    }
    let expected = big.concat();
    assert_eq!(read_n(&mut client, expected.len()).await, expected);
    system.shutdown().await;
}
