//! A [`CsServer`] on a thread of its own: the forwarder sends [`Request`]s and gets
//! [`Answer`]s through a callback, so neither side blocks on the other and this crate needs no
//! async runtime. Disk writes are committed when enough is queued or the worker has been idle
//! for [`IDLE_FLUSH`].

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

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
}

/// Starts a worker thread serving `server`; `answer` is called on that thread for every answer.
///
/// # Errors
/// The thread cannot be spawned.
pub fn spawn(
    mut server: CsServer,
    answer: impl Fn(Answer) + Send + 'static,
) -> std::io::Result<Worker> {
    let (requests, rx) = mpsc::channel::<Request>();
    let thread = std::thread::Builder::new()
        .name("nameway-cs".into())
        .spawn(move || {
            loop {
                let first = if server.has_queued() {
                    match rx.recv_timeout(IDLE_FLUSH) {
                        Ok(r) => Some(r),
                        Err(mpsc::RecvTimeoutError::Timeout) => None,
                        Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    }
                } else {
                    match rx.recv() {
                        Ok(r) => Some(r),
                        Err(_) => break,
                    }
                };
                let Some(first) = first else {
                    server.flush();
                    report(&mut server, &answer);
                    continue;
                };
                handle(&mut server, first, &answer);
                // Whatever else is waiting, then the changes once.
                while let Ok(r) = rx.try_recv() {
                    handle(&mut server, r, &answer);
                }
                report(&mut server, &answer);
            }
            server.flush();
            report(&mut server, &answer);
        })?;
    Ok(Worker { requests, thread })
}

fn report(server: &mut CsServer, answer: &impl Fn(Answer)) {
    let changes = server.take_changes();
    if !changes.is_empty() {
        answer(Answer::Changes(changes));
    }
}

fn handle(server: &mut CsServer, request: Request, answer: &impl Fn(Answer)) {
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
