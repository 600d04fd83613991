//! The cache policy the controller sends (`cs` objects, docs/controller.md "Cache policy"):
//! applied to the forwarder between two bursts, kept in `state_dir/cs.policy` (written to a
//! temporary file and renamed) and applied again at start. Tier sizes go to the decoupled
//! store ([`apply_tiers`]).

use std::sync::atomic::Ordering;

use nameway_ctl::cache_policy::CsDocument;
use nameway_fw::{CsPriority, CsRule, Forwarder, Partition};

use super::stats::{AgentCounters, TierRefusal};
use super::store::{StateDir, StateError};
use crate::config::ByteSize;
use crate::mgmt::Management;

const FILE: &str = "cs.policy";

/// Applies `doc`: the store's capacity and flags when it sets them, then the per-prefix rules
/// and the placement, which replace the ones in force.
///
/// # Errors
/// A rule the forwarder refuses (a prefix too long); nothing of the rules is then changed.
pub fn apply(fw: &mut Forwarder, doc: &CsDocument) -> Result<(), String> {
    let rules: Vec<_> = doc
        .prefixes
        .iter()
        .map(|p| {
            let priority = if p.low_priority {
                CsPriority::Low
            } else {
                CsPriority::Normal
            };
            (
                p.prefix.clone(),
                CsRule {
                    admit: p.admit,
                    priority,
                },
            )
        })
        .collect();
    let partition = doc.partition.map(|(index, k)| Partition { index, k });
    fw.set_cs_policy(&rules, partition)
        .map_err(|e| e.to_string())?;
    if let Some(c) = doc.capacity {
        fw.set_cs_capacity(usize::try_from(c).unwrap_or(usize::MAX));
    }
    if let Some(a) = doc.admit {
        fw.set_cs_admit(a);
    }
    if let Some(s) = doc.serve {
        fw.set_cs_serve(s);
    }
    Ok(())
}

/// Applies the tier sizes of `doc` to the decoupled store (`[cs]`), which resizes its tiers at
/// run time: the memory tier's packets (`capacity`) and bytes, the disk tier's bytes. What
/// cannot be applied without a restart (no decoupled store, no disk tier) is refused, counted
/// by reason and logged; the rest is applied.
pub fn apply_tiers(mgmt: &mut Management, doc: &CsDocument, counters: &AgentCounters) {
    let wanted = [(doc.memory_bytes, "memory"), (doc.disk_bytes, "disk")];
    let Some((client, config)) = mgmt.cs_server() else {
        for (_, tier) in wanted.iter().filter(|(b, _)| b.is_some()) {
            counters.refused_tier(TierRefusal::NoDecoupledStore);
            tracing::warn!(
                tier,
                "cache policy: tier size not applied: this forwarder runs no decoupled content store ([cs] decoupled or disk_path; needs a restart)"
            );
        }
        return;
    };
    let mut changed = false;
    if let Some(c) = doc.capacity {
        config.capacity = usize::try_from(c).unwrap_or(usize::MAX);
        changed = true;
    }
    if let Some(b) = doc.memory_bytes {
        config.memory_capacity = ByteSize(b);
        counters.tiers_applied.fetch_add(1, Ordering::Relaxed);
        changed = true;
    }
    if let Some(b) = doc.disk_bytes {
        let has_disk = !config.disk_path.as_os_str().is_empty()
            && client.info().is_none_or(|i| i.disk.is_some());
        if has_disk {
            config.disk_capacity = ByteSize(b);
            counters.tiers_applied.fetch_add(1, Ordering::Relaxed);
            changed = true;
        } else {
            counters.refused_tier(TierRefusal::NoDiskTier);
            tracing::warn!(
                bytes = b,
                "cache policy: disk tier size not applied: the content store has no disk tier ([cs] disk_path; opened at start only)"
            );
        }
    }
    if changed {
        client.reconfigure(config);
        tracing::info!(
            memory = config.memory_capacity.0,
            disk = config.disk_capacity.0,
            packets = config.capacity,
            "content store tiers set by the controller's cache policy"
        );
    }
}

/// Keeps the applied version and document.
///
/// # Errors
/// [`StateError::Io`].
pub fn save(state: &StateDir, version: u64, doc: &CsDocument) -> Result<(), StateError> {
    let text = format!("version {version}\n{}", doc.encode());
    state.write_atomically(FILE, text.as_bytes())
}

/// The version and document kept, if any.
///
/// # Errors
/// A file that exists but is not what [`save`] wrote.
pub fn load(state: &StateDir) -> Result<Option<(u64, CsDocument)>, StateError> {
    let Some(text) = state.read_optional(FILE)? else {
        return Ok(None);
    };
    let bad = |why: String| StateError::Format {
        path: state.file(FILE),
        why,
    };
    let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
    let version = first
        .strip_prefix("version ")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| bad(format!("first line {first:?}")))?;
    let doc = CsDocument::decode(rest).map_err(|e| bad(e.to_string()))?;
    Ok(Some((version, doc)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_survives_a_restart_and_a_damaged_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::open(dir.path()).unwrap();
        assert!(load(&state).unwrap().is_none());
        let doc = CsDocument::decode("capacity 10\nprefix no-admit normal /a\n").unwrap();
        save(&state, 4, &doc).unwrap();
        assert_eq!(load(&state).unwrap(), Some((4, doc)));
        std::fs::write(dir.path().join(FILE), "version x\n").unwrap();
        assert!(load(&state).is_err());
    }
}
