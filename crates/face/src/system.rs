//! [`FaceSystem`]: the listeners, the face table, face creation and destruction, sending, and
//! graceful shutdown.

use std::collections::HashMap;
use std::future::Future;
use std::hash::BuildHasherDefault;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

use bytes::Bytes;
use tokio::sync::{mpsc, watch, Semaphore};

use crate::config::{FaceOptions, FaceSystemConfig};
use crate::counters::{bump, AtomicCounters, AtomicSystemCounters, FaceCounters, SystemCounters};
use crate::error::{FaceError, SendError};
use crate::event::{DownReason, FaceEvent, FaceInfo};
use crate::face::{FaceHandle, FaceParams, FaceSender};
use crate::face::{Queued, TxQueue};
use crate::fault::{FaultConfig, FaultInjector};
use crate::id::{FaceId, Persistency};
use crate::udp::UdpChannel;
use crate::unix::UnixSocketFile;
use crate::uri::FaceUri;
use crate::{fault, tcp, udp, unix};

/// The open faces by id.
type FaceMap = HashMap<FaceId, Arc<FaceHandle>, BuildHasherDefault<nameway_wire::hash::IdHasher>>;

/// Slots of a queue configured to hold `n` packets: at least one, and at most what a tokio
/// channel holds (it panics beyond).
fn slots(n: usize) -> usize {
    n.clamp(1, Semaphore::MAX_PERMITS)
}

/// Locks a mutex, ignoring poisoning: every critical section leaves the data consistent.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// State shared by the [`FaceSystem`] and every I/O task.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: FaceSystemConfig,
    next_id: AtomicU64,
    /// Open faces by id (ids are handed out here, so hashed by a multiply, not SipHash).
    faces: Mutex<FaceMap>,
    pub(crate) events: mpsc::Sender<FaceEvent>,
    /// Packet queues of the shards 1.. of a sharded forwarder (empty: every packet goes to
    /// `events`). A face's packets go to its home shard ([`home_shard`]).
    shard_events: Vec<mpsc::Sender<FaceEvent>>,
    /// The runtimes of shards 1.. (`[s - 1]` for shard `s`), once the daemon gave them: an
    /// accepted connection's tasks run on its home shard's (`placement.rs`).
    shard_runtimes: OnceLock<Vec<tokio::runtime::Handle>>,
    /// Chooses an accepted connection's shard from its first packet, once the daemon gave it
    /// (`placement.rs`); unset: round robin by id.
    pub(crate) placer: OnceLock<crate::placement::Placer>,
    pub(crate) counters: AtomicSystemCounters,
    shutdown: watch::Sender<bool>,
    shutting_down: AtomicBool,
    /// Cloned into every task; shutdown waits until all clones are dropped.
    task_guard: Mutex<Option<mpsc::Sender<()>>>,
    epoch: Instant,
    pub(crate) udp: Mutex<Vec<Arc<UdpChannel>>>,
}

/// The shard whose queue receives the packets of `face` among `n` (faces are placed round
/// robin by id; ids are never reused).
pub fn home_shard(face: FaceId, n: usize) -> usize {
    if n <= 1 {
        0
    } else {
        (face.0 % n as u64) as usize
    }
}

impl Shared {
    /// The queue that takes the packets of `face`: its home shard's.
    pub(crate) fn packet_events(&self, face: FaceId) -> &mpsc::Sender<FaceEvent> {
        let n = self.shard_events.len() + 1;
        match home_shard(face, n) {
            0 => &self.events,
            s => self.shard_events.get(s - 1).unwrap_or(&self.events),
        }
    }

    /// Runs `fut` as a task that shutdown waits for.
    pub(crate) fn spawn<F>(&self, fut: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let guard = lock(&self.task_guard).clone();
        // A combinator, not an `async` block: a block would hold `fut` twice (as its capture
        // and as the future it awaits), doubling every face task's memory.
        tokio::spawn(futures_util::FutureExt::map(fut, move |()| drop(guard)));
    }

    /// As [`Shared::spawn`], on the runtime `rt` (a shard's).
    pub(crate) fn spawn_on<F>(&self, rt: &tokio::runtime::Handle, fut: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let guard = lock(&self.task_guard).clone();
        rt.spawn(futures_util::FutureExt::map(fut, move |()| drop(guard)));
    }

