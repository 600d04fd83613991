//! One shard: a [`Forwarder`] that owns the PIT, content store and dead-nonce list of the names
//! dispatched to it, with the ends of its hand-off and control rings.

use std::sync::Arc;

use bytes::Bytes;
use rtrb::Consumer;

use super::control::ControlOp;
use super::dispatch::{Dispatcher, Route};
use super::ring::{HandOff, Inlet, Outlet};
use super::skew::{SkewMonitor, SkewReport};
use crate::forwarder::Forwarder;
use crate::pipeline::Transmit;
use crate::table::face_table::FaceId;
use crate::time::Time;

/// Counters of one shard's dispatch and hand-offs (its forwarder keeps its own).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShardCounters {
    /// Packets read by this shard's faces and forwarded here.
    pub n_local: u64,
    /// Packets read here and handed to another shard (a Data copied to several counts each).
    pub n_handed_off: u64,
    /// Packets received from other shards.
    pub n_received: u64,
    /// Extra copies of Data sent to the shards of spanning CanBePrefix Interests.
    pub n_data_copies: u64,
    /// Hand-offs dropped because the destination's ring was full.
    pub n_ring_full: u64,
    /// Management changes applied.
    pub n_control_applied: u64,
    /// Management changes this shard's forwarder refused (the same in every shard, since
    /// every shard applies the same changes in the same order).
    pub n_control_refused: u64,
    /// Sampling windows in which one dispatch key kept one shard busy while others idled
    /// ([`super::skew`]).
    pub n_skewed_windows: u64,
    /// Dominating keys this shard split ([`super::split`]).
    pub n_splits: u64,
    /// Interests of a draining split key this shard kept because it already knew them.
    pub n_drain_kept: u64,
    /// Interests of a draining split key this shard handed to the key's new shard.
    pub n_drain_moved: u64,
}

/// One shard of a sharded forwarder. `Send`: each runs on its own thread.
///
/// A turn of the driver: [`Shard::apply_control`]; [`Shard::handle_packet`] for a burst of
/// packets from this shard's faces; [`Shard::handle_handoffs`]; [`Shard::flush`];
/// [`Shard::handle_timeout`] when due; drain [`Shard::poll_transmit`] (a transmit may be for a
/// face whose I/O another shard owns: faces' send queues take writes from any thread).
#[derive(Debug)]
pub struct Shard {
    index: usize,
    fw: Forwarder,
    dispatcher: Arc<Dispatcher>,
    /// Toward each other shard (`None` at this shard's own index).
    outlets: Vec<Option<Outlet>>,
    inlets: Vec<Inlet>,
    control: Consumer<ControlOp>,
    counters: ShardCounters,
    /// Shards handed packets since [`Shard::take_woken`].
    woken: u64,
    /// Faces removed by management, still known here until the hand-offs queued toward this
    /// shard when the removal arrived are forwarded (per inlet, how many are left): the last
    /// packets a face sent before it went down are not dropped as from an unknown face.
    removing: Vec<(FaceId, Vec<usize>)>,
    /// Samples the packets read here for a dominating dispatch key.
    skew: SkewMonitor,
}

impl Shard {
    pub(crate) fn new(
        index: usize,
        fw: Forwarder,
        dispatcher: Arc<Dispatcher>,
        outlets: Vec<Option<Outlet>>,
        inlets: Vec<Inlet>,
        control: Consumer<ControlOp>,
    ) -> Self {
        let skew = SkewMonitor::new(dispatcher.shards());
        Self {
            index,
            fw,
            dispatcher,
            outlets,
            inlets,
            control,
            counters: ShardCounters::default(),
            woken: 0,
            removing: Vec::new(),
            skew,
        }
    }

    /// This shard's index.
    pub fn index(&self) -> usize {
        self.index
    }

    /// This shard's forwarder (its tables, counters and status).
    pub fn forwarder(&self) -> &Forwarder {
        &self.fw
    }

    /// This shard's forwarder, to change it directly (the management shard: its changes are
    /// recorded, see [`Forwarder::start_recording`], and sent to the others).
    pub fn forwarder_mut(&mut self) -> &mut Forwarder {
        &mut self.fw
    }

    /// The shards this one handed packets to since the last call (a bitmask): a driver wakes
    /// each once per turn, after [`Shard::flush`].
    pub fn take_woken(&mut self) -> u64 {
        core::mem::take(&mut self.woken)
    }

    /// Handles a packet without dispatching it (for a packet that must stay here).
    pub fn handle_local(&mut self, now: Time, face: FaceId, wire: Bytes) {
        self.counters.n_local += 1;
        self.fw.handle_packet(now, face, wire);
    }

    /// The dominating dispatch key of the last skewed sampling window since the last call
    /// ([`super::skew`]): a driver logs it with the `[[forwarder.dispatch]]` entry that would
    /// spread it.
    pub fn take_skew_report(&mut self) -> Option<SkewReport> {
        self.skew.take_report()
    }

