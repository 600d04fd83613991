//! `nameway-fw`: the Nameway forwarder without I/O.
//!
//! The forwarder owns its tables (FIB, PIT, content store, dead-nonce list, strategy choice,
//! faces) and runs NFD's pipelines and strategies over them. It reads no clock, owns no socket
//! and draws no entropy: time comes in as [`Time`], randomness from a seed in [`Config`], and
//! packets in and out as [`bytes::Bytes`] — the shape of quinn-proto.
//!
//! # Call order
//!
//! The driver (the daemon, a test, a benchmark) owns the faces and a timer, and loops:
//!
//! 1. [`Forwarder::add_face`] / [`Forwarder::remove_face`] as faces come and go;
//!    [`Forwarder::add_nexthop`], [`Forwarder::set_strategy`], ... for management.
//! 2. For each packet a face delivers (after link-layer reassembly):
//!    [`Forwarder::handle_packet`]`(now, face, bytes)`.
//! 3. When the time from [`Forwarder::poll_timeout`] has come:
//!    [`Forwarder::handle_timeout`]`(now)`.
//! 4. After 2 or 3, drain [`Forwarder::poll_transmit`] and write each
//!    [`Transmit`]`{ face, wire }` to its face; then ask [`Forwarder::poll_timeout`] again,
//!    since any call may have moved the next deadline.
//!
//! ```
//! use bytes::Bytes;
//! use nameway_fw::{Config, FaceScope, Forwarder, LinkType, Time};
//! use nameway_wire::{Interest, Name};
//!
//! let mut fw = Forwarder::new(Config::default());
//! let app = fw.add_face(FaceScope::Local, LinkType::PointToPoint);
//! let up = fw.add_face(FaceScope::NonLocal, LinkType::PointToPoint);
//! let prefix: Name = "/example".parse().unwrap();
//! fw.add_nexthop(&prefix, up, 10).unwrap();
//!
//! let mut interest = Interest::new("/example/x".parse().unwrap());
//! interest.nonce = Some(1);
//! fw.handle_packet(Time::from_millis(0), app, interest.encode());
//! let t = fw.poll_transmit().unwrap();
//! assert_eq!(t.face, up);
//! assert!(fw.poll_timeout().is_some()); // the PIT entry expires after InterestLifetime
//! ```
//!
//! # Guarantees
//!
//! - No panics on any input; every dropped packet is counted by [`DropReason`], per face and
//!   in total ([`Forwarder::status`]).
//! - Bounded tables: the PIT, content store and dead-nonce list never exceed their caps; the
//!   work of one call is bounded (content store walks, timer bursts).
//! - One received buffer is shared, not copied, by the PIT, the content store and every
//!   egress face, except where a field must change (HopLimit, or the LpPacket wrapper of a
//!   Nack or echoed PitToken).

#![deny(unsafe_code)] // allowed only in `prefetch`, for one hint instruction

pub mod counters;
mod forwarder;
mod pipeline;
mod prefetch;
mod rate_limit;
pub mod shard;
#[cfg(feature = "sim")]
pub mod sim;
pub mod strategy;
mod table;
mod time;

pub use counters::{
    CsCounters, DnlCounters, DropCounters, DropReason, FaceCounters, FibCounters,
    ForwarderCounters, ForwarderStatus, PitCounters,
};
pub use forwarder::{cs_share, Config, FaceError, Forwarder};
pub use nameway_wire::lp::{NackReason, SecurityLevel};
pub use pipeline::external_cs::{CsRequest, CONTENT_STORE_FACE, LOOKUP_DEADLINE};
pub use pipeline::resolution::{
    sc_hash, with_forwarding_hint, without_forwarding_hint, ResolutionCounters, RouteEvent,
};
pub use pipeline::{Kind as PacketKind, Transmit};
pub use rate_limit::RateLimit;
pub use strategy::{LoopResponse, Strategy, StrategyContext, StrategyError, StrategyRegistry};
pub use table::cs::{
    ContentStore, InMemoryCs, Lru, ReplacementPolicy, DEFAULT_CS_CAPACITY, LOOKUP_BUDGET,
};
pub use table::cs_filter::{CsFilter, FilterCounters};
pub use table::cs_policy::{Admission, CsPolicy, CsPolicyError, CsPriority, CsRule, Partition};
pub use table::dead_nonce_list::DEFAULT_DNL_LIFETIME;
pub use table::face_table::{Face, FaceId, FaceScope, LinkType};
pub use table::fib::{FibError, NextHop};
pub use table::name_table::MAX_PREFIX_DEPTH;
pub use table::pit::{InRecord, OutRecord, PitEntry};
pub use table::security_policy::{SecurityPolicy, SecurityPolicyError};
pub use time::Time;
