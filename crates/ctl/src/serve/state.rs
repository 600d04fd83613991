//! The controller's state between events (sans-I/O): which routers are connected, what each
//! reported, the topology and routes computed from the reports, and each router's FIB
//! versions. The shell ([`super`]) feeds it events and sends what it returns.
//!
//! Routes are recomputed incrementally (`serve/routing.rs`): a connected router's new report
//! (links up, down or re-costed, registrations added or withdrawn) updates only the FIB
//! entries it touches, and only the routers whose FIB changed are published to. A router
//! joining, coming back on a new connection or leaving is applied the same way (its links
//! added or withdrawn, its registrations added or dropped); everything is rebuilt once only
//! when many routers are new (the start).
//!
//! Publishing costs what changed: the engine lists the (router, prefix) entries it changed,
//! each router's FIB is updated in place from that list and the diff pushed is built from
//! those entries alone. A router's versions are counters: the diff pushed goes from the
//! version last sent on the connection (the agent applies them in order), a new connection
//! gets a snapshot, so no FIB history is kept.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use bytes::Bytes;
use nameway_wire::Name;

use super::cs_versions::CsVersions;
use super::routing::{RouterInput, Routing};
use crate::cache_policy::CachePolicy;
use crate::channel::{RegistrationReport, Report};
use crate::objects::{ConfigBody, ConfigKind, ConfigObject};
use crate::routes::{Fib, FibDiff, NextHop, PrefixId};
use crate::topology::NodeId;

/// A connection's number.
pub type ConnId = u64;

#[derive(Debug)]
struct RouterState {
    /// Its secure-link public key (recorded at enrolment), how neighbours name it.
    link_key: Option<Bytes>,
    /// The connection serving it, if any.
    conn: Option<ConnId>,
    /// Its last report (while connected).
    report: Option<Report>,
    /// The FIB version last published (0: the empty FIB).
    version: u64,
    /// The version it acknowledged.
    acked: u64,
    /// Whether `version` was sent on the current connection (the next object is then a
    /// diff from it; else a snapshot).
    sent: bool,
    /// The FIB of `version` (kept while it is away), updated in place; shared with the
    /// status only until the next change.
    fib: Arc<Fib>,
    /// Its cache policy versions.
    cs: CsVersions,
    /// Served by another controller on the shared database (`serve/feed.rs`): `report` is
    /// what that controller stored; never published to from here.
    remote: bool,
}

impl RouterState {
    /// A router first seen: nothing published, nothing reported; `remote` when another
    /// controller on the shared database serves it.
    fn new(remote: bool) -> Self {
        Self {
            link_key: None,
            conn: None,
            report: None,
            version: 0,
            acked: 0,
            sent: false,
            fib: Arc::default(),
            cs: CsVersions::default(),
            remote,
        }
    }
}

/// A link as operators see it: every pair of routers that at least one end reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkView {
    /// One end (`a < b` by name).
    pub a: String,
    /// The other end.
    pub b: String,
    /// Whether `a` reports the link up (`None`: `a` does not report it).
    pub a_up: Option<bool>,
    /// Whether `b` reports the link up.
    pub b_up: Option<bool>,
    /// The cost routes use, when the link is usable (both ends report it up).
    pub cost: Option<u64>,
}

/// A router's computed FIB and its versions, for operators.
#[derive(Clone, Debug)]
pub struct RouterFib {
    /// The router.
    pub router: String,
    /// Whether it is connected.
    pub connected: bool,
    /// The FIB version last published for it.
    pub version: u64,
    /// The version it acknowledged.
    pub acked: u64,
    /// The FIB last computed for it.
    pub fib: Arc<Fib>,
    /// The cache policy version published for it and the one it acknowledged.
    pub cs_versions: (u64, u64),
}

