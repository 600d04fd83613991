//! The memory tier: packets in an ordered map by name, bounded in packets and in bytes, with a
//! selectable replacement policy.

use std::collections::BTreeMap;
use std::ops::Bound;

use bytes::Bytes;

use crate::packet::{Packet, Query};
use crate::policy::{self, Policy, PolicyKind};
use crate::TierStats;

/// The memory tier.
pub struct MemoryTier {
    entries: BTreeMap<Bytes, Packet>,
    policy: Box<dyn Policy>,
    kind: PolicyKind,
    bytes: usize,
    capacity_bytes: usize,
    capacity_packets: usize,
    pub(crate) stats: TierStats,
}

impl MemoryTier {
    /// An empty tier.
    pub fn new(kind: PolicyKind, capacity_packets: usize, capacity_bytes: usize) -> Self {
        Self {
            entries: BTreeMap::new(),
            policy: policy::new(kind, capacity_packets),
            kind,
            bytes: 0,
            capacity_bytes,
            capacity_packets,
            stats: TierStats::default(),
        }
    }

    /// Its policy.
    pub fn policy(&self) -> PolicyKind {
        self.kind
    }

    /// Packets held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether a packet of this name is held.
    pub fn contains(&self, key: &[u8]) -> bool {
        self.entries.contains_key(key)
    }

    /// Bytes charged.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Inserts (or replaces) a packet and returns the packets evicted to make room. A packet
    /// larger than the whole tier is not kept.
    pub fn insert(&mut self, packet: Packet) -> Vec<Packet> {
        let mut evicted = Vec::new();
        if self.capacity_packets == 0 || packet.charge() > self.capacity_bytes {
            return evicted;
        }
        if let Some(old) = self.entries.remove(&packet.key) {
            self.bytes -= old.charge();
            self.policy.remove(&old.key);
        }
        while self.entries.len() + 1 > self.capacity_packets
            || self.bytes + packet.charge() > self.capacity_bytes
        {
            let Some(victim) = self.policy.victim(Some(&packet.key)) else {
                break;
            };
            if let Some(p) = self.entries.remove(&victim) {
                self.bytes -= p.charge();
                self.stats.evictions += 1;
                evicted.push(p);
            }
        }
        self.bytes += packet.charge();
        self.policy.insert(&packet.key);
        self.entries.insert(packet.key.clone(), packet);
        self.stats.inserts += 1;
        evicted
    }

    /// The first packet (in key order) that answers `query` at `now_ms`; counts a hit or a miss.
    pub fn lookup(&mut self, query: &Query, now_ms: u64) -> Option<Packet> {
        let found = self
            .entries
            .range::<Bytes, _>((Bound::Included(&query.key), Bound::Unbounded))
            .take_while(|(k, _)| query.in_range(k))
            .find(|(_, p)| query.matches(&p.key, &p.digest, p.fresh_until_ms, now_ms))
            .map(|(_, p)| p.clone());
        match &found {
            Some(p) => {
                self.policy.hit(&p.key);
                self.stats.hits += 1;
            }
            None => self.stats.misses += 1,
        }
        found
    }

