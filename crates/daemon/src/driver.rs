//! The driver: joins the face system to the forwarding core and management.
//!
//! One tokio task owns the [`Forwarder`] and [`Management`]. Each turn it takes up to
//! `rx_burst` face events (so a flood stays bounded and timers still run), then serves due
//! timers, then drains the forwarder's output: packets for the internal face go to
//! management, whose replies go back into the forwarder; the rest go to the face system's
//! per-face queues, which drop (and count) instead of blocking.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use bytes::Bytes;
use nameway_face::{FaceEvent, FaceSystem, FaceSystemConfig, FaceUri, Persistency};
use nameway_fw::{Config as FwConfig, FaceId, FaceScope, Forwarder, LinkType, Time};
use nameway_wire::Name;
use tokio::sync::mpsc;

use crate::config::Config;
use crate::driver_shards::{Core, Shards};
use crate::mgmt::{self, Management, Outcome, INTERNAL_FACE};
use crate::rib::Route;

/// The result of an asynchronous `faces/create`.
struct Created {
    interest: nameway_wire::Interest,
    params: nameway_wire::mgmt::ControlParameters,
    result: Result<nameway_face::FaceInfo, nameway_face::FaceError>,
    /// The face that already exists, when `result` is `Exists`.
    existing: Option<nameway_face::FaceInfo>,
}

/// A running daemon's core loop.
pub struct Driver {
    fw: Core,
    /// The other shards, when `[forwarder] threads` is above 1.
    shards: Option<Shards>,
    /// Wakes this (shard 0's) loop when another shard hands it packets.
    handoff_wake: Option<Arc<tokio::sync::Notify>>,
    mgmt: Management,
    faces: Arc<FaceSystem>,
    events: mpsc::Receiver<FaceEvent>,
    created_tx: mpsc::Sender<Created>,
    created_rx: mpsc::Receiver<Created>,
    start: Instant,
    rx_burst: usize,
    /// Snapshot requests from the HTTP listener, when it is on.
    snapshots: Option<mpsc::Receiver<crate::http::SnapshotRequest>>,
    /// The configuration in force (what needs a restart: as started).
    config: Config,
    /// Routes installed from `[[route]]`: prefix and face.
    static_routes: Vec<(Name, u64)>,
    /// Prefixes whose strategy was chosen by `[[strategy]]`.
    static_strategies: Vec<Name>,
    /// Configurations to apply (SIGHUP).
    reloads: Option<mpsc::Receiver<Config>>,
    /// The content-store server, with the decoupled store.
    cs: Option<crate::cs_server::CsHandle>,
    /// Its answers.
    cs_answers: Option<mpsc::UnboundedReceiver<nameway_cs::worker::Answer>>,
    /// Secure routing, when `[routing]` is on.
    routing: Option<crate::routing::Routing>,
    /// The controller's agent, when `[controller]` is on.
    agent: Option<crate::agent::Agent>,
}

/// The null face's id (NFD's `FACEID_NULL`).
pub const NULL_FACE: FaceId = FaceId(255);

/// The face options of a `[[face]]`.
fn static_face_options(f: &crate::config::StaticFace) -> nameway_face::FaceOptions {
    use nameway_face::secure::SecureMode;
    nameway_face::FaceOptions {
        secure: match (f.secure, f.link_wide) {
            (true, true) => Some(SecureMode::LinkWide),
            (true, false) => Some(SecureMode::PerPrefix),
            _ => None,
        },
        // A neighbour that starts later (or is down) must not keep this forwarder from
        // starting: its face is created down and connects when the neighbour is up.
        connect_in_background: true,
        fault: f.fault.as_ref().map(fault_config),
        ..nameway_face::FaceOptions::default()
    }
}

/// The face crate's fault settings from a `[faces.fault]` or `[face.fault]` table.
fn fault_config(t: &crate::config::FaultTable) -> nameway_face::FaultConfig {
    nameway_face::FaultConfig {
        loss: t.loss.clamp(0.0, 1.0),
        delay: Duration::from_millis(t.delay_ms),
        jitter: Duration::from_millis(t.jitter_ms),
        rate_bps: (t.rate_mbps > 0).then(|| t.rate_mbps.saturating_mul(1_000_000)),
        queue_bytes: (t.queue_kib > 0)
            .then(|| usize::try_from(t.queue_kib.saturating_mul(1024)).unwrap_or(usize::MAX)),
        seed: t.seed,
    }
}

/// The strategy the root gets back when a reloaded file no longer chooses one for it.
const DEFAULT_STRATEGY: &str = "/localhost/nfd/strategy/best-route";

fn is_v6_loopback(a: &SocketAddr) -> bool {
    a.is_ipv6() && a.ip().is_loopback()
}

