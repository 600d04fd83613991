//! Consumer side: a pipelined fetch of a whole object into a sink.
//!
//! [`fetch`] finds the object's version (RDR metadata or a CanBePrefix Interest, both sent at
//! once), then keeps a congestion window of segment Interests in flight
//! ([`crate::cc::Controller`]), retransmits what is lost (detected by RACK, RFC 8985, when later
//! Interests were answered, else by an RFC 6298 RTO) and on Nack Duplicate or
//! Congestion, waits out a Nack NoRoute carrying NDNLPv2 RetryAfter (a forwarder resolving the
//! name) before asking again (bounded by [`FetchOptions::max_retry_after`] and
//! [`FetchOptions::max_retries`] per segment), gives up with a clear error on any other Nack
//! NoRoute or after
//! [`FetchOptions::max_retries`] retransmissions of one segment, and writes segments in order to
//! the sink only once they are verified:
//! - no key: nothing is verified (as ndnget does by default);
//! - a key and segments signed by it: every segment's signature (per-packet);
//! - a key and DigestSha256 segments: the object must have manifests; each manifest's signature
//!   is checked with the key and each segment's implicit digest against its manifest;
//! - a trust anchor instead of a key ([`FetchOptions::anchor`]): the signer's certificate chain
//!   is fetched and checked up to the anchor first ([`crate::cert`]), then the leaf
//!   certificate's key is the key above, and every signed packet must name that certificate in
//!   its KeyLocator.
//!
//! A segment that fails verification ends the fetch with an error naming the segment; nothing
//! after the last verified segment reaches the sink.
//!
//! Modules by job: `options` (what a fetch is asked and what it reports), `window` (the
//! congestion window, sending, loss detection and retransmission), `receive` (Data and Nacks,
//! verification and in-order delivery), `workers` (digests and signature checks on threads of
//! their own), `discovery` (the version, and the signer's certificate chain).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use nameway_wire::Name;

use crate::cc::{Controller, RttEstimator};
use crate::cert::Certificate;
use crate::client::{random_u32, Client, Conn};
use crate::keys::VerifyKey;
use crate::manifest::Manifest;
use crate::naming::{is_keyword, manifest_name, segment_name, MANIFEST_KEYWORD};

mod discovery;
mod options;
mod receive;
mod window;
mod workers;

pub use options::{FetchError, FetchOptions, FetchReport, Progress};

use discovery::{discover, resolve_signer};
use workers::Workers;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Item {
    Segment(u64),
    Manifest(u64),
}

#[derive(Default)]
enum State {
    #[default]
    Unsent,
    /// Waiting in the retransmission queue.
    Queued,
    InFlight {
        sent: Instant,
        generation: u32,
    },
    /// A segment's content awaiting its turn: with manifests, once its implicit digest is
    /// known; with per-packet signatures, once `checked` (by a worker thread).
    Received {
        content: Bytes,
        digest: Option<[u8; 32]>,
        checked: bool,
    },
    Done,
}

#[derive(Default)]
struct Slot {
    state: State,
    /// Times sent again, for any reason (Karn's rule: no RTT sample after the first).
    retries: u32,
    /// Retransmissions after a timeout or a Nack: what `max_retries` bounds. Early ones (RACK,
    /// tail loss probes) do not count: they can come every few milliseconds, faster than a
    /// forwarder lets a retransmitted Interest through again (NFD-style retransmission
    /// suppression), and a segment lost on a lossy link a few times in a row used to run out
    /// of retries in a fraction of a second.
    failures: u32,
    /// Nacks NoRoute with RetryAfter waited out, and the time they asked for in all.
    waits: u32,
    waited: Duration,
    generation: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Undecided,
    Unverified,
    Packet,
    Manifest,
}

struct Fetch<'a> {
    /// With an anchor: the certificate that signs the object (`None` inside: the anchor itself).
    signer: Option<Option<Certificate>>,
    conn: &'a mut Conn,
    options: &'a FetchOptions,
    versioned: Name,
    rtt: RttEstimator,
    cc: Controller,
    mode: Mode,
    last: Option<u64>,
    next_segment: u64,
    segments: Vec<Slot>,
    manifests: Vec<Slot>,
    verified: Vec<Option<Manifest>>,
    per_manifest: Option<u64>,
    workers: Workers,
    /// The trusted key, shared with the worker threads (set when the mode is decided).
    worker_key: Option<Arc<VerifyKey>>,
    /// The next manifest never asked for (they are asked for in order).
    next_manifest: u64,
    retx: VecDeque<Item>,
    /// Items waiting out a Nack's RetryAfter, by when they may go out again.
    deferred: BinaryHeap<Reverse<(Instant, Item)>>,
    sent_log: VecDeque<(Instant, Item, u32)>,
    /// Latest sending time of anything whose Data has arrived (RACK).
    latest_acked_sent: Option<Instant>,
    last_backoff: Option<Instant>,
    /// When Data last arrived, and whether a tail loss probe went out since.
    last_progress: Instant,
    probed: bool,
    in_flight: usize,
    deliver: u64,
    nonce: u32,
    started: Instant,
    report: FetchReport,
}

