//! The agent of the controller in `namewayd` (docs/controller.md, "The agent").
//!
//! [`Agent`] is owned by the driver, like `routing`. A task of its own (`link.rs`) holds the
//! connection to `namewayctl serve`; the driver side does what must happen between packet
//! bursts:
//!
//! - it sends fast hellos to every secure-link neighbour and answers theirs ([`hello`]): a
//!   neighbour is reported up only while it answers;
//! - it reports the forwarder's [`Report`] (secure-link neighbours with their face ids, the
//!   faces they use, applications' registrations from the RIB) to the task **only after a
//!   change**: a neighbour's liveness, a face up or down, or the RIB's generation moving;
//!   nothing is scanned while nothing changed, and two reports are at least
//!   `report_interval_ms` apart;
//! - it applies each verified FIB the task hands back ([`Agent::apply`]) in one go, as routes
//!   of origin [`CTL_ORIGIN`] (shown as `ctl` by `nameway route list`), and tells the task the
//!   version, which the task acknowledges and writes to `state_dir`;
//! - at start it installs the FIB kept in `state_dir`, so a restart without the controller
//!   still forwards.

pub mod config;
pub mod cs;
pub mod declared;
mod fetcher;
pub mod group_keys;
pub mod hello;
mod link;
pub mod nfd;
pub mod stats;
pub mod store;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use bytes::Bytes;
use nameway_ctl::channel::{NeighbourReport, RegistrationReport, Report};
use nameway_ctl::Fib;
use nameway_face::FaceSystem;
use nameway_fw::{FaceId, FaceScope, Forwarder, LinkType, Time};
use nameway_wire::mgmt::route_origin;
use nameway_wire::Name;
use tokio::sync::mpsc;

use crate::config::Config;
use crate::mgmt::Management;
use crate::rib::Route;

pub use hello::HELLO_FACE;
pub use link::Update;
pub use stats::AgentCounters;

/// Route origin of the routes the controller installs ("ctl").
pub const CTL_ORIGIN: u64 = nameway_wire::mgmt::route_origin::CTL;

/// What an agent (namewayd's or the NFD agent) starts from: the controller's pinned key,
/// its router name, its state directory and its router key.
pub(crate) struct Identity {
    pub(crate) pinned: [u8; 32],
    pub(crate) router: Name,
    pub(crate) state: store::StateDir,
    pub(crate) key: nameway_transport::SigningKey,
}

impl Identity {
    /// From `[controller]`; `state_label` names the state directory's setting in errors.
    pub(crate) fn open(c: &config::ControllerConfig, state_label: &str) -> anyhow::Result<Self> {
        let pinned = nameway_ctl::channel::parse_pin(&c.key)
            .map_err(|e| anyhow::anyhow!("controller.key: {e}"))?;
        let router: Name = c
            .name
            .parse()
            .map_err(|e| anyhow::anyhow!("controller.name: {e}"))?;
        let state = store::StateDir::open(&c.state_dir).context(state_label.to_owned())?;
        let key = state.router_key().context("the agent's router key")?;
        Ok(Self {
            pinned,
            router,
            state,
            key,
        })
    }
}

/// Hello rounds after a face event during which the secure links are listed again.
const REFRESH_ROUNDS: u32 = 4;

