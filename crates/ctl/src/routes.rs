//! [`RouteEngine`]: per-router FIBs from the topology and the registry.
//!
//! For every prefix, the routers that registered it are its origins. A router's FIB entry
//! for the prefix points at the nearest origin(s): every neighbour on an equal-cost shortest
//! path, cheapest first, at most `max_nexthops`. An origin router's own entry points at the
//! faces the prefix was registered on.
//!
//! The engine keeps one shortest-path row per origin router. When one link changes it repairs
//! only those rows ([`crate::spt::repair`]) and rebuilds only the FIBs of routers whose
//! distances moved, their neighbours and the link's two ends.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use nameway_wire::Name;
use smallvec::SmallVec;

use crate::spt::{dijkstra, repair, INF};
use crate::topology::{EdgeChange, LinkReport, NodeId, Topology};

/// One next hop of a FIB entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NextHop {
    /// The router's face toward the next hop (or, at the origin, toward the producer).
    pub face: u64,
    /// The path's cost to the origin through this face.
    pub cost: u64,
}

/// A router's FIB: prefix → next hops (cheapest first).
pub type Fib = BTreeMap<Name, Vec<NextHop>>;

/// One origin of a prefix: a router and the face it registered the prefix on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Origin {
    /// The router.
    pub router: NodeId,
    /// Its face toward the producer.
    pub face: u64,
    /// The registration's cost.
    pub cost: u64,
}

/// Next hops as stored per entry: most entries have one or two, kept inline.
type Hops = SmallVec<[NextHop; 2]>;

/// A prefix's number in a [`RouteEngine`] (see [`RouteEngine::prefix`]).
pub type PrefixId = usize;

/// FIB entries whose next hops changed: (router, prefix), sorted, each once.
pub type Changed = Vec<(NodeId, PrefixId)>;

/// The routers of `changed`, sorted, each once.
pub fn changed_routers(changed: &[(NodeId, PrefixId)]) -> Vec<NodeId> {
    let mut routers: Vec<NodeId> = changed.iter().map(|&(r, _)| r).collect();
    routers.dedup();
    routers
}

/// Topology + origins → FIBs, kept up to date incrementally.
///
/// Internally a FIB is a table indexed by prefix id (no map look-ups while computing);
/// [`RouteEngine::fib`] builds the name-keyed [`Fib`] on demand.
#[derive(Debug)]
pub struct RouteEngine {
    topo: Topology,
    max_nexthops: usize,
    /// Prefix id → name and origins.
    prefixes: Vec<(Name, Vec<Origin>)>,
    prefix_ids: HashMap<Name, usize>,
    /// Origin router → its row's index.
    row_of: HashMap<NodeId, usize>,
    /// Row index → (origin router, distances from it).
    rows: Vec<(NodeId, Vec<u64>)>,
    /// Row index → prefix ids that have this router as an origin.
    prefixes_of_row: Vec<Vec<usize>>,
    /// Prefix id → the row index of each of its origins (aligned with its origins).
    origin_rows: Vec<Vec<usize>>,
    /// Prefix id → router → next hops (empty: no route). Prefix-major: a full computation
    /// fills one prefix at a time reading only its origins' rows.
    entries: Vec<Vec<Hops>>,
}

impl RouteEngine {
    /// An engine over `topo` that keeps at most `max_nexthops` next hops per entry (at
    /// least 1).
    pub fn new(topo: Topology, max_nexthops: usize) -> Self {
        Self {
            topo,
            max_nexthops: max_nexthops.max(1),
            prefixes: Vec::new(),
            prefix_ids: HashMap::new(),
            row_of: HashMap::new(),
            rows: Vec::new(),
            prefixes_of_row: Vec::new(),
            origin_rows: Vec::new(),
            entries: Vec::new(),
        }
    }

