//! A snapshot of everything the forwarder counts, for the HTTP listener (`/metrics`,
//! `/api/status`, the status page).
//!
//! The driver takes a snapshot only when asked (a scrape, a page poll, the once-a-second history
//! sample), between two bursts of packets: the counters stay plain integers owned by the
//! forwarding thread, and nothing on the packet path takes a lock or touches an atomic for it.

use std::collections::BTreeMap;

use nameway_face::{FaceScope, FaceSystem};
use nameway_fw::{DropReason, FaceId, Forwarder};
use serde::Serialize;

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
}

/// `security/list`: this forwarder's identity, trust list and policy (never key material).
#[derive(Clone, Debug, Default, Serialize)]
pub struct SecurityView {
    /// Whether `[security]` is on (an identity is configured).
    pub enabled: bool,
    /// This forwarder's public key.
    pub identity: Option<String>,
    /// Trusted peers' public keys.
    pub trusted_peers: Vec<String>,
    /// The level of link-wide faces.
    pub link_level: Option<String>,
    /// Rekey after this many packets.
    pub rekey_packets: Option<u64>,
    /// ... or this many seconds.
    pub rekey_seconds: Option<u64>,
    /// Prefix → level.
    pub policy: Vec<PolicyView>,
}

/// One policy entry.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PolicyView {
    /// Name prefix.
    pub prefix: String,
    /// Level name.
    pub level: String,
    /// What the level does not protect against, if anything.
    pub warning: Option<&'static str>,
}

/// `neighbours/list`: one secure link.
#[derive(Clone, Debug, Default, Serialize)]
pub struct NeighbourView {
    /// Its face.
    pub face_id: u64,
    /// The face's remote URI.
    pub remote: String,
    /// The peer's public key, once known.
    pub peer: Option<String>,
    /// Whether the peer is in the trust list now.
    pub trusted: bool,
    /// idle, handshaking, established or refused.
    pub state: &'static str,
    /// per-prefix or link-wide, once established.
    pub mode: Option<&'static str>,
    /// Whether this side starts the handshakes (created `--secure`).
    pub initiator: bool,
    /// Key id of what is sent (session tag << 16 | epoch).
    pub tx_key_id: Option<u32>,
    /// Key ids accepted.
    pub rx_key_ids: Vec<u32>,
    /// Packets encrypted.
    pub encrypted: u64,
    /// Packets decrypted.
    pub decrypted: u64,
    /// Handshakes completed.
    pub handshakes: u64,
    /// Key epochs advanced by this side.
    pub rekeys: u64,
    /// Drops by reason (bad-tag, replay, unknown-key, untrusted-peer, no-session,
    /// clear-refused, malformed, invalid-handshake), zero ones included.
    pub drops: BTreeMap<&'static str, u64>,
}

/// The identity, trust list and policy.
pub fn security_view(
    faces: &FaceSystem,
    policy: Option<&crate::security::SharedPolicy>,
) -> SecurityView {
    let Some(ctx) = faces.security() else {
        return SecurityView::default();
    };
    let s = ctx.settings();
    SecurityView {
        enabled: true,
        identity: Some(ctx.identity().public_key().to_string()),
        trusted_peers: ctx.trusted().iter().map(ToString::to_string).collect(),
        link_level: Some(s.link_level.to_string()),
        rekey_packets: Some(s.rekey_packets),
        rekey_seconds: Some(s.rekey_interval.as_secs()),
        policy: policy
            .map(|p| p.entries())
            .unwrap_or_default()
            .into_iter()
            .map(|(prefix, level)| PolicyView {
                prefix: prefix.to_string(),
                level: level.to_string(),
                warning: level.warning(),
            })
            .collect(),
    }
}

