//! Reproduction 6: PIT indexed by name digest: 16 consumer-producer pairs pinging at 1000
//! Interests/s each through one router, with names of 4 and 11 components; the router's CPU and the
//! round trip (average, p99), for namewayd and NFD as the router in the same run.
//!
//! c -- r -- p: the 16 `nameway ping` on c, the 16 `nameway ping-server` on p (both
//! namewayd in every run), r namewayd or NFD. Router CPU is r's user and system time over the
//! measuring window (`/proc/PID/stat`), as a share of one core.

use std::time::{Duration, Instant};

use super::{wait_output, Ctx};
use crate::error::LabError;
use crate::lab::Lab;
use crate::probe::{mean, ping_rtts, quantile};
use crate::process::cpu_seconds;
use crate::report::{Plot, PlotSeries, Report};

const PAIRS: usize = 16;

fn topology(name: &str, router: &str) -> String {
    format!(
        r#"
name = "{name}"
[[node]]
name = "c"
[[node]]
name = "r"
kind = "{router}"
[[node]]
name = "p"
[[link]]
a = "c"
b = "r"
[[link]]
a = "r"
b = "p"
[[route]]
prefix = "/pd"
to = "p"
"#
    )
}

/// The prefix of pair `k` for names of `components` components (the ping adds two: `ping`
/// and the sequence number).
fn prefix(k: usize, components: usize) -> String {
    let mut p = format!("/pd/k{k}");
    for i in 0..components.saturating_sub(4) {
        p.push_str(&format!("/c{i}"));
    }
    p
}

/// One run: (average RTT, p99 RTT, router CPU %, answered share, datagrams the kernel dropped
/// at the router's full receive buffers).
struct Run {
    avg: f64,
    p99: f64,
    cpu: f64,
    cpu_per_exchange: f64,
    answered: f64,
    dropped: u64,
}

async fn measure(
    ctx: &mut Ctx<'_>,
    router: &str,
    components: usize,
    interval_ms: u64,
    count: u64,
) -> Result<Run, LabError> {
    let name = format!(
        "rep-pit-{}{components}",
        if router == "nfd" { "n" } else { "w" }
    );
    let mut lab = ctx.up(&topology(&name, router)).await?;
    let mut servers = Vec::new();
    for k in 0..PAIRS {
        let h = lab.spawn(
            &format!("server-{k}"),
            "p",
            &format!("nameway ping-server {} -q", prefix(k, components)),
            &[],
        )?;
        servers.push(h);
    }
    for h in &servers {
        wait_output(&mut lab, *h, "PING SERVER").await?;
    }
    // The servers registered on p; their routes reach r and c by the lab's routes for /pd.
    let pid = lab
        .pid("r")
        .ok_or_else(|| LabError::repro("pit-digest", "router has no process"))?;
    let netns = lab
        .plan
        .node("r")
        .map(|n| n.netns.clone())
        .unwrap_or_default();
    let dropped0 = crate::net::udp_rcvbuf_errors(&netns).await.unwrap_or(0);
    let cpu0 = cpu_seconds(pid).unwrap_or(0.0);
    let t0 = Instant::now();
    let mut pings = Vec::new();
    for k in 0..PAIRS {
        let cmd = format!(
            "nameway ping {} -i {interval_ms} -c {count} -o 2000",
            prefix(k, components)
        );
        pings.push(lab.spawn(&format!("ping-{k}"), "c", &cmd, &[])?);
    }
    let rtts = collect(&mut lab, &pings, count).await?;
    let wall = t0.elapsed().as_secs_f64();
    let cpu_used = cpu_seconds(pid).unwrap_or(0.0) - cpu0;
    let cpu = cpu_used / wall * 100.0;
    let dropped = crate::net::udp_rcvbuf_errors(&netns)
        .await
        .unwrap_or(0)
        .saturating_sub(dropped0);
    lab.down().await?;
    let sent = count as f64 * PAIRS as f64;
    Ok(Run {
        avg: mean(&rtts),
        p99: quantile(&rtts, 0.99),
        cpu,
        // A probe that was answered crossed the router twice (Interest and Data).
        cpu_per_exchange: cpu_used * 1e6 / rtts.len().max(1) as f64,
        answered: rtts.len() as f64 / sent,
        dropped,
    })
}

