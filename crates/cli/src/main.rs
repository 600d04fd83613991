//! `nameway`: one command for people working with Nameway.
//!
//! Subcommands are noun-verb where there is a noun (`nameway face create ...`); each lives in
//! its own module with a clap `Args` struct and a `run` function. Commands that talk to the
//! forwarder go through [`client`], which connects the way python-ndn does (`--transport`, then
//! `NDN_CLIENT_TRANSPORT`, then client.conf, then `unix:///run/nfd/nfd.sock`). `anyhow` is used
//! here and in those modules only: the libraries have typed errors.

// Doc comments in this binary are clap's --help text, written for a terminal: `<prefix>` and
// `[:port]` are literal there, not HTML or intra-doc links.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

use std::future::Future;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bench;
mod bench_ciphers;
mod bench_libcrypto;
mod bench_load;
mod bench_openssl;
mod capture;
mod client;
mod cs;
mod ctl;
mod ctl_cache;
mod dissect;
mod face;
mod output;
mod pcap;
mod peek;
mod ping;
mod route;
mod routing;
mod security;
mod status;
mod stop;
mod strategy;
mod transfer;

/// Nameway: a secure, fast, cache-enabled forwarder for named data.
#[derive(Debug, Parser)]
#[command(name = "nameway", version, about)]
struct Cli {
    /// How to reach the forwarder: unix:///path, tcp://host[:port], udp://host[:port] or
    /// ws://host:port [default: $NDN_CLIENT_TRANSPORT, then client.conf, then unix:///run/nfd/nfd.sock]
    #[arg(long, global = true, value_name = "URI")]
    transport: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Forwarder status: version, uptime, counters, table sizes.
    Status(status::StatusArgs),
    /// Faces: list, create, destroy.
    #[command(subcommand)]
    Face(face::FaceCommand),
    /// Routes: list (RIB, or FIB with --fib), add, remove.
    #[command(subcommand)]
    Route(route::RouteCommand),
    /// Secure routing of self-certifying names: id, announce, lookup, list, explain (namewayd).
    #[command(subcommand)]
    Routing(routing::RoutingCommand),
    /// Strategy choices: list, set, unset.
    #[command(subcommand)]
    Strategy(strategy::StrategyCommand),
    /// Content Store: info, config, erase.
    #[command(subcommand)]
    Cs(cs::CsCommand),
    /// Hop-by-hop encryption policy: list, set, unset (namewayd).
    #[command(subcommand)]
    Security(security::SecurityCommand),
    /// Secure neighbours: list, trust, untrust (namewayd).
    #[command(subcommand)]
    Neighbour(security::NeighbourCommand),
    /// This forwarder's identity (its public key, for peers to trust).
    #[command(subcommand)]
    Identity(security::IdentityCommand),
    /// Reachability and round-trip time to an ndnping server (ndnping-compatible).
    Ping(ping::PingArgs),
    /// Answer ndnping probes under a prefix (ndnpingserver-compatible).
    PingServer(ping::PingServerArgs),
    /// Express one Interest and write the Data to stdout (exit 3 on timeout, 4 on Nack).
    Peek(peek::PeekArgs),
    /// Publish one Data: register its name, answer one Interest, exit.
    Poke(peek::PokeArgs),
    /// Print the TLV structure of one packet (raw bytes, or hex with --hex) as a tree, or of
    /// every packet of a pcap file (--pcap).
    Dissect(dissect::DissectArgs),
    /// Mirror a face's packets: one line each like ndndump, or a pcap file with -w.
    Capture(capture::CaptureArgs),
    /// Publish a file as a segmented, signed object and serve it until interrupted.
    Put(transfer::PutArgs),
    /// Fetch a segmented object (pipelined, congestion-controlled, verified) to a file or stdout.
    Get(transfer::GetArgs),
    /// Signing keys for put and get.
    #[command(subcommand)]
    Key(transfer::KeyCommand),
    /// Benchmarks: exchanges per second through a running forwarder, or `ciphers`.
    Bench(BenchArgs),
    /// Emulated networks of forwarders on this machine, and the reproductions of the
    /// published results (docs/lab.md).
    Lab(nameway_lab::cli::LabArgs),
    /// The controller's view (namewayctl serve --http): topology, nodes, routes PREFIX,
    /// registry.
    Ctl(ctl::CtlArgs),
}

