//! `nameway bench ciphers --openssl` as a user runs it: the table compares every AEAD suite
//! with OpenSSL sealing one message at a time and with its TLS-record path (both checked against
//! our suites before timing) and with `openssl speed`; `--json` carries the same ratios. Where
//! OpenSSL is not installed the command fails with one line saying so.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::process::Command;

fn openssl_installed() -> bool {
    Command::new("openssl")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn bench(extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_nameway"))
        .args([
            "bench",
            "ciphers",
            "--sizes",
            "64,2500",
            "--time-ms",
            "25",
            "--openssl",
            "--openssl-runs",
            "1",
            "--openssl-seconds",
            "1",
        ])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn openssl_comparison_prints_per_message_tls_record_and_speed_figures() {
    let out = bench(&[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !openssl_installed() {
        assert!(!out.status.success());
        assert!(stderr.contains("openssl"), "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        return;
    }
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("through OpenSSL 3"),
        "long messages should go through OpenSSL here:\n{stdout}"
    );
    // Every AEAD at every size has a finite ratio to OpenSSL per message, to its TLS-record
    // path and to `openssl speed`.
    for suite in [
        "chacha20-poly1305",
        "xchacha20-poly1305",
        "xforro14-poly1305",
        "aes-128-gcm",
        "aes-256-gcm",
    ] {
        for size in ["64", "2500"] {
            let line = stdout
                .lines()
                .find(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    f.first() == Some(&suite)
                        && f.get(1) == Some(&size)
                        && l.contains("openssl-evp")
                })
                .unwrap_or_else(|| panic!("no comparison line for {suite} {size}:\n{stdout}"));
            let finite: Vec<f64> = line
                .split_whitespace()
                .filter_map(|w| w.strip_suffix('x'))
                .filter_map(|w| w.parse::<f64>().ok())
                .collect();
            assert_eq!(
                finite.len(),
                3,
                "{suite} {size}: three ratios expected: {line}"
            );
            assert!(finite.iter().all(|r| r.is_finite() && *r > 0.0), "{line}");
        }
    }
    let json = bench(&["--json"]);
    assert!(json.status.success());
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let suites = v["suites"].as_array().unwrap();
    let aead = suites
        .iter()
        .find(|s| s["suite"] == "xforro14-poly1305" && s["size"] == 2500)
        .unwrap();
    assert!(
        aead["vs_openssl_per_message"]["chacha20-poly1305"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(aead["vs_openssl_tls_record"].as_f64().unwrap() > 0.0);
    // The bare stream cipher against OpenSSL's ChaCha20 in the same rounds.
    let forro = suites
        .iter()
        .find(|s| s["suite"] == "forro14" && s["size"] == 2500)
        .unwrap();
    assert!(forro["vs_openssl_chacha20_stream"].as_f64().unwrap() > 0.0);
    // Four in-process baselines (EVP ChaCha20-Poly1305 and AES-256-GCM, TLS record, ChaCha20
    // stream) x two sizes.
    assert_eq!(v["openssl_per_message"].as_array().unwrap().len(), 8);
    assert_eq!(v["openssl_speed"].as_array().unwrap().len(), 6);
}

#[test]
fn turning_openssl_off_makes_the_comparison_fail_with_one_clear_line() {
    let out = Command::new(env!("CARGO_BIN_EXE_nameway"))
        .env("NAMEWAY_OPENSSL", "off")
        .args([
            "bench",
            "ciphers",
            "--sizes",
            "64",
            "--time-ms",
            "10",
            "--openssl",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("NAMEWAY_OPENSSL=off"),
        "the cause should be named: {stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    // Without --openssl the suites are still measured, on the Rust paths.
    let out = Command::new(env!("CARGO_BIN_EXE_nameway"))
        .env("NAMEWAY_OPENSSL", "off")
        .args(["bench", "ciphers", "--sizes", "2500", "--time-ms", "10"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Rust path only"), "{stdout}");
    assert!(stdout.contains("xforro14-poly1305"), "{stdout}");
}
