//! `nameway-nfd-agent`: the controller's agent for a forwarder managed through NFD's
//! management protocol (a stock NFD, or a namewayd without `[controller]`); see
//! `namewayd::agent::nfd` and docs/controller.md, "NFD agent mode".
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use namewayd::agent::config::ControllerConfig;
use namewayd::agent::nfd::{DeclaredNeighbour, NfdAgentConfig};

#[derive(Parser)]
#[command(
    name = "nameway-nfd-agent",
    version,
    about = "Joins an NFD (or any forwarder with NFD management) to a Nameway controller"
)]
struct Args {
    /// The forwarder's management socket.
    #[arg(long, default_value = "unix:///run/nfd/nfd.sock")]
    nfd: String,
    /// The controller's agent listener: tcp://host:port (Noise) or tls://host:port (mutual
    /// TLS: --tls-ca, --tls-cert and --tls-key then).
    #[arg(long)]
    controller: String,
    /// The domain anchor's public key, pinned (`ed25519:<hex>`, printed by namewayctl serve).
    #[arg(long)]
    key: String,
    /// This router's name under the domain (/example/r1).
    #[arg(long)]
    name: String,
    /// The one-time enrolment token (namewayctl token); first start only.
    #[arg(long, default_value = "")]
    token: String,
    /// Where the router key, its certificate, the link key and the last FIB are kept.
    #[arg(long)]
    state_dir: PathBuf,
    /// A link to a neighbour: `<its link key, 64 hex digits>=<this forwarder's face URI
    /// toward it>` (repeat for each).
    #[arg(long = "neighbour")]
    neighbours: Vec<DeclaredNeighbour>,
    /// The cost reported for every link.
    #[arg(long, default_value_t = 10)]
    link_cost: u64,
    /// How often the forwarder is read and the FIB compared, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    report_interval_ms: u64,
    /// With tls://: the CA certificates (PEM) the controller's certificate must chain to.
    #[arg(long)]
    tls_ca: Option<PathBuf>,
    /// With tls://: this router's client certificate chain (PEM).
    #[arg(long)]
    tls_cert: Option<PathBuf>,
    /// With tls://: the client certificate's private key (PEM).
    #[arg(long)]
    tls_key: Option<PathBuf>,
    /// With tls://: the name the controller's certificate must hold (default: the host of
    /// --controller).
    #[arg(long)]
    tls_server_name: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let config = NfdAgentConfig {
        nfd: args.nfd,
        controller: ControllerConfig {
            uri: args.controller,
            key: args.key,
            name: args.name,
            token: args.token,
            state_dir: args.state_dir,
            link_cost: args.link_cost,
            report_interval_ms: args.report_interval_ms,
            tls_ca: args.tls_ca.unwrap_or_default(),
            tls_cert: args.tls_cert.unwrap_or_default(),
            tls_key: args.tls_key.unwrap_or_default(),
            tls_server_name: args.tls_server_name.unwrap_or_default(),
            // NFD answers no hellos: links are the declared ones.
            ..ControllerConfig::default()
        },
        neighbours: args.neighbours,
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("nameway-nfd-agent: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = rt.block_on(async {
        tokio::select! {
            r = namewayd::agent::nfd::run(config) => r,
            _ = tokio::signal::ctrl_c() => Ok(()),
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nameway-nfd-agent: {e:#}");
            ExitCode::FAILURE
        }
    }
}
