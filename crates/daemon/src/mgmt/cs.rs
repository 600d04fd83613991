//! The content-store manager (`cs/config`, `cs/erase`; datasets `cs/info` and ours,
//! `cs/tiers`), as NFD's `CsManager`, also driving the decoupled store's server.

use nameway_cs::CsInfo as ServerInfo;
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
                    // Shard by shard, so the limit holds for the store as a whole.
                    None => {
                        let here = fw.cs_erase_here(&name, limit);
                        here + self
                            .peers
                            .as_ref()
                            .map_or(0, |p| p.cs_erase(&name, limit.saturating_sub(here)))
                    }
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
            // Every shard together (each holds its share).
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
            capacity: Some(fw.cs_capacity_total() as u64),
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
        // Every shard's store together (the others' as of management's last refresh).
        let st = fw.status();
        CsInfo {
            capacity: fw.cs_capacity_total() as u64,
            flags: cs_flags(fw),
            n_entries: st.n_cs_entries as u64,
            n_hits: st.cs.hits,
            n_misses: st.cs.misses,
        }
    }

    /// The decoupled store's figures: both tiers and the insert queue from the server (as it
    /// last published them: never waits), the filter from the forwarder.
    pub(crate) fn cs_tiers(&self, fw: &Forwarder) -> Option<Tiers> {
        let (client, _) = self.cs.as_ref()?;
        let info = client.info()?;
        Some(Tiers::new(&info, fw, client.insert_queue()))
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

crate::stats! {
    /// One tier of the decoupled store (label `tier`: memory or disk).
    pub struct Tier {
        /// Packets held.
        pub entries: u64 = gauge("nameway_cs_tier_entries"),
        /// Bytes used.
        pub bytes: u64 = gauge("nameway_cs_tier_bytes"),
        /// Capacity in packets.
        pub capacity_packets: u64 = gauge("nameway_cs_tier_capacity_entries"),
        /// Capacity in bytes.
        pub capacity_bytes: u64 = gauge("nameway_cs_tier_capacity_bytes"),
        /// Look-ups answered.
        pub hits: u64 = counter("nameway_cs_tier_hits"),
        /// Look-ups not answered.
        pub misses: u64 = counter("nameway_cs_tier_misses"),
        /// Packets written.
        pub inserts: u64 = counter("nameway_cs_tier_inserts"),
        /// Packets evicted.
        pub evictions: u64 = counter("nameway_cs_tier_evictions"),
    }
}

crate::stats! {
    /// `cs/tiers`: the decoupled store's tiers, its filter (the CS-list), its insert queue and
    /// its policy, as `nameway cs info --json` shows them.
    pub struct Tiers {
        /// Whether the decoupled store runs.
        pub decoupled: bool = gauge("nameway_cs_decoupled"),
        /// The memory tier's policy.
        pub policy: String = info("nameway_cs_policy_info"; by "policy")
            help "The memory tier's replacement policy",
        /// The memory tier.
        pub memory: Tier = json,
        /// The disk tier; `null` when there is none.
        pub disk: Option<Tier> = json,
        /// Why a configured disk tier does not run.
        pub disk_error: Option<String> = json,
        /// Disk tiers refused since start.
        pub disk_refusals: u64 = counter("nameway_cs_disk_refusals"),
        /// Records dropped for a bad checksum.
        pub corrupt_dropped: u64 = counter("nameway_cs_corrupt_dropped"),
        /// CS-list look-ups that went to the server.
        pub filter_hits: u64 = counter("nameway_cs_filter_lookups", "result" = "hit")
            help "CS-list look-ups: hit (went to the server), miss (went straight on), \
                  false-positive (a hit the server answered with a miss)",
        /// CS-list look-ups that went straight on.
        pub filter_misses: u64 = counter("nameway_cs_filter_lookups", "result" = "miss"),
        /// CS-list hits the server answered with a miss.
        pub filter_false_positives: u64 = counter("nameway_cs_filter_lookups", "result" = "false-positive"),
        /// Memory the CS-list uses.
        pub filter_bytes: u64 = gauge("nameway_cs_filter_bytes"),
        /// The CS-list's configured false-positive rate.
        pub filter_fp_rate: f64 = gauge("nameway_cs_filter_fp_rate"),
        /// Bytes of Data queued toward the server now.
        pub insert_queue_bytes: u64 = gauge("nameway_cs_insert_queue_bytes"),
        /// The queue's bound (`[cs] insert_queue`).
        pub insert_queue_limit_bytes: u64 = gauge("nameway_cs_insert_queue_limit_bytes"),
        /// Data not cached because the insert queue was full (the server was behind).
        pub insert_drops: u64 = counter("nameway_cs_insert_drops"),
        /// Their bytes.
        pub insert_drop_bytes: u64 = counter("nameway_cs_insert_drop_bytes"),
        /// Look-ups the server did not answer within 50 ms: their Interests went on as misses.
        pub lookups_late: u64 = counter("nameway_cs_lookups_late"),
    }
}

impl Tier {
    fn new(t: &nameway_cs::TierInfo) -> Self {
        Self {
            entries: t.entries,
            bytes: t.bytes,
            capacity_packets: t.capacity_packets,
            capacity_bytes: t.capacity_bytes,
            hits: t.stats.hits,
            misses: t.stats.misses,
            inserts: t.stats.inserts,
            evictions: t.stats.evictions,
        }
    }
}

impl Tiers {
    /// From the server's figures, its insert queue and the forwarder's filter.
    pub fn new(info: &ServerInfo, fw: &Forwarder, queue: crate::cs_server::InsertQueue) -> Self {
        let f = fw
            .cs_filter()
            .map(|f| (f.counters(), f.size_bytes(), f.fp_rate()));
        Self {
            decoupled: true,
            policy: info.policy.to_string(),
            memory: Tier::new(&info.memory),
            disk: info.disk.as_ref().map(Tier::new),
            disk_error: info.disk_error.clone(),
            disk_refusals: info.disk_refusals,
            corrupt_dropped: info.disk.as_ref().map_or(0, |d| d.stats.corrupt_dropped),
            filter_hits: f.map_or(0, |f| f.0.hits),
            filter_misses: f.map_or(0, |f| f.0.misses),
            filter_false_positives: f.map_or(0, |f| f.0.false_positives),
            filter_bytes: f.map_or(0, |f| f.1 as u64),
            filter_fp_rate: f.map_or(0.0, |f| f.2),
            insert_queue_bytes: queue.queued_bytes,
            insert_queue_limit_bytes: queue.limit_bytes,
            insert_drops: queue.drops,
            insert_drop_bytes: queue.drop_bytes,
            lookups_late: fw.external_cs_counters().map_or(0, |c| c.2),
        }
    }

    /// Every family: the store's, then each tier's under the label `tier`.
    pub fn all_metrics(&self, out: &mut crate::metrics::Families) {
        self.metrics(&[], out);
        self.memory.metrics(&[("tier", "memory".to_owned())], out);
        if let Some(disk) = &self.disk {
            disk.metrics(&[("tier", "disk".to_owned())], out);
        }
    }

    /// Names stored (the disk holds everything the memory tier holds when it runs).
    pub fn entries(&self) -> u64 {
        self.disk
            .as_ref()
            .map_or(self.memory.entries, |d| d.entries.max(self.memory.entries))
    }

    /// Interests answered by the store.
    pub fn hits(&self) -> u64 {
        self.memory.hits + self.disk.as_ref().map_or(0, |d| d.hits)
    }

    /// Interests the store could not answer: filter misses and false positives.
    pub fn misses(&self) -> u64 {
        self.filter_misses + self.filter_false_positives
    }
}
