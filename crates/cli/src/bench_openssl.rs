//! `nameway bench ciphers --openssl`: the same sizes measured by the system's
//! `openssl speed`, and every suite's throughput next to OpenSSL's.
//!
//! Each (cipher, size) pair runs `openssl speed -mr [-aead] -evp CIPHER
//! -bytes N -seconds S` as a subprocess, several times; the median of the
//! runs is reported. Without `-elapsed` OpenSSL divides by its user CPU time,
//! as `nameway_crypto::bench` divides by the thread's CPU time: on a shared
//! machine time spent descheduled is nobody's cipher. `-aead` (for the AEAD ciphers)
//! makes every message a fresh nonce, 13 bytes of associated data, the
//! payload and a tag, the per-packet work our suites do; without it OpenSSL
//! streams all messages through one context and computes no tag.

use std::io::ErrorKind;
use std::process::Command;

use anyhow::{bail, Context, Result};
use nameway_crypto::bench::{BaselineRow, Row};
use nameway_crypto::Suite;

/// The OpenSSL ciphers measured: the AEAD the targets are set against, the
/// bare stream cipher, and the AES-GCM a forwarder would use.
pub(crate) const CIPHERS: [&str; 3] = ["chacha20-poly1305", "chacha20", "aes-256-gcm"];

/// One OpenSSL figure: the median of `runs` runs.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Reference {
    /// OpenSSL's cipher name, one of [`CIPHERS`].
    pub(crate) cipher: &'static str,
    /// Payload size in bytes.
    pub(crate) size: usize,
    /// Median throughput in 10^6 bytes per second.
    pub(crate) mb_per_s: f64,
}

/// How `openssl speed` is run.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Speed {
    /// `-seconds` of each run (OpenSSL takes whole seconds).
    pub(crate) seconds: u32,
    /// Runs per (cipher, size); the median is kept.
    pub(crate) runs: usize,
}

impl Speed {
    /// The command line for one run, without the program name.
    pub(crate) fn args(self, cipher: &str, size: usize) -> Vec<String> {
        let mut args = vec!["speed".into(), "-mr".into()];
        if is_aead(cipher) {
            args.push("-aead".into());
        }
        args.extend([
            "-evp".into(),
            cipher.into(),
            "-bytes".into(),
            size.to_string(),
            "-seconds".into(),
            self.seconds.to_string(),
        ]);
        args
    }

    /// Measures every cipher of [`CIPHERS`] at every size.
    ///
    /// # Errors
    /// If `openssl` is not on `PATH`, fails, or prints no result line.
    pub(crate) fn measure(self, sizes: &[usize]) -> Result<Vec<Reference>> {
        let mut refs = Vec::new();
        for &size in sizes {
            for cipher in CIPHERS {
                let mut runs = (0..self.runs.max(1))
                    .map(|_| self.run_once(cipher, size))
                    .collect::<Result<Vec<f64>>>()?;
                refs.push(Reference {
                    cipher,
                    size,
                    mb_per_s: nameway_crypto::bench::median(&mut runs),
                });
            }
        }
        Ok(refs)
    }

    /// One `openssl speed` run, in MB/s.
    fn run_once(self, cipher: &str, size: usize) -> Result<f64> {
        let args = self.args(cipher, size);
        let out = match Command::new("openssl").args(&args).output() {
            Ok(out) => out,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                bail!("--openssl needs the `openssl` command-line tool, which is not on PATH")
            }
            Err(e) => return Err(e).context("could not run `openssl speed`"),
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let first = stderr.lines().next().unwrap_or("no message");
            bail!("`openssl {}` failed: {first}", args.join(" "));
        }
        parse_speed(&stdout)
            .map(|bytes_per_s| bytes_per_s / 1e6)
            .with_context(|| {
                format!(
                    "no result line in the output of `openssl {}`",
                    args.join(" ")
                )
            })
    }
}

/// Whether OpenSSL's `cipher` is an AEAD (and so takes `-aead`).
fn is_aead(cipher: &str) -> bool {
    cipher != "chacha20"
}

/// Bytes per second from `openssl speed -mr` output: the last field of the
/// `+F:` line (`+F:25:ChaCha20-Poly1305:451647360.00` with one `-bytes`).
pub(crate) fn parse_speed(output: &str) -> Option<f64> {
    let line = output.lines().find(|l| l.starts_with("+F:"))?;
    let value: f64 = line.rsplit(':').next()?.trim().parse().ok()?;
    (value.is_finite() && value > 0.0).then_some(value)
}

/// The OpenSSL cipher a suite is judged against: ChaCha20-Poly1305 for every
/// AEAD (the target), ChaCha20 for the bare stream ciphers and CPA.
pub(crate) fn reference_for(suite: Suite) -> &'static str {
    if suite.authenticates() {
        "chacha20-poly1305"
    } else {
        "chacha20"
    }
}

