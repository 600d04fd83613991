//! The first hop of self-certifying names (docs/routing.md): the hook that lets the daemon's
//! routing resolve `/32=sc/<h>/...` names, without I/O.
//!
//! Off unless [`Forwarder::enable_resolution`] was called: the pipelines then test one
//! `Option` and nothing else. On, an Interest whose name starts with `/32=sc/<h>` (a keyword
//! component `sc`, then 32 bytes), that carries no ForwardingHint and has no FIB route of its
//! own name (a prefix of at least `/32=sc/<h>`: a default route does not count), either
//! - gets the ForwardingHint the daemon set for `h` ([`Forwarder::set_route_hint`]) when the
//!   FIB has a route for that hint, and goes on to the strategy; or
//! - is **held**: its PIT entry stays (bounded and fair as every entry) and the daemon is told
//!   with [`RouteEvent::Miss`] (once per name while entries wait). The daemon resolves `h`
//!   and calls [`Forwarder::release_held`] (the held entries run the strategy with the new
//!   hint) or [`Forwarder::nack_held`] (Nack NoRoute, with RetryAfter, to every downstream).
//!
//! A Nack NoRoute from upstream for an Interest this forwarder hinted is not passed down:
//! the entry gets its downstream's own Interest back, is held again, and
//! [`RouteEvent::Nacked`] asks the daemon to look the name up again (the producer may have
//! moved). An Interest whose hint is one of this router's own names
//! ([`Forwarder::enable_resolution`]'s `regions`) has arrived: as NFD does in the producer's
//! region, the hint is taken off (applications such as NDNts's forwarder would otherwise
//! route by it) and the Interest is routed by its name.

use std::collections::{HashMap, VecDeque};

use bytes::{BufMut as _, Bytes, BytesMut};
use nameway_wire::lp::NackReason;
use nameway_wire::tlv::{self, types};
use nameway_wire::{InterestView, Name, PrefixHashes};
use smallvec::SmallVec;

use crate::forwarder::Forwarder;
use crate::table::face_table::FaceId;
use crate::table::pit::PitEntryId;
use crate::time::Time;

/// What the daemon's routing must act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouteEvent {
    /// Interests for `/32=sc/<h>/...` are held: no route, no hint. Resolve `h`, then
    /// [`Forwarder::release_held`] or [`Forwarder::nack_held`].
    Miss {
        /// The name's hash.
        h: [u8; 32],
    },
    /// An upstream Nacked (NoRoute) an Interest this forwarder had hinted with `hint`; it is
    /// held again. Look `h` up afresh, then release or Nack as for a miss.
    Nacked {
        /// The name's hash.
        h: [u8; 32],
        /// The hint the Interest carried.
        hint: Name,
        /// The face that sent the Nack.
        face: FaceId,
    },
}

/// What the hook did, for export.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResolutionCounters {
    /// Interests held for lack of a route (first hop, no hint).
    pub held: u64,
    /// Interests that got a ForwardingHint here.
    pub hinted: u64,
    /// Held Interests released toward a route.
    pub released: u64,
    /// Held Interests answered with Nack NoRoute.
    pub nacked: u64,
    /// Upstream Nacks NoRoute of hinted Interests, held again for a new look-up.
    pub upstream_nacks: u64,
    /// Misses of names not held yet, Nacked at once while the daemon refuses new look-ups
    /// ([`Forwarder::set_miss_refusal`]); also counted in `nacked`.
    pub refused: u64,
}

/// The hook's state (in a `Box`, absent when resolution is off).
#[derive(Debug, Default)]
pub(crate) struct Resolution {
    /// `h` -> the ForwardingHint toward its delegate router.
    hints: HashMap<[u8; 32], Name>,
    /// This router's own names: a hint among them is routed by the Interest's name.
    pub(crate) regions: Vec<Name>,
    /// Held PIT entries per name.
    held: HashMap<[u8; 32], SmallVec<[PitEntryId; 2]>>,
    events: VecDeque<RouteEvent>,
    counters: ResolutionCounters,
    /// While set, a miss for a name with nothing held is Nacked NoRoute at once with this
    /// RetryAfter (ms) instead of being held: the daemon's look-up queue is full.
    refuse_new: Option<u64>,
}

