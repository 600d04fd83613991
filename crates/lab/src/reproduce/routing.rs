//! Reproduction 7: secure location-independent routing (docs/routing.md) on a lab network.
//!
//! Five forwarders with `[routing] mode = "secure"`: two consumer edges, `ch` (`miss =
//! "hold"`) and `cn` (`miss = "nack"`), a transit router `m` that hosts the RIB service, and
//! two producer edges `p1` and `p2`, each linked to `m`. The only routes are to routers (their
//! self-certifying names, whose keys the run makes first) and to the RIB service: none to the
//! names fetched. Measured: the first fetch of a name not resolved yet (hold and nack) against
//! the same fetch again; the time until a producer that moved from `p1` to `p2` is reachable
//! again; and a known flow's goodput through `m` with routing on against the same network with
//! routing off (a second lab, the two taking turns).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{object, run as run_cmd, wait_output, Ctx};
use crate::error::LabError;
use crate::lab::Lab;
use crate::probe::median;
use crate::report::{Plot, PlotSeries, Report};

/// The RIB service's prefix.
const RIB: &str = "/lab/32=RIB";

/// The forwarders and what each adds to its `[routing]` section. Links, in this order:
/// ch-m, cn-m, m-p1, m-p2, so p1 is 10.0.0.10 and p2 10.0.0.14.
const ROUTERS: [(&str, &str); 5] = [
    ("ch", ""),
    ("cn", "miss = \"nack\"\n"),
    ("m", "rib_service = true\n"),
    ("p1", "face_uris = [\"udp4://10.0.0.10:6363\"]\n"),
    ("p2", "face_uris = [\"udp4://10.0.0.14:6363\"]\n"),
];

/// The published router's figures and the reference for convergence.
const PUBLISHED: &str = "The Global Data Plane's router (Rust): names that hash their owner's key, route certificates delegating a name to a router, a routing information base queried on a route miss, which is answered with a NACK the client retries after; 3.00 Gbit/s per core at 1766-byte payloads in clear, 1.12 Gbit/s encrypted, route misses costing within 10 % of the expected rate. It gives no figure for first-packet latency or mobility. NFD has no equivalent (its routes come from nfdc, prefix registration or NLSR); NLSR is the reference for how fast a moved name is reachable again.";

