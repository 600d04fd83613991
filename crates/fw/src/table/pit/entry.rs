//! A PIT entry and its records: the latest Interest, one in-record per downstream that
//! expressed it, one out-record per upstream it was forwarded to.

use core::any::Any;

use bytes::Bytes;
use nameway_wire::lp::NackReason;
use nameway_wire::{CompactInterest, InterestView, Name};

use super::records::Records;
use crate::table::face_table::FaceId;
use crate::table::same_name_value;
use crate::time::Time;

/// A downstream that expressed the Interest.
#[derive(Clone, Debug)]
pub struct InRecord {
    face: FaceId,
    nonce: u32,
    /// Whether the downstream attached a PitToken (kept in `extra`). Besides saving the look
    /// into `extra` when it did not, a `bool` gives [`Records`] the spare values it keeps its
    /// own case in, so one inline record costs no tag.
    has_pit_token: bool,
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
        if !self.has_pit_token {
            return None;
        }
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
///
/// 168 bytes (264 with the Interest's full view, and the rarer fields inline): the latest
/// Interest in its compact form (48 bytes; the full view is 112), one in-record and one
/// out-record inline (40 bytes each, no tag: `Records`), and what few entries need (a
/// HopLimit-decremented copy of the Interest, a strategy's per-entry state) out of line.
pub struct PitEntry {
    pub(super) interest: CompactInterest,
    pub(super) hash: u64,
    pub(super) expiry: Time,
    /// The face whose Interest created the entry: it is charged for it (fair admission).
    pub(super) owner: FaceId,
    /// One downstream inline (the usual case); more on the heap.
    in_records: Records<InRecord>,
    /// One upstream inline (the usual case: best-route); more on the heap.
    out_records: Records<OutRecord>,
    extra: Option<Box<EntryExtra>>,
    /// Slot of the effective strategy instance.
    pub(crate) strategy: u32,
    pub(crate) rejected: bool,
    pub(super) digest_named: bool,
}

/// The rarer parts of an entry.
#[derive(Default)]
struct EntryExtra {
    /// The latest Interest with HopLimit decremented, built on first use (most Interests carry
    /// no HopLimit).
    out_wire: Option<Bytes>,
    /// The strategy's per-entry state (best-route's only once the Interest is retransmitted).
    scratch: Option<Box<dyn Any + Send>>,
}

impl core::fmt::Debug for PitEntry {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PitEntry")
            .field("name", &self.interest.name())
            .field("can_be_prefix", &self.interest.can_be_prefix())
            .field("must_be_fresh", &self.interest.must_be_fresh())
            .field("in_records", &self.in_records)
            .field("out_records", &self.out_records)
            .field("expiry", &self.expiry)
            .finish_non_exhaustive()
    }
}

impl PitEntry {
    /// A new entry for `interest` (its name's hash `hash`), charged to `owner`.
    #[inline(always)]
    pub(super) fn new(
        interest: InterestView,
        hash: u64,
        strategy: u32,
        owner: FaceId,
        digest_named: bool,
    ) -> Self {
        Self {
            interest: interest.compact(),
            hash,
            expiry: Time::MAX,
            owner,
            in_records: Records::Empty,
            out_records: Records::Empty,
            extra: None,
            strategy,
            rejected: false,
            digest_named,
        }
    }

    /// The Interest name (built from the packet: O(length of the name)).
    pub fn name(&self) -> Name {
        self.interest.name()
    }

    /// The TLV-VALUE of the Interest name.
    #[inline]
    pub(crate) fn name_value(&self) -> &[u8] {
        self.interest.name_value()
    }

    /// The latest Interest received for this entry (as received: HopLimit not decremented), in
    /// its compact form ([`CompactInterest::view`] gives the full view).
    pub fn interest(&self) -> &CompactInterest {
        &self.interest
    }

    /// The keyed hash of the name.
    pub(crate) fn name_hash(&self) -> u64 {
        self.hash
    }

    /// Whether the name ends with an implicit digest.
    pub(crate) fn is_digest_named(&self) -> bool {
        self.digest_named
    }

    /// HopLimit the latest Interest leaves with (decremented), if it has one.
    pub fn outgoing_hop_limit(&self) -> Option<u8> {
        self.interest.hop_limit().map(|h| h.saturating_sub(1))
    }

    /// Downstreams.
    pub fn in_records(&self) -> &[InRecord] {
        self.in_records.as_slice()
    }

    /// Upstreams.
    pub fn out_records(&self) -> &[OutRecord] {
        self.out_records.as_slice()
    }

    /// The in-record of `face`.
    pub fn in_record(&self, face: FaceId) -> Option<&InRecord> {
        self.in_records().iter().find(|r| r.face == face)
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
        self.out_records().iter().find(|r| r.face == face)
    }

    /// When the entry expires (the latest in-record expiry).
    pub fn expiry(&self) -> Time {
        self.expiry
    }

    /// Whether some downstream still waits.
    pub fn has_in_records(&self) -> bool {
        !self.in_records().is_empty()
    }

    /// Whether some upstream may still answer (NFD `hasPendingOutRecords`).
    pub fn has_pending_out_records(&self, now: Time) -> bool {
        self.out_records().iter().any(|r| r.is_pending(now))
    }

    /// When the Interest was last sent upstream (NFD `getLastOutgoing`).
    pub fn last_outgoing(&self) -> Option<Time> {
        self.out_records().iter().map(|r| r.last_renewed).max()
    }

