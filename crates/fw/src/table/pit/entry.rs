//! A PIT entry and its records: the latest Interest, one in-record per downstream that
//! expressed it, one out-record per upstream it was forwarded to.

use core::any::Any;

use bytes::Bytes;
use nameway_wire::lp::NackReason;
use nameway_wire::{InterestView, Name};
use smallvec::SmallVec;

use crate::table::face_table::FaceId;
use crate::table::same_name_value;
use crate::time::Time;

/// A downstream that expressed the Interest.
#[derive(Clone, Debug)]
pub struct InRecord {
    face: FaceId,
    nonce: u32,
    last_renewed: Time,
    expiry: Time,
    /// What only some downstreams have, out of line so the usual record stays small (40 bytes,
    /// where the two optional buffers inline made it 96).
    extra: Option<Box<InRecordExtra>>,
}

/// The rarer parts of an in-record.
#[derive(Clone, Debug, Default)]
struct InRecordExtra {
    /// The Interest this downstream sent, when it is not the entry's latest one (kept only
    /// then, so the common case costs no reference count).
    interest: Option<Bytes>,
    pit_token: Option<Bytes>,
}

impl InRecord {
    /// The downstream face.
    pub fn face(&self) -> FaceId {
        self.face
    }

    /// Nonce of the last Interest from this downstream.
    pub fn nonce(&self) -> u32 {
        self.nonce
    }

    /// When the last Interest from this downstream arrived.
    pub fn last_renewed(&self) -> Time {
        self.last_renewed
    }

    /// When the downstream stops waiting (arrival + InterestLifetime).
    pub fn expiry(&self) -> Time {
        self.expiry
    }

    /// The PitToken the downstream attached, echoed on the Data or Nack sent back to it.
    pub fn pit_token(&self) -> Option<&Bytes> {
        self.extra.as_ref().and_then(|e| e.pit_token.as_ref())
    }
}

/// An upstream the Interest was forwarded to.
#[derive(Clone, Debug)]
pub struct OutRecord {
    face: FaceId,
    nonce: u32,
    last_renewed: Time,
    expiry: Time,
    /// The code of the Nack this upstream answered with, if `nacked` (stored as a code: an
    /// `Option<NackReason>` took 16 bytes, this 8 plus a flag packed beside the Nonce).
    nack_code: u64,
    nacked: bool,
}

impl OutRecord {
    /// The upstream face.
    pub fn face(&self) -> FaceId {
        self.face
    }

    /// Nonce of the last Interest sent to this upstream.
    pub fn nonce(&self) -> u32 {
        self.nonce
    }

    /// When the Interest was last sent to this upstream.
    pub fn last_renewed(&self) -> Time {
        self.last_renewed
    }

    /// When this upstream's answer is no longer expected (sent + InterestLifetime).
    pub fn expiry(&self) -> Time {
        self.expiry
    }

    /// The reason of the Nack this upstream answered with, if it did.
    pub fn incoming_nack(&self) -> Option<NackReason> {
        self.nacked.then(|| NackReason::from_code(self.nack_code))
    }

    /// Whether an answer is still expected at `now`: not expired and not Nacked.
    pub fn is_pending(&self, now: Time) -> bool {
        self.expiry >= now && !self.nacked
    }
}

/// A PIT entry: one Interest name and selectors, its downstreams and upstreams.
pub struct PitEntry {
    pub(super) interest: InterestView,
    pub(super) hash: u64,
    /// The latest Interest with HopLimit decremented, built on first use (boxed: most
    /// Interests carry no HopLimit, and 8 bytes here instead of 32 is memory per entry).
    pub(crate) out_wire: Option<Box<Bytes>>,
    pub(super) in_records: SmallVec<[InRecord; 1]>,
    /// One upstream inline (the usual case: best-route); more spill to the heap.
    pub(super) out_records: SmallVec<[OutRecord; 1]>,
    pub(super) expiry: Time,
    pub(crate) rejected: bool,
    pub(super) digest_named: bool,
    /// Slot of the effective strategy instance.
    pub(crate) strategy: u32,
    pub(crate) scratch: Option<Box<dyn Any + Send>>,
    /// The face whose Interest created the entry: it is charged for it (fair admission).
    pub(super) owner: FaceId,
}