/// The longest prefix of `name` with an entry in `fib`: that prefix and its next hops.
pub fn longest_match<'f>(fib: &'f Fib, name: &Name) -> Option<(&'f Name, &'f [NextHop])> {
    (0..=name.len())
        .rev()
        .find_map(|k| fib.get_key_value(&name.prefix(k)))
        .map(|(p, hops)| (p, hops.as_slice()))
}

/// Counters of the state machine.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StateCounters {
    /// Reports taken.
    pub reports: u64,
    /// Full route computations (the start: many routers new at once; or every change, when
    /// recomputing everything is the mode).
    pub computations: u64,
    /// Reports applied incrementally (only the FIB entries they touch recomputed), routers
    /// joining and leaving included.
    pub incremental: u64,
    /// Of those, routers joining, coming back or leaving without a full computation.
    pub syncs: u64,
    /// Objects produced (snapshots and diffs).
    pub objects: u64,
    /// Acknowledgements taken.
    pub acks: u64,
    /// Acknowledgements of a version never sent (ignored).
    pub bad_acks: u64,
}

/// See the module documentation.
#[derive(Debug)]
pub struct ControllerState {
    routers: BTreeMap<Name, RouterState>,
    /// Every open connection → its router (an older connection a router replaced stays
    /// until it closes; the router's own `conn` names the one in use).
    on_conn: HashMap<ConnId, Name>,
    max_nexthops: usize,
    /// The topology and routes as last computed.
    routing: Routing,
    /// The set of connected routers changed since the last full computation.
    needs_full: bool,
    /// Whether reports are applied incrementally (off: every change recomputes everything,
    /// the path before incremental updates, kept as a baseline for benchmarks and tests).
    incremental: bool,
    /// Counters.
    pub counters: StateCounters,
    /// The operator's cache policy.
    cache: CachePolicy,
}

/// What the shell must send: an object for a router on its connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Push {
    /// The connection.
    pub conn: ConnId,
    /// The object, unsigned.
    pub object: ConfigObject,
}

impl ControllerState {
    /// No router yet.
    pub fn new(max_nexthops: usize) -> Self {
        Self {
            routers: BTreeMap::new(),
            on_conn: HashMap::new(),
            max_nexthops,
            routing: Routing::new(max_nexthops),
            needs_full: true,
            incremental: true,
            counters: StateCounters::default(),
            cache: CachePolicy::default(),
        }
    }

    /// As [`ControllerState::new`], but every change recomputes every route and publishes
    /// to every router (the baseline of the incremental path).
    pub fn with_full_recomputation(max_nexthops: usize) -> Self {
        Self {
            incremental: false,
            ..Self::new(max_nexthops)
        }
    }

    /// `router` is connected on `conn` (replacing an older connection) with `link_key`.
    /// Nothing is sent until its first report.
    pub fn connected(&mut self, router: &Name, link_key: Option<Bytes>, conn: ConnId) {
        let r = self
            .routers
            .entry(router.clone())
            .or_insert_with(|| RouterState::new(false));
        r.link_key = link_key.or(r.link_key.take());
        r.remote = false;
        r.conn = Some(conn);
        r.report = None;
        r.sent = false;
        r.cs.new_session();
        self.on_conn.insert(conn, router.clone());
        self.needs_full = true;
    }

    /// The router connected on `conn` (until the connection closes, also when the router
    /// connected again on another).
    pub fn router_on(&self, conn: ConnId) -> Option<&Name> {
        self.on_conn.get(&conn)
    }

    /// Whether `router` has a connection open (the one in use or an older one).
    pub fn has_connection(&self, router: &Name) -> bool {
        self.on_conn.values().any(|n| n == router)
    }

    /// The connection `conn` closed: its router's links and registrations leave the
    /// topology at once.
    pub fn disconnected(&mut self, conn: ConnId) -> Vec<Push> {
        let mut changed = false;
        if let Some((_, r)) = using(&self.on_conn, &mut self.routers, conn) {
            r.conn = None;
            r.report = None;
            r.sent = false;
            r.cs.new_session();
            changed = true;
        }
        self.on_conn.remove(&conn);
        if changed {
            self.membership_changed()
        } else {
            Vec::new()
        }
    }

