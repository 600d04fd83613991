//! The agent's counters: atomics shared by the connection task and the driver
//! ([`AgentCounters`]), read into [`AgentStats`] (declared once with [`crate::stats!`]) for
//! `/metrics`, `/api/status` (`controller`), `status/counters` and `nameway status`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// Why a session with the controller ended or could not start (metric label `reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionFailure {
    /// The TCP connection or the Noise handshake failed or timed out.
    Connect,
    /// The channel broke (read or write error, a frame that does not decrypt).
    Channel,
    /// The controller's anchor is not the pinned key, or its proof is bad.
    Anchor,
    /// The controller refused this forwarder (token, certificate, deny list).
    Refused,
    /// A local problem (no token and no certificate, the state directory).
    Local,
    /// The controller broke the protocol or closed the session.
    Protocol,
    /// The mutual-TLS handshake failed: the controller's certificate is not from
    /// `tls_ca` or not for its name, or the controller refused this router's.
    Tls,
}

impl SessionFailure {
    /// Every reason, in label order.
    pub const ALL: [Self; 7] = [
        Self::Connect,
        Self::Channel,
        Self::Anchor,
        Self::Refused,
        Self::Local,
        Self::Protocol,
        Self::Tls,
    ];

    /// The metric label.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Connect => "connect",
            Self::Channel => "channel",
            Self::Anchor => "anchor",
            Self::Refused => "refused",
            Self::Local => "local",
            Self::Protocol => "protocol",
            Self::Tls => "tls",
        }
    }
}

/// Why a configuration object was not applied (metric label `reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectRefusal {
    /// Not signed by the anchor, not an object of this domain, or malformed.
    Signature,
    /// An object for another router.
    OtherRouter,
    /// A kind this agent does not apply.
    Kind,
    /// A diff from a version the session does not hold.
    Base,
    /// A body that does not decode as its kind's document.
    Document,
}

impl ObjectRefusal {
    /// Every reason, in label order.
    pub const ALL: [Self; 5] = [
        Self::Signature,
        Self::OtherRouter,
        Self::Kind,
        Self::Base,
        Self::Document,
    ];

    /// The metric label.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Signature => "signature",
            Self::OtherRouter => "other_router",
            Self::Kind => "kind",
            Self::Base => "base",
            Self::Document => "document",
        }
    }
}

/// Why a tier size of the controller's cache policy was not applied (metric label
/// `reason`); the rest of the document is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TierRefusal {
    /// The forwarder runs no decoupled store (`[cs] decoupled` or `disk_path`): it has no
    /// tiers. Starting one needs a restart.
    NoDecoupledStore,
    /// A disk tier size, and the decoupled store has no disk tier (no `[cs] disk_path`, or
    /// the file could not be opened): a disk tier is opened only at start.
    NoDiskTier,
}

impl TierRefusal {
    /// Every reason, in label order.
    pub const ALL: [Self; 2] = [Self::NoDecoupledStore, Self::NoDiskTier];

    /// The metric label.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::NoDecoupledStore => "no_decoupled_store",
            Self::NoDiskTier => "no_disk_tier",
        }
    }
}

/// The object kinds the agent applies, in label order.
pub const KINDS: [&str; 2] = ["fib", "cs"];

/// Index of `kind` in [`KINDS`].
pub(crate) fn kind_index(kind: &str) -> Option<usize> {
    KINDS.iter().position(|k| *k == kind)
}

/// The agent's counters, shared by its task and the driver.
#[derive(Debug, Default)]
pub struct AgentCounters {
    /// 1 while a session with the controller is up.
    pub connected: AtomicU64,
    /// Sessions established.
    pub sessions: AtomicU64,
    /// Sessions that ended or failed, by [`SessionFailure`].
    pub failures: [AtomicU64; 7],
    /// Objects verified and handed to the driver.
    pub objects: AtomicU64,
    /// Objects refused, by [`ObjectRefusal`].
    pub refused_objects: [AtomicU64; 5],
    /// Times the controller refused this forwarder.
    pub refused: AtomicU64,
    /// Objects applied, by kind ([`KINDS`]).
    pub applied: [AtomicU64; 2],
    /// The version last applied, by kind ([`KINDS`]).
    pub last_version: [AtomicU64; 2],
    /// Reports handed to the task.
    pub reports: AtomicU64,
    /// Router certificates renewed and kept.
    pub renewed: AtomicU64,
    /// Renewed certificates refused (not the anchor's, not this router's key).
    pub renew_refused: AtomicU64,
    /// Group keys refused, by reason.
    pub keys: super::group_keys::KeyRefusals,
    /// `security` objects applied (group keys installed).
    pub keys_applied: AtomicU64,
    /// Reports built (only after a change: a neighbour, a face or the RIB).
    pub reports_built: AtomicU64,
    /// Hellos sent to neighbours.
    pub hellos_sent: AtomicU64,
    /// Our hellos answered.
    pub hellos_answered: AtomicU64,
    /// Neighbours' hellos this forwarder answered.
    pub hellos_received: AtomicU64,
    /// Neighbours declared dead (no hello answered within the window).
    pub neighbours_dead: AtomicU64,
    /// New handshakes asked of a secure link because its neighbour kept saying, in its
    /// answers to our hellos, that it holds no session with us (it restarted).
    pub rehandshakes: AtomicU64,
    /// Tier sizes of the decoupled store applied from `cs` objects.
    pub tiers_applied: AtomicU64,
    /// Tier sizes refused, by [`TierRefusal`].
    pub tiers_refused: [AtomicU64; 2],
    /// The secure faces' context, whose group-key counters the stats read (set at start).
    pub security: std::sync::OnceLock<std::sync::Arc<nameway_face::secure::SecurityContext>>,
}

