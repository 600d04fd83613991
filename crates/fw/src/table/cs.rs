//! The content store: the [`ContentStore`] trait the pipelines call, and [`InMemoryCs`], an
//! in-memory store with a pluggable [`ReplacementPolicy`] ([`Lru`] by default).
//!
//! The trait is the seam for the decoupled design (docs/design.md §3): a later fast-path filter
//! (CS-list) in front of a separate cache server implements the same calls.
//!
//! # Index
//!
//! [`InMemoryCs`] is a small name tree keyed by prefix hashes: one node per name prefix that
//! leads to a cached packet, in a hash table keyed by the prefix hash (the full name bytes
//! confirm a hit), each node linked to its parent, first child and siblings.
//! - An exact look-up is one probe.
//! - A CanBePrefix look-up is one probe to the Interest name's node, then a walk of that
//!   subtree (bounded by [`LOOKUP_BUDGET`] nodes) for the first packet that satisfies
//!   MustBeFresh.
//! - An insert probes the whole name, then the nearest existing ancestor (usually the parent:
//!   segments of one object share it) and creates the missing nodes.
//! - A removed node leaves its index entry behind, stale: each node id has a generation,
//!   bumped when the node goes, and an entry counts only while its generation is current.
//!   The index is rebuilt from its live entries in one sequential pass when half its slots
//!   are used. (Removing each entry at once cost a cold hash-table probe per eviction, the
//!   largest single cost of a Data exchange with a full store.)
//! - The index is our own open-addressing table (`index.rs`) so that the pipelines can
//!   prefetch the slot a new name will take ([`ContentStore::prefetch`]) as soon as they have
//!   hashed the name, long before they insert it.
//!
//! We chose this over an ordered `BTreeMap<Name, _>` because every insert and look-up there costs
//! O(log n) comparisons that chase pointers into scattered name buffers, where the tree costs one
//! or two hash probes, and over indexing each packet under every prefix hash, which costs one
//! table insert per name component.

mod index;
mod lru;

use core::time::Duration;
use std::collections::HashMap;

use bytes::Bytes;
use nameway_wire::{DataView, InterestView, Name, PrefixHashes};
use sha2::{Digest, Sha256};

use self::index::NodeIndex;
pub use self::lru::Lru;
use crate::counters::CsCounters;
use crate::prefetch::prefetch;
use crate::table::pit::ends_with_implicit_digest;
use crate::table::same_name_value;
use crate::time::Time;

/// NFD's default capacity, in packets.
pub const DEFAULT_CS_CAPACITY: usize = 65_536;

/// Nodes a CanBePrefix look-up or an erase visits at most per call.
pub const LOOKUP_BUDGET: usize = 256;

/// A content store, as the pipelines use it. Implementations decide what to keep and how to
/// find it; the forwarder decides when to ask (admit and serve switches, unsolicited Data).
pub trait ContentStore: Send {
    /// A cached Data (its whole TLV) that satisfies `interest`: same name, or a longer one when
    /// CanBePrefix; fresh when MustBeFresh; the Data whose full name equals an Interest name
    /// that ends with an implicit digest. `hashes` are the Interest name's prefix hashes.
    fn lookup(
        &mut self,
        interest: &InterestView,
        hashes: &PrefixHashes,
        now: Time,
    ) -> Option<Bytes>;

    /// A hint that the name whose prefix hashes are `hashes` will be looked up or inserted
    /// soon: the store may start bringing what that will touch into the cache. Does nothing
    /// by default.
    fn prefetch(&self, hashes: &PrefixHashes) {
        let _ = hashes;
    }

    /// Offers a Data for caching (it may replace the packet of the same name). `hashes` are
    /// the Data name's prefix hashes. The store takes the view, and with it the packet's
    /// handle: the pipeline calls this last, when the packet has been sent on.
    fn insert(&mut self, data: DataView, hashes: &PrefixHashes, now: Time);

    /// Removes up to `limit` packets under `prefix`; returns how many went. `hashes` are the
    /// prefix's own prefix hashes.
    fn erase(&mut self, prefix: &Name, hashes: &PrefixHashes, limit: usize) -> usize;

    /// Packets stored.
    fn len(&self) -> usize;

    /// Whether nothing is stored.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Capacity in packets.
    fn capacity(&self) -> usize;

    /// Changes the capacity, evicting as needed.
    fn set_capacity(&mut self, capacity: usize);

