//! Packet capture for `nameway capture`: management command `capture/start` (from a local face;
//! its ControlParameters FaceId names the face to capture, absent or 0 for every face) makes the
//! requesting face a capture sink, and `capture/stop` ends it (also when the sink closes).
//!
//! Every packet received from or sent to a captured face (as the forwarder sees it: whole
//! network packets or LpPackets, after reassembly) is mirrored to the sink as a Data named
//! `/localhost/nfd/capture/<sink>/seq=<n>` whose Content is a record:
//!
//! ```text
//! [timestamp: u64, microseconds since the Unix epoch][face: u64][direction: u8, 0 in, 1 out]
//! [the packet, as on the face]
//! ```
//!
//! (integers big-endian). Records go straight to the sink's send queue: when the reader is too
//! slow the queue is full and the record is dropped and counted, never the forwarding. With no
//! session, capture costs one check of an empty list per packet.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::RwLock;

use bytes::{BufMut, Bytes, BytesMut};
use nameway_face::FaceSystem;
use nameway_wire::name::Component;
use nameway_wire::{Data, Name};

/// Sessions at once.
pub const MAX_SESSIONS: usize = 8;
/// Record header length: timestamp, face, direction.
pub const RECORD_HEADER: usize = 17;

/// Which way a packet went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Received from the face.
    In = 0,
    /// Sent to the face.
    Out = 1,
}

#[derive(Debug)]
struct Session {
    sink: u64,
    face: Option<u64>,
    captured: AtomicU64,
    dropped: AtomicU64,
    prefix: Name,
}

/// What a session did, as `capture/stop` reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Records queued to the sink.
    pub captured: u64,
    /// Records dropped because the sink's queue was full.
    pub dropped: u64,
}

/// The capture sessions, shared by every forwarding shard: management starts and stops them
/// (shard 0), and each shard records the packets of the faces it reads and sends to, straight
/// into the sink's send queue (bounded: a full one drops and counts). Records of different
/// shards interleave; each has its own sequence number.
#[derive(Debug, Default)]
pub struct Captures {
    /// Sessions running: the packet path reads this and nothing else while it is 0.
    running: AtomicUsize,
    sessions: RwLock<Vec<Session>>,
    seq: AtomicU64,
}

/// Why a session cannot start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartError {
    /// [`MAX_SESSIONS`] are running.
    TooMany,
}

impl Captures {
    /// Whether no session runs (the packet path checks this and nothing else).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.running.load(Ordering::Relaxed) == 0
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Vec<Session>> {
        self.sessions
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts (or restarts) the session of `sink`, capturing `face` (`None`: every face).
    ///
    /// # Errors
    /// [`StartError::TooMany`].
    pub fn start(&self, sink: u64, face: Option<u64>) -> Result<(), StartError> {
        let mut sessions = self.write();
        sessions.retain(|s| s.sink != sink);
        let started = if sessions.len() >= MAX_SESSIONS {
            Err(StartError::TooMany)
        } else {
            let prefix = "/localhost/nfd/capture"
                .parse::<Name>()
                .and_then(|n| {
                    n.append(&Component::number(
                        nameway_wire::tlv::types::GENERIC_NAME_COMPONENT,
                        sink,
                    ))
                })
                .unwrap_or_default();
            sessions.push(Session {
                sink,
                face,
                captured: AtomicU64::new(0),
                dropped: AtomicU64::new(0),
                prefix,
            });
            Ok(())
        };
        self.running.store(sessions.len(), Ordering::Relaxed);
        started
    }

    /// Ends the session of `sink`; its totals, if it ran.
    pub fn stop(&self, sink: u64) -> Option<Totals> {
        let mut sessions = self.write();
        let i = sessions.iter().position(|s| s.sink == sink)?;
        let s = sessions.remove(i);
        self.running.store(sessions.len(), Ordering::Relaxed);
        Some(Totals {
            captured: s.captured.into_inner(),
            dropped: s.dropped.into_inner(),
        })
    }

    /// A face closed: a session it was the sink of ends.
    pub fn face_down(&self, face: u64) {
        if let Some(t) = self.stop(face) {
            tracing::debug!(
                sink = face,
                captured = t.captured,
                dropped = t.dropped,
                "capture ended"
            );
        }
    }

    /// Mirrors `wire`, received from or sent to `face`, to every session that captures it
    /// (from any shard's thread).
    pub fn record(&self, faces: &FaceSystem, face: u64, dir: Direction, wire: &Bytes) {
        let wall_us = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64);
        let sessions = self
            .sessions
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for s in sessions.iter() {
            if s.sink == face || s.face.is_some_and(|f| f != face) {
                continue;
            }
            let seq = self.seq.fetch_add(1, Ordering::Relaxed) + 1;
            let name = s
                .prefix
                .append(&Component::sequence_num(seq))
                .unwrap_or_else(|_| s.prefix.clone());
            let mut content = BytesMut::with_capacity(RECORD_HEADER + wire.len());
            content.put_u64(wall_us);
            content.put_u64(face);
            content.put_u8(dir as u8);
            content.put_slice(wire);
            let record = crate::mgmt::dataset::sign(Data::new(name, content.freeze()));
            match faces.send_if_below(nameway_face::FaceId(s.sink), record, SINK_QUEUE_MAX) {
                Ok(_) => s.captured.fetch_add(1, Ordering::Relaxed),
                Err(_) => s.dropped.fetch_add(1, Ordering::Relaxed),
            };
        }
    }
}

/// Capture records wait at most this many bytes in the sink's send queue; past it they are
/// dropped (and counted), so a sink that reads slowly gets its command replies (behind the
/// records) in time and never holds the memory a local face's queue may take for traffic.
const SINK_QUEUE_MAX: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_start_stop_and_end_with_their_sink() {
        let c = Captures::default();
        assert!(c.is_empty());
        c.start(300, Some(256)).unwrap();
        c.start(301, None).unwrap();
        c.start(300, None).unwrap(); // restart: still two sessions
        assert_eq!(c.write().len(), 2);
        assert_eq!(c.stop(300), Some(Totals::default()));
        assert_eq!(c.stop(300), None);
        c.face_down(301);
        assert!(c.is_empty());
        for i in 0..MAX_SESSIONS as u64 {
            c.start(400 + i, None).unwrap();
        }
        assert_eq!(c.start(999, None), Err(StartError::TooMany));
    }
}