impl Resolution {
    /// Holds `id` for `h`; the first entry held for a name raises [`RouteEvent::Miss`].
    fn hold(&mut self, h: [u8; 32], id: PitEntryId) -> bool {
        let list = self.held.entry(h).or_default();
        let first = list.is_empty();
        if !list.contains(&id) {
            list.push(id);
        }
        first
    }
}

/// `h` when `name` starts with `/32=sc/<h>` (32-byte GenericNameComponent).
pub fn sc_hash(name: &Name) -> Option<[u8; 32]> {
    let first = name.get(0)?;
    if first.typ() != types::KEYWORD_NAME_COMPONENT || first.value() != b"sc" {
        return None;
    }
    let second = name.get(1)?;
    if second.typ() != types::GENERIC_NAME_COMPONENT {
        return None;
    }
    second.value().try_into().ok()
}

/// [`sc_hash`] over a Name TLV's value (its components as encoded): `/32=sc/<h>` is exactly
/// the bytes `20 02 73 63 08 20` then `h`, as TLV numbers are in their shortest form.
fn sc_hash_value(value: &[u8]) -> Option<[u8; 32]> {
    const HEAD: [u8; 6] = [0x20, 0x02, b's', b'c', 0x08, 0x20];
    value.strip_prefix(&HEAD)?.get(..32)?.try_into().ok()
}

impl Forwarder {
    /// Turns the first-hop hook on (see the module documentation); `regions` are this
    /// router's own names, whose hints mean "here".
    pub fn enable_resolution(&mut self, regions: Vec<Name>) {
        let r = self.resolution.get_or_insert_with(Box::default);
        r.regions = regions;
    }

    /// While `Some(retry_after_ms)`, a miss for a name with no Interest held yet is answered
    /// at once with Nack NoRoute carrying that RetryAfter, instead of being held and raising
    /// [`RouteEvent::Miss`]: the daemon sets it while its look-up queue is full, so a flood of
    /// unknown names costs what a plain FIB miss costs. Names already held still join.
    pub fn set_miss_refusal(&mut self, retry_after_ms: Option<u64>) {
        if let Some(r) = self.resolution.as_mut() {
            r.refuse_new = retry_after_ms;
        }
    }

    /// Whether the hook is on.
    pub fn resolution_enabled(&self) -> bool {
        self.resolution.is_some()
    }

    /// Sets the ForwardingHint Interests for `/32=sc/<h>/...` get here (the delegate router's
    /// name). Returns `false` when the hook is off.
    pub fn set_route_hint(&mut self, h: [u8; 32], hint: Name) -> bool {
        match self.resolution.as_mut() {
            Some(r) => {
                r.hints.insert(h, hint);
                true
            }
            None => false,
        }
    }

    /// Removes the hint of `h`; returns it.
    pub fn remove_route_hint(&mut self, h: &[u8; 32]) -> Option<Name> {
        self.resolution.as_mut()?.hints.remove(h)
    }

    /// The hint of `h`, if set.
    pub fn route_hint(&self, h: &[u8; 32]) -> Option<&Name> {
        self.resolution.as_ref()?.hints.get(h)
    }

    /// Hints set.
    pub fn route_hints_len(&self) -> usize {
        self.resolution.as_ref().map_or(0, |r| r.hints.len())
    }

    /// Names with Interests held.
    pub fn held_names(&self) -> usize {
        self.resolution.as_ref().map_or(0, |r| r.held.len())
    }

    /// The hook's counters (zero when off).
    pub fn resolution_counters(&self) -> ResolutionCounters {
        self.resolution
            .as_ref()
            .map(|r| r.counters)
            .unwrap_or_default()
    }

    /// The next event for the daemon's routing.
    pub fn poll_route_event(&mut self) -> Option<RouteEvent> {
        self.resolution.as_mut()?.events.pop_front()
    }