async fn collect(lab: &mut Lab, pings: &[usize], count: u64) -> Result<Vec<f64>, LabError> {
    let mut rtts = Vec::new();
    for h in pings {
        lab.wait(*h, Duration::from_secs(60 + count / 100)).await?;
        let log = lab
            .log_of(*h)
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default();
        rtts.extend(ping_rtts(
            &std::fs::read_to_string(&log).unwrap_or_default(),
        ));
    }
    Ok(rtts)
}

/// Runs the reproduction.
///
/// # Errors
/// A lab or a tool fails.
pub(super) async fn run(ctx: &mut Ctx<'_>) -> Result<Report, LabError> {
    let seconds = ctx.pick(20u64, 2);
    // Quick mode runs in CI on debug builds, which cannot forward 16,000 exchanges/s through
    // three forwarders: a tenth of the load there.
    let interval_ms = ctx.pick(1u64, 10);
    let count = seconds * 1000 / interval_ms;
    let mut r = Report::new(
        "pit-digest",
        6,
        "PIT indexed by name digest: router CPU and RTT at 4 and 11 components",
        ctx.quick,
    );
    r.published = "16 consumer-producer pairs, ndnping at 1000 Interests/s each, through one NFD-based router with names of 4 and 11 components: router CPU 91-98 %; average RTT 3.83 ms (4) and 13.19 ms (11) with NFD's PIT, 2.44 ms and 13.12 ms with the PIT indexed by name digest. Our target: RTT independent of name length, router CPU at least 5x below NFD's.".into();
    r.setup = format!(
        "c -- r -- p; 16 `nameway ping -i {interval_ms}` ({} Interests/s each, {seconds} s) on c, 16 `nameway ping-server` on p, one prefix per pair; r is namewayd, then NFD, in the same run; names of 4 components (/pd/kN/ping/SEQ) and 11 (7 more). CPU is r's utime+stime over the window.",
        1000 / interval_ms
    );
    let mut rows = Vec::new();
    for components in [4, 11] {
        let ours = measure(ctx, "nameway", components, interval_ms, count).await?;
        let nfd = match ctx.nfd.is_some() {
            true => Some(measure(ctx, "nfd", components, interval_ms, count).await?),
            false => None,
        };
        // A router that cannot keep up loses probes: that is a result, shown beside the
        // round trips of those answered (the published routers answered all).
        r.row(
            &format!("probes answered, {components} components"),
            "100 %",
            ours.answered * 100.0,
            nfd.as_ref().map(|n| n.answered * 100.0),
            "%",
            (1.0, 100.0),
        );
        let (avg_pub, cpu_pub) = if components == 4 {
            ("3.83 ms (NFD), 2.44 ms (digest)", "91-98 %")
        } else {
            ("13.19 ms (NFD), 13.12 ms (digest)", "91-98 %")
        };
        r.row(
            &format!(
                "datagrams dropped at the router's full socket buffers, {components} components"
            ),
            "n/a",
            ours.dropped as f64,
            nfd.as_ref().map(|n| n.dropped as f64),
            "",
            (0.0, 1e9),
        );
        r.row(
            &format!("average RTT, {components} components"),
            avg_pub,
            ours.avg,
            nfd.as_ref().map(|n| n.avg),
            "ms",
            (0.005, 5000.0),
        );
        r.row(
            &format!("p99 RTT, {components} components"),
            "n/a",
            ours.p99,
            nfd.as_ref().map(|n| n.p99),
            "ms",
            (0.005, 10_000.0),
        );
        r.row(
            &format!("router CPU, {components} components"),
            cpu_pub,
            ours.cpu,
            nfd.as_ref().map(|n| n.cpu),
            "% of a core",
            (0.0, 210.0),
        );
        r.row(
            &format!("router CPU per answered probe, {components} components"),
            "n/a",
            ours.cpu_per_exchange,
            nfd.as_ref().map(|n| n.cpu_per_exchange),
            "µs",
            (0.01, 100_000.0),
        );
        if let Some(n) = &nfd {
            if ours.cpu > 0.0 {
                r.findings.push(format!(
                    "{components} components: NFD's router used {:.1}x namewayd's CPU ({:.1} % vs {:.1} % of a core) while answering {:.0} % of the probes against {:.0} %: {:.1} µs per answered probe against {:.1} µs, {:.1}x (target: at least 5x).",
                    n.cpu / ours.cpu,
                    n.cpu,
                    ours.cpu,
                    n.answered * 100.0,
                    ours.answered * 100.0,
                    n.cpu_per_exchange,
                    ours.cpu_per_exchange,
                    n.cpu_per_exchange / ours.cpu_per_exchange
                ));
            }
        }
        rows.push((components, ours, nfd));
    }
    if let [(_, four, _), (_, eleven, _)] = rows.as_slice() {
        r.findings.push(format!(
            "namewayd's average RTT at 11 components is {:.2}x that at 4 ({:.3} vs {:.3} ms).",
            eleven.avg / four.avg,
            eleven.avg,
            four.avg
        ));
    }
    r.differences = vec![
        "Software forwarders on one 2-core machine shared by the 32 ping processes and the consumer and producer forwarders; the published router had cores of its own. Router CPU is therefore measured, not the round trip alone, to compare the routers.".into(),
        "The same clients (nameway ping and ping-server, ndnping-compatible) in both runs, so the runs differ only in the router.".into(),
        "The published baseline is NFD's PIT (name tree) against a PIT indexed by digest inside NFD; ours is namewayd, whose tables are indexed by name hashes throughout (docs/design.md §3).".into(),
        "Both routers run as configured by default. namewayd asks for large UDP socket buffers; NFD keeps the kernel's default (208 KiB here), which 16,000 datagrams/s overflow whenever NFD is not scheduled for a few milliseconds on these shared cores: the kernel drops them (counted above, UdpRcvbufErrors in the router's namespace) and their probes go unanswered. The default cannot be raised for one namespace (net.core.rmem_default is machine-wide).".into(),
    ];
    let series = |pick: fn(&Run) -> f64, with_nfd: bool| -> Vec<PlotSeries> {
        let mut s = vec![PlotSeries {
            label: "namewayd".into(),
            x: Vec::new(),
            y: rows.iter().map(|(_, o, _)| pick(o)).collect(),
        }];
        if with_nfd {
            s.push(PlotSeries {
                label: "NFD".into(),
                x: Vec::new(),
                y: rows
                    .iter()
                    .filter_map(|(_, _, n)| n.as_ref().map(pick))
                    .collect(),
            });
        }
        s
    };
    let with_nfd = ctx.nfd.is_some();
    let categories = vec!["4 components".to_owned(), "11 components".to_owned()];
    r.plots.push(Plot {
        file: "pit-rtt.png".into(),
        title: "Average RTT, 16 pairs x 1000 Interests/s".into(),
        kind: "bar".into(),
        xlabel: "name length".into(),
        ylabel: "ms".into(),
        logx: false,
        categories: categories.clone(),
        series: series(|r| r.avg, with_nfd),
    });
    r.plots.push(Plot {
        file: "pit-cpu.png".into(),
        title: "Router CPU".into(),
        kind: "bar".into(),
        xlabel: "name length".into(),
        ylabel: "% of one core".into(),
        logx: false,
        categories,
        series: series(|r| r.cpu, with_nfd),
    });
    Ok(r)
}
