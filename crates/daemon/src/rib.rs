//! The routing information base: routes registered by applications, management and config,
//! and the FIB next hops derived from them with NFD's inheritance rules.
//!
//! A route on prefix `P` with the CHILD_INHERIT flag also applies to every longer prefix that
//! has routes of its own; a route with the CAPTURE flag stops routes of shorter prefixes from
//! being inherited at and below `P`. The FIB entry of a prefix is then the union of its own
//! routes and the inherited ones, one next hop per face at the lowest cost.

use std::collections::BTreeMap;
use std::time::Instant;

use nameway_wire::Name;

pub use nameway_wire::mgmt::route_flags::{CAPTURE, CHILD_INHERIT};

/// One route: a next hop for a prefix, registered by one origin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// The face the prefix is reached through.
    pub face: u64,
    /// Who registered it (0 app, 65 client, 255 static, ...).
    pub origin: u64,
    /// Routing cost.
    pub cost: u64,
    /// CHILD_INHERIT and CAPTURE bits.
    pub flags: u64,
    /// When the route expires, if ever.
    pub expires: Option<Instant>,
}

/// The next hops a FIB entry must have after a RIB change; empty means remove the entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FibUpdate {
    /// The prefix.
    pub name: Name,
    /// (face, cost), one per face.
    pub next_hops: Vec<(u64, u64)>,
}

/// The RIB: prefix → routes, ordered canonically so that a prefix's descendants are contiguous.
#[derive(Debug, Default)]
pub struct Rib {
    entries: BTreeMap<Name, Vec<Route>>,
    /// The earliest expiry, recomputed after every change (the driver asks every loop turn).
    next_expiry: Option<Instant>,
    /// Bumped by every change (the controller's agent reports again only when it moved).
    generation: u64,
}

impl Rib {
    /// An empty RIB.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds or replaces the route keyed by (name, face, origin); returns the FIB changes.
    pub fn register(&mut self, name: &Name, route: Route) -> Vec<FibUpdate> {
        self.generation += 1;
        let routes = self.entries.entry(name.clone()).or_default();
        let expires = route.expires;
        let old = match routes
            .iter_mut()
            .find(|r| r.face == route.face && r.origin == route.origin)
        {
            Some(r) => std::mem::replace(r, route).expires,
            None => {
                routes.push(route);
                None
            }
        };
        if old.is_some() {
            // A refreshed route may have held the earliest expiry.
            self.recompute_next_expiry();
        } else if let Some(e) = expires {
            self.next_expiry = Some(self.next_expiry.map_or(e, |n| n.min(e)));
        }
        self.updates_under(name)
    }

    /// Removes the route keyed by (name, face, origin); returns the FIB changes (none when the
    /// route did not exist).
    pub fn unregister(&mut self, name: &Name, face: u64, origin: u64) -> Vec<FibUpdate> {
        let Some(routes) = self.entries.get_mut(name) else {
            return Vec::new();
        };
        let before = routes.len();
        routes.retain(|r| !(r.face == face && r.origin == origin));
        if routes.len() == before {
            return Vec::new();
        }
        self.generation += 1;
        self.recompute_next_expiry();
        self.updates_under(name)
    }

    /// Removes every route through `face` (the face closed); returns the FIB changes.
    pub fn remove_face(&mut self, face: u64) -> Vec<FibUpdate> {
        self.remove_where(|r| r.face == face)
    }

    /// Removes routes that expired at or before `now`; returns the FIB changes.
    pub fn expire(&mut self, now: Instant) -> Vec<FibUpdate> {
        if self.next_expiry.is_none_or(|e| e > now) {
            return Vec::new();
        }
        self.remove_where(|r| r.expires.is_some_and(|e| e <= now))
    }

    /// A number that changes whenever a route is added, replaced or removed (O(1)).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The earliest route expiry. O(1): kept up to date by every change.
    pub fn next_expiry(&self) -> Option<Instant> {
        self.next_expiry
    }

    fn recompute_next_expiry(&mut self) {
        self.next_expiry = self
            .entries
            .values()
            .flatten()
            .filter_map(|r| r.expires)
            .min();
    }

