//! The status manager: `status/general` (NFD's ForwarderStatus), and ours, `status/counters`
//! (every forwarder-wide counter as JSON); and the [`Snapshot`] that `/metrics`, `/api/status`
//! and the status page show.
//!
//! The driver takes a snapshot only when asked (a scrape, a page poll, the once-a-second
//! history sample, a `status/counters` request), between two bursts of packets: the counters
//! stay plain integers owned by the forwarding thread, and nothing on the packet path takes a
//! lock or touches an atomic for it. Every figure is declared once, with [`crate::stats!`].

use std::collections::BTreeMap;

use nameway_face::FaceSystem;
use nameway_fw::{DropReason, Forwarder};
use nameway_wire::mgmt::ForwarderStatus;
use serde::Serialize;

use super::cs::Tiers;
use super::faces::{link_drops, FaceStats};
use super::security::NeighbourView;
use super::{Dataset, Management};
use crate::metrics::{Families, Kind, Spec};

crate::stats! {
    /// The forwarding core, and the totals of every face since start.
    pub struct ForwarderStats {
        /// Interests received.
        pub n_in_interests: u64 = counter("nameway_forwarder_packets", "direction" = "in", "type" = "interest")
            help "Network packets through the forwarding core",
        /// Data received.
        pub n_in_data: u64 = counter("nameway_forwarder_packets", "direction" = "in", "type" = "data"),
        /// Nacks received.
        pub n_in_nacks: u64 = counter("nameway_forwarder_packets", "direction" = "in", "type" = "nack"),
        /// Interests sent.
        pub n_out_interests: u64 = counter("nameway_forwarder_packets", "direction" = "out", "type" = "interest"),
        /// Data sent.
        pub n_out_data: u64 = counter("nameway_forwarder_packets", "direction" = "out", "type" = "data"),
        /// Nacks sent.
        pub n_out_nacks: u64 = counter("nameway_forwarder_packets", "direction" = "out", "type" = "nack"),
        /// Bytes of network packets received, over every face since start (closed ones too).
        pub in_bytes: u64 = counter("nameway_forwarder_bytes", "direction" = "in")
            help "Bytes of network packets through the forwarding core, every face since start",
        /// Bytes of network packets sent, over every face since start (closed ones too).
        pub out_bytes: u64 = counter("nameway_forwarder_bytes", "direction" = "out"),
        /// PIT entries satisfied by Data.
        pub n_satisfied_interests: u64 = counter("nameway_forwarder_satisfied_interests"),
        /// PIT entries that expired unsatisfied.
        pub n_unsatisfied_interests: u64 = counter("nameway_forwarder_unsatisfied_interests"),
        /// Packets dropped by the forwarding core, by reason (every reason, zeros included).
        pub drops: BTreeMap<&'static str, u64> = counter("nameway_forwarder_drops"; by "reason"),
        /// Packets dropped by the faces' link layer, by reason, over every face since start
        /// (closed ones too, so the totals never go back when a face closes).
        pub link_drops: BTreeMap<&'static str, u64> = counter("nameway_link_drops"; by "reason"),
        /// Pending Interest Table entries.
        pub pit_entries: usize = gauge("nameway_pit_entries"),
        /// Most PIT entries.
        pub pit_capacity: usize = gauge("nameway_pit_capacity_entries"),
        /// PIT entries created.
        pub pit_inserts: u64 = counter("nameway_pit_inserts"),
        /// FIB entries.
        pub fib_entries: usize = gauge("nameway_fib_entries"),
        /// Packets in the in-process content store (the decoupled store's tiers are in `cs`).
        pub cs_entries: usize = gauge("nameway_cs_entries"),
        /// Content store capacity in packets.
        pub cs_capacity: usize = gauge("nameway_cs_capacity_entries"),
        /// Interests answered by the in-process content store.
        pub cs_hits: u64 = counter("nameway_cs_hits"),
        /// In-process content store look-ups that found nothing.
        pub cs_misses: u64 = counter("nameway_cs_misses"),
        /// Packets admitted to the in-process content store.
        pub cs_inserts: u64 = counter("nameway_cs_inserts"),
        /// Packets evicted from the in-process content store.
        pub cs_evictions: u64 = counter("nameway_cs_evictions"),
        /// Dead-nonce list records.
        pub dnl_entries: usize = gauge("nameway_dead_nonce_entries"),
        /// Dead-nonce records dropped early because the list was full: the adding face's own
        /// oldest (own) or the oldest of the face holding the most (heaviest).
        pub dnl_evicted: BTreeMap<&'static str, u64> = counter("nameway_dead_nonce_evictions"; by "whose"),
        /// Strategy choice entries.
        pub strategy_choices: usize = gauge("nameway_strategy_choice_entries"),
    }
}