/// See the module documentation.
pub struct Agent {
    to_task: mpsc::UnboundedSender<link::ToTask>,
    updates: mpsc::UnboundedReceiver<Update>,
    last_report: Option<Report>,
    next_report: Instant,
    interval: Duration,
    link_cost: u64,
    /// The group keys granted by the controller.
    keyring: group_keys::Keyring,
    /// Domain trust on links: the secure-link context, the peers trusted because the
    /// controller listed them, and those to untrust (their sessions ended) at the next poll.
    security: Option<Arc<nameway_face::secure::SecurityContext>>,
    ctl_trusted: std::collections::BTreeSet<[u8; 32]>,
    to_untrust: Vec<[u8; 32]>,
    hellos: hello::Hellos,
    /// Secure-link faces probed, with the neighbour's link key once known.
    peers: BTreeMap<u64, Option<[u8; 32]>>,
    /// Faces that sent a hello but are not secure links (not probed; forgotten when down).
    plain: BTreeSet<u64>,
    /// Faces a hello came from that were not probed (looked at by the next listing).
    unknown: BTreeSet<u64>,
    /// The faces changed: list the secure links again at the next poll.
    refresh: bool,
    /// Hello rounds during which the secure links are listed again after a face event (a
    /// face's handshake completes after its `Up` event, and the face system says nothing).
    refresh_rounds: u32,
    /// Declared links (`[controller] neighbours`), and those whose face exists: link key →
    /// face (listed again with the secure links).
    declared: Vec<declared::DeclaredNeighbour>,
    declared_faces: BTreeMap<[u8; 32], u64>,
    /// Neighbours changed since the last report.
    neighbours_dirty: bool,
    /// The RIB generation the last report's registrations were read at.
    reported_rib: Option<u64>,
    registrations: Vec<RegistrationReport>,
    /// Counters.
    pub counters: Arc<AgentCounters>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent").finish_non_exhaustive()
    }
}

impl Agent {
    /// Starts the agent when `[controller] uri` is set: the state directory, the router key,
    /// the FIB kept from the last run installed, the connection task.
    ///
    /// # Errors
    /// The state directory or the router key cannot be used.
    pub fn start(
        config: &Config,
        fw: &mut Forwarder,
        mgmt: &mut Management,
        faces: &FaceSystem,
    ) -> anyhow::Result<Option<Self>> {
        let c = &config.controller;
        if !c.is_on() {
            return Ok(None);
        }
        let Identity {
            pinned,
            router,
            state,
            key,
        } = Identity::open(c, "controller.state_dir")?;
        // Without a secure-link identity, a key of its own for declared links.
        let link_key = match faces.security() {
            Some(s) => s.identity().public_key().0,
            None => declared::own_link_key(&c.state_dir)?,
        };
        let kem = match faces.security() {
            Some(s) => Some(
                nameway_ctl::sealed::KemKeyPair::from_private(&s.identity().secret_copy())
                    .map_err(|e| anyhow::anyhow!("the secure-link identity as an HPKE key: {e}"))?,
            ),
            None => None,
        };
        if faces.security().is_none() {
            tracing::info!(
                link_key = %hex::encode(link_key),
                "[controller] without a [security] identity: only declared neighbours are reported (link key in controller.state_dir/link.key)"
            );
        }
        let applied = match state.load_fib() {
            Ok(Some((version, fib))) => {
                let (added, skipped) = install(fw, mgmt, &fib);
                tracing::info!(
                    version,
                    routes = added,
                    skipped,
                    "controller FIB restored from state_dir"
                );
                Some((version, Arc::new(fib)))
            }
            Ok(None) => None,
            Err(e) => {
                tracing::error!(
                    "the FIB kept in controller.state_dir is unusable, starting without it: {e}"
                );
                None
            }
        };
        fw.add_face_with_id(HELLO_FACE, FaceScope::Local, LinkType::PointToPoint)
            .context("the hello face")?;
        fw.set_local_fields(HELLO_FACE, true);
        let hello_prefix: Name = hello::HELLO_PREFIX.parse().context("hello prefix")?;
        fw.add_nexthop(&hello_prefix, HELLO_FACE, 0)
            .context("the hello route")?;
        let timers = hello::HelloTimers {
            interval: Duration::from_millis(c.hello_interval_ms),
            dead_intervals: c.hello_dead_intervals,
            recover: c.hello_recover,
        };
        let counters = Arc::new(AgentCounters::default());
        if let Some(ctx) = faces.security() {
            let _ = counters.security.set(ctx.clone());
        }
        match cs::load(&state) {
            Ok(Some((version, doc))) => match cs::apply(fw, &doc) {
                Ok(()) => {
                    cs::apply_tiers(mgmt, &doc, &counters);
                    counters.last_version[1].store(version, Ordering::Relaxed);
                    tracing::info!(version, "cache policy restored from state_dir");
                }
                Err(e) => tracing::error!("the cache policy kept in controller.state_dir: {e}"),
            },
            Ok(None) => {}
            Err(e) => tracing::error!(
                "the cache policy kept in controller.state_dir is unusable, starting without it: {e}"
            ),
        }
        if let Some((version, _)) = &applied {
            counters.last_version[0].store(*version, Ordering::Relaxed);
        }
        mgmt.agent = Some(counters.clone());
        let (to_task, from_driver) = mpsc::unbounded_channel();
        let (to_driver, updates) = mpsc::unbounded_channel();
        let setup = link::LinkSetup {
            address: c.address().map_err(|e| anyhow::anyhow!(e))?,
            tls: c.tls().map_err(|e| anyhow::anyhow!(e))?,
            pinned,
            router,
            token: c.token.clone(),
            link_key: Some(link_key),
            kem,
            key,
            state,
            counters: counters.clone(),
            applied,
        };
        link::spawn(setup, from_driver, to_driver);
        Ok(Some(Self {
            to_task,
            updates,
            last_report: None,
            next_report: Instant::now(),
            interval: Duration::from_millis(c.report_interval_ms),
            link_cost: c.link_cost,
            keyring: group_keys::Keyring::default(),
            security: faces.security().cloned(),
            ctl_trusted: std::collections::BTreeSet::new(),
            to_untrust: Vec::new(),
            hellos: hello::Hellos::new(timers, nameway_wire::random::u64(), Instant::now()),
            peers: BTreeMap::new(),
            plain: BTreeSet::new(),
            unknown: BTreeSet::new(),
            refresh: true,
            refresh_rounds: REFRESH_ROUNDS,
            declared: c.neighbours.clone(),
            declared_faces: BTreeMap::new(),
            neighbours_dirty: true,
            reported_rib: None,
            registrations: Vec::new(),
            counters,
        }))
    }