    /// `router` reported its state on `conn`.
    pub fn report(&mut self, conn: ConnId, report: Report) -> Vec<Push> {
        self.reports(vec![(conn, report)])
    }

    /// Several reports taken at once (for instance every router's first report after the
    /// controller restarts): at most one full computation for the batch.
    pub fn reports(&mut self, batch: Vec<(ConnId, Report)>) -> Vec<Push> {
        let mut taken = Vec::new();
        for (conn, report) in batch {
            self.counters.reports += 1;
            let Some((name, r)) = using(&self.on_conn, &mut self.routers, conn) else {
                continue;
            };
            let first = r.report.is_none();
            if !first && r.report.as_ref() == Some(&report) {
                continue;
            }
            r.report = Some(report);
            taken.push(name.clone());
        }
        if taken.is_empty() {
            return Vec::new();
        }
        let mut pushes = if self.needs_full || !self.incremental {
            self.membership_changed()
        } else {
            self.apply(&taken)
        };
        pushes.extend(self.cs_pushes());
        pushes
    }

    /// Applies the new reports of `routers` to the routes kept; publishes to the routers
    /// whose FIB changed (and to the reporting routers).
    fn apply(&mut self, routers: &[Name]) -> Vec<Push> {
        let mut dirty: BTreeMap<NodeId, BTreeSet<PrefixId>> = BTreeMap::new();
        for name in routers {
            let Some(report) = self.routers.get(name).and_then(|r| r.report.as_ref()) else {
                continue;
            };
            match self.routing.update(name, report) {
                Some(changed) => {
                    for (r, pid) in changed {
                        dirty.entry(r).or_default().insert(pid);
                    }
                }
                None => return self.recompute(),
            }
            if let Some(id) = self.routing.id(name) {
                dirty.entry(id).or_default();
            }
        }
        self.counters.incremental += 1;
        self.publish_changes(dirty)
    }

    /// Replaces the cache policy: every connected router whose document changed gets it.
    pub fn set_cache_policy(&mut self, policy: CachePolicy) -> Vec<Push> {
        self.cache = policy;
        self.cs_pushes()
    }

    /// The operator's cache policy.
    pub fn cache_policy(&self) -> &CachePolicy {
        &self.cache
    }

    /// The router on `conn` applied cache policy `version`.
    pub fn cs_ack(&mut self, conn: ConnId, version: u64) {
        self.counters.acks += 1;
        let Some((_, r)) = using(&self.on_conn, &mut self.routers, conn) else {
            return;
        };
        if !r.cs.ack(version) {
            self.counters.bad_acks += 1;
        }
    }

    /// Publishes each reporting router's cache policy document; returns the objects its
    /// session has not had yet.
    fn cs_pushes(&mut self) -> Vec<Push> {
        let mut pushes = Vec::new();
        for (n, r) in &mut self.routers {
            let (Some(conn), Some(_)) = (r.conn, &r.report) else {
                continue;
            };
            let doc = if self.cache.is_empty() {
                String::new()
            } else {
                self.cache.document(n).encode()
            };
            r.cs.publish(doc);
            if let Some(object) = r.cs.take_pending(n) {
                self.counters.objects += 1;
                pushes.push(Push { conn, object });
            }
        }
        pushes
    }

    /// The router on `conn` applied `version`.
    pub fn ack(&mut self, conn: ConnId, version: u64) {
        self.counters.acks += 1;
        let Some((_, r)) = using(&self.on_conn, &mut self.routers, conn) else {
            return;
        };
        if version > r.version {
            self.counters.bad_acks += 1;
            return;
        }
        r.acked = r.acked.max(version);
    }

