//! SIGINT, SIGTERM and SIGHUP as events: once the lab has caught them, none of them kills the
//! runner before it has torn its lab down.

use futures_util::FutureExt as _;
use tokio::signal::unix::{signal, Signal, SignalKind};

use crate::error::LabError;

/// The signals that stop a lab.
#[derive(Debug)]
pub struct Signals {
    int: Signal,
    term: Signal,
    hup: Signal,
}

impl Signals {
    /// Catches SIGINT, SIGTERM and SIGHUP from now on. Needs a tokio runtime.
    ///
    /// # Errors
    /// The handlers cannot be installed.
    pub fn catch() -> Result<Self, LabError> {
        let make = |kind| signal(kind).map_err(|e| LabError::io("signal handler", e));
        Ok(Self {
            int: make(SignalKind::interrupt())?,
            term: make(SignalKind::terminate())?,
            hup: make(SignalKind::hangup())?,
        })
    }

    /// The next signal.
    pub async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.int.recv() => "SIGINT",
            _ = self.term.recv() => "SIGTERM",
            _ = self.hup.recv() => "SIGHUP",
        }
    }

    /// A signal that has arrived, without waiting.
    pub fn pending(&mut self) -> Option<&'static str> {
        self.recv().now_or_never()
    }

    /// [`LabError::Interrupted`] if a signal has arrived.
    ///
    /// # Errors
    /// A signal arrived.
    pub fn check(&mut self) -> Result<(), LabError> {
        match self.pending() {
            Some(name) => Err(LabError::Interrupted(name)),
            None => Ok(()),
        }
    }
}
