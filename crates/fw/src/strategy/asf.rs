//! ASF, the adaptive SRTT-based forwarding strategy (NFD `/localhost/nfd/strategy/asf/v=5`):
//! each Interest goes to the next hop with the lowest measured smoothed RTT; the others are
//! probed now and then; a next hop that stops answering (timeouts, Nacks) is passed over until a
//! probe finds it working again.
//!
//! Measurements are kept per namespace (the Interest name without its last component, so the
//! segments of an object share them), per face: SRTT and RTTVAR (RFC 6298 weights), the number
//! of silent timeouts in a row, whether the face is timed out. Faces are ranked as NFD's ASF
//! ranks them: working measured faces by SRTT, then unmeasured faces by cost, then timed-out
//! faces by cost.
//!
//! Parameters after the version, in NFD's syntax: `probing-interval~MS` (default 60000, at
//! least 1000) and `n-silent-timeouts~N` (default 0: the first timeout marks a face timed out).
//!
//! How it differs from NFD's: NFD arms a timer per out-record at the RTO; the forwarding core
//! here gives strategies no timers, so an overdue send (older than the face's RTO with no
//! answer since) is detected when the next Interest of the namespace arrives, and when the PIT
//! entry expires. Measurements entries expire after 5 minutes unused, as NFD's do.

use core::time::Duration;
use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};

use nameway_wire::lp::NackReason;
use nameway_wire::tlv::types;
use nameway_wire::{DataView, Name};
use smallvec::SmallVec;

use super::{process_nack, RetxSuppressionExponential, RetxSuppressionResult};
use super::{Strategy, StrategyContext, StrategyError};
use crate::counters::DropReason;
use crate::table::face_table::FaceId;
use crate::table::pit::PitEntry;
use crate::time::Time;

/// NFD's name of ASF, without version.
pub const ASF_NAME: &str = "/localhost/nfd/strategy/asf";

/// A measurements entry unused this long is removed.
const MEASUREMENTS_LIFETIME: Duration = Duration::from_secs(300);
/// Most measurements entries; past this the least recently used goes.
const MAX_ENTRIES: usize = 65_536;
/// RTO bounds (ndn-cxx `RttEstimator` defaults): before any sample, and at least.
const INITIAL_RTO: Duration = Duration::from_secs(1);
const MIN_RTO: Duration = Duration::from_millis(200);

/// One face's measurements in one namespace.
#[derive(Clone, Copy, Debug, Default)]
struct FaceInfo {
    srtt: Option<Duration>,
    rttvar: Duration,
    silent_timeouts: u32,
    timed_out: bool,
    /// The oldest send not answered since, if any.
    waiting_since: Option<Time>,
}

impl FaceInfo {
    fn rto(&self) -> Duration {
        match self.srtt {
            Some(s) => (s + self.rttvar * 4).max(MIN_RTO),
            None => INITIAL_RTO,
        }
    }

    fn sample(&mut self, rtt: Duration) {
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = rtt / 2;
            }
            Some(s) => {
                let diff = s.abs_diff(rtt);
                self.rttvar = (self.rttvar * 3 + diff) / 4;
                self.srtt = Some((s * 7 + rtt) / 8);
            }
        }
        self.silent_timeouts = 0;
        self.timed_out = false;
        self.waiting_since = None;
    }
}

/// The measurements of one namespace.
#[derive(Debug, Default)]
struct Namespace {
    faces: SmallVec<[(FaceId, FaceInfo); 4]>,
    last_probe: Option<Time>,
    last_used: Time,
}

impl Namespace {
    fn info(&mut self, face: FaceId) -> &mut FaceInfo {
        let i = match self.faces.iter().position(|(f, _)| *f == face) {
            Some(i) => i,
            None => {
                self.faces.push((face, FaceInfo::default()));
                self.faces.len() - 1
            }
        };
        &mut self.faces[i].1
    }

    fn get(&self, face: FaceId) -> Option<&FaceInfo> {
        self.faces.iter().find(|(f, _)| *f == face).map(|(_, i)| i)
    }
}

/// The ASF strategy.
#[derive(Debug)]
pub struct Asf {
    name: Name,
    probing_interval: Duration,
    n_silent_timeouts: u32,
    retx: RetxSuppressionExponential,
    measurements: HashMap<u64, Namespace>,
    /// Calls since the last sweep of expired entries.
    since_sweep: u32,
}

type Hasher = BuildHasherDefault<DefaultHasher>;

