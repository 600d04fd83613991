//! A small throughput benchmark of every suite, for `nameway bench ciphers`.
//!
//! This is the one part of the crate that reads a clock. It measures each
//! (suite, size) pair in several timed samples and reports the medians:
//!
//! * **MB/s**: payload bytes per second of the measuring thread's CPU time
//!   (`CLOCK_THREAD_CPUTIME_ID`; wall-clock time where the OS has no such
//!   clock), in units of 10^6 bytes. On a machine shared with other work,
//!   time the thread spends descheduled is left out.
//! * **cycles/byte**: from the x86-64 time-stamp counter (`RDTSC`). The TSC
//!   ticks at the CPU's nominal frequency whatever the current clock, so these
//!   are *reference* cycles; with turbo or in a VM they differ from core
//!   cycles. `None` on other architectures.
//! * **ratio**: throughput divided by ChaCha20's at the same size (above 1 is
//!   faster than ChaCha20), taken per round of samples (see [`run`]).
//!
//! Every suite is measured through [`PayloadCipher::seal_in_place_detached`]
//! with 13 bytes of associated data ([`AAD`], as `openssl speed -aead` uses;
//! ignored by the suites that do not authenticate), so stream ciphers, AEADs
//! and CPA do the work a forwarder would do per packet.
//!
//! [`run_with_baselines`] also measures other implementations (a
//! [`Baseline`], such as OpenSSL sealing one message at a time) in the same
//! rounds, and gives every suite's ratio to each of them. CPA is included (through
//! [`Suite::danger_new_cipher`]) as the published baseline; it is not
//! encryption.
//!
//! ```no_run
//! use std::time::Duration;
//! let rows = nameway_crypto::bench::run(&[64, 1500], Duration::from_millis(200));
//! println!("{}", nameway_crypto::bench::render_table(&rows));
//! ```

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

use crate::forro14::Forro14Backend;
use crate::provider::PayloadCipher;
use crate::suite::Suite;

/// The sizes the project reports: a small Interest-sized payload, the paper's
/// CPA block, an Ethernet-MTU packet, a jumbo-ish NDN packet, and 64 KiB.
pub const DEFAULT_SIZES: [usize; 5] = [64, 128, 1500, 8800, 65536];

/// Timed samples per (suite, size) pair; the reported figures are their
/// medians. Many short samples rather than a few long ones: on a shared
/// machine a burst of other work then spoils a few rounds, not the median.
pub const SAMPLES: usize = 15;

/// The associated data every message is sealed with: 13 bytes, the length
/// `openssl speed -aead` uses (a TLS record header's).
pub const AAD: [u8; 13] = [0xcc; 13];

/// Another implementation measured in the same rounds as the suites, to
/// compare them with: it seals one message per call, as a suite does.
pub trait Baseline {
    /// A short label for tables (`openssl-evp chacha20-poly1305`).
    fn name(&self) -> &str;
    /// Nonce length in bytes.
    fn nonce_len(&self) -> usize;
    /// Bytes of room the baseline needs after the payload (an API that
    /// appends the tag in place); `buf` in [`seal`](Self::seal) is that much
    /// longer than the payload, and only the payload counts as throughput.
    fn tail_room(&self) -> usize {
        0
    }
    /// Encrypts the payload in `buf` in place under `nonce`, authenticating
    /// `aad`, and computes the tag. Returns `false` if the implementation
    /// reported an error (the measurement is then worthless; see
    /// [`run_with_baselines`]).
    fn seal(&mut self, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> bool;
}

/// The nonces every message is sealed under.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Nonces {
    /// Every byte 0x24: for the 24-byte-nonce suites a non-zero 16-byte
    /// prefix, so each message pays the nonce extension (HChaCha20,
    /// HForro14). The default, and the worst case.
    #[default]
    Random,
    /// The secure links' layout: zeros, then a packet counter in the last 8
    /// bytes; the 24-byte-nonce suites derive the zero prefix's subkey once.
    Link,
}

/// One baseline at one size, with each suite's ratio to it.
#[derive(Clone, Debug)]
pub struct BaselineRow {
    /// [`Baseline::name`].
    pub name: String,
    /// Payload size in bytes.
    pub size: usize,
    /// Median throughput in 10^6 bytes per second.
    pub mb_per_s: f64,
}

/// One measured (suite, size) pair.
#[derive(Clone, Debug)]
pub struct Row {
    /// The suite measured.
    pub suite: Suite,
    /// Payload size in bytes.
    pub size: usize,
    /// Median throughput in 10^6 bytes per second.
    pub mb_per_s: f64,
    /// Median time-stamp-counter cycles per byte (reference cycles), if the
    /// architecture has a counter we read.
    pub cycles_per_byte: Option<f64>,
    /// `mb_per_s` divided by ChaCha20's at the same size.
    pub ratio_vs_chacha20: f64,
    /// `mb_per_s` divided by each baseline's at the same size (in the order
    /// the baselines were given; empty without baselines), the median of the
    /// per-round ratios.
    pub vs_baselines: Vec<f64>,
}

