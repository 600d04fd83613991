//! [`Topology`]: routers and the links between them, as each end reports them.
//!
//! A link is usable only when **both** ends report it up: a half-reported link (one router
//! claims a neighbour that does not claim it back, or a link one end sees down) carries no
//! route. Its cost is the larger of the two configured costs, so both directions agree.

use std::collections::HashMap;

/// A router's index in the topology.
pub type NodeId = u32;

/// What one end reports about a link toward a neighbour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkReport {
    /// The reporting router's face toward the neighbour.
    pub face: u64,
    /// The configured cost (at least 1; 0 is taken as 1).
    pub cost: u32,
    /// Whether the reporting router sees the link up.
    pub up: bool,
}

/// One usable link seen from one of its ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Adjacency {
    /// The neighbour.
    pub to: NodeId,
    /// The link's cost.
    pub cost: u64,
    /// This end's face toward the neighbour.
    pub face: u64,
}

/// How a report changed the usable link between two routers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeChange {
    /// One end.
    pub a: NodeId,
    /// The other end.
    pub b: NodeId,
    /// The usable cost before (`None`: not usable).
    pub old_cost: Option<u64>,
    /// The usable cost after.
    pub new_cost: Option<u64>,
}

/// Routers and link reports.
#[derive(Clone, Debug, Default)]
pub struct Topology {
    names: Vec<String>,
    index: HashMap<String, NodeId>,
    reports: HashMap<(NodeId, NodeId), LinkReport>,
    adj: Vec<Vec<Adjacency>>,
}

impl Topology {
    /// An empty topology.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a router (or finds it); its id.
    pub fn add_router(&mut self, name: &str) -> NodeId {
        if let Some(&id) = self.index.get(name) {
            return id;
        }
        let id = NodeId::try_from(self.names.len()).unwrap_or(NodeId::MAX);
        self.names.push(name.to_owned());
        self.index.insert(name.to_owned(), id);
        self.adj.push(Vec::new());
        id
    }

    /// The id of the router `name`.
    pub fn id(&self, name: &str) -> Option<NodeId> {
        self.index.get(name).copied()
    }

    /// The name of router `id`.
    pub fn name(&self, id: NodeId) -> &str {
        self.names.get(id as usize).map_or("", String::as_str)
    }

    /// How many routers.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The usable links of router `id`.
    pub fn adjacencies(&self, id: NodeId) -> &[Adjacency] {
        self.adj.get(id as usize).map_or(&[], Vec::as_slice)
    }

    /// The usable cost of the link `a`–`b`, if usable.
    pub fn cost(&self, a: NodeId, b: NodeId) -> Option<u64> {
        self.adjacencies(a)
            .iter()
            .find(|x| x.to == b)
            .map(|x| x.cost)
    }

    /// How many usable links (each counted once).
    pub fn usable_links(&self) -> usize {
        self.adj.iter().map(Vec::len).sum::<usize>() / 2
    }

    /// Records `a`'s report about its link to `b`; the change to the usable link, if any.
    pub fn report(&mut self, a: NodeId, b: NodeId, report: LinkReport) -> Option<EdgeChange> {
        if a == b || a as usize >= self.names.len() || b as usize >= self.names.len() {
            return None;
        }
        let old_cost = self.cost(a, b);
        let report = LinkReport {
            cost: report.cost.max(1),
            ..report
        };
        self.reports.insert((a, b), report);
        self.rebuild_edge(a, b);
        let new_cost = self.cost(a, b);
        (old_cost != new_cost).then_some(EdgeChange {
            a,
            b,
            old_cost,
            new_cost,
        })
    }

    /// Forgets `a`'s report about `b` (the neighbour is gone); the change, if any.
    pub fn withdraw(&mut self, a: NodeId, b: NodeId) -> Option<EdgeChange> {
        let old_cost = self.cost(a, b);
        self.reports.remove(&(a, b))?;
        self.rebuild_edge(a, b);
        let new_cost = self.cost(a, b);
        (old_cost != new_cost).then_some(EdgeChange {
            a,
            b,
            old_cost,
            new_cost,
        })
    }

    /// Sets the adjacency of `a`–`b` from the two reports.
    fn rebuild_edge(&mut self, a: NodeId, b: NodeId) {
        let ab = self.reports.get(&(a, b)).filter(|r| r.up).copied();
        let ba = self.reports.get(&(b, a)).filter(|r| r.up).copied();
        for (x, y) in [(a, b), (b, a)] {
            if let Some(list) = self.adj.get_mut(x as usize) {
                list.retain(|e| e.to != y);
            }
        }
        let (Some(ab), Some(ba)) = (ab, ba) else {
            return;
        };
        let cost = u64::from(ab.cost.max(ba.cost));
        for (x, y, face) in [(a, b, ab.face), (b, a, ba.face)] {
            if let Some(list) = self.adj.get_mut(x as usize) {
                list.push(Adjacency { to: y, cost, face });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn up(face: u64, cost: u32) -> LinkReport {
        LinkReport {
            face,
            cost,
            up: true,
        }
    }

    #[test]
    fn a_link_counts_only_when_both_ends_report_it_up() {
        let mut t = Topology::new();
        let (a, b) = (t.add_router("/a"), t.add_router("/b"));
        assert_eq!(t.report(a, b, up(1, 5)), None);
        assert_eq!(t.cost(a, b), None, "half-reported link used");
        let ch = t.report(b, a, up(7, 9)).unwrap();
        assert_eq!((ch.old_cost, ch.new_cost), (None, Some(9)));
        assert_eq!(
            t.adjacencies(a),
            &[Adjacency {
                to: b,
                cost: 9,
                face: 1
            }]
        );
        assert_eq!(
            t.adjacencies(b),
            &[Adjacency {
                to: a,
                cost: 9,
                face: 7
            }]
        );
        let ch = t
            .report(
                a,
                b,
                LinkReport {
                    up: false,
                    ..up(1, 5)
                },
            )
            .unwrap();
        assert_eq!(ch.new_cost, None);
        assert!(t.adjacencies(b).is_empty());
        assert_eq!(t.usable_links(), 0);
    }
}
