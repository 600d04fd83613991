//! The RIB manager (`rib/register`, `rib/unregister`, `rib/announce`, `rib/list`), as NFD's
//! `RibManager`; the table and its inheritance rules are in [`crate::rib`].
//!
//! `rib/announce` takes a Prefix Announcement Data in the command's ApplicationParameters, as
//! NFD and ndn-cxx's `RibAnnounceCommand` (NDNts's `NfdPrefixReg` and the python-ndn recipe
//! send it so), and installs a route of origin `prefixann` (129) and cost 2048 on the
//! requesting face until the announcement expires. An optional ControlParameters component in
//! the name (ours) may give another FaceId and a Cost. Announcements of names outside
//! `/32=sc` are accepted as NFD accepts them by default (any signature); with `[routing]` on,
//! one under `/32=sc/<h>` must be signed by the key hashing to `h` (403 otherwise, counted:
//! the hijack), and `rib/register` of such a name needs a command signed by that key
//! ([`crate::routing::admission`]).

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
            "announce" => self.rib_announce(fw, req, p),
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
        if let Some(admission) = self.routing.as_mut() {
            if let Err(r) = admission.check_register(&name, req.wire) {
                tracing::info!(prefix = %name, face, reason = r.reason.as_str(), detail = %r.detail, "route refused: a self-certifying name registered without its key");
                return self.respond(req.interest, 403, "authorization rejected", &p);
            }
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

    fn rib_announce(
        &mut self,
        fw: &mut Forwarder,
        req: &Request<'_>,
        p: ControlParameters,
    ) -> Outcome {
        let Some(pa) = req
            .interest
            .app_parameters
            .clone()
            .and_then(|params| nameway_routing::Announcement::decode(params).ok())
        else {
            return self.respond(
                req.interest,
                400,
                "Malformed command: no Prefix Announcement",
                &p,
            );
        };
        let name = pa.prefix().clone();
        if name.len() > MAX_PREFIX_DEPTH {
            return self.respond(req.interest, 414, "Route prefix too long", &p);
        }
        let face = face_or(p.face_id, req.incoming);
        if fw.face(FaceId(face)).is_none() {
            return self.respond(req.interest, 410, "Face not found", &p);
        }
        let now_ms = crate::wall_ms();
        if let Some(admission) = self.routing.as_mut() {
            if let Err(r) = admission.check_announcement(now_ms, &pa) {
                tracing::info!(prefix = %nameway_routing::sc::display_name(&name), face, reason = r.reason.as_str(), detail = %r.detail, "announcement refused");
                let text = format!("Prefix announcement rejected: {}", r.reason);
                return self.respond(req.interest, 403, &text, &p);
            }
        }
        let remaining = pa.expires_at_ms().saturating_sub(now_ms);
        if remaining == 0 {
            return self.respond(
                req.interest,
                403,
                "Prefix announcement rejected: expired",
                &p,
            );
        }
        let route = Route {
            face,
            origin: mgmt::route_origin::PREFIXANN,
            cost: p.cost.unwrap_or(PA_ROUTE_COST),
            flags: mgmt::route_flags::CHILD_INHERIT,
            expires: Some(req.now + Duration::from_millis(remaining)),
        };
        let body = ControlParameters {
            name: Some(name.clone()),
            face_id: Some(face),
            origin: Some(route.origin),
            cost: Some(route.cost),
            flags: Some(route.flags),
            expiration_period: Some(remaining),
            ..ControlParameters::default()
        };
        tracing::info!(prefix = %nameway_routing::sc::display_name(&name), face, expires_ms = remaining, "route announced");
        self.add_route(fw, &name, route);
        self.respond(req.interest, 200, "OK", &body)
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

/// NFD's cost of a route from a Prefix Announcement.
const PA_ROUTE_COST: u64 = 2048;

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
