//! NDNLPv2 fragmentation and reassembly, sans I/O.
//!
//! [`fragment`] splits a network-layer packet into LpPackets that each fit an MTU, numbering
//! them with consecutive Sequences as NFD's `LpFragmenter` + `GenericLinkService` do.
//! [`Reassembler`] puts them back together as NFD's `LpReassembler` does: a packet is
//! identified by `Sequence - FragIndex` (its first fragment's Sequence); fragments may arrive in
//! any order; a partial packet is dropped when no fragment of it arrived for
//! [`ReassemblerConfig::timeout_ms`]. The clock is passed in (`now`, milliseconds).

use std::collections::{BTreeSet, HashMap};

use bytes::{BufMut, Bytes, BytesMut};

use super::LpPacket;
use crate::tlv::{self, types};

/// Splits `wire` (a whole network-layer packet) into encoded LpPackets of at most `mtu` bytes
/// each, carrying `Sequence` (`seq_start`, `seq_start + 1`, ...), `FragIndex`, `FragCount` and
/// `Fragment`, in order.
///
/// When `wire` fits in one LpPacket the result is that one packet with `Sequence` and
/// `Fragment` only: FragIndex 0 / FragCount 1 are the defaults, and python-ndn drops any packet
/// carrying FragIndex or FragCount.
///
/// Returns no packets when `wire` is empty (a Fragment may not be empty) or when `mtu` is too
/// small to carry a one-byte fragment. There is no limit on the number of fragments; NFD's
/// receiver accepts at most 400 ([`ReassemblerConfig::max_fragments`]).
pub fn fragment(wire: &Bytes, mtu: usize, seq_start: u64) -> Vec<Bytes> {
    let total = wire.len();
    if total == 0 {
        return Vec::new();
    }
    let Some((count, per)) = plan(total, mtu) else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(count);
    for index in 0..count {
        let start = index * per;
        let end = (start + per).min(total);
        let pkt = LpPacket {
            sequence: Some(seq_start.wrapping_add(index as u64)),
            frag_index: (count > 1).then_some(index as u64),
            frag_count: (count > 1).then_some(count as u64),
            fragment: Some(wire.slice(start..end)),
            ..LpPacket::default()
        };
        out.push(pkt.encode());
    }
    out
}

/// Number of fragments and payload bytes per fragment for a `total`-byte packet, or `None`
/// when `mtu` cannot hold a one-byte fragment.
fn plan(total: usize, mtu: usize) -> Option<(usize, usize)> {
    let mut count = 1usize;
    loop {
        let per = mtu.checked_sub(overhead(count, mtu))?;
        if per == 0 {
            return None;
        }
        let needed = total.div_ceil(per);
        if needed <= count {
            // `overhead` grows with the count, so fewer fragments still fit.
            return Some((needed, per));
        }
        count = needed;
    }
}

/// Upper bound of the bytes each fragment spends on everything but its payload, when there are
/// `count` fragments: LpPacket TL, Sequence, FragIndex, FragCount and the Fragment TL. Both
/// TLV-LENGTHs are at most `mtu`, which bounds their VAR-NUMBER sizes.
fn overhead(count: usize, mtu: usize) -> usize {
    let n = count as u64;
    let len_field = tlv::var_number_len(mtu as u64);
    1 + len_field
        + tlv::tlv_len(types::SEQUENCE, 8)
        + tlv::nni_tlv_len(types::FRAG_INDEX, n.saturating_sub(1))
        + tlv::nni_tlv_len(types::FRAG_COUNT, n)
        + 1
        + len_field
}

/// Limits of a [`Reassembler`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReassemblerConfig {
    /// Partial packets kept at once; a new packet beyond this evicts the one idle longest.
    pub max_entries: usize,
    /// Largest FragCount accepted (NFD `nMaxFragments`, 400).
    pub max_fragments: u64,
    /// Largest reassembled packet, in bytes; a partial packet growing past it is dropped.
    /// Defaults to [`crate::MAX_PACKET_SIZE`], since nothing larger would be accepted anyway.
    pub max_packet_size: usize,
    /// How long a partial packet is kept after its latest fragment (NFD
    /// `reassemblyTimeout`, 500 ms).
    pub timeout_ms: u64,
}

