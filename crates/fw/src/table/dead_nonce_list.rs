//! The dead-nonce list: (name, Nonce) pairs of Interests that recently left the PIT, so that a
//! looping copy arriving after its PIT entry is gone is still recognised (NFD DeadNonceList).
//!
//! Records are 64-bit digests of (name hash, Nonce), kept per face in insertion order (so in
//! expiry order) and in one hash table for look-up. A record lives `lifetime` (NFD: 6 s); the
//! list holds at most `capacity` records. A false positive (two pairs with one digest) makes
//! one Interest look like a loop, as in NFD.
//!
//! Fairness: each record is charged to a face (the downstream whose Interest it was). When the
//! list is full, a face holding at least its share (`capacity / faces holding records`) makes
//! room with its own oldest record; a face below its share takes the oldest record of the face
//! holding the most. So a face flooding expiring Interests recycles its own records and cannot
//! push out the records of faces below their share (which would let their loops through). NFD's
//! list evicts the oldest record whoever it belongs to.
//!
//! Cost: the look-up is unchanged (one hash probe); an insert adds one face-map probe and a
//! push on that face's queue. A global queue of `(expiry, face)` drives expiry; the entries of
//! records evicted early stay in it until they expire or it is compacted (past twice the
//! capacity), so it stays within a constant factor of the capacity.

use core::time::Duration;
use std::collections::VecDeque;

use hashbrown::HashTable;

use super::face_table::{FaceId, FaceIdMap};
use crate::counters::DnlCounters;
use crate::time::Time;

/// The 64-bit digest of (name, Nonce) that the dead-nonce and straggler lists keep.
#[inline]
pub(crate) fn nonce_digest(name_hash: u64, nonce: u32) -> u64 {
    // The name hash is already keyed and well mixed; fold the Nonce in and re-mix so that the
    // table's control bits see it too.
    let x = name_hash ^ u64::from(nonce).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9)
}

/// NFD's default record lifetime.
pub const DEFAULT_DNL_LIFETIME: Duration = Duration::from_secs(6);

/// The dead-nonce list.
#[derive(Debug)]
pub(crate) struct DeadNonceList {
    lifetime: Duration,
    capacity: usize,
    /// Records held (the sum of the per-face queue lengths).
    len: usize,
    /// Each face's records, `(expiry, digest)`, oldest first. A face leaves the map when its
    /// last record goes.
    faces: FaceIdMap<VecDeque<(Time, u64)>>,
    /// `(expiry, face)` of every record in insertion order, for expiry; may also hold entries
    /// of records already evicted (see [`DeadNonceList::expire`]).
    order: VecDeque<(Time, FaceId)>,
    /// `(digest, multiplicity)`.
    set: HashTable<(u64, u32)>,
    /// The face holding the most records, as far as known (checked before use).
    heaviest: Option<FaceId>,
    hits: u64,
    evicted_own: u64,
    evicted_heaviest: u64,
}

impl DeadNonceList {
    pub(crate) fn new(lifetime: Duration, capacity: usize) -> Self {
        Self {
            lifetime,
            capacity,
            len: 0,
            faces: FaceIdMap::default(),
            order: VecDeque::new(),
            set: HashTable::new(),
            heaviest: None,
            hits: 0,
            evicted_own: 0,
            evicted_heaviest: 0,
        }
    }

