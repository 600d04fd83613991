//! `nameway put`, `nameway get` and `nameway key generate`: whole objects through the
//! forwarder with the transport library (nameway-transport).

use std::io::{IsTerminal as _, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use bytes::Bytes;
use nameway_transport::consumer::FetchReport;
use nameway_transport::producer::serve_registered;
use nameway_transport::{
    fetch, CcKind, CcOptions, Certificate, FetchError, FetchOptions, Progress, Publication,
    PublishOptions, SignatureKind, SigningKey, VerifyKey,
};
use serde::Serialize;

use crate::client::{self, parse_name};
use crate::output::outln;
use crate::stop::{Stop, StopSignal};

/// `nameway put FILE NAME`.
#[derive(Debug, clap::Args)]
pub(crate) struct PutArgs {
    /// The file to publish (`-` for standard input, read whole).
    file: PathBuf,
    /// The name to publish under; a version component is added unless it ends in one.
    name: String,
    /// Payload bytes per segment (at most 8192).
    #[arg(long, short = 's', default_value_t = nameway_transport::producer::DEFAULT_PAYLOAD)]
    payload: usize,
    /// Signature: digest (DigestSha256, no key), ed25519, ecdsa (P-256), rsa, hmac.
    #[arg(long, default_value = "digest")]
    sign: SignatureKind,
    /// Private key file (PKCS#8 PEM or DER; for hmac the secret itself); made by
    /// `nameway key generate`.
    #[arg(long, value_name = "FILE")]
    key: Option<PathBuf>,
    /// The certificate of --key (`nameway key cert`, or an ndnsec certificate in base64):
    /// packets name it in their KeyLocator, and it is served with the object, so that
    /// `get --anchor` can check the chain.
    #[arg(long, value_name = "FILE", requires = "key")]
    cert: Option<PathBuf>,
    /// Another certificate to serve with the object (an issuer between --cert and the trust
    /// anchor); repeatable.
    #[arg(long, value_name = "FILE", requires = "cert")]
    serve_cert: Vec<PathBuf>,
    /// Sign manifests of N segment digests (1..=256) instead of every segment: one signature
    /// covers N packets, and segments carry DigestSha256.
    #[arg(long, value_name = "N")]
    manifest: Option<usize>,
    /// FreshnessPeriod of the segments, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    freshness: u64,
    /// Version number [default: the current time in milliseconds].
    #[arg(long)]
    version: Option<u64>,
    /// Segment packets kept in memory, in MiB; the rest are re-read from the file on demand.
    #[arg(long, default_value_t = 256)]
    memory_mib: usize,
    /// Print the published name and sizes as one JSON line on stdout when ready.
    #[arg(long)]
    json: bool,
}

/// `nameway get NAME`.
#[derive(Debug, clap::Args)]
pub(crate) struct GetArgs {
    /// The object's name, with or without its version (found by RDR metadata or CanBePrefix).
    name: String,
    /// Write the object to FILE (written to FILE.part, renamed when complete and verified;
    /// removed on failure; a device or FIFO such as /dev/null is written in place; `-` is
    /// standard output) [default: standard output].
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// Congestion control: fixed, aimd, cubic or delay (RAAQM-like).
    #[arg(long, default_value = "cubic")]
    cc: CcKind,
    /// Initial window in segments (the whole window with --cc fixed).
    #[arg(long, short = 'w', default_value_t = 2.0, value_parser = nameway_transport::cc::parse_window)]
    window: f64,
    /// Largest window in segments (`inf`: no limit).
    #[arg(long, default_value_t = 4096.0, value_parser = nameway_transport::cc::parse_window)]
    max_window: f64,
    /// Verify with this public key (SubjectPublicKeyInfo PEM or DER, from `nameway key
    /// generate`): per packet, or by manifest when the segments carry DigestSha256.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["hmac_key", "anchor"])]
    key: Option<PathBuf>,
    /// Verify against this trust anchor (a self-signed certificate, `nameway key cert`
    /// without an issuer): the signer's certificate chain is fetched and checked up to it
    /// (validity periods, each key signing only under its identity), then every packet.
    #[arg(long, value_name = "FILE", conflicts_with = "hmac_key")]
    anchor: Option<PathBuf>,
    /// Verify HMAC-SHA256 signatures with the secret in FILE.
    #[arg(long, value_name = "FILE")]
    hmac_key: Option<PathBuf>,
    /// InterestLifetime in milliseconds.
    #[arg(long, default_value_t = 4000)]
    lifetime: u64,
    /// Retransmissions of one segment after a timeout or a Nack before giving up (early
    /// retransmissions, by RACK or a tail loss probe, do not count, up to four times this).
    #[arg(long, default_value_t = 15)]
    retries: u32,
    /// Smallest retransmission timeout in milliseconds.
    #[arg(long, default_value_t = 200)]
    min_rto: u64,
    /// No progress bar and no summary.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Print the summary as JSON on stdout (needs -o FILE other than `-`).
    #[arg(long, requires = "output")]
    json: bool,
}

/// `nameway key ...`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum KeyCommand {
    /// Make a signing key: FILE (private, mode 0600) and FILE.pub (public, for `get --key`).
    Generate {
        /// ed25519, ecdsa, rsa (2048 bits) or hmac (32 random bytes; no .pub).
        kind: SignatureKind,
        /// Where to write the private key.
        file: PathBuf,
    },
    /// Issue a certificate (NDN format v2) for a key: self-signed (a trust anchor) without
    /// --issuer-key, else signed by the issuer. Prints the certificate's name.
    Cert {
        /// The key to certify (its private key file, as for `put --key`; the public key is
        /// what the certificate holds).
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
        /// ed25519, ecdsa or rsa: the kind of --key.
        #[arg(long)]
        kind: SignatureKind,
        /// The identity the key may sign under, e.g. /example/producer.
        #[arg(long)]
        identity: String,
        /// The issuer's private key.
        #[arg(long, value_name = "FILE", requires_all = ["issuer_cert", "issuer_kind"])]
        issuer_key: Option<PathBuf>,
        /// The kind of --issuer-key.
        #[arg(long)]
        issuer_kind: Option<SignatureKind>,
        /// The issuer's certificate.
        #[arg(long, value_name = "FILE")]
        issuer_cert: Option<PathBuf>,
        /// Days of validity from now.
        #[arg(long, default_value_t = 365)]
        days: u32,
        /// Where to write the certificate (base64, as ndnsec).
        #[arg(long, short = 'o', value_name = "FILE")]
        output: PathBuf,
    },
}

