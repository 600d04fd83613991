//! Per-face and face-system counters. Drops are counted by reason, never returned as errors.
//!
//! Counters are relaxed atomics bumped by the I/O tasks; [`FaceCounters`] and
//! [`SystemCounters`] are plain snapshots.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::event::DownReason;
use crate::framing::FramingError;

/// A snapshot of one face's counters.
///
/// "Link packets" are what crosses the socket: one datagram, or one TLV on a stream. "Network
/// packets" are what the forwarder sees: whole Interests, Data, or single-fragment LpPackets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FaceCounters {
    /// Link packets received.
    pub in_packets: u64,
    /// Bytes received in link packets.
    pub in_bytes: u64,
    /// Link packets sent (fragments count one each).
    pub out_packets: u64,
    /// Bytes sent in link packets.
    pub out_bytes: u64,
    /// Network packets handed to the forwarder.
    pub in_network: u64,
    /// Network packets taken from the forwarder for sending.
    pub out_network: u64,
    /// IDLE LpPackets (no Fragment, e.g. NDNts' keep-alive `64 00`) received and consumed.
    pub in_idle: u64,
    /// Network packets rebuilt from two or more fragments.
    pub in_reassembled: u64,
    /// Network packets split into fragments for sending.
    pub out_fragmented: u64,
    /// Received packets dropped as malformed (bad TLV, bad LpPacket, unexpected top-level type).
    pub drop_malformed: u64,
    /// Received packets dropped (or streams closed) for exceeding 8800 bytes.
    pub drop_too_large: u64,
    /// Outgoing packets dropped because the face's send queue was full.
    pub drop_queue_full: u64,
    /// Received packets dropped because the forwarder's event queue was full (UDP only; stream
    /// faces wait instead).
    pub drop_rx_backlog: u64,
    /// Fragments dropped by reassembly (bad index, mismatch, duplicate, timeout, eviction,
    /// reassembly disabled on this face).
    pub drop_reassembly: u64,
    /// Outgoing packets that could not be fragmented to the MTU.
    pub drop_mtu: u64,
    /// Link packets the socket refused.
    pub drop_send_error: u64,
    /// Outgoing packets dropped while a permanent face was reconnecting.
    pub drop_link_down: u64,
    /// Outgoing packets dropped by the fault injector (tests and the debug option): random
    /// loss.
    pub drop_fault: u64,
    /// Outgoing packets dropped by the fault injector because its emulated link buffer was
    /// full (congestion on the emulated bottleneck).
    pub drop_fault_queue: u64,
}

/// Relaxed atomic counters behind [`FaceCounters`].
#[derive(Debug, Default)]
pub(crate) struct AtomicCounters {
    pub(crate) in_packets: AtomicU64,
    pub(crate) in_bytes: AtomicU64,
    pub(crate) out_packets: AtomicU64,
    pub(crate) out_bytes: AtomicU64,
    pub(crate) in_network: AtomicU64,
    pub(crate) out_network: AtomicU64,
    pub(crate) in_idle: AtomicU64,
    pub(crate) in_reassembled: AtomicU64,
    pub(crate) out_fragmented: AtomicU64,
    pub(crate) drop_malformed: AtomicU64,
    pub(crate) drop_too_large: AtomicU64,
    pub(crate) drop_queue_full: AtomicU64,
    pub(crate) drop_rx_backlog: AtomicU64,
    pub(crate) drop_reassembly: AtomicU64,
    pub(crate) drop_mtu: AtomicU64,
    pub(crate) drop_send_error: AtomicU64,
    pub(crate) drop_link_down: AtomicU64,
    pub(crate) drop_fault: AtomicU64,
    pub(crate) drop_fault_queue: AtomicU64,
}

/// Adds `n` to a counter.
#[inline]
pub(crate) fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

/// Adds one to a counter.
#[inline]
pub(crate) fn bump(c: &AtomicU64) {
    add(c, 1);
}

impl AtomicCounters {
    pub(crate) fn snapshot(&self) -> FaceCounters {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        FaceCounters {
            in_packets: g(&self.in_packets),
            in_bytes: g(&self.in_bytes),
            out_packets: g(&self.out_packets),
            out_bytes: g(&self.out_bytes),
            in_network: g(&self.in_network),
            out_network: g(&self.out_network),
            in_idle: g(&self.in_idle),
            in_reassembled: g(&self.in_reassembled),
            out_fragmented: g(&self.out_fragmented),
            drop_malformed: g(&self.drop_malformed),
            drop_too_large: g(&self.drop_too_large),
            drop_queue_full: g(&self.drop_queue_full),
            drop_rx_backlog: g(&self.drop_rx_backlog),
            drop_reassembly: g(&self.drop_reassembly),
            drop_mtu: g(&self.drop_mtu),
            drop_send_error: g(&self.drop_send_error),
            drop_link_down: g(&self.drop_link_down),
            drop_fault: g(&self.drop_fault),
            drop_fault_queue: g(&self.drop_fault_queue),
        }
    }

    /// Adds a snapshot's counts: a closed face's, to the totals of the faces that closed.
    pub(crate) fn absorb(&self, c: &FaceCounters) {
        add(&self.in_packets, c.in_packets);
        add(&self.in_bytes, c.in_bytes);
        add(&self.out_packets, c.out_packets);
        add(&self.out_bytes, c.out_bytes);
        add(&self.in_network, c.in_network);
        add(&self.out_network, c.out_network);
        add(&self.in_idle, c.in_idle);
        add(&self.in_reassembled, c.in_reassembled);
        add(&self.out_fragmented, c.out_fragmented);
        add(&self.drop_malformed, c.drop_malformed);
        add(&self.drop_too_large, c.drop_too_large);
        add(&self.drop_queue_full, c.drop_queue_full);
        add(&self.drop_rx_backlog, c.drop_rx_backlog);
        add(&self.drop_reassembly, c.drop_reassembly);
        add(&self.drop_mtu, c.drop_mtu);
        add(&self.drop_send_error, c.drop_send_error);
        add(&self.drop_link_down, c.drop_link_down);
        add(&self.drop_fault, c.drop_fault);
        add(&self.drop_fault_queue, c.drop_fault_queue);
    }

