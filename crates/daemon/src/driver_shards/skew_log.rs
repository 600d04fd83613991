//! Logs a shard's skew reports ([`nameway_fw::shard::skew`]): a dispatch key that keeps one
//! shard busy while the others idle, with the `[[forwarder.dispatch]]` entry that would spread
//! it. The windows are counted (`nameway_shard_skewed_windows_total`); the log says it once
//! per key, and again only after [`REPEAT_AFTER`].

use std::time::{Duration, Instant};

use nameway_fw::shard::Shard;
use nameway_wire::Name;

/// A key already logged is logged again after this long if it still dominates.
pub(crate) const REPEAT_AFTER: Duration = Duration::from_secs(300);

/// The last key logged by one shard's driver.
#[derive(Debug, Default)]
pub(crate) struct SkewLog {
    last: Option<(Name, Instant)>,
}

impl SkewLog {
    /// Logs `shard`'s latest skew report, unless it names the key logged last within
    /// [`REPEAT_AFTER`].
    pub(crate) fn check(&mut self, shard: &mut Shard) {
        let Some(r) = shard.take_skew_report() else {
            return;
        };
        let now = Instant::now();
        if r.split {
            tracing::info!(
                shard = shard.index(),
                prefix = %r.prefix,
                k = r.recommended_k(),
                windows = r.windows_in_a_row,
                "one dispatch key kept one shard busy for {} sampling windows in a row: names \
                 under {} are now dispatched by their first {} components (to keep it after a \
                 restart add [[forwarder.dispatch]] prefix = \"{}\" k = {})",
                r.windows_in_a_row,
                r.prefix,
                r.recommended_k(),
                r.prefix,
                r.recommended_k(),
            );
            self.last = Some((r.prefix, now));
            return;
        }
        if let Some((prefix, at)) = &self.last {
            if *prefix == r.prefix && now.duration_since(*at) < REPEAT_AFTER {
                return;
            }
        }
        tracing::warn!(
            shard = shard.index(),
            prefix = %r.prefix,
            k = r.k,
            shard_share = format!("{:.1}%", f64::from(r.shard_permille) / 10.0),
            key_share = format!("{:.1}%", f64::from(r.key_permille) / 10.0),
            "one dispatch key carries most Interests and keeps one shard busy; to spread its \
             names over the shards add [[forwarder.dispatch]] prefix = \"{}\" k = {}",
            r.prefix,
            r.recommended_k(),
        );
        self.last = Some((r.prefix, now));
    }
}
