//! What the face system tells the forwarder driver: [`FaceEvent`], [`FaceInfo`],
//! [`DownReason`].

use std::io;

use bytes::Bytes;

use crate::counters::FaceCounters;
use crate::framing::FramingError;
use crate::id::{FaceId, FaceKind, FaceScope, LinkType, Persistency};
use crate::uri::FaceUri;

/// One event on the queue toward the forwarder driver.
///
/// For each face, `Up` comes first, then its packets, then `Down` last: once `Down` is seen,
/// no packet from that face follows.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum FaceEvent {
    /// A face was created (accepted, on-demand or by management) and can send.
    Up {
        /// The new face.
        face: FaceId,
        /// Its properties (boxed: keeps the common `Packet` event small).
        info: Box<FaceInfo>,
    },
    /// A whole network packet arrived: a bare Interest or Data, or a single-fragment
    /// LpPacket (PitToken, Nack, ...). Its outer TLV is checked; nothing inside is.
    Packet {
        /// The face it arrived on.
        face: FaceId,
        /// The packet.
        wire: Bytes,
    },
    /// A face was closed and removed; remove its routes (python-ndn never unregisters).
    Down {
        /// The closed face.
        face: FaceId,
        /// Why.
        reason: DownReason,
    },
}

/// Why a face closed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DownReason {
    /// The peer closed the connection.
    PeerClosed,
    /// [`crate::FaceSystem::destroy`] (management `faces/destroy`).
    Destroyed,
    /// An on-demand UDP face received nothing for the idle timeout.
    IdleTimeout,
    /// The byte stream is not a sequence of acceptable TLVs.
    Framing(FramingError),
    /// A socket error.
    Io(io::ErrorKind),
    /// [`crate::FaceSystem::shutdown`].
    Shutdown,
}

impl core::fmt::Display for DownReason {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::PeerClosed => f.write_str("closed by peer"),
            Self::Destroyed => f.write_str("destroyed"),
            Self::IdleTimeout => f.write_str("idle timeout"),
            Self::Framing(e) => write!(f, "framing error: {e}"),
            Self::Io(kind) => write!(f, "socket error: {kind}"),
            Self::Shutdown => f.write_str("shutdown"),
        }
    }
}

/// A face's properties and counters, as `faces/list` reports them.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FaceInfo {
    /// The face.
    pub id: FaceId,
    /// Its transport.
    pub kind: FaceKind,
    /// The peer: `fd://N` (Unix), `tcp4://…`, `udp6://…`.
    pub remote: FaceUri,
    /// This end: `unix:///run/nfd/nfd.sock`, `tcp4://127.0.0.1:6363`, …
    pub local: FaceUri,
    /// Local or non-local.
    pub scope: FaceScope,
    /// Point-to-point (all faces so far).
    pub link_type: LinkType,
    /// On-demand, persistent or permanent.
    pub persistency: Persistency,
    /// Largest link packet; `None` on stream faces (unlimited, never fragmented).
    pub mtu: Option<usize>,
    /// Whether the transport is connected (a permanent TCP face reconnecting is not).
    pub connected: bool,
    /// Counters at the time of the snapshot.
    pub counters: FaceCounters,
}
