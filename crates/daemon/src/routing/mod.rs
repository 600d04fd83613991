//! Secure location-independent routing in the daemon (docs/routing.md): the I/O around
//! `nameway-routing`'s sans-I/O parts.
//!
//! - [`admission`]: what management checks for self-certifying names (`rib/announce`,
//!   `rib/register`), counted by reason;
//! - `announce`: this router's registrations with the RIB services, renewed at 2/3 of
//!   `announce_lifetime` with a freshly signed locator record;
//! - `first_hop`: the forwarder's route misses, the resolver, faces toward delegate routers,
//!   the ForwardingHint and the held Interests;
//! - [`service`]: the RIB service producer and its persistent registry.
//!
//! [`Routing`] is owned by the driver. Two internal faces join it to the forwarder: look-ups
//! and registrations leave from [`ROUTING_FACE`] (their answers come back to it through the
//! PIT), and the RIB service is a producer on [`RIB_SERVICE_FACE`]. The driver calls
//! [`Routing::poll`] every loop turn, hands it what the forwarder sends to those faces
//! ([`Routing::on_transmit`]) and the faces it asked for ([`Routing::on_face_created`]).

pub mod admission;
mod announce;
pub mod config;
mod first_hop;
pub mod identity;
pub mod service;
pub mod stats;

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use bytes::Bytes;
use nameway_face::{FaceError, FaceInfo, FaceSystem, FaceUri, Persistency};
use nameway_fw::{FaceId, FaceScope, Forwarder, LinkType, Time};
use nameway_routing::{KeyHash, LocatorRecord, NameKey, Resolver, ResolverConfig};
use nameway_wire::{LpPacket, Name, Packet};
use serde::Serialize;
use tokio::sync::mpsc;

use self::admission::Admission;
use self::config::RoutingConfig;
use self::service::RibService;
use self::stats::RoutingStats;
use crate::config::Config;
use crate::mgmt::Management;
use crate::rib::Route;

/// The internal face look-ups and registrations leave from.
pub const ROUTING_FACE: FaceId = FaceId(2);
/// The internal face of the RIB service producer.
pub const RIB_SERVICE_FACE: FaceId = FaceId(3);
/// Route origin of the routes routing installs (RIB service prefixes, delegate routers).
pub const ROUTING_ORIGIN: u64 = 130;

/// A face the routing asked the driver's runtime to create, and how it went.
#[derive(Debug)]
pub struct FaceCreated {
    /// What the face is for.
    pub purpose: FacePurpose,
    /// The FaceUri tried.
    pub uri: String,
    /// The face, or why not.
    pub result: Result<FaceInfo, FaceError>,
}

/// Why the routing wants a face.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FacePurpose {
    /// Toward a delegate router (from its locator record).
    Delegate(KeyHash),
}

/// See the module documentation.
pub struct Routing {
    config: RoutingConfig,
    key: NameKey,
    me: KeyHash,
    face_uris: Vec<String>,
    rib_prefixes: Vec<Name>,
    resolver: Option<Resolver>,
    service: Option<RibService>,
    announce: announce::Announcer,
    first_hop: first_hop::FirstHop,
    faces: Arc<FaceSystem>,
    created_tx: mpsc::Sender<FaceCreated>,
    created_rx: mpsc::Receiver<FaceCreated>,
    /// The driver's forwarder clock origin.
    clock_start: Instant,
}

