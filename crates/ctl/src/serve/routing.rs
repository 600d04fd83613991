//! [`Routing`]: the topology and the route engine that `serve` keeps between events.
//!
//! Built whole ([`Routing::rebuild`]) at the start and when many routers join at once.
//! When the set of connected routers changes otherwise (a router joins, comes back on a new
//! connection, or leaves: the neighbours' reports then name another set of link keys),
//! [`Routing::sync`] adds the new routers and applies every report again as a difference:
//! link additions and withdrawals, no full computation. Otherwise one router's new report is applied as the
//! difference from its previous one ([`Routing::update`]): each link report that changed is
//! one [`RouteEngine::report_link`] / [`RouteEngine::withdraw_link`] (a repair of the
//! shortest-path rows, the FIB entries that depend on a moved distance recomputed), each
//! registration added or gone one [`RouteEngine::register`] / [`RouteEngine::unregister`]
//! (that prefix's entries only). Both give the (router, prefix) entries that changed, so
//! that publishing costs what changed, not the FIBs' size.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use bytes::Bytes;
use nameway_wire::Name;

use super::state::LinkView;
use crate::channel::Report;
use crate::routes::{Changed, Fib, NextHop, Origin, PrefixId, RouteEngine};
use crate::topology::{LinkReport, NodeId, Topology};

/// One router as the rebuild reads it.
#[derive(Clone, Copy, Debug)]
pub(super) struct RouterInput<'a> {
    /// Its name.
    pub(super) name: &'a Name,
    /// Its secure-link key, when known.
    pub(super) link_key: Option<&'a [u8]>,
    /// Whether it is connected (only connected routers' keys name neighbours).
    pub(super) connected: bool,
    /// Its last report on the current connection.
    pub(super) report: Option<&'a Report>,
}

/// What one router's report put into the engine.
#[derive(Clone, Debug, Default)]
struct Applied {
    /// Its report about each neighbour it names (the last one when named twice).
    links: BTreeMap<NodeId, LinkReport>,
    /// Its registrations.
    origins: BTreeSet<(Name, Origin)>,
}

/// Both ends' view of a link: (the lower name's, the higher name's) `up`.
type Seen = (Option<bool>, Option<bool>);

/// See the module documentation.
#[derive(Debug)]
pub(super) struct Routing {
    engine: RouteEngine,
    /// Node id → router name (ids follow the names' order).
    names: Vec<Name>,
    ids: HashMap<Name, NodeId>,
    /// Connected routers' link keys.
    by_key: HashMap<Bytes, NodeId>,
    /// Node id → what its report put in.
    applied: Vec<Applied>,
    /// Every reported link, by its ends' names (lower first).
    seen: BTreeMap<(String, String), Seen>,
}

impl Routing {
    /// No router.
    pub(super) fn new(max_nexthops: usize) -> Self {
        Self {
            engine: RouteEngine::new(Topology::new(), max_nexthops),
            names: Vec::new(),
            ids: HashMap::new(),
            by_key: HashMap::new(),
            applied: Vec::new(),
            seen: BTreeMap::new(),
        }
    }

