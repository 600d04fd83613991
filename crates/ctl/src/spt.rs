//! Shortest-path distances from one router to every other (Dijkstra), and their repair after
//! one link changes, touching only the routers whose distance the change moves.
//!
//! Links are symmetric, so the row of origin `o` also gives every router's distance *to* `o`:
//! that is what a FIB toward `o` needs.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::topology::{EdgeChange, NodeId, Topology};

/// "Unreachable".
pub const INF: u64 = u64::MAX;

/// Distances from `source` to every router.
pub fn dijkstra(topo: &Topology, source: NodeId) -> Vec<u64> {
    let mut dist = vec![INF; topo.len()];
    let mut heap = BinaryHeap::new();
    if let Some(d) = dist.get_mut(source as usize) {
        *d = 0;
        heap.push(Reverse((0, source)));
    }
    relax_from(topo, &mut dist, &mut heap, &mut Vec::new());
    dist
}

/// Runs Dijkstra from what `heap` holds; pushes every router whose distance drops to
/// `changed`.
fn relax_from(
    topo: &Topology,
    dist: &mut [u64],
    heap: &mut BinaryHeap<Reverse<(u64, NodeId)>>,
    changed: &mut Vec<NodeId>,
) {
    while let Some(Reverse((d, u))) = heap.pop() {
        if dist.get(u as usize).is_none_or(|&cur| d > cur) {
            continue;
        }
        for a in topo.adjacencies(u) {
            let nd = d.saturating_add(a.cost);
            if let Some(slot) = dist.get_mut(a.to as usize) {
                if nd < *slot {
                    *slot = nd;
                    changed.push(a.to);
                    heap.push(Reverse((nd, a.to)));
                }
            }
        }
    }
}

/// Repairs `dist` (the row of `source`, computed before `change`) after `change` has been
/// applied to `topo`. Returns the routers whose distance changed (sorted, no duplicates).
pub fn repair(
    topo: &Topology,
    source: NodeId,
    dist: &mut Vec<u64>,
    change: &EdgeChange,
) -> Vec<NodeId> {
    dist.resize(topo.len(), INF);
    let old = change.old_cost.unwrap_or(INF);
    let new = change.new_cost.unwrap_or(INF);
    let mut changed = if new < old {
        decrease(topo, dist, change, new)
    } else {
        increase(topo, source, dist, change, old)
    };
    changed.sort_unstable();
    changed.dedup();
    changed
}

/// A cheaper (or new) link: only routers that it brings closer move.
fn decrease(topo: &Topology, dist: &mut [u64], ch: &EdgeChange, cost: u64) -> Vec<NodeId> {
    let mut heap = BinaryHeap::new();
    let mut changed = Vec::new();
    for (x, y) in [(ch.a, ch.b), (ch.b, ch.a)] {
        let (Some(&dx), Some(&dy)) = (dist.get(x as usize), dist.get(y as usize)) else {
            continue;
        };
        let nd = dx.saturating_add(cost);
        if nd < dy {
            if let Some(slot) = dist.get_mut(y as usize) {
                *slot = nd;
            }
            changed.push(y);
            heap.push(Reverse((nd, y)));
        }
    }
    relax_from(topo, dist, &mut heap, &mut changed);
    changed
}

