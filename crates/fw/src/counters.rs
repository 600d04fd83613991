//! Counters: per face, per table and for the whole forwarder. Dropping a packet is counted
//! here, never returned as an error (style rule 5); per-packet tracing is left out of the core.

use core::fmt;

/// Why a packet was dropped. Every drop is counted on the face involved (the ingress face, or
/// the egress face for the outgoing pipelines) and in the forwarder's totals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum DropReason {
    /// Undecodable bytes: a bad TLV, an unknown top-level type, a bad LpPacket header, a
    /// Nack whose fragment is not an Interest, ...
    Malformed,
    /// An LpPacket that is one fragment of a larger packet (the face layer reassembles).
    Fragmented,
    /// A packet handed in for a face that is not (or no longer) in the face table.
    UnknownFace,
    /// A `/localhost` packet from, or toward, a non-local face.
    LocalhostViolation,
    /// HopLimit was 0 on arrival, or reached 0 before a non-local egress.
    HopLimitExpired,
    /// An Interest whose Nonce was seen before for its name (PIT or dead-nonce list): a loop.
    DuplicateNonce,
    /// An Interest with no eligible next hop.
    NoRoute,
    /// An Interest that needed a new PIT entry while the PIT was full.
    PitFull,
    /// An Interest that needed a new PIT entry while its face held its fair share of a PIT
    /// under pressure (at least half full): the face with the most entries pays, not the others.
    FaceQuota,
    /// An Interest over its face's rate limit (a token bucket, off unless set).
    RateLimit,
    /// A Data that matched no pending Interest.
    Unsolicited,
    /// A Nack that matched no PIT entry, no out-record, or not the Nonce last sent.
    NackUnsolicited,
    /// A Nack received on, or due toward, a face that is not point-to-point.
    NackOnMultiAccess,
    /// An LpPacket still carrying Nameway's LinkSecurity or LinkHandshake header: its face
    /// has no secure session to decrypt it (e.g. this forwarder runs without `[security]`),
    /// so it is dropped rather than delivered as ciphertext.
    Undecrypted,
}

impl DropReason {
    /// Number of reasons.
    pub const COUNT: usize = 14;

    /// Every reason, in declaration order.
    pub const ALL: [DropReason; Self::COUNT] = [
        Self::Malformed,
        Self::Fragmented,
        Self::UnknownFace,
        Self::LocalhostViolation,
        Self::HopLimitExpired,
        Self::DuplicateNonce,
        Self::NoRoute,
        Self::PitFull,
        Self::FaceQuota,
        Self::RateLimit,
        Self::Unsolicited,
        Self::NackUnsolicited,
        Self::NackOnMultiAccess,
        Self::Undecrypted,
    ];

    /// A short kebab-case name, stable for logs and metrics.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Malformed => "malformed",
            Self::Fragmented => "fragmented",
            Self::UnknownFace => "unknown-face",
            Self::LocalhostViolation => "localhost-violation",
            Self::HopLimitExpired => "hop-limit-expired",
            Self::DuplicateNonce => "duplicate-nonce",
            Self::NoRoute => "no-route",
            Self::PitFull => "pit-full",
            Self::FaceQuota => "face-quota",
            Self::RateLimit => "rate-limit",
            Self::Unsolicited => "unsolicited",
            Self::NackUnsolicited => "nack-unsolicited",
            Self::NackOnMultiAccess => "nack-on-multi-access",
            Self::Undecrypted => "undecrypted",
        }
    }

    const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Drop counts, one per [`DropReason`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DropCounters {
    counts: [u64; DropReason::COUNT],
}

impl DropCounters {
    /// Drops for `reason`.
    pub fn get(&self, reason: DropReason) -> u64 {
        self.counts.get(reason.index()).copied().unwrap_or(0)
    }

    /// Drops for every reason.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// `(reason, count)` for every reason, zero counts included.
    pub fn iter(&self) -> impl Iterator<Item = (DropReason, u64)> + '_ {
        DropReason::ALL.iter().map(|&r| (r, self.get(r)))
    }

    /// The reasons that occurred, by their stable names, with their counts.
    pub fn occurred(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.iter()
            .filter(|&(_, n)| n > 0)
            .map(|(r, n)| (r.as_str(), n))
    }

    pub(crate) fn add(&mut self, reason: DropReason) {
        self.add_n(reason, 1);
    }

    pub(crate) fn add_n(&mut self, reason: DropReason, n: u64) {
        if let Some(c) = self.counts.get_mut(reason.index()) {
            *c += n;
        }
    }
}

