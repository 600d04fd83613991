//! The classic pcap file format (libpcap's, link type Ethernet), written by `nameway capture -w`
//! and read by `nameway dissect --pcap`.
//!
//! Written here rather than taken from a crate: the format is a 24-byte file header and a
//! 16-byte header per record, and the well-known crate for it (`pcap-file` 2) would add a second
//! version of `thiserror` and of `syn` to the build. tcpdump reading our files is part of the
//! tests (crates/cli/tests/daemon_cli.rs).

use std::io::{self, Write};
use std::time::Duration;

/// Microsecond-resolution pcap, as written in the host's byte order.
const MAGIC_US: u32 = 0xa1b2_c3d4;
/// Nanosecond-resolution pcap.
const MAGIC_NS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_ETHERNET.
const LINKTYPE_ETHERNET: u32 = 1;
/// Longest frame kept.
const SNAPLEN: u32 = 65_535;

/// Writes a pcap file: the header at creation, then one record per frame.
pub(crate) struct Writer<W: Write> {
    out: W,
}

impl<W: Write> Writer<W> {
    /// Writes the file header (version 2.4, microseconds, Ethernet).
    ///
    /// # Errors
    /// The write failed.
    pub(crate) fn new(mut out: W) -> io::Result<Self> {
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&MAGIC_US.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        h.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        h.extend_from_slice(&SNAPLEN.to_le_bytes());
        h.extend_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        out.write_all(&h)?;
        Ok(Self { out })
    }

    /// Appends one frame captured at `ts` (since the Unix epoch).
    ///
    /// # Errors
    /// The write failed.
    pub(crate) fn write(&mut self, ts: Duration, frame: &[u8]) -> io::Result<()> {
        let len = u32::try_from(frame.len()).unwrap_or(u32::MAX);
        let kept = len.min(SNAPLEN);
        let mut h = Vec::with_capacity(16);
        h.extend_from_slice(&(ts.as_secs() as u32).to_le_bytes());
        h.extend_from_slice(&ts.subsec_micros().to_le_bytes());
        h.extend_from_slice(&kept.to_le_bytes());
        h.extend_from_slice(&len.to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(&frame[..kept as usize])
    }

    /// Flushes and returns the writer.
    ///
    /// # Errors
    /// The flush failed.
    pub(crate) fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// One record read back.
pub(crate) struct Record<'a> {
    /// Capture time since the Unix epoch.
    pub(crate) ts: Duration,
    /// The frame as captured.
    pub(crate) data: &'a [u8],
}

/// Why a file is not a readable pcap.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PcapError {
    /// Not the pcap magic number in either byte order (pcapng is not read).
    #[error("not a pcap file (pcapng is not supported: convert it with `editcap -F pcap`)")]
    NotPcap,
    /// A record header or its data runs past the end of the file.
    #[error("truncated pcap record at byte {0}")]
    Truncated(usize),
}

/// Reads every record of a classic pcap file, either byte order, microseconds or nanoseconds.
///
/// # Errors
/// [`PcapError`].
pub(crate) fn read(file: &[u8]) -> Result<Vec<Record<'_>>, PcapError> {
    let word = |at: usize, big: bool| -> Option<u32> {
        let b: [u8; 4] = file.get(at..at + 4)?.try_into().ok()?;
        Some(if big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    };
    let (big, nanos) = match (word(0, false), word(0, true)) {
        (Some(MAGIC_US), _) => (false, false),
        (Some(MAGIC_NS), _) => (false, true),
        (_, Some(MAGIC_US)) => (true, false),
        (_, Some(MAGIC_NS)) => (true, true),
        _ => return Err(PcapError::NotPcap),
    };
    if file.len() < 24 {
        return Err(PcapError::NotPcap);
    }
    let mut at = 24;
    let mut records = Vec::new();
    while at < file.len() {
        let (Some(sec), Some(frac), Some(incl)) =
            (word(at, big), word(at + 4, big), word(at + 8, big))
        else {
            return Err(PcapError::Truncated(at));
        };
        let start = at + 16;
        let end = start + incl as usize;
        let data = file.get(start..end).ok_or(PcapError::Truncated(at))?;
        let frac = if nanos {
            Duration::from_nanos(u64::from(frac))
        } else {
            Duration::from_micros(u64::from(frac))
        };
        records.push(Record {
            ts: Duration::from_secs(u64::from(sec)) + frac,
            data,
        });
        at = end;
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_reads_back() {
        let mut w = Writer::new(Vec::new()).unwrap();
        w.write(Duration::new(1_700_000_000, 123_456_000), b"frame one")
            .unwrap();
        w.write(Duration::new(1_700_000_001, 0), &[7; 100]).unwrap();
        let file = w.finish().unwrap();
        assert_eq!(&file[..4], &MAGIC_US.to_le_bytes());
        let r = read(&file).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].data, b"frame one");
        assert_eq!(r[0].ts, Duration::new(1_700_000_000, 123_456_000));
        assert_eq!(r[1].data, &[7; 100][..]);
        assert!(matches!(read(&file[..30]), Err(PcapError::Truncated(24))));
        assert!(matches!(
            read(b"\x0a\x0d\x0d\x0a pcapng"),
            Err(PcapError::NotPcap)
        ));
    }

    #[test]
    fn big_endian_nanosecond_files_are_read() {
        let mut f = Vec::new();
        f.extend_from_slice(&MAGIC_NS.to_be_bytes());
        f.extend_from_slice(&[
            0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 1,
        ]);
        f.extend_from_slice(&5u32.to_be_bytes());
        f.extend_from_slice(&7u32.to_be_bytes());
        f.extend_from_slice(&2u32.to_be_bytes());
        f.extend_from_slice(&2u32.to_be_bytes());
        f.extend_from_slice(b"ab");
        let r = read(&f).unwrap();
        assert_eq!(r[0].ts, Duration::new(5, 7));
        assert_eq!(r[0].data, b"ab");
    }
}