    /// Counters.
    fn counters(&self) -> CsCounters;

    /// Name of the replacement policy (NFD `cs/info` shows it).
    fn policy_name(&self) -> &str;
}

/// A replacement policy: told about every entry that comes, is used or goes, it picks the
/// victim when the store is over capacity. Ids are small integers the store reuses.
pub trait ReplacementPolicy: Send {
    /// Name of the policy, e.g. `lru`.
    fn name(&self) -> &'static str;
    /// Entry `id` was added (or replaced); `key` is its name hash, stable across evictions,
    /// for policies that remember names that left (ARC's ghost lists).
    fn on_insert(&mut self, id: u32, key: u64);
    /// Entry `id` answered a look-up.
    fn on_access(&mut self, id: u32);
    /// Entry `id` left for another reason than [`ReplacementPolicy::evict`].
    fn on_erase(&mut self, id: u32);
    /// Picks and forgets the next victim.
    fn evict(&mut self) -> Option<u32>;
    /// The entry [`ReplacementPolicy::evict`] would pick now, if the policy knows it cheaply
    /// (the store prefetches its node); `None` by default.
    fn next_victim(&self) -> Option<u32> {
        None
    }
}

const NIL: u32 = u32::MAX;
const ROOT: u32 = 0;

/// A node of the name tree: one cache line, so that evicting a packet the size of the store
/// ago costs one miss (and the next victim's line is prefetched, see [`crate::prefetch`]).
#[derive(Debug)]
#[repr(align(64))]
struct Node {
    /// The cached Data (its whole TLV) when `cached`; otherwise the node's own copy of its
    /// name. Either way the name is `buf[name_start..name_start + name_len]`.
    buf: Bytes,
    /// Until when the cached Data is fresh.
    fresh_until: Time,
    parent: u32,
    first_child: u32,
    prev_sibling: u32,
    next_sibling: u32,
    name_start: u16,
    name_len: u16,
    cached: bool,
    in_use: bool,
    /// Whether `InMemoryCs::digests` holds this packet's implicit digest.
    has_digest: bool,
}

impl Node {
    /// The TLV-VALUE of this node's prefix.
    #[inline]
    fn name(&self) -> &[u8] {
        let start = usize::from(self.name_start);
        self.buf
            .get(start..start + usize::from(self.name_len))
            .unwrap_or_default()
    }

    /// Whether the node holds a packet that satisfies MustBeFresh (when asked) at `now`.
    #[inline]
    fn answers(&self, must_be_fresh: bool, now: Time) -> bool {
        self.cached && (!must_be_fresh || now < self.fresh_until)
    }

    /// An inner node named by its own copy of `name`.
    fn inner(name: &[u8], parent: u32, next_sibling: u32) -> Option<Self> {
        Some(Self {
            buf: Bytes::copy_from_slice(name),
            fresh_until: Time::ZERO,
            parent,
            first_child: NIL,
            prev_sibling: NIL,
            next_sibling,
            name_start: 0,
            name_len: u16::try_from(name.len()).ok()?,
            cached: false,
            in_use: true,
            has_digest: false,
        })
    }

    const fn vacant() -> Self {
        Self {
            buf: Bytes::new(),
            fresh_until: Time::ZERO,
            parent: NIL,
            first_child: NIL,
            prev_sibling: NIL,
            next_sibling: NIL,
            name_start: 0,
            name_len: 0,
            cached: false,
            in_use: false,
            has_digest: false,
        }
    }
}

/// An in-memory content store indexed by a hashed name tree (see the module documentation).
#[derive(Debug)]
pub struct InMemoryCs<P = Lru> {
    nodes: Vec<Node>,
    /// Generation of each node id, bumped when the node is removed (dense, so that sweeping
    /// the index reads it from cache).
    gens: Vec<u32>,
    free: Vec<u32>,
    /// The prefix nodes by hash; the root node is not in it. Holds stale entries.
    index: NodeIndex,
    /// Implicit digests computed so far (only look-ups by implicit digest compute them), by
    /// node id; an entry goes with its packet.
    digests: HashMap<u32, [u8; 32]>,
    policy: P,
    len: usize,
    capacity: usize,
    counters: CsCounters,
}

impl InMemoryCs<Lru> {
    /// A store of `capacity` packets with LRU replacement.
    pub fn new(capacity: usize) -> Self {
        Self::with_policy(capacity, Lru::new())
    }
}

