//! The pending Interest table.
//!
//! Entries live in a slab and are indexed by the hash of their name (an open-addressing table
//! of (hash bits, slot) pairs, see [`SlotIndex`]): an entry is identified by
//! (name, CanBePrefix, MustBeFresh), as in NFD, and a hit is confirmed on the full name bytes
//! and both flags. Data matching probes the whole name, then (only at lengths that hold a
//! CanBePrefix entry, from a per-length count) each shorter prefix, then (only when some entry
//! is named by an implicit digest) the Data's full name.
//!
//! Expiry deadlines sit in a binary heap with lazy deletion: re-arming an entry pushes a new
//! deadline; a popped deadline that no longer matches its entry (changed, or the slot reused,
//! seen by a generation number) is ignored. The heap is rebuilt when stale deadlines
//! outnumber the entries, so it stays within a small multiple of the PIT size. A deadline
//! that is still the heap's last element (a leaf) when its entry leaves or is re-armed is
//! removed at once: an entry satisfied before any other entry set a deadline (the common
//! exchange) thus leaves no stale deadline behind.
//!
//! Every entry is pending: a satisfied entry leaves at once, and what a straggler needs from
//! it (the Nonces sent upstream) stays in the forwarder's straggler list for the straggler
//! time. Removing the entry while its memory is still in cache, instead of 100 ms and
//! thousands of packets later, is what keeps the exchange path from missing the cache.

use core::any::Any;

use bytes::Bytes;
use nameway_wire::lp::NackReason;
use nameway_wire::tlv::types;
use nameway_wire::{DataView, InterestView, Name, NameHasher, PrefixHashes};
use smallvec::SmallVec;

use super::face_table::{FaceId, PitShare};
use super::same_name_value;
use crate::counters::PitCounters;
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
    interest: InterestView,
    hash: u64,
    /// The latest Interest with HopLimit decremented, built on first use (boxed: most
    /// Interests carry no HopLimit, and 8 bytes here instead of 32 is memory per entry).
    pub(crate) out_wire: Option<Box<Bytes>>,
    in_records: SmallVec<[InRecord; 1]>,
    /// One upstream inline (the usual case: best-route); more spill to the heap.
    out_records: SmallVec<[OutRecord; 1]>,
    expiry: Time,
    pub(crate) rejected: bool,
    digest_named: bool,
    /// Slot of the effective strategy instance.
    pub(crate) strategy: u32,
    pub(crate) scratch: Option<Box<dyn Any + Send>>,
    /// The face whose Interest created the entry: it is charged for it (fair admission).
    owner: FaceId,
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

    fn matches_interest(
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

/// Identifies an entry: slot and generation (a reused slot has a new generation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct PitEntryId {
    slot: u32,
    gen: u32,
}

#[derive(Debug)]
struct Slot {
    gen: u32,
    entry: Option<PitEntry>,
}

/// The PIT was full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PitFull;

/// Why a new entry was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The table is full.
    Full,
    /// The face already holds its share of a table under pressure.
    Quota,
}

/// Entries beyond the capacity kept for `/localhost` Interests from local faces (management),
/// so that a full table never locks out the operator.
pub(crate) const LOCALHOST_RESERVE: usize = 4096;

/// The pending Interest table.
#[derive(Debug)]
pub(crate) struct Pit {
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Slots by name hash.
    index: SlotIndex,
    len: usize,
    capacity: usize,
    /// Number of CanBePrefix entries by name length.
    can_be_prefix_by_len: Vec<u32>,
    /// Number of entries whose name ends with an implicit digest.
    digest_named: usize,
    timers: Deadlines,
    inserts: u64,
    hits: u64,
    data_misses: u64,
}

