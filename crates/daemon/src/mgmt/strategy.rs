//! The strategy-choice manager (`strategy-choice/set`, `unset`, `list`), as NFD's
//! `StrategyChoiceManager`.

use nameway_fw::{Forwarder, StrategyError};
use nameway_wire::mgmt::{ControlParameters, StrategyChoice};

use super::{Management, Outcome, Request};

impl Management {
    /// `strategy-choice/<verb>`.
    pub(super) fn strategy_command(
        &mut self,
        fw: &mut Forwarder,
        req: &Request<'_>,
        verb: &str,
        mut p: ControlParameters,
    ) -> Outcome {
        let interest = req.interest;
        match verb {
            "set" => {
                let (Some(name), Some(strategy)) = (p.name.clone(), p.strategy.clone()) else {
                    return self.respond(interest, 400, "Name and Strategy are required", &p);
                };
                match fw.set_strategy(&name, &strategy) {
                    Ok(full) => {
                        p.strategy = Some(full);
                        self.respond(interest, 200, "OK", &p)
                    }
                    // NFD: 400 for parameters the strategy refuses, 414 for a long prefix,
                    // 404 for an unknown strategy or version.
                    Err(StrategyError::BadParameters(why)) => {
                        self.respond(interest, 400, &format!("Invalid parameters: {why}"), &p)
                    }
                    Err(StrategyError::PrefixTooLong) => {
                        self.respond(interest, 414, "Prefix has too many components", &p)
                    }
                    Err(_) => self.respond(interest, 404, "Strategy not registered", &p),
                }
            }
            "unset" => {
                let Some(name) = p.name.clone() else {
                    return self.respond(interest, 400, "Name is required", &p);
                };
                if name.is_empty() {
                    return self.respond(interest, 400, "cannot unset root prefix strategy", &p);
                }
                let _ = fw.unset_strategy(&name);
                self.respond(interest, 200, "OK", &p)
            }
            _ => Outcome::Nothing,
        }
    }
}

/// `strategy-choice/list`.
pub(super) fn list(fw: &Forwarder) -> Vec<u8> {
    fw.strategy_choices()
        .flat_map(|(name, strategy)| {
            StrategyChoice {
                name: name.clone(),
                strategy: strategy.clone(),
            }
            .encode()
        })
        .collect()
}
