//! The RIB manager (`rib/register`, `rib/unregister`, `rib/announce`, `rib/list`), as NFD's
//! `RibManager`; the table and its inheritance rules are in [`crate::rib`].

use std::time::{Duration, Instant};

use nameway_fw::{FaceId, Forwarder, MAX_PREFIX_DEPTH};
use nameway_wire::mgmt::{self, ControlParameters, RibEntry};

use super::{face_or, Management, Outcome, Request};
use crate::rib::{FibUpdate, Rib, Route};

impl Management {
    /// `rib/<verb>`.
    pub(super) fn rib_command(
        &mut self,
        fw: &mut Forwarder,
        req: &Request<'_>,
        verb: &str,
        p: ControlParameters,
    ) -> Outcome {
        match verb {
            "register" => self.rib_register(fw, req, p),
            "unregister" => self.rib_unregister(fw, req, p),
            "announce" => self.respond(req.interest, 501, "rib/announce is not supported", &p),
            _ => Outcome::Nothing,
        }
    }

    fn rib_register(
        &mut self,
        fw: &mut Forwarder,
        req: &Request<'_>,
        mut p: ControlParameters,
    ) -> Outcome {
        let Some(name) = p.name.clone() else {
            return self.respond(req.interest, 400, "Name is required", &p);
        };
        if name.len() > MAX_PREFIX_DEPTH {
            return self.respond(req.interest, 414, "Route prefix too long", &p);
        }
        let face = face_or(p.face_id, req.incoming);
        if fw.face(FaceId(face)).is_none() {
            return self.respond(req.interest, 410, "Face not found", &p);
        }
        let route = Route {
            face,
            origin: p.origin.unwrap_or(mgmt::route_origin::APP),
            cost: p.cost.unwrap_or(0),
            flags: p.flags.unwrap_or(mgmt::route_flags::CHILD_INHERIT),
            expires: p
                .expiration_period
                .map(|ms| req.now + Duration::from_millis(ms)),
        };
        (p.face_id, p.origin, p.cost, p.flags) = (
            Some(face),
            Some(route.origin),
            Some(route.cost),
            Some(route.flags),
        );
        tracing::info!(prefix = %name, face, origin = route.origin, cost = route.cost, "route registered");
        self.add_route(fw, &name, route);
        self.respond(req.interest, 200, "OK", &p)
    }

    fn rib_unregister(
        &mut self,
        fw: &mut Forwarder,
        req: &Request<'_>,
        p: ControlParameters,
    ) -> Outcome {
        let Some(name) = p.name.clone() else {
            return self.respond(req.interest, 400, "Name is required", &p);
        };
        let face = face_or(p.face_id, req.incoming);
        let origin = p.origin.unwrap_or(mgmt::route_origin::APP);
        let updates = self.rib.unregister(&name, face, origin);
        apply(fw, &updates);
        let body = ControlParameters {
            name: Some(name),
            face_id: Some(face),
            origin: Some(origin),
            ..ControlParameters::default()
        };
        self.respond(req.interest, 200, "OK", &body)
    }
}

/// `rib/list`.
pub(super) fn list(rib: &Rib, now: Instant) -> Vec<u8> {
    rib.entries()
        .flat_map(|(name, routes)| {
            RibEntry {
                name: name.clone(),
                routes: routes
                    .iter()
                    .map(|r| mgmt::Route {
                        face_id: r.face,
                        origin: r.origin,
                        cost: r.cost,
                        flags: r.flags,
                        expiration_period: r
                            .expires
                            .map(|e| e.saturating_duration_since(now).as_millis() as u64),
                    })
                    .collect(),
            }
            .encode()
        })
        .collect()
}

/// Applies RIB-derived next hops to the FIB: adds or updates the wanted ones, removes the rest.
pub(super) fn apply(fw: &mut Forwarder, updates: &[FibUpdate]) {
    for u in updates {
        let current: Vec<u64> = fw
            .fib_nexthops(&u.name)
            .map(|h| h.iter().map(|n| n.face.0).collect())
            .unwrap_or_default();
        for face in current {
            if !u.next_hops.iter().any(|(f, _)| *f == face) {
                fw.remove_nexthop(&u.name, FaceId(face));
            }
        }
        for &(face, cost) in &u.next_hops {
            if let Err(e) = fw.add_nexthop(&u.name, FaceId(face), cost) {
                tracing::warn!(prefix = %u.name, face, error = %e, "next hop not installed");
            }
        }
    }
}
