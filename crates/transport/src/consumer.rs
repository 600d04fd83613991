//! Consumer side: a pipelined fetch of a whole object into a sink.
//!
//! [`fetch`] finds the object's version (RDR metadata or a CanBePrefix Interest, both sent at
//! once), then keeps a congestion window of segment Interests in flight
//! ([`crate::cc::Controller`]), retransmits what is lost (detected by RACK, RFC 8985, when later
//! Interests were answered, else by an RFC 6298 RTO) and on Nack Duplicate or
//! Congestion, gives up with a clear error on Nack NoRoute or after
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

use std::collections::VecDeque;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use nameway_wire::name::ComponentRef;
use nameway_wire::security::verify_data_wire;
use nameway_wire::signature::{signature_type, KeyLocator};
use nameway_wire::tlv::types;
use nameway_wire::{DataView, Interest, InterestView, NackReason, Name};
use sha2::{Digest as _, Sha256};

use crate::cc::{CcOptions, Controller, RttEstimator};
use crate::cert::{CertError, Certificate, MAX_CHAIN};
use crate::client::{later, millis, random_u32, Client, ClientError, Conn, Incoming};
use crate::keys::VerifyKey;
use crate::manifest::{implicit_digests, Manifest};
use crate::naming::{
    ends_in_version, is_keyword, manifest_name, metadata_prefix, segment_name, MANIFEST_KEYWORD,
};

/// How an object is fetched.
#[derive(Debug)]
pub struct FetchOptions {
    /// Congestion control.
    pub cc: CcOptions,
    /// InterestLifetime of segment Interests.
    pub lifetime: Duration,
    /// Retransmissions of one segment after a timeout or a Nack before the fetch fails (early
    /// retransmissions, by RACK or a tail loss probe, are not counted, up to four times this).
    pub max_retries: u32,
    /// Bounds of the retransmission timeout.
    pub min_rto: Duration,
    /// Upper bound of the retransmission timeout.
    pub max_rto: Duration,
    /// The pinned key (the producer's own public key, or an HMAC secret); with neither this
    /// nor [`FetchOptions::anchor`], nothing is verified.
    pub verify: Option<VerifyKey>,
    /// A trust anchor (a self-signed certificate): the producer's key is trusted if a chain
    /// of certificates leads from it to the anchor. Takes precedence over `verify`.
    pub anchor: Option<Certificate>,
    /// How long to wait for each version-discovery attempt (three are made).
    pub discovery_timeout: Duration,
    /// How often the progress callback is called.
    pub progress_interval: Duration,
}

impl Default for FetchOptions {
    fn default() -> Self {
        Self {
            cc: CcOptions::default(),
            lifetime: Duration::from_secs(4),
            max_retries: 15,
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(4),
            verify: None,
            anchor: None,
            discovery_timeout: Duration::from_secs(2),
            progress_interval: Duration::from_millis(200),
        }
    }
}

/// Where a fetch is, for a progress display.
#[derive(Clone, Debug)]
pub struct Progress {
    /// Bytes written to the sink.
    pub bytes: u64,
    /// Estimated object size (known once the last segment number is).
    pub total: Option<u64>,
    /// Segments written.
    pub segments: u64,
    /// Current congestion window.
    pub window: usize,
    /// Retransmissions so far.
    pub retransmissions: u64,
    /// Time since the fetch started.
    pub elapsed: Duration,
}

/// The outcome of a fetch, like ndnget's summary.
#[derive(Clone, Debug)]
pub struct FetchReport {
    /// The versioned name fetched.
    pub name: Name,
    /// Bytes written.
    pub bytes: u64,
    /// Segments written.
    pub segments: u64,
    /// Manifests fetched and verified.
    pub manifests: u64,
    /// Interests sent in all (segments and manifests, retransmissions included).
    pub interests: u64,
    /// Retransmissions (after a timeout or a Nack).
    pub retransmissions: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Losses detected early, because later Interests were answered (RACK).
    pub fast_retransmits: u64,
    /// Tail loss probes sent (after two RTTs without any Data).
    pub probes: u64,
    /// Nacks received.
    pub nacks: u64,
    /// Smallest, mean and largest RTT of segments sent once.
    pub rtt_min: Duration,
    /// Mean RTT.
    pub rtt_avg: Duration,
    /// Largest RTT.
    pub rtt_max: Duration,
    /// Congestion-window decreases.
    pub window_decreases: u64,
    /// Of those, decreases for losses judged random (no queue on the path; a smaller cut).
    pub random_losses: u64,
    /// Largest window reached.
    pub peak_window: usize,
    /// How the content was verified: `none`, `packet <kind>` or `manifest <kind>`.
    pub verification: String,
    /// Time from the first Interest to the last segment written.
    pub elapsed: Duration,
}

impl FetchReport {
    /// Goodput in bits per second.
    pub fn goodput_bps(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.bytes as f64 * 8.0 / s
        } else {
            0.0
        }
    }
}