/// The in-process per-message baselines, in the order they are measured
/// (their index is the index into [`Row::vs_baselines`]); the TLS-record
/// baseline comes after them, at index [`TLS_RECORD`].
pub(crate) const PER_MESSAGE: [Suite; 2] = [Suite::ChaCha20Poly1305, Suite::Aes256Gcm];

/// The index of OpenSSL's TLS-record ChaCha20-Poly1305 in the baselines.
pub(crate) const TLS_RECORD: usize = PER_MESSAGE.len();

/// The index of OpenSSL's streaming ChaCha20 (in process) in the baselines.
pub(crate) const STREAM: usize = TLS_RECORD + 1;

/// The name [`crate::bench_libcrypto::StreamBaseline`] reports.
const STREAM_NAME: &str = "openssl-evp chacha20 stream";

/// The per-message baselines a suite is compared with (indices into
/// [`PER_MESSAGE`]): OpenSSL's ChaCha20-Poly1305 for every AEAD (the target),
/// and its AES-256-GCM too for the AES-GCM suites; none for the rest.
fn per_message_refs(suite: Suite) -> &'static [usize] {
    match suite {
        Suite::Aes128Gcm | Suite::Aes256Gcm => &[0, 1],
        s if s.authenticates() => &[0],
        _ => &[],
    }
}

