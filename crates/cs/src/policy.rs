//! Replacement policies of the memory tier: LRU, LFU and ARC.
//!
//! A policy sees keys (a packet's name) enter, get hit and leave, and names the next victim.
//! It never sees sizes: the tier asks for victims until it is within its byte and packet
//! capacities. Every operation is O(log n) (ordered maps keyed by a logical clock).

use std::collections::{BTreeMap, HashMap};

use bytes::Bytes;

/// Which policy a tier uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PolicyKind {
    /// Least recently used.
    #[default]
    Lru,
    /// Least frequently used (ties: least recently used).
    Lfu,
    /// Adaptive replacement cache (Megiddo and Modha, FAST 2003): balances recency and
    /// frequency, and resists a scan that would flush an LRU cache.
    Arc,
}

impl PolicyKind {
    /// `lru`, `lfu` or `arc`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Lru => "lru",
            Self::Lfu => "lfu",
            Self::Arc => "arc",
        }
    }
}

impl core::str::FromStr for PolicyKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "lru" => Ok(Self::Lru),
            "lfu" => Ok(Self::Lfu),
            "arc" => Ok(Self::Arc),
            other => Err(format!(
                "unknown policy {other:?}: expected lru, lfu or arc"
            )),
        }
    }
}

impl core::fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A replacement policy over resident keys.
pub(crate) trait Policy: Send {
    /// `key` became resident.
    fn insert(&mut self, key: &Bytes);
    /// A resident `key` was read.
    fn hit(&mut self, key: &Bytes);
    /// A resident `key` left for another reason than eviction (erase, replacement, staleness).
    fn remove(&mut self, key: &Bytes);
    /// Chooses the next resident key to evict and forgets it as resident; `incoming` is the key
    /// about to be inserted, if any (ARC's choice depends on it).
    fn victim(&mut self, incoming: Option<&Bytes>) -> Option<Bytes>;
}

/// Builds a policy; `capacity` (packets) bounds ARC's history of evicted keys.
pub(crate) fn new(kind: PolicyKind, capacity: usize) -> Box<dyn Policy> {
    match kind {
        PolicyKind::Lru => Box::new(Lru::default()),
        PolicyKind::Lfu => Box::new(Lfu::default()),
        PolicyKind::Arc => Box::new(Arc::new(capacity)),
    }
}

/// Keys in order of last use: a logical clock per key.
#[derive(Default)]
struct Recency {
    clock: u64,
    order: BTreeMap<u64, Bytes>,
    at: HashMap<Bytes, u64>,
}

impl Recency {
    fn touch(&mut self, key: &Bytes) {
        self.clock += 1;
        if let Some(old) = self.at.insert(key.clone(), self.clock) {
            self.order.remove(&old);
        }
        self.order.insert(self.clock, key.clone());
    }

    fn remove(&mut self, key: &Bytes) -> bool {
        match self.at.remove(key) {
            Some(t) => {
                self.order.remove(&t);
                true
            }
            None => false,
        }
    }

    fn pop_oldest(&mut self) -> Option<Bytes> {
        let (_, key) = self.order.pop_first()?;
        self.at.remove(&key);
        Some(key)
    }

    fn contains(&self, key: &Bytes) -> bool {
        self.at.contains_key(key)
    }

    fn len(&self) -> usize {
        self.at.len()
    }
}

/// Least recently used.
#[derive(Default)]
struct Lru(Recency);

impl Policy for Lru {
    fn insert(&mut self, key: &Bytes) {
        self.0.touch(key);
    }
    fn hit(&mut self, key: &Bytes) {
        self.0.touch(key);
    }
    fn remove(&mut self, key: &Bytes) {
        self.0.remove(key);
    }
    fn victim(&mut self, _: Option<&Bytes>) -> Option<Bytes> {
        self.0.pop_oldest()
    }
}

/// Least frequently used; among equals, the least recently used.
#[derive(Default)]
struct Lfu {
    clock: u64,
    order: BTreeMap<(u64, u64), Bytes>,
    at: HashMap<Bytes, (u64, u64)>,
}

impl Lfu {
    fn bump(&mut self, key: &Bytes, fresh: bool) {
        self.clock += 1;
        let count = match self.at.get(key) {
            Some(&old) => {
                self.order.remove(&old);
                if fresh {
                    1
                } else {
                    old.0.saturating_add(1)
                }
            }
            None => 1,
        };
        let slot = (count, self.clock);
        self.at.insert(key.clone(), slot);
        self.order.insert(slot, key.clone());
    }
}

impl Policy for Lfu {
    fn insert(&mut self, key: &Bytes) {
        self.bump(key, true);
    }
    fn hit(&mut self, key: &Bytes) {
        self.bump(key, false);
    }
    fn remove(&mut self, key: &Bytes) {
        if let Some(slot) = self.at.remove(key) {
            self.order.remove(&slot);
        }
    }
    fn victim(&mut self, _: Option<&Bytes>) -> Option<Bytes> {
        let (_, key) = self.order.pop_first()?;
        self.at.remove(&key);
        Some(key)
    }
}

/// ARC: T1 holds keys seen once recently, T2 keys seen at least twice; B1 and B2 remember keys
/// recently evicted from each. A hit in B1 means T1 should have been larger (target `p`
/// grows), a hit in B2 the opposite. A one-pass scan only ever enters T1, so the frequently
/// used keys in T2 survive it.
struct Arc {
    capacity: usize,
    p: usize,
    t1: Recency,
    t2: Recency,
    b1: Recency,
    b2: Recency,
}