    /// The runtime of `face`'s home shard when it is not shard 0 and the daemon gave the
    /// shards' runtimes; `None`: the face runs where it was accepted.
    pub(crate) fn home_runtime(&self, face: FaceId) -> Option<tokio::runtime::Handle> {
        let runtimes = self.shard_runtimes.get()?;
        match home_shard(face, self.shard_events.len() + 1) {
            0 => None,
            s => runtimes.get(s - 1).cloned(),
        }
    }

    /// A new face id (ids are never reused).
    pub(crate) fn next_face_id(&self) -> FaceId {
        FaceId(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// The number of shards the faces' packets go to.
    pub(crate) fn shard_count(&self) -> usize {
        self.shard_events.len() + 1
    }

    /// A new face id whose [`home_shard`] is `shard`: the smallest unused id with that
    /// remainder (the ids skipped are never used; ids are never reused).
    pub(crate) fn next_face_id_on(&self, shard: usize) -> FaceId {
        let n = self.shard_count() as u64;
        let want = shard as u64 % n;
        let mut cur = self.next_id.load(Ordering::Relaxed);
        loop {
            let id = cur + (want + n - cur % n) % n;
            match self.next_id.compare_exchange_weak(
                cur,
                id + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return FaceId(id),
                Err(now) => cur = now,
            }
        }
    }

    /// Milliseconds since the face system started (the link services' clock).
    pub(crate) fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// A receiver that becomes `true` at shutdown.
    pub(crate) fn shutdown_signal(&self) -> watch::Receiver<bool> {
        self.shutdown.subscribe()
    }

    pub(crate) fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::Relaxed)
    }

    /// Adds a face to the table; returns it and the queue its writer reads.
    ///
    /// # Errors
    /// [`FaceError::ShuttingDown`].
    pub(crate) fn register_face(
        self: &Arc<Self>,
        params: FaceParams,
        fault: Option<FaultConfig>,
    ) -> Result<(Arc<FaceHandle>, TxQueue), FaceError> {
        self.register_face_as(self.next_face_id(), params, fault)
    }

    /// [`Shared::register_face`] with an id taken before (by [`Shared::next_face_id`]), so an
    /// accepted connection can be placed on its home shard before its face exists.
    ///
    /// # Errors
    /// [`FaceError::ShuttingDown`].
    pub(crate) fn register_face_as(
        self: &Arc<Self>,
        id: FaceId,
        params: FaceParams,
        fault: Option<FaultConfig>,
    ) -> Result<(Arc<FaceHandle>, TxQueue), FaceError> {
        if self.is_shutting_down() {
            return Err(FaceError::ShuttingDown);
        }
        let face = Arc::new(FaceHandle::new(
            id,
            params,
            slots(self.config.tx_queue),
            self.config.tx_queue_bytes,
        ));
        let rx = TxQueue::new(face.clone());
        // The system-wide debug faults are for links between forwarders: local faces
        // (applications, management) are left alone.
        let system_fault = self
            .config
            .fault
            .filter(|_| face.scope == crate::FaceScope::NonLocal);
        let rx = match fault.or(system_fault) {
            Some(config) => {
                let (inner_tx, inner_rx) = mpsc::channel(slots(self.config.tx_queue));
                let config = FaultConfig {
                    seed: config.seed ^ id.0,
                    ..config
                };
                let injector = FaultInjector::new(config);
                self.spawn(fault::pump(rx, inner_tx, injector, face.clone()));
                TxQueue::unaccounted(inner_rx)
            }
            None => rx,
        };
        lock(&self.faces).insert(id, face.clone());
        bump(&self.counters.faces_created);
        tracing::debug!(face = %id, remote = %face.remote, local = %face.info().local, "face created");
        Ok((face, rx))
    }

    /// Announces a new face to the driver (waits for room in the event queue).
    pub(crate) async fn announce_up(&self, face: &FaceHandle) {
        let event = FaceEvent::Up {
            face: face.id,
            info: Box::new(face.info()),
        };
        let _ = self.events.send(event).await; // the driver is gone: nothing to tell
    }

