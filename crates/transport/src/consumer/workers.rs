//! The fetch's worker threads: implicit digests, manifest checks and per-packet signature
//! checks in batches, off the fetch loop.

use std::sync::Arc;

use bytes::Bytes;
use nameway_wire::security::verify_data_wire;
use nameway_wire::{DataView, Name};
use sha2::{Digest as _, Sha256};

use crate::keys::VerifyKey;
use crate::manifest::{implicit_digests, Manifest};

/// A batch goes to the worker thread at this many jobs or bytes to hash (unless sooner
/// needed: [`Workers::submit`]). 1 MiB of packets is about 0.4 ms of hashing: same-run A/B
/// against 256 KiB (21 rounds, manifests of 256, fixed window 64), 0.867 -> 0.901 of unsigned
/// goodput at 8000 B and 0.853 -> 0.883 at 1400 B, and 10 % less consumer CPU; 4 MiB was no
/// better.
pub(super) const BATCH_JOBS: usize = 256;
const BATCH_BYTES: usize = 1 << 20;
/// Digests are best hashed this many at a time ([`implicit_digests`]: 16 lanes of AVX-512;
/// fewer messages take the SHA-NI path, 1.7 instead of 2.8 GB/s at 8000 B), so a batch sent
/// early (for a manifest) leaves the rest of its digests for the next one.
const DIGEST_LANES: usize = 16;

/// Work for the worker thread.
pub(super) enum Job {
    /// A segment's implicit digest (its whole packet's SHA-256), for manifest verification.
    Digest(u64, Bytes),
    /// A segment's own signature to check against the trusted key.
    Verify {
        n: u64,
        view: DataView,
        key: Arc<VerifyKey>,
    },
    /// A manifest to check against the trusted key (if any) and decode.
    Manifest {
        k: u64,
        view: DataView,
        key: Option<Arc<VerifyKey>>,
    },
}

/// What the worker thread returns for a [`Job`].
pub(super) enum Worked {
    Digest(u64, [u8; 32]),
    Verified {
        n: u64,
        name: Name,
        result: Result<(), String>,
    },
    Manifest {
        k: u64,
        name: Name,
        checked: Result<Manifest, String>,
    },
    /// The worker panicked on a batch (its message); the thread has ended.
    Failed(String),
}

/// Runs a worker's batch, turning a panic into [`Worked::Failed`]: a thread that died with
/// results outstanding would leave the fetch waiting for them forever.
fn guarded(run: impl FnOnce() -> Vec<Worked>) -> Vec<Worked> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|payload| {
        let detail = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panicked".to_owned());
        vec![Worked::Failed(detail)]
    })
}

impl Job {
    /// Runs a batch: its digests all at once ([`implicit_digests`]), then the rest in turn.
    fn run_batch(batch: Vec<Self>) -> Vec<Worked> {
        let packets: Vec<&[u8]> = batch
            .iter()
            .filter_map(|job| match job {
                Self::Digest(_, wire) => Some(&wire[..]),
                _ => None,
            })
            .collect();
        let mut digests = implicit_digests(&packets).into_iter();
        drop(packets);
        batch
            .into_iter()
            .map(|job| match job {
                Self::Digest(n, wire) => Worked::Digest(
                    n,
                    digests
                        .next()
                        .unwrap_or_else(|| Sha256::digest(&wire).into()),
                ),
                other => other.run(),
            })
            .collect()
    }

    fn run(self) -> Worked {
        match self {
            Self::Digest(n, wire) => Worked::Digest(n, Sha256::digest(&wire).into()),
            Self::Verify { n, view, key } => Worked::Verified {
                n,
                result: verify_data_wire(&view, key.verifier())
                    .map_err(|e| format!("bad {} signature ({e})", key.kind())),
                name: view.name().clone(),
            },
            Self::Manifest { k, view, key } => {
                let checked = key
                    .as_deref()
                    .map_or(Ok(()), |key| {
                        verify_data_wire(&view, key.verifier())
                            .map_err(|e| format!("bad {} signature on manifest ({e})", key.kind()))
                    })
                    .and_then(|()| Manifest::decode(&view.content()).map_err(|e| e.to_string()));
                Worked::Manifest {
                    k,
                    name: view.name().clone(),
                    checked,
                }
            }
        }
    }
}

