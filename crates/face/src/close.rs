//! A face's or a connection's close signal: set once, with the reason, and awaited by the
//! face's tasks.
//!
//! It replaces a tokio `watch` channel per signal. A face's readers check it for every read
//! and its sender for every packet; here that is one atomic load where the channel took its
//! lock, and the signal costs about 80 bytes where the channel's shared state (eight wake
//! lists) cost about 360, twice per connection (the face's and the connection's), idle
//! faces included.

use std::sync::OnceLock;

use tokio::sync::Notify;

use crate::event::DownReason;

/// Set once with the reason; every task waiting in [`CloseSignal::closed`] is woken then.
#[derive(Debug, Default)]
pub(crate) struct CloseSignal {
    reason: OnceLock<DownReason>,
    notify: Notify,
}

impl CloseSignal {
    /// Sets the reason unless one is set already (the first one wins) and wakes the waiters.
    /// Returns whether this call set it.
    pub(crate) fn close(&self, reason: DownReason) -> bool {
        let first = self.reason.set(reason).is_ok();
        if first {
            self.notify.notify_waiters();
        }
        first
    }

    /// The reason, once set.
    pub(crate) fn reason(&self) -> Option<DownReason> {
        self.reason.get().cloned()
    }

    /// Whether the reason is set.
    pub(crate) fn is_closed(&self) -> bool {
        self.reason.get().is_some()
    }

    /// Waits until the reason is set and returns it (at once if it is).
    pub(crate) async fn closed(&self) -> DownReason {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            // Registered before the check: a `close` after the check wakes this wait.
            notified.as_mut().enable();
            if let Some(reason) = self.reason.get() {
                return reason.clone();
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test]
    async fn every_waiter_gets_the_first_reason() {
        let signal = Arc::new(CloseSignal::default());
        assert!(!signal.is_closed());
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let s = signal.clone();
                tokio::spawn(async move { s.closed().await })
            })
            .collect();
        // The waiters are waiting, not returning.
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(waiters.iter().all(|w| !w.is_finished()));
        assert!(signal.close(DownReason::Destroyed));
        assert!(
            !signal.close(DownReason::PeerClosed),
            "the first reason wins"
        );
        for w in waiters {
            assert_eq!(w.await.unwrap(), DownReason::Destroyed);
        }
        // A wait that starts after the close returns at once.
        assert_eq!(signal.closed().await, DownReason::Destroyed);
        assert_eq!(signal.reason(), Some(DownReason::Destroyed));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_close_racing_a_new_wait_is_never_missed() {
        for _ in 0..2000 {
            let signal = Arc::new(CloseSignal::default());
            let s = signal.clone();
            let waiter = tokio::spawn(async move { s.closed().await });
            signal.close(DownReason::Shutdown);
            let got = tokio::time::timeout(Duration::from_secs(5), waiter).await;
            assert_eq!(got.expect("missed wake-up").unwrap(), DownReason::Shutdown);
        }
    }
}