    /// Forwards the Interests held for `h` (the route or its hint is now in place): each runs
    /// its strategy again, with the hint of `h` if set. An entry that still has no route is
    /// Nacked NoRoute by its strategy, never held again. Returns how many were released.
    pub fn release_held(&mut self, now: Time, h: &[u8; 32]) -> usize {
        let Some(ids) = self.resolution.as_mut().and_then(|r| r.held.remove(h)) else {
            return 0;
        };
        let mut n = 0;
        for id in ids {
            let Some(entry) = self.pit.get_mut(id) else {
                continue;
            };
            let Some(ingress) = entry
                .in_records()
                .iter()
                .max_by_key(|r| r.last_renewed())
                .map(|r| r.face())
            else {
                continue;
            };
            let hashes = self.hasher.prefix_hashes(&entry.name());
            self.insert_hint(id);
            n += 1;
            self.with_strategy(now, id, true, Some(&hashes), |s, cx| {
                s.after_receive_interest(cx, ingress)
            });
            self.after_trigger(now, id);
        }
        if let Some(r) = self.resolution.as_mut() {
            r.counters.released += n as u64;
        }
        n
    }

    /// Answers the Interests held for `h` with Nack NoRoute (carrying `retry_after_ms` in
    /// NDNLPv2 RetryAfter when given) to every downstream, and removes their entries.
    /// Returns how many entries were Nacked.
    pub fn nack_held(&mut self, now: Time, h: &[u8; 32], retry_after_ms: Option<u64>) -> usize {
        let Some(ids) = self.resolution.as_mut().and_then(|r| r.held.remove(h)) else {
            return 0;
        };
        let mut n = 0;
        for id in ids {
            let Some(entry) = self.pit.get_mut(id) else {
                continue;
            };
            let downstreams: SmallVec<[FaceId; 2]> =
                entry.in_records().iter().map(|r| r.face()).collect();
            for face in downstreams {
                super::nack::on_outgoing_nack_with(
                    entry,
                    face,
                    NackReason::NoRoute,
                    retry_after_ms,
                    &mut self.faces,
                    &mut self.out,
                );
            }
            n += 1;
            self.on_interest_finalize(now, id);
        }
        if let Some(r) = self.resolution.as_mut() {
            r.counters.nacked += n as u64;
        }
        n
    }

    /// The hook in `onContentStoreMiss`: `true` when the entry is held (the strategy must not
    /// run now).
    pub(crate) fn resolve_first_hop(
        &mut self,
        now: Time,
        id: PitEntryId,
        hashes: &PrefixHashes,
    ) -> bool {
        let Some(entry) = self.pit.get(id) else {
            return false;
        };
        let interest = entry.interest();
        if interest.has_forwarding_hint() {
            self.strip_arrived_hint(id);
            return false;
        }
        let Some(h) = sc_hash_value(interest.name_value()) else {
            return false;
        };
        let own_route = self
            .fib
            .longest_prefix_match(&interest.name(), hashes)
            .is_some_and(|(prefix, hops)| prefix.len() >= 2 && !hops.is_empty());
        if own_route || self.insert_hint(id) {
            return false;
        }
        let Some(r) = self.resolution.as_mut() else {
            return false;
        };
        if let Some(retry) = r.refuse_new.filter(|_| !r.held.contains_key(&h)) {
            r.counters.refused += 1;
            r.held.insert(h, SmallVec::from_elem(id, 1));
            self.nack_held(now, &h, Some(retry));
            return true;
        }
        r.counters.held += 1;
        if r.hold(h, id) {
            r.events.push_back(RouteEvent::Miss { h });
        }
        true
    }

    /// Takes the ForwardingHint off entry `id`'s Interest when it names this router.
    fn strip_arrived_hint(&mut self, id: PitEntryId) {
        let Some(r) = self.resolution.as_ref() else {
            return;
        };
        let Some(entry) = self.pit.get_mut(id) else {
            return;
        };
        let arrived = entry
            .interest()
            .forwarding_hint()
            .iter()
            .any(|h| r.regions.contains(h));
        if !arrived {
            return;
        }
        if let Some(view) = without_forwarding_hint(entry.interest().wire())
            .and_then(|w| InterestView::new_checked(w).ok())
        {
            entry.set_interest(view);
        }
    }

    /// Gives entry `id`'s Interest the hint of its name, when one is set, the Interest has
    /// none and the FIB has a route for the hint. Returns whether it did.
    fn insert_hint(&mut self, id: PitEntryId) -> bool {
        let Some(r) = self.resolution.as_mut() else {
            return false;
        };
        let Some(entry) = self.pit.get_mut(id) else {
            return false;
        };
        let interest = entry.interest();
        if interest.has_forwarding_hint() {
            return false;
        }
        let Some(hint) = sc_hash_value(interest.name_value()).and_then(|h| r.hints.get(&h)) else {
            return false;
        };
        let routed = self
            .fib
            .longest_prefix_match(hint, &self.hasher.prefix_hashes(hint))
            .is_some_and(|(_, hops)| !hops.is_empty());
        if !routed {
            return false;
        }
        let Some(view) = with_forwarding_hint(interest.wire(), hint)
            .and_then(|w| InterestView::new_checked(w).ok())
        else {
            return false;
        };
        entry.set_interest(view);
        r.counters.hinted += 1;
        true
    }

