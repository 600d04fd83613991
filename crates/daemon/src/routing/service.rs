//! The RIB service (`rib_service = true`): an NDN producer at each served `[[routing.rib]]`
//! prefix, on an internal face. It answers look-ups `<rib>/32=sc/<h>` from the registry and
//! takes registrations `<rib>/32=REG/<digest>` after verifying their chain; the registry is
//! written through to a redb file (or kept in memory) and flushed in batches.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context as _;
use bytes::Bytes;
use nameway_routing::redb_store::{RedbStore, RedbStoreError};
use nameway_routing::rib::{self, Answer, RegistrationStatus};
use nameway_routing::{
    ChainVerifier, InsertOutcome, KeyHash, MemoryStore, Origin, PersistentRegistry, RecordKind,
    RegistryStore, VerifierConfig,
};
use nameway_wire::security::DigestSha256;
use nameway_wire::{InterestView, Name};

/// How long a "no such name" answer may be cached (its FreshnessPeriod). Short, so that a
/// producer that announces after a consumer asked is found within a second.
pub const NOT_FOUND_TTL_MS: u64 = 1000;
/// FreshnessPeriod of a "found" answer: 0, so that no content store answers a later look-up
/// with a moved producer's old announcement (resolvers cache routes themselves).
pub const FOUND_FRESHNESS_MS: u64 = 0;
/// Flush registry writes at most this often.
const FLUSH_EVERY_MS: u64 = 200;
/// Sweep expired names this often.
const SWEEP_EVERY_MS: u64 = 5000;

/// The registry's store: a redb file, or memory.
pub enum ServiceStore {
    /// `routing.database` set.
    Redb(RedbStore),
    /// No database: lost at restart.
    Memory(MemoryStore),
}

impl RegistryStore for ServiceStore {
    type Error = RedbStoreError;

    fn put(&mut self, kind: RecordKind, key: &KeyHash, wire: &[u8]) -> Result<(), Self::Error> {
        match self {
            Self::Redb(s) => s.put(kind, key, wire),
            Self::Memory(s) => s.put(kind, key, wire).or_else(never),
        }
    }

    fn delete(&mut self, kind: RecordKind, key: &KeyHash) -> Result<(), Self::Error> {
        match self {
            Self::Redb(s) => s.delete(kind, key),
            Self::Memory(s) => s.delete(kind, key).or_else(never),
        }
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        match self {
            Self::Redb(s) => s.flush(),
            Self::Memory(s) => s.flush().or_else(never),
        }
    }

    fn for_each(
        &self,
        kind: RecordKind,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<(), Self::Error> {
        match self {
            Self::Redb(s) => s.for_each(kind, visit),
            Self::Memory(s) => s.for_each(kind, visit).or_else(never),
        }
    }
}

/// The memory store cannot fail.
fn never<T>(e: std::convert::Infallible) -> Result<T, RedbStoreError> {
    match e {}
}

/// What the service counted.
#[derive(Clone, Debug, Default)]
pub struct ServiceCounters {
    /// Look-ups answered, by answer.
    pub lookups: BTreeMap<&'static str, u64>,
    /// Registrations, by outcome.
    pub registrations: BTreeMap<&'static str, u64>,
}

/// See the module documentation.
pub struct RibService {
    prefixes: Vec<Name>,
    registry: PersistentRegistry<ServiceStore>,
    verifier: ChainVerifier,
    counters: ServiceCounters,
    dirty: bool,
    next_flush_ms: u64,
    next_sweep_ms: u64,
}

impl RibService {
    /// Opens the registry (`database`, or memory when empty) and serves `prefixes`.
    ///
    /// # Errors
    /// The database cannot be opened or read.
    pub fn open(prefixes: Vec<Name>, database: &Path, now_ms: u64) -> anyhow::Result<Self> {
        let store = if database.as_os_str().is_empty() {
            ServiceStore::Memory(MemoryStore::default())
        } else {
            if let Some(dir) = database.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
            ServiceStore::Redb(RedbStore::open(database)?)
        };
        let (registry, report) = PersistentRegistry::open(store, now_ms)
            .with_context(|| format!("routing.database {}", database.display()))?;
        for e in &report.refused {
            tracing::warn!(kind = ?e.kind, key = %e.key, error = %e.error, "RIB registry: a stored record was skipped");
        }
        tracing::info!(
            names = registry.registry().len(),
            routers = registry.registry().locator_count(),
            expired = report.expired.len(),
            skipped = report.refused_count,
            prefixes = ?prefixes.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "RIB service: registry loaded"
        );
        Ok(Self {
            prefixes,
            registry,
            verifier: ChainVerifier::new(VerifierConfig::default()),
            counters: ServiceCounters::default(),
            dirty: false,
            next_flush_ms: now_ms,
            next_sweep_ms: now_ms.saturating_add(SWEEP_EVERY_MS),
        })
    }

    /// The prefixes served.
    pub fn prefixes(&self) -> &[Name] {
        &self.prefixes
    }

