//! The straggler list: (name, Nonce) of the Interests that satisfied PIT entries sent
//! upstream, so that a copy coming back shortly after the Data (a straggler) is still
//! recognised as a loop once the entry itself is gone (what NFD's straggler timer keeps a
//! satisfied entry for).
//!
//! Every satisfied Interest adds a record, so this is on the exchange path and must not pay
//! a cold hash-table removal per record as the dead-nonce list does. Records go into two
//! generations instead: new ones into the current set; when the current set is `lifetime`
//! old it becomes the previous set, and the old previous set is cleared in one pass. A record
//! therefore lives between one and two lifetimes. When the current set fills half the
//! capacity it turns over early, so that the list never holds more than `capacity` records
//! (then a record may live less than a lifetime, as in a full dead-nonce list).

use core::time::Duration;

use hashbrown::HashTable;

use super::dead_nonce_list::nonce_digest;
use crate::time::Time;

/// The straggler list.
#[derive(Debug)]
pub(crate) struct StragglerList {
    lifetime: Duration,
    /// Most records per generation.
    generation_capacity: usize,
    current: HashTable<u64>,
    previous: HashTable<u64>,
    /// When `current` started.
    started: Time,
    /// `started + lifetime`, kept so that the check on every add and look-up is one compare.
    turn_over_at: Time,
    hits: u64,
}

impl StragglerList {
    /// A list whose records live at least `lifetime` (unless it is full) and that holds at
    /// most `capacity` records.
    pub(crate) fn new(lifetime: Duration, capacity: usize) -> Self {
        Self {
            lifetime,
            generation_capacity: capacity / 2,
            current: HashTable::new(),
            previous: HashTable::new(),
            started: Time::ZERO,
            turn_over_at: Time::ZERO + lifetime,
            hits: 0,
        }
    }

    /// Records held.
    pub(crate) fn len(&self) -> usize {
        self.current.len() + self.previous.len()
    }

    /// Look-ups that found a record.
    #[cfg(test)]
    pub(crate) fn hits(&self) -> u64 {
        self.hits
    }

    /// Turns the generations over if the current one is a lifetime old.
    #[inline]
    fn age(&mut self, now: Time) {
        if now >= self.turn_over_at {
            self.turn_over(now);
        }
    }

    /// The previous generation goes; the current one becomes the previous (unless it too is
    /// a lifetime past its end, after an idle spell).
    fn turn_over(&mut self, now: Time) {
        let stale = now >= self.started + self.lifetime * 2;
        core::mem::swap(&mut self.current, &mut self.previous);
        self.current.clear();
        if stale {
            self.previous.clear();
        }
        self.started = now;
        self.turn_over_at = now + self.lifetime;
    }

    /// Records (name, nonce).
    pub(crate) fn add(&mut self, now: Time, name_hash: u64, nonce: u32) {
        if self.generation_capacity == 0 || self.lifetime.is_zero() {
            return;
        }
        self.age(now);
        if self.current.len() >= self.generation_capacity {
            self.turn_over(now);
        }
        let d = nonce_digest(name_hash, nonce);
        if self.current.find(d, |&x| x == d).is_none() {
            self.current.insert_unique(d, d, |&x| x);
        }
    }

    /// Whether (name, nonce) is recorded.
    #[inline]
    pub(crate) fn has(&mut self, now: Time, name_hash: u64, nonce: u32) -> bool {
        if self.current.is_empty() && self.previous.is_empty() {
            return false;
        }
        self.age(now);
        let d = nonce_digest(name_hash, nonce);
        let hit = self.current.find(d, |&x| x == d).is_some()
            || self.previous.find(d, |&x| x == d).is_some();
        if hit {
            self.hits += 1;
        }
        hit
    }

    /// Drops the generations that have aged out.
    pub(crate) fn expire(&mut self, now: Time) {
        self.age(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time::from_millis(n)
    }

    #[test]
    fn records_live_at_least_one_lifetime_and_at_most_two() {
        let mut s = StragglerList::new(Duration::from_millis(100), 1000);
        s.add(ms(0), 1, 7);
        s.add(ms(99), 2, 8);
        assert!(s.has(ms(99), 1, 7));
        assert!(!s.has(ms(99), 1, 8));
        assert!(!s.has(ms(99), 3, 7));
        // (1, 7) was added at 0: still there at 100 and 199 (one lifetime after (2, 8))
        assert!(s.has(ms(100), 1, 7));
        assert!(s.has(ms(198), 2, 8));
        // gone two lifetimes after its generation started
        assert!(!s.has(ms(200), 1, 7));
        assert!(!s.has(ms(200), 2, 8));
        assert_eq!(s.len(), 0);
        assert_eq!(s.hits(), 3);
    }

    #[test]
    fn idle_list_forgets_everything() {
        let mut s = StragglerList::new(Duration::from_millis(100), 1000);
        s.add(ms(0), 1, 1);
        s.expire(ms(500));
        assert_eq!(s.len(), 0);
        assert!(!s.has(ms(500), 1, 1));
    }

    #[test]
    fn capacity_bounds_the_records() {
        let mut s = StragglerList::new(Duration::from_secs(60), 10);
        for i in 0..100 {
            s.add(ms(0), i, 1);
            assert!(s.len() <= 10);
        }
        // the newest records are kept
        assert!(s.has(ms(0), 99, 1));
    }

    #[test]
    fn zero_lifetime_or_capacity_records_nothing() {
        for (lifetime, cap) in [(0, 10), (100, 0)] {
            let mut s = StragglerList::new(Duration::from_millis(lifetime), cap);
            s.add(ms(0), 1, 1);
            assert!(!s.has(ms(0), 1, 1));
        }
    }
}
