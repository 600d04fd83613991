//! Skew detection: whether one dispatch key (a name's first `K` components) carries so much of
//! the traffic that one shard does most of the work while the others idle (the hot spot
//! NDN-DPDK's users report with its name dispatch table when one prefix dominates).
//!
//! Each shard looks at one packet in [`SAMPLE_EVERY`] its faces read and samples it when it is
//! an Interest: the shard it belongs to, and its dispatch key in a small heavy-hitter table (Misra-Gries, [`SLOTS`]
//! candidates). Every [`WINDOW_SAMPLES`] samples it judges the window: when one shard took at
//! least [`SHARD_SHARE_PERMILLE`] of the samples and one key at least [`KEY_SHARE_PERMILLE`],
//! the window is skewed, counted, and a [`SkewReport`] names the key and the remedy: a
//! `[[forwarder.dispatch]]` entry for that prefix with `k` one longer, so its names spread
//! over the shards by their next component.
//!
//! Detection only: the dispatch rule is not changed automatically (that needs every shard to
//! switch at once and the PIT entries made under the old rule to be met; see
//! docs/performance.md, "Skew").

use nameway_wire::Name;

use super::dispatch::{DispatchKey, Dispatcher};
use bytes::Bytes;

/// One packet read in this many is looked at (sampled when it is an Interest).
pub const SAMPLE_EVERY: u32 = 16;
/// Samples per window.
pub const WINDOW_SAMPLES: u32 = 1024;
/// Candidate keys tracked per window.
pub const SLOTS: usize = 4;
/// A window is skewed when one shard took at least this share (per mille) of the samples...
pub const SHARD_SHARE_PERMILLE: u32 = 750;
/// ...and one key at least this share (per mille).
pub const KEY_SHARE_PERMILLE: u32 = 500;

/// A skewed window: the key that dominated it and the dispatch entry that would spread it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkewReport {
    /// The dominating key's prefix (the first `k` components of its names).
    pub prefix: Name,
    /// The `K` its names were dispatched by.
    pub k: usize,
    /// The shard that took most of the window.
    pub shard: usize,
    /// That shard's share of the window's sampled Interests, per mille.
    pub shard_permille: u32,
    /// The key's share of the window's sampled Interests, per mille (a lower bound).
    pub key_permille: u32,
}

impl SkewReport {
    /// The `k` of the recommended `[[forwarder.dispatch]]` entry for [`SkewReport::prefix`].
    pub fn recommended_k(&self) -> usize {
        self.k + 1
    }
}

/// One shard's sampler (sans-I/O: fed by [`super::Shard::handle_packet`]).
#[derive(Debug)]
pub(crate) struct SkewMonitor {
    /// Packets until the next look.
    countdown: u32,
    samples: u32,
    /// Samples per destination shard.
    per_shard: Vec<u32>,
    /// Heavy-hitter candidates: key and count.
    slots: [(Option<DispatchKey>, u32); SLOTS],
    report: Option<SkewReport>,
    /// Windows judged skewed.
    pub(crate) skewed_windows: u64,
}

impl SkewMonitor {
    pub(crate) fn new(n: usize) -> Self {
        Self {
            countdown: SAMPLE_EVERY,
            samples: 0,
            per_shard: vec![0; n],
            slots: Default::default(),
            report: None,
            skewed_windows: 0,
        }
    }

    /// Counts a packet read by the shard; samples it when its turn comes and it is an
    /// Interest. True when that sample closed a skewed window.
    #[inline]
    pub(crate) fn on_routed(&mut self, d: &Dispatcher, wire: &Bytes) -> bool {
        self.countdown -= 1;
        if self.countdown > 0 {
            return false;
        }
        self.countdown = SAMPLE_EVERY;
        let before = self.skewed_windows;
        if let Some(key) = d.interest_key(wire) {
            self.sample(key);
        }
        self.skewed_windows != before
    }

    fn sample(&mut self, key: DispatchKey) {
        if let Some(c) = self.per_shard.get_mut(key.shard) {
            *c += 1;
        }
        self.samples += 1;
        // Misra-Gries: count a tracked key, else take a free slot, else decrement all.
        if let Some(slot) = self
            .slots
            .iter_mut()
            .find(|(k, _)| k.as_ref().is_some_and(|k| k.hash == key.hash))
        {
            slot.1 += 1;
        } else if let Some(slot) = self.slots.iter_mut().find(|(_, c)| *c == 0) {
            *slot = (Some(key), 1);
        } else {
            for slot in &mut self.slots {
                slot.1 -= 1;
            }
        }
        if self.samples >= WINDOW_SAMPLES {
            self.judge();
        }
    }

    fn judge(&mut self) {
        let total = self.samples.max(1);
        let permille = |c: u32| (u64::from(c) * 1000 / u64::from(total)) as u32;
        let (shard, busiest) = self
            .per_shard
            .iter()
            .copied()
            .enumerate()
            .max_by_key(|&(_, c)| c)
            .unwrap_or((0, 0));
        let top = self
            .slots
            .iter()
            .filter_map(|(k, c)| k.as_ref().map(|k| (k, *c)))
            .max_by_key(|&(_, c)| c);
        if self.per_shard.len() > 1 && permille(busiest) >= SHARD_SHARE_PERMILLE {
            if let Some((key, count)) = top.filter(|&(_, c)| permille(c) >= KEY_SHARE_PERMILLE) {
                self.skewed_windows += 1;
                self.report = Some(SkewReport {
                    prefix: key.prefix.clone(),
                    k: key.k,
                    shard,
                    shard_permille: permille(busiest),
                    key_permille: permille(count),
                });
            }
        }
        self.samples = 0;
        self.per_shard.iter_mut().for_each(|c| *c = 0);
        self.slots = Default::default();
    }

    /// The last skewed window's report, once.
    pub(crate) fn take_report(&mut self) -> Option<SkewReport> {
        self.report.take()
    }
}
