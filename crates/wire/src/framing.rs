//! Stream framing, sans I/O: cutting back-to-back TLVs out of a Unix or TCP byte stream.
//!
//! Bytes are read into one [`BytesMut`]; each whole packet is cut off the front with
//! `split_to(n).freeze()`, so packets share the read buffer instead of being copied. The
//! TLV-TYPE and TLV-LENGTH VAR-NUMBERs are parsed as soon as their bytes are there, so a bad
//! stream is detected without waiting for 8800 bytes as NFD's `StreamTransport` does.
//!
//! Any of these ends the face (the caller closes it with [`FramingError`] as the reason):
//! - a TLV whose whole encoding (TYPE, LENGTH and VALUE) exceeds 8800 bytes (ndn-cxx
//!   `MAX_NDN_PACKET_SIZE`; NFD marks the transport FAILED, `stream-transport.hpp`);
//! - a TYPE or LENGTH that is not a VAR-NUMBER in its shortest form, or a TYPE of 0 or above
//!   2^32 - 1 (the codec's rule, [`tlv::read_var_number`]);
//! - a top-level TYPE other than Interest (0x05), Data (0x06) or LpPacket (0x64).
//!
//! On a byte stream a bad TLV leaves no way to find the next packet, so the face cannot
//! simply drop it and go on.

use bytes::{Bytes, BytesMut};

use crate::tlv::{self, types};
use crate::ErrorKind;

/// Spare room kept in the read buffer before each read.
const READ_CHUNK: usize = 16 * 1024;
/// Below this much spare room the buffer grows by [`READ_CHUNK`].
const MIN_SPARE: usize = 4 * 1024;

/// Why a stream stopped making sense; the face is closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FramingError {
    /// A TLV longer than the limit (8800 bytes).
    #[error("TLV of {len} bytes exceeds the 8800-byte limit")]
    TooLarge {
        /// The whole TLV's encoded length, as announced by its header.
        len: u64,
    },
    /// A TLV-TYPE or TLV-LENGTH that is not a valid shortest-form VAR-NUMBER.
    #[error("malformed TLV-TYPE or TLV-LENGTH")]
    Malformed,
    /// A top-level TLV-TYPE other than 0x05, 0x06, 0x64.
    #[error("unexpected top-level TLV-TYPE {typ:#x}")]
    UnknownType {
        /// The TLV-TYPE found.
        typ: u64,
    },
}

/// Incremental TLV framer over a byte stream.
#[derive(Debug)]
pub struct StreamFramer {
    buf: BytesMut,
    max_packet: usize,
    /// How much the read buffer grows by when it runs short.
    chunk: usize,
}

impl Default for StreamFramer {
    fn default() -> Self {
        Self::new(tlv::MAX_PACKET_SIZE)
    }
}

impl StreamFramer {
    /// A framer that refuses TLVs longer than `max_packet` bytes (8800 by default).
    pub fn new(max_packet: usize) -> Self {
        Self {
            // No memory until the first read: an idle connection holds no buffer.
            buf: BytesMut::new(),
            max_packet,
            chunk: READ_CHUNK,
        }
    }

    /// Grows the read buffer by `chunk` bytes at a time instead of 16 KiB.
    #[must_use]
    pub fn with_read_chunk(mut self, chunk: usize) -> Self {
        self.chunk = chunk.max(MIN_SPARE);
        self
    }

    /// The buffer to read into: bytes appended here are framed by [`StreamFramer::next_packet`].
    /// Room for at least 4 KiB more is reserved first.
    pub fn read_buffer(&mut self) -> &mut BytesMut {
        if self.buf.capacity() - self.buf.len() < MIN_SPARE {
            self.buf.reserve(self.chunk);
        }
        &mut self.buf
    }

    /// Takes the read buffer out when it holds no partial packet, so an idle connection
    /// holds none (the caller may keep it for another connection); the next
    /// [`StreamFramer::read_buffer`] takes a new one, or the one given by
    /// [`StreamFramer::install`]. `None` while bytes are buffered or when there is no buffer.
    pub fn release_idle(&mut self) -> Option<BytesMut> {
        if !self.buf.is_empty() || self.buf.capacity() == 0 {
            return None;
        }
        Some(std::mem::take(&mut self.buf))
    }

    /// Gives an empty framer a buffer to read into (one released by another framer), instead
    /// of allocating one; ignored when the framer has a buffer already.
    pub fn install(&mut self, mut buf: BytesMut) {
        if self.buf.capacity() == 0 && self.buf.is_empty() {
            buf.clear();
            self.buf = buf;
        }
    }

