//! NFD management under `/localhost/nfd`, served as NFD serves it: through the internal face.
//!
//! The forwarder has a route `/localhost/nfd` → internal face 1 (local scope, local fields on),
//! so command Interests go through the PIT like any other and carry the requesting face in
//! IncomingFaceId. [`Management::on_packet`] answers with Data the driver feeds back into the
//! forwarder from the internal face, so responses reach the requester by the PIT, PitToken
//! echoed. Datasets follow docs/nfd-interop.md §8; responses §5.

pub mod command;
pub mod dataset;

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use nameway_face::{FaceInfo, FaceSystem, Persistency};
use nameway_fw::{FaceId, FaceScope, Forwarder, LinkType, MAX_PREFIX_DEPTH};
use nameway_wire::mgmt::{
    self, ChannelStatus, ControlParameters, ControlResponse, CsInfo, FaceStatus, FibEntry,
    ForwarderStatus, NextHopRecord, RibEntry, StrategyChoice,
};
use nameway_wire::{Data, Interest, MetaInfo, Name, Packet};

use self::command::{Command, Format, Refusal, ReplayGuard};
use self::dataset::DatasetStore;
use crate::config::MgmtConfig;
use crate::rib::{FibUpdate, Rib, Route};

/// Face id of the management's internal face.
pub const INTERNAL_FACE: FaceId = FaceId(1);

/// What the driver must do with a management request.
#[derive(Debug)]
pub enum Outcome {
    /// Feed these Data into the forwarder from the internal face.
    Reply(Bytes),
    /// Nothing to send (not management, or NFD sends no reply).
    Nothing,
    /// Create a face asynchronously, then call [`Management::face_created`].
    CreateFace {
        /// The command Interest to answer.
        interest: Box<Interest>,
        /// The canonical remote URI.
        uri: String,
        /// Requested persistency.
        persistency: Persistency,
        /// The parameters to echo.
        params: Box<ControlParameters>,
    },
}

/// Management state: the RIB, replay protection, the dataset store.
#[derive(Debug)]
pub struct Management {
    rib: Rib,
    guard: ReplayGuard,
    datasets: DatasetStore,
    config: MgmtConfig,
    start_ms: u64,
    /// The content-store server and its `[cs]` settings, with the decoupled store.
    cs: Option<(crate::cs_server::CsClient, crate::config::CsConfig)>,
    /// Packet capture sessions (`capture/start`, `capture/stop`).
    pub captures: crate::capture::Captures,
    /// The security policy (`security/set`, `security/unset`), when `[security]` is on.
    pub security: Option<std::sync::Arc<crate::security::SharedPolicy>>,
    /// The instant the forwarder's clock counts from (the driver sets it to its own start), to
    /// turn a command's arrival time into forwarder time.
    pub clock_start: Instant,
}