    /// Everything from scratch: `routers` in name order.
    pub(super) fn rebuild<'a>(
        &mut self,
        routers: impl Iterator<Item = RouterInput<'a>>,
        max_nexthops: usize,
    ) {
        let routers: Vec<RouterInput<'a>> = routers.collect();
        let mut topo = Topology::new();
        self.names = routers.iter().map(|r| r.name.clone()).collect();
        let ids: Vec<NodeId> = self
            .names
            .iter()
            .map(|n| topo.add_router(&n.to_string()))
            .collect();
        self.ids = self
            .names
            .iter()
            .cloned()
            .zip(ids.iter().copied())
            .collect();
        self.by_key = routers
            .iter()
            .zip(&ids)
            .filter(|(r, _)| r.connected)
            .filter_map(|(r, &id)| Some((Bytes::copy_from_slice(r.link_key?), id)))
            .collect();
        self.applied = vec![Applied::default(); routers.len()];
        self.seen.clear();
        let mut origins = Vec::new();
        for (r, &me) in routers.iter().zip(&ids) {
            let Some(report) = r.report else {
                continue;
            };
            let applied = self.resolve(me, report);
            for (&peer, &link) in &applied.links {
                topo.report(me, peer, link);
                self.set_seen(me, peer, Some(link.up));
            }
            origins.extend(applied.origins.iter().cloned());
            if let Some(slot) = self.applied.get_mut(me as usize) {
                *slot = applied;
            }
        }
        self.engine = RouteEngine::new(topo, max_nexthops);
        for (p, o) in origins {
            self.engine.add_origin(p, o);
        }
        self.engine.compute_all();
    }

    /// Brings the topology in line with `routers` without a full computation: a router not
    /// seen before is added (no links), the connected routers' keys are taken again, and
    /// every router's report (none: an empty one) is applied as the difference from the one
    /// applied before. A router joining is so a few link additions and registrations; one
    /// leaving, the withdrawal of its links (its own and its neighbours' reports about it)
    /// and registrations. The (router, prefix) entries that changed, sorted, each once.
    pub(super) fn sync<'a>(&mut self, routers: impl Iterator<Item = RouterInput<'a>>) -> Changed {
        let routers: Vec<RouterInput<'a>> = routers.collect();
        for r in &routers {
            if !self.ids.contains_key(r.name) {
                let id = self.engine.add_router(&r.name.to_string());
                self.names.push(r.name.clone());
                self.ids.insert(r.name.clone(), id);
                self.applied.push(Applied::default());
            }
        }
        self.by_key = routers
            .iter()
            .filter(|r| r.connected)
            .filter_map(|r| {
                let id = *self.ids.get(r.name)?;
                Some((Bytes::copy_from_slice(r.link_key?), id))
            })
            .collect();
        let none = Report::default();
        let mut changed = BTreeSet::new();
        for r in &routers {
            if let Some(c) = self.update(r.name, r.report.unwrap_or(&none)) {
                changed.extend(c);
            }
        }
        changed.into_iter().collect()
    }

    /// How many of `routers` are not in the topology yet.
    pub(super) fn unknown<'a>(&self, routers: impl Iterator<Item = &'a Name>) -> usize {
        routers.filter(|r| !self.ids.contains_key(*r)).count()
    }

    /// Applies `router`'s new `report` as the difference from the one applied before; the
    /// (router, prefix) entries that changed (sorted, each once; an entry changed and changed
    /// back is listed too). `None`: the router is not in the topology (a rebuild is needed).
    pub(super) fn update(&mut self, router: &Name, report: &Report) -> Option<Changed> {
        let me = *self.ids.get(router)?;
        let new = self.resolve(me, report);
        let old = std::mem::take(self.applied.get_mut(me as usize)?);
        let mut changed = BTreeSet::new();
        for &peer in old.links.keys() {
            if !new.links.contains_key(&peer) {
                changed.extend(self.engine.withdraw_link(me, peer));
                self.set_seen(me, peer, None);
            }
        }
        for (&peer, &link) in &new.links {
            if old.links.get(&peer) != Some(&link) {
                changed.extend(self.engine.report_link(me, peer, link));
                self.set_seen(me, peer, Some(link.up));
            }
        }
        for (p, o) in old.origins.difference(&new.origins) {
            changed.extend(self.engine.unregister(p, o));
        }
        for (p, o) in new.origins.difference(&old.origins) {
            changed.extend(self.engine.register(p.clone(), *o));
        }
        if let Some(slot) = self.applied.get_mut(me as usize) {
            *slot = new;
        }
        Some(changed.into_iter().collect())
    }

    /// The node id of `router`.
    pub(super) fn id(&self, router: &Name) -> Option<NodeId> {
        self.ids.get(router).copied()
    }

    /// The name of node `id`.
    pub(super) fn name(&self, id: NodeId) -> Option<&Name> {
        self.names.get(id as usize)
    }

    /// Router `id`'s entry for prefix `pid` as computed: the prefix and its next hops
    /// (empty: no route).
    pub(super) fn entry(&self, id: NodeId, pid: PrefixId) -> Option<(&Name, &[NextHop])> {
        Some((self.engine.prefix(pid)?, self.engine.hops(id, pid)))
    }

    /// Router `id`'s FIB as computed.
    pub(super) fn fib(&self, id: NodeId) -> Fib {
        self.engine.fib(id).unwrap_or_default()
    }

    /// Usable links: (a, b, cost), sorted in the routers' (names') order, `a` before `b`
    /// (ids follow the names' order only until a router joins without a rebuild).
    pub(super) fn links(&self) -> Vec<(String, String, u64)> {
        let topo = self.engine.topology();
        let mut out = Vec::new();
        for a in 0..u32::try_from(topo.len()).unwrap_or(u32::MAX) {
            for adj in topo.adjacencies(a) {
                if let (Some(x), Some(y)) = (self.name(a), self.name(adj.to)) {
                    if x < y {
                        out.push((x, y, a, adj.to, adj.cost));
                    }
                }
            }
        }
        out.sort_unstable_by(|p, q| (p.0, p.1).cmp(&(q.0, q.1)));
        out.into_iter()
            .map(|(_, _, a, b, cost)| (topo.name(a).to_owned(), topo.name(b).to_owned(), cost))
            .collect()
    }

    /// Every reported link, sorted by its ends.
    pub(super) fn link_views(&self) -> Vec<LinkView> {
        let topo = self.engine.topology();
        self.seen
            .iter()
            .map(|((a, b), &(a_up, b_up))| LinkView {
                a: a.clone(),
                b: b.clone(),
                a_up,
                b_up,
                cost: match (topo.id(a), topo.id(b)) {
                    (Some(x), Some(y)) => topo.cost(x, y),
                    _ => None,
                },
            })
            .collect()
    }

    /// What `me`'s report says, with the neighbours resolved to connected routers.
    fn resolve(&self, me: NodeId, report: &Report) -> Applied {
        let mut links = BTreeMap::new();
        for nb in &report.neighbours {
            let Some(&peer) = self.by_key.get(nb.link_key.as_ref()) else {
                continue;
            };
            if peer != me {
                let link = LinkReport {
                    face: nb.face,
                    cost: u32::try_from(nb.cost).unwrap_or(u32::MAX),
                    up: nb.up,
                };
                links.insert(peer, link);
            }
        }
        let origins = report
            .registrations
            .iter()
            .map(|g| {
                let o = Origin {
                    router: me,
                    face: g.face,
                    cost: g.cost,
                };
                (g.prefix.clone(), o)
            })
            .collect();
        Applied { links, origins }
    }

    /// Records `me`'s view of its link to `peer` (`None`: it no longer reports it).
    fn set_seen(&mut self, me: NodeId, peer: NodeId, up: Option<bool>) {
        let name = |id: NodeId| {
            self.names
                .get(id as usize)
                .map_or_else(String::new, Name::to_string)
        };
        let (mine, theirs) = (name(me), name(peer));
        let (key, lower) = if mine < theirs {
            ((mine, theirs), true)
        } else {
            ((theirs, mine), false)
        };
        let entry = self.seen.entry(key.clone()).or_default();
        if lower {
            entry.0 = up;
        } else {
            entry.1 = up;
        }
        if *entry == (None, None) {
            self.seen.remove(&key);
        }
    }
}