impl Default for ReassemblerConfig {
    fn default() -> Self {
        Self {
            max_entries: 256,
            max_fragments: 400,
            max_packet_size: tlv::MAX_PACKET_SIZE,
            timeout_ms: 500,
        }
    }
}

/// What a [`Reassembler`] did with the fragments it was given. Each drop is counted once, under
/// the first reason that applied.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReassemblyCounters {
    /// Packets returned whole: unfragmented LpPackets passed straight through.
    pub unfragmented: u64,
    /// Packets returned whole after reassembling two or more fragments.
    pub reassembled: u64,
    /// LpPackets dropped because they carry no Fragment (IDLE packets).
    pub no_fragment: u64,
    /// Fragments dropped because FragIndex >= FragCount.
    pub bad_index: u64,
    /// Fragments dropped because FragCount exceeds [`ReassemblerConfig::max_fragments`] (or
    /// [`ReassemblerConfig::max_packet_size`]: fragments are at least one byte long).
    pub too_many_fragments: u64,
    /// Fragments of a multi-fragment packet dropped because they carry no Sequence.
    pub missing_sequence: u64,
    /// Fragments dropped because their FragCount differs from earlier fragments' FragCount.
    pub count_mismatch: u64,
    /// Fragments dropped because that index was already received.
    pub duplicate: u64,
    /// Partial packets dropped because they grew past [`ReassemblerConfig::max_packet_size`].
    pub too_large: u64,
    /// Partial packets dropped after [`ReassemblerConfig::timeout_ms`] without progress.
    pub timed_out: u64,
    /// Fragments held by the partial packets that timed out.
    pub timed_out_fragments: u64,
    /// Partial packets evicted to make room ([`ReassemblerConfig::max_entries`]).
    pub evicted: u64,
}

/// One packet being reassembled.
#[derive(Debug)]
struct Partial {
    fragments: Vec<Option<Bytes>>,
    received: usize,
    bytes: usize,
    deadline: u64,
}

/// NDNLPv2 reassembly for one remote endpoint (use one per face, or per (face, endpoint) on a
/// multi-access face, as NFD keys partial packets by endpoint).
///
/// Call [`Reassembler::receive`] with each received [`LpPacket`]; call
/// [`Reassembler::handle_timeout`] at [`Reassembler::poll_timeout`]. Memory is bounded by
/// `max_entries` partial packets of at most `max_fragments` fragments and `max_packet_size`
/// bytes; fragments are kept as shared slices of the received buffers.
#[derive(Debug, Default)]
pub struct Reassembler {
    config: ReassemblerConfig,
    partial: HashMap<u64, Partial>,
    /// (deadline, message identifier) of every partial packet, earliest first.
    deadlines: BTreeSet<(u64, u64)>,
    counters: ReassemblyCounters,
}

impl Reassembler {
    /// A reassembler with the given limits.
    pub fn new(config: ReassemblerConfig) -> Self {
        Self {
            config,
            ..Self::default()
        }
    }

    /// The limits in use.
    pub fn config(&self) -> &ReassemblerConfig {
        &self.config
    }

    /// What has happened so far.
    pub fn counters(&self) -> &ReassemblyCounters {
        &self.counters
    }

    /// Number of partial packets held.
    pub fn len(&self) -> usize {
        self.partial.len()
    }

    /// Whether no partial packet is held.
    pub fn is_empty(&self) -> bool {
        self.partial.is_empty()
    }