    /// The strategy's per-entry state, if any.
    pub(crate) fn scratch(&self) -> Option<&(dyn Any + Send)> {
        self.extra.as_ref()?.scratch.as_deref()
    }

    /// The strategy's per-entry state, made room for.
    pub(crate) fn scratch_mut(&mut self) -> &mut Option<Box<dyn Any + Send>> {
        &mut self.extra.get_or_insert_with(Box::default).scratch
    }

    /// Drops the strategy's per-entry state (its strategy changed).
    pub(crate) fn clear_scratch(&mut self) {
        if let Some(e) = &mut self.extra {
            e.scratch = None;
        }
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
        for r in self.in_records().iter().filter(|r| r.nonce == nonce) {
            if r.face == ingress {
                in_same = true;
            } else {
                elsewhere = true;
            }
        }
        elsewhere |= self.out_records().iter().any(|r| r.nonce == nonce);
        if point_to_point && in_same {
            return false;
        }
        in_same || elsewhere
    }

    /// Makes `interest` the entry's latest Interest (the one strategies forward).
    pub(crate) fn set_interest(&mut self, interest: InterestView) {
        let old = core::mem::replace(&mut self.interest, interest.compact());
        // The downstreams that sent the previous Interest keep their own copy now.
        for r in self.in_records.as_mut_slice() {
            let extra = r.extra.get_or_insert_with(Box::default);
            if extra.interest.is_none() {
                extra.interest = Some(old.wire().clone());
            }
        }
        if let Some(e) = &mut self.extra {
            e.out_wire = None;
        }
    }

    /// Inserts or refreshes the in-record of `face` for the entry's latest Interest.
    pub(crate) fn insert_in_record(&mut self, now: Time, face: FaceId, pit_token: Option<Bytes>) {
        let record = InRecord {
            face,
            nonce: self.interest.nonce().unwrap_or(0),
            has_pit_token: pit_token.is_some(),
            last_renewed: now,
            expiry: now.add_millis(self.interest.lifetime_ms()),
            extra: pit_token.map(|t| {
                Box::new(InRecordExtra {
                    interest: None,
                    pit_token: Some(t),
                })
            }),
        };
        match self
            .in_records
            .as_mut_slice()
            .iter_mut()
            .find(|r| r.face == face)
        {
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
        let extra = self.extra.get_or_insert_with(Box::default);
        Bytes::clone(
            extra
                .out_wire
                .get_or_insert_with(|| interest.with_hop_limit(h.saturating_sub(1))),
        )
    }

    /// The latest in-record expiry.
    pub(crate) fn last_in_record_expiry(&self) -> Option<Time> {
        self.in_records().iter().map(|r| r.expiry).max()
    }

    /// Deletes the in-record of `face`, returning its PitToken (the outer `None`: no record).
    /// Unlike [`PitEntry::remove_in_record`], nothing but the token is moved out, and the
    /// last record (the usual one) is dropped where it is.
    pub(crate) fn take_in_record_token(&mut self, face: FaceId) -> Option<Option<Bytes>> {
        let i = self.in_records().iter().position(|r| r.face == face)?;
        let r = self.in_records.as_mut_slice().get_mut(i)?;
        let token = match r.has_pit_token {
            true => r.extra.as_mut().and_then(|e| e.pit_token.take()),
            false => None,
        };
        self.in_records.delete(i);
        Some(token)
    }

    pub(crate) fn remove_in_record(&mut self, face: FaceId) -> Option<InRecord> {
        let i = self.in_records().iter().position(|r| r.face == face)?;
        self.in_records.remove(i)
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
        match self.out_record_mut(face) {
            Some(r) => *r = record,
            None => self.out_records.push(record),
        }
    }

    pub(crate) fn out_record_mut(&mut self, face: FaceId) -> Option<&mut OutRecord> {
        self.out_records
            .as_mut_slice()
            .iter_mut()
            .find(|r| r.face == face)
    }

    pub(crate) fn remove_out_record(&mut self, face: FaceId) -> Option<OutRecord> {
        let i = self.out_records().iter().position(|r| r.face == face)?;
        self.out_records.remove(i)
    }

    /// Records the Nack an upstream answered with.
    pub(crate) fn set_incoming_nack(&mut self, face: FaceId, reason: NackReason) {
        if let Some(r) = self.out_record_mut(face) {
            r.nack_code = reason.code();
            r.nacked = true;
        }
    }

    /// Whether the entry is the one for (name, CanBePrefix, MustBeFresh): `hash` is the name's,
    /// `name` its TLV-VALUE.
    #[inline]
    pub(super) fn matches_interest(
        &self,
        hash: u64,
        name: &[u8],
        can_be_prefix: bool,
        must_be_fresh: bool,
    ) -> bool {
        self.hash == hash
            && self.interest.can_be_prefix() == can_be_prefix
            && self.interest.must_be_fresh() == must_be_fresh
            && same_name_value(self.interest.name_value(), name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout the PIT's memory figure rests on (crates/fw/README.md): a regression here is
    /// bytes on every pending Interest.
    #[test]
    fn an_entry_and_its_records_stay_small() {
        use core::mem::size_of;
        assert_eq!(size_of::<InRecord>(), 40);
        assert_eq!(size_of::<Records<InRecord>>(), 40);
        assert_eq!(size_of::<OutRecord>(), 40);
        assert_eq!(size_of::<Records<OutRecord>>(), 40);
        assert_eq!(size_of::<PitEntry>(), 168);
        assert_eq!(size_of::<Option<PitEntry>>(), 168);
    }
}