    /// Removes a closed face and tells the driver. Called once, by the task that owns the
    /// face, after its last packet went up.
    pub(crate) async fn face_closed(&self, face: &FaceHandle, reason: DownReason) {
        lock(&self.faces).remove(&face.id);
        face.set_connected(false);
        face.close(reason.clone());
        // Faces paused until this one drained read again.
        face.wake_waiters();
        self.counters.closed(&reason, &face.counters.snapshot());
        tracing::debug!(face = %face.id, reason = %reason, "face closed");
        let event = FaceEvent::Down {
            face: face.id,
            reason,
        };
        if self.is_shutting_down() {
            let _ = self.events.try_send(event);
        } else {
            let _ = self.events.send(event).await;
        }
    }

    pub(crate) fn face(&self, id: FaceId) -> Option<Arc<FaceHandle>> {
        lock(&self.faces).get(&id).cloned()
    }

    /// The open face whose remote URI is `remote`, if any.
    pub(crate) fn face_by_remote(&self, remote: &FaceUri) -> Option<Arc<FaceHandle>> {
        lock(&self.faces)
            .values()
            .find(|f| f.remote == *remote && f.close_reason().is_none())
            .cloned()
    }

    fn all_faces(&self) -> Vec<Arc<FaceHandle>> {
        lock(&self.faces).values().cloned().collect()
    }
}

/// The faces of one daemon: listeners, face table, sending, and the event queue toward the
/// forwarder driver.
///
/// Start it with [`FaceSystem::start`], which returns the receiving end of the event queue;
/// drain it in bounded bursts. Send with [`FaceSystem::send`] or a cached [`FaceSender`]:
/// sending never waits, a full queue drops and counts.
#[derive(Debug)]
pub struct FaceSystem {
    shared: Arc<Shared>,
    listeners: Vec<FaceUri>,
    unix_file: Option<UnixSocketFile>,
    tasks_done: Mutex<Option<mpsc::Receiver<()>>>,
    /// What the null face (FaceId 255) swallowed.
    null: AtomicCounters,
}

impl FaceSystem {
    /// Opens the listeners of `config` and returns the face system and the event queue.
    ///
    /// Must be called inside a tokio runtime.
    ///
    /// # Errors
    /// [`FaceError::Listen`] or [`FaceError::UnixPathInUse`] when a listener cannot be set up
    /// (nothing is left open then).
    pub async fn start(
        config: FaceSystemConfig,
    ) -> Result<(Self, mpsc::Receiver<FaceEvent>), FaceError> {
        let (system, mut queues) = Self::start_sharded(config, 1).await?;
        let events = queues.remove(0);
        Ok((system, events))
    }

    /// As [`FaceSystem::start`], with one event queue per shard of a sharded forwarder (`n`
    /// queues; 0 and 1 both give one). Queue 0 takes every face's `Up` and `Down` and the
    /// packets of the faces whose [`home_shard`] is 0; queue `s` the packets of the faces whose
    /// home shard is `s`.
    ///
    /// # Errors
    /// As [`FaceSystem::start`].
    pub async fn start_sharded(
        config: FaceSystemConfig,
        n: usize,
    ) -> Result<(Self, Vec<mpsc::Receiver<FaceEvent>>), FaceError> {
        let (events, events_rx) = mpsc::channel(slots(config.event_queue));
        let (shard_events, mut queues): (Vec<_>, Vec<_>) = (1..n.max(1))
            .map(|_| mpsc::channel(slots(config.event_queue)))
            .unzip();
        queues.insert(0, events_rx);
        let (guard_tx, guard_rx) = mpsc::channel(1);
        let shared = Arc::new(Shared {
            config,
            next_id: AtomicU64::new(FaceId::FIRST_DYNAMIC.0),
            faces: Mutex::new(FaceMap::default()),
            events,
            shard_events,
            shard_runtimes: OnceLock::new(),
            placer: OnceLock::new(),
            counters: AtomicSystemCounters::default(),
            shutdown: watch::channel(false).0,
            shutting_down: AtomicBool::new(false),
            task_guard: Mutex::new(Some(guard_tx)),
            epoch: Instant::now(),
            udp: Mutex::new(Vec::new()),
        });
        let mut system = Self {
            shared,
            listeners: Vec::new(),
            unix_file: None,
            tasks_done: Mutex::new(Some(guard_rx)),
            null: AtomicCounters::default(),
        };
        if let Err(e) = system.open_listeners() {
            system.shutdown().await;
            return Err(e);
        }
        Ok((system, queues))
    }

