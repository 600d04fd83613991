//! `nameway bench`: Interest/Data exchanges per second and latency through a running forwarder,
//! with the forwarder's CPU time per exchange.
//!
//! One producer connection (or `--producers N`, each registering the same prefix) registers a
//! prefix and answers every Interest with a pre-built Data ([`bench_load`]). For each consumer count, N consumer connections each keep W Interests in
//! flight over distinct names, so the Content Store cannot answer them (or, with
//! `--cache-hit`, over a small pool of names fetched once, so it does). A warm-up run is not
//! measured; then R runs are, and the median rate is reported with latency percentiles over
//! all runs. The daemon's CPU time is utime+stime from `/proc/<pid>/stat` before and after.
//!
//! UDP faces are non-local, and the forwarder refuses registrations from them: with a UDP
//! consumer transport the producer needs `--producer-transport` (or uses the default local
//! transport).

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use nameway_wire::Name;
use serde::Serialize;

use crate::bench_load::{self, ConsumerPlan, ConsumerResult, DataGen, InterestGen};
use crate::client::{check_content_size, parse_name, random_u32, Client, Conn, Transport};
use crate::output::{outln, print_json, write_out, Table};

/// Linux reports utime and stime in USER_HZ ticks, 100 per second on every architecture's
/// user ABI (`sysconf(_SC_CLK_TCK)`).
const TICKS_PER_SECOND: f64 = 100.0;
/// Exchanges of the unmeasured warm-up run (per configuration).
const WARM_UP: u64 = 2000;

/// Arguments of `nameway bench` without a subcommand.
#[derive(Debug, clap::Args)]
pub(crate) struct ForwarderBenchArgs {
    /// Transport of the producer (must be local: unix:// or tcp://127.0.0.1); default: the
    /// consumers' transport when it is local, else the default transport.
    #[arg(long, value_name = "URI")]
    producer_transport: Option<String>,
    /// Producer connections, each registering the prefix and answering what reaches it (a
    /// producer with one connection per forwarding thread: see docs/performance.md).
    #[arg(long, default_value_t = 1)]
    producers: usize,
    /// Consumer connections; a comma-separated list runs each count in turn.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    consumers: Vec<usize>,
    /// Exchanges per run, shared among the consumers.
    #[arg(long, default_value_t = 100_000)]
    interests: u64,
    /// Content bytes per Data.
    #[arg(long, default_value_t = 1024)]
    payload: usize,
    /// Interests each consumer keeps in flight.
    #[arg(long, default_value_t = 16)]
    window: usize,
    /// Components per name (at least the prefix's plus 3).
    #[arg(long, default_value_t = 4)]
    components: usize,
    /// Measured runs per consumer count (the median is reported).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Exchanges per consumer in the unmeasured warm-up run (without --cache-hit).
    #[arg(long, default_value_t = WARM_UP, value_name = "N")]
    warm_up: u64,
    /// Fetch a pool of names once, then fetch them again: the Content Store answers.
    #[arg(long)]
    cache_hit: bool,
    /// Compute real DigestSha256 signatures for the Data (default: a fixed placeholder).
    #[arg(long)]
    sign: bool,
    /// PID of the forwarder for CPU accounting (default: the process named namewayd).
    #[arg(long)]
    daemon_pid: Option<u32>,
    /// Name prefix served by the producer (default: /bench-<random>).
    #[arg(long)]
    prefix: Option<String>,
    /// InterestLifetime in milliseconds; an Interest unanswered this long is lost.
    #[arg(long, default_value_t = 4000, value_name = "MS")]
    lifetime: u64,
    /// Worker threads of the benchmark's runtime (1: everything on one thread).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// The whole report.
#[derive(Debug, Serialize)]
struct Report {
    transport: String,
    producer_transport: String,
    producers: usize,
    prefix: String,
    mode: &'static str,
    payload: usize,
    window: usize,
    components: usize,
    interests_per_run: u64,
    runs: usize,
    signed_data: bool,
    daemon_pid: Option<u32>,
    daemon_note: String,
    results: Vec<ConfigResult>,
}

/// Results for one consumer count.
#[derive(Debug, Serialize)]
struct ConfigResult {
    consumers: usize,
    median_exchanges_per_s: f64,
    completed: u64,
    nacks: u64,
    timeouts: u64,
    latency_us: Latency,
    daemon_cpu_us_per_exchange: Option<f64>,
    client_cpu_us_per_exchange: Option<f64>,
    producer_answered: u64,
    runs: Vec<RunResult>,
}

#[derive(Debug, Serialize)]
struct Latency {
    p50: u32,
    p99: u32,
    max: u32,
}

/// One measured run.
#[derive(Debug, Serialize)]
struct RunResult {
    exchanges_per_s: f64,
    completed: u64,
    nacks: u64,
    timeouts: u64,
    elapsed_s: f64,
    daemon_cpu_s: Option<f64>,
    client_cpu_s: Option<f64>,
}

/// Runs `nameway bench` (the forwarder benchmark) on its own runtime.
///
/// # Errors
/// Bad arguments, the forwarder cannot be reached or refuses the producer's registration.
pub(crate) fn run(transport: Option<&str>, args: &ForwarderBenchArgs) -> anyhow::Result<ExitCode> {
    check(args)?;
    let rt = if args.threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(args.threads)
            .enable_all()
            .build()
    }
    .context("cannot start the runtime")?;
    rt.block_on(bench(transport, args))
}

