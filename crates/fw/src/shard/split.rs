//! Automatic splits of a dominating dispatch key.
//!
//! When one key (a name's first `K` components, [`super::dispatch`]) keeps one shard busy
//! while the others idle for [`SKEWED_IN_A_ROW`] sampling windows in a row ([`super::skew`]),
//! the shard that saw it splits the key: from then on names under it are dispatched by one
//! component more, so `/video/title/seg=i` spreads over the shards by `seg=i`. Every shard
//! switches at once (the splits are read by every dispatcher without a lock), and nothing in
//! flight is lost or duplicated:
//!
//! - **Interests and their retransmissions still meet.** For [`DRAIN_MS`] after the split an
//!   Interest of the key goes first to the shard of the old rule (`A`). `A` forwards it itself
//!   when its PIT holds an entry for it or its dead-nonce list knows its Nonce (aggregation,
//!   retransmission and loop detection meet there, as before the split); otherwise it hands it
//!   to the shard of the new rule (`B`), where it makes its entry. After the drain period
//!   Interests go to `B` directly.
//! - **Data reach their entries.** For [`COPY_MS`] after the split a Data of the key goes to
//!   `B` and is copied to `A` (whose entries, made before the split or aggregated during the
//!   drain, live at most one InterestLifetime longer); a copy that meets no entry is dropped
//!   as unsolicited, as the copies for spanning CanBePrefix Interests are.
//! - **No flapping.** A key is split once and never merged back; one split drains at a time;
//!   at most [`SPLIT_SLOTS`] splits per run (a restart forgets them: the configured
//!   `[[forwarder.dispatch]]` entries are the durable form).
//!
//! Interests with an InterestLifetime longer than the drain period that were pending at `A`
//! when it ended may have a retransmission forwarded again by `B` (one more upstream Interest,
//! no loss).

use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use nameway_wire::PrefixHashes;

use crate::time::Time;

/// Most splits per run.
pub const SPLIT_SLOTS: usize = 16;

/// How long Interests of a split key still go to their old shard first (ms): twice the
/// default InterestLifetime.
pub const DRAIN_MS: u64 = 8_000;

/// How long Data of a split key are copied to their old shard (ms): the drain period plus
/// the longest InterestLifetime of an entry aggregated during it (the default's twice).
pub const COPY_MS: u64 = DRAIN_MS + 8_000;

/// Sampling windows in a row that must name the same dominating key before it is split.
pub const SKEWED_IN_A_ROW: u32 = 3;

/// A split could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SplitRefused {
    /// Automatic splits are off (`[forwarder] auto_split = false`).
    Off,
    /// The key was split already (a key is split once).
    AlreadySplit,
    /// Another split is still draining.
    Draining,
    /// [`SPLIT_SLOTS`] splits were made already.
    Full,
    /// `k` is not longer than the key.
    NotLonger,
}

impl core::fmt::Display for SplitRefused {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::Off => "automatic splits are off",
            Self::AlreadySplit => "the key was split already",
            Self::Draining => "another split is still draining",
            Self::Full => "the table of automatic splits is full",
            Self::NotLonger => "the new K is not longer than the key",
        })
    }
}

impl std::error::Error for SplitRefused {}

/// One split: the key's hash (the hash of its first `m` components), the new `K`, and when.
#[derive(Debug, Default)]
struct Slot {
    key: AtomicU64,
    m: AtomicUsize,
    k: AtomicUsize,
    since_ms: AtomicU64,
}

/// The automatic splits, shared by every shard's dispatcher. Written rarely (a split), under a
/// lock that readers never take; read on the packet path with one atomic load while empty.
#[derive(Debug)]
pub struct Splits {
    slots: Box<[Slot]>,
    /// Slots in use: readers see a slot's fields once they see it counted.
    used: AtomicUsize,
    /// When the latest split stops draining and copying (ms).
    copy_until_ms: AtomicU64,
    drain_until_ms: AtomicU64,
    enabled: bool,
    writer: Mutex<()>,
}

