//! Several controllers on one PostgreSQL database, live: the change feed and the shared
//! topology (docs/controller.md, "Several controllers on one database").
//!
//! A thread of its own (the synchronous client must not run on a runtime thread) owns one
//! more connection to the shared database and, when another writer notifies a change (a
//! second thread listens on a third connection), a few milliseconds after the state task
//! told it something ([`LOCAL_DELAY`]), and at the latest every [`POLL_LISTENING`] (every
//! [`POLL`] while it cannot listen):
//!
//! - writes the link reports of the routers connected here (one row per reporting end,
//!   `links`, the neighbour named by its secure-link key resolved through `nodes`), renews
//!   them every [`RENEW`] (soft state) and deletes every controller's rows not renewed for
//!   [`LINK_TTL`] (so a dead controller's links go away);
//! - reads the registrations changed since its cursor (`PostgresStore::changes_since`),
//!   applies them to the name tree (`Registry::apply_stored`), and, when a link row changed,
//!   the live links;
//! - gives the state task, for every router served by another controller, its links and
//!   registrations as a report ([`RemoteRouter`]), when they changed: the state machine puts
//!   that router in its graph (`ControllerState::remote`) and routes to it through the same
//!   incremental paths as its own routers' reports; links still need both ends.
//!
//! [`FeedCore`] is the feed without I/O: what to write, what to tell the state task.
// Without the PostgreSQL client there is no feed thread: only the state task's side is used.
#![cfg_attr(not(feature = "postgres"), allow(dead_code))]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use bytes::Bytes;
use nameway_wire::Name;

use crate::channel::{NeighbourReport, RegistrationReport, Report};
use crate::store::{LinkRecord, RegistryOp};

/// How often the feed reads the database when it cannot listen for notifications.
pub(super) const POLL: Duration = Duration::from_millis(200);

/// How often it reads the database while it listens (a fallback: the writers notify every
/// change they number, and the feed reads at once).
pub(super) const POLL_LISTENING: Duration = Duration::from_secs(1);

/// How long the feed waits after a message of the state task before writing what it says:
/// the messages of one burst of reports go to the database in one round.
pub(super) const LOCAL_DELAY: Duration = Duration::from_millis(5);

/// How often the link reports of the routers connected here are renewed.
pub(super) const RENEW: Duration = Duration::from_secs(2);

/// How long a link report lives without renewal.
pub(super) const LINK_TTL: Duration = Duration::from_secs(6);

/// What the state task tells the feed about the routers connected here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Local {
    /// A router connected here reported these neighbours.
    Links(Name, Vec<NeighbourReport>),
    /// The router is no longer connected here.
    Gone(Name),
    /// The database numbered a change (a notification on the listening connection): read
    /// it now.
    Wake,
}

/// A router served by another controller, as the shared database describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct RemoteRouter {
    /// Its name.
    pub(super) name: Name,
    /// Its secure-link key (`nodes.kem_pubkey`), when known.
    pub(super) link_key: Option<Bytes>,
    /// Its links and registrations; `None`: it left (no live row names it).
    pub(super) report: Option<Report>,
}

/// See the module documentation.
#[derive(Debug, Default)]
pub(super) struct FeedCore {
    /// The routers connected here and their last reported neighbours.
    local: BTreeMap<Name, Vec<NeighbourReport>>,
    /// Local routers whose link rows must be written (`None`: deleted).
    dirty: BTreeSet<Name>,
    /// Secure-link key → router name, and back.
    names: HashMap<Bytes, String>,
    keys: HashMap<String, Bytes>,
    /// Stored registrations by router: (prefix, face) → cost.
    regs: HashMap<String, BTreeMap<(Name, u64), u64>>,
    /// Live link rows by reporting router.
    links: HashMap<String, Vec<LinkRecord>>,
    /// What the state task was last given, by router.
    sent: HashMap<String, (Option<Bytes>, Report)>,
}

