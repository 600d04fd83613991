//! Measuring tools the reproductions run from the lab process itself, talking to a node's
//! forwarder over its Unix socket (a socket is a file, reachable from any namespace): a paced
//! consumer that offers a given load, a sampler of faces' byte counters, and parsers of the
//! `nameway` tools' output.

use std::path::Path;
use std::time::{Duration, Instant};

use bytes::Bytes;
use nameway_transport::client::{random_u32, Client, Conn, Incoming, Transport};
use nameway_wire::mgmt::FaceStatus;
use nameway_wire::{Component, DataView, Interest, Name};

use crate::error::LabError;

/// Connects to the forwarder on `socket`.
///
/// # Errors
/// [`LabError::Client`].
pub async fn connect(socket: &Path) -> Result<Client, LabError> {
    Client::connect(Transport::Unix(socket.to_path_buf()))
        .await
        .map_err(|source| LabError::client(socket.display().to_string(), source))
}

/// The faces of the forwarder on `socket`.
///
/// # Errors
/// The dataset cannot be fetched.
pub async fn faces(socket: &Path) -> Result<Vec<FaceStatus>, LabError> {
    let mut c = connect(socket).await?;
    c.list("faces", "list")
        .await
        .map_err(|source| LabError::client(socket.display().to_string(), source))
}

/// What a paced run delivered.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Paced {
    /// Interests sent.
    pub sent: u64,
    /// Data received.
    pub data: u64,
    /// Nacks received.
    pub nacks: u64,
    /// Content bytes of the Data received while sending.
    pub bytes: u64,
    /// Seconds spent sending.
    pub seconds: f64,
}

impl Paced {
    /// Content received per second while sending, in Mbit/s.
    pub fn goodput_mbps(&self) -> f64 {
        if self.seconds > 0.0 {
            self.bytes as f64 * 8.0 / self.seconds / 1e6
        } else {
            0.0
        }
    }
}

/// Sends Interests for `<prefix>/ping/<tag>/<seq>` (unique names, which an ndnping server
/// such as `nameway ping-server` answers) at `rate` per second for `duration`, and counts the
/// Data that come back meanwhile: the load offered and what the path delivered. Interests go
/// out in bursts every millisecond, as a traffic generator's do.
///
/// # Errors
/// The connection fails.
pub async fn paced(
    socket: &Path,
    prefix: &Name,
    tag: &str,
    rate: f64,
    duration: Duration,
) -> Result<Paced, LabError> {
    let node = socket.display().to_string();
    let fail = |source| LabError::client(node.clone(), source);
    let mut conn = Conn::connect(&Transport::Unix(socket.to_path_buf()))
        .await
        .map_err(fail)?;
    let base = prefix
        .append(&Component::generic(Bytes::from_static(b"ping")))
        .and_then(|n| n.append(&Component::generic(Bytes::copy_from_slice(tag.as_bytes()))))
        .map_err(|e| LabError::Node {
            node: node.clone(),
            detail: format!("bad prefix: {e}"),
        })?;
    let mut out = Paced::default();
    let start = Instant::now();
    let tick = Duration::from_millis(1);
    let mut next = start;
    let mut seq = 0u64;
    while start.elapsed() < duration {
        let due = (start.elapsed().as_secs_f64() * rate) as u64;
        while out.sent < due {
            let Ok(name) = base.append(&Component::generic(Bytes::from(seq.to_string()))) else {
                break;
            };
            let mut i = Interest::new(name);
            i.nonce = Some(random_u32());
            i.lifetime_ms = Some(2000);
            conn.queue(&i.encode());
            out.sent += 1;
            seq += 1;
        }
        conn.flush().await.map_err(fail)?;
        next += tick;
        loop {
            tokio::select! {
                biased;
                p = conn.recv() => count(&mut out, p.map_err(fail)?),
                () = tokio::time::sleep_until(next.into()) => break,
            }
        }
    }
    out.seconds = start.elapsed().as_secs_f64();
    Ok(out)
}

fn count(out: &mut Paced, p: Incoming) {
    match p {
        Incoming::Data(wire) => {
            if let Ok(d) = DataView::new_checked(wire) {
                out.data += 1;
                out.bytes += d.content().len() as u64;
            }
        }
        Incoming::Nack { .. } => out.nacks += 1,
        Incoming::Interest(_) => {}
    }
}