    /// The next verified FIB from the controller.
    pub async fn next_update(&mut self) -> Option<Update> {
        self.updates.recv().await
    }

    /// Applies `update` (all its routes, or the whole cache policy, in this call, between
    /// bursts) and tells the task.
    pub fn apply(&mut self, fw: &mut Forwarder, mgmt: &mut Management, update: Update) {
        match update {
            Update::Fib { version, fib } => {
                let (routes, skipped) = install(fw, mgmt, &fib);
                self.counters.applied("fib", version);
                tracing::debug!(version, routes, skipped, "controller FIB applied");
                let _ = self.to_task.send(link::ToTask::Applied(version, fib));
            }
            Update::Cs { version, doc } => match cs::apply(fw, &doc) {
                Ok(()) => {
                    cs::apply_tiers(mgmt, &doc, &self.counters);
                    self.counters.applied("cs", version);
                    tracing::info!(version, "controller cache policy applied");
                    let _ = self.to_task.send(link::ToTask::CsApplied(version, doc));
                }
                Err(e) => {
                    self.counters.refused_object(stats::ObjectRefusal::Document);
                    tracing::warn!(version, "cache policy refused: {e}");
                }
            },
            Update::Keys { version, keys } => self.install_keys(mgmt, version, keys),
            Update::Trust { version, keys } => self.install_trust(version, &keys),
        }
    }

    /// Holds the group keys of a `security` object and sets (or unsets) their prefixes'
    /// levels in the forwarder's security policy.
    fn install_keys(&mut self, mgmt: &Management, version: u64, keys: Vec<group_keys::GroupKey>) {
        let change = self.keyring.replace(keys);
        // The faces get the keys before the policy gets the prefixes, so that no Data of a
        // new prefix is sealed with a session key and refused by a member.
        if let Some(ctx) = &self.security {
            for e in ctx.group_keys().install(self.keyring.grants()) {
                tracing::warn!("{e}");
            }
        }
        let Some(policy) = mgmt.security.as_ref() else {
            tracing::warn!("group keys received but no [security] policy to install them in");
            return;
        };
        for (prefix, level) in &change.set {
            if let Err(e) = policy.set(prefix, *level) {
                tracing::warn!(%prefix, "group key prefix not installed: {e}");
            }
        }
        for prefix in &change.unset {
            policy.unset(prefix);
        }
        self.counters.keys_applied.fetch_add(1, Ordering::Relaxed);
        tracing::info!(
            version,
            keys = ?self.keyring.ids(),
            prefixes = change.set.len(),
            removed = change.unset.len(),
            "group keys installed"
        );
    }

