//! Operators' requests to a running lab: `nameway lab kill LAB NODE` (a forwarder crashes:
//! SIGKILL, and the lab stays up) and `nameway lab restart LAB NODE` (it starts again with
//! its configuration, identity and state folder, as a crashed router would be restarted).
//!
//! The runner owns the nodes' processes (their death signal follows its thread), so the
//! command does not signal or start anything itself: it leaves a request file
//! `<dir>/<lab>/requests/<node>.<action>`, which the runner's supervision loop takes within
//! [`POLL`], acts on, and answers with `<node>.<action>.done` (one line: `ok: ...` or
//! `error: ...`), which the command prints and removes.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::LabError;

/// How often the runner looks for requests.
pub const POLL: Duration = Duration::from_millis(50);

/// What an operator asks of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// SIGKILL its forwarder; the lab stays up.
    Kill,
    /// Start its forwarder again (after a kill).
    Restart,
}

impl Action {
    /// The request file's suffix.
    pub fn suffix(self) -> &'static str {
        match self {
            Self::Kill => "kill",
            Self::Restart => "restart",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "kill" => Some(Self::Kill),
            "restart" => Some(Self::Restart),
            _ => None,
        }
    }
}

fn folder(lab_dir: &Path) -> PathBuf {
    lab_dir.join("requests")
}

/// Leaves a request for the runner of the lab in `lab_dir`.
///
/// # Errors
/// The folder or file cannot be written.
pub fn submit(lab_dir: &Path, node: &str, action: Action) -> Result<PathBuf, LabError> {
    let dir = folder(lab_dir);
    std::fs::create_dir_all(&dir).map_err(|e| LabError::io(&dir, e))?;
    let done = dir.join(format!("{node}.{}.done", action.suffix()));
    let _ = std::fs::remove_file(&done);
    let path = dir.join(format!("{node}.{}", action.suffix()));
    let tmp = dir.join(format!(".{node}.{}.new", action.suffix()));
    std::fs::write(&tmp, b"").map_err(|e| LabError::io(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| LabError::io(&path, e))?;
    Ok(done)
}

/// The requests waiting (node, action), oldest first; each is removed as it is taken.
pub fn take(lab_dir: &Path) -> Vec<(String, Action)> {
    let Ok(entries) = std::fs::read_dir(folder(lab_dir)) else {
        return Vec::new();
    };
    let mut found: Vec<(std::time::SystemTime, String, Action, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_owned();
            if name.starts_with('.') {
                return None;
            }
            let (node, suffix) = name.rsplit_once('.')?;
            let action = Action::parse(suffix)?;
            let when = e.metadata().and_then(|m| m.modified()).ok()?;
            Some((when, node.to_owned(), action, e.path()))
        })
        .collect();
    found.sort_by_key(|a| a.0);
    found
        .into_iter()
        .filter(|(_, _, _, path)| std::fs::remove_file(path).is_ok())
        .map(|(_, node, action, _)| (node, action))
        .collect()
}

/// The runner's answer to a request.
pub fn answer(lab_dir: &Path, node: &str, action: Action, result: &Result<String, String>) {
    let dir = folder(lab_dir);
    let line = match result {
        Ok(s) => format!("ok: {s}\n"),
        Err(s) => format!("error: {s}\n"),
    };
    let path = dir.join(format!("{node}.{}.done", action.suffix()));
    let tmp = dir.join(format!(".{node}.{}.done.new", action.suffix()));
    if std::fs::write(&tmp, line).is_ok() {
        let _ = std::fs::rename(&tmp, &path);
    }
}

/// Waits for the answer at `done` while `runner_alive` holds, at most `timeout`.
///
/// # Errors
/// The runner answered with an error, ended, or did not answer in time.
pub fn wait_answer(
    done: &Path,
    node: &str,
    timeout: Duration,
    runner_alive: impl Fn() -> bool,
) -> Result<String, LabError> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(text) = std::fs::read_to_string(done) {
            let _ = std::fs::remove_file(done);
            let line = text.trim();
            return match line.strip_prefix("ok: ") {
                Some(ok) => Ok(ok.to_owned()),
                None => Err(LabError::Node {
                    node: node.into(),
                    detail: line.strip_prefix("error: ").unwrap_or(line).to_owned(),
                }),
            };
        }
        if !runner_alive() {
            return Err(LabError::Node {
                node: node.into(),
                detail: "the lab's runner ended before it answered".into(),
            });
        }
        if Instant::now() > deadline {
            return Err(LabError::Node {
                node: node.into(),
                detail: format!("the lab's runner did not answer in {} s", timeout.as_secs()),
            });
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_taken_once_and_answered() {
        let dir = tempfile::tempdir().unwrap();
        let done = submit(dir.path(), "r3", Action::Kill).unwrap();
        submit(dir.path(), "r4", Action::Restart).unwrap();
        let mut got = take(dir.path());
        got.sort();
        assert_eq!(
            got,
            vec![("r3".into(), Action::Kill), ("r4".into(), Action::Restart)]
        );
        assert!(take(dir.path()).is_empty(), "taken twice");
        answer(dir.path(), "r3", Action::Kill, &Ok("r3 killed".into()));
        assert_eq!(
            wait_answer(&done, "r3", Duration::from_secs(1), || true).unwrap(),
            "r3 killed"
        );
        assert!(!done.exists());
        let done = submit(dir.path(), "r9", Action::Restart).unwrap();
        answer(
            dir.path(),
            "r9",
            Action::Restart,
            &Err("no such node".into()),
        );
        let e = wait_answer(&done, "r9", Duration::from_secs(1), || true).unwrap_err();
        assert!(e.to_string().contains("no such node"), "{e}");
        let done = submit(dir.path(), "r1", Action::Kill).unwrap();
        let e = wait_answer(&done, "r1", Duration::from_secs(5), || false).unwrap_err();
        assert!(e.to_string().contains("runner ended"), "{e}");
    }
}