impl FeedCore {
    /// Takes a message of the state task.
    pub(super) fn local(&mut self, m: Local) {
        match m {
            Local::Links(router, neighbours) => {
                if self.local.get(&router) != Some(&neighbours) {
                    self.local.insert(router.clone(), neighbours);
                    self.dirty.insert(router);
                }
            }
            Local::Gone(router) => {
                self.local.remove(&router);
                // Its rows are deleted; if another controller serves it now, it is remote.
                self.sent.remove(&router.to_string());
                self.dirty.insert(router);
            }
            Local::Wake => {}
        }
    }

    /// The link rows to write: (router, its rows; empty: delete them all). A router one of
    /// whose neighbours has a key not known yet stays dirty (written again at the next poll,
    /// after the keys are read again); the second value says whether there is one.
    pub(super) fn link_writes(&mut self, now_ms: u64) -> (Vec<(String, Vec<LinkRecord>)>, bool) {
        let mut out = Vec::new();
        let mut unknown = false;
        let mut still = BTreeSet::new();
        for router in std::mem::take(&mut self.dirty) {
            let me = router.to_string();
            let Some(neighbours) = self.local.get(&router) else {
                out.push((me, Vec::new()));
                continue;
            };
            let mut rows = Vec::with_capacity(neighbours.len());
            for nb in neighbours {
                match self.names.get(&nb.link_key) {
                    Some(b) if *b != me => rows.push(LinkRecord {
                        a: me.clone(),
                        b: b.clone(),
                        face_a: nb.face,
                        face_b: 0,
                        cost: u32::try_from(nb.cost).unwrap_or(u32::MAX),
                        rtt_us: 0,
                        up: nb.up,
                        updated_ms: now_ms,
                    }),
                    Some(_) => {}
                    None => unknown = true,
                }
            }
            if unknown {
                still.insert(router);
            }
            out.push((me, rows));
        }
        self.dirty = still;
        (out, unknown)
    }

    /// The routers connected here (whose link rows this controller renews).
    pub(super) fn local_names(&self) -> Vec<String> {
        self.local.keys().map(Name::to_string).collect()
    }

    /// Replaces the key map (`nodes`: name → secure-link key).
    pub(super) fn set_keys(&mut self, keys: HashMap<String, Vec<u8>>) {
        self.names.clear();
        self.keys.clear();
        for (name, key) in keys {
            let key = Bytes::from(key);
            self.names.insert(key.clone(), name.clone());
            self.keys.insert(name, key);
        }
    }

    /// Whether a live link row names a router whose key is not known.
    pub(super) fn keys_missing(&self) -> bool {
        self.links.iter().any(|(a, rows)| {
            !self.keys.contains_key(a) || rows.iter().any(|l| !self.keys.contains_key(&l.b))
        })
    }

    /// Applies registration changes read from the feed (`replace`: they are everything);
    /// returns those for the name tree (a put already expired at `now_ms` is a removal).
    pub(super) fn registrations(
        &mut self,
        ops: Vec<RegistryOp>,
        replace: bool,
        now_ms: u64,
    ) -> Vec<RegistryOp> {
        if replace {
            self.regs.clear();
        }
        let mut out = Vec::with_capacity(ops.len());
        for op in ops {
            match op {
                RegistryOp::Put(r) if r.expires_ms > now_ms => {
                    self.regs
                        .entry(r.node.clone())
                        .or_default()
                        .insert((r.prefix.clone(), r.face), u64::from(r.cost));
                    out.push(RegistryOp::Put(r));
                }
                RegistryOp::Put(r) => {
                    self.forget(&r.node, &r.prefix, r.face);
                    out.push(RegistryOp::Remove(r.key()));
                }
                RegistryOp::Remove(k) => {
                    self.forget(&k.node, &k.prefix, k.face);
                    out.push(RegistryOp::Remove(k));
                }
            }
        }
        out
    }

    fn forget(&mut self, node: &str, prefix: &Name, face: u64) {
        if let Some(m) = self.regs.get_mut(node) {
            m.remove(&(prefix.clone(), face));
            if m.is_empty() {
                self.regs.remove(node);
            }
        }
    }