    /// `router` is served by another controller sharing the database (`serve/feed.rs`): in
    /// the topology with `report` (its links and registrations as that controller stored
    /// them), or out of it (`None`). Ignored while `router` is connected here.
    pub fn remote(
        &mut self,
        router: &Name,
        link_key: Option<Bytes>,
        report: Option<Report>,
    ) -> Vec<Push> {
        if self.routers.get(router).is_some_and(|r| r.conn.is_some()) {
            return Vec::new();
        }
        let was = self.routers.get(router).is_some_and(|r| r.remote);
        let Some(report) = report else {
            if let Some(r) = self.routers.get_mut(router).filter(|r| r.remote) {
                r.remote = false;
                r.report = None;
                return self.membership_changed();
            }
            return Vec::new();
        };
        let r = self
            .routers
            .entry(router.clone())
            .or_insert_with(|| RouterState::new(true));
        let new_key = link_key.is_some() && r.link_key != link_key;
        if was && !new_key && r.report.as_ref() == Some(&report) {
            return Vec::new();
        }
        r.link_key = link_key.or(r.link_key.take());
        r.remote = true;
        r.report = Some(report);
        if !was || new_key || self.needs_full || !self.incremental {
            self.membership_changed()
        } else {
            self.apply(std::slice::from_ref(router))
        }
    }

