//! The lab's processes: started inside a node's namespace, tied to the runner's life, and
//! told apart from an unrelated process that later got the same pid.
//!
//! Each is started as `setpriv --pdeathsig KILL -- ip netns exec NETNS PROGRAM ...`: setpriv
//! asks the kernel to send SIGKILL to the process when the runner's thread that started it
//! exits (for any reason, SIGKILL included) and execs `ip`, which enters the namespace and
//! execs the program; the pid stays the same throughout, and the death signal survives the
//! two execs. Start processes from the runner's main thread only (the signal follows the
//! thread, not the process).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::process::{Child, Command};

use crate::error::LabError;
use crate::net::missing;

/// A process as recorded in the state file: its pid and when it started, so that a later
/// cleanup never signals a process that merely reuses the pid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcId {
    /// Process id.
    pub pid: u32,
    /// Start time in clock ticks since boot (`/proc/PID/stat`, field 22).
    pub start: u64,
}

impl ProcId {
    /// The process `pid` as it is now, if it exists.
    pub fn of(pid: u32) -> Option<Self> {
        Some(Self {
            pid,
            start: start_ticks(pid)?,
        })
    }

    /// This process.
    pub fn current() -> Option<Self> {
        Self::of(std::process::id())
    }

    /// Whether the process still runs (and is the same one; a zombie counts as gone).
    pub fn alive(&self) -> bool {
        start_ticks(self.pid) == Some(self.start) && !is_zombie(self.pid)
    }

    /// Sends `signal`; false when the process is gone or is another one now.
    pub fn signal(&self, signal: rustix::process::Signal) -> bool {
        if !self.alive() {
            return false;
        }
        let Some(pid) = i32::try_from(self.pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return false;
        };
        rustix::process::kill_process(pid, signal).is_ok()
    }

    /// SIGTERM, then SIGKILL if it is still there after `grace`. Returns whether it was
    /// running.
    pub async fn stop(&self, grace: Duration) -> bool {
        if !self.signal(rustix::process::Signal::TERM) {
            return false;
        }
        let deadline = Instant::now() + grace;
        while self.alive() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.signal(rustix::process::Signal::KILL);
        true
    }
}

/// Field 22 of `/proc/PID/stat` (after the command name, which may hold spaces and parens).
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.get(stat.rfind(')')? + 2..)?;
    after.split_whitespace().nth(19)?.parse().ok()
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let after = s.get(s.rfind(')')? + 2..)?;
            after.split_whitespace().next().map(|state| state == "Z")
        })
        .unwrap_or(false)
}

/// User and system CPU time of a process so far, in seconds (`/proc/PID/stat` fields 14, 15).
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.get(stat.rfind(')')? + 2..)?;
    let mut fields = after.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    // USER_HZ is 100 on Linux for every architecture this runs on.
    Some((utime + stime) as f64 / 100.0)
}

/// Resident memory of a process in bytes (`/proc/PID/status`, VmRSS).
pub fn rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// What to start in a namespace.
#[derive(Clone, Debug)]
pub struct Spawn<'a> {
    /// The namespace.
    pub netns: &'a str,
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// Extra environment.
    pub env: Vec<(String, String)>,
    /// File that gets the process's standard output and error (appended).
    pub log: &'a Path,
    /// Working directory.
    pub cwd: Option<&'a Path>,
}

/// A started process.
#[derive(Debug)]
pub struct Running {
    /// What it is (a node or app name, `step 3`).
    pub name: String,
    /// Its id.
    pub id: ProcId,
    /// Its handle (killed when dropped).
    pub child: Child,
    /// Its log file.
    pub log: PathBuf,
}

/// Starts `s` as described in the module documentation.
///
/// # Errors
/// setpriv or ip is missing, or the log file cannot be opened.
pub fn spawn(name: &str, s: &Spawn<'_>) -> Result<Running, LabError> {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(s.log)
        .map_err(|e| LabError::io(s.log, e))?;
    let err = log.try_clone().map_err(|e| LabError::io(s.log, e))?;
    let mut cmd = Command::new("setpriv");
    cmd.args(["--pdeathsig", "KILL", "--", "ip", "netns", "exec", s.netns])
        .args(&s.argv)
        .envs(s.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        .kill_on_drop(true);
    if let Some(dir) = s.cwd {
        cmd.current_dir(dir);
    }
    let child = cmd.spawn().map_err(|e| missing("setpriv", &e))?;
    let pid = child.id().ok_or_else(|| LabError::Node {
        node: name.into(),
        detail: "exited at once".into(),
    })?;
    let id = ProcId::of(pid).unwrap_or(ProcId { pid, start: 0 });
    Ok(Running {
        name: name.into(),
        id,
        child,
        log: s.log.to_path_buf(),
    })
}

/// The last `lines` lines of a log file, joined with ` | ` (for one-line error messages).
pub fn log_tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = all.len().saturating_sub(lines);
    all[start..].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_changed_start_is_not() {
        let me = ProcId::current().unwrap();
        assert!(me.alive());
        let other = ProcId {
            start: me.start + 1,
            ..me
        };
        assert!(
            !other.alive(),
            "a reused pid must not count as the same process"
        );
        assert!(!other.signal(rustix::process::Signal::TERM));
        assert!(cpu_seconds(me.pid).unwrap() >= 0.0);
        assert!(rss_bytes(me.pid).unwrap() > 1 << 20);
    }
}