    /// Domain trust on links: trusts the link keys of the domain's valid routers (those the
    /// configuration already trusts stay as they are) and untrusts, ending their sessions at
    /// the next poll, the ones the controller listed before and no longer does.
    fn install_trust(&mut self, version: u64, keys: &[[u8; 32]]) {
        let Some(ctx) = &self.security else {
            return;
        };
        let me = ctx.identity().public_key().0;
        let want: std::collections::BTreeSet<[u8; 32]> =
            keys.iter().copied().filter(|k| *k != me).collect();
        let mut added = 0;
        for k in &want {
            if !self.ctl_trusted.contains(k) && ctx.trust(nameway_face::secure::PublicKey(*k)) {
                self.ctl_trusted.insert(*k);
                added += 1;
            }
        }
        let gone: Vec<[u8; 32]> = self.ctl_trusted.difference(&want).copied().collect();
        for k in &gone {
            self.ctl_trusted.remove(k);
            self.to_untrust.push(*k);
        }
        tracing::info!(
            version,
            peers = want.len(),
            added,
            removed = gone.len(),
            "domain trust installed"
        );
    }

    /// The group keys held (the keyring the controller's `security` objects fill).
    pub fn keyring(&self) -> &group_keys::Keyring {
        &self.keyring
    }

    /// When [`Agent::poll`] wants to run next: the next hello round, or the next report
    /// when something changed.
    pub fn next_deadline(&self, mgmt: &Management) -> Instant {
        let hellos = self.hellos.next_deadline();
        if self.refresh {
            return Instant::now();
        }
        if self.report_due(mgmt) {
            hellos.min(self.next_report)
        } else {
            hellos
        }
    }

    fn report_due(&self, mgmt: &Management) -> bool {
        self.neighbours_dirty || self.reported_rib != Some(mgmt.rib().generation())
    }

    /// A face came up or went down: the secure links are listed again at the next poll.
    pub fn face_changed(&mut self, face: u64) {
        self.plain.remove(&face);
        self.refresh = true;
        self.refresh_rounds = REFRESH_ROUNDS;
    }

    /// What the forwarder sent to [`HELLO_FACE`]: a neighbour's hello is answered at once
    /// (the answer goes back into the forwarder), an answer to ours is recorded.
    pub fn on_hello(&mut self, fw: &mut Forwarder, faces: &FaceSystem, fw_now: Time, wire: Bytes) {
        // Whether we hold an established session on a face, now.
        let has_session = |f: u64| faces.has_session(nameway_face::FaceId(f));
        let (answer, unknown) = self.hellos.on_transmit(Instant::now(), wire, has_session);
        if let Some(data) = answer {
            fw.handle_packet(fw_now, HELLO_FACE, data);
        }
        if let Some(f) = unknown.filter(|f| !self.plain.contains(f)) {
            self.unknown.insert(f);
            self.refresh = true;
        }
        self.sync_hello_counters();
    }

