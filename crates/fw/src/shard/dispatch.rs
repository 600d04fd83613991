//! The dispatch rule: which shard owns a packet.
//!
//! A packet belongs to the shard chosen by the keyed hash of the first `K` components of its
//! name (NDN-DPDK's name dispatch table, NDT). `K` comes from a [`DispatchTable`]: the entry
//! whose prefix is the longest prefix of the name, else a default. A prefix that carries most of
//! the traffic (`/ndn/video/title/seg=i`) gets a `K` longer than itself, so its packets spread
//! over every shard instead of landing on one.
//!
//! - **Interest**: the first `m = min(K, len)` components of its name, a trailing
//!   ImplicitSha256DigestComponent left out (the Data it names does not carry it).
//! - **Nack**: the rule of the Interest it carries, so it reaches the shard of that Interest.
//! - **Data**: the same rule on the Data name. An Interest that can match it either has the
//!   same name (then the same `K`, the same prefix, the same shard) or is a CanBePrefix
//!   Interest of at least `K` components that no longer table entry extends (then the Data
//!   finds the same table entry and its first `K` components are the Interest's).
//! - **Spanning CanBePrefix Interests** (shorter than their `K`, or extended by a longer table
//!   entry) can be answered by Data that hash elsewhere. The dispatcher notes their key in the
//!   [`SpanFilter`] until they expire; a Data is also copied to the shard of every prefix of its
//!   name that the filter holds (one probe per prefix, and none while the filter is empty).
//!   A copy that meets no PIT entry there is dropped as unsolicited, as NDN allows.
//! - Names under `/localhost`, `/localhop/nfd` (management, `[mgmt] localhop_rib` in the
//!   daemon) and `/localhop/nameway` (the controller agent's hellos) go to shard 0.

use bytes::Bytes;
use hashbrown::HashTable;
use nameway_wire::tlv::{self, types};
use nameway_wire::{Name, NameHasher, Packet, PrefixHashes};

use super::span::SpanFilter;
use super::split::Splits;
use crate::pipeline::is_localhost;

/// `08 08 "localhop" 08 03 "nfd"`: the prefix of the management commands a neighbour sends.
const LOCALHOP_NFD: &[u8] = b"\x08\x08localhop\x08\x03nfd";

/// `08 08 "localhop" 08 07 "nameway"`: the neighbours' hellos of the daemon's controller agent,
/// answered by a face of shard 0.
const LOCALHOP_NAMEWAY: &[u8] = b"\x08\x08localhop\x08\x07nameway";

/// Whether `name` belongs to management or the agent, which run on shard 0.
fn is_management(name: &Name) -> bool {
    let v = name.value_bytes();
    is_localhost(name) || v.starts_with(LOCALHOP_NFD) || v.starts_with(LOCALHOP_NAMEWAY)
}
use crate::time::Time;

/// Most shards one dispatcher serves (a shard set is a bitmask of this width).
pub const MAX_SHARDS: usize = 64;

/// The default `K` of a [`DispatchTable`]: the first two components (NDN-DPDK's NDT default).
pub const DEFAULT_DISPATCH_K: usize = 2;

/// Default InterestLifetime (ms), for the span filter's expiry.
const DEFAULT_LIFETIME_MS: u64 = 4000;

/// A dispatch table entry could not be set.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DispatchError {
    /// `K` is 0: every name would hash to the root and land on one shard.
    ZeroK,
    /// `K` is shorter than the entry's prefix: names under it would hash a prefix that other
    /// table entries also cover, and a Data could leave its Interest's shard.
    KShorterThanPrefix {
        /// The prefix.
        prefix: String,
        /// Its component count.
        len: usize,
        /// The refused `K`.
        k: usize,
    },
    /// More shards than [`MAX_SHARDS`], or none.
    ShardCount(usize),
}

impl core::fmt::Display for DispatchError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::ZeroK => f.write_str("dispatch K must be at least 1"),
            Self::KShorterThanPrefix { prefix, len, k } => write!(
                f,
                "dispatch K {k} is shorter than the prefix {prefix} ({len} components)"
            ),
            Self::ShardCount(n) => {
                write!(f, "{n} shards: between 1 and {MAX_SHARDS} are supported")
            }
        }
    }
}

impl std::error::Error for DispatchError {}

/// The number of leading components hashed to choose a shard, per prefix.
#[derive(Clone, Debug)]
pub struct DispatchTable {
    default_k: usize,
    /// Entries by the hash of their prefix (already a keyed hash: the table uses it as is).
    entries: HashTable<(u64, Name, usize)>,
    /// Hashes of every proper prefix of an entry (a CanBePrefix Interest with such a name may
    /// be answered by Data under a longer entry).
    extended: HashTable<u64>,
    /// Components of the longest entry prefix.
    depth: usize,
    hasher: NameHasher,
    /// Whether a dominating key is split automatically ([`super::split`]).
    auto_split: bool,
}

