//! Nameway's controller, phase 1: the domain's name registry, its certificate authority and
//! route computation.
//!
//! - [`Registry`]: registrations (prefix → router, face, cost, expiry, owner key, signed
//!   announcement) kept durably in SQLite ([`SqliteStore`], WAL, migrations, online backup)
//!   behind the [`RegistryStore`] trait, written through a group-commit writer, and answered
//!   from an in-memory [`NameTree`].
//! - [`RouteEngine`]: the [`Topology`] (a link counts only when both ends report it),
//!   shortest paths with equal-cost multipath, each prefix routed to its nearest origin
//!   routers, one FIB per router, repaired incrementally when one link changes, and
//!   [`FibDiff`]s between versions.
//! - [`ca`]: the domain's certificate authority (Ed25519 anchor, one-time enrolment tokens,
//!   7-day router certificates, signed deny list); [`sealed`]: per-prefix keys sealed to
//!   each router with HPKE.
//!
//! Library code does no network I/O; it reads the clock only where the caller passes
//! `now_ms` (ms since the Unix epoch).
//!
//! Cargo features: `server` (default) is the controller's side: the registry in SQLite,
//! the CA's tokens, nodes and deny list, [`serve`] and the `namewayctl` binary; `postgres`
//! (default, implies `server`) adds `PostgresStore`. Without them
//! (`default-features = false`, as `namewayd` uses it) the crate is the agent's side only:
//! the [`channel`], the configuration [`objects`], certificates and their verification
//! ([`ca::Authority`], [`ca::verify_router_cert`]), route types; no SQLite is compiled.
#![forbid(unsafe_code)]

pub mod ca;
#[cfg(feature = "server")]
pub mod ca_carry;
#[cfg(feature = "server")]
pub mod ca_store;
pub mod cache_policy;
pub mod channel;
#[cfg(feature = "server")]
mod checkpoint;
mod error;
#[cfg(feature = "server")]
mod group_commit;
#[cfg(feature = "server")]
pub mod group_keys;
mod name_tree;
pub mod objects;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "postgres")]
mod postgres_ca;
#[cfg(feature = "postgres")]
mod postgres_feed;
#[cfg(feature = "server")]
mod registry;
pub mod renew;
mod routes;
#[cfg(feature = "server")]
mod schema;
pub mod sealed;
pub mod security_object;
#[cfg(feature = "server")]
pub mod serve;
pub mod spt;
#[cfg(feature = "server")]
mod sqlite;
mod store;
mod topology;
mod topology_file;
#[cfg(feature = "server")]
mod versions;

pub use error::StoreError;
#[cfg(feature = "server")]
pub use group_commit::{CommitCounters, CommitStats, GroupCommit, GroupCommitConfig};
pub use name_tree::NameTree;
#[cfg(feature = "postgres")]
pub use postgres::{PostgresStore, SCHEMA_TABLE};
#[cfg(feature = "postgres")]
pub use postgres_feed::{Changes, Listener, ListenerSource, Woken};
#[cfg(feature = "server")]
pub use registry::{LoadReport, Registry};
pub use routes::{changed_routers, Changed, Fib, FibDiff, NextHop, Origin, PrefixId, RouteEngine};
#[cfg(feature = "server")]
pub use schema::{APPLICATION_ID, SCHEMA_VERSION};
#[cfg(feature = "server")]
pub use sqlite::{Durability, SqliteStore};
pub use store::{LinkRecord, NodeRecord, Registration, RegistrationKey, RegistryOp, RegistryStore};
pub use topology::{Adjacency, EdgeChange, LinkReport, NodeId, Topology};
pub use topology_file::{parse_topology, TopologyFileError};

/// Milliseconds since the Unix epoch, from the system clock (0 if the clock is before 1970).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
