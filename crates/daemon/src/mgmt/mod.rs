//! NFD management under `/localhost/nfd`, served as NFD serves it: through the internal face.
//!
//! The forwarder has a route `/localhost/nfd` → internal face 1 (local scope, local fields on),
//! so command Interests go through the PIT like any other and carry the requesting face in
//! IncomingFaceId. [`Management::on_packet`] answers with Data the driver feeds back into the
//! forwarder from the internal face, so responses reach the requester by the PIT, PitToken
//! echoed. Datasets follow docs/nfd-interop.md §8; responses §5.
//!
//! Laid out as NFD's managers: this module parses and authorizes a request
//! ([`command`]) and hands it to the manager of its module, each in a file of its own with its
//! commands and datasets: [`faces`], `fib`, `rib`, [`cs`], `strategy`, [`status`],
//! [`security`] (with `neighbours`) and `capture`.

pub mod command;
pub mod cs;
pub mod dataset;
pub mod faces;
pub mod security;
pub mod status;

mod capture;
mod fib;
mod rib;
mod strategy;

pub use self::status::Snapshot;

use std::time::Instant;

use bytes::Bytes;
use nameway_face::{FaceSystem, Persistency};
use nameway_fw::{FaceId, FaceScope, Forwarder, LinkType};
use nameway_wire::mgmt::{ControlParameters, ControlResponse};
use nameway_wire::{Data, Interest, MetaInfo, Name, Packet};

use self::command::{Command, Format, Refusal, ReplayGuard};
use self::dataset::DatasetStore;
use crate::config::MgmtConfig;
use crate::rib::{Rib, Route};

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

/// A dataset's content, or the error response that replaces it.
type Dataset = Result<Vec<u8>, Outcome>;

/// One request as the managers see it.
struct Request<'a> {
    interest: &'a Interest,
    /// The Interest as received (what a signature covers).
    wire: &'a Bytes,
    /// The requesting face (IncomingFaceId), 0 when unknown.
    incoming: u64,
    now: Instant,
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
    pub captures: std::sync::Arc<crate::capture::Captures>,
    /// The security policy (`security/set`, `security/unset`), when `[security]` is on.
    pub security: Option<std::sync::Arc<crate::security::SharedPolicy>>,
    /// The instant the forwarder's clock counts from (the driver sets it to its own start), to
    /// turn a command's arrival time into forwarder time.
    pub clock_start: Instant,
    /// Bytes received and sent by faces that have closed.
    closed_bytes: (u64, u64),
    /// Whether a dataset was published (and may be in the content store) since the store was
    /// last cleared of them.
    datasets_cached: bool,
    /// The checks of self-certifying names, when `[routing]` is on.
    pub routing: Option<crate::routing::admission::Admission>,
    /// The controller agent's counters, when `[controller]` is on.
    pub agent: Option<std::sync::Arc<crate::agent::AgentCounters>>,
    /// Forwarding shards (`[forwarder] threads`).
    pub shards: usize,
    /// The other shards, when there are any (`cs/erase` erases there too).
    pub peers: Option<crate::driver_shards::Peers>,
}

impl Management {
    /// Management with an empty RIB.
    pub fn new(config: MgmtConfig) -> Self {
        Self {
            rib: Rib::new(),
            guard: ReplayGuard::new(config.signature_grace_ms),
            datasets: DatasetStore::default(),
            config,
            start_ms: crate::wall_ms(),
            cs: None,
            captures: std::sync::Arc::default(),
            security: None,
            clock_start: Instant::now(),
            closed_bytes: (0, 0),
            // A disk tier may hold datasets of an earlier run: the first change clears them.
            datasets_cached: true,
            routing: None,
            agent: None,
            shards: 1,
            peers: None,
        }
    }

    /// The RIB.
    pub fn rib(&self) -> &Rib {
        &self.rib
    }