    /// Removes up to `limit` packets whose name starts with `prefix_key`; returns their keys.
    pub fn erase(&mut self, prefix_key: &[u8], limit: usize) -> Vec<Bytes> {
        let keys: Vec<Bytes> = self
            .entries
            .range::<[u8], _>((Bound::Included(prefix_key), Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(prefix_key))
            .take(limit)
            .map(|(k, _)| k.clone())
            .collect();
        for k in &keys {
            if let Some(p) = self.entries.remove(k) {
                self.bytes -= p.charge();
                self.policy.remove(k);
            }
        }
        keys
    }

    /// Changes the policy (the packets stay; the new policy learns them in key order) and the
    /// capacities (evicting what no longer fits); returns the evicted packets.
    pub fn reconfigure(
        &mut self,
        kind: PolicyKind,
        capacity_packets: usize,
        capacity_bytes: usize,
    ) -> Vec<Packet> {
        if kind != self.kind || capacity_packets != self.capacity_packets {
            self.policy = policy::new(kind, capacity_packets);
            for k in self.entries.keys() {
                self.policy.insert(k);
            }
            self.kind = kind;
        }
        self.capacity_packets = capacity_packets;
        self.capacity_bytes = capacity_bytes;
        let mut evicted = Vec::new();
        while self.entries.len() > self.capacity_packets || self.bytes > self.capacity_bytes {
            let Some(victim) = self.policy.victim(None) else {
                break;
            };
            if let Some(p) = self.entries.remove(&victim) {
                self.bytes -= p.charge();
                self.stats.evictions += 1;
                evicted.push(p);
            }
        }
        evicted
    }

    /// Capacities: packets and bytes.
    pub fn capacity(&self) -> (usize, usize) {
        (self.capacity_packets, self.capacity_bytes)
    }

    /// Every packet, in key order.
    pub fn packets(&self) -> impl Iterator<Item = &Packet> + '_ {
        self.entries.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use nameway_wire::{Data, MetaInfo};

    fn packet(name: &str, size: usize) -> Packet {
        let mut d = Data::new(name.parse().unwrap(), Bytes::from(vec![1u8; size]));
        d.meta_info = Some(MetaInfo {
            freshness_period: Some(10_000),
            ..MetaInfo::default()
        });
        d.sign(&nameway_wire::security::DigestSha256).unwrap();
        Packet::new(d.encode(), 1_000).unwrap()
    }

    fn q(name: &str, cbp: bool) -> Query {
        Query::new(&name.parse().unwrap(), cbp, false)
    }

    #[test]
    fn bounded_in_packets_and_bytes() {
        let mut m = MemoryTier::new(PolicyKind::Lru, 3, 1 << 20);
        for i in 0..5 {
            m.insert(packet(&format!("/p/{i}"), 10));
        }
        assert_eq!(m.len(), 3);
        assert!(m.lookup(&q("/p/0", false), 0).is_none());
        assert!(m.lookup(&q("/p/4", false), 0).is_some());

        let one = packet("/b/0", 1000).charge();
        let mut m = MemoryTier::new(PolicyKind::Lru, 100, one * 2 + 10);
        let mut evicted = 0;
        for i in 0..10 {
            evicted += m.insert(packet(&format!("/b/{i}"), 1000)).len();
        }
        assert_eq!(m.len(), 2);
        assert_eq!(evicted, 8);
        assert!(m.bytes() <= one * 2 + 10);
        // Larger than the whole tier: not kept, nothing evicted.
        assert!(m.insert(packet("/huge", 5000)).is_empty());
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn prefix_lookup_and_erase() {
        let mut m = MemoryTier::new(PolicyKind::Arc, 100, 1 << 20);
        for n in ["/a/1", "/a/2", "/ab/1", "/b"] {
            m.insert(packet(n, 10));
        }
        assert!(m.lookup(&q("/a", false), 0).is_none());
        let found = m.lookup(&q("/a", true), 0).unwrap();
        assert!(found.key.starts_with(&q("/a", false).key));
        assert_eq!(m.stats.hits, 1);
        assert_eq!(m.stats.misses, 1);
        assert_eq!(m.erase(&q("/a", false).key, 10).len(), 2);
        assert!(m.lookup(&q("/a", true), 0).is_none());
        assert!(m.lookup(&q("/ab", true), 0).is_some());
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn replacing_a_name_keeps_one_copy_and_the_byte_count() {
        let mut m = MemoryTier::new(PolicyKind::Lfu, 10, 1 << 20);
        m.insert(packet("/x", 10));
        m.insert(packet("/x", 100));
        assert_eq!(m.len(), 1);
        assert_eq!(m.bytes(), packet("/x", 100).charge());
    }

    #[test]
    fn reconfigure_shrinks_and_switches_policy() {
        let mut m = MemoryTier::new(PolicyKind::Lru, 10, 1 << 20);
        for i in 0..10 {
            m.insert(packet(&format!("/r/{i}"), 10));
        }
        let out = m.reconfigure(PolicyKind::Arc, 4, 1 << 20);
        assert_eq!(out.len(), 6);
        assert_eq!(m.len(), 4);
        assert_eq!(m.policy(), PolicyKind::Arc);
    }
}