impl Routing {
    /// Sets routing up when `[routing] mode = "secure"`: the routing key, the internal faces,
    /// the first-hop hook, the RIB service, the faces and routes toward `[[routing.rib]]`.
    /// `None` when routing is off.
    ///
    /// # Errors
    /// The key or the database cannot be opened, a face or route cannot be set up.
    pub async fn start(
        config: &Config,
        fw: &mut Forwarder,
        mgmt: &mut Management,
        faces: &Arc<FaceSystem>,
        clock_start: Instant,
    ) -> anyhow::Result<Option<Self>> {
        let rc = &config.routing;
        if !rc.is_on() {
            return Ok(None);
        }
        let (key, created) = identity::load_or_create(&rc.identity)?;
        let me = key.hash();
        let router = nameway_routing::sc::display_name(&me.name());
        if created {
            tracing::info!(path = %rc.identity.display(), %router, "created this router's routing key");
        } else {
            tracing::info!(%router, "routing key loaded");
        }
        for id in [ROUTING_FACE, RIB_SERVICE_FACE] {
            fw.add_face_with_id(id, FaceScope::Local, LinkType::PointToPoint)
                .context("routing face")?;
        }
        fw.enable_resolution(vec![me.name()]);
        let now = crate::wall_ms();
        let rib_prefixes = rc.rib_prefixes();
        let resolver = if rib_prefixes.is_empty() {
            tracing::warn!(
                "[routing] has no [[routing.rib]]: self-certifying names are not resolved here"
            );
            None
        } else {
            let cfg = ResolverConfig {
                rib_prefixes: rib_prefixes.clone(),
                max_pending: rc.max_pending,
                resolve_rate: rc.resolve_rate,
                resolve_burst: rc.resolve_rate.clamp(1, 200),
                ..ResolverConfig::default()
            };
            Some(Resolver::new(cfg, now).context("routing resolver")?)
        };
        let service = if rc.rib_service {
            let served = rc.served_prefixes();
            let service = RibService::open(served.clone(), &rc.database, now)?;
            for prefix in &served {
                mgmt.add_route(fw, prefix, routing_route(RIB_SERVICE_FACE.0));
            }
            Some(service)
        } else {
            None
        };
        let face_uris = if rc.face_uris.is_empty() {
            own_face_uris(faces.listeners())
        } else {
            rc.face_uris.clone()
        };
        if face_uris.is_empty() {
            tracing::warn!("routing: no FaceUri for this router's locator record (listeners on 0.0.0.0 or [::]): set routing.face_uris");
        }
        let locator = LocatorRecord::build(&key, &face_uris, now, rc.announce_lifetime)
            .context("this router's locator record")?;
        mgmt.routing = Some(Admission::new(me, nameway_routing::CLOCK_GRACE_MS));
        let (created_tx, created_rx) = mpsc::channel(64);
        let mut routing = Self {
            config: rc.clone(),
            key,
            me,
            face_uris,
            rib_prefixes,
            resolver,
            service,
            announce: announce::Announcer::new(locator, now, rc.announce_lifetime),
            first_hop: first_hop::FirstHop::default(),
            faces: faces.clone(),
            created_tx,
            created_rx,
            clock_start,
        };
        routing.reach_ribs(fw, mgmt).await;
        tracing::info!(
            %router,
            miss = rc.miss.as_str(),
            rib = ?routing.rib_prefixes.iter().map(ToString::to_string).collect::<Vec<_>>(),
            rib_service = routing.service.is_some(),
            face_uris = ?routing.face_uris,
            "secure routing on"
        );
        Ok(Some(routing))
    }

    /// Creates the faces of `[[routing.rib]]` entries with a `uri` and routes their prefixes.
    async fn reach_ribs(&mut self, fw: &mut Forwarder, mgmt: &mut Management) {
        for entry in self.config.rib.clone() {
            let (Some(uri), Ok(prefix)) = (&entry.uri, entry.prefix.parse::<Name>()) else {
                continue;
            };
            let options = nameway_face::FaceOptions {
                connect_in_background: true,
                ..nameway_face::FaceOptions::default()
            };
            let created = match FaceUri::canonize(uri).await {
                Ok(u) => match self
                    .faces
                    .create_with(&u, Persistency::Permanent, options)
                    .await
                {
                    Ok(id) | Err(FaceError::Exists(id)) => Ok(id),
                    Err(e) => Err(e.to_string()),
                },
                Err(e) => Err(e.to_string()),
            };
            match created.map(|id| self.faces.info(id)) {
                Ok(Some(info)) => {
                    add_fw_face(fw, &info);
                    mgmt.add_route(fw, &prefix, routing_route(info.id.0));
                    tracing::info!(%prefix, %uri, face = info.id.0, "routing: RIB service reached through a face");
                }
                Ok(None) => tracing::warn!(%uri, "routing: the RIB face closed at once"),
                Err(e) => tracing::error!(%uri, error = %e, "routing: cannot create the RIB face"),
            }
        }
    }