/// Every secure link that is doing something.
pub fn neighbour_views(faces: &FaceSystem) -> Vec<NeighbourView> {
    faces
        .neighbours()
        .into_iter()
        .map(|(id, remote, n)| {
            let c = n.counters;
            NeighbourView {
                face_id: id.0,
                remote: remote.to_string(),
                peer: n.peer.map(|k| k.to_string()),
                trusted: n
                    .peer
                    .zip(faces.security())
                    .is_some_and(|(k, ctx)| ctx.is_trusted(&k)),
                state: n.state.as_str(),
                mode: n.mode.map(|m| m.as_str()),
                initiator: n.initiator,
                tx_key_id: n.tx_key_id,
                rx_key_ids: n.rx_key_ids,
                encrypted: c.encrypted,
                decrypted: c.decrypted,
                handshakes: c.handshakes_completed,
                rekeys: c.rekeys,
                drops: [
                    ("bad-tag", c.bad_tag),
                    ("replay", c.replay),
                    ("unknown-key", c.unknown_key),
                    ("untrusted-peer", c.untrusted_peer),
                    ("no-session", c.no_session),
                    ("clear-refused", c.clear_refused),
                    ("malformed", c.malformed),
                    ("invalid-handshake", c.handshakes_invalid),
                ]
                .into_iter()
                .collect(),
            }
        })
        .collect()
}

/// The forwarding core.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ForwarderStats {
    /// Interests received.
    pub n_in_interests: u64,
    /// Data received.
    pub n_in_data: u64,
    /// Nacks received.
    pub n_in_nacks: u64,
    /// Interests sent.
    pub n_out_interests: u64,
    /// Data sent.
    pub n_out_data: u64,
    /// Nacks sent.
    pub n_out_nacks: u64,
    /// Bytes of network packets received, over every face since start (closed ones too).
    pub in_bytes: u64,
    /// Bytes of network packets sent, over every face since start (closed ones too).
    pub out_bytes: u64,
    /// PIT entries satisfied by Data.
    pub n_satisfied_interests: u64,
    /// PIT entries that expired unsatisfied.
    pub n_unsatisfied_interests: u64,
    /// Packets dropped, by reason (every reason, zeros included).
    pub drops: BTreeMap<&'static str, u64>,
    /// PIT entries now.
    pub pit_entries: usize,
    /// Most PIT entries.
    pub pit_capacity: usize,
    /// PIT entries created.
    pub pit_inserts: u64,
    /// FIB entries.
    pub fib_entries: usize,
    /// Content store packets now.
    pub cs_entries: usize,
    /// Content store capacity in packets.
    pub cs_capacity: usize,
    /// Content store hits.
    pub cs_hits: u64,
    /// Content store misses.
    pub cs_misses: u64,
    /// Packets admitted to the content store.
    pub cs_inserts: u64,
    /// Packets evicted from the content store.
    pub cs_evictions: u64,
    /// Dead-nonce list records.
    pub dnl_entries: usize,
    /// Dead-nonce records dropped early because the list was full, by whose: the adding
    /// face's own oldest (`own`), or the oldest of the face holding the most (`heaviest`).
    pub dnl_evicted: BTreeMap<&'static str, u64>,
    /// Strategy choice entries.
    pub strategy_choices: usize,
}

/// One face: the forwarder's counters (network packets) and the link's (what crossed the
/// socket).
#[derive(Clone, Debug, Default, Serialize)]
pub struct FaceStats {
    /// FaceId.
    pub id: u64,
    /// Remote FaceUri.
    pub remote: String,
    /// Local FaceUri.
    pub local: String,
    /// `local` or `non-local`.
    pub scope: &'static str,
    /// `on-demand`, `persistent` or `permanent`.
    pub persistency: String,
    /// Interests received.
    pub n_in_interests: u64,
    /// Data received.
    pub n_in_data: u64,
    /// Nacks received.
    pub n_in_nacks: u64,
    /// Interests sent.
    pub n_out_interests: u64,
    /// Data sent.
    pub n_out_data: u64,
    /// Nacks sent.
    pub n_out_nacks: u64,
    /// Link packets received.
    pub in_packets: u64,
    /// Link packets sent.
    pub out_packets: u64,
    /// Bytes received.
    pub in_bytes: u64,
    /// Bytes sent.
    pub out_bytes: u64,
    /// PIT entries this face created and is charged for (fair admission).
    pub pit_entries: usize,
    /// Drops by the forwarder, by reason (non-zero only).
    pub drops: BTreeMap<&'static str, u64>,
    /// Drops by the link service and socket, by reason (non-zero only).
    pub link_drops: BTreeMap<&'static str, u64>,
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

/// The face system.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FaceSystemStats {
    /// Faces created since start.
    pub faces_created: u64,
    /// Faces closed since start, by reason.
    pub faces_closed: BTreeMap<&'static str, u64>,
    /// Connections a listener failed to accept (mostly: out of file descriptors).
    pub accept_errors: u64,
    /// Datagrams from unknown peers on UDP sockets that create no on-demand faces.
    pub udp_unknown_peer: u64,
    /// Reconnections made by permanent TCP faces.
    pub reconnects: u64,
}