    /// The topology.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// Adds a router without links (or finds it by name); its id. Its entries start empty;
    /// its links then come as [`RouteEngine::report_link`]s, each an incremental change.
    pub fn add_router(&mut self, name: &str) -> NodeId {
        let before = self.topo.len();
        let id = self.topo.add_router(name);
        if self.topo.len() > before {
            for column in &mut self.entries {
                column.push(Hops::new());
            }
            for (_, row) in &mut self.rows {
                row.push(INF);
            }
        }
        id
    }

    /// Sets the ECMP limit (call [`RouteEngine::compute_all`] after).
    pub fn set_max_nexthops(&mut self, n: usize) {
        self.max_nexthops = n.max(1);
    }

    /// Adds `origin` for `prefix` (call [`RouteEngine::compute_all`] after a batch).
    pub fn add_origin(&mut self, prefix: Name, origin: Origin) {
        let next = self.prefixes.len();
        let id = *self.prefix_ids.entry(prefix.clone()).or_insert(next);
        if id == next {
            self.prefixes.push((prefix, Vec::new()));
        }
        if let Some((_, list)) = self.prefixes.get_mut(id) {
            if !list.contains(&origin) {
                list.push(origin);
                list.sort_unstable();
            }
        }
    }

    /// Computes every origin's shortest-path row and every router's FIB from scratch.
    pub fn compute_all(&mut self) {
        let origins: BTreeSet<NodeId> = self
            .prefixes
            .iter()
            .flat_map(|(_, o)| o.iter().map(|o| o.router))
            .collect();
        self.rows = origins
            .into_iter()
            .map(|o| (o, dijkstra(&self.topo, o)))
            .collect();
        self.row_of = self
            .rows
            .iter()
            .enumerate()
            .map(|(i, (o, _))| (*o, i))
            .collect();
        self.prefixes_of_row = vec![Vec::new(); self.rows.len()];
        for (pid, (_, origins)) in self.prefixes.iter().enumerate() {
            for o in origins {
                if let Some(list) = self
                    .row_of
                    .get(&o.router)
                    .and_then(|&i| self.prefixes_of_row.get_mut(i))
                {
                    if list.last() != Some(&pid) {
                        list.push(pid);
                    }
                }
            }
        }
        self.origin_rows = self
            .prefixes
            .iter()
            .map(|(_, origins)| {
                origins
                    .iter()
                    .map(|o| self.row_of.get(&o.router).copied().unwrap_or(usize::MAX))
                    .collect()
            })
            .collect();
        let n = self.topo.len();
        let mut entries = Vec::with_capacity(self.prefixes.len());
        for pid in 0..self.prefixes.len() {
            let mut column = Vec::with_capacity(n);
            let view = self.view(pid);
            for r in 0..n {
                column.push(view.hops_at(NodeId::try_from(r).unwrap_or(NodeId::MAX)));
            }
            entries.push(column);
        }
        self.entries = entries;
    }