    /// Whether `face` is one of the routing's internal faces.
    pub fn owns(face: FaceId) -> bool {
        face == ROUTING_FACE || face == RIB_SERVICE_FACE
    }

    /// This router's name's hash.
    pub fn me(&self) -> KeyHash {
        self.me
    }

    /// Wall-clock ms and forwarder time, now.
    fn clocks(&self) -> (u64, Time) {
        let fw_now = Time::from_nanos(self.clock_start.elapsed().as_nanos() as u64);
        (crate::wall_ms(), fw_now)
    }

    /// Handles a packet the forwarder sent to one of the routing's faces.
    pub fn on_transmit(&mut self, fw: &mut Forwarder, face: FaceId, wire: Bytes) {
        let (now, fw_now) = self.clocks();
        if face == RIB_SERVICE_FACE {
            let Some(service) = self.service.as_mut() else {
                return;
            };
            let interest = match Packet::classify(wire) {
                Ok(Packet::Interest(w)) => w,
                Ok(Packet::Lp(LpPacket {
                    fragment: Some(w),
                    nack: None,
                    ..
                })) => w,
                _ => return,
            };
            if let Some(data) = service.on_interest(now, &interest) {
                fw.handle_packet(fw_now, RIB_SERVICE_FACE, data);
            }
            return;
        }
        match Packet::classify(wire) {
            Ok(Packet::Data(data)) => self.on_data(now, data),
            Ok(Packet::Lp(lp)) => match (lp.nack, lp.fragment) {
                (Some(_), Some(interest)) => self.on_nack(now, &interest),
                (None, Some(data)) => self.on_data(now, data),
                _ => {}
            },
            _ => {}
        }
    }

    fn on_data(&mut self, now: u64, data: Bytes) {
        if self.announce.on_reply(now, &data) {
            return;
        }
        if let Some(r) = self.resolver.as_mut() {
            self.first_hop.answered(now, r, &data);
            r.on_answer(now, data);
        }
    }

    fn on_nack(&mut self, now: u64, interest: &Bytes) {
        let Ok(view) = nameway_wire::InterestView::new_checked(interest.clone()) else {
            return;
        };
        if self.announce.on_nack(now, view.name()) {
            return;
        }
        if let Some(r) = self.resolver.as_mut() {
            r.on_query_nack(now, view.name());
        }
    }

    /// Runs everything due: the forwarder's route misses, the resolver's timers, queries and
    /// events, announcements accepted by management, renewals, the RIB service's writes.
    pub fn poll(&mut self, fw: &mut Forwarder, mgmt: &mut Management) {
        let (now, fw_now) = self.clocks();
        self.take_announcements(now, fw, mgmt);
        self.announce_due(now, fw_now, fw, mgmt);
        self.first_hop_poll(now, fw_now, fw, mgmt);
        if let Some(s) = self.service.as_mut() {
            if s.poll_timeout() <= now {
                s.on_timeout(now);
            }
        }
    }

    /// When [`Routing::poll`] next has timed work.
    pub fn next_deadline(&self) -> Option<Instant> {
        let mut next = self.announce.poll_timeout();
        if let Some(r) = &self.resolver {
            next = min_opt(next, r.poll_timeout());
        }
        if let Some(s) = &self.service {
            next = min_opt(next, Some(s.poll_timeout()));
        }
        let at = next?;
        let wait = at.saturating_sub(crate::wall_ms());
        Some(Instant::now() + Duration::from_millis(wait))
    }

    /// The next face creation that finished (never, when none is under way).
    pub async fn face_created(&mut self) -> Option<FaceCreated> {
        self.created_rx.recv().await
    }

    /// A face the routing asked for is up (the driver has added it to the forwarder) or
    /// failed.
    pub fn on_face_created(
        &mut self,
        fw: &mut Forwarder,
        mgmt: &mut Management,
        created: FaceCreated,
    ) {
        let fw_now = self.clocks().1;
        match created.purpose {
            FacePurpose::Delegate(router) => {
                self.delegate_face_done(fw_now, fw, mgmt, router, &created.uri, created.result);
            }
        }
    }