/// Runs `nameway key`.
///
/// # Errors
/// The key cannot be made or written.
pub(crate) fn key(cmd: &KeyCommand) -> anyhow::Result<()> {
    match cmd {
        KeyCommand::Generate { kind, file } => {
            if *kind == SignatureKind::Digest {
                anyhow::bail!("digest signatures need no key");
            }
            let key = SigningKey::generate(*kind).context("cannot generate the key")?;
            match key.save(file)? {
                Some(public) => outln!("{}", public.display())?,
                None => outln!("{}", file.display())?,
            }
        }
        KeyCommand::Cert {
            key,
            kind,
            identity,
            issuer_key,
            issuer_kind,
            issuer_cert,
            days,
            output,
        } => {
            let subject = SigningKey::load(*kind, key)?;
            let identity = parse_name(identity)?;
            let issuer = match (issuer_key, issuer_kind, issuer_cert) {
                (Some(k), Some(kind), Some(c)) => {
                    Some((SigningKey::load(*kind, k)?, Certificate::load(c)?))
                }
                _ => None,
            };
            let cert = Certificate::issue(
                &subject,
                &identity,
                issuer.as_ref().map(|(k, c)| (k, c)),
                *days,
            )?;
            cert.save(output)?;
            outln!("{}", cert.name())?;
        }
    }
    Ok(())
}

#[derive(Serialize)]
struct Published<'a> {
    name: String,
    bytes: u64,
    segments: u64,
    manifests: usize,
    signature: &'a str,
}

/// The library's options for `put`.
fn publish_options(args: &PutArgs) -> PublishOptions {
    PublishOptions {
        payload_size: args.payload,
        manifest: args.manifest,
        freshness: Duration::from_millis(args.freshness),
        version: args.version,
        // Saturating: a shift drops the high bits (2^44 MiB became 0, nothing kept).
        memory_limit: args.memory_mib.saturating_mul(1 << 20),
    }
}

