//! `namewayd`: run the Nameway forwarder.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser;
use namewayd::config::Config;
use namewayd::driver::Driver;
use tokio::signal::unix::{signal, SignalKind};
use tracing_subscriber::EnvFilter;

/// The Nameway forwarder: a drop-in for NFD.
#[derive(Parser)]
#[command(name = "namewayd", version, about)]
struct Args {
    /// TOML configuration file (default: the embedded defaults, see docs/namewayd.sample.toml).
    #[arg(short, long)]
    config: Option<PathBuf>,
    /// Check the configuration and exit.
    #[arg(long)]
    check_config: bool,
}

fn load(path: Option<&PathBuf>) -> anyhow::Result<Config> {
    let config = match path {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            Config::from_toml(&text).with_context(|| format!("{} is not valid", p.display()))?
        }
        None => Config::default(),
    };
    config
        .validate()
        .map_err(|e| anyhow::anyhow!("invalid configuration: {e}"))?;
    Ok(config)
}

/// Runs the daemon; a refused configuration or a failed start is printed as one message with
/// its cause chain (never a backtrace, whatever `RUST_BACKTRACE` says) and exits non-zero.
fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("namewayd: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let config = load(args.config.as_ref())?;
    if args.check_config {
        println!("configuration OK");
        return Ok(());
    }
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(&config.log.level))
        .context("bad log level")?;
    if config.log.json {
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .json()
            .init();
    } else {
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .init();
    }
    // io_threads = 0: faces and the forwarder share one thread (no cross-thread wake-up per
    // packet); N > 0: N I/O worker threads, the forwarder on the main thread.
    let rt = match config.forwarder.io_threads {
        0 => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        n => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n)
            .enable_all()
            .build(),
    }
    .context("cannot start the runtime")?;
    rt.block_on(async move {
        // Install the handlers before opening listeners, so an early SIGTERM is not fatal.
        let mut term = signal(SignalKind::terminate()).context("cannot handle SIGTERM")?;
        let mut int = signal(SignalKind::interrupt()).context("cannot handle SIGINT")?;
        let driver = Driver::start(&config).await?;
        for l in driver.faces().listeners() {
            tracing::info!(listener = %l, "listening");
        }
        let shutdown = async move {
            tokio::select! {
                _ = term.recv() => tracing::info!("SIGTERM"),
                _ = int.recv() => tracing::info!("SIGINT"),
            }
        };
        driver.run(shutdown).await
    })
}