/// The measurements key of an Interest name: the name without its last component.
fn namespace_key(name: &Name) -> u64 {
    let n = name.len().saturating_sub(1);
    Hasher::default().hash_one(&name.value_bytes()[..name.prefix_value_len(n)])
}

impl Asf {
    /// The version Nameway implements (NFD's current one).
    pub const VERSION: u64 = 5;
    /// NFD's default probing interval.
    pub const DEFAULT_PROBING_INTERVAL: Duration = Duration::from_secs(60);
    /// The shortest probing interval NFD accepts.
    pub const MIN_PROBING_INTERVAL: Duration = Duration::from_secs(1);

    /// An instance named `instance`: `.../asf/v=5[/probing-interval~MS][/n-silent-timeouts~N]`.
    ///
    /// # Errors
    /// [`StrategyError::BadParameters`] for an unknown parameter, a value that is not a
    /// number, or a probing interval under 1000 ms.
    pub fn new(instance: &Name) -> Result<Self, StrategyError> {
        let mut probing_interval = Self::DEFAULT_PROBING_INTERVAL;
        let mut n_silent_timeouts = 0;
        let version_at = instance
            .iter()
            .position(|c| c.typ() == types::VERSION_NAME_COMPONENT)
            .ok_or_else(|| StrategyError::BadParameters(format!("{instance} has no version")))?;
        for c in instance.iter().skip(version_at + 1) {
            let text = std::str::from_utf8(c.value())
                .map_err(|_| StrategyError::BadParameters("parameters must be text".into()))?;
            let (key, value) = text.split_once('~').ok_or_else(|| {
                StrategyError::BadParameters(format!("{text:?}: expected NAME~VALUE"))
            })?;
            let number: u64 = value.parse().map_err(|_| {
                StrategyError::BadParameters(format!("{key}: {value:?} is not a number"))
            })?;
            match key {
                "probing-interval" => {
                    let d = Duration::from_millis(number);
                    if d < Self::MIN_PROBING_INTERVAL {
                        return Err(StrategyError::BadParameters(format!(
                            "probing-interval must be at least {} ms",
                            Self::MIN_PROBING_INTERVAL.as_millis()
                        )));
                    }
                    probing_interval = d;
                }
                "n-silent-timeouts" => {
                    n_silent_timeouts = u32::try_from(number).map_err(|_| {
                        StrategyError::BadParameters("n-silent-timeouts is too large".into())
                    })?;
                }
                other => {
                    return Err(StrategyError::BadParameters(format!(
                        "unknown ASF parameter {other:?} (probing-interval, n-silent-timeouts)"
                    )))
                }
            }
        }
        Ok(Self {
            name: instance.clone(),
            probing_interval,
            n_silent_timeouts,
            retx: RetxSuppressionExponential::default(),
            measurements: HashMap::new(),
            since_sweep: 0,
        })
    }

    /// The probing interval in force.
    pub fn probing_interval(&self) -> Duration {
        self.probing_interval
    }

    /// Silent timeouts a face may have before it counts as timed out.
    pub fn n_silent_timeouts(&self) -> u32 {
        self.n_silent_timeouts
    }

    fn namespace(&mut self, name: &Name, now: Time) -> &mut Namespace {
        self.since_sweep += 1;
        if self.since_sweep >= 1024 || self.measurements.len() >= MAX_ENTRIES {
            self.sweep(now);
        }
        let ns = self.measurements.entry(namespace_key(name)).or_default();
        ns.last_used = now;
        ns
    }

    /// Removes entries unused for [`MEASUREMENTS_LIFETIME`]; if still full, the least recently
    /// used.
    fn sweep(&mut self, now: Time) {
        self.since_sweep = 0;
        self.measurements
            .retain(|_, ns| now.saturating_since(ns.last_used) < MEASUREMENTS_LIFETIME);
        while self.measurements.len() >= MAX_ENTRIES {
            let oldest = self
                .measurements
                .iter()
                .min_by_key(|(_, ns)| ns.last_used)
                .map(|(k, _)| *k);
            match oldest {
                Some(k) => {
                    self.measurements.remove(&k);
                }
                None => break,
            }
        }
    }
}

/// A face's place in the order: class (0 working, 1 unmeasured, 2 timed out), SRTT, FIB order.
type Rank = (u8, Duration, usize);