impl<P: ReplacementPolicy> InMemoryCs<P> {
    /// A store of `capacity` packets with the given replacement policy.
    pub fn with_policy(capacity: usize, policy: P) -> Self {
        let mut root = Node::vacant();
        root.in_use = true;
        Self {
            nodes: vec![root],
            gens: vec![0],
            free: Vec::new(),
            index: NodeIndex::new(),
            digests: HashMap::new(),
            policy,
            len: 0,
            capacity,
            counters: CsCounters::default(),
        }
    }

    /// Node count, the root included (for tests of the index invariants).
    pub fn node_count(&self) -> usize {
        self.nodes.len() - self.free.len()
    }

    fn node(&self, id: u32) -> Option<&Node> {
        self.nodes.get(id as usize)
    }

    fn node_mut(&mut self, id: u32) -> Option<&mut Node> {
        self.nodes.get_mut(id as usize)
    }

    /// The node of the prefix whose TLV-VALUE is `value` and hash `hash`.
    #[inline]
    fn find(&self, hash: u64, value: &[u8]) -> Option<u32> {
        if value.is_empty() {
            return Some(ROOT);
        }
        let (nodes, gens) = (&self.nodes, &self.gens);
        self.index.find(hash, |id, gen| {
            gens.get(id as usize) == Some(&gen)
                && nodes
                    .get(id as usize)
                    .is_some_and(|n| same_name_value(n.name(), value))
        })
    }

    /// Adds `node` as the first child of its parent and indexes it under `hash`.
    fn add_child(&mut self, hash: u64, node: Node) -> u32 {
        let (parent, next) = (node.parent, node.next_sibling);
        let id = match self.free.pop() {
            Some(id) => {
                if let Some(slot) = self.node_mut(id) {
                    *slot = node;
                }
                id
            }
            None => {
                self.nodes.push(node);
                self.gens.push(0);
                (self.nodes.len() - 1) as u32
            }
        };
        if let Some(n) = self.node_mut(next) {
            n.prev_sibling = id;
        }
        if let Some(p) = self.node_mut(parent) {
            p.first_child = id;
        }
        let gens = &self.gens;
        let gen = gens.get(id as usize).copied().unwrap_or(0);
        self.index
            .insert(hash, id, gen, |i, g| gens.get(i as usize) == Some(&g));
        id
    }

    /// Forgets the implicit digest of node `id`'s packet, if one was computed.
    fn drop_digest(&mut self, id: u32) {
        if let Some(node) = self.node_mut(id) {
            if core::mem::take(&mut node.has_digest) {
                self.digests.remove(&id);
            }
        }
    }

    /// Removes the packet of node `id`; prunes nodes left with neither packet nor child.
    fn remove_entry(&mut self, id: u32) {
        self.drop_digest(id);
        let Some(node) = self.node_mut(id) else {
            return;
        };
        if !node.cached {
            return;
        }
        node.cached = false;
        // A node with children stays as an inner node, and its name cannot live in the packet
        // any more; a childless one is pruned below, its packet with it.
        if node.first_child != NIL {
            let copy = Bytes::copy_from_slice(node.name());
            node.name_start = 0;
            node.buf = copy;
        }
        self.len -= 1;
        self.prune(id);
    }

    fn prune(&mut self, mut id: u32) {
        while id != ROOT {
            let Some(node) = self.node(id) else {
                return;
            };
            if node.cached || node.first_child != NIL {
                return;
            }
            let (parent, prev, next) = (node.parent, node.prev_sibling, node.next_sibling);
            match self.node_mut(prev) {
                Some(p) => p.next_sibling = next,
                None => {
                    if let Some(p) = self.node_mut(parent) {
                        p.first_child = next;
                    }
                }
            }
            if let Some(n) = self.node_mut(next) {
                n.prev_sibling = prev;
            }
            if let Some(g) = self.gens.get_mut(id as usize) {
                *g = g.wrapping_add(1);
            }
            if let Some(n) = self.node_mut(id) {
                *n = Node::vacant();
            }
            self.free.push(id);
            id = parent;
        }
    }

