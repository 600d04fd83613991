//! `POST /api/cache?...` (docs/controller.md, "Cache policy"): one change to the cache
//! policy, made by an operator holding the API token. The change is written to the policy
//! file (`serve --cache-policy FILE`, a temporary file renamed over it), which the state task
//! reads again as it does after an edit by hand and pushes to every router whose document
//! changed; the answer comes once the service holds the new policy.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nameway_wire::Name;

use super::api::{json_str, parse_query, ApiError};
use super::Shared;
use crate::cache_policy::{CacheEdit, CachePolicy, PrefixRule, SettingsPatch};

/// How long a change may take to be loaded by the state task (it checks the file every
/// 500 ms).
const LOADED_WITHIN: Duration = Duration::from_secs(5);

/// The API token's file beside the CA's database (`ctl.db.api-token`): made by `serve` when
/// it is missing, readable by its owner only.
pub fn api_token_path(db: &Path) -> PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push(".api-token");
    PathBuf::from(p)
}

/// Reads the API token, making it (32 random bytes, hex) when the file does not exist.
///
/// # Errors
/// The file cannot be read or written, or holds no token.
pub(super) fn load_or_make_token(db: &Path) -> std::io::Result<String> {
    let path = api_token_path(db);
    match std::fs::read_to_string(&path) {
        Ok(t) if !t.trim().is_empty() => return Ok(t.trim().to_owned()),
        Ok(_) => {
            return Err(std::io::Error::other(format!(
                "{} is empty: delete it and a new token is made",
                path.display()
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut raw = [0u8; 32];
    getrandom::fill(&mut raw).map_err(|e| std::io::Error::other(e.to_string()))?;
    let token = hex::encode(raw);
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    std::io::Write::write_all(&mut opts.open(&path)?, format!("{token}\n").as_bytes())?;
    Ok(token)
}

/// Writes to the API, by result (`namewayctl_api_writes_total{result}`).
#[derive(Debug, Default)]
pub(super) struct ApiWrites {
    applied: AtomicU64,
    unchanged: AtomicU64,
    refused_token: AtomicU64,
    bad_request: AtomicU64,
    no_policy_file: AtomicU64,
    failed: AtomicU64,
}

impl ApiWrites {
    /// Every result and its count.
    pub(super) fn all(&self) -> [(&'static str, u64); 6] {
        let r = |a: &AtomicU64| a.load(Ordering::Relaxed);
        [
            ("applied", r(&self.applied)),
            ("unchanged", r(&self.unchanged)),
            ("refused_token", r(&self.refused_token)),
            ("bad_request", r(&self.bad_request)),
            ("no_policy_file", r(&self.no_policy_file)),
            ("failed", r(&self.failed)),
        ]
    }
}

/// The change a query asks for.
///
/// - `capacity=N`, `admit=BOOL`, `serve=BOOL`, `memory_bytes=N`, `disk_bytes=N` (at least
///   one): every router's settings, or
///   one router's with `router=NAME`;
/// - `prefix=NAME` with `admit=BOOL` (default true) and `priority=normal|low` (default
///   normal): a prefix's rule;
/// - `remove_prefix=NAME` or `remove_router=NAME` alone: a rule or a router's settings
///   removed.
pub(super) fn parse_edit(query: &str) -> Result<CacheEdit, ApiError> {
    let bad = |s: String| ApiError::BadQuery(s);
    let mut seen = std::collections::BTreeMap::new();
    for (k, v) in parse_query(query)? {
        if !matches!(
            k.as_str(),
            "capacity"
                | "admit"
                | "serve"
                | "memory_bytes"
                | "disk_bytes"
                | "router"
                | "prefix"
                | "priority"
                | "remove_prefix"
                | "remove_router"
        ) {
            return Err(bad(format!("unexpected parameter {k:?}")));
        }
        if seen.insert(k.clone(), v).is_some() {
            return Err(bad(format!("{k} given twice")));
        }
    }
    let name = |k: &str| -> Result<Option<Name>, ApiError> {
        seen.get(k)
            .map(|v| {
                v.parse::<Name>()
                    .map_err(|e| bad(format!("{k} {v:?} is not a name: {e}")))
            })
            .transpose()
    };
    let flag = |k: &str| -> Result<Option<bool>, ApiError> {
        seen.get(k)
            .map(|v| match v.as_str() {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(bad(format!("{k} {v:?} (use true or false)"))),
            })
            .transpose()
    };
    let only = |allowed: &[&str], what: &str| -> Result<(), ApiError> {
        match seen.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(k) => Err(bad(format!("{k} does not go with {what}"))),
            None => Ok(()),
        }
    };
    if let Some(p) = name("remove_prefix")? {
        only(&["remove_prefix"], "remove_prefix")?;
        return Ok(CacheEdit::RemovePrefix(p));
    }
    if let Some(r) = name("remove_router")? {
        only(&["remove_router"], "remove_router")?;
        return Ok(CacheEdit::RemoveRouter(r));
    }
    if let Some(prefix) = name("prefix")? {
        only(&["prefix", "admit", "priority"], "prefix")?;
        let low_priority = match seen.get("priority").map(String::as_str) {
            None | Some("normal") => false,
            Some("low") => true,
            Some(other) => return Err(bad(format!("priority {other:?} (use normal or low)"))),
        };
        return Ok(CacheEdit::Prefix(PrefixRule {
            prefix,
            admit: flag("admit")?.unwrap_or(true),
            low_priority,
        }));
    }
    only(
        &[
            "router",
            "capacity",
            "admit",
            "serve",
            "memory_bytes",
            "disk_bytes",
        ],
        "router settings",
    )?;
    let number = |k: &str| -> Result<Option<u64>, ApiError> {
        seen.get(k)
            .map(|v| {
                v.parse::<u64>()
                    .map_err(|_| bad(format!("{k} {v:?} is not a number")))
            })
            .transpose()
    };
    let patch = SettingsPatch {
        capacity: number("capacity")?,
        admit: flag("admit")?,
        serve: flag("serve")?,
        memory_bytes: number("memory_bytes")?,
        disk_bytes: number("disk_bytes")?,
    };
    if patch.is_empty() {
        return Err(bad(
            "nothing to set: capacity, admit, serve, prefix, remove_prefix or remove_router".into(),
        ));
    }
    Ok(match name("router")? {
        Some(r) => CacheEdit::Router(r, patch),
        None => CacheEdit::Defaults(patch),
    })
}

/// Whether the request's `authorization` header carries the token (compared in time that
/// does not depend on where they differ).
fn authorized(head: &str, token: &str) -> bool {
    let given = head.lines().skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case("authorization")
            .then(|| v.trim().strip_prefix("Bearer ").map(str::trim))
            .flatten()
    });
    let Some(given) = given else {
        return false;
    };
    let (a, b) = (given.as_bytes(), token.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Answers `POST /api/cache?query` with the request's `head`: (HTTP status, content type,
/// body).
pub(super) async fn post(
    shared: &Shared,
    head: &str,
    query: &str,
) -> (&'static str, &'static str, String) {
    let c = &shared.api_writes;
    let count = |a: &AtomicU64| {
        a.fetch_add(1, Ordering::Relaxed);
    };
    if !shared
        .api_token
        .as_deref()
        .is_some_and(|t| authorized(head, t))
    {
        count(&c.refused_token);
        tracing::warn!("POST /api/cache refused: no or wrong API token");
        return (
            "401 Unauthorized",
            "text/plain",
            "no or wrong API token (authorization: Bearer TOKEN; the token is in the file <ca db>.api-token)\n".into(),
        );
    }
    let edit = match parse_edit(query) {
        Ok(e) => e,
        Err(e) => {
            count(&c.bad_request);
            return ("400 Bad Request", "text/plain", format!("{e}\n"));
        }
    };
    let Some(file) = shared.cache_file.clone() else {
        count(&c.no_policy_file);
        return (
            "409 Conflict",
            "text/plain",
            "the controller was started without --cache-policy FILE: there is no policy file to keep the change in\n".into(),
        );
    };
    let result = {
        let _one_writer = shared
            .cache_writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        tokio::task::block_in_place(|| write_edit(&file, &edit))
    };
    let policy = match result {
        Ok((policy, false)) => {
            count(&c.unchanged);
            policy
        }
        Ok((policy, true)) => {
            tracing::info!(file = %file.display(), ?edit, "cache policy changed through the API");
            if !loaded(shared, &policy).await {
                count(&c.failed);
                return (
                    "504 Gateway Timeout",
                    "text/plain",
                    format!("the policy was written to {} but the service did not load it within {LOADED_WITHIN:?}\n", file.display()),
                );
            }
            count(&c.applied);
            policy
        }
        Err(e) => {
            count(&c.failed);
            tracing::error!("POST /api/cache: {e}");
            return (
                "500 Internal Server Error",
                "application/json",
                format!("{{\"error\":{}}}\n", json_str(&e)),
            );
        }
    };
    (
        "200 OK",
        "application/json",
        format!("{}\n", policy.to_json()),
    )
}

/// Reads the file, applies `edit`, writes it back when it changed (a temporary file renamed
/// over it). Returns the policy and whether it changed.
fn write_edit(file: &Path, edit: &CacheEdit) -> Result<(CachePolicy, bool), String> {
    let mut policy = CachePolicy::load(file).map_err(|e| e.to_string())?;
    if !policy.apply_edit(edit) {
        return Ok((policy, false));
    }
    let text = policy.to_toml();
    let mut tmp = file.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let io = |e: std::io::Error| format!("cannot write {}: {e}", file.display());
    std::fs::write(&tmp, text.as_bytes()).map_err(io)?;
    std::fs::rename(&tmp, file).map_err(io)?;
    Ok((policy, true))
}

/// Waits until the state task holds `policy`.
async fn loaded(shared: &Shared, policy: &CachePolicy) -> bool {
    let start = Instant::now();
    while start.elapsed() < LOADED_WITHIN {
        let held = shared
            .status
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .cache
            == *policy;
        if held {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_make_one_edit_and_bad_ones_say_why() {
        let n = |s: &str| s.parse::<Name>().unwrap();
        assert_eq!(
            parse_edit("capacity=100&serve=false").unwrap(),
            CacheEdit::Defaults(SettingsPatch {
                capacity: Some(100),
                serve: Some(false),
                ..SettingsPatch::default()
            })
        );
        assert_eq!(
            parse_edit("router=%2Fe%2Fr2&admit=false").unwrap(),
            CacheEdit::Router(
                n("/e/r2"),
                SettingsPatch {
                    admit: Some(false),
                    ..SettingsPatch::default()
                }
            )
        );
        assert_eq!(
            parse_edit("prefix=%2Fe%2Flive&admit=false").unwrap(),
            CacheEdit::Prefix(PrefixRule {
                prefix: n("/e/live"),
                admit: false,
                low_priority: false
            })
        );
        assert_eq!(
            parse_edit("remove_prefix=/e/live").unwrap(),
            CacheEdit::RemovePrefix(n("/e/live"))
        );
        for (bad, why) in [
            ("", "nothing to set"),
            ("router=/e/r1", "nothing to set"),
            ("capacity=lots", "capacity"),
            ("admit=yes", "true or false"),
            ("prefix=/a&capacity=3", "does not go with prefix"),
            ("prefix=/a&priority=high", "priority"),
            ("remove_prefix=/a&admit=false", "does not go with"),
            ("capacity=1&capacity=2", "twice"),
            ("colour=red", "unexpected"),
            ("prefix=nope", "not a name"),
        ] {
            let e = parse_edit(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn only_the_right_bearer_token_is_authorized() {
        let head = |h: &str| format!("POST /api/cache?capacity=1 HTTP/1.1\r\n{h}\r\n");
        assert!(authorized(&head("Authorization: Bearer abc"), "abc"));
        assert!(authorized(&head("authorization:Bearer abc "), "abc"));
        assert!(!authorized(&head("Authorization: Bearer abd"), "abc"));
        assert!(!authorized(&head("Authorization: Bearer ab"), "abc"));
        assert!(!authorized(&head("Authorization: Basic abc"), "abc"));
        assert!(!authorized(&head("x-token: abc"), "abc"));
    }

    #[test]
    fn the_token_is_made_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("ctl.db");
        let t = load_or_make_token(&db).unwrap();
        assert_eq!(t.len(), 64);
        assert_eq!(load_or_make_token(&db).unwrap(), t);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(api_token_path(&db))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "{mode:o}");
        }
    }
}