    /// Replaces the live link rows.
    pub(super) fn set_links(&mut self, rows: Vec<LinkRecord>) {
        self.links.clear();
        for l in rows {
            self.links.entry(l.a.clone()).or_default().push(l);
        }
    }

    /// The routers served elsewhere whose links or registrations changed since last told.
    pub(super) fn remote(&mut self) -> Vec<RemoteRouter> {
        let local: BTreeSet<String> = self.local_names().into_iter().collect();
        let mut now: BTreeMap<String, (Option<Bytes>, Report)> = BTreeMap::new();
        let routers: BTreeSet<&String> = self.regs.keys().chain(self.links.keys()).collect();
        for router in routers.into_iter().filter(|r| !local.contains(*r)) {
            let neighbours = self
                .links
                .get(router)
                .into_iter()
                .flatten()
                .filter_map(|l| {
                    Some(NeighbourReport {
                        link_key: self.keys.get(&l.b)?.clone(),
                        face: l.face_a,
                        cost: u64::from(l.cost),
                        up: l.up,
                    })
                })
                .collect();
            let registrations = self
                .regs
                .get(router)
                .into_iter()
                .flatten()
                .map(|((prefix, face), cost)| RegistrationReport {
                    prefix: prefix.clone(),
                    face: *face,
                    cost: *cost,
                })
                .collect();
            let report = Report {
                neighbours,
                registrations,
                faces: Vec::new(),
            };
            now.insert(router.clone(), (self.keys.get(router).cloned(), report));
        }
        let mut out = Vec::new();
        let gone: Vec<String> = self
            .sent
            .keys()
            .filter(|r| !now.contains_key(*r))
            .cloned()
            .collect();
        for r in gone {
            self.sent.remove(&r);
            if let Ok(name) = r.parse() {
                out.push(RemoteRouter {
                    name,
                    link_key: None,
                    report: None,
                });
            }
        }
        for (r, v) in now {
            if self.sent.get(&r) == Some(&v) {
                continue;
            }
            let Ok(name) = r.parse() else { continue };
            out.push(RemoteRouter {
                name,
                link_key: v.0.clone(),
                report: Some(v.1.clone()),
            });
            self.sent.insert(r, v);
        }
        out
    }
}

#[cfg(feature = "postgres")]
pub(super) use self::thread::start;

#[cfg(feature = "postgres")]
mod thread {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
    use std::sync::{Arc, Weak};
    use std::time::{Duration, Instant};

    use tokio::sync::mpsc::UnboundedSender;

    use super::{
        FeedCore, Local, RemoteRouter, LINK_TTL, LOCAL_DELAY, POLL, POLL_LISTENING, RENEW,
    };
    use crate::postgres_feed::ListenerSource;
    use crate::{now_ms, PostgresStore, StoreError};

    /// Starts the feed's thread on `store`, and the thread that listens for the writers'
    /// notifications on a connection of its own; returns where the state task sends
    /// [`Local`].
    pub(in crate::serve) fn start(
        store: PostgresStore,
        shared: Arc<super::super::Shared>,
        remote: UnboundedSender<Vec<RemoteRouter>>,
    ) -> Sender<Local> {
        let (tx, rx) = std::sync::mpsc::channel();
        let listening = Arc::new(AtomicBool::new(false));
        let alive = Arc::new(());
        {
            let (store, wake, listening, alive, ca) = (
                store.listener_source(),
                tx.clone(),
                listening.clone(),
                Arc::downgrade(&alive),
                shared.clone(),
            );
            std::thread::spawn(move || listen(&store, &wake, &ca, &listening, &alive));
        }
        std::thread::spawn(move || run(store, &shared, &rx, &remote, &listening, &alive));
        tx
    }

