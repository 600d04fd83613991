//! `nameway lab reproduce [NAME|all]`: the published results Nameway builds on, measured again on
//! emulated networks, ours and NFD's beside them, each as a report with plots ([`crate::report`]).
//! `--quick` runs each briefly (what CI runs: the reports appear and every figure is finite and in
//! range; the speed is not judged).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;

use crate::error::LabError;
use crate::lab::{Lab, Options};
use crate::nfd::NfdBuild;
use crate::process::log_tail;
use crate::report::{self, Report};
use crate::signals::Signals;
use crate::topology::Topology;

mod ciphers;
mod latency;
mod pit_digest;
mod routing;
mod stream_ciphers;
mod throughput;
mod transport;

/// The reproductions, in issue 30 §2's order: (name, number).
pub const ALL: [(&str, u32); 7] = [
    ("latency", 1),
    ("ciphers", 2),
    ("throughput", 3),
    ("stream-ciphers", 4),
    ("transport", 5),
    ("pit-digest", 6),
    ("routing", 7),
];

/// Arguments of `nameway lab reproduce`.
#[derive(Debug, Args)]
pub struct ReproduceArgs {
    /// latency, ciphers, throughput, stream-ciphers, transport, pit-digest, routing (or their
    /// numbers 1-7), or all.
    #[arg(default_value = "all")]
    name: String,
    /// Short runs with the same checks (what CI runs; the figures are not to be quoted).
    #[arg(long)]
    quick: bool,
    /// Where the reports go (one folder per reproduction and an index, README.md).
    #[arg(long, default_value = "target/lab-reports", value_name = "DIR")]
    out: PathBuf,
}

/// What a reproduction gets to work with.
pub struct Ctx<'a> {
    /// Where things are.
    pub opts: Options,
    /// Short runs.
    pub quick: bool,
    /// NFD, when built.
    pub nfd: Option<NfdBuild>,
    /// Caught signals.
    pub signals: &'a mut Signals,
}

impl Ctx<'_> {
    /// Brings up the topology in `text` (quietly).
    ///
    /// # Errors
    /// As [`Lab::up`].
    pub async fn up(&mut self, text: &str) -> Result<Lab, LabError> {
        let t = Topology::parse(text, "repro")?;
        let mut opts = self.opts.clone();
        opts.verbose = false;
        Lab::up(t, opts, self.signals).await
    }

    /// `full` normally, `quick` in quick mode.
    pub fn pick<T>(&self, full: T, quick: T) -> T {
        if self.quick {
            quick
        } else {
            full
        }
    }

    /// The `nameway` binary.
    pub fn nameway(&self) -> PathBuf {
        self.opts.bin_dir.join("nameway")
    }
}

/// Runs `command` on node `on` to completion (within `timeout`) and returns its output.
///
/// # Errors
/// It fails or does not end in time (the message has the end of its output).
pub(super) async fn run(
    lab: &mut Lab,
    name: &str,
    on: &str,
    command: &str,
    timeout: Duration,
) -> Result<String, LabError> {
    let h = lab.spawn(name, on, command, &[])?;
    let status = lab.wait(h, timeout).await?;
    let log = lab.log_of(h).map(Path::to_path_buf).unwrap_or_default();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    match status {
        Some(s) if s.success() => Ok(text),
        Some(s) => Err(LabError::Node {
            node: format!("{on} ({name})"),
            detail: format!(
                "`{command}`: {}; output: {}",
                crate::lab::describe_status(s),
                log_tail(&log, 3)
            ),
        }),
        None => Err(LabError::Node {
            node: format!("{on} ({name})"),
            detail: format!(
                "`{command}` did not end within {} s; output: {}",
                timeout.as_secs(),
                log_tail(&log, 3)
            ),
        }),
    }
}

/// Waits until the output of process `h` contains `text` (a server saying it is ready).
///
/// # Errors
/// The process ends first, or 30 s pass.
pub async fn wait_output(lab: &mut Lab, h: usize, text: &str) -> Result<(), LabError> {
    wait_output_for(lab, h, text, 30).await
}