impl core::fmt::Debug for PitEntry {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PitEntry")
            .field("name", self.interest.name())
            .field("can_be_prefix", &self.interest.can_be_prefix())
            .field("must_be_fresh", &self.interest.must_be_fresh())
            .field("in_records", &self.in_records)
            .field("out_records", &self.out_records)
            .field("expiry", &self.expiry)
            .finish_non_exhaustive()
    }
}

impl PitEntry {
    /// The Interest name.
    pub fn name(&self) -> &Name {
        self.interest.name()
    }

    /// The latest Interest received for this entry (as received: HopLimit not decremented).
    pub fn interest(&self) -> &InterestView {
        &self.interest
    }

    /// The keyed hash of the name.
    pub(crate) fn name_hash(&self) -> u64 {
        self.hash
    }

    /// HopLimit the latest Interest leaves with (decremented), if it has one.
    pub fn outgoing_hop_limit(&self) -> Option<u8> {
        self.interest.hop_limit().map(|h| h.saturating_sub(1))
    }

    /// Downstreams.
    pub fn in_records(&self) -> &[InRecord] {
        &self.in_records
    }

    /// Upstreams.
    pub fn out_records(&self) -> &[OutRecord] {
        &self.out_records
    }

    /// The in-record of `face`.
    pub fn in_record(&self, face: FaceId) -> Option<&InRecord> {
        self.in_records.iter().find(|r| r.face == face)
    }

    /// The last Interest exactly as downstream `r` sent it (it goes back in a Nack).
    pub fn in_record_interest<'e>(&'e self, r: &'e InRecord) -> &'e Bytes {
        r.extra
            .as_ref()
            .and_then(|e| e.interest.as_ref())
            .unwrap_or(self.interest.wire())
    }

    /// The out-record of `face`.
    pub fn out_record(&self, face: FaceId) -> Option<&OutRecord> {
        self.out_records.iter().find(|r| r.face == face)
    }

    /// When the entry expires (the latest in-record expiry).
    pub fn expiry(&self) -> Time {
        self.expiry
    }

    /// Whether some downstream still waits.
    pub fn has_in_records(&self) -> bool {
        !self.in_records.is_empty()
    }

    /// Whether some upstream may still answer (NFD `hasPendingOutRecords`).
    pub fn has_pending_out_records(&self, now: Time) -> bool {
        self.out_records.iter().any(|r| r.is_pending(now))
    }

    /// When the Interest was last sent upstream (NFD `getLastOutgoing`).
    pub fn last_outgoing(&self) -> Option<Time> {
        self.out_records.iter().map(|r| r.last_renewed).max()
    }

    /// Whether `nonce` arriving from `ingress` is a loop (NFD `findDuplicateNonce` and its use
    /// in `onIncomingInterest`): seen from another downstream or sent upstream. On a
    /// point-to-point face, the same Nonce again from the same downstream is a retransmission
    /// of one packet, not a loop.
    pub(crate) fn has_duplicate_nonce(
        &self,
        nonce: u32,
        ingress: FaceId,
        point_to_point: bool,
    ) -> bool {
        let mut in_same = false;
        let mut elsewhere = false;
        for r in self.in_records.iter().filter(|r| r.nonce == nonce) {
            if r.face == ingress {
                in_same = true;
            } else {
                elsewhere = true;
            }
        }
        elsewhere |= self.out_records.iter().any(|r| r.nonce == nonce);
        if point_to_point && in_same {
            return false;
        }
        in_same || elsewhere
    }

    /// Makes `interest` the entry's latest Interest (the one strategies forward).
    pub(crate) fn set_interest(&mut self, interest: InterestView) {
        let old = core::mem::replace(&mut self.interest, interest);
        // The downstreams that sent the previous Interest keep their own copy now.
        for r in &mut self.in_records {
            let extra = r.extra.get_or_insert_with(Box::default);
            if extra.interest.is_none() {
                extra.interest = Some(old.wire().clone());
            }
        }
        self.out_wire = None;
    }

