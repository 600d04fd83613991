//! Nack pipelines (NFD `forwarder.cpp`): incoming Nack, outgoing Nack.

use bytes::Bytes;
use nameway_wire::lp::NackReason;
use nameway_wire::{InterestView, LpPacket};

use super::{Kind, Outbox};
use crate::counters::DropReason;
use crate::forwarder::{Forwarder, LpFields};
use crate::table::face_table::{FaceId, FaceTable};
use crate::table::pit::PitEntry;
use crate::time::Time;

impl Forwarder {
    /// NFD `onIncomingNack`: recorded on the out-record, then the strategy decides; the entry
    /// is finalized at once when no upstream is left to answer.
    pub(crate) fn on_incoming_nack(
        &mut self,
        now: Time,
        ingress: FaceId,
        reason: NackReason,
        fragment: Bytes,
        lp: LpFields,
    ) {
        let Ok(interest) = InterestView::new_checked(fragment) else {
            self.record_drop(ingress, DropReason::Malformed);
            return;
        };
        let Some(face) = self.faces.get_mut(ingress) else {
            return;
        };
        face.counters.n_in_nacks += 1;
        self.out.counters.n_in_nacks += 1;
        if !face.is_point_to_point() {
            self.record_drop(ingress, DropReason::NackOnMultiAccess);
            return;
        }
        let hashes = self.hasher.prefix_hashes(interest.name());
        let id = self.pit.find(&interest, hashes.full());
        let entry = id.and_then(|id| self.pit.get_mut(id));
        let expected = entry.as_ref().is_some_and(|e| {
            e.out_record(ingress)
                .is_some_and(|r| Some(r.nonce()) == interest.nonce())
        });
        let (Some(id), Some(entry), true) = (id, entry, expected) else {
            self.record_drop(ingress, DropReason::NackUnsolicited);
            return;
        };
        entry.set_incoming_nack(ingress, reason);
        if self.resolution.is_some() && self.on_hinted_nack(ingress, id, reason) {
            return;
        }
        self.out.congestion_mark = lp.congestion_mark;
        self.with_strategy(now, id, true, Some(&hashes), |s, cx| {
            s.after_receive_nack(cx, reason, ingress)
        });
        let done = self
            .pit
            .get(id)
            .is_some_and(|e| e.rejected || !e.has_pending_out_records(now));
        if done {
            self.on_interest_finalize(now, id);
        }
    }
}

/// NFD `onOutgoingNack`: Nacks downstream `egress` with the Interest of its in-record (and
/// its PitToken), deleting the in-record. Only to point-to-point faces.
pub(crate) fn on_outgoing_nack(
    entry: &mut PitEntry,
    egress: FaceId,
    reason: NackReason,
    faces: &mut FaceTable,
    out: &mut Outbox,
) -> bool {
    on_outgoing_nack_with(entry, egress, reason, None, faces, out)
}

/// [`on_outgoing_nack`] with an NDNLPv2 RetryAfter (ms) on the Nack.
pub(crate) fn on_outgoing_nack_with(
    entry: &mut PitEntry,
    egress: FaceId,
    reason: NackReason,
    retry_after_ms: Option<u64>,
    faces: &mut FaceTable,
    out: &mut Outbox,
) -> bool {
    let Some(face) = faces.get_mut(egress) else {
        return false;
    };
    if entry.in_record(egress).is_none() {
        return false;
    }
    if !face.is_point_to_point() {
        out.record_drop_on(face, DropReason::NackOnMultiAccess);
        return false;
    }
    let Some(record) = entry.remove_in_record(egress) else {
        return false;
    };
    let wire = entry.in_record_interest(&record).clone();
    let mut lp = LpPacket::nack(reason, wire, record.pit_token().cloned());
    lp.congestion_mark = out.congestion_mark;
    lp.retry_after = retry_after_ms;
    out.send(face, lp.encode(), Kind::Nack);
    true
}

/// Sends `LpPacket{[PitToken], Nack{NackReason}, [CongestionMark], Fragment=interest}` to
/// `egress`, exactly as NFD does (NackReason always present).
pub(crate) fn send_nack(
    interest: Bytes,
    pit_token: Option<Bytes>,
    reason: NackReason,
    egress: FaceId,
    faces: &mut FaceTable,
    out: &mut Outbox,
) {
    let Some(face) = faces.get_mut(egress) else {
        return;
    };
    let mut lp = LpPacket::nack(reason, interest, pit_token);
    lp.congestion_mark = out.congestion_mark;
    out.send(face, lp.encode(), Kind::Nack);
}