impl Pit {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            index: SlotIndex::new(),
            len: 0,
            capacity,
            can_be_prefix_by_len: Vec::new(),
            digest_named: 0,
            timers: Deadlines::default(),
            inserts: 0,
            hits: 0,
            data_misses: 0,
        }
    }

    /// Whether one more entry may be created (NFD has no limit; ours is bounded and fair).
    ///
    /// `localhost` (a `/localhost` Interest from a local face: management) may use
    /// [`LOCALHOST_RESERVE`] entries past the capacity and is never held to a share. Anyone else
    /// is refused when the table is full; and once it is half full, a face that holds
    /// `capacity / (faces holding entries + 1)` entries or more is refused — one share is always
    /// left for a face that has none yet, so a flooding face fills at most half the table alone,
    /// and shrinks to its share as others arrive (its entries expire or are satisfied).
    /// `share` (the asking face's part) is only looked up under pressure.
    #[inline]
    pub(crate) fn admit(
        &self,
        localhost: bool,
        share: impl FnOnce() -> PitShare,
    ) -> Result<(), Refused> {
        if localhost {
            return if self.len < self.capacity + LOCALHOST_RESERVE {
                Ok(())
            } else {
                Err(Refused::Full)
            };
        }
        if self.len >= self.capacity {
            return Err(Refused::Full);
        }
        if self.len < self.capacity / 2 {
            return Ok(());
        }
        let PitShare { held, holders } = share();
        let holders = holders + usize::from(held == 0);
        if held >= (self.capacity / (holders + 1)).max(1) {
            return Err(Refused::Quota);
        }
        Ok(())
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn counters(&self) -> PitCounters {
        PitCounters {
            entries: self.len,
            capacity: self.capacity,
            inserts: self.inserts,
            hits: self.hits,
            data_misses: self.data_misses,
        }
    }

    /// The entry for (name, CanBePrefix, MustBeFresh) of `interest`; `hash` is the name's.
    #[inline(always)]
    pub(crate) fn find(&mut self, interest: &InterestView, hash: u64) -> Option<PitEntryId> {
        let (name, cbp, mbf) = (
            interest.name(),
            interest.can_be_prefix(),
            interest.must_be_fresh(),
        );
        let slots = &self.slots;
        let s = self.index.find(hash, |s| {
            entry_at(slots, s).is_some_and(|e| e.matches_interest(hash, name, cbp, mbf))
        })?;
        let gen = self.slots.get(s as usize)?.gen;
        self.hits += 1;
        Some(PitEntryId { slot: s, gen })
    }

    /// Creates the entry for `interest`, which must not exist yet.
    #[inline(always)]
    pub(crate) fn insert(
        &mut self,
        interest: InterestView,
        hash: u64,
        strategy: u32,
        owner: FaceId,
    ) -> Result<PitEntryId, PitFull> {
        if self.len >= self.capacity + LOCALHOST_RESERVE {
            return Err(PitFull);
        }
        let len = interest.name().len();
        let cbp = interest.can_be_prefix();
        let digest_named = ends_with_implicit_digest(interest.name());
        let slot = match self.free.pop() {
            Some(s) => s,
            // Slot numbers are `u32`, and the index reserves the largest.
            None if self.slots.len() >= NO_SLOT as usize => return Err(PitFull),
            None => {
                self.slots.push(Slot {
                    gen: 0,
                    entry: None,
                });
                (self.slots.len() - 1) as u32
            }
        };
        let Some(cell) = self.slots.get_mut(slot as usize) else {
            return Err(PitFull);
        };
        cell.entry = Some(PitEntry {
            interest,
            hash,
            out_wire: None,
            in_records: SmallVec::new(),
            out_records: SmallVec::new(),
            expiry: Time::MAX,
            rejected: false,
            digest_named,
            strategy,
            scratch: None,
            owner,
        });
        let id = PitEntryId {
            slot,
            gen: cell.gen,
        };
        self.index.insert(hash, slot);
        self.len += 1;
        self.inserts += 1;
        if cbp {
            if self.can_be_prefix_by_len.len() <= len {
                self.can_be_prefix_by_len.resize(len + 1, 0);
            }
            if let Some(c) = self.can_be_prefix_by_len.get_mut(len) {
                *c += 1;
            }
        }
        if digest_named {
            self.digest_named += 1;
        }
        Ok(id)
    }

    #[inline]
    pub(crate) fn get(&self, id: PitEntryId) -> Option<&PitEntry> {
        let slot = self.slots.get(id.slot as usize)?;
        if slot.gen != id.gen {
            return None;
        }
        slot.entry.as_ref()
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, id: PitEntryId) -> Option<&mut PitEntry> {
        let slot = self.slots.get_mut(id.slot as usize)?;
        if slot.gen != id.gen {
            return None;
        }
        slot.entry.as_mut()
    }

    /// Removes an entry (dropped in place); returns the face charged for it, `None` if it was
    /// not there.
    pub(crate) fn remove(&mut self, id: PitEntryId) -> Option<FaceId> {
        let slot = self.slots.get_mut(id.slot as usize)?;
        if slot.gen != id.gen {
            return None;
        }
        let entry = slot.entry.as_ref()?;
        let hash = entry.hash;
        let cbp = entry
            .interest
            .can_be_prefix()
            .then(|| entry.interest.name().len());
        let digest_named = entry.digest_named;
        let owner = entry.owner;
        self.timers.remove_if_last((entry.expiry, id));
        slot.entry = None;
        slot.gen = slot.gen.wrapping_add(1);
        self.free.push(id.slot);
        self.len -= 1;
        self.index.remove(hash, id.slot);
        if let Some(c) = cbp.and_then(|len| self.can_be_prefix_by_len.get_mut(len)) {
            *c = c.saturating_sub(1);
        }
        if digest_named {
            self.digest_named -= 1;
        }
        Some(owner)
    }

    /// Sets when an entry expires.
    pub(crate) fn set_expiry(&mut self, id: PitEntryId, at: Time) {
        let Some(entry) = self.get_mut(id) else {
            return;
        };
        if entry.expiry == at {
            return;
        }
        let old = core::mem::replace(&mut entry.expiry, at);
        self.timers.remove_if_last((old, id));
        self.timers.push((at, id));
        if self.timers.len() > 2 * self.len + 64 {
            self.rebuild_timers();
        }
    }

    fn rebuild_timers(&mut self) {
        let pending = self.slots.iter().enumerate().filter_map(|(i, s)| {
            let e = s.entry.as_ref()?;
            let id = PitEntryId {
                slot: i as u32,
                gen: s.gen,
            };
            Some((e.expiry, id))
        });
        self.timers.rebuild(pending);
    }

    /// The earliest deadline, or an earlier stale one (a spurious wake-up that
    /// [`Pit::pop_expired`] then discards): O(1), no entry is touched.
    pub(crate) fn next_expiry(&self) -> Option<Time> {
        self.timers.peek().map(|&(t, _)| t)
    }

    /// An entry whose deadline is at or before `now`, if any; stale deadlines met on the way
    /// are discarded.
    pub(crate) fn pop_expired(&mut self, now: Time) -> Option<PitEntryId> {
        while let Some(&(at, id)) = self.timers.peek() {
            if at > now {
                return None;
            }
            self.timers.pop();
            if live(&self.slots, at, id) {
                return Some(id);
            }
        }
        None
    }

    /// Every entry that `data` satisfies, appended to `out`:
    /// exact name, CanBePrefix prefixes, implicit-digest full name. `hashes` are the prefix
    /// hashes of the Data name.
    pub(crate) fn find_data_matches(
        &mut self,
        data: &DataView,
        hashes: &PrefixHashes,
        hasher: &NameHasher,
        out: &mut SmallVec<[PitEntryId; 4]>,
    ) {
        let name = data.name();
        let value = name.value_bytes();
        self.collect(hashes.full(), value, false, out);
        let n = name.len().min(self.can_be_prefix_by_len.len());
        for len in (0..n).rev() {
            if self.can_be_prefix_by_len.get(len).copied().unwrap_or(0) == 0 {
                continue;
            }
            let (Some(hash), Some(prefix)) =
                (hashes.get(len), value.get(..name.prefix_value_len(len)))
            else {
                continue;
            };
            self.collect(hash, prefix, true, out);
        }
        if self.digest_named > 0 {
            let full = data.full_name();
            self.collect(hasher.hash_name(&full), full.value_bytes(), false, out);
        }
        if out.is_empty() {
            self.data_misses += 1;
        }
    }

    #[inline(always)]
    fn collect(
        &self,
        hash: u64,
        value: &[u8],
        need_cbp: bool,
        out: &mut SmallVec<[PitEntryId; 4]>,
    ) {
        for s in self.index.candidates(hash) {
            let Some(slot) = self.slots.get(s as usize) else {
                continue;
            };
            let Some(e) = &slot.entry else {
                continue;
            };
            let fits = e.hash == hash
                && (!need_cbp || e.interest.can_be_prefix())
                && same_name_value(e.interest.name().value_bytes(), value);
            if fits {
                out.push(PitEntryId {
                    slot: s,
                    gen: slot.gen,
                });
            }
        }
    }

    /// Ids of every entry.
    pub(crate) fn ids(&self) -> Vec<PitEntryId> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.entry.is_some())
            .map(|(i, s)| PitEntryId {
                slot: i as u32,
                gen: s.gen,
            })
            .collect()
    }

    /// Deadlines held, stale ones included (for the size invariants in tests).
    pub(crate) fn timer_len(&self) -> usize {
        self.timers.len()
    }
}