/// Measures every suite of [`Suite::ALL`] at every size in `sizes`, spending
/// about `min_time` on each (suite, size) pair, and returns one row per pair,
/// suites in registry order.
///
/// For each size the suites are sampled round-robin ([`SAMPLES`] rounds, each
/// suite once per round), so a change in machine load hits all suites alike;
/// the ratio to ChaCha20 is the median of the per-round ratios.
pub fn run(sizes: &[usize], min_time: Duration) -> Vec<Row> {
    run_with_baselines(sizes, min_time, Nonces::Random, &mut []).0
}

/// [`run`], with `baselines` sampled in the same rounds as the suites: each
/// row's [`Row::vs_baselines`] holds its ratio to every baseline (medians of
/// the per-round ratios), and one [`BaselineRow`] per (baseline, size) gives
/// the baselines' own figures. A baseline whose [`Baseline::seal`] ever fails
/// gets a NaN throughput (printed as `-`).
pub fn run_with_baselines(
    sizes: &[usize],
    min_time: Duration,
    nonces: Nonces,
    baselines: &mut [Box<dyn Baseline>],
) -> (Vec<Row>, Vec<BaselineRow>) {
    let ciphers: Vec<Box<dyn PayloadCipher>> = Suite::ALL
        .into_iter()
        .filter_map(|s| s.danger_new_cipher(&bench_key(s)).ok())
        .collect();
    let mut rows = Vec::new();
    let mut base_rows = Vec::new();
    for &size in sizes {
        let mut benches: Vec<Bench<'_>> = ciphers
            .iter()
            .map(|c| Bench::new(Target::Suite(c.as_ref()), size, nonces, min_time))
            .collect();
        let n_suites = benches.len();
        for b in baselines.iter_mut() {
            benches.push(Bench::new(
                Target::Baseline(b.as_mut()),
                size,
                nonces,
                min_time,
            ));
        }
        let mut rounds: Vec<Vec<Sample>> = Vec::with_capacity(SAMPLES);
        for _ in 0..SAMPLES {
            rounds.push(benches.iter_mut().map(Bench::sample).collect());
        }
        drop(benches);
        let base = ciphers.iter().position(|c| c.suite() == Suite::ChaCha20);
        let ratio_to = |i: usize, b: Option<usize>| -> f64 {
            let mut ratios: Vec<f64> = match b {
                Some(b) => rounds
                    .iter()
                    .map(|r| r[i].mb_per_s / r[b].mb_per_s)
                    .collect(),
                None => Vec::new(),
            };
            median(&mut ratios)
        };
        for (i, c) in ciphers.iter().enumerate() {
            let mut rates: Vec<f64> = rounds.iter().map(|r| r[i].mb_per_s).collect();
            let mut cycles: Vec<f64> = rounds.iter().filter_map(|r| r[i].cycles_per_byte).collect();
            rows.push(Row {
                suite: c.suite(),
                size,
                mb_per_s: median(&mut rates),
                cycles_per_byte: (cycles.len() == SAMPLES).then(|| median(&mut cycles)),
                ratio_vs_chacha20: ratio_to(i, base),
                vs_baselines: (0..baselines.len())
                    .map(|k| ratio_to(i, Some(n_suites + k)))
                    .collect(),
            });
        }
        for (k, b) in baselines.iter().enumerate() {
            let mut rates: Vec<f64> = rounds.iter().map(|r| r[n_suites + k].mb_per_s).collect();
            base_rows.push(BaselineRow {
                name: b.name().to_string(),
                size,
                mb_per_s: median(&mut rates),
            });
        }
    }
    rows.sort_by_key(|r| {
        let suite = Suite::ALL.iter().position(|s| *s == r.suite);
        let size = sizes.iter().position(|s| *s == r.size);
        (suite, size)
    });
    (rows, base_rows)
}

/// A human-readable table of `rows`, with a header naming the Forro14
/// backend and the cycle source.
pub fn render_table(rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "forro14 backend: {}; cycles: {}; figures are medians of {SAMPLES} samples",
        Forro14Backend::detect().name(),
        if cfg!(target_arch = "x86_64") {
            "RDTSC reference cycles"
        } else {
            "not available"
        },
    );
    let _ = writeln!(
        out,
        "messages of {} B or more (chacha20-poly1305, xchacha20-poly1305): {}; \
         xforro14-poly1305's Poly1305: {}",
        crate::libcrypto::LARGE,
        match crate::libcrypto::load() {
            Ok(lib) => format!("through {}", lib.version()),
            Err(why) => format!("Rust path only ({why})"),
        },
        crate::forro14::xforro::tag_paths(crate::libcrypto::load().is_ok()),
    );
    let _ = writeln!(
        out,
        "{:<20} {:>7} {:>10} {:>8} {:>11}",
        "suite", "bytes", "MB/s", "cyc/B", "vs chacha20"
    );
    for r in rows {
        let cpb = r
            .cycles_per_byte
            .map_or_else(|| "-".to_string(), |c| format!("{c:.2}"));
        let _ = writeln!(
            out,
            "{:<20} {:>7} {:>10.1} {:>8} {:>10.2}x",
            r.suite.name(),
            r.size,
            r.mb_per_s,
            cpb,
            r.ratio_vs_chacha20
        );
    }
    out
}

