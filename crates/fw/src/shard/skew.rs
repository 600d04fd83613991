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
//! When the same key dominates [`super::split::SKEWED_IN_A_ROW`] windows in a row and automatic
//! splits are on, the shard splits it ([`super::split`]); otherwise the report is only logged.

use nameway_wire::Name;

use super::dispatch::{DispatchKey, Dispatcher, DEEPER};
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
    /// The key's hash (of its first `prefix.len()` components).
    pub hash: u64,
    /// Skewed windows in a row that this key dominated, this one included.
    pub windows_in_a_row: u32,
    /// Whether the shard split the key on this report ([`super::split`]).
    pub split: bool,
    /// The fewest components at which the sampled names under the key differed (seen from
    /// the key's second skewed window in a row on); `Some(prefix.len())` when none did
    /// within [`DEEPER`] more components: the key cannot be spread.
    pub spread_k: Option<usize>,
}

impl SkewReport {
    /// The `k` of the recommended `[[forwarder.dispatch]]` entry for [`SkewReport::prefix`]:
    /// where its names were seen to differ, else one component more.
    pub fn recommended_k(&self) -> usize {
        self.spread_k
            .filter(|&k| k > self.prefix.len())
            .unwrap_or(self.prefix.len() + 1)
            .max(self.k + 1)
    }

    /// Whether splitting the key would spread its names: they were seen to differ within
    /// [`DEEPER`] more components.
    pub fn spreadable(&self) -> bool {
        self.spread_k.is_some_and(|k| k > self.prefix.len())
    }
}

/// Distinct prefixes at one depth below a key that make its names spreadable there: a
/// component that takes only a few values (a version, a run tag) would leave most names on
/// one shard after the split.
pub const SPREAD_DISTINCT: usize = 8;

/// How the sampled names under one key differ below it: the distinct prefix hashes seen at
/// each depth, up to [`SPREAD_DISTINCT`].
#[derive(Clone, Copy, Debug)]
struct Variety {
    key: u64,
    seen: [[u64; SPREAD_DISTINCT]; DEEPER],
    count: [usize; DEEPER],
}

impl Variety {
    fn new(key: &DispatchKey) -> Self {
        Self {
            key: key.hash,
            seen: [[0; SPREAD_DISTINCT]; DEEPER],
            count: [0; DEEPER],
        }
    }

    fn add(&mut self, key: &DispatchKey) {
        for ((seen, count), d) in self.seen.iter_mut().zip(&mut self.count).zip(key.deeper) {
            let Some(h) = d else { break };
            if *count >= SPREAD_DISTINCT || seen.get(..*count).is_some_and(|k| k.contains(&h)) {
                continue;
            }
            if let Some(slot) = seen.get_mut(*count) {
                *slot = h;
                *count += 1;
            }
        }
    }

    /// The fewest components (key length `m` plus one or more) at which names took at least
    /// [`SPREAD_DISTINCT`] values; `m` when none did.
    fn spread_k(&self, m: usize) -> usize {
        self.count
            .iter()
            .position(|&c| c >= SPREAD_DISTINCT)
            .map_or(m, |i| m + 1 + i)
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
    /// The key of the last window if it was skewed, and how many in a row it dominated.
    streak: Option<(u64, u32)>,
    /// How the names under the streak's key differ (sampled while the streak lasts).
    variety: Option<Variety>,
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
            streak: None,
            variety: None,
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
        if let Some(v) = self.variety.as_mut().filter(|v| v.key == key.hash) {
            v.add(&key);
        }
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
        let skewed = (self.per_shard.len() > 1 && permille(busiest) >= SHARD_SHARE_PERMILLE)
            .then_some(top)
            .flatten()
            .filter(|&(_, c)| permille(c) >= KEY_SHARE_PERMILLE);
        let mut streak = None;
        if let Some((key, count)) = skewed {
            self.skewed_windows += 1;
            let in_a_row = match self.streak {
                Some((h, n)) if h == key.hash => n + 1,
                _ => 1,
            };
            streak = Some((key.hash, in_a_row));
            let spread_k = self
                .variety
                .filter(|v| v.key == key.hash)
                .map(|v| v.spread_k(key.prefix.len()));
            self.report = Some(SkewReport {
                prefix: key.prefix.clone(),
                k: key.k,
                shard,
                shard_permille: permille(busiest),
                key_permille: permille(count),
                hash: key.hash,
                windows_in_a_row: in_a_row,
                split: false,
                spread_k,
            });
            if self.variety.is_none_or(|v| v.key != key.hash) {
                self.variety = Some(Variety::new(key));
            }
        }
        if streak.is_none() {
            self.variety = None;
        }
        self.streak = streak;
        self.samples = 0;
        self.per_shard.iter_mut().for_each(|c| *c = 0);
        self.slots = Default::default();
    }

    /// The last skewed window's report, once.
    pub(crate) fn take_report(&mut self) -> Option<SkewReport> {
        self.report.take()
    }

    /// The last skewed window's report, not taken.
    pub(crate) fn report_mut(&mut self) -> Option<&mut SkewReport> {
        self.report.as_mut()
    }
}