    /// What prefix `pid`'s entries read: its origins and their rows.
    fn view(&self, pid: usize) -> PrefixView<'_> {
        let origins = self
            .prefixes
            .get(pid)
            .map_or(&[][..], |(_, o)| o.as_slice());
        let rows = self
            .origin_rows
            .get(pid)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|&ri| self.rows.get(ri).map_or(&[][..], |(_, row)| row.as_slice()))
            .collect();
        PrefixView {
            topo: &self.topo,
            origins,
            rows,
            max_nexthops: self.max_nexthops,
        }
    }

    /// The FIB of router `r` as last computed.
    pub fn fib(&self, r: NodeId) -> Option<Fib> {
        if r as usize >= self.topo.len() {
            return None;
        }
        Some(
            self.entries
                .iter()
                .zip(&self.prefixes)
                .filter_map(|(column, (name, _))| {
                    let hops = column.get(r as usize).filter(|h| !h.is_empty())?;
                    Some((name.clone(), hops.to_vec()))
                })
                .collect(),
        )
    }

    /// The name of prefix `pid`.
    pub fn prefix(&self, pid: PrefixId) -> Option<&Name> {
        self.prefixes.get(pid).map(|(name, _)| name)
    }

    /// Router `r`'s next hops for prefix `pid` as last computed (empty: no route).
    pub fn hops(&self, r: NodeId, pid: PrefixId) -> &[NextHop] {
        self.entries
            .get(pid)
            .and_then(|e| e.get(r as usize))
            .map_or(&[], |h| h.as_slice())
    }

    /// Router `r`'s next hops for exactly `prefix` (empty: no route).
    pub fn entry(&self, r: NodeId, prefix: &Name) -> &[NextHop] {
        self.prefix_ids
            .get(prefix)
            .and_then(|&pid| self.entries.get(pid)?.get(r as usize))
            .map_or(&[], |h| h.as_slice())
    }

    /// Adds `origin` for `prefix` and recomputes that prefix's entries only (after
    /// [`RouteEngine::compute_all`] has run once). Returns the entries that changed.
    pub fn register(&mut self, prefix: Name, origin: Origin) -> Changed {
        let pid = self.prefix_id(prefix);
        let Some((_, list)) = self.prefixes.get_mut(pid) else {
            return Vec::new();
        };
        if list.contains(&origin) {
            return Vec::new();
        }
        list.push(origin);
        list.sort_unstable();
        let ri = self.row_for(origin.router);
        if let Some(of_row) = self.prefixes_of_row.get_mut(ri) {
            if let Err(at) = of_row.binary_search(&pid) {
                of_row.insert(at, pid);
            }
        }
        self.refresh_prefix(pid)
    }

    /// Removes `origin` of `prefix` and recomputes that prefix's entries only. Returns the
    /// entries that changed.
    pub fn unregister(&mut self, prefix: &Name, origin: &Origin) -> Changed {
        let Some(&pid) = self.prefix_ids.get(prefix) else {
            return Vec::new();
        };
        let Some((_, list)) = self.prefixes.get_mut(pid) else {
            return Vec::new();
        };
        let before = list.len();
        list.retain(|o| o != origin);
        if list.len() == before {
            return Vec::new();
        }
        let still_there = list.iter().any(|o| o.router == origin.router);
        if !still_there {
            if let Some(of_row) = self
                .row_of
                .get(&origin.router)
                .and_then(|&ri| self.prefixes_of_row.get_mut(ri))
            {
                if let Ok(at) = of_row.binary_search(&pid) {
                    of_row.remove(at);
                }
            }
        }
        self.refresh_prefix(pid)
    }

    /// Forgets `a`'s report about its link to `b` and updates the FIB entries it touches.
    /// Returns the entries that changed.
    pub fn withdraw_link(&mut self, a: NodeId, b: NodeId) -> Changed {
        match self.topo.withdraw(a, b) {
            Some(change) => self.apply_change(&change),
            None => Vec::new(),
        }
    }

    /// The id of `prefix`, a new one (with an empty entry at every router) if unknown.
    fn prefix_id(&mut self, prefix: Name) -> usize {
        if let Some(&pid) = self.prefix_ids.get(&prefix) {
            return pid;
        }
        let pid = self.prefixes.len();
        self.prefix_ids.insert(prefix.clone(), pid);
        self.prefixes.push((prefix, Vec::new()));
        self.origin_rows.push(Vec::new());
        self.entries.push(vec![Hops::new(); self.topo.len()]);
        pid
    }

    /// The row of origin router `r`, made (or brought up to date, when it served no prefix
    /// and so was not repaired) now.
    fn row_for(&mut self, r: NodeId) -> usize {
        match self.row_of.get(&r) {
            Some(&ri) => {
                if self.prefixes_of_row.get(ri).is_some_and(Vec::is_empty) {
                    let row = dijkstra(&self.topo, r);
                    if let Some(slot) = self.rows.get_mut(ri) {
                        slot.1 = row;
                    }
                }
                ri
            }
            None => {
                let ri = self.rows.len();
                self.rows.push((r, dijkstra(&self.topo, r)));
                self.row_of.insert(r, ri);
                self.prefixes_of_row.push(Vec::new());
                ri
            }
        }
    }

    /// Recomputes prefix `pid`'s rows index and its entry at every router; the entries that
    /// changed.
    fn refresh_prefix(&mut self, pid: usize) -> Changed {
        let rows: Vec<usize> = self
            .prefixes
            .get(pid)
            .map_or_else(Vec::new, |(_, origins)| {
                origins
                    .iter()
                    .map(|o| self.row_of.get(&o.router).copied().unwrap_or(usize::MAX))
                    .collect()
            });
        if let Some(slot) = self.origin_rows.get_mut(pid) {
            *slot = rows;
        }
        let mut changed = Vec::new();
        let view = self.view(pid);
        let fresh: Vec<Hops> = (0..self.topo.len())
            .map(|r| view.hops_at(NodeId::try_from(r).unwrap_or(NodeId::MAX)))
            .collect();
        drop(view);
        if let Some(column) = self.entries.get_mut(pid) {
            for (r, (slot, hops)) in column.iter_mut().zip(fresh).enumerate() {
                if *slot != hops {
                    *slot = hops;
                    changed.push((NodeId::try_from(r).unwrap_or(NodeId::MAX), pid));
                }
            }
        }
        changed
    }

    /// Records `a`'s report about its link to `b` and updates the FIB entries it touches.
    /// Returns the entries that changed.
    pub fn report_link(&mut self, a: NodeId, b: NodeId, report: LinkReport) -> Changed {
        match self.topo.report(a, b, report) {
            Some(change) => self.apply_change(&change),
            None => Vec::new(),
        }
    }

    /// Repairs the rows, then recomputes the entries that depend on a moved distance: a
    /// router's next hops toward origin `o` read `o`'s distances at the router and at its
    /// neighbours, and the link costs at the router (which change only at the link's ends).
    fn apply_change(&mut self, change: &EdgeChange) -> Changed {
        let mut dirty: BTreeSet<(NodeId, usize)> = BTreeSet::new();
        for (ri, (o, row)) in self.rows.iter_mut().enumerate() {
            if self.prefixes_of_row.get(ri).is_none_or(Vec::is_empty) {
                continue; // no prefix left at this origin: brought up to date when reused
            }
            for n in repair(&self.topo, *o, row, change) {
                dirty.insert((n, ri));
                for adj in self.topo.adjacencies(n) {
                    dirty.insert((adj.to, ri));
                }
            }
        }
        let mut work: BTreeSet<(NodeId, usize)> = BTreeSet::new();
        for (r, ri) in dirty {
            for &pid in self.prefixes_of_row.get(ri).map_or(&[][..], Vec::as_slice) {
                work.insert((r, pid));
            }
        }
        for end in [change.a, change.b] {
            for pid in 0..self.prefixes.len() {
                work.insert((end, pid));
            }
        }
        let mut changed = Vec::new();
        for (r, pid) in work {
            let hops = self.view(pid).hops_at(r);
            let Some(slot) = self
                .entries
                .get_mut(pid)
                .and_then(|e| e.get_mut(r as usize))
            else {
                continue;
            };
            if *slot != hops {
                *slot = hops;
                changed.push((r, pid));
            }
        }
        changed
    }
}

