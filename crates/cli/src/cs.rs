//! `nameway cs info|config|erase`: the Content Store (`cs/info`, `cs/config`, `cs/erase`).

use anyhow::bail;
use nameway_wire::mgmt::{cs_flags, ControlParameters, CsInfo};
use serde::Serialize;

use crate::client::{self, parse_name};
use crate::output::{outln, print_fields, print_json, JsonFlag};

/// `nameway cs ...`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum CsCommand {
    /// Capacity, flags, entries, hits and misses (cs/info).
    Info(JsonFlag),
    /// Change the capacity or the admit/serve flags (cs/config).
    Config(ConfigArgs),
    /// Erase cached Data under a prefix (cs/erase).
    Erase(EraseArgs),
}

/// Arguments of `nameway cs config`.
#[derive(Debug, clap::Args)]
pub(crate) struct ConfigArgs {
    /// Capacity in packets.
    #[arg(long)]
    capacity: Option<u64>,
    /// Whether new Data is admitted into the CS.
    #[arg(long, value_enum)]
    admit: Option<Switch>,
    /// Whether Interests are served from the CS.
    #[arg(long, value_enum)]
    serve: Option<Switch>,
    /// The memory tier's replacement policy: lru, lfu or arc (decoupled store, namewayd).
    #[arg(long)]
    policy: Option<String>,
    /// The memory tier's size, e.g. 1GiB (decoupled store, namewayd).
    #[arg(long, value_parser = nameway_cs::parse_size)]
    memory: Option<u64>,
    /// The disk tier's size, e.g. 100GiB (decoupled store with a disk tier, namewayd).
    #[arg(long, value_parser = nameway_cs::parse_size)]
    disk: Option<u64>,
    #[command(flatten)]
    out: JsonFlag,
}

/// Arguments of `nameway cs erase`.
#[derive(Debug, clap::Args)]
pub(crate) struct EraseArgs {
    /// Name prefix.
    prefix: String,
    /// Erase at most this many entries.
    #[arg(long)]
    count: Option<u64>,
    #[command(flatten)]
    out: JsonFlag,
}

/// `on` / `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Switch {
    On,
    Off,
}

/// `nameway cs info --json`.
#[derive(Debug, Serialize)]
struct InfoView {
    capacity: u64,
    admit: bool,
    serve: bool,
    n_entries: u64,
    n_hits: u64,
    n_misses: u64,
    /// `decoupled` (namewayd's content-store server with the CS-list) or `inline`; absent for
    /// another forwarder.
    #[serde(skip_serializing_if = "Option::is_none")]
    store: Option<&'static str>,
    /// The memory tier's replacement policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    policy: Option<String>,
    /// The memory tier: entries, bytes, capacities, hits, misses, inserts, evictions.
    #[serde(skip_serializing_if = "Option::is_none")]
    memory: Option<serde_json::Value>,
    /// The disk tier, `null` when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    disk: Option<serde_json::Value>,
    /// CS-list hits the server answered with a miss.
    #[serde(skip_serializing_if = "Option::is_none")]
    filter_false_positives: Option<u64>,
    /// Everything else namewayd reports about the decoupled store (filter, refusals, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<serde_json::Value>,
}

/// `nameway cs config --json`: the configuration after the change.
#[derive(Debug, Serialize)]
struct ConfigView {
    capacity: Option<u64>,
    admit: Option<bool>,
    serve: Option<bool>,
    /// The decoupled store's memory-tier policy and tier sizes (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    policy: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    memory_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    disk_bytes: Option<u64>,
}

/// `nameway cs erase --json`.
#[derive(Debug, Serialize)]
struct EraseView {
    prefix: String,
    n_erased: u64,
}