    /// The routers connected here that reported (whose registrations this controller
    /// stores).
    pub fn reported(&self) -> Vec<Name> {
        self.routers
            .iter()
            .filter(|(_, r)| r.conn.is_some() && r.report.is_some())
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// The registrations of every connected router: (router, registration).
    pub fn registrations(&self) -> Vec<(Name, RegistrationReport)> {
        self.routers
            .iter()
            .filter(|(_, r)| !r.remote)
            .filter_map(|(n, r)| r.report.as_ref().map(|rep| (n, rep)))
            .flat_map(|(n, rep)| rep.registrations.iter().map(|g| (n.clone(), g.clone())))
            .collect()
    }

    /// Usable links after the last computation: (a, b, cost).
    pub fn links(&self) -> Vec<(String, String, u64)> {
        self.routing.links()
    }

    /// Every reported link after the last computation, sorted by its ends.
    pub fn link_views(&self) -> Vec<LinkView> {
        self.routing.link_views()
    }

    /// Every router's computed FIB and versions, sorted by name.
    pub fn fibs(&self) -> Vec<RouterFib> {
        self.routers
            .iter()
            .map(|(n, r)| RouterFib {
                router: n.to_string(),
                connected: r.conn.is_some(),
                version: r.version,
                acked: r.acked,
                fib: r.fib.clone(),
                cs_versions: r.cs.versions(),
            })
            .collect()
    }

    /// Connected routers and their FIB version (current, acknowledged).
    pub fn routers(&self) -> Vec<(String, bool, u64, u64)> {
        self.routers
            .iter()
            .map(|(n, r)| (n.to_string(), r.conn.is_some(), r.version, r.acked))
            .collect()
    }

    /// The set of connected routers (or a link key) changed: a full computation when
    /// recomputing everything is the mode or when more than 1/16 of the routers are new (the
    /// start); else the new routers are added and every report is applied again as a
    /// difference ([`Routing::sync`]), and what changed is published, with a snapshot to
    /// each new session.
    fn membership_changed(&mut self) -> Vec<Push> {
        let unknown = self.routing.unknown(self.routers.keys());
        if !self.incremental || unknown > self.routers.len() / 16 + 1 {
            return self.recompute();
        }
        self.needs_full = false;
        self.counters.incremental += 1;
        self.counters.syncs += 1;
        let inputs = self.routers.iter().map(|(n, r)| RouterInput {
            name: n,
            link_key: r.link_key.as_deref(),
            connected: r.conn.is_some() || r.remote,
            report: r.report.as_ref(),
        });
        let mut dirty: BTreeMap<NodeId, BTreeSet<PrefixId>> = BTreeMap::new();
        for (r, pid) in self.routing.sync(inputs) {
            dirty.entry(r).or_default().insert(pid);
        }
        for (n, r) in &self.routers {
            if r.conn.is_some() && r.report.is_some() && !r.sent {
                if let Some(id) = self.routing.id(n) {
                    dirty.entry(id).or_default();
                }
            }
        }
        self.publish_changes(dirty)
    }

    /// Rebuilds the topology and the routes from the connected routers' reports, publishes
    /// every changed FIB and returns what to send.
    fn recompute(&mut self) -> Vec<Push> {
        self.counters.computations += 1;
        self.needs_full = false;
        let inputs = self.routers.iter().map(|(n, r)| RouterInput {
            name: n,
            link_key: r.link_key.as_deref(),
            connected: r.conn.is_some() || r.remote,
            report: r.report.as_ref(),
        });
        self.routing.rebuild(inputs, self.max_nexthops);
        let all: Vec<NodeId> = self
            .routers
            .keys()
            .filter_map(|n| self.routing.id(n))
            .collect();
        self.publish(all)
    }

    /// Publishes the computed FIB of each of `ids` (connected routers that reported) and
    /// returns the objects their sessions have not had. Reads each whole FIB: for full
    /// computations.
    fn publish(&mut self, ids: impl IntoIterator<Item = NodeId>) -> Vec<Push> {
        let mut pushes = Vec::new();
        for id in ids {
            let Some(n) = self.routing.name(id) else {
                continue;
            };
            let Some(r) = self.routers.get_mut(n) else {
                continue;
            };
            let (Some(conn), Some(_)) = (r.conn, &r.report) else {
                continue;
            };
            if let Some(object) = whole_fib_object(&self.routing, id, n, r) {
                self.counters.objects += 1;
                pushes.push(Push { conn, object });
            }
        }
        pushes
    }

    /// Publishes the entries of `dirty` (router → prefixes whose entry the engine changed)
    /// to those routers (connected, having reported); returns the objects their sessions
    /// have not had. Costs the entries listed, not the FIBs' size.
    fn publish_changes(&mut self, dirty: BTreeMap<NodeId, BTreeSet<PrefixId>>) -> Vec<Push> {
        let mut pushes = Vec::new();
        // In the routers' (names') order, as a full computation publishes: ids follow it only
        // until a router joins without one.
        let mut dirty: Vec<(NodeId, BTreeSet<PrefixId>)> = dirty.into_iter().collect();
        dirty.sort_by(|a, b| self.routing.name(a.0).cmp(&self.routing.name(b.0)));
        for (id, pids) in dirty {
            let Some(n) = self.routing.name(id) else {
                continue;
            };
            let Some(r) = self.routers.get_mut(n) else {
                continue;
            };
            let (Some(conn), Some(_)) = (r.conn, &r.report) else {
                continue;
            };
            if !r.sent {
                // A new session gets a snapshot: the FIB kept for the router missed the
                // changes made while it was away, so it is read whole.
                if let Some(object) = whole_fib_object(&self.routing, id, n, r) {
                    self.counters.objects += 1;
                    pushes.push(Push { conn, object });
                }
                continue;
            }
            let mut diff = FibDiff::default();
            for pid in pids {
                let Some((prefix, hops)) = self.routing.entry(id, pid) else {
                    continue;
                };
                match r.fib.get(prefix) {
                    Some(_) if hops.is_empty() => diff.removals.push(prefix.clone()),
                    Some(old) if old.as_slice() == hops => {}
                    None if hops.is_empty() => {}
                    _ => diff.upserts.push((prefix.clone(), hops.to_vec())),
                }
            }
            if !diff.is_empty() {
                diff.upserts.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                diff.removals.sort_unstable();
                let fib = Arc::make_mut(&mut r.fib);
                for p in &diff.removals {
                    fib.remove(p);
                }
                for (p, hops) in &diff.upserts {
                    fib.insert(p.clone(), hops.clone());
                }
            }
            if let Some(object) = next_object(n, r, diff) {
                self.counters.objects += 1;
                pushes.push(Push { conn, object });
            }
        }
        pushes
    }
}

/// The router using connection `conn`, by a map look-up (no scan of the routers).
fn using<'a>(
    on_conn: &'a HashMap<ConnId, Name>,
    routers: &'a mut BTreeMap<Name, RouterState>,
    conn: ConnId,
) -> Option<(&'a Name, &'a mut RouterState)> {
    let name = on_conn.get(&conn)?;
    let r = routers.get_mut(name)?;
    (r.conn == Some(conn)).then_some((name, r))
}

