//! `nameway lab reproduce all --quick`, as CI runs it: every reproduction writes its report,
//! every figure in it is finite and in its range, and the plots are drawn when matplotlib is
//! there (always in CI). The speed is not judged: quick runs are short and debug builds slow.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;

const NAMES: [&str; 7] = [
    "latency",
    "ciphers",
    "throughput",
    "stream-ciphers",
    "transport",
    "pit-digest",
    "routing",
];

fn matplotlib() -> bool {
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = std::env::var_os("NAMEWAY_PYTHON")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| workspace.join(".venv/bin/python"));
    std::process::Command::new(python)
        .args(["-c", "import matplotlib"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn quick_reproductions_write_sane_reports() {
    if !root() {
        return;
    }
    let plots = matplotlib();
    let required =
        std::env::var_os("CI").is_some() || std::env::var_os("NAMEWAY_REQUIRE_INTEROP").is_some();
    assert!(
        plots || !required,
        "matplotlib is missing from .venv: run scripts/setup-python.sh"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("reports");
    let run = lab_output(
        dir.path(),
        &[
            "reproduce",
            "all",
            "--quick",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let index = std::fs::read_to_string(out.join("README.md")).unwrap();
    for name in NAMES {
        assert!(
            index.contains(&format!("[report]({name}/report.md)")),
            "{name} missing from the index:\n{index}"
        );
        let report = std::fs::read_to_string(out.join(name).join("report.md")).unwrap();
        assert!(report.starts_with("# "), "{name}: {report}");
        let data: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(name).join("data.json")).unwrap(),
        )
        .unwrap();
        let rows = data["rows"].as_array().unwrap();
        assert!(!rows.is_empty(), "{name}: no figures");
        for row in rows {
            let (lo, hi) = (
                row["sane"][0].as_f64().unwrap(),
                row["sane"][1].as_f64().unwrap(),
            );
            // serde_json writes NaN and infinities as null: as_f64 fails on them.
            let ours = row["ours"]
                .as_f64()
                .unwrap_or_else(|| panic!("{name}: {row}: not a finite number"));
            assert!((lo..=hi).contains(&ours), "{name}: {row}");
            if let Some(nfd) = row["nfd"].as_f64() {
                assert!((lo..=hi).contains(&nfd), "{name}: {row}");
            }
        }
        if plots {
            for p in data["plots"].as_array().unwrap() {
                let file = out.join(name).join(p["file"].as_str().unwrap());
                let png =
                    std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                assert!(
                    png.starts_with(b"\x89PNG"),
                    "{} is not a PNG",
                    file.display()
                );
            }
        }
    }
    for lab in [
        "rep-latency",
        "rep-tput",
        "rep-transp",
        "rep-stream",
        "rep-routing",
        "rep-routing-off",
    ] {
        assert!(namespaces(lab).is_empty(), "{lab} left namespaces");
    }
}
