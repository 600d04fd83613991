//! Interest pipelines (NFD `forwarder.cpp`): incoming Interest, Interest loop, content store
//! miss and hit, outgoing Interest, Interest finalize.

use bytes::Bytes;
use nameway_wire::lp::{LpPacket, NackReason};
use nameway_wire::{CompactInterest, InterestView, Name, NameHasher, PrefixHashes};

use super::{is_localhost, is_localhost_value, nack, Kind, Outbox};
use crate::counters::{DropReason, FibCounters};
use crate::forwarder::{Forwarder, LpFields};
use crate::strategy::LoopResponse;
use crate::table::face_table::{FaceId, FaceTable};
use crate::table::fib::{Fib, NextHop};
use crate::table::pit::{PitEntry, PitEntryId, PitFull, Refused};
use crate::time::Time;

impl Forwarder {
    /// Whether this forwarder already met the Interest `wire` carries (bare or in an
    /// LpPacket): its PIT holds an entry for it, or its dead-nonce or straggler list knows its
    /// Nonce. A shard draining a split dispatch key keeps such an Interest (aggregation and
    /// loop detection happen where its first copy went, [`crate::shard::split`]) and hands
    /// the others to the key's new shard.
    pub fn knows_interest(&mut self, now: Time, wire: &Bytes) -> bool {
        let fragment = match nameway_wire::Packet::classify(wire.clone()) {
            Ok(nameway_wire::Packet::Interest(w)) => w,
            Ok(nameway_wire::Packet::Lp(lp)) => match lp.fragment {
                Some(f) => f,
                None => return false,
            },
            _ => return false,
        };
        let Ok(interest) = InterestView::new_checked(fragment) else {
            return false;
        };
        let hash = self.hasher.hash_name(interest.name());
        if let Some(nonce) = interest.nonce() {
            if self.dnl.has(now, hash, nonce) || self.stragglers.has(now, hash, nonce) {
                return true;
            }
        }
        self.pit.contains(&interest, hash)
    }

    /// NFD `onIncomingInterest`.
    pub(crate) fn on_incoming_interest(
        &mut self,
        now: Time,
        ingress: FaceId,
        wire: Bytes,
        lp: LpFields,
    ) {
        let Ok(mut interest) = InterestView::new_checked(wire) else {
            self.record_drop(ingress, DropReason::Malformed);
            return;
        };
        let Some(face) = self.faces.get_mut(ingress) else {
            return;
        };
        face.counters.n_in_interests += 1;
        self.out.counters.n_in_interests += 1;
        let (local, p2p) = (face.is_local(), face.is_point_to_point());
        // The rate limit spares management from local faces, as fair admission does. A packet
        // another shard read met the limit there.
        if let Some(bucket) = face.interest_limit.as_mut().filter(|_| !self.handing_off) {
            let management = local && is_localhost(interest.name());
            if !management && !bucket.take(now) {
                self.record_drop(ingress, DropReason::RateLimit);
                return;
            }
        }
        if interest.hop_limit() == Some(0) {
            self.record_drop(ingress, DropReason::HopLimitExpired);
            return;
        }
        if !local && is_localhost(interest.name()) {
            self.record_drop(ingress, DropReason::LocalhostViolation);
            return;
        }
        if interest.nonce().is_none() {
            interest.set_nonce(self.rng.next_u32());
        }
        let nonce = interest.nonce().unwrap_or(0);
        let hashes = self.packet_hashes(interest.name());
        if self.cs_serve {
            // The look-up comes after the loop checks and the PIT: start its misses now.
            match &self.external_cs {
                None => self.cs.prefetch(&hashes),
                Some(ext) => ext.filter.prefetch(hashes.full()),
            }
        }
        let hash = hashes.full();
        if self.dnl.has(now, hash, nonce) || self.stragglers.has(now, hash, nonce) {
            self.on_interest_loop(ingress, p2p, &interest, &hashes, lp.pit_token);
            return;
        }
        let id = match self.pit.find(&interest, hash) {
            Some(id) => {
                let Some(entry) = self.pit.get_mut(id) else {
                    return;
                };
                if entry.has_duplicate_nonce(nonce, ingress, p2p) {
                    self.on_interest_loop(ingress, p2p, &interest, &hashes, lp.pit_token);
                    return;
                }
                let nobody_waits = !entry.has_in_records();
                if nobody_waits {
                    // Nobody waits (every downstream was answered with a Nack or left): the
                    // content store may answer.
                    if let Some(data) = self.content_store_lookup(&interest, &hashes, now) {
                        self.on_content_store_hit(ingress, lp.pit_token, data);
                        return;
                    }
                }
                if let Some(entry) = self.pit.get_mut(id) {
                    entry.set_interest(interest);
                }
                if self.external_cs.is_some()
                    && self.hand_to_cs_server(now, ingress, id, &hashes, &lp, nobody_waits)
                {
                    return;
                }
                id
            }
            None => {
                if let Some(data) = self.content_store_lookup(&interest, &hashes, now) {
                    self.on_content_store_hit(ingress, lp.pit_token, data);
                    return;
                }
                // Fair admission: management from local faces always gets in; under pressure
                // the face holding the most entries is refused first.
                let localhost = local && is_localhost(interest.name());
                let faces = &self.faces;
                match self.pit.admit(localhost, || faces.pit_share(ingress)) {
                    Ok(()) => {}
                    Err(Refused::Full) => {
                        self.record_drop(ingress, DropReason::PitFull);
                        return;
                    }
                    Err(Refused::Quota) => {
                        self.record_drop(ingress, DropReason::FaceQuota);
                        return;
                    }
                }
                let strategy = self.strategy_choice.effective(interest.name(), &hashes);
                let id = match self.pit.insert(interest, hash, strategy, ingress) {
                    Ok(id) => id,
                    Err(PitFull) => {
                        self.record_drop(ingress, DropReason::PitFull);
                        return;
                    }
                };
                self.faces.charge_pit(ingress);
                if self.external_cs.is_some()
                    && self.hand_to_cs_server(now, ingress, id, &hashes, &lp, true)
                {
                    return;
                }
                id
            }
        };
        self.on_content_store_miss(now, ingress, id, &hashes, lp);
    }

