//! NFD management TLVs: [`ControlParameters`] and [`ControlResponse`] for commands, and the
//! status datasets ([`FaceStatus`], [`FaceQueryFilter`], [`FibEntry`], [`RibEntry`],
//! [`CsInfo`], [`StrategyChoice`], [`ForwarderStatus`]).
//!
//! Every type is an owned struct with `decode(&Bytes)` and `encode() -> Bytes`; dataset entries
//! also have `decode_list` / `encode_list` for a Content made of entries back to back.
//!
//! Encoders write fields in the order ndn-cxx and python-ndn expect (docs/nfd-interop.md §4.3, §8).
//! Decoders are strict like python-ndn's: a known field repeated or out of order, or an
//! unrecognized critical field (see [`crate::tlv::is_critical`]), rejects the element;
//! unrecognized non-critical fields are skipped. Required fields (those ndn-cxx requires) must
//! be present.
//!
//= https://redmine.named-data.net/projects/nfd/wiki/Management

use bytes::Bytes;

use crate::error::DecodeError;

mod channel_status;
mod codec;
mod control;
mod cs;
mod face;
mod fib;
mod forwarder_status;
mod rib;
mod strategy_choice;

pub use channel_status::ChannelStatus;
pub use control::{ControlParameters, ControlResponse};
pub use cs::CsInfo;
pub use face::{FaceQueryFilter, FaceStatus};
pub use fib::{FibEntry, NextHopRecord};
pub use forwarder_status::ForwarderStatus;
pub use rib::{RibEntry, Route};
pub use strategy_choice::StrategyChoice;

/// TLV-TYPE numbers of NFD management (ndn-cxx `encoding/tlv-nfd.hpp`). Several numbers are
/// reused across datasets (0x80 is FaceStatus, FibEntry, RibEntry, CsInfo, StrategyChoice and
/// NfdVersion); each is named once per meaning.
pub mod types {
    #![allow(missing_docs)]
    // ControlParameters
    pub const CONTROL_PARAMETERS: u32 = 0x68;
    pub const FACE_ID: u32 = 0x69;
    pub const URI: u32 = 0x72;
    pub const LOCAL_URI: u32 = 0x81;
    pub const ORIGIN: u32 = 0x6f;
    pub const COST: u32 = 0x6a;
    pub const CAPACITY: u32 = 0x83;
    pub const COUNT: u32 = 0x84;
    pub const BASE_CONGESTION_MARKING_INTERVAL: u32 = 0x87;
    pub const DEFAULT_CONGESTION_THRESHOLD: u32 = 0x88;
    pub const MTU: u32 = 0x89;
    pub const FLAGS: u32 = 0x6c;
    pub const MASK: u32 = 0x70;
    pub const STRATEGY: u32 = 0x6b;
    pub const EXPIRATION_PERIOD: u32 = 0x6d;
    pub const FACE_PERSISTENCY: u32 = 0x85;
    // namewayd's extensions to faces/create and faces/update (not NFD's; even, so
    // non-critical: a forwarder that does not know them ignores them)
    pub const INTEREST_RATE_LIMIT: u32 = 0x0f30;
    pub const INTEREST_BURST: u32 = 0x0f32;
    // ... and to cs/config (the decoupled content store's server)
    pub const CS_POLICY: u32 = 0x0f34;
    pub const CS_MEMORY_CAPACITY: u32 = 0x0f36;
    pub const CS_DISK_CAPACITY: u32 = 0x0f38;
    // ... and to security/set, neighbours/trust|untrust and faces/create (secure faces)
    pub const SECURITY_LEVEL: u32 = 0x0f3a;
    pub const PEER_KEY: u32 = 0x0f3c;
    pub const SECURE_MODE: u32 = 0x0f3e;
    // ControlResponse
    pub const CONTROL_RESPONSE: u32 = 0x65;
    pub const STATUS_CODE: u32 = 0x66;
    pub const STATUS_TEXT: u32 = 0x67;
    // ForwarderStatus (status/general)
    pub const NFD_VERSION: u32 = 0x80;
    pub const START_TIMESTAMP: u32 = 0x81;
    pub const CURRENT_TIMESTAMP: u32 = 0x82;
    pub const N_NAME_TREE_ENTRIES: u32 = 0x83;
    pub const N_FIB_ENTRIES: u32 = 0x84;
    pub const N_PIT_ENTRIES: u32 = 0x85;
    pub const N_MEASUREMENTS_ENTRIES: u32 = 0x86;
    pub const N_CS_ENTRIES: u32 = 0x87;
    // Faces
    pub const FACE_STATUS: u32 = 0x80;
    pub const CHANNEL_STATUS: u32 = 0x82;
    pub const URI_SCHEME: u32 = 0x83;
    pub const FACE_SCOPE: u32 = 0x84;
    pub const LINK_TYPE: u32 = 0x86;
    pub const FACE_QUERY_FILTER: u32 = 0x96;
    pub const FACE_EVENT_NOTIFICATION: u32 = 0xc0;
    pub const FACE_EVENT_KIND: u32 = 0xc1;
    // Counters (ForwarderStatus and FaceStatus)
    pub const N_IN_INTERESTS: u32 = 0x90;
    pub const N_IN_DATA: u32 = 0x91;
    pub const N_IN_NACKS: u32 = 0x97;
    pub const N_OUT_INTERESTS: u32 = 0x92;
    pub const N_OUT_DATA: u32 = 0x93;
    pub const N_OUT_NACKS: u32 = 0x98;
    pub const N_IN_BYTES: u32 = 0x94;
    pub const N_OUT_BYTES: u32 = 0x95;
    pub const N_SATISFIED_INTERESTS: u32 = 0x99;
    pub const N_UNSATISFIED_INTERESTS: u32 = 0x9a;
    // Content Store
    pub const CS_INFO: u32 = 0x80;
    pub const N_HITS: u32 = 0x81;
    pub const N_MISSES: u32 = 0x82;
    // FIB
    pub const FIB_ENTRY: u32 = 0x80;
    pub const NEXT_HOP_RECORD: u32 = 0x81;
    // Strategy choice
    pub const STRATEGY_CHOICE: u32 = 0x80;
    // RIB
    pub const RIB_ENTRY: u32 = 0x80;
    pub const ROUTE: u32 = 0x81;
}

