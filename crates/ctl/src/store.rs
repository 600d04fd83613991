//! The registry's records and the storage boundary, [`RegistryStore`].
//!
//! The embedded store is SQLite ([`crate::SqliteStore`]); an operator who runs several
//! controllers puts the same trait over a shared PostgreSQL database (`PostgresStore`, feature
//! `postgres`).

use nameway_wire::Name;

use crate::error::StoreError;

/// One registration: `prefix` is reachable at router `node` through its face `face`.
///
/// The key is `(prefix, node, face)`: a second registration with the same key replaces the
/// first (a renewal).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registration {
    /// The registered name prefix.
    pub prefix: Name,
    /// The router's name (`/example/r1`).
    pub node: String,
    /// The router's face toward the producer (0 for the router itself).
    pub face: u64,
    /// The route origin, as NFD numbers them (0 app, 64 client, 128 static, 255 prefix
    /// announcement).
    pub origin: u32,
    /// The route cost at the origin router.
    pub cost: u32,
    /// Route flags (NFD's ChildInherit = 1, Capture = 2).
    pub flags: u32,
    /// When the registration expires, ms since the Unix epoch (soft state: renewed by the
    /// router before then).
    pub expires_ms: u64,
    /// The public key (SubjectPublicKeyInfo DER) that owns the name, when it is
    /// self-certifying.
    pub owner_key: Option<Vec<u8>>,
    /// The signed Prefix Announcement the registration came with, if any (kept verbatim).
    pub announcement: Option<Vec<u8>>,
}

impl Registration {
    /// The registration's key.
    pub fn key(&self) -> RegistrationKey {
        RegistrationKey {
            prefix: self.prefix.clone(),
            node: self.node.clone(),
            face: self.face,
        }
    }
}

/// What identifies a registration.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RegistrationKey {
    /// The prefix.
    pub prefix: Name,
    /// The router.
    pub node: String,
    /// The router's face.
    pub face: u64,
}

/// A change to the registrations, as the group-commit writer batches them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegistryOp {
    /// Insert or renew.
    Put(Registration),
    /// Remove (no-op when absent).
    Remove(RegistrationKey),
}

/// A router known to the controller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeRecord {
    /// The router's name.
    pub name: String,
    /// Its public key (SubjectPublicKeyInfo DER).
    pub pubkey: Vec<u8>,
    /// Its X25519 public key (32 bytes), to which group keys are sealed.
    pub kem_pubkey: Option<Vec<u8>>,
    /// Its current certificate (NDN Data TLV), if issued.
    pub cert: Option<Vec<u8>>,
    /// When it enrolled, ms since the epoch.
    pub enrolled_ms: u64,
    /// When it was last heard from, ms since the epoch.
    pub last_seen_ms: u64,
}

/// One end's report of a link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkRecord {
    /// The reporting router.
    pub a: String,
    /// Its neighbour.
    pub b: String,
    /// `a`'s face toward `b`.
    pub face_a: u64,
    /// `b`'s face toward `a` (0 if not known yet).
    pub face_b: u64,
    /// Configured cost.
    pub cost: u32,
    /// Smoothed RTT in µs.
    pub rtt_us: u64,
    /// Whether `a` reports the link up.
    pub up: bool,
    /// When reported, ms since the epoch.
    pub updated_ms: u64,
}

/// The durable record behind the registry. Implementations are used from one thread at a
/// time (the group-commit writer owns one).
pub trait RegistryStore {
    /// Applies `ops` as one transaction (all or nothing).
    ///
    /// # Errors
    /// The database refused the transaction; nothing of it is stored.
    fn apply(&mut self, ops: &[RegistryOp]) -> Result<(), StoreError>;

    /// Every stored registration (to build the in-memory name tree at start).
    ///
    /// # Errors
    /// The database cannot be read, or a row does not decode ([`StoreError::Corrupt`]).
    fn load_registrations(&mut self) -> Result<Vec<Registration>, StoreError>;

    /// Removes registrations that expire at or before `now_ms`; returns their keys.
    ///
    /// # Errors
    /// The database refused the deletion.
    fn sweep_expired(&mut self, now_ms: u64) -> Result<Vec<RegistrationKey>, StoreError>;

    /// Inserts or replaces a router's record.
    ///
    /// # Errors
    /// The database refused the write.
    fn put_node(&mut self, node: &NodeRecord) -> Result<(), StoreError>;

    /// Every router's record.
    ///
    /// # Errors
    /// The database cannot be read.
    fn nodes(&mut self) -> Result<Vec<NodeRecord>, StoreError>;

    /// Inserts or replaces one end's report of a link.
    ///
    /// # Errors
    /// The database refused the write.
    fn put_link(&mut self, link: &LinkRecord) -> Result<(), StoreError>;

    /// Every link report.
    ///
    /// # Errors
    /// The database cannot be read.
    fn links(&mut self) -> Result<Vec<LinkRecord>, StoreError>;

    /// Appends an audit record.
    ///
    /// # Errors
    /// The database refused the write.
    fn audit(
        &mut self,
        ts_ms: u64,
        actor: &str,
        action: &str,
        detail: &str,
    ) -> Result<(), StoreError>;

    /// Writes a consistent copy of the whole database to `dest` while it stays in use.
    ///
    /// # Errors
    /// `dest` exists or cannot be written.
    fn backup(&mut self, dest: &std::path::Path) -> Result<(), StoreError>;
}

/// A boxed store is a store: `namewayctl` picks SQLite or PostgreSQL at run time.
impl<T: RegistryStore + ?Sized> RegistryStore for Box<T> {
    fn apply(&mut self, ops: &[RegistryOp]) -> Result<(), StoreError> {
        (**self).apply(ops)
    }
    fn load_registrations(&mut self) -> Result<Vec<Registration>, StoreError> {
        (**self).load_registrations()
    }
    fn sweep_expired(&mut self, now_ms: u64) -> Result<Vec<RegistrationKey>, StoreError> {
        (**self).sweep_expired(now_ms)
    }
    fn put_node(&mut self, node: &NodeRecord) -> Result<(), StoreError> {
        (**self).put_node(node)
    }
    fn nodes(&mut self) -> Result<Vec<NodeRecord>, StoreError> {
        (**self).nodes()
    }
    fn put_link(&mut self, link: &LinkRecord) -> Result<(), StoreError> {
        (**self).put_link(link)
    }
    fn links(&mut self) -> Result<Vec<LinkRecord>, StoreError> {
        (**self).links()
    }
    fn audit(
        &mut self,
        ts_ms: u64,
        actor: &str,
        action: &str,
        detail: &str,
    ) -> Result<(), StoreError> {
        (**self).audit(ts_ms, actor, action, detail)
    }
    fn backup(&mut self, dest: &std::path::Path) -> Result<(), StoreError> {
        (**self).backup(dest)
    }
}