impl DispatchTable {
    /// A table with no entries and `default_k` for every name.
    ///
    /// # Errors
    /// [`DispatchError::ZeroK`].
    pub fn new(hasher: NameHasher, default_k: usize) -> Result<Self, DispatchError> {
        if default_k == 0 {
            return Err(DispatchError::ZeroK);
        }
        Ok(Self {
            default_k,
            entries: HashTable::new(),
            extended: HashTable::new(),
            depth: 0,
            hasher,
            auto_split: false,
        })
    }

    /// Lets the shards split a dominating key by themselves ([`super::split`]); off by
    /// default (then a skewed window is only reported).
    pub fn set_auto_split(&mut self, on: bool) {
        self.auto_split = on;
    }

    /// Hashes the first `k` components for names under `prefix` (`k >= prefix.len()`).
    ///
    /// # Errors
    /// [`DispatchError::ZeroK`], [`DispatchError::KShorterThanPrefix`].
    pub fn set(&mut self, prefix: &Name, k: usize) -> Result<(), DispatchError> {
        if k == 0 {
            return Err(DispatchError::ZeroK);
        }
        if k < prefix.len() {
            return Err(DispatchError::KShorterThanPrefix {
                prefix: prefix.to_string(),
                len: prefix.len(),
                k,
            });
        }
        let hashes = self.hasher.prefix_hashes(prefix);
        for &h in hashes.as_slice().iter().take(prefix.len()) {
            if !self.is_extended(h) {
                self.extended.insert_unique(h, h, |&x| x);
            }
        }
        let h = hashes.full();
        match self.entries.find_mut(h, |e| e.0 == h && e.1 == *prefix) {
            Some(e) => e.2 = k,
            None => {
                self.entries
                    .insert_unique(h, (h, prefix.clone(), k), |e| e.0);
            }
        }
        self.depth = self.depth.max(prefix.len());
        Ok(())
    }

    /// The name hasher (the shards' forwarders use the same one: [`super::build`]).
    pub fn hasher(&self) -> NameHasher {
        self.hasher
    }

    /// The default `K`.
    pub fn default_k(&self) -> usize {
        self.default_k
    }

    /// The `K` for `name`: its longest table prefix's, else the default.
    fn k_for(&self, name: &Name, len: usize, hashes: &PrefixHashes) -> usize {
        if self.entries.is_empty() {
            return self.default_k;
        }
        for j in (0..=self.depth.min(len)).rev() {
            let Some(h) = hashes.get(j) else { continue };
            let found = self
                .entries
                .find(h, |e| e.0 == h && e.1.len() == j && e.1.is_prefix_of(name));
            if let Some((_, _, k)) = found {
                return *k;
            }
        }
        self.default_k
    }

    /// Whether a table entry extends the prefix of hash `h` (a hash collision only makes a
    /// CanBePrefix Interest noted in the span filter without need).
    fn is_extended(&self, h: u64) -> bool {
        self.extended.find(h, |&x| x == h).is_some()
    }
}

/// What an Interest is dispatched by ([`Dispatcher::interest_key`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DispatchKey {
    /// The hashed prefix of the name (its first `min(K, len)` components).
    pub prefix: Name,
    /// The prefix's hash.
    pub hash: u64,
    /// The `K` that applied.
    pub k: usize,
    /// The shard the hash selects.
    pub shard: usize,
    /// Hashes of the name's next [`DEEPER`] prefixes (one, two... components longer than the
    /// key; `None` past the name's end): where names under a dominating key differ.
    pub deeper: [Option<u64>; DEEPER],
}

/// Prefixes longer than the key that [`DispatchKey::deeper`] holds.
pub const DEEPER: usize = 4;

/// Where a packet goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// To these shards (a bitmask; bit `s` is shard `s`). One bit except for a Data copied to
    /// the shards of spanning CanBePrefix Interests.
    Shards(u64),
    /// Not routable by name (undecodable, fragmented, idle): the shard that read it handles it,
    /// so its forwarder counts the drop on the face.
    Local,
    /// An Interest of a key split moments ago ([`super::split`]): to shard `at` (the old
    /// rule's), which forwards it if its PIT or dead-nonce list knows it, else hands it to
    /// shard `then` (the new rule's).
    Drain {
        /// The old rule's shard.
        at: usize,
        /// The new rule's shard.
        then: usize,
    },
}

/// Applies the [`DispatchTable`] for a fixed number of shards. Shared read-only by every shard
/// (the span filter inside is atomic).
#[derive(Debug)]
pub struct Dispatcher {
    table: DispatchTable,
    n: usize,
    span: SpanFilter,
    splits: Splits,
}