    /// Every entry, in canonical name order.
    pub fn entries(&self) -> impl Iterator<Item = (&Name, &[Route])> {
        self.entries.iter().map(|(n, r)| (n, r.as_slice()))
    }

    /// Number of prefixes with routes.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the RIB has no routes.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn remove_where(&mut self, pred: impl Fn(&Route) -> bool) -> Vec<FibUpdate> {
        let touched: Vec<Name> = self
            .entries
            .iter_mut()
            .filter_map(|(name, routes)| {
                let before = routes.len();
                routes.retain(|r| !pred(r));
                (routes.len() != before).then(|| name.clone())
            })
            .collect();
        if !touched.is_empty() {
            self.generation += 1;
            self.recompute_next_expiry();
        }
        let mut out: Vec<FibUpdate> = Vec::new();
        for name in touched {
            for u in self.updates_under(&name) {
                match out.iter_mut().find(|o| o.name == u.name) {
                    Some(o) => *o = u,
                    None => out.push(u),
                }
            }
        }
        out
    }

    /// Recomputes the FIB entries of `name` and of every RIB prefix below it, and drops RIB
    /// entries left with no routes.
    fn updates_under(&mut self, name: &Name) -> Vec<FibUpdate> {
        let affected: Vec<Name> = self
            .entries
            .range(name.clone()..)
            .take_while(|(n, _)| name.is_prefix_of(n))
            .map(|(n, _)| n.clone())
            .collect();
        let mut out = Vec::with_capacity(affected.len() + 1);
        if affected.first() != Some(name) {
            // The entry itself had already gone; its FIB entry must go too.
            out.push(FibUpdate {
                name: name.clone(),
                next_hops: Vec::new(),
            });
        }
        for n in affected {
            out.push(FibUpdate {
                next_hops: self.next_hops(&n),
                name: n.clone(),
            });
            if self.entries.get(&n).is_some_and(Vec::is_empty) {
                self.entries.remove(&n);
            }
        }
        out
    }

    /// The FIB next hops of `name`: its own routes plus inherited ones, lowest cost per face.
    pub fn next_hops(&self, name: &Name) -> Vec<(u64, u64)> {
        let mut hops: Vec<(u64, u64)> = Vec::new();
        let mut add = |face: u64, cost: u64| match hops.iter_mut().find(|(f, _)| *f == face) {
            Some(h) => h.1 = h.1.min(cost),
            None => hops.push((face, cost)),
        };
        for len in (0..=name.len()).rev() {
            let Some(routes) = self.entries.get(&name.prefix(len)) else {
                continue;
            };
            let own = len == name.len();
            for r in routes
                .iter()
                .filter(|r| own || r.flags & CHILD_INHERIT != 0)
            {
                add(r.face, r.cost);
            }
            if routes.iter().any(|r| r.flags & CAPTURE != 0) {
                break;
            }
        }
        hops.sort_unstable_by_key(|&(face, cost)| (cost, face));
        hops
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    fn route(face: u64, cost: u64, flags: u64) -> Route {
        Route {
            face,
            origin: 0,
            cost,
            flags,
            expires: None,
        }
    }

    fn hops(updates: &[FibUpdate], name: &str) -> Option<Vec<(u64, u64)>> {
        updates
            .iter()
            .find(|u| u.name == n(name))
            .map(|u| u.next_hops.clone())
    }

    #[test]
    fn the_generation_moves_on_every_change_and_only_then() {
        let mut rib = Rib::new();
        let g0 = rib.generation();
        rib.unregister(&n("/a"), 256, 0);
        rib.remove_face(256);
        rib.expire(Instant::now());
        assert_eq!(rib.generation(), g0, "nothing changed");
        rib.register(&n("/a"), route(256, 10, 0));
        let g1 = rib.generation();
        assert_ne!(g1, g0);
        rib.remove_face(300);
        assert_eq!(rib.generation(), g1);
        rib.unregister(&n("/a"), 256, 0);
        let g2 = rib.generation();
        assert_ne!(g2, g1);
        rib.register(&n("/b"), route(7, 1, 0));
        let g3 = rib.generation();
        rib.remove_face(7);
        assert_ne!(rib.generation(), g3);
    }

    #[test]
    fn register_replaces_same_face_and_origin() {
        let mut rib = Rib::new();
        rib.register(&n("/a"), route(256, 10, CHILD_INHERIT));
        let u = rib.register(&n("/a"), route(256, 5, CHILD_INHERIT));
        assert_eq!(hops(&u, "/a"), Some(vec![(256, 5)]));
        assert_eq!(rib.entries().next().unwrap().1.len(), 1);
    }

    #[test]
    fn child_inherit_and_capture() {
        let mut rib = Rib::new();
        rib.register(&n("/"), route(1, 0, CHILD_INHERIT));
        rib.register(&n("/a"), route(2, 0, 0));
        assert_eq!(rib.next_hops(&n("/a")), vec![(1, 0), (2, 0)]);
        rib.register(&n("/a/b"), route(3, 1, CAPTURE));
        assert_eq!(rib.next_hops(&n("/a/b")), vec![(3, 1)]);
        // a route without CHILD_INHERIT is not inherited
        rib.register(&n("/a/c"), route(4, 0, 0));
        assert_eq!(rib.next_hops(&n("/a/c")), vec![(1, 0), (4, 0)]);
    }

    #[test]
    fn parent_change_updates_descendants() {
        let mut rib = Rib::new();
        rib.register(&n("/a/b"), route(3, 0, 0));
        rib.register(&n("/x"), route(9, 0, 0));
        let u = rib.register(&n("/a"), route(2, 7, CHILD_INHERIT));
        assert_eq!(hops(&u, "/a/b"), Some(vec![(3, 0), (2, 7)]));
        assert_eq!(hops(&u, "/x"), None, "unrelated prefixes are not touched");
    }

    #[test]
    fn face_removal_and_unregister_remove_entries() {
        let mut rib = Rib::new();
        rib.register(&n("/a"), route(2, 0, CHILD_INHERIT));
        rib.register(&n("/a/b"), route(3, 0, 0));
        let u = rib.remove_face(2);
        assert_eq!(hops(&u, "/a"), Some(vec![]));
        assert_eq!(hops(&u, "/a/b"), Some(vec![(3, 0)]));
        assert_eq!(rib.len(), 1);
        let u = rib.unregister(&n("/a/b"), 3, 0);
        assert_eq!(hops(&u, "/a/b"), Some(vec![]));
        assert!(rib.is_empty());
        assert!(rib.unregister(&n("/a/b"), 3, 0).is_empty());
    }

    #[test]
    fn routes_expire() {
        let t0 = Instant::now();
        let mut rib = Rib::new();
        let mut r = route(5, 0, 0);
        r.expires = Some(t0 + Duration::from_secs(10));
        rib.register(&n("/e"), r);
        assert_eq!(rib.next_expiry(), Some(t0 + Duration::from_secs(10)));
        assert!(rib.expire(t0 + Duration::from_secs(9)).is_empty());
        let u = rib.expire(t0 + Duration::from_secs(10));
        assert_eq!(hops(&u, "/e"), Some(vec![]));
        assert_eq!(rib.next_expiry(), None);
    }

    #[test]
    fn refreshing_a_route_moves_its_expiry() {
        let t0 = Instant::now();
        let mut rib = Rib::new();
        let mut r = route(5, 0, 0);
        r.expires = Some(t0 + Duration::from_secs(10));
        rib.register(&n("/e"), r.clone());
        r.expires = Some(t0 + Duration::from_secs(60));
        rib.register(&n("/e"), r);
        assert_eq!(rib.next_expiry(), Some(t0 + Duration::from_secs(60)));
        assert!(rib.expire(t0 + Duration::from_secs(30)).is_empty());
        assert_eq!(rib.len(), 1);
        rib.register(&n("/f"), route(6, 0, 0));
        assert_eq!(rib.next_expiry(), Some(t0 + Duration::from_secs(60)));
    }
}
