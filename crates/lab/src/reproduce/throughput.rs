//! Reproduction 3: Received throughput of two consumers of the same content over time: with the
//! content store (Interest aggregation and cached Data), without it, and through NFD.
//!
//! c1 and c2 fetch one object (`nameway get`) from a producer behind a bottleneck; c2 starts
//! a little after c1. Each consumer is alone on a node of its own behind f1, so what that
//! node's link receives is what the consumer fetches: sampling the kernel's byte counters of
//! those links gives each consumer's rate over time, whatever the forwarder. The bottleneck
//! link's counter says how many copies of the object crossed it (UDP and IP headers
//! included, about 0.5 % at 8000-byte segments).

use std::time::Duration;

use tokio::sync::oneshot;

use super::{object, wait_output, Ctx};
use crate::error::LabError;
use crate::lab::Lab;
use crate::probe::{self, Series};
use crate::report::{Plot, PlotSeries, Report};

/// One variant's outcome.
struct Outcome {
    goodput: [f64; 2],
    retransmissions: [u64; 2],
    carried: f64,
    series: Series,
}

fn topology(name: &str, router: &str, router_config: &str, rate: f64) -> String {
    let cfg = |kind: &str| {
        if kind == "nfd" {
            String::new()
        } else {
            format!("config = \"{router_config}\"\n")
        }
    };
    format!(
        r#"
name = "{name}"
[[node]]
name = "c1"
[[node]]
name = "c2"
[[node]]
name = "f1"
kind = "{router}"
{c}
[[node]]
name = "f2"
kind = "{router}"
{c}
[[node]]
name = "p"
[[link]]
a = "c1"
b = "f1"
mtu = 9000
[[link]]
a = "c2"
b = "f1"
mtu = 9000
[[link]]
a = "f1"
b = "f2"
mtu = 9000
rate_mbps = {rate}
[[link]]
a = "f2"
b = "p"
mtu = 9000
[[route]]
prefix = "/obj"
to = "p"
"#,
        c = cfg(router)
    )
}

/// Node `at`'s namespace and its interface toward `peer`.
fn link_toward(lab: &Lab, at: &str, peer: &str) -> (String, String) {
    let (Some(a), Some(p)) = (lab.plan.index(at), lab.plan.index(peer)) else {
        return (String::new(), String::new());
    };
    let node = &lab.plan.nodes[a];
    let dev = node
        .interfaces
        .iter()
        .find(|i| i.peer == p)
        .map(|i| i.name.clone())
        .unwrap_or_default();
    (node.netns.clone(), dev)
}

async fn variant(
    ctx: &mut Ctx<'_>,
    text: &str,
    size: usize,
    start_gap: Duration,
) -> Result<Outcome, LabError> {
    let mut lab = ctx.up(text).await?;
    let file = lab
        .plan
        .node("p")
        .map(|n| n.dir.join("object.bin"))
        .unwrap_or_default();
    object(&file, size)?;
    let put = lab.spawn(
        "put",
        "p",
        &format!("nameway put {} /obj --json -s 8000", file.display()),
        &[],
    )?;
    wait_output(&mut lab, put, "\"name\"").await?;
    // What f1 receives from f2 crosses the bottleneck; what c1 and c2 receive is theirs.
    let (bottleneck_ns, bottleneck_dev) = link_toward(&lab, "f1", "f2");
    let carried_before = crate::net::link_bytes(&bottleneck_ns, &bottleneck_dev)
        .await?
        .0;
    let consumers = [link_toward(&lab, "c1", "f1"), link_toward(&lab, "c2", "f1")];
    let (stop, stopped) = oneshot::channel();
    let sampler = probe::sample_links(&consumers, Duration::from_millis(100), stopped);
    let get = "nameway get /obj -o /dev/null --json";
    let driver = async {
        let h1 = lab.spawn("get-c1", "c1", get, &[])?;
        tokio::time::sleep(start_gap).await;
        let h2 = lab.spawn("get-c2", "c2", get, &[])?;
        let mut goodput = [0.0; 2];
        let mut retransmissions = [0; 2];
        for (k, h) in [h1, h2].into_iter().enumerate() {
            let status = lab.wait(h, Duration::from_secs(300)).await?;
            let log = lab
                .log_of(h)
                .map(std::path::Path::to_path_buf)
                .unwrap_or_default();
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if !status.is_some_and(|s| s.success()) {
                return Err(LabError::repro(
                    "throughput",
                    format!(
                        "get on c{} failed: {}",
                        k + 1,
                        crate::process::log_tail(&log, 2)
                    ),
                ));
            }
            let summary = crate::probe::json_in(&text).unwrap_or_default();
            goodput[k] = summary["goodput_mbps"].as_f64().unwrap_or(f64::NAN);
            retransmissions[k] = summary["retransmissions"].as_u64().unwrap_or(0);
        }
        let _ = stop.send(());
        Ok::<_, LabError>((goodput, retransmissions))
    };
    let (series, goodput) = tokio::join!(sampler, driver);
    let (goodput, retransmissions) = goodput?;
    let carried = crate::net::link_bytes(&bottleneck_ns, &bottleneck_dev)
        .await?
        .0
        .saturating_sub(carried_before) as f64
        / size as f64;
    lab.down().await?;
    Ok(Outcome {
        goodput,
        retransmissions,
        carried,
        series: series?,
    })
}

