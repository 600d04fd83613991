//! The state file `<dir>/<lab>/state.json`: written before anything is created and updated
//! as things are, it names the runner, the namespaces and every process, so `nameway lab
//! down` (or the next `up`) can remove what a killed runner left behind.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::LabError;
use crate::net;
use crate::plan::netns_prefix;
use crate::process::ProcId;
use crate::topology::NodeKind;

/// One node as `status` needs it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NodeState {
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: NodeKind,
    /// Its namespace.
    pub netns: String,
    /// Its forwarder's Unix socket.
    pub socket: PathBuf,
    /// Its log.
    pub log: PathBuf,
    /// Its process, once started.
    pub proc: Option<ProcId>,
}

/// What a lab has created.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct State {
    /// The lab's name.
    pub lab: String,
    /// `<root>/<lab>`.
    pub dir: PathBuf,
    /// The process that brought it up and tears it down.
    pub runner: Option<ProcId>,
    /// Every namespace it creates (written before they are).
    pub namespaces: Vec<String>,
    /// Nodes and apps.
    pub nodes: Vec<NodeState>,
    /// Other processes (scenario steps, reproduction apps).
    pub extra: Vec<ProcId>,
    /// Whether bring-up has finished.
    pub up: bool,
    /// Seconds bring-up took.
    pub up_seconds: f64,
}

impl State {
    /// The state file of lab `lab` under `root`.
    pub fn path(root: &Path, lab: &str) -> PathBuf {
        root.join(lab).join("state.json")
    }

    /// Reads a state file; `None` when there is none.
    ///
    /// # Errors
    /// It exists but cannot be read or parsed.
    pub fn load(path: &Path) -> Result<Option<Self>, LabError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(LabError::io(path, e)),
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| LabError::BadState {
                path: path.into(),
                detail: e.to_string(),
            })
    }

    /// Writes the state file (a new file renamed over the old one, so a reader never sees
    /// half of it).
    ///
    /// # Errors
    /// The directory or file cannot be written.
    pub fn save(&self) -> Result<(), LabError> {
        let path = self.dir.join("state.json");
        let tmp = self.dir.join("state.json.new");
        std::fs::create_dir_all(&self.dir).map_err(|e| LabError::io(&self.dir, e))?;
        let text = serde_json::to_string_pretty(self).map_err(|e| LabError::BadState {
            path: path.clone(),
            detail: e.to_string(),
        })?;
        std::fs::write(&tmp, text).map_err(|e| LabError::io(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| LabError::io(&path, e))
    }

    /// Whether the runner is alive (and is not this process).
    pub fn runner_alive(&self) -> bool {
        self.runner
            .is_some_and(|r| r.alive() && r.pid != std::process::id())
    }
}

/// The labs under `root` that have a state file.
pub fn labs(root: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().join("state.json").is_file())
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .collect();
    names.sort();
    names
}

/// What a cleanup removed.
#[derive(Debug, Default, Serialize)]
pub struct Cleanup {
    /// Whether a live runner was asked to stop.
    pub runner_stopped: bool,
    /// Processes that were still running and were stopped.
    pub processes: usize,
    /// Namespaces deleted.
    pub namespaces: Vec<String>,
    /// Whether the node directories (sockets, keys) were removed.
    pub dirs_removed: bool,
}

impl Cleanup {
    /// Whether anything was left to remove.
    pub fn found_anything(&self) -> bool {
        self.runner_stopped
            || self.processes > 0
            || !self.namespaces.is_empty()
            || self.dirs_removed
    }
}

/// Removes everything lab `lab` under `root` may have left: stops a live runner (which tears
/// down itself) and waits for it, stops recorded processes that still run, deletes the
/// recorded namespaces and any other `nwl-<lab>-*` namespace, removes the node directories
/// and the state file. Logs stay. Safe to run on a lab that is already gone.
///
/// # Errors
/// A namespace cannot be deleted, or a directory removed.
pub async fn cleanup(root: &Path, lab: &str) -> Result<Cleanup, LabError> {
    let path = State::path(root, lab);
    let mut out = Cleanup::default();
    let state = State::load(&path)?;
    if let Some(s) = &state {
        if s.runner_alive() {
            if let Some(r) = s.runner {
                // The runner tears its lab down on SIGTERM; what it leaves is removed below.
                out.runner_stopped = r.stop(Duration::from_secs(30)).await;
            }
        }
        let procs = s
            .nodes
            .iter()
            .filter_map(|n| n.proc)
            .chain(s.extra.iter().copied());
        for p in procs {
            if p.stop(Duration::from_secs(3)).await {
                out.processes += 1;
            }
        }
    }
    let prefix = netns_prefix(lab);
    let mut names: Vec<String> = state
        .as_ref()
        .map(|s| s.namespaces.clone())
        .unwrap_or_default();
    names.extend(
        net::namespaces()?
            .into_iter()
            .filter(|n| n.starts_with(&prefix)),
    );
    names.sort();
    names.dedup();
    out.namespaces = net::delete_namespaces(&names)?;
    let nodes = root.join(lab).join("nodes");
    if nodes.exists() {
        std::fs::remove_dir_all(&nodes).map_err(|e| LabError::io(&nodes, e))?;
        out.dirs_removed = true;
    }
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(LabError::io(&path, e)),
    }
    Ok(out)
}
