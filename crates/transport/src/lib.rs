//! Nameway's transport library: applications publish and fetch whole objects by name.
//!
//! - [`client`]: one connection to the forwarder (Unix, TCP, UDP or WebSocket face), with
//!   request/response helpers and prefix registration.
//! - [`producer`]: an object (bytes or a file) cut into signed segments, optionally covered by
//!   signed [`manifest`]s, answered from a bounded segment store ([`producer::serve`]).
//! - [`consumer`]: a pipelined fetch with congestion control ([`cc`]), retransmission and
//!   verification, written in order into any [`std::io::Write`] ([`consumer::fetch`]).
//! - [`keys`]: signing and verification keys (Ed25519, ECDSA P-256, RSA, HMAC, DigestSha256).
//! - [`cert`]: NDN certificates (v2) and the chain from a packet to a trust anchor.
//! - [`naming`]: the names of segments, manifests and version-discovery metadata.
#![forbid(unsafe_code)]

pub mod cc;
pub mod cert;
pub mod client;
pub mod consumer;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
pub mod keys;
pub mod manifest;
pub mod naming;
pub mod producer;

pub use cc::{CcKind, CcOptions};
pub use cert::{CertError, Certificate};
pub use consumer::{fetch, FetchError, FetchOptions, FetchReport, Progress};
pub use keys::{SignatureKind, SigningKey, VerifyKey};
pub use producer::{serve, Publication, PublishError, PublishOptions, ServeError};