/// Runs the reproduction.
///
/// # Errors
/// A lab or a tool fails.
pub(super) async fn run(ctx: &mut Ctx<'_>) -> Result<Report, LabError> {
    let rounds = ctx.pick(5, 1);
    let turns = ctx.pick(9, 1);
    let size = ctx.pick(32usize << 20, 256 << 10);
    let mut r = Report::new(
        "routing",
        7,
        "Secure location-independent routing",
        ctx.quick,
    );
    r.published = PUBLISHED.into();
    r.setup = format!(
        "ch (hold) and cn (nack) -- m (transit, RIB service) -- p1 and p2, every forwarder with `[routing] mode = \"secure\"`, content stores off; routes only to the routers' names and to {RIB}. Each of {rounds} rounds: a new owner key, `nameway put` of a 1000-byte object as `sc:<h>/obj` on p1 (it announces the name), then `nameway get` of the unversioned name on ch twice and on cn twice (the time `get` reports: discovery included, process start not); then the put stops on p1 and starts again on p2 with the same key, and `nameway peek` on ch is repeated until answered. The known flow: `nameway get` of a {} MiB object under a plain name from p1 to ch through m, in this lab and in the same network with routing off (a second lab, up at the same time), taking turns (which goes first alternates), {turns} fetches each.",
        size >> 20
    );
    let keys = ctx.opts.root.join("rep-routing-keys");
    let _ = std::fs::remove_dir_all(&keys);
    std::fs::create_dir_all(&keys).map_err(|e| LabError::io(&keys, e))?;
    let nameway = ctx.nameway();
    let mut names = Vec::new();
    for (node, _) in ROUTERS {
        names.push(new_key(&nameway, &keys.join(format!("{node}.key")))?);
    }
    let mut on = ctx
        .up(&topology("rep-routing", Some((&keys, &names))))
        .await?;
    let mut off = ctx.up(&topology("rep-routing-off", None)).await?;
    let mut first = Rounds::default();
    for round in 0..rounds {
        let owner = keys.join(format!("owner{round}.key"));
        let h = new_key(&nameway, &owner)?;
        first.add(&mut on, round, &h, &owner).await?;
    }
    let (with, without) = known_flow(&mut on, &mut off, size, turns).await?;
    on.down().await?;
    off.down().await?;
    let _ = std::fs::remove_dir_all(&keys);
    first.report(&mut r);
    let ratio = median(
        &with
            .iter()
            .zip(&without)
            .map(|(a, b)| a / b)
            .collect::<Vec<_>>(),
    );
    r.row(
        "known flow through m, routing on",
        "3.00 Gbit/s per core (1766 B, clear)",
        median(&with),
        None,
        "Mbit/s",
        (0.5, 100_000.0),
    );
    r.row(
        "known flow through m, routing off",
        "n/a",
        median(&without),
        None,
        "Mbit/s",
        (0.5, 100_000.0),
    );
    r.row(
        "known flow, routing on / off (median of same-turn ratios)",
        "routing costs at most 3 % (target)",
        ratio,
        None,
        "x",
        (0.05, 20.0),
    );
    r.findings.push(format!(
        "Known flow, routing on: {} Mbit/s; off: {} Mbit/s (turn by turn).",
        list(&with),
        list(&without)
    ));
    let x: Vec<f64> = (1..=with.len()).map(|i| i as f64).collect();
    r.plots.push(Plot {
        file: "routing-known-flow.png".into(),
        title: "A known flow through m, routing on and off, turn by turn".into(),
        kind: "line".into(),
        xlabel: "turn".into(),
        ylabel: "Mbit/s".into(),
        logx: false,
        categories: Vec::new(),
        series: vec![
            PlotSeries {
                label: "routing secure".into(),
                x: x.clone(),
                y: with.clone(),
            },
            PlotSeries {
                label: "routing off".into(),
                x,
                y: without.clone(),
            },
        ],
    });
    r.differences = vec![
        "Software forwarders sharing two cores over veth pairs, against the GDP router's dedicated cores; the throughput row is a whole fetch through three forwarders, not one router's per-core rate.".into(),
        "The GDP answers a miss with a NACK the client retries after; Nameway holds the Interest by default (hold) or Nacks it with NDNLPv2 RetryAfter (nack), which `nameway get` waits out.".into(),
        "NLSR's reference is from its documented defaults, not measured here: hello-interval 60 s (a link is declared down after 3 hellos time out at 1 s), routing-calc-interval 15 s, lsa-refresh-time 1800 s. A name moved to another router travels as a new name LSA through sync, and a change of links waits for hellos and the routing calculation: tens of seconds.".into(),
    ];
    Ok(r)
}

/// Per-round figures of the first fetches and the move, in ms.
#[derive(Default)]
struct Rounds {
    hold_first: Vec<f64>,
    hold_again: Vec<f64>,
    nack_first: Vec<f64>,
    nack_again: Vec<f64>,
    moved_from_start: Vec<f64>,
    moved_from_ready: Vec<f64>,
}