/// After `r.fib` moved by `diff` (applied already): the next version when it is not empty,
/// and the object `r`'s session needs: a snapshot on a new session, else the diff from the
/// version last sent (nothing when nothing changed).
/// Reads `id`'s whole computed FIB, keeps it as what `r` holds when it changed, and gives the
/// object `r`'s session has not had (the diff, or a snapshot for a new session).
fn whole_fib_object(
    routing: &Routing,
    id: NodeId,
    router: &Name,
    r: &mut RouterState,
) -> Option<ConfigObject> {
    let fib = routing.fib(id);
    let diff = FibDiff::between(&r.fib, &fib);
    if !diff.is_empty() {
        r.fib = Arc::new(fib);
    }
    next_object(router, r, diff)
}

fn next_object(router: &Name, r: &mut RouterState, diff: FibDiff) -> Option<ConfigObject> {
    let changed = !diff.is_empty();
    if changed {
        r.version += 1;
    }
    let (base, body) = if r.sent {
        if !changed {
            return None;
        }
        (Some(r.version.saturating_sub(1)), ConfigBody::FibDiff(diff))
    } else {
        (None, ConfigBody::FibSnapshot((*r.fib).clone()))
    };
    r.sent = true;
    Some(ConfigObject {
        router: router.clone(),
        kind: ConfigKind::Fib,
        version: r.version,
        base,
        body,
    })
}

