//! `[forwarder] threads = N`: the forwarding core split into N shards, each on its own thread.
//!
//! Shard 0 is the [`crate::driver::Driver`]'s: it runs management, the RIB and the HTTP
//! listener as with one thread, and its forwarder records every management change
//! ([`Forwarder::start_recording`]); [`Shards::broadcast`] sends them to shards 1..N-1 through
//! the control rings, in order, before any reply of the command leaves (so no packet read after
//! a reply meets a stale FIB). Shards 1..N-1 each run the shard loop (`run_shard`) on an OS
//! thread with a current-thread runtime: they take the packets of the faces placed on them
//! ([`nameway_face::home_shard`]), dispatch them by name (their own forwarder or a hand-off
//! ring), forward what other shards handed them, run their timers and send through the face
//! system (thread-safe). A shard that handed packets to another wakes it once per turn. The
//! shard's runtime also runs the socket I/O of the stream faces accepted with that shard as
//! their home ([`FaceSystem::set_shard_runtimes`]), so their bursts stay on its thread.
//!
//! A packet from a face whose `AddFace` has not reached the shard yet (the face's `Up` goes to
//! shard 0, its packets to its home shard) is parked until the change arrives, at most
//! [`PARK_LIMIT`] packets for [`PARK_TIME`]; past that it is dropped and counted.

mod skew_log;

use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use nameway_face::{FaceEvent, FaceSystem};
use nameway_fw::shard::{Control, ControlOp, PeerTotals, Shard, ShardCounters};
use nameway_fw::{FaceId, Forwarder, Time};
use tokio::sync::{mpsc, Notify};

/// Packets from faces not yet known to a shard kept at most.
pub const PARK_LIMIT: usize = 4096;

/// How long a parked packet waits for its face's `AddFace`.
pub const PARK_TIME: Duration = Duration::from_secs(1);

/// How soon the driver sends changes again when a control ring was full.
pub const PENDING_RETRY: Duration = Duration::from_millis(1);

/// Hand-offs forwarded per ring per turn.
const HANDOFF_BUDGET: usize = 4096;

/// Whether every ring from `shard` has room for what reading a burst may hand off.
fn room_for_burst(shard: &Shard, burst: usize) -> bool {
    shard.handoff_room() >= 2 * burst
}

/// How soon a shard that stopped reading its faces (a ring toward another shard had no room
/// for a burst) looks again.
pub const HANDOFF_RETRY: Duration = Duration::from_millis(1);

/// The forwarding core of the driver: one forwarder, or shard 0 of several.
///
/// Dereferences to the forwarder so management code works unchanged; packets go through
/// [`Core::packet`], which dispatches them when sharded.
#[derive(Debug)]
pub enum Core {
    /// `threads = 1`: today's single forwarder, nothing recorded.
    Single(Box<Forwarder>),
    /// Shard 0 of a sharded forwarder.
    Sharded(Box<Shard>),
}

impl Deref for Core {
    type Target = Forwarder;
    fn deref(&self) -> &Forwarder {
        match self {
            Self::Single(fw) => fw,
            Self::Sharded(s) => s.forwarder(),
        }
    }
}

impl DerefMut for Core {
    fn deref_mut(&mut self) -> &mut Forwarder {
        match self {
            Self::Single(fw) => fw,
            Self::Sharded(s) => s.forwarder_mut(),
        }
    }
}

impl Core {
    /// Whether a burst of `burst` packets read from faces now can be handed to the shards
    /// that own them without a drop: each packet goes to a ring at most once per other shard,
    /// so every ring needs room for the burst, and as much again for what the turn itself
    /// hands off (Nacks of Interests that could not be queued). Otherwise the faces are not
    /// read until the other shards have drained their rings: the sockets hold the rest
    /// (backpressure for stream faces), as a single-threaded forwarder that is busy does.
    pub fn can_read(&self, burst: usize) -> bool {
        match self {
            Self::Single(_) => true,
            Self::Sharded(s) => room_for_burst(s, burst),
        }
    }

