//! The HTTP listener (`[http] listen`, off by default): Prometheus metrics at `/metrics`, the
//! status as JSON at `/api/status`, and a status page with plots at `/`.
//!
//! Every request that needs numbers asks the driver for a [`Snapshot`] over a channel; the
//! driver answers between two bursts of packets (see [`crate::mgmt::status`]). A sampler task asks
//! once a second and keeps ten minutes of rates for the page's plots. The exposition format is
//! written by the `prometheus-client` crate (Prometheus text format 0.0.4).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;
use serde::Serialize;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot, Semaphore};

use crate::mgmt::Snapshot;

/// A request for a snapshot: the driver answers on the one-shot channel.
pub type SnapshotRequest = oneshot::Sender<Arc<Snapshot>>;

/// Samples kept for the plots: ten minutes at one a second.
const HISTORY_LEN: usize = 600;
/// Connections served at once; more wait in the listen backlog.
const MAX_CONNECTIONS: usize = 64;
/// A client has this long to send its request headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const STYLE_CSS: &str = include_str!("../assets/style.css");
const UPLOT_JS: &str = include_str!("../assets/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../assets/uPlot.min.css");

/// What the request handlers share.
struct Shared {
    snapshots: mpsc::Sender<SnapshotRequest>,
    history: Mutex<History>,
}

impl Shared {
    async fn snapshot(&self) -> Option<Arc<Snapshot>> {
        let (tx, rx) = oneshot::channel();
        self.snapshots.send(tx).await.ok()?;
        rx.await.ok()
    }
}

/// Binds the listener. Addresses other than loopback are allowed (the operator configured
/// them) but logged as a warning: the page and metrics have no authentication.
///
/// # Errors
/// The address cannot be bound.
pub async fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    if !addr.ip().is_loopback() {
        tracing::warn!(%addr, "HTTP listener is not on loopback: metrics and status are readable by anyone who can reach it");
    }
    TcpListener::bind(addr).await
}

/// Serves HTTP on `listener` until the process ends.
pub async fn serve(listener: TcpListener, snapshots: mpsc::Sender<SnapshotRequest>) {
    let shared = Arc::new(Shared {
        snapshots,
        history: Mutex::new(History::default()),
    });
    tokio::spawn(sample(shared.clone()));
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok(permit) = permits.clone().acquire_owned().await else {
            return;
        };
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::debug!(error = %e, "HTTP accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let shared = shared.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(route(&shared, &req).await) }
            });
            let served = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service)
                .await;
            if let Err(e) = served {
                tracing::debug!(%peer, error = %e, "HTTP connection ended with an error");
            }
            drop(permit);
        });
    }
}

fn response(
    status: StatusCode,
    content_type: &'static str,
    body: impl Into<Bytes>,
) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    r.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

async fn route(shared: &Shared, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return response(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "GET only\n");
    }
    let unavailable = || {
        response(
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain",
            "the forwarder is shutting down\n",
        )
    };
    match req.uri().path() {
        "/metrics" => match shared.snapshot().await {
            Some(s) => match encode_metrics(&s, &Process::read()) {
                Ok(text) => response(
                    StatusCode::OK,
                    "text/plain; version=0.0.4; charset=utf-8",
                    text,
                ),
                Err(_) => response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "text/plain",
                    "encoding failed\n",
                ),
            },
            None => unavailable(),
        },
        "/api/status" => match shared.snapshot().await {
            Some(s) => {
                let history = match shared.history.lock() {
                    Ok(h) => h.clone(),
                    Err(poisoned) => poisoned.into_inner().clone(),
                };
                let body = ApiStatus {
                    snapshot: &s,
                    process: Process {
                        start_time_seconds: s.wall_ms as f64 / 1000.0 - s.uptime_s,
                        ..Process::read()
                    },
                    history: &history,
                };
                match serde_json::to_vec(&body) {
                    Ok(json) => response(StatusCode::OK, "application/json", json),
                    Err(_) => response(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "text/plain",
                        "encoding failed\n",
                    ),
                }
            }
            None => unavailable(),
        },
        "/" | "/index.html" => response(StatusCode::OK, "text/html; charset=utf-8", INDEX_HTML),
        "/app.js" => response(StatusCode::OK, "text/javascript; charset=utf-8", APP_JS),
        "/style.css" => response(StatusCode::OK, "text/css; charset=utf-8", STYLE_CSS),
        "/uPlot.iife.min.js" => {
            response(StatusCode::OK, "text/javascript; charset=utf-8", UPLOT_JS)
        }
        "/uPlot.min.css" => response(StatusCode::OK, "text/css; charset=utf-8", UPLOT_CSS),
        _ => response(StatusCode::NOT_FOUND, "text/plain", "not found\n"),
    }
}

