//! The NDNLPv2 link service of a face, sans I/O: what NFD's `GenericLinkService` does between
//! the transport and the forwarder, minus reliability.
//!
//! Receiving ([`LinkRx::on_receive`]): bare Interests and Data and unfragmented LpPackets go up
//! to the forwarder unchanged (the same `Bytes`); IDLE LpPackets (no Fragment, e.g. NDNts'
//! keep-alive `64 00`) are consumed; fragments are reassembled where reassembly is on (UDP) and
//! dropped elsewhere (Unix, TCP, as NFD). A reassembled packet goes up bare, or as a
//! single-fragment LpPacket when its first fragment carried network-layer headers (PitToken,
//! Nack, CongestionMark, ...): NDNLPv2 puts those on the first fragment only.
//!
//! Sending ([`LinkTx::on_send`]): the forwarder hands complete packets, bare or LpPacket-wrapped
//! (Nack, PitToken). A packet that fits the MTU, or any packet on a stream face (no MTU), goes
//! out unchanged: stream faces never fragment, and HopCount is never added. A larger packet is
//! split with [`nameway_wire::lp::fragment`]; its LpPacket headers ride on the first fragment,
//! as NFD's `LpFragmenter` does.
//!
//! The hop-by-hop cipher (docs/design.md §4) will sit here too.

use std::collections::HashMap;

use bytes::Bytes;
use nameway_wire::lp::{fragment, LpPacket, Reassembler, ReassemblerConfig, ReassemblyCounters};
use nameway_wire::tlv::types;
use nameway_wire::{ErrorKind, Packet};
use smallvec::{smallvec, SmallVec};

/// What became of one received link packet.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RxOutcome {
    /// A whole network packet for the forwarder (bare, or a single-fragment LpPacket).
    Deliver(Bytes),
    /// An IDLE LpPacket, consumed.
    Idle,
    /// A LinkHandshake message (its value) for the face's secure link.
    Handshake(Bytes),
    /// A fragment was taken by reassembly: held, or dropped (see
    /// [`LinkRx::take_reassembly_drops`]).
    Fragment,
    /// The packet was dropped.
    Dropped(RxDrop),
}

/// Why a received packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RxDrop {
    /// Not a well-formed Interest, Data or LpPacket.
    Malformed,
    /// Larger than 8800 bytes.
    TooLarge,
}

/// Link-service settings of one face.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinkConfig {
    /// Fragment outgoing packets larger than this. `None` (stream faces): never fragment.
    pub mtu: Option<usize>,
    /// Reassemble incoming fragments with these limits. `None`: drop fragments.
    pub reassembly: Option<ReassemblerConfig>,
}

/// Both halves of a face's link service.
#[derive(Debug)]
pub struct LinkService {
    /// The receiving half.
    pub rx: LinkRx,
    /// The sending half.
    pub tx: LinkTx,
}

impl LinkService {
    /// A link service with `config`; the first fragment Sequence is drawn at random.
    pub fn new(config: LinkConfig) -> Self {
        Self {
            rx: LinkRx::new(config.reassembly),
            tx: LinkTx::new(config.mtu, random_u64()),
        }
    }

    /// See [`LinkRx::on_receive`].
    pub fn on_receive(&mut self, now_ms: u64, wire: Bytes) -> RxOutcome {
        self.rx.on_receive(now_ms, wire)
    }

    /// See [`LinkTx::on_send`].
    pub fn on_send(&mut self, wire: Bytes) -> SmallVec<[Bytes; 4]> {
        self.tx.on_send(wire)
    }

    /// The halves, for a reader task and a writer task.
    pub fn split(self) -> (LinkRx, LinkTx) {
        (self.rx, self.tx)
    }
}

/// The receiving half: classification and reassembly.
#[derive(Debug)]
pub struct LinkRx {
    /// Boxed: most faces never reassemble, and an idle face's task should stay small.
    reassembler: Option<Box<Reassembler>>,
    /// Headers of first fragments, keyed by message id (Sequence of fragment 0), with their
    /// expiry time.
    headers: HashMap<u64, (LpPacket, u64)>,
    /// Fragments refused because reassembly is off.
    disabled_drops: u64,
    /// Reassembly drops already reported by `take_reassembly_drops`.
    reported_drops: u64,
}