    /// Makes the RIB service's writes durable (at shutdown).
    pub fn shutdown(&mut self) {
        if let Some(s) = self.service.as_mut() {
            s.flush();
        }
    }

    /// Every counter, for `/metrics`, `/api/status` and `routing/status`.
    pub fn stats(&self, fw: &Forwarder, mgmt: &Management) -> RoutingStats {
        let mut s = RoutingStats {
            mode: self.config.mode.as_str().to_owned(),
            miss: self.config.miss.as_str().to_owned(),
            router: nameway_routing::sc::display_name(&self.me.name()),
            ..RoutingStats::default()
        };
        let zeros = || {
            nameway_routing::RejectReason::ALL
                .iter()
                .map(|r| (r.as_str(), 0u64))
                .collect::<std::collections::BTreeMap<_, _>>()
        };
        s.rejected_lookups = zeros();
        s.rejected_registrations = zeros();
        s.rejected_announcements = zeros();
        if let Some(r) = &self.resolver {
            let v = r.verify_counters();
            add_verify(&mut s, v);
            for (reason, n) in v.rejected.iter() {
                *s.rejected_lookups.entry(reason.as_str()).or_default() += n;
            }
            let c = r.counters();
            s.lookups = c.lookups_started;
            s.lookup_queries = c.queries_sent;
            s.lookup_results = [
                ("found", c.answers_found),
                ("not_found", c.answers_not_found),
                ("rejected", c.answers_rejected),
                ("timed_out", c.lookups_timed_out),
            ]
            .into_iter()
            .collect();
            s.negative_hits = c.negative_hits;
            s.overloaded = c.overloaded;
            s.pending = r.pending_len();
            s.routes = r.routes().count();
            s.route_changes = [
                ("installed", c.routes_installed),
                ("replaced", c.routes_replaced),
                ("expired", c.routes_expired),
                ("evicted", c.routes_evicted),
            ]
            .into_iter()
            .collect();
        }
        if let Some(svc) = &self.service {
            let v = svc.verify_counters();
            add_verify(&mut s, v);
            for (reason, n) in v.rejected.iter() {
                *s.rejected_registrations.entry(reason.as_str()).or_default() += n;
            }
            s.service_lookups = with_zeros(&["found", "not_found"], &svc.counters().lookups);
            s.service_registrations = with_zeros(
                &["stored", "not_newer", "refused", "malformed"],
                &svc.counters().registrations,
            );
            s.service_names = svc.len();
        }
        if let Some(a) = &mgmt.routing {
            s.signatures_verified += a.signatures;
            for (reason, n) in &a.rejected {
                *s.rejected_announcements.entry(reason).or_default() += n;
            }
            s.announcements = a.accepted_counts.clone();
        }
        let fc = fw.resolution_counters();
        s.misses_held = fc.held;
        s.misses_nacked = fc.nacked;
        // Refused in the forwarder while the look-up queue was full, without a look-up.
        s.overloaded += fc.refused;
        s.hinted = fc.hinted;
        s.upstream_nacks = fc.upstream_nacks;
        s.delegate_faces = self.first_hop.faces_created;
        s.announced_names = self.announce.len();
        s.registrations = self.announce.counters();
        s
    }

    /// The routing's management datasets (`routing/status`, `routing/list`), as JSON.
    pub fn dataset(&self, fw: &Forwarder, mgmt: &Management, verb: &str) -> Option<Vec<u8>> {
        let now = crate::wall_ms();
        let json = match verb {
            "status" => serde_json::to_vec(&StatusView {
                router: nameway_routing::sc::display_name(&self.me.name()),
                router_hex: self.me.to_hex(),
                face_uris: self.face_uris.clone(),
                rib: self.rib_prefixes.iter().map(|p| p.to_string()).collect(),
                rib_service: self
                    .service
                    .as_ref()
                    .map(|s| s.prefixes().iter().map(ToString::to_string).collect()),
                announce_lifetime_ms: self.config.announce_lifetime,
                stats: self.stats(fw, mgmt),
            }),
            "list" => serde_json::to_vec(&self.list(fw, now)),
            _ => return None,
        };
        json.ok()
    }

