//! `namewayd`: run the Nameway forwarder.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser;
use namewayd::config::Config;
use namewayd::driver::Driver;
use tokio::signal::unix::{signal, SignalKind};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{fmt, reload, EnvFilter};

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
            Config::from_toml(&text).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?
        }
        None => Config::default(),
    };
    let mut config = config;
    let env = std::env::var(namewayd::config::THREADS_ENV).ok();
    if let Some(note) = config
        .resolve_threads(env.as_deref())
        .map_err(|e| anyhow::anyhow!("invalid configuration: {e}"))?
    {
        eprintln!("namewayd: {note}");
    }
    config
        .validate()
        .map_err(|e| anyhow::anyhow!("invalid configuration: {e}"))?;
    Ok(config)
}

/// Runs the daemon; a refused configuration or a failed start is printed as one message with
/// its cause chain (never a backtrace, whatever `RUST_BACKTRACE` says) and exits non-zero.
fn main() -> ExitCode {
    if let Some(why) = nameway_crypto::cpu_unsupported() {
        eprintln!(
            "namewayd: error: {why}; this build targets x86-64-v3 (rebuild for this CPU with `RUSTFLAGS= cargo build --release`)"
        );
        return ExitCode::FAILURE;
    }
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
    let from_env = std::env::var_os(EnvFilter::DEFAULT_ENV).is_some();
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(&config.log.level))
        .context("bad log level")?;
    // The filter sits behind a reload handle so that SIGHUP can change `[log] level`.
    let (filter, log_level) = reload::Layer::new(filter);
    let logs = tracing_subscriber::registry().with(filter);
    if config.log.json {
        logs.with(fmt::layer().with_writer(std::io::stderr).json())
            .init();
    } else {
        logs.with(fmt::layer().with_writer(std::io::stderr).with_ansi(false))
            .init();
    }
    // io_threads = 0: faces and the forwarder share one thread (no cross-thread wake-up per
    // packet); N > 0: N I/O worker threads, the forwarder on the main thread.
    let rt = match config.forwarder.io_threads {
        0 => {
            let mut b = tokio::runtime::Builder::new_current_thread();
            let f = &config.forwarder;
            namewayd::coalesce::install(&mut b, f.coalesce, f.coalesce_wait());
            b.enable_all().build()
        }
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
        let mut hup = signal(SignalKind::hangup()).context("cannot handle SIGHUP")?;
        let mut driver = Driver::start(&config).await?;
        for l in driver.faces().listeners() {
            tracing::info!(listener = %l, "listening");
        }
        // SIGHUP: read the file again; a refused file changes nothing and says why.
        let reloads = driver.reloader();
        let path = args.config.clone();
        tokio::spawn(async move {
            while hup.recv().await.is_some() {
                let Some(path) = &path else {
                    tracing::info!("SIGHUP: no --config file to read again");
                    continue;
                };
                match load(Some(path)) {
                    Ok(new) => {
                        if !from_env {
                            match EnvFilter::try_new(&new.log.level) {
                                Ok(f) => {
                                    if let Err(e) = log_level.reload(f) {
                                        tracing::error!("SIGHUP: cannot change the log level: {e}");
                                    }
                                }
                                Err(e) => tracing::error!("SIGHUP: bad log level {:?}: {e}", new.log.level),
                            }
                        }
                        tracing::info!(config = %path.display(), "SIGHUP: reloading the configuration");
                        if reloads.send(new).await.is_err() {
                            return;
                        }
                    }
                    Err(e) => tracing::error!("SIGHUP: configuration refused, nothing changed: {e:#}"),
                }
            }
        });
        let shutdown = async move {
            tokio::select! {
                _ = term.recv() => tracing::info!("SIGTERM"),
                _ = int.recv() => tracing::info!("SIGINT"),
            }
        };
        driver.run(shutdown).await
    })
}
