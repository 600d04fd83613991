//! `nameway-face`: the faces of the Nameway forwarder — Unix, TCP, UDP and WebSocket sockets
//! and the null face, the NDNLPv2 link service, hop-by-hop encryption, batched UDP I/O and
//! fault injection.
//!
//! Layers, bottom up:
//! - [`framing`] cuts back-to-back TLVs out of a byte stream (sans I/O; it lives in
//!   `nameway-wire`, shared with the transport library, and is re-exported here);
//! - [`link`] is the NDNLPv2 link service of one face: classification, IDLE packets,
//!   fragmentation and reassembly (sans I/O, testable without sockets);
//! - [`fault`] decides delay and loss for the fault-injecting face wrapper (sans I/O);
//! - the I/O tasks (tokio): one reader and one writer per face, listeners, and UDP sockets
//!   shared by many faces with batched receive and send (quinn-udp: recvmmsg, GSO, GRO);
//! - [`FaceSystem`] owns the listeners and the face table, creates and destroys faces, and
//!   feeds one bounded queue of [`FaceEvent`]s to the forwarder driver.
//!
//! Guarantees: packets go up as whole, outer-checked network packets (`Bytes`, shared with
//! the receive buffer on streams); per face, `Up` precedes its packets and `Down` follows
//! them; sending never blocks the caller (full queues drop and count); stream faces never
//! fragment and nothing ever sends HopCount; a face that breaks framing closes alone.
//!
//! `unsafe` code is confined to `src/sys/` (one `setsockopt`, one `recv` with `MSG_PEEK`, one
//! `recv` into a buffer's spare capacity, and the reactor registration of a Unix socket for
//! reads only).

mod accept;
mod close;
pub mod config;
pub mod counters;
pub mod error;
pub mod event;
mod face;
pub mod fault;
pub mod id;
pub mod link;
mod placement;
mod queue;
pub mod secure;
mod stream;
mod sys;
mod system;
mod tcp;
mod udp;
mod unix;
mod unix_io;
pub mod uri;
mod ws;

pub use config::{FaceOptions, FaceSystemConfig, DEFAULT_UDP_MTU, DEFAULT_UNIX_PATH};
pub use counters::{FaceCounters, SystemCounters};
pub use error::{FaceError, SendError};
pub use event::{DownReason, FaceEvent, FaceInfo};
pub use face::{FaceSender, Queued};
pub use fault::{FaultConfig, FaultDrop, FaultInjector};
pub use id::{FaceId, FaceKind, FaceScope, LinkType, Persistency};
pub use link::{LinkConfig, LinkRx, LinkService, LinkTx, RxDrop, RxOutcome};
/// Stream framing lives in the codec crate (it does no I/O); faces and clients share it.
pub use nameway_wire::framing::{self, FramingError, StreamFramer};
pub use placement::{Placer, PLACE_WAIT};
pub use system::{home_shard, FaceSystem};
pub use uri::{FaceUri, UriError};
