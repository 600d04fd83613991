//! The disk tier: packets in an embedded, crash-safe B-tree store (redb), so the cache can be
//! far larger than RAM and survives a restart.
//!
//! Tables:
//! - `packets`: name key → record `[format u8][arrived_ms u64][fresh_until_ms u64][seq u64]
//!   [implicit digest 32][Data TLV]` (integers little-endian). The implicit digest is the
//!   record's checksum: a record whose Data does not hash to it is never served; it is dropped
//!   and counted.
//! - `fifo`: write sequence → name key. Eviction takes the oldest write first, as a cyclic
//!   cache log does (Apache Traffic Server's cache); a name written again moves to the end.
//! - `meta`: `format` → the record format version; a store of another version is refused.
//!
//! Writes are grouped: [`DiskTier::insert`] queues, [`DiskTier::flush`] commits the queue in one
//! durable transaction (redb's commit is atomic: after a crash a transaction is there whole or
//! not at all). The caller flushes when the queue is long or the worker is idle, so a restart
//! keeps every packet that was committed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use redb::{
    Database, Durability, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition,
};
use sha2::{Digest, Sha256};

use crate::packet::{Packet, Query};
use crate::TierStats;

const PACKETS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("packets");
const FIFO: TableDefinition<u64, &[u8]> = TableDefinition::new("fifo");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");

/// The record format this build writes and reads.
pub const FORMAT_VERSION: u64 = 1;
const HEADER: usize = 1 + 8 + 8 + 8 + 32;
/// Packets queued before [`DiskTier::wants_flush`] says so.
const FLUSH_PACKETS: usize = 256;
/// Bytes queued before [`DiskTier::wants_flush`] says so.
const FLUSH_BYTES: usize = 4 << 20;

/// Why the disk tier cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DiskError {
    /// The path cannot be opened or created, or the store is damaged beyond what redb repairs.
    #[error("cannot open the disk cache at {path}: {source}")]
    Open {
        /// The store file.
        path: PathBuf,
        /// What redb said.
        #[source]
        source: redb::Error,
    },
    /// The store was written by another record format.
    #[error("the disk cache at {path} has record format {found}, this build reads {FORMAT_VERSION}: move it away or delete it")]
    Format {
        /// The store file.
        path: PathBuf,
        /// The version found.
        found: u64,
    },
    /// A write or read failed (disk full, I/O error).
    #[error("disk cache I/O failed: {0}")]
    Io(#[from] redb::Error),
}

macro_rules! from_redb {
    ($($t:ty),*) => {$(
        impl From<$t> for DiskError {
            fn from(e: $t) -> Self {
                Self::Io(e.into())
            }
        }
    )*};
}
from_redb!(
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError,
    redb::SetDurabilityError
);

/// What opening found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenReport {
    /// Packets kept.
    pub packets: usize,
    /// Bytes of records kept.
    pub bytes: u64,
    /// Records dropped because their checksum, header or Data was bad.
    pub corrupt_dropped: u64,
}

/// The disk tier.
pub struct DiskTier {
    db: Database,
    path: PathBuf,
    capacity_bytes: u64,
    capacity_packets: usize,
    bytes: u64,
    packets: usize,
    next_seq: u64,
    /// Written by `insert`, not yet committed: name key → record.
    queue: HashMap<Bytes, Vec<u8>>,
    queue_bytes: usize,
    pub(crate) stats: TierStats,
}

fn record(p: &Packet, seq: u64) -> Vec<u8> {
    let mut r = Vec::with_capacity(HEADER + p.wire.len());
    r.push(FORMAT_VERSION as u8);
    r.extend_from_slice(&p.arrived_ms.to_le_bytes());
    r.extend_from_slice(&p.fresh_until_ms.to_le_bytes());
    r.extend_from_slice(&seq.to_le_bytes());
    r.extend_from_slice(&p.digest);
    r.extend_from_slice(&p.wire);
    r
}

/// The header fields of a record, if it has one of this format.
struct Header {
    arrived_ms: u64,
    fresh_until_ms: u64,
    seq: u64,
    digest: [u8; 32],
}