/// Builds the face-system configuration from ours.
pub fn face_config(config: &Config) -> FaceSystemConfig {
    let mut fc = FaceSystemConfig::default();
    let f = &config.faces;
    fc.unix_path = (!f.unix.as_os_str().is_empty()).then(|| f.unix.clone());
    fc.tcp.clone_from(&f.tcp);
    fc.udp.clone_from(&f.udp);
    fc.websocket.clone_from(&f.websocket);
    fc.websocket_tls = (!f.websocket_cert.as_os_str().is_empty())
        .then(|| (f.websocket_cert.clone(), f.websocket_key.clone()));
    fc.udp_loopback_is_local = f.udp_loopback_is_local;
    fc.tcp_loopback_is_local = f.tcp_loopback_is_local;
    fc.udp_mtu = f.udp_mtu;
    fc.udp_idle_timeout = config.udp_idle_timeout();
    fc.tx_queue = f.tx_queue;
    fc.tx_queue_bytes = usize::try_from(f.tx_queue_bytes.0).unwrap_or(usize::MAX);
    fc.event_queue = f.event_queue;
    fc.fault = f.fault.as_ref().map(fault_config);
    fc
}

impl Driver {
    /// Starts the face system and sets up the forwarder, management and static config.
    ///
    /// # Errors
    /// A listener cannot be opened, or a static face cannot be created.
    pub async fn start(config: &Config) -> anyhow::Result<Self> {
        let security = crate::security::setup(&config.security)?;
        let mut fc = face_config(config);
        fc.security = security.as_ref().map(|s| s.context.clone());
        let threads = config.forwarder.threads();
        let (faces, mut queues) = match FaceSystem::start_sharded(fc.clone(), threads).await {
            Ok(started) => started,
            // A host without IPv6 cannot bind the default [::1] listeners: keep the others (NFD
            // likewise skips IPv6 when the host has none). Other addresses must bind.
            Err(e) if fc.tcp.iter().chain(&fc.udp).any(is_v6_loopback) => {
                tracing::warn!(error = %e, "[::1] listeners failed; retrying without them");
                let mut v4 = fc;
                v4.tcp.retain(|a| !is_v6_loopback(a));
                v4.udp.retain(|a| !is_v6_loopback(a));
                FaceSystem::start_sharded(v4, threads)
                    .await
                    .context("cannot open the listeners")?
            }
            Err(e) => return Err(anyhow::Error::new(e).context("cannot open the listeners")),
        };
        // The forwarder's generator (Nonces, jitter) seeded from the OS (never a fixed seed).
        let seed = config
            .forwarder
            .seed
            .unwrap_or_else(nameway_wire::random::u64);
        let fw_config = FwConfig {
            seed,
            pit_capacity: config.forwarder.pit_capacity,
            cs_capacity: config.cs.capacity,
            dnl_capacity: config.forwarder.dnl_capacity,
            ..FwConfig::default()
        };
        let events = queues.remove(0);
        let (mut fw, mut others) = if threads > 1 {
            let table = crate::config::dispatch_table(&config.forwarder)?;
            if config.forwarder.placement == crate::config::Placement::Traffic {
                faces.set_placement(crate::driver_shards::placer(table.clone(), threads)?);
            }
            let (mut shards, control) = nameway_fw::shard::build(
                fw_config,
                table,
                threads,
                nameway_fw::shard::DEFAULT_RING_CAPACITY,
            )
            .context("cannot build the shards")?;
            let mut zero = shards.remove(0);
            // Every change from here on reaches the other shards.
            zero.forwarder_mut().start_recording();
            (Core::Sharded(Box::new(zero)), Some((control, shards)))
        } else {
            (Core::Single(Box::new(Forwarder::new(fw_config))), None)
        };
        fw.set_cs_admit(config.cs.admit);
        fw.set_cs_serve(config.cs.serve);
        fw.add_face_with_id(INTERNAL_FACE, FaceScope::Local, LinkType::PointToPoint)
            .context("internal face")?;
        fw.set_local_fields(INTERNAL_FACE, true);
        // The null face (255, `null://`): routes to it black-hole a prefix, as in NFD. Local
        // scope as NFD's makeNullFace, so /localhost prefixes can be black-holed too.
        fw.add_face_with_id(NULL_FACE, FaceScope::Local, LinkType::PointToPoint)
            .context("null face")?;
        let mgmt_prefix: Name = "/localhost/nfd".parse().context("management prefix")?;
        fw.add_nexthop(&mgmt_prefix, INTERNAL_FACE, 0)
            .context("management route")?;
        if config.mgmt.localhop_rib {
            let localhop: Name = "/localhop/nfd".parse().context("localhop prefix")?;
            fw.add_nexthop(&localhop, INTERNAL_FACE, 0)
                .context("localhop management route")?;
        }
        let (cs, cs_answers) = if config.cs.is_decoupled() {
            let (handle, answers) = crate::cs_server::start(&config.cs, &mut fw)?;
            (Some(handle), Some(answers))
        } else {
            (None, None)
        };
        let mut mgmt = Management::new(config.mgmt.clone());
        let start = Instant::now();
        mgmt.clock_start = start;
        mgmt.set_cs(cs.as_ref().map(|h| (h.client.clone(), config.cs.clone())));
        mgmt.security = security.map(|s| s.policy);
        let (created_tx, created_rx) = mpsc::channel(64);
        let snapshots = match config.http.listen {
            Some(addr) => {
                let listener = crate::http::bind(addr)
                    .await
                    .with_context(|| format!("cannot open the HTTP listener on {addr}"))?;
                let local = listener.local_addr().unwrap_or(addr);
                tracing::info!(listener = %format!("http://{local}"), "listening (metrics, status page)");
                let (tx, rx) = mpsc::channel(16);
                tokio::spawn(crate::http::serve(listener, tx));
                Some(rx)
            }
            None => None,
        };
        let faces = Arc::new(faces);
        let shards = match others.take() {
            Some((control, shards)) => Some(
                crate::driver_shards::start(
                    control,
                    shards,
                    queues,
                    faces.clone(),
                    mgmt.captures.clone(),
                    start,
                    &config.forwarder,
                )
                .context("cannot start the shards' threads")?,
            ),
            None => None,
        };
        let handoff_wake = shards.as_ref().map(Shards::own_notify);
        tracing::info!(threads, "forwarding threads");
        mgmt.shards = threads;
        mgmt.peers = shards.as_ref().map(Shards::peers);
        let mut driver = Self {
            fw,
            shards,
            handoff_wake,
            mgmt,
            faces,
            events,
            created_tx,
            created_rx,
            start,
            rx_burst: config.forwarder.rx_burst.max(1),
            snapshots,
            config: config.clone(),
            static_routes: Vec::new(),
            static_strategies: Vec::new(),
            reloads: None,
            cs,
            cs_answers,
            routing: None,
            agent: None,
        };
        if let Some(first) = driver.apply_static(config).await.into_iter().next() {
            return Err(first);
        }
        let (fw, mgmt) = (&mut driver.fw, &mut driver.mgmt);
        driver.routing =
            crate::routing::Routing::start(config, fw, mgmt, &driver.faces, driver.start).await?;
        driver.agent = crate::agent::Agent::start(config, fw, mgmt, &driver.faces)?;
        driver.broadcast();
        Ok(driver)
    }

