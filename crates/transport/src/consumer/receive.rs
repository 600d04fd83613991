//! The receiving side of a fetch: Data and Nacks matched to what was asked, the verification
//! mode decided from the first segment, manifests checked, and segments written to the sink in
//! order once verified.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use nameway_wire::signature::{signature_type, KeyLocator};
use nameway_wire::tlv::types;
use nameway_wire::{DataView, InterestView, NackReason, Name};

use super::workers::{Job, Worked};
use super::{Fetch, FetchError, Item, Mode, Slot, State};
use crate::client::Incoming;
use crate::keys::VerifyKey;
use crate::manifest::Manifest;
use crate::naming::segment_name;

impl Fetch<'_> {
    pub(super) fn on_packet(
        &mut self,
        packet: Incoming,
        sink: &mut dyn Write,
    ) -> Result<(), FetchError> {
        match packet {
            Incoming::Data(wire) => {
                if let Ok(view) = DataView::new_checked(wire) {
                    self.on_data(view, Instant::now(), sink)?;
                }
            }
            Incoming::Nack {
                reason,
                interest,
                retry_after,
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
                match (reason, retry_after) {
                    (NackReason::Congestion, _) => {
                        self.cc.on_loss(Instant::now(), sent);
                        self.retransmit(item, true)?;
                    }
                    (NackReason::Duplicate, _) => self.retransmit(item, true)?,
                    // A forwarder resolving the name (secure routing's `nack` miss mode) says
                    // when to ask again: the segment waits that long, then goes out again.
                    (NackReason::NoRoute, Some(ms)) => {
                        let wait = Duration::from_millis(ms.max(1));
                        self.defer(item, wait, Instant::now())?;
                    }
                    (other, _) => {
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

    pub(super) fn on_data(
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
    pub(super) fn on_worked(
        &mut self,
        done: Vec<Worked>,
        sink: &mut dyn Write,
    ) -> Result<(), FetchError> {
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