    fn open_listeners(&mut self) -> Result<(), FaceError> {
        let shared = self.shared.clone();
        if let Some(path) = shared.config.unix_path.clone() {
            let (listener, file) = unix::bind(&path)?;
            self.unix_file = Some(file);
            self.listeners.push(FaceUri::Unix(path.clone()));
            shared.spawn(unix::accept_loop(shared.clone(), listener, path));
        }
        for &addr in &shared.config.tcp {
            let listener = tcp::bind(addr).map_err(|e| listen_error(addr, e))?;
            let local = listener.local_addr().map_err(|e| listen_error(addr, e))?;
            let uri = FaceUri::tcp(local);
            self.listeners.push(uri.clone());
            shared.spawn(tcp::accept_loop(shared.clone(), listener, uri));
        }
        for &addr in &shared.config.udp {
            let channel = UdpChannel::bind(addr, true).map_err(|e| listen_error(addr, e))?;
            self.listeners.push(FaceUri::udp(channel.local));
            udp::start_channel(&shared, channel);
        }
        let tls = match &shared.config.websocket_tls {
            Some((cert, key)) if !shared.config.websocket.is_empty() => {
                Some(crate::ws::tls_acceptor(cert, key).map_err(FaceError::Tls)?)
            }
            _ => None,
        };
        for &addr in &shared.config.websocket {
            let listener = tcp::bind(addr).map_err(|e| listen_error(addr, e))?;
            let local = listener.local_addr().map_err(|e| listen_error(addr, e))?;
            let uri = if tls.is_some() {
                FaceUri::Wss(local)
            } else {
                FaceUri::Ws(local)
            };
            self.listeners.push(uri.clone());
            shared.spawn(crate::ws::accept_loop(
                shared.clone(),
                listener,
                uri,
                tls.clone(),
            ));
        }
        Ok(())
    }

    /// Gives the runtimes of shards 1.. of a sharded forwarder (`runtimes[s - 1]` for shard
    /// `s`, each driven by its shard's thread): from then on, a stream connection accepted on
    /// a Unix or TCP listener runs its reader and writer on its home shard's runtime
    /// ([`home_shard`]), so that shard's thread reads, forwards and writes that face's packets
    /// without waking another. Connections accepted before stay where they are (their packets
    /// still reach their home shard's queue). Only the first call counts; a forwarder with
    /// one thread never calls it.
    pub fn set_shard_runtimes(&self, runtimes: Vec<tokio::runtime::Handle>) {
        let _ = self.shared.shard_runtimes.set(runtimes);
    }

    /// Places accepted stream connections (Unix, TCP, WebSocket excepted) by their traffic
    /// with a sharded forwarder: a new connection waits (at most
    /// [`crate::placement::PLACE_WAIT`]) for its first packet, which is looked at without
    /// being read; `placer` names the shard that packet belongs to, and the face gets an id
    /// whose [`home_shard`] is that shard, so its I/O and packets start there (before any
    /// packet of it is delivered: nothing to move, nothing to reorder). `None`, or no packet
    /// in time: round robin by id, as without a placer. Only the first call counts.
    pub fn set_placement(&self, placer: crate::placement::Placer) {
        let _ = self.shared.placer.set(placer);
    }

    /// The listening endpoints as bound (port 0 replaced by the real port), in config order:
    /// Unix, then TCP, then UDP.
    pub fn listeners(&self) -> &[FaceUri] {
        &self.listeners
    }

    /// The bound address of the `n`-th TCP listener.
    pub fn tcp_listener(&self, n: usize) -> Option<SocketAddr> {
        self.listeners
            .iter()
            .filter(|u| matches!(u, FaceUri::Tcp(_)))
            .nth(n)?
            .socket_addr()
    }