/// The body of `/api/status`.
#[derive(Serialize)]
struct ApiStatus<'a> {
    #[serde(flatten)]
    snapshot: &'a Snapshot,
    process: Process,
    history: &'a History,
}

/// The last minutes, one sample a second: rates from counter differences, and gauges.
#[derive(Clone, Debug, Default, Serialize)]
struct History {
    /// Sample times, seconds since the Unix epoch.
    t: Vec<f64>,
    /// Data sent downstream per second (exchanges, from the producer or the cache).
    exchanges: Vec<f64>,
    /// Interests received per second.
    interests: Vec<f64>,
    /// Bytes of network packets received per second over every face.
    rx_bytes: Vec<f64>,
    /// Bytes of network packets sent per second over every face.
    tx_bytes: Vec<f64>,
    /// PIT entries.
    pit: Vec<f64>,
    /// Content store hits ÷ look-ups in the last second (`null` without look-ups).
    cs_hit_ratio: Vec<Option<f64>>,
    /// Drops per second, by reason.
    drops: BTreeMap<&'static str, Vec<f64>>,
    #[serde(skip)]
    last: Option<Arc<Snapshot>>,
}

impl History {
    fn push(&mut self, s: Arc<Snapshot>) {
        if let Some(prev) = self.last.take() {
            let dt = ((s.wall_ms.saturating_sub(prev.wall_ms)) as f64 / 1000.0).max(1e-3);
            let rate = |now: u64, before: u64| now.saturating_sub(before) as f64 / dt;
            let (f, p) = (&s.forwarder, &prev.forwarder);
            if self.t.len() == HISTORY_LEN {
                self.t.remove(0);
                self.exchanges.remove(0);
                self.interests.remove(0);
                self.rx_bytes.remove(0);
                self.tx_bytes.remove(0);
                self.pit.remove(0);
                self.cs_hit_ratio.remove(0);
                for v in self.drops.values_mut() {
                    v.remove(0);
                }
            }
            self.t.push(s.wall_ms as f64 / 1000.0);
            self.exchanges.push(rate(f.n_out_data, p.n_out_data));
            self.interests
                .push(rate(f.n_in_interests, p.n_in_interests));
            self.rx_bytes.push(rate(f.in_bytes, p.in_bytes));
            self.tx_bytes.push(rate(f.out_bytes, p.out_bytes));
            self.pit.push(f.pit_entries as f64);
            // The store that answers: the decoupled one's tiers when it runs.
            let ((h1, m1), (h0, m0)) = (s.store_hits_misses(), prev.store_hits_misses());
            let hits = h1.saturating_sub(h0);
            let looked = hits + m1.saturating_sub(m0);
            self.cs_hit_ratio
                .push((looked > 0).then(|| hits as f64 / looked as f64));
            let n = self.t.len();
            for (reason, &now) in &f.drops {
                let before = p.drops.get(reason).copied().unwrap_or(0);
                let series = self.drops.entry(reason).or_default();
                series.resize(n - 1, 0.0);
                series.push(rate(now, before));
            }
        }
        self.last = Some(s);
    }
}