    /// Counts one received link packet of `len` bytes.
    #[inline]
    pub(crate) fn received(&self, len: usize) {
        bump(&self.in_packets);
        add(&self.in_bytes, len as u64);
    }

    /// Counts one sent link packet of `len` bytes.
    #[inline]
    pub(crate) fn sent(&self, len: usize) {
        bump(&self.out_packets);
        add(&self.out_bytes, len as u64);
    }
}

/// A snapshot of the face system's own counters: faces opened and closed, and why.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SystemCounters {
    /// Faces created (accepted, on-demand or by management).
    pub faces_created: u64,
    /// Faces closed, for any reason.
    pub faces_closed: u64,
    /// Closed because the peer closed the connection.
    pub closed_peer: u64,
    /// Closed by [`crate::FaceSystem::destroy`].
    pub closed_destroyed: u64,
    /// On-demand UDP faces closed after the idle timeout.
    pub closed_idle: u64,
    /// Stream faces closed because a TLV was longer than 8800 bytes.
    pub closed_too_large: u64,
    /// Stream faces closed because a TLV-TYPE or TLV-LENGTH was not a valid VAR-NUMBER.
    pub closed_malformed: u64,
    /// Stream faces closed because a top-level TLV-TYPE was not 0x05, 0x06 or 0x64.
    pub closed_unknown_type: u64,
    /// Faces closed on a socket error.
    pub closed_io: u64,
    /// Faces closed by [`crate::FaceSystem::shutdown`].
    pub closed_shutdown: u64,
    /// Datagrams from unknown peers on a socket that does not create on-demand faces.
    pub udp_unknown_peer: u64,
    /// Errors accepting connections on a listener (the listener keeps going).
    pub accept_errors: u64,
    /// Reconnections made by permanent TCP faces.
    pub reconnects: u64,
    /// Accepted connections placed on the shard their first packet belongs to
    /// ([`crate::FaceSystem::set_placement`]).
    pub placed_by_traffic: u64,
    /// The counters of every face that has closed, summed: with the open faces' counters,
    /// the totals since start (drops by reason do not vanish with the face).
    pub closed_faces: FaceCounters,
}

#[derive(Debug, Default)]
pub(crate) struct AtomicSystemCounters {
    pub(crate) faces_created: AtomicU64,
    pub(crate) faces_closed: AtomicU64,
    pub(crate) closed_peer: AtomicU64,
    pub(crate) closed_destroyed: AtomicU64,
    pub(crate) closed_idle: AtomicU64,
    pub(crate) closed_too_large: AtomicU64,
    pub(crate) closed_malformed: AtomicU64,
    pub(crate) closed_unknown_type: AtomicU64,
    pub(crate) closed_io: AtomicU64,
    pub(crate) closed_shutdown: AtomicU64,
    pub(crate) udp_unknown_peer: AtomicU64,
    pub(crate) accept_errors: AtomicU64,
    pub(crate) reconnects: AtomicU64,
    pub(crate) placed_by_traffic: AtomicU64,
    pub(crate) closed_faces: AtomicCounters,
}

impl AtomicSystemCounters {
    pub(crate) fn snapshot(&self) -> SystemCounters {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        SystemCounters {
            faces_created: g(&self.faces_created),
            faces_closed: g(&self.faces_closed),
            closed_peer: g(&self.closed_peer),
            closed_destroyed: g(&self.closed_destroyed),
            closed_idle: g(&self.closed_idle),
            closed_too_large: g(&self.closed_too_large),
            closed_malformed: g(&self.closed_malformed),
            closed_unknown_type: g(&self.closed_unknown_type),
            closed_io: g(&self.closed_io),
            closed_shutdown: g(&self.closed_shutdown),
            udp_unknown_peer: g(&self.udp_unknown_peer),
            accept_errors: g(&self.accept_errors),
            reconnects: g(&self.reconnects),
            placed_by_traffic: g(&self.placed_by_traffic),
            closed_faces: self.closed_faces.snapshot(),
        }
    }

    /// Counts a closed face under its reason, and adds its counters to the closed faces'.
    pub(crate) fn closed(&self, reason: &DownReason, counters: &FaceCounters) {
        self.closed_faces.absorb(counters);
        bump(&self.faces_closed);
        let c = match reason {
            DownReason::PeerClosed => &self.closed_peer,
            DownReason::Destroyed => &self.closed_destroyed,
            DownReason::IdleTimeout => &self.closed_idle,
            DownReason::Framing(FramingError::TooLarge { .. }) => &self.closed_too_large,
            DownReason::Framing(FramingError::Malformed) => &self.closed_malformed,
            DownReason::Framing(FramingError::UnknownType { .. }) => &self.closed_unknown_type,
            // `FramingError` lives in the codec crate and may grow: a new reason the stream
            // does not make sense is counted as malformed until it gets a counter of its own.
            DownReason::Framing(_) => &self.closed_malformed,
            DownReason::Io(_) => &self.closed_io,
            DownReason::Shutdown => &self.closed_shutdown,
        };
        bump(c);
    }
}