/// Route origins (ndn-cxx `RouteOrigin`).
pub mod route_origin {
    /// An application registered the route (the default for `rib/register`).
    pub const APP: u64 = 0;
    /// Automatic registration by NFD's auto-prefix propagation of local faces.
    pub const AUTOREG: u64 = 64;
    /// A client library on behalf of an application (NDNts uses it).
    pub const CLIENT: u64 = 65;
    /// Auto-configuration (ndn-autoconfig).
    pub const AUTOCONF: u64 = 66;
    /// The NLSR routing daemon.
    pub const NLSR: u64 = 128;
    /// A prefix announcement (`rib/announce`).
    pub const PREFIXANN: u64 = 129;
    /// Nameway's controller (`namewayctl`), through the forwarder's agent. Not an ndn-cxx
    /// value: one NFD leaves unnamed.
    pub const CTL: u64 = 131;
    /// Static configuration.
    pub const STATIC: u64 = 255;
}

/// Route flags (ndn-cxx `RouteFlags`), a bit set.
pub mod route_flags {
    /// No flag.
    pub const NONE: u64 = 0;
    /// The route also applies to longer prefixes that have no route of their own origin.
    pub const CHILD_INHERIT: u64 = 1;
    /// Routes for longer prefixes do not apply beyond this one.
    pub const CAPTURE: u64 = 2;
}

/// Face flags (ndn-cxx `FaceFlagBit`), a bit set, used in Flags and Mask.
pub mod face_flags {
    /// Local fields (IncomingFaceId, NextHopFaceId, CachePolicy) are enabled.
    pub const LOCAL_FIELDS_ENABLED: u64 = 1 << 0;
    /// NDNLPv2 reliability is enabled.
    pub const LP_RELIABILITY_ENABLED: u64 = 1 << 1;
    /// Congestion detection and marking is enabled.
    pub const CONGESTION_MARKING_ENABLED: u64 = 1 << 2;
}

/// Content Store flags (ndn-cxx `CsFlagBit`), a bit set, in CsInfo and `cs/config`.
pub mod cs_flags {
    /// The CS admits new Data.
    pub const ENABLE_ADMIT: u64 = 1 << 0;
    /// The CS satisfies Interests from cached Data.
    pub const ENABLE_SERVE: u64 = 1 << 1;
}

/// Face scope values (ndn-cxx `FaceScope`).
pub mod face_scope {
    /// The face reaches other hosts.
    pub const NON_LOCAL: u64 = 0;
    /// The face reaches applications on this host.
    pub const LOCAL: u64 = 1;
}

/// Face persistency values (ndn-cxx `FacePersistency`).
pub mod face_persistency {
    /// Kept until destroyed or until the transport fails.
    pub const PERSISTENT: u64 = 0;
    /// Created on demand by a channel; closed when idle.
    pub const ON_DEMAND: u64 = 1;
    /// Kept until destroyed, even through transport failures.
    pub const PERMANENT: u64 = 2;
}

