//! The span filter: which keys have a pending CanBePrefix Interest that Data hashed elsewhere
//! may answer.
//!
//! One slot per key hash (modulo the slot count) holds the latest expiry noted there, in
//! milliseconds. Nothing is ever removed: a slot is live until its time passes. A live slot
//! costs a Data at most one extra copy to a shard that then drops it as unsolicited; a false
//! negative cannot happen (a noted key stays live until its Interest's lifetime ends).

use core::sync::atomic::{AtomicU64, Ordering};

use crate::time::Time;

/// Slots of the filter (a power of two).
pub const SPAN_SLOTS: usize = 4096;

/// Expiries of spanning CanBePrefix Interests by key hash, shared by every shard.
#[derive(Debug)]
pub struct SpanFilter {
    slots: Box<[AtomicU64]>,
    /// The latest expiry in any slot: while it has passed, no Data probes the slots.
    latest: AtomicU64,
}

impl Default for SpanFilter {
    fn default() -> Self {
        Self::new()
    }
}

impl SpanFilter {
    /// An empty filter.
    pub fn new() -> Self {
        Self {
            slots: (0..SPAN_SLOTS).map(|_| AtomicU64::new(0)).collect(),
            latest: AtomicU64::new(0),
        }
    }

    fn slot(&self, h: u64) -> Option<&AtomicU64> {
        self.slots.get((h as usize) & (SPAN_SLOTS - 1))
    }

    /// Notes a spanning Interest with key hash `h`, pending until `until`.
    pub fn note(&self, h: u64, until: Time) {
        let ms = until.as_nanos() / 1_000_000 + 1;
        if let Some(s) = self.slot(h) {
            s.fetch_max(ms, Ordering::Release);
        }
        self.latest.fetch_max(ms, Ordering::Release);
    }

    /// Whether any slot is live at `now`.
    pub fn any_live(&self, now: Time) -> bool {
        self.latest.load(Ordering::Acquire) > now.as_nanos() / 1_000_000
    }

    /// Whether the slot of `h` is live at `now`.
    pub fn live(&self, h: u64, now: Time) -> bool {
        self.slot(h)
            .is_some_and(|s| s.load(Ordering::Acquire) > now.as_nanos() / 1_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_noted_key_is_live_until_its_expiry_and_not_after() {
        let f = SpanFilter::new();
        assert!(!f.any_live(Time::ZERO));
        f.note(42, Time::from_millis(100));
        assert!(f.any_live(Time::from_millis(50)));
        assert!(f.live(42, Time::from_millis(100)));
        assert!(!f.live(43, Time::from_millis(50)));
        assert!(!f.live(42, Time::from_millis(101)));
        assert!(!f.any_live(Time::from_millis(101)));
    }
}