/// Wall-clock milliseconds since the Unix epoch.
pub fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Management {
    /// Management with an empty RIB.
    pub fn new(config: MgmtConfig) -> Self {
        Self {
            rib: Rib::new(),
            guard: ReplayGuard::new(config.signature_grace_ms),
            datasets: DatasetStore::default(),
            config,
            start_ms: wall_ms(),
            cs: None,
            captures: crate::capture::Captures::default(),
            security: None,
            clock_start: Instant::now(),
        }
    }

    /// The RIB.
    pub fn rib(&self) -> &Rib {
        &self.rib
    }

    /// Adds a route and applies the FIB changes (used for static routes too).
    pub fn add_route(&mut self, fw: &mut Forwarder, name: &Name, route: Route) {
        let updates = self.rib.register(name, route);
        apply(fw, &updates);
    }

    /// Removes one route (face and origin) and applies the FIB changes.
    pub fn remove_route(&mut self, fw: &mut Forwarder, name: &Name, face: u64, origin: u64) {
        let updates = self.rib.unregister(name, face, origin);
        apply(fw, &updates);
    }

    /// Serves `cs/*` from the content-store server (the decoupled store).
    pub fn set_cs(&mut self, cs: Option<(crate::cs_server::CsClient, crate::config::CsConfig)>) {
        self.cs = cs;
    }

    /// Applies a reloaded `[mgmt]` section; the replay state is kept.
    pub fn set_config(&mut self, config: MgmtConfig) {
        self.guard.set_grace_ms(config.signature_grace_ms);
        self.config = config;
    }

    /// A face went down: its routes go, and a capture it was the sink of ends.
    pub fn face_down(&mut self, fw: &mut Forwarder, face: u64) {
        self.captures.face_down(face);
        let updates = self.rib.remove_face(face);
        apply(fw, &updates);
    }

    /// Removes expired routes.
    pub fn expire_routes(&mut self, fw: &mut Forwarder, now: Instant) {
        let updates = self.rib.expire(now);
        apply(fw, &updates);
    }

    /// When the next route expires.
    pub fn next_expiry(&self) -> Option<Instant> {
        self.rib.next_expiry()
    }

    /// Handles what the forwarder sent to the internal face (an Interest, possibly in an
    /// LpPacket carrying IncomingFaceId).
    pub fn on_packet(
        &mut self,
        fw: &mut Forwarder,
        faces: &FaceSystem,
        now: Instant,
        wire: Bytes,
    ) -> Outcome {
        let (interest_wire, incoming) = match Packet::classify(wire) {
            Ok(Packet::Interest(w)) => (w, None),
            Ok(Packet::Lp(lp)) if lp.nack.is_none() => match lp.fragment {
                Some(f) => (f, lp.incoming_face_id),
                None => return Outcome::Nothing,
            },
            _ => return Outcome::Nothing,
        };
        let Ok(interest) = Interest::decode(&interest_wire) else {
            return Outcome::Nothing;
        };
        self.on_interest(fw, faces, now, interest, &interest_wire, incoming)
    }

    fn on_interest(
        &mut self,
        fw: &mut Forwarder,
        faces: &FaceSystem,
        now: Instant,
        interest: Interest,
        wire: &Bytes,
        incoming: Option<u64>,
    ) -> Outcome {
        if dataset::names_a_segment(&interest.name) {
            return self
                .datasets
                .lookup(now, &interest)
                .map_or(Outcome::Nothing, Outcome::Reply);
        }
        let cmd = match command::parse(&interest, wire) {
            Ok(cmd) => cmd,
            Err(Refusal::NotManagement) => return Outcome::Nothing,
            Err(Refusal::Malformed) => {
                return self.respond(
                    &interest,
                    400,
                    "Malformed command",
                    &ControlParameters::default(),
                )
            }
            Err(Refusal::Unauthorized(why)) => {
                tracing::info!(name = %interest.name, why, "management command refused");
                return self.respond(
                    &interest,
                    403,
                    "authorization rejected",
                    &ControlParameters::default(),
                );
            }
        };
        // Under /localhop/nfd only prefix registration is served, and only when enabled
        // (NFD's localhop_security); anything else gets no answer, as from NFD.
        let localhop = interest
            .name
            .get(0)
            .is_some_and(|c| c.value() == b"localhop");
        if localhop && !(self.config.localhop_rib && cmd.module == "rib" && cmd.has_params) {
            return Outcome::Nothing;
        }
        if let Some(out) = self.dataset(fw, faces, now, &interest, &cmd) {
            return out;
        }
        if !cmd.has_params {
            return self.respond(&interest, 400, "Malformed command", &cmd.params);
        }
        let incoming = incoming.unwrap_or(0);
        let signed_required = cmd.module == "rib" && self.config.require_signed_rib_commands;
        if signed_required || cmd.format != Format::Unsigned {
            if let Err(Refusal::Unauthorized(why)) = self.guard.check(wall_ms(), incoming, &cmd) {
                tracing::info!(name = %interest.name, why, "management command refused");
                return self.respond(&interest, 403, "authorization rejected", &cmd.params);
            }
        }
        let mut p = cmd.params.clone();
        match (cmd.module.as_str(), cmd.verb.as_str()) {
            ("rib", "register") => self.rib_register(fw, now, &interest, p, incoming),
            ("rib", "unregister") => self.rib_unregister(fw, &interest, p, incoming),
            ("fib", "add-nexthop") => self.fib_add(fw, &interest, p, incoming),
            ("fib", "remove-nexthop") => {
                let (Some(name), face) = (p.name.clone(), face_or(p.face_id, incoming)) else {
                    return self.respond(&interest, 400, "Name is required", &p);
                };
                fw.remove_nexthop(&name, FaceId(face));
                p.face_id = Some(face);
                self.respond(&interest, 200, "OK", &p)
            }
            ("strategy-choice", "set") => {
                let (Some(name), Some(strategy)) = (p.name.clone(), p.strategy.clone()) else {
                    return self.respond(&interest, 400, "Name and Strategy are required", &p);
                };
                match fw.set_strategy(&name, &strategy) {
                    Ok(full) => {
                        p.strategy = Some(full);
                        self.respond(&interest, 200, "OK", &p)
                    }
                    // NFD: 400 for parameters the strategy refuses, 414 for a long prefix,
                    // 404 for an unknown strategy or version.
                    Err(nameway_fw::StrategyError::BadParameters(why)) => {
                        self.respond(&interest, 400, &format!("Invalid parameters: {why}"), &p)
                    }
                    Err(nameway_fw::StrategyError::PrefixTooLong) => {
                        self.respond(&interest, 414, "Prefix has too many components", &p)
                    }
                    Err(_) => self.respond(&interest, 404, "Strategy not registered", &p),
                }
            }
            ("strategy-choice", "unset") => {
                let Some(name) = p.name.clone() else {
                    return self.respond(&interest, 400, "Name is required", &p);
                };
                if name.is_empty() {
                    return self.respond(&interest, 400, "cannot unset root prefix strategy", &p);
                }
                let _ = fw.unset_strategy(&name);
                self.respond(&interest, 200, "OK", &p)
            }
            ("security", "set") | ("security", "unset") => {
                self.security_command(faces, &interest, cmd.verb == "set", p)
            }
            ("neighbours", "trust") | ("neighbours", "untrust") => {
                self.trust_command(faces, &interest, cmd.verb == "trust", p)
            }
            ("cs", "config") => {
                let tiers = p.cs_policy.is_some()
                    || p.cs_memory_capacity.is_some()
                    || p.cs_disk_capacity.is_some();
                if tiers {
                    let Some((client, config)) = &mut self.cs else {
                        return self.respond(
                            &interest,
                            409,
                            "Policy and tier sizes need the decoupled content store ([cs] decoupled or disk_path)",
                            &p,
                        );
                    };
                    if let Some(policy) = &p.cs_policy {
                        if policy.parse::<nameway_cs::PolicyKind>().is_err() {
                            return self.respond(
                                &interest,
                                409,
                                "Unknown policy (lru, lfu or arc)",
                                &p,
                            );
                        }
                        config.policy.clone_from(policy);
                    }
                    if let Some(bytes) = p.cs_memory_capacity {
                        config.memory_capacity = crate::config::ByteSize(bytes);
                    }
                    if let Some(bytes) = p.cs_disk_capacity {
                        config.disk_capacity = crate::config::ByteSize(bytes);
                    }
                    client.reconfigure(config);
                    tracing::info!(
                        policy = %config.policy,
                        memory = config.memory_capacity.0,
                        disk = config.disk_capacity.0,
                        "content store tiers reconfigured"
                    );
                }
                if let Some(c) = p.capacity {
                    let capacity = usize::try_from(c).unwrap_or(usize::MAX);
                    fw.set_cs_capacity(capacity);
                    if let Some((client, config)) = &mut self.cs {
                        config.capacity = capacity;
                        client.reconfigure(config);
                    }
                }
                let mask = p.mask.unwrap_or(0);
                let flags = p.flags.unwrap_or(0);
                if mask & mgmt::cs_flags::ENABLE_ADMIT != 0 {
                    fw.set_cs_admit(flags & mgmt::cs_flags::ENABLE_ADMIT != 0);
                }
                if mask & mgmt::cs_flags::ENABLE_SERVE != 0 {
                    fw.set_cs_serve(flags & mgmt::cs_flags::ENABLE_SERVE != 0);
                }
                let mut body = ControlParameters {
                    capacity: Some(fw.content_store().capacity() as u64),
                    flags: Some(cs_flags(fw)),
                    ..ControlParameters::default()
                };
                if let Some((_, config)) = &self.cs {
                    body.cs_policy = Some(config.policy.clone());
                    body.cs_memory_capacity = Some(config.memory_capacity.0);
                    body.cs_disk_capacity = Some(config.disk_capacity.0);
                }
                self.respond(&interest, 200, "OK", &body)
            }
            ("cs", "erase") => {
                let Some(name) = p.name.clone() else {
                    return self.respond(&interest, 400, "Name is required", &p);
                };
                let limit = p
                    .count
                    .map_or(usize::MAX, |c| usize::try_from(c).unwrap_or(usize::MAX));
                let erased = match &self.cs {
                    Some((client, _)) => client.erase(&name, limit).unwrap_or(0),
                    None => fw.cs_erase(&name, limit),
                };
                let mut body = ControlParameters::with_name(name);
                body.count = Some(erased as u64);
                if p.count.is_some_and(|c| erased as u64 >= c) {
                    body.capacity = p.count;
                }
                self.respond(&interest, 200, "OK", &body)
            }
            // Ours: mirror a face's packets to the requesting face (`nameway capture`).
            ("capture", "start") => {
                let face = p.face_id.filter(|&f| f != 0);
                if face.is_some_and(|f| faces.info(nameway_face::FaceId(f)).is_none()) {
                    return self.respond(&interest, 404, "Face not found", &p);
                }
                match self.captures.start(incoming, face) {
                    Ok(()) => {
                        tracing::info!(sink = incoming, face = ?face, "capture started");
                        self.respond(&interest, 200, "OK", &p)
                    }
                    Err(_) => self.respond(&interest, 503, "Too many capture sessions", &p),
                }
            }
            ("capture", "stop") => {
                let totals = self.captures.stop(incoming).unwrap_or_default();
                // Capacity: records sent to the sink; Count: records dropped (slow reader).
                let body = ControlParameters {
                    face_id: Some(incoming),
                    capacity: Some(totals.captured),
                    count: Some(totals.dropped),
                    ..ControlParameters::default()
                };
                self.respond(&interest, 200, "OK", &body)
            }
            ("faces", "create") => self.faces_create(interest, p),
            ("faces", "destroy") => {
                let Some(id) = p.face_id else {
                    return self.respond(&interest, 400, "FaceId is required", &p);
                };
                if id == nameway_face::FaceId::NULL.0 {
                    return self.respond(&interest, 403, "The null face is permanent", &p);
                }
                if faces.destroy(nameway_face::FaceId(id)) {
                    fw.remove_face(FaceId(id));
                    self.face_down(fw, id);
                }
                self.respond(&interest, 200, "OK", &p)
            }
            ("faces", "update") => {
                let id = face_or(p.face_id, incoming);
                let Some(info) = faces.info(nameway_face::FaceId(id)) else {
                    return self.respond(&interest, 404, "Face not found", &p);
                };
                if let Some(code) = p.face_persistency {
                    match Persistency::from_code(code) {
                        Some(per) => {
                            faces.set_persistency(nameway_face::FaceId(id), per);
                        }
                        None => return self.respond(&interest, 409, "Invalid properties", &p),
                    }
                }
                if let Some(rate) = p.interest_rate_limit {
                    let Some(limit) = rate_limit(rate, p.interest_burst) else {
                        return self.respond(&interest, 409, "Invalid properties", &p);
                    };
                    let t = nameway_fw::Time::from_nanos(
                        now.saturating_duration_since(self.clock_start).as_nanos() as u64,
                    );
                    fw.set_interest_rate_limit(FaceId(id), t, limit);
                    tracing::info!(face = id, limit = ?limit, "interest rate limit set");
                }
                let current = fw.face(FaceId(id)).and_then(|f| f.interest_rate_limit());
                p.interest_rate_limit = Some(current.map_or(0, |l| u64::from(l.per_second)));
                p.interest_burst = current.map(|l| u64::from(l.burst));
                p.face_id = Some(id);
                p.face_persistency = p.face_persistency.or(Some(info.persistency.code()));
                p.flags = Some(p.flags.unwrap_or(0) & p.mask.unwrap_or(0));
                p.mask = None;
                self.respond(&interest, 200, "OK", &p)
            }
            ("rib", "announce") => {
                self.respond(&interest, 501, "rib/announce is not supported", &p)
            }
            _ => Outcome::Nothing,
        }
    }

    fn rib_register(
        &mut self,
        fw: &mut Forwarder,
        now: Instant,
        interest: &Interest,
        mut p: ControlParameters,
        incoming: u64,
    ) -> Outcome {
        let Some(name) = p.name.clone() else {
            return self.respond(interest, 400, "Name is required", &p);
        };
        if name.len() > MAX_PREFIX_DEPTH {
            return self.respond(interest, 414, "Route prefix too long", &p);
        }
        let face = face_or(p.face_id, incoming);
        if fw.face(FaceId(face)).is_none() {
            return self.respond(interest, 410, "Face not found", &p);
        }
        let route = Route {
            face,
            origin: p.origin.unwrap_or(mgmt::route_origin::APP),
            cost: p.cost.unwrap_or(0),
            flags: p.flags.unwrap_or(mgmt::route_flags::CHILD_INHERIT),
            expires: p
                .expiration_period
                .map(|ms| now + std::time::Duration::from_millis(ms)),
        };
        (p.face_id, p.origin, p.cost, p.flags) = (
            Some(face),
            Some(route.origin),
            Some(route.cost),
            Some(route.flags),
        );
        tracing::info!(prefix = %name, face, origin = route.origin, cost = route.cost, "route registered");
        self.add_route(fw, &name, route);
        self.respond(interest, 200, "OK", &p)
    }

    fn rib_unregister(
        &mut self,
        fw: &mut Forwarder,
        interest: &Interest,
        p: ControlParameters,
        incoming: u64,
    ) -> Outcome {
        let Some(name) = p.name.clone() else {
            return self.respond(interest, 400, "Name is required", &p);
        };
        let face = face_or(p.face_id, incoming);
        let origin = p.origin.unwrap_or(mgmt::route_origin::APP);
        let updates = self.rib.unregister(&name, face, origin);
        apply(fw, &updates);
        let body = ControlParameters {
            name: Some(name),
            face_id: Some(face),
            origin: Some(origin),
            ..ControlParameters::default()
        };
        self.respond(interest, 200, "OK", &body)
    }

    fn fib_add(
        &mut self,
        fw: &mut Forwarder,
        interest: &Interest,
        mut p: ControlParameters,
        incoming: u64,
    ) -> Outcome {
        let Some(name) = p.name.clone() else {
            return self.respond(interest, 400, "Name is required", &p);
        };
        if name.len() > MAX_PREFIX_DEPTH {
            return self.respond(interest, 414, "Prefix too long", &p);
        }
        let face = face_or(p.face_id, incoming);
        let cost = p.cost.unwrap_or(0);
        match fw.add_nexthop(&name, FaceId(face), cost) {
            Ok(()) => {
                p.face_id = Some(face);
                p.cost = Some(cost);
                self.respond(interest, 200, "OK", &p)
            }
            Err(_) => self.respond(interest, 410, "Face not found", &p),
        }
    }

    fn faces_create(&mut self, interest: Interest, p: ControlParameters) -> Outcome {
        let Some(uri) = p.uri.clone() else {
            return self.respond(&interest, 400, "Uri is required", &p);
        };
        if let Some(rate) = p.interest_rate_limit {
            if rate_limit(rate, p.interest_burst).is_none() {
                return self.respond(&interest, 409, "Invalid properties", &p);
            }
        }
        if let Some(mode) = &p.secure_mode {
            if crate::security::parse_mode(mode).is_none() {
                return self.respond(&interest, 400, "SecureMode is per-prefix or link-wide", &p);
            }
        }
        let persistency = match p.face_persistency.map(Persistency::from_code) {
            None => Persistency::Persistent,
            Some(Some(per)) if per != Persistency::OnDemand => per,
            Some(_) => return self.respond(&interest, 406, "Unsupported persistency", &p),
        };
        Outcome::CreateFace {
            interest: Box::new(interest),
            uri,
            persistency,
            params: Box::new(p),
        }
    }

    /// `security/set` (Name, SecurityLevel) and `security/unset` (Name).
    fn security_command(
        &mut self,
        faces: &FaceSystem,
        interest: &Interest,
        set: bool,
        p: ControlParameters,
    ) -> Outcome {
        let Some(policy) = self.security.clone().filter(|_| faces.security().is_some()) else {
            return self.respond(
                interest,
                409,
                "security policies need [security] identity in the configuration",
                &p,
            );
        };
        let Some(name) = p.name.clone() else {
            return self.respond(interest, 400, "Name is required", &p);
        };
        if !set {
            policy.unset(&name);
            tracing::info!(prefix = %name, "security policy unset");
            return self.respond(interest, 200, "OK", &p);
        }
        let Some(level) = p.security_level.as_deref() else {
            return self.respond(interest, 400, "SecurityLevel is required", &p);
        };
        let level = match level.parse::<nameway_wire::lp::SecurityLevel>() {
            Ok(l) => l,
            Err(e) => return self.respond(interest, 409, &e.to_string(), &p),
        };
        if let Err(e) = policy.set(&name, level) {
            return self.respond(interest, 414, &e.to_string(), &p);
        }
        tracing::info!(prefix = %name, %level, "security policy set");
        // The response text carries the level's warning, for the CLI to show.
        let text = level
            .warning()
            .map_or_else(|| "OK".to_owned(), |w| format!("OK; warning: {w}"));
        self.respond(interest, 200, &text, &p)
    }

    /// `neighbours/trust` and `neighbours/untrust` (PeerKey).
    fn trust_command(
        &mut self,
        faces: &FaceSystem,
        interest: &Interest,
        trust: bool,
        p: ControlParameters,
    ) -> Outcome {
        let Some(ctx) = faces.security() else {
            return self.respond(
                interest,
                409,
                "trusted peers need [security] identity in the configuration",
                &p,
            );
        };
        let key = match p
            .peer_key
            .as_deref()
            .map(str::parse::<nameway_face::secure::PublicKey>)
        {
            Some(Ok(k)) => k,
            Some(Err(e)) => return self.respond(interest, 400, &e.to_string(), &p),
            None => return self.respond(interest, 400, "PeerKey is required", &p),
        };
        if trust {
            ctx.trust(key);
            tracing::info!(peer = %key, "peer trusted");
        } else {
            faces.untrust(&key);
            tracing::info!(peer = %key, "peer no longer trusted; its sessions end");
        }
        self.respond(interest, 200, "OK", &p)
    }

    /// Completes a `faces/create` once the face system has answered.
    pub fn face_created(
        &mut self,
        interest: &Interest,
        params: &ControlParameters,
        result: Result<FaceInfo, nameway_face::FaceError>,
        existing: Option<&FaceInfo>,
    ) -> Outcome {
        match result {
            Ok(info) => {
                let mut body = face_params(&info);
                body.interest_rate_limit = params.interest_rate_limit;
                body.interest_burst = params
                    .interest_rate_limit
                    .filter(|&r| r > 0)
                    .map(|r| params.interest_burst.unwrap_or(r));
                self.respond(interest, 200, "OK", &body)
            }
            Err(nameway_face::FaceError::Exists(_)) => {
                // NFD answers with the existing face, which nfdc prints as face-exists id=N.
                let body = existing.map_or_else(|| params.clone(), face_params);
                self.respond(interest, 409, "Face exists", &body)
            }
            Err(
                nameway_face::FaceError::UnsupportedScheme
                | nameway_face::FaceError::Uri(nameway_face::uri::UriError::UnknownScheme(_)),
            ) => self.respond(interest, 406, "Unsupported protocol", params),
            // Malformed, of the wrong address family, or a host name that does not resolve:
            // say which, instead of "Unsupported protocol".
            Err(nameway_face::FaceError::Uri(e)) => {
                self.respond(interest, 400, &format!("Bad FaceUri: {e}"), params)
            }
            Err(
                e @ (nameway_face::FaceError::SecurityNotConfigured
                | nameway_face::FaceError::SecureNeedsUdp),
            ) => self.respond(interest, 409, &e.to_string(), params),
            Err(e) => self.respond(interest, 504, &format!("Face creation failed: {e}"), params),
        }
    }

    /// Answers dataset requests (`*/list`, `status/general`, `cs/info`, `faces/query`).
    fn dataset(
        &mut self,
        fw: &Forwarder,
        faces: &FaceSystem,
        now: Instant,
        interest: &Interest,
        cmd: &Command,
    ) -> Option<Outcome> {
        let content: Vec<u8> = match (cmd.module.as_str(), cmd.verb.as_str()) {
            ("status", "general") => self.general_status(fw).encode().to_vec(),
            ("faces", "list") => face_statuses(fw, faces.list()).concat(),
            ("faces", "channels") => faces
                .listeners()
                .iter()
                .map(|uri| {
                    ChannelStatus {
                        local_uri: uri.to_string(),
                    }
                    .encode()
                    .to_vec()
                })
                .collect::<Vec<_>>()
                .concat(),
            ("faces", "query") => {
                // As NFD's FaceManager::queryFaces: a missing or undecodable FaceQueryFilter is
                // rejected with 400, never taken as "no filter" (which would list every face).
                let filter = interest.name.get(4).and_then(|c| {
                    mgmt::FaceQueryFilter::decode(&Bytes::copy_from_slice(c.value())).ok()
                });
                let Some(filter) = filter else {
                    return Some(self.respond(
                        interest,
                        400,
                        "Malformed filter",
                        &ControlParameters::default(),
                    ));
                };
                let list = faces
                    .list()
                    .into_iter()
                    .filter(|f| matches_filter(f, Some(&filter)));
                face_statuses(fw, list.collect()).concat()
            }
            ("fib", "list") => fw
                .fib_entries()
                .map(|(name, hops)| {
                    FibEntry {
                        name: name.clone(),
                        next_hops: hops
                            .iter()
                            .map(|h| NextHopRecord {
                                face_id: h.face.0,
                                cost: h.cost,
                            })
                            .collect(),
                    }
                    .encode()
                    .to_vec()
                })
                .collect::<Vec<_>>()
                .concat(),
            ("rib", "list") => self
                .rib
                .entries()
                .map(|(name, routes)| {
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
                    .to_vec()
                })
                .collect::<Vec<_>>()
                .concat(),
            ("strategy-choice", "list") => fw
                .strategy_choices()
                .map(|(name, strategy)| {
                    StrategyChoice {
                        name: name.clone(),
                        strategy: strategy.clone(),
                    }
                    .encode()
                    .to_vec()
                })
                .collect::<Vec<_>>()
                .concat(),
            ("cs", "info") => match (&self.cs, self.cs_tiers(fw)) {
                (Some((_, config)), Some(t)) => CsInfo {
                    capacity: config.capacity as u64,
                    flags: cs_flags(fw),
                    n_entries: t.entries(),
                    n_hits: t.hits(),
                    n_misses: t.misses(),
                }
                .encode()
                .to_vec(),
                _ => {
                    let cs = fw.content_store();
                    let st = fw.status();
                    CsInfo {
                        capacity: cs.capacity() as u64,
                        flags: cs_flags(fw),
                        n_entries: cs.len() as u64,
                        n_hits: st.cs.hits,
                        n_misses: st.cs.misses,
                    }
                    .encode()
                    .to_vec()
                }
            },
            // Ours (not NFD's): what each face was refused and holds, as JSON.
            ("faces", "drops") => {
                let list: Vec<FaceDrops> = faces
                    .list()
                    .iter()
                    .filter_map(|info| {
                        let face = fw.face(FaceId(info.id.0))?;
                        Some(FaceDrops {
                            face_id: info.id.0,
                            pit_entries: face.pit_entries(),
                            interest_rate_limit: face.interest_rate_limit().map(|l| {
                                RateLimitView {
                                    per_second: l.per_second,
                                    burst: l.burst,
                                }
                            }),
                            drops: face.counters().drops.occurred().collect(),
                            link_drops: crate::status::link_drops(&info.counters),
                        })
                    })
                    .collect();
                serde_json::to_vec(&list).unwrap_or_default()
            }
            // Ours: the identity, trust list and policy, as JSON.
            ("security", "list") => serde_json::to_vec(&crate::status::security_view(
                faces,
                self.security.as_deref(),
            ))
            .unwrap_or_default(),
            // Ours: every secure link, as JSON.
            ("neighbours", "list") => {
                serde_json::to_vec(&crate::status::neighbour_views(faces)).unwrap_or_default()
            }
            // Ours (not NFD's): both tiers and the filter, as JSON.
            ("cs", "tiers") => {
                let tiers = self.cs_tiers(fw).unwrap_or_default();
                serde_json::to_vec(&tiers).unwrap_or_default()
            }
            _ => return None,
        };
        Some(Outcome::Reply(self.datasets.publish(
            now,
            &interest.name,
            wall_ms(),
            &content,
        )))
    }

    /// The decoupled store's figures: both tiers from the server, the filter from the forwarder.
    fn cs_tiers(&self, fw: &Forwarder) -> Option<crate::cs_server::Tiers> {
        let (client, _) = self.cs.as_ref()?;
        let info = client.info()?;
        Some(crate::cs_server::Tiers::new(&info, fw))
    }

    fn general_status(&self, fw: &Forwarder) -> ForwarderStatus {
        let st = fw.status();
        ForwarderStatus {
            nfd_version: format!("nameway {}", env!("CARGO_PKG_VERSION")),
            start_timestamp: self.start_ms,
            current_timestamp: wall_ms(),
            n_name_tree_entries: 0,
            n_fib_entries: st.n_fib_entries as u64,
            n_pit_entries: st.n_pit_entries as u64,
            n_measurements_entries: fw.n_measurements_entries() as u64,
            n_cs_entries: st.n_cs_entries as u64,
            n_in_interests: st.counters.n_in_interests,
            n_in_data: st.counters.n_in_data,
            n_in_nacks: st.counters.n_in_nacks,
            n_out_interests: st.counters.n_out_interests,
            n_out_data: st.counters.n_out_data,
            n_out_nacks: st.counters.n_out_nacks,
            n_satisfied_interests: st.counters.n_satisfied_interests,
            n_unsatisfied_interests: st.counters.n_unsatisfied_interests,
        }
    }

    /// A ControlResponse Data named exactly as the command Interest, always with a body.
    fn respond(
        &self,
        interest: &Interest,
        code: u32,
        text: &str,
        body: &ControlParameters,
    ) -> Outcome {
        let response = ControlResponse::new(code, text, body).encode();
        let mut data = Data::new(interest.name.clone(), response);
        data.meta_info = Some(MetaInfo {
            freshness_period: Some(dataset::FRESHNESS_MS),
            ..MetaInfo::default()
        });
        Outcome::Reply(dataset::sign(data))
    }
}