/// Fetches the object named `name` (with or without its version component) through `client`
/// into `sink`, calling `progress` every [`FetchOptions::progress_interval`].
///
/// # Errors
/// [`FetchError`]: nothing found, a Nack NoRoute, a segment missing after every retry, a
/// verification failure, the sink or the connection failing.
pub async fn fetch(
    client: &mut Client,
    name: &Name,
    options: &FetchOptions,
    sink: &mut dyn Write,
    progress: &mut dyn FnMut(&Progress),
) -> Result<FetchReport, FetchError> {
    let started = Instant::now();
    let (versioned, first) = discover(client.conn(), name, options).await?;
    let signer = match &options.anchor {
        Some(anchor) => {
            Some(resolve_signer(client, anchor, &versioned, first.as_ref(), options).await?)
        }
        None => None,
    };
    let conn = client.conn();
    let mut f = Fetch {
        conn,
        options,
        signer,
        versioned: versioned.clone(),
        rtt: RttEstimator::new(options.min_rto, options.max_rto),
        cc: Controller::new(options.cc),
        mode: Mode::Undecided,
        last: None,
        next_segment: 0,
        segments: Vec::new(),
        manifests: Vec::new(),
        verified: Vec::new(),
        per_manifest: None,
        workers: Workers::new(),
        worker_key: None,
        next_manifest: 0,
        retx: VecDeque::new(),
        deferred: BinaryHeap::new(),
        sent_log: VecDeque::new(),
        latest_acked_sent: None,
        last_backoff: None,
        last_progress: started,
        probed: false,
        in_flight: 0,
        deliver: 0,
        nonce: random_u32(),
        started,
        report: FetchReport {
            name: versioned,
            bytes: 0,
            segments: 0,
            manifests: 0,
            interests: 0,
            retransmissions: 0,
            timeouts: 0,
            fast_retransmits: 0,
            probes: 0,
            nacks: 0,
            retry_after_waits: 0,
            rtt_min: Duration::ZERO,
            rtt_avg: Duration::ZERO,
            rtt_max: Duration::ZERO,
            window_decreases: 0,
            random_losses: 0,
            peak_window: 0,
            verification: "none".to_owned(),
            elapsed: Duration::ZERO,
        },
    };
    if let Some(data) = first {
        // Segment 0 from discovery counts as asked for (Data that was not is ignored).
        if f.item_of(data.name()) == Some(Item::Segment(0)) {
            f.slot_mut(Item::Segment(0));
            f.on_data(data, Instant::now(), sink)?;
        }
    }
    f.run(sink, progress).await?;
    Ok(f.finish())
}

impl Fetch<'_> {
    fn progress(&self) -> Progress {
        Progress {
            bytes: self.report.bytes,
            total: self.last.map(|last| {
                let per = self
                    .report
                    .bytes
                    .checked_div(self.report.segments)
                    .unwrap_or(0);
                per.saturating_mul(last.saturating_add(1))
            }),
            segments: self.report.segments,
            window: self.cc.window(),
            retransmissions: self.report.retransmissions,
            elapsed: self.started.elapsed(),
        }
    }

    fn is_done(&self) -> bool {
        self.last.is_some_and(|last| self.deliver > last)
    }

    fn finish(mut self) -> FetchReport {
        self.report.elapsed = self.started.elapsed();
        self.report.rtt_min = if self.rtt.samples > 0 {
            self.rtt.min
        } else {
            Duration::ZERO
        };
        self.report.rtt_avg = self.rtt.mean();
        self.report.rtt_max = self.rtt.max;
        self.report.window_decreases = self.cc.decreases;
        self.report.random_losses = self.cc.random_losses;
        self.report.peak_window = self.cc.peak as usize;
        self.report
    }

    fn slot(&self, item: Item) -> Option<&Slot> {
        match item {
            Item::Segment(n) => self.segments.get(n as usize),
            Item::Manifest(k) => self.manifests.get(k as usize),
        }
    }

    fn slot_mut(&mut self, item: Item) -> &mut Slot {
        let (table, i) = match item {
            Item::Segment(n) => (&mut self.segments, n as usize),
            Item::Manifest(k) => (&mut self.manifests, k as usize),
        };
        if table.len() <= i {
            table.resize_with(i + 1, Slot::default);
        }
        &mut table[i]
    }

    fn item_name(&self, item: Item) -> Result<Name, nameway_wire::ParseError> {
        match item {
            Item::Segment(n) => segment_name(&self.versioned, n),
            Item::Manifest(k) => manifest_name(&self.versioned, k),
        }
    }

    /// Which segment or manifest `name` is.
    fn item_of(&self, name: &Name) -> Option<Item> {
        if !self.versioned.is_prefix_of(name) {
            return None;
        }
        let v = self.versioned.len();
        if name.len() == v + 1 {
            name.get(v)?.as_segment().map(Item::Segment)
        } else if name.len() == v + 2 && is_keyword(&name.get(v)?, MANIFEST_KEYWORD) {
            name.get(v + 1)?.as_segment().map(Item::Manifest)
        } else {
            None
        }
    }

    fn is_in_flight(&self, item: Item, generation: u32) -> bool {
        self.slot(item).is_some_and(
            |s| matches!(s.state, State::InFlight { generation: g, .. } if g == generation),
        )
    }
}