impl Arc {
    fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            p: 0,
            t1: Recency::default(),
            t2: Recency::default(),
            b1: Recency::default(),
            b2: Recency::default(),
        }
    }

    fn trim_ghosts(&mut self) {
        while self.b1.len() > self.capacity {
            self.b1.pop_oldest();
        }
        while self.b2.len() > self.capacity {
            self.b2.pop_oldest();
        }
    }
}

impl Policy for Arc {
    fn insert(&mut self, key: &Bytes) {
        if self.b1.remove(key) {
            // Recently evicted after one use: favour recency.
            let delta = (self.b2.len() / self.b1.len().max(1)).max(1);
            self.p = (self.p + delta).min(self.capacity);
            self.t2.touch(key);
        } else if self.b2.remove(key) {
            let delta = (self.b1.len() / self.b2.len().max(1)).max(1);
            self.p = self.p.saturating_sub(delta);
            self.t2.touch(key);
        } else {
            self.t1.touch(key);
        }
        self.trim_ghosts();
    }

    fn hit(&mut self, key: &Bytes) {
        if self.t1.remove(key) || self.t2.contains(key) {
            self.t2.touch(key);
        }
    }

    fn remove(&mut self, key: &Bytes) {
        if !self.t1.remove(key) {
            self.t2.remove(key);
        }
    }

    fn victim(&mut self, incoming: Option<&Bytes>) -> Option<Bytes> {
        let in_b2 = incoming.is_some_and(|k| self.b2.contains(k));
        let t1 = self.t1.len();
        let from_t1 = t1 > 0 && (t1 > self.p || (in_b2 && t1 == self.p) || self.t2.len() == 0);
        let key = if from_t1 {
            let k = self.t1.pop_oldest()?;
            self.b1.touch(&k);
            k
        } else {
            let k = self.t2.pop_oldest()?;
            self.b2.touch(&k);
            k
        };
        self.trim_ghosts();
        Some(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cache of `capacity` keys driven by a policy: returns the hit count over `trace`.
    fn hits(kind: PolicyKind, capacity: usize, trace: &[u32]) -> usize {
        let mut p = new(kind, capacity);
        let mut resident = std::collections::HashSet::new();
        let mut hits = 0;
        for &k in trace {
            let key = Bytes::from(k.to_be_bytes().to_vec());
            if resident.contains(&key) {
                hits += 1;
                p.hit(&key);
                continue;
            }
            while resident.len() >= capacity {
                let v = p.victim(Some(&key)).unwrap();
                assert!(resident.remove(&v), "victim {v:?} was not resident");
            }
            p.insert(&key);
            resident.insert(key);
        }
        hits
    }

    #[test]
    fn lru_evicts_the_least_recently_used() {
        let mut p = new(PolicyKind::Lru, 3);
        let k = |i: u8| Bytes::from(vec![i]);
        for i in 0..3 {
            p.insert(&k(i));
        }
        p.hit(&k(0));
        assert_eq!(p.victim(None), Some(k(1)));
        assert_eq!(p.victim(None), Some(k(2)));
        p.remove(&k(0));
        assert_eq!(p.victim(None), None);
    }

    #[test]
    fn lfu_keeps_the_frequent() {
        // Keys 0..4 are read often (a warm-up makes them frequent); then a stream of one-off
        // keys passes through, two per round, which makes LRU evict the hot keys in turn.
        let mut trace = Vec::new();
        for _ in 0..3 {
            trace.extend(0..4);
        }
        for round in 0..200u32 {
            trace.extend(0..4);
            trace.push(1000 + round);
            trace.push(5000 + round);
        }
        let lfu = hits(PolicyKind::Lfu, 5, &trace);
        let lru = hits(PolicyKind::Lru, 5, &trace);
        // LFU keeps all four hot keys: every access after the first round hits.
        assert!(lfu >= 4 * 199, "lfu {lfu}");
        assert!(lfu > lru, "lfu {lfu} lru {lru}");
    }

    #[test]
    fn arc_resists_a_scan_that_flushes_lru() {
        // A hot set of 50 keys is read again and again; every so often a scan of 500
        // one-off keys passes through a cache of 100.
        let mut trace = Vec::new();
        let mut scan = 10_000u32;
        for _ in 0..20 {
            for _ in 0..5 {
                trace.extend(0..50);
            }
            for _ in 0..500 {
                trace.push(scan);
                scan += 1;
            }
        }
        let arc = hits(PolicyKind::Arc, 100, &trace);
        let lru = hits(PolicyKind::Lru, 100, &trace);
        // LRU loses the hot set at every scan (50 misses per round); ARC keeps it in T2.
        assert!(arc >= lru + 19 * 40, "arc {arc} lru {lru}");
    }

    #[test]
    fn arc_adapts_to_a_recency_workload_like_lru() {
        // A sliding window: recency is all that matters; ARC must not do worse than LRU by much.
        let trace: Vec<u32> = (0..5000u32).map(|i| i / 3 + (i % 3) * 7).collect();
        let arc = hits(PolicyKind::Arc, 50, &trace);
        let lru = hits(PolicyKind::Lru, 50, &trace);
        assert!(arc * 10 >= lru * 9, "arc {arc} lru {lru}");
    }

    #[test]
    fn policies_parse_and_print() {
        for k in [PolicyKind::Lru, PolicyKind::Lfu, PolicyKind::Arc] {
            assert_eq!(k.as_str().parse::<PolicyKind>(), Ok(k));
        }
        assert!("fifo".parse::<PolicyKind>().is_err());
    }
}