    /// The hook in `onIncomingNack`: a Nack NoRoute for an Interest hinted here holds the
    /// entry again (with its downstream's own Interest) and asks for a new look-up. `true`
    /// when it did (the strategy must not see this Nack).
    pub(crate) fn on_hinted_nack(
        &mut self,
        ingress: FaceId,
        id: PitEntryId,
        reason: NackReason,
    ) -> bool {
        if reason != NackReason::NoRoute {
            return false;
        }
        let Some(r) = self.resolution.as_mut() else {
            return false;
        };
        let Some(entry) = self.pit.get_mut(id) else {
            return false;
        };
        let Some(h) = sc_hash_value(entry.interest().name_value()) else {
            return false;
        };
        let hint = entry.interest().forwarding_hint().into_iter().next();
        let Some(hint) = hint.filter(|hint| r.hints.get(&h) == Some(hint)) else {
            return false;
        };
        // The Interest as its latest downstream sent it (without the hint added here).
        let Some(original) = entry
            .in_records()
            .iter()
            .max_by_key(|rec| rec.last_renewed())
            .map(|rec| entry.in_record_interest(rec).clone())
            .and_then(|w| InterestView::new_checked(w).ok())
            .filter(|v| !v.has_forwarding_hint())
        else {
            return false;
        };
        entry.remove_out_record(ingress);
        entry.set_interest(original);
        r.counters.upstream_nacks += 1;
        r.hold(h, id);
        r.events.push_back(RouteEvent::Nacked {
            h,
            hint,
            face: ingress,
        });
        true
    }
}

/// A copy of the Interest `wire` without its ForwardingHint; `None` when `wire` does not
/// parse or has none.
pub fn without_forwarding_hint(wire: &Bytes) -> Option<Bytes> {
    let top = tlv::read_single(wire).ok()?;
    let mut r = top.children();
    while let Ok(Some(e)) = r.read() {
        if e.typ == types::FORWARDING_HINT {
            let body_len = top.value.len() - (e.end() - e.start);
            let mut buf = BytesMut::with_capacity(tlv::tlv_len(types::INTEREST, body_len));
            tlv::put_header(&mut buf, types::INTEREST, body_len);
            buf.put_slice(wire.get(top.value_start..e.start)?);
            buf.put_slice(wire.get(e.end()..)?);
            return Some(buf.freeze());
        }
    }
    None
}

/// A copy of the Interest `wire` with `ForwardingHint { hint }` inserted where the packet
/// format puts it (after Name, CanBePrefix and MustBeFresh). `None` when `wire` does not
/// parse or already has a hint.
pub fn with_forwarding_hint(wire: &Bytes, hint: &Name) -> Option<Bytes> {
    let top = tlv::read_single(wire).ok()?;
    let mut r = top.children();
    let mut insert_at = top.value_start;
    while let Ok(Some(e)) = r.read() {
        match e.typ {
            types::NAME | types::CAN_BE_PREFIX | types::MUST_BE_FRESH => insert_at = e.end(),
            types::FORWARDING_HINT => return None,
            _ => break,
        }
    }
    let name_len = tlv::tlv_len(types::NAME, hint.value_bytes().len());
    let hint_len = tlv::tlv_len(types::FORWARDING_HINT, name_len);
    let body_len = top.value.len() + hint_len;
    let mut buf = BytesMut::with_capacity(tlv::tlv_len(types::INTEREST, body_len));
    tlv::put_header(&mut buf, types::INTEREST, body_len);
    buf.put_slice(wire.get(top.value_start..insert_at)?);
    tlv::put_header(&mut buf, types::FORWARDING_HINT, name_len);
    tlv::put_tlv(&mut buf, types::NAME, hint.value_bytes());
    buf.put_slice(wire.get(insert_at..)?);
    Some(buf.freeze())
}

#[cfg(test)]
mod tests;
