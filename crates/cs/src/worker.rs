//! A [`CsServer`] on a thread of its own: the forwarder sends [`Request`]s and gets
//! [`Answer`]s through a callback, so neither side blocks on the other and this crate needs no
//! async runtime. Disk writes are committed when enough is queued or the worker has been idle
//! for [`IDLE_FLUSH`].
//!
//! The request channel is bounded where it could grow: inserts go through
//! [`Shared::reserve`], which refuses (and counts) an insert when the bytes queued and not yet
//! taken by the worker reach the limit, so a producer faster than the disk cannot grow the
//! process's memory. Look-ups are never refused (each stands for a pending Interest, which the
//! forwarder's PIT already bounds), nor are the rare control requests.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::{Change, CsInfo, CsServer, PolicyKind, Query};

/// Queued disk writes are committed after this long without requests.
pub const IDLE_FLUSH: Duration = Duration::from_millis(5);

/// What the forwarder asks.
#[derive(Debug)]
pub enum Request {
    /// Find a Data for an Interest; answered with [`Answer::Lookup`] carrying `token`.
    Lookup {
        /// Chosen by the caller to match the answer.
        token: u64,
        /// What to look for.
        query: Query,
        /// Wall-clock now, ms since the Unix epoch (for MustBeFresh).
        now_ms: u64,
    },
    /// Admit a Data.
    Insert {
        /// The Data TLV.
        wire: Bytes,
        /// Wall-clock arrival, ms since the Unix epoch.
        arrived_ms: u64,
        /// Given back in the [`Change`]s about it.
        tag: crate::Tag,
    },
    /// Erase up to `limit` names under a prefix (its TLV-VALUE); the count is sent on `reply`.
    Erase {
        /// The prefix's TLV-VALUE.
        prefix_key: Bytes,
        /// Most names erased.
        limit: usize,
        /// Where the count goes.
        reply: mpsc::Sender<usize>,
    },
    /// Change the policy and capacities: memory (packets, bytes), disk (packets, bytes).
    Reconfigure {
        /// Memory tier policy.
        policy: PolicyKind,
        /// Memory tier capacity.
        memory: (usize, usize),
        /// Disk tier capacity.
        disk: (usize, u64),
    },
    /// Both tiers' figures, sent on `reply`.
    Info(mpsc::Sender<CsInfo>),
    /// Commit queued disk writes, then answer on `reply`.
    Flush(mpsc::Sender<()>),
}

/// What the worker tells the forwarder.
#[derive(Debug)]
pub enum Answer {
    /// The answer to [`Request::Lookup`]: the Data, or `None` (a miss).
    Lookup {
        /// The request's token.
        token: u64,
        /// The Data found.
        data: Option<Bytes>,
    },
    /// Names that entered or left the store (for the filter).
    Changes(Vec<Change>),
}

/// The running worker: send requests on `requests`; dropping every sender stops it after it
/// has committed what is queued.
pub struct Worker {
    /// Requests to the worker.
    pub requests: mpsc::Sender<Request>,
    /// The thread; joins once every sender is dropped.
    pub thread: JoinHandle<()>,
    /// The insert queue's bound and the worker's latest figures.
    pub shared: Arc<Shared>,
}

/// Inserts stored per turn between two looks at the channel, so a look-up waits for at most
/// this many (and for a disk commit, when one is due).
pub const INSERT_BATCH: usize = 32;

/// How often the worker publishes its figures ([`Shared::info`]) while busy.
pub const INFO_INTERVAL: Duration = Duration::from_millis(100);

/// What the worker and its senders share: the bytes of inserts sent and not yet taken, their
/// bound, the inserts refused, and the worker's latest figures (so a reader never waits for a
/// worker that is busy committing).
#[derive(Debug)]
pub struct Shared {
    queued: AtomicUsize,
    limit: AtomicUsize,
    dropped: AtomicU64,
    dropped_bytes: AtomicU64,
    info: Mutex<Option<CsInfo>>,
}

impl Shared {
    /// A bound of `limit` bytes of queued inserts.
    pub fn new(limit: usize) -> Self {
        Self {
            queued: AtomicUsize::new(0),
            limit: AtomicUsize::new(limit),
            dropped: AtomicU64::new(0),
            dropped_bytes: AtomicU64::new(0),
            info: Mutex::new(None),
        }
    }

