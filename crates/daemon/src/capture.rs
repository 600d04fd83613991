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
    captured: u64,
    dropped: u64,
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

/// The capture sessions.
#[derive(Debug, Default)]
pub struct Captures {
    sessions: Vec<Session>,
    seq: u64,
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
        self.sessions.is_empty()
    }

    /// Starts (or restarts) the session of `sink`, capturing `face` (`None`: every face).
    ///
    /// # Errors
    /// [`StartError::TooMany`].
    pub fn start(&mut self, sink: u64, face: Option<u64>) -> Result<(), StartError> {
        self.sessions.retain(|s| s.sink != sink);
        if self.sessions.len() >= MAX_SESSIONS {
            return Err(StartError::TooMany);
        }
        let prefix = "/localhost/nfd/capture"
            .parse::<Name>()
            .and_then(|n| {
                n.append(&Component::number(
                    nameway_wire::tlv::types::GENERIC_NAME_COMPONENT,
                    sink,
                ))
            })
            .unwrap_or_default();
        self.sessions.push(Session {
            sink,
            face,
            captured: 0,
            dropped: 0,
            prefix,
        });
        Ok(())
    }

    /// Ends the session of `sink`; its totals, if it ran.
    pub fn stop(&mut self, sink: u64) -> Option<Totals> {
        let i = self.sessions.iter().position(|s| s.sink == sink)?;
        let s = self.sessions.remove(i);
        Some(Totals {
            captured: s.captured,
            dropped: s.dropped,
        })
    }

    /// A face closed: a session it was the sink of ends.
    pub fn face_down(&mut self, face: u64) {
        if let Some(t) = self.stop(face) {
            tracing::debug!(
                sink = face,
                captured = t.captured,
                dropped = t.dropped,
                "capture ended"
            );
        }
    }

    /// Mirrors `wire`, received from or sent to `face`, to every session that captures it.
    pub fn record(&mut self, faces: &FaceSystem, face: u64, dir: Direction, wire: &Bytes) {
        let wall_us = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64);
        for s in &mut self.sessions {
            if s.sink == face || s.face.is_some_and(|f| f != face) {
                continue;
            }
            self.seq += 1;
            let name = s
                .prefix
                .append(&Component::sequence_num(self.seq))
                .unwrap_or_else(|_| s.prefix.clone());
            let mut content = BytesMut::with_capacity(RECORD_HEADER + wire.len());
            content.put_u64(wall_us);
            content.put_u64(face);
            content.put_u8(dir as u8);
            content.put_slice(wire);
            let record = crate::mgmt::dataset::sign(Data::new(name, content.freeze()));
            match faces.send_if_below(nameway_face::FaceId(s.sink), record, SINK_QUEUE_MAX) {
                Ok(_) => s.captured += 1,
                Err(_) => s.dropped += 1,
            }
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
        let mut c = Captures::default();
        assert!(c.is_empty());
        c.start(300, Some(256)).unwrap();
        c.start(301, None).unwrap();
        c.start(300, None).unwrap(); // restart: still two sessions
        assert_eq!(c.sessions.len(), 2);
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