/// The index's mark of an empty place (never a slot number: [`Pit::insert`] stops short of it).
const NO_SLOT: u32 = u32::MAX;

/// Smallest index, in places.
const MIN_PLACES: usize = 16;

/// A place of the index: the low 32 bits of a name hash and the slot of an entry with that
/// name, or [`NO_SLOT`].
#[derive(Clone, Copy, Debug)]
struct Place {
    hash: u32,
    slot: u32,
}

const EMPTY_PLACE: Place = Place {
    hash: 0,
    slot: NO_SLOT,
};

/// Entry slots by name hash: open addressing with linear probing over a power-of-two table
/// kept at most half full, and backward-shift deletion (no tombstones), so a probe that
/// misses stops at the first empty place, usually the first or second it reads.
///
/// A place holds eight octets; a hit on its 32 hash bits is confirmed by the caller on the
/// entry (the full hash, then the name), which it reads anyway. Compared with
/// `hashbrown::HashTable<(u64, u32)>`, the PIT's look-ups are a handful of inlined
/// instructions instead of control-group matching, and a removal needs no tombstone.
#[derive(Debug)]
struct SlotIndex {
    places: Vec<Place>,
    len: usize,
}

impl SlotIndex {
    fn new() -> Self {
        Self {
            places: vec![EMPTY_PLACE; MIN_PLACES],
            len: 0,
        }
    }

