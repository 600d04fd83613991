//! The RIB service's registry: for each self-certifying name, the announcement it was last
//! registered with and its delegate's locator record, under the version rule; and the
//! [`RegistryStore`] trait through which it persists.
//!
//! Only verified chains go in ([`Registry::insert`] takes a [`VerifiedRoute`]). A locator
//! record is kept once per router and shared by every name delegated to it (the newest
//! version wins), so a name costs its announcement plus a fixed entry (docs/routing.md gives
//! the measured bytes per name).
//!
//! Persistence stays outside the core: [`Registry::load`] reads a store, and
//! [`PersistentRegistry`] writes each change through to one. Loading trusts the store for the
//! announcements' signatures (the daemon wrote only verified chains; checking 10^6 signatures
//! would take about a minute) but checks everything else: each record decodes, is filed
//! under its own name, its key hashes to the name, its delegate's locator record is there,
//! locator records' signatures verify (there are few), and nothing has expired. A record that
//! fails is skipped and reported.

use std::collections::HashMap;

use bytes::Bytes;
use foldhash::fast::RandomState;

use crate::announcement::Announcement;
use crate::error::FormatError;
use crate::locator::LocatorRecord;
use crate::sc::KeyHash;
use crate::time::CLOCK_GRACE_MS;
use crate::verifier::VerifiedRoute;

/// A name's entry: 56 bytes besides its key and its announcement's bytes.
struct NameEntry {
    announcement: Box<[u8]>,
    locator: u32,
    version: u64,
    expires_at_ms: u64,
}

/// A router's locator record, shared by the names delegated to it.
struct LocatorSlot {
    router: KeyHash,
    wire: Bytes,
    version: u64,
    refs: u32,
}

/// What [`Registry::insert`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsertOutcome {
    /// A name not held before.
    Inserted,
    /// A newer version replaced the one held.
    Replaced {
        /// The version replaced.
        old_version: u64,
    },
    /// The version held is this one or newer: kept (a newer locator record is still taken).
    NotNewer {
        /// The version held.
        current_version: u64,
    },
}

/// A name's registration, as a look-up answers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegistryRecord {
    /// The announcement Data.
    pub announcement: Bytes,
    /// The delegate's newest locator record Data.
    pub locator: Bytes,
    /// The delegate.
    pub delegate: KeyHash,
    /// The announcement's version.
    pub version: u64,
    /// When the chain expires (ms since the Unix epoch), as verified at registration.
    pub expires_at_ms: u64,
}

/// A name held, as [`Registry::iter`] lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NameInfo {
    /// The name's hash.
    pub h: KeyHash,
    /// Its delegate.
    pub delegate: KeyHash,
    /// The announcement's version.
    pub version: u64,
    /// When the chain expires.
    pub expires_at_ms: u64,
}

/// See the module documentation.
#[derive(Default)]
pub struct Registry {
    names: HashMap<KeyHash, NameEntry, RandomState>,
    locators: Vec<LocatorSlot>,
    locator_index: HashMap<KeyHash, u32, RandomState>,
    free: Vec<u32>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty registry with room for `names` names.
    pub fn with_capacity(names: usize) -> Self {
        Self {
            names: HashMap::with_capacity_and_hasher(names, RandomState::default()),
            ..Self::default()
        }
    }

    /// Names held (some may have expired since the last sweep).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no name is held.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Locator records held.
    pub fn locator_count(&self) -> usize {
        self.locator_index.len()
    }

    /// Registers a verified chain under the version rule: a newer announcement version
    /// replaces the one held, an older or equal one does not. The delegate's locator record
    /// is taken if newer than the one held.
    pub fn insert(&mut self, route: &VerifiedRoute) -> InsertOutcome {
        let slot = self.locator_for(route.delegate, &route.locator, route.locator_version);
        if let Some(e) = self.names.get(&route.h) {
            if route.version <= e.version {
                let current_version = e.version;
                self.release_if_unused(slot);
                return InsertOutcome::NotNewer { current_version };
            }
        }
        self.retain(slot);
        let entry = NameEntry {
            // A copy, so that the entry does not keep a larger received buffer alive.
            announcement: Box::from(&route.announcement[..]),
            locator: slot,
            version: route.version,
            expires_at_ms: route.expires_at_ms,
        };
        match self.names.insert(route.h, entry) {
            Some(old) => {
                self.release(old.locator);
                InsertOutcome::Replaced {
                    old_version: old.version,
                }
            }
            None => InsertOutcome::Inserted,
        }
    }

