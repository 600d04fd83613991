//! The relay's CPU and context switches.
//!
//! CPU is counted twice: the relay thread's own (`getrusage(RUSAGE_THREAD)`), and the whole
//! process's (`getrusage(RUSAGE_SELF)`). The benchmark's process runs nothing but the relay
//! (the clients are other processes), so the two differ only by the kernel threads io_uring
//! starts inside the process: the `SQPOLL` thread (`iou-sqp-*`) and any async workers
//! (`iou-wrk-*`), which are threads of the process and so counted by `RUSAGE_SELF`, live or
//! exited. [`io_threads`] lists them by name, to say which ran.

use std::time::Instant;

/// CPU and switches at one instant.
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    /// When it was taken.
    pub at: Instant,
    /// The calling thread's user + system CPU, in microseconds.
    pub thread_cpu_us: u64,
    /// The calling thread's voluntary + involuntary context switches.
    pub thread_switches: u64,
    /// The process's user + system CPU (all its threads), in microseconds.
    pub process_cpu_us: u64,
}

fn rusage(who: i32) -> libc::rusage {
    // SAFETY: an all-zero rusage is a valid value for getrusage to fill.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid out-pointer. getrusage cannot fail with a valid `who`; a failure
    // leaves zeros, which shows in the figures.
    unsafe { libc::getrusage(who, &mut ru) };
    ru
}

fn cpu_us(ru: &libc::rusage) -> u64 {
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    us(ru.ru_utime) + us(ru.ru_stime)
}

impl Usage {
    /// The figures now, for the calling thread and its process.
    pub fn now() -> Self {
        let thread = rusage(libc::RUSAGE_THREAD);
        let process = rusage(libc::RUSAGE_SELF);
        Usage {
            at: Instant::now(),
            thread_cpu_us: cpu_us(&thread),
            thread_switches: (thread.ru_nvcsw + thread.ru_nivcsw) as u64,
            process_cpu_us: cpu_us(&process),
        }
    }
}

/// The names of the process's io_uring kernel threads now (`iou-sqp-*`, `iou-wrk-*`).
pub fn io_threads() -> Vec<String> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let mut names: Vec<String> = tasks
        .filter_map(|t| t.ok())
        .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
        .map(|c| c.trim().to_string())
        .filter(|c| c.starts_with("iou-"))
        .collect();
    names.sort();
    names
}

/// User + system CPU of this process's children that have been waited for, in microseconds.
pub fn children_cpu_us() -> u64 {
    cpu_us(&rusage(libc::RUSAGE_CHILDREN))
}