/// `rows` as a JSON array of objects with the fields of [`Row`] (`suite` as
/// its registry name, `cycles_per_byte` as `null` when unknown).
pub fn render_json(rows: &[Row]) -> String {
    let mut out = String::from("[");
    for (i, r) in rows.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let cpb = r
            .cycles_per_byte
            .map_or_else(|| "null".to_string(), json_number);
        let _ = write!(
            out,
            "{{\"suite\":\"{}\",\"size\":{},\"mb_per_s\":{},\"cycles_per_byte\":{},\"ratio_vs_chacha20\":{}}}",
            r.suite.name(),
            r.size,
            json_number(r.mb_per_s),
            cpb,
            json_number(r.ratio_vs_chacha20)
        );
    }
    out.push(']');
    out
}

/// A fixed, non-zero key of the suite's length (CPA refuses the zero key).
fn bench_key(suite: Suite) -> Vec<u8> {
    (0..suite.key_len()).map(|i| 0x5a ^ i as u8).collect()
}

/// One timed sample.
struct Sample {
    mb_per_s: f64,
    cycles_per_byte: Option<f64>,
}

/// What one [`Bench`] seals with.
enum Target<'a> {
    /// One of this crate's suites.
    Suite(&'a dyn PayloadCipher),
    /// Another implementation; `failed` once it has reported an error.
    Baseline(&'a mut dyn Baseline),
}

/// Sealing `size`-byte payloads with one cipher, in batches of `iters`.
struct Bench<'a> {
    target: Target<'a>,
    nonce: Vec<u8>,
    buf: Vec<u8>,
    /// Payload bytes per message (`buf` may have tail room after them).
    size: usize,
    iters: u64,
    failed: bool,
}

impl<'a> Bench<'a> {
    /// Warms up and calibrates the batch so one sample takes about
    /// `min_time / SAMPLES`.
    fn new(target: Target<'a>, size: usize, nonces: Nonces, min_time: Duration) -> Self {
        let (nonce_len, room) = match &target {
            Target::Suite(c) => (c.suite().nonce_len(), 0),
            Target::Baseline(b) => (b.nonce_len(), b.tail_room()),
        };
        let nonce = match nonces {
            Nonces::Random => vec![0x24; nonce_len],
            Nonces::Link => {
                let mut n = vec![0; nonce_len];
                if let Some(last) = n.last_mut() {
                    *last = 1;
                }
                n
            }
        };
        let mut bench = Self {
            target,
            nonce,
            buf: vec![0xa5; size + room],
            size,
            iters: 1,
            failed: false,
        };
        // Double the batch until it takes at least 2 ms.
        let per_op = loop {
            let t = Instant::now();
            bench.batch();
            let e = t.elapsed();
            if e >= Duration::from_millis(2) || bench.iters >= 1 << 30 {
                break e.as_secs_f64() / bench.iters as f64;
            }
            bench.iters *= 2;
        };
        let sample_time = min_time.as_secs_f64() / SAMPLES as f64;
        bench.iters = ((sample_time / per_op.max(1e-12)) as u64).max(1);
        bench
    }

    fn batch(&mut self) {
        match &mut self.target {
            Target::Suite(cipher) => {
                for _ in 0..self.iters {
                    // Cannot fail for these sizes; the result is consumed so the work
                    // is not optimised away.
                    let _ = black_box(cipher.seal_in_place_detached(
                        black_box(&self.nonce),
                        black_box(&AAD),
                        &mut self.buf,
                    ));
                }
            }
            Target::Baseline(b) => {
                for _ in 0..self.iters {
                    let ok = b.seal(black_box(&self.nonce), black_box(&AAD), &mut self.buf);
                    self.failed |= !black_box(ok);
                }
            }
        }
    }

    fn sample(&mut self) -> Sample {
        let c0 = crate::arch::timestamp_counter();
        let cpu0 = crate::arch::thread_cpu_time();
        let t = Instant::now();
        self.batch();
        let wall = t.elapsed();
        let cpu1 = crate::arch::thread_cpu_time();
        let c1 = crate::arch::timestamp_counter();
        // The thread's CPU time where the OS reports it: time the thread spent descheduled
        // (another process on a shared machine) is not the cipher's.
        let secs = match (cpu0, cpu1) {
            (Some(a), Some(b)) if b > a => (b - a).as_secs_f64(),
            _ => wall.as_secs_f64(),
        };
        let bytes = (self.size as f64 * self.iters as f64).max(1.0);
        Sample {
            mb_per_s: if self.failed {
                f64::NAN
            } else {
                bytes / secs.max(1e-12) / 1e6
            },
            cycles_per_byte: c0.zip(c1).map(|(a, b)| b.wrapping_sub(a) as f64 / bytes),
        }
    }
}

/// The median of `v` (sorted in place; NaN when empty).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn json_number(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.3}")
    } else {
        "null".to_string()
    }
}
