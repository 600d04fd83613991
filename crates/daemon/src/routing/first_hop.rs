//! The first hop: the forwarder's route misses go to the resolver; a verified route becomes a
//! ForwardingHint toward the delegate router and, when the FIB has no route to that router
//! yet, a face to the first FaceUri of its locator record that works (a route to the router
//! that exists already, e.g. toward a neighbour, is used instead). Held Interests are then
//! released; a name that cannot be resolved has them Nacked NoRoute with RetryAfter.
//!
//! With `miss = "nack"`, a miss whose look-up is pending is Nacked at once with a RetryAfter
//! of twice the smoothed look-up time (the route is there when the consumer asks again).
//!
//! Mobility: a Nack NoRoute from the delegate for an Interest hinted here makes the forwarder
//! hold it again ([`nameway_fw::RouteEvent::Nacked`]); the name is looked up afresh and the
//! Interest follows a newer announcement at once. If the look-up returns the version that was
//! Nacked, the Interests are Nacked downstream.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use nameway_face::{FaceError, FaceInfo, FaceSystem, FaceUri, Persistency};
use nameway_fw::{FaceId, Forwarder, RouteEvent, Time};
use nameway_routing::{Failure, KeyHash, MissOutcome, Resolver, ResolverEvent, VerifiedRoute};
use nameway_wire::DataView;
use tokio::sync::mpsc;

use super::config::MissMode;
use super::{routing_route, FaceCreated, FacePurpose, Routing, ROUTING_FACE};
use crate::mgmt::Management;

/// RetryAfter when the look-up queue is full or a look-up failed without saying how long.
const RETRY_LATER_MS: u64 = 1000;
/// RetryAfter bounds for a pending look-up (nack mode).
const RETRY_PENDING_MIN_MS: u64 = 10;
const RETRY_PENDING_MAX_MS: u64 = 1000;
/// RetryAfter before any look-up time was measured.
const RETRY_PENDING_DEFAULT_MS: u64 = 50;

/// A delegate router as the first hop knows it.
#[derive(Debug)]
enum Delegate {
    /// A face toward it is being created; the names waiting for it; FaceUris left to try.
    Creating {
        waiting: Vec<KeyHash>,
        uris: Vec<String>,
    },
    /// Reached through this face.
    Ready(u64),
}

/// The first hop's state beside the resolver.
#[derive(Debug, Default)]
pub(super) struct FirstHop {
    delegates: HashMap<KeyHash, Delegate>,
    /// Names whose delegate Nacked them, with the version it Nacked.
    nacked: HashMap<KeyHash, u64>,
    /// When the look-up in flight for a name was sent (for the look-up time).
    sent: HashMap<KeyHash, u64>,
    /// Smoothed look-up time, ms.
    srtt_ms: Option<f64>,
    /// Faces created toward delegates.
    pub(super) faces_created: u64,
}

impl FirstHop {
    /// Notes the look-up time of an answer.
    pub(super) fn answered(&mut self, now: u64, resolver: &Resolver, data: &Bytes) {
        let Ok(view) = DataView::new_checked(data.clone()) else {
            return;
        };
        let h = resolver
            .config()
            .rib_prefixes
            .iter()
            .find_map(|p| nameway_routing::rib::parse_lookup(p, view.name()));
        let Some(sent) = h.and_then(|h| self.sent.remove(&h)) else {
            return;
        };
        let sample = now.saturating_sub(sent) as f64;
        self.srtt_ms = Some(match self.srtt_ms {
            Some(s) => s * 0.875 + sample * 0.125,
            None => sample,
        });
    }

    /// RetryAfter for a miss whose look-up is pending.
    fn retry_pending(&self) -> u64 {
        self.srtt_ms.map_or(RETRY_PENDING_DEFAULT_MS, |s| {
            ((s * 2.0).ceil() as u64).clamp(RETRY_PENDING_MIN_MS, RETRY_PENDING_MAX_MS)
        })
    }
}

/// What a look-up outcome asks of the forwarder.
enum Action {
    /// Install the route, release the held Interests.
    Ready(Arc<VerifiedRoute>),
    /// Nack the held Interests with this RetryAfter.
    Nack(KeyHash, Option<u64>),
    /// A route went: drop its hint.
    Forget(KeyHash),
    /// Keep holding.
    Wait,
}