#[cfg(test)]
mod props;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::NeighbourReport;
    use crate::routes::NextHop;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    fn key(i: u8) -> Bytes {
        Bytes::from(vec![i; 32])
    }

    fn nb(i: u8, face: u64, up: bool) -> NeighbourReport {
        NeighbourReport {
            link_key: key(i),
            face,
            cost: 10,
            up,
        }
    }

    fn fib_of(p: &Push) -> Fib {
        match &p.object.body {
            ConfigBody::FibSnapshot(f) => f.clone(),
            other => panic!("not a snapshot: {other:?}"),
        }
    }

    /// r1 - r2 - r3 with /app registered at r3.
    fn line() -> ControllerState {
        let mut s = ControllerState::new(2);
        for i in 1..=3u8 {
            s.connected(&n(&format!("/ex/r{i}")), Some(key(i)), u64::from(i));
        }
        s.report(
            1,
            Report {
                neighbours: vec![nb(2, 12, true)],
                ..Report::default()
            },
        );
        s.report(
            2,
            Report {
                neighbours: vec![nb(1, 21, true), nb(3, 23, true)],
                ..Report::default()
            },
        );
        s
    }

    #[test]
    fn a_registration_at_one_end_is_routed_from_the_other_and_links_need_both_ends() {
        let mut s = line();
        // r3 has not reported yet: the r2-r3 link is half-reported, unused.
        assert_eq!(s.links().len(), 1);
        let pushes = s.report(
            3,
            Report {
                neighbours: vec![nb(2, 32, true)],
                registrations: vec![RegistrationReport {
                    prefix: n("/app"),
                    face: 300,
                    cost: 0,
                }],
                faces: vec![],
            },
        );
        assert_eq!(s.links().len(), 2);
        let r1 = pushes.iter().find(|p| p.conn == 1).unwrap();
        // r1 had an (empty) snapshot already: this is a diff adding /app via face 12.
        match &r1.object.body {
            ConfigBody::FibDiff(d) => {
                assert_eq!(d.upserts.len(), 1);
                assert_eq!(d.upserts[0].0, n("/app"));
                assert_eq!(d.upserts[0].1[0].face, 12);
            }
            other => panic!("{other:?}"),
        }
        let r3 = pushes.iter().find(|p| p.conn == 3).unwrap();
        assert_eq!(
            fib_of(r3).get(&n("/app")).unwrap(),
            &vec![NextHop { face: 300, cost: 0 }]
        );
    }

    #[test]
    fn a_link_reported_down_or_a_router_gone_removes_routes_at_once() {
        let mut s = line();
        let reg = Report {
            neighbours: vec![nb(2, 32, true)],
            registrations: vec![RegistrationReport {
                prefix: n("/app"),
                face: 300,
                cost: 0,
            }],
            faces: vec![],
        };
        s.report(3, reg.clone());
        let pushes = s.report(
            2,
            Report {
                neighbours: vec![nb(1, 21, true), nb(3, 23, false)],
                ..Report::default()
            },
        );
        let r1 = pushes.iter().find(|p| p.conn == 1).unwrap();
        match &r1.object.body {
            ConfigBody::FibDiff(d) => assert_eq!(d.removals, vec![n("/app")]),
            other => panic!("{other:?}"),
        }
        // Back up, then r2 disconnects: r1 loses /app again.
        s.report(
            2,
            Report {
                neighbours: vec![nb(1, 21, true), nb(3, 23, true)],
                ..Report::default()
            },
        );
        let pushes = s.disconnected(2);
        let r1 = pushes.iter().find(|p| p.conn == 1).unwrap();
        match &r1.object.body {
            ConfigBody::FibDiff(d) => assert_eq!(d.removals, vec![n("/app")]),
            other => panic!("{other:?}"),
        }
        assert!(s.links().is_empty());
    }

    #[test]
    fn the_same_report_twice_sends_nothing_and_unknown_acks_are_counted() {
        let mut s = line();
        let rep = Report {
            neighbours: vec![nb(1, 21, true), nb(3, 23, true)],
            ..Report::default()
        };
        assert!(s.report(2, rep).is_empty());
        s.ack(1, 99);
        assert_eq!(s.counters.bad_acks, 1);
    }

    #[test]
    fn operators_see_half_reported_links_and_each_routers_longest_match() {
        let mut s = line();
        s.report(
            3,
            Report {
                neighbours: vec![],
                registrations: vec![RegistrationReport {
                    prefix: n("/app"),
                    face: 300,
                    cost: 0,
                }],
                faces: vec![],
            },
        );
        let views = s.link_views();
        assert_eq!(views.len(), 2);
        assert_eq!(
            (views[0].a_up, views[0].b_up, views[0].cost),
            (Some(true), Some(true), Some(10))
        );
        // r2 reports r3, r3 does not: shown, not usable.
        assert_eq!(views[1].a, "/ex/r2");
        assert_eq!(
            (views[1].a_up, views[1].b_up, views[1].cost),
            (Some(true), None, None)
        );
        let fibs = s.fibs();
        let r3 = fibs.iter().find(|f| f.router == "/ex/r3").unwrap();
        let (p, hops) = longest_match(&r3.fib, &n("/app/x/y")).unwrap();
        assert_eq!(
            (p, hops),
            (&n("/app"), &[NextHop { face: 300, cost: 0 }][..])
        );
        assert!(longest_match(&r3.fib, &n("/other")).is_none());
        let r1 = fibs.iter().find(|f| f.router == "/ex/r1").unwrap();
        assert!(longest_match(&r1.fib, &n("/app")).is_none());
    }
}
