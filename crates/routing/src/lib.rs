//! `nameway-routing`: secure location-independent routing for Nameway, without I/O.
//!
//! Library under issue 28 (docs/routing.md):
//! - [`sc`]: self-certifying names `/32=sc/<h>`, `h` = SHA-256 of the owner's public key.
//! - [`Announcement`]: the route certificate, an NDN Prefix Announcement (ndn-cxx's format)
//!   signed by the name's key, delegating the name to a router (NwDelegate) and carrying the
//!   key (NwPublicKey).
//! - [`LocatorRecord`]: a router's signed FaceUris.
//! - [`RenewalScheduler`]: when this node's own announcements are re-signed (2/3 of their
//!   lifetime).
//! - [`Registry`]: the RIB service's names, with [`RegistryStore`] persistence.
//! - [`rib`]: the RIB service's look-up, answer and registration messages.
//! - [`ChainVerifier`]: checks announcement + locator record in the documented order, with a
//!   cache of verified chains; rejections counted by [`RejectReason`].
//! - [`Resolver`]: the first hop's look-up state machine (dedup, rate cap, bounded, retries,
//!   negative cache, mobility rule).
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
    InsertOutcome, LoadReport, MemoryStore, PersistentRegistry, RecordKind, Registry,
    RegistryRecord, RegistryStore,
};
pub use renewal::{renewal_time, RenewalScheduler};
pub use resolver::{
    Failure, MissOutcome, Query, RemoveReason, Resolver, ResolverConfig, ResolverCounters,
    ResolverEvent,
};
pub use sc::KeyHash;
pub use verifier::{
    ChainVerifier, Origin, RejectCounts, VerifiedRoute, VerifierConfig, VerifyCounters,
};
