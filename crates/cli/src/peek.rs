//! `nameway peek` and `nameway poke`, after ndn-tools' ndnpeek and ndnpoke.
//!
//! `peek` expresses one Interest and writes the Data (or only its payload) to stdout; it exits
//! 3 on timeout and 4 on a Nack, printing the reason, as ndnpeek does. `poke` registers the
//! Data's name, answers the first Interest the Data satisfies, and exits.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use bytes::Bytes;
use nameway_wire::security::DigestSha256;
use nameway_wire::{Data, InterestView, MetaInfo, MAX_PACKET_SIZE};

use crate::client::{self, parse_name, random_u32, ClientError, Incoming};

/// Exit status of ndnpeek and ndnpoke when no Data came (or no Interest) in time.
const EXIT_TIMEOUT: u8 = 3;
/// Exit status of ndnpeek on a Nack.
const EXIT_NACK: u8 = 4;

/// Arguments of `nameway peek`.
#[derive(Debug, clap::Args)]
pub(crate) struct PeekArgs {
    /// Name of the Interest.
    name: String,
    /// Set CanBePrefix: any Data under the name answers.
    #[arg(short = 'p', long = "prefix")]
    can_be_prefix: bool,
    /// Set MustBeFresh: caches may answer only with fresh Data.
    #[arg(short = 'f', long = "fresh")]
    must_be_fresh: bool,
    /// InterestLifetime in milliseconds.
    #[arg(short = 'l', long, default_value_t = 4000, value_name = "MS")]
    lifetime: u64,
    /// Milliseconds to wait for the answer (default: the lifetime).
    #[arg(short = 'w', long, value_name = "MS")]
    timeout: Option<u64>,
    /// Write only the Content, not the whole Data packet.
    #[arg(short = 'P', long)]
    payload_only: bool,
    /// Write hexadecimal text instead of raw bytes.
    #[arg(long)]
    hex: bool,
    /// Print the Data's name, size and round-trip time on stderr.
    #[arg(short = 'v', long)]
    verbose: bool,
}

/// Arguments of `nameway poke`.
#[derive(Debug, clap::Args)]
pub(crate) struct PokeArgs {
    /// Name of the Data; it is registered as the prefix.
    name: String,
    /// FreshnessPeriod in milliseconds (default: none, never fresh in caches).
    #[arg(short = 'f', long, value_name = "MS")]
    freshness: Option<u64>,
    /// Set FinalBlockId to the name's last component.
    #[arg(short = 'F', long)]
    final_block: bool,
    /// Give up after this many milliseconds without a matching Interest (default: wait).
    #[arg(short = 'w', long, value_name = "MS")]
    timeout: Option<u64>,
    /// File holding the Content; standard input when absent or "-".
    file: Option<PathBuf>,
}

/// Runs `nameway peek`.
///
/// # Errors
/// The forwarder cannot be reached, the name is invalid, or stdout fails.
pub(crate) async fn peek(transport: Option<&str>, args: &PeekArgs) -> anyhow::Result<ExitCode> {
    let mut interest = nameway_wire::Interest::new(parse_name(&args.name)?);
    interest.can_be_prefix = args.can_be_prefix;
    interest.must_be_fresh = args.must_be_fresh;
    interest.nonce = Some(random_u32());
    interest.lifetime_ms = Some(args.lifetime);
    let wait = Duration::from_millis(args.timeout.unwrap_or(args.lifetime));
    let mut c = client::connect(transport).await?;
    let start = Instant::now();
    let data = match c.express(&interest, wait).await {
        Ok(data) => data,
        Err(ClientError::Nack { reason, .. }) => {
            eprintln!(
                "nack from {}: reason={reason}",
                client::show_name(&interest.name)
            );
            return Ok(ExitCode::from(EXIT_NACK));
        }
        Err(ClientError::Timeout { ms, .. }) => {
            eprintln!(
                "timeout: no Data for {} within {ms} ms",
                client::show_name(&interest.name)
            );
            return Ok(ExitCode::from(EXIT_TIMEOUT));
        }
        Err(e) => return Err(e.into()),
    };
    if args.verbose {
        eprintln!(
            "DATA {} ({} bytes of content) rtt={:.3} ms",
            client::show_name(&data.name),
            data.content.as_ref().map_or(0, Bytes::len),
            start.elapsed().as_secs_f64() * 1000.0
        );
    }
    let bytes = if args.payload_only {
        data.content.clone().unwrap_or_default()
    } else {
        data.encode()
    };
    let mut out = std::io::stdout().lock();
    if args.hex {
        writeln!(out, "{}", hex::encode(&bytes))?;
    } else {
        out.write_all(&bytes)?;
    }
    out.flush().context("writing to standard output")?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `nameway poke`.
///
/// # Errors
/// Unreadable input, Content too large for one packet, the forwarder cannot be reached or
/// refuses the registration.
pub(crate) async fn poke(transport: Option<&str>, args: &PokeArgs) -> anyhow::Result<ExitCode> {
    let name = parse_name(&args.name)?;
    let content = read_content(args.file.as_ref())?;
    let mut data = Data::new(name.clone(), content);
    data.meta_info = Some(MetaInfo {
        freshness_period: args.freshness,
        final_block_id: args
            .final_block
            .then(|| name.last().map(|c| c.to_owned()))
            .flatten(),
        ..MetaInfo::default()
    });
    // DigestSha256 has no key: signing cannot fail.
    let _ = data.sign(&DigestSha256);
    let wire = data.encode();
    if wire.len() > MAX_PACKET_SIZE {
        bail!(
            "the Data would be {} bytes, over the {MAX_PACKET_SIZE}-byte packet limit: give less \
             content (segment larger objects)",
            wire.len()
        );
    }
    let mut c = client::connect(transport).await?;
    c.register(&name).await?;
    let deadline = args
        .timeout
        .map(|ms| tokio::time::Instant::now() + Duration::from_millis(ms));
    let conn = c.conn();
    loop {
        let incoming = match deadline {
            Some(d) => match tokio::time::timeout_at(d, conn.recv()).await {
                Ok(i) => i?,
                Err(_) => {
                    eprintln!("timeout: no Interest for {name} arrived in time");
                    return Ok(ExitCode::from(EXIT_TIMEOUT));
                }
            },
            None => conn.recv().await?,
        };
        let Incoming::Interest(iw) = incoming else {
            continue;
        };
        let Ok(interest) = InterestView::new_checked(iw) else {
            continue;
        };
        let satisfied = *interest.name() == name
            || (interest.can_be_prefix() && interest.name().is_prefix_of(&name));
        if satisfied {
            conn.send(&wire).await?;
            return Ok(ExitCode::SUCCESS);
        }
    }
}

fn read_content(file: Option<&PathBuf>) -> anyhow::Result<Bytes> {
    let mut buf = Vec::new();
    match file {
        Some(p) if p.as_os_str() != "-" => {
            buf = std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?;
        }
        _ => {
            std::io::stdin()
                .lock()
                .read_to_end(&mut buf)
                .context("reading standard input")?;
        }
    }
    Ok(Bytes::from(buf))
}