/// Asks for a snapshot once a second for the plots.
async fn sample(shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tick.tick().await;
        let Some(s) = shared.snapshot().await else {
            return;
        };
        match shared.history.lock() {
            Ok(mut h) => h.push(s),
            Err(poisoned) => poisoned.into_inner().push(s),
        }
    }
}

crate::stats! {
    /// The process's own figures, from `/proc/self` (Linux), with Prometheus's standard names.
    pub struct Process {
        /// Resident memory size in bytes.
        pub resident_memory_bytes: u64 = gauge("process_resident_memory_bytes"),
        /// User and system CPU time spent in seconds.
        pub cpu_seconds: f64 = counter("process_cpu_seconds"),
        /// Open file descriptors.
        pub open_fds: u64 = gauge("process_open_fds"),
        /// Start time of the process since the Unix epoch in seconds.
        pub start_time_seconds: f64 = gauge("process_start_time_seconds"),
    }
}

/// Clock ticks per second in `/proc/*/stat` (USER_HZ, 100 on every Linux architecture's ABI).
const USER_HZ: f64 = 100.0;

impl Process {
    /// Its families.
    fn families(&self) -> crate::metrics::Families {
        let mut out = crate::metrics::Families::default();
        self.metrics(&[], &mut out);
        out
    }

    fn read() -> Self {
        // Only /proc/self is read: the service unit mounts /proc with `ProcSubset=pid`.
        let mut p = Self::default();
        if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
            if let Some(kb) = status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok())
            {
                p.resident_memory_bytes = kb * 1024;
            }
        }
        if let Ok(stat) = std::fs::read_to_string("/proc/self/stat") {
            // Fields after the command name (which may hold spaces) in parentheses.
            if let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) {
                let f: Vec<&str> = rest.split_whitespace().collect();
                // rest starts at field 3 (state): utime is field 14, stime 15.
                let field = |n: usize| f.get(n - 3).and_then(|v| v.parse::<u64>().ok());
                if let (Some(u), Some(s)) = (field(14), field(15)) {
                    p.cpu_seconds = (u + s) as f64 / USER_HZ;
                }
            }
        }
        if let Ok(dir) = std::fs::read_dir("/proc/self/fd") {
            p.open_fds = dir.count() as u64;
        }
        p
    }
}

/// Encodes a snapshot in the Prometheus text format.
fn encode_metrics(s: &Arc<Snapshot>, process: &Process) -> Result<String, std::fmt::Error> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(SnapshotCollector {
        snapshot: s.clone(),
        process: Process {
            start_time_seconds: s.wall_ms as f64 / 1000.0 - s.uptime_s,
            ..process.clone()
        },
    }));
    let mut out = String::with_capacity(8192);
    prometheus_client::encoding::prometheus_text::encode(&mut out, &registry)?;
    Ok(out)
}

#[derive(Debug)]
struct SnapshotCollector {
    snapshot: Arc<Snapshot>,
    process: Process,
}

/// Writes one family: its descriptor, then one sample per label set. A family with no sample
/// (a face-labelled family with no face open) is left out.
fn encode_family(
    e: &mut DescriptorEncoder<'_>,
    family: &crate::metrics::Family,
) -> Result<(), std::fmt::Error> {
    use crate::metrics::{Kind, Number};
    let Some(first) = family.samples.first() else {
        return Ok(());
    };
    let counter = family.kind == Kind::Counter;
    let typ = match (counter, first.value) {
        (true, _) => ConstCounter::new(0u64).metric_type(),
        _ => ConstGauge::new(0i64).metric_type(),
    };
    let mut metric = e.encode_descriptor(family.name, &family.help, None, typ)?;
    for sample in &family.samples {
        let labels = &sample.labels;
        let encoder = metric.encode_family(labels)?;
        match (counter, sample.value) {
            (true, Number::Int(v)) => ConstCounter::new(v).encode(encoder)?,
            (true, Number::Real(v)) => ConstCounter::new(v).encode(encoder)?,
            (true, Number::Signed(v)) => ConstCounter::new(v.max(0) as u64).encode(encoder)?,
            (false, Number::Int(v)) => {
                ConstGauge::new(i64::try_from(v).unwrap_or(i64::MAX)).encode(encoder)?
            }
            (false, Number::Signed(v)) => ConstGauge::new(v).encode(encoder)?,
            (false, Number::Real(v)) => ConstGauge::new(v).encode(encoder)?,
        }
    }
    Ok(())
}