    /// This shard's dispatch and hand-off counters.
    pub fn counters(&self) -> &ShardCounters {
        &self.counters
    }

    /// The dispatcher shared by all shards.
    pub fn dispatcher(&self) -> &Dispatcher {
        &self.dispatcher
    }

    /// Handles a packet read by one of this shard's faces: forwarded here if this shard owns
    /// its name, else queued for the owner (published at the batch size or by
    /// [`Shard::flush`]).
    pub fn handle_packet(&mut self, now: Time, face: FaceId, wire: Bytes) {
        let (route, hashes) = self.dispatcher.route_hashed(now, &wire);
        let mask = match route {
            Route::Local => 1 << self.index,
            Route::Shards(mask) => mask,
            Route::Drain { at, then } if at == self.index => 1 << self.drain(now, &wire, then),
            Route::Drain { at, .. } => 1 << at,
        };
        if self.skew.on_routed(&self.dispatcher, &wire) {
            self.counters.n_skewed_windows = self.skew.skewed_windows;
            self.split_if_persistent(now);
        }
        self.counters.n_data_copies += u64::from(mask.count_ones().saturating_sub(1));
        let mut rest = mask & !(1 << self.index);
        // The face's rate limit is applied by the shard that reads it, whichever owns the name.
        if rest != 0 && !self.fw.admit_handoff(now, face, &wire) {
            return;
        }
        while rest != 0 {
            let to = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            self.hand_off(to, face, wire.clone());
        }
        if mask & (1 << self.index) != 0 {
            self.counters.n_local += 1;
            // The forwarder takes the dispatcher's hashes of the name instead of hashing it
            // again (the same hasher: `build`).
            match hashes {
                Some(h) => self.fw.handle_packet_hashed(now, face, wire, h),
                None => self.fw.handle_packet(now, face, wire),
            }
        }
    }

    /// Where an Interest of a draining split key goes from the old rule's shard (this one):
    /// here if this forwarder already knows it, else the new rule's shard `then`.
    fn drain(&mut self, now: Time, wire: &Bytes, then: usize) -> usize {
        if self.fw.knows_interest(now, wire) {
            self.counters.n_drain_kept += 1;
            self.index
        } else {
            self.counters.n_drain_moved += 1;
            then
        }
    }

    /// Splits the key of the last skewed window when it dominated enough windows in a row and
    /// automatic splits are on ([`super::split`]).
    fn split_if_persistent(&mut self, now: Time) {
        let splits = self.dispatcher.splits();
        let Some(r) = self.skew.report_mut() else {
            return;
        };
        if !splits.enabled()
            || r.windows_in_a_row < super::split::SKEWED_IN_A_ROW
            || !r.spreadable()
        {
            return;
        }
        if splits
            .split(r.hash, r.prefix.len(), r.recommended_k(), now)
            .is_ok()
        {
            r.split = true;
            self.counters.n_splits += 1;
        }
    }

    fn hand_off(&mut self, to: usize, face: FaceId, wire: Bytes) {
        push_to(
            &mut self.outlets,
            &mut self.counters,
            &mut self.woken,
            to,
            HandOff { face, wire },
        );
    }

    /// The fewest free slots of the rings toward other shards (batches not yet published
    /// count as used). A driver stops reading its faces while this is below what a burst
    /// may hand off, and lets the sockets' own buffers hold the rest (backpressure instead of
    /// drops).
    pub fn handoff_room(&self) -> usize {
        self.outlets
            .iter()
            .flatten()
            .map(Outlet::room)
            .min()
            .unwrap_or(usize::MAX)
    }

    /// Publishes every batch queued for other shards (once per turn, after the reads).
    pub fn flush(&mut self) {
        for outlet in self.outlets.iter_mut().flatten() {
            self.counters.n_ring_full += outlet.publish() as u64;
        }
    }

    /// Forwards up to `budget` packets from each other shard's ring; returns how many.
    ///
    /// The management changes sent so far are applied after a ring's packets are seen and
    /// before they are forwarded: a change recorded before a command's reply was published
    /// before any packet read after that reply, so once such a packet is visible here, so is
    /// the change. (Applying them only before this call left a window: a change and a packet
    /// read after its reply could both arrive between the two, and the packet met the old
    /// FIB.)
    pub fn handle_handoffs(&mut self, now: Time, budget: usize) -> usize {
        let mut n = 0;
        for k in 0..self.inlets.len() {
            let take = self.inlets.get(k).map_or(0, Inlet::slots).min(budget);
            if take == 0 {
                continue;
            }
            self.apply_control_at(now);
            let Some(inlet) = self.inlets.get_mut(k) else {
                continue;
            };
            let Ok(chunk) = inlet.read_chunk(take) else {
                continue;
            };
            self.fw.handing_off = true;
            let read = chunk.len();
            let draining = self.dispatcher.splits().draining(now);
            for h in chunk {
                n += 1;
                if draining {
                    // An Interest of a draining key handed here as its old shard: kept if
                    // this forwarder knows it, else on to the new shard.
                    if let Route::Drain { at, then } = self.dispatcher.route(now, &h.wire) {
                        if at == self.index && !self.fw.knows_interest(now, &h.wire) {
                            self.counters.n_drain_moved += 1;
                            let (outlets, counters) = (&mut self.outlets, &mut self.counters);
                            push_to(outlets, counters, &mut self.woken, then, h);
                            continue;
                        }
                        if at == self.index {
                            self.counters.n_drain_kept += 1;
                        }
                    }
                }
                self.fw.handle_packet(now, h.face, h.wire);
            }
            self.fw.handing_off = false;
            for (_, left) in &mut self.removing {
                if let Some(l) = left.get_mut(k) {
                    *l = l.saturating_sub(read);
                }
            }
        }
        self.counters.n_received += n as u64;
        self.finish_removals();
        n
    }