/// Largest `--consumers` count.
const MAX_CONSUMERS: usize = 4096;
/// Largest `--producers` count.
const MAX_PRODUCERS: usize = 64;
/// Largest `--threads`.
const MAX_THREADS: usize = 1024;
/// Largest `--window` (per consumer).
const MAX_WINDOW: usize = 1 << 16;

fn check(args: &ForwarderBenchArgs) -> anyhow::Result<()> {
    if args.consumers.is_empty() || args.consumers.contains(&0) {
        bail!("--consumers needs counts of at least 1");
    }
    if args.window == 0 || args.runs == 0 || args.interests == 0 || args.producers == 0 {
        bail!("--window, --runs, --interests and --producers must be at least 1");
    }
    // Beyond these a run only exhausts memory or file descriptors (a window or a thread
    // count of 2^64 aborted on allocation).
    if let Some(n) = args.consumers.iter().find(|&&n| n > MAX_CONSUMERS) {
        bail!("--consumers {n} is more connections than a benchmark can open: use at most {MAX_CONSUMERS}");
    }
    if args.producers > MAX_PRODUCERS {
        bail!("--producers {} is more connections than a benchmark needs: use at most {MAX_PRODUCERS}", args.producers);
    }
    if args.threads > MAX_THREADS {
        bail!(
            "--threads {} is more than a runtime can start: use at most {MAX_THREADS}",
            args.threads
        );
    }
    if args.window > MAX_WINDOW {
        bail!("--window {} is more Interests in flight than a consumer can track: use at most {MAX_WINDOW}", args.window);
    }
    check_content_size("--payload", args.payload)
}