    /// Takes one received LpPacket at time `now` (ms). Returns the whole network-layer packet
    /// when `pkt` completes one: at once (shared, not copied) when it is not fragmented,
    /// otherwise when its last missing fragment arrives. Returns `None` while a packet is
    /// incomplete and when the fragment is dropped (counted in [`Reassembler::counters`]).
    ///
    /// Expired partial packets are dropped first.
    pub fn receive(&mut self, now: u64, pkt: &LpPacket) -> Option<Bytes> {
        self.handle_timeout(now);
        let Some(frag) = &pkt.fragment else {
            self.counters.no_fragment += 1;
            return None;
        };
        let index = pkt.frag_index.unwrap_or(0);
        let count = pkt.frag_count.unwrap_or(1);
        if index >= count {
            self.counters.bad_index += 1;
            return None;
        }
        // Every fragment holds at least one byte, so a count above the size limit cannot fit.
        let size_cap = u64::try_from(self.config.max_packet_size).unwrap_or(u64::MAX);
        if count > self.config.max_fragments || count > size_cap {
            self.counters.too_many_fragments += 1;
            return None;
        }
        if count == 1 {
            self.counters.unfragmented += 1;
            return Some(frag.clone());
        }
        let Some(seq) = pkt.sequence else {
            self.counters.missing_sequence += 1;
            return None;
        };
        let id = seq.wrapping_sub(index);
        // Both fit in usize: count <= max_packet_size, checked above, and index < count.
        let (index, count) = (index as usize, count as usize);
        self.add(now, id, index, count, frag.clone())
    }

    fn add(&mut self, now: u64, id: u64, index: usize, count: usize, frag: Bytes) -> Option<Bytes> {
        if !self.partial.contains_key(&id) {
            self.make_room();
        }
        let deadline = now.saturating_add(self.config.timeout_ms);
        let entry = self.partial.entry(id).or_insert_with(|| Partial {
            fragments: vec![None; count],
            received: 0,
            bytes: 0,
            deadline,
        });
        if entry.fragments.len() != count {
            self.counters.count_mismatch += 1;
            return None;
        }
        let Some(slot) = entry.fragments.get_mut(index) else {
            self.counters.bad_index += 1; // unreachable: index < count == len
            return None;
        };
        if slot.is_some() {
            self.counters.duplicate += 1;
            return None;
        }
        entry.bytes += frag.len();
        *slot = Some(frag);
        entry.received += 1;
        let old_deadline = entry.deadline;
        entry.deadline = deadline;
        let (complete, too_large) = (
            entry.received == count,
            entry.bytes > self.config.max_packet_size,
        );
        self.deadlines.remove(&(old_deadline, id));
        if too_large {
            self.partial.remove(&id);
            self.counters.too_large += 1;
            return None;
        }
        if !complete {
            self.deadlines.insert((deadline, id));
            return None;
        }
        let done = self.partial.remove(&id)?;
        self.counters.reassembled += 1;
        let mut buf = BytesMut::with_capacity(done.bytes);
        for f in done.fragments.iter().flatten() {
            buf.put_slice(f);
        }
        Some(buf.freeze())
    }

    /// Evicts the partial packet idle longest when the table is full.
    fn make_room(&mut self) {
        while self.partial.len() >= self.config.max_entries.max(1) {
            let Some(&(deadline, id)) = self.deadlines.first() else {
                return;
            };
            self.deadlines.remove(&(deadline, id));
            self.partial.remove(&id);
            self.counters.evicted += 1;
        }
    }