    /// Takes room for an insert of `len` bytes; false, counted as a drop, when the queue holds
    /// too much already. The worker gives the room back when it takes the insert.
    pub fn reserve(&self, len: usize) -> bool {
        let limit = self.limit.load(Ordering::Relaxed);
        let taken = self
            .queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |q| {
                (q.saturating_add(len) <= limit).then_some(q + len)
            })
            .is_ok();
        if !taken {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            self.dropped_bytes.fetch_add(len as u64, Ordering::Relaxed);
        }
        taken
    }

    fn release(&self, len: usize) {
        let _ = self
            .queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |q| {
                Some(q.saturating_sub(len))
            });
    }

    /// Changes the bound.
    pub fn set_limit(&self, limit: usize) {
        self.limit.store(limit, Ordering::Relaxed);
    }

    /// Bytes of inserts queued now.
    pub fn queued_bytes(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    /// The bound.
    pub fn limit(&self) -> usize {
        self.limit.load(Ordering::Relaxed)
    }

    /// Inserts refused because the queue was full, and their bytes.
    pub fn insert_drops(&self) -> (u64, u64) {
        (
            self.dropped.load(Ordering::Relaxed),
            self.dropped_bytes.load(Ordering::Relaxed),
        )
    }

    /// The worker's figures, at most [`INFO_INTERVAL`] old while it works.
    pub fn info(&self) -> Option<CsInfo> {
        self.info
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn publish(&self, info: CsInfo) {
        *self.info.lock().unwrap_or_else(PoisonError::into_inner) = Some(info);
    }
}

/// Starts a worker thread serving `server`, with at most `insert_queue_bytes` of inserts
/// queued (see [`Shared::reserve`]); `answer` is called on that thread for every answer.
///
/// # Errors
/// The thread cannot be spawned.
pub fn spawn(
    mut server: CsServer,
    insert_queue_bytes: usize,
    answer: impl Fn(Answer) + Send + 'static,
) -> std::io::Result<Worker> {
    let (requests, rx) = mpsc::channel::<Request>();
    let shared = Arc::new(Shared::new(insert_queue_bytes));
    shared.publish(server.info());
    let mine = shared.clone();
    let thread = std::thread::Builder::new()
        .name("nameway-cs".into())
        .spawn(move || {
            let shared = mine;
            // Inserts wait here, taken from the channel as soon as they arrive, so that a
            // look-up never waits behind them: each turn answers every look-up that has come,
            // then stores one bounded batch of inserts.
            let mut inserts: VecDeque<Request> = VecDeque::new();
            // Published every INFO_INTERVAL while busy, and as soon as the worker is idle
            // after any change, so a reader sees a reconfiguration at once.
            let mut published = Instant::now();
            let mut dirty = false;
            loop {
                let first = if !inserts.is_empty() {
                    match rx.try_recv() {
                        Ok(r) => Some(r),
                        Err(mpsc::TryRecvError::Empty) => None,
                        Err(mpsc::TryRecvError::Disconnected) => break,
                    }
                } else if server.has_queued() {
                    match rx.recv_timeout(IDLE_FLUSH) {
                        Ok(r) => Some(r),
                        Err(mpsc::RecvTimeoutError::Timeout) => {
                            // Idle: commit what is queued for the disk.
                            server.flush();
                            report(&mut server, &answer);
                            dirty = true;
                            continue;
                        }
                        Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    }
                } else {
                    if dirty {
                        shared.publish(server.info());
                        published = Instant::now();
                    }
                    match rx.recv() {
                        Ok(r) => Some(r),
                        Err(_) => break,
                    }
                };
                for r in first
                    .into_iter()
                    .chain(std::iter::from_fn(|| rx.try_recv().ok()))
                {
                    match r {
                        Request::Insert { .. } => inserts.push_back(r),
                        Request::Lookup { .. } | Request::Info(_) => {
                            handle(&mut server, r, &shared, &answer);
                        }
                        // Erase, reconfigure, flush: after the inserts sent before them.
                        other => {
                            while let Some(i) = inserts.pop_front() {
                                handle(&mut server, i, &shared, &answer);
                            }
                            handle(&mut server, other, &shared, &answer);
                        }
                    }
                }
                for _ in 0..INSERT_BATCH {
                    let Some(i) = inserts.pop_front() else { break };
                    handle(&mut server, i, &shared, &answer);
                }
                report(&mut server, &answer);
                dirty = true;
                if published.elapsed() >= INFO_INTERVAL {
                    shared.publish(server.info());
                    (published, dirty) = (Instant::now(), false);
                }
            }
            while let Some(i) = inserts.pop_front() {
                handle(&mut server, i, &shared, &answer);
            }
            server.flush();
            report(&mut server, &answer);
            shared.publish(server.info());
        })?;
    Ok(Worker {
        requests,
        thread,
        shared,
    })
}

fn report(server: &mut CsServer, answer: &impl Fn(Answer)) {
    let changes = server.take_changes();
    if !changes.is_empty() {
        answer(Answer::Changes(changes));
    }
}

fn handle(server: &mut CsServer, request: Request, shared: &Shared, answer: &impl Fn(Answer)) {
    match request {
        Request::Lookup {
            token,
            query,
            now_ms,
        } => {
            let data = server.lookup(&query, now_ms);
            answer(Answer::Lookup { token, data });
        }
        Request::Insert {
            wire,
            arrived_ms,
            tag,
        } => {
            shared.release(wire.len());
            if let Err(e) = server.insert_tagged(wire, arrived_ms, tag) {
                tracing::debug!(error = %e, "content store: not a Data, not stored");
            }
        }
        Request::Erase {
            prefix_key,
            limit,
            reply,
        } => {
            let _ = reply.send(server.erase(&prefix_key, limit));
        }
        Request::Reconfigure {
            policy,
            memory,
            disk,
        } => server.reconfigure(policy, memory, disk),
        Request::Info(reply) => {
            let _ = reply.send(server.info());
        }
        Request::Flush(reply) => {
            server.flush();
            let _ = reply.send(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_past_the_bound_are_refused_and_counted_until_the_worker_takes_them() {
        let shared = Shared::new(1000);
        assert!(shared.reserve(600));
        assert!(!shared.reserve(600), "1200 bytes would be queued");
        assert_eq!(shared.insert_drops(), (1, 600));
        assert!(shared.reserve(400));
        assert_eq!(shared.queued_bytes(), 1000);
        shared.release(600);
        assert!(shared.reserve(500));
        assert_eq!(shared.queued_bytes(), 900);
        // Releasing more than is queued never wraps.
        shared.release(10_000);
        assert_eq!(shared.queued_bytes(), 0);
    }
}