    fn content_store_lookup(
        &mut self,
        interest: &InterestView,
        hashes: &PrefixHashes,
        now: Time,
    ) -> Option<Bytes> {
        if !self.cs_serve || self.external_cs.is_some() {
            return None;
        }
        self.cs.lookup(interest, hashes, now)
    }

    /// NFD `onInterestLoop`: Nack Duplicate on point-to-point faces if the strategy wants it,
    /// silent drop otherwise.
    fn on_interest_loop(
        &mut self,
        ingress: FaceId,
        p2p: bool,
        interest: &InterestView,
        hashes: &PrefixHashes,
        pit_token: Option<Bytes>,
    ) {
        self.record_drop(ingress, DropReason::DuplicateNonce);
        if !p2p {
            return;
        }
        let slot = self.strategy_choice.effective(interest.name(), hashes);
        let response = self
            .strategy_choice
            .instance_mut(slot)
            .map_or(LoopResponse::NackDuplicate, |s| {
                s.on_interest_loop(interest, ingress)
            });
        if response == LoopResponse::NackDuplicate {
            let wire = interest.wire().clone();
            nack::send_nack(
                wire,
                pit_token,
                NackReason::Duplicate,
                ingress,
                &mut self.faces,
                &mut self.out,
            );
        }
    }

    /// NFD `onContentStoreHit`: the cached Data goes back to the downstream, with its PitToken.
    ///
    /// No scope check is needed: the Data name starts with the Interest name, and a
    /// `/localhost` Interest never gets here from a non-local face.
    fn on_content_store_hit(&mut self, ingress: FaceId, pit_token: Option<Bytes>, data: Bytes) {
        self.out.counters.n_satisfied_interests += 1;
        super::data::on_outgoing_data(
            &data,
            false,
            pit_token,
            ingress,
            &mut self.faces,
            &mut self.out,
        );
    }

    /// NFD `onContentStoreMiss`: in-record, expiry, then NextHopFaceId or the strategy.
    fn on_content_store_miss(
        &mut self,
        now: Time,
        ingress: FaceId,
        id: PitEntryId,
        hashes: &PrefixHashes,
        lp: LpFields,
    ) {
        let Some(entry) = self.pit.get_mut(id) else {
            return;
        };
        entry.insert_in_record(now, ingress, lp.pit_token);
        let expiry = entry.last_in_record_expiry().unwrap_or(now);
        if let Some(egress) = lp.next_hop {
            if self.faces.get(egress).is_some() {
                on_outgoing_interest(now, entry, egress, &mut self.faces, &mut self.out);
            }
            self.pit.set_expiry(id, expiry);
            return;
        }
        self.pit.set_expiry(id, expiry);
        if self.resolution.is_some() && self.resolve_first_hop(now, id, hashes) {
            return;
        }
        self.with_strategy(now, id, true, Some(hashes), |s, cx| {
            s.after_receive_interest(cx, ingress)
        });
        self.after_trigger(now, id);
    }