/// Why a fetch failed.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The connection to the forwarder failed.
    #[error(transparent)]
    Client(Box<ClientError>),
    /// No version of the object answered.
    #[error("no object under {name}: {detail}")]
    NotFound {
        /// The name asked for.
        name: Name,
        /// What was tried.
        detail: String,
    },
    /// An Interest was Nacked with a reason that retrying will not fix.
    #[error("Nack {reason} for {name}")]
    Nack {
        /// The Interest's name.
        name: Name,
        /// Why.
        reason: NackReason,
    },
    /// A segment or manifest did not arrive after every retransmission.
    #[error("{name} did not arrive after {retries} retransmissions")]
    Timeout {
        /// The packet's name.
        name: Name,
        /// Retransmissions made.
        retries: u32,
    },
    /// A segment or manifest failed verification.
    #[error("verification failed for segment {segment} ({name}): {detail}")]
    Verification {
        /// The segment number (of the segment, or of the manifest).
        segment: u64,
        /// The packet's name.
        name: Name,
        /// What is wrong.
        detail: String,
    },
    /// The fetch cannot go on: nothing is in flight and nothing may be asked for (a bug, or
    /// an object whose segments and manifests disagree); reported instead of waiting forever.
    #[error("fetch of {name} stalled at segment {segment}")]
    Stalled {
        /// The versioned name.
        name: Name,
        /// The next segment to deliver.
        segment: u64,
    },
    /// A verification worker thread failed (a bug: it panicked); reported instead of waiting
    /// for its results forever.
    #[error("the verification worker of {name} failed: {detail}")]
    Worker {
        /// The versioned name.
        name: Name,
        /// The worker's panic message.
        detail: String,
    },
    /// The sink refused the bytes.
    #[error("cannot write the object: {0}")]
    Sink(#[from] std::io::Error),
    /// The signer's certificate chain does not lead to the trust anchor.
    #[error("untrusted signer of {name}: {detail}")]
    Untrusted {
        /// The packet whose signer was looked for.
        name: Name,
        /// What is wrong with the chain.
        detail: String,
    },
}