impl Routing {
    /// Route misses, the resolver's timers, queries and events.
    pub(super) fn first_hop_poll(
        &mut self,
        now: u64,
        fw_now: Time,
        fw: &mut Forwarder,
        mgmt: &mut Management,
    ) {
        let mut actions = Vec::new();
        let miss_mode = self.config.miss;
        let Some(resolver) = self.resolver.as_mut() else {
            while let Some(ev) = fw.poll_route_event() {
                let h = match ev {
                    RouteEvent::Miss { h } | RouteEvent::Nacked { h, .. } => h,
                };
                fw.nack_held(fw_now, &h, None);
            }
            return;
        };
        let fh = &mut self.first_hop;
        while let Some(ev) = fw.poll_route_event() {
            let action = match ev {
                RouteEvent::Miss { h } => {
                    let h = KeyHash::from_bytes(h);
                    match resolver.on_miss(now, h) {
                        MissOutcome::Known(route) => Action::Ready(route),
                        MissOutcome::Pending if miss_mode == MissMode::Nack => {
                            Action::Nack(h, Some(fh.retry_pending()))
                        }
                        MissOutcome::Pending => Action::Wait,
                        MissOutcome::NoSuchName { retry_after_ms } => {
                            Action::Nack(h, Some(retry_after_ms))
                        }
                        MissOutcome::Overloaded => Action::Nack(h, Some(RETRY_LATER_MS)),
                    }
                }
                RouteEvent::Nacked { h, hint, face } => {
                    let h = KeyHash::from_bytes(h);
                    if let Some(route) = resolver.route(&h) {
                        fh.nacked.insert(h, route.version);
                    }
                    tracing::debug!(name = %show(&h), hint = %hint, face = face.0, "routing: the delegate Nacked; looking the name up again");
                    match resolver.refresh(h) {
                        MissOutcome::Overloaded => Action::Nack(h, Some(RETRY_LATER_MS)),
                        _ => Action::Wait,
                    }
                }
            };
            actions.push(action);
        }
        if resolver.poll_timeout().is_some_and(|t| t <= now) {
            resolver.on_timeout(now);
        }
        while let Some(q) = resolver.poll_query(now) {
            fh.sent.insert(q.h, now);
            let interest = q.interest(super::announce::random_u32());
            fw.handle_packet(fw_now, ROUTING_FACE, interest.encode());
        }
        while let Some(ev) = resolver.poll_event() {
            actions.push(match ev {
                ResolverEvent::RouteReady(route) => match fh.nacked.remove(&route.h) {
                    Some(v) if v >= route.version => Action::Nack(route.h, Some(RETRY_LATER_MS)),
                    _ => Action::Ready(route),
                },
                ResolverEvent::RouteReplaced { new, .. } => {
                    fh.nacked.remove(&new.h);
                    tracing::info!(name = %show(&new.h), delegate = %show(&new.delegate), version = new.version, "routing: route replaced by a newer announcement");
                    Action::Ready(new)
                }
                ResolverEvent::RouteRemoved { route, .. } => Action::Forget(route.h),
                ResolverEvent::Failed { h, failure } => {
                    fh.sent.remove(&h);
                    fh.nacked.remove(&h);
                    let retry = match failure {
                        Failure::NoSuchName { retry_after_ms } => Some(retry_after_ms),
                        Failure::Rejected(r) => {
                            tracing::info!(name = %show(&h), reason = r.reason.as_str(), detail = %r.detail, "routing: the RIB's answer was refused");
                            Some(RETRY_LATER_MS)
                        }
                        _ => Some(RETRY_LATER_MS),
                    };
                    Action::Nack(h, retry)
                }
            });
        }
        for action in actions {
            match action {
                Action::Ready(route) => self.route_ready(fw_now, fw, mgmt, &route),
                Action::Nack(h, retry) => {
                    fw.nack_held(fw_now, h.as_bytes(), retry);
                }
                Action::Forget(h) => {
                    fw.remove_route_hint(h.as_bytes());
                }
                Action::Wait => {}
            }
        }
        // While the look-up queue is full the forwarder refuses new names itself (Nack
        // NoRoute, RetryAfter), so a flood of unknown names costs what a FIB miss costs.
        if let Some(r) = self.resolver.as_ref() {
            let full = r.pending_len() >= r.config().max_pending;
            fw.set_miss_refusal(full.then_some(RETRY_LATER_MS));
        }
        let _ = now;
    }