/// Runs `nameway put`: publishes, then serves until interrupted.
///
/// # Errors
/// The file, the key, the name or the forwarder.
pub(crate) async fn put(transport: Option<&str>, args: &PutArgs) -> anyhow::Result<ExitCode> {
    let prefix = parse_name(&args.name)?;
    let key = match (&args.key, args.sign) {
        (None, SignatureKind::Digest) => SigningKey::Digest,
        (None, kind) => anyhow::bail!(
            "--sign {kind} needs --key FILE (make one with `nameway key generate {kind} FILE`)"
        ),
        (Some(path), kind) => SigningKey::load(kind, path)?,
    };
    let mut certs = Vec::new();
    let key = match &args.cert {
        Some(path) => {
            let cert = Certificate::load(path)?;
            let key = key.with_certificate(&cert)?;
            certs.push(cert);
            for p in &args.serve_cert {
                certs.push(Certificate::load(p)?);
            }
            key
        }
        None => key,
    };
    let options = publish_options(args);
    let publication = if args.file == Path::new("-") {
        let mut buf = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut buf)
            .context("cannot read standard input")?;
        Publication::from_bytes(prefix, Bytes::from(buf), key, options)?
    } else {
        Publication::from_file(prefix, &args.file, key, options)?
    };
    let mut publication = publication.with_certificates(&certs);
    let mut c = client::connect(transport).await?;
    // A self-certifying name published with its owner's key is announced (a delegation to
    // the forwarder's router), which a forwarder with secure routing requires.
    let announced = match &args.key {
        Some(path) => crate::routing::announce_own_name(&mut c, path, publication.prefix()).await?,
        None => false,
    };
    if !announced {
        c.register(publication.prefix()).await?;
    }
    for p in publication.certificate_prefixes() {
        c.register(&p).await?;
    }
    // Caught before the "serving" line: SIGINT or SIGTERM from then on ends with the summary.
    let mut stop = Stop::catch()?;
    let signature = match args.manifest {
        Some(_) => format!("manifest {}", args.sign),
        None => args.sign.to_string(),
    };
    if args.json {
        let line = serde_json::to_string(&Published {
            name: crate::client::show_name(publication.name()),
            bytes: publication.size(),
            segments: publication.segment_count(),
            manifests: publication.manifest_count(),
            signature: &signature,
        })?;
        outln!("{line}")?;
    } else {
        eprintln!(
            "serving {} ({} bytes, {} segments, {} manifests, signed {signature}); Ctrl-C to stop",
            crate::client::show_name(publication.name()),
            publication.size(),
            publication.segment_count(),
            publication.manifest_count()
        );
    }
    std::io::stdout().flush()?;
    let served: anyhow::Result<()> = tokio::select! {
        r = serve_registered(&mut c, &mut publication) => r.map_err(Into::into),
        _ = stop.recv() => Ok(()),
    };
    let stats = publication.stats();
    if !args.json {
        eprintln!(
            "answered {} Interests: {} segments, {} manifests, {} metadata, {} unanswered",
            stats.interests, stats.segments, stats.manifests, stats.metadata, stats.unanswered
        );
    }
    served?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct Summary {
    name: String,
    bytes: u64,
    segments: u64,
    manifests: u64,
    interests: u64,
    retransmissions: u64,
    timeouts: u64,
    fast_retransmits: u64,
    probes: u64,
    nacks: u64,
    retry_after_waits: u64,
    seconds: f64,
    goodput_mbps: f64,
    rtt_min_ms: f64,
    rtt_avg_ms: f64,
    rtt_max_ms: f64,
    window_decreases: u64,
    random_losses: u64,
    peak_window: usize,
    congestion_control: String,
    verification: String,
}

impl Summary {
    fn new(r: &FetchReport, cc: CcKind) -> Self {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        Self {
            name: crate::client::show_name(&r.name),
            bytes: r.bytes,
            segments: r.segments,
            manifests: r.manifests,
            interests: r.interests,
            retransmissions: r.retransmissions,
            timeouts: r.timeouts,
            fast_retransmits: r.fast_retransmits,
            probes: r.probes,
            nacks: r.nacks,
            retry_after_waits: r.retry_after_waits,
            seconds: r.elapsed.as_secs_f64(),
            goodput_mbps: r.goodput_bps() / 1e6,
            rtt_min_ms: ms(r.rtt_min),
            rtt_avg_ms: ms(r.rtt_avg),
            rtt_max_ms: ms(r.rtt_max),
            window_decreases: r.window_decreases,
            random_losses: r.random_losses,
            peak_window: r.peak_window,
            congestion_control: cc.to_string(),
            verification: r.verification.clone(),
        }
    }

    fn text(&self) -> String {
        format!(
            "All segments have been received.\n\
             Name: {}\n\
             Time elapsed: {:.3} seconds\n\
             Segments received: {} ({} manifests)\n\
             Transferred size: {:.1} kB\n\
             Goodput: {:.3} Mbit/s\n\
             Congestion control: {}, {} window decreases ({} on losses judged random), \
             peak window {}\n\
             Retransmitted segments: {} ({} timeouts, {} found lost early, {} probes, {} Nacks, {} RetryAfter waits), \
             Interests sent: {}\n\
             RTT min/avg/max = {:.3}/{:.3}/{:.3} ms\n\
             Verification: {}",
            self.name,
            self.seconds,
            self.segments,
            self.manifests,
            self.bytes as f64 / 1000.0,
            self.goodput_mbps,
            self.congestion_control,
            self.window_decreases,
            self.random_losses,
            self.peak_window,
            self.retransmissions,
            self.timeouts,
            self.fast_retransmits,
            self.probes,
            self.nacks,
            self.retry_after_waits,
            self.interests,
            self.rtt_min_ms,
            self.rtt_avg_ms,
            self.rtt_max_ms,
            self.verification
        )
    }
}