    /// The node after `id` in a pre-order walk of the subtree of `top`.
    fn next_in_subtree(&self, id: u32, top: u32) -> Option<u32> {
        let node = self.node(id)?;
        if node.first_child != NIL {
            return Some(node.first_child);
        }
        let mut cur = id;
        while cur != top {
            let n = self.node(cur)?;
            if n.next_sibling != NIL {
                return Some(n.next_sibling);
            }
            cur = n.parent;
        }
        None
    }

    fn evict_to(&mut self, capacity: usize) {
        while self.len > capacity {
            let Some(victim) = self.policy.evict() else {
                return;
            };
            self.remove_entry(victim);
            self.counters.evictions += 1;
        }
        // The next victim's node is cold (it was written one store ago): fetch it while the
        // rest of the exchange runs.
        if self.len == capacity {
            if let Some(node) = self.policy.next_victim().and_then(|id| self.node(id)) {
                prefetch(node);
            }
        }
    }

    /// The implicit digest of node `id`'s packet, computed on first use.
    fn digest(&mut self, id: u32) -> Option<[u8; 32]> {
        let node = self.nodes.get_mut(id as usize)?;
        if !node.cached {
            return None;
        }
        if node.has_digest {
            if let Some(d) = self.digests.get(&id) {
                return Some(*d);
            }
        }
        node.has_digest = true;
        let d: [u8; 32] = Sha256::digest(&node.buf).into();
        self.digests.insert(id, d);
        Some(d)
    }

    /// The node that answers `interest`, if any.
    fn find_answer(
        &mut self,
        interest: &InterestView,
        hashes: &PrefixHashes,
        now: Time,
    ) -> Option<u32> {
        let name = interest.name();
        let value = name.value_bytes();
        let mbf = interest.must_be_fresh();
        if ends_with_implicit_digest(name) {
            let last = name.last()?;
            let len = name.len() - 1;
            let id = self.find(hashes.get(len)?, value.get(..name.prefix_value_len(len))?)?;
            let ok = self.node(id)?.answers(mbf, now) && self.digest(id)? == last.value();
            return ok.then_some(id);
        }
        let id = self.find(hashes.full(), value)?;
        if !interest.can_be_prefix() {
            return self.node(id)?.answers(mbf, now).then_some(id);
        }
        let mut cur = Some(id);
        for _ in 0..LOOKUP_BUDGET {
            let at = cur?;
            if self.node(at).is_some_and(|n| n.answers(mbf, now)) {
                return Some(at);
            }
            cur = self.next_in_subtree(at, id);
        }
        None
    }

    /// The rest of [`ContentStore::lookup`], once the index may hold the name: out of line,
    /// so that a miss does not pay for its registers.
    #[inline(never)]
    fn lookup_candidate(
        &mut self,
        interest: &InterestView,
        hashes: &PrefixHashes,
        now: Time,
    ) -> Option<Bytes> {
        let Some(id) = self.find_answer(interest, hashes, now) else {
            self.counters.misses += 1;
            return None;
        };
        let data = self.node(id)?.buf.clone();
        self.policy.on_access(id);
        self.counters.hits += 1;
        Some(data)
    }
}

impl<P: ReplacementPolicy> ContentStore for InMemoryCs<P> {
    fn lookup(
        &mut self,
        interest: &InterestView,
        hashes: &PrefixHashes,
        now: Time,
    ) -> Option<Bytes> {
        // Most Interests miss. Unless the name is empty (the root, which is not indexed) or
        // ends with an implicit digest (whose look-up probes the name without it), every
        // look-up starts at the indexed node of the whole name, so a probe with no matching
        // control byte is a miss.
        let name = interest.name();
        if self.len == 0
            || (!self.index.may_contain(hashes.full())
                && !name.is_empty()
                && !ends_with_implicit_digest(name))
        {
            self.counters.misses += 1;
            return None;
        }
        self.lookup_candidate(interest, hashes, now)
    }

    #[inline]
    fn prefetch(&self, hashes: &PrefixHashes) {
        if self.capacity > 0 {
            self.index.prefetch_probe(hashes.full());
        }
    }

