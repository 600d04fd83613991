//! `nameway-wire`: the NDN packet format 0.3 and NDNLPv2 codec of Nameway.
//!
//! This crate does no I/O, reads no clock and never panics on input: every decoder returns a
//! [`DecodeError`] saying what failed, at which byte offset and in which element. Packets are
//! [`bytes::Bytes`]; decoded fields share the packet's buffer instead of copying it.
//!
//! Two ways to read a packet, after smoltcp's `Packet`/`Repr` split:
//! - checked views ([`InterestView`], [`DataView`]) for the forwarding path: one checked pass
//!   records where the fields are; accessors cannot fail; HopLimit and Nonce are rewritten by
//!   splicing the original bytes;
//! - owned structs ([`Interest`], [`Data`]) for building packets and for full decoding.
//!
//! Name prefix hashes for the forwarder's tables come from [`NameHasher`] in one pass.

#![forbid(unsafe_code)]

pub mod data;
pub mod error;
pub mod framing;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
pub mod hash;
pub mod interest;
pub mod lp;
pub mod mgmt;
pub mod name;
pub mod random;
pub mod security;
pub mod signature;
pub mod tlv;

#[cfg(test)]
mod testutil;

pub use data::{Data, DataView, MetaInfo};
pub use error::{DecodeError, ErrorKind, ParseError};
pub use framing::{FramingError, StreamFramer};
pub use hash::{NameHasher, PrefixHashes};
pub use interest::{CompactInterest, Interest, InterestView};
pub use lp::{LpPacket, NackReason, Packet};
pub use name::{Component, ComponentRef, Name};
pub use security::KeyError;
pub use signature::{KeyLocator, SignError, SignatureInfo, Signer, Verifier, VerifyError};
pub use tlv::MAX_PACKET_SIZE;
