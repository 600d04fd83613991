//! The dead-nonce list: (name, Nonce) pairs of Interests that recently left the PIT, so that a
//! looping copy arriving after its PIT entry is gone is still recognised (NFD DeadNonceList).
//!
//! Records are 64-bit digests of (name hash, Nonce), kept in insertion order for expiry and in
//! a hash table for look-up. A record lives `lifetime` (NFD: 6 s); the list holds at most
//! `capacity` records, the oldest going first when it is full. A false positive (two pairs
//! with one digest) makes one Interest look like a loop, as in NFD.

use core::time::Duration;
use std::collections::VecDeque;

use hashbrown::HashTable;

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
    /// `(expiry, digest)` in insertion order (so in expiry order too).
    queue: VecDeque<(Time, u64)>,
    /// `(digest, multiplicity)`.
    set: HashTable<(u64, u32)>,
    hits: u64,
}

impl DeadNonceList {
    pub(crate) fn new(lifetime: Duration, capacity: usize) -> Self {
        Self {
            lifetime,
            capacity,
            queue: VecDeque::new(),
            set: HashTable::new(),
            hits: 0,
        }
    }

    /// The record lifetime.
    pub(crate) fn lifetime(&self) -> Duration {
        self.lifetime
    }

    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    pub(crate) fn counters(&self) -> DnlCounters {
        DnlCounters {
            entries: self.len(),
            capacity: self.capacity,
            hits: self.hits,
        }
    }

    /// Records (name, nonce).
    pub(crate) fn add(&mut self, now: Time, name_hash: u64, nonce: u32) {
        if self.capacity == 0 {
            return;
        }
        self.expire(now);
        while self.queue.len() >= self.capacity {
            self.pop_front();
        }
        let d = nonce_digest(name_hash, nonce);
        self.queue.push_back((now + self.lifetime, d));
        match self.set.find_mut(d, |&(x, _)| x == d) {
            Some((_, n)) => *n += 1,
            None => {
                self.set.insert_unique(d, (d, 1), |&(x, _)| x);
            }
        }
    }

    /// Whether (name, nonce) is recorded.
    pub(crate) fn has(&mut self, now: Time, name_hash: u64, nonce: u32) -> bool {
        if self.queue.is_empty() {
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
    pub(crate) fn expire(&mut self, now: Time) {
        while self.queue.front().is_some_and(|&(t, _)| t <= now) {
            self.pop_front();
        }
    }

    fn pop_front(&mut self) {
        let Some((_, d)) = self.queue.pop_front() else {
            return;
        };
        if let Ok(mut e) = self.set.find_entry(d, |&(x, _)| x == d) {
            let n = &mut e.get_mut().1;
            *n -= 1;
            if *n == 0 {
                e.remove();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_expire_after_lifetime() {
        let mut dnl = DeadNonceList::new(Duration::from_millis(100), 16);
        dnl.add(Time::ZERO, 1, 7);
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
        dnl.add(Time::ZERO, 1, 1);
        dnl.add(Time::ZERO, 1, 1);
        dnl.add(Time::ZERO, 2, 2);
        dnl.add(Time::ZERO, 3, 3);
        assert_eq!(dnl.len(), 3);
        // one copy of (1,1) is gone, the other remains
        assert!(dnl.has(Time::ZERO, 1, 1));
        dnl.add(Time::ZERO, 4, 4);
        assert!(!dnl.has(Time::ZERO, 1, 1));
        assert!(dnl.has(Time::ZERO, 4, 4));
        assert!(dnl.len() <= 3);
    }

    #[test]
    fn zero_capacity_records_nothing() {
        let mut dnl = DeadNonceList::new(Duration::from_secs(6), 0);
        dnl.add(Time::ZERO, 1, 1);
        assert!(!dnl.has(Time::ZERO, 1, 1));
    }
}