    /// Whether the framer holds a read buffer (memory) now.
    pub fn has_buffer(&self) -> bool {
        self.buf.capacity() > 0
    }

    /// Appends received bytes (a copy; the I/O path reads into [`StreamFramer::read_buffer`]).
    pub fn extend(&mut self, data: &[u8]) {
        self.buf.extend_from_slice(data);
    }

    /// Bytes received but not yet returned as a packet.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The next whole packet, if all its bytes have arrived.
    ///
    /// # Errors
    /// A [`FramingError`]; the stream is then unusable and the face must be closed.
    pub fn next_packet(&mut self) -> Result<Option<Bytes>, FramingError> {
        let Some(len) = self.peek_len()? else {
            return Ok(None);
        };
        if self.buf.len() < len {
            return Ok(None);
        }
        let packet = self.buf.split_to(len);
        // An Interest lives for its lifetime at most and stays a zero-copy slice of the read
        // buffer. A Data (bare or in an LpPacket) may be cached for a long time: copy it, so a
        // cached packet never keeps a whole 16 KiB read chunk alive.
        if packet.first() == Some(&0x05) {
            Ok(Some(packet.freeze()))
        } else {
            Ok(Some(Bytes::copy_from_slice(&packet)))
        }
    }

    /// The length of the TLV at the front, once its header is complete.
    fn peek_len(&self) -> Result<Option<usize>, FramingError> {
        let Some((typ, tn)) = var_number(&self.buf)? else {
            return Ok(None);
        };
        if !matches!(typ, 0x05 | 0x06 | 0x64) {
            return Err(FramingError::UnknownType { typ });
        }
        debug_assert!([types::INTEREST, types::DATA, types::LP_PACKET].contains(&(typ as u32)));
        let rest = self.buf.get(tn..).unwrap_or_default();
        let Some((value_len, ln)) = var_number(rest)? else {
            return Ok(None);
        };
        let total = value_len.saturating_add((tn + ln) as u64);
        if total > self.max_packet as u64 {
            return Err(FramingError::TooLarge { len: total });
        }
        // total <= max_packet, which is a usize.
        Ok(Some(total as usize))
    }
}