fn face_or(face: Option<u64>, incoming: u64) -> u64 {
    match face {
        Some(0) | None => incoming,
        Some(f) => f,
    }
}

fn cs_flags(fw: &Forwarder) -> u64 {
    let mut flags = 0;
    if fw.cs_admit() {
        flags |= mgmt::cs_flags::ENABLE_ADMIT;
    }
    if fw.cs_serve() {
        flags |= mgmt::cs_flags::ENABLE_SERVE;
    }
    flags
}

/// Applies RIB-derived next hops to the FIB: adds or updates the wanted ones, removes the rest.
fn apply(fw: &mut Forwarder, updates: &[FibUpdate]) {
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

/// The limit a `faces/create` or `faces/update` asks for: `Some(None)` to lift it (rate 0),
/// `Some(Some(..))` to set it (burst defaults to one second's worth), `None` when out of range.
pub fn rate_limit(rate: u64, burst: Option<u64>) -> Option<Option<nameway_fw::RateLimit>> {
    if rate == 0 {
        return Some(None);
    }
    let per_second = u32::try_from(rate).ok()?;
    let burst = match burst {
        None | Some(0) => per_second,
        Some(b) => u32::try_from(b).ok()?,
    };
    Some(Some(nameway_fw::RateLimit { per_second, burst }))
}

fn face_params(info: &FaceInfo) -> ControlParameters {
    ControlParameters {
        face_id: Some(info.id.0),
        uri: Some(info.remote.to_string()),
        local_uri: Some(info.local.to_string()),
        face_persistency: Some(info.persistency.code()),
        mtu: info.mtu.map(|m| m as u64),
        flags: Some(0),
        ..ControlParameters::default()
    }
}

/// One face in the `faces/drops` dataset (ours, JSON).
#[derive(serde::Serialize)]
struct FaceDrops {
    face_id: u64,
    /// PIT entries the face created and is charged for.
    pit_entries: usize,
    interest_rate_limit: Option<RateLimitView>,
    /// Forwarder drops by reason, non-zero only.
    drops: std::collections::BTreeMap<&'static str, u64>,
    /// Link-layer drops by reason, non-zero only.
    link_drops: std::collections::BTreeMap<&'static str, u64>,
}

#[derive(serde::Serialize)]
struct RateLimitView {
    per_second: u32,
    burst: u32,
}

fn face_statuses(fw: &Forwarder, list: Vec<FaceInfo>) -> Vec<Vec<u8>> {
    list.iter()
        .map(|info| {
            let c = fw
                .face(FaceId(info.id.0))
                .map(|f| *f.counters())
                .unwrap_or_default();
            FaceStatus {
                face_id: info.id.0,
                uri: info.remote.to_string(),
                local_uri: info.local.to_string(),
                expiration_period: None,
                face_scope: match info.scope {
                    nameway_face::FaceScope::Local => mgmt::face_scope::LOCAL,
                    _ => mgmt::face_scope::NON_LOCAL,
                },
                face_persistency: info.persistency.code(),
                link_type: match info.link_type {
                    nameway_face::LinkType::PointToPoint => mgmt::link_type::POINT_TO_POINT,
                    _ => mgmt::link_type::MULTI_ACCESS,
                },
                base_congestion_marking_interval: None,
                default_congestion_threshold: None,
                mtu: info.mtu.map(|m| m as u64),
                n_in_interests: c.n_in_interests,
                n_in_data: c.n_in_data,
                n_in_nacks: c.n_in_nacks,
                n_out_interests: c.n_out_interests,
                n_out_data: c.n_out_data,
                n_out_nacks: c.n_out_nacks,
                n_in_bytes: info.counters.in_bytes,
                n_out_bytes: info.counters.out_bytes,
                flags: 0,
            }
            .encode()
            .to_vec()
        })
        .collect()
}

/// NFD's `FaceManager::matchFilter`: UriScheme matches the remote or the local FaceUri (so
/// `unix` selects the Unix-socket faces, whose remote URI is `fd://N`), and FaceScope,
/// FacePersistency and LinkType are compared too.
fn matches_filter(info: &FaceInfo, filter: Option<&mgmt::FaceQueryFilter>) -> bool {
    let Some(f) = filter else { return true };
    let scope = match info.scope {
        nameway_face::FaceScope::Local => mgmt::face_scope::LOCAL,
        _ => mgmt::face_scope::NON_LOCAL,
    };
    let link_type = match info.link_type {
        nameway_face::LinkType::PointToPoint => mgmt::link_type::POINT_TO_POINT,
        _ => mgmt::link_type::MULTI_ACCESS,
    };
    f.face_id.is_none_or(|id| id == info.id.0)
        && f.uri_scheme
            .as_deref()
            .is_none_or(|s| info.remote.scheme() == s || info.local.scheme() == s)
        && f.uri
            .as_deref()
            .is_none_or(|u| info.remote.to_string() == u)
        && f.local_uri
            .as_deref()
            .is_none_or(|u| info.local.to_string() == u)
        && f.face_scope.is_none_or(|s| s == scope)
        && f.face_persistency
            .is_none_or(|p| p == info.persistency.code())
        && f.link_type.is_none_or(|l| l == link_type)
}

/// Maps face-system properties to the forwarder's.
pub fn fw_scope(scope: nameway_face::FaceScope) -> FaceScope {
    match scope {
        nameway_face::FaceScope::Local => FaceScope::Local,
        _ => FaceScope::NonLocal,
    }
}

/// Maps face-system link types to the forwarder's.
pub fn fw_link_type(link: nameway_face::LinkType) -> LinkType {
    match link {
        nameway_face::LinkType::PointToPoint => LinkType::PointToPoint,
        _ => LinkType::MultiAccess,
    }
}