/// Runs the reproduction.
///
/// # Errors
/// A lab or a tool fails.
pub(super) async fn run(ctx: &mut Ctx<'_>) -> Result<Report, LabError> {
    let rate = ctx.pick(100.0, 40.0);
    let size = ctx.pick(32 << 20, 2 << 20);
    let gap = ctx.pick(Duration::from_millis(1000), Duration::from_millis(200));
    let mut r = Report::new(
        "throughput",
        3,
        "Two consumers of the same content: received throughput over time",
        ctx.quick,
    );
    r.published = "Two consumers fetching the same content through the cache-enabled forwarder each receive it at the full link rate: Interest aggregation and multicast Data serve both from one upstream copy, and the later consumer catches up from the cache, against NFD and against no cache (Liu et al. 2022, a plot over time; no single figure).".into();
    r.setup = format!(
        "c1 and c2 (each a namewayd with `nameway get`, cubic) -- f1 -- {rate} Mbit/s (tbf) -- f2 -- p (`nameway put`, 8000-byte segments, a {} MiB object); c2 starts {} ms after c1. Rates are the bytes each consumer's link received, every 100 ms (kernel counters). Runs: f1 and f2 namewayd with their content stores, namewayd without (admit and serve off), and NFD (content store on).",
        size >> 20,
        gap.as_millis()
    );
    let cached = variant(ctx, &topology("rep-tput", "nameway", "", rate), size, gap).await?;
    let uncached = variant(
        ctx,
        &topology(
            "rep-tput-nocs",
            "nameway",
            "[cs]\\nadmit = false\\nserve = false\\n",
            rate,
        ),
        size,
        gap,
    )
    .await?;
    let nfd = match ctx.nfd.is_some() {
        true => Some(variant(ctx, &topology("rep-tput-nfd", "nfd", "", rate), size, gap).await?),
        false => None,
    };
    let published = "both near the link rate (plot)";
    let sane = (0.05, 100_000.0);
    r.row(
        "consumer 1 goodput, with the content store",
        published,
        cached.goodput[0],
        nfd.as_ref().map(|o| o.goodput[0]),
        "Mbit/s",
        sane,
    );
    r.row(
        "consumer 2 goodput, with the content store",
        published,
        cached.goodput[1],
        nfd.as_ref().map(|o| o.goodput[1]),
        "Mbit/s",
        sane,
    );
    r.row(
        "copies of the object over the bottleneck, with the store",
        "1 (plot)",
        cached.carried,
        nfd.as_ref().map(|o| o.carried),
        "objects",
        (0.5, 4.0),
    );
    r.row(
        "consumer 1 goodput, no content store",
        "shared link (plot)",
        uncached.goodput[0],
        None,
        "Mbit/s",
        sane,
    );
    r.row(
        "consumer 2 goodput, no content store",
        "shared link (plot)",
        uncached.goodput[1],
        None,
        "Mbit/s",
        sane,
    );
    r.row(
        "copies of the object over the bottleneck, no store",
        "2 (plot)",
        uncached.carried,
        None,
        "objects",
        (0.5, 4.0),
    );
    r.findings.push(format!(
        "With the content store the bottleneck carried {:.2} copies of the object for two consumers; without it {:.2}. Above one copy with the store: a segment whose Interest is retransmitted while its Data is still queued at the bottleneck is fetched again ({} and {} retransmissions by the two consumers).",
        cached.carried, uncached.carried, cached.retransmissions[0], cached.retransmissions[1]
    ));
    if let Some(n) = &nfd {
        r.findings.push(format!(
            "Through NFD: {:.2} copies, {} and {} retransmissions.",
            n.carried, n.retransmissions[0], n.retransmissions[1]
        ));
    }
    r.differences = vec![
        "Software forwarders sharing two cores with the consumers and the producer, and a tbf-limited veth as the bottleneck, instead of P4 switches and a cache server on 10 GbE.".into(),
        "The consumers use Nameway's own transport (CUBIC, RACK), in every run, NFD's included, so the runs differ only in the forwarders.".into(),
    ];
    let mut variants = vec![
        ("with-cs", "namewayd, content store", &cached),
        ("no-cs", "namewayd, no content store", &uncached),
    ];
    if let Some(n) = &nfd {
        variants.push(("nfd", "NFD, content store", n));
    }
    for (file, title, o) in variants {
        r.plots.push(Plot {
            file: format!("throughput-{file}.png"),
            title: format!("Received throughput over time: {title}"),
            kind: "line".into(),
            xlabel: "s".into(),
            ylabel: "Mbit/s".into(),
            logx: false,
            categories: Vec::new(),
            series: (0..2)
                .map(|k| PlotSeries {
                    label: format!("consumer {}", k + 1),
                    x: o.series.t.clone(),
                    y: o.series.mbps.get(k).cloned().unwrap_or_default(),
                })
                .collect(),
        });
    }
    Ok(r)
}
