//! One face's shared state ([`FaceHandle`]): properties, counters, send queue and close signal,
//! and the public [`FaceSender`].

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::{mpsc, watch};

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
    close: watch::Sender<Option<DownReason>>,
    tx: mpsc::Sender<Bytes>,
}

impl FaceHandle {
    pub(crate) fn new(id: FaceId, params: FaceParams, tx: mpsc::Sender<Bytes>) -> Self {
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
            close: watch::channel(None).0,
            tx,
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
        self.close.send_if_modified(|r| {
            if r.is_some() {
                return false;
            }
            *r = Some(reason);
            true
        })
    }

    pub(crate) fn close_reason(&self) -> Option<DownReason> {
        self.close.borrow().clone()
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<Option<DownReason>> {
        self.close.subscribe()
    }

    /// Queues `wire` for the writer without waiting; a full queue drops and counts.
    pub(crate) fn send(&self, wire: Bytes) -> Result<(), SendError> {
        if self.close.borrow().is_some() {
            return Err(SendError::Closed);
        }
        match self.tx.try_send(wire) {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Full(_)) => {
                bump(&self.counters.drop_queue_full);
                Err(SendError::QueueFull)
            }
            Err(mpsc::error::TrySendError::Closed(_)) => Err(SendError::Closed),
        }
    }
}

/// Waits until a close reason is set and returns it.
pub(crate) async fn closed(rx: &mut watch::Receiver<Option<DownReason>>) -> DownReason {
    match rx.wait_for(Option::is_some).await {
        Ok(r) => r.clone().unwrap_or(DownReason::Shutdown),
        Err(_) => DownReason::Shutdown, // the sender lives as long as the face: not reached
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
    pub fn send(&self, wire: Bytes) -> Result<(), SendError> {
        self.face.send(wire)
    }

    /// Whether the face is closing or closed (sends will fail).
    pub fn is_closed(&self) -> bool {
        self.face.close_reason().is_some()
    }
}