/// Link type values (ndn-cxx `LinkType`).
pub mod link_type {
    /// Point-to-point.
    pub const POINT_TO_POINT: u64 = 0;
    /// Multi-access (Ethernet or UDP multicast).
    pub const MULTI_ACCESS: u64 = 1;
    /// Ad hoc (wireless).
    pub const AD_HOC: u64 = 2;
}

/// ControlResponse status codes NFD uses (docs/nfd-interop.md §5.4).
pub mod status_code {
    /// Success.
    pub const OK: u32 = 200;
    /// Malformed command or invalid parameters.
    pub const BAD_REQUEST: u32 = 400;
    /// Authorization rejected.
    pub const FORBIDDEN: u32 = 403;
    /// Not found (unknown strategy, face to update missing).
    pub const NOT_FOUND: u32 = 404;
    /// Unsupported protocol (faces/create).
    pub const NOT_ACCEPTABLE: u32 = 406;
    /// Conflict (face exists, invalid face properties).
    pub const CONFLICT: u32 = 409;
    /// Face not found (fib/add-nexthop).
    pub const GONE: u32 = 410;
    /// Prefix longer than the FIB depth limit (32 components).
    pub const URI_TOO_LONG: u32 = 414;
    /// Internal error.
    pub const INTERNAL_ERROR: u32 = 500;
    /// Not implemented.
    pub const NOT_IMPLEMENTED: u32 = 501;
}

/// Implements `decode` and `encode` for a management type with private `decode_element` and
/// `encode_value`.
macro_rules! tlv_codec {
    ($ty:ident, $typ:expr, $what:literal) => {
        impl $ty {
            #[doc = concat!("Decodes one whole ", $what, " element.")]
            ///
            /// # Errors
            /// A malformed element, another TLV-TYPE, trailing bytes, a known field repeated
            /// or out of order, an unrecognized critical field, a missing required field, or a
            /// value of the wrong form.
            pub fn decode(wire: &bytes::Bytes) -> Result<Self, crate::error::DecodeError> {
                let e = crate::mgmt::codec::top(wire, $typ)?;
                Self::decode_element(wire, &e)
            }

            #[doc = concat!("Encodes the whole ", $what, " element.")]
            pub fn encode(&self) -> bytes::Bytes {
                let mut value = Vec::new();
                self.encode_value(&mut value);
                crate::mgmt::codec::wrap($typ, &value)
            }
        }
    };
}

/// Implements `decode_list` and `encode_list` for a dataset entry type.
macro_rules! dataset_entry {
    ($ty:ident, $typ:expr, $what:literal) => {
        impl $ty {
            #[doc = concat!("Decodes a dataset Content made of ", $what, " entries back to back.")]
            ///
            /// # Errors
            #[doc = concat!("An element that is not a ", $what, ", or a malformed entry.")]
            pub fn decode_list(
                content: &bytes::Bytes,
            ) -> Result<Vec<Self>, crate::error::DecodeError> {
                crate::mgmt::codec::list(content, $typ, Self::decode_element)
            }

            #[doc = concat!("Encodes `entries` back to back, as a ", $what, " dataset Content.")]
            pub fn encode_list(entries: &[Self]) -> bytes::Bytes {
                let mut out = Vec::new();
                for e in entries {
                    let mut value = Vec::new();
                    e.encode_value(&mut value);
                    crate::tlv::put_tlv(&mut out, $typ, &value);
                }
                bytes::Bytes::from(out)
            }
        }
    };
}

pub(crate) use {dataset_entry, tlv_codec};

/// Decodes the whole Content of a dataset made of `T` entries; `T::decode_list` in generic
/// form, for code that handles several datasets.
///
/// # Errors
/// As the entry type's `decode_list`.
pub fn decode_list<T: DatasetEntry>(content: &Bytes) -> Result<Vec<T>, DecodeError> {
    T::decode_list(content)
}

/// A status dataset entry type (the elements a `*/list` dataset is made of).
pub trait DatasetEntry: Sized {
    /// Decodes a Content made of entries back to back.
    ///
    /// # Errors
    /// An element of another type, or a malformed entry.
    fn decode_list(content: &Bytes) -> Result<Vec<Self>, DecodeError>;
    /// Encodes entries back to back.
    fn encode_list(entries: &[Self]) -> Bytes;
}

macro_rules! impl_dataset_entry {
    ($($ty:ident),*) => {
        $(impl DatasetEntry for $ty {
            fn decode_list(content: &Bytes) -> Result<Vec<Self>, DecodeError> {
                $ty::decode_list(content)
            }
            fn encode_list(entries: &[Self]) -> Bytes {
                $ty::encode_list(entries)
            }
        })*
    };
}

impl_dataset_entry!(FaceStatus, FibEntry, RibEntry, CsInfo, StrategyChoice);