    fn list(&self, fw: &Forwarder, now: u64) -> ListView {
        let show = |h: &KeyHash| nameway_routing::sc::display_name(&h.name());
        let routes = self
            .resolver
            .iter()
            .flat_map(|r| r.routes())
            .map(|r| RouteView {
                name: show(&r.h),
                delegate: show(&r.delegate),
                face_uris: r.face_uris.clone(),
                version: r.version,
                expires_in_ms: r.expires_at_ms.saturating_sub(now),
                hint: fw
                    .route_hint(r.h.as_bytes())
                    .map(nameway_routing::sc::display_name),
            })
            .collect();
        let announced = self
            .announce
            .names()
            .map(|(h, expires)| AnnouncedView {
                name: show(h),
                expires_in_ms: expires.saturating_sub(now),
            })
            .collect();
        let registry = self
            .service
            .iter()
            .flat_map(|s| s.names())
            .map(|n| RegistryView {
                name: show(&n.h),
                delegate: show(&n.delegate),
                version: n.version,
                expires_in_ms: n.expires_at_ms.saturating_sub(now),
            })
            .collect();
        ListView {
            routes,
            announced,
            registry,
        }
    }
}

/// `routing/status`.
#[derive(Serialize)]
struct StatusView {
    router: String,
    router_hex: String,
    face_uris: Vec<String>,
    rib: Vec<String>,
    rib_service: Option<Vec<String>>,
    announce_lifetime_ms: u64,
    stats: RoutingStats,
}

/// `routing/list`.
#[derive(Serialize)]
struct ListView {
    routes: Vec<RouteView>,
    announced: Vec<AnnouncedView>,
    registry: Vec<RegistryView>,
}

#[derive(Serialize)]
struct RouteView {
    name: String,
    delegate: String,
    face_uris: Vec<String>,
    version: u64,
    expires_in_ms: u64,
    hint: Option<String>,
}

#[derive(Serialize)]
struct AnnouncedView {
    name: String,
    expires_in_ms: u64,
}

#[derive(Serialize)]
struct RegistryView {
    name: String,
    delegate: String,
    version: u64,
    expires_in_ms: u64,
}

fn add_verify(s: &mut RoutingStats, v: &nameway_routing::VerifyCounters) {
    s.signatures_verified += v.signatures_verified;
    s.chains_verified += v.chains_verified;
    s.cache_hits += v.cache_hits;
    s.locator_cache_hits += v.locator_cache_hits;
}

fn with_zeros(
    keys: &[&'static str],
    counts: &std::collections::BTreeMap<&'static str, u64>,
) -> std::collections::BTreeMap<&'static str, u64> {
    let mut m: std::collections::BTreeMap<_, _> = keys.iter().map(|k| (*k, 0)).collect();
    for (k, v) in counts {
        *m.entry(k).or_default() += v;
    }
    m
}

fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A route the routing installs: origin [`ROUTING_ORIGIN`], cost 0, never expiring.
fn routing_route(face: u64) -> Route {
    Route {
        face,
        origin: ROUTING_ORIGIN,
        cost: 0,
        flags: crate::rib::CHILD_INHERIT,
        expires: None,
    }
}

/// Adds a face the face system created to the forwarder, if it is not there yet.
fn add_fw_face(fw: &mut Forwarder, info: &FaceInfo) {
    let id = FaceId(info.id.0);
    if fw.face(id).is_none() {
        let scope = crate::mgmt::fw_scope(info.scope);
        let link = crate::mgmt::fw_link_type(info.link_type);
        let _ = fw.add_face_with_id(id, scope, link);
    }
}

/// One FaceUri per UDP and TCP listener bound to a specific address.
fn own_face_uris(listeners: &[FaceUri]) -> Vec<String> {
    let mut udp = Vec::new();
    let mut tcp = Vec::new();
    for l in listeners {
        match l {
            FaceUri::Udp(a) if !a.ip().is_unspecified() => udp.push(l.to_string()),
            FaceUri::Tcp(a) if !a.ip().is_unspecified() => tcp.push(l.to_string()),
            _ => {}
        }
    }
    udp.extend(tcp);
    udp
}