async fn bench(transport: Option<&str>, args: &ForwarderBenchArgs) -> anyhow::Result<ExitCode> {
    let consumer_transport = Transport::resolve(transport)?;
    let producer_transport = match &args.producer_transport {
        Some(uri) => Transport::parse(uri)?,
        None if consumer_transport.is_local() => consumer_transport.clone(),
        None => Transport::resolve(None)?,
    };
    if !producer_transport.is_local() {
        bail!(
            "the producer transport {producer_transport} is not local, so the forwarder refuses \
             its prefix registration: pass --producer-transport unix:///run/nfd/nfd.sock (or \
             tcp://127.0.0.1)"
        );
    }
    let prefix: Name = match &args.prefix {
        Some(p) => parse_name(p)?,
        None => parse_name(&format!("/bench-{:08x}", random_u32()))?,
    };
    let (daemon_pid, daemon_note) = find_daemon(args.daemon_pid);
    let freshness = if args.cache_hit { 3_600_000 } else { 1000 };
    let served = Arc::new(AtomicU64::new(0));
    let data = DataGen::new(args.payload, freshness, args.sign);
    let mut producer_tasks = Vec::with_capacity(args.producers);
    for _ in 0..args.producers {
        let mut producer = Client::connect(producer_transport.clone()).await?;
        producer
            .register(&prefix)
            .await
            .with_context(|| format!("registering the producer prefix {prefix}"))?;
        producer_tasks.push(tokio::spawn(bench_load::produce(
            producer.into_conn(),
            data.clone(),
            served.clone(),
        )));
    }
    let stop_producers = || producer_tasks.iter().for_each(|t| t.abort());
    let mut results = Vec::new();
    for &n in &args.consumers {
        let r = measure(&consumer_transport, &prefix, n, args, daemon_pid, &served).await;
        match r {
            Ok(r) => results.push(r),
            Err(e) => {
                stop_producers();
                return Err(e);
            }
        }
    }
    stop_producers();
    let report = Report {
        transport: consumer_transport.to_string(),
        producer_transport: producer_transport.to_string(),
        producers: args.producers,
        prefix: prefix.to_string(),
        mode: if args.cache_hit {
            "cache-hit"
        } else {
            "unique"
        },
        payload: args.payload,
        window: args.window,
        components: args.components,
        interests_per_run: args.interests,
        runs: args.runs,
        signed_data: args.sign,
        daemon_pid,
        daemon_note,
        results,
    };
    if args.json {
        print_json(&report)?;
    } else {
        print_report(&report)?;
    }
    let failed: u64 = report.results.iter().map(|r| r.nacks + r.timeouts).sum();
    if failed > 0 {
        eprintln!(
            "nameway bench: warning: {failed} Interests were Nacked or timed out (see nacks and \
             timeouts)"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Warm-up plus the measured runs with `n` consumers.
async fn measure(
    transport: &Transport,
    prefix: &Name,
    n: usize,
    args: &ForwarderBenchArgs,
    daemon_pid: Option<u32>,
    served: &AtomicU64,
) -> anyhow::Result<ConfigResult> {
    let mut conns = Vec::with_capacity(n);
    for _ in 0..n {
        conns.push(Conn::connect(transport).await?);
    }
    let pool = if args.cache_hit {
        (args.window as u64 * 4).max(64)
    } else {
        u64::MAX
    };
    let warm = if args.cache_hit { pool } else { args.warm_up };
    let tag = |run: usize| {
        if args.cache_hit {
            "hit".to_owned()
        } else {
            format!("r{run}-{n}")
        }
    };
    // Warm-up (in cache-hit mode this fetches the pool each consumer will ask for again).
    let (c, _) = one_run(
        conns,
        prefix,
        warm.saturating_mul(n as u64),
        pool,
        &tag(0),
        args,
    )
    .await?;
    conns = c;
    let served_before = served.load(Ordering::Relaxed);
    let mut runs = Vec::new();
    let mut latencies = Vec::new();
    let (mut daemon_cpu, mut client_cpu) = (Some(0.0), Some(0.0));
    for run in 1..=args.runs {
        let d0 = daemon_pid.and_then(cpu_seconds);
        let c0 = cpu_seconds_self();
        let start = Instant::now();
        let (c, results) = one_run(conns, prefix, args.interests, pool, &tag(run), args).await?;
        conns = c;
        let elapsed = start.elapsed().as_secs_f64();
        let d = d0.zip(daemon_pid.and_then(cpu_seconds)).map(|(a, b)| b - a);
        let cl = c0.zip(cpu_seconds_self()).map(|(a, b)| b - a);
        daemon_cpu = daemon_cpu.zip(d).map(|(a, b)| a + b);
        client_cpu = client_cpu.zip(cl).map(|(a, b)| a + b);
        let mut r = RunResult {
            exchanges_per_s: 0.0,
            completed: 0,
            nacks: 0,
            timeouts: 0,
            elapsed_s: elapsed,
            daemon_cpu_s: d,
            client_cpu_s: cl,
        };
        for res in results {
            r.completed += res.completed;
            r.nacks += res.nacks;
            r.timeouts += res.timeouts;
            latencies.extend(res.latencies_us);
        }
        r.exchanges_per_s = r.completed as f64 / elapsed.max(1e-9);
        runs.push(r);
    }
    let completed: u64 = runs.iter().map(|r| r.completed).sum();
    let per_exchange = |cpu: Option<f64>| {
        cpu.filter(|_| completed > 0)
            .map(|s| s * 1e6 / completed as f64)
    };
    let mut rates: Vec<f64> = runs.iter().map(|r| r.exchanges_per_s).collect();
    rates.sort_by(f64::total_cmp);
    latencies.sort_unstable();
    Ok(ConfigResult {
        consumers: n,
        median_exchanges_per_s: median(&rates),
        completed,
        nacks: runs.iter().map(|r| r.nacks).sum(),
        timeouts: runs.iter().map(|r| r.timeouts).sum(),
        latency_us: Latency {
            p50: percentile(&latencies, 50.0),
            p99: percentile(&latencies, 99.0),
            max: latencies.last().copied().unwrap_or(0),
        },
        daemon_cpu_us_per_exchange: per_exchange(daemon_cpu),
        client_cpu_us_per_exchange: per_exchange(client_cpu),
        producer_answered: served.load(Ordering::Relaxed) - served_before,
        runs,
    })
}

/// One run: every consumer gets its share of `total` exchanges; returns the connections.
async fn one_run(
    conns: Vec<Conn>,
    prefix: &Name,
    total: u64,
    pool: u64,
    tag: &str,
    args: &ForwarderBenchArgs,
) -> anyhow::Result<(Vec<Conn>, Vec<ConsumerResult>)> {
    let n = conns.len() as u64;
    let mut tasks = Vec::with_capacity(conns.len());
    for (i, conn) in conns.into_iter().enumerate() {
        let share = total / n + u64::from((i as u64) < total % n);
        let plan = ConsumerPlan {
            interests: InterestGen::new(
                prefix,
                args.components,
                i,
                tag,
                !args.cache_hit,
                args.lifetime,
            )?,
            count: share,
            window: args.window,
            pool,
            lifetime: Duration::from_millis(args.lifetime),
        };
        tasks.push(tokio::spawn(bench_load::consume(conn, plan)));
    }
    let mut conns = Vec::with_capacity(tasks.len());
    let mut results = Vec::with_capacity(tasks.len());
    for t in tasks {
        let (conn, result) = t.await.context("a consumer task failed")?;
        conns.push(conn);
        results.push(result?);
    }
    Ok((conns, results))
}

fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// Nearest-rank percentile of sorted samples.
fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The daemon's PID from `--daemon-pid`, or the only process named `namewayd`; with a note
/// for the report.
fn find_daemon(flag: Option<u32>) -> (Option<u32>, String) {
    if let Some(pid) = flag {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        return match (cpu_seconds(pid), comm.trim_end()) {
            (None, _) => (
                None,
                format!("cannot read /proc/{pid}/stat: daemon CPU not measured"),
            ),
            (Some(_), "namewayd") => (Some(pid), format!("pid {pid} (--daemon-pid)")),
            (Some(_), other) => (
                Some(pid),
                format!("pid {pid} (--daemon-pid) is {other:?}, not namewayd: check the PID"),
            ),
        };
    }
    let mut found: Vec<u32> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim_end() == "namewayd")
        })
        .collect();
    found.sort_unstable();
    match found.as_slice() {
        [] => (
            None,
            "no process named namewayd found: daemon CPU not measured (pass --daemon-pid)".into(),
        ),
        [pid] => (
            Some(*pid),
            format!("pid {pid} (the process named namewayd)"),
        ),
        many => (
            None,
            format!(
                "several namewayd processes ({many:?}): daemon CPU not measured (pass \
                 --daemon-pid)"
            ),
        ),
    }
}

