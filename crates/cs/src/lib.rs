//! `nameway-cs`: the content-store server ("CS-server") of Nameway's decoupled content store.
//!
//! The forwarding core keeps only a compact filter of what may be cached; the packets live
//! here, in two tiers:
//!
//! - a **memory tier** ([`MemoryTier`]) with a selectable replacement policy ([`PolicyKind`]:
//!   LRU, LFU, ARC), bounded in packets and in bytes;
//! - an optional **disk tier** ([`DiskTier`]) in an embedded crash-safe store (redb), bounded
//!   in packets and bytes, evicting the oldest writes first, which survives a restart.
//!
//! The disk tier is written through: every admitted packet is queued for the disk and committed
//! in groups, so a memory eviction loses nothing and a restart keeps every committed packet. A
//! disk hit is promoted to memory. [`CsServer`] joins the tiers and reports, as [`Change`]s, when
//! a name enters or leaves the store as a whole, so the forwarder's filter stays exact.
//! [`worker::spawn`] runs a server on a thread of its own.
//!
//! The tiers answer exact, CanBePrefix, MustBeFresh (with wall-clock arrival times, so
//! freshness is right across a restart) and implicit-digest look-ups ([`Query`]).

#![forbid(unsafe_code)]

pub mod disk;
pub mod memory;
pub mod packet;
pub mod policy;
pub mod size;
pub mod worker;

use std::path::PathBuf;

use bytes::Bytes;
use nameway_wire::DecodeError;

pub use disk::{DiskError, DiskTier, OpenReport};
pub use memory::MemoryTier;
pub use packet::{Packet, Query, Tag};
pub use policy::PolicyKind;
pub use size::parse_size;

/// Counters of one tier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TierStats {
    /// Look-ups answered.
    pub hits: u64,
    /// Look-ups not answered.
    pub misses: u64,
    /// Packets written.
    pub inserts: u64,
    /// Packets evicted for room.
    pub evictions: u64,
    /// Records dropped because they failed their checksum (disk tier).
    pub corrupt_dropped: u64,
}

/// One tier as `cs info` shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TierInfo {
    /// Packets held.
    pub entries: u64,
    /// Bytes charged.
    pub bytes: u64,
    /// Capacity in packets.
    pub capacity_packets: u64,
    /// Capacity in bytes.
    pub capacity_bytes: u64,
    /// Counters.
    pub stats: TierStats,
}

/// The whole store as `cs info` shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CsInfo {
    /// The memory tier's policy.
    pub policy: PolicyKind,
    /// The memory tier.
    pub memory: TierInfo,
    /// The disk tier, when it runs.
    pub disk: Option<TierInfo>,
    /// Why the disk tier does not run although a path is configured.
    pub disk_error: Option<String>,
    /// Disk tiers refused (at open or after a write error) since start.
    pub disk_refusals: u64,
}

/// Sizes and places of the tiers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsConfig {
    /// Replacement policy of the memory tier.
    pub policy: PolicyKind,
    /// Memory tier capacity in packets.
    pub memory_packets: usize,
    /// Memory tier capacity in bytes.
    pub memory_bytes: usize,
    /// The disk store's file; `None`: no disk tier.
    pub disk_path: Option<PathBuf>,
    /// Disk tier capacity in packets.
    pub disk_packets: usize,
    /// Disk tier capacity in bytes.
    pub disk_bytes: u64,
    /// The embedded store's page cache in bytes (it counts toward the process's memory).
    pub disk_cache_bytes: usize,
}

impl Default for CsConfig {
    fn default() -> Self {
        Self {
            policy: PolicyKind::Lru,
            memory_packets: 65_536,
            memory_bytes: 256 << 20,
            disk_path: None,
            disk_packets: usize::MAX,
            disk_bytes: 1 << 30,
            disk_cache_bytes: 16 << 20,
        }
    }
}

/// A name entered or left the store (both tiers together), with the tag its packet was
/// inserted with when the memory tier still has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// The name's TLV-VALUE is now stored.
    Added(Bytes, Tag),
    /// The name's TLV-VALUE is no longer stored anywhere.
    Removed(Bytes, Tag),
}