impl Collector for SnapshotCollector {
    fn encode(&self, mut e: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        for family in self.snapshot.families().iter() {
            encode_family(&mut e, family)?;
        }
        self.process
            .families()
            .iter()
            .try_for_each(|f| encode_family(&mut e, f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mgmt::faces::FaceStats;
    use crate::mgmt::status::ForwarderStats;

    fn snapshot(wall_ms: u64, out_data: u64, face_bytes: &[(u64, u64)]) -> Arc<Snapshot> {
        Arc::new(Snapshot {
            wall_ms,
            forwarder: ForwarderStats {
                n_out_data: out_data,
                in_bytes: out_data * 100,
                cs_hits: out_data / 2,
                cs_misses: out_data / 2,
                drops: [("no-route", out_data / 10)].into_iter().collect(),
                ..ForwarderStats::default()
            },
            faces: face_bytes
                .iter()
                .map(|&(id, b)| FaceStats {
                    id,
                    in_bytes: b,
                    drops: [("pit-full", 3)].into_iter().collect(),
                    ..FaceStats::default()
                })
                .collect(),
            ..Snapshot::default()
        })
    }

    #[test]
    fn history_turns_counters_into_rates() {
        let mut h = History::default();
        h.push(snapshot(1_000, 0, &[(256, 0), (257, 5_000)]));
        h.push(snapshot(2_000, 100, &[(256, 1_000)]));
        h.push(snapshot(3_000, 300, &[(256, 3_000), (258, 500)]));
        assert_eq!(h.t, vec![2.0, 3.0]);
        assert_eq!(h.exchanges, vec![100.0, 200.0]);
        assert_eq!(h.rx_bytes, vec![10_000.0, 20_000.0]);
        assert_eq!(h.cs_hit_ratio, vec![Some(0.5), Some(0.5)]);
        assert_eq!(h.drops["no-route"], vec![10.0, 20.0]);
    }

    #[test]
    fn history_keeps_ten_minutes() {
        let mut h = History::default();
        for i in 0..(HISTORY_LEN as u64 + 50) {
            h.push(snapshot(i * 1000, i, &[]));
        }
        assert_eq!(h.t.len(), HISTORY_LEN);
        assert_eq!(h.drops["no-route"].len(), HISTORY_LEN);
        assert_eq!(h.t.last().copied(), Some(HISTORY_LEN as f64 + 49.0));
    }

    #[test]
    fn metrics_are_prometheus_text_with_face_labels() {
        let s = snapshot(1_000, 42, &[(256, 7)]);
        let text = encode_metrics(&s, &Process::read()).unwrap();
        assert!(
            text.contains("# TYPE nameway_forwarder_packets_total counter"),
            "{text}"
        );
        assert!(
            text.contains("nameway_forwarder_packets_total{direction=\"out\",type=\"data\"} 42"),
            "{text}"
        );
        assert!(
            text.contains("nameway_face_rx_bytes_total{face=\"256\"} 7"),
            "{text}"
        );
        assert!(
            text.contains(
                "nameway_face_drops_total{face=\"256\",layer=\"forwarder\",reason=\"pit-full\"} 3"
            ),
            "{text}"
        );
        assert!(text.contains("process_resident_memory_bytes "), "{text}");
        assert!(!text.contains("face=\"257\""), "{text}");
    }
}