    fn insert(&mut self, data: DataView, hashes: &PrefixHashes, now: Time) {
        if self.capacity == 0 {
            return;
        }
        let name = data.name();
        let full = hashes.full();
        let value = name.value_bytes();
        // A packet's node reads its name from the packet.
        let Some((name_start, name_len)) = name_range(&data) else {
            return;
        };
        let fresh_until = now + Duration::from_millis(data.freshness_period_ms());
        let id = match self.find(full, value) {
            Some(id) => {
                self.drop_digest(id);
                id
            }
            None => {
                // Room first. Evicting releases the victim's packet: an atomic
                // reference-count update, a full fence that would otherwise wait for the
                // index and node stores below, which likely miss the cache. (It may also
                // prune ancestors, so they are looked up after.)
                self.evict_to(self.capacity - 1);
                // The nearest cached ancestor, then the missing nodes below it.
                let mut depth = 0;
                let mut parent = ROOT;
                for len in (1..name.len()).rev() {
                    let (Some(h), Some(p)) =
                        (hashes.get(len), value.get(..name.prefix_value_len(len)))
                    else {
                        continue;
                    };
                    if let Some(id) = self.find(h, p) {
                        (depth, parent) = (len, id);
                        break;
                    }
                }
                for len in depth + 1..name.len() {
                    let next = self.node(parent).map_or(NIL, |p| p.first_child);
                    let inner = hashes.get(len).zip(
                        value
                            .get(..name.prefix_value_len(len))
                            .and_then(|p| Node::inner(p, parent, next)),
                    );
                    let Some((h, node)) = inner else {
                        return;
                    };
                    parent = self.add_child(h, node);
                }
                // The packet's node is written once, whole.
                let next_sibling = self.node(parent).map_or(NIL, |p| p.first_child);
                let node = Node {
                    buf: data.into_wire(),
                    fresh_until,
                    parent,
                    first_child: NIL,
                    prev_sibling: NIL,
                    next_sibling,
                    name_start,
                    name_len,
                    cached: true,
                    in_use: true,
                    has_digest: false,
                };
                let id = self.add_child(full, node);
                self.len += 1;
                // Room was made above; should the policy have had no victim, the new node
                // (not yet known to it) cannot be one.
                if self.len > self.capacity {
                    self.evict_to(self.capacity);
                }
                self.policy.on_insert(id, full);
                self.counters.inserts += 1;
                return;
            }
        };
        let Some(node) = self.nodes.get_mut(id as usize) else {
            return;
        };
        node.buf = data.into_wire();
        (node.name_start, node.name_len) = (name_start, name_len);
        node.fresh_until = fresh_until;
        if !core::mem::replace(&mut node.cached, true) {
            self.len += 1;
            // An inner node took its first packet: one more than it held. It is cached now,
            // so pruning cannot take it when its children go, and the policy has not been
            // told of it yet, so it cannot be the victim.
            if self.len > self.capacity {
                self.evict_to(self.capacity);
            }
        }
        self.policy.on_insert(id, full);
        self.counters.inserts += 1;
        // No other eviction here: a replaced packet takes no more room.
    }

    fn erase(&mut self, prefix: &Name, hashes: &PrefixHashes, limit: usize) -> usize {
        let Some(top) = self.find(hashes.full(), prefix.value_bytes()) else {
            return 0;
        };
        let mut doomed = Vec::new();
        let mut cur = Some(top);
        while let Some(at) = cur {
            if doomed.len() >= limit {
                break;
            }
            if self.node(at).is_some_and(|n| n.cached) {
                doomed.push(at);
            }
            cur = self.next_in_subtree(at, top);
        }
        for &id in &doomed {
            self.policy.on_erase(id);
            self.remove_entry(id);
        }
        doomed.len()
    }

    fn len(&self) -> usize {
        self.len
    }

    fn capacity(&self) -> usize {
        self.capacity
    }

    fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity;
        self.evict_to(capacity);
    }

    fn counters(&self) -> CsCounters {
        CsCounters {
            entries: self.len,
            capacity: self.capacity,
            ..self.counters
        }
    }

    fn policy_name(&self) -> &str {
        self.policy.name()
    }
}

/// Where the Data's name TLV-VALUE sits in its packet, if it is inside it (it always is for a
/// view over one buffer).
fn name_range(data: &DataView) -> Option<(u16, u16)> {
    let (wire, value) = (data.wire(), data.name().value_bytes());
    let start = (value.as_ptr() as usize).checked_sub(wire.as_ptr() as usize)?;
    let inside = wire
        .get(start..start + value.len())
        .is_some_and(|s| s.as_ptr() == value.as_ptr());
    if !inside {
        return None;
    }
    Some((u16::try_from(start).ok()?, u16::try_from(value.len()).ok()?))
}

#[cfg(test)]
mod tests;