    /// The record lifetime.
    pub(crate) fn lifetime(&self) -> Duration {
        self.lifetime
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Records charged to `face`.
    #[cfg(test)]
    pub(crate) fn held_by(&self, face: FaceId) -> usize {
        self.held(face)
    }

    pub(crate) fn counters(&self) -> DnlCounters {
        DnlCounters {
            entries: self.len,
            capacity: self.capacity,
            hits: self.hits,
            evicted_own: self.evicted_own,
            evicted_heaviest: self.evicted_heaviest,
        }
    }

    /// Records (name, nonce), charged to `face`.
    pub(crate) fn add(&mut self, now: Time, face: FaceId, name_hash: u64, nonce: u32) {
        if self.capacity == 0 {
            return;
        }
        self.expire(now);
        if self.len >= self.capacity {
            self.make_room(face);
        }
        let d = nonce_digest(name_hash, nonce);
        let expiry = now + self.lifetime;
        let queue = self.faces.entry(face).or_default();
        queue.push_back((expiry, d));
        let held = queue.len();
        self.len += 1;
        self.order.push_back((expiry, face));
        match self.set.find_mut(d, |&(x, _)| x == d) {
            Some((_, n)) => *n += 1,
            None => {
                self.set.insert_unique(d, (d, 1), |&(x, _)| x);
            }
        }
        if self.heaviest != Some(face) && held > self.heaviest.map_or(0, |h| self.held(h)) {
            self.heaviest = Some(face);
        }
        if self.order.len() > self.capacity.saturating_mul(2).max(64) {
            self.compact();
        }
    }

    /// Whether (name, nonce) is recorded.
    #[inline]
    pub(crate) fn has(&mut self, now: Time, name_hash: u64, nonce: u32) -> bool {
        if self.len == 0 {
            return false;
        }
        self.expire(now);
        let d = nonce_digest(name_hash, nonce);
        let hit = self.set.find(d, |&(x, _)| x == d).is_some();
        if hit {
            self.hits += 1;
        }
        hit
    }

    /// Drops the records that have expired.
    ///
    /// Each face's records are a suffix of its entries in `order` (records leave a face's
    /// queue oldest first, by expiry or eviction), so for an `order` entry that is due, the
    /// face's oldest record is either due too (and goes) or newer (the entry was that of a
    /// record evicted earlier, and is skipped).
    pub(crate) fn expire(&mut self, now: Time) {
        while let Some(&(t, face)) = self.order.front() {
            if t > now {
                break;
            }
            self.order.pop_front();
            let due = self
                .faces
                .get(&face)
                .and_then(VecDeque::front)
                .is_some_and(|&(expiry, _)| expiry <= now);
            if due {
                self.pop_oldest(face);
            }
        }
    }

    /// Frees one record for `face`: its own oldest when it holds at least its share, else the
    /// oldest of the face holding the most.
    fn make_room(&mut self, face: FaceId) {
        let holders = self.faces.len() + usize::from(!self.faces.contains_key(&face));
        let share = (self.capacity / holders.max(1)).max(1);
        if self.held(face) >= share {
            self.pop_oldest(face);
            self.evicted_own += 1;
            return;
        }
        // The heaviest holds at least the average, which is at least the share; if the one
        // remembered holds less, it is stale (its records expired): look again.
        let known = self.heaviest.filter(|&h| self.held(h) >= share);
        let victim = known.or_else(|| {
            self.faces
                .iter()
                .max_by_key(|(_, q)| q.len())
                .map(|(&f, _)| f)
        });
        self.heaviest = victim;
        if let Some(victim) = victim {
            self.pop_oldest(victim);
            self.evicted_heaviest += 1;
        }
    }

    fn held(&self, face: FaceId) -> usize {
        self.faces.get(&face).map_or(0, VecDeque::len)
    }

    /// Removes `face`'s oldest record.
    fn pop_oldest(&mut self, face: FaceId) {
        let Some(queue) = self.faces.get_mut(&face) else {
            return;
        };
        let Some((_, d)) = queue.pop_front() else {
            return;
        };
        if queue.is_empty() {
            self.faces.remove(&face);
        }
        self.len -= 1;
        if let Ok(mut e) = self.set.find_entry(d, |&(x, _)| x == d) {
            let n = &mut e.get_mut().1;
            *n -= 1;
            if *n == 0 {
                e.remove();
            }
        }
    }

    /// Drops the `order` entries of records evicted early: each face's live records are its
    /// newest entries, as many as its queue holds.
    fn compact(&mut self) {
        let mut live: FaceIdMap<usize> = self.faces.iter().map(|(&f, q)| (f, q.len())).collect();
        let mut kept = VecDeque::with_capacity(self.len);
        for &(t, face) in self.order.iter().rev() {
            if let Some(n) = live.get_mut(&face).filter(|n| **n > 0) {
                *n -= 1;
                kept.push_front((t, face));
            }
        }
        self.order = kept;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: FaceId = FaceId(300);
    const B: FaceId = FaceId(301);
    const C: FaceId = FaceId(302);

    #[test]
    fn records_expire_after_lifetime() {
        let mut dnl = DeadNonceList::new(Duration::from_millis(100), 16);
        dnl.add(Time::ZERO, A, 1, 7);
        assert!(dnl.has(Time::from_millis(50), 1, 7));
        assert!(!dnl.has(Time::from_millis(50), 1, 8));
        assert!(!dnl.has(Time::from_millis(50), 2, 7));
        assert!(!dnl.has(Time::from_millis(100), 1, 7));
        assert_eq!(dnl.len(), 0);
        assert_eq!(dnl.counters().hits, 1);
    }

    #[test]
    fn capacity_evicts_oldest_and_duplicates_are_counted() {
        let mut dnl = DeadNonceList::new(Duration::from_secs(6), 3);
        dnl.add(Time::ZERO, A, 1, 1);
        dnl.add(Time::ZERO, A, 1, 1);
        dnl.add(Time::ZERO, A, 2, 2);
        dnl.add(Time::ZERO, A, 3, 3);
        assert_eq!(dnl.len(), 3);
        // one copy of (1,1) is gone, the other remains
        assert!(dnl.has(Time::ZERO, 1, 1));
        dnl.add(Time::ZERO, A, 4, 4);
        assert!(!dnl.has(Time::ZERO, 1, 1));
        assert!(dnl.has(Time::ZERO, 4, 4));
        assert_eq!(dnl.len(), 3);
        assert_eq!(dnl.counters().evicted_own, 2);
    }

    #[test]
    fn zero_capacity_records_nothing() {
        let mut dnl = DeadNonceList::new(Duration::from_secs(6), 0);
        dnl.add(Time::ZERO, A, 1, 1);
        assert!(!dnl.has(Time::ZERO, 1, 1));
    }

    /// A face flooding the list recycles its own records: another face's records, fewer than
    /// its share, all stay (NFD's oldest-first eviction would have dropped every one).
    #[test]
    fn a_flood_does_not_evict_another_face_below_its_share() {
        let mut dnl = DeadNonceList::new(Duration::from_secs(6), 100);
        let mut now = Time::ZERO;
        for n in 0..30 {
            dnl.add(now, A, 1000 + n, 1);
        }
        for n in 0..10_000 {
            now += Duration::from_micros(100); // all within one lifetime
            dnl.add(now, B, 5000 + n, 2);
        }
        for n in 0..30 {
            assert!(dnl.has(now, 1000 + n, 1), "record {n} of the quiet face");
        }
        assert_eq!((dnl.held_by(A), dnl.held_by(B), dnl.len()), (30, 70, 100));
        // The flood's newest records are there; its oldest were recycled.
        assert!(dnl.has(now, 5000 + 9_999, 2));
        assert!(!dnl.has(now, 5000, 2));
        let c = dnl.counters();
        assert_eq!((c.evicted_own, c.evicted_heaviest), (9_930, 0));
        // The quiet face, below its share (50), takes room from the flooder, not itself.
        for n in 30..50 {
            dnl.add(now, A, 1000 + n, 1);
        }
        assert_eq!((dnl.held_by(A), dnl.held_by(B)), (50, 50));
        assert_eq!(dnl.counters().evicted_heaviest, 20);
        assert!((0..50).all(|n| dnl.has(now, 1000 + n, 1)));
        // At its share, it recycles its own.
        dnl.add(now, A, 2000, 1);
        assert_eq!((dnl.held_by(A), dnl.held_by(B)), (50, 50));
        assert!(!dnl.has(now, 1000, 1));
    }

    /// A new face (no records yet) gets room from the heaviest; the heaviest is found again
    /// when the one remembered has lost its records to expiry.
    #[test]
    fn a_new_face_takes_from_the_heaviest_even_after_expiry() {
        let mut dnl = DeadNonceList::new(Duration::from_secs(6), 10);
        for n in 0..6 {
            dnl.add(Time::ZERO, A, n, 1);
        }
        for n in 0..4 {
            dnl.add(Time::from_millis(3000), B, 100 + n, 1);
        }
        // A's records expire; B holds 4. Then B fills the list to 10.
        let later = Time::from_millis(7000);
        for n in 4..10 {
            dnl.add(later, B, 100 + n, 1);
        }
        assert_eq!((dnl.held_by(A), dnl.held_by(B), dnl.len()), (0, 10, 10));
        dnl.add(later, C, 500, 1);
        assert_eq!((dnl.held_by(B), dnl.held_by(C)), (9, 1));
        assert_eq!(dnl.counters().evicted_heaviest, 1);
        assert!(dnl.has(later, 500, 1));
    }

    /// Entries of evicted records do not pile up in the expiry queue, and expiry after a
    /// compaction still removes exactly the due records.
    #[test]
    fn the_expiry_queue_stays_bounded() {
        let mut dnl = DeadNonceList::new(Duration::from_secs(6), 100);
        let mut now = Time::ZERO;
        for n in 0..100_000u64 {
            now += Duration::from_micros(10);
            dnl.add(now, if n % 10 == 0 { A } else { B }, n, 3);
            assert!(dnl.order.len() <= 200 + 1);
        }
        assert_eq!(dnl.len(), 100);
        dnl.expire(now + Duration::from_secs(6));
        assert_eq!((dnl.len(), dnl.order.len()), (0, 0));
        assert!(dnl.faces.is_empty() && dnl.set.is_empty());
    }
}