/// How a dispatch key resolves through the splits ([`Splits::resolve`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// Components hashed under the splits.
    pub(crate) m: usize,
    /// Their hash.
    pub(crate) hash: u64,
    /// The `K` that applied.
    pub(crate) k: usize,
    /// The key's hash before a split that is still draining (Interests go there first).
    pub(crate) draining_from: Option<u64>,
    /// The key's hash before a split whose Data are still copied to its old shard.
    pub(crate) copying_from: Option<u64>,
}

fn ms(t: Time) -> u64 {
    t.as_nanos() / 1_000_000
}

impl Splits {
    /// No splits; `enabled` allows [`Splits::split`] to make them.
    pub fn new(enabled: bool) -> Self {
        Self {
            slots: (0..SPLIT_SLOTS).map(|_| Slot::default()).collect(),
            used: AtomicUsize::new(0),
            copy_until_ms: AtomicU64::new(0),
            drain_until_ms: AtomicU64::new(0),
            enabled,
            writer: Mutex::new(()),
        }
    }

    /// Whether automatic splits may be made.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Splits made so far.
    pub fn len(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// Whether no split was made.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether a split is draining at `now` (Interests of its key go to the old shard first).
    pub fn draining(&self, now: Time) -> bool {
        ms(now) < self.drain_until_ms.load(Ordering::Acquire)
    }

    /// Splits the key whose first `m` components hash to `key`: its names are dispatched by
    /// their first `k` components from `now` on.
    ///
    /// # Errors
    /// [`SplitRefused`] says why not.
    pub fn split(&self, key: u64, m: usize, k: usize, now: Time) -> Result<(), SplitRefused> {
        if !self.enabled {
            return Err(SplitRefused::Off);
        }
        if k <= m {
            return Err(SplitRefused::NotLonger);
        }
        let _guard = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let used = self.used.load(Ordering::Acquire);
        if self.find(key, used).is_some() {
            return Err(SplitRefused::AlreadySplit);
        }
        if self.draining(now) {
            return Err(SplitRefused::Draining);
        }
        let Some(slot) = self.slots.get(used) else {
            return Err(SplitRefused::Full);
        };
        slot.key.store(key, Ordering::Relaxed);
        slot.m.store(m, Ordering::Relaxed);
        slot.k.store(k, Ordering::Relaxed);
        slot.since_ms.store(ms(now), Ordering::Relaxed);
        self.drain_until_ms
            .store(ms(now) + DRAIN_MS, Ordering::Release);
        self.copy_until_ms
            .fetch_max(ms(now) + COPY_MS, Ordering::Release);
        // Publishes the slot's fields with it.
        self.used.store(used + 1, Ordering::Release);
        Ok(())
    }

    fn find(&self, key: u64, used: usize) -> Option<&Slot> {
        self.slots
            .get(..used)?
            .iter()
            .find(|s| s.key.load(Ordering::Relaxed) == key)
    }

    /// The key of a name (`hashes`, `len` components that count) whose first `m` components
    /// hash to `hash` under `k`, followed through the splits. `None` when no split applies
    /// (the common case: one atomic load).
    #[inline]
    pub(crate) fn resolve(
        &self,
        hashes: &PrefixHashes,
        len: usize,
        mut m: usize,
        mut hash: u64,
        mut k: usize,
        now: Time,
    ) -> Option<Resolved> {
        let used = self.used.load(Ordering::Acquire);
        if used == 0 {
            return None;
        }
        let now_ms = ms(now);
        let (mut draining_from, mut copying_from, mut moved) = (None, None, false);
        // A key split again after its first split follows the chain (at most one per slot).
        for _ in 0..used {
            let Some(slot) = self.find(hash, used) else {
                break;
            };
            if slot.m.load(Ordering::Relaxed) != m {
                // Another prefix length with the same hash: not this key.
                break;
            }
            let k2 = slot.k.load(Ordering::Relaxed);
            let m2 = k2.min(len);
            let since = slot.since_ms.load(Ordering::Relaxed);
            k = k2;
            if m2 <= m {
                // The name is no longer than the key: it stays where it was.
                break;
            }
            let Some(h2) = hashes.get(m2) else {
                break;
            };
            if now_ms < since + DRAIN_MS && draining_from.is_none() {
                draining_from = Some(hash);
            }
            if now_ms < since + COPY_MS && copying_from.is_none() {
                copying_from = Some(hash);
            }
            (m, hash, moved) = (m2, h2, true);
        }
        moved.then_some(Resolved {
            m,
            hash,
            k,
            draining_from,
            copying_from,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nameway_wire::{Name, NameHasher};

    fn hashes(n: &str) -> (PrefixHashes, usize) {
        let name: Name = n.parse().unwrap();
        (NameHasher::with_seed(3).prefix_hashes(&name), name.len())
    }

    #[test]
    fn a_split_key_resolves_by_one_component_more_and_drains_then_copies() {
        let s = Splits::new(true);
        let (h, len) = hashes("/video/title/seg=1/v");
        let key = h.get(2).unwrap();
        assert_eq!(s.resolve(&h, len, 2, key, 2, Time::ZERO), None);
        s.split(key, 2, 3, Time::from_millis(1_000)).unwrap();
        let r = s
            .resolve(&h, len, 2, key, 2, Time::from_millis(1_500))
            .unwrap();
        assert_eq!((r.m, r.hash, r.k), (3, h.get(3).unwrap(), 3));
        assert_eq!(r.draining_from, Some(key));
        assert_eq!(r.copying_from, Some(key));
        let later = Time::from_millis(1_000 + DRAIN_MS);
        let r = s.resolve(&h, len, 2, key, 2, later).unwrap();
        assert_eq!((r.draining_from, r.copying_from), (None, Some(key)));
        let r = s
            .resolve(&h, len, 2, key, 2, Time::from_millis(1_000 + COPY_MS))
            .unwrap();
        assert_eq!((r.draining_from, r.copying_from), (None, None));
        assert_eq!(r.hash, h.get(3).unwrap());
    }

    #[test]
    fn other_keys_and_names_no_longer_than_the_key_stay() {
        let s = Splits::new(true);
        let (h, len) = hashes("/video/title/seg=1");
        s.split(h.get(2).unwrap(), 2, 3, Time::ZERO).unwrap();
        let (other, olen) = hashes("/audio/track/seg=1");
        let ok = other.get(2).unwrap();
        assert_eq!(s.resolve(&other, olen, 2, ok, 2, Time::ZERO), None);
        let (short, slen) = hashes("/video/title");
        let sk = short.get(2).unwrap();
        assert_eq!(s.resolve(&short, slen, 2, sk, 2, Time::ZERO), None);
        let _ = len;
    }

    #[test]
    fn a_key_is_split_once_one_drain_at_a_time_and_never_when_off() {
        let s = Splits::new(true);
        let t = Time::from_millis(10);
        assert_eq!(s.split(1, 2, 3, t), Ok(()));
        assert_eq!(s.split(1, 2, 3, t), Err(SplitRefused::AlreadySplit));
        assert_eq!(s.split(2, 2, 3, t), Err(SplitRefused::Draining));
        assert_eq!(s.split(2, 2, 3, Time::from_millis(10 + DRAIN_MS)), Ok(()));
        assert_eq!(s.split(3, 2, 2, t), Err(SplitRefused::NotLonger));
        assert_eq!(Splits::new(false).split(1, 2, 3, t), Err(SplitRefused::Off));
        let full = Splits::new(true);
        for i in 0..SPLIT_SLOTS as u64 {
            full.split(i + 1, 2, 3, Time::from_millis(i * DRAIN_MS))
                .unwrap();
        }
        let end = Time::from_millis(SPLIT_SLOTS as u64 * DRAIN_MS);
        assert_eq!(full.split(99, 2, 3, end), Err(SplitRefused::Full));
        assert_eq!(full.len(), SPLIT_SLOTS);
    }
}