/// utime + stime of a process, in seconds.
fn cpu_seconds(pid: u32) -> Option<f64> {
    stat_cpu(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

fn cpu_seconds_self() -> Option<f64> {
    stat_cpu(&std::fs::read_to_string("/proc/self/stat").ok()?)
}

/// utime (field 14) + stime (field 15) of a `/proc/<pid>/stat` line, in seconds. The command
/// name (field 2) may hold spaces and parentheses, so fields are counted after the last ')'.
fn stat_cpu(stat: &str) -> Option<f64> {
    let after = &stat[stat.rfind(')')? + 1..];
    let mut fields = after.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / TICKS_PER_SECOND)
}

fn print_report(r: &Report) -> std::io::Result<()> {
    outln!(
        "nameway bench: {} mode, consumers over {}, {} producer connection(s) over {}",
        r.mode,
        r.transport,
        r.producers,
        r.producer_transport
    )?;
    outln!(
        "  names {}/c<i>/<run>/...: {} components; payload {} B; window {}; {} exchanges per \
         run; {} runs; Data signatures {}",
        r.prefix,
        r.components,
        r.payload,
        r.window,
        r.interests_per_run,
        r.runs,
        if r.signed_data {
            "computed"
        } else {
            "placeholders"
        }
    )?;
    outln!("  daemon: {}", r.daemon_note)?;
    let mut t = Table::new(&[
        "consumers",
        "exchanges/s",
        "min..max",
        "p50 us",
        "p99 us",
        "daemon us/exch",
        "client us/exch",
        "nacks",
        "timeouts",
    ]);
    for c in &r.results {
        let lo = c
            .runs
            .iter()
            .map(|r| r.exchanges_per_s)
            .fold(f64::MAX, f64::min);
        let hi = c.runs.iter().map(|r| r.exchanges_per_s).fold(0.0, f64::max);
        t.row(vec![
            c.consumers.to_string(),
            format!("{:.0}", c.median_exchanges_per_s),
            format!("{lo:.0}..{hi:.0}"),
            c.latency_us.p50.to_string(),
            c.latency_us.p99.to_string(),
            c.daemon_cpu_us_per_exchange
                .map_or_else(|| "-".into(), |v| format!("{v:.2}")),
            c.client_cpu_us_per_exchange
                .map_or_else(|| "-".into(), |v| format!("{v:.2}")),
            c.nacks.to_string(),
            c.timeouts.to_string(),
        ]);
    }
    write_out(&t.render())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_fields() {
        let line = "1234 (name with) spaces) S 1 2 3 4 5 6 7 8 9 10 250 150 0 0 20 0 3 0";
        assert_eq!(stat_cpu(line), Some(4.0));
        assert!(cpu_seconds_self().is_some());
    }

    #[test]
    fn medians_and_percentiles() {
        assert_eq!(median(&[1.0, 2.0, 10.0]), 2.0);
        assert_eq!(median(&[1.0, 2.0, 4.0, 10.0]), 3.0);
        let v: Vec<u32> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), 50);
        assert_eq!(percentile(&v, 99.0), 99);
        assert_eq!(percentile(&[7], 99.0), 7);
    }
}