    /// A verified route: the hint, a way to the delegate, then the held Interests go.
    fn route_ready(
        &mut self,
        fw_now: Time,
        fw: &mut Forwarder,
        mgmt: &mut Management,
        route: &VerifiedRoute,
    ) {
        let h = route.h;
        if route.delegate == self.me {
            // Delegated here: the local route of the name (if any) serves it.
            fw.remove_route_hint(h.as_bytes());
            fw.release_held(fw_now, h.as_bytes());
            return;
        }
        fw.set_route_hint(*h.as_bytes(), route.delegate_name.clone());
        let routed = fw
            .fib_lookup(&route.delegate_name)
            .is_some_and(|(_, hops)| !hops.is_empty());
        if routed {
            fw.release_held(fw_now, h.as_bytes());
            return;
        }
        match self.first_hop.delegates.get_mut(&route.delegate) {
            Some(Delegate::Ready(face)) if fw.face(FaceId(*face)).is_some() => {
                mgmt.add_route(fw, &route.delegate_name, routing_route(*face));
                fw.release_held(fw_now, h.as_bytes());
            }
            Some(Delegate::Creating { waiting, .. }) => waiting.push(h),
            _ => {
                let mut uris: Vec<String> = route
                    .face_uris
                    .iter()
                    .filter(|u| {
                        matches!(u.parse::<FaceUri>(), Ok(FaceUri::Udp(_) | FaceUri::Tcp(_)))
                    })
                    .cloned()
                    .collect();
                if uris.is_empty() {
                    tracing::info!(router = %show(&route.delegate), "routing: the delegate's locator record has no UDP or TCP FaceUri");
                    fw.nack_held(fw_now, h.as_bytes(), Some(RETRY_LATER_MS));
                    return;
                }
                let first = uris.remove(0);
                spawn_face(&self.faces, &self.created_tx, route.delegate, first);
                self.first_hop.delegates.insert(
                    route.delegate,
                    Delegate::Creating {
                        waiting: vec![h],
                        uris,
                    },
                );
            }
        }
    }

    /// A face toward a delegate is up (the driver added it to the forwarder) or failed.
    pub(super) fn delegate_face_done(
        &mut self,
        fw_now: Time,
        fw: &mut Forwarder,
        mgmt: &mut Management,
        router: KeyHash,
        uri: &str,
        result: Result<FaceInfo, FaceError>,
    ) {
        let Some(Delegate::Creating { waiting, mut uris }) =
            self.first_hop.delegates.remove(&router)
        else {
            return;
        };
        match result {
            Ok(info) => {
                let face = info.id.0;
                tracing::info!(router = %show(&router), %uri, face, "routing: face toward a delegate router");
                self.first_hop.faces_created += 1;
                mgmt.add_route(fw, &router.name(), routing_route(face));
                self.first_hop
                    .delegates
                    .insert(router, Delegate::Ready(face));
                for h in waiting {
                    fw.release_held(fw_now, h.as_bytes());
                }
            }
            Err(e) if !uris.is_empty() => {
                tracing::info!(router = %show(&router), %uri, error = %e, "routing: cannot reach the delegate there; trying its next FaceUri");
                let next = uris.remove(0);
                spawn_face(&self.faces, &self.created_tx, router, next);
                self.first_hop
                    .delegates
                    .insert(router, Delegate::Creating { waiting, uris });
            }
            Err(e) => {
                tracing::warn!(router = %show(&router), %uri, error = %e, "routing: cannot reach the delegate router");
                for h in waiting {
                    fw.nack_held(fw_now, h.as_bytes(), Some(RETRY_LATER_MS));
                }
            }
        }
    }
}

/// Creates a face on the runtime; the result comes back through `tx`.
fn spawn_face(
    faces: &Arc<FaceSystem>,
    tx: &mpsc::Sender<FaceCreated>,
    router: KeyHash,
    uri: String,
) {
    let faces = faces.clone();
    let tx = tx.clone();
    tokio::spawn(async move {
        let result = match FaceUri::canonize(&uri).await {
            Ok(u) => match faces
                .create_with(
                    &u,
                    Persistency::Persistent,
                    nameway_face::FaceOptions::default(),
                )
                .await
            {
                Ok(id) | Err(FaceError::Exists(id)) => {
                    faces.info(id).ok_or(FaceError::ShuttingDown)
                }
                Err(e) => Err(e),
            },
            Err(e) => Err(FaceError::Uri(e)),
        };
        let _ = tx
            .send(FaceCreated {
                purpose: FacePurpose::Delegate(router),
                uri,
                result,
            })
            .await;
    });
}

/// `sc:<hex>` of a hash.
fn show(h: &KeyHash) -> String {
    nameway_routing::sc::display_name(&h.name())
}
