//! NFD agent mode (`nameway-nfd-agent`, docs/controller.md "NFD agent mode"): the agent of
//! the controller for a forwarder that is managed through NFD's management protocol (a stock
//! NFD, or a `namewayd` without `[controller]`), outside that forwarder's process.
//!
//! The connection to the controller is namewayd's agent task (`link.rs`: the pinned anchor,
//! enrolment with a token, the router certificate kept in `state_dir`, verified objects,
//! acknowledgements, backoff). This side replaces the driver: every `report_interval_ms` it
//! reads `faces/list` and `rib/list` over the management connection
//! ([`nameway_transport::client::Client`], the CLI's signed command Interests), reports them,
//! and makes the forwarder's routes of origin 131 ("ctl") those of the last verified FIB
//! with `rib/register` and `rib/unregister`. Routes of any other origin are never touched.
//! The same comparison runs at every poll, so routes a restarted forwarder lost are put back.
//!
//! NFD has no secure links, so a neighbour cannot prove who it is: the operator declares
//! each link (`--neighbour <link key>=<face URI>`, the neighbour's link key as `namewayctl`
//! knows it). This agent has a link key of its own (`state_dir/link.key`, printed at start)
//! for its neighbours to declare. A link is used only when both ends report it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use nameway_ctl::channel::{NeighbourReport, RegistrationReport, Report};
use nameway_ctl::Fib;
use nameway_transport::client::{Client, ClientError, Transport};
use nameway_wire::mgmt::{route_flags, route_origin, ControlParameters, FaceStatus, RibEntry};
use nameway_wire::Name;
use tokio::sync::mpsc;

use super::config::ControllerConfig;
pub use super::declared::DeclaredNeighbour;
use super::link::{self, ToTask, Update};
use super::{is_local_name, AgentCounters, CTL_ORIGIN};

/// What the NFD agent needs.
#[derive(Clone, Debug)]
pub struct NfdAgentConfig {
    /// The forwarder's management socket (`unix:///run/nfd/nfd.sock`, `tcp://127.0.0.1:6363`).
    pub nfd: String,
    /// The controller: the same keys as namewayd's `[controller]` (uri, key, name, token,
    /// state_dir, link_cost, report_interval_ms).
    pub controller: ControllerConfig,
    /// The declared links.
    pub neighbours: Vec<DeclaredNeighbour>,
}

/// Runs the agent until the process ends.
///
/// # Errors
/// A bad setting, or the state directory, the router key or the link key cannot be used.
pub async fn run(config: NfdAgentConfig) -> anyhow::Result<()> {
    let c = &config.controller;
    c.validate().map_err(|e| anyhow::anyhow!(e))?;
    let transport = Transport::parse(&config.nfd).map_err(|e| anyhow::anyhow!("--nfd: {e}"))?;
    let super::Identity {
        pinned,
        router,
        state,
        key,
    } = super::Identity::open(c, "--state-dir")?;
    let link_key = super::declared::own_link_key(&c.state_dir)?;
    println!("link-key {}", hex::encode(link_key));
    let applied = match state.load_fib() {
        Ok(f) => f.map(|(v, fib)| (v, Arc::new(fib))),
        Err(e) => {
            tracing::error!("the FIB kept in the state directory is unusable: {e}");
            None
        }
    };
    let counters = Arc::new(AgentCounters::default());
    let (to_task, from_driver) = mpsc::unbounded_channel();
    let (to_driver, updates) = mpsc::unbounded_channel();
    link::spawn(
        link::LinkSetup {
            address: c.address().map_err(|e| anyhow::anyhow!(e))?,
            tls: c.tls().map_err(|e| anyhow::anyhow!(e))?,
            pinned,
            router,
            token: c.token.clone(),
            link_key: Some(link_key),
            // NFD has no secure faces: the controller's group keys have no use here.
            kem: None,
            key,
            state,
            counters: counters.clone(),
            applied: applied.clone(),
        },
        from_driver,
        to_driver,
    );
    let mut driver = Driver {
        transport,
        client: None,
        neighbours: config.neighbours.clone(),
        link_cost: c.link_cost,
        to_task,
        wanted: applied.map(|(v, fib)| (v, fib, true)),
        last_report: None,
        counters,
    };
    driver
        .run(updates, Duration::from_millis(c.report_interval_ms))
        .await;
    Ok(())
}

/// The side that talks to the forwarder.
struct Driver {
    transport: Transport,
    client: Option<Client>,
    neighbours: Vec<DeclaredNeighbour>,
    link_cost: u64,
    to_task: mpsc::UnboundedSender<ToTask>,
    /// The FIB to make true, its version, and whether the task was told it is applied.
    wanted: Option<(u64, Arc<Fib>, bool)>,
    last_report: Option<Report>,
    counters: Arc<AgentCounters>,
}

/// The forwarder's state read in one poll.
struct Seen {
    faces: Vec<FaceStatus>,
    rib: Vec<RibEntry>,
}