    /// Adds a route and applies the FIB changes (used for static routes too).
    pub fn add_route(&mut self, fw: &mut Forwarder, name: &Name, route: Route) {
        let updates = self.rib.register(name, route);
        rib::apply(fw, &updates);
    }

    /// Removes one route (face and origin) and applies the FIB changes.
    pub fn remove_route(&mut self, fw: &mut Forwarder, name: &Name, face: u64, origin: u64) {
        let updates = self.rib.unregister(name, face, origin);
        rib::apply(fw, &updates);
    }

    /// Serves `cs/*` from the content-store server (the decoupled store).
    pub fn set_cs(&mut self, cs: Option<(crate::cs_server::CsClient, crate::config::CsConfig)>) {
        self.cs = cs;
    }

    /// The decoupled content store's client and the `[cs]` settings in force, when it runs
    /// (the controller's agent sets its tier sizes).
    pub fn cs_server(
        &mut self,
    ) -> Option<&mut (crate::cs_server::CsClient, crate::config::CsConfig)> {
        self.cs.as_mut()
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
        rib::apply(fw, &updates);
        self.state_changed(fw);
    }

    /// Removes expired routes.
    pub fn expire_routes(&mut self, fw: &mut Forwarder, now: Instant) {
        let updates = self.rib.expire(now);
        if !updates.is_empty() {
            rib::apply(fw, &updates);
            self.state_changed(fw);
        }
    }

    /// What the datasets show has changed (a command, a face up or down, a route expired):
    /// the datasets cached in the content store are taken out, so the next request is answered
    /// by management with the new state, not by the store with an older version. NFD leaves
    /// them for their FreshnessPeriod (1 s); with this, `nameway face list` right after
    /// `nameway face create`, from another process, shows the new face at once.
    pub fn state_changed(&mut self, fw: &mut Forwarder) {
        if !std::mem::take(&mut self.datasets_cached) {
            return;
        }
        let Ok(prefix) = "/localhost/nfd".parse::<Name>() else {
            return;
        };
        match &self.cs {
            // The decoupled store: an erase queued behind the inserts (no wait).
            Some((client, _)) => client.erase_later(&prefix),
            None => {
                fw.cs_erase(&prefix, usize::MAX);
            }
        }
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
        routing: Option<&crate::routing::Routing>,
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
        let req = Request {
            interest: &interest,
            wire: &interest_wire,
            incoming: incoming.unwrap_or(0),
            now,
        };
        self.on_interest(fw, faces, routing, &req)
    }

    fn on_interest(
        &mut self,
        fw: &mut Forwarder,
        faces: &FaceSystem,
        routing: Option<&crate::routing::Routing>,
        req: &Request<'_>,
    ) -> Outcome {
        let wire = req.wire;
        let interest = req.interest;
        if dataset::names_a_segment(&interest.name) {
            return self
                .datasets
                .lookup(req.now, interest)
                .map_or(Outcome::Nothing, Outcome::Reply);
        }
        let cmd = match self.parse(req, wire) {
            Ok(cmd) => cmd,
            Err(out) => return out,
        };
        if let Some(dataset) = self.dataset(fw, faces, routing, req, &cmd) {
            return match dataset {
                Ok(content) => {
                    self.datasets_cached = true;
                    Outcome::Reply(self.datasets.publish(
                        req.now,
                        &interest.name,
                        crate::wall_ms(),
                        &content,
                    ))
                }
                Err(out) => out,
            };
        }
        // rib/announce carries its Prefix Announcement in ApplicationParameters (NFD).
        let announce = cmd.module == "rib" && cmd.verb == "announce";
        if !cmd.has_params && !announce {
            return self.respond(interest, 400, "Malformed command", &cmd.params);
        }
        if let Err(out) = self.authorize(req, &cmd) {
            return out;
        }
        let p = cmd.params.clone();
        let verb = cmd.verb.as_str();
        self.state_changed(fw);
        match cmd.module.as_str() {
            "rib" => self.rib_command(fw, req, verb, p),
            "fib" => self.fib_command(fw, req, verb, p),
            "faces" => self.faces_command(fw, faces, req, verb, p),
            "strategy-choice" => self.strategy_command(fw, req, verb, p),
            "cs" => self.cs_command(fw, req, verb, p),
            "security" => self.security_command(faces, req, verb, p),
            "neighbours" => self.neighbours_command(faces, req, verb, p),
            "capture" => self.capture_command(faces, req, verb, p),
            _ => Outcome::Nothing,
        }
    }