/// One group key's use on the data path.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct GroupKeyUse {
    /// Data sealed with it (sent).
    pub sealed: u64,
    /// Data opened with it (received).
    pub opened: u64,
}

/// The group-key counters of the secure faces: (packets by result, refusals by reason, use
/// per key held).
type GroupKeyCounts = (
    BTreeMap<&'static str, u64>,
    BTreeMap<&'static str, u64>,
    BTreeMap<String, GroupKeyUse>,
);

fn group_key_counts(ctx: Option<&nameway_face::secure::SecurityContext>) -> GroupKeyCounts {
    let Some(ctx) = ctx else {
        return Default::default();
    };
    let g = ctx.group_keys().stats();
    (
        [("sealed", g.sealed), ("opened", g.opened)]
            .into_iter()
            .collect(),
        g.refused.into_iter().collect(),
        g.keys
            .into_iter()
            .map(|(id, sealed, opened)| (id, GroupKeyUse { sealed, opened }))
            .collect(),
    )
}

impl AgentCounters {
    /// Counts a session's end.
    pub fn failed(&self, why: SessionFailure) {
        let i = SessionFailure::ALL.iter().position(|r| *r == why);
        if let Some(c) = i.and_then(|i| self.failures.get(i)) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts a tier size refused.
    pub fn refused_tier(&self, why: TierRefusal) {
        let i = TierRefusal::ALL.iter().position(|r| *r == why);
        if let Some(c) = i.and_then(|i| self.tiers_refused.get(i)) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts an object refused.
    pub fn refused_object(&self, why: ObjectRefusal) {
        let i = ObjectRefusal::ALL.iter().position(|r| *r == why);
        if let Some(c) = i.and_then(|i| self.refused_objects.get(i)) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts `version` of `kind` applied.
    pub fn applied(&self, kind: &str, version: u64) {
        if let Some(i) = kind_index(kind) {
            if let Some(c) = self.applied.get(i) {
                c.fetch_add(1, Ordering::Relaxed);
            }
            if let Some(v) = self.last_version.get(i) {
                v.store(version, Ordering::Relaxed);
            }
        }
    }

    /// The counters now.
    pub fn stats(&self) -> AgentStats {
        let read = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let (group_key_packets, group_key_refused, group_key_use) =
            group_key_counts(self.security.get().map(|c| &**c));
        AgentStats {
            reachable: read(&self.connected) == 1,
            sessions: read(&self.sessions),
            session_failures: by_label(
                SessionFailure::ALL.map(SessionFailure::as_str),
                &self.failures,
            ),
            refused_by_controller: read(&self.refused),
            objects_received: read(&self.objects),
            objects_applied: by_label(KINDS, &self.applied),
            objects_refused: by_label(
                ObjectRefusal::ALL.map(ObjectRefusal::as_str),
                &self.refused_objects,
            ),
            applied_version: by_label(KINDS, &self.last_version),
            reports: read(&self.reports),
            hellos_sent: read(&self.hellos_sent),
            hellos_answered: read(&self.hellos_answered),
            hellos_received: read(&self.hellos_received),
            neighbours_dead: read(&self.neighbours_dead),
            rehandshakes: read(&self.rehandshakes),
            renewals: [
                ("renewed", read(&self.renewed)),
                ("refused", read(&self.renew_refused)),
            ]
            .into_iter()
            .collect(),
            cs_tiers_applied: read(&self.tiers_applied),
            cs_tiers_refused: by_label(
                TierRefusal::ALL.map(TierRefusal::as_str),
                &self.tiers_refused,
            ),
            group_key_packets,
            group_key_refused,
            group_key_use,
        }
    }
}

/// Counters read into a map by their labels (in the same order).
fn by_label<const N: usize>(
    labels: [&'static str; N],
    counters: &[AtomicU64; N],
) -> BTreeMap<&'static str, u64> {
    labels
        .into_iter()
        .zip(counters.iter().map(|a| a.load(Ordering::Relaxed)))
        .collect()
}

crate::stats! {
    /// The controller's agent (`[controller]`): its sessions and the objects it applied.
    pub struct AgentStats {
        /// Whether a session with the controller is up now.
        pub reachable: bool = gauge("nameway_controller_reachable"),
        /// Sessions established since start.
        pub sessions: u64 = counter("nameway_controller_sessions"),
        /// Sessions that ended or failed to start, by reason (every reason, zeros included).
        pub session_failures: BTreeMap<&'static str, u64> = counter("nameway_controller_session_failures"; by "reason"),
        /// Times the controller refused this forwarder (token, certificate, deny list).
        pub refused_by_controller: u64 = counter("nameway_controller_refused"),
        /// Configuration objects verified and handed to the driver.
        pub objects_received: u64 = counter("nameway_controller_objects_received"),
        /// Configuration objects applied, by kind.
        pub objects_applied: BTreeMap<&'static str, u64> = counter("nameway_controller_objects_applied"; by "kind"),
        /// Configuration objects refused, by reason (nothing of them applied).
        pub objects_refused: BTreeMap<&'static str, u64> = counter("nameway_controller_objects_refused"; by "reason"),
        /// The version last applied, by kind (0: none yet).
        pub applied_version: BTreeMap<&'static str, u64> = gauge("nameway_controller_applied_version"; by "kind"),
        /// Reports of this forwarder's state sent toward the controller.
        pub reports: u64 = counter("nameway_controller_reports"),
        /// Hellos sent to secure-link neighbours.
        pub hellos_sent: u64 = counter("nameway_controller_hellos_sent"),
        /// This forwarder's hellos its neighbours answered.
        pub hellos_answered: u64 = counter("nameway_controller_hellos_answered"),
        /// Neighbours' hellos this forwarder answered.
        pub hellos_received: u64 = counter("nameway_controller_hellos_received"),
        /// Neighbours declared dead (no hello answered within the window).
        pub neighbours_dead: u64 = counter("nameway_controller_neighbours_dead"),
        /// New secure handshakes started because a neighbour said in its hello answers that it
        /// holds no session with us (it restarted; in per-prefix mode nothing else tells).
        pub rehandshakes: u64 = counter("nameway_controller_rehandshakes"),
        /// Router certificate renewals answered by the controller, by result (`renewed`: checked
        /// and kept; `refused`: not the anchor's, not this router's key, not valid now).
        pub renewals: BTreeMap<&'static str, u64> = counter("nameway_controller_renewals"; by "result"),
        /// Tier sizes of the decoupled store set from the controller's cache policy.
        pub cs_tiers_applied: u64 = counter("nameway_controller_cs_tiers_applied"),
        /// Tier sizes of the cache policy not applied, by reason (the rest of the policy is).
        pub cs_tiers_refused: BTreeMap<&'static str, u64> = counter("nameway_controller_cs_tiers_refused"; by "reason"),
        /// Data sealed and opened with group keys on the secure faces, by result.
        pub group_key_packets: BTreeMap<&'static str, u64> = counter("nameway_group_key_packets"; by "result"),
        /// Data refused by the group-key rules, by reason (unknown_key_id, not_group_sealed,
        /// wrong_prefix, bad_tag, replay, no_session), every reason listed.
        pub group_key_refused: BTreeMap<&'static str, u64> = counter("nameway_group_key_refused"; by "reason"),
        /// Per group key held: Data sealed and opened with it.
        pub group_key_use: BTreeMap<String, GroupKeyUse> = json,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_read_into_labelled_families() {
        let c = AgentCounters::default();
        c.failed(SessionFailure::Anchor);
        c.failed(SessionFailure::Anchor);
        c.refused_object(ObjectRefusal::OtherRouter);
        c.applied("cs", 7);
        c.applied("fib", 3);
        c.applied("fib", 4);
        c.renewed.fetch_add(2, Ordering::Relaxed);
        c.renew_refused.fetch_add(1, Ordering::Relaxed);
        c.hellos_sent.store(9, Ordering::Relaxed);
        let s = c.stats();
        assert_eq!(s.renewals["renewed"], 2);
        assert_eq!(s.renewals["refused"], 1);
        assert_eq!(s.hellos_sent, 9);
        assert_eq!(s.session_failures["anchor"], 2);
        assert_eq!(s.session_failures["connect"], 0);
        assert_eq!(s.objects_refused["other_router"], 1);
        assert_eq!(s.objects_applied["fib"], 2);
        assert_eq!(s.applied_version["fib"], 4);
        assert_eq!(s.applied_version["cs"], 7);
        let mut out = crate::metrics::Families::default();
        s.metrics(&[], &mut out);
        let fam = out
            .iter()
            .find(|f| f.name == "nameway_controller_applied_version")
            .unwrap();
        assert_eq!(fam.samples.len(), 2);
        assert!(fam
            .samples
            .iter()
            .any(|x| x.labels == [("kind", "cs".to_owned())]
                && x.value == crate::metrics::Number::Int(7)));
        let fam = out
            .iter()
            .find(|f| f.name == "nameway_controller_renewals")
            .unwrap();
        assert!(fam
            .samples
            .iter()
            .any(|x| x.labels == [("result", "refused".to_owned())]
                && x.value == crate::metrics::Number::Int(1)));
    }
}