/// Per-face counters, as in NFD's FaceStatus dataset plus drops by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaceCounters {
    /// Interests received.
    pub n_in_interests: u64,
    /// Data received.
    pub n_in_data: u64,
    /// Nacks received.
    pub n_in_nacks: u64,
    /// Interests sent.
    pub n_out_interests: u64,
    /// Data sent.
    pub n_out_data: u64,
    /// Nacks sent.
    pub n_out_nacks: u64,
    /// Bytes received (whole packets as handed in, LpPacket header included).
    pub n_in_bytes: u64,
    /// Bytes sent (whole packets as handed out).
    pub n_out_bytes: u64,
    /// IDLE LpPackets received (no fragment: keep-alives), ignored.
    pub n_in_idle: u64,
    /// Drops by reason, on this face.
    pub drops: DropCounters,
}

/// Forwarder-wide counters, as NFD's ForwarderCounters / GeneralStatus.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ForwarderCounters {
    /// Interests received on every face.
    pub n_in_interests: u64,
    /// Data received.
    pub n_in_data: u64,
    /// Nacks received.
    pub n_in_nacks: u64,
    /// Interests sent.
    pub n_out_interests: u64,
    /// Data sent.
    pub n_out_data: u64,
    /// Nacks sent.
    pub n_out_nacks: u64,
    /// PIT entries satisfied by Data (from upstream or the content store).
    pub n_satisfied_interests: u64,
    /// PIT entries that expired or were rejected without Data.
    pub n_unsatisfied_interests: u64,
    /// Drops by reason, every face together (packets for unknown faces included).
    pub drops: DropCounters,
}

/// PIT counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PitCounters {
    /// Entries now (pending Interests).
    pub entries: usize,
    /// Entry cap.
    pub capacity: usize,
    /// Entries created.
    pub inserts: u64,
    /// Interests that found an existing pending entry (aggregation or retransmission).
    pub hits: u64,
    /// Data matched against the PIT that found no entry.
    pub data_misses: u64,
}

/// FIB counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FibCounters {
    /// Entries (prefixes with at least one next hop).
    pub entries: usize,
    /// Longest-prefix-match look-ups.
    pub lookups: u64,
    /// Look-ups that matched no entry.
    pub misses: u64,
}

/// Content store counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CsCounters {
    /// Data packets stored now.
    pub entries: usize,
    /// Capacity in packets.
    pub capacity: usize,
    /// Look-ups answered.
    pub hits: u64,
    /// Look-ups not answered.
    pub misses: u64,
    /// Packets admitted (new or refreshed).
    pub inserts: u64,
    /// Packets evicted by the replacement policy.
    pub evictions: u64,
}

/// Dead-nonce list counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DnlCounters {
    /// Records now.
    pub entries: usize,
    /// Record cap.
    pub capacity: usize,
    /// Look-ups that found the (name, nonce) pair: loops caught by the list.
    pub hits: u64,
    /// Records dropped before their lifetime because the list was full, the face adding one
    /// holding at least its share (its own oldest record went).
    pub evicted_own: u64,
    /// Records dropped before their lifetime because the list was full, the face adding one
    /// holding less than its share (the oldest record of the face holding the most went).
    pub evicted_heaviest: u64,
}

/// A snapshot of the whole forwarder, NFD GeneralStatus-like.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ForwarderStatus {
    /// Faces in the face table.
    pub n_faces: usize,
    /// FIB entries.
    pub n_fib_entries: usize,
    /// PIT entries.
    pub n_pit_entries: usize,
    /// Content store entries.
    pub n_cs_entries: usize,
    /// Strategy choice entries (the root included).
    pub n_strategy_choice_entries: usize,
    /// Dead-nonce list records.
    pub n_dead_nonces: usize,
    /// Straggler records: (name, Nonce) of recently satisfied Interests, kept for
    /// `Config::straggler_time`.
    pub n_straggler_nonces: usize,
    /// Packet counters.
    pub counters: ForwarderCounters,
    /// PIT counters.
    pub pit: PitCounters,
    /// FIB counters.
    pub fib: FibCounters,
    /// Content store counters.
    pub cs: CsCounters,
    /// Dead-nonce list counters.
    pub dnl: DnlCounters,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_indexed_in_order() {
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(r.index(), i);
        }
        let mut d = DropCounters::default();
        d.add(DropReason::PitFull);
        d.add(DropReason::PitFull);
        d.add(DropReason::NackOnMultiAccess);
        assert_eq!(d.get(DropReason::PitFull), 2);
        assert_eq!(d.total(), 3);
        assert_eq!(d.iter().filter(|(_, n)| *n > 0).count(), 2);
        assert_eq!(DropReason::HopLimitExpired.to_string(), "hop-limit-expired");
    }
}