/// `nameway bench [OPTIONS]` measures the forwarder; `nameway bench ciphers` the ciphers.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
struct BenchArgs {
    #[command(subcommand)]
    command: Option<BenchCommand>,
    #[command(flatten)]
    forwarder: bench::ForwarderBenchArgs,
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// MB/s, cycles per byte and the ratio to ChaCha20 of every cipher suite and size.
    Ciphers(bench_ciphers::BenchCiphersArgs),
}

fn main() -> ExitCode {
    if let Some(why) = nameway_crypto::cpu_unsupported() {
        eprintln!(
            "nameway: error: {why}; this build targets x86-64-v3 (rebuild for this CPU with `RUSTFLAGS= cargo build --release`)"
        );
        return ExitCode::FAILURE;
    }
    let cli = Cli::parse();
    let t = cli.transport.as_deref();
    let done = |r: anyhow::Result<()>| r.map(|()| ExitCode::SUCCESS);
    let result = match &cli.command {
        Command::Status(args) => block_on(async { done(status::run(t, args).await) }),
        Command::Face(cmd) => block_on(async { done(face::run(t, cmd).await) }),
        Command::Route(cmd) => block_on(async { done(route::run(t, cmd).await) }),
        Command::Strategy(cmd) => block_on(async { done(strategy::run(t, cmd).await) }),
        Command::Routing(cmd) => block_on(async { done(routing::run(t, cmd).await) }),
        Command::Cs(cmd) => block_on(async { done(cs::run(t, cmd).await) }),
        Command::Security(cmd) => block_on(async { done(security::security(t, cmd).await) }),
        Command::Neighbour(cmd) => block_on(async { done(security::neighbour(t, cmd).await) }),
        Command::Identity(cmd) => block_on(async { done(security::identity(t, cmd).await) }),
        Command::Ping(args) => block_on(ping::run(t, args)),
        Command::PingServer(args) => block_on(async { done(ping::serve(t, args).await) }),
        Command::Peek(args) => block_on(peek::peek(t, args)),
        Command::Poke(args) => block_on(peek::poke(t, args)),
        Command::Dissect(args) => done(dissect::run(args)),
        Command::Capture(args) => block_on(async { done(capture::run(t, args).await) }),
        Command::Put(args) => block_on(transfer::put(t, args)),
        Command::Get(args) => block_on(transfer::get(t, args)),
        Command::Key(cmd) => done(transfer::key(cmd)),
        Command::Ctl(args) => block_on(async { done(ctl::run(args).await) }),
        Command::Bench(BenchArgs {
            command: Some(BenchCommand::Ciphers(args)),
            ..
        }) => done(bench_ciphers::run(args)),
        Command::Bench(BenchArgs {
            command: None,
            forwarder,
        }) => bench::run(t, forwarder),
        // The lab's messages already hold their causes: one line, no chain.
        Command::Lab(args) => nameway_lab::cli::main(args).map_err(|e| anyhow::anyhow!("{e}")),
    };
    match result {
        Ok(code) => code,
        // The reader went away (`nameway face list | head`): nothing more to say.
        Err(err) if is_broken_pipe(&err) => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("nameway: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Runs a command's future on a single-threaded runtime.
fn block_on(f: impl Future<Output = anyhow::Result<ExitCode>>) -> anyhow::Result<ExitCode> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| anyhow::Error::new(e).context("cannot start the runtime"))?
        .block_on(f)
}
