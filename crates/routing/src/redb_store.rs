//! [`RegistryStore`] over redb, the embedded key-value store the content store uses (feature
//! `redb`). Two tables of 32-byte keys to record bytes, and a format number.
//!
//! Writes are queued and committed together by [`RegistryStore::flush`] in one durable
//! transaction: a crash loses at most the changes since the last flush, which renewals bring
//! back within one renewal period.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use redb::{
    Database, Durability, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition,
};

use crate::registry::{RecordKind, RegistryStore};
use crate::sc::KeyHash;

const ANNOUNCEMENTS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("routing_announcements");
const LOCATORS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("routing_locators");
const META: TableDefinition<&str, u64> = TableDefinition::new("routing_meta");

/// redb's page cache for [`RedbStore::open`]: the registry is read once at start and
/// written in batches, so a small cache serves.
pub const DEFAULT_CACHE_BYTES: usize = 16 << 20;

/// The record format this build writes and reads.
pub const FORMAT_VERSION: u64 = 1;

/// Why the store cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedbStoreError {
    /// The file cannot be opened or created.
    #[error("cannot open the routing registry at {path}: {source}")]
    Open {
        /// The file.
        path: PathBuf,
        /// What redb said.
        #[source]
        source: redb::Error,
    },
    /// The file holds another record format.
    #[error("the routing registry at {path} has format {found}, this build reads {FORMAT_VERSION}: move it away or delete it")]
    Format {
        /// The file.
        path: PathBuf,
        /// The format found.
        found: u64,
    },
    /// A read or write failed (disk full, I/O error).
    #[error("routing registry I/O failed: {0}")]
    Io(#[from] redb::Error),
}

macro_rules! from_redb {
    ($($t:ty),*) => {$(
        impl From<$t> for RedbStoreError {
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

/// See the module documentation.
pub struct RedbStore {
    db: Database,
    /// Changes not yet committed: `None` deletes.
    queue: BTreeMap<(RecordKind, KeyHash), Option<Vec<u8>>>,
}

fn table(kind: RecordKind) -> TableDefinition<'static, &'static [u8], &'static [u8]> {
    match kind {
        RecordKind::Announcement => ANNOUNCEMENTS,
        RecordKind::Locator => LOCATORS,
    }
}

impl RedbStore {
    /// Opens or creates the store at `path` (creating its directory).
    ///
    /// # Errors
    /// [`RedbStoreError::Open`] or [`RedbStoreError::Format`].
    pub fn open(path: &Path) -> Result<Self, RedbStoreError> {
        Self::open_with_cache(path, DEFAULT_CACHE_BYTES)
    }

    /// [`RedbStore::open`] with redb's page cache limited to `cache_bytes`.
    ///
    /// # Errors
    /// As [`RedbStore::open`].
    pub fn open_with_cache(path: &Path, cache_bytes: usize) -> Result<Self, RedbStoreError> {
        let open_err = |source: redb::Error| RedbStoreError::Open {
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
        let store = Self {
            db,
            queue: BTreeMap::new(),
        };
        store.check_format(path).map_err(|e| match e {
            RedbStoreError::Io(source) => open_err(source),
            other => other,
        })?;
        Ok(store)
    }

    fn check_format(&self, path: &Path) -> Result<(), RedbStoreError> {
        let mut tx = self.db.begin_write()?;
        tx.set_durability(Durability::Immediate)?;
        {
            let mut meta = tx.open_table(META)?;
            let announcements = tx.open_table(ANNOUNCEMENTS)?;
            tx.open_table(LOCATORS)?;
            let found = meta.get("format")?.map(|v| v.value());
            let empty = announcements.is_empty()?;
            match found {
                Some(v) if v != FORMAT_VERSION => {
                    return Err(RedbStoreError::Format {
                        path: path.to_path_buf(),
                        found: v,
                    })
                }
                None if !empty => {
                    return Err(RedbStoreError::Format {
                        path: path.to_path_buf(),
                        found: 0,
                    })
                }
                _ => {}
            }
            meta.insert("format", FORMAT_VERSION)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Changes waiting for [`RegistryStore::flush`].
    pub fn queued(&self) -> usize {
        self.queue.len()
    }
}

impl RegistryStore for RedbStore {
    type Error = RedbStoreError;

    fn put(&mut self, kind: RecordKind, key: &KeyHash, wire: &[u8]) -> Result<(), Self::Error> {
        self.queue.insert((kind, *key), Some(wire.to_vec()));
        Ok(())
    }

    fn delete(&mut self, kind: RecordKind, key: &KeyHash) -> Result<(), Self::Error> {
        self.queue.insert((kind, *key), None);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        if self.queue.is_empty() {
            return Ok(());
        }
        let mut tx = self.db.begin_write()?;
        tx.set_durability(Durability::Immediate)?;
        {
            let mut announcements = tx.open_table(ANNOUNCEMENTS)?;
            let mut locators = tx.open_table(LOCATORS)?;
            for ((kind, key), value) in &self.queue {
                let t = match kind {
                    RecordKind::Announcement => &mut announcements,
                    RecordKind::Locator => &mut locators,
                };
                match value {
                    Some(v) => {
                        t.insert(&key.as_bytes()[..], v.as_slice())?;
                    }
                    None => {
                        t.remove(&key.as_bytes()[..])?;
                    }
                }
            }
        }
        tx.commit()?;
        self.queue.clear();
        Ok(())
    }

    fn for_each(
        &self,
        kind: RecordKind,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<(), Self::Error> {
        let tx = self.db.begin_read()?;
        let t = tx.open_table(table(kind))?;
        for entry in t.iter()? {
            let (k, v) = entry?;
            let key = k.value();
            let queued =
                KeyHash::from_slice(key).is_some_and(|h| self.queue.contains_key(&(kind, h)));
            if !queued {
                visit(key, v.value());
            }
        }
        for ((k, key), value) in &self.queue {
            if let (true, Some(v)) = (*k == kind, value) {
                visit(key.as_bytes(), v);
            }
        }
        Ok(())
    }
}