    /// Sends the hellos that are due, and reports the forwarder's state to the task when it
    /// changed (at most once per `report_interval_ms`). While nothing changed this costs a
    /// few comparisons: no face and no route is looked at.
    pub fn poll(
        &mut self,
        fw: &mut Forwarder,
        mgmt: &Management,
        faces: &FaceSystem,
        fw_now: Time,
    ) {
        for k in self.to_untrust.drain(..) {
            let key = nameway_face::secure::PublicKey(k);
            faces.untrust(&key);
            tracing::info!(peer = %key, "peer no longer in the domain's trust: its sessions end");
            // Its sessions are gone: it is reported no more.
            self.refresh = true;
        }
        let now = Instant::now();
        if self.refresh {
            self.refresh_peers(fw, faces, now);
        }
        // Neighbours that keep saying they hold no session with us while we hold one with
        // them (restarted): the links that start handshakes start a new one.
        for f in self.hellos.take_lost_sessions() {
            if faces.has_session(nameway_face::FaceId(f))
                && faces.request_rehandshake(nameway_face::FaceId(f))
            {
                self.counters.rehandshakes.fetch_add(1, Ordering::Relaxed);
            }
        }
        if self.hellos.next_deadline() <= now {
            // A neighbour that answers before its session told its key: read it again.
            let keyless = self
                .peers
                .iter()
                .any(|(f, k)| k.is_none() && self.hellos.alive(*f));
            if self.refresh_rounds > 0 || keyless {
                self.refresh_rounds = self.refresh_rounds.saturating_sub(1);
                self.refresh_peers(fw, faces, now);
            }
            for (_, wire) in self.hellos.poll(now) {
                fw.handle_packet(fw_now, HELLO_FACE, wire);
            }
            self.sync_hello_counters();
        }
        if self.hellos.take_changed() {
            self.neighbours_dirty = true;
            // A neighbour alive before its link key was read: read it now.
            if self
                .peers
                .iter()
                .any(|(f, k)| k.is_none() && self.hellos.alive(*f))
            {
                self.refresh_peers(fw, faces, now);
            }
        }
        if now < self.next_report || !self.report_due(mgmt) {
            return;
        }
        self.next_report = now + self.interval;
        self.neighbours_dirty = false;
        self.counters.reports_built.fetch_add(1, Ordering::Relaxed);
        let generation = mgmt.rib().generation();
        if self.reported_rib != Some(generation) {
            self.registrations = registrations(mgmt);
            self.reported_rib = Some(generation);
        }
        let report = self.build_report(fw, faces);
        if self.last_report.as_ref() == Some(&report) {
            return;
        }
        self.counters.reports.fetch_add(1, Ordering::Relaxed);
        let _ = self.to_task.send(link::ToTask::Report(report.clone()));
        self.last_report = Some(report);
    }

    fn sync_hello_counters(&self) {
        let h = &self.hellos.counters;
        let c = &self.counters;
        c.hellos_sent.store(h.sent, Ordering::Relaxed);
        c.hellos_answered.store(h.answered, Ordering::Relaxed);
        c.hellos_received.store(h.received, Ordering::Relaxed);
        c.neighbours_dead.store(h.deaths, Ordering::Relaxed);
    }

    /// Lists the secure links again (after a face event): new ones are probed, gone ones
    /// forgotten.
    fn refresh_peers(&mut self, fw: &Forwarder, faces: &FaceSystem, now: Instant) {
        self.refresh = false;
        let mut listed: BTreeMap<u64, Option<[u8; 32]>> = BTreeMap::new();
        for (id, _, info) in faces.neighbours() {
            if fw.face(FaceId(id.0)).is_some() {
                // A peer's key counts once its session is established: a handshake refused
                // for trust also tells the key, but that peer is no neighbour (its hellos,
                // unprotected, may still pass in the clear).
                let established = info.state == nameway_face::secure::LinkState::Established;
                listed.insert(id.0, info.peer.filter(|_| established).map(|p| p.0));
            }
        }
        for f in std::mem::take(&mut self.unknown) {
            if !listed.contains_key(&f) {
                self.plain.insert(f);
            }
        }
        for face in self.hellos.faces().collect::<Vec<_>>() {
            if !listed.contains_key(&face) {
                self.hellos.remove(face);
            }
        }
        for &face in listed.keys() {
            if !self.hellos.is_probed(face) {
                self.hellos.add(face, now);
            }
        }
        if listed != self.peers {
            self.neighbours_dirty = true;
            self.peers = listed;
        }
        if !self.declared.is_empty() {
            let list = faces.list();
            let uris: Vec<(u64, String)> = list
                .iter()
                .filter(|f| fw.face(FaceId(f.id.0)).is_some())
                .map(|f| (f.id.0, f.remote.to_string()))
                .collect();
            let matched =
                declared::matched(&self.declared, uris.iter().map(|(id, u)| (*id, u.as_str())));
            if matched != self.declared_faces {
                self.neighbours_dirty = true;
                self.declared_faces = matched;
            }
        }
    }

