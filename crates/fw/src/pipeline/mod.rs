//! The forwarding pipelines, named after NFD's (`onIncomingInterest`, `onContentStoreMiss`,
//! `onOutgoingData`, ...): the incoming ones are methods of [`crate::Forwarder`]; the outgoing
//! ones are functions over the parts they touch, so that strategies can call them too.

pub(crate) mod data;
pub(crate) mod external_cs;
pub(crate) mod interest;
pub(crate) mod nack;

use std::collections::VecDeque;

use bytes::Bytes;
use nameway_wire::Name;

use crate::counters::{DropReason, ForwarderCounters};
use crate::table::face_table::{Face, FaceId, FaceTable};

/// A packet to send: the driver writes `wire` to `face` as is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// The egress face.
    pub face: FaceId,
    /// The whole packet: a bare Interest or Data, or an LpPacket (Nack, echoed PitToken,
    /// CongestionMark).
    pub wire: Bytes,
    /// What it is.
    pub kind: Kind,
    /// The face whose packet caused this one (the Interest's downstream for a forwarded
    /// Interest); [`FaceId::NONE`] when a timer or the content store did. A driver that cannot
    /// queue an Interest can slow that face down.
    pub cause: FaceId,
}

/// Kinds of network packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An Interest.
    Interest,
    /// A Data.
    Data,
    /// A Nack.
    Nack,
}

/// What the pipelines produce: packets to send and the forwarder-wide counters.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    pub(crate) queue: VecDeque<Transmit>,
    pub(crate) counters: ForwarderCounters,
    /// CongestionMark of the Data or Nack being handled, carried onto the Data and Nacks it
    /// causes downstream (as NFD's tag follows the packet).
    pub(crate) congestion_mark: Option<u64>,
    /// The face whose packet is being handled ([`Transmit::cause`]).
    pub(crate) cause: FaceId,
}

impl Outbox {
    /// Queues `wire` for `face` and counts it.
    #[inline]
    pub(crate) fn send(&mut self, face: &mut Face, wire: Bytes, kind: Kind) {
        let c = &mut face.counters;
        c.n_out_bytes += wire.len() as u64;
        match kind {
            Kind::Interest => {
                c.n_out_interests += 1;
                self.counters.n_out_interests += 1;
            }
            Kind::Data => {
                c.n_out_data += 1;
                self.counters.n_out_data += 1;
            }
            Kind::Nack => {
                c.n_out_nacks += 1;
                self.counters.n_out_nacks += 1;
            }
        }
        self.queue.push_back(Transmit {
            face: face.id(),
            wire,
            kind,
            cause: self.cause,
        });
    }

    /// Counts a drop on `face` and in the totals.
    pub(crate) fn record_drop(&mut self, faces: &mut FaceTable, face: FaceId, reason: DropReason) {
        match faces.get_mut(face) {
            Some(f) => self.record_drop_on(f, reason),
            None => self.counters.drops.add(reason),
        }
    }

    /// Counts a drop on `face` and in the totals.
    pub(crate) fn record_drop_on(&mut self, face: &mut Face, reason: DropReason) {
        face.counters.drops.add(reason);
        self.counters.drops.add(reason);
    }
}

/// `08 09 "localhost"`: the first component of every `/localhost` name.
const LOCALHOST: &[u8] = b"\x08\x09localhost";
/// `08 08 "localhop"`.
const LOCALHOP: &[u8] = b"\x08\x08localhop";

/// Whether `name` is under `/localhost`.
#[inline]
pub(crate) fn is_localhost(name: &Name) -> bool {
    is_localhost_value(name.value_bytes())
}

/// Whether the name whose TLV-VALUE is `value` is under `/localhost`.
#[inline]
pub(crate) fn is_localhost_value(value: &[u8]) -> bool {
    value.starts_with(LOCALHOST)
}

/// Whether `name` is under `/localhop`.
#[cfg(test)]
pub(crate) fn is_localhop(name: &Name) -> bool {
    is_localhop_value(name.value_bytes())
}

/// Whether the name whose TLV-VALUE is `value` is under `/localhop`.
#[inline]
pub(crate) fn is_localhop_value(value: &[u8]) -> bool {
    value.starts_with(LOCALHOP)
}

/// NFD `wouldViolateScope`: an Interest for the name whose TLV-VALUE is `name` from a face
/// whose scope is local iff `from_local` may not go to `out`.
#[inline]
pub(crate) fn would_violate_scope(from_local: bool, name: &[u8], out: &Face) -> bool {
    if out.is_local() {
        return false;
    }
    if is_localhost_value(name) {
        return true;
    }
    is_localhop_value(name) && !from_local
}

/// The face a PIT entry's dead-nonce records are charged to: its first downstream (the face
/// whose Interest created the entry, unless that in-record is gone), or face 0 when none is
/// left.
pub(crate) fn dnl_face(entry: &crate::table::pit::PitEntry) -> FaceId {
    entry
        .in_records()
        .first()
        .map_or(FaceId(0), crate::table::pit::InRecord::face)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_prefixes() {
        let n = |s: &str| s.parse::<Name>().unwrap();
        assert!(is_localhost(&n("/localhost/nfd")));
        assert!(is_localhost(&n("/localhost")));
        assert!(!is_localhost(&n("/localhostx")));
        assert!(!is_localhost(&n("/a/localhost")));
        assert!(is_localhop(&n("/localhop/nfd/rib/list")));
        assert!(!is_localhop(&n("/localhost/nfd")));
    }
}