    #[inline]
    fn mask(&self) -> usize {
        self.places.len() - 1
    }

    /// The first slot under `hash` that `is_match` accepts.
    #[inline(always)]
    fn find(&self, hash: u64, mut is_match: impl FnMut(u32) -> bool) -> Option<u32> {
        let (mask, h) = (self.mask(), hash as u32);
        let mut i = h as usize & mask;
        // At most half the places are used, so a probe meets an empty one well before this.
        for _ in 0..self.places.len() {
            let &p = self.places.get(i)?;
            if p.slot == NO_SLOT {
                return None;
            }
            if p.hash == h && is_match(p.slot) {
                return Some(p.slot);
            }
            i = (i + 1) & mask;
        }
        None
    }

    /// Every slot under `hash` (and, rarely, a few whose hash shares its low 32 bits).
    #[inline(always)]
    fn candidates(&self, hash: u64) -> Candidates<'_> {
        let h = hash as u32;
        Candidates {
            places: &self.places,
            at: h as usize & self.mask(),
            left: self.places.len(),
            hash: h,
        }
    }

    /// Indexes `slot` under `hash`.
    #[inline]
    fn insert(&mut self, hash: u64, slot: u32) {
        if (self.len + 1) * 2 > self.places.len() {
            self.grow();
        }
        self.place(Place {
            hash: hash as u32,
            slot,
        });
    }

    /// Writes `p` into the first empty place of its probe.
    #[inline(always)]
    fn place(&mut self, p: Place) {
        let mask = self.mask();
        let mut i = p.hash as usize & mask;
        for _ in 0..self.places.len() {
            let Some(q) = self.places.get_mut(i) else {
                return;
            };
            if q.slot == NO_SLOT {
                *q = p;
                self.len += 1;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Doubles the table: one pass over the old places.
    #[cold]
    fn grow(&mut self) {
        let size = self.places.len() * 2;
        let old = core::mem::replace(&mut self.places, vec![EMPTY_PLACE; size]);
        self.len = 0;
        for p in old.into_iter().filter(|p| p.slot != NO_SLOT) {
            self.place(p);
        }
    }

    /// Removes `slot` from under `hash`: the places after it in its run move back into the
    /// hole when their probe passes over it.
    #[inline]
    fn remove(&mut self, hash: u64, slot: u32) {
        let (mask, h) = (self.mask(), hash as u32);
        let mut hole = h as usize & mask;
        loop {
            match self.places.get(hole) {
                Some(p) if p.slot == slot => break,
                Some(p) if p.slot != NO_SLOT => hole = (hole + 1) & mask,
                _ => return,
            }
        }
        self.len -= 1;
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            let Some(&p) = self.places.get(j) else {
                return;
            };
            if p.slot == NO_SLOT {
                break;
            }
            // `p` may fill the hole when the hole lies on its probe: from its home place up
            // to `j`, the hole is no farther than `j` is.
            let home = p.hash as usize & mask;
            if j.wrapping_sub(home) & mask >= j.wrapping_sub(hole) & mask {
                if let Some(q) = self.places.get_mut(hole) {
                    *q = p;
                }
                hole = j;
            }
        }
        if let Some(q) = self.places.get_mut(hole) {
            *q = EMPTY_PLACE;
        }
    }
}

/// The slots of the places of a probe whose hash bits match, up to the first empty place.
struct Candidates<'a> {
    places: &'a [Place],
    at: usize,
    /// Places the probe may still read (at most half are used: it stops well before).
    left: usize,
    hash: u32,
}

