//! The pending Interest table.
//!
//! Entries live in a slab and are indexed by the hash of their name (an open-addressing table
//! of (hash bits, slot) pairs, see [`SlotIndex`]): an entry is identified by
//! (name, CanBePrefix, MustBeFresh), as in NFD, and a hit is confirmed on the full name bytes
//! and both flags. Data matching probes the whole name, then (only at lengths that hold a
//! CanBePrefix entry, from a per-length count) each shorter prefix, then (only when some entry
//! is named by an implicit digest) the Data's full name.
//!
//! Expiry deadlines (slot and time, 12 bytes) sit in a binary heap with lazy deletion:
//! re-arming an entry pushes a new deadline; a popped deadline is acted on only when the
//! slot's entry expires at exactly that time, so one left by a re-armed or removed entry is
//! ignored. The heap is rebuilt when stale deadlines
//! outnumber the entries, so it stays within a small multiple of the PIT size. A deadline
//! that is still the heap's last element (a leaf) when its entry leaves or is re-armed is
//! removed at once: an entry satisfied before any other entry set a deadline (the common
//! exchange) thus leaves no stale deadline behind.
//!
//! Every entry is pending: a satisfied entry leaves at once, and what a straggler needs from
//! it (the Nonces sent upstream) stays in the forwarder's straggler list for the straggler
//! time. Removing the entry while its memory is still in cache, instead of 100 ms and
//! thousands of packets later, is what keeps the exchange path from missing the cache.
//!
//! Memory (at most 256 bytes per pending Interest, issue 31): an entry is 168 bytes (the
//! latest Interest kept as a `CompactInterest`, one in-record and one out-record inline, the
//! rarer fields out of line), its slot 176, its index place 8 in a table at most half full,
//! its deadline 12. `examples/pit_memory.rs` and `scripts/pit-memory.sh` measure the whole.
//!
//! Files: the entries and their records (`entry.rs`, `records.rs`), the index
//! (`slot_index.rs`), the deadlines (`deadlines.rs`), the table itself here.

use nameway_wire::tlv::types;
use nameway_wire::{DataView, InterestView, Name, NameHasher, PrefixHashes};
use smallvec::SmallVec;

use super::face_table::{FaceId, PitShare};
use super::same_name_value;
use crate::counters::PitCounters;
use crate::time::Time;

mod deadlines;
mod entry;
mod records;
mod slot_index;

use deadlines::{Deadline, Deadlines};
pub use entry::{InRecord, OutRecord, PitEntry};
use slot_index::{SlotIndex, NO_SLOT};

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
    timers: Deadlines<Deadline>,
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
        let s = self.slot_of(interest, hash)?;
        let gen = self.slots.get(s as usize)?.gen;
        self.hits += 1;
        Some(PitEntryId { slot: s, gen })
    }

    /// Whether an entry for `interest` exists (not counted as a hit).
    pub(crate) fn contains(&self, interest: &InterestView, hash: u64) -> bool {
        self.slot_of(interest, hash).is_some()
    }

    #[inline(always)]
    fn slot_of(&self, interest: &InterestView, hash: u64) -> Option<u32> {
        let (name, cbp, mbf) = (
            interest.name(),
            interest.can_be_prefix(),
            interest.must_be_fresh(),
        );
        let slots = &self.slots;
        let value = name.value_bytes();
        self.index.find(hash, |s| {
            entry_at(slots, s).is_some_and(|e| e.matches_interest(hash, value, cbp, mbf))
        })
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
        cell.entry = Some(PitEntry::new(interest, hash, strategy, owner, digest_named));
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
            .then(|| entry.interest.name_len());
        let digest_named = entry.digest_named;
        let owner = entry.owner;
        self.timers.remove_if_last(Deadline {
            at: entry.expiry,
            slot: id.slot,
        });
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
        self.timers.remove_if_last(Deadline {
            at: old,
            slot: id.slot,
        });
        self.timers.push(Deadline { at, slot: id.slot });
        if self.timers.len() > 2 * self.len + 64 {
            self.rebuild_timers();
        }
    }

    fn rebuild_timers(&mut self) {
        let pending = self.slots.iter().enumerate().filter_map(|(i, s)| {
            let e = s.entry.as_ref()?;
            Some(Deadline {
                at: e.expiry,
                slot: i as u32,
            })
        });
        self.timers.rebuild(pending);
    }

    /// The earliest deadline, or an earlier stale one (a spurious wake-up that
    /// [`Pit::pop_expired`] then discards): O(1), no entry is touched.
    pub(crate) fn next_expiry(&self) -> Option<Time> {
        self.timers.peek().map(|d| d.at)
    }

    /// An entry whose deadline is at or before `now`, if any; stale deadlines met on the way
    /// are discarded.
    pub(crate) fn pop_expired(&mut self, now: Time) -> Option<PitEntryId> {
        while let Some(&Deadline { at, slot }) = self.timers.peek() {
            if at > now {
                return None;
            }
            self.timers.pop();
            if let Some(id) = live(&self.slots, at, slot) {
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
                && same_name_value(e.interest.name_value(), value);
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

/// Whether the last component of `name` is an ImplicitSha256DigestComponent (type 0x01, a
/// single octet), read without decoding the component.
pub(crate) fn ends_with_implicit_digest(name: &Name) -> bool {
    let Some(last) = name.len().checked_sub(1) else {
        return false;
    };
    let wire = name.value_bytes().get(name.prefix_value_len(last)..);
    wire.and_then(|w| w.first()) == Some(&(types::IMPLICIT_SHA256_DIGEST_COMPONENT as u8))
}

/// The entry in `slot`, if `at` is when it expires (then `at` is its deadline, whoever pushed it).
fn live(slots: &[Slot], at: Time, slot: u32) -> Option<PitEntryId> {
    let s = slots.get(slot as usize)?;
    s.entry
        .as_ref()
        .filter(|e| e.expiry == at)
        .map(|_| PitEntryId { slot, gen: s.gen })
}

fn entry_at(slots: &[Slot], s: u32) -> Option<&PitEntry> {
    slots.get(s as usize)?.entry.as_ref()
}

#[cfg(test)]
mod tests;