    /// The registration of `h`, unless it has expired by `now_ms` (with the clock grace).
    pub fn get(&self, h: &KeyHash, now_ms: u64) -> Option<RegistryRecord> {
        let e = self.names.get(h)?;
        if e.expires_at_ms.saturating_add(CLOCK_GRACE_MS) < now_ms {
            return None;
        }
        let slot = self.locators.get(e.locator as usize)?;
        Some(RegistryRecord {
            announcement: Bytes::copy_from_slice(&e.announcement),
            locator: slot.wire.clone(),
            delegate: slot.router,
            version: e.version,
            expires_at_ms: e.expires_at_ms,
        })
    }

    /// Removes `h`; whether it was held.
    pub fn remove(&mut self, h: &KeyHash) -> bool {
        match self.names.remove(h) {
            Some(e) => {
                self.release(e.locator);
                true
            }
            None => false,
        }
    }

    /// Removes every name expired by `now_ms` (with the clock grace) and returns them, with
    /// the routers whose locator records no name uses any more. A full pass: call it every
    /// few seconds (look-ups never return an expired name in between).
    pub fn sweep_expired(&mut self, now_ms: u64) -> (Vec<KeyHash>, Vec<KeyHash>) {
        let mut gone = Vec::new();
        self.names.retain(|h, e| {
            let keep = e.expires_at_ms.saturating_add(CLOCK_GRACE_MS) >= now_ms;
            if !keep {
                gone.push((*h, e.locator));
            }
            keep
        });
        let mut routers = Vec::new();
        for &(_, slot) in &gone {
            if let Some(router) = self.release(slot) {
                routers.push(router);
            }
        }
        (gone.into_iter().map(|(h, _)| h).collect(), routers)
    }

    /// Every name held, in no particular order (expired ones until the next sweep).
    pub fn iter(&self) -> impl Iterator<Item = NameInfo> + '_ {
        self.names.iter().filter_map(|(h, e)| {
            Some(NameInfo {
                h: *h,
                delegate: self.locators.get(e.locator as usize)?.router,
                version: e.version,
                expires_at_ms: e.expires_at_ms,
            })
        })
    }

    /// The slot of `router`'s locator record, taking `wire` when newer (or new).
    fn locator_for(&mut self, router: KeyHash, wire: &Bytes, version: u64) -> u32 {
        if let Some(&i) = self.locator_index.get(&router) {
            if let Some(s) = self.locators.get_mut(i as usize) {
                if version > s.version {
                    s.wire = Bytes::copy_from_slice(wire);
                    s.version = version;
                }
            }
            return i;
        }
        let slot = LocatorSlot {
            router,
            wire: Bytes::copy_from_slice(wire),
            version,
            refs: 0,
        };
        let i = match self.free.pop() {
            Some(i) => {
                if let Some(s) = self.locators.get_mut(i as usize) {
                    *s = slot;
                }
                i
            }
            None => {
                self.locators.push(slot);
                // Fewer than 2^32 routers: each takes a distinct key.
                (self.locators.len() - 1) as u32
            }
        };
        self.locator_index.insert(router, i);
        i
    }

    fn retain(&mut self, slot: u32) {
        if let Some(s) = self.locators.get_mut(slot as usize) {
            s.refs += 1;
        }
    }

    /// Drops one reference; frees the slot (returning its router) at zero.
    fn release(&mut self, slot: u32) -> Option<KeyHash> {
        let s = self.locators.get_mut(slot as usize)?;
        s.refs = s.refs.saturating_sub(1);
        if s.refs > 0 {
            return None;
        }
        self.free_slot(slot)
    }

    /// Frees a slot no name uses (a locator record that came with a refused registration).
    fn release_if_unused(&mut self, slot: u32) {
        if self
            .locators
            .get(slot as usize)
            .is_some_and(|s| s.refs == 0)
        {
            self.free_slot(slot);
        }
    }

    fn free_slot(&mut self, slot: u32) -> Option<KeyHash> {
        let s = self.locators.get_mut(slot as usize)?;
        let router = s.router;
        s.wire = Bytes::new();
        self.locator_index.remove(&router);
        self.free.push(slot);
        Some(router)
    }

    /// The newest locator record held for `router`.
    pub fn locator(&self, router: &KeyHash) -> Option<&Bytes> {
        let &i = self.locator_index.get(router)?;
        self.locators.get(i as usize).map(|s| &s.wire)
    }
}