    /// Answers an Interest the forwarder sent to the service's face; `None` when it is not a
    /// look-up or registration of a served prefix (counted as malformed when it is a bad
    /// registration).
    pub fn on_interest(&mut self, now_ms: u64, wire: &Bytes) -> Option<Bytes> {
        let view = InterestView::new_checked(wire.clone()).ok()?;
        let name = view.name();
        let prefix = self.prefixes.iter().find(|p| p.is_prefix_of(name))?.clone();
        if let Some(h) = rib::parse_lookup(&prefix, name) {
            return self.lookup(now_ms, name, &h);
        }
        match rib::parse_registration(&prefix, wire) {
            Ok(r) => self.register(now_ms, &r),
            Err(e) => {
                tracing::debug!(name = %name, error = %e, "RIB service: not a registration");
                *self.counters.registrations.entry("malformed").or_default() += 1;
                None
            }
        }
    }

    fn lookup(&mut self, now_ms: u64, name: &Name, h: &KeyHash) -> Option<Bytes> {
        let (answer, freshness, kind) = match self.registry.registry().get(h, now_ms) {
            Some(r) => (
                Answer::Found {
                    announcement: r.announcement,
                    locator: r.locator,
                },
                FOUND_FRESHNESS_MS,
                "found",
            ),
            None => (
                Answer::NotFound {
                    ttl_ms: NOT_FOUND_TTL_MS,
                },
                NOT_FOUND_TTL_MS,
                "not_found",
            ),
        };
        *self.counters.lookups.entry(kind).or_default() += 1;
        match rib::encode_answer(name, &answer, freshness, &DigestSha256) {
            Ok(data) => Some(data),
            Err(e) => {
                tracing::warn!(%name, error = %e, "RIB service: cannot encode an answer");
                None
            }
        }
    }

    fn register(&mut self, now_ms: u64, r: &rib::Registration) -> Option<Bytes> {
        let verified = self
            .verifier
            .verify(now_ms, &r.announcement, &r.locator, Origin::Direct);
        let status = match verified {
            Ok(route) => match self.registry.insert(&route) {
                Ok(InsertOutcome::NotNewer { current_version }) => {
                    RegistrationStatus::NotNewer { current_version }
                }
                Ok(outcome) => {
                    self.dirty = true;
                    tracing::debug!(name = %nameway_routing::sc::display_name(&route.name()), ?outcome, "RIB service: registered");
                    RegistrationStatus::Stored
                }
                Err(e) => {
                    tracing::error!(error = %e, "RIB service: the registry cannot be written");
                    return None;
                }
            },
            Err(rejected) => {
                tracing::info!(reason = rejected.reason.as_str(), detail = %rejected.detail, "RIB service: registration refused");
                RegistrationStatus::Refused(rejected.reason)
            }
        };
        let outcome = match status {
            RegistrationStatus::Stored => "stored",
            RegistrationStatus::NotNewer { .. } => "not_newer",
            RegistrationStatus::Refused(_) => "refused",
        };
        *self.counters.registrations.entry(outcome).or_default() += 1;
        rib::encode_registration_reply(&r.name, status, &DigestSha256).ok()
    }

    /// Flushes and sweeps when due.
    pub fn on_timeout(&mut self, now_ms: u64) {
        if self.dirty && now_ms >= self.next_flush_ms {
            self.flush();
            self.next_flush_ms = now_ms.saturating_add(FLUSH_EVERY_MS);
        }
        if now_ms >= self.next_sweep_ms {
            match self.registry.sweep_expired(now_ms) {
                Ok(0) => {}
                Ok(n) => {
                    self.dirty = true;
                    tracing::debug!(expired = n, "RIB service: expired names removed");
                }
                Err(e) => tracing::error!(error = %e, "RIB service: sweep failed"),
            }
            self.next_sweep_ms = now_ms.saturating_add(SWEEP_EVERY_MS);
        }
    }

    /// When [`RibService::on_timeout`] has work.
    pub fn poll_timeout(&self) -> u64 {
        if self.dirty {
            self.next_flush_ms.min(self.next_sweep_ms)
        } else {
            self.next_sweep_ms
        }
    }

    /// Makes every write durable (also at shutdown).
    pub fn flush(&mut self) {
        if let Err(e) = self.registry.flush() {
            tracing::error!(error = %e, "RIB service: the registry cannot be flushed");
            return;
        }
        self.dirty = false;
    }

    /// The counters.
    pub fn counters(&self) -> &ServiceCounters {
        &self.counters
    }

    /// The service's verifier counters.
    pub fn verify_counters(&self) -> &nameway_routing::VerifyCounters {
        self.verifier.counters()
    }

    /// Names registered.
    pub fn len(&self) -> usize {
        self.registry.registry().len()
    }

    /// Whether no name is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The names held (for `routing/list`): hash, delegate, version, expiry.
    pub fn names(&self) -> impl Iterator<Item = nameway_routing::NameInfo> + '_ {
        self.registry.registry().iter()
    }
}