/// The memory tier and the optional disk tier, joined.
pub struct CsServer {
    memory: MemoryTier,
    disk: Option<DiskTier>,
    config: CsConfig,
    disk_error: Option<String>,
    disk_refusals: u64,
    changes: Vec<Change>,
}

impl CsServer {
    /// Opens the tiers. A disk tier that cannot be opened (unreadable path, another format,
    /// damaged file) is logged and refused, and the store runs with memory only.
    pub fn open(config: CsConfig) -> (Self, Option<OpenReport>) {
        let memory = MemoryTier::new(config.policy, config.memory_packets, config.memory_bytes);
        let mut server = Self {
            memory,
            disk: None,
            config: config.clone(),
            disk_error: None,
            disk_refusals: 0,
            changes: Vec::new(),
        };
        let report = server.open_disk();
        (server, report)
    }

    fn open_disk(&mut self) -> Option<OpenReport> {
        let path = self.config.disk_path.clone()?;
        match DiskTier::open(
            &path,
            self.config.disk_packets,
            self.config.disk_bytes,
            self.config.disk_cache_bytes,
        ) {
            Ok((disk, report)) => {
                tracing::info!(
                    path = %path.display(),
                    packets = report.packets,
                    bytes = report.bytes,
                    corrupt_dropped = report.corrupt_dropped,
                    "disk cache opened"
                );
                self.disk = Some(disk);
                self.disk_error = None;
                Some(report)
            }
            Err(e) => {
                tracing::error!("{e}; the content store runs without its disk tier");
                self.disk_error = Some(e.to_string());
                self.disk_refusals += 1;
                None
            }
        }
    }