/// Which table a stored record is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RecordKind {
    /// Announcements, keyed by the name's hash.
    Announcement,
    /// Locator records, keyed by the router's hash.
    Locator,
}

/// Persistence for a [`Registry`]: two tables of records keyed by 32-byte hashes. Writes may
/// be buffered until [`RegistryStore::flush`].
pub trait RegistryStore {
    /// The store's error.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Stores (or replaces) a record.
    ///
    /// # Errors
    /// The store's.
    fn put(&mut self, kind: RecordKind, key: &KeyHash, wire: &[u8]) -> Result<(), Self::Error>;

    /// Deletes a record, if present.
    ///
    /// # Errors
    /// The store's.
    fn delete(&mut self, kind: RecordKind, key: &KeyHash) -> Result<(), Self::Error>;

    /// Makes every change so far durable.
    ///
    /// # Errors
    /// The store's.
    fn flush(&mut self) -> Result<(), Self::Error>;

    /// Visits every record of one table (committed and buffered), with its raw key.
    ///
    /// # Errors
    /// The store's.
    fn for_each(
        &self,
        kind: RecordKind,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<(), Self::Error>;
}

/// Why a stored record was skipped on load.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoredRecordError {
    /// The key is not 32 bytes.
    #[error("key of {0} bytes, not 32")]
    BadKey(usize),
    /// The record does not decode.
    #[error("does not decode: {0}")]
    Decode(FormatError),
    /// The record is not filed under its own name's hash, or its key does not hash to it.
    #[error("filed under another name, or its key does not hash to the name")]
    WrongKey,
    /// An announcement without Nameway's fields (NwPublicKey, NwDelegate as `/32=sc/<h>`).
    #[error("not a delegation (no NwPublicKey or NwDelegate)")]
    NotDelegation,
    /// The delegate's locator record is not in the store (or was skipped).
    #[error("its delegate's locator record is missing")]
    NoLocator,
    /// A locator record's signature does not verify.
    #[error("bad signature")]
    BadSignature,
}

/// One skipped record.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind:?} record {key}: {error}")]
pub struct LoadError {
    /// Its table.
    pub kind: RecordKind,
    /// Its key, in hex.
    pub key: String,
    /// Why it was skipped.
    pub error: StoredRecordError,
}

/// What [`Registry::load`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Names loaded.
    pub names: usize,
    /// Locator records loaded.
    pub locators: usize,
    /// Records skipped because they had expired (delete them from the store).
    pub expired: Vec<(RecordKind, KeyHash)>,
    /// Records skipped as corrupt or inconsistent, with why (at most [`MAX_REPORTED`] listed).
    pub refused: Vec<LoadError>,
    /// Records skipped as corrupt or inconsistent, all counted.
    pub refused_count: usize,
}

/// Most refused records [`LoadReport::refused`] lists.
pub const MAX_REPORTED: usize = 64;

impl LoadReport {
    fn refuse(&mut self, kind: RecordKind, key: &[u8], error: StoredRecordError) {
        self.refused_count += 1;
        if self.refused.len() < MAX_REPORTED {
            let key = key.iter().map(|b| format!("{b:02x}")).collect();
            self.refused.push(LoadError { kind, key, error });
        }
    }
}

/// A locator record read from a store, checked.
struct LoadedLocator {
    wire: Bytes,
    version: u64,
    expires_at_ms: u64,
}

