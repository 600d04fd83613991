//! `nameway ping` and `nameway ping-server`, compatible with ndn-tools' ndnping protocol
//! version 1: probes are `<prefix>/ping/[<identifier>/]<seq>` (seq in decimal ASCII), with
//! MustBeFresh and without CanBePrefix; the server registers `<prefix>/ping` and answers with
//! Data of the same name (ContentType BLOB, DigestSha256).

use std::collections::VecDeque;
use std::process::ExitCode;
use std::time::Duration;

use bytes::Bytes;
use nameway_wire::name::Component;
use nameway_wire::security::DigestSha256;
use nameway_wire::{Data, Interest, InterestView, MetaInfo, Name};
use serde::Serialize;
use tokio::time::Instant;

use crate::client::{self, parse_name, random_u32, random_u64, Incoming};
use crate::output::{outln, print_json};
use crate::stop::Stop;

/// Arguments of `nameway ping`.
#[derive(Debug, clap::Args)]
pub(crate) struct PingArgs {
    /// Prefix the ping server serves; probes are <prefix>/ping/<seq>.
    prefix: String,
    /// Stop after this many probes (default: until interrupted).
    #[arg(short = 'c', long)]
    count: Option<u64>,
    /// Milliseconds between probes.
    #[arg(short = 'i', long, default_value_t = 1000, value_name = "MS")]
    interval: u64,
    /// Milliseconds before a probe counts as lost (also its InterestLifetime).
    #[arg(short = 'o', long, default_value_t = 4000, value_name = "MS")]
    timeout: u64,
    /// Send each probe as soon as the previous one is answered, ignoring --interval.
    #[arg(long)]
    flood: bool,
    /// First sequence number (default: random).
    #[arg(short = 'n', long)]
    start_seq: Option<u64>,
    /// Client identifier: probes are <prefix>/ping/<identifier>/<seq>.
    #[arg(short = 'p', long)]
    identifier: Option<String>,
    /// Leave out MustBeFresh, so caches may answer.
    #[arg(short = 'a', long)]
    allow_stale: bool,
    /// Print only the summary.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Print the summary as JSON (no per-probe lines).
    #[arg(long)]
    json: bool,
}

/// Arguments of `nameway ping-server`.
#[derive(Debug, clap::Args)]
pub(crate) struct PingServerArgs {
    /// Prefix to serve; <prefix>/ping is registered.
    prefix: String,
    /// Content size of each reply, in bytes (filled with 'a', as ndnpingserver; at most 8000).
    #[arg(short = 's', long, default_value_t = 0)]
    size: usize,
    /// FreshnessPeriod of replies, in milliseconds.
    #[arg(short = 'x', long, default_value_t = 1000, value_name = "MS")]
    freshness: u64,
    /// Exit after answering this many probes.
    #[arg(short = 'p', long)]
    max_pings: Option<u64>,
    /// Do not print a line per probe.
    #[arg(short = 'q', long)]
    quiet: bool,
}

/// The summary, as `--json` prints it.
#[derive(Debug, Default, Serialize)]
struct Summary {
    prefix: String,
    transmitted: u64,
    received: u64,
    nacked: u64,
    lost: u64,
    lost_percent: f64,
    nacked_percent: f64,
    rtt_ms: Option<RttSummary>,
}

#[derive(Debug, Serialize)]
struct RttSummary {
    min: f64,
    avg: f64,
    max: f64,
    mdev: f64,
}

/// One probe awaiting its answer.
struct Probe {
    seq: u64,
    name: Name,
    sent: Instant,
}