/// A dearer (or lost) link: find the routers every shortest path of which used it, forget
/// their distances and recompute them from their unaffected neighbours.
fn increase(
    topo: &Topology,
    source: NodeId,
    dist: &mut [u64],
    ch: &EdgeChange,
    old: u64,
) -> Vec<NodeId> {
    let at = |d: &[u64], n: NodeId| d.get(n as usize).copied().unwrap_or(INF);
    let mut heap = BinaryHeap::new();
    for (x, y) in [(ch.a, ch.b), (ch.b, ch.a)] {
        if at(dist, x) != INF && at(dist, x).saturating_add(old) == at(dist, y) {
            heap.push(Reverse((at(dist, y), y)));
        }
    }
    if heap.is_empty() {
        return Vec::new(); // the link was on no shortest path from `source`
    }
    // Routers in increasing distance order: a router is affected when no unaffected
    // neighbour still offers it its old distance.
    let mut affected = vec![false; dist.len()];
    let mut seen = vec![false; dist.len()];
    let mut order = Vec::new();
    while let Some(Reverse((d, y))) = heap.pop() {
        if y == source || seen.get(y as usize).copied().unwrap_or(true) {
            continue;
        }
        if let Some(s) = seen.get_mut(y as usize) {
            *s = true;
        }
        let supported = topo.adjacencies(y).iter().any(|p| {
            !affected.get(p.to as usize).copied().unwrap_or(true)
                && at(dist, p.to) != INF
                && at(dist, p.to).saturating_add(p.cost) == d
        });
        if supported {
            continue;
        }
        if let Some(a) = affected.get_mut(y as usize) {
            *a = true;
        }
        order.push((y, d));
        for s in topo.adjacencies(y) {
            if at(dist, s.to) == d.saturating_add(s.cost) {
                heap.push(Reverse((at(dist, s.to), s.to)));
            }
        }
    }
    // Forget, then seed each affected router from its unaffected neighbours.
    for &(y, _) in &order {
        if let Some(slot) = dist.get_mut(y as usize) {
            *slot = INF;
        }
    }
    let mut heap = BinaryHeap::new();
    for &(y, _) in &order {
        let best = topo
            .adjacencies(y)
            .iter()
            .filter(|p| !affected.get(p.to as usize).copied().unwrap_or(true))
            .map(|p| at(dist, p.to).saturating_add(p.cost))
            .min()
            .unwrap_or(INF);
        if best < INF {
            if let Some(slot) = dist.get_mut(y as usize) {
                *slot = best;
            }
            heap.push(Reverse((best, y)));
        }
    }
    relax_from(topo, dist, &mut heap, &mut Vec::new());
    order
        .into_iter()
        .filter(|&(y, d)| at(dist, y) != d)
        .map(|(y, _)| y)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::LinkReport;

    /// A deterministic pseudo-random graph (xorshift), `n` routers of about degree `deg`.
    fn graph(n: u32, deg: u32, seed: u64) -> (Topology, Vec<(NodeId, NodeId)>) {
        let mut t = Topology::new();
        for i in 0..n {
            t.add_router(&format!("/r{i}"));
        }
        let mut s = seed;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut links = Vec::new();
        for i in 0..n {
            // a ring keeps it connected, plus random chords
            let mut peers = vec![(i + 1) % n];
            peers.extend((0..deg / 2 - 1).map(|_| (next() % u64::from(n)) as u32));
            for j in peers {
                if j == i {
                    continue;
                }
                let cost = 1 + (next() % 10) as u32;
                let r = |face| LinkReport {
                    face,
                    cost,
                    up: true,
                };
                t.report(i, j, r(u64::from(j)));
                t.report(j, i, r(u64::from(i)));
                links.push((i, j));
            }
        }
        (t, links)
    }

    #[test]
    fn repair_matches_a_full_recomputation_after_every_kind_of_change() {
        let (mut t, links) = graph(200, 4, 0x9E37_79B9_7F4A_7C15);
        let sources: Vec<NodeId> = (0..200).step_by(7).collect();
        let mut rows: Vec<Vec<u64>> = sources.iter().map(|&s| dijkstra(&t, s)).collect();
        for (k, &(a, b)) in links.iter().enumerate().take(120) {
            let report = match k % 3 {
                0 => LinkReport {
                    face: 0,
                    cost: 1,
                    up: false,
                }, // fails
                1 => LinkReport {
                    face: 0,
                    cost: 1 + (k % 17) as u32,
                    up: true,
                }, // re-costed
                _ => LinkReport {
                    face: 0,
                    cost: 1,
                    up: true,
                }, // (back) up, cheap
            };
            let Some(ch) = t.report(a, b, report) else {
                continue;
            };
            for (row, &s) in rows.iter_mut().zip(&sources) {
                let before = row.clone();
                let changed = repair(&t, s, row, &ch);
                let full = dijkstra(&t, s);
                assert_eq!(*row, full, "change {k} {ch:?} source {s}");
                let moved: Vec<NodeId> = (0..200u32)
                    .filter(|&i| before[i as usize] != full[i as usize])
                    .collect();
                assert_eq!(changed, moved, "change {k} source {s}");
            }
        }
    }
}
