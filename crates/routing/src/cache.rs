//! A bounded map from a SHA-256 digest to a value that expires, with CLOCK replacement (an
//! approximation of LRU with one reference bit per entry and no list to maintain on a hit).
//!
//! Keys are digests of received bytes, so an attacker cannot aim at a bucket; expired entries
//! are dropped when met (a hit or the clock hand) and the table never grows past its capacity.

use std::collections::HashMap;

use foldhash::fast::RandomState;

/// A 32-byte digest key.
pub(crate) type Digest = [u8; 32];

struct Slot<V> {
    key: Digest,
    value: V,
    expires_at_ms: u64,
    referenced: bool,
}

/// See the module documentation.
pub(crate) struct ClockCache<V> {
    index: HashMap<Digest, usize, RandomState>,
    slots: Vec<Slot<V>>,
    hand: usize,
    capacity: usize,
}

impl<V> ClockCache<V> {
    /// An empty cache holding at most `capacity` entries (at least one).
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Self {
            index: HashMap::with_capacity_and_hasher(capacity.min(1 << 16), RandomState::default()),
            slots: Vec::with_capacity(capacity.min(1 << 16)),
            hand: 0,
            capacity,
        }
    }

    /// Number of entries (some may have expired and not been met yet).
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// The value under `key` if it has not expired at `now_ms`; an expired one is removed.
    pub(crate) fn get(&mut self, key: &Digest, now_ms: u64) -> Option<&V> {
        let i = *self.index.get(key)?;
        let expired = self.slots.get(i).is_none_or(|s| s.expires_at_ms < now_ms);
        if expired {
            self.remove_at(i);
            return None;
        }
        let slot = self.slots.get_mut(i)?;
        slot.referenced = true;
        Some(&slot.value)
    }

    /// Inserts or replaces `key`, valid through `expires_at_ms`; evicts an expired or
    /// unreferenced entry when full.
    pub(crate) fn insert(&mut self, key: Digest, value: V, expires_at_ms: u64, now_ms: u64) {
        let slot = Slot {
            key,
            value,
            expires_at_ms,
            referenced: false,
        };
        if let Some(&i) = self.index.get(&key) {
            if let Some(s) = self.slots.get_mut(i) {
                *s = slot;
            }
            return;
        }
        if self.slots.len() < self.capacity {
            self.index.insert(key, self.slots.len());
            self.slots.push(slot);
            return;
        }
        let victim = self.victim(now_ms);
        if let Some(old) = self.slots.get_mut(victim) {
            self.index.remove(&old.key);
            *old = slot;
            self.index.insert(key, victim);
        }
    }

    /// Removes `key` if present.
    pub(crate) fn remove(&mut self, key: &Digest) {
        if let Some(&i) = self.index.get(key) {
            self.remove_at(i);
        }
    }

    /// Removes every entry.
    pub(crate) fn clear(&mut self) {
        self.index.clear();
        self.slots.clear();
        self.hand = 0;
    }

    /// The slot the hand stops at: the first expired or unreferenced one, clearing reference
    /// bits on the way (at most two turns).
    fn victim(&mut self, now_ms: u64) -> usize {
        let n = self.slots.len();
        for _ in 0..2 * n {
            let i = self.hand % n;
            self.hand = (i + 1) % n;
            let Some(s) = self.slots.get_mut(i) else {
                break;
            };
            if s.expires_at_ms < now_ms || !s.referenced {
                return i;
            }
            s.referenced = false;
        }
        self.hand % n.max(1)
    }

    fn remove_at(&mut self, i: usize) {
        if i >= self.slots.len() {
            return;
        }
        let old = self.slots.swap_remove(i);
        self.index.remove(&old.key);
        if let Some(moved) = self.slots.get(i) {
            self.index.insert(moved.key, i);
        }
        if self.hand >= self.slots.len() {
            self.hand = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(i: u8) -> Digest {
        [i; 32]
    }

    #[test]
    fn bounded_and_expiring() {
        let mut c = ClockCache::new(3);
        for i in 0..3 {
            c.insert(k(i), i, 100, 0);
        }
        assert_eq!(c.get(&k(0), 50), Some(&0));
        assert_eq!(c.get(&k(2), 50), Some(&2));
        // Full: the unreferenced entry (1) goes first.
        c.insert(k(3), 3, 100, 50);
        assert_eq!(c.len(), 3);
        assert_eq!(c.get(&k(1), 50), None);
        assert_eq!(c.get(&k(3), 50), Some(&3));
        // Expired entries disappear when met.
        assert_eq!(c.get(&k(0), 100), Some(&0));
        assert_eq!(c.get(&k(0), 101), None);
        assert_eq!(c.len(), 2);
        // Replacing keeps one entry per key.
        c.insert(k(2), 20, 500, 101);
        assert_eq!(c.get(&k(2), 400), Some(&20));
        assert_eq!(c.len(), 2);
        c.remove(&k(2));
        assert_eq!(c.get(&k(2), 400), None);
        c.clear();
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn every_entry_referenced_still_makes_room() {
        let mut c = ClockCache::new(4);
        for round in 0..50u8 {
            for i in 0..4 {
                c.get(&k(i), 0);
            }
            c.insert(k(100 + round), u32::from(round), 1000, 0);
            assert!(c.len() <= 4);
            assert_eq!(c.get(&k(100 + round), 0), Some(&u32::from(round)));
        }
        // Index and slots agree: every key found maps to its own value.
        for i in 0..=255u8 {
            if let Some(v) = c.get(&k(i), 0) {
                assert_eq!(u32::from(i) - 100, *v);
            }
        }
    }
}
