//! Output shared by the subcommands: aligned text tables for people, JSON for scripts, and the
//! names of management enums.

use std::fmt::Write as _;

use nameway_wire::mgmt::{face_persistency, face_scope, link_type, route_origin};
use serde::Serialize;

/// `--json` for scripts.
#[derive(Clone, Copy, Debug, Default, clap::Args)]
pub(crate) struct JsonFlag {
    /// Print JSON (stable field names) instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `println!` that returns the write error instead of panicking (a closed pipe, as with
/// `nameway ping ... | head`, ends the command instead of crashing it).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}
pub(crate) use outln;

/// Writes `text` to stdout as it is.
///
/// # Errors
/// Writing fails (a closed pipe).
pub(crate) fn write_out(text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    std::io::stdout().lock().write_all(text.as_bytes())
}

/// Prints `value` as pretty JSON on stdout.
///
/// # Errors
/// Serialization failure (not expected for the view types).
pub(crate) fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    outln!("{}", serde_json::to_string_pretty(value)?)?;
    Ok(())
}

/// A text table: a header row, then rows; numeric cells are right-aligned.
#[derive(Debug)]
pub(crate) struct Table {
    headers: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these column headers.
    pub(crate) fn new(headers: &[&'static str]) -> Self {
        Self {
            headers: headers.to_vec(),
            rows: Vec::new(),
        }
    }

    /// Adds a row (as many cells as headers).
    pub(crate) fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as text, one line per row, columns separated by two spaces.
    pub(crate) fn render(&self) -> String {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.len()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let header: Vec<String> = self.headers.iter().map(|h| (*h).to_owned()).collect();
        for row in std::iter::once(&header).chain(&self.rows) {
            let mut line = String::new();
            for (i, (cell, w)) in row.iter().zip(&widths).enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                let numeric = !cell.is_empty() && cell.chars().all(|c| c.is_ascii_digit());
                if numeric {
                    let _ = write!(line, "{cell:>w$}");
                } else {
                    let _ = write!(line, "{cell:<w$}");
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// Prints `key value` lines with the keys aligned.
///
/// # Errors
/// Writing fails (a closed pipe).
pub(crate) fn print_fields(fields: &[(&str, String)]) -> std::io::Result<()> {
    let w = fields.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in fields {
        outln!("  {k:<w$}  {v}")?;
    }
    Ok(())
}

/// `local` / `non-local`.
pub(crate) fn scope_name(scope: u64) -> String {
    match scope {
        face_scope::LOCAL => "local".into(),
        face_scope::NON_LOCAL => "non-local".into(),
        other => other.to_string(),
    }
}

/// `persistent` / `on-demand` / `permanent`.
pub(crate) fn persistency_name(p: u64) -> String {
    match p {
        face_persistency::PERSISTENT => "persistent".into(),
        face_persistency::ON_DEMAND => "on-demand".into(),
        face_persistency::PERMANENT => "permanent".into(),
        other => other.to_string(),
    }
}

/// `point-to-point` / `multi-access` / `ad-hoc`.
pub(crate) fn link_type_name(l: u64) -> String {
    match l {
        link_type::POINT_TO_POINT => "point-to-point".into(),
        link_type::MULTI_ACCESS => "multi-access".into(),
        link_type::AD_HOC => "ad-hoc".into(),
        other => other.to_string(),
    }
}

/// `app`, `static`, `nlsr`... (ndn-cxx names), or the number.
pub(crate) fn origin_name(o: u64) -> String {
    match o {
        route_origin::APP => "app".into(),
        route_origin::AUTOREG => "autoreg".into(),
        route_origin::CLIENT => "client".into(),
        route_origin::AUTOCONF => "autoconf".into(),
        route_origin::NLSR => "nlsr".into(),
        route_origin::PREFIXANN => "prefixann".into(),
        route_origin::CTL => "ctl".into(),
        route_origin::STATIC => "static".into(),
        other => other.to_string(),
    }
}

/// Milliseconds since the Unix epoch as ISO 8601 UTC (`2024-05-01T12:00:00.000Z`).
pub(crate) fn iso_time(ms: u64) -> String {
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

/// Days since 1970-01-01 to (year, month, day), Howard Hinnant's algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_times() {
        assert_eq!(iso_time(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_time(1_709_251_200_123), "2024-03-01T00:00:00.123Z");
        assert_eq!(iso_time(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn tables_align() {
        let mut t = Table::new(&["FaceId", "Remote"]);
        t.row(vec!["1".into(), "internal://".into()]);
        t.row(vec!["256".into(), "fd://7".into()]);
        assert_eq!(
            t.render(),
            "FaceId  Remote\n     1  internal://\n   256  fd://7\n"
        );
    }
}