impl Rounds {
    /// One round: the first fetches through ch and cn of a name announced on p1, then the
    /// move to p2.
    async fn add(
        &mut self,
        lab: &mut Lab,
        round: usize,
        h: &str,
        owner: &Path,
    ) -> Result<(), LabError> {
        let file = node_dir(lab, "p1").join("small.bin");
        object(&file, 1000)?;
        let put = format!(
            "exec nameway put {} sc:{h}/obj --sign ed25519 --key {} --json",
            file.display(),
            owner.display()
        );
        let p1 = lab.spawn(&format!("put-{round}-p1"), "p1", &put, &[])?;
        wait_output(lab, p1, "\"name\"").await?;
        registered(lab, round, h).await?;
        let get = format!("nameway get sc:{h}/obj -o /dev/null --json");
        self.hold_first
            .push(get_ms(lab, &format!("{round}-h1"), "ch", &get).await?);
        self.hold_again
            .push(get_ms(lab, &format!("{round}-h2"), "ch", &get).await?);
        self.nack_first
            .push(get_ms(lab, &format!("{round}-n1"), "cn", &get).await?);
        self.nack_again
            .push(get_ms(lab, &format!("{round}-n2"), "cn", &get).await?);
        lab.stop(p1).await;
        let started = wall_ms();
        let p2 = lab.spawn(&format!("put-{round}-p2"), "p2", &put, &[])?;
        wait_output(lab, p2, "\"name\"").await?;
        let ready = wall_ms();
        // Until answered (at most 30 s); the loop prints when, in ns since the epoch.
        let peek = format!(
            "i=0; until nameway peek -p sc:{h}/obj -l 300 >/dev/null 2>&1; do i=$((i+1)); [ $i -lt 100 ] || exit 1; done; date +%s%N"
        );
        let out = run_cmd(
            lab,
            &format!("peek-{round}"),
            "ch",
            &peek,
            Duration::from_secs(60),
        )
        .await?;
        let reached = out
            .lines()
            .filter_map(|l| l.trim().parse::<f64>().ok())
            .next_back()
            .ok_or_else(|| LabError::repro("routing", format!("peek printed no time: {out}")))?
            / 1e6;
        self.moved_from_start.push(reached - started);
        self.moved_from_ready.push(reached - ready);
        lab.stop(p2).await;
        Ok(())
    }

    fn report(&self, r: &mut Report) {
        let extra = |first: &[f64], again: &[f64]| {
            median(
                &first
                    .iter()
                    .zip(again)
                    .map(|(a, b)| a - b)
                    .collect::<Vec<_>>(),
            )
        };
        let ms = (0.0, 60_000.0);
        r.row(
            "first fetch of an unresolved name, hold",
            "n/a",
            median(&self.hold_first),
            None,
            "ms",
            ms,
        );
        r.row(
            "the same fetch again (route known), hold",
            "n/a",
            median(&self.hold_again),
            None,
            "ms",
            ms,
        );
        r.row(
            "added by resolving, hold (median of same-round differences)",
            "n/a",
            extra(&self.hold_first, &self.hold_again),
            None,
            "ms",
            (-1_000.0, 60_000.0),
        );
        r.row(
            "first fetch of an unresolved name, nack",
            "a NACK, then the client's retry (no figure)",
            median(&self.nack_first),
            None,
            "ms",
            ms,
        );
        r.row(
            "the same fetch again (route known), nack",
            "n/a",
            median(&self.nack_again),
            None,
            "ms",
            ms,
        );
        r.row(
            "added by resolving, nack (median of same-round differences)",
            "n/a",
            extra(&self.nack_first, &self.nack_again),
            None,
            "ms",
            (-1_000.0, 60_000.0),
        );
        r.row(
            "moved producer reachable again, from the new put's start",
            "target < 1 s; NLSR's defaults: tens of seconds",
            median(&self.moved_from_start),
            None,
            "ms",
            (0.0, 60_000.0),
        );
        r.row(
            "moved producer reachable again, from the new put ready",
            "n/a",
            median(&self.moved_from_ready),
            None,
            "ms",
            (-100.0, 60_000.0),
        );
        r.findings.push(format!(
            "First fetches, hold: {} ms, again {} ms; nack: {} ms, again {} ms (round by round).",
            list(&self.hold_first),
            list(&self.hold_again),
            list(&self.nack_first),
            list(&self.nack_again)
        ));
        r.findings.push(format!(
            "Moved producer reachable again: {} ms from the new put's start (worst {:.0} ms), {} ms from its announcement accepted (its output polled every 20 ms).",
            list(&self.moved_from_start),
            self.moved_from_start.iter().copied().fold(0.0, f64::max),
            list(&self.moved_from_ready)
        ));
        let rounds: Vec<f64> = (1..=self.hold_first.len()).map(|i| i as f64).collect();
        r.plots.push(Plot {
            file: "routing-first-fetch.png".into(),
            title: "First fetch of a name not resolved yet, and again".into(),
            kind: "bar".into(),
            xlabel: "miss mode".into(),
            ylabel: "ms (median)".into(),
            logx: false,
            categories: vec!["hold".into(), "nack".into()],
            series: vec![
                PlotSeries {
                    label: "first fetch".into(),
                    x: Vec::new(),
                    y: vec![median(&self.hold_first), median(&self.nack_first)],
                },
                PlotSeries {
                    label: "again".into(),
                    x: Vec::new(),
                    y: vec![median(&self.hold_again), median(&self.nack_again)],
                },
            ],
        });
        r.plots.push(Plot {
            file: "routing-move.png".into(),
            title: "A moved producer reachable again".into(),
            kind: "line".into(),
            xlabel: "round".into(),
            ylabel: "ms".into(),
            logx: false,
            categories: Vec::new(),
            series: vec![
                PlotSeries {
                    label: "from the new put's start".into(),
                    x: rounds.clone(),
                    y: self.moved_from_start.clone(),
                },
                PlotSeries {
                    label: "from its announcement accepted".into(),
                    x: rounds,
                    y: self.moved_from_ready.clone(),
                },
            ],
        });
    }
}

