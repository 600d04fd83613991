//! One face's shared state ([`FaceHandle`]): properties, counters, send queue and close signal,
//! and the public [`FaceSender`].

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::{mpsc, Notify};

use crate::close::CloseSignal;
use crate::queue::{PushError, SendQueue};

use crate::counters::{bump, AtomicCounters};
use crate::error::SendError;
use crate::event::{DownReason, FaceInfo};
use crate::id::{FaceId, FaceKind, FaceScope, LinkType, Persistency};
use crate::secure::SecureLink;
use crate::system::lock;
use crate::uri::FaceUri;

/// What a new face is.
#[derive(Clone, Debug)]
pub(crate) struct FaceParams {
    pub(crate) kind: FaceKind,
    pub(crate) remote: FaceUri,
    pub(crate) local: FaceUri,
    pub(crate) scope: FaceScope,
    pub(crate) persistency: Persistency,
    pub(crate) mtu: Option<usize>,
    pub(crate) secure: Option<Arc<SecureLink>>,
}

/// A face as seen by the table, the I/O tasks and [`FaceSender`]s.
#[derive(Debug)]
pub(crate) struct FaceHandle {
    pub(crate) id: FaceId,
    pub(crate) kind: FaceKind,
    pub(crate) remote: FaceUri,
    local: Mutex<FaceUri>,
    pub(crate) scope: FaceScope,
    pub(crate) mtu: Option<usize>,
    persistency: AtomicU8,
    connected: AtomicBool,
    pub(crate) counters: AtomicCounters,
    /// The security state toward the peer (UDP faces of a forwarder with `[security]`).
    pub(crate) secure: Option<Arc<SecureLink>>,
    close: CloseSignal,
    /// The send queue (empty, it holds no memory beyond itself).
    queue: SendQueue,
    /// Bytes in the send queue now.
    queued: AtomicUsize,
    /// The queue's bound in bytes ([`crate::FaceSystemConfig::tx_queue_bytes`]).
    queue_limit: usize,
    /// Set while this face's reader waits for a congested face to drain.
    paused: AtomicBool,
    resume: Notify,
    /// Faces paused until this face's queue drains.
    waiters: Mutex<Vec<Weak<FaceHandle>>>,
}

/// Whether a packet went into the queue within its bound, or past it (a local face's queue
/// holds up to four times its bound, so that bursts toward applications are not lost; the
/// caller should slow down the face that caused the packet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queued {
    /// Within the bound.
    Within,
    /// Past the bound: queued, but the face is congested.
    Congested,
}

/// A local face's queue holds up to this many times its bound before it drops.
const LOCAL_OVERSHOOT: usize = 4;

/// A face paused by [`FaceHandle::pause`] reads again after this long even if the face it
/// waits for has not drained (a producer that stopped reading must not stop its consumers
/// for ever; past the hard bound they get Nacks).
pub(crate) const PAUSE_MAX: Duration = Duration::from_millis(200);

