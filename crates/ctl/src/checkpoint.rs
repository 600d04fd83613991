//! A thread that copies the WAL back into the database file, off the commit path.
//!
//! With SQLite's automatic checkpoints, the commit that crosses the WAL threshold copies
//! pages and fsyncs the file before it returns, so the registrations in that batch wait for
//! it. The registry's connection turns automatic checkpoints off and this thread runs a
//! PASSIVE checkpoint (it never blocks the writer) every 100 ms on a connection of its own.

use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

/// How often the WAL is checkpointed.
const PERIOD: Duration = Duration::from_millis(100);

/// The checkpointing thread; stops when dropped.
#[derive(Debug)]
pub(crate) struct Checkpointer {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts checkpointing `path`; `None` if a second connection cannot be opened (the
    /// caller then keeps automatic checkpoints).
    pub(crate) fn start(path: &Path) -> Option<Self> {
        let conn = Connection::open(path).ok()?;
        conn.execute_batch("PRAGMA busy_timeout = 1000;").ok()?;
        let (stop, rx) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("registry-checkpoint".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(PERIOD) {
                    // A failed checkpoint is retried at the next period; the WAL keeps
                    // every commit meanwhile.
                    let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                }
                let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
            })
            .ok()?;
        Some(Self {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
