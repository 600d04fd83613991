//! The PIT's index: entry slots by name hash.

/// The index's mark of an empty place (never a slot number: [`Pit::insert`] stops short of it).
pub(super) const NO_SLOT: u32 = u32::MAX;

/// Smallest index, in places.
const MIN_PLACES: usize = 16;

/// A place of the index: the low 32 bits of a name hash and the slot of an entry with that
/// name, or [`NO_SLOT`].
#[derive(Clone, Copy, Debug)]
pub(super) struct Place {
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
pub(super) struct SlotIndex {
    pub(super) places: Vec<Place>,
    pub(super) len: usize,
}

impl SlotIndex {
    pub(super) fn new() -> Self {
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
    pub(super) fn find(&self, hash: u64, mut is_match: impl FnMut(u32) -> bool) -> Option<u32> {
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
    pub(super) fn candidates(&self, hash: u64) -> Candidates<'_> {
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
    pub(super) fn insert(&mut self, hash: u64, slot: u32) {
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
    pub(super) fn remove(&mut self, hash: u64, slot: u32) {
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
pub(super) struct Candidates<'a> {
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
