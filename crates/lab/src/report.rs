//! A reproduction's report: a Markdown page with a table (published | ours | NFD, one row per
//! figure, measured in the same run), notes on where the setting differs, PNG plots drawn by
//! matplotlib (`plot.py`, embedded here and run with the repository's `.venv` Python), and the
//! same numbers as JSON. Every figure carries the range it must fall in; [`Report::insane`]
//! names each figure that is not finite or out of its range.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde::Serialize;

use crate::error::LabError;

/// The plotting script: reads a JSON list of plots, writes one PNG each.
const PLOT_PY: &str = include_str!("plot.py");

/// One row of the table.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// What is measured.
    pub what: String,
    /// The published figure, as the paper gives it ("n/a" when it gives none).
    pub published: String,
    /// Ours, measured now.
    pub ours: f64,
    /// NFD's in the same run, when NFD is built and the row applies to it.
    pub nfd: Option<f64>,
    /// Unit of `ours` and `nfd`.
    pub unit: String,
    /// The range `ours` (and `nfd`) must fall in to be believed.
    pub sane: (f64, f64),
}

/// A line or bar plot.
#[derive(Clone, Debug, Serialize)]
pub struct Plot {
    /// PNG file name.
    pub file: String,
    /// Title.
    pub title: String,
    /// `line` or `bar`.
    pub kind: String,
    /// X axis label.
    pub xlabel: String,
    /// Y axis label.
    pub ylabel: String,
    /// Logarithmic x axis.
    pub logx: bool,
    /// Series: label, x values (bar plots: ignored, categories are `categories`), y values.
    pub series: Vec<PlotSeries>,
    /// Bar plots: category names.
    pub categories: Vec<String>,
}

/// One series of a plot.
#[derive(Clone, Debug, Serialize)]
pub struct PlotSeries {
    /// Legend label.
    pub label: String,
    /// X values.
    pub x: Vec<f64>,
    /// Y values.
    pub y: Vec<f64>,
}

/// A reproduction's report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Short name (`latency`).
    pub name: String,
    /// Title.
    pub title: String,
    /// Slot number in issue 30 §2.
    pub number: u32,
    /// Quick mode (CI) or full.
    pub quick: bool,
    /// What was set up and measured.
    pub setup: String,
    /// The published result, in a sentence or two.
    pub published: String,
    /// Where our setting differs, and what the comparison still shows.
    pub differences: Vec<String>,
    /// The table.
    pub rows: Vec<Row>,
    /// Plots.
    pub plots: Vec<Plot>,
    /// What the numbers say.
    pub findings: Vec<String>,
    /// Seconds the reproduction took.
    pub seconds: f64,
    /// Whether NFD was built (so its column is measured).
    pub nfd_built: bool,
    /// Why the plots are missing, if they are.
    pub plots_skipped: Option<String>,
}

impl Report {
    /// An empty report.
    pub fn new(name: &str, number: u32, title: &str, quick: bool) -> Self {
        Self {
            name: name.into(),
            title: title.into(),
            number,
            quick,
            setup: String::new(),
            published: String::new(),
            differences: Vec::new(),
            rows: Vec::new(),
            plots: Vec::new(),
            findings: Vec::new(),
            seconds: 0.0,
            nfd_built: false,
            plots_skipped: None,
        }
    }

    /// Adds a row.
    pub fn row(
        &mut self,
        what: &str,
        published: &str,
        ours: f64,
        nfd: Option<f64>,
        unit: &str,
        sane: (f64, f64),
    ) {
        self.rows.push(Row {
            what: what.into(),
            published: published.into(),
            ours,
            nfd,
            unit: unit.into(),
            sane,
        });
    }

    /// Every figure that is not finite or outside its range, as `row: value`.
    pub fn insane(&self) -> Vec<String> {
        let mut bad = Vec::new();
        for r in &self.rows {
            for (who, v) in [("ours", Some(r.ours)), ("NFD", r.nfd)] {
                let Some(v) = v else { continue };
                if !v.is_finite() || v < r.sane.0 || v > r.sane.1 {
                    bad.push(format!(
                        "{} ({who}): {v} {} not in [{}, {}]",
                        r.what, r.unit, r.sane.0, r.sane.1
                    ));
                }
            }
        }
        for p in &self.plots {
            for s in &p.series {
                if s.y.iter().chain(&s.x).any(|v| !v.is_finite()) {
                    bad.push(format!(
                        "plot {} series {}: a value is not finite",
                        p.file, s.label
                    ));
                }
            }
        }
        bad
    }

