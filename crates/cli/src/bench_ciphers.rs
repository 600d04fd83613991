//! `nameway bench ciphers`: throughput of every payload cipher suite at
//! several payload sizes, with cycles per byte and the ratio to ChaCha20.
//!
//! The measuring is done by `nameway_crypto::bench`; this module only parses
//! the arguments and prints the table (or JSON with `--json`). With
//! `--openssl` it also runs `openssl speed` at the same sizes
//! ([`crate::bench_openssl`]) and prints every suite next to OpenSSL.

use std::time::Duration;

use anyhow::{bail, Result};
use clap::Args;
use nameway_crypto::bench;

use crate::bench_libcrypto;
use crate::bench_openssl::{self, Speed};

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
    /// Seal under the secure links' nonces (zeros, then a counter in the last
    /// 8 bytes), so the 24-byte-nonce suites derive their subkey once per key;
    /// by default every nonce byte is 0x24 and each message pays HChaCha20 or
    /// HForro14.
    #[arg(long)]
    link_nonces: bool,
    /// Also run `openssl speed` (ChaCha20-Poly1305, ChaCha20, AES-256-GCM) at
    /// the same sizes and print every suite's MB/s next to OpenSSL's, with
    /// the ratio. Needs the `openssl` command on PATH.
    #[arg(long)]
    openssl: bool,
    /// Seconds per `openssl speed` run (whole seconds, at least 1).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    openssl_seconds: u32,
    /// `openssl speed` runs per cipher and size; the median is printed.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    openssl_runs: u64,
}

/// Runs `nameway bench ciphers` with parsed arguments.
pub(crate) fn run(args: &BenchCiphersArgs) -> Result<()> {
    let openssl = args.openssl.then_some(Speed {
        seconds: args.openssl_seconds,
        runs: usize::try_from(args.openssl_runs).unwrap_or(usize::MAX),
    });
    let nonces = if args.link_nonces {
        bench::Nonces::Link
    } else {
        bench::Nonces::Random
    };
    run_with(
        &args.sizes,
        Duration::from_millis(args.time_ms),
        args.json,
        nonces,
        openssl,
    )
}

/// Measures every suite at every size in `sizes`, spending about `per_pair`
/// on each pair, and prints a table, or JSON if `json` is set. With `openssl`,
/// `openssl speed` is run at the same sizes first (so a missing `openssl`
/// fails fast) and its figures are printed beside the suites'.
pub(crate) fn run_with(
    sizes: &[usize],
    per_pair: Duration,
    json: bool,
    nonces: bench::Nonces,
    openssl: Option<Speed>,
) -> Result<()> {
    if sizes.is_empty() {
        bail!("no payload sizes given");
    }
    if let Some(&too_big) = sizes.iter().find(|&&s| s > 1 << 30) {
        bail!("payload size {too_big} is larger than 1 GiB");
    }
    if per_pair.is_zero() {
        bail!("the measuring time must be positive");
    }
    let Some(speed) = openssl else {
        let rows = bench::run_with_baselines(sizes, per_pair, nonces, &mut []).0;
        if json {
            println!("{}", bench::render_json(&rows));
        } else {
            print!("{}", bench::render_table(&rows));
        }
        return Ok(());
    };
    // Load libcrypto and check it against our suites before anything is timed.
    let lib = bench_libcrypto::load()?;
    let mut baselines: Vec<Box<dyn bench::Baseline>> = Vec::new();
    for suite in bench_openssl::PER_MESSAGE {
        baselines.push(Box::new(bench_libcrypto::sealer(lib, suite)?));
    }
    baselines.push(Box::new(bench_libcrypto::tls_record_sealer(lib)?));
    baselines.push(Box::new(bench_libcrypto::stream_baseline(lib)?));
    let refs = speed.measure(sizes)?;
    let (rows, per_message) = bench::run_with_baselines(sizes, per_pair, nonces, &mut baselines);
    if json {
        println!("{}", bench_openssl::render_json(&rows, &per_message, &refs));
    } else {
        print!("{}", bench::render_table(&rows));
        println!();
        print!(
            "{}",
            bench_openssl::render_table(&rows, &per_message, &lib.version(), &refs, speed)
        );
    }
    Ok(())
}
