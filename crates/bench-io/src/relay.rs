//! What both engines share: finding packets in the bytes read, queueing them for the other
//! side, and the relay's counters.

use crate::tlv;
use crate::Result;

/// Index of the consumer's connection (it sends Interests).
pub const CONSUMER: usize = 0;
/// Index of the producer's connection (it sends Data).
pub const PRODUCER: usize = 1;

/// Most iovecs given to one `writev` (Linux's `IOV_MAX`).
pub const MAX_IOV: usize = 1024;

/// The TLV type that side `side` sends.
pub fn sends(side: usize) -> u64 {
    if side == CONSUMER {
        tlv::INTEREST
    } else {
        tlv::DATA
    }
}

/// Packets waiting to be written to one socket, and how much of them went already.
#[derive(Debug, Default)]
pub struct OutQueue {
    buf: Vec<u8>,
    /// Where each packet ends in `buf`.
    ends: Vec<usize>,
    /// Bytes of `buf` already written.
    sent: usize,
}

impl OutQueue {
    /// Queues one packet.
    pub fn push(&mut self, packet: &[u8]) {
        self.buf.extend_from_slice(packet);
        self.ends.push(self.buf.len());
    }

    /// Whether nothing is left to write.
    pub fn is_empty(&self) -> bool {
        self.sent == self.buf.len()
    }

    /// Replaces `iov` with one iovec per packet (the first one cut to what is left of it),
    /// at most [`MAX_IOV`]. The pointers stay valid until the queue is next changed.
    pub fn iovecs(&self, iov: &mut Vec<libc::iovec>) {
        iov.clear();
        let first = self.ends.partition_point(|end| *end <= self.sent);
        let mut start = self.sent;
        for end in self.ends[first..].iter().take(MAX_IOV) {
            let chunk = &self.buf[start..*end];
            iov.push(libc::iovec {
                iov_base: chunk.as_ptr() as *mut libc::c_void,
                iov_len: chunk.len(),
            });
            start = *end;
        }
    }

    /// Records that `n` more bytes were written; empties the queue when all were.
    pub fn advance(&mut self, n: usize) {
        self.sent = (self.sent + n).min(self.buf.len());
        if self.sent == self.buf.len() {
            self.buf.clear();
            self.ends.clear();
            self.sent = 0;
        }
    }

    /// Bytes left to write.
    pub fn pending(&self) -> usize {
        self.buf.len() - self.sent
    }
}

/// Finds the packets in one connection's byte stream, keeping a packet cut by a read for the
/// next one.
#[derive(Debug)]
pub struct Framer {
    kind: u64,
    partial: Vec<u8>,
}

impl Framer {
    /// A framer for packets of TLV type `kind`.
    pub fn new(kind: u64) -> Self {
        Framer {
            kind,
            partial: Vec::new(),
        }
    }

    /// Queues every complete packet of `partial + data` on `out`; returns how many.
    ///
    /// # Errors
    /// [`crate::Error::Protocol`] for a packet of the wrong type or too long.
    pub fn feed(&mut self, data: &[u8], out: &mut OutQueue) -> Result<u64> {
        if self.partial.is_empty() {
            let (packets, used) = Self::split(data, self.kind, out)?;
            self.partial.extend_from_slice(&data[used..]);
            return Ok(packets);
        }
        self.partial.extend_from_slice(data);
        let (packets, used) = Self::split(&self.partial, self.kind, out)?;
        self.partial.drain(..used);
        Ok(packets)
    }

    fn split(mut data: &[u8], kind: u64, out: &mut OutQueue) -> Result<(u64, usize)> {
        let (mut packets, mut used) = (0, 0);
        while let Some(len) = tlv::frame_len(data, kind)? {
            out.push(&data[..len]);
            data = &data[len..];
            packets += 1;
            used += len;
        }
        Ok((packets, used))
    }
}

/// The relay's counters for one run.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// Data delivered to the consumer.
    pub exchanges: u64,
    /// Interests delivered to the producer.
    pub interests: u64,
    /// Bytes read from the consumer and from the producer.
    pub bytes_in: [u64; 2],
    /// Every system call the relay made while relaying.
    pub syscalls: u64,
    /// `epoll_wait` calls (epoll) or `io_uring_enter` calls (io_uring).
    pub waits: u64,
    /// `read` calls (epoll) or receive completions (io_uring).
    pub reads: u64,
    /// `writev` calls (epoll) or writev completions (io_uring).
    pub writes: u64,
}