    /// The forwarder's state as the controller sees it: secure-link neighbours whose key is
    /// known (up while they answer hellos), the registrations read at the last RIB change,
    /// and the faces both use.
    fn build_report(&self, fw: &Forwarder, faces: &FaceSystem) -> Report {
        let mut neighbours: Vec<NeighbourReport> = self
            .peers
            .iter()
            .filter_map(|(&face, key)| {
                let key = key.as_ref()?;
                Some(NeighbourReport {
                    link_key: Bytes::copy_from_slice(key),
                    face,
                    cost: self.link_cost,
                    up: self.hellos.alive(face) && fw.face(FaceId(face)).is_some(),
                })
            })
            .collect();
        // Declared links: up while their face exists (the far end answers no hellos); a key
        // that is also a secure-link neighbour's is reported once, from the secure link.
        for (key, &face) in &self.declared_faces {
            if neighbours.iter().any(|n| n.link_key[..] == key[..]) {
                continue;
            }
            neighbours.push(NeighbourReport {
                link_key: Bytes::copy_from_slice(key),
                face,
                cost: self.link_cost,
                up: fw.face(FaceId(face)).is_some(),
            });
        }
        neighbours.sort();
        let mut ids: Vec<u64> = neighbours
            .iter()
            .map(|n| n.face)
            .chain(self.registrations.iter().map(|r| r.face))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let face_uris = ids
            .into_iter()
            .filter_map(|id| {
                let info = faces.info(nameway_face::FaceId(id))?;
                Some((id, info.remote.to_string()))
            })
            .collect();
        Report {
            neighbours,
            registrations: self.registrations.clone(),
            faces: face_uris,
        }
    }
}

fn is_local_name(n: &Name) -> bool {
    let first = n.get(0).map(|c| c.value().to_vec());
    matches!(first.as_deref(), Some(b"localhost" | b"localhop"))
}

/// Applications' registrations in the RIB (origin app or client, not `/localhost` or
/// `/localhop`).
fn registrations(mgmt: &Management) -> Vec<RegistrationReport> {
    let mut registrations: Vec<RegistrationReport> = mgmt
        .rib()
        .entries()
        .filter(|(n, _)| !is_local_name(n))
        .flat_map(|(n, routes)| {
            routes
                .iter()
                .filter(|r| matches!(r.origin, route_origin::APP | route_origin::CLIENT))
                .map(|r| RegistrationReport {
                    prefix: n.clone(),
                    face: r.face,
                    cost: r.cost,
                })
        })
        .collect();
    registrations.sort();
    registrations
}

/// Makes the routes of origin [`CTL_ORIGIN`] those of `fib` (next hops through faces this
/// forwarder does not have are skipped). Returns (routes in `fib` installed, skipped).
fn install(fw: &mut Forwarder, mgmt: &mut Management, fib: &Fib) -> (usize, usize) {
    let mut skipped = 0;
    let mut want: BTreeMap<(Name, u64), u64> = BTreeMap::new();
    for (prefix, hops) in fib {
        for h in hops {
            if fw.face(FaceId(h.face)).is_some() {
                want.insert((prefix.clone(), h.face), h.cost);
            } else {
                skipped += 1;
            }
        }
    }
    let have: BTreeMap<(Name, u64), u64> = mgmt
        .rib()
        .entries()
        .flat_map(|(n, routes)| {
            routes
                .iter()
                .filter(|r| r.origin == CTL_ORIGIN)
                .map(|r| ((n.clone(), r.face), r.cost))
        })
        .collect();
    let mut changed = false;
    for ((prefix, face), cost) in &have {
        if want.get(&(prefix.clone(), *face)) != Some(cost) {
            mgmt.remove_route(fw, prefix, *face, CTL_ORIGIN);
            changed = true;
        }
    }
    for ((prefix, face), cost) in &want {
        if have.get(&(prefix.clone(), *face)) != Some(cost) {
            let route = Route {
                face: *face,
                origin: CTL_ORIGIN,
                cost: *cost,
                flags: crate::rib::CHILD_INHERIT,
                expires: None,
            };
            mgmt.add_route(fw, prefix, route);
            changed = true;
        }
    }
    if changed {
        mgmt.state_changed(fw);
    }
    (want.len(), skipped)
}

#[cfg(test)]
mod poll_tests;
