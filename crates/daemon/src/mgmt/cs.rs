//! The content-store manager (`cs/config`, `cs/erase`; datasets `cs/info` and ours,
//! `cs/tiers`), as NFD's `CsManager`, also driving the decoupled store's server.

use nameway_fw::Forwarder;
use nameway_wire::mgmt::{self, ControlParameters, CsInfo};

use super::{Dataset, Management, Outcome, Request};
use crate::config::ByteSize;

impl Management {
    /// `cs/<verb>`.
    pub(super) fn cs_command(
        &mut self,
        fw: &mut Forwarder,
        req: &Request<'_>,
        verb: &str,
        p: ControlParameters,
    ) -> Outcome {
        match verb {
            "config" => self.cs_config(fw, req, &p),
            "erase" => {
                let Some(name) = p.name.clone() else {
                    return self.respond(req.interest, 400, "Name is required", &p);
                };
                let limit = p
                    .count
                    .map_or(usize::MAX, |c| usize::try_from(c).unwrap_or(usize::MAX));
                let erased = match &self.cs {
                    Some((client, _)) => client.erase(&name, limit).unwrap_or(0),
                    None => fw.cs_erase(&name, limit),
                };
                let mut body = ControlParameters::with_name(name);
                body.count = Some(erased as u64);
                if p.count.is_some_and(|c| erased as u64 >= c) {
                    body.capacity = p.count;
                }
                self.respond(req.interest, 200, "OK", &body)
            }
            _ => Outcome::Nothing,
        }
    }

    fn cs_config(
        &mut self,
        fw: &mut Forwarder,
        req: &Request<'_>,
        p: &ControlParameters,
    ) -> Outcome {
        let tiers =
            p.cs_policy.is_some() || p.cs_memory_capacity.is_some() || p.cs_disk_capacity.is_some();
        if tiers {
            if let Err(why) = self.reconfigure_tiers(p) {
                return self.respond(req.interest, 409, why, p);
            }
        }
        if let Some(c) = p.capacity {
            let capacity = usize::try_from(c).unwrap_or(usize::MAX);
            fw.set_cs_capacity(capacity);
            if let Some((client, config)) = &mut self.cs {
                config.capacity = capacity;
                client.reconfigure(config);
            }
        }
        let mask = p.mask.unwrap_or(0);
        let flags = p.flags.unwrap_or(0);
        if mask & mgmt::cs_flags::ENABLE_ADMIT != 0 {
            fw.set_cs_admit(flags & mgmt::cs_flags::ENABLE_ADMIT != 0);
        }
        if mask & mgmt::cs_flags::ENABLE_SERVE != 0 {
            fw.set_cs_serve(flags & mgmt::cs_flags::ENABLE_SERVE != 0);
        }
        let mut body = ControlParameters {
            capacity: Some(fw.content_store().capacity() as u64),
            flags: Some(cs_flags(fw)),
            ..ControlParameters::default()
        };
        if let Some((_, config)) = &self.cs {
            body.cs_policy = Some(config.policy.clone());
            body.cs_memory_capacity = Some(config.memory_capacity.0);
            body.cs_disk_capacity = Some(config.disk_capacity.0);
        }
        self.respond(req.interest, 200, "OK", &body)
    }

    /// Applies a new policy and tier sizes to the content-store server.
    fn reconfigure_tiers(&mut self, p: &ControlParameters) -> Result<(), &'static str> {
        let Some((client, config)) = &mut self.cs else {
            return Err("Policy and tier sizes need the decoupled content store ([cs] decoupled or disk_path)");
        };
        if let Some(policy) = &p.cs_policy {
            if policy.parse::<nameway_cs::PolicyKind>().is_err() {
                return Err("Unknown policy (lru, lfu or arc)");
            }
            config.policy.clone_from(policy);
        }
        if let Some(bytes) = p.cs_memory_capacity {
            config.memory_capacity = ByteSize(bytes);
        }
        if let Some(bytes) = p.cs_disk_capacity {
            config.disk_capacity = ByteSize(bytes);
        }
        client.reconfigure(config);
        tracing::info!(
            policy = %config.policy,
            memory = config.memory_capacity.0,
            disk = config.disk_capacity.0,
            "content store tiers reconfigured"
        );
        Ok(())
    }

    /// `cs/<verb>` datasets.
    pub(super) fn cs_dataset(&self, fw: &Forwarder, verb: &str) -> Option<Dataset> {
        Some(Ok(match verb {
            "info" => self.cs_info(fw).encode().to_vec(),
            // Ours (not NFD's): both tiers and the filter, as JSON.
            "tiers" => {
                let tiers = self.cs_tiers(fw).unwrap_or_default();
                serde_json::to_vec(&tiers).unwrap_or_default()
            }
            _ => return None,
        }))
    }

    /// NFD's CsInfo: of the decoupled store's tiers when it runs, else of the in-process store.
    fn cs_info(&self, fw: &Forwarder) -> CsInfo {
        if let (Some((_, config)), Some(t)) = (&self.cs, self.cs_tiers(fw)) {
            return CsInfo {
                capacity: config.capacity as u64,
                flags: cs_flags(fw),
                n_entries: t.entries(),
                n_hits: t.hits(),
                n_misses: t.misses(),
            };
        }
        let cs = fw.content_store();
        let st = fw.status();
        CsInfo {
            capacity: cs.capacity() as u64,
            flags: cs_flags(fw),
            n_entries: cs.len() as u64,
            n_hits: st.cs.hits,
            n_misses: st.cs.misses,
        }
    }

    /// The decoupled store's figures: both tiers from the server, the filter from the forwarder.
    pub(crate) fn cs_tiers(&self, fw: &Forwarder) -> Option<crate::cs_server::Tiers> {
        let (client, _) = self.cs.as_ref()?;
        let info = client.info()?;
        Some(crate::cs_server::Tiers::new(&info, fw))
    }
}

/// The CS flags (admit, serve) as NFD encodes them.
fn cs_flags(fw: &Forwarder) -> u64 {
    let mut flags = 0;
    if fw.cs_admit() {
        flags |= mgmt::cs_flags::ENABLE_ADMIT;
    }
    if fw.cs_serve() {
        flags |= mgmt::cs_flags::ENABLE_SERVE;
    }
    flags
}