/// One prefix as its entries read it: its origins and, aligned with them, their rows.
struct PrefixView<'a> {
    topo: &'a Topology,
    origins: &'a [Origin],
    rows: SmallVec<[&'a [u64]; 2]>,
    max_nexthops: usize,
}

impl PrefixView<'_> {
    /// Router `r`'s next hops: its own faces when it is an origin, else every neighbour on
    /// an equal-cost shortest path to the nearest origin(s), cheapest first, capped.
    fn hops_at(&self, r: NodeId) -> Hops {
        let mut hops: Hops = self
            .origins
            .iter()
            .filter(|o| o.router == r)
            .map(|o| NextHop {
                face: o.face,
                cost: o.cost,
            })
            .collect();
        if hops.is_empty() {
            let dist = |row: &[u64], n: NodeId| row.get(n as usize).copied().unwrap_or(INF);
            let best = self
                .rows
                .iter()
                .map(|row| dist(row, r))
                .min()
                .unwrap_or(INF);
            if best == INF {
                return hops;
            }
            for row in &self.rows {
                if dist(row, r) != best {
                    continue;
                }
                for adj in self.topo.adjacencies(r) {
                    if adj.cost.saturating_add(dist(row, adj.to)) == best {
                        hops.push(NextHop {
                            face: adj.face,
                            cost: best,
                        });
                    }
                }
            }
        }
        if hops.len() > 1 {
            hops.sort_unstable();
            hops.dedup_by_key(|h| h.face);
            hops.sort_by_key(|h| (h.cost, h.face));
            hops.truncate(self.max_nexthops);
        }
        hops
    }
}

