//! The content store's index: name-tree node ids by prefix hash, in an open-addressing table
//! whose lines we can prefetch.
//!
//! # Why not `hashbrown`
//!
//! With a store larger than the cache, inserting a new name writes an index slot that misses
//! the cache, and the next atomic reference-count update (a full fence: the packet sent, the
//! Interest released) waits for that store. With our own table the pipeline learns which slot
//! an insert will use as soon as it has hashed the Data's name ([`NodeIndex::prefetch_probe`])
//! and brings that line in while it matches the PIT and sends the Data.
//!
//! # Layout
//!
//! One control byte per slot (0: empty; otherwise the top bit and seven bits of the hash) and
//! the slots themselves (hash, node id, node generation). Probing is linear over the control
//! bytes, which are small enough to stay in cache; a slot is read only when its control byte
//! matches. The table is at most half full, so a probe that misses stops after two or three
//! control bytes, almost always in one line.
//!
//! # Stale entries
//!
//! Entries are never removed one by one. A node that goes bumps its generation; an entry whose
//! generation is no longer its node's is stale, and a look-up skips it. An insert takes the
//! first empty slot; once used slots (live or stale) reach half the table, one sequential
//! pass in place empties the stale slots and moves each live entry back into a slot that
//! emptied before it in its probe; the table is then resized to three times the live entries
//! (rounded up to a power of two) if it is not that size already, which in a steady state it
//! is. A store of 2^16 packets thus has 2^18 slots: 256 KiB of control bytes, which the
//! look-ups of Interests that miss (most of them) read.

use crate::prefetch::prefetch;

/// Smallest table, in slots.
const MIN_SLOTS: usize = 16;
const EMPTY: u8 = 0;

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    hash: u64,
    id: u32,
    gen: u32,
}

/// The control byte of a used slot for `hash`.
#[inline]
fn tag(hash: u64) -> u8 {
    0x80 | (hash >> 57) as u8
}

/// Node ids by prefix hash (see the module documentation).
#[derive(Debug)]
pub(super) struct NodeIndex {
    /// One per slot; a power of two long.
    ctrl: Vec<u8>,
    slots: Vec<Slot>,
    /// Slots holding an entry, live or stale.
    used: usize,
}

impl NodeIndex {
    pub(super) fn new() -> Self {
        Self {
            ctrl: vec![EMPTY; MIN_SLOTS],
            slots: vec![Slot::default(); MIN_SLOTS],
            used: 0,
        }
    }

    /// Slots holding an entry, live or stale (for the size invariants in tests).
    #[cfg(test)]
    pub(super) fn used(&self) -> usize {
        self.used
    }

    /// Size of the table, in slots (for the size invariants in tests).
    #[cfg(test)]
    pub(super) fn capacity(&self) -> usize {
        self.ctrl.len()
    }

    #[inline]
    fn mask(&self) -> usize {
        self.ctrl.len() - 1
    }

