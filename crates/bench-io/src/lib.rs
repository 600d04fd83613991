//! The same forwarder-shaped relay on two I/O engines, epoll and io_uring (issue 32 §1).
//!
//! A relay holds two Unix stream connections, one to a consumer and one to a producer, both
//! in other processes. It reads everything a socket has, finds the NDN packets in the bytes
//! (TLV type and length), and writes the complete ones to the other side with one `writev`
//! per side per turn: Interests consumer → producer, Data producer → consumer, as namewayd
//! does. [`epoll`] waits with `epoll_wait` and reads with `read`; [`uring`] keeps receives
//! armed in an io_uring and submits the turn's writes and waits for the next completions in
//! one `io_uring_enter`. [`run::run_round`] starts the clients ([`client`]), runs one engine
//! and measures the relay's CPU, system calls and context switches ([`usage`]).

pub mod client;
pub mod epoll;
pub mod relay;
pub mod run;
pub mod tlv;
pub mod uring;
pub mod usage;

use std::fmt;
use std::io;

/// What can go wrong in a round.
#[derive(Debug)]
pub enum Error {
    /// A system call failed: what was being done, and the OS error.
    Io(&'static str, io::Error),
    /// Bytes that are not the packets expected.
    Protocol(String),
    /// A client process failed or did not connect.
    Client(String),
    /// No progress for the relay's whole wait (a client hung).
    Stalled,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(what, e) => write!(f, "{what}: {e}"),
            Error::Protocol(what) => write!(f, "bad packet: {what}"),
            Error::Client(what) => write!(f, "client: {what}"),
            Error::Stalled => write!(f, "the relay saw nothing for 10 s: a client hung"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(_, e) => Some(e),
            _ => None,
        }
    }
}

/// The crate's result.
pub type Result<T> = std::result::Result<T, Error>;

/// Wraps the last OS error with what was being done.
pub(crate) fn os_err(what: &'static str) -> Error {
    Error::Io(what, io::Error::last_os_error())
}