/// What the dispatcher reads of an Interest.
struct InterestKey {
    name: Name,
    can_be_prefix: bool,
    lifetime_ms: u64,
}

impl Dispatcher {
    /// A dispatcher over `n` shards.
    ///
    /// # Errors
    /// [`DispatchError::ShardCount`] when `n` is 0 or above [`MAX_SHARDS`].
    pub fn new(table: DispatchTable, n: usize) -> Result<Self, DispatchError> {
        if n == 0 || n > MAX_SHARDS {
            return Err(DispatchError::ShardCount(n));
        }
        let splits = Splits::new(table.auto_split);
        Ok(Self {
            table,
            n,
            span: SpanFilter::new(),
            splits,
        })
    }

    /// The number of shards.
    pub fn shards(&self) -> usize {
        self.n
    }

    /// The table.
    pub fn table(&self) -> &DispatchTable {
        &self.table
    }

    /// The shard a name hash selects. The hash is remixed first: the shard's own tables index
    /// by the low bits of the same hash, which must stay evenly spread within a shard.
    pub fn shard_of_hash(&self, h: u64) -> usize {
        let mixed = h.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        ((u128::from(mixed) * self.n as u128) >> 64) as usize
    }

    /// The shards `wire` (a packet as a face delivers it) belongs to at `now`.
    pub fn route(&self, now: Time, wire: &Bytes) -> Route {
        self.route_hashed(now, wire).0
    }

    /// [`Dispatcher::route`], with the prefix hashes of the name of a bare Interest or Data
    /// (what the owning shard's forwarder would compute again: [`super::Shard`] hands them to
    /// it when it owns the packet).
    pub fn route_hashed(&self, now: Time, wire: &Bytes) -> (Route, Option<PrefixHashes>) {
        match wire.first().map(|&t| u32::from(t)) {
            Some(types::INTEREST) => self.route_interest(now, wire, true),
            Some(types::DATA) => self.route_data(now, wire),
            _ => (self.route_lp(now, wire), None),
        }
    }

    fn route_lp(&self, now: Time, wire: &Bytes) -> Route {
        let Ok(Packet::Lp(lp)) = Packet::classify(wire.clone()) else {
            return Route::Local;
        };
        if lp.frag_count.unwrap_or(1) > 1 || lp.frag_index.unwrap_or(0) > 0 {
            return Route::Local;
        }
        let Some(fragment) = lp.fragment else {
            return Route::Local;
        };
        match fragment.first().map(|&t| u32::from(t)) {
            // A Nack goes where its Interest went; it notes nothing in the span filter.
            Some(types::INTEREST) => self.route_interest(now, &fragment, lp.nack.is_none()).0,
            Some(types::DATA) if lp.nack.is_none() => self.route_data(now, &fragment).0,
            _ => Route::Local,
        }
    }

    fn route_interest(
        &self,
        now: Time,
        wire: &Bytes,
        note_span: bool,
    ) -> (Route, Option<PrefixHashes>) {
        let Some(key) = interest_key(wire) else {
            return (Route::Local, None);
        };
        let name = &key.name;
        if is_management(name) {
            return (Route::Shards(1), None);
        }
        let hashes = self.table.hasher.prefix_hashes(name);
        let len = match name.last() {
            Some(c) if c.typ() == types::IMPLICIT_SHA256_DIGEST_COMPONENT => name.len() - 1,
            _ => name.len(),
        };
        let mut k = self.table.k_for(name, len, &hashes);
        let m = k.min(len);
        let Some(mut h) = hashes.get(m) else {
            return (Route::Local, None);
        };
        let (mut drain, mut copy) = (None, 0);
        if let Some(r) = self.splits.resolve(&hashes, len, m, h, k, now) {
            (k, h) = (r.k, r.hash);
            drain = r.draining_from.map(|old| self.shard_of_hash(old));
            copy = r
                .copying_from
                .map_or(0, |old| 1u64 << self.shard_of_hash(old));
        }
        let spanning = || len < k || self.table.is_extended(hashes.get(len).unwrap_or(h));
        if note_span && key.can_be_prefix && spanning() {
            self.span.note(h, now.add_millis(key.lifetime_ms));
        }
        let shard = self.shard_of_hash(h);
        let route = match drain {
            Some(at) if at != shard && note_span => Route::Drain { at, then: shard },
            // A Nack goes where its Interest may be pending: after a split, to both shards
            // while the old one may still hold entries (the other drops it as unsolicited).
            _ if !note_span => Route::Shards((1 << shard) | copy),
            _ => Route::Shards(1 << shard),
        };
        (route, Some(hashes))
    }