impl From<ClientError> for FetchError {
    fn from(e: ClientError) -> Self {
        Self::Client(Box::new(e))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
    async fn run(
        &mut self,
        sink: &mut dyn Write,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<(), FetchError> {
        let mut next_progress = later(Instant::now(), self.options.progress_interval);
        loop {
            self.fill_window()?;
            // Nothing in flight: no packet will wake the loop, so the worker gets everything.
            self.workers.submit(self.in_flight == 0);
            self.conn.flush().await?;
            if self.is_done() {
                return Ok(());
            }
            if self.in_flight == 0 && self.retx.is_empty() && self.workers.outstanding == 0 {
                // Nothing asked for and nothing to ask: waiting would never end.
                return Err(FetchError::Stalled {
                    name: self.versioned.clone(),
                    segment: self.deliver,
                });
            }
            let deadline = self.next_deadline();
            let working = self.workers.outstanding > 0;
            let incoming = tokio::select! {
                r = self.conn.recv() => Some(r?),
                Some(done) = self.workers.results.recv(), if working => {
                    self.on_worked(done, sink)?;
                    None
                }
                () = tokio::time::sleep_until(deadline.into()) => None,
            };
            let mut next = incoming;
            while let Some(packet) = next {
                self.on_packet(packet, sink)?;
                next = self.conn.try_recv()?;
            }
            self.workers.submit(false);
            while let Ok(done) = self.workers.results.try_recv() {
                self.on_worked(done, sink)?;
            }
            let now = Instant::now();
            self.check_timeouts(now)?;
            if now >= next_progress {
                next_progress = later(now, self.options.progress_interval);
                progress(&self.progress());
            }
        }
    }

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

    /// The earliest retransmission deadline (or a lifetime from now when nothing is in flight).
    fn next_deadline(&mut self) -> Instant {
        while let Some(&(sent, item, generation)) = self.sent_log.front() {
            if self.is_in_flight(item, generation) {
                let mut deadline = later(sent, self.rtt.rto());
                if self.overtaken(sent) {
                    deadline = deadline.min(later(sent, self.reorder_wait()));
                }
                if !self.probed {
                    deadline = deadline.min(later(self.last_progress, self.probe_timeout()));
                }
                return deadline;
            }
            self.sent_log.pop_front();
        }
        later(Instant::now(), self.options.lifetime)
    }

    /// Whether Data has arrived for something sent after `sent` (RACK, RFC 8985: then the
    /// packet sent at `sent` is lost once it is late by more than a reordering allowance).
    fn overtaken(&self, sent: Instant) -> bool {
        self.latest_acked_sent.is_some_and(|t| t > sent)
    }

    /// How long after its sending an overtaken packet is declared lost: SRTT plus a quarter.
    fn reorder_wait(&self) -> Duration {
        let srtt = self.rtt.srtt();
        srtt.saturating_add(srtt / 4)
            .saturating_add(Duration::from_micros(500))
    }

    fn is_in_flight(&self, item: Item, generation: u32) -> bool {
        self.slot(item).is_some_and(
            |s| matches!(s.state, State::InFlight { generation: g, .. } if g == generation),
        )
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

    /// Declares lost what is overdue: by RACK (overtaken and late) or by the RTO. Only an
    /// RTO expiry backs the timer off, once per flight (many packets timing out together
    /// are one event, as for TCP's single timer).
    fn check_timeouts(&mut self, now: Instant) -> Result<(), FetchError> {
        let rto = self.rtt.rto();
        let wait = self.reorder_wait();
        while let Some(&(sent, item, generation)) = self.sent_log.front() {
            if !self.is_in_flight(item, generation) {
                self.sent_log.pop_front();
                continue;
            }
            let rack = self.overtaken(sent) && now >= later(sent, wait);
            if !rack && now < later(sent, rto) {
                break;
            }
            self.sent_log.pop_front();
            if rack {
                self.report.fast_retransmits += 1;
            } else {
                self.report.timeouts += 1;
                if self.last_backoff.is_none_or(|t| sent >= t) {
                    self.rtt.back_off();
                    self.last_backoff = Some(now);
                }
            }
            self.cc.on_loss(now, sent);
            self.retransmit(item, !rack)?;
        }
        self.maybe_probe(now)
    }

    /// Tail loss probe (RFC 8985 §7): when nothing has arrived for two smoothed RTTs while
    /// Interests are in flight, the newest of them is sent again. If the tail of a flight was
    /// lost (a burst dropped at a full queue, with nothing sent after it to reveal the loss),
    /// the probe's answer lets RACK find the rest within a round trip instead of an RTO.
    fn maybe_probe(&mut self, now: Instant) -> Result<(), FetchError> {
        if self.probed
            || self.in_flight == 0
            || now < later(self.last_progress, self.probe_timeout())
        {
            return Ok(());
        }
        let newest = self
            .sent_log
            .iter()
            .rev()
            .find(|&&(_, item, generation)| self.is_in_flight(item, generation))
            .map(|&(_, item, _)| item);
        if let Some(item) = newest {
            self.probed = true;
            self.report.probes += 1;
            self.retransmit(item, false)?;
        }
        Ok(())
    }

    /// How long without any Data before a tail loss probe: 2 SRTT, at least 10 ms.
    fn probe_timeout(&self) -> Duration {
        self.rtt
            .srtt()
            .saturating_mul(2)
            .max(Duration::from_millis(10))
    }

    /// Takes `item` out of flight and queues it again, or fails after too many tries:
    /// `failed` is a timeout or a Nack (counted against `max_retries`), else an early
    /// retransmission (counted only against a bound four times as high).
    fn retransmit(&mut self, item: Item, failed: bool) -> Result<(), FetchError> {
        let max = self.options.max_retries;
        let slot = self.slot_mut(item);
        if !matches!(slot.state, State::InFlight { .. }) {
            return Ok(());
        }
        slot.retries += 1;
        if failed {
            slot.failures += 1;
        }
        // Saturating: `max_retries` of u32::MAX (retry without end) overflowed here.
        if slot.failures > max || slot.retries > max.saturating_mul(4).saturating_add(4) {
            let retries = if slot.failures > max {
                max
            } else {
                slot.retries - 1
            };
            return Err(FetchError::Timeout {
                name: self
                    .item_name(item)
                    .unwrap_or_else(|_| self.versioned.clone()),
                retries,
            });
        }
        slot.state = State::Queued;
        self.in_flight = self.in_flight.saturating_sub(1);
        self.retx.push_back(item);
        self.report.retransmissions += 1;
        Ok(())
    }

    /// The next thing to ask for, if the window allows one.
    fn next_item(&mut self) -> Option<Item> {
        while let Some(item) = self.retx.pop_front() {
            if matches!(self.slot(item).map(|s| &s.state), Some(State::Queued)) {
                return Some(item);
            }
        }
        if self.mode == Mode::Manifest {
            if let Some(k) = self.manifest_to_request() {
                self.next_manifest += 1;
                return Some(Item::Manifest(k));
            }
        }
        let n = self.next_segment;
        let allowed = match self.last {
            Some(last) => n <= last,
            // Until the last segment number is known, one segment at a time.
            None => self.in_flight == 0 && self.retx.is_empty(),
        };
        if !allowed {
            return None;
        }
        // Unverified segments wait for their manifest or their signature check; when those
        // are slower than the network, segments must not pile up without end. Allow as much
        // as a full window (what an unsigned fetch may hold out of order) or four manifests,
        // whichever is more: a cap of a few small manifests would throttle the window itself
        // (32-digest manifests at 1400 B held a fetch to 160 segments ahead, half the
        // unsigned goodput); plus two batches for the worker (one queued, one at work).
        let ahead = match (self.mode, self.per_manifest) {
            (Mode::Manifest, Some(per)) => Some((4 * per).max(self.options.cc.max_window as u64)),
            (Mode::Manifest, None) => Some(256),
            (Mode::Packet, _) => Some(self.options.cc.max_window as u64),
            _ => None,
        };
        if let Some(ahead) = ahead {
            // Saturating: a window without bound (`--max-window inf`) casts to u64::MAX.
            let limit = self
                .deliver
                .saturating_add(ahead)
                .saturating_add(2 * BATCH_JOBS as u64);
            if n >= limit {
                return None;
            }
        }
        self.next_segment += 1;
        if matches!(
            self.slot(Item::Segment(n)).map(|s| &s.state),
            Some(State::Received { .. } | State::Done)
        ) {
            return self.next_item();
        }
        Some(Item::Segment(n))
    }

    /// The next manifest to ask for, in order: manifest 0 until its size is known, then every
    /// manifest covering a segment already asked for or about to be.
    fn manifest_to_request(&self) -> Option<u64> {
        let k = self.next_manifest;
        let wanted = match self.per_manifest {
            None => k == 0,
            Some(per) => {
                k * per <= self.next_segment && self.last.is_none_or(|last| k <= last / per)
            }
        };
        if !wanted {
            return None;
        }
        match self.manifests.get(k as usize).map(|s| &s.state) {
            None | Some(State::Unsent) => Some(k),
            _ => None,
        }
    }

    fn fill_window(&mut self) -> Result<(), FetchError> {
        while self.in_flight < self.cc.window() {
            let Some(item) = self.next_item() else {
                break;
            };
            self.send(item)?;
        }
        Ok(())
    }

    fn item_name(&self, item: Item) -> Result<Name, nameway_wire::ParseError> {
        match item {
            Item::Segment(n) => segment_name(&self.versioned, n),
            Item::Manifest(k) => manifest_name(&self.versioned, k),
        }
    }

    fn send(&mut self, item: Item) -> Result<(), FetchError> {
        let name = self.item_name(item).map_err(ClientError::from)?;
        self.nonce = self.nonce.wrapping_add(0x9e37_79b9);
        let interest = Interest {
            name,
            nonce: Some(self.nonce),
            lifetime_ms: Some(millis(self.options.lifetime)),
            ..Interest::default()
        };
        self.conn.queue(&interest.encode());
        let now = Instant::now();
        let slot = self.slot_mut(item);
        slot.generation = slot.generation.wrapping_add(1);
        let generation = slot.generation;
        slot.state = State::InFlight {
            sent: now,
            generation,
        };
        self.sent_log.push_back((now, item, generation));
        self.in_flight += 1;
        self.report.interests += 1;
        Ok(())
    }

    fn on_packet(&mut self, packet: Incoming, sink: &mut dyn Write) -> Result<(), FetchError> {
        match packet {
            Incoming::Data(wire) => {
                if let Ok(view) = DataView::new_checked(wire) {
                    self.on_data(view, Instant::now(), sink)?;
                }
            }
            Incoming::Nack {
                reason, interest, ..
            } => {
                let Ok(view) = InterestView::new_checked(interest) else {
                    return Ok(());
                };
                let Some(item) = self.item_of(view.name()) else {
                    return Ok(());
                };
                // Not `slot_mut`: a Nack for an Interest never sent (segment 2^40, say) must
                // not size the tables, as for Data (`on_data`).
                let Some(&Slot {
                    state: State::InFlight { sent, .. },
                    ..
                }) = self.slot(item)
                else {
                    return Ok(());
                };
                self.report.nacks += 1;
                match reason {
                    NackReason::Congestion => {
                        self.cc.on_loss(Instant::now(), sent);
                        self.retransmit(item, true)?;
                    }
                    NackReason::Duplicate => self.retransmit(item, true)?,
                    other => {
                        return Err(FetchError::Nack {
                            name: view.name().clone(),
                            reason: other,
                        })
                    }
                }
            }
            Incoming::Interest(_) => {}
        }
        Ok(())
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

    fn on_data(
        &mut self,
        view: DataView,
        now: Instant,
        sink: &mut dyn Write,
    ) -> Result<(), FetchError> {
        let Some(item) = self.item_of(view.name()) else {
            return Ok(());
        };
        // Every segment or manifest asked for has a slot; Data for one beyond them was never
        // asked for (a forwarder would not pass it on) and must not size the tables.
        if self.slot(item).is_none() {
            return Ok(());
        }
        let slot = self.slot_mut(item);
        let (sent, sample) = match slot.state {
            State::InFlight { sent, .. } => (Some(sent), (slot.retries == 0).then(|| now - sent)),
            State::Queued | State::Unsent => (None, None),
            // A duplicate is no progress: it must not put off the tail loss probe.
            State::Received { .. } | State::Done => return Ok(()),
        };
        self.last_progress = now;
        self.probed = false;
        if let Some(sent) = sent {
            self.in_flight = self.in_flight.saturating_sub(1);
            if self.latest_acked_sent.is_none_or(|t| sent > t) {
                self.latest_acked_sent = Some(sent);
            }
        }
        if let Some(rtt) = sample {
            self.rtt.sample(rtt);
        }
        let srtt = self.rtt.srtt();
        self.cc.on_ack(now, sample, srtt);
        match item {
            Item::Segment(n) => self.on_segment(n, view)?,
            Item::Manifest(k) => self.on_manifest(k, view)?,
        }
        self.deliver_ready(sink)
    }

    fn on_segment(&mut self, n: u64, view: DataView) -> Result<(), FetchError> {
        if self.last.is_none() {
            let last = view
                .final_block_id()
                .filter(|c| c.typ == types::SEGMENT_NAME_COMPONENT)
                .and_then(|c| nameway_wire::tlv::read_nni(&c.value).ok())
                // Only from a segment within the end it names: that segment is then delivered,
                // so verified, before the fetch ends. A segment past its own FinalBlockId would
                // be dropped unverified below, and a forged one (segment 1 saying the object
                // ended at 0) cut a verified fetch short, reported complete.
                .filter(|&last| last >= n);
            if let Some(last) = last {
                self.set_last(last);
            }
        }
        if self.last.is_some_and(|last| n > last) {
            return Ok(());
        }
        if self.mode == Mode::Undecided {
            self.decide_mode(n, &view)?;
        }
        let content = view.content();
        let mut checked = true;
        match self.mode {
            Mode::Packet => {
                self.check_locator(n, &view)?;
                if let Some(key) = self.worker_key.clone() {
                    checked = false;
                    self.workers.queue(Job::Verify { n, view, key });
                }
            }
            Mode::Manifest => self.workers.queue(Job::Digest(n, view.into_wire())),
            _ => {}
        }
        self.slot_mut(Item::Segment(n)).state = State::Received {
            content,
            digest: None,
            checked,
        };
        Ok(())
    }

    /// The key packets are verified with: the chain's leaf (or the anchor), else the pinned key.
    fn trusted_key(&self) -> Option<&VerifyKey> {
        match (&self.signer, &self.options.anchor) {
            (Some(Some(leaf)), _) => Some(leaf.key()),
            (Some(None), Some(anchor)) => Some(anchor.key()),
            _ => self.options.verify.as_ref(),
        }
    }

    /// With an anchor, a signed packet must name the certificate the chain was checked for.
    fn check_locator(&self, n: u64, view: &DataView) -> Result<(), FetchError> {
        let cert = match (&self.signer, &self.options.anchor) {
            (Some(Some(leaf)), _) => leaf,
            (Some(None), Some(anchor)) => anchor,
            _ => return Ok(()),
        };
        match view.signature_info().key_locator {
            Some(KeyLocator::Name(loc)) if cert.is_named_by(&loc) => Ok(()),
            other => Err(FetchError::Verification {
                segment: n,
                name: view.name().clone(),
                detail: format!(
                    "KeyLocator {} is not the verified certificate {}",
                    other.map_or("(none)".to_owned(), |l| format!("{l:?}")),
                    cert.name()
                ),
            }),
        }
    }

    fn set_last(&mut self, last: u64) {
        self.last = Some(last);
        // Anything asked for beyond the end will never come. (A FinalBlockId at the largest
        // number is the producer's word; segments past the object then time out.)
        let count = usize::try_from(last).map_or(usize::MAX, |l| l.saturating_add(1));
        for slot in self.segments.iter_mut().skip(count) {
            if matches!(slot.state, State::InFlight { .. }) {
                self.in_flight = self.in_flight.saturating_sub(1);
            }
            slot.state = State::Done;
        }
        self.segments.truncate(count);
    }

    fn decide_mode(&mut self, n: u64, view: &DataView) -> Result<(), FetchError> {
        let Some(kind) = self.trusted_key().map(VerifyKey::kind) else {
            self.mode = Mode::Unverified;
            return Ok(());
        };
        self.worker_key = self.trusted_key().cloned().map(Arc::new);
        let found = view.signature_info().signature_type;
        if found == kind.signature_type() {
            self.mode = Mode::Packet;
            self.report.verification = format!("packet {}", kind);
        } else if found == signature_type::DIGEST_SHA256 {
            self.mode = Mode::Manifest;
            self.report.verification = format!("manifest {}", kind);
        } else {
            return Err(FetchError::Verification {
                segment: n,
                name: view.name().clone(),
                detail: format!(
                    "signed with SignatureType {found}, but the trusted key is {}",
                    kind
                ),
            });
        }
        if let Some(Some(leaf)) = &self.signer {
            self.report.verification += &format!(", certificate {}", leaf.name());
        } else if let (Some(None), Some(anchor)) = (&self.signer, &self.options.anchor) {
            self.report.verification += &format!(", anchor {}", anchor.name());
        }
        Ok(())
    }

    /// A manifest arrived: its signature is checked and its digests decoded on the worker
    /// thread (an Ed25519 verification costs as much as a few dozen segments' bookkeeping);
    /// [`Self::on_manifest_checked`] takes the answer.
    fn on_manifest(&mut self, k: u64, view: DataView) -> Result<(), FetchError> {
        if self.mode != Mode::Manifest {
            return Ok(());
        }
        self.check_locator(k, &view)?;
        // Received (with nothing to deliver) while the worker checks it: not in flight, so
        // not retransmitted, and a duplicate is ignored.
        self.slot_mut(Item::Manifest(k)).state = State::Received {
            content: Bytes::new(),
            digest: None,
            checked: false,
        };
        self.workers.queue(Job::Manifest {
            k,
            view,
            key: self.worker_key.clone(),
        });
        Ok(())
    }

    fn on_manifest_checked(
        &mut self,
        k: u64,
        name: Name,
        checked: Result<Manifest, String>,
    ) -> Result<(), FetchError> {
        let bad = |detail: String| FetchError::Verification {
            segment: k,
            name: name.clone(),
            detail,
        };
        let manifest = checked.map_err(&bad)?;
        let per = match self.per_manifest {
            Some(per) => per,
            None if k == 0 => manifest.digests.len() as u64,
            None => {
                // Manifest 0 decides the size; this one is asked for again.
                self.slot_mut(Item::Manifest(k)).state = State::Queued;
                self.retx.push_back(Item::Manifest(k));
                return Ok(());
            }
        };
        if manifest.start_segment != k * per || manifest.digests.len() as u64 > per {
            return Err(bad(format!(
                "manifest {k} starts at segment {} with {} digests, expected {} and at most {per}",
                manifest.start_segment,
                manifest.digests.len(),
                k * per
            )));
        }
        self.per_manifest = Some(per);
        let i = k as usize;
        if self.verified.len() <= i {
            self.verified.resize(i + 1, None);
        }
        self.verified[i] = Some(manifest);
        self.slot_mut(Item::Manifest(k)).state = State::Done;
        self.report.manifests += 1;
        Ok(())
    }

    /// Records what the worker thread computed (implicit digests, checked manifests), then
    /// delivers what that allows.
    fn on_worked(&mut self, done: Vec<Worked>, sink: &mut dyn Write) -> Result<(), FetchError> {
        self.workers.outstanding = self.workers.outstanding.saturating_sub(done.len());
        for w in done {
            match w {
                Worked::Digest(n, d) => {
                    if let Some(State::Received { digest, .. }) =
                        self.segments.get_mut(n as usize).map(|s| &mut s.state)
                    {
                        *digest = Some(d);
                    }
                }
                Worked::Verified { n, name, result } => {
                    result.map_err(|detail| FetchError::Verification {
                        segment: n,
                        name,
                        detail,
                    })?;
                    if let Some(State::Received { checked, .. }) =
                        self.segments.get_mut(n as usize).map(|s| &mut s.state)
                    {
                        *checked = true;
                    }
                }
                Worked::Manifest { k, name, checked } => {
                    self.on_manifest_checked(k, name, checked)?;
                }
                Worked::Failed(detail) => {
                    return Err(FetchError::Worker {
                        name: self.versioned.clone(),
                        detail,
                    });
                }
            }
        }
        self.deliver_ready(sink)
    }

    /// Writes every segment that is next in order and verified.
    fn deliver_ready(&mut self, sink: &mut dyn Write) -> Result<(), FetchError> {
        loop {
            let n = self.deliver;
            let Some(State::Received {
                content,
                digest,
                checked,
            }) = self.segments.get(n as usize).map(|s| &s.state)
            else {
                return Ok(());
            };
            if !checked {
                return Ok(()); // its signature is being checked
            }
            if self.mode == Mode::Manifest {
                let Some(per) = self.per_manifest else {
                    return Ok(());
                };
                let Some(Some(manifest)) = self.verified.get((n / per) as usize) else {
                    return Ok(());
                };
                let Some(digest) = digest else {
                    return Ok(()); // still being hashed
                };
                if manifest.digest_of(n) != Some(digest) {
                    return Err(FetchError::Verification {
                        segment: n,
                        name: segment_name(&self.versioned, n)
                            .unwrap_or_else(|_| self.versioned.clone()),
                        detail: format!(
                            "implicit digest does not match manifest {} (the segment was altered)",
                            n / per
                        ),
                    });
                }
            }
            let content = content.clone();
            sink.write_all(&content)?;
            self.report.bytes += content.len() as u64;
            self.report.segments += 1;
            self.slot_mut(Item::Segment(n)).state = State::Done;
            self.deliver += 1;
        }
    }
}

/// A batch goes to the worker thread at this many jobs or bytes to hash (unless sooner
/// needed: [`Workers::submit`]). 1 MiB of packets is about 0.4 ms of hashing: same-run A/B
/// against 256 KiB (21 rounds, manifests of 256, fixed window 64), 0.867 -> 0.901 of unsigned
/// goodput at 8000 B and 0.853 -> 0.883 at 1400 B, and 10 % less consumer CPU; 4 MiB was no
/// better.
const BATCH_JOBS: usize = 256;
const BATCH_BYTES: usize = 1 << 20;
/// Digests are best hashed this many at a time ([`implicit_digests`]: 16 lanes of AVX-512;
/// fewer messages take the SHA-NI path, 1.7 instead of 2.8 GB/s at 8000 B), so a batch sent
/// early (for a manifest) leaves the rest of its digests for the next one.
const DIGEST_LANES: usize = 16;

/// Work for the worker thread.
enum Job {
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
enum Worked {
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
struct Workers {
    /// One sender per worker thread (started on first use), fed in turn.
    jobs: Vec<std::sync::mpsc::Sender<Vec<Job>>>,
    next: usize,
    results: tokio::sync::mpsc::UnboundedReceiver<Vec<Worked>>,
    results_tx: tokio::sync::mpsc::UnboundedSender<Vec<Worked>>,
    batch: Vec<Job>,
    /// What `batch` costs, in bytes hashed or their equivalent, and whether it holds a
    /// manifest.
    batch_cost: usize,
    batch_urgent: bool,
    /// Jobs sent to the threads whose results have not come back.
    outstanding: usize,
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
    fn new() -> Self {
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

    fn queue(&mut self, job: Job) {
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
    fn submit(&mut self, force: bool) {
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

/// The certificate whose key signed the object, found from the KeyLocator of its first signed
/// packet (segment 0, or manifest 0 when the segments carry DigestSha256) by fetching
/// certificates until one names `anchor`; each must be in its validity period and within its
/// issuer's identity, and every signature from the anchor down must verify. `None` inside:
/// the anchor signed the object itself.
async fn resolve_signer(
    client: &mut Client,
    anchor: &Certificate,
    versioned: &Name,
    first: Option<&DataView>,
    options: &FetchOptions,
) -> Result<Option<Certificate>, FetchError> {
    let untrusted = |name: &Name, detail: String| FetchError::Untrusted {
        name: name.clone(),
        detail,
    };
    let timeout = options.lifetime;
    let segment0 = segment_name(versioned, 0).map_err(ClientError::from)?;
    let mut signed = match first {
        Some(v) if *v.name() == segment0 => v.clone(),
        _ => express_view(client, &segment0, false, timeout).await?,
    };
    if signed.signature_info().signature_type == signature_type::DIGEST_SHA256 {
        let manifest0 = manifest_name(versioned, 0).map_err(ClientError::from)?;
        signed = express_view(client, &manifest0, false, timeout).await?;
    }
    let Some(KeyLocator::Name(mut locator)) = signed.signature_info().key_locator else {
        return Err(untrusted(
            signed.name(),
            "its KeyLocator names no certificate".to_owned(),
        ));
    };
    let cert_err = |name: &Name, e: CertError| untrusted(name, e.to_string());
    let mut subject = signed.name().clone();
    let mut chain: Vec<Certificate> = Vec::new();
    while !anchor.is_named_by(&locator) {
        if chain.len() == MAX_CHAIN {
            return Err(untrusted(
                signed.name(),
                format!(
                    "no certificate within {MAX_CHAIN} links is signed by the anchor {}",
                    anchor.name()
                ),
            ));
        }
        let view = express_view(client, &locator, true, timeout)
            .await
            .map_err(|e| {
                untrusted(
                    &subject,
                    format!("certificate {locator} could not be fetched ({e})"),
                )
            })?;
        let cert = Certificate::decode(view.into_wire()).map_err(|e| cert_err(&subject, e))?;
        if !cert.is_named_by(&locator) {
            return Err(untrusted(
                &subject,
                format!("{locator} was answered with {}", cert.name()),
            ));
        }
        cert.check_validity().map_err(|e| cert_err(&subject, e))?;
        cert.check_scope(&subject)
            .map_err(|e| cert_err(&subject, e))?;
        subject = cert.name().clone();
        locator = cert
            .issuer()
            .cloned()
            .ok_or_else(|| untrusted(&subject, "no issuer in its KeyLocator".to_owned()))?;
        chain.push(cert);
    }
    anchor.check_validity().map_err(|e| cert_err(&subject, e))?;
    anchor
        .check_scope(&subject)
        .map_err(|e| cert_err(&subject, e))?;
    for i in (0..chain.len()).rev() {
        let issuer = chain.get(i + 1).unwrap_or(anchor);
        chain[i]
            .check_issued_by(issuer)
            .map_err(|e| cert_err(signed.name(), e))?;
    }
    Ok(chain.into_iter().next())
}

/// One Interest, its Data as a view.
async fn express_view(
    client: &mut Client,
    name: &Name,
    can_be_prefix: bool,
    timeout: Duration,
) -> Result<DataView, FetchError> {
    let interest = Interest {
        name: name.clone(),
        can_be_prefix,
        nonce: Some(random_u32()),
        lifetime_ms: Some(millis(timeout)),
        ..Interest::default()
    };
    let wire = client.express_wire(&interest, timeout).await?;
    DataView::new_checked(wire).map_err(|e| {
        FetchError::from(ClientError::Malformed {
            name: name.clone(),
            detail: e.to_string(),
        })
    })
}

/// How long discovery waits for the RDR metadata after a CanBePrefix Interest was answered:
/// at least this, and at least four times as long as that answer took.
const METADATA_GRACE: Duration = Duration::from_millis(50);

/// Finds the versioned name: `name` itself if it ends in a version; otherwise RDR metadata
/// (`<name>/32=metadata`) and a CanBePrefix Interest for `name` are sent together. The
/// metadata, which the producer answers with its current version, is preferred: a segment that
/// answers the CanBePrefix Interest first may come from a cache holding an earlier version that
/// is still fresh (a file published again under the same prefix), so it is taken only when the
/// metadata is Nacked or does not come within [`METADATA_GRACE`] (producers that serve no
/// metadata, as python-ndn's and NDNts's segmented producers). Returns the segment the
/// CanBePrefix answer carried when it is of the version chosen.
async fn discover(
    conn: &mut Conn,
    name: &Name,
    options: &FetchOptions,
) -> Result<(Name, Option<DataView>), FetchError> {
    if ends_in_version(name) {
        return Ok((name.clone(), None));
    }
    let metadata_name = metadata_prefix(name).map_err(ClientError::from)?;
    let lifetime = millis(options.discovery_timeout);
    let mut nacks = Vec::new();
    // Nacks NoRoute with RetryAfter (a forwarder resolving the name) are waited out, up to
    // MAX_RETRY_AFTER in all, without using up an attempt.
    let mut retry_after_waited = Duration::ZERO;
    let mut attempt = 0;
    while attempt < 3 {
        attempt += 1;
        let mut retry_after: Option<u64> = None;
        let sent = Instant::now();
        for n in [&metadata_name, name] {
            let interest = Interest {
                name: n.clone(),
                can_be_prefix: true,
                must_be_fresh: true,
                nonce: Some(random_u32()),
                lifetime_ms: Some(lifetime),
                ..Interest::default()
            };
            conn.queue(&interest.encode());
        }
        conn.flush().await?;
        nacks.clear();
        let mut nacked: Vec<usize> = Vec::with_capacity(2);
        // The CanBePrefix answer, held while the metadata may still come, and until when.
        let mut candidate: Option<(Name, DataView, tokio::time::Instant)> = None;
        let deadline =
            tokio::time::Instant::from_std(later(Instant::now(), options.discovery_timeout));
        while nacks.len() < 2 {
            let until = candidate.as_ref().map_or(deadline, |c| c.2.min(deadline));
            let Ok(packet) = tokio::time::timeout_at(until, conn.recv()).await else {
                if let Some((found, view, _)) = candidate {
                    return Ok((found, Some(view)));
                }
                break;
            };
            match packet? {
                Incoming::Data(wire) => {
                    let Ok(view) = DataView::new_checked(wire) else {
                        continue;
                    };
                    if metadata_name.is_prefix_of(view.name()) {
                        if let Ok(versioned) = Name::decode(&view.content()) {
                            if name.is_prefix_of(&versioned) && versioned.len() > name.len() {
                                let first = candidate.and_then(|(found, view, _)| {
                                    (found == versioned).then_some(view)
                                });
                                return Ok((versioned, first));
                            }
                        }
                        continue;
                    }
                    if candidate.is_none() {
                        if let Some(found) = versioned_from_segment(name, view.name()) {
                            if nacked.contains(&0) {
                                return Ok((found, Some(view)));
                            }
                            let grace = METADATA_GRACE.max(sent.elapsed().saturating_mul(4));
                            let until = tokio::time::Instant::now() + grace;
                            candidate = Some((found, view, until));
                        }
                    }
                }
                Incoming::Nack {
                    reason,
                    interest,
                    retry_after: after,
                } => {
                    if reason == NackReason::NoRoute {
                        retry_after = retry_after.max(after);
                    }
                    // One per Interest: a second Nack for the same one (a forwarder that
                    // repeats itself) must not end discovery before the other is answered.
                    let which = InterestView::new_checked(interest).ok().and_then(|v| {
                        [&metadata_name, name]
                            .into_iter()
                            .position(|n| v.name() == n)
                    });
                    if let Some(which) = which {
                        if !nacked.contains(&which) {
                            nacked.push(which);
                            nacks.push(reason);
                        }
                        // No metadata is coming: the segment held is the answer.
                        if which == 0 {
                            if let Some((found, view, _)) = candidate {
                                return Ok((found, Some(view)));
                            }
                        }
                    }
                }
                Incoming::Interest(_) => {}
            }
        }
        if let Some(ms) = retry_after.filter(|_| nacks.len() == 2) {
            let wait = Duration::from_millis(ms.max(1));
            if retry_after_waited + wait <= MAX_RETRY_AFTER {
                retry_after_waited += wait;
                attempt -= 1;
                tokio::time::sleep(wait).await;
                continue;
            }
        }
        if nacks.len() == 2 {
            if let Some(reason) = nacks.iter().find(|r| **r != NackReason::Duplicate) {
                return Err(FetchError::Nack {
                    name: name.clone(),
                    reason: *reason,
                });
            }
        }
    }
    Err(FetchError::NotFound {
        name: name.clone(),
        detail: format!(
            "neither {metadata_name} nor a CanBePrefix Interest for it was answered \
             (3 tries, {} ms each)",
            lifetime
        ),
    })
}

/// The longest discovery waits in all for Nacks carrying RetryAfter.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(10);

/// `<name>/v=X` from a segment named `<name>/v=X/seg=N`, or `<name>` from `<name>/seg=N`.
fn versioned_from_segment(name: &Name, data_name: &Name) -> Option<Name> {
    if !name.is_prefix_of(data_name) {
        return None;
    }
    let rest: Vec<ComponentRef<'_>> = data_name.iter().skip(name.len()).collect();
    match rest.as_slice() {
        [seg] if seg.as_segment().is_some() => Some(name.clone()),
        [v, seg] if v.as_version().is_some() && seg.as_segment().is_some() => {
            Some(data_name.prefix(name.len() + 1))
        }
        _ => None,
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
