//! multicast (NFD `/localhost/nfd/strategy/multicast`, v4 and v5): an Interest goes to every
//! eligible next hop; a retransmission goes again only to the upstreams whose own suppression
//! interval has passed.
//!
//! v5 differs from v4 only on loops: v4 answers a looping Interest with Nack Duplicate, v5
//! (NFD 24.07) drops it silently. As in NFD, an Interest with no eligible next hop stays
//! pending until it expires (no Nack NoRoute). Unlike NFD, which ignores Nacks here, once every
//! upstream has Nacked the downstreams get the least severe reason (as best-route does) instead
//! of waiting for their own timeout.

use nameway_wire::lp::NackReason;
use nameway_wire::{InterestView, Name};

use super::{no_parameters, process_nack, LoopResponse, RetxSuppressionExponential};
use super::{RetxSuppressionResult, Strategy, StrategyContext, StrategyError};
use crate::table::face_table::FaceId;

/// The multicast strategy.
#[derive(Debug)]
pub struct Multicast {
    name: Name,
    retx: RetxSuppressionExponential,
    nack_loops: bool,
}

impl Multicast {
    /// An instance named `instance` (`.../multicast/v=4` or `v=5`).
    ///
    /// # Errors
    /// [`StrategyError::BadParameters`] when the name carries parameters.
    pub fn new(instance: &Name) -> Result<Self, StrategyError> {
        no_parameters(instance)?;
        let version = instance.last().and_then(|c| c.as_version());
        Ok(Self {
            name: instance.clone(),
            retx: RetxSuppressionExponential::default(),
            nack_loops: version.is_some_and(|v| v < 5),
        })
    }
}

impl Strategy for Multicast {
    fn instance_name(&self) -> &Name {
        &self.name
    }

    fn after_receive_interest(&mut self, cx: &mut StrategyContext<'_>, ingress: FaceId) {
        for h in cx.nexthops() {
            let decision = self.retx.decide_per_upstream(cx, h.face);
            if decision == RetxSuppressionResult::Suppress || !cx.is_eligible(h.face, ingress) {
                continue;
            }
            if cx.send_interest(h.face) && decision == RetxSuppressionResult::Forward {
                self.retx.increment_upstream_interval(cx, h.face);
            }
        }
    }

    fn after_receive_nack(
        &mut self,
        cx: &mut StrategyContext<'_>,
        _reason: NackReason,
        _ingress: FaceId,
    ) {
        process_nack(cx);
    }

    fn on_interest_loop(&mut self, _interest: &InterestView, _ingress: FaceId) -> LoopResponse {
        if self.nack_loops {
            LoopResponse::NackDuplicate
        } else {
            LoopResponse::Drop
        }
    }
}