impl Iterator for Candidates<'_> {
    type Item = u32;

    #[inline(always)]
    fn next(&mut self) -> Option<u32> {
        let mask = self.places.len().wrapping_sub(1);
        while self.left > 0 {
            let p = *self.places.get(self.at)?;
            if p.slot == NO_SLOT {
                return None;
            }
            self.at = (self.at + 1) & mask;
            self.left -= 1;
            if p.hash == self.hash {
                return Some(p.slot);
            }
        }
        None
    }
}

/// A binary min-heap of (deadline, entry), in a vector: like `BinaryHeap` with `Reverse`,
/// plus removing the last element, which is a leaf, so that the rest stays a heap.
#[derive(Debug, Default)]
struct Deadlines {
    heap: Vec<(Time, PitEntryId)>,
}

impl Deadlines {
    fn len(&self) -> usize {
        self.heap.len()
    }

    fn peek(&self) -> Option<&(Time, PitEntryId)> {
        self.heap.first()
    }

    fn push(&mut self, d: (Time, PitEntryId)) {
        let mut i = self.heap.len();
        self.heap.push(d);
        while i > 0 {
            let parent = (i - 1) / 2;
            match self.heap.get(parent) {
                // Both in bounds: `i` is at most the index just pushed.
                Some(p) if *p > d => self.heap.swap(parent, i),
                _ => break,
            }
            i = parent;
        }
    }

    fn pop(&mut self) -> Option<(Time, PitEntryId)> {
        let last = self.heap.pop()?;
        let Some(top) = self.heap.first_mut() else {
            return Some(last);
        };
        let min = core::mem::replace(top, last);
        self.sift_down(0);
        Some(min)
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let mut least = i;
            for child in [2 * i + 1, 2 * i + 2] {
                if let (Some(c), Some(l)) = (self.heap.get(child), self.heap.get(least)) {
                    if c < l {
                        least = child;
                    }
                }
            }
            if least == i {
                return;
            }
            // Both in bounds: `least` was read above.
            self.heap.swap(i, least);
            i = least;
        }
    }

    /// Removes `d` if it is the last element.
    #[inline]
    fn remove_if_last(&mut self, d: (Time, PitEntryId)) {
        if self.heap.last() == Some(&d) {
            self.heap.pop();
        }
    }

    /// Replaces the contents with `items` (sorted: a sorted vector is a heap).
    fn rebuild(&mut self, items: impl Iterator<Item = (Time, PitEntryId)>) {
        self.heap.clear();
        self.heap.extend(items);
        self.heap.sort_unstable();
    }
}

/// Whether the last component of `name` is an ImplicitSha256DigestComponent (type 0x01, a
/// single octet), read without decoding the component.
pub(crate) fn ends_with_implicit_digest(name: &Name) -> bool {
    let Some(last) = name.len().checked_sub(1) else {
        return false;
    };
    let wire = name.value_bytes().get(name.prefix_value_len(last)..);
    wire.and_then(|w| w.first()) == Some(&(types::IMPLICIT_SHA256_DIGEST_COMPONENT as u8))
}

/// Whether deadline `at` of entry `id` is still its deadline.
fn live(slots: &[Slot], at: Time, id: PitEntryId) -> bool {
    slots
        .get(id.slot as usize)
        .filter(|s| s.gen == id.gen)
        .and_then(|s| s.entry.as_ref())
        .is_some_and(|e| e.expiry == at)
}

fn entry_at(slots: &[Slot], s: u32) -> Option<&PitEntry> {
    slots.get(s as usize)?.entry.as_ref()
}

#[cfg(test)]
mod tests;
