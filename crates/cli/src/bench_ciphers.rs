//! `nameway bench ciphers`: throughput of every payload cipher suite at
//! several payload sizes, with cycles per byte and the ratio to ChaCha20.
//!
//! The measuring is done by `nameway_crypto::bench`; this module only parses
//! the arguments and prints the table (or JSON with `--json`). Needs the
//! dependency `nameway-crypto = { path = "../crypto" }` (plus `anyhow` and
//! `clap`, already used by the CLI).

use std::time::Duration;

use anyhow::{bail, Result};
use clap::Args;
use nameway_crypto::bench;

/// Arguments of `nameway bench ciphers`.
#[derive(Debug, Args)]
pub(crate) struct BenchCiphersArgs {
    /// Payload sizes in bytes, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = bench::DEFAULT_SIZES)]
    sizes: Vec<usize>,
    /// Time spent measuring each (suite, size) pair, in milliseconds (split
    /// into several samples; the medians are reported).
    #[arg(long, default_value_t = 300)]
    time_ms: u64,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Runs `nameway bench ciphers` with parsed arguments.
pub(crate) fn run(args: &BenchCiphersArgs) -> Result<()> {
    run_with(&args.sizes, Duration::from_millis(args.time_ms), args.json)
}

/// Measures every suite at every size in `sizes`, spending about `per_pair`
/// on each pair, and prints a table, or JSON if `json` is set.
pub(crate) fn run_with(sizes: &[usize], per_pair: Duration, json: bool) -> Result<()> {
    if sizes.is_empty() {
        bail!("no payload sizes given");
    }
    if let Some(&too_big) = sizes.iter().find(|&&s| s > 1 << 30) {
        bail!("payload size {too_big} is larger than 1 GiB");
    }
    if per_pair.is_zero() {
        bail!("the measuring time must be positive");
    }
    let rows = bench::run(sizes, per_pair);
    if json {
        println!("{}", bench::render_json(&rows));
    } else {
        print!("{}", bench::render_table(&rows));
    }
    Ok(())
}