/// The fetch's worker threads: they hash segments, check manifests and check per-packet
/// signatures, in batches. At 8000 bytes a digest costs about 4 µs and a signature check 35 µs
/// (Ed25519) to 75 µs (ECDSA P-256), more than everything else the consumer does for a packet,
/// and the fetch loop should not wait for them. The threads end with the fetch (their channels
/// close).
pub(super) struct Workers {
    /// One sender per worker thread (started on first use), fed in turn.
    jobs: Vec<std::sync::mpsc::Sender<Vec<Job>>>,
    next: usize,
    pub(super) results: tokio::sync::mpsc::UnboundedReceiver<Vec<Worked>>,
    results_tx: tokio::sync::mpsc::UnboundedSender<Vec<Worked>>,
    batch: Vec<Job>,
    /// What `batch` costs, in bytes hashed or their equivalent, and whether it holds a
    /// manifest.
    batch_cost: usize,
    batch_urgent: bool,
    /// Jobs sent to the threads whose results have not come back.
    pub(super) outstanding: usize,
}

/// What a signature check counts for in a batch, in bytes of hashing: a batch holds eight
/// checks (an Ed25519 verification takes about 40 µs here, ECDSA P-256 75), a few hundred
/// microseconds of work that several threads share evenly.
const VERIFY_COST: usize = BATCH_BYTES / 8;

/// Worker threads for per-packet signature checks: one per core, at most four (asked of the
/// system once per process: it may read cgroup files).
fn verify_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get().clamp(1, 4)))
}

impl Workers {
    pub(super) fn new() -> Self {
        let (results_tx, results) = tokio::sync::mpsc::unbounded_channel();
        Self {
            jobs: Vec::new(),
            next: 0,
            results,
            results_tx,
            batch: Vec::new(),
            batch_cost: 0,
            batch_urgent: false,
            outstanding: 0,
        }
    }

    pub(super) fn queue(&mut self, job: Job) {
        match &job {
            Job::Digest(_, wire) => self.batch_cost += wire.len(),
            Job::Verify { .. } => self.batch_cost += VERIFY_COST,
            // Manifest 0 sets how many segments a manifest covers, which the fetch needs to
            // plan; the others ride with the next full batch: sending a batch early for each
            // manifest of 32 at 8000 B cut the batches to a quarter, and same-run (21 rounds,
            // fixed window 64) waiting for the full batch took 0.76 -> 0.81 of unsigned.
            Job::Manifest { k, .. } => self.batch_urgent |= *k == 0,
        }
        self.batch.push(job);
    }

    /// Keeps the digests beyond a whole number of [`DIGEST_LANES`] in the queue for the next
    /// batch (they would be hashed at the slower few-message rate).
    fn hold_back_odd_digests(&mut self, batch: &mut Vec<Job>) {
        let digests = batch
            .iter()
            .filter(|j| matches!(j, Job::Digest(..)))
            .count();
        let mut odd = digests % DIGEST_LANES;
        let mut i = batch.len();
        while odd > 0 && i > 0 {
            i -= 1;
            if let Some(Job::Digest(_, wire)) = batch.get(i) {
                self.batch_cost += wire.len();
                self.batch.push(batch.remove(i));
                odd -= 1;
            }
        }
        self.batch.reverse();
    }