/// Takes a snapshot of the forwarder and the face system.
///
/// `closed_bytes` are the bytes received and sent by faces that have closed.
pub fn take(
    fw: &Forwarder,
    faces: &FaceSystem,
    uptime_s: f64,
    wall_ms: u64,
    closed_bytes: (u64, u64),
) -> Snapshot {
    let st = fw.status();
    let c = &st.counters;
    let (open_in, open_out) = fw.faces().fold((0, 0), |(i, o), f| {
        (i + f.counters().n_in_bytes, o + f.counters().n_out_bytes)
    });
    let forwarder = ForwarderStats {
        n_in_interests: c.n_in_interests,
        n_in_data: c.n_in_data,
        n_in_nacks: c.n_in_nacks,
        n_out_interests: c.n_out_interests,
        n_out_data: c.n_out_data,
        n_out_nacks: c.n_out_nacks,
        in_bytes: closed_bytes.0 + open_in,
        out_bytes: closed_bytes.1 + open_out,
        n_satisfied_interests: c.n_satisfied_interests,
        n_unsatisfied_interests: c.n_unsatisfied_interests,
        drops: DropReason::ALL
            .iter()
            .map(|&r| (r.as_str(), c.drops.get(r)))
            .collect(),
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
    };
    let mut list = faces.list();
    list.sort_by_key(|f| f.id.0);
    let faces_out = list
        .iter()
        .map(|info| {
            let fw_face = fw.face(FaceId(info.id.0));
            let fc = fw_face.map(|f| *f.counters()).unwrap_or_default();
            let pit_entries = fw_face.map_or(0, |f| f.pit_entries());
            let l = &info.counters;
            FaceStats {
                id: info.id.0,
                remote: info.remote.to_string(),
                local: info.local.to_string(),
                scope: match info.scope {
                    FaceScope::Local => "local",
                    _ => "non-local",
                },
                persistency: info.persistency.to_string(),
                n_in_interests: fc.n_in_interests,
                n_in_data: fc.n_in_data,
                n_in_nacks: fc.n_in_nacks,
                n_out_interests: fc.n_out_interests,
                n_out_data: fc.n_out_data,
                n_out_nacks: fc.n_out_nacks,
                in_packets: l.in_packets,
                out_packets: l.out_packets,
                in_bytes: l.in_bytes,
                out_bytes: l.out_bytes,
                pit_entries,
                drops: fc.drops.occurred().collect(),
                link_drops: link_drops(&info.counters),
            }
        })
        .collect();
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
    let sc = faces.counters();
    let face_system = FaceSystemStats {
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
    };
    Snapshot {
        version: format!("nameway {}", env!("CARGO_PKG_VERSION")),
        wall_ms,
        uptime_s,
        forwarder,
        faces: faces_out,
        routes,
        strategies,
        face_system,
        neighbours: neighbour_views(faces),
    }
}

/// A face's link-layer drops by reason, non-zero only (what the face system refused or lost
/// before or after the forwarder: queue full, malformed, injected faults...).
pub(crate) fn link_drops(l: &nameway_face::FaceCounters) -> BTreeMap<&'static str, u64> {
    [
        ("malformed", l.drop_malformed),
        ("too-large", l.drop_too_large),
        ("queue-full", l.drop_queue_full),
        ("rx-backlog", l.drop_rx_backlog),
        ("reassembly", l.drop_reassembly),
        ("mtu", l.drop_mtu),
        ("send-error", l.drop_send_error),
        ("link-down", l.drop_link_down),
        ("fault", l.drop_fault),
        ("fault-queue", l.drop_fault_queue),
    ]
    .into_iter()
    .filter(|(_, n)| *n > 0)
    .collect()
}