/// Rank of a face in a namespace: working and measured (by SRTT), unmeasured, timed out; ties
/// by FIB order (cost).
fn rank(ns: &Namespace, face: FaceId, fib_order: usize) -> Rank {
    match ns.get(face) {
        Some(i) if i.timed_out => (2, Duration::ZERO, fib_order),
        Some(FaceInfo {
            srtt: Some(srtt), ..
        }) => (0, *srtt, fib_order),
        _ => (1, Duration::ZERO, fib_order),
    }
}

impl Strategy for Asf {
    fn instance_name(&self) -> &Name {
        &self.name
    }

    fn after_receive_interest(&mut self, cx: &mut StrategyContext<'_>, ingress: FaceId) {
        let decision = self.retx.decide_per_pit_entry(cx);
        if decision == RetxSuppressionResult::Suppress {
            return;
        }
        let now = cx.now();
        let name = cx.interest().name().clone();
        let probing_interval = self.probing_interval;
        let n_silent = self.n_silent_timeouts;
        let hops: SmallVec<[FaceId; 4]> = cx
            .nexthops()
            .iter()
            .map(|h| h.face)
            .filter(|&f| cx.is_eligible(f, ingress))
            .collect();
        let ns = self.namespace(&name, now);
        // Overdue sends (no answer within the face's RTO) are silent timeouts.
        for (_, info) in &mut ns.faces {
            if info
                .waiting_since
                .is_some_and(|t| now.saturating_since(t) > info.rto())
            {
                info.silent_timeouts += 1;
                info.waiting_since = None;
                if info.silent_timeouts > n_silent {
                    info.timed_out = true;
                }
            }
        }
        let mut ranked: SmallVec<[FaceId; 4]> = hops.clone();
        ranked.sort_by_key(|&f| {
            let order = hops.iter().position(|&h| h == f).unwrap_or(usize::MAX);
            rank(ns, f, order)
        });
        let Some(&best) = ranked.first() else {
            if decision == RetxSuppressionResult::New {
                cx.record_drop(ingress, DropReason::NoRoute);
                cx.send_nack(ingress, NackReason::NoRoute);
                cx.reject_pending_interest();
            }
            return;
        };
        // A retransmission goes to the best face not already tried for this entry, if any.
        let target = if decision == RetxSuppressionResult::Forward {
            ranked
                .iter()
                .copied()
                .find(|&f| cx.entry().out_record(f).is_none())
                .unwrap_or(best)
        } else {
            best
        };
        // Probe another face when the interval has passed (at once for a new namespace).
        let probe_due = ns
            .last_probe
            .is_none_or(|t| now.saturating_since(t) >= probing_interval);
        let probe = if probe_due {
            ranked.iter().copied().find(|&f| f != target)
        } else {
            None
        };
        if cx.send_interest(target) {
            let info = ns.info(target);
            info.waiting_since.get_or_insert(now);
        }
        if let Some(p) = probe {
            ns.last_probe = Some(now);
            if cx.send_interest(p) {
                let info = ns.info(p);
                info.waiting_since.get_or_insert(now);
            }
        }
    }

    fn before_satisfy_interest(
        &mut self,
        cx: &mut StrategyContext<'_>,
        _data: &DataView,
        ingress: FaceId,
    ) {
        let Some(sent) = cx.entry().out_record(ingress).map(|r| r.last_renewed()) else {
            return;
        };
        let now = cx.now();
        let name = cx.interest().name().clone();
        let rtt = now.saturating_since(sent);
        self.namespace(&name, now).info(ingress).sample(rtt);
    }

    fn after_receive_nack(
        &mut self,
        cx: &mut StrategyContext<'_>,
        reason: NackReason,
        ingress: FaceId,
    ) {
        let now = cx.now();
        let name = cx.interest().name().clone();
        if reason != NackReason::Duplicate {
            // A face that refuses (no route, congestion) is passed over like a timed-out one.
            let ns = self.namespace(&name, now);
            let info = ns.info(ingress);
            info.timed_out = true;
            info.waiting_since = None;
        }
        let ns = self.namespace(&name, now);
        let mut untried: SmallVec<[(FaceId, Rank); 4]> = cx
            .nexthops()
            .iter()
            .enumerate()
            .filter(|(_, h)| {
                cx.entry().out_record(h.face).is_none()
                    && cx
                        .entry()
                        .in_records()
                        .iter()
                        .any(|r| cx.is_eligible(h.face, r.face()))
            })
            .map(|(i, h)| (h.face, rank(ns, h.face, i)))
            .collect();
        untried.sort_by_key(|(_, r)| *r);
        for (face, _) in untried {
            if cx.send_interest(face) {
                self.namespace(&name, now)
                    .info(face)
                    .waiting_since
                    .get_or_insert(now);
                return;
            }
        }
        process_nack(cx);
    }

