//! The decoupled content store in the daemon: the content-store server (`nameway-cs`) on a
//! thread of its own, the forwarder's CS-list built from it before serving, and the blocking
//! calls management makes to it.

use std::sync::mpsc as std_mpsc;
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
    let worker = worker::spawn(server, move |a| {
        let _ = tx.send(a);
    })
    .context("cannot start the content-store worker")?;
    Ok((
        CsHandle {
            client: CsClient {
                requests: worker.requests,
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
                CsRequest::Insert { data, hashes } => Request::Insert {
                    wire: data,
                    arrived_ms: wall_ms(),
                    tag: Some(hashes),
                },
            };
            if self.requests.send(request).is_err() {
                tracing::error!("the content-store worker has stopped");
                return;
            }
        }
    }

    /// Both tiers' figures.
    pub fn info(&self) -> Option<CsInfo> {
        let (tx, rx) = std_mpsc::channel();
        self.requests.send(Request::Info(tx)).ok()?;
        rx.recv_timeout(CALL_TIMEOUT).ok()
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

    /// Changes the policy and capacities.
    pub fn reconfigure(&self, config: &CsConfig) {
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

/// `cs/tiers`: both tiers, the filter and the policy, as `nameway cs info --json` shows them.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Tiers {
    /// Whether the decoupled store runs.
    pub decoupled: bool,
    /// The memory tier's policy.
    pub policy: String,
    /// The memory tier.
    pub memory: Tier,
    /// The disk tier; `null` when there is none.
    pub disk: Option<Tier>,
    /// Why a configured disk tier does not run.
    pub disk_error: Option<String>,
    /// Disk tiers refused since start.
    pub disk_refusals: u64,
    /// Records dropped for a bad checksum.
    pub corrupt_dropped: u64,
    /// CS-list look-ups that went to the server.
    pub filter_hits: u64,
    /// CS-list look-ups that went straight on.
    pub filter_misses: u64,
    /// CS-list hits the server answered with a miss.
    pub filter_false_positives: u64,
    /// Memory the CS-list uses.
    pub filter_bytes: u64,
    /// The CS-list's configured false-positive rate.
    pub filter_fp_rate: f64,
}

/// One tier.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Tier {
    /// Packets held.
    pub entries: u64,
    /// Bytes used.
    pub bytes: u64,
    /// Capacity in packets.
    pub capacity_packets: u64,
    /// Capacity in bytes.
    pub capacity_bytes: u64,
    /// Look-ups answered.
    pub hits: u64,
    /// Look-ups not answered.
    pub misses: u64,
    /// Packets written.
    pub inserts: u64,
    /// Packets evicted.
    pub evictions: u64,
}

impl Tier {
    fn new(t: &nameway_cs::TierInfo) -> Self {
        Self {
            entries: t.entries,
            bytes: t.bytes,
            capacity_packets: t.capacity_packets,
            capacity_bytes: t.capacity_bytes,
            hits: t.stats.hits,
            misses: t.stats.misses,
            inserts: t.stats.inserts,
            evictions: t.stats.evictions,
        }
    }
}

impl Tiers {
    /// From the server's figures and the forwarder's filter.
    pub fn new(info: &CsInfo, fw: &Forwarder) -> Self {
        let f = fw
            .cs_filter()
            .map(|f| (f.counters(), f.size_bytes(), f.fp_rate()));
        Self {
            decoupled: true,
            policy: info.policy.to_string(),
            memory: Tier::new(&info.memory),
            disk: info.disk.as_ref().map(Tier::new),
            disk_error: info.disk_error.clone(),
            disk_refusals: info.disk_refusals,
            corrupt_dropped: info.disk.as_ref().map_or(0, |d| d.stats.corrupt_dropped),
            filter_hits: f.map_or(0, |f| f.0.hits),
            filter_misses: f.map_or(0, |f| f.0.misses),
            filter_false_positives: f.map_or(0, |f| f.0.false_positives),
            filter_bytes: f.map_or(0, |f| f.1 as u64),
            filter_fp_rate: f.map_or(0.0, |f| f.2),
        }
    }

    /// Names stored (the disk holds everything the memory tier holds when it runs).
    pub fn entries(&self) -> u64 {
        self.disk
            .as_ref()
            .map_or(self.memory.entries, |d| d.entries.max(self.memory.entries))
    }

    /// Interests answered by the store.
    pub fn hits(&self) -> u64 {
        self.memory.hits + self.disk.as_ref().map_or(0, |d| d.hits)
    }

    /// Interests the store could not answer: filter misses and false positives.
    pub fn misses(&self) -> u64 {
        self.filter_misses + self.filter_false_positives
    }
}