impl Registry {
    /// Builds a registry from `store` at `now_ms`: locator records first, then the
    /// announcements whose delegate's record loaded. See the module documentation for the
    /// checks; what fails them is skipped and reported.
    ///
    /// # Errors
    /// The store's, when it cannot be read at all.
    pub fn load<S: RegistryStore + ?Sized>(
        store: &S,
        now_ms: u64,
    ) -> Result<(Self, LoadReport), S::Error> {
        let mut report = LoadReport::default();
        let mut locs: HashMap<KeyHash, LoadedLocator, RandomState> = HashMap::default();
        store.for_each(RecordKind::Locator, &mut |key, value| match check_locator(
            key, value, now_ms,
        ) {
            Ok(Some((router, l))) => {
                locs.insert(router, l);
            }
            Ok(None) => {
                if let Some(k) = KeyHash::from_slice(key) {
                    report.expired.push((RecordKind::Locator, k));
                }
            }
            Err(e) => report.refuse(RecordKind::Locator, key, e),
        })?;
        let mut reg = Self::new();
        store.for_each(
            RecordKind::Announcement,
            &mut |key, value| match check_announcement(key, value, now_ms, &locs) {
                Ok(Some(chain)) => {
                    reg.insert_loaded(chain, &locs);
                }
                Ok(None) => {
                    if let Some(k) = KeyHash::from_slice(key) {
                        report.expired.push((RecordKind::Announcement, k));
                    }
                }
                Err(e) => report.refuse(RecordKind::Announcement, key, e),
            },
        )?;
        // Locator records no loaded name uses are not kept (and not counted as loaded).
        report.names = reg.len();
        report.locators = reg.locator_count();
        Ok((reg, report))
    }

    fn insert_loaded(
        &mut self,
        chain: LoadedChain,
        locs: &HashMap<KeyHash, LoadedLocator, RandomState>,
    ) {
        let Some(l) = locs.get(&chain.delegate) else {
            return;
        };
        let slot = self.locator_for(chain.delegate, &l.wire, l.version);
        self.retain(slot);
        let entry = NameEntry {
            announcement: chain.announcement,
            locator: slot,
            version: chain.version,
            expires_at_ms: chain.expires_at_ms.min(l.expires_at_ms),
        };
        if let Some(old) = self.names.insert(chain.h, entry) {
            self.release(old.locator);
        }
    }
}

/// A stored announcement, checked.
struct LoadedChain {
    h: KeyHash,
    delegate: KeyHash,
    announcement: Box<[u8]>,
    version: u64,
    expires_at_ms: u64,
}

/// `Ok(None)` for an expired record.
fn check_locator(
    key: &[u8],
    value: &[u8],
    now_ms: u64,
) -> Result<Option<(KeyHash, LoadedLocator)>, StoredRecordError> {
    let router = KeyHash::from_slice(key).ok_or(StoredRecordError::BadKey(key.len()))?;
    let loc =
        LocatorRecord::decode(Bytes::copy_from_slice(value)).map_err(StoredRecordError::Decode)?;
    if loc.router() != router || KeyHash::of_spki(loc.public_key()) != router {
        return Err(StoredRecordError::WrongKey);
    }
    loc.check_signature()
        .map_err(|_| StoredRecordError::BadSignature)?;
    let expires_at_ms = loc.expires_at_ms().unwrap_or(u64::MAX);
    if expires_at_ms.saturating_add(CLOCK_GRACE_MS) < now_ms {
        return Ok(None);
    }
    let l = LoadedLocator {
        wire: loc.wire().clone(),
        version: loc.version(),
        expires_at_ms,
    };
    Ok(Some((router, l)))
}

/// `Ok(None)` for an expired record.
fn check_announcement(
    key: &[u8],
    value: &[u8],
    now_ms: u64,
    locs: &HashMap<KeyHash, LoadedLocator, RandomState>,
) -> Result<Option<LoadedChain>, StoredRecordError> {
    let h = KeyHash::from_slice(key).ok_or(StoredRecordError::BadKey(key.len()))?;
    let pa =
        Announcement::decode(Bytes::copy_from_slice(value)).map_err(StoredRecordError::Decode)?;
    let (Some(pk), Some(delegate)) = (
        pa.public_key(),
        pa.delegate()
            .filter(|d| d.len() == 2)
            .and_then(KeyHash::from_name),
    ) else {
        return Err(StoredRecordError::NotDelegation);
    };
    if pa.key_hash() != Some(h) || KeyHash::of_spki(pk) != h {
        return Err(StoredRecordError::WrongKey);
    }
    if pa.expires_at_ms().saturating_add(CLOCK_GRACE_MS) < now_ms {
        return Ok(None);
    }
    if !locs.contains_key(&delegate) {
        return Err(StoredRecordError::NoLocator);
    }
    Ok(Some(LoadedChain {
        h,
        delegate,
        announcement: Box::from(value),
        version: pa.version(),
        expires_at_ms: pa.expires_at_ms(),
    }))
}