/// [`wait_output`] with a deadline of `secs` (a producer signing every segment first).
///
/// # Errors
/// The process ends first, or `secs` pass.
pub async fn wait_output_for(
    lab: &mut Lab,
    h: usize,
    text: &str,
    secs: u64,
) -> Result<(), LabError> {
    let log = lab.log_of(h).map(Path::to_path_buf).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains(text)
        {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(LabError::NotReady {
                node: log.display().to_string(),
                seconds: secs,
                detail: format!("never said {text:?}; output: {}", log_tail(&log, 3)),
            });
        }
        if let Some(status) = lab.try_status(h) {
            return Err(LabError::Node {
                node: log.display().to_string(),
                detail: format!(
                    "ended ({}) before saying {text:?}: {}",
                    crate::lab::describe_status(status),
                    log_tail(&log, 3)
                ),
            });
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until node `on`'s secure link has keys.
///
/// # Errors
/// 30 s pass first.
pub async fn wait_established(lab: &Lab, on: &str) -> Result<(), LabError> {
    let socket = lab.socket(on).map(Path::to_path_buf).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(mut c) = crate::probe::connect(&socket).await {
            if let Ok(raw) = c.dataset("neighbours", "list").await {
                let list: serde_json::Value = serde_json::from_slice(&raw).unwrap_or_default();
                if list
                    .as_array()
                    .is_some_and(|l| l.iter().any(|n| n["state"] == "established"))
                {
                    return Ok(());
                }
            }
        }
        if Instant::now() > deadline {
            return Err(LabError::NotReady {
                node: on.into(),
                seconds: 30,
                detail: "its secure link did not establish".into(),
            });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until node `on`'s RIB has a route for `prefix` (a producer has registered).
///
/// # Errors
/// 30 s pass first.
pub async fn wait_route(lab: &Lab, on: &str, prefix: &str) -> Result<(), LabError> {
    let socket = lab.socket(on).map(Path::to_path_buf).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(mut c) = crate::probe::connect(&socket).await {
            if let Ok(rib) = c.list::<nameway_wire::mgmt::RibEntry>("rib", "list").await {
                if rib.iter().any(|e| e.name.to_string() == prefix) {
                    return Ok(());
                }
            }
        }
        if Instant::now() > deadline {
            return Err(LabError::NotReady {
                node: on.into(),
                seconds: 30,
                detail: format!("no route for {prefix} was registered"),
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Writes `len` pseudo-random bytes to `path` (objects to publish).
///
/// # Errors
/// The file cannot be written.
pub fn object(path: &Path, len: usize) -> Result<(), LabError> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ len as u64;
    let mut data = Vec::with_capacity(len + 8);
    while data.len() < len {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        data.extend_from_slice(&state.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    data.truncate(len);
    std::fs::write(path, data).map_err(|e| LabError::io(path, e))
}

/// Runs `nameway lab reproduce`.
///
/// # Errors
/// Unknown name; otherwise failures are reported per reproduction and the exit status says
/// whether all passed.
pub async fn main(args: &ReproduceArgs, opts: Options) -> Result<ExitCode, LabError> {
    let selected: Vec<(&str, u32)> = if args.name == "all" {
        ALL.to_vec()
    } else {
        let one = ALL
            .iter()
            .find(|(n, k)| *n == args.name || k.to_string() == args.name)
            .ok_or_else(|| LabError::repro(&args.name, "unknown: try latency, ciphers, throughput, stream-ciphers, transport, pit-digest, routing or all"))?;
        vec![*one]
    };
    let mut signals = Signals::catch()?;
    let python = report::python(&opts.bin_dir);
    let nfd = opts.nfd();
    let started = Instant::now();
    let mut index = format!(
        "# Nameway lab reproductions\n\n{} run of `nameway lab reproduce {}{}`; NFD {}.\n\n| # | reproduction | seconds | result |\n|---|---|---|---|\n",
        if args.quick { "Quick" } else { "Full" },
        args.name,
        if args.quick { " --quick" } else { "" },
        nfd.as_ref().map_or_else(|| "not built (scripts/build-nfd.sh)".to_owned(), |b| format!("from {}", b.dir.display())),
    );
    let mut failed = 0;
    for (name, number) in selected {
        let t0 = Instant::now();
        println!(
            "reproduce {number} {name}: running{}",
            if args.quick { " (quick)" } else { "" }
        );
        let mut ctx = Ctx {
            opts: opts.clone(),
            quick: args.quick,
            nfd: nfd.clone(),
            signals: &mut signals,
        };
        let result = one(name, &mut ctx).await;
        let seconds = t0.elapsed().as_secs_f64();
        let verdict = match result {
            Ok(mut r) => {
                r.seconds = seconds;
                r.quick = args.quick;
                r.nfd_built = nfd.is_some();
                let path = r.write(&args.out.join(name), &python)?;
                let bad = r.insane();
                if let Some(why) = &r.plots_skipped {
                    println!("reproduce {number} {name}: plots not drawn: {why}");
                }
                if bad.is_empty() {
                    println!(
                        "reproduce {number} {name}: {} figures in {seconds:.0} s, {}",
                        r.rows.len(),
                        path.display()
                    );
                    format!("[report]({name}/report.md)")
                } else {
                    failed += 1;
                    println!(
                        "reproduce {number} {name}: FIGURES OUT OF RANGE: {}",
                        bad.join("; ")
                    );
                    format!("figures out of range: {}", bad.join("; "))
                }
            }
            Err(LabError::Interrupted(s)) => return Err(LabError::Interrupted(s)),
            Err(e) => {
                failed += 1;
                println!("reproduce {number} {name}: FAILED: {e}");
                format!("failed: {e}")
            }
        };
        index.push_str(&format!(
            "| {number} | {name} | {seconds:.0} | {verdict} |\n"
        ));
    }
    index.push_str(&format!(
        "\nTotal: {:.0} s.\n",
        started.elapsed().as_secs_f64()
    ));
    std::fs::create_dir_all(&args.out).map_err(|e| LabError::io(&args.out, e))?;
    let path = args.out.join("README.md");
    std::fs::write(&path, index).map_err(|e| LabError::io(&path, e))?;
    println!(
        "reproduce: {} in {:.0} s; index {}",
        if failed == 0 {
            "all passed"
        } else {
            "some FAILED"
        },
        started.elapsed().as_secs_f64(),
        path.display()
    );
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

async fn one(name: &str, ctx: &mut Ctx<'_>) -> Result<Report, LabError> {
    match name {
        "latency" => latency::run(ctx).await,
        "ciphers" => ciphers::run(ctx).await,
        "throughput" => throughput::run(ctx).await,
        "stream-ciphers" => stream_ciphers::run(ctx).await,
        "transport" => transport::run(ctx).await,
        "pit-digest" => pit_digest::run(ctx).await,
        _ => routing::run(ctx).await,
    }
}
