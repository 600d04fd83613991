//! Reproduction 4: Stream-cipher throughput after decryption: a secure link's delivered goodput for
//! each cipher as the offered load rises, until each saturates.
//!
//! f1 and f2 share a secure face (9000-byte MTU, no rate limit); `nameway ping-server -s 8000`
//! on f2 answers every Interest with 8000 bytes; the lab offers a load from f1 (Interests for
//! fresh names at a fixed rate, [`crate::probe::paced`]) and counts the content that comes
//! back, decrypted by f1. The level of the prefix is set per run on both sides.

use std::time::Duration;

use super::{run as run_cmd, wait_established, wait_output, Ctx};
use crate::error::LabError;
use crate::probe;
use crate::report::{Plot, PlotSeries, Report};

const LEVELS: [&str; 5] = [
    "none",
    "chacha20",
    "forro14",
    "chacha20-poly1305",
    "xforro14-poly1305",
];
const PAYLOAD: f64 = 8000.0;

const TOPOLOGY: &str = r#"
name = "rep-stream"
[[node]]
name = "f1"
config = "[cs]\nadmit = false\nserve = false\n"
[[node]]
name = "f2"
config = "[cs]\nadmit = false\nserve = false\n"
[[link]]
a = "f1"
b = "f2"
mtu = 9000
secure = "per-prefix"
[[route]]
prefix = "/sc"
to = "f2"
"#;

/// Runs the reproduction.
///
/// # Errors
/// A lab or a tool fails.
pub(super) async fn run(ctx: &mut Ctx<'_>) -> Result<Report, LabError> {
    let loads: Vec<f64> = ctx.pick(
        vec![100.0, 250.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0],
        vec![20.0, 80.0],
    );
    let seconds = ctx.pick(1.5, 0.5);
    let mut r = Report::new(
        "stream-ciphers",
        4,
        "Stream-cipher throughput after decryption (Forro14 vs ChaCha20)",
        ctx.quick,
    );
    r.published = "Forro14 and ChaCha20 on a Tofino switch at offered loads of 1 to 100 Gbit/s (Table 1 of the Forro14 P4 paper): Forro14 delivers more than ChaCha20 with sequential implementations, up to about 10 Gbit/s, and uses fewer resources; with parallel implementations ChaCha20 delivers more at the higher rates. The table's figures are not reproduced in this repository, so the published column gives that finding, not numbers.".into();
    r.setup = format!(
        "f1 = f2 over a secure face (per-prefix level set on both sides, 9000-byte MTU, no rate limit, content stores off); `nameway ping-server /sc -s 8000` on f2; the lab offers Interests for new names from f1 at {} Mbit/s of content for {seconds} s each and counts the content received (decrypted by f1's face) meanwhile; the levels take turns at each load, and each point is the median of {} rounds.",
        loads.iter().map(|l| format!("{l}")).collect::<Vec<_>>().join(", "),
        ctx.pick(3, 1)
    );
    let mut lab = ctx.up(TOPOLOGY).await?;
    let server = lab.spawn(
        "ping-server",
        "f2",
        "nameway ping-server /sc -s 8000 -q",
        &[],
    )?;
    wait_output(&mut lab, server, "PING SERVER").await?;
    wait_established(&lab, "f1").await?;
    let socket = lab
        .socket("f1")
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let prefix: nameway_wire::Name = "/sc"
        .parse()
        .map_err(|e| LabError::repro("stream-ciphers", format!("{e}")))?;
    // Each round offers every load to every level in turn (the levels alternate at each
    // load), so that the machine's changing load hits them alike; the median of the rounds is
    // kept.
    let rounds = ctx.pick(3, 1);
    let mut samples: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); loads.len()]; LEVELS.len()];
    for round in 0..rounds {
        for (k, load) in loads.iter().enumerate() {
            for (l, level) in LEVELS.iter().enumerate() {
                for node in ["f1", "f2"] {
                    run_cmd(
                        &mut lab,
                        &format!("set-{node}-{level}"),
                        node,
                        &format!("nameway security set /sc {level}"),
                        Duration::from_secs(30),
                    )
                    .await?;
                }
                let rate = load * 1e6 / 8.0 / PAYLOAD;
                let tag = format!("{round}-{k}-{level}");
                let p = probe::paced(
                    &socket,
                    &prefix,
                    &tag,
                    rate,
                    Duration::from_secs_f64(seconds),
                )
                .await?;
                samples[l][k].push(p.goodput_mbps());
                // Let the queues drain before the next run.
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
    let mut curves = Vec::new();
    for (l, level) in LEVELS.iter().enumerate() {
        let delivered: Vec<f64> = samples[l].iter().map(|s| probe::median(s)).collect();
        let best = delivered.iter().copied().fold(0.0, f64::max);
        let published = match *level {
            "forro14" | "chacha20" => "see above",
            _ => "n/a",
        };
        r.row(
            &format!("{level}: most delivered"),
            published,
            best,
            None,
            "Mbit/s",
            (0.5, 100_000.0),
        );
        curves.push((*level, delivered));
    }
    lab.down().await?;
    let at = |name: &str| {
        curves
            .iter()
            .find(|(l, _)| *l == name)
            .map(|(_, d)| d.iter().copied().fold(0.0, f64::max))
    };
    if let (Some(f), Some(c)) = (at("forro14"), at("chacha20")) {
        r.row(
            "forro14 / chacha20, most delivered",
            "> 1 up to 10 Gbit/s",
            f / c,
            None,
            "x",
            (0.05, 20.0),
        );
        r.findings.push(format!(
            "At saturation Forro14 delivered {f:.0} Mbit/s and ChaCha20 {c:.0} Mbit/s ({:.2}x).",
            f / c
        ));
    }
    if let Some(plain) = at("none") {
        for (level, d) in &curves {
            let best = d.iter().copied().fold(0.0, f64::max);
            if *level != "none" && plain > 0.0 {
                r.findings.push(format!(
                    "{level} keeps {:.0} % of the plain link's most delivered goodput.",
                    best / plain * 100.0
                ));
            }
        }
    }
    r.differences = vec![
        "Software: two namewayd on two shared cores, the load generator (this lab) and the producer included, instead of a Tofino pipeline at 1-100 Gbit/s; the loads here stop where two cores saturate, far below the switch's.".into(),
        "Our Forro14 and ChaCha20 run with SIMD (AVX2, AVX-512 where present) in the face's writer and reader tasks; sequential and parallel implementations in the paper's sense do not apply, and the decryption runs in parallel with forwarding only as far as the runtime's threads allow.".into(),
        "The stream-cipher levels carry no authentication (docs/secure-forwarding.md); their AEAD counterparts are shown for what operators would use.".into(),
        "NFD has no hop-by-hop encryption: no NFD column.".into(),
    ];
    r.plots.push(Plot {
        file: "stream-ciphers.png".into(),
        title: "Delivered goodput after decryption vs offered load".into(),
        kind: "line".into(),
        xlabel: "offered load, Mbit/s of content".into(),
        ylabel: "delivered, Mbit/s".into(),
        logx: true,
        categories: Vec::new(),
        series: curves
            .iter()
            .map(|(level, d)| PlotSeries {
                label: (*level).into(),
                x: loads.clone(),
                y: d.clone(),
            })
            .collect(),
    });
    Ok(r)
}