/// Runs `nameway get`.
///
/// # Errors
/// The name, the key, the forwarder, the fetch (with the segment at fault) or the output file.
pub(crate) async fn get(transport: Option<&str>, args: &GetArgs) -> anyhow::Result<ExitCode> {
    let name = parse_name(&args.name)?;
    let output = args.output.as_deref().filter(|p| *p != Path::new("-"));
    if args.json && output.is_none() {
        anyhow::bail!("--json prints on standard output, so the object needs -o FILE");
    }
    let verify = match (&args.key, &args.hmac_key) {
        (Some(k), _) => Some(VerifyKey::load(k, false)?),
        (None, Some(k)) => Some(VerifyKey::load(k, true)?),
        (None, None) => None,
    };
    let options = FetchOptions {
        cc: CcOptions {
            kind: args.cc,
            initial_window: args.window,
            max_window: args.max_window.max(args.window),
        },
        lifetime: Duration::from_millis(args.lifetime),
        max_retries: args.retries,
        min_rto: Duration::from_millis(args.min_rto),
        verify,
        anchor: args.anchor.as_deref().map(Certificate::load).transpose()?,
        ..FetchOptions::default()
    };
    let mut c = client::connect(transport).await?;
    // Caught before the output is created: SIGINT or SIGTERM stops the fetch, removes FILE.part
    // and exits 128 + the signal's number, with one line saying so.
    let mut stop = Stop::catch()?;
    let bar = !args.quiet && std::io::stderr().is_terminal();
    let mut show = |p: &Progress| {
        if bar {
            eprint!("\r{}", progress_line(p));
        }
    };
    let target = output.map(output_target).transpose()?;
    let report = match &target {
        None => {
            let stdout = std::io::stdout();
            let mut sink = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
            let report =
                fetch_or_stop(&mut c, &name, &options, &mut sink, &mut show, &mut stop).await;
            sink.flush()?;
            report
        }
        Some(Output::Direct(path)) => {
            // A device or a pipe (`-o /dev/null`, a FIFO): written as the object arrives,
            // never replaced by a renamed file.
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .with_context(|| format!("cannot open {}", path.display()))?;
            let mut sink = std::io::BufWriter::with_capacity(1 << 20, file);
            let report =
                fetch_or_stop(&mut c, &name, &options, &mut sink, &mut show, &mut stop).await;
            sink.flush()
                .with_context(|| format!("cannot write {}", path.display()))?;
            report
        }
        Some(Output::Renamed(path)) => {
            let part = part_path(path);
            let file = std::fs::File::create(&part)
                .with_context(|| format!("cannot create {}", part.display()))?;
            let mut sink = std::io::BufWriter::with_capacity(1 << 20, file);
            let report =
                fetch_or_stop(&mut c, &name, &options, &mut sink, &mut show, &mut stop).await;
            let written = sink.flush().map_err(anyhow::Error::from);
            match (&report, written) {
                (Ok(Ok(_)), Ok(())) => std::fs::rename(&part, path).with_context(|| {
                    format!("cannot rename {} to {}", part.display(), path.display())
                })?,
                (_, written) => {
                    let _ = std::fs::remove_file(&part);
                    written?;
                }
            }
            report
        }
    };
    if bar {
        eprint!("\r\x1b[2K");
    }
    let report = match report {
        Ok(report) => report.map_err(anyhow::Error::new)?,
        Err(signal) => {
            let left = match &target {
                Some(Output::Renamed(path)) => format!("{} not written", path.display()),
                None | Some(Output::Direct(_)) => "what was written is incomplete".to_owned(),
            };
            eprintln!("nameway get: stopped by {signal} before {name} was whole; {left}");
            return Ok(ExitCode::from(signal.exit_code()));
        }
    };
    let summary = Summary::new(&report, args.cc);
    if args.json {
        crate::output::print_json(&summary)?;
    } else if !args.quiet {
        eprintln!("{}", summary.text());
    }
    Ok(ExitCode::SUCCESS)
}

