//! [`Registry`]: the name registry service: the in-memory [`NameTree`] for look-ups in
//! front of a durable [`RegistryStore`] written through [`GroupCommit`].
//!
//! A change is visible to look-ups only once it is committed, so a look-up never answers
//! with a registration that a crash would lose.

use std::path::PathBuf;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use nameway_wire::Name;

use crate::error::StoreError;
use crate::group_commit::{CommitStats, GroupCommit, GroupCommitConfig};
use crate::name_tree::NameTree;
use crate::store::{Registration, RegistrationKey, RegistryOp, RegistryStore};

/// What opening the registry found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Registrations loaded into the name tree.
    pub loaded: usize,
    /// Registrations already expired, left out (the next sweep deletes them).
    pub expired: usize,
}

/// The name registry.
#[derive(Debug)]
pub struct Registry<S> {
    tree: RwLock<NameTree>,
    writer: GroupCommit<S>,
}

impl<S: RegistryStore + Send + 'static> Registry<S> {
    /// Loads every unexpired registration of `store` into the name tree and starts the writer.
    ///
    /// # Errors
    /// The store cannot be read (see [`RegistryStore::load_registrations`]).
    pub fn open(
        mut store: S,
        now_ms: u64,
        config: GroupCommitConfig,
    ) -> Result<(Self, LoadReport), StoreError> {
        let mut tree = NameTree::new();
        let mut report = LoadReport::default();
        for r in store.load_registrations()? {
            if r.expires_ms <= now_ms {
                report.expired += 1;
            } else {
                tree.upsert(r);
                report.loaded += 1;
            }
        }
        let registry = Self {
            tree: RwLock::new(tree),
            writer: GroupCommit::start(store, config),
        };
        Ok((registry, report))
    }

    /// Stores `reg` durably (replacing the registration with its key), then makes it visible.
    ///
    /// # Errors
    /// The commit failed; the registration is not stored.
    pub fn register(&self, reg: Registration) -> Result<(), StoreError> {
        self.register_all(vec![reg])
    }

    /// Stores many registrations in one commit (bulk load).
    ///
    /// # Errors
    /// The commit failed; none is stored.
    pub fn register_all(&self, regs: Vec<Registration>) -> Result<(), StoreError> {
        let ops = regs.iter().cloned().map(RegistryOp::Put).collect();
        self.writer.submit(ops)?;
        let mut tree = self.write();
        for r in regs {
            tree.upsert(r);
        }
        Ok(())
    }

    /// Removes a registration; whether it was there.
    ///
    /// # Errors
    /// The commit failed; the registration stays.
    pub fn unregister(&self, key: &RegistrationKey) -> Result<bool, StoreError> {
        self.writer.submit(vec![RegistryOp::Remove(key.clone())])?;
        Ok(self.write().remove(key))
    }

    /// Removes many registrations in one commit (a router's withdrawn names); how many were
    /// there.
    ///
    /// # Errors
    /// The commit failed; the registrations stay.
    pub fn unregister_all(&self, keys: Vec<RegistrationKey>) -> Result<usize, StoreError> {
        if keys.is_empty() {
            return Ok(0);
        }
        let ops = keys.iter().cloned().map(RegistryOp::Remove).collect();
        self.writer.submit(ops)?;
        let mut tree = self.write();
        Ok(keys.iter().filter(|k| tree.remove(k)).count())
    }

    /// Applies to the name tree changes another controller already stored (read from the
    /// shared database's change feed): nothing is written. With `replace`, the tree is
    /// first emptied (the feed reloaded everything).
    pub fn apply_stored(&self, ops: &[RegistryOp], replace: bool) {
        let mut tree = self.write();
        if replace {
            *tree = NameTree::new();
        }
        for op in ops {
            match op {
                RegistryOp::Put(r) => tree.upsert(r.clone()),
                RegistryOp::Remove(k) => {
                    tree.remove(k);
                }
            }
        }
    }

    /// The registrations of the longest registered prefix of `name` (cloned).
    pub fn lookup(&self, name: &Name) -> Vec<Registration> {
        self.read()
            .longest_prefix_match(name)
            .map(<[Registration]>::to_vec)
            .unwrap_or_default()
    }

    /// How many registrations of the longest registered prefix of `name` there are (a
    /// look-up without copying them out).
    pub fn lookup_count(&self, name: &Name) -> usize {
        self.read().longest_prefix_match(name).map_or(0, <[_]>::len)
    }

    /// The registrations of exactly `prefix`.
    pub fn exact(&self, prefix: &Name) -> Vec<Registration> {
        self.read().exact(prefix).to_vec()
    }

    /// Every registration, sorted by prefix URI, node and face.
    pub fn all(&self) -> Vec<Registration> {
        let mut v: Vec<Registration> = self.read().iter().cloned().collect();
        v.sort_by(|a, b| {
            (a.prefix.to_string(), &a.node, a.face).cmp(&(b.prefix.to_string(), &b.node, b.face))
        });
        v
    }

    /// How many registrations are live.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    /// Deletes registrations expired at `now_ms` (soft state not renewed); how many.
    ///
    /// # Errors
    /// The store refused the deletion.
    pub fn sweep_expired(&self, now_ms: u64) -> Result<usize, StoreError> {
        let keys = self.writer.sweep(now_ms)?;
        let mut tree = self.write();
        for k in &keys {
            tree.remove(k);
        }
        Ok(keys.len())
    }

    /// Writes a consistent copy of the database to `dest` while the registry keeps serving.
    ///
    /// # Errors
    /// As [`RegistryStore::backup`].
    pub fn backup(&self, dest: PathBuf) -> Result<(), StoreError> {
        self.writer.backup(dest)
    }

    /// What the group-commit writer has done.
    pub fn commit_stats(&self) -> CommitStats {
        self.writer.stats()
    }

    /// Stops the writer (after pending commits) and returns the store.
    ///
    /// # Errors
    /// [`StoreError::WriterGone`].
    pub fn close(self) -> Result<S, StoreError> {
        self.writer.close()
    }

    fn read(&self) -> RwLockReadGuard<'_, NameTree> {
        self.tree
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, NameTree> {
        self.tree
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