/// The changes that turn one FIB into another.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FibDiff {
    /// Entries added or whose next hops changed (the whole new list).
    pub upserts: Vec<(Name, Vec<NextHop>)>,
    /// Prefixes whose entry is gone.
    pub removals: Vec<Name>,
}

impl FibDiff {
    /// The diff from `old` to `new`.
    pub fn between(old: &Fib, new: &Fib) -> Self {
        let upserts = new
            .iter()
            .filter(|(p, h)| old.get(*p) != Some(*h))
            .map(|(p, h)| (p.clone(), h.clone()))
            .collect();
        let removals = old
            .keys()
            .filter(|p| !new.contains_key(*p))
            .cloned()
            .collect();
        Self { upserts, removals }
    }

    /// Whether nothing changes.
    pub fn is_empty(&self) -> bool {
        self.upserts.is_empty() && self.removals.is_empty()
    }

    /// `old` with the diff applied.
    pub fn apply(&self, old: &Fib) -> Fib {
        let mut fib = old.clone();
        for p in &self.removals {
            fib.remove(p);
        }
        for (p, h) in &self.upserts {
            fib.insert(p.clone(), h.clone());
        }
        fib
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The (router, prefix) entries that differ between `before` and `after` (one FIB per
    /// router, in id order).
    fn changed_entries(e: &RouteEngine, before: &[Fib], after: &[Fib]) -> Changed {
        let mut out = Changed::new();
        for (r, (b, a)) in before.iter().zip(after).enumerate() {
            let mut pid = 0;
            while let Some(p) = e.prefix(pid) {
                if b.get(p) != a.get(p) {
                    out.push((NodeId::try_from(r).unwrap(), pid));
                }
                pid += 1;
            }
        }
        out
    }

    fn up(face: u64, cost: u32) -> LinkReport {
        LinkReport {
            face,
            cost,
            up: true,
        }
    }

    /// r0 - r1 - r3 and r0 - r2 - r3 (a square), all costs 1; the prefix at r3.
    fn square() -> (RouteEngine, [NodeId; 4]) {
        let mut t = Topology::new();
        let ids = ["/r0", "/r1", "/r2", "/r3"].map(|n| t.add_router(n));
        let [r0, r1, r2, r3] = ids;
        for (a, b) in [(r0, r1), (r0, r2), (r1, r3), (r2, r3)] {
            t.report(a, b, up(100 + u64::from(b), 1));
            t.report(b, a, up(100 + u64::from(a), 1));
        }
        let mut e = RouteEngine::new(t, 4);
        e.add_origin(
            "/video".parse().unwrap(),
            Origin {
                router: r3,
                face: 9,
                cost: 0,
            },
        );
        e.compute_all();
        (e, ids)
    }

    #[test]
    fn equal_cost_paths_are_both_used_and_a_failure_moves_to_the_other() {
        let (mut e, [r0, r1, r2, r3]) = square();
        let p: Name = "/video".parse().unwrap();
        let hops = e.entry(r0, &p);
        assert_eq!(
            hops,
            &[
                NextHop { face: 101, cost: 2 },
                NextHop { face: 102, cost: 2 }
            ]
        );
        assert_eq!(e.fib(r3).unwrap()[&p], [NextHop { face: 9, cost: 0 }]);
        // r1 sees its link to r3 fail: r1 now goes back through r0.
        let changed = e.report_link(
            r1,
            r3,
            LinkReport {
                up: false,
                ..up(103, 1)
            },
        );
        assert_eq!(changed_routers(&changed), vec![r0, r1]);
        assert_eq!(e.fib(r0).unwrap()[&p], [NextHop { face: 102, cost: 2 }]);
        assert_eq!(e.fib(r1).unwrap()[&p], [NextHop { face: 100, cost: 3 }]);
        assert_eq!(e.fib(r2).unwrap()[&p], [NextHop { face: 103, cost: 1 }]);
    }

    #[test]
    fn max_nexthops_caps_ecmp() {
        let (mut e, [r0, ..]) = square();
        e.set_max_nexthops(1);
        e.compute_all();
        assert_eq!(
            e.fib(r0).unwrap()[&"/video".parse::<Name>().unwrap()].len(),
            1
        );
    }

    #[test]
    fn the_nearest_origin_wins() {
        let (mut e, [r0, r1, _, _]) = square();
        let p: Name = "/video".parse().unwrap();
        e.add_origin(
            p.clone(),
            Origin {
                router: r1,
                face: 5,
                cost: 0,
            },
        );
        e.compute_all();
        assert_eq!(e.fib(r0).unwrap()[&p], [NextHop { face: 101, cost: 1 }]);
    }

    #[test]
    fn diff_applied_to_the_old_fib_gives_the_new() {
        let (mut e, [r0, r1, r2, r3]) = square();
        e.add_origin(
            "/other".parse().unwrap(),
            Origin {
                router: r2,
                face: 1,
                cost: 0,
            },
        );
        e.compute_all();
        let before: Vec<Fib> = (0..4).map(|r| e.fib(r).unwrap()).collect();
        e.report_link(
            r2,
            r3,
            LinkReport {
                up: false,
                ..up(103, 1)
            },
        );
        e.report_link(r0, r1, up(101, 7));
        for (r, old) in [r0, r1, r2, r3].into_iter().zip(&before) {
            let new = e.fib(r).unwrap();
            let d = FibDiff::between(old, &new);
            assert_eq!(d.apply(old), new);
            assert_eq!(d.is_empty(), *old == new);
        }
    }

    #[test]
    fn incremental_fibs_equal_a_full_recomputation() {
        let (mut e, [r0, r1, r2, r3]) = square();
        let steps = [
            (
                r0,
                r1,
                LinkReport {
                    up: false,
                    ..up(101, 1)
                },
            ),
            (r2, r3, up(103, 5)),
            (r0, r1, up(101, 1)),
            (
                r3,
                r1,
                LinkReport {
                    up: false,
                    ..up(101, 1)
                },
            ),
        ];
        for (a, b, rep) in steps {
            e.report_link(a, b, rep);
            let incremental: Vec<Fib> = (0..4).map(|r| e.fib(r).unwrap()).collect();
            e.compute_all();
            let full: Vec<Fib> = (0..4).map(|r| e.fib(r).unwrap()).collect();
            assert_eq!(incremental, full);
        }
    }

    #[test]
    fn a_registration_or_withdrawal_touches_only_its_prefix_and_equals_a_full_recomputation() {
        let (mut e, [r0, r1, r2, r3]) = square();
        let other: Name = "/other".parse().unwrap();
        let at = |router, face| Origin {
            router,
            face,
            cost: 0,
        };
        let check = |e: &mut RouteEngine, changed: Changed, before: Vec<Fib>| {
            let incremental: Vec<Fib> = (0..4).map(|r| e.fib(r).unwrap()).collect();
            e.compute_all();
            let full: Vec<Fib> = (0..4).map(|r| e.fib(r).unwrap()).collect();
            assert_eq!(incremental, full);
            assert_eq!(changed, changed_entries(e, &before, &full));
        };
        let fibs = |e: &RouteEngine| (0..4).map(|r| e.fib(r).unwrap()).collect::<Vec<_>>();
        let before = fibs(&e);
        let changed = e.register(other.clone(), at(r2, 7));
        assert_eq!(changed_routers(&changed), vec![r0, r1, r2, r3]);
        check(&mut e, changed, before);
        // A second origin: r1 now reaches /other at home, r0 and r3 tie.
        let before = fibs(&e);
        let changed = e.register(other.clone(), at(r1, 8));
        check(&mut e, changed, before);
        assert_eq!(e.entry(r0, &other).len(), 2);
        // Withdrawn at r2 (whose row then serves nothing), a link fails, r2 registers again.
        let before = fibs(&e);
        let changed = e.unregister(&other, &at(r2, 7));
        check(&mut e, changed, before);
        e.report_link(
            r0,
            r1,
            LinkReport {
                up: false,
                ..up(101, 1)
            },
        );
        let before = fibs(&e);
        let changed = e.register(other.clone(), at(r2, 7));
        check(&mut e, changed, before);
        assert_eq!(e.register(other.clone(), at(r2, 7)), Changed::new());
        let before = fibs(&e);
        let changed = e.unregister(&"/video".parse().unwrap(), &at(r3, 9));
        check(&mut e, changed, before);
        assert!(!e
            .fib(r0)
            .unwrap()
            .contains_key(&"/video".parse::<Name>().unwrap()));
    }

    #[test]
    fn incremental_fibs_equal_a_full_recomputation_on_a_random_graph() {
        // 150 routers, a ring plus random chords, 12 prefixes (some with two origins).
        let n = 150u32;
        let mut t = Topology::new();
        for i in 0..n {
            t.add_router(&format!("/r{i}"));
        }
        let mut s: u64 = 0x1234_5678_9ABC_DEF1;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut links = Vec::new();
        for i in 0..n {
            for j in [(i + 1) % n, (next() % u64::from(n)) as u32] {
                if j != i {
                    let cost = 1 + (next() % 4) as u32; // small costs: many equal-cost paths
                    t.report(i, j, up(u64::from(j) + 1, cost));
                    t.report(j, i, up(u64::from(i) + 1, cost));
                    links.push((i, j, cost));
                }
            }
        }
        let mut e = RouteEngine::new(t, 3);
        for p in 0..12u32 {
            let name: Name = format!("/p{p}").parse().unwrap();
            e.add_origin(
                name.clone(),
                Origin {
                    router: (p * 37) % n,
                    face: 0,
                    cost: 0,
                },
            );
            if p % 3 == 0 {
                e.add_origin(
                    name,
                    Origin {
                        router: (p * 53 + 11) % n,
                        face: 1,
                        cost: 0,
                    },
                );
            }
        }
        e.compute_all();
        for (k, &(a, b, cost)) in links.iter().enumerate().step_by(3).take(80) {
            let rep = match k % 4 {
                0 => LinkReport {
                    up: false,
                    ..up(u64::from(b) + 1, cost)
                },
                1 => up(u64::from(b) + 1, cost + 3),
                2 => up(u64::from(b) + 1, 1),
                _ => LinkReport {
                    up: false,
                    ..up(u64::from(b) + 1, cost)
                },
            };
            let before: Vec<Fib> = (0..n).map(|r| e.fib(r).unwrap()).collect();
            let changed = e.report_link(a, b, rep);
            let incremental: Vec<Fib> = (0..n).map(|r| e.fib(r).unwrap()).collect();
            e.compute_all();
            let full: Vec<Fib> = (0..n).map(|r| e.fib(r).unwrap()).collect();
            assert_eq!(incremental, full, "change {k}");
            assert_eq!(changed, changed_entries(&e, &before, &full), "change {k}");
        }
    }
}
