//! The decoupled content store in the daemon: the content-store server (`nameway-cs`) on a
//! thread of its own, the forwarder's CS-list built from it before serving, and the blocking
//! calls management makes to it.

use std::sync::mpsc as std_mpsc;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use bytes::Bytes;
use nameway_cs::worker::{self, Answer, Request};
use nameway_cs::{CsConfig as ServerConfig, CsInfo, CsServer, PolicyKind, Query};
use nameway_fw::{CsFilter, CsRequest, Forwarder};
use nameway_wire::Name;
use tokio::sync::mpsc;

use crate::config::CsConfig;
use crate::wall_ms;

/// Longest a management call waits for the worker (it may be committing to disk).
const CALL_TIMEOUT: Duration = Duration::from_secs(2);

/// Bytes assumed per packet when the disk tier's byte capacity sizes the filter.
const FILTER_BYTES_PER_PACKET: u64 = 4096;

/// The running server's thread, owned by the driver.
pub struct CsHandle {
    /// Requests to the worker (cloned for management).
    pub client: CsClient,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// A way to send requests to the worker.
#[derive(Clone, Debug)]
pub struct CsClient {
    requests: std_mpsc::Sender<Request>,
    /// The insert queue's bound and the worker's latest figures.
    shared: Arc<worker::Shared>,
}

/// The server's configuration from `[cs]`.
fn server_config(c: &CsConfig) -> ServerConfig {
    ServerConfig {
        policy: c.policy.parse().unwrap_or_default(),
        memory_packets: c.capacity,
        memory_bytes: usize::try_from(c.memory_capacity.0).unwrap_or(usize::MAX),
        disk_path: (!c.disk_path.as_os_str().is_empty()).then(|| c.disk_path.clone()),
        disk_packets: usize::MAX,
        disk_bytes: c.disk_capacity.0,
        disk_cache_bytes: 16 << 20,
    }
}

/// Opens the tiers (a disk tier that cannot be used is logged and left out), enters every
/// stored name in a new filter, switches the forwarder to the decoupled store and starts the
/// worker. Answers arrive on the returned channel.
///
/// # Errors
/// The worker thread cannot be started.
pub fn start(
    config: &CsConfig,
    fw: &mut Forwarder,
) -> anyhow::Result<(CsHandle, mpsc::UnboundedReceiver<Answer>)> {
    let sc = server_config(config);
    let filter_capacity = config.capacity.saturating_add(
        usize::try_from(
            sc.disk_path
                .as_ref()
                .map_or(0, |_| sc.disk_bytes / FILTER_BYTES_PER_PACKET),
        )
        .unwrap_or(usize::MAX),
    );
    let (server, _report) = CsServer::open(sc);
    let keys = server.keys();
    fw.enable_external_cs(CsFilter::new(filter_capacity, config.filter_fp_rate));
    let mut bad = 0;
    for key in &keys {
        match Name::from_value(key.clone(), 0) {
            Ok(name) => fw.cs_filter_insert(&name),
            Err(_) => bad += 1,
        }
    }
    tracing::info!(
        names = keys.len(),
        unreadable = bad,
        filter_bytes = fw.cs_filter().map_or(0, CsFilter::size_bytes),
        "content store: CS-list built from the store"
    );
    let (tx, rx) = mpsc::unbounded_channel();
    let queue = usize::try_from(config.insert_queue.0).unwrap_or(usize::MAX);
    let worker = worker::spawn(server, queue, move |a| {
        let _ = tx.send(a);
    })
    .context("cannot start the content-store worker")?;
    Ok((
        CsHandle {
            client: CsClient {
                requests: worker.requests,
                shared: worker.shared,
            },
            thread: Some(worker.thread),
        },
        rx,
    ))
}

impl CsHandle {
    /// Stops the worker after it has committed what is queued, and waits for it.
    pub fn stop(mut self) {
        let (tx, rx) = std_mpsc::channel();
        let _ = self.client.requests.send(Request::Flush(tx));
        let _ = rx.recv_timeout(Duration::from_secs(10));
        drop(self.client);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl CsClient {
    /// Sends the forwarder's requests to the worker.
    pub fn forward(&self, fw: &mut Forwarder) {
        while let Some(r) = fw.poll_cs_request() {
            let request = match r {
                CsRequest::Lookup {
                    token,
                    name,
                    can_be_prefix,
                    must_be_fresh,
                } => Request::Lookup {
                    token,
                    query: Query::new(&name, can_be_prefix, must_be_fresh),
                    now_ms: wall_ms(),
                },
                CsRequest::Insert { data, hashes } => {
                    // Past the bound the Data is not cached (counted), never queued.
                    if !self.shared.reserve(data.len()) {
                        continue;
                    }
                    Request::Insert {
                        wire: data,
                        arrived_ms: wall_ms(),
                        tag: Some(hashes),
                    }
                }
            };
            if self.requests.send(request).is_err() {
                tracing::error!("the content-store worker has stopped");
                return;
            }
        }
    }

    /// Both tiers' figures as the worker last published them (at most
    /// [`worker::INFO_INTERVAL`] old while it works): never waits for a busy worker.
    pub fn info(&self) -> Option<CsInfo> {
        self.shared.info()
    }

    /// The insert queue: bytes queued, its bound, inserts refused and their bytes.
    pub fn insert_queue(&self) -> InsertQueue {
        let (drops, drop_bytes) = self.shared.insert_drops();
        InsertQueue {
            queued_bytes: self.shared.queued_bytes() as u64,
            limit_bytes: self.shared.limit() as u64,
            drops,
            drop_bytes,
        }
    }

    /// Erases up to `limit` names under `prefix`.
    pub fn erase(&self, prefix: &Name, limit: usize) -> Option<usize> {
        let (tx, rx) = std_mpsc::channel();
        self.requests
            .send(Request::Erase {
                prefix_key: Bytes::copy_from_slice(prefix.value_bytes()),
                limit,
                reply: tx,
            })
            .ok()?;
        rx.recv_timeout(CALL_TIMEOUT).ok()
    }

    /// Erases every name under `prefix`, without waiting: the erase is queued behind the
    /// inserts already sent, so a look-up sent after it cannot find them.
    pub fn erase_later(&self, prefix: &Name) {
        let (reply, _) = std_mpsc::channel();
        let _ = self.requests.send(Request::Erase {
            prefix_key: Bytes::copy_from_slice(prefix.value_bytes()),
            limit: usize::MAX,
            reply,
        });
    }

    /// Changes the policy, capacities and the insert queue's bound.
    pub fn reconfigure(&self, config: &CsConfig) {
        self.shared
            .set_limit(usize::try_from(config.insert_queue.0).unwrap_or(usize::MAX));
        let sc = server_config(config);
        let _ = self.requests.send(Request::Reconfigure {
            policy: sc.policy,
            memory: (sc.memory_packets, sc.memory_bytes),
            disk: (sc.disk_packets, sc.disk_bytes),
        });
    }
}

/// Applies one answer of the worker to the forwarder.
pub fn apply(fw: &mut Forwarder, now: nameway_fw::Time, answer: Answer) {
    match answer {
        Answer::Lookup { token, data } => fw.handle_cs_answer(now, token, data),
        Answer::Changes(changes) => {
            for c in changes {
                let (key, tag, added) = match c {
                    nameway_cs::Change::Added(k, t) => (k, t, true),
                    nameway_cs::Change::Removed(k, t) => (k, t, false),
                };
                // The hashes the insert carried; a packet read from disk has none: hash again.
                match (tag, added) {
                    (Some(h), true) => fw.cs_filter_insert_hashes(h.as_slice()),
                    (Some(h), false) => fw.cs_filter_remove_hashes(h.as_slice()),
                    (None, _) => {
                        if let Ok(name) = Name::from_value(key, 0) {
                            if added {
                                fw.cs_filter_insert(&name);
                            } else {
                                fw.cs_filter_remove(&name);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The `policy` of `[cs]` as the server's type (validated at load).
pub fn policy(config: &CsConfig) -> PolicyKind {
    config.policy.parse().unwrap_or_default()
}

/// The insert queue toward the server.
#[derive(Clone, Copy, Debug, Default)]
pub struct InsertQueue {
    /// Bytes of Data queued now.
    pub queued_bytes: u64,
    /// The bound (`[cs] insert_queue`).
    pub limit_bytes: u64,
    /// Data not cached because the queue was full.
    pub drops: u64,
    /// Their bytes.
    pub drop_bytes: u64,
}