    /// The bound address of the `n`-th UDP listener.
    pub fn udp_listener(&self, n: usize) -> Option<SocketAddr> {
        self.listeners
            .iter()
            .filter(|u| matches!(u, FaceUri::Udp(_)))
            .nth(n)?
            .socket_addr()
    }

    /// The Unix listener's path.
    pub fn unix_path(&self) -> Option<&Path> {
        self.unix_file.as_ref().map(UnixSocketFile::path)
    }

    /// Creates a face toward `uri` (`tcp4://`, `tcp6://`, `udp4://`, `udp6://`, canonical),
    /// as `faces/create` does. A TCP face is connected before this returns; a UDP face uses
    /// the UDP listener socket that can reach the peer (or an unlistened socket of the same
    /// family), so the peer's replies come back to the same face.
    ///
    /// The face's [`FaceEvent::Up`] is queued by a task, so awaiting this from the task that
    /// drains the event queue cannot deadlock.
    ///
    /// # Errors
    /// [`FaceError::InvalidPersistency`] for on-demand, [`FaceError::UnsupportedScheme`] for
    /// `unix://` and `fd://`, [`FaceError::Exists`] when a face to `uri` exists (its
    /// persistency is raised to `persistency` if lower), [`FaceError::Connect`].
    pub async fn create(
        &self,
        uri: &FaceUri,
        persistency: Persistency,
    ) -> Result<FaceId, FaceError> {
        self.create_with(uri, persistency, FaceOptions::default())
            .await
    }

    /// [`FaceSystem::create`] with per-face options (MTU, fault injection).
    ///
    /// # Errors
    /// As [`FaceSystem::create`].
    pub async fn create_with(
        &self,
        uri: &FaceUri,
        persistency: Persistency,
        options: FaceOptions,
    ) -> Result<FaceId, FaceError> {
        if persistency == Persistency::OnDemand {
            return Err(FaceError::InvalidPersistency);
        }
        if self.shared.is_shutting_down() {
            return Err(FaceError::ShuttingDown);
        }
        if let Some(existing) = self.shared.face_by_remote(uri) {
            existing.raise_persistency(persistency);
            return Err(FaceError::Exists(existing.id));
        }
        if options.secure.is_some() && !matches!(uri, FaceUri::Udp(_) | FaceUri::Tcp(_)) {
            return Err(FaceError::SecureNeedsUdp);
        }
        match uri {
            // It always exists.
            FaceUri::Null => Err(FaceError::Exists(FaceId::NULL)),
            FaceUri::Tcp(addr) => tcp::connect(&self.shared, *addr, persistency, options).await,
            FaceUri::Udp(addr) => udp::create(&self.shared, *addr, persistency, options),
            // Unix and WebSocket faces are only accepted, never created (as in NFD).
            FaceUri::Unix(_) | FaceUri::Fd(_) | FaceUri::Ws(_) | FaceUri::Wss(_) => {
                Err(FaceError::UnsupportedScheme)
            }
        }
    }

    /// Closes a face (`faces/destroy`): its queued packets are flushed, then
    /// [`FaceEvent::Down`] with [`DownReason::Destroyed`] follows. Returns whether the face
    /// existed.
    pub fn destroy(&self, id: FaceId) -> bool {
        if id == FaceId::NULL {
            // Permanent: never destroyed (management refuses the command).
            return false;
        }
        match self.shared.face(id) {
            Some(face) => {
                face.close(DownReason::Destroyed);
                true
            }
            None => false,
        }
    }

    /// Changes a face's persistency (`faces/update`). Returns whether the face exists.
    pub fn set_persistency(&self, id: FaceId, persistency: Persistency) -> bool {
        self.shared
            .face(id)
            .map(|f| f.set_persistency(persistency))
            .is_some()
    }

    /// How many faces [`FaceSystem::list`] would show, without building their descriptions.
    pub fn count(&self) -> usize {
        lock(&self.shared.faces).len() + usize::from(!self.shared.is_shutting_down())
    }