/// A [`Registry`] whose every change is written through to a [`RegistryStore`].
pub struct PersistentRegistry<S: RegistryStore> {
    registry: Registry,
    store: S,
}

impl<S: RegistryStore> PersistentRegistry<S> {
    /// Loads `store` at `now_ms` and deletes the expired records it found (the refused ones
    /// are left for inspection).
    ///
    /// # Errors
    /// The store's.
    pub fn open(mut store: S, now_ms: u64) -> Result<(Self, LoadReport), S::Error> {
        let (registry, report) = Registry::load(&store, now_ms)?;
        for (kind, key) in &report.expired {
            store.delete(*kind, key)?;
        }
        store.flush()?;
        Ok((Self { registry, store }, report))
    }

    /// [`Registry::insert`], writing the announcement and a newer locator record to the store.
    ///
    /// # Errors
    /// The store's (the registry has changed already).
    pub fn insert(&mut self, route: &VerifiedRoute) -> Result<InsertOutcome, S::Error> {
        let locator_before = self.registry.locator(&route.delegate).cloned();
        let outcome = self.registry.insert(route);
        let locator_after = self.registry.locator(&route.delegate).cloned();
        if locator_after != locator_before {
            if let Some(wire) = &locator_after {
                self.store.put(RecordKind::Locator, &route.delegate, wire)?;
            }
        }
        if !matches!(outcome, InsertOutcome::NotNewer { .. }) {
            self.store
                .put(RecordKind::Announcement, &route.h, &route.announcement)?;
        }
        Ok(outcome)
    }

    /// [`Registry::remove`], deleting from the store too.
    ///
    /// # Errors
    /// The store's.
    pub fn remove(&mut self, h: &KeyHash) -> Result<bool, S::Error> {
        let held = self.registry.get(h, 0).map(|r| r.delegate);
        let removed = self.registry.remove(h);
        if removed {
            self.store.delete(RecordKind::Announcement, h)?;
            if let Some(router) = held.filter(|r| self.registry.locator(r).is_none()) {
                self.store.delete(RecordKind::Locator, &router)?;
            }
        }
        Ok(removed)
    }

    /// [`Registry::sweep_expired`], deleting from the store too; returns the names removed.
    ///
    /// # Errors
    /// The store's.
    pub fn sweep_expired(&mut self, now_ms: u64) -> Result<usize, S::Error> {
        let (names, routers) = self.registry.sweep_expired(now_ms);
        for h in &names {
            self.store.delete(RecordKind::Announcement, h)?;
        }
        for r in &routers {
            self.store.delete(RecordKind::Locator, r)?;
        }
        Ok(names.len())
    }

    /// Makes every change durable.
    ///
    /// # Errors
    /// The store's.
    pub fn flush(&mut self) -> Result<(), S::Error> {
        self.store.flush()
    }

    /// The registry, for look-ups.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The registry and the store, apart.
    pub fn into_parts(self) -> (Registry, S) {
        (self.registry, self.store)
    }
}

/// A [`RegistryStore`] in memory (tests, and a RIB service that need not persist).
#[derive(Clone, Debug, Default)]
pub struct MemoryStore {
    tables: std::collections::BTreeMap<(RecordKind, Vec<u8>), Vec<u8>>,
}

impl MemoryStore {
    /// Puts raw bytes under a raw key (for tests of damaged stores).
    pub fn put_raw(&mut self, kind: RecordKind, key: &[u8], value: &[u8]) {
        self.tables.insert((kind, key.to_vec()), value.to_vec());
    }

    /// Records held.
    pub fn len(&self) -> usize {
        self.tables.len()
    }

    /// Whether no record is held.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }
}

impl RegistryStore for MemoryStore {
    type Error = std::convert::Infallible;

    fn put(&mut self, kind: RecordKind, key: &KeyHash, wire: &[u8]) -> Result<(), Self::Error> {
        self.put_raw(kind, key.as_bytes(), wire);
        Ok(())
    }

    fn delete(&mut self, kind: RecordKind, key: &KeyHash) -> Result<(), Self::Error> {
        self.tables.remove(&(kind, key.as_bytes().to_vec()));
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }

    fn for_each(
        &self,
        kind: RecordKind,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<(), Self::Error> {
        for ((k, key), value) in &self.tables {
            if *k == kind {
                visit(key, value);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