    /// The time (ms) at which [`Reassembler::handle_timeout`] next has work, if any.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.deadlines.first().map(|&(deadline, _)| deadline)
    }

    /// Drops every partial packet whose deadline is at or before `now`.
    pub fn handle_timeout(&mut self, now: u64) {
        while let Some(&(deadline, id)) = self.deadlines.first() {
            if deadline > now {
                break;
            }
            self.deadlines.remove(&(deadline, id));
            if let Some(p) = self.partial.remove(&id) {
                self.counters.timed_out += 1;
                self.counters.timed_out_fragments += p.received as u64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lp(seq: u64, index: u64, count: u64, payload: &'static [u8]) -> LpPacket {
        LpPacket {
            sequence: Some(seq),
            frag_index: Some(index),
            frag_count: Some(count),
            fragment: Some(Bytes::from_static(payload)),
            ..LpPacket::default()
        }
    }

    #[test]
    fn out_of_order_completes() {
        let mut r = Reassembler::default();
        assert_eq!(r.receive(0, &lp(12, 2, 3, b"c")), None);
        assert_eq!(r.receive(1, &lp(10, 0, 3, b"a")), None);
        assert_eq!(
            r.receive(2, &lp(11, 1, 3, b"b")).as_deref(),
            Some(&b"abc"[..])
        );
        assert!(r.is_empty());
        assert_eq!(r.counters().reassembled, 1);
        assert_eq!(r.poll_timeout(), None);
    }

    #[test]
    fn drops_are_counted() {
        let mut r = Reassembler::default();
        assert_eq!(r.receive(0, &lp(1, 3, 3, b"x")), None);
        assert_eq!(r.receive(0, &lp(1, 0, 401, b"x")), None);
        let mut no_seq = lp(1, 0, 2, b"x");
        no_seq.sequence = None;
        assert_eq!(r.receive(0, &no_seq), None);
        assert_eq!(r.receive(0, &lp(5, 0, 2, b"x")), None);
        assert_eq!(r.receive(0, &lp(5, 0, 2, b"x")), None);
        assert_eq!(r.receive(0, &lp(7, 2, 3, b"x")), None); // same id 5, count 3
        assert_eq!(r.receive(0, &LpPacket::default()), None);
        let c = *r.counters();
        assert_eq!(
            (
                c.bad_index,
                c.too_many_fragments,
                c.missing_sequence,
                c.duplicate,
                c.count_mismatch
            ),
            (1, 1, 1, 1, 1)
        );
        assert_eq!(c.no_fragment, 1);
    }

    #[test]
    fn timeout_resets_on_progress() {
        let mut r = Reassembler::default();
        r.receive(0, &lp(0, 0, 3, b"a"));
        assert_eq!(r.poll_timeout(), Some(500));
        r.receive(400, &lp(1, 1, 3, b"b"));
        assert_eq!(r.poll_timeout(), Some(900));
        r.handle_timeout(899);
        assert_eq!(r.len(), 1);
        r.handle_timeout(900);
        assert!(r.is_empty());
        assert_eq!(
            (r.counters().timed_out, r.counters().timed_out_fragments),
            (1, 2)
        );
        // A late fragment starts a new partial packet.
        assert_eq!(r.receive(901, &lp(2, 2, 3, b"c")), None);
        assert_eq!(r.len(), 1);
    }

    #[test]
    fn full_table_evicts_oldest() {
        let config = ReassemblerConfig {
            max_entries: 2,
            ..ReassemblerConfig::default()
        };
        let mut r = Reassembler::new(config);
        r.receive(0, &lp(100, 0, 2, b"a"));
        r.receive(1, &lp(200, 0, 2, b"b"));
        r.receive(2, &lp(300, 0, 2, b"c"));
        assert_eq!(r.len(), 2);
        assert_eq!(r.counters().evicted, 1);
        assert_eq!(r.receive(3, &lp(101, 1, 2, b"z")), None); // 100 was evicted
        assert_eq!(
            r.receive(4, &lp(301, 1, 2, b"z")).as_deref(),
            Some(&b"cz"[..])
        );
    }

    #[test]
    fn oversized_partial_is_dropped() {
        let config = ReassemblerConfig {
            max_packet_size: 3,
            ..ReassemblerConfig::default()
        };
        let mut r = Reassembler::new(config);
        r.receive(0, &lp(0, 0, 2, b"ab"));
        assert_eq!(r.receive(0, &lp(1, 1, 2, b"cd")), None);
        assert!(r.is_empty());
        assert_eq!(r.counters().too_large, 1);
    }

    #[test]
    fn plan_fits_mtu() {
        for mtu in [30usize, 31, 64, 1400, 9000] {
            for total in [1usize, 2, 100, 1399, 1400, 8800, 70_000] {
                let Some((count, per)) = plan(total, mtu) else {
                    assert!(mtu < 40, "mtu {mtu}");
                    continue;
                };
                assert!(count * per >= total);
                assert!(overhead(count, mtu) + per <= mtu);
            }
        }
        assert_eq!(plan(10, 10), None);
    }
}