crate::stats! {
    /// The face system: faces opened and closed.
    pub struct FaceSystemStats {
        /// Faces open.
        pub faces: usize = gauge("nameway_faces"),
        /// Faces created since start.
        pub faces_created: u64 = counter("nameway_faces_created"),
        /// Faces closed since start, by reason.
        pub faces_closed: BTreeMap<&'static str, u64> = counter("nameway_faces_closed"; by "reason"),
        /// Connections a listener failed to accept (mostly: out of file descriptors).
        pub accept_errors: u64 = counter("nameway_accept_errors"),
        /// Datagrams from unknown peers on UDP sockets that create no on-demand faces.
        pub udp_unknown_peer: u64 = counter("nameway_udp_unknown_peer_datagrams"),
        /// Reconnections made by permanent TCP faces.
        pub reconnects: u64 = counter("nameway_face_reconnects"),
        /// Accepted connections placed on the shard of their first packet
        /// (`[forwarder] placement = "traffic"`).
        pub placed_by_traffic: u64 = counter("nameway_faces_placed_by_traffic"),
    }
}

/// `status/counters` (ours): every forwarder-wide counter, as JSON.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Counters {
    /// The forwarding core.
    pub forwarder: ForwarderStats,
    /// The face system.
    pub face_system: FaceSystemStats,
    /// The decoupled content store, when it runs.
    pub cs: Option<Tiers>,
    /// The controller's agent, when `[controller]` is on.
    pub controller: Option<crate::agent::stats::AgentStats>,
    /// Table sizes that NFD's datasets give only by listing every entry.
    pub tables: TableCounts,
}

/// The sizes `nameway status` shows, counted in the daemon: with 10,000 faces, fetching
/// `faces/list`, `fib/list` and `rib/list` only to count them takes hundreds of milliseconds.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct TableCounts {
    /// RIB entries (name prefixes with at least one route).
    pub rib_entries: usize,
    /// Routes over all RIB entries.
    pub routes: usize,
    /// Next hops over all FIB entries.
    pub next_hops: usize,
}

/// Everything the HTTP listener shows, taken at one instant.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Snapshot {
    /// `nameway X.Y.Z`.
    pub version: String,
    /// Wall-clock time of the snapshot (ms since the Unix epoch).
    pub wall_ms: u64,
    /// Seconds since the daemon started.
    pub uptime_s: f64,
    /// The forwarding core's counters and table sizes.
    pub forwarder: ForwarderStats,
    /// One entry per face, by id.
    pub faces: Vec<FaceStats>,
    /// The FIB: prefix and next hops.
    pub routes: Vec<RouteStats>,
    /// Strategy choices: prefix and strategy.
    pub strategies: Vec<StrategyStats>,
    /// Faces opened and closed.
    pub face_system: FaceSystemStats,
    /// Secure links (hop-by-hop encryption), when `[security]` is on.
    pub neighbours: Vec<NeighbourView>,
    /// The decoupled content store (both tiers, the filter, the insert queue), when it runs.
    pub cs: Option<Tiers>,
    /// Secure routing, when `[routing]` is on.
    pub routing: Option<crate::routing::stats::RoutingStats>,
    /// The controller's agent, when `[controller]` is on.
    pub controller: Option<crate::agent::stats::AgentStats>,
    /// Per-shard dispatch counters, when `[forwarder] threads` is above 1.
    pub shards: Vec<crate::driver_shards::ShardStats>,
    /// Wake-up coalescing, when `[forwarder] coalesce` is not `"off"`.
    pub coalesce: Option<crate::coalesce::CoalesceStats>,
}

/// One FIB entry.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RouteStats {
    /// Name prefix.
    pub prefix: String,
    /// Next hops: face and cost.
    pub next_hops: Vec<NextHopStats>,
}

/// One next hop.
#[derive(Clone, Debug, Default, Serialize)]
pub struct NextHopStats {
    /// FaceId.
    pub face: u64,
    /// Routing cost.
    pub cost: u64,
}

/// One strategy choice.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StrategyStats {
    /// Name prefix.
    pub prefix: String,
    /// Strategy instance name.
    pub strategy: String,
}

