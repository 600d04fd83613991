//! `nameway lab run FILE`: bring the topology up, run its `[[step]]`s in order (each a command
//! on a node, with a deadline and an expected exit status; background steps run until the
//! end), tear down, and say how each went.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::error::LabError;
use crate::lab::{describe_status, Lab};
use crate::process::log_tail;
use crate::signals::Signals;

/// How one step went.
#[derive(Clone, Debug, Serialize)]
pub struct StepResult {
    /// Its position, from 1.
    pub index: usize,
    /// The node it ran on.
    pub on: String,
    /// Its command.
    pub command: String,
    /// Seconds it took (until started, for a background step).
    pub seconds: f64,
    /// Whether it met its expectation.
    pub ok: bool,
    /// Exit status, timeout, or "started".
    pub outcome: String,
}

/// Runs the steps of the lab's topology; stops at the first failure.
///
/// # Errors
/// [`LabError::Step`] for the failed step (with the end of its output), a signal, or a part
/// of the lab that failed meanwhile.
pub async fn run(
    lab: &mut Lab,
    signals: &mut Signals,
    verbose: bool,
) -> Result<Vec<StepResult>, LabError> {
    let steps = lab.topology.steps.clone();
    let mut results = Vec::new();
    let mut background = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let index = i + 1;
        let started = Instant::now();
        let handle = lab.spawn(&format!("step-{index}"), &step.on, &step.run, &[])?;
        if step.background {
            background.push(handle);
            results.push(StepResult {
                index,
                on: step.on.clone(),
                command: step.run.clone(),
                seconds: 0.0,
                ok: true,
                outcome: "started".into(),
            });
            continue;
        }
        let timeout = Duration::from_secs_f64(step.timeout_s);
        let status = tokio::select! {
            status = lab.wait(handle, timeout) => status?,
            name = signals.recv() => return Err(LabError::Interrupted(name)),
        };
        lab.check_all()?;
        let seconds = started.elapsed().as_secs_f64();
        let (ok, outcome) = match status {
            Some(s) => (s.code() == Some(step.expect_exit), describe_status(s)),
            None => (false, format!("no exit within {} s", step.timeout_s)),
        };
        if verbose {
            println!(
                "step {index} on {} ({}): {outcome} in {seconds:.2} s{}",
                step.on,
                step.run,
                if ok { "" } else { " (FAILED)" }
            );
        }
        results.push(StepResult {
            index,
            on: step.on.clone(),
            command: step.run.clone(),
            seconds,
            ok,
            outcome: outcome.clone(),
        });
        if !ok {
            let tail = lab
                .log_of(handle)
                .map(|p| log_tail(p, 4))
                .unwrap_or_default();
            return Err(LabError::Step {
                index,
                node: step.on.clone(),
                command: step.run.clone(),
                detail: format!(
                    "{outcome} (expected exit status {}); output: {tail}",
                    step.expect_exit
                ),
            });
        }
    }
    for h in background {
        lab.stop(h).await;
    }
    Ok(results)
}
