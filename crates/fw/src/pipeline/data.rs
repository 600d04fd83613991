//! Data pipelines (NFD `forwarder.cpp`): incoming Data, Data unsolicited, outgoing Data.

use core::time::Duration;

use bytes::Bytes;
use nameway_wire::{DataView, LpPacket};
use smallvec::SmallVec;

use super::{dnl_face, is_localhost, Kind, Outbox};
use crate::counters::DropReason;
use crate::forwarder::{Forwarder, LpFields};
use crate::table::face_table::{FaceId, FaceTable, LinkType};
use crate::table::pit::PitEntryId;
use crate::time::Time;

impl Forwarder {
    /// NFD `onIncomingData`.
    pub(crate) fn on_incoming_data(
        &mut self,
        now: Time,
        ingress: FaceId,
        wire: Bytes,
        lp: LpFields,
    ) {
        let Ok(data) = DataView::new_checked(wire) else {
            self.record_drop(ingress, DropReason::Malformed);
            return;
        };
        let Some(face) = self.faces.get_mut(ingress) else {
            return;
        };
        face.counters.n_in_data += 1;
        self.out.counters.n_in_data += 1;
        let ad_hoc = face.link_type() == LinkType::AdHoc;
        if !face.is_local() && is_localhost(data.name()) {
            self.record_drop(ingress, DropReason::LocalhostViolation);
            return;
        }
        let hashes = self.packet_hashes(data.name());
        let admission = if self.cs_admit && !lp.no_cache {
            self.cs_policy.admission(data.name(), &hashes)
        } else {
            crate::Admission::Refuse
        };
        if admission != crate::Admission::Refuse && self.external_cs.is_none() {
            // The insert comes last: start its cache misses now.
            self.cs.prefetch(&hashes);
        }
        let mut matches = core::mem::take(&mut self.matches);
        matches.clear();
        self.pit
            .find_data_matches(&data, &hashes, &self.hasher, &mut matches);
        if matches.is_empty() {
            self.on_data_unsolicited(ingress);
        } else {
            self.out.congestion_mark = lp.congestion_mark;
            if let [id] = matches[..] {
                self.with_strategy(now, id, false, None, |s, cx| {
                    s.after_receive_data(cx, &data, ingress)
                });
                self.satisfy(now, id, &data);
            } else {
                self.satisfy_several(now, &matches, ingress, ad_hoc, &data);
            }
            // Last, so that the store takes the packet's handle instead of a copy of it,
            // and its table stores (which likely miss the cache) are not waited for by the
            // reference-count fences of sending and satisfying.
            let room = admission != crate::Admission::IfRoom || self.cs.len() < self.cs.capacity();
            if admission != crate::Admission::Refuse && room {
                match &mut self.external_cs {
                    Some(ext) => ext.admit(data.into_wire(), hashes),
                    None => self.cs.insert(data, &hashes, now),
                }
            }
        }
        self.matches = matches;
    }

    /// Several entries match (e.g. an exact and a CanBePrefix one): each strategy is told
    /// before the entry is satisfied, then every pending downstream gets the Data once, with
    /// the PitToken of its first in-record.
    fn satisfy_several(
        &mut self,
        now: Time,
        matches: &[PitEntryId],
        ingress: FaceId,
        ad_hoc: bool,
        data: &DataView,
    ) {
        let mut downstreams: SmallVec<[(FaceId, Option<Bytes>); 4]> = SmallVec::new();
        for &id in matches {
            let Some(entry) = self.pit.get(id) else {
                continue;
            };
            for r in entry.in_records() {
                let pending = r.expiry() > now && (r.face() != ingress || ad_hoc);
                if pending && !downstreams.iter().any(|(f, _)| *f == r.face()) {
                    downstreams.push((r.face(), r.pit_token().cloned()));
                }
            }
            self.with_strategy(now, id, false, None, |s, cx| {
                s.before_satisfy_interest(cx, data, ingress)
            });
            self.satisfy(now, id, data);
        }
        let localhost = is_localhost(data.name());
        for (face, token) in downstreams {
            on_outgoing_data(
                data.wire(),
                localhost,
                token,
                face,
                &mut self.faces,
                &mut self.out,
            );
        }
    }

    /// Satisfies an entry: dead-nonce list insert as NFD does (only for MustBeFresh Interests
    /// whose Data goes stale before the list forgets); the Nonces that left upstream kept for
    /// the straggler time, so that a copy of the Interest coming back late is still recognised
    /// as a loop; the entry itself removed at once (while its memory is still in cache).
    fn satisfy(&mut self, now: Time, id: PitEntryId, data: &DataView) {
        let fresh_for = Duration::from_millis(data.freshness_period_ms());
        let Some(entry) = self.pit.get(id) else {
            return;
        };
        let to_dnl = entry.interest().must_be_fresh() && fresh_for < self.dnl.lifetime();
        let downstream = dnl_face(entry);
        for r in entry.out_records() {
            if to_dnl {
                self.dnl.add(now, downstream, entry.name_hash(), r.nonce());
            }
            self.stragglers.add(now, entry.name_hash(), r.nonce());
        }
        self.out.counters.n_satisfied_interests += 1;
        self.remove_pit_entry(id);
    }

    /// NFD `onDataUnsolicited` with the default policy: drop (and do not cache).
    fn on_data_unsolicited(&mut self, ingress: FaceId) {
        self.record_drop(ingress, DropReason::Unsolicited);
    }
}

/// NFD `onOutgoingData`: `wire` to `egress`, in an LpPacket when a PitToken is echoed or a
/// CongestionMark carried. A `/localhost` Data never leaves through a non-local face.
pub(crate) fn on_outgoing_data(
    wire: &Bytes,
    localhost: bool,
    pit_token: Option<Bytes>,
    egress: FaceId,
    faces: &mut FaceTable,
    out: &mut Outbox,
) -> bool {
    let Some(face) = faces.get_mut(egress) else {
        return false;
    };
    if localhost && !face.is_local() {
        out.record_drop_on(face, DropReason::LocalhostViolation);
        return false;
    }
    let wire = if pit_token.is_some() || out.congestion_mark.is_some() {
        let mut lp = LpPacket::wrap(wire.clone());
        lp.pit_token = pit_token;
        lp.congestion_mark = out.congestion_mark;
        lp.encode()
    } else {
        wire.clone()
    };
    out.send(face, wire, Kind::Data);
    true
}