fn header(r: &[u8]) -> Option<Header> {
    if r.len() <= HEADER || u64::from(r[0]) != FORMAT_VERSION {
        return None;
    }
    let n = |at: usize| {
        r.get(at..at + 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
    };
    Some(Header {
        arrived_ms: n(1)?,
        fresh_until_ms: n(9)?,
        seq: n(17)?,
        digest: r.get(25..57)?.try_into().ok()?,
    })
}

/// The packet of a record whose checksum and Data check out.
fn verified(key: &[u8], r: &[u8]) -> Option<Packet> {
    let h = header(r)?;
    let wire = &r[HEADER..];
    if Sha256::digest(wire).as_slice() != h.digest {
        return None;
    }
    let p = Packet::new(Bytes::copy_from_slice(wire), h.arrived_ms).ok()?;
    (p.key == key && p.digest == h.digest).then_some(Packet {
        fresh_until_ms: h.fresh_until_ms,
        ..p
    })
}

impl DiskTier {
    /// Opens (or creates) the store at `path`, checks every record (a bad one is dropped and
    /// counted) and rebuilds the byte count and the eviction order.
    ///
    /// # Errors
    /// The file cannot be opened or created, or it is of another record format.
    pub fn open(
        path: &Path,
        capacity_packets: usize,
        capacity_bytes: u64,
        cache_bytes: usize,
    ) -> Result<(Self, OpenReport), DiskError> {
        let open_err = |source: redb::Error| DiskError::Open {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| open_err(redb::Error::Io(e)))?;
        }
        let db = Database::builder()
            .set_cache_size(cache_bytes)
            .create(path)
            .map_err(|e| open_err(e.into()))?;
        let mut tier = Self {
            db,
            path: path.to_path_buf(),
            capacity_bytes,
            capacity_packets,
            bytes: 0,
            packets: 0,
            next_seq: 0,
            queue: HashMap::new(),
            queue_bytes: 0,
            stats: TierStats::default(),
        };
        let report = tier.check_all().map_err(|e| match e {
            DiskError::Io(source) => open_err(source),
            other => other,
        })?;
        Ok((tier, report))
    }

    /// The format check and the full scan of [`DiskTier::open`].
    fn check_all(&mut self) -> Result<OpenReport, DiskError> {
        let mut tx = self.db.begin_write()?;
        tx.set_durability(Durability::Immediate)?;
        let mut report = OpenReport::default();
        {
            let mut meta = tx.open_table(META)?;
            let mut packets = tx.open_table(PACKETS)?;
            let mut fifo = tx.open_table(FIFO)?;
            let found = meta.get("format")?.map(|v| v.value());
            match found {
                Some(v) if v != FORMAT_VERSION => {
                    return Err(DiskError::Format {
                        path: self.path.clone(),
                        found: v,
                    })
                }
                None if !packets.is_empty()? => {
                    return Err(DiskError::Format {
                        path: self.path.clone(),
                        found: 0,
                    })
                }
                _ => {}
            }
            meta.insert("format", FORMAT_VERSION)?;
            // Every record must verify; the eviction order is rebuilt from their sequences.
            let mut bad = Vec::new();
            let mut order = Vec::new();
            for entry in packets.iter()? {
                let (k, v) = entry?;
                let (key, rec) = (k.value(), v.value());
                match verified(key, rec).and_then(|_| header(rec)) {
                    Some(h) => {
                        report.packets += 1;
                        report.bytes += rec.len() as u64;
                        order.push((h.seq, key.to_vec()));
                    }
                    None => bad.push(key.to_vec()),
                }
            }
            for key in &bad {
                packets.remove(key.as_slice())?;
            }
            report.corrupt_dropped = bad.len() as u64;
            fifo.retain(|_, _| false)?;
            order.sort_unstable();
            for (seq, key) in &order {
                fifo.insert(*seq, key.as_slice())?;
            }
            self.next_seq = order.last().map_or(0, |(s, _)| s + 1);
        }
        tx.commit()?;
        self.bytes = report.bytes;
        self.packets = report.packets;
        self.stats.corrupt_dropped = report.corrupt_dropped;
        Ok(report)
    }

    /// Packets stored (committed and queued).
    pub fn len(&self) -> usize {
        self.packets
    }

    /// Whether it stores nothing.
    pub fn is_empty(&self) -> bool {
        self.packets == 0
    }

    /// Bytes of records stored.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Capacities: packets and bytes.
    pub fn capacity(&self) -> (usize, u64) {
        (self.capacity_packets, self.capacity_bytes)
    }

    /// Changes the capacities; the next flush evicts what no longer fits.
    pub fn set_capacity(&mut self, packets: usize, bytes: u64) {
        self.capacity_packets = packets;
        self.capacity_bytes = bytes;
    }

    /// The store file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Queues a packet for the next commit.
    pub fn insert(&mut self, p: &Packet) {
        let r = record(p, self.next_seq);
        self.next_seq += 1;
        self.queue_bytes += r.len();
        if let Some(old) = self.queue.insert(p.key.clone(), r) {
            self.queue_bytes -= old.len();
        }
        self.stats.inserts += 1;
    }

    /// Whether enough is queued that the caller should flush now.
    pub fn wants_flush(&self) -> bool {
        self.queue.len() >= FLUSH_PACKETS || self.queue_bytes >= FLUSH_BYTES
    }

    /// Whether anything waits to be committed.
    pub fn has_queued(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Commits the queue in one durable transaction, evicting the oldest writes beyond the
    /// capacities. Returns the keys evicted (the caller updates its filter).
    ///
    /// # Errors
    /// The write failed (disk full, I/O): nothing of the queue is stored.
    pub fn flush(&mut self) -> Result<Vec<Bytes>, DiskError> {
        let queue = std::mem::take(&mut self.queue);
        self.queue_bytes = 0;
        let mut evicted = Vec::new();
        let mut tx = self.db.begin_write()?;
        tx.set_durability(Durability::Immediate)?;
        let (mut bytes, mut packets) = (self.bytes, self.packets);
        {
            let mut table = tx.open_table(PACKETS)?;
            let mut fifo = tx.open_table(FIFO)?;
            for (key, rec) in &queue {
                let seq = header(rec).map_or(0, |h| h.seq);
                let old = table
                    .insert(&key[..], rec.as_slice())?
                    .map(|v| v.value().to_vec());
                match old {
                    Some(old) => {
                        bytes = bytes.saturating_sub(old.len() as u64);
                        if let Some(h) = header(&old) {
                            fifo.remove(h.seq)?;
                        }
                    }
                    None => packets += 1,
                }
                bytes += rec.len() as u64;
                fifo.insert(seq, &key[..])?;
            }
            while bytes > self.capacity_bytes || packets > self.capacity_packets {
                let Some((_, k)) = fifo.pop_first()? else {
                    break;
                };
                let key = k.value().to_vec();
                drop(k);
                if let Some(old) = table.remove(key.as_slice())? {
                    bytes = bytes.saturating_sub(old.value().len() as u64);
                    packets = packets.saturating_sub(1);
                    evicted.push(Bytes::from(key));
                }
            }
        }
        tx.commit()?;
        self.bytes = bytes;
        self.packets = packets;
        self.stats.evictions += evicted.len() as u64;
        Ok(evicted)
    }

    /// The first packet (in key order) that answers `query` at `now_ms`; queued packets count.
    /// A record that fails its checksum is removed and counted, never returned.
    ///
    /// # Errors
    /// A read failed.
    pub fn lookup(&mut self, query: &Query, now_ms: u64) -> Result<Option<Packet>, DiskError> {
        let queued = self
            .queue
            .iter()
            .filter(|(k, _)| query.in_range(k))
            .filter_map(|(k, r)| header(r).map(|h| (k, h)))
            .filter(|(k, h)| query.matches(k, &h.digest, h.fresh_until_ms, now_ms))
            .min_by(|a, b| a.0.cmp(b.0))
            .and_then(|(k, _)| self.queue.get(k).and_then(|r| verified(k, r)));
        if let Some(p) = queued {
            self.stats.hits += 1;
            return Ok(Some(p));
        }
        let mut corrupt = Vec::new();
        let mut found = None;
        {
            let tx = self.db.begin_read()?;
            let table = tx.open_table(PACKETS)?;
            for entry in table.range(&query.key[..]..)? {
                let (k, v) = entry?;
                let key = k.value();
                if !query.in_range(key) {
                    break;
                }
                let rec = v.value();
                let Some(h) = header(rec) else {
                    corrupt.push(key.to_vec());
                    continue;
                };
                if !query.matches(key, &h.digest, h.fresh_until_ms, now_ms) {
                    continue;
                }
                match verified(key, rec) {
                    Some(p) => {
                        found = Some(p);
                        break;
                    }
                    None => corrupt.push(key.to_vec()),
                }
            }
        }
        if !corrupt.is_empty() {
            self.drop_corrupt(&corrupt)?;
        }
        match &found {
            Some(_) => self.stats.hits += 1,
            None => self.stats.misses += 1,
        }
        Ok(found)
    }

    fn drop_corrupt(&mut self, keys: &[Vec<u8>]) -> Result<(), DiskError> {
        let tx = self.db.begin_write()?;
        {
            let mut table = tx.open_table(PACKETS)?;
            for k in keys {
                if let Some(old) = table.remove(k.as_slice())? {
                    self.bytes = self.bytes.saturating_sub(old.value().len() as u64);
                    self.packets = self.packets.saturating_sub(1);
                }
            }
        }
        tx.commit()?;
        self.stats.corrupt_dropped += keys.len() as u64;
        tracing::warn!(
            records = keys.len(),
            "disk cache: records failed their checksum and were dropped"
        );
        Ok(())
    }

    /// Whether a packet of exactly this name is stored (queued or committed); counts nothing.
    pub fn contains(&self, query: &Query) -> bool {
        if self.queue.contains_key(&query.key) {
            return true;
        }
        let probe = || -> Result<bool, DiskError> {
            let tx = self.db.begin_read()?;
            let table = tx.open_table(PACKETS)?;
            Ok(table.get(&query.key[..])?.is_some())
        };
        probe().unwrap_or(false)
    }

    /// Removes up to `limit` packets whose name starts with `prefix_key`; returns their keys.
    ///
    /// # Errors
    /// The write failed.
    pub fn erase(&mut self, prefix_key: &[u8], limit: usize) -> Result<Vec<Bytes>, DiskError> {
        self.queue.retain(|k, _| !k.starts_with(prefix_key));
        let tx = self.db.begin_write()?;
        let mut erased = Vec::new();
        {
            let mut table = tx.open_table(PACKETS)?;
            let mut fifo = tx.open_table(FIFO)?;
            let keys: Vec<Vec<u8>> = table
                .range(prefix_key..)?
                .filter_map(Result::ok)
                .map(|(k, _)| k.value().to_vec())
                .take_while(|k| k.starts_with(prefix_key))
                .take(limit)
                .collect();
            for k in keys {
                if let Some(old) = table.remove(k.as_slice())? {
                    let rec = old.value();
                    self.bytes = self.bytes.saturating_sub(rec.len() as u64);
                    self.packets = self.packets.saturating_sub(1);
                    if let Some(h) = header(rec) {
                        fifo.remove(h.seq)?;
                    }
                    erased.push(Bytes::from(k));
                }
            }
        }
        tx.commit()?;
        Ok(erased)
    }

    /// Every stored name key (committed), for rebuilding a filter at start.
    ///
    /// # Errors
    /// A read failed.
    pub fn keys(&self) -> Result<Vec<Bytes>, DiskError> {
        let tx = self.db.begin_read()?;
        let table = tx.open_table(PACKETS)?;
        let mut keys = Vec::with_capacity(self.packets);
        for entry in table.iter()? {
            let (k, _) = entry?;
            keys.push(Bytes::copy_from_slice(k.value()));
        }
        Ok(keys)
    }
}