/// A VAR-NUMBER at the front of `buf`: `None` while incomplete.
fn var_number(buf: &[u8]) -> Result<Option<(u64, usize)>, FramingError> {
    match tlv::read_var_number(buf) {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.kind == ErrorKind::Truncated => Ok(None),
        Err(_) => Err(FramingError::Malformed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The read buffer grows by the chosen step once less than 4 KiB is left.
    #[test]
    fn read_buffer_grows_by_the_chosen_chunk() {
        for (chunk, want) in [(None, READ_CHUNK), (Some(64 * 1024), 64 * 1024)] {
            let mut f = StreamFramer::default();
            if let Some(c) = chunk {
                f = f.with_read_chunk(c);
            }
            let fill = f.read_buffer().capacity() - MIN_SPARE + 1;
            f.extend(&vec![0; fill]);
            let b = f.read_buffer();
            assert!(
                b.capacity() - b.len() >= want,
                "{chunk:?}: {}",
                b.capacity() - b.len()
            );
        }
    }

    /// An idle framer holds no buffer; one holding part of a packet keeps it.
    #[test]
    fn an_idle_framer_gives_its_buffer_back_and_a_partial_packet_is_kept() {
        let mut f = StreamFramer::default();
        assert!(f.read_buffer().capacity() >= READ_CHUNK);
        let interest = [0x05, 0x05, 0x07, 0x03, 0x08, 0x01, 0x61];
        f.read_buffer().extend_from_slice(&interest[..4]);
        assert!(f.release_idle().is_none(), "a partial packet must stay");
        assert_eq!(f.buffered(), 4);
        f.extend(&interest[4..]);
        assert_eq!(f.next_packet().unwrap().unwrap().as_ref(), &interest);
        let given = f.release_idle().expect("an empty buffer is given back");
        assert!(given.capacity() > 0);
        assert!(f.release_idle().is_none(), "nothing left to give back");
        // Reading goes on as before after a release, in a new buffer or an installed one.
        f.read_buffer().extend_from_slice(&interest);
        assert_eq!(f.next_packet().unwrap().unwrap().as_ref(), &interest);
        let mut g = StreamFramer::default();
        g.install(given);
        assert!(g.read_buffer().capacity() > 0);
        g.read_buffer().extend_from_slice(&interest[..2]);
        g.install(BytesMut::with_capacity(64));
        assert_eq!(g.buffered(), 2, "install never replaces a buffer in use");
    }

    #[test]
    fn data_is_copied_out_of_the_read_buffer_and_interests_are_not() {
        let mut f = StreamFramer::default();
        let interest = [0x05, 0x05, 0x07, 0x03, 0x08, 0x01, 0x61];
        let data = [
            0x06, 0x0a, 0x07, 0x03, 0x08, 0x01, 0x61, 0x16, 0x03, 0x1b, 0x01, 0x00,
        ];
        let buf = f.read_buffer();
        buf.extend_from_slice(&interest);
        buf.extend_from_slice(&data);
        let chunk = buf.as_ptr() as usize..buf.as_ptr() as usize + buf.capacity();
        let i = f.next_packet().unwrap().unwrap();
        let d = f.next_packet().unwrap().unwrap();
        assert_eq!((&i[..], &d[..]), (&interest[..], &data[..]));
        assert!(
            chunk.contains(&(i.as_ptr() as usize)),
            "Interest was copied"
        );
        assert!(
            !chunk.contains(&(d.as_ptr() as usize)),
            "Data points into the read buffer"
        );
    }

    fn framer(bytes: &[u8]) -> StreamFramer {
        let mut f = StreamFramer::default();
        f.extend(bytes);
        f
    }

    #[test]
    fn byte_by_byte_and_back_to_back() {
        let stream = [0x05, 0x03, 0x07, 0x01, 0x00, 0x64, 0x00, 0x06, 0x00];
        let mut f = StreamFramer::default();
        let mut out = Vec::new();
        for b in stream {
            f.extend(&[b]);
            while let Some(p) = f.next_packet().unwrap() {
                out.push(p);
            }
        }
        assert_eq!(out, [&stream[..5], &stream[5..7], &stream[7..]]);
        assert_eq!(f.buffered(), 0);
    }

    #[test]
    fn shares_the_read_buffer() {
        let mut f = framer(&[0x05, 0x01, 0xaa, 0x05, 0x01, 0xbb]);
        let a = f.next_packet().unwrap().unwrap();
        let b = f.next_packet().unwrap().unwrap();
        assert_eq!(b.as_ptr() as usize, a.as_ptr() as usize + 3);
    }

    #[test]
    fn three_byte_length() {
        let mut wire = vec![0x06, 0xfd, 0x01, 0x00];
        wire.resize(4 + 256, 0xee);
        let mut f = framer(&wire[..100]);
        assert_eq!(f.next_packet().unwrap(), None);
        f.extend(&wire[100..]);
        assert_eq!(f.next_packet().unwrap().unwrap().len(), 260);
    }

    #[test]
    fn size_limit_is_inclusive() {
        // 8800 bytes in all: 1 (type) + 3 (length) + 8796.
        assert_eq!(
            framer(&[0x06, 0xfd, 0x22, 0x5c]).peek_len().unwrap(),
            Some(8800)
        );
        let err = framer(&[0x06, 0xfd, 0x22, 0x5d]).next_packet().unwrap_err();
        assert_eq!(err, FramingError::TooLarge { len: 8801 });
        let err = framer(&[0x05, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
            .next_packet()
            .unwrap_err();
        assert!(matches!(err, FramingError::TooLarge { .. }));
    }

    #[test]
    fn bad_streams() {
        let cases: &[(&[u8], FramingError)] = &[
            (&[0x08, 0x00], FramingError::UnknownType { typ: 8 }),
            (&[0x00], FramingError::UnknownType { typ: 0 }),
            (
                b"GET / HTTP/1.1\r\n",
                FramingError::UnknownType { typ: b'G'.into() },
            ),
            (&[0xfd, 0x00, 0x05], FramingError::Malformed), // non-minimal TYPE
            (&[0x05, 0xfd, 0x00, 0x10], FramingError::Malformed), // non-minimal LENGTH
        ];
        for (bytes, err) in cases {
            assert_eq!(
                framer(bytes).next_packet().unwrap_err(),
                *err,
                "{bytes:02x?}"
            );
        }
    }

    #[test]
    fn incomplete_header_waits() {
        assert_eq!(framer(&[]).next_packet().unwrap(), None);
        assert_eq!(framer(&[0x05]).next_packet().unwrap(), None);
        assert_eq!(framer(&[0x05, 0xfd, 0x01]).next_packet().unwrap(), None);
        assert_eq!(framer(&[0x05, 0x02, 0x07]).next_packet().unwrap(), None);
    }
}
