//! The PostgreSQL server of `scripts/postgres-test-server.sh` for the tests that use it:
//! included with `#[path]` by `crates/ctl/tests/registry_postgres.rs` and
//! `crates/daemon/tests/ctl_nfd.rs` (no dev-dependency: `psql` does the administration).
#![allow(dead_code)] // each suite uses its part

use std::io::Write as _;
use std::process::Command;

/// The test server's conninfo (`NAMEWAY_TEST_POSTGRES`), or `None`, said on stderr, when
/// there is none; a failed test instead when `NAMEWAY_REQUIRE_INTEROP` is set (CI).
pub(crate) fn server(test: &str) -> Option<String> {
    match std::env::var("NAMEWAY_TEST_POSTGRES") {
        Ok(s) if !s.trim().is_empty() => Some(s),
        _ => {
            assert!(
                std::env::var_os("NAMEWAY_REQUIRE_INTEROP").is_none(),
                "{test}: NAMEWAY_TEST_POSTGRES is unset and NAMEWAY_REQUIRE_INTEROP is set: \
                 run the tests under scripts/postgres-test-server.sh (scripts/test.sh does)"
            );
            // Straight to stderr, past the test harness's capture: a skip is seen.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: NAMEWAY_TEST_POSTGRES is unset (run under \
                 scripts/postgres-test-server.sh)"
            );
            None
        }
    }
}

/// `base` with its database replaced by `db` (a key=value conninfo or a URL).
pub(crate) fn with_db(base: &str, db: &str) -> String {
    let t = base.trim();
    if t.starts_with("postgres://") || t.starts_with("postgresql://") {
        let (head, query) = t.split_once('?').map_or((t, ""), |(h, q)| (h, q));
        let scheme_end = head.find("://").unwrap() + 3;
        let host_end = head[scheme_end..]
            .find('/')
            .map_or(head.len(), |i| scheme_end + i);
        let q = if query.is_empty() {
            String::new()
        } else {
            format!("?{query}")
        };
        format!("{}/{db}{q}", &head[..host_end])
    } else {
        format!("{t} dbname={db}")
    }
}

/// `psql` (`NAMEWAY_TEST_POSTGRES_BIN/psql` when set) on `conninfo` with `args`, unaligned
/// tuples only, stopping at the first error: its output.
pub(crate) fn psql(conninfo: &str, args: &[&str]) -> String {
    let bin = std::env::var("NAMEWAY_TEST_POSTGRES_BIN")
        .map(|d| format!("{d}/psql"))
        .unwrap_or_else(|_| "psql".into());
    let out = Command::new(&bin)
        .args([
            "-X",
            "-q",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            conninfo,
        ])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{bin}: {e}"));
    assert!(
        out.status.success(),
        "psql {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A new, empty database `db` on the server at `base` (dropped first if it exists); its
/// conninfo.
pub(crate) fn fresh_db(base: &str, db: &str) -> String {
    psql(
        base,
        &["-c", &format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)")],
    );
    psql(base, &["-c", &format!("CREATE DATABASE {db}")]);
    with_db(base, db)
}
