//! `nameway strategy list|set|unset`: the `strategy-choice` management module.

use nameway_wire::mgmt::{ControlParameters, StrategyChoice};
use nameway_wire::Name;
use serde::Serialize;

use crate::client::{self, parse_name};
use crate::output::{outln, print_json, write_out, JsonFlag, Table};

/// Where the forwarder's strategies are named.
const STRATEGY_PREFIX: &str = "/localhost/nfd/strategy";

/// `nameway strategy ...`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum StrategyCommand {
    /// List the strategy choices (strategy-choice/list).
    List(JsonFlag),
    /// Choose the strategy for a prefix (strategy-choice/set).
    Set(SetArgs),
    /// Remove the strategy choice of a prefix; it inherits its parent's (strategy-choice/unset).
    Unset(UnsetArgs),
}

/// Arguments of `nameway strategy set`.
#[derive(Debug, clap::Args)]
pub(crate) struct SetArgs {
    /// Name prefix.
    prefix: String,
    /// Strategy: a short name (best-route, multicast, asf) or a full name
    /// (/localhost/nfd/strategy/multicast[/v=N]).
    strategy: String,
    #[command(flatten)]
    out: JsonFlag,
}

/// Arguments of `nameway strategy unset`.
#[derive(Debug, clap::Args)]
pub(crate) struct UnsetArgs {
    /// Name prefix (not the root).
    prefix: String,
    #[command(flatten)]
    out: JsonFlag,
}

/// One strategy choice in `--json` output.
#[derive(Debug, Serialize)]
struct ChoiceView {
    prefix: String,
    strategy: Option<String>,
}

/// Runs `nameway strategy ...`.
///
/// # Errors
/// The forwarder cannot be reached or refuses the command, or an argument is invalid.
pub(crate) async fn run(transport: Option<&str>, cmd: &StrategyCommand) -> anyhow::Result<()> {
    let mut c = client::connect(transport).await?;
    match cmd {
        StrategyCommand::List(out) => {
            let choices: Vec<StrategyChoice> = c.list("strategy-choice", "list").await?;
            let views: Vec<ChoiceView> = choices
                .iter()
                .map(|s| ChoiceView {
                    prefix: s.name.to_string(),
                    strategy: Some(s.strategy.to_string()),
                })
                .collect();
            if out.json {
                return print_json(&views);
            }
            let mut t = Table::new(&["Prefix", "Strategy"]);
            for v in views {
                t.row(vec![v.prefix, v.strategy.unwrap_or_default()]);
            }
            write_out(&t.render())?;
            Ok(())
        }
        StrategyCommand::Set(args) => {
            let params = ControlParameters {
                name: Some(parse_name(&args.prefix)?),
                strategy: Some(strategy_name(&args.strategy)?),
                ..ControlParameters::default()
            };
            let done = c.command_ok("strategy-choice", "set", &params).await?;
            let view = ChoiceView {
                prefix: done
                    .name
                    .map_or_else(|| args.prefix.clone(), |n| n.to_string()),
                strategy: done.strategy.map(|s| s.to_string()),
            };
            if args.out.json {
                return print_json(&view);
            }
            outln!(
                "strategy set: prefix={} strategy={}",
                view.prefix,
                view.strategy.as_deref().unwrap_or(&args.strategy)
            )?;
            Ok(())
        }
        StrategyCommand::Unset(args) => {
            let params = ControlParameters::with_name(parse_name(&args.prefix)?);
            let done = c.command_ok("strategy-choice", "unset", &params).await?;
            let view = ChoiceView {
                prefix: done
                    .name
                    .map_or_else(|| args.prefix.clone(), |n| n.to_string()),
                strategy: None,
            };
            if args.out.json {
                return print_json(&view);
            }
            outln!("strategy unset: prefix={}", view.prefix)?;
            Ok(())
        }
    }
}

/// `multicast` → `/localhost/nfd/strategy/multicast`; full names are kept.
fn strategy_name(s: &str) -> anyhow::Result<Name> {
    if s.starts_with('/') || s.starts_with("ndn:") {
        return parse_name(s);
    }
    parse_name(&format!("{STRATEGY_PREFIX}/{s}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_strategy_names() {
        assert_eq!(
            strategy_name("multicast").unwrap().to_string(),
            "/localhost/nfd/strategy/multicast"
        );
        assert_eq!(
            strategy_name("/localhost/nfd/strategy/best-route/v=5")
                .unwrap()
                .to_string(),
            "/localhost/nfd/strategy/best-route/v=5"
        );
    }
}
