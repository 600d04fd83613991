//! When to re-sign and re-send what this node announces: each announcement (or locator
//! record) is renewed at 2/3 of its lifetime, so a renewal lost once still arrives before the
//! old one expires.
//!
//! ```text
//! sched.schedule(name, signed_at_ms, lifetime_ms);   // after signing and sending
//! sched.poll_timeout()                               // arm the timer
//! while let Some(name) = sched.poll_renewal(now_ms) { /* re-sign, re-send, schedule again */ }
//! ```

use std::collections::{BTreeMap, BTreeSet};

/// When an announcement signed at `signed_at_ms` living `lifetime_ms` is renewed: at 2/3 of
/// its lifetime.
pub const fn renewal_time(signed_at_ms: u64, lifetime_ms: u64) -> u64 {
    signed_at_ms.saturating_add(lifetime_ms / 3 * 2 + lifetime_ms % 3 * 2 / 3)
}

/// Renewal times of the records this node owns, keyed by whatever names them (`K`: a
/// [`crate::KeyHash`], a [`nameway_wire::Name`]...).
#[derive(Clone, Debug)]
pub struct RenewalScheduler<K: Ord + Clone> {
    due: BTreeSet<(u64, K)>,
    by_key: BTreeMap<K, u64>,
}

impl<K: Ord + Clone> Default for RenewalScheduler<K> {
    fn default() -> Self {
        Self {
            due: BTreeSet::new(),
            by_key: BTreeMap::new(),
        }
    }
}

impl<K: Ord + Clone> RenewalScheduler<K> {
    /// Nothing scheduled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `key`, signed at `signed_at_ms` for `lifetime_ms`, for renewal at 2/3 of its
    /// lifetime (replacing any earlier schedule of `key`); returns when.
    pub fn schedule(&mut self, key: K, signed_at_ms: u64, lifetime_ms: u64) -> u64 {
        let at = renewal_time(signed_at_ms, lifetime_ms);
        self.schedule_at(key, at);
        at
    }

    /// Schedules `key` for renewal at `at_ms` (a retry after a failed send).
    pub fn schedule_at(&mut self, key: K, at_ms: u64) {
        if let Some(old) = self.by_key.insert(key.clone(), at_ms) {
            self.due.remove(&(old, key.clone()));
        }
        self.due.insert((at_ms, key));
    }

    /// Stops renewing `key`; whether it was scheduled.
    pub fn cancel(&mut self, key: &K) -> bool {
        match self.by_key.remove(key) {
            Some(at) => self.due.remove(&(at, key.clone())),
            None => false,
        }
    }

    /// When `key` is due, if scheduled.
    pub fn due_at(&self, key: &K) -> Option<u64> {
        self.by_key.get(key).copied()
    }

    /// When the next renewal is due.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.due.first().map(|(t, _)| *t)
    }

    /// The next record due by `now_ms`, taken off the schedule: re-sign it, re-send it and
    /// [`RenewalScheduler::schedule`] it again.
    pub fn poll_renewal(&mut self, now_ms: u64) -> Option<K> {
        let (t, _) = self.due.first()?;
        if *t > now_ms {
            return None;
        }
        let (_, key) = self.due.pop_first()?;
        self.by_key.remove(&key);
        Some(key)
    }

    /// Records scheduled.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// Whether nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::DEFAULT_LIFETIME_MS;

    #[test]
    fn two_thirds_of_the_lifetime() {
        assert_eq!(renewal_time(1000, DEFAULT_LIFETIME_MS), 1000 + 400_000);
        assert_eq!(renewal_time(0, 3), 2);
        assert_eq!(renewal_time(0, 4), 2);
        assert_eq!(renewal_time(0, 5), 3);
        assert_eq!(renewal_time(u64::MAX - 1, 600), u64::MAX);
        for l in 0..1000u64 {
            assert_eq!(renewal_time(0, l), l * 2 / 3);
        }
    }

    #[test]
    fn renewals_come_due_in_order_and_reschedule() {
        let mut s = RenewalScheduler::new();
        assert_eq!(s.poll_timeout(), None);
        assert_eq!(s.schedule("a", 0, DEFAULT_LIFETIME_MS), 400_000);
        s.schedule("b", 60_000, DEFAULT_LIFETIME_MS);
        s.schedule("c", 0, 30_000);
        assert_eq!(s.poll_timeout(), Some(20_000));
        assert_eq!(s.poll_renewal(19_999), None);
        assert_eq!(s.poll_renewal(20_000), Some("c"));
        assert_eq!(s.poll_renewal(20_000), None);
        // Everything due by then, in order.
        let due: Vec<_> = std::iter::from_fn(|| s.poll_renewal(500_000)).collect();
        assert_eq!(due, ["a", "b"]);
        assert!(s.is_empty());
        // Renewed "a" at 400 000: next at 800 000; rescheduling replaces.
        s.schedule("a", 400_000, DEFAULT_LIFETIME_MS);
        s.schedule_at("a", 450_000);
        assert_eq!((s.len(), s.due_at(&"a")), (1, Some(450_000)));
        assert_eq!(s.poll_timeout(), Some(450_000));
        assert!(s.cancel(&"a"));
        assert!(!s.cancel(&"a"));
        assert_eq!(s.poll_timeout(), None);
    }
}