    fn route_data(&self, now: Time, wire: &Bytes) -> (Route, Option<PrefixHashes>) {
        let Some(name) = data_name(wire) else {
            return (Route::Local, None);
        };
        if is_management(&name) {
            return (Route::Shards(1), None);
        }
        let hashes = self.table.hasher.prefix_hashes(&name);
        let k = self.table.k_for(&name, name.len(), &hashes);
        let m = k.min(name.len());
        let Some(mut h) = hashes.get(m) else {
            return (Route::Local, None);
        };
        let mut copy = 0;
        if let Some(r) = self.splits.resolve(&hashes, name.len(), m, h, k, now) {
            h = r.hash;
            copy = r
                .copying_from
                .map_or(0, |old| 1u64 << self.shard_of_hash(old));
        }
        let mut mask = (1u64 << self.shard_of_hash(h)) | copy;
        if self.span.any_live(now) {
            for &p in hashes.as_slice() {
                if self.span.live(p, now) {
                    mask |= 1 << self.shard_of_hash(p);
                }
            }
        }
        (Route::Shards(mask), Some(hashes))
    }

    /// The key an Interest is dispatched by: the prefix whose hash chooses its shard (its
    /// first `min(K, len)` components), that `K`, and the shard. `None` for anything
    /// [`Dispatcher::route`] does not route by an Interest's name, and for management names.
    /// It parses the name again: for sampling ([`super::skew`]), not for every packet.
    pub fn interest_key(&self, wire: &Bytes) -> Option<DispatchKey> {
        let name = interest_name(wire)?;
        if is_management(&name) {
            return None;
        }
        let hashes = self.table.hasher.prefix_hashes(&name);
        let len = match name.last() {
            Some(c) if c.typ() == types::IMPLICIT_SHA256_DIGEST_COMPONENT => name.len() - 1,
            _ => name.len(),
        };
        let mut k = self.table.k_for(&name, len, &hashes);
        let mut m = k.min(len);
        let mut hash = hashes.get(m)?;
        if let Some(r) = self.splits.resolve(&hashes, len, m, hash, k, Time::ZERO) {
            (k, m, hash) = (r.k, r.m, r.hash);
        }
        let mut deeper = [None; DEEPER];
        for (i, d) in deeper.iter_mut().enumerate() {
            *d = hashes.get(m + 1 + i).filter(|_| m + 1 + i <= len);
        }
        Some(DispatchKey {
            prefix: name.prefix(m),
            hash,
            k,
            shard: self.shard_of_hash(hash),
            deeper,
        })
    }

    /// The automatic splits of dominating keys ([`super::split`]).
    pub fn splits(&self) -> &Splits {
        &self.splits
    }

    /// The span filter (for counters and tests).
    pub fn span_filter(&self) -> &SpanFilter {
        &self.span
    }
}

/// The Name of the Interest `wire` carries (bare, or the fragment of an unfragmented
/// LpPacket without a Nack); `None` for anything else.
pub(crate) fn interest_name(wire: &Bytes) -> Option<Name> {
    match wire.first().map(|&t| u32::from(t)) {
        Some(types::INTEREST) => interest_key(wire).map(|k| k.name),
        Some(types::DATA) => None,
        _ => {
            let Ok(Packet::Lp(lp)) = Packet::classify(wire.clone()) else {
                return None;
            };
            let whole = lp.frag_count.unwrap_or(1) <= 1 && lp.frag_index.unwrap_or(0) == 0;
            let fragment = lp.fragment.filter(|_| whole && lp.nack.is_none())?;
            match fragment.first().map(|&t| u32::from(t)) {
                Some(types::INTEREST) => interest_key(&fragment).map(|k| k.name),
                _ => None,
            }
        }
    }
}

/// The Name, CanBePrefix and InterestLifetime of an Interest TLV, without checking the rest
/// (the owning shard's forwarder checks it and counts a malformed one).
fn interest_key(wire: &Bytes) -> Option<InterestKey> {
    let top = tlv::read_single(wire).ok()?;
    let mut children = top.children();
    let name_el = children.read_element().ok()?;
    if name_el.typ != types::NAME {
        return None;
    }
    let name = Name::from_value_in(wire.clone(), name_el.value_range()).ok()?;
    let (mut can_be_prefix, mut lifetime_ms) = (false, DEFAULT_LIFETIME_MS);
    while let Ok(Some(e)) = children.read() {
        match e.typ {
            types::CAN_BE_PREFIX => can_be_prefix = true,
            types::INTEREST_LIFETIME => lifetime_ms = e.nni().unwrap_or(DEFAULT_LIFETIME_MS),
            _ => {}
        }
    }
    Some(InterestKey {
        name,
        can_be_prefix,
        lifetime_ms,
    })
}

/// The Name of a Data TLV.
fn data_name(wire: &Bytes) -> Option<Name> {
    let top = tlv::read_single(wire).ok()?;
    let name_el = top.children().read_element().ok()?;
    if name_el.typ != types::NAME {
        return None;
    }
    Name::from_value_in(wire.clone(), name_el.value_range()).ok()
}