/// The known flow's goodput (Mbit/s) through `m`, routing on then off, `turns` times each.
async fn known_flow(
    on: &mut Lab,
    off: &mut Lab,
    size: usize,
    turns: usize,
) -> Result<(Vec<f64>, Vec<f64>), LabError> {
    let mut puts = Vec::new();
    for lab in [&mut *on, &mut *off] {
        let file = node_dir(lab, "p1").join("plain.bin");
        object(&file, size)?;
        let h = lab.spawn(
            "put-plain",
            "p1",
            &format!(
                "exec nameway put {} /plain/obj -s 8000 --json",
                file.display()
            ),
            &[],
        )?;
        wait_output(lab, h, "\"name\"").await?;
        puts.push(h);
    }
    let get = "nameway get /plain/obj -o /dev/null --json";
    let (mut with, mut without) = (Vec::new(), Vec::new());
    // Which lab goes first alternates, so neither always meets the other's leftovers.
    for i in 0..turns {
        let name = format!("known-{i}");
        if i % 2 == 0 {
            with.push(goodput(on, &name, get).await?);
            without.push(goodput(off, &name, get).await?);
        } else {
            without.push(goodput(off, &name, get).await?);
            with.push(goodput(on, &name, get).await?);
        }
    }
    for (lab, h) in [&mut *on, &mut *off].into_iter().zip(puts) {
        lab.stop(h).await;
    }
    Ok((with, without))
}

/// The lab's topology: routing on with the routers' keys and names, or off.
fn topology(name: &str, routing: Option<(&Path, &[String])>) -> String {
    let mut t = format!(
        "name = \"{name}\"\n[defaults]\nconfig = \"[cs]\\nadmit = false\\nserve = false\\n\"\n"
    );
    for (node, extra) in ROUTERS {
        t.push_str(&format!("[[node]]\nname = \"{node}\"\n"));
        if let Some((keys, _)) = routing {
            let key = keys.join(format!("{node}.key"));
            t.push_str(&format!(
                "config = '''\n[routing]\nmode = \"secure\"\nidentity = \"{}\"\n{extra}[[routing.rib]]\nprefix = \"{RIB}\"\n'''\n",
                key.display()
            ));
        }
    }
    for (a, b) in [("ch", "m"), ("cn", "m"), ("m", "p1"), ("m", "p2")] {
        t.push_str(&format!("[[link]]\na = \"{a}\"\nb = \"{b}\"\n"));
    }
    t.push_str("[[route]]\nprefix = \"/plain\"\nto = \"p1\"\n");
    if let Some((_, names)) = routing {
        t.push_str(&format!("[[route]]\nprefix = \"{RIB}\"\nto = \"m\"\n"));
        for ((node, _), h) in ROUTERS.iter().zip(names) {
            t.push_str(&format!(
                "[[route]]\nprefix = \"{}\"\nto = \"{node}\"\n",
                sc_uri(h)
            ));
        }
    }
    t
}