    /// Handles a packet read by one of this shard's faces (or injected by management): here,
    /// or handed to the shard that owns its name.
    pub fn packet(&mut self, now: Time, face: FaceId, wire: Bytes) {
        match self {
            Self::Single(fw) => fw.handle_packet(now, face, wire),
            Self::Sharded(s) => s.handle_packet(now, face, wire),
        }
    }
}

crate::stats! {
    /// One shard's dispatch counters (`/metrics`, the status JSON).
    pub struct ShardStats {
        /// Packets read by its faces and forwarded there.
        pub local: u64 = counter("nameway_shard_packets", "kind" = "local")
            help "Packets through each forwarding shard: read and forwarded there (local), handed to another shard (handed_off), received from another (received)",
        /// Packets read by its faces and handed to another shard.
        pub handed_off: u64 = counter("nameway_shard_packets", "kind" = "handed_off"),
        /// Packets received from other shards.
        pub received: u64 = counter("nameway_shard_packets", "kind" = "received"),
        /// Sampling windows in which one dispatch key kept this shard busy while others idled.
        pub skewed_windows: u64 = counter("nameway_shard_skewed_windows")
            help "Sampling windows in which one dispatch key (a name's first K components) kept a forwarding shard busy while the others idled; the log names the key and the [[forwarder.dispatch]] entry that spreads it",
        /// Dominating dispatch keys this shard split.
        pub splits: u64 = counter("nameway_shard_splits")
            help "Dispatch keys a forwarding shard split by one component more after they kept it busy while the others idled ([forwarder] auto_split)",
        /// Interests of a draining split key kept by their old shard (it knew them).
        pub drain_kept: u64 = counter("nameway_shard_drain_interests", "action" = "kept")
            help "Interests of a just-split dispatch key seen by its old shard: kept there (its PIT or dead-nonce list knew them) or moved to the new shard",
        /// Interests of a draining split key moved to their new shard.
        pub drain_moved: u64 = counter("nameway_shard_drain_interests", "action" = "moved"),
        /// Hand-offs dropped because the destination's ring was full.
        pub ring_full: u64 = counter("nameway_shard_drops", "reason" = "ring-full")
            help "Packets a forwarding shard dropped before its forwarder saw them, by reason",
        /// Packets from a face the shard did not know yet, dropped after waiting.
        pub parked_dropped: u64 = counter("nameway_shard_drops", "reason" = "face-unknown"),
        /// PIT entries in this shard.
        pub pit_entries: usize = gauge("nameway_shard_pit_entries")
            help "PIT entries in each forwarding shard",
    }
}

/// What one shard published of its counters.
#[derive(Debug, Default)]
pub struct Report {
    /// Bumped at each publication.
    pub version: u64,
    /// Its forwarder's counters.
    pub totals: PeerTotals,
    /// Its dispatch counters.
    pub counters: ShardCounters,
    /// Packets parked for a face not yet known, then dropped.
    pub parked_dropped: u64,
}

/// Shared between the management shard and the others.
#[derive(Debug)]
pub struct Board {
    /// One report per shard (slot 0 unused: shard 0 is read directly).
    pub reports: Mutex<Vec<Report>>,
    /// Set by management to ask shard `i` for a fresh report.
    pub wanted: Vec<AtomicBool>,
    /// Wakes shard `i`.
    pub notify: Vec<Arc<Notify>>,
    /// Set at shutdown.
    pub stop: AtomicBool,
    /// Bumped whenever a shard publishes.
    pub published: AtomicU64,
    /// A job management waits for, per shard (slot 0 unused).
    jobs: Vec<Mutex<Option<Job>>>,
    /// Faces gone down whose home is shard `i`: it answers once it has forwarded every packet
    /// they sent (slot 0 unused).
    fences: Vec<Mutex<Vec<u64>>>,
    /// Fenced faces: shard 0 may remove them once it has taken its hand-offs.
    fenced: Mutex<Vec<u64>>,
}