/// A time series of the rates of some interfaces.
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// Seconds since the first sample.
    pub t: Vec<f64>,
    /// Per watched interface, Mbit/s received over the interval ending at `t`.
    pub mbps: Vec<Vec<f64>>,
}

/// Samples, every `interval` until `stop` fires (or its sender is dropped), the bytes the
/// interfaces `links` (namespace, interface) have received, as Mbit/s per interval: a
/// consumer alone on its node receives on its node's link exactly what it fetches. The kernel's
/// counters are used, so the figures do not depend on the forwarder (NFD caches its status
/// datasets for a second).
///
/// # Errors
/// An interface cannot be read.
pub async fn sample_links(
    links: &[(String, String)],
    interval: Duration,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) -> Result<Series, LabError> {
    let mut series = Series {
        mbps: vec![Vec::new(); links.len()],
        ..Series::default()
    };
    let start = Instant::now();
    let mut last: Option<(Instant, Vec<u64>)> = None;
    loop {
        let mut bytes = Vec::with_capacity(links.len());
        for (netns, dev) in links {
            bytes.push(crate::net::link_bytes(netns, dev).await?.0);
        }
        let now = Instant::now();
        if let Some((t0, b0)) = &last {
            let dt = now.duration_since(*t0).as_secs_f64();
            series.t.push(now.duration_since(start).as_secs_f64());
            for (k, (b, p)) in bytes.iter().zip(b0).enumerate() {
                series.mbps[k].push(b.saturating_sub(*p) as f64 * 8.0 / dt / 1e6);
            }
        }
        last = Some((now, bytes));
        tokio::select! {
            _ = &mut stop => return Ok(series),
            () = tokio::time::sleep(interval.saturating_sub(now.elapsed())) => {}
        }
    }
}

/// The round-trip times in `nameway ping`'s per-probe lines (`content from /p: seq=3 time=0.412 ms`).
pub fn ping_rtts(output: &str) -> Vec<f64> {
    output
        .lines()
        .filter(|l| l.starts_with("content from"))
        .filter_map(|l| {
            l.split("time=")
                .nth(1)?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .collect()
}

/// The first JSON object in `text` (a tool's `--json` output, which may be pretty-printed and
/// follow other lines).
pub fn json_in(text: &str) -> Option<serde_json::Value> {
    let start = text.find('{')?;
    serde_json::Deserializer::from_str(&text[start..])
        .into_iter::<serde_json::Value>()
        .next()?
        .ok()
}

/// Mean of `v` (NaN when empty).
pub fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The `p`-quantile (0..=1) of `v` by nearest rank (NaN when empty).
pub fn quantile(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let rank = ((p * s.len() as f64).ceil() as usize).clamp(1, s.len());
    s[rank - 1]
}

/// Median of `v` (NaN when empty).
pub fn median(v: &[f64]) -> f64 {
    quantile(v, 0.5)
}

/// Jain's fairness index of `x`: 1 when all are equal, 1/n when one takes everything.
pub fn jain(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    let squares: f64 = x.iter().map(|v| v * v).sum();
    if squares == 0.0 {
        return f64::NAN;
    }
    sum * sum / (x.len() as f64 * squares)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ping_lines_and_statistics() {
        let out = "PING /p\ncontent from /p: seq=1 time=0.500 ms\ntimeout from /p: seq=2\ncontent from /p: seq=3 time=1.500 ms\n";
        let rtts = ping_rtts(out);
        assert_eq!(rtts, [0.5, 1.5]);
        assert_eq!(mean(&rtts), 1.0);
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.99), 99.0);
        assert_eq!(median(&v), 50.0);
        assert!(quantile(&[], 0.5).is_nan());
        assert!((jain(&[1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[1.0, 0.0]) - 0.5).abs() < 1e-12);
        let out = "starting\n{\n  \"goodput_mbps\": 12.5,\n  \"x\": [1]\n}\ntrailer {";
        assert_eq!(json_in(out).unwrap()["goodput_mbps"], 12.5);
        assert!(json_in("no json").is_none());
    }
}