    /// Hands the queued jobs to a thread when there are enough of them, when one is manifest
    /// 0, or when `force`d (nothing in flight, so no packet will come to fill the batch).
    /// Each hand-off wakes a thread and then the fetch loop, a few microseconds each, and on
    /// two cores the worker's wake-ups delay the forwarder and the producer: at 8000 B a batch
    /// per loop turn held about four segments, and the wake-ups cost more than a tenth of the
    /// fetch.
    /// Segments waiting for the worker are not in flight, so a batch's wait does not hold the
    /// window back.
    ///
    /// Hashing needs one thread (SHA-256 of a segment is cheap next to receiving it);
    /// per-packet signature checks are the fetch's heaviest work, so the first batch that
    /// holds one starts a thread per core (at most four).
    pub(super) fn submit(&mut self, force: bool) {
        if self.batch.is_empty() {
            return;
        }
        if !force
            && !self.batch_urgent
            && self.batch.len() < BATCH_JOBS
            && self.batch_cost < BATCH_BYTES
        {
            return;
        }
        let verifying = self.batch.iter().any(|j| matches!(j, Job::Verify { .. }));
        let threads = if verifying { verify_threads() } else { 1 };
        while self.jobs.len() < threads {
            let (jobs, rx) = std::sync::mpsc::channel::<Vec<Job>>();
            let results = self.results_tx.clone();
            std::thread::spawn(move || {
                while let Ok(batch) = rx.recv() {
                    let done = guarded(|| Job::run_batch(batch));
                    let failed = matches!(done.first(), Some(Worked::Failed(_)));
                    if results.send(done).is_err() || failed {
                        return;
                    }
                }
            });
            self.jobs.push(jobs);
        }
        self.batch_urgent = false;
        let mut batch = std::mem::take(&mut self.batch);
        self.batch_cost = 0;
        if !force {
            self.hold_back_odd_digests(&mut batch);
            if batch.is_empty() {
                return;
            }
        }
        let len = batch.len();
        self.next = (self.next + 1) % self.jobs.len();
        if self
            .jobs
            .get(self.next)
            .is_some_and(|j| j.send(batch).is_ok())
        {
            self.outstanding += len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full batch goes out in whole groups of [`DIGEST_LANES`], the rest waits for the next
    /// one (or a forced hand-off), and every digest that comes back is the packet's SHA-256.
    #[test]
    fn a_worker_that_panics_reports_it_instead_of_going_silent() {
        let done = guarded(|| panic!("lane {} out of range", 17));
        assert!(
            matches!(done.as_slice(), [Worked::Failed(m)] if m == "lane 17 out of range"),
            "{:?}",
            done.len()
        );
        let done = guarded(|| panic!("static message"));
        assert!(matches!(done.as_slice(), [Worked::Failed(m)] if m == "static message"));
        let done = guarded(|| vec![Worked::Digest(3, [0; 32])]);
        assert!(matches!(done.as_slice(), [Worked::Digest(3, _)]));
    }

    #[test]
    fn worker_batches_hash_in_whole_lane_groups() {
        let packets: Vec<Bytes> = (0..130u32)
            .map(|i| (0..8100u32).map(|j| (i * 31 + j) as u8).collect())
            .collect();
        let mut workers = Workers::new();
        for (n, p) in packets.iter().enumerate() {
            workers.queue(Job::Digest(n as u64, p.clone()));
        }
        // 130 packets of 8100 B pass 1 MiB: 128 are sent, 2 kept.
        workers.submit(false);
        assert_eq!(workers.outstanding, 128);
        assert_eq!(workers.batch.len(), 2);
        assert_eq!(workers.batch_cost, 2 * 8100);
        workers.submit(true);
        assert_eq!(workers.outstanding, 130);
        assert!(workers.batch.is_empty());
        let mut seen = vec![false; packets.len()];
        while seen.iter().any(|s| !s) {
            for w in workers.results.blocking_recv().unwrap() {
                let Worked::Digest(n, d) = w else {
                    panic!("only digests were queued")
                };
                let want: [u8; 32] = Sha256::digest(&packets[n as usize]).into();
                assert_eq!(d, want, "segment {n}");
                seen[n as usize] = true;
            }
        }
    }
}