    /// Calls `f` with the counters of every face [`FaceSystem::list`] would show, without building the
    /// faces' descriptions: what a forwarder-wide total needs.
    pub fn for_each_counters(&self, mut f: impl FnMut(&FaceCounters)) {
        for face in self.shared.all_faces() {
            f(&face.counters.snapshot());
        }
        if !self.shared.is_shutting_down() {
            f(&self.null.snapshot());
        }
    }

    /// Every open face, by increasing id: the null face (255) first.
    pub fn list(&self) -> Vec<FaceInfo> {
        let mut faces: Vec<FaceInfo> = self.shared.all_faces().iter().map(|f| f.info()).collect();
        if !self.shared.is_shutting_down() {
            faces.push(self.null_info());
        }
        faces.sort_by_key(|f| f.id);
        faces
    }

    /// One face's properties and counters.
    pub fn info(&self, id: FaceId) -> Option<FaceInfo> {
        if id == FaceId::NULL {
            return Some(self.null_info());
        }
        self.shared.face(id).map(|f| f.info())
    }

    /// The null face as NFD shows it (`makeNullFace`): `null://` both ends, local scope (so a
    /// black-hole route under `/localhost` works), permanent, point-to-point, no MTU limit; its
    /// out counters are what it swallowed.
    fn null_info(&self) -> FaceInfo {
        FaceInfo {
            id: FaceId::NULL,
            kind: crate::id::FaceKind::Null,
            remote: FaceUri::Null,
            local: FaceUri::Null,
            scope: crate::id::FaceScope::Local,
            link_type: crate::id::LinkType::PointToPoint,
            persistency: Persistency::Permanent,
            mtu: None,
            connected: true,
            counters: self.null.snapshot(),
        }
    }

    /// Queues `wire` for sending on `face`. Never waits; a full queue drops and counts.
    ///
    /// # Errors
    /// [`SendError`]; the packet is dropped.
    pub fn send(&self, face: FaceId, wire: Bytes) -> Result<Queued, SendError> {
        self.try_send(face, wire).map_err(|(e, _)| e)
    }

    /// [`FaceSystem::send`], handing the packet back when it was not queued.
    ///
    /// # Errors
    /// As [`FaceSystem::send`], with the packet.
    pub fn try_send(&self, face: FaceId, wire: Bytes) -> Result<Queued, (SendError, Bytes)> {
        if face == FaceId::NULL {
            // Swallowed, and counted.
            self.null.sent(wire.len());
            crate::counters::bump(&self.null.out_network);
            return Ok(Queued::Within);
        }
        match self.shared.face(face) {
            Some(handle) => handle.try_send(wire),
            None => Err((SendError::NoSuchFace, wire)),
        }
    }

    /// Queues `wire` on `face` only while no more than `max_queued` bytes wait there: for
    /// packets worth sending only when the face keeps up (capture records), so they never
    /// take the room, or delay, what the face is sent otherwise. Refusals are the caller's to
    /// count (not the face's `queue-full` drops).
    ///
    /// # Errors
    /// [`SendError::QueueFull`] past `max_queued`, or as [`FaceSystem::send`].
    pub fn send_if_below(
        &self,
        face: FaceId,
        wire: Bytes,
        max_queued: usize,
    ) -> Result<Queued, SendError> {
        let handle = self.shared.face(face).ok_or(SendError::NoSuchFace)?;
        if handle.queued_bytes().saturating_add(wire.len()) > max_queued {
            return Err(SendError::QueueFull);
        }
        handle.send(wire)
    }

    /// Backpressure: `source` sent what `congested` (a local face past its queue's bound) had
    /// to queue, so `source`'s reader stops until `congested` has drained to half its bound,
    /// or `PAUSE_MAX` (200 ms) passes. The application behind `source` then finds its
    /// socket full and waits, instead of its Interests being dropped. Returns whether `source`
    /// could be paused (stream and WebSocket faces only).
    pub fn slow_down(&self, source: FaceId, congested: FaceId) -> bool {
        match (self.shared.face(source), self.shared.face(congested)) {
            (Some(s), Some(c)) if source != congested => s.pause_for(&c),
            _ => false,
        }
    }