impl LinkRx {
    /// A receiving half; `reassembly: None` drops fragments.
    pub fn new(reassembly: Option<ReassemblerConfig>) -> Self {
        Self {
            reassembler: reassembly.map(|c| Box::new(Reassembler::new(c))),
            headers: HashMap::new(),
            disabled_drops: 0,
            reported_drops: 0,
        }
    }

    /// Takes one received link packet (a datagram, or one TLV cut from a stream) at `now_ms`.
    pub fn on_receive(&mut self, now_ms: u64, wire: Bytes) -> RxOutcome {
        let lp = match Packet::classify(wire.clone()) {
            Ok(Packet::Interest(_) | Packet::Data(_)) => return RxOutcome::Deliver(wire),
            Ok(Packet::Lp(lp)) => lp,
            Err(e) if e.kind == ErrorKind::TooLarge => return RxOutcome::Dropped(RxDrop::TooLarge),
            Err(_) => return RxOutcome::Dropped(RxDrop::Malformed),
        };
        if lp.fragment.is_none() {
            return match lp.link_handshake {
                Some(h) => RxOutcome::Handshake(h),
                None => RxOutcome::Idle,
            };
        }
        let index = lp.frag_index.unwrap_or(0);
        let count = lp.frag_count.unwrap_or(1);
        if count == 1 && index == 0 {
            return RxOutcome::Deliver(wire);
        }
        self.on_fragment(now_ms, &lp, index)
    }

    fn on_fragment(&mut self, now_ms: u64, lp: &LpPacket, index: u64) -> RxOutcome {
        let Some(reassembler) = self.reassembler.as_mut() else {
            self.disabled_drops += 1;
            return RxOutcome::Fragment;
        };
        let timeout = reassembler.config().timeout_ms;
        let max_entries = reassembler.config().max_entries.max(1);
        if index == 0 && has_network_headers(lp) {
            if let Some(seq) = lp.sequence {
                if self.headers.len() >= max_entries {
                    self.headers.retain(|_, (_, expiry)| *expiry > now_ms);
                }
                if self.headers.len() >= max_entries {
                    self.headers.clear(); // only a flood of first fragments gets here
                }
                self.headers
                    .insert(seq, (network_headers(lp), now_ms.saturating_add(timeout)));
            }
        }
        let Some(whole) = reassembler.receive(now_ms, lp) else {
            return RxOutcome::Fragment;
        };
        let id = lp.sequence.unwrap_or(0).wrapping_sub(index);
        let headers = self.headers.remove(&id).map(|(h, _)| h);
        self.deliver_reassembled(whole, headers)
    }

    fn deliver_reassembled(&mut self, whole: Bytes, headers: Option<LpPacket>) -> RxOutcome {
        // A packet encrypted whole is ciphertext until the secure link opens it.
        let sealed_whole = headers
            .as_ref()
            .and_then(|h| h.link_security)
            .is_some_and(|s| s.whole_packet);
        match Packet::classify(whole.clone()) {
            _ if sealed_whole => {}
            Ok(Packet::Interest(_) | Packet::Data(_)) => {}
            Err(e) if e.kind == ErrorKind::TooLarge => return RxOutcome::Dropped(RxDrop::TooLarge),
            Ok(Packet::Lp(_)) | Err(_) => return RxOutcome::Dropped(RxDrop::Malformed),
        }
        match headers {
            Some(h) => RxOutcome::Deliver(
                LpPacket {
                    fragment: Some(whole),
                    ..h
                }
                .encode(),
            ),
            None => RxOutcome::Deliver(whole),
        }
    }

    /// When [`LinkRx::handle_timeout`] next has work (ms), if ever.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.reassembler
            .as_deref()
            .and_then(Reassembler::poll_timeout)
    }

    /// Drops partial packets (and their saved headers) that timed out by `now_ms`.
    pub fn handle_timeout(&mut self, now_ms: u64) {
        if let Some(r) = self.reassembler.as_mut() {
            r.handle_timeout(now_ms);
        }
        self.headers.retain(|_, (_, expiry)| *expiry > now_ms);
    }

    /// Reassembly's counters, when reassembly is on.
    pub fn reassembly_counters(&self) -> Option<&ReassemblyCounters> {
        self.reassembler.as_deref().map(Reassembler::counters)
    }

    /// Reassembly drops (fragments refused, partial packets timed out or evicted, fragments
    /// refused because reassembly is off) since the previous call.
    pub fn take_reassembly_drops(&mut self) -> u64 {
        let total = self.disabled_drops
            + self.reassembly_counters().map_or(0, |c| {
                c.bad_index
                    + c.too_many_fragments
                    + c.missing_sequence
                    + c.count_mismatch
                    + c.duplicate
                    + c.too_large
                    + c.timed_out
                    + c.evicted
            });
        let new = total.saturating_sub(self.reported_drops);
        self.reported_drops = total;
        new
    }
}