impl Driver {
    async fn run(&mut self, mut updates: mpsc::UnboundedReceiver<Update>, every: Duration) {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut failing = false;
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                u = updates.recv() => match u {
                    Some(Update::Fib { version, fib }) => self.wanted = Some((version, fib, false)),
                    // A stock NFD has no per-prefix cache admission, secure links or keys.
                    Some(_) => tracing::debug!("object not applicable to an NFD (cache policy, keys, trust): ignored"),
                    None => return,
                },
            }
            match self.round().await {
                Ok(()) => {
                    if std::mem::take(&mut failing) {
                        tracing::info!(nfd = %self.transport, "the forwarder answers again");
                    }
                }
                Err(e) => {
                    // Once per outage, not at every poll.
                    if failing {
                        tracing::debug!(nfd = %self.transport, "forwarder: {e}");
                    } else {
                        tracing::warn!(nfd = %self.transport, "forwarder: {e}");
                    }
                    failing = true;
                    // Connect again next round.
                    self.client = None;
                }
            }
        }
    }

    /// One round: read the forwarder, report what changed, apply the wanted FIB.
    async fn round(&mut self) -> Result<(), ClientError> {
        if self.client.is_none() {
            self.client = Some(Client::connect(self.transport.clone()).await?);
            tracing::info!(nfd = %self.transport, "connected to the forwarder");
        }
        let Some(client) = self.client.as_mut() else {
            return Ok(());
        };
        let seen = Seen {
            faces: client.list("faces", "list").await?,
            rib: client.list("rib", "list").await?,
        };
        let report = build_report(&seen, &self.neighbours, self.link_cost);
        if self.last_report.as_ref() != Some(&report) {
            self.counters.reports.fetch_add(1, Ordering::Relaxed);
            let _ = self.to_task.send(ToTask::Report(report.clone()));
            self.last_report = Some(report);
        }
        let Some((version, fib, told)) = self.wanted.clone() else {
            return Ok(());
        };
        let plan = plan(&seen, &fib);
        for (prefix, face) in &plan.remove {
            let p = ControlParameters {
                name: Some(prefix.clone()),
                face_id: Some(*face),
                origin: Some(CTL_ORIGIN),
                ..ControlParameters::default()
            };
            client.command_ok("rib", "unregister", &p).await?;
        }
        for ((prefix, face), cost) in &plan.add {
            let p = ControlParameters {
                name: Some(prefix.clone()),
                face_id: Some(*face),
                origin: Some(CTL_ORIGIN),
                cost: Some(*cost),
                flags: Some(route_flags::CHILD_INHERIT),
                ..ControlParameters::default()
            };
            client.command_ok("rib", "register", &p).await?;
        }
        if !plan.add.is_empty() || !plan.remove.is_empty() {
            tracing::info!(
                version,
                added = plan.add.len(),
                removed = plan.remove.len(),
                skipped = plan.skipped,
                "controller FIB applied to the forwarder"
            );
        }
        if !told {
            self.counters.applied("fib", version);
            let _ = self.to_task.send(ToTask::Applied(version, fib.clone()));
            self.wanted = Some((version, fib, true));
        }
        Ok(())
    }
}

/// The commands that make the forwarder's routes of origin 131 those of a FIB.
#[derive(Debug, Default, PartialEq, Eq)]
struct Plan {
    /// `rib/unregister`: (prefix, face).
    remove: Vec<(Name, u64)>,
    /// `rib/register`: (prefix, face) → cost (a changed cost is a register: NFD updates it).
    add: BTreeMap<(Name, u64), u64>,
    /// Next hops through faces the forwarder does not have.
    skipped: usize,
}

fn plan(seen: &Seen, fib: &Fib) -> Plan {
    let faces: BTreeSet<u64> = seen.faces.iter().map(|f| f.face_id).collect();
    let mut skipped = 0;
    let mut want: BTreeMap<(Name, u64), u64> = BTreeMap::new();
    for (prefix, hops) in fib {
        for h in hops {
            if faces.contains(&h.face) {
                want.insert((prefix.clone(), h.face), h.cost);
            } else {
                skipped += 1;
            }
        }
    }
    let have: BTreeMap<(Name, u64), u64> = seen
        .rib
        .iter()
        .flat_map(|e| {
            e.routes
                .iter()
                .filter(|r| r.origin == CTL_ORIGIN)
                .map(|r| ((e.name.clone(), r.face_id), r.cost))
        })
        .collect();
    let remove = have
        .keys()
        .filter(|k| !want.contains_key(*k))
        .cloned()
        .collect();
    let add = want
        .into_iter()
        .filter(|(k, cost)| have.get(k) != Some(cost))
        .collect();
    Plan {
        remove,
        add,
        skipped,
    }
}

