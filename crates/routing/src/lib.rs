//! `nameway-routing`: secure location-independent routing for Nameway, without I/O.
//!
//! The library of issue 28 (docs/routing.md), in the order a chain is made and used:
//! - [`sc`]: self-certifying names `/32=sc/<h>`, `h` = SHA-256 of the owner's public key, and
//!   the `sc:` shorthand; [`NameKey`] owns one.
//! - [`Announcement`]: the route certificate, an NDN Prefix Announcement (ndn-cxx's format)
//!   signed by the name's key, delegating the name to a router (NwDelegate) and carrying the
//!   key (NwPublicKey). Plain announcements of any prefix decode too.
//! - [`LocatorRecord`]: a router's signed FaceUris (and its secure-link key).
//! - [`rib`]: the RIB service's look-up, answer and registration messages.
//! - [`ChainVerifier`]: checks announcement + locator record in the documented order, with a
//!   cache of verified chains; rejections counted by [`RejectReason`].
//! - [`Resolver`]: the first hop's look-up state machine (dedup, rate cap, bounded, retries,
//!   negative cache, mobility rule).
//! - [`Registry`]: the RIB service's names, persisted through a [`RegistryStore`]
//!   ([`PersistentRegistry`]; `redb_store::RedbStore` with the `redb` feature).
//! - [`RenewalScheduler`]: when this node's own records are re-signed (2/3 of their lifetime).
//!
//! The crate reads no clock (every `now_ms` is wall-clock ms since the Unix epoch, passed in),
//! opens no socket and never panics on input: decoders return [`FormatError`], verification
//! [`Rejected`] with a counted [`RejectReason`].

#![forbid(unsafe_code)]

pub mod announcement;
mod cache;
mod error;
pub mod fuzzing;
pub mod key;
pub mod locator;
#[cfg(feature = "redb")]
pub mod redb_store;
pub mod registry;
pub mod renewal;
pub mod resolver;
pub mod rib;
pub mod sc;
pub mod time;
pub mod tlv;
mod token_bucket;
pub mod verifier;

pub use announcement::{Announcement, AnnouncementParams, Validity};
pub use error::{BuildError, FormatError, RejectReason, Rejected};
pub use key::{NameKey, PublicKey};
pub use locator::LocatorRecord;
pub use registry::{
    InsertOutcome, LoadError, LoadReport, MemoryStore, NameInfo, PersistentRegistry, RecordKind,
    Registry, RegistryRecord, RegistryStore, StoredRecordError,
};
pub use renewal::{renewal_time, RenewalScheduler};
pub use resolver::{
    ConfigError, Failure, MissOutcome, Query, RemoveReason, Resolver, ResolverConfig,
    ResolverCounters, ResolverEvent,
};
pub use sc::KeyHash;
pub use time::{CLOCK_GRACE_MS, DEFAULT_LIFETIME_MS};
pub use verifier::{
    ChainVerifier, Origin, RejectCounts, VerifiedRoute, VerifierConfig, VerifyCounters,
};