    /// The slot an insert of `hash` would take now: the first empty one of its probe.
    #[inline]
    fn insert_position(&self, hash: u64) -> Option<usize> {
        let mask = self.mask();
        let mut i = hash as usize & mask;
        for _ in 0..self.ctrl.len() {
            if *self.ctrl.get(i)? == EMPTY {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
        None
    }

    /// Brings into the cache where a probe for `hash` starts: its control bytes, which a
    /// look-up reads, and its slot, which an insert most often takes or shares a line with
    /// (the table is at most half full; four slots share a line). Reading the control bytes
    /// to find the exact slot would stall on them instead.
    #[inline]
    pub(super) fn prefetch_probe(&self, hash: u64) {
        let i = hash as usize & self.mask();
        if let (Some(c), Some(slot)) = (self.ctrl.get(i), self.slots.get(i)) {
            prefetch(c);
            prefetch(slot);
        }
    }

    /// Whether some slot of `hash`'s probe carries its tag: a look-up of `hash` can only
    /// succeed if so. Reads control bytes only.
    #[inline(always)]
    pub(super) fn may_contain(&self, hash: u64) -> bool {
        let (mask, t) = (self.mask(), tag(hash));
        let mut i = hash as usize & mask;
        for _ in 0..self.ctrl.len() {
            match self.ctrl.get(i) {
                None | Some(&EMPTY) => return false,
                Some(&c) if c == t => return true,
                Some(_) => i = (i + 1) & mask,
            }
        }
        false
    }

    /// The id of the first entry for `hash` that `is_match(id, gen)` accepts (the caller
    /// checks the generation and the name).
    #[inline(always)]
    pub(super) fn find(
        &self,
        hash: u64,
        mut is_match: impl FnMut(u32, u32) -> bool,
    ) -> Option<u32> {
        let (mask, t) = (self.mask(), tag(hash));
        let mut i = hash as usize & mask;
        // At most half the slots are used, so a probe meets an empty slot well before this.
        for _ in 0..self.ctrl.len() {
            let c = *self.ctrl.get(i)?;
            if c == EMPTY {
                return None;
            }
            if c == t {
                let slot = self.slots.get(i)?;
                if slot.hash == hash && is_match(slot.id, slot.gen) {
                    return Some(slot.id);
                }
            }
            i = (i + 1) & mask;
        }
        None
    }

    /// Indexes node `id` (generation `gen`) under `hash`. The caller has checked that no
    /// live entry names the same prefix; `is_live(id, gen)` tells the live entries a rebuild
    /// keeps.
    pub(super) fn insert(
        &mut self,
        hash: u64,
        id: u32,
        gen: u32,
        is_live: impl Fn(u32, u32) -> bool,
    ) {
        if (self.used + 1) * 2 > self.ctrl.len() {
            self.rebuild(is_live);
        }
        self.place(Slot { hash, id, gen });
    }

    /// Writes `s` into the first empty slot of its probe.
    #[inline]
    fn place(&mut self, s: Slot) {
        let Some(i) = self.insert_position(s.hash) else {
            return;
        };
        if let (Some(c), Some(slot)) = (self.ctrl.get_mut(i), self.slots.get_mut(i)) {
            *c = tag(s.hash);
            *slot = s;
            self.used += 1;
        }
    }

    /// Drops every stale entry, then resizes the table to three times the live ones (rounded
    /// up to a power of two, at least [`MIN_SLOTS`]) if it is not that size already.
    fn rebuild(&mut self, is_live: impl Fn(u32, u32) -> bool) {
        self.sweep(is_live);
        let size = (self.used * 3).next_power_of_two().max(MIN_SLOTS);
        if size != self.ctrl.len() {
            self.resize(size);
        }
    }

    /// Drops the stale entries in place, in one sequential pass: each live entry moves back
    /// to the first empty slot from its home, if one has opened up before it. The pass starts
    /// after an empty slot, which no probe runs across, so when it reaches an entry every
    /// slot from the entry's home on is settled, and each entry still sits after a run of
    /// used slots from its home.
    fn sweep(&mut self, is_live: impl Fn(u32, u32) -> bool) {
        let Some(start) = self.ctrl.iter().position(|&c| c == EMPTY) else {
            return;
        };
        let (mask, len) = (self.mask(), self.ctrl.len());
        let (ctrl, slots) = (&mut self.ctrl, &mut self.slots);
        // Where a slot comes in the pass.
        let order = |i: usize| i.wrapping_sub(start) & mask;
        // The last empty slot passed (the one at `start` to begin with).
        let mut last_empty = start;
        for range in [start + 1..len, 0..start] {
            for i in range {
                let (Some(&c), Some(&s)) = (ctrl.get(i), slots.get(i)) else {
                    return;
                };
                if c == EMPTY {
                    last_empty = i;
                    continue;
                }
                if !is_live(s.id, s.gen) {
                    if let Some(c) = ctrl.get_mut(i) {
                        *c = EMPTY;
                    }
                    self.used -= 1;
                    last_empty = i;
                    continue;
                }
                let home = s.hash as usize & mask;
                // No slot has emptied between the home and here: the entry stays.
                if home == i || order(last_empty) < order(home) {
                    continue;
                }
                let mut j = home;
                while j != i && ctrl.get(j).is_some_and(|&c| c != EMPTY) {
                    j = (j + 1) & mask;
                }
                // (`j` is before `i`: the slot at `last_empty` is empty.)
                if j == i {
                    continue;
                }
                if let (Some(to), Some(slot)) = (ctrl.get_mut(j), slots.get_mut(j)) {
                    (*to, *slot) = (c, s);
                }
                if let Some(from) = ctrl.get_mut(i) {
                    *from = EMPTY;
                }
                last_empty = i;
            }
        }
    }

    /// Moves every entry into a fresh table of `size` slots.
    fn resize(&mut self, size: usize) {
        let ctrl = core::mem::replace(&mut self.ctrl, vec![EMPTY; size]);
        let slots = core::mem::replace(&mut self.slots, vec![Slot::default(); size]);
        self.used = 0;
        for (_, &s) in ctrl.iter().zip(&slots).filter(|&(&c, _)| c != EMPTY) {
            self.place(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(id: u32) -> u64 {
        u64::from(id).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }

    #[test]
    fn colliding_hashes_and_stale_entries() {
        let mut gens = vec![0u32; 64];
        let mut ix = NodeIndex::new();
        // Equal low bits: every probe starts at the same slot; equal tags too for 0..3.
        let h = |id: u32| 7 + u64::from(id) * 16;
        for id in 0..6u32 {
            ix.insert(h(id), id, gens[id as usize], |i, g| gens[i as usize] == g);
        }
        for id in 0..6u32 {
            assert_eq!(
                ix.find(h(id), |i, g| i == id && gens[i as usize] == g),
                Some(id)
            );
        }
        // Node 2 goes: its entry no longer answers, and the chain behind it still does.
        gens[2] += 1;
        assert_eq!(ix.find(h(2), |i, g| i == 2 && gens[i as usize] == g), None);
        for id in [0u32, 1, 3, 4, 5] {
            assert_eq!(
                ix.find(h(id), |i, g| i == id && gens[i as usize] == g),
                Some(id)
            );
        }
        assert_eq!(ix.find(999, |_, _| true), None);
        // The same hash for another node: found once the first is stale.
        ix.insert(h(3), 9, 0, |i, g| gens[i as usize] == g);
        gens[3] += 1;
        assert_eq!(ix.find(h(3), |i, g| gens[i as usize] == g), Some(9));
    }

    #[test]
    fn stays_at_most_half_full_and_drops_stale_entries() {
        let mut gens = vec![0u32; 10_000];
        let mut ix = NodeIndex::new();
        for id in 0..10_000u32 {
            ix.insert(spread(id), id, gens[id as usize], |i, g| {
                gens[i as usize] == g
            });
            // Keep 100 live: the id inserted 100 before goes.
            if id >= 100 {
                gens[(id - 100) as usize] += 1;
            }
            assert!(ix.used() * 2 <= ix.capacity());
            assert!(ix.capacity() <= 512, "capacity {}", ix.capacity());
        }
        for id in 0..10_000u32 {
            let found = ix.find(spread(id), |i, g| i == id && gens[i as usize] == g);
            assert_eq!(found.is_some(), id >= 9_900, "id {id}");
        }
    }

    /// Every used slot is reachable: the slots from its entry's home to it are all used.
    fn assert_probes_unbroken(ix: &NodeIndex) {
        let mask = ix.mask();
        for (i, (&c, s)) in ix.ctrl.iter().zip(&ix.slots).enumerate() {
            if c == EMPTY {
                continue;
            }
            assert_eq!(c, tag(s.hash));
            let mut j = s.hash as usize & mask;
            while j != i {
                assert_ne!(
                    ix.ctrl[j],
                    EMPTY,
                    "slot {i} unreachable from {}",
                    s.hash as usize & mask
                );
                j = (j + 1) & mask;
            }
        }
        assert_eq!(ix.ctrl.iter().filter(|&&c| c != EMPTY).count(), ix.used);
    }

    #[test]
    fn a_sweep_keeps_every_live_entry_reachable() {
        // Few distinct home slots (the first or the last eight of a table of up to 128), so
        // that clusters are long, wrap around the end of the table and hold stale entries in
        // their middle.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut rand = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..200 {
            let n = 20 + round % 40;
            let mut gens = vec![0u32; n];
            let mut ix = NodeIndex::new();
            let hashes: Vec<u64> = (0..n)
                .map(|_| (rand() & !0x7f) | (rand() % 8 + 120 * (round as u64 % 2)))
                .collect();
            for id in 0..n {
                ix.insert(hashes[id], id as u32, 0, |i, g| gens[i as usize] == g);
                if rand() % 3 == 0 {
                    gens[id] += 1;
                }
            }
            assert_probes_unbroken(&ix);
            let used = ix.used;
            ix.sweep(|i, g| gens[i as usize] == g);
            assert_probes_unbroken(&ix);
            let live = gens.iter().filter(|&&g| g == 0).count();
            assert!(ix.used <= used);
            assert!(ix.used >= live, "a sweep drops only stale entries");
            for id in 0..n {
                let found = ix.find(hashes[id], |i, g| i == id as u32 && gens[i as usize] == g);
                assert_eq!(found.is_some(), gens[id] == 0, "round {round} id {id}");
            }
            // Entries that went stale before the last rebuild are gone already; the sweep
            // leaves live entries only.
            assert!(ix
                .ctrl
                .iter()
                .zip(&ix.slots)
                .all(|(&c, s)| c == EMPTY || gens[s.id as usize] == s.gen));
        }
    }

    #[test]
    fn an_insert_takes_the_first_empty_slot_of_its_probe() {
        let mut ix = NodeIndex::new();
        for id in 0..5u32 {
            let h = spread(id);
            let at = ix.insert_position(h).unwrap();
            ix.insert(h, id, 0, |_, _| true);
            assert_eq!(ix.ctrl[at], tag(h));
            assert_eq!(ix.slots[at].id, id);
        }
    }
}
