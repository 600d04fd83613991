//! Helpers shared by the socket tests: systems on loopback with port 0, packet builders, and
//! event waits with generous timeouts (only to avoid hanging; nothing is timed).

#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use nameway_face::{DownReason, FaceEvent, FaceId, FaceInfo, FaceSystem, FaceSystemConfig};
use nameway_wire::tlv;
use tokio::sync::mpsc;

/// Long enough never to fire on a healthy run; short enough to fail a stuck one.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// A TLV of type `typ` whose whole encoding is exactly `len` bytes (value is a pattern).
pub fn packet(typ: u32, len: usize) -> Bytes {
    let mut value_len = len.saturating_sub(2);
    while tlv::tlv_len(typ, value_len) > len {
        value_len -= 1;
    }
    assert_eq!(
        tlv::tlv_len(typ, value_len),
        len,
        "cannot encode a {len}-byte TLV"
    );
    let value: Vec<u8> = (0..value_len).map(|i| (i * 7 % 251) as u8).collect();
    let mut buf = BytesMut::with_capacity(len);
    tlv::put_tlv(&mut buf, typ, &value);
    buf.freeze()
}

/// A small Interest-typed packet with a distinguishing byte.
pub fn interest(tag: u8) -> Bytes {
    Bytes::from(vec![0x05, 0x05, 0x07, 0x03, 0x08, 0x01, tag])
}

/// A Data-typed packet of `len` bytes.
pub fn data(len: usize) -> Bytes {
    packet(0x06, len)
}

/// Config with nothing listening; tests add what they need on port 0.
pub fn config() -> FaceSystemConfig {
    FaceSystemConfig::without_listeners()
}

pub fn tcp_udp_config() -> FaceSystemConfig {
    let mut c = config();
    c.tcp = vec!["127.0.0.1:0".parse().unwrap()];
    c.udp = vec!["127.0.0.1:0".parse().unwrap()];
    c
}

pub fn unix_config(dir: &tempfile::TempDir) -> (FaceSystemConfig, PathBuf) {
    let path = dir.path().join("run/nfd/nfd.sock");
    let mut c = config();
    c.unix_path = Some(path.clone());
    (c, path)
}

pub async fn start(config: FaceSystemConfig) -> (FaceSystem, Events) {
    let (system, rx) = FaceSystem::start(config).await.expect("start");
    (system, Events(rx))
}

/// The event queue, with waits that fail a stuck test instead of hanging it.
pub struct Events(pub mpsc::Receiver<FaceEvent>);

impl Events {
    pub async fn next(&mut self) -> FaceEvent {
        tokio::time::timeout(PATIENCE, self.0.recv())
            .await
            .expect("timed out waiting for a face event")
            .expect("event queue closed")
    }

    pub async fn up(&mut self) -> FaceInfo {
        match self.next().await {
            FaceEvent::Up { face, info } => {
                assert_eq!(face, info.id);
                *info
            }
            other => panic!("expected Up, got {other:?}"),
        }
    }

    pub async fn packet(&mut self) -> (FaceId, Bytes) {
        match self.next().await {
            FaceEvent::Packet { face, wire } => (face, wire),
            other => panic!("expected Packet, got {other:?}"),
        }
    }

    pub async fn down(&mut self) -> (FaceId, DownReason) {
        match self.next().await {
            FaceEvent::Down { face, reason } => (face, reason),
            other => panic!("expected Down, got {other:?}"),
        }
    }
}

/// Waits until `cond` holds (counters bumped by another task), failing after [`PATIENCE`].
pub async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !cond() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}
