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
#![forbid(unsafe_code)]

pub mod ca;
pub mod cache_policy;
pub mod channel;
mod checkpoint;
mod error;
mod group_commit;
pub mod group_keys;
mod name_tree;
pub mod objects;
#[cfg(feature = "postgres")]
mod postgres;
mod registry;
mod routes;
mod schema;
pub mod sealed;
pub mod serve;
pub mod spt;
mod sqlite;
mod store;
mod topology;
mod topology_file;
mod versions;

pub use error::StoreError;
pub use group_commit::{CommitCounters, CommitStats, GroupCommit, GroupCommitConfig};
pub use name_tree::NameTree;
#[cfg(feature = "postgres")]
pub use postgres::{PostgresStore, SCHEMA_TABLE};
pub use registry::{LoadReport, Registry};
pub use routes::{Fib, FibDiff, NextHop, Origin, RouteEngine};
pub use schema::{APPLICATION_ID, SCHEMA_VERSION};
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