    /// Listens for notifications and wakes the feed (registrations and links) or the state
    /// task's CA check (deny list, group keys, routers' records: `shared.ca_wake`); connects
    /// again (every second) when the connection fails or cannot listen, the feed polling
    /// every [`POLL`] and the CA check every `serve::CA_POLL` meanwhile. Ends with the feed's
    /// thread (`alive`).
    fn listen(
        source: &ListenerSource,
        wake: &Sender<Local>,
        shared: &super::super::Shared,
        listening: &AtomicBool,
        alive: &Weak<()>,
    ) {
        // The CA check learns whether it is heard (its poll period), and is run now: a
        // change may have come while nobody listened.
        let heard = |on: bool| {
            shared.ca_listening.store(on, Ordering::Relaxed);
            shared.ca_wake.notify_one();
        };
        let mut failing = false;
        while alive.strong_count() > 0 {
            match source.listener() {
                Ok(mut l) => {
                    if std::mem::take(&mut failing) {
                        tracing::info!("shared database: listening for changes again");
                    }
                    listening.store(true, Ordering::Relaxed);
                    heard(true);
                    // Woken now: a change may have come before the LISTEN.
                    let _ = wake.send(Local::Wake);
                    loop {
                        match l.wait_any(Duration::from_secs(1)) {
                            Ok(w) if w.any() => {
                                if w.ca {
                                    shared.ca_wake.notify_one();
                                }
                                if w.changes && wake.send(Local::Wake).is_err() {
                                    return;
                                }
                            }
                            Ok(_) if alive.strong_count() == 0 => return,
                            Ok(_) => {}
                            Err(e) => {
                                tracing::warn!(
                                    "shared database: listening for changes failed, polling every {} ms: {e}",
                                    POLL.as_millis()
                                );
                                failing = true;
                                break;
                            }
                        }
                    }
                    listening.store(false, Ordering::Relaxed);
                    heard(false);
                }
                Err(e) => {
                    if !failing {
                        tracing::warn!(
                            "shared database: cannot listen for changes, polling every {} ms: {e}",
                            POLL.as_millis()
                        );
                        failing = true;
                    }
                }
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    }

    fn run(
        mut store: PostgresStore,
        shared: &super::super::Shared,
        rx: &Receiver<Local>,
        remote: &UnboundedSender<Vec<RemoteRouter>>,
        listening: &AtomicBool,
        _alive: &Arc<()>,
    ) {
        let mut core = FeedCore::default();
        let mut cursor = 0i64;
        let mut next_poll = Instant::now();
        let mut next_renew = Instant::now() + RENEW;
        let mut failing = false;
        loop {
            match rx.recv_timeout(next_poll.saturating_duration_since(Instant::now())) {
                Ok(Local::Wake) => {
                    next_poll = Instant::now();
                    continue;
                }
                Ok(m) => {
                    core.local(m);
                    next_poll = next_poll.min(Instant::now() + LOCAL_DELAY);
                    continue;
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            next_poll = Instant::now()
                + if listening.load(Ordering::Relaxed) {
                    POLL_LISTENING
                } else {
                    POLL
                };
            let renew = Instant::now() >= next_renew;
            if renew {
                next_renew = Instant::now() + RENEW;
            }
            match poll(&mut store, &mut core, &mut cursor, shared, renew) {
                Ok(changed) => {
                    if failing {
                        tracing::info!("shared database: the feed reads again");
                        failing = false;
                    }
                    if !changed.is_empty() && remote.send(changed).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    if !failing {
                        tracing::error!("shared database feed: {e}");
                        failing = true;
                    }
                }
            }
        }
    }

    /// One round: write the local links, renew and expire, read the changes.
    fn poll(
        store: &mut PostgresStore,
        core: &mut FeedCore,
        cursor: &mut i64,
        shared: &super::super::Shared,
        renew: bool,
    ) -> Result<Vec<RemoteRouter>, StoreError> {
        let now = now_ms();
        let (writes, unknown) = core.link_writes(now);
        if unknown {
            core.set_keys(store.link_keys()?);
        }
        for (router, rows) in writes {
            store.replace_links(&router, &rows)?;
        }
        if renew {
            store.renew_links(&core.local_names(), now)?;
            store.expire_links(now.saturating_sub(ms(LINK_TTL)))?;
        }
        let changes = store.changes_since(*cursor)?;
        let first = *cursor == 0;
        let replace = changes.behind || first;
        if !changes.registrations.is_empty() || replace {
            let ops = core.registrations(changes.registrations, replace, now);
            // At the first poll the tree already holds what `Registry::open` loaded: the
            // rows are upserted. Behind the tombstones, what the tree holds may be gone.
            shared.registry.apply_stored(&ops, changes.behind);
        }
        if changes.links_changed || first {
            core.set_links(store.live_links(now.saturating_sub(ms(LINK_TTL)))?);
            if core.keys_missing() {
                core.set_keys(store.link_keys()?);
            }
        }
        *cursor = changes.cursor.max(1);
        Ok(core.remote())
    }

    fn ms(d: Duration) -> u64 {
        u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Registration;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    fn key(i: u8) -> Bytes {
        Bytes::from(vec![i; 32])
    }

    fn reg(prefix: &str, node: &str, expires_ms: u64) -> Registration {
        Registration {
            prefix: n(prefix),
            node: node.into(),
            face: 300,
            origin: 0,
            cost: 0,
            flags: 1,
            expires_ms,
            owner_key: None,
            announcement: None,
        }
    }

    fn link(a: &str, b: &str, face: u64) -> LinkRecord {
        LinkRecord {
            a: a.into(),
            b: b.into(),
            face_a: face,
            face_b: 0,
            cost: 10,
            rtt_us: 0,
            up: true,
            updated_ms: 1,
        }
    }

    fn core() -> FeedCore {
        let mut c = FeedCore::default();
        c.set_keys(
            [
                ("/ex/r1".to_owned(), vec![1; 32]),
                ("/ex/r2".to_owned(), vec![2; 32]),
            ]
            .into(),
        );
        c
    }

    #[test]
    fn a_local_routers_neighbours_become_link_rows_by_name_and_unknown_keys_wait() {
        let mut c = core();
        c.local(Local::Links(
            n("/ex/r2"),
            vec![
                NeighbourReport {
                    link_key: key(1),
                    face: 21,
                    cost: 10,
                    up: true,
                },
                NeighbourReport {
                    link_key: key(9),
                    face: 29,
                    cost: 10,
                    up: true,
                },
            ],
        ));
        let (w, unknown) = c.link_writes(5);
        assert!(unknown);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].0, "/ex/r2");
        assert_eq!(
            w[0].1
                .iter()
                .map(|l| (l.b.as_str(), l.face_a))
                .collect::<Vec<_>>(),
            vec![("/ex/r1", 21)]
        );
        // Still dirty: written again once the key is known.
        c.set_keys(
            [
                ("/ex/r1".to_owned(), vec![1; 32]),
                ("/ex/r2".to_owned(), vec![2; 32]),
                ("/ex/r9".to_owned(), vec![9; 32]),
            ]
            .into(),
        );
        let (w, unknown) = c.link_writes(6);
        assert!(!unknown);
        assert_eq!(w[0].1.len(), 2);
        assert!(c.link_writes(7).0.is_empty());
        c.local(Local::Gone(n("/ex/r2")));
        assert_eq!(c.link_writes(8).0, vec![("/ex/r2".to_owned(), vec![])]);
    }

    #[test]
    fn a_router_served_elsewhere_is_reported_with_its_links_and_registrations_until_they_go() {
        let mut c = core();
        // r2 is ours: its own rows never make it remote.
        c.local(Local::Links(n("/ex/r2"), vec![]));
        let ops = c.registrations(
            vec![
                RegistryOp::Put(reg("/app", "/ex/r1", 100)),
                RegistryOp::Put(reg("/mine", "/ex/r2", 100)),
                RegistryOp::Put(reg("/old", "/ex/r1", 10)),
            ],
            true,
            50,
        );
        assert!(matches!(&ops[2], RegistryOp::Remove(k) if k.prefix == n("/old")));
        c.set_links(vec![
            link("/ex/r1", "/ex/r2", 12),
            link("/ex/r2", "/ex/r1", 21),
        ]);
        let out = c.remote();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].name, n("/ex/r1"));
        assert_eq!(out[0].link_key, Some(key(1)));
        let report = out[0].report.as_ref().unwrap();
        assert_eq!(report.neighbours.len(), 1);
        assert_eq!(
            (
                report.neighbours[0].link_key.clone(),
                report.neighbours[0].face
            ),
            (key(2), 12)
        );
        assert_eq!(report.registrations.len(), 1);
        assert_eq!(report.registrations[0].prefix, n("/app"));
        // Nothing changed: nothing to tell.
        assert!(c.remote().is_empty());
        // The registration withdrawn: the report without it.
        c.registrations(
            vec![RegistryOp::Remove(reg("/app", "/ex/r1", 100).key())],
            false,
            60,
        );
        let out = c.remote();
        assert!(out[0].report.as_ref().unwrap().registrations.is_empty());
        // Its links expired and no registration left: it leaves.
        c.set_links(vec![link("/ex/r2", "/ex/r1", 21)]);
        let out = c.remote();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].report, None);
    }

    #[test]
    fn the_state_machine_routes_to_a_remote_router_while_both_ends_report_the_link() {
        use crate::objects::ConfigBody;
        use crate::serve::state::ControllerState;
        let mut s = ControllerState::new(2);
        // r2 is ours (connection 2) and reports r1 as a neighbour through face 21.
        s.connected(&n("/ex/r2"), Some(key(2)), 2);
        s.report(
            2,
            Report {
                neighbours: vec![NeighbourReport {
                    link_key: key(1),
                    face: 21,
                    cost: 10,
                    up: true,
                }],
                ..Report::default()
            },
        );
        let remote = |neighbours: Vec<NeighbourReport>| Report {
            neighbours,
            registrations: vec![RegistrationReport {
                prefix: n("/app"),
                face: 300,
                cost: 0,
            }],
            faces: vec![],
        };
        let to_r2 = NeighbourReport {
            link_key: key(2),
            face: 12,
            cost: 10,
            up: true,
        };
        let fib_has_app = |pushes: &[crate::serve::state::Push]| {
            pushes.iter().any(|p| match &p.object.body {
                ConfigBody::FibSnapshot(f) => f.contains_key(&n("/app")),
                ConfigBody::FibDiff(d) => d.upserts.iter().any(|(p, _)| *p == n("/app")),
                _ => false,
            })
        };
        // r1 (another controller's) with its registration but no link of its own: one end
        // only, nothing routed.
        let pushes = s.remote(&n("/ex/r1"), Some(key(1)), Some(remote(vec![])));
        assert!(!fib_has_app(&pushes));
        // Its end of the link too: r2 routes /app through face 21; only r2 is published to.
        let pushes = s.remote(
            &n("/ex/r1"),
            Some(key(1)),
            Some(remote(vec![to_r2.clone()])),
        );
        assert!(fib_has_app(&pushes));
        assert!(pushes.iter().all(|p| p.conn == 2));
        let r2 = s.fibs().into_iter().find(|f| f.router == "/ex/r2").unwrap();
        assert_eq!(r2.fib.get(&n("/app")).unwrap()[0].face, 21);
        // Its registrations are not this controller's to store.
        assert!(s.registrations().is_empty());
        // It leaves: the route goes.
        let pushes = s.remote(&n("/ex/r1"), None, None);
        match &pushes[0].object.body {
            ConfigBody::FibDiff(d) => assert_eq!(d.removals, vec![n("/app")]),
            other => panic!("{other:?}"),
        }
        // A router connected here ignores what the database says about it.
        s.connected(&n("/ex/r1"), Some(key(1)), 1);
        assert!(s
            .remote(&n("/ex/r1"), Some(key(1)), Some(remote(vec![to_r2])))
            .is_empty());
    }
}
