//! `namewayd`: the Nameway forwarder daemon.
//!
//! It joins the face system (`nameway-face`: Unix, TCP, UDP and WebSocket faces with NFD's
//! defaults, and the null face) to the forwarding core (`nameway-fw`) and serves NFD's
//! management protocol under `/localhost/nfd` through an internal face, so that unmodified NDN
//! applications and tools can use it in place of NFD. Configuration is one TOML document with embedded defaults ([`config::Config`]).

#![forbid(unsafe_code)]

pub mod agent;
pub mod capture;
pub mod coalesce;
pub mod config;
pub mod cs_server;
pub mod driver;
pub mod driver_shards;
pub mod http;
pub mod metrics;
pub mod mgmt;
pub mod rib;
pub mod routing;
pub mod security;

/// Wall-clock milliseconds since the Unix epoch (0 if the clock is before it).
pub fn wall_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