    /// A handle to send on `face` without a table look-up per packet.
    pub fn sender(&self, face: FaceId) -> Option<FaceSender> {
        self.shared.face(face).map(FaceSender::new)
    }

    /// Hop-by-hop security: the context given in the configuration, if any.
    pub fn security(&self) -> Option<&Arc<crate::secure::SecurityContext>> {
        self.shared.config.security.as_ref()
    }

    /// Faces with a secure link that is doing something (a handshake started or answered, or
    /// a session): id, remote URI and what the link shows, by increasing face id.
    pub fn neighbours(&self) -> Vec<(FaceId, FaceUri, crate::secure::NeighbourInfo)> {
        let mut out: Vec<_> = self
            .shared
            .all_faces()
            .iter()
            .filter_map(|f| {
                let info = f.secure.as_ref()?.info();
                let active = info.state != crate::secure::LinkState::Idle
                    || info.counters != crate::secure::SecureCounters::default();
                active.then(|| (f.id, f.remote.clone(), info))
            })
            .collect();
        out.sort_by_key(|(id, _, _)| *id);
        out
    }

    /// Whether face `id` has an established secure session now.
    pub fn has_session(&self, id: FaceId) -> bool {
        self.shared
            .face(id)
            .and_then(|f| f.secure.as_ref().map(|s| s.has_session()))
            .unwrap_or(false)
    }

    /// Face `id`'s neighbour holds no session with us (it said so in its answers to the
    /// agents' hellos, e.g. after a restart): the link starts a new handshake if this side
    /// starts them ([`crate::secure::SecureLink::request_rehandshake`]). Returns whether
    /// one will be started.
    pub fn request_rehandshake(&self, id: FaceId) -> bool {
        self.shared
            .face(id)
            .and_then(|f| f.secure.as_ref().map(|s| s.request_rehandshake()))
            .unwrap_or(false)
    }

    /// Stops trusting `key` and ends the sessions established with it. Returns whether the
    /// key was trusted.
    pub fn untrust(&self, key: &crate::secure::PublicKey) -> bool {
        let Some(ctx) = self.security() else {
            return false;
        };
        let was = ctx.untrust(key);
        for f in self.shared.all_faces() {
            if let Some(s) = &f.secure {
                s.revoke(key);
            }
        }
        was
    }

    /// The face system's own counters.
    pub fn counters(&self) -> SystemCounters {
        self.shared.counters.snapshot()
    }

    /// Closes the listeners, flushes and closes every face (each sends its `Down` if the event
    /// queue has room), waits up to [`FaceSystemConfig::shutdown_timeout`] for the tasks, and
    /// removes the Unix socket file. Calling it again does nothing.
    pub async fn shutdown(&self) {
        self.begin_shutdown();
        let done = lock(&self.tasks_done).take();
        if let Some(mut done) = done {
            let _ = tokio::time::timeout(self.shared.config.shutdown_timeout, done.recv()).await;
        }
        if let Some(file) = &self.unix_file {
            file.remove();
        }
    }

    /// The synchronous part of shutdown: signal listeners and faces.
    fn begin_shutdown(&self) {
        self.shared.shutting_down.store(true, Ordering::Relaxed);
        self.shared.shutdown.send_replace(true);
        for face in self.shared.all_faces() {
            face.close(DownReason::Shutdown);
        }
        lock(&self.shared.task_guard).take();
    }
}

impl Drop for FaceSystem {
    /// Dropping without [`FaceSystem::shutdown`] still stops the listeners and faces (without
    /// waiting) and removes the Unix socket file.
    fn drop(&mut self) {
        self.begin_shutdown();
        if let Some(file) = &self.unix_file {
            file.remove();
        }
    }
}

fn listen_error(addr: SocketAddr, source: std::io::Error) -> FaceError {
    FaceError::Listen {
        addr: addr.to_string(),
        source,
    }
}

/// Whether `addr` is on this host's loopback (127.0.0.0/8, ::1, or IPv4-mapped loopback).
pub(crate) fn is_loopback(addr: SocketAddr) -> bool {
    addr.ip().to_canonical().is_loopback()
}

/// Path of a Unix socket, for messages.
pub(crate) fn path_string(path: &Path) -> String {
    path.display().to_string()
}
