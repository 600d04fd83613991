//! Nameway lab: networks of forwarders emulated on one machine, and the reproductions of the
//! published results Nameway builds on.
//!
//! A topology file ([`topology`]) names nodes (namewayd with an inline configuration
//! fragment, NFD, or an application command), links (veth pairs between network namespaces,
//! with a tbf rate in the kernel and delay, jitter and loss in the forwarders' faces), static
//! routes and scenario steps. [`lab::Lab`] brings it up, supervises it and tears it down, and a
//! state file ([`state`]) lets `nameway lab down` or the next `up` remove what a killed runner
//! left. [`reproduce`] runs the published experiments on such labs and writes reports with
//! plots. The `nameway lab` command ([`cli`]) is the way in; docs/lab.md is the manual.
//!
//! Everything needs root (namespaces, veth pairs, qdiscs) except checking a topology file.
#![forbid(unsafe_code)]

pub mod cli;
pub mod config;
pub mod controller;
pub mod error;
pub mod lab;
pub mod net;
pub mod nfd;
pub mod plan;
pub mod probe;
pub mod process;
pub mod report;
pub mod reproduce;
pub mod request;
pub mod scenario;
pub mod signals;
pub mod state;
pub mod status;
pub mod topology;

pub use error::{LabError, TopologyError};
pub use lab::{Lab, Options};
pub use topology::Topology;
