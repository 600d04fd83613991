//! The agent of the controller in `namewayd` (docs/controller.md, "The agent").
//!
//! [`Agent`] is owned by the driver, like `routing`. A task of its own (`link.rs`) holds the
//! connection to `namewayctl serve`; the driver side does what must happen between packet
//! bursts:
//!
//! - every `report_interval_ms` it builds the forwarder's [`Report`] (secure-link neighbours
//!   with their face ids, the faces they use, applications' registrations from the RIB) and
//!   hands it to the task when it changed;
//! - it applies each verified FIB the task hands back ([`Agent::apply`]) in one go, as routes
//!   of origin [`CTL_ORIGIN`] (shown as `ctl` by `nameway route list`), and tells the task the
//!   version, which the task acknowledges and writes to `state_dir`;
//! - at start it installs the FIB kept in `state_dir`, so a restart without the controller
//!   still forwards.

pub mod config;
pub mod cs;
mod link;
pub mod stats;
pub mod store;

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use bytes::Bytes;
use nameway_ctl::channel::{NeighbourReport, RegistrationReport, Report};
use nameway_ctl::Fib;
use nameway_face::FaceSystem;
use nameway_fw::{FaceId, Forwarder};
use nameway_wire::mgmt::route_origin;
use nameway_wire::Name;
use tokio::sync::mpsc;

use crate::config::Config;
use crate::mgmt::Management;
use crate::rib::Route;

pub use link::Update;
pub use stats::AgentCounters;

/// Route origin of the routes the controller installs ("ctl").
pub const CTL_ORIGIN: u64 = nameway_wire::mgmt::route_origin::CTL;

/// See the module documentation.
pub struct Agent {
    to_task: mpsc::UnboundedSender<link::ToTask>,
    updates: mpsc::UnboundedReceiver<Update>,
    last_report: Option<Report>,
    next_report: Instant,
    interval: Duration,
    link_cost: u64,
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
        let pinned = nameway_ctl::channel::parse_pin(&c.key)
            .map_err(|e| anyhow::anyhow!("controller.key: {e}"))?;
        let router: Name = c
            .name
            .parse()
            .map_err(|e| anyhow::anyhow!("controller.name: {e}"))?;
        let state = store::StateDir::open(&c.state_dir).context("controller.state_dir")?;
        let key = state.router_key().context("the agent's router key")?;
        let link_key = faces.security().map(|s| s.identity().public_key().0);
        if link_key.is_none() {
            tracing::warn!("[controller] without a [security] identity: this forwarder's neighbours cannot be reported (no secure links)");
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
        let counters = Arc::new(AgentCounters::default());
        match cs::load(&state) {
            Ok(Some((version, doc))) => match cs::apply(fw, &doc) {
                Ok(()) => {
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
            pinned,
            router,
            token: c.token.clone(),
            link_key,
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
                    self.counters.applied("cs", version);
                    tracing::info!(version, "controller cache policy applied");
                    let _ = self.to_task.send(link::ToTask::CsApplied(version, doc));
                }
                Err(e) => {
                    self.counters.refused_object(stats::ObjectRefusal::Document);
                    tracing::warn!(version, "cache policy refused: {e}");
                }
            },
        }
    }

    /// When [`Agent::poll`] wants to run next.
    pub fn next_deadline(&self) -> Instant {
        self.next_report
    }

    /// Reports the forwarder's state to the task when it changed (at most once per
    /// `report_interval_ms`).
    pub fn poll(&mut self, fw: &Forwarder, mgmt: &Management, faces: &FaceSystem) {
        let now = Instant::now();
        if now < self.next_report {
            return;
        }
        self.next_report = now + self.interval;
        let report = build_report(fw, mgmt, faces, self.link_cost);
        if self.last_report.as_ref() == Some(&report) {
            return;
        }
        self.counters.reports.fetch_add(1, Ordering::Relaxed);
        let _ = self.to_task.send(link::ToTask::Report(report.clone()));
        self.last_report = Some(report);
    }
}

fn is_local_name(n: &Name) -> bool {
    let first = n.get(0).map(|c| c.value().to_vec());
    matches!(first.as_deref(), Some(b"localhost" | b"localhop"))
}

/// The forwarder's state as the controller sees it.
fn build_report(fw: &Forwarder, mgmt: &Management, faces: &FaceSystem, cost: u64) -> Report {
    let mut neighbours: Vec<NeighbourReport> = faces
        .neighbours()
        .into_iter()
        .filter_map(|(id, _, info)| {
            let peer = info.peer?;
            let up = info.state == nameway_face::secure::LinkState::Established
                && fw.face(FaceId(id.0)).is_some();
            Some(NeighbourReport {
                link_key: Bytes::copy_from_slice(&peer.0),
                face: id.0,
                cost,
                up,
            })
        })
        .collect();
    neighbours.sort();
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
    let mut ids: Vec<u64> = neighbours
        .iter()
        .map(|n| n.face)
        .chain(registrations.iter().map(|r| r.face))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let faces = ids
        .into_iter()
        .filter_map(|id| {
            let info = faces.info(nameway_face::FaceId(id))?;
            Some((id, info.remote.to_string()))
        })
        .collect();
    Report {
        neighbours,
        registrations,
        faces,
    }
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
