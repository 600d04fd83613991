//! Retransmission suppression with exponential back-off (NFD `RetxSuppressionExponential`):
//! a retransmitted Interest is forwarded again only if the last forwarding is older than the
//! suppression interval, which starts at 10 ms and doubles after each forwarded retransmission,
//! up to 250 ms.

use core::time::Duration;

use smallvec::SmallVec;

use super::StrategyContext;
use crate::table::face_table::FaceId;

/// The decision for an incoming Interest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetxSuppressionResult {
    /// Not a retransmission: nothing is pending upstream (or, per upstream: never sent there).
    New,
    /// A retransmission that may be forwarded.
    Forward,
    /// A retransmission inside the suppression interval.
    Suppress,
}

/// Exponential retransmission suppression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetxSuppressionExponential {
    initial: Duration,
    multiplier: u32,
    max: Duration,
}

/// Per-entry state: the current interval.
#[derive(Debug, Default)]
struct EntryInterval(Option<Duration>);

/// Per-upstream state: the current interval of each upstream.
#[derive(Debug, Default)]
struct UpstreamIntervals(SmallVec<[(FaceId, Duration); 4]>);

impl RetxSuppressionExponential {
    /// NFD's default initial interval.
    pub const DEFAULT_INITIAL: Duration = Duration::from_millis(10);
    /// NFD's default multiplier.
    pub const DEFAULT_MULTIPLIER: u32 = 2;
    /// NFD's default maximum interval.
    pub const DEFAULT_MAX: Duration = Duration::from_millis(250);

    /// A suppressor with the given parameters.
    pub fn new(initial: Duration, multiplier: u32, max: Duration) -> Self {
        Self {
            initial,
            multiplier,
            max,
        }
    }

    fn grow(&self, d: Duration) -> Duration {
        d.saturating_mul(self.multiplier).min(self.max)
    }

    /// Decides for the whole entry (NFD `decidePerPitEntry`, used by best-route); a
    /// [`RetxSuppressionResult::Forward`] grows the interval.
    pub fn decide_per_pit_entry(&self, cx: &mut StrategyContext<'_>) -> RetxSuppressionResult {
        let now = cx.now();
        if !cx.entry().has_pending_out_records(now) {
            return RetxSuppressionResult::New;
        }
        let since = cx
            .entry()
            .last_outgoing()
            .map_or(Duration::MAX, |t| now.saturating_since(t));
        let initial = self.initial;
        let state = cx.scratch::<EntryInterval>();
        let interval = *state.0.get_or_insert(initial);
        if since < interval {
            return RetxSuppressionResult::Suppress;
        }
        state.0 = Some(self.grow(interval));
        RetxSuppressionResult::Forward
    }

    /// Decides for one upstream (NFD `decidePerUpstream`, used by multicast).
    pub fn decide_per_upstream(
        &self,
        cx: &mut StrategyContext<'_>,
        upstream: FaceId,
    ) -> RetxSuppressionResult {
        let Some(last) = cx.entry().out_record(upstream).map(|r| r.last_renewed()) else {
            return RetxSuppressionResult::New;
        };
        let since = cx.now().saturating_since(last);
        let interval = cx
            .scratch_ref::<UpstreamIntervals>()
            .and_then(|s| s.0.iter().find(|(f, _)| *f == upstream).map(|&(_, d)| d))
            .unwrap_or(self.initial);
        if since < interval {
            RetxSuppressionResult::Suppress
        } else {
            RetxSuppressionResult::Forward
        }
    }

    /// Grows the interval of `upstream` after a forwarded retransmission (NFD
    /// `incrementIntervalForOutRecord`).
    pub fn increment_upstream_interval(&self, cx: &mut StrategyContext<'_>, upstream: FaceId) {
        let initial = self.initial;
        let grown = |d| self.grow(d);
        let state = cx.scratch::<UpstreamIntervals>();
        match state.0.iter_mut().find(|(f, _)| *f == upstream) {
            Some((_, d)) => *d = grown(*d),
            None => state.0.push((upstream, grown(initial))),
        }
    }
}

impl Default for RetxSuppressionExponential {
    fn default() -> Self {
        Self::new(
            Self::DEFAULT_INITIAL,
            Self::DEFAULT_MULTIPLIER,
            Self::DEFAULT_MAX,
        )
    }
}