impl FaceHandle {
    pub(crate) fn new(
        id: FaceId,
        params: FaceParams,
        max_packets: usize,
        queue_limit: usize,
    ) -> Self {
        Self {
            id,
            kind: params.kind,
            remote: params.remote,
            local: Mutex::new(params.local),
            scope: params.scope,
            mtu: params.mtu,
            persistency: AtomicU8::new(params.persistency.to_u8()),
            connected: AtomicBool::new(true),
            counters: AtomicCounters::default(),
            secure: params.secure,
            close: CloseSignal::default(),
            queue: SendQueue::new(max_packets),
            queued: AtomicUsize::new(0),
            queue_limit: queue_limit.max(1),
            paused: AtomicBool::new(false),
            resume: Notify::new(),
            waiters: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn info(&self) -> FaceInfo {
        FaceInfo {
            id: self.id,
            kind: self.kind,
            remote: self.remote.clone(),
            local: lock(&self.local).clone(),
            scope: self.scope,
            link_type: LinkType::PointToPoint,
            persistency: self.persistency(),
            mtu: self.mtu,
            connected: self.connected.load(Ordering::Relaxed),
            counters: self.counters.snapshot(),
        }
    }

    pub(crate) fn persistency(&self) -> Persistency {
        Persistency::from_u8(self.persistency.load(Ordering::Relaxed))
    }

    pub(crate) fn set_persistency(&self, p: Persistency) {
        self.persistency.store(p.to_u8(), Ordering::Relaxed);
    }

    /// Raises the persistency to `p` if it is lower.
    pub(crate) fn raise_persistency(&self, p: Persistency) {
        self.persistency.fetch_max(p.to_u8(), Ordering::Relaxed);
    }

    pub(crate) fn set_connected(&self, up: bool) {
        self.connected.store(up, Ordering::Relaxed);
    }

    pub(crate) fn set_local(&self, local: FaceUri) {
        *lock(&self.local) = local;
    }

    /// Asks the face's tasks to close it; the first reason given wins. Returns whether this
    /// call was the first.
    pub(crate) fn close(&self, reason: DownReason) -> bool {
        self.close.close(reason)
    }

    pub(crate) fn close_reason(&self) -> Option<DownReason> {
        self.close.reason()
    }

    /// Whether the face is closing or closed.
    pub(crate) fn is_closed(&self) -> bool {
        self.close.is_closed()
    }

    /// Waits until the face is asked to close; its reason.
    pub(crate) async fn closed(&self) -> DownReason {
        self.close.closed().await
    }

    /// Queues `wire` for the writer without waiting; a full queue drops and counts. Full is
    /// the byte bound for a non-local face, four times it for a local one.
    pub(crate) fn send(&self, wire: Bytes) -> Result<Queued, SendError> {
        self.try_send(wire).map_err(|(e, _)| e)
    }

    /// [`FaceHandle::send`], handing the packet back when it was not queued (a caller that
    /// answers a refused Interest needs it; keeping a copy of every packet for that costs a
    /// reference count, and an allocation when the packet's buffer was never shared).
    pub(crate) fn try_send(&self, wire: Bytes) -> Result<Queued, (SendError, Bytes)> {
        if self.close.is_closed() {
            return Err((SendError::Closed, wire));
        }
        let len = wire.len();
        let before = self.queued.load(Ordering::Relaxed);
        let hard = match self.scope {
            FaceScope::Local => self.queue_limit.saturating_mul(LOCAL_OVERSHOOT),
            FaceScope::NonLocal => self.queue_limit,
        };
        if before.saturating_add(len) > hard {
            bump(&self.counters.drop_queue_full);
            return Err((SendError::QueueFull, wire));
        }
        match self.queue.push(wire) {
            Ok(()) => {
                self.queued.fetch_add(len, Ordering::Relaxed);
                Ok(if before + len > self.queue_limit {
                    Queued::Congested
                } else {
                    Queued::Within
                })
            }
            Err((PushError::Full, wire)) => {
                bump(&self.counters.drop_queue_full);
                Err((SendError::QueueFull, wire))
            }
            Err((PushError::Closed, wire)) => Err((SendError::Closed, wire)),
        }
    }

    /// Bytes in the send queue now.
    pub(crate) fn queued_bytes(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    /// The writer took `len` bytes from the queue; once it is down to half its bound, the faces
    /// waiting for it read again.
    pub(crate) fn taken(&self, len: usize) {
        let before = self
            .queued
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |q| {
                Some(q.saturating_sub(len))
            })
            .unwrap_or(0);
        if before.saturating_sub(len) <= self.queue_limit / 2 {
            self.wake_waiters();
        }
    }

    /// Lets every face paused for this one read again (it drained, or it closed).
    pub(crate) fn wake_waiters(&self) {
        let waiters = {
            let mut w = lock(&self.waiters);
            if w.is_empty() {
                return;
            }
            std::mem::take(&mut *w)
        };
        for face in waiters.iter().filter_map(Weak::upgrade) {
            face.paused.store(false, Ordering::Relaxed);
            face.resume.notify_one();
        }
    }

    /// Stops this face's reader until `congested` drains (or [`PAUSE_MAX`] passes). Only
    /// stream and WebSocket faces have a reader that can stop; false for the others.
    pub(crate) fn pause_for(self: &Arc<Self>, congested: &FaceHandle) -> bool {
        if !(self.kind.is_stream() || self.kind == FaceKind::WebSocket) {
            return false;
        }
        if !self.paused.swap(true, Ordering::Relaxed) {
            tracing::debug!(face = %self.id, congested = %congested.id, queued = congested.queued_bytes(), "face paused: a face it feeds is congested");
            lock(&congested.waiters).push(Arc::downgrade(self));
            // It may have drained meanwhile.
            if congested.queued_bytes() <= congested.queue_limit / 2 {
                congested.wake_waiters();
            }
        }
        true
    }

    /// Whether the reader should wait before reading more.
    pub(crate) fn is_paused(&self) -> bool {
        self.paused.load(Ordering::Relaxed)
    }

    /// Waits until the face is resumed, [`PAUSE_MAX`] passes, or it closes (the reason).
    pub(crate) async fn wait_resumed(&self) -> Result<(), DownReason> {
        tokio::select! {
            () = self.resume.notified() => {}
            () = tokio::time::sleep(PAUSE_MAX) => {}
            reason = self.closed() => return Err(reason),
        }
        self.paused.store(false, Ordering::Relaxed);
        Ok(())
    }
}

/// A face's send queue, as its writer reads it: every packet taken gives its bytes back to the
/// face's bound. Dropping it closes the queue (later sends fail with [`SendError::Closed`]).
#[derive(Debug)]
pub(crate) struct TxQueue {
    source: Source,
}

#[derive(Debug)]
enum Source {
    /// The face's own queue, whose packets count against its bound.
    Face(Arc<FaceHandle>),
    /// A queue behind another (the fault injector's), whose packets were accounted when they
    /// left the first.
    Behind(mpsc::Receiver<Bytes>),
}

impl TxQueue {
    /// The queue of `face`.
    pub(crate) fn new(face: Arc<FaceHandle>) -> Self {
        Self {
            source: Source::Face(face),
        }
    }

    /// A queue whose packets count against no bound.
    pub(crate) fn unaccounted(rx: mpsc::Receiver<Bytes>) -> Self {
        Self {
            source: Source::Behind(rx),
        }
    }

    /// The next packet; `None` when every sender is gone (only a queue behind another: a
    /// face's own queue lives as long as the face).
    pub(crate) async fn recv(&mut self) -> Option<Bytes> {
        match &mut self.source {
            Source::Face(face) => {
                let pkt = face.queue.pop().await;
                face.taken(pkt.len());
                Some(pkt)
            }
            Source::Behind(rx) => rx.recv().await,
        }
    }

    /// Whether no packet is queued now.
    pub(crate) fn is_empty(&self) -> bool {
        match &self.source {
            Source::Face(face) => face.queue.is_empty(),
            Source::Behind(rx) => rx.is_empty(),
        }
    }

    /// The next packet if one is queued.
    pub(crate) fn try_recv(&mut self) -> Result<Bytes, mpsc::error::TryRecvError> {
        match &mut self.source {
            Source::Face(face) => {
                let pkt = face
                    .queue
                    .try_pop()
                    .ok_or(mpsc::error::TryRecvError::Empty)?;
                face.taken(pkt.len());
                Ok(pkt)
            }
            Source::Behind(rx) => rx.try_recv(),
        }
    }
}

impl Drop for TxQueue {
    fn drop(&mut self) {
        if let Source::Face(face) = &self.source {
            let dropped = face.queue.close();
            face.taken(dropped);
        }
    }
}

/// A cheap, cloneable handle to send on one face without looking it up each time (the
/// forwarder driver's hot path).
#[derive(Clone, Debug)]
pub struct FaceSender {
    face: Arc<FaceHandle>,
}

impl FaceSender {
    pub(crate) fn new(face: Arc<FaceHandle>) -> Self {
        Self { face }
    }

    /// The face.
    pub fn id(&self) -> FaceId {
        self.face.id
    }

    /// Queues `wire` (a complete packet, bare or LpPacket) for sending. Never waits: a full
    /// queue drops the packet and counts it.
    ///
    /// # Errors
    /// [`SendError::QueueFull`] or [`SendError::Closed`]; the packet is dropped either way.
    pub fn send(&self, wire: Bytes) -> Result<Queued, SendError> {
        self.face.send(wire)
    }

    /// Whether the face is closing or closed (sends will fail).
    pub fn is_closed(&self) -> bool {
        self.face.is_closed()
    }
}
