//! What the accept loops (Unix, TCP, WebSocket listeners) do when `accept` fails. The usual
//! cause is running out of file descriptors, which lasts as long as the connections holding
//! them, so the loop pauses instead of spinning, counts every failure
//! (`SystemCounters::accept_errors`), and warns at most once per [`LOG_EVERY`] per listener with
//! how many failures it did not log, instead of ten lines a second.

use std::io;
use std::time::{Duration, Instant};

use crate::counters::{bump, AtomicSystemCounters};
use crate::uri::FaceUri;

/// The pause after a failed accept.
pub(crate) const RETRY_AFTER: Duration = Duration::from_millis(100);

/// At most one warning per listener in this time.
pub(crate) const LOG_EVERY: Duration = Duration::from_secs(10);

/// One listener's failed accepts, for rate-limiting its warning.
#[derive(Debug)]
pub(crate) struct AcceptFailures {
    listener: FaceUri,
    logged_at: Option<Instant>,
    unlogged: u64,
}

impl AcceptFailures {
    /// For the listener `listener` (as [`crate::FaceSystem::listeners`] lists it).
    pub(crate) fn new(listener: FaceUri) -> Self {
        Self {
            listener,
            logged_at: None,
            unlogged: 0,
        }
    }

    /// Records a failure at `now`. Returns `Some(n)` when this one is to be logged, `n` being
    /// the failures since the last warning that were not.
    fn record(&mut self, now: Instant) -> Option<u64> {
        let due = self
            .logged_at
            .is_none_or(|t| now.saturating_duration_since(t) >= LOG_EVERY);
        if due {
            self.logged_at = Some(now);
            Some(std::mem::take(&mut self.unlogged))
        } else {
            self.unlogged += 1;
            None
        }
    }

    /// Counts `error` from the listener's accept, warns if due, and pauses [`RETRY_AFTER`].
    pub(crate) async fn failed(&mut self, counters: &AtomicSystemCounters, error: &io::Error) {
        bump(&counters.accept_errors);
        if let Some(unlogged) = self.record(Instant::now()) {
            let hint = if matches!(error.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) {
                "; raise the open-files limit (LimitNOFILE= in the systemd unit, ulimit -n)"
            } else {
                ""
            };
            tracing::warn!(
                listener = %self.listener,
                error = %error,
                unlogged,
                "accept failed, retrying every 100 ms (logged at most every 10 s){hint}"
            );
        }
        tokio::time::sleep(RETRY_AFTER).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_failure_is_logged_then_one_per_period_with_the_count_in_between() {
        let mut f = AcceptFailures::new(FaceUri::Null);
        let t0 = Instant::now();
        assert_eq!(f.record(t0), Some(0));
        // Ten a second for just under the period: none logged.
        for i in 1..100u32 {
            assert_eq!(f.record(t0 + RETRY_AFTER * i), None, "failure {i}");
        }
        assert_eq!(f.record(t0 + LOG_EVERY), Some(99));
        assert_eq!(f.record(t0 + LOG_EVERY + RETRY_AFTER), None);
        // After a quiet spell the next failure is logged at once.
        assert_eq!(f.record(t0 + LOG_EVERY * 5), Some(1));
    }
}
