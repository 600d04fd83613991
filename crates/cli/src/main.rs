//! `nameway`: one command for people working with Nameway.
//!
//! Subcommands are noun-verb where there is a noun (`nameway face create ...`, later); each
//! lives in its own module with a clap `Args` struct and a `run` function. `anyhow` is used
//! here and in those modules only: the libraries have typed errors.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bench_ciphers;
mod dissect;

/// Nameway: a secure, fast, cache-enabled forwarder for named data.
#[derive(Debug, Parser)]
#[command(name = "nameway", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the TLV structure of one packet (raw bytes, or hex with --hex) as a tree.
    Dissect(dissect::DissectArgs),
    /// Benchmarks.
    #[command(subcommand)]
    Bench(BenchCommand),
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// MB/s, cycles per byte and the ratio to ChaCha20 of every cipher suite and size.
    Ciphers(bench_ciphers::BenchCiphersArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Dissect(args) => dissect::run(args),
        Command::Bench(BenchCommand::Ciphers(args)) => bench_ciphers::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("nameway: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