/// Adds one gauge sample of `value` to the family `name`.
fn gauge(
    out: &mut Families,
    name: &'static str,
    help: &str,
    value: &dyn crate::metrics::Value,
    labels: &[(&'static str, String)],
) {
    let spec = Spec {
        family: name,
        fixed: &[],
        by: None,
    };
    out.add(Kind::Gauge, help, value, labels, &[spec]);
}

impl Snapshot {
    /// Every metric family of the snapshot, in the order `/metrics` shows them.
    pub fn families(&self) -> Families {
        let mut out = Families::default();
        let version = [("version", self.version.clone())];
        gauge(
            &mut out,
            "nameway_build_info",
            "The forwarder's version",
            &1u64,
            &version,
        );
        gauge(
            &mut out,
            "nameway_uptime_seconds",
            "Seconds since the forwarder started",
            &self.uptime_s,
            &[],
        );
        self.forwarder.metrics(&[], &mut out);
        for c in &self.strategies {
            let labels = [
                ("prefix", c.prefix.clone()),
                ("strategy", c.strategy.clone()),
            ];
            gauge(
                &mut out,
                "nameway_strategy_choice_info",
                "The strategy chosen for a prefix",
                &1u64,
                &labels,
            );
        }
        self.face_system.metrics(&[], &mut out);
        for f in &self.faces {
            f.metrics(&[("face", f.id.to_string())], &mut out);
        }
        for n in &self.neighbours {
            n.metrics(&[("face", n.face_id.to_string())], &mut out);
        }
        if let Some(cs) = &self.cs {
            cs.all_metrics(&mut out);
        }
        for (i, sh) in self.shards.iter().enumerate() {
            sh.metrics(&[("shard", i.to_string())], &mut out);
        }
        if let Some(routing) = &self.routing {
            routing.metrics(&[], &mut out);
        }
        if let Some(c) = &self.controller {
            c.metrics(&[], &mut out);
        }
        if let Some(c) = &self.coalesce {
            c.metrics(&[], &mut out);
        }
        out
    }

    /// Content store hits and misses: of the decoupled store when it runs (the in-process
    /// store is then unused), else of the in-process one.
    pub fn store_hits_misses(&self) -> (u64, u64) {
        match &self.cs {
            Some(t) => (t.hits(), t.misses()),
            None => (self.forwarder.cs_hits, self.forwarder.cs_misses),
        }
    }
}

impl Management {
    /// `status/<verb>` datasets.
    pub(super) fn status_dataset(
        &self,
        fw: &Forwarder,
        faces: &FaceSystem,
        verb: &str,
    ) -> Option<Dataset> {
        match verb {
            "general" => Some(Ok(self.general_status(fw).encode().to_vec())),
            "counters" => {
                let counters = Counters {
                    forwarder: self.forwarder_stats(fw, faces),
                    face_system: face_system_stats(faces),
                    cs: self.cs_tiers(fw),
                    controller: self.agent.as_ref().map(|a| a.stats()),
                    tables: TableCounts {
                        rib_entries: self.rib.len(),
                        routes: self.rib.entries().map(|(_, r)| r.len()).sum(),
                        next_hops: fw.fib_entries().map(|(_, h)| h.len()).sum(),
                    },
                };
                Some(Ok(serde_json::to_vec(&counters).unwrap_or_default()))
            }
            _ => None,
        }
    }

    fn general_status(&self, fw: &Forwarder) -> ForwarderStatus {
        let st = fw.status();
        ForwarderStatus {
            nfd_version: format!("nameway {}", env!("CARGO_PKG_VERSION")),
            start_timestamp: self.start_ms,
            current_timestamp: crate::wall_ms(),
            n_name_tree_entries: 0,
            n_fib_entries: st.n_fib_entries as u64,
            n_pit_entries: st.n_pit_entries as u64,
            n_measurements_entries: fw.n_measurements_entries() as u64,
            n_cs_entries: st.n_cs_entries as u64,
            n_in_interests: st.counters.n_in_interests,
            n_in_data: st.counters.n_in_data,
            n_in_nacks: st.counters.n_in_nacks,
            n_out_interests: st.counters.n_out_interests,
            n_out_data: st.counters.n_out_data,
            n_out_nacks: st.counters.n_out_nacks,
            n_satisfied_interests: st.counters.n_satisfied_interests,
            n_unsatisfied_interests: st.counters.n_unsatisfied_interests,
        }
    }

    /// Bytes received and sent by a face that has closed (the forwarder forgets a face's
    /// counters when it goes), so the byte totals never go backwards.
    pub fn add_closed_bytes(&mut self, in_bytes: u64, out_bytes: u64) {
        self.closed_bytes.0 += in_bytes;
        self.closed_bytes.1 += out_bytes;
    }

    /// The forwarding core's counters, with totals over every face since start.
    fn forwarder_stats(&self, fw: &Forwarder, faces: &FaceSystem) -> ForwarderStats {
        let st = fw.status();
        let c = &st.counters;
        let (open_in, open_out) = fw.faces().fold((0, 0), |(i, o), f| {
            let c = fw.face_counters(f.id()).unwrap_or_default();
            (i + c.n_in_bytes, o + c.n_out_bytes)
        });
        let mut link = link_drops(&faces.counters().closed_faces, true);
        faces.for_each_counters(|c| {
            for (reason, n) in link_drops(c, false) {
                *link.entry(reason).or_default() += n;
            }
        });
        ForwarderStats {
            n_in_interests: c.n_in_interests,
            n_in_data: c.n_in_data,
            n_in_nacks: c.n_in_nacks,
            n_out_interests: c.n_out_interests,
            n_out_data: c.n_out_data,
            n_out_nacks: c.n_out_nacks,
            in_bytes: self.closed_bytes.0 + open_in,
            out_bytes: self.closed_bytes.1 + open_out,
            n_satisfied_interests: c.n_satisfied_interests,
            n_unsatisfied_interests: c.n_unsatisfied_interests,
            drops: DropReason::ALL
                .iter()
                .map(|&r| (r.as_str(), c.drops.get(r)))
                .collect(),
            link_drops: link,
            pit_entries: st.n_pit_entries,
            pit_capacity: st.pit.capacity,
            pit_inserts: st.pit.inserts,
            fib_entries: st.n_fib_entries,
            cs_entries: st.n_cs_entries,
            cs_capacity: st.cs.capacity,
            cs_hits: st.cs.hits,
            cs_misses: st.cs.misses,
            cs_inserts: st.cs.inserts,
            cs_evictions: st.cs.evictions,
            dnl_entries: st.n_dead_nonces,
            dnl_evicted: [
                ("own", st.dnl.evicted_own),
                ("heaviest", st.dnl.evicted_heaviest),
            ]
            .into_iter()
            .collect(),
            strategy_choices: st.n_strategy_choice_entries,
        }
    }

    /// Takes a snapshot of everything for the HTTP listener.
    pub fn snapshot(&self, fw: &Forwarder, faces: &FaceSystem, uptime_s: f64) -> Snapshot {
        let routes = fw
            .fib_entries()
            .map(|(name, hops)| RouteStats {
                prefix: name.to_string(),
                next_hops: hops
                    .iter()
                    .map(|h| NextHopStats {
                        face: h.face.0,
                        cost: h.cost,
                    })
                    .collect(),
            })
            .collect();
        let strategies = fw
            .strategy_choices()
            .map(|(prefix, strategy)| StrategyStats {
                prefix: prefix.to_string(),
                strategy: strategy.to_string(),
            })
            .collect();
        Snapshot {
            version: format!("nameway {}", env!("CARGO_PKG_VERSION")),
            wall_ms: crate::wall_ms(),
            uptime_s,
            forwarder: self.forwarder_stats(fw, faces),
            faces: super::faces::face_stats(fw, faces),
            routes,
            strategies,
            face_system: face_system_stats(faces),
            neighbours: super::security::neighbour_views(faces),
            cs: self.cs_tiers(fw),
            routing: None,
            controller: self.agent.as_ref().map(|a| a.stats()),
            shards: Vec::new(),
            coalesce: None,
        }
    }
}

/// The face system's own counters.
fn face_system_stats(faces: &FaceSystem) -> FaceSystemStats {
    let sc = faces.counters();
    FaceSystemStats {
        faces: faces.count(),
        faces_created: sc.faces_created,
        faces_closed: [
            ("peer", sc.closed_peer),
            ("destroyed", sc.closed_destroyed),
            ("idle", sc.closed_idle),
            ("too-large", sc.closed_too_large),
            ("malformed", sc.closed_malformed),
            ("unknown-type", sc.closed_unknown_type),
            ("io", sc.closed_io),
            ("shutdown", sc.closed_shutdown),
        ]
        .into_iter()
        .collect(),
        accept_errors: sc.accept_errors,
        udp_unknown_peer: sc.udp_unknown_peer,
        reconnects: sc.reconnects,
        placed_by_traffic: sc.placed_by_traffic,
    }
}
