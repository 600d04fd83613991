//! What a strategy trigger sees and can do: one PIT entry, the next hops of its name, the face
//! table, and the actions of NFD's `Strategy` (send Interest, Data, Nack; reject).

use core::any::Any;
use core::cell::OnceCell;

use nameway_wire::lp::NackReason;
use nameway_wire::{DataView, InterestView};
use smallvec::SmallVec;

use crate::counters::DropReason;
use crate::pipeline::{self, Outbox};
use crate::table::face_table::{Face, FaceId, FaceTable, LinkType};
use crate::table::fib::NextHop;
use crate::table::pit::PitEntry;
use crate::time::Time;

/// The context of one strategy trigger.
pub struct StrategyContext<'a> {
    pub(crate) now: Time,
    pub(crate) entry: &'a mut PitEntry,
    pub(crate) nexthops: &'a [NextHop],
    pub(crate) faces: &'a mut FaceTable,
    pub(crate) out: &'a mut Outbox,
    /// The entry's latest Interest as a full view, made when a trigger first asks for it (the
    /// entry keeps it compact).
    pub(crate) view: OnceCell<InterestView>,
}

impl<'a> StrategyContext<'a> {
    /// The current time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// The PIT entry the trigger is about.
    pub fn entry(&self) -> &PitEntry {
        self.entry
    }

    /// The entry's latest Interest (its full view, made on the first call of a trigger: a
    /// strategy that needs only the name's bytes or the flags reads them from
    /// [`StrategyContext::entry`]).
    pub fn interest(&self) -> &InterestView {
        self.view.get_or_init(|| self.entry.interest().view())
    }

    /// Next hops for the entry, lowest cost first: the FIB's longest-prefix match for the
    /// first ForwardingHint name that has one, else for the Interest name (NFD `lookupFib`).
    pub fn nexthops(&self) -> &'a [NextHop] {
        self.nexthops
    }

    /// A face of the face table.
    pub fn face(&self, id: FaceId) -> Option<&Face> {
        self.faces.get(id)
    }

    /// Whether the Interest may go to `upstream` when it came from `downstream` (NFD
    /// `isNextHopEligible`): not back where it came from unless the face is ad hoc, and no
    /// scope violation (`/localhost` never to a non-local face; `/localhop` to a non-local
    /// face only from a local one).
    pub fn is_eligible(&self, upstream: FaceId, downstream: FaceId) -> bool {
        let Some(out_face) = self.faces.get(upstream) else {
            return false;
        };
        if upstream == downstream && out_face.link_type() != LinkType::AdHoc {
            return false;
        }
        let from_local = self.faces.get(downstream).is_some_and(Face::is_local);
        !pipeline::would_violate_scope(from_local, self.entry.name_value(), out_face)
    }

    /// Whether `upstream` has no unexpired out-record (NFD's `wantUnused`).
    pub fn is_unused(&self, upstream: FaceId) -> bool {
        self.entry
            .out_record(upstream)
            .is_none_or(|r| r.expiry() <= self.now)
    }

    /// Forwards the entry's latest Interest to `egress` (HopLimit decremented, PitToken
    /// stripped). False when the outgoing pipeline dropped it (unknown face, HopLimit ran out
    /// before a non-local face, scope).
    pub fn send_interest(&mut self, egress: FaceId) -> bool {
        pipeline::interest::on_outgoing_interest(self.now, self.entry, egress, self.faces, self.out)
    }

    /// Sends `data` to downstream `egress`, echoing its PitToken, and deletes its in-record.
    pub fn send_data(&mut self, data: &DataView, egress: FaceId) -> bool {
        let token = self.entry.take_in_record_token(egress).flatten();
        let localhost = pipeline::is_localhost(data.name());
        pipeline::data::on_outgoing_data(
            data.wire(),
            localhost,
            token,
            egress,
            self.faces,
            self.out,
        )
    }

    /// Sends `data` to every downstream whose in-record has not expired, except `ingress`
    /// (unless it is ad hoc) (NFD `sendDataToAll`).
    pub fn send_data_to_all(&mut self, data: &DataView, ingress: FaceId) {
        let now = self.now;
        let ingress_ad_hoc = self
            .faces
            .get(ingress)
            .is_some_and(|f| f.link_type() == LinkType::AdHoc);
        let mut i = 0;
        while let Some(r) = self.entry.in_records().get(i) {
            if r.expiry() > now && (r.face() != ingress || ingress_ad_hoc) {
                // `send_data` removes the in-record: the next one moves to index `i`.
                let face = r.face();
                self.send_data(data, face);
            } else {
                i += 1;
            }
        }
    }

    /// Nacks downstream `egress` with `reason` (the Interest it sent goes back in the Nack,
    /// with its PitToken) and deletes its in-record. False without an in-record or when the
    /// face is not point-to-point.
    pub fn send_nack(&mut self, egress: FaceId, reason: NackReason) -> bool {
        pipeline::nack::on_outgoing_nack(self.entry, egress, reason, self.faces, self.out)
    }

    /// Nacks every downstream except those in `except`.
    pub fn send_nacks(&mut self, reason: NackReason, except: &[FaceId]) {
        let targets: SmallVec<[FaceId; 4]> = self
            .entry
            .in_records()
            .iter()
            .map(|r| r.face())
            .filter(|f| !except.contains(f))
            .collect();
        for face in targets {
            self.send_nack(face, reason);
        }
    }

    /// Gives up on the entry: it is finalized (unsatisfied) when the trigger returns.
    pub fn reject_pending_interest(&mut self) {
        self.entry.rejected = true;
    }

    /// Counts a drop decided by the strategy (e.g. [`DropReason::NoRoute`]) on `face`.
    pub fn record_drop(&mut self, face: FaceId, reason: DropReason) {
        self.out.record_drop(self.faces, face, reason);
    }

    /// The entry's scratch state of type `T`, created with `T::default()` when absent or of
    /// another type (a strategy change leaves the previous strategy's state behind).
    pub fn scratch<T: Any + Send + Default>(&mut self) -> &mut T {
        let slot = self.entry.scratch_mut();
        if !slot.as_ref().is_some_and(|b| b.is::<T>()) {
            *slot = Some(Box::new(T::default()));
        }
        match slot.as_mut().and_then(|b| b.downcast_mut::<T>()) {
            Some(t) => t,
            // Invariant: the slot holds a `T`, stored just above if it did not already.
            None => unreachable!("the scratch slot holds a T"),
        }
    }

    /// The entry's scratch state of type `T`, if present.
    pub fn scratch_ref<T: Any + Send>(&self) -> Option<&T> {
        self.entry.scratch().and_then(|b| b.downcast_ref::<T>())
    }
}