/// The sending half: fragmentation to the MTU.
#[derive(Debug)]
pub struct LinkTx {
    mtu: Option<usize>,
    next_sequence: u64,
}

impl LinkTx {
    /// A sending half; `mtu: None` never fragments. Fragments are numbered from
    /// `first_sequence`.
    pub fn new(mtu: Option<usize>, first_sequence: u64) -> Self {
        Self {
            mtu,
            next_sequence: first_sequence,
        }
    }

    /// The MTU, if any.
    pub fn mtu(&self) -> Option<usize> {
        self.mtu
    }

    /// The link packets that carry `wire`: `wire` itself when it fits, else its fragments in
    /// order. Empty when `wire` cannot be fragmented to the MTU (or is an LpPacket that does
    /// not decode); the caller counts the drop.
    pub fn on_send(&mut self, wire: Bytes) -> SmallVec<[Bytes; 4]> {
        let Some(mtu) = self.mtu.filter(|&mtu| wire.len() > mtu) else {
            return smallvec![wire];
        };
        let frags = if wire.first() == Some(&(types::LP_PACKET as u8)) {
            self.fragment_lp(&wire, mtu)
        } else {
            fragment(&wire, mtu, self.next_sequence)
        };
        self.next_sequence = self.next_sequence.wrapping_add(frags.len() as u64);
        SmallVec::from_vec(frags)
    }

    /// Fragments the payload of an LpPacket, putting its headers on the first fragment.
    fn fragment_lp(&self, wire: &Bytes, mtu: usize) -> Vec<Bytes> {
        let Ok(lp) = LpPacket::decode(wire) else {
            return Vec::new();
        };
        let Some(payload) = lp.fragment.clone() else {
            return vec![wire.clone()]; // an IDLE packet larger than the MTU: send it as is
        };
        let headers = network_headers(&lp);
        let room = mtu.saturating_sub(headers.encoded_len());
        let mut frags = fragment(&payload, room, self.next_sequence);
        let Some(first) = frags.first_mut() else {
            return frags;
        };
        let Ok(first_lp) = LpPacket::decode(first) else {
            return Vec::new(); // unreachable: `fragment` encodes valid LpPackets
        };
        *first = LpPacket {
            sequence: first_lp.sequence,
            frag_index: first_lp.frag_index,
            frag_count: first_lp.frag_count,
            fragment: first_lp.fragment,
            ..headers
        }
        .encode();
        frags
    }
}

/// Whether `lp` carries header fields meant for the forwarder (not fragmentation or link
/// reliability fields).
fn has_network_headers(lp: &LpPacket) -> bool {
    let h = network_headers(lp);
    h != LpPacket::default()
}

/// The network-layer header fields of `lp`: PitToken, Nack, local fields, CongestionMark,
/// NonDiscovery, PrefixAnnouncement, RetryAfter, LinkSecurity. Never HopCount.
pub(crate) fn network_headers(lp: &LpPacket) -> LpPacket {
    LpPacket {
        pit_token: lp.pit_token.clone(),
        nack: lp.nack,
        incoming_face_id: lp.incoming_face_id,
        next_hop_face_id: lp.next_hop_face_id,
        cache_policy: lp.cache_policy,
        congestion_mark: lp.congestion_mark,
        non_discovery: lp.non_discovery,
        prefix_announcement: lp.prefix_announcement.clone(),
        retry_after: lp.retry_after,
        link_security: lp.link_security,
        ..LpPacket::default()
    }
}

/// A random number (the first NDNLPv2 sequence number of a face): sequence numbers need to be
/// unpredictable enough not to collide, not secret.
pub(crate) use nameway_wire::random::u64 as random_u64;

#[cfg(test)]
mod tests;