/// Runs `nameway cs ...`.
///
/// # Errors
/// The forwarder cannot be reached or refuses the command, or an argument is invalid.
pub(crate) async fn run(transport: Option<&str>, cmd: &CsCommand) -> anyhow::Result<()> {
    let mut c = client::connect(transport).await?;
    match cmd {
        CsCommand::Info(out) => {
            let infos: Vec<CsInfo> = c.list("cs", "info").await?;
            let Some(info) = infos.first() else {
                bail!("the forwarder sent an empty cs/info dataset");
            };
            let mut view = InfoView {
                capacity: info.capacity,
                admit: info.flags & cs_flags::ENABLE_ADMIT != 0,
                serve: info.flags & cs_flags::ENABLE_SERVE != 0,
                n_entries: info.n_entries,
                n_hits: info.n_hits,
                n_misses: info.n_misses,
                store: None,
                policy: None,
                memory: None,
                disk: None,
                filter_false_positives: None,
                details: None,
            };
            // namewayd's own dataset; another forwarder (NFD) would not answer it.
            if c.is_nameway().await? {
                let tiers = c.dataset("cs", "tiers").await?;
                let t: serde_json::Value = serde_json::from_slice(&tiers)
                    .map_err(|e| anyhow::anyhow!("bad cs/tiers dataset: {e}"))?;
                if t["decoupled"] == true {
                    view.store = Some("decoupled");
                    view.policy = t["policy"].as_str().map(str::to_string);
                    view.memory = Some(t["memory"].clone());
                    view.disk = Some(t["disk"].clone());
                    view.filter_false_positives = t["filter_false_positives"].as_u64();
                    view.details = Some(t);
                } else {
                    view.store = Some("inline");
                    view.memory = Some(serde_json::json!({
                        "entries": info.n_entries,
                        "capacity_packets": info.capacity,
                        "hits": info.n_hits,
                        "misses": info.n_misses,
                    }));
                    view.disk = Some(serde_json::Value::Null);
                }
            }
            if out.json {
                return print_json(&view);
            }
            outln!("CS information:")?;
            print_fields(&[
                ("capacity", view.capacity.to_string()),
                ("admit", on_off(view.admit)),
                ("serve", on_off(view.serve)),
                ("nEntries", view.n_entries.to_string()),
                ("nHits", view.n_hits.to_string()),
                ("nMisses", view.n_misses.to_string()),
            ])?;
            if let (Some("decoupled"), Some(d)) = (view.store, &view.details) {
                let tier = |t: &serde_json::Value| {
                    if t.is_null() {
                        return "none".to_string();
                    }
                    format!(
                        "{} entries, {} of {} bytes, {} hits, {} misses, {} evictions",
                        t["entries"],
                        t["bytes"],
                        t["capacity_bytes"],
                        t["hits"],
                        t["misses"],
                        t["evictions"]
                    )
                };
                outln!("Decoupled store:")?;
                let mut fields = vec![
                    ("policy", d["policy"].as_str().unwrap_or("?").to_string()),
                    ("memory", tier(&d["memory"])),
                    ("disk", tier(&d["disk"])),
                    (
                        "filter",
                        format!(
                            "{} hits, {} misses, {} false positives ({} bytes, rate {})",
                            d["filter_hits"],
                            d["filter_misses"],
                            d["filter_false_positives"],
                            d["filter_bytes"],
                            d["filter_fp_rate"]
                        ),
                    ),
                    ("corruptDropped", d["corrupt_dropped"].to_string()),
                    (
                        "insertQueue",
                        format!(
                            "{} of {} bytes queued, {} Data not cached ({} bytes) because the store was behind",
                            d["insert_queue_bytes"],
                            d["insert_queue_limit_bytes"],
                            d["insert_drops"],
                            d["insert_drop_bytes"]
                        ),
                    ),
                ];
                if let Some(e) = d["disk_error"].as_str() {
                    fields.push(("diskError", e.to_string()));
                }
                print_fields(&fields)?;
            }
            Ok(())
        }
        CsCommand::Config(args) => {
            let (flags, mask) = flags_and_mask(args.admit, args.serve);
            let params = ControlParameters {
                capacity: args.capacity,
                flags: (mask != 0).then_some(flags),
                mask: (mask != 0).then_some(mask),
                cs_policy: args.policy.clone(),
                cs_memory_capacity: args.memory,
                cs_disk_capacity: args.disk,
                ..ControlParameters::default()
            };
            let done = c.command_ok("cs", "config", &params).await?;
            let view = ConfigView {
                capacity: done.capacity,
                admit: done.flags.map(|f| f & cs_flags::ENABLE_ADMIT != 0),
                serve: done.flags.map(|f| f & cs_flags::ENABLE_SERVE != 0),
                policy: done.cs_policy,
                memory_bytes: done.cs_memory_capacity,
                disk_bytes: done.cs_disk_capacity,
            };
            if args.out.json {
                return print_json(&view);
            }
            let tiers = match (&view.policy, view.memory_bytes, view.disk_bytes) {
                (Some(p), Some(m), Some(d)) => format!(" policy={p} memory={m}B disk={d}B"),
                _ => String::new(),
            };
            outln!(
                "cs config: capacity={} admit={} serve={}{tiers}",
                view.capacity.map_or_else(|| "?".into(), |c| c.to_string()),
                view.admit.map_or_else(|| "?".into(), on_off),
                view.serve.map_or_else(|| "?".into(), on_off),
            )?;
            Ok(())
        }
        CsCommand::Erase(args) => {
            let params = ControlParameters {
                name: Some(parse_name(&args.prefix)?),
                count: args.count,
                ..ControlParameters::default()
            };
            let done = c.command_ok("cs", "erase", &params).await?;
            let view = EraseView {
                prefix: done
                    .name
                    .map_or_else(|| args.prefix.clone(), |n| n.to_string()),
                n_erased: done.count.unwrap_or(0),
            };
            if args.out.json {
                return print_json(&view);
            }
            outln!("cs erase: prefix={} erased={}", view.prefix, view.n_erased)?;
            Ok(())
        }
    }
}

/// Flags and Mask for `cs/config` from the two switches.
fn flags_and_mask(admit: Option<Switch>, serve: Option<Switch>) -> (u64, u64) {
    let mut flags = 0;
    let mut mask = 0;
    for (switch, bit) in [
        (admit, cs_flags::ENABLE_ADMIT),
        (serve, cs_flags::ENABLE_SERVE),
    ] {
        if let Some(s) = switch {
            mask |= bit;
            if s == Switch::On {
                flags |= bit;
            }
        }
    }
    (flags, mask)
}

fn on_off(b: bool) -> String {
    if b { "on" } else { "off" }.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_become_flags_and_mask() {
        assert_eq!(flags_and_mask(None, None), (0, 0));
        assert_eq!(flags_and_mask(Some(Switch::On), None), (1, 1));
        assert_eq!(flags_and_mask(Some(Switch::Off), Some(Switch::On)), (2, 3));
    }
}