/// [`fetch`], or the stop signal that came first (the fetch is then dropped, its Interests
/// left to expire).
async fn fetch_or_stop(
    c: &mut client::Client,
    name: &nameway_wire::Name,
    options: &FetchOptions,
    sink: &mut dyn std::io::Write,
    show: &mut dyn FnMut(&Progress),
    stop: &mut Stop,
) -> Result<Result<FetchReport, FetchError>, StopSignal> {
    tokio::select! {
        r = fetch(c, name, options, sink, show) => Ok(r),
        signal = stop.recv() => Err(signal),
    }
}

/// Where `get -o PATH` writes.
#[derive(Debug, PartialEq, Eq)]
enum Output {
    /// A regular file (new or existing): written to `PATH.part`, renamed over it when complete
    /// and verified. A symbolic link is followed, so the link stays and its target is replaced.
    Renamed(PathBuf),
    /// Anything else that exists (a character device such as `/dev/null`, a FIFO, a socket):
    /// written in place, since renaming a file over it would replace the device itself.
    Direct(PathBuf),
}

fn output_target(path: &Path) -> anyhow::Result<Output> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // A new file, or a dangling link: the link itself is replaced.
            return Ok(Output::Renamed(path.to_owned()));
        }
        Err(e) => return Err(e).with_context(|| format!("cannot use {}", path.display())),
    };
    if meta.is_dir() {
        anyhow::bail!("cannot write to {}: it is a directory", path.display());
    }
    if !meta.is_file() {
        return Ok(Output::Direct(path.to_owned()));
    }
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if is_link {
        let target = std::fs::canonicalize(path)
            .with_context(|| format!("cannot resolve {}", path.display()))?;
        return Ok(Output::Renamed(target));
    }
    Ok(Output::Renamed(path.to_owned()))
}

fn part_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".part");
    PathBuf::from(p)
}

fn progress_line(p: &Progress) -> String {
    let secs = p.elapsed.as_secs_f64().max(1e-3);
    let rate = p.bytes as f64 / secs;
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    let (total, eta) = match p.total {
        Some(t) if rate > 0.0 => (
            format!(" / {:.1} MiB", mib(t)),
            format!(" ETA {:.0}s", t.saturating_sub(p.bytes) as f64 / rate),
        ),
        _ => (String::new(), String::new()),
    };
    let width = 24usize;
    let filled = p
        .total
        .filter(|t| *t > 0)
        .map_or(0, |t| ((p.bytes as f64 / t as f64) * width as f64) as usize)
        .min(width);
    format!(
        "[{}{}] {:.1} MiB{total} {:.1} Mbit/s{eta} window {} retx {}  ",
        "#".repeat(filled),
        " ".repeat(width - filled),
        mib(p.bytes),
        rate * 8.0 / 1e6,
        p.window,
        p.retransmissions
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::FileTypeExt as _;

    #[derive(clap::Parser)]
    struct Put {
        #[command(flatten)]
        args: PutArgs,
    }

    #[test]
    fn a_memory_limit_beyond_the_address_space_keeps_every_segment() {
        // `--memory-mib 17592186044416` (2^44 MiB, more than any machine: keep everything)
        // was shifted into 2^64 bytes, which wrapped to 0: every segment re-read and re-signed
        // on every Interest.
        use clap::Parser as _;
        for (mib, bytes) in [
            ("256", 256 << 20),
            ("17592186044416", usize::MAX),
            ("18446744073709551615", usize::MAX),
        ] {
            let put = Put::try_parse_from(["put", "f", "/n", "--memory-mib", mib]).unwrap();
            assert_eq!(publish_options(&put.args).memory_limit, bytes, "{mib} MiB");
        }
    }

    #[test]
    fn regular_files_are_renamed_into_place_and_devices_written_directly() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new");
        assert_eq!(output_target(&new).unwrap(), Output::Renamed(new.clone()));
        std::fs::write(&new, b"old").unwrap();
        assert_eq!(output_target(&new).unwrap(), Output::Renamed(new.clone()));

        // A link keeps pointing at the file, which is what gets replaced.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&new, &link).unwrap();
        assert_eq!(
            output_target(&link).unwrap(),
            Output::Renamed(std::fs::canonicalize(&new).unwrap())
        );

        let null = Path::new("/dev/null");
        assert!(std::fs::metadata(null)
            .unwrap()
            .file_type()
            .is_char_device());
        assert_eq!(
            output_target(null).unwrap(),
            Output::Direct(null.to_owned())
        );

        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        assert_eq!(output_target(&fifo).unwrap(), Output::Direct(fifo.clone()));

        let err = output_target(dir.path()).unwrap_err().to_string();
        assert!(err.contains("is a directory"), "{err}");
    }
}
