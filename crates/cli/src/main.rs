//! `nameway`: one command for people working with Nameway.

use clap::{Parser, Subcommand};

/// Nameway: a secure, fast, cache-enabled forwarder for named data.
#[derive(Parser)]
#[command(name = "nameway", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the TLV structure of one packet.
    Dissect,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Dissect => Ok(()),
    }
}