/// Runs `nameway ping`. Exits 0 when at least one probe was answered with Data, 1 otherwise.
///
/// # Errors
/// The forwarder cannot be reached, or the prefix is invalid.
pub(crate) async fn run(transport: Option<&str>, args: &PingArgs) -> anyhow::Result<ExitCode> {
    let prefix = parse_name(&args.prefix)?;
    let mut base = prefix.append(&Component::generic(Bytes::from_static(b"ping")))?;
    if let Some(id) = &args.identifier {
        base = base.append(&Component::generic(Bytes::copy_from_slice(id.as_bytes())))?;
    }
    let mut c = client::connect(transport).await?;
    let conn = c.conn();
    let verbose = !args.quiet && !args.json;
    let mut stop = Stop::catch()?;
    if verbose {
        outln!("PING {prefix}")?;
    }
    let timeout = Duration::from_millis(args.timeout);
    let interval = Duration::from_millis(args.interval.max(1));
    let mut seq = args.start_seq.unwrap_or_else(|| random_u64() >> 1);
    let mut stats = Stats::default();
    let mut pending: VecDeque<Probe> = VecDeque::new();
    let mut next_send = Some(Instant::now());
    loop {
        let sending = args.count.is_none_or(|n| stats.sent < n);
        if !sending && pending.is_empty() {
            break;
        }
        if args.flood {
            next_send = (sending && pending.is_empty()).then(Instant::now);
        } else if !sending {
            next_send = None;
        }
        let expiry = pending.front().map(|p| p.sent + timeout);
        let wake = [next_send, expiry].into_iter().flatten().min();
        tokio::select! {
            incoming = conn.recv() => match incoming? {
                Incoming::Data(wire) => {
                    let Ok(data) = nameway_wire::DataView::new_checked(wire) else { continue };
                    if let Some(p) = take(&mut pending, data.name()) {
                        let rtt = ms(p.sent.elapsed());
                        stats.record(rtt);
                        if verbose {
                            outln!("content from {prefix}: seq={} time={rtt:.3} ms", p.seq)?;
                        }
                    }
                }
                Incoming::Nack {
                    reason, interest, ..
                } => {
                    let Ok(i) = InterestView::new_checked(interest) else { continue };
                    if let Some(p) = take(&mut pending, i.name()) {
                        stats.nacked += 1;
                        if verbose {
                            let rtt = ms(p.sent.elapsed());
                            outln!(
                                "nack from {prefix}: seq={} time={rtt:.3} ms reason={reason}",
                                p.seq
                            )?;
                        }
                    }
                }
                Incoming::Interest(_) => {}
            },
            () = sleep_until(wake) => {}
            _ = stop.recv() => break,
        }
        let now = Instant::now();
        while pending.front().is_some_and(|p| p.sent + timeout <= now) {
            if let Some(p) = pending.pop_front() {
                stats.lost += 1;
                if verbose {
                    outln!("timeout from {prefix}: seq={}", p.seq)?;
                }
            }
        }
        if sending && next_send.is_some_and(|t| t <= now) {
            let name = base.append(&Component::generic(Bytes::from(seq.to_string())))?;
            let mut interest = Interest::new(name.clone());
            interest.must_be_fresh = !args.allow_stale;
            interest.nonce = Some(random_u32());
            interest.lifetime_ms = Some(args.timeout);
            // Timestamp before sending: on loopback, sendto() may deliver the Interest and
            // even process the reply before it returns.
            let sent = Instant::now();
            conn.send(&interest.encode()).await?;
            pending.push_back(Probe { seq, name, sent });
            stats.sent += 1;
            seq = seq.wrapping_add(1);
            next_send = next_send.map(|t| t + interval);
        }
    }
    let summary = stats.summary(&prefix);
    if args.json {
        print_json(&summary)?;
    } else {
        print_summary(&summary, stats.sum_rtt)?;
    }
    Ok(if summary.received > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

async fn sleep_until(t: Option<Instant>) {
    match t {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

fn take(pending: &mut VecDeque<Probe>, name: &Name) -> Option<Probe> {
    let i = pending.iter().position(|p| p.name == *name)?;
    pending.remove(i)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[derive(Debug, Default)]
struct Stats {
    sent: u64,
    received: u64,
    nacked: u64,
    lost: u64,
    min: f64,
    max: f64,
    sum_rtt: f64,
    sum_sq: f64,
}

impl Stats {
    fn record(&mut self, rtt: f64) {
        if self.received == 0 || rtt < self.min {
            self.min = rtt;
        }
        self.max = self.max.max(rtt);
        self.received += 1;
        self.sum_rtt += rtt;
        self.sum_sq += rtt * rtt;
    }

    fn summary(&self, prefix: &Name) -> Summary {
        let pct = |n: u64| {
            if self.sent == 0 {
                0.0
            } else {
                n as f64 * 100.0 / self.sent as f64
            }
        };
        let rtt_ms = (self.received > 0).then(|| {
            let n = self.received as f64;
            let avg = self.sum_rtt / n;
            RttSummary {
                min: self.min,
                avg,
                max: self.max,
                mdev: (self.sum_sq / n - avg * avg).max(0.0).sqrt(),
            }
        });
        Summary {
            prefix: prefix.to_string(),
            transmitted: self.sent,
            received: self.received,
            nacked: self.nacked,
            lost: self.lost,
            lost_percent: pct(self.lost),
            nacked_percent: pct(self.nacked),
            rtt_ms,
        }
    }
}

fn print_summary(s: &Summary, sum_rtt: f64) -> std::io::Result<()> {
    outln!()?;
    outln!("--- {} ping statistics ---", s.prefix)?;
    outln!(
        "{} packets transmitted, {} received, {} nacked, {}% lost, {}% nacked, time {sum_rtt:.3} ms",
        s.transmitted,
        s.received,
        s.nacked,
        round(s.lost_percent),
        round(s.nacked_percent),
    )?;
    if let Some(r) = &s.rtt_ms {
        outln!(
            "rtt min/avg/max/mdev = {:.3}/{:.3}/{:.3}/{:.3} ms",
            r.min,
            r.avg,
            r.max,
            r.mdev
        )?;
    }
    Ok(())
}

/// Percentages with at most two decimals, as ndnping shows them.
fn round(p: f64) -> f64 {
    (p * 100.0).round() / 100.0
}

/// Runs `nameway ping-server` until interrupted (or `--max-pings` answers).
///
/// # Errors
/// The forwarder cannot be reached or refuses the registration.
pub(crate) async fn serve(transport: Option<&str>, args: &PingServerArgs) -> anyhow::Result<()> {
    client::check_content_size("--size", args.size)?;
    let prefix = parse_name(&args.prefix)?;
    let served = prefix.append(&Component::generic(Bytes::from_static(b"ping")))?;
    let mut c = client::connect(transport).await?;
    c.register(&served).await?;
    let mut stop = Stop::catch()?;
    outln!("PING SERVER {prefix}")?;
    let content = Bytes::from(vec![b'a'; args.size]);
    let mut answered = 0u64;
    let conn = c.conn();
    while args.max_pings.is_none_or(|n| answered < n) {
        let incoming = tokio::select! {
            incoming = conn.recv() => incoming?,
            _ = stop.recv() => break,
        };
        let Incoming::Interest(wire) = incoming else {
            continue;
        };
        let Ok(interest) = InterestView::new_checked(wire) else {
            continue;
        };
        let name = interest.name().clone();
        if !served.is_prefix_of(&name) {
            continue;
        }
        let mut data = Data::new(name.clone(), content.clone());
        data.meta_info = Some(MetaInfo {
            freshness_period: Some(args.freshness),
            ..MetaInfo::default()
        });
        // DigestSha256 has no key: signing cannot fail.
        let _ = data.sign(&DigestSha256);
        conn.send(&data.encode()).await?;
        answered += 1;
        if !args.quiet {
            let seq = name.last().map(|c| c.to_string()).unwrap_or_default();
            outln!("interest received: seq={seq}")?;
        }
    }
    outln!()?;
    outln!("--- ping server {prefix} ---")?;
    outln!("{answered} packets processed")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_like_ndnping() {
        let mut s = Stats {
            sent: 4,
            ..Stats::default()
        };
        for rtt in [1.0, 2.0, 3.0] {
            s.record(rtt);
        }
        s.lost = 1;
        let sum = s.summary(&"/p".parse().unwrap());
        let r = sum.rtt_ms.unwrap();
        assert_eq!((r.min, r.avg, r.max), (1.0, 2.0, 3.0));
        assert!((r.mdev - (2.0f64 / 3.0).sqrt()).abs() < 1e-9);
        assert_eq!(sum.lost_percent, 25.0);
    }
}