    fn on_interest_expiry(&mut self, entry: &PitEntry) {
        // Every upstream that never answered timed out. The entry carries no clock: its
        // out-records' renewal times stand in for "now" only to find the namespace.
        let name = entry.name();
        let Some(latest) = entry.out_records().iter().map(|r| r.last_renewed()).max() else {
            return;
        };
        let silent: SmallVec<[FaceId; 4]> = entry
            .out_records()
            .iter()
            .filter(|r| r.incoming_nack().is_none())
            .map(|r| r.face())
            .collect();
        let key = namespace_key(&name);
        let n_silent = self.n_silent_timeouts;
        if let Some(ns) = self.measurements.get_mut(&key) {
            ns.last_used = ns.last_used.max(latest);
            for face in silent {
                let info = ns.info(face);
                info.silent_timeouts += 1;
                info.waiting_since = None;
                if info.silent_timeouts > n_silent {
                    info.timed_out = true;
                }
            }
        }
    }

    fn measurements_len(&self) -> usize {
        self.measurements.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    #[test]
    fn parameters_parse_like_nfd() {
        let a = Asf::new(&n("/localhost/nfd/strategy/asf/v=5")).unwrap();
        assert_eq!(a.probing_interval(), Duration::from_secs(60));
        assert_eq!(a.n_silent_timeouts(), 0);
        let a = Asf::new(&n(
            "/localhost/nfd/strategy/asf/v=5/probing-interval~30000/n-silent-timeouts~2",
        ))
        .unwrap();
        assert_eq!(a.probing_interval(), Duration::from_secs(30));
        assert_eq!(a.n_silent_timeouts(), 2);
        for bad in [
            "/localhost/nfd/strategy/asf/v=5/probing-interval~999",
            "/localhost/nfd/strategy/asf/v=5/probing-interval~x",
            "/localhost/nfd/strategy/asf/v=5/max-timeouts~3",
            "/localhost/nfd/strategy/asf/v=5/n-silent-timeouts",
        ] {
            assert!(
                matches!(Asf::new(&n(bad)), Err(StrategyError::BadParameters(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn srtt_and_timeouts_rank_faces() {
        let mut ns = Namespace::default();
        let (fast, slow, dead, fresh) = (FaceId(300), FaceId(301), FaceId(302), FaceId(303));
        ns.info(fast).sample(Duration::from_millis(10));
        ns.info(slow).sample(Duration::from_millis(100));
        ns.info(dead).timed_out = true;
        let mut order = [dead, fresh, slow, fast];
        order.sort_by_key(|&f| rank(&ns, f, 0));
        assert_eq!(order, [fast, slow, fresh, dead]);
        // A sample brings a timed-out face back.
        ns.info(dead).sample(Duration::from_millis(5));
        assert!(!ns.get(dead).unwrap().timed_out);
        assert!(rank(&ns, dead, 0) < rank(&ns, fast, 0));
    }

    #[test]
    fn rto_follows_rfc_6298_with_ndn_cxx_bounds() {
        let mut i = FaceInfo::default();
        assert_eq!(i.rto(), INITIAL_RTO);
        i.sample(Duration::from_millis(400));
        // srtt 400, rttvar 200: 400 + 4 * 200.
        assert_eq!(i.rto(), Duration::from_millis(1200));
        let mut j = FaceInfo::default();
        j.sample(Duration::from_millis(10));
        assert_eq!(j.rto(), MIN_RTO);
    }

    #[test]
    fn measurements_expire() {
        let mut a = Asf::new(&n("/localhost/nfd/strategy/asf/v=5")).unwrap();
        a.namespace(&n("/a/1"), Time::ZERO);
        a.namespace(&n("/b/1"), Time::from_millis(200_000));
        assert_eq!(a.measurements_len(), 2);
        a.sweep(Time::from_millis(400_000));
        assert_eq!(a.measurements_len(), 1, "/a unused for 400 s went");
        // Segments of one object share an entry.
        a.namespace(&n("/b/2"), Time::from_millis(400_000));
        assert_eq!(a.measurements_len(), 1);
    }
}