    /// Inserts or refreshes the in-record of `face` for the entry's latest Interest.
    pub(crate) fn insert_in_record(&mut self, now: Time, face: FaceId, pit_token: Option<Bytes>) {
        let record = InRecord {
            face,
            nonce: self.interest.nonce().unwrap_or(0),
            last_renewed: now,
            expiry: now.add_millis(self.interest.lifetime_ms()),
            extra: pit_token.map(|t| {
                Box::new(InRecordExtra {
                    interest: None,
                    pit_token: Some(t),
                })
            }),
        };
        match self.in_records.iter_mut().find(|r| r.face == face) {
            Some(r) => *r = record,
            None => self.in_records.push(record),
        }
    }

    /// The latest Interest as it leaves: HopLimit decremented (built once per Interest).
    pub(crate) fn outgoing_wire(&mut self) -> Bytes {
        let Some(h) = self.interest.hop_limit() else {
            return self.interest.wire().clone();
        };
        let interest = &self.interest;
        Bytes::clone(
            self.out_wire
                .get_or_insert_with(|| Box::new(interest.with_hop_limit(h.saturating_sub(1)))),
        )
    }

    /// The latest in-record expiry.
    pub(crate) fn last_in_record_expiry(&self) -> Option<Time> {
        self.in_records.iter().map(|r| r.expiry).max()
    }

    /// Deletes the in-record of `face`, returning its PitToken (the outer `None`: no record).
    /// Unlike [`PitEntry::remove_in_record`], nothing but the token is moved out, and the
    /// last record (the usual one) is dropped where it is.
    pub(crate) fn take_in_record_token(&mut self, face: FaceId) -> Option<Option<Bytes>> {
        let i = self.in_records.iter().position(|r| r.face == face)?;
        let token = self
            .in_records
            .get_mut(i)?
            .extra
            .as_mut()
            .and_then(|e| e.pit_token.take());
        if i + 1 == self.in_records.len() {
            self.in_records.truncate(i);
        } else {
            self.in_records.remove(i);
        }
        Some(token)
    }

    pub(crate) fn remove_in_record(&mut self, face: FaceId) -> Option<InRecord> {
        let i = self.in_records.iter().position(|r| r.face == face)?;
        Some(self.in_records.remove(i))
    }

    /// Inserts or refreshes the out-record of `face` for the entry's latest Interest.
    pub(crate) fn insert_out_record(&mut self, now: Time, face: FaceId) {
        let record = OutRecord {
            face,
            nonce: self.interest.nonce().unwrap_or(0),
            last_renewed: now,
            expiry: now.add_millis(self.interest.lifetime_ms()),
            nack_code: 0,
            nacked: false,
        };
        match self.out_records.iter_mut().find(|r| r.face == face) {
            Some(r) => *r = record,
            None => self.out_records.push(record),
        }
    }

    pub(crate) fn out_record_mut(&mut self, face: FaceId) -> Option<&mut OutRecord> {
        self.out_records.iter_mut().find(|r| r.face == face)
    }

    pub(crate) fn remove_out_record(&mut self, face: FaceId) -> Option<OutRecord> {
        let i = self.out_records.iter().position(|r| r.face == face)?;
        Some(self.out_records.remove(i))
    }

    /// Records the Nack an upstream answered with.
    pub(crate) fn set_incoming_nack(&mut self, face: FaceId, reason: NackReason) {
        if let Some(r) = self.out_record_mut(face) {
            r.nack_code = reason.code();
            r.nacked = true;
        }
    }

    pub(super) fn matches_interest(
        &self,
        hash: u64,
        name: &Name,
        can_be_prefix: bool,
        must_be_fresh: bool,
    ) -> bool {
        self.hash == hash
            && self.interest.can_be_prefix() == can_be_prefix
            && self.interest.must_be_fresh() == must_be_fresh
            && same_name_value(self.interest.name().value_bytes(), name.value_bytes())
    }
}