/// The forwarder's state as the controller sees it: the declared links whose face exists,
/// the applications' registrations, and the faces both use.
fn build_report(seen: &Seen, declared: &[DeclaredNeighbour], cost: u64) -> Report {
    let faces = seen.faces.iter().map(|f| (f.face_id, f.uri.as_str()));
    let mut neighbours: Vec<NeighbourReport> = super::declared::matched(declared, faces)
        .into_iter()
        .map(|(key, face)| NeighbourReport {
            link_key: Bytes::copy_from_slice(&key),
            face,
            cost,
            up: true,
        })
        .collect();
    neighbours.sort();
    let mut registrations: Vec<RegistrationReport> = seen
        .rib
        .iter()
        .filter(|e| !is_local_name(&e.name))
        .flat_map(|e| {
            e.routes
                .iter()
                .filter(|r| matches!(r.origin, route_origin::APP | route_origin::CLIENT))
                .map(|r| RegistrationReport {
                    prefix: e.name.clone(),
                    face: r.face_id,
                    cost: r.cost,
                })
        })
        .collect();
    registrations.sort();
    let used: BTreeSet<u64> = neighbours
        .iter()
        .map(|n| n.face)
        .chain(registrations.iter().map(|r| r.face))
        .collect();
    let faces = seen
        .faces
        .iter()
        .filter(|f| used.contains(&f.face_id))
        .map(|f| (f.face_id, f.uri.clone()))
        .collect();
    Report {
        neighbours,
        registrations,
        faces,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use nameway_ctl::NextHop;
    use nameway_wire::mgmt::Route;

    fn face(id: u64, uri: &str) -> FaceStatus {
        FaceStatus {
            face_id: id,
            uri: uri.into(),
            ..FaceStatus::default()
        }
    }

    fn entry(name: &str, routes: &[(u64, u64, u64)]) -> RibEntry {
        RibEntry {
            name: name.parse().unwrap(),
            routes: routes
                .iter()
                .map(|&(face_id, origin, cost)| Route {
                    face_id,
                    origin,
                    cost,
                    ..Route::default()
                })
                .collect(),
        }
    }

    fn seen() -> Seen {
        Seen {
            faces: vec![
                face(1, "internal://"),
                face(260, "udp4://10.0.0.2:6363"),
                face(300, "fd://31"),
            ],
            rib: vec![
                entry("/app", &[(300, route_origin::APP, 0)]),
                entry("/localhost/x", &[(300, route_origin::APP, 0)]),
                entry("/static", &[(260, route_origin::STATIC, 5)]),
                entry("/old", &[(260, CTL_ORIGIN, 10)]),
                entry("/keep", &[(260, CTL_ORIGIN, 10)]),
                entry("/dearer", &[(260, CTL_ORIGIN, 10)]),
            ],
        }
    }

    fn fib(entries: &[(&str, u64, u64)]) -> Fib {
        let mut f = Fib::new();
        for &(n, face, cost) in entries {
            f.entry(n.parse().unwrap())
                .or_default()
                .push(NextHop { face, cost });
        }
        f
    }

    #[test]
    fn only_routes_of_origin_131_change_and_missing_faces_are_skipped() {
        let p = plan(
            &seen(),
            &fib(&[
                ("/keep", 260, 10),
                ("/dearer", 260, 20),
                ("/new", 260, 10),
                ("/gone-face", 999, 10),
            ]),
        );
        assert_eq!(p.remove, vec![("/old".parse().unwrap(), 260)]);
        let add: Vec<(String, u64, u64)> = p
            .add
            .iter()
            .map(|((n, f), c)| (n.to_string(), *f, *c))
            .collect();
        assert_eq!(
            add,
            // NDN canonical order: the shorter component first.
            vec![("/new".into(), 260, 10), ("/dearer".into(), 260, 20)]
        );
        assert_eq!(p.skipped, 1);
    }

    #[test]
    fn the_same_fib_again_changes_nothing() {
        let p = plan(
            &seen(),
            &fib(&[("/old", 260, 10), ("/keep", 260, 10), ("/dearer", 260, 10)]),
        );
        assert_eq!(p, Plan::default());
    }

    #[test]
    fn the_report_has_declared_links_with_a_face_and_applications_registrations() {
        let declared = [
            "aa".repeat(32) + "=udp4://10.0.0.2:6363",
            "bb".repeat(32) + "=udp4://10.0.0.9:6363",
        ]
        .iter()
        .map(|s| s.parse::<DeclaredNeighbour>().unwrap())
        .collect::<Vec<_>>();
        let r = build_report(&seen(), &declared, 7);
        assert_eq!(
            r.neighbours.len(),
            1,
            "the link whose face is missing is left out"
        );
        assert_eq!(r.neighbours[0].face, 260);
        assert_eq!(r.neighbours[0].cost, 7);
        assert_eq!(&r.neighbours[0].link_key[..], &[0xaa; 32][..]);
        let regs: Vec<(String, u64)> = r
            .registrations
            .iter()
            .map(|g| (g.prefix.to_string(), g.face))
            .collect();
        assert_eq!(regs, vec![("/app".into(), 300)]);
        assert_eq!(
            r.faces,
            vec![
                (260, "udp4://10.0.0.2:6363".into()),
                (300, "fd://31".into())
            ]
        );
    }

    #[test]
    fn declared_neighbours_are_checked() {
        for bad in [
            "nokey",
            "zz=udp4://h:1",
            &("aa".repeat(31) + "=udp4://h:1"),
            &("aa".repeat(32) + "=h:1"),
        ] {
            assert!(bad.parse::<DeclaredNeighbour>().is_err(), "{bad}");
        }
    }
}