    /// The face system (listener addresses, counters).
    pub fn faces(&self) -> &FaceSystem {
        &self.faces
    }

    /// Creates the `[[face]]`s (reusing one that exists), installs the `[[route]]`s and
    /// `[[strategy]]`s, and takes away the routes and strategy choices that the previous file
    /// installed and this one no longer has (routes added by management are never touched).
    /// Returns every error; what could be applied is applied.
    async fn apply_static(&mut self, config: &Config) -> Vec<anyhow::Error> {
        let mut errors = Vec::new();
        let mut routes = Vec::new();
        // Routes to the null face need no [[face]].
        for r in config
            .static_routes
            .iter()
            .filter(|r| crate::config::is_null_uri(&r.face))
        {
            match r.prefix.parse::<Name>() {
                Ok(prefix) => {
                    let route = Route {
                        face: NULL_FACE.0,
                        origin: nameway_wire::mgmt::route_origin::STATIC,
                        cost: r.cost,
                        flags: crate::rib::CHILD_INHERIT,
                        expires: None,
                    };
                    self.mgmt.add_route(&mut self.fw, &prefix, route);
                    routes.push((prefix, NULL_FACE.0));
                }
                Err(e) => errors
                    .push(anyhow::Error::new(e).context(format!("route prefix {:?}", r.prefix))),
            }
        }
        for f in &config.static_faces {
            let created =
                match FaceUri::canonize(&f.uri).await {
                    Ok(uri) => match self
                        .faces
                        .create_with(&uri, Persistency::Permanent, static_face_options(f))
                        .await
                    {
                        Ok(id) | Err(nameway_face::FaceError::Exists(id)) => Ok(id),
                        Err(e) => Err(anyhow::Error::new(e)
                            .context(format!("cannot create face {:?}", f.uri))),
                    },
                    Err(e) => Err(anyhow::Error::new(e).context(format!("face {:?}", f.uri))),
                };
            let id = match created {
                Ok(id) => id,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            // The Up event may still be queued: register the face with the forwarder now.
            if let Some(info) = self.faces.info(id) {
                self.face_up(&info);
            }
            for r in config.static_routes.iter().filter(|r| r.face == f.uri) {
                let prefix: Name = match r.prefix.parse() {
                    Ok(p) => p,
                    Err(e) => {
                        errors.push(
                            anyhow::Error::new(e).context(format!("route prefix {:?}", r.prefix)),
                        );
                        continue;
                    }
                };
                let route = Route {
                    face: id.0,
                    origin: nameway_wire::mgmt::route_origin::STATIC,
                    cost: r.cost,
                    flags: crate::rib::CHILD_INHERIT,
                    expires: None,
                };
                self.mgmt.add_route(&mut self.fw, &prefix, route);
                routes.push((prefix, id.0));
            }
        }
        for (prefix, face) in std::mem::replace(&mut self.static_routes, routes) {
            if !self.static_routes.contains(&(prefix.clone(), face)) {
                let origin = nameway_wire::mgmt::route_origin::STATIC;
                self.mgmt.remove_route(&mut self.fw, &prefix, face, origin);
            }
        }
        let mut strategies = Vec::new();
        for s in &config.static_strategies {
            let set = s
                .prefix
                .parse::<Name>()
                .with_context(|| format!("strategy prefix {:?}", s.prefix))
                .and_then(|prefix| {
                    let strategy: Name = s
                        .strategy
                        .parse()
                        .with_context(|| format!("strategy {:?}", s.strategy))?;
                    self.fw
                        .set_strategy(&prefix, &strategy)
                        .with_context(|| format!("strategy {}", s.strategy))?;
                    Ok(prefix)
                });
            match set {
                Ok(prefix) => strategies.push(prefix),
                Err(e) => errors.push(e),
            }
        }
        for prefix in std::mem::replace(&mut self.static_strategies, strategies) {
            if !self.static_strategies.contains(&prefix) {
                let reset = if prefix.is_empty() {
                    // The root always has a strategy: back to the default.
                    DEFAULT_STRATEGY
                        .parse::<Name>()
                        .map_err(|e| e.to_string())
                        .and_then(|s| self.fw.set_strategy(&prefix, &s).map_err(|e| e.to_string()))
                        .map(|_| ())
                } else {
                    self.fw
                        .unset_strategy(&prefix)
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                };
                if let Err(e) = reset {
                    errors.push(anyhow::anyhow!(
                        "cannot unset the strategy of {prefix}: {e}"
                    ));
                }
            }
        }
        errors
    }

    /// Applies a configuration read again on SIGHUP: the content store settings, `[mgmt]`, and
    /// the static faces, routes and strategy choices. Listeners, `[forwarder]` and `[http]` keep
    /// their values until a restart, and a changed one is logged as such.
    pub async fn reload(&mut self, new: Config) {
        let restart = [
            (
                "faces",
                format!("{:?}", self.config.faces),
                format!("{:?}", new.faces),
            ),
            (
                "forwarder",
                format!("{:?}", self.config.forwarder),
                format!("{:?}", new.forwarder),
            ),
            (
                "http",
                format!("{:?}", self.config.http),
                format!("{:?}", new.http),
            ),
        ];
        for (section, old, new) in restart {
            if old != new {
                tracing::warn!(
                    section,
                    "configuration reloaded: [{section}] changed and takes effect after a restart"
                );
            }
        }
        // Every shard together (each holds its share).
        self.fw.set_cs_capacity(new.cs.capacity);
        self.fw.set_cs_admit(new.cs.admit);
        self.fw.set_cs_serve(new.cs.serve);
        if let Some(cs) = &self.cs {
            cs.client.reconfigure(&new.cs);
        }
        self.mgmt.set_config(new.mgmt.clone());
        let errors = self.apply_static(&new).await;
        for e in &errors {
            tracing::error!("configuration reload: {e:#}");
        }
        tracing::info!(
            errors = errors.len(),
            static_routes = self.static_routes.len(),
            static_strategies = self.static_strategies.len(),
            "configuration reloaded"
        );
        // Keep what needs a restart as it runs, so the next reload compares with it.
        self.config = Config {
            faces: self.config.faces.clone(),
            forwarder: self.config.forwarder.clone(),
            http: self.config.http.clone(),
            ..new
        };
    }

    /// A channel on which [`Driver::run`] takes configurations to [`Driver::reload`].
    pub fn reloader(&mut self) -> mpsc::Sender<Config> {
        let (tx, rx) = mpsc::channel(4);
        self.reloads = Some(rx);
        tx
    }

    fn now(&self) -> Time {
        self.time_at(Instant::now())
    }

    /// The forwarder's time at `at`.
    fn time_at(&self, at: Instant) -> Time {
        Time::from_nanos(at.saturating_duration_since(self.start).as_nanos() as u64)
    }

    fn instant_of(&self, t: Time) -> Instant {
        self.start + Duration::from_nanos(t.as_nanos())
    }

    fn face_up(&mut self, info: &nameway_face::FaceInfo) {
        let id = FaceId(info.id.0);
        if self.fw.face(id).is_some() {
            return;
        }
        let scope = mgmt::fw_scope(info.scope);
        let link = mgmt::fw_link_type(info.link_type);
        if let Err(e) = self.fw.add_face_with_id(id, scope, link) {
            tracing::warn!(face = id.0, error = %e, "face not added to the forwarder");
        }
        let f = &self.config.faces;
        if f.interest_rate_limit > 0 {
            let limit = nameway_fw::RateLimit {
                per_second: f.interest_rate_limit,
                burst: if f.interest_burst == 0 {
                    f.interest_rate_limit
                } else {
                    f.interest_burst
                },
            };
            let now = self.now();
            self.fw.set_interest_rate_limit(id, now, Some(limit));
        }
        self.mgmt.state_changed(&mut self.fw);
        tracing::debug!(face = id.0, remote = %info.remote, "face up");
    }

    fn on_event(&mut self, event: FaceEvent, now: Time) {
        match event {
            FaceEvent::Packet { face, wire } => {
                if !self.mgmt.captures.is_empty() {
                    let dir = crate::capture::Direction::In;
                    self.mgmt.captures.record(&self.faces, face.0, dir, &wire);
                }
                self.fw.packet(now, FaceId(face.0), wire);
            }
            FaceEvent::Up { info, .. } => {
                if let Some(a) = self.agent.as_mut() {
                    a.face_changed(info.id.0);
                }
                self.face_up(&info);
            }
            FaceEvent::Down { face, reason } => {
                tracing::debug!(face = face.0, ?reason, "face down");
                // A face read by another shard: removed once that shard has forwarded the
                // packets it sent before it went down (a producer that answers and exits).
                if let Some(s) = &self.shards {
                    let home = nameway_face::home_shard(face, s.count());
                    if home != 0 {
                        s.fence(face.0, home);
                        return;
                    }
                }
                self.face_down(face.0);
            }
            _ => {}
        }
    }

    /// Removes a face that went down from the forwarder (every shard) and management.
    fn face_down(&mut self, face: u64) {
        if let Some(a) = self.agent.as_mut() {
            a.face_changed(face);
        }
        if let Some(c) = self.fw.face_counters(FaceId(face)) {
            self.mgmt.add_closed_bytes(c.n_in_bytes, c.n_out_bytes);
        }
        // The face's last packets this shard handed off go out before its removal does (a
        // shard forwards what was queued toward it before it removes the face).
        if let (Core::Sharded(zero), Some(s)) = (&mut self.fw, &self.shards) {
            zero.flush();
            s.wake(zero.take_woken());
        }
        self.fw.remove_face(FaceId(face));
        self.mgmt.face_down(&mut self.fw, face);
    }

    /// Sends the forwarder's output; management replies re-enter the forwarder.
    fn flush(&mut self) {
        for _ in 0..1024 {
            let Some(t) = self.fw.poll_transmit() else {
                return;
            };
            if t.face == INTERNAL_FACE {
                let now = Instant::now();
                if let Some(s) = &self.shards {
                    s.refresh(&mut self.fw);
                }
                let routing = self.routing.as_ref();
                let outcome = self
                    .mgmt
                    .on_packet(&mut self.fw, &self.faces, routing, now, t.wire);
                // The command's changes reach the other shards before its reply leaves.
                self.broadcast();
                match outcome {
                    Outcome::Reply(data) => self.inject_from_internal(data),
                    Outcome::Nothing => {}
                    Outcome::CreateFace {
                        interest,
                        uri,
                        persistency,
                        params,
                    } => {
                        self.spawn_create(*interest, uri, persistency, *params);
                    }
                }
            } else if t.face == crate::agent::HELLO_FACE {
                let now = self.now();
                if let Some(a) = self.agent.as_mut() {
                    a.on_hello(&mut self.fw, &self.faces, now, t.wire);
                }
            } else if crate::routing::Routing::owns(t.face) {
                if let Some(r) = self.routing.as_mut() {
                    r.on_transmit(&mut self.fw, t.face, t.wire);
                }
            } else {
                if !self.mgmt.captures.is_empty() {
                    let dir = crate::capture::Direction::Out;
                    self.mgmt
                        .captures
                        .record(&self.faces, t.face.0, dir, &t.wire);
                }
                self.send(t);
            }
        }
    }

    /// Queues one packet of the forwarder for its face ([`queue_transmit`]); a Nack
    /// Congestion for an Interest that could not be queued goes back into the forwarder.
    fn send(&mut self, t: nameway_fw::Transmit) {
        let face = t.face;
        if let Some(nack) = queue_transmit(&self.faces, t) {
            let now = self.now();
            self.fw.packet(now, face, nack);
        }
    }

    /// Sends the changes shard 0 recorded to the other shards (nothing with one thread).
    fn broadcast(&mut self) {
        if let Some(s) = self.shards.as_mut() {
            s.broadcast(&mut self.fw);
        }
    }

    /// Shard 0's part of a sharded turn: publishes its hand-offs (waking their shards once)
    /// and forwards what the others handed it.
    fn shard_turn(&mut self) {
        let now = self.now();
        let mut fenced = Vec::new();
        if let (Core::Sharded(s), Some(shards)) = (&mut self.fw, &mut self.shards) {
            s.flush();
            shards.wake(s.take_woken());
            shards.skew_log.check(s);
            // Taken first: the hand-offs below hold the last packets of these faces.
            fenced = shards.take_fenced();
            while s.handle_handoffs(now, 4096) > 0 && !fenced.is_empty() {}
            // Interests of a draining split key may have been handed on.
            s.flush();
            shards.wake(s.take_woken());
        }
        for face in fenced {
            self.face_down(face);
        }
    }

    /// Feeds a management reply back into the forwarder. It is cached like any Data, as NFD
    /// caches its datasets and responses (an Interest for `/localhost` with CanBePrefix is
    /// answered from the store); management takes its datasets out of the store whenever its
    /// state changes ([`Management::state_changed`]), so no command is followed by an older
    /// dataset.
    fn inject_from_internal(&mut self, data: Bytes) {
        let now = self.now();
        self.fw.packet(now, INTERNAL_FACE, data);
    }

    fn spawn_create(
        &self,
        interest: nameway_wire::Interest,
        uri: String,
        persistency: Persistency,
        params: nameway_wire::mgmt::ControlParameters,
    ) {
        let faces = self.faces.clone();
        let tx = self.created_tx.clone();
        let options = nameway_face::FaceOptions {
            secure: params
                .secure_mode
                .as_deref()
                .and_then(crate::security::parse_mode),
            ..nameway_face::FaceOptions::default()
        };
        tokio::spawn(async move {
            let (result, existing) = match FaceUri::canonize(&uri).await {
                Ok(u) => match faces.create_with(&u, persistency, options).await {
                    Ok(id) => (
                        faces.info(id).ok_or(nameway_face::FaceError::ShuttingDown),
                        None,
                    ),
                    // A 409 names the existing face, as NFD's does.
                    Err(nameway_face::FaceError::Exists(id)) => {
                        (Err(nameway_face::FaceError::Exists(id)), faces.info(id))
                    }
                    Err(e) => (Err(e), None),
                },
                Err(e) => (Err(nameway_face::FaceError::Uri(e)), None),
            };
            let _ = tx
                .send(Created {
                    interest,
                    params,
                    result,
                    existing,
                })
                .await;
        });
    }

    /// Hands the forwarder's requests to the content-store server and applies its answers
    /// (every turn, so a flood cannot starve them).
    fn pump_cs(&mut self) {
        let Some(cs) = &self.cs else { return };
        cs.client.forward(&mut self.fw);
        if let Some(rx) = &mut self.cs_answers {
            let now = Time::from_nanos(self.start.elapsed().as_nanos() as u64);
            while let Ok(answer) = rx.try_recv() {
                crate::cs_server::apply(&mut self.fw, now, answer);
            }
        }
        cs.client.forward(&mut self.fw);
    }

    /// Answers the HTTP listener with a snapshot of the counters (taken between bursts).
    fn answer_snapshot(&mut self, request: crate::http::SnapshotRequest) {
        if let Some(s) = &self.shards {
            s.refresh(&mut self.fw);
        }
        let uptime = self.start.elapsed().as_secs_f64();
        let mut snapshot = self.mgmt.snapshot(&self.fw, &self.faces, uptime);
        snapshot.routing = self.routing.as_ref().map(|r| r.stats(&self.fw, &self.mgmt));
        if let (Core::Sharded(s), Some(shards)) = (&self.fw, &self.shards) {
            snapshot.shards = shards.stats(s);
        }
        let f = &self.config.forwarder;
        snapshot.coalesce = (f.coalesce != crate::coalesce::Coalesce::Off)
            .then(|| crate::coalesce::COUNTERS.stats(f.coalesce, f.coalesce_wait()));
        let _ = request.send(Arc::new(snapshot));
    }

    /// Runs until `shutdown` completes, then closes every face.
    ///
    /// # Errors
    /// None today; kept for the shutdown path.
    pub async fn run(
        mut self,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> anyhow::Result<()> {
        tokio::pin!(shutdown);
        // One timer for the loop's life ([`next_timer`]), instead of a new one registered and
        // cancelled every turn.
        let timer = tokio::time::sleep_until((Instant::now() + IDLE_WAIT).into());
        tokio::pin!(timer);
        // Likewise one registration for the other shards' wake-ups, renewed when it fires.
        let handoff_wake = self.handoff_wake.clone();
        let mut woken = handoff_wake.as_ref().map(|n| Box::pin(n.notified()));
        loop {
            let fw_deadline = self.fw.poll_timeout().map(|t| self.instant_of(t));
            let routing_deadline = self.routing.as_ref().and_then(|r| r.next_deadline());
            let agent_deadline = self.agent.as_ref().map(|a| a.next_deadline(&self.mgmt));
            // Changes that did not fit in a control ring go out as soon as there is room.
            let pending_deadline = self
                .shards
                .as_ref()
                .filter(|s| s.has_pending())
                .map(|_| Instant::now() + crate::driver_shards::PENDING_RETRY);
            // No room toward another shard for a burst: the faces wait, and the loop looks
            // again soon (the other shards drain their rings meanwhile).
            let read = self.fw.can_read(self.rx_burst);
            let retry = (!read).then(|| Instant::now() + crate::driver_shards::HANDOFF_RETRY);
            let deadline = [
                fw_deadline,
                self.mgmt.next_expiry(),
                routing_deadline,
                agent_deadline,
                pending_deadline,
                retry,
            ]
            .into_iter()
            .flatten()
            .min();
            next_timer(timer.as_mut(), deadline);
            tokio::select! {
                biased;
                () = &mut shutdown => break,
                ev = self.events.recv(), if read => {
                    let Some(ev) = ev else { break };
                    // One reading of the clock for the burst, not one per packet.
                    let now = self.now();
                    self.on_event(ev, now);
                    let mut n = 1;
                    while n < self.rx_burst {
                        match self.events.try_recv() {
                            Ok(ev) => self.on_event(ev, now),
                            Err(_) => break,
                        }
                        n += 1;
                    }
                    crate::coalesce::note_packets(n);
                }
                Some(c) = self.created_rx.recv() => {
                    if let Ok(info) = &c.result {
                        self.face_up(info);
                        // faces/create with a rate limit: it replaces the configured default.
                        let p = &c.params;
                        if let Some(limit) = p.interest_rate_limit.and_then(|r| mgmt::rate_limit(r, p.interest_burst)) {
                            let now = self.now();
                            self.fw.set_interest_rate_limit(FaceId(info.id.0), now, limit);
                        }
                    }
                    if let Outcome::Reply(data) = self.mgmt.face_created(&c.interest, &c.params, c.result, c.existing.as_ref()) {
                        self.inject_from_internal(data);
                    }
                }
                Some(request) = next_request(&mut self.snapshots) => self.answer_snapshot(request),
                () = next_wake(&mut woken) => {
                    if let (Some(w), Some(n)) = (woken.as_mut(), handoff_wake.as_ref()) {
                        w.set(n.notified());
                    }
                }
                Some(config) = next_request(&mut self.reloads) => self.reload(config).await,
                Some(answer) = next_unbounded(&mut self.cs_answers) => {
                    let now = self.now();
                    crate::cs_server::apply(&mut self.fw, now, answer);
                }
                Some(created) = next_routing_face(&mut self.routing) => {
                    if let Ok(info) = &created.result {
                        self.face_up(info);
                    }
                    if let Some(r) = self.routing.as_mut() {
                        r.on_face_created(&mut self.fw, &mut self.mgmt, created);
                    }
                }
                Some(update) = next_agent_update(&mut self.agent) => {
                    if let Some(a) = self.agent.as_mut() {
                        a.apply(&mut self.fw, &mut self.mgmt, update);
                    }
                }
                () = &mut timer => {}
            }
            let wall = Instant::now();
            let now = self.time_at(wall);
            if fw_deadline.is_some_and(|d| d <= wall) {
                self.fw.handle_timeout(now);
            }
            if self.mgmt.next_expiry().is_some_and(|d| d <= wall) {
                self.mgmt.expire_routes(&mut self.fw, wall);
            }
            self.pump_cs();
            if self.shards.is_some() {
                self.broadcast();
                self.shard_turn();
            }
            self.flush();
            if let Some(r) = self.routing.as_mut() {
                r.poll(&mut self.fw, &mut self.mgmt);
                self.flush();
            }
            if let Some(a) = self.agent.as_mut() {
                a.poll(&mut self.fw, &self.mgmt, &self.faces, now);
                self.flush();
            }
            if self.shards.is_some() {
                self.broadcast();
                self.shard_turn();
                self.flush();
            }
            // Served every turn, so a flood that keeps the event branch ready cannot starve them.
            while let Some(request) = self.snapshots.as_mut().and_then(|rx| rx.try_recv().ok()) {
                self.answer_snapshot(request);
            }
        }
        tracing::info!("shutting down");
        if let Some(r) = self.routing.as_mut() {
            r.shutdown();
        }
        if let Some(cs) = self.cs.take() {
            // Management holds a sender too: the worker stops when the last one goes.
            self.mgmt.set_cs(None);
            // Commits what is queued for the disk tier.
            cs.stop();
        }
        // Faces first: the shards' threads drive the I/O tasks of their faces, which flush
        // and close while those threads still run.
        self.faces.shutdown().await;
        if let Some(s) = self.shards.as_mut() {
            s.stop();
        }
        Ok(())
    }
}

/// Queues one packet of a forwarder (any shard's) for its face. Toward an application past
/// its queue's bound, the face that sent the Interest is slowed down (backpressure); an
/// Interest that cannot be queued at all gets a Nack Congestion, returned to be fed to the
/// forwarder from that face (as if the upstream had sent it), so the consumer retries at once
/// instead of waiting out the lifetime.
pub(crate) fn queue_transmit(faces: &FaceSystem, t: nameway_fw::Transmit) -> Option<Bytes> {
    let face = nameway_face::FaceId(t.face.0);
    let interest = t.kind == nameway_fw::PacketKind::Interest;
    match faces.try_send(face, t.wire) {
        Ok(nameway_face::Queued::Within) => None,
        Ok(nameway_face::Queued::Congested) => {
            if interest && t.cause != FaceId::NONE {
                faces.slow_down(nameway_face::FaceId(t.cause.0), face);
            }
            None
        }
        Err((nameway_face::SendError::QueueFull, wire)) => {
            interest.then_some(wire).and_then(congestion_nack)
        }
        Err((e, _)) => {
            tracing::trace!(face = t.face.0, error = %e, "send dropped");
            None
        }
    }
}

/// A Nack Congestion for `interest` (an Interest, bare or in an LpPacket), to feed the
/// forwarder as if the face that could not queue it had answered so.
fn congestion_nack(interest: Bytes) -> Option<Bytes> {
    let fragment = match nameway_wire::Packet::classify(interest) {
        Ok(nameway_wire::Packet::Interest(w)) => w,
        Ok(nameway_wire::Packet::Lp(lp)) => lp.fragment?,
        _ => return None,
    };
    let mut lp = nameway_wire::LpPacket::wrap(fragment);
    lp.nack = Some(nameway_wire::NackReason::Congestion);
    Some(lp.encode())
}

/// How long the loop sleeps when nothing has a deadline.
pub(crate) const IDLE_WAIT: Duration = Duration::from_secs(3600);

/// Sets the loop's timer for `deadline` (the earliest of its deadlines, if any). The timer is
/// moved only when the deadline comes before it or it has fired: a later deadline leaves it
/// where it is, the loop wakes once early and sets it again then. Under load the earliest
/// deadline (the oldest pending Interest's expiry) moves a little later with nearly every
/// packet; moving the timer each time took the timer wheel's lock and re-linked its entry
/// once per turn, while this moves it about once per Interest lifetime.
pub(crate) fn next_timer(timer: std::pin::Pin<&mut tokio::time::Sleep>, deadline: Option<Instant>) {
    let at = timer.deadline();
    let wanted = match deadline {
        Some(d) => tokio::time::Instant::from_std(d),
        // Nothing due: a timer that has not fired may stay (waking once early costs a turn).
        None if !timer.is_elapsed() => return,
        None => tokio::time::Instant::now() + IDLE_WAIT,
    };
    if wanted < at || timer.is_elapsed() {
        timer.reset(wanted);
    }
}

/// Wakes when another shard handed packets, or never with one thread.
async fn next_wake(woken: &mut Option<std::pin::Pin<Box<tokio::sync::futures::Notified<'_>>>>) {
    match woken {
        Some(w) => w.as_mut().await,
        None => std::future::pending().await,
    }
}

/// The next snapshot request, or never when the HTTP listener is off.
async fn next_request<T>(rx: &mut Option<mpsc::Receiver<T>>) -> Option<T> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// The next face the routing asked for, or never when routing is off.
async fn next_routing_face(
    routing: &mut Option<crate::routing::Routing>,
) -> Option<crate::routing::FaceCreated> {
    match routing {
        Some(r) => r.face_created().await,
        None => std::future::pending().await,
    }
}

/// The next FIB from the controller, or never when the agent is off.
async fn next_agent_update(
    agent: &mut Option<crate::agent::Agent>,
) -> Option<crate::agent::Update> {
    match agent {
        Some(a) => a.next_update().await,
        None => std::future::pending().await,
    }
}

/// The next answer of an unbounded channel, or never when there is none.
async fn next_unbounded<T>(rx: &mut Option<mpsc::UnboundedReceiver<T>>) -> Option<T> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_static_face_gets_its_own_faults() {
        let config = Config::from_toml(
            "[faces.fault]\ndelay_ms = 1\n[[face]]\nuri = \"udp4://10.0.0.2:6363\"\n[face.fault]\ndelay_ms = 5\njitter_ms = 2\nloss = 1.5\nrate_mbps = 100\nqueue_kib = 64\nseed = 7\n[[face]]\nuri = \"udp4://10.0.0.6:6363\"\n",
        )
        .unwrap();
        let fault = static_face_options(&config.static_faces[0]).fault.unwrap();
        assert_eq!(
            fault,
            nameway_face::FaultConfig {
                delay: Duration::from_millis(5),
                jitter: Duration::from_millis(2),
                loss: 1.0,
                rate_bps: Some(100_000_000),
                queue_bytes: Some(64 * 1024),
                seed: 7,
            }
        );
        // Without a table of its own a face keeps the system-wide setting (applied by the face
        // system to non-local faces).
        assert_eq!(static_face_options(&config.static_faces[1]).fault, None);
        assert_eq!(
            face_config(&config).fault.map(|f| f.delay),
            Some(Duration::from_millis(1))
        );
    }
}