/// Makes an Ed25519 key at `path` (mode 0600, as namewayd wants its routing identity) with
/// `nameway key generate` and returns the hex of the name it owns (`nameway routing name`).
fn new_key(nameway: &Path, path: &Path) -> Result<String, LabError> {
    let path_str = path.display().to_string();
    tool(nameway, &["key", "generate", "ed25519", &path_str])?;
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| LabError::io(path, e))?;
    let out = tool(nameway, &["routing", "name", &path_str])?;
    out.trim()
        .strip_prefix("sc:")
        .filter(|h| h.len() == 64)
        .map(str::to_owned)
        .ok_or_else(|| LabError::repro("routing", format!("`nameway routing name` said {out:?}")))
}

/// Runs `nameway ARGS` here (not in a lab) and returns its standard output.
fn tool(nameway: &Path, args: &[&str]) -> Result<String, LabError> {
    let out = Command::new(nameway)
        .args(args)
        .output()
        .map_err(|e| LabError::io(nameway, e))?;
    if !out.status.success() {
        return Err(LabError::repro(
            "routing",
            format!(
                "`nameway {}`: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `/32=sc/<h>` in URI form (percent-escaped), as the topology's routes take it.
fn sc_uri(hex: &str) -> String {
    let mut uri = String::from("/32=sc/");
    for pair in hex.as_bytes().chunks(2) {
        uri.push('%');
        uri.push_str(&String::from_utf8_lossy(pair).to_uppercase());
    }
    uri
}

/// Waits until the RIB service on m answers a look-up of `h` (p1 has registered it).
async fn registered(lab: &mut Lab, round: usize, h: &str) -> Result<(), LabError> {
    let wait = format!(
        "i=0; until nameway routing lookup sc:{h} --json | grep -q '\"found\"'; do i=$((i+1)); [ $i -lt 200 ] || exit 1; sleep 0.05; done"
    );
    run_cmd(
        lab,
        &format!("registered-{round}"),
        "m",
        &wait,
        Duration::from_secs(60),
    )
    .await
    .map(drop)
}

/// One `nameway get --json` on `on`: the time it reports, in ms.
async fn get_ms(lab: &mut Lab, name: &str, on: &str, get: &str) -> Result<f64, LabError> {
    let out = run_cmd(
        lab,
        &format!("get-{name}"),
        on,
        get,
        Duration::from_secs(60),
    )
    .await?;
    crate::probe::json_in(&out)
        .and_then(|v| v["seconds"].as_f64())
        .map(|s| s * 1000.0)
        .ok_or_else(|| LabError::repro("routing", format!("get printed no time: {out}")))
}

/// One `nameway get --json` on ch: its goodput in Mbit/s.
async fn goodput(lab: &mut Lab, name: &str, get: &str) -> Result<f64, LabError> {
    let out = run_cmd(lab, name, "ch", get, Duration::from_secs(600)).await?;
    crate::probe::json_in(&out)
        .and_then(|v| v["goodput_mbps"].as_f64())
        .ok_or_else(|| LabError::repro("routing", format!("get printed no goodput: {out}")))
}

fn node_dir(lab: &Lab, node: &str) -> PathBuf {
    lab.plan
        .node(node)
        .map(|n| n.dir.clone())
        .unwrap_or_default()
}

fn wall_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

fn list(v: &[f64]) -> String {
    v.iter()
        .map(|x| format!("{x:.1}"))
        .collect::<Vec<_>>()
        .join(", ")
}