    /// Removes the faces whose last hand-offs are forwarded.
    fn finish_removals(&mut self) {
        if self.removing.is_empty() {
            return;
        }
        let fw = &mut self.fw;
        self.removing.retain(|(id, left)| {
            let done = left.iter().all(|&l| l == 0);
            if done {
                fw.remove_face(*id);
            }
            !done
        });
    }

    /// Removes a face once the hand-offs now queued toward this shard are forwarded.
    fn remove_face(&mut self, id: FaceId) -> bool {
        if self.fw.face(id).is_none() {
            return false;
        }
        let left: Vec<usize> = self.inlets.iter().map(Inlet::slots).collect();
        self.removing.push((id, left));
        self.finish_removals();
        true
    }

    /// Applies the management changes sent so far, in order; returns how many. (A rate limit
    /// set here starts its bucket full at [`Time::ZERO`]; see [`Shard::apply_control_at`].)
    pub fn apply_control(&mut self) -> usize {
        self.apply_control_at(Time::ZERO)
    }

    /// Applies the management changes sent so far, in order, at `now`; returns how many.
    pub fn apply_control_at(&mut self, now: Time) -> usize {
        let mut n = 0;
        while let Ok(op) = self.control.pop() {
            n += 1;
            if !self.apply(now, op) {
                self.counters.n_control_refused += 1;
            }
        }
        self.counters.n_control_applied += n as u64;
        n as usize
    }

    fn apply(&mut self, now: Time, op: ControlOp) -> bool {
        let fw = &mut self.fw;
        match op {
            ControlOp::AddFace {
                id,
                scope,
                link_type,
            } => fw.add_face_with_id(id, scope, link_type).is_ok(),
            ControlOp::RemoveFace(id) => self.remove_face(id),
            ControlOp::AddNexthop { prefix, face, cost } => {
                fw.add_nexthop(&prefix, face, cost).is_ok()
            }
            ControlOp::RemoveNexthop { prefix, face } => fw.remove_nexthop(&prefix, face),
            ControlOp::SetStrategy { prefix, strategy } => {
                fw.set_strategy(&prefix, &strategy).is_ok()
            }
            ControlOp::UnsetStrategy(prefix) => fw.unset_strategy(&prefix).is_ok(),
            ControlOp::SetInterestRateLimit { face, limit } => {
                fw.set_interest_rate_limit(face, now, limit)
            }
            ControlOp::SetLocalFields { face, enabled } => fw.set_local_fields(face, enabled),
            ControlOp::SetCsCapacity(capacity) => {
                fw.set_cs_capacity(capacity);
                true
            }
            ControlOp::SetCsAdmit(admit) => {
                fw.set_cs_admit(admit);
                true
            }
            ControlOp::SetCsServe(serve) => {
                fw.set_cs_serve(serve);
                true
            }
            // Validated by shard 0 before it was recorded: the same rules cannot fail here.
            ControlOp::SetCsPolicy { rules, partition } => {
                fw.set_cs_policy(&rules, partition).is_ok()
            }
            ControlOp::CsErase { prefix, limit } => {
                fw.cs_erase(&prefix, limit);
                true
            }
        }
    }

    /// Handles this shard's timers (see [`Forwarder::handle_timeout`]).
    pub fn handle_timeout(&mut self, now: Time) {
        self.fw.handle_timeout(now);
    }

    /// This shard's next timer.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.fw.poll_timeout()
    }

    /// The next packet this shard sends.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.fw.poll_transmit()
    }
}

/// Queues `h` for shard `to` (published at the batch size or by [`Shard::flush`]).
fn push_to(
    outlets: &mut [Option<Outlet>],
    counters: &mut ShardCounters,
    woken: &mut u64,
    to: usize,
    h: HandOff,
) {
    let Some(Some(outlet)) = outlets.get_mut(to) else {
        return;
    };
    counters.n_handed_off += 1;
    *woken |= 1 << to;
    if outlet.push(h) {
        counters.n_ring_full += outlet.publish() as u64;
    }
}