    /// Writes `dir/report.md`, `dir/data.json` and the plots (with `python`).
    ///
    /// # Errors
    /// A file cannot be written.
    pub fn write(&mut self, dir: &Path, python: &Path) -> Result<PathBuf, LabError> {
        std::fs::create_dir_all(dir).map_err(|e| LabError::io(dir, e))?;
        if !self.plots.is_empty() {
            self.plots_skipped = draw(dir, python, &self.plots).err();
        }
        let data = dir.join("data.json");
        let json = serde_json::to_string_pretty(self)
            .map_err(|e| LabError::repro(&self.name, e.to_string()))?;
        std::fs::write(&data, json).map_err(|e| LabError::io(&data, e))?;
        let md = dir.join("report.md");
        std::fs::write(&md, self.markdown()).map_err(|e| LabError::io(&md, e))?;
        Ok(md)
    }

    /// The Markdown page.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let mode = if self.quick {
            "quick mode (CI: checks, not figures to quote)"
        } else {
            "full run"
        };
        let _ = writeln!(s, "# {}. {}\n", self.number, self.title);
        let _ = writeln!(
            s,
            "_{mode}, {:.0} s; command: `nameway lab reproduce {}{}`_\n",
            self.seconds,
            self.name,
            if self.quick { " --quick" } else { "" }
        );
        if !self.published.is_empty() {
            let _ = writeln!(s, "**Published.** {}\n", self.published);
        }
        if !self.setup.is_empty() {
            let _ = writeln!(s, "**Here.** {}\n", self.setup);
        }
        if !self.rows.is_empty() {
            let nfd = if self.nfd_built {
                "NFD (same run)"
            } else {
                "NFD (not built: scripts/build-nfd.sh)"
            };
            let _ = writeln!(s, "| what | published | ours | {nfd} |\n|---|---|---|---|");
            for r in &self.rows {
                let ours = format!("{} {}", fmt(r.ours), r.unit);
                let n = r
                    .nfd
                    .map_or_else(|| "—".to_owned(), |v| format!("{} {}", fmt(v), r.unit));
                let _ = writeln!(s, "| {} | {} | {ours} | {n} |", r.what, r.published);
            }
            s.push('\n');
        }
        for f in &self.findings {
            let _ = writeln!(s, "- {f}");
        }
        if !self.findings.is_empty() {
            s.push('\n');
        }
        if !self.differences.is_empty() {
            let _ = writeln!(s, "**Where the setting differs.**\n");
            for d in &self.differences {
                let _ = writeln!(s, "- {d}");
            }
            s.push('\n');
        }
        match &self.plots_skipped {
            Some(why) => {
                let _ = writeln!(s, "_Plots not drawn: {why}._\n");
            }
            None => {
                for p in &self.plots {
                    let _ = writeln!(s, "![{}]({})\n", p.title, p.file);
                }
            }
        }
        s
    }
}

/// A figure with three significant digits or so.
pub fn fmt(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Runs plot.py over `plots`; the reason when it cannot.
fn draw(dir: &Path, python: &Path, plots: &[Plot]) -> Result<(), String> {
    let script = dir.join("plot.py");
    let spec = dir.join("plots.json");
    std::fs::write(&script, PLOT_PY).map_err(|e| e.to_string())?;
    let json = serde_json::to_string(plots).map_err(|e| e.to_string())?;
    std::fs::write(&spec, json).map_err(|e| e.to_string())?;
    let out = std::process::Command::new(python)
        .arg(&script)
        .arg(&spec)
        .arg(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{}: {e}", python.display()))?;
    let _ = std::fs::remove_file(&script);
    let _ = std::fs::remove_file(&spec);
    if out.status.success() {
        Ok(())
    } else {
        Err(crate::net::one_line(&out.stderr))
    }
}

/// The Python that has matplotlib: `$NAMEWAY_PYTHON`, else the repository's `.venv` found
/// from `bin_dir` (`target/<profile>/`, two levels below the repository), else `python3`.
pub fn python(bin_dir: &Path) -> PathBuf {
    if let Some(p) = std::env::var_os("NAMEWAY_PYTHON") {
        return PathBuf::from(p);
    }
    for up in bin_dir.ancestors().take(4) {
        let venv = up.join(".venv/bin/python");
        if venv.is_file() {
            return venv;
        }
    }
    PathBuf::from("python3")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_out_of_range_or_not_finite_are_reported() {
        let mut r = Report::new("x", 1, "X", true);
        r.row("a", "1 ms", 0.5, Some(2.0), "ms", (0.0, 1.0));
        r.row("b", "n/a", f64::NAN, None, "ms", (0.0, 1.0));
        let bad = r.insane();
        assert_eq!(bad.len(), 2, "{bad:?}");
        assert!(bad[0].starts_with("a (NFD): 2"));
        assert!(bad[1].starts_with("b (ours): NaN"));
        let md = r.markdown();
        assert!(md.contains("| a | 1 ms | 0.500 ms | 2.00 ms |"), "{md}");
    }
}
