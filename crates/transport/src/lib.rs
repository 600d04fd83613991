//! Nameway's transport library: applications publish and fetch whole objects by name.
//!
//! - [`client`]: one connection to the forwarder (Unix, TCP, UDP or WebSocket face), with
//!   request/response helpers and prefix registration.
#![forbid(unsafe_code)]

pub mod client;