/// Work management hands one shard and waits for (between that shard's bursts).
#[derive(Debug)]
struct Job {
    /// Erase up to `limit` packets under `prefix` from the shard's content store.
    prefix: nameway_wire::Name,
    limit: usize,
    /// How many were erased.
    reply: std::sync::mpsc::SyncSender<usize>,
}

/// How long management waits for one shard to do a [`Job`].
const JOB_TIMEOUT: Duration = Duration::from_millis(500);

/// Management's handle on the other shards' forwarders, for what it must do there and wait
/// for (`cs/erase`: the limit holds for every shard's store together).
#[derive(Clone, Debug)]
pub struct Peers {
    board: Arc<Board>,
}

impl Peers {
    /// Erases up to `limit` packets under `prefix` from shards 1.., one after another, until
    /// the limit is reached; returns how many. A shard that does not answer in time (it is
    /// stopping) counts none.
    pub fn cs_erase(&self, prefix: &nameway_wire::Name, limit: usize) -> usize {
        let mut erased = 0;
        for i in 1..self.board.jobs.len() {
            if erased >= limit {
                break;
            }
            let (reply, answer) = std::sync::mpsc::sync_channel(1);
            let job = Job {
                prefix: prefix.clone(),
                limit: limit - erased,
                reply,
            };
            if let Some(slot) = self.board.jobs.get(i) {
                *lock(slot) = Some(job);
            }
            self.board.wake(1 << i);
            match answer.recv_timeout(JOB_TIMEOUT) {
                Ok(n) => erased += n,
                Err(_) => {
                    if let Some(slot) = self.board.jobs.get(i) {
                        lock(slot).take();
                    }
                    tracing::warn!(shard = i, "a forwarding shard did not answer cs/erase");
                }
            }
        }
        erased
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Board {
    fn new(n: usize) -> Self {
        Self {
            reports: Mutex::new((0..n).map(|_| Report::default()).collect()),
            wanted: (0..n).map(|_| AtomicBool::new(false)).collect(),
            notify: (0..n).map(|_| Arc::new(Notify::new())).collect(),
            stop: AtomicBool::new(false),
            published: AtomicU64::new(0),
            jobs: (0..n).map(|_| Mutex::new(None)).collect(),
            fences: (0..n).map(|_| Mutex::new(Vec::new())).collect(),
            fenced: Mutex::new(Vec::new()),
        }
    }

    /// Wakes every shard in `mask`.
    fn wake(&self, mut mask: u64) {
        while mask != 0 {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            if let Some(n) = self.notify.get(i) {
                n.notify_one();
            }
        }
    }
}

/// The management shard's side of the other shards.
#[derive(Debug)]
pub struct Shards {
    control: Control,
    /// Changes not yet sent (a control ring was full).
    pending: VecDeque<ControlOp>,
    board: Arc<Board>,
    threads: Vec<std::thread::JoinHandle<()>>,
    /// Shard 0's skew reports, logged.
    pub(crate) skew_log: skew_log::SkewLog,
}

impl Shards {
    /// The number of shards (shard 0 included).
    pub fn count(&self) -> usize {
        self.control.shards()
    }

    /// Wakes shard 0 when another hands it packets.
    pub fn own_notify(&self) -> Arc<Notify> {
        self.board.notify.first().cloned().unwrap_or_default()
    }

    /// Sends the changes shard 0's forwarder recorded to the other shards, in order, and wakes
    /// them. What does not fit waits for the next call (order kept).
    pub fn broadcast(&mut self, fw: &mut Forwarder) {
        self.pending.extend(fw.take_recorded());
        if self.pending.is_empty() {
            return;
        }
        while let Some(op) = self.pending.front() {
            if self.control.send_from(0, op).is_err() {
                break;
            }
            self.pending.pop_front();
        }
        self.board.wake(!1u64);
    }

    /// A face placed on shard `home` went down (its `Down` reaches shard 0 before shard `home`
    /// may have read its last packets): asks that shard to answer once it has forwarded them,
    /// so that no shard drops them as from an unknown face. [`Shards::take_fenced`] gives the
    /// face back.
    pub fn fence(&self, face: u64, home: usize) {
        if let Some(slot) = self.board.fences.get(home) {
            lock(slot).push(face);
            self.board.wake(1 << home);
        }
    }

    /// The faces whose home shard has forwarded their last packets. Take them before this
    /// turn's hand-offs, which then hold those packets.
    pub fn take_fenced(&self) -> Vec<u64> {
        std::mem::take(&mut *lock(&self.board.fenced))
    }

    /// Management's handle on the other shards.
    pub fn peers(&self) -> Peers {
        Peers {
            board: self.board.clone(),
        }
    }

    /// Whether changes wait for room in a control ring: the driver then turns again within
    /// [`PENDING_RETRY`] to send them, whatever else happens (a burst of changes, such as the
    /// routes of a large configuration, fills the rings faster than the shards apply them).
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Wakes the shards shard 0 handed packets to.
    pub fn wake(&self, mask: u64) {
        self.board.wake(mask);
    }

    /// Asks every other shard for a fresh report and waits for them (at most 20 ms), then
    /// gives shard 0's forwarder their sum.
    pub fn refresh(&self, fw: &mut Forwarder) {
        let n = self.count();
        let before: Vec<u64> = lock(&self.board.reports)
            .iter()
            .map(|r| r.version)
            .collect();
        for i in 1..n {
            if let Some(w) = self.board.wanted.get(i) {
                w.store(true, Ordering::Release);
            }
        }
        self.board.wake(!1);
        let deadline = Instant::now() + Duration::from_millis(20);
        loop {
            let fresh = lock(&self.board.reports)
                .iter()
                .zip(&before)
                .skip(1)
                .all(|(r, v)| r.version > *v);
            if fresh || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        let mut sum = PeerTotals::default();
        for r in lock(&self.board.reports).iter().skip(1) {
            sum.add(&r.totals);
        }
        fw.set_peer_totals(Some(sum));
    }

    /// Every shard's dispatch counters as of the last [`Shards::refresh`] (shard 0's: `own`).
    pub fn stats(&self, own: &Shard) -> Vec<ShardStats> {
        let stat = |c: &ShardCounters, parked: u64, pit: usize| ShardStats {
            local: c.n_local,
            handed_off: c.n_handed_off,
            skewed_windows: c.n_skewed_windows,
            splits: c.n_splits,
            drain_kept: c.n_drain_kept,
            drain_moved: c.n_drain_moved,
            received: c.n_received,
            ring_full: c.n_ring_full,
            parked_dropped: parked,
            pit_entries: pit,
        };
        let reports = lock(&self.board.reports);
        std::iter::once(stat(
            own.counters(),
            0,
            own.forwarder().own_status().n_pit_entries,
        ))
        .chain(
            reports
                .iter()
                .skip(1)
                .map(|r| stat(&r.counters, r.parked_dropped, r.totals.status.n_pit_entries)),
        )
        .collect()
    }

    /// Stops the other shards' threads and waits for them.
    pub fn stop(&mut self) {
        self.board.stop.store(true, Ordering::Release);
        self.board.wake(u64::MAX);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Starts the threads of shards 1.. (`shards` without shard 0) with their event queues.
///
/// # Errors
/// A thread cannot be started.
pub fn start(
    control: Control,
    shards: Vec<Shard>,
    queues: Vec<mpsc::Receiver<FaceEvent>>,
    faces: Arc<FaceSystem>,
    captures: Arc<crate::capture::Captures>,
    start: Instant,
    forwarder: &crate::config::ForwarderConfig,
) -> std::io::Result<Shards> {
    let rx_burst = forwarder.rx_burst.max(1);
    let coalesce = (forwarder.coalesce, forwarder.coalesce_wait());
    let n = shards.len() + 1;
    let board = Arc::new(Board::new(n));
    let mut threads = Vec::new();
    let mut runtimes = Vec::new();
    for (shard, events) in shards.into_iter().zip(queues) {
        let worker = Worker {
            notify: board.notify.get(shard.index()).cloned().unwrap_or_default(),
            shard,
            events,
            faces: faces.clone(),
            captures: captures.clone(),
            board: board.clone(),
            start,
            rx_burst,
            parked: VecDeque::new(),
            parked_dropped: 0,
            fences: Vec::new(),
            skew_log: skew_log::SkewLog::default(),
        };
        let name = format!("nameway-shard-{}", worker.shard.index());
        // The thread builds its runtime and hands back a handle, on which the face system
        // spawns the I/O of the faces whose home is this shard (they run while the thread
        // drives the runtime). A runtime is only ever dropped on its own thread.
        let (handle_tx, handle_rx) = std::sync::mpsc::sync_channel(1);
        threads.push(std::thread::Builder::new().name(name).spawn(move || {
            let mut builder = tokio::runtime::Builder::new_current_thread();
            crate::coalesce::install(&mut builder, coalesce.0, coalesce.1);
            match builder.enable_all().build() {
                Ok(rt) => {
                    let _ = handle_tx.send(Some(rt.handle().clone()));
                    rt.block_on(run_shard(worker));
                }
                Err(e) => {
                    let _ = handle_tx.send(None);
                    tracing::error!(error = %e, "cannot start a shard's runtime");
                }
            }
        })?);
        runtimes.push(handle_rx.recv().ok().flatten());
    }
    // All or nothing: a shard without a runtime leaves every face's I/O on shard 0's.
    if let Some(handles) = runtimes.into_iter().collect::<Option<Vec<_>>>() {
        faces.set_shard_runtimes(handles);
    }
    Ok(Shards {
        control,
        pending: VecDeque::new(),
        board,
        threads,
        skew_log: skew_log::SkewLog::default(),
    })
}

/// One shard's thread.
struct Worker {
    shard: Shard,
    events: mpsc::Receiver<FaceEvent>,
    faces: Arc<FaceSystem>,
    /// Capture sessions (shared with management).
    captures: Arc<crate::capture::Captures>,
    board: Arc<Board>,
    notify: Arc<Notify>,
    start: Instant,
    rx_burst: usize,
    parked: VecDeque<(Time, FaceId, Bytes)>,
    parked_dropped: u64,
    /// Faces gone down, with the events still to read before their last packet is read.
    fences: Vec<(u64, usize)>,
    skew_log: skew_log::SkewLog,
}

impl Worker {
    fn now(&self) -> Time {
        Time::from_nanos(self.start.elapsed().as_nanos() as u64)
    }

    fn packet(&mut self, now: Time, face: FaceId, wire: Bytes) {
        if self.shard.forwarder().face(face).is_none() {
            if self.parked.len() >= PARK_LIMIT {
                self.parked_dropped += 1;
            } else {
                self.parked.push_back((now, face, wire));
            }
            return;
        }
        self.shard.handle_packet(now, face, wire);
    }

    /// Forwards the parked packets whose face is now known; drops those too old.
    fn unpark(&mut self, now: Time) {
        for _ in 0..self.parked.len() {
            let Some((at, face, wire)) = self.parked.pop_front() else {
                break;
            };
            if self.shard.forwarder().face(face).is_some() {
                self.shard.handle_packet(now, face, wire);
            } else if now.as_nanos().saturating_sub(at.as_nanos()) > PARK_TIME.as_nanos() as u64 {
                self.parked_dropped += 1;
            } else {
                self.parked.push_back((at, face, wire));
            }
        }
    }

    /// Sends this shard's output (the same queueing rules as shard 0's driver).
    fn transmit(&mut self, now: Time) {
        for _ in 0..4096 {
            let Some(t) = self.shard.poll_transmit() else {
                return;
            };
            let face = t.face;
            if !self.captures.is_empty() {
                let dir = crate::capture::Direction::Out;
                self.captures.record(&self.faces, face.0, dir, &t.wire);
            }
            if let Some(nack) = crate::driver::queue_transmit(&self.faces, t) {
                self.shard.handle_packet(now, face, nack);
            }
        }
    }

    /// Does the job management handed this shard, if any, and answers it.
    fn run_job(&mut self) {
        let job = self
            .board
            .jobs
            .get(self.shard.index())
            .and_then(|slot| lock(slot).take());
        if let Some(job) = job {
            let erased = self
                .shard
                .forwarder_mut()
                .cs_erase_here(&job.prefix, job.limit);
            let _ = job.reply.send(erased);
        }
    }

    fn publish(&mut self) {
        let totals = PeerTotals::of(self.shard.forwarder());
        let mut reports = lock(&self.board.reports);
        if let Some(r) = reports.get_mut(self.shard.index()) {
            r.version += 1;
            r.totals = totals;
            r.counters = *self.shard.counters();
            r.parked_dropped = self.parked_dropped;
        }
        drop(reports);
        self.board.published.fetch_add(1, Ordering::Release);
    }

    /// Counts the burst read against the fences and takes new ones: every packet of a face
    /// that went down is in this burst or among the events queued now.
    fn take_fences(&mut self, read: usize) {
        for f in &mut self.fences {
            f.1 = f.1.saturating_sub(read);
        }
        let new = self
            .board
            .fences
            .get(self.shard.index())
            .map(|slot| std::mem::take(&mut *lock(slot)))
            .unwrap_or_default();
        let queued = self.events.len();
        self.fences
            .extend(new.into_iter().map(|face| (face, queued)));
    }

    /// Answers the fences whose packets are all forwarded or handed off (after the flush).
    fn answer_fences(&mut self) {
        if self.fences.iter().all(|f| f.1 > 0) {
            return;
        }
        let mut done = Vec::new();
        self.fences.retain(|&(face, left)| {
            if left == 0 {
                done.push(face);
            }
            left > 0
        });
        lock(&self.board.fenced).extend(done);
        self.board.wake(1);
    }

    fn turn(&mut self, burst: &mut Vec<FaceEvent>) {
        let now = self.now();
        self.take_fences(burst.len());
        // Changes first, after the burst was read: a packet read after a command's reply meets
        // the command's change.
        if self.shard.apply_control_at(now) > 0 && !self.parked.is_empty() {
            self.unpark(now);
        }
        self.run_job();
        for ev in burst.drain(..) {
            if let FaceEvent::Packet { face, wire } = ev {
                if !self.captures.is_empty() {
                    let dir = crate::capture::Direction::In;
                    self.captures.record(&self.faces, face.0, dir, &wire);
                }
                self.packet(now, FaceId(face.0), wire);
            }
        }
        self.shard.flush();
        self.board.wake(self.shard.take_woken());
        self.skew_log.check(&mut self.shard);
        // Again before the hand-offs: another shard may have read a packet after a change that
        // this shard had not seen at the start of its turn.
        self.shard.apply_control_at(now);
        self.shard.handle_handoffs(now, HANDOFF_BUDGET);
        if self.shard.poll_timeout().is_some_and(|t| t <= now) {
            self.shard.handle_timeout(now);
        }
        self.transmit(now);
        // Nacks for Interests that could not be queued may be handed off.
        self.shard.flush();
        self.board.wake(self.shard.take_woken());
        self.answer_fences();
        if !self.parked.is_empty() {
            self.unpark(now);
        }
        let index = self.shard.index();
        if self
            .board
            .wanted
            .get(index)
            .is_some_and(|w| w.swap(false, Ordering::AcqRel))
        {
            self.publish();
        }
    }
}

/// The loop of shard 1.. : events, hand-offs, control, timers, output.
async fn run_shard(mut w: Worker) {
    let mut burst = Vec::with_capacity(w.rx_burst);
    // One timer and one wake-up registration for the loop's life (as shard 0's driver,
    // `driver::next_timer`): a new `sleep_until` and `notified()` each turn took the timer
    // wheel's lock and the wake list's lock twice per turn.
    let timer = tokio::time::sleep_until((Instant::now() + crate::driver::IDLE_WAIT).into());
    tokio::pin!(timer);
    let notify = w.notify.clone();
    let mut woken = Box::pin(notify.notified());
    while !w.board.stop.load(Ordering::Acquire) {
        // No room in a ring toward another shard: the faces wait (see `Core::can_read`).
        let read = room_for_burst(&w.shard, w.rx_burst);
        let deadline = w
            .shard
            .poll_timeout()
            .map(|t| w.start + Duration::from_nanos(t.as_nanos()))
            .into_iter()
            .chain(
                (!w.parked.is_empty() || !w.fences.is_empty())
                    .then(|| Instant::now() + Duration::from_millis(10)),
            )
            .chain((!read).then(|| Instant::now() + HANDOFF_RETRY))
            .min();
        crate::driver::next_timer(timer.as_mut(), deadline);
        tokio::select! {
            biased;
            ev = w.events.recv(), if read => match ev {
                Some(ev) => burst.push(ev),
                None => break,
            },
            () = &mut woken => woken.set(notify.notified()),
            () = &mut timer => {}
        }
        while read && burst.len() < w.rx_burst {
            match w.events.try_recv() {
                Ok(ev) => burst.push(ev),
                Err(_) => break,
            }
        }
        crate::coalesce::note_packets(burst.len());
        w.turn(&mut burst);
    }
}

/// The placer of `[forwarder] placement = "traffic"` ([`FaceSystem::set_placement`]): a
/// connection goes to the shard its first packet belongs to by the dispatch rule. A consumer's
/// first Interest names the shard of its names; a producer's first packet is its prefix
/// registration (`rib/register`), which names the shard of the registered prefix when the
/// prefix has at least the default `K` components (a shorter prefix spreads its names over
/// the shards: no preference). Management commands and anything else not routable by name:
/// no preference (round robin by id).
///
/// # Errors
/// The table refuses `n` shards.
pub fn placer(
    table: nameway_fw::shard::DispatchTable,
    n: usize,
) -> anyhow::Result<nameway_face::Placer> {
    // Its own dispatcher: routing a CanBePrefix Interest notes it in the span filter, which
    // must stay the forwarding dispatcher's.
    let dispatcher = nameway_fw::shard::Dispatcher::new(table, n)?;
    Ok(nameway_face::Placer::new(move |wire: &Bytes| {
        place(&dispatcher, wire)
    }))
}

/// The shard the first packet `wire` of a connection asks for (see [`placer`]).
fn place(d: &nameway_fw::shard::Dispatcher, wire: &Bytes) -> Option<usize> {
    let registered = registered_prefix(wire);
    let wire = match &registered {
        Some(prefix) if prefix.len() < d.table().default_k() => return None,
        Some(prefix) => nameway_wire::Interest::new(prefix.clone()).encode(),
        None => wire.clone(),
    };
    match d.route(Time::ZERO, &wire) {
        nameway_fw::shard::Route::Shards(mask) if mask.count_ones() == 1 => {
            usize::try_from(mask.trailing_zeros()).ok()
        }
        _ => None,
    }
}

/// The prefix of a `rib/register` command (`/localhost/nfd/rib/register/<parameters>/...`).
fn registered_prefix(wire: &Bytes) -> Option<nameway_wire::Name> {
    let interest = nameway_wire::Interest::decode(wire).ok()?;
    let name = &interest.name;
    let comp = |i: usize| name.get(i).map(|c| c.value());
    let scope = comp(0).is_some_and(|c| c == b"localhost" || c == b"localhop");
    if !scope || comp(1) != Some(b"nfd") || comp(2) != Some(b"rib") || comp(3) != Some(b"register")
    {
        return None;
    }
    let params =
        nameway_wire::mgmt::ControlParameters::decode(&Bytes::copy_from_slice(comp(4)?)).ok()?;
    params.name
}
