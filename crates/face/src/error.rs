//! Errors of the face system's API. Packet drops are not errors: they are counted
//! ([`crate::FaceCounters`]).

use std::io;
use std::path::PathBuf;

use crate::id::FaceId;
use crate::uri::UriError;

/// Why a face system operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FaceError {
    /// The URI is not usable.
    #[error(transparent)]
    Uri(#[from] UriError),
    /// Management may not create this kind of face (`unix://`, `fd://`).
    #[error("cannot create a face for this scheme")]
    UnsupportedScheme,
    /// Management may not create on-demand faces (NFD answers 406).
    #[error("faces created by management must be persistent or permanent")]
    InvalidPersistency,
    /// A face to this remote endpoint exists already (its persistency was raised if asked;
    /// NFD answers 409 with that face).
    #[error("face {0} already exists for this remote endpoint")]
    Exists(FaceId),
    /// A listener could not be set up.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address or path.
        addr: String,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// Another process is accepting connections on this Unix socket path.
    #[error("Unix socket {0} is in use by another process")]
    UnixPathInUse(PathBuf),
    /// A TCP connection could not be made. (The reason is in the message, not also a source,
    /// so an error chain does not print it twice.)
    #[error("cannot connect: {0}")]
    Connect(io::Error),
    /// A socket operation failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The face system is shutting down.
    #[error("the face system is shutting down")]
    ShuttingDown,

    /// A secure face was asked for and this forwarder has no `[security]` (no identity).
    #[error("secure faces need a [security] section in the configuration (an identity and trusted peers)")]
    SecurityNotConfigured,

    /// A secure face was asked for a scheme other than UDP or TCP.
    #[error("secure faces are UDP or TCP faces (udp4://, udp6://, tcp4://, tcp6://)")]
    SecureNeedsUdp,
    /// The TLS certificate or key of a `wss://` listener cannot be used.
    #[error("TLS for the WebSocket listener: {0}")]
    Tls(String),
}

/// Why [`crate::FaceSystem::send`] did not queue a packet (the drop is already counted).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SendError {
    /// No such face (never existed, or closed).
    #[error("no such face")]
    NoSuchFace,
    /// The face's send queue is full; counted as `drop_queue_full`.
    #[error("send queue full")]
    QueueFull,
    /// The face is closing.
    #[error("face closed")]
    Closed,
}