    /// Parses a request; a refusal is answered as NFD answers it (400, 403, or not at all).
    /// Under `/localhop/nfd` only prefix registration is served, and only when enabled (NFD's
    /// localhop_security); anything else gets no answer, as from NFD.
    fn parse(&self, req: &Request<'_>, wire: &Bytes) -> Result<Command, Outcome> {
        let interest = req.interest;
        let cmd = match command::parse(interest, wire) {
            Ok(cmd) => cmd,
            Err(Refusal::NotManagement) => return Err(Outcome::Nothing),
            Err(Refusal::Malformed) => {
                let p = ControlParameters::default();
                return Err(self.respond(interest, 400, "Malformed command", &p));
            }
            Err(Refusal::Unauthorized(why)) => {
                tracing::info!(name = %interest.name, why, "management command refused");
                let p = ControlParameters::default();
                return Err(self.respond(interest, 403, "authorization rejected", &p));
            }
        };
        let localhop = interest
            .name
            .get(0)
            .is_some_and(|c| c.value() == b"localhop");
        if localhop && !(self.config.localhop_rib && cmd.module == "rib" && cmd.has_params) {
            return Err(Outcome::Nothing);
        }
        Ok(cmd)
    }

    /// Refuses a replayed or stale signed command (and an unsigned RIB command when
    /// `[mgmt] require_signed_rib_commands` is on) with 403.
    fn authorize(&mut self, req: &Request<'_>, cmd: &Command) -> Result<(), Outcome> {
        let signed_required = cmd.module == "rib" && self.config.require_signed_rib_commands;
        if !signed_required && cmd.format == Format::Unsigned {
            return Ok(());
        }
        match self.guard.check(crate::wall_ms(), req.incoming, cmd) {
            Err(Refusal::Unauthorized(why)) => {
                tracing::info!(name = %req.interest.name, why, "management command refused");
                Err(self.respond(req.interest, 403, "authorization rejected", &cmd.params))
            }
            _ => Ok(()),
        }
    }

    /// Answers dataset requests (`*/list`, `status/general`, `cs/info`, `faces/query`, ...)
    /// from the manager of their module; `None` when the request is not a dataset.
    fn dataset(
        &self,
        fw: &Forwarder,
        faces: &FaceSystem,
        routing: Option<&crate::routing::Routing>,
        req: &Request<'_>,
        cmd: &Command,
    ) -> Option<Dataset> {
        let verb = cmd.verb.as_str();
        match (cmd.module.as_str(), verb) {
            ("routing", _) => routing.and_then(|r| r.dataset(fw, self, verb)).map(Ok),
            ("status", _) => self.status_dataset(fw, faces, verb),
            ("faces", _) => self.faces_dataset(fw, faces, req, verb),
            ("fib", "list") => Some(Ok(fib::list(fw))),
            ("rib", "list") => Some(Ok(rib::list(&self.rib, req.now))),
            ("strategy-choice", "list") => Some(Ok(strategy::list(fw))),
            ("cs", _) => self.cs_dataset(fw, verb),
            (module @ ("security" | "neighbours"), _) => self.security_dataset(faces, module, verb),
            _ => None,
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

/// The face a command names, or the requesting face when it names none (FaceId absent or 0).
fn face_or(face: Option<u64>, incoming: u64) -> u64 {
    match face {
        Some(0) | None => incoming,
        Some(f) => f,
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