/// The comparison table. For each suite and size: its MB/s; OpenSSL sealing
/// one message at a time in the same rounds (`openssl-evp`, the same work)
/// with the median same-round ratio; and `openssl speed`'s figure with the
/// plain ratio. AES-GCM suites get a second line against AES-256-GCM.
pub(crate) fn render_table(
    rows: &[Row],
    per_message: &[BaselineRow],
    version: &str,
    refs: &[Reference],
    speed: Speed,
) -> String {
    let mut out = format!(
        "openssl-evp: {version}, per message EVP_EncryptInit_ex(nonce) + EVP_EncryptUpdate(13-B AAD) + \
         EVP_EncryptUpdate(payload) + EVP_EncryptFinal_ex + GET_TAG, the work each suite does; \
         sampled in the same rounds as the suites, ratio = median of same-round ratios\n\
         openssl speed: medians of {} run(s) per cipher and size of `openssl {}` (no -aead for chacha20); \
         for chacha20-poly1305 it streams EVP_EncryptUpdate calls with no per-message nonce or tag\n\
         tls record: OpenSSL's TLS-record ChaCha20-Poly1305 (EVP_CTRL_AEAD_TLS1_AAD + one EVP_Cipher per \
         record; TLS nonces and AAD only), same rounds, median same-round ratio\n\
         {STREAM_NAME}: for the stream suites, OpenSSL's ChaCha20 in process as one continuing \
         EVP_EncryptUpdate keystream (the work of `openssl speed -evp chacha20`), same rounds, median \
         same-round ratio\n",
        speed.runs.max(1),
        speed
            .args("CIPHER", 0)
            .join(" ")
            .replace("-bytes 0", "-bytes N"),
    );
    out.push_str(&format!(
        "{:<20} {:>6} {:>9}   {:<31} {:>8} {:>6}   {:>8} {:>6}   {:<18} {:>8} {:>6}\n",
        "suite",
        "bytes",
        "MB/s",
        "per message",
        "MB/s",
        "ratio",
        "tls rec",
        "ratio",
        "openssl speed",
        "MB/s",
        "ratio"
    ));
    for r in rows {
        let mut lines: Vec<(Option<usize>, Option<&'static str>)> = Vec::new();
        let evp = per_message_refs(r.suite);
        let mut speed_refs = vec![reference_for(r.suite)];
        if matches!(r.suite, Suite::Aes128Gcm | Suite::Aes256Gcm) {
            speed_refs.push("aes-256-gcm");
        }
        for i in 0..evp.len().max(speed_refs.len()) {
            lines.push((evp.get(i).copied(), speed_refs.get(i).copied()));
        }
        for (i, (evp, cipher)) in lines.into_iter().enumerate() {
            let ours = if i == 0 {
                format!("{:<20} {:>6} {:>9.1}", r.suite.name(), r.size, r.mb_per_s)
            } else {
                format!("{:<20} {:>6} {:>9}", "", "", "")
            };
            let evp_part = match evp {
                Some(k) => {
                    let name = format!("openssl-evp {}", PER_MESSAGE[k].name());
                    let theirs = per_message
                        .iter()
                        .find(|b| b.name == name && b.size == r.size)
                        .map_or(f64::NAN, |b| b.mb_per_s);
                    let ratio = r.vs_baselines.get(k).copied().unwrap_or(f64::NAN);
                    let tls = if i == 0 {
                        let theirs = per_message
                            .iter()
                            .find(|b| b.name == "openssl-tls chacha20-poly1305" && b.size == r.size)
                            .map_or(f64::NAN, |b| b.mb_per_s);
                        let ratio = r.vs_baselines.get(TLS_RECORD).copied().unwrap_or(f64::NAN);
                        format!("{} {}", fixed(theirs, 8, 1), ratio_cell(ratio))
                    } else {
                        format!("{:>8} {:>6}", "", "")
                    };
                    format!(
                        "{name:<31} {} {}   {tls}",
                        fixed(theirs, 8, 1),
                        ratio_cell(ratio)
                    )
                }
                None if i == 0 && !r.suite.authenticates() => {
                    let theirs = per_message
                        .iter()
                        .find(|b| b.name == STREAM_NAME && b.size == r.size)
                        .map_or(f64::NAN, |b| b.mb_per_s);
                    let ratio = r.vs_baselines.get(STREAM).copied().unwrap_or(f64::NAN);
                    format!(
                        "{STREAM_NAME:<31} {} {}   {:>8} {:>6}",
                        fixed(theirs, 8, 1),
                        ratio_cell(ratio),
                        "-",
                        "-"
                    )
                }
                None => format!("{:<31} {:>8} {:>6}   {:>8} {:>6}", "-", "-", "-", "-", "-"),
            };
            let speed_part = match cipher {
                Some(cipher) => {
                    let theirs = refs
                        .iter()
                        .find(|x| x.cipher == cipher && x.size == r.size)
                        .map_or(f64::NAN, |x| x.mb_per_s);
                    format!(
                        "{cipher:<18} {} {}",
                        fixed(theirs, 8, 1),
                        ratio_cell(r.mb_per_s / theirs)
                    )
                }
                None => String::new(),
            };
            out.push_str(format!("{ours}   {evp_part}   {speed_part}").trim_end());
            out.push('\n');
        }
    }
    out
}

/// `x` right-aligned in `width` with `decimals`, or `-` if not finite.
fn fixed(x: f64, width: usize, decimals: usize) -> String {
    if x.is_finite() {
        format!("{x:>width$.decimals$}")
    } else {
        format!("{:>width$}", "-")
    }
}

/// A ratio as `0.85x` in a 6-wide cell, or `-`.
fn ratio_cell(r: f64) -> String {
    if r.is_finite() {
        format!("{r:>5.2}x")
    } else {
        format!("{:>6}", "-")
    }
}

/// `{"suites": [...], "openssl_per_message": [...], "openssl_speed": [...]}`:
/// the crate's rows (with `vs_openssl_per_message`, ratios in the order of
/// [`PER_MESSAGE`]) and OpenSSL's figures, as JSON.
pub(crate) fn render_json(rows: &[Row], per_message: &[BaselineRow], refs: &[Reference]) -> String {
    let speed: Vec<serde_json::Value> = refs
        .iter()
        .map(|r| serde_json::json!({"cipher": r.cipher, "size": r.size, "mb_per_s": r.mb_per_s}))
        .collect();
    let evp: Vec<serde_json::Value> = per_message
        .iter()
        .map(
            |b| serde_json::json!({"name": b.name, "size": b.size, "mb_per_s": finite(b.mb_per_s)}),
        )
        .collect();
    let mut suites: serde_json::Value =
        serde_json::from_str(&nameway_crypto::bench::render_json(rows))
            .unwrap_or(serde_json::Value::Null);
    if let Some(list) = suites.as_array_mut() {
        for (v, r) in list.iter_mut().zip(rows) {
            let by_name: serde_json::Map<String, serde_json::Value> = PER_MESSAGE
                .iter()
                .zip(&r.vs_baselines)
                .map(|(s, x)| (s.name().to_string(), finite(*x)))
                .collect();
            let tls = r.vs_baselines.get(TLS_RECORD).copied().unwrap_or(f64::NAN);
            let stream = r.vs_baselines.get(STREAM).copied().unwrap_or(f64::NAN);
            if let Some(obj) = v.as_object_mut() {
                obj.insert("vs_openssl_per_message".into(), by_name.into());
                obj.insert("vs_openssl_tls_record".into(), finite(tls));
                obj.insert("vs_openssl_chacha20_stream".into(), finite(stream));
            }
        }
    }
    serde_json::json!({"suites": suites, "openssl_per_message": evp, "openssl_speed": speed})
        .to_string()
}

/// `x` as a JSON number, or null if not finite.
fn finite(x: f64) -> serde_json::Value {
    if x.is_finite() {
        serde_json::json!(x)
    } else {
        serde_json::Value::Null
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_machine_readable_output() {
        let out = "+H:64\n+F:25:ChaCha20-Poly1305:451647360.00\n";
        assert_eq!(parse_speed(out), Some(451_647_360.0));
        assert_eq!(parse_speed("+H:64\n"), None);
        assert_eq!(parse_speed("+F:25:ChaCha20:nan\n"), None);
        assert_eq!(parse_speed("+F:25:ChaCha20:0.00\n"), None);
    }

    #[test]
    fn aeads_are_run_as_aeads() {
        let speed = Speed {
            seconds: 2,
            runs: 3,
        };
        assert_eq!(
            speed.args("chacha20-poly1305", 64).join(" "),
            "speed -mr -aead -evp chacha20-poly1305 -bytes 64 -seconds 2"
        );
        assert_eq!(
            speed.args("chacha20", 1500).join(" "),
            "speed -mr -evp chacha20 -bytes 1500 -seconds 2"
        );
    }

    #[test]
    fn every_aead_is_judged_against_chacha20_poly1305() {
        for s in Suite::ALL {
            let expected = if s.authenticates() {
                "chacha20-poly1305"
            } else {
                "chacha20"
            };
            assert_eq!(reference_for(s), expected);
        }
    }

    #[test]
    fn stream_suites_are_compared_with_openssl_chacha20_in_the_same_rounds() {
        let rows = vec![Row {
            suite: Suite::Forro14,
            size: 8800,
            mb_per_s: 5000.0,
            cycles_per_byte: None,
            ratio_vs_chacha20: 1.0,
            vs_baselines: vec![f64::NAN, f64::NAN, f64::NAN, 1.25],
        }];
        let per_message = vec![BaselineRow {
            name: STREAM_NAME.into(),
            size: 8800,
            mb_per_s: 4000.0,
        }];
        let refs = vec![Reference {
            cipher: "chacha20",
            size: 8800,
            mb_per_s: 4100.0,
        }];
        let speed = Speed {
            seconds: 1,
            runs: 3,
        };
        let t = render_table(&rows, &per_message, "OpenSSL 3.0.19", &refs, speed);
        assert!(
            t.contains(
                "forro14                8800    5000.0   openssl-evp chacha20 stream       4000.0  1.25x"
            ),
            "{t}"
        );
        let j: serde_json::Value =
            serde_json::from_str(&render_json(&rows, &per_message, &refs)).unwrap();
        assert_eq!(j["suites"][0]["vs_openssl_chacha20_stream"], 1.25);
    }

    #[test]
    fn table_shows_both_baselines_and_aes_line() {
        let rows = vec![Row {
            suite: Suite::Aes256Gcm,
            size: 64,
            mb_per_s: 900.0,
            cycles_per_byte: None,
            ratio_vs_chacha20: 1.0,
            vs_baselines: vec![9.0, 3.0, 4.0],
        }];
        let per_message = vec![
            BaselineRow {
                name: "openssl-evp chacha20-poly1305".into(),
                size: 64,
                mb_per_s: 100.0,
            },
            BaselineRow {
                name: "openssl-evp aes-256-gcm".into(),
                size: 64,
                mb_per_s: 300.0,
            },
            BaselineRow {
                name: "openssl-tls chacha20-poly1305".into(),
                size: 64,
                mb_per_s: 225.0,
            },
        ];
        let refs = vec![
            Reference {
                cipher: "chacha20-poly1305",
                size: 64,
                mb_per_s: 450.0,
            },
            Reference {
                cipher: "aes-256-gcm",
                size: 64,
                mb_per_s: 200.0,
            },
        ];
        let speed = Speed {
            seconds: 1,
            runs: 3,
        };
        let t = render_table(&rows, &per_message, "OpenSSL 3.0.19", &refs, speed);
        assert!(
            t.contains(
                "openssl-evp chacha20-poly1305      100.0  9.00x      225.0  4.00x   \
                 chacha20-poly1305     450.0  2.00x"
            ),
            "{t}"
        );
        assert!(
            t.contains(
                "openssl-evp aes-256-gcm            300.0  3.00x                     \
                 aes-256-gcm           200.0  4.50x"
            ),
            "{t}"
        );
        assert!(
            t.contains("-bytes N") && t.contains("OpenSSL 3.0.19"),
            "{t}"
        );
        let j: serde_json::Value =
            serde_json::from_str(&render_json(&rows, &per_message, &refs)).unwrap();
        assert_eq!(j["suites"][0]["vs_openssl_per_message"]["aes-256-gcm"], 3.0);
        assert_eq!(j["suites"][0]["vs_openssl_tls_record"], 4.0);
        assert_eq!(j["openssl_per_message"][1]["mb_per_s"], 300.0);
        assert_eq!(j["openssl_speed"][0]["mb_per_s"], 450.0);
    }
}