    /// Every stored name (both tiers), for building a filter.
    pub fn keys(&self) -> Vec<Bytes> {
        let mut keys: Vec<Bytes> = self.memory.packets().map(|p| p.key.clone()).collect();
        if let Some(disk) = &self.disk {
            match disk.keys() {
                Ok(k) => keys.extend(k),
                Err(e) => tracing::warn!("disk cache: cannot list names: {e}"),
            }
        }
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    fn on_disk(&self, key: &Bytes) -> bool {
        self.disk.as_ref().is_some_and(|d| {
            let q = Query {
                key: key.clone(),
                digest: None,
                can_be_prefix: false,
                must_be_fresh: false,
            };
            // A read-only probe: `lookup` would count a hit or a miss.
            d.contains(&q)
        })
    }

    /// Admits a Data that arrived at `arrived_ms` (wall clock).
    ///
    /// # Errors
    /// `wire` is not a valid Data (nothing is stored).
    pub fn insert(&mut self, wire: Bytes, arrived_ms: u64) -> Result<(), DecodeError> {
        self.insert_tagged(wire, arrived_ms, None)
    }

    /// [`CsServer::insert`] with a tag that [`Change`]s about this packet carry.
    ///
    /// # Errors
    /// `wire` is not a valid Data (nothing is stored).
    pub fn insert_tagged(
        &mut self,
        wire: Bytes,
        arrived_ms: u64,
        tag: Tag,
    ) -> Result<(), DecodeError> {
        let mut packet = Packet::new(wire, arrived_ms)?;
        packet.tag = tag.clone();
        let key = packet.key.clone();
        let known = self.memory.contains(&key) || self.on_disk(&key);
        if let Some(disk) = self.disk.as_mut().filter(|_| !is_localhost(&key)) {
            disk.insert(&packet);
        }
        let evicted = self.memory.insert(packet);
        if !known {
            self.changes.push(Change::Added(key, tag));
        }
        self.evicted_from_memory(evicted);
        if self.disk.as_ref().is_some_and(DiskTier::wants_flush) {
            self.flush();
        }
        Ok(())
    }

    fn evicted_from_memory(&mut self, evicted: Vec<Packet>) {
        for p in evicted {
            // Written through: still on disk unless the disk tier evicted it meanwhile.
            if !self.on_disk(&p.key) {
                self.changes.push(Change::Removed(p.key, p.tag));
            }
        }
    }

    /// The Data that answers `query` at `now_ms`: memory first, then disk (a disk hit is
    /// promoted to memory).
    pub fn lookup(&mut self, query: &Query, now_ms: u64) -> Option<Bytes> {
        if let Some(p) = self.memory.lookup(query, now_ms) {
            return Some(p.wire);
        }
        let disk = self.disk.as_mut()?;
        match disk.lookup(query, now_ms) {
            Ok(Some(p)) => {
                let wire = p.wire.clone();
                let evicted = self.memory.insert(p);
                self.evicted_from_memory(evicted);
                Some(wire)
            }
            Ok(None) => None,
            Err(e) => {
                self.fail_disk(&e);
                None
            }
        }
    }

    /// Commits the disk tier's queue. A failed write (disk full, I/O error) is logged and
    /// counted, and the store goes on with memory only.
    pub fn flush(&mut self) {
        let Some(disk) = &mut self.disk else { return };
        match disk.flush() {
            Ok(evicted) => {
                for key in evicted {
                    if !self.memory.contains(&key) {
                        self.changes.push(Change::Removed(key, None));
                    }
                }
            }
            Err(e) => self.fail_disk(&e),
        }
    }

    /// Whether the disk tier has writes waiting for [`CsServer::flush`].
    pub fn has_queued(&self) -> bool {
        self.disk.as_ref().is_some_and(DiskTier::has_queued)
    }

    fn fail_disk(&mut self, e: &DiskError) {
        tracing::error!("{e}; the content store goes on without its disk tier");
        self.disk_error = Some(e.to_string());
        self.disk_refusals += 1;
        if let Some(disk) = self.disk.take() {
            // Names only the disk held are gone from the store.
            if let Ok(keys) = disk.keys() {
                for key in keys {
                    if !self.memory.contains(&key) {
                        self.changes.push(Change::Removed(key, None));
                    }
                }
            }
        }
    }

    /// Removes up to `limit` packets under the name whose TLV-VALUE is `prefix_key`, in both
    /// tiers; returns how many names went.
    pub fn erase(&mut self, prefix_key: &[u8], limit: usize) -> usize {
        let mut gone = self.memory.erase(prefix_key, limit);
        if let Some(disk) = &mut self.disk {
            match disk.erase(prefix_key, limit) {
                Ok(keys) => gone.extend(keys),
                Err(e) => self.fail_disk(&e),
            }
        }
        gone.sort_unstable();
        gone.dedup();
        gone.truncate(limit);
        let n = gone.len();
        self.changes
            .extend(gone.into_iter().map(|k| Change::Removed(k, None)));
        n
    }

    /// The names that entered or left the store since the last call.
    pub fn take_changes(&mut self) -> Vec<Change> {
        std::mem::take(&mut self.changes)
    }

    /// Changes the policy and the capacities at run time (a smaller tier evicts at once).
    pub fn reconfigure(&mut self, policy: PolicyKind, memory: (usize, usize), disk: (usize, u64)) {
        let evicted = self.memory.reconfigure(policy, memory.0, memory.1);
        self.evicted_from_memory(evicted);
        self.config.policy = policy;
        (self.config.memory_packets, self.config.memory_bytes) = memory;
        (self.config.disk_packets, self.config.disk_bytes) = disk;
        if let Some(d) = &mut self.disk {
            d.set_capacity(disk.0, disk.1);
        }
        self.flush();
    }

    /// Both tiers' figures.
    pub fn info(&self) -> CsInfo {
        let (mp, mb) = self.memory.capacity();
        CsInfo {
            policy: self.memory.policy(),
            memory: TierInfo {
                entries: self.memory.len() as u64,
                bytes: self.memory.bytes() as u64,
                capacity_packets: mp as u64,
                capacity_bytes: mb as u64,
                stats: self.memory.stats,
            },
            disk: self.disk.as_ref().map(|d| {
                let (dp, db) = d.capacity();
                TierInfo {
                    entries: d.len() as u64,
                    bytes: d.bytes(),
                    capacity_packets: dp as u64,
                    capacity_bytes: db,
                    stats: d.stats,
                }
            }),
            disk_error: self.disk_error.clone(),
            disk_refusals: self.disk_refusals,
        }
    }
}

/// The TLV of the name component `localhost`.
const LOCALHOST: &[u8] = b"\x08\x09localhost";

/// Whether a name (its TLV-VALUE) is under `/localhost`: this host's own packets (management
/// answers), kept in memory but never written to disk, so a restart does not bring back the
/// answers of an earlier run.
fn is_localhost(key: &[u8]) -> bool {
    key.starts_with(LOCALHOST)
}
