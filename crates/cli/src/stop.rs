//! Stopping a long-running command cleanly: SIGINT (Ctrl-C) and SIGTERM (`kill`, systemd,
//! `timeout`) are caught from the moment [`Stop::catch`] returns, so a command installs them
//! before it tells the user it is running. A signal that comes before the command waits for it,
//! or between two waits, is kept, not lost, and never kills the process without its summary.

use std::fmt;

use anyhow::Context as _;
use tokio::signal::unix::{signal, Signal, SignalKind};

/// Which signal asked the command to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopSignal {
    /// SIGINT: Ctrl-C on a terminal.
    Interrupt,
    /// SIGTERM.
    Terminate,
}

impl StopSignal {
    /// The exit status of a command cut short by this signal, as shells report a process killed
    /// by it: 128 + the signal's number.
    pub(crate) fn exit_code(self) -> u8 {
        match self {
            Self::Interrupt => 130,
            Self::Terminate => 143,
        }
    }
}

impl fmt::Display for StopSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Interrupt => "SIGINT",
            Self::Terminate => "SIGTERM",
        })
    }
}

/// The handlers of SIGINT and SIGTERM, installed for the life of the process.
pub(crate) struct Stop {
    interrupt: Signal,
    terminate: Signal,
}

impl Stop {
    /// Installs the handlers; from now on neither signal kills the process.
    ///
    /// # Errors
    /// The handlers cannot be installed (no signal driver in the runtime).
    pub(crate) fn catch() -> anyhow::Result<Self> {
        Ok(Self {
            interrupt: signal(SignalKind::interrupt()).context("cannot catch SIGINT (Ctrl-C)")?,
            terminate: signal(SignalKind::terminate()).context("cannot catch SIGTERM")?,
        })
    }

    /// Waits for the next SIGINT or SIGTERM, or returns at once with one that came already.
    /// Cancel-safe: a signal is not consumed by a wait that is dropped.
    pub(crate) async fn recv(&mut self) -> StopSignal {
        tokio::select! {
            _ = self.interrupt.recv() => StopSignal::Interrupt,
            _ = self.terminate.recv() => StopSignal::Terminate,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_sent_before_the_wait_is_kept_and_named() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut stop = Stop::catch().unwrap();
            // Sent from outside, as a user or a service manager would.
            let pid = std::process::id().to_string();
            let sent = std::process::Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap();
            assert!(sent.success());
            let got = tokio::time::timeout(std::time::Duration::from_secs(10), stop.recv())
                .await
                .expect("SIGTERM was lost");
            assert_eq!(got, StopSignal::Terminate);
            assert_eq!(got.exit_code(), 143);
            assert_eq!(got.to_string(), "SIGTERM");
        });
    }
}
