//! The sending side of a fetch: the loop, the congestion window, what to ask for next, loss
//! detection (RACK, the RTO, tail loss probes) and retransmission.

use std::cmp::Reverse;
use std::io::Write;
use std::time::{Duration, Instant};

use nameway_wire::Interest;

use super::workers::BATCH_JOBS;
use super::{Fetch, FetchError, Item, Mode, Progress, State};
use crate::client::{later, millis, ClientError};

impl Fetch<'_> {
    pub(super) async fn run(
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
            if self.in_flight == 0
                && self.retx.is_empty()
                && self.deferred.is_empty()
                && self.workers.outstanding == 0
            {
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

    /// The earliest retransmission deadline or end of a RetryAfter wait (or a lifetime from
    /// now when neither is pending).
    fn next_deadline(&mut self) -> Instant {
        let deadline = self.retransmission_deadline();
        match self.deferred.peek() {
            Some(Reverse((due, _))) => deadline.min(*due),
            None => deadline,
        }
    }

    fn retransmission_deadline(&mut self) -> Instant {
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
    pub(super) fn retransmit(&mut self, item: Item, failed: bool) -> Result<(), FetchError> {
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

    /// Takes `item` out of flight until `wait` has passed: it was Nacked NoRoute with
    /// RetryAfter (a forwarder resolving its name), which is no loss, so the congestion window
    /// stays. Fails once the item has waited [`FetchOptions::max_retry_after`] in all or been
    /// Nacked so more than [`FetchOptions::max_retries`] times.
    ///
    /// [`FetchOptions::max_retry_after`]: super::FetchOptions::max_retry_after
    /// [`FetchOptions::max_retries`]: super::FetchOptions::max_retries
    pub(super) fn defer(
        &mut self,
        item: Item,
        wait: Duration,
        now: Instant,
    ) -> Result<(), FetchError> {
        let (max, cap) = (self.options.max_retries, self.options.max_retry_after);
        let slot = self.slot_mut(item);
        if !matches!(slot.state, State::InFlight { .. }) {
            return Ok(());
        }
        // Sent again: no RTT sample from it (Karn's rule).
        slot.retries += 1;
        slot.waits += 1;
        slot.waited = slot.waited.saturating_add(wait);
        if slot.waits > max || slot.waited > cap {
            let (waits, waited) = (slot.waits, slot.waited);
            return Err(FetchError::NoRouteAfterRetry {
                name: self
                    .item_name(item)
                    .unwrap_or_else(|_| self.versioned.clone()),
                waits,
                waited,
            });
        }
        slot.state = State::Queued;
        self.in_flight = self.in_flight.saturating_sub(1);
        self.deferred.push(Reverse((later(now, wait), item)));
        self.report.retransmissions += 1;
        self.report.retry_after_waits += 1;
        Ok(())
    }

    /// Queues for sending what has waited out its RetryAfter. The wait was asked for, not a
    /// sign of loss: the tail loss probe's clock starts again, or the probe would follow the
    /// Interest at once (nothing having arrived during the wait).
    fn release_deferred(&mut self, now: Instant) {
        while let Some(&Reverse((due, item))) = self.deferred.peek() {
            if due > now {
                break;
            }
            self.deferred.pop();
            self.retx.push_back(item);
            self.last_progress = now;
        }
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
        self.release_deferred(Instant::now());
        while self.in_flight < self.cc.window() {
            let Some(item) = self.next_item() else {
                break;
            };
            self.send(item)?;
        }
        Ok(())
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
}
