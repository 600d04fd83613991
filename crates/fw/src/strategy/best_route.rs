//! best-route (NFD `/localhost/nfd/strategy/best-route/v=5`): a new Interest goes to the
//! lowest-cost eligible next hop; a retransmission allowed by the suppression interval goes to
//! the lowest-cost eligible next hop not in use, else to the one used longest ago; with no
//! eligible next hop the downstream gets Nack NoRoute.
//!
//! On a Nack, NFD's best-route waits for every upstream and returns the least severe reason.
//! Ours first tries the lowest-cost eligible next hop that has not been tried for this entry
//! (failover without waiting for the consumer to retransmit), then does the same.

use nameway_wire::lp::NackReason;
use nameway_wire::Name;

use super::{no_parameters, process_nack, RetxSuppressionExponential, RetxSuppressionResult};
use super::{Strategy, StrategyContext, StrategyError};
use crate::counters::DropReason;
use crate::table::face_table::FaceId;

/// The best-route strategy.
#[derive(Debug)]
pub struct BestRoute {
    name: Name,
    retx: RetxSuppressionExponential,
}

impl BestRoute {
    /// The version Nameway implements.
    pub const VERSION: u64 = 5;

    /// An instance named `instance` (`.../best-route/v=5`).
    ///
    /// # Errors
    /// [`StrategyError::BadParameters`] when the name carries parameters.
    pub fn new(instance: &Name) -> Result<Self, StrategyError> {
        no_parameters(instance)?;
        Ok(Self {
            name: instance.clone(),
            retx: RetxSuppressionExponential::default(),
        })
    }
}

impl Default for BestRoute {
    /// `/localhost/nfd/strategy/best-route/v=5` with NFD's suppression defaults.
    fn default() -> Self {
        let name = format!("{}/v={}", super::BEST_ROUTE_NAME, Self::VERSION);
        Self {
            name: name.parse().unwrap_or_default(),
            retx: RetxSuppressionExponential::default(),
        }
    }
}

impl Strategy for BestRoute {
    fn instance_name(&self) -> &Name {
        &self.name
    }

    fn after_receive_interest(&mut self, cx: &mut StrategyContext<'_>, ingress: FaceId) {
        let decision = self.retx.decide_per_pit_entry(cx);
        if decision == RetxSuppressionResult::Suppress {
            return;
        }
        let hops = cx.nexthops();
        let mut eligible = hops
            .iter()
            .filter(|h| cx.is_eligible(h.face, ingress))
            .map(|h| h.face);
        if decision == RetxSuppressionResult::New {
            match eligible.next() {
                Some(face) => {
                    cx.send_interest(face);
                }
                None => {
                    cx.record_drop(ingress, DropReason::NoRoute);
                    cx.send_nack(ingress, NackReason::NoRoute);
                    cx.reject_pending_interest();
                }
            }
            return;
        }
        // A retransmission: the best unused next hop, else the one used longest ago.
        let unused = eligible.clone().find(|&f| cx.is_unused(f));
        let earliest = || {
            eligible
                .filter_map(|f| cx.entry().out_record(f).map(|r| (r.last_renewed(), f)))
                .min()
                .map(|(_, f)| f)
        };
        if let Some(face) = unused.or_else(earliest) {
            cx.send_interest(face);
        }
    }

    fn after_receive_nack(
        &mut self,
        cx: &mut StrategyContext<'_>,
        _reason: NackReason,
        _ingress: FaceId,
    ) {
        let untried = cx.nexthops().iter().map(|h| h.face).find(|&f| {
            cx.entry().out_record(f).is_none()
                && cx
                    .entry()
                    .in_records()
                    .iter()
                    .any(|r| cx.is_eligible(f, r.face()))
        });
        if let Some(face) = untried {
            if cx.send_interest(face) {
                return;
            }
        }
        process_nack(cx);
    }
}