    /// Finalizes an entry its strategy rejected.
    pub(crate) fn after_trigger(&mut self, now: Time, id: PitEntryId) {
        if self.pit.get(id).is_some_and(|e| e.rejected) {
            self.on_interest_finalize(now, id);
        }
    }

    /// NFD `onInterestFinalize` for an entry that leaves unsatisfied (expired or rejected):
    /// counts it, records the Nonces sent upstream in the dead-nonce list, removes the entry.
    /// (Satisfied entries leave in `satisfy`.)
    pub(crate) fn on_interest_finalize(&mut self, now: Time, id: PitEntryId) {
        let Some(entry) = self.pit.get(id) else {
            return;
        };
        self.out.counters.n_unsatisfied_interests += 1;
        let downstream = super::dnl_face(entry);
        for r in entry.out_records() {
            self.dnl.add(now, downstream, entry.name_hash(), r.nonce());
        }
        if let Some(s) = self.strategy_choice.instance_mut(entry.strategy) {
            s.on_interest_expiry(entry);
        }
        self.remove_pit_entry(id);
    }
}

/// NFD `onOutgoingInterest`: the entry's latest Interest to `egress`, HopLimit decremented.
/// Refused (and counted on `egress`) when HopLimit reaches 0 before a non-local face or a
/// `/localhost` name would leave through one.
pub(crate) fn on_outgoing_interest(
    now: Time,
    entry: &mut PitEntry,
    egress: FaceId,
    faces: &mut FaceTable,
    out: &mut Outbox,
) -> bool {
    let Some(face) = faces.get_mut(egress) else {
        return false;
    };
    if !face.is_local() {
        let reason = if entry.outgoing_hop_limit() == Some(0) {
            Some(DropReason::HopLimitExpired)
        } else if is_localhost_value(entry.name_value()) {
            Some(DropReason::LocalhostViolation)
        } else {
            None
        };
        if let Some(reason) = reason {
            out.record_drop_on(face, reason);
            return false;
        }
    }
    entry.insert_out_record(now, egress);
    let mut wire = entry.outgoing_wire();
    if face.local_fields_enabled() {
        // IncomingFaceId: the downstream whose Interest was received last.
        let incoming = entry
            .in_records()
            .iter()
            .max_by_key(|r| r.last_renewed())
            .map(|r| r.face());
        if let Some(incoming) = incoming {
            let mut lp = LpPacket::wrap(wire);
            lp.incoming_face_id = Some(incoming.0);
            wire = lp.encode();
        }
    }
    out.send(face, wire, Kind::Interest);
    true
}

/// NFD `Strategy::lookupFib`: the next hops for the first ForwardingHint name that has a FIB
/// match, else for the Interest name (`hashes`: its prefix hashes, when already computed).
/// A hint among `regions` (this router's own names, NFD's network region table) means the
/// Interest has arrived: it is routed by its name.
pub(crate) fn lookup_fib<'f>(
    fib: &'f Fib,
    counters: &mut FibCounters,
    hasher: &NameHasher,
    interest: &CompactInterest,
    hashes: Option<&PrefixHashes>,
    regions: &[Name],
) -> &'f [NextHop] {
    counters.lookups += 1;
    if interest.has_forwarding_hint() {
        let hints = interest.forwarding_hint();
        let arrived = !regions.is_empty() && hints.iter().any(|h| regions.contains(h));
        for hint in hints.into_iter().filter(|_| !arrived) {
            let found = fib.longest_prefix_match(&hint, &hasher.prefix_hashes(&hint));
            if let Some((_, hops)) = found.filter(|(_, hops)| !hops.is_empty()) {
                return hops;
            }
        }
    }
    let own;
    let hashes = match hashes {
        Some(h) => h,
        None => {
            own = hasher.prefix_hashes(&interest.name());
            &own
        }
    };
    match fib.longest_prefix_match_interest(interest, hashes) {
        Some((_, hops)) => hops,
        None => {
            counters.misses += 1;
            &[]
        }
    }
}
