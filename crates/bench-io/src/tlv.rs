//! The packets: NDN TLV framing, and the fixed Interests and Data of the benchmark.
//!
//! Every name is `/bench-io/exchange/<8-byte sequence number>`, so every Interest is
//! [`INTEREST_LEN`] bytes and every Data [`DATA_LEN`]; both are built from the sequence number
//! alone, so each end can check every byte it receives.

use crate::{Error, Result};

/// TLV type of an Interest.
pub const INTEREST: u64 = 0x05;
/// TLV type of a Data.
pub const DATA: u64 = 0x06;
/// Largest packet accepted (NDN's usual limit).
pub const MAX_PACKET: usize = 8800;
/// Bytes in a Data's Content.
pub const PAYLOAD: usize = 100;
/// Bytes of an Interest (about 40, as ndnget's).
pub const INTEREST_LEN: usize = 44;
/// Bytes of a Data (100-B payload, as ndnserve's segments in the P1 benchmark).
pub const DATA_LEN: usize = 151;

/// Reads a TLV variable-length number at the start of `buf`: its value and its size, or
/// `None` when `buf` ends inside it.
fn varint(buf: &[u8]) -> Option<(u64, usize)> {
    let first = *buf.first()?;
    let size = match first {
        0..=252 => return Some((u64::from(first), 1)),
        253 => 2,
        254 => 4,
        255 => 8,
    };
    let bytes = buf.get(1..=size)?;
    let value = bytes.iter().fold(0u64, |v, b| (v << 8) | u64::from(*b));
    Some((value, 1 + size))
}

/// The size of the packet at the start of `buf` (type, length and value) once `buf` holds all
/// of it; `None` while it does not.
///
/// # Errors
/// [`Error::Protocol`] when the type is not `expect` or the length is over [`MAX_PACKET`].
pub fn frame_len(buf: &[u8], expect: u64) -> Result<Option<usize>> {
    let Some((kind, t)) = varint(buf) else {
        return Ok(None);
    };
    if kind != expect {
        return Err(Error::Protocol(format!(
            "type {kind:#x} where {expect:#x} was expected"
        )));
    }
    let Some((len, l)) = buf.get(t..).and_then(varint) else {
        return Ok(None);
    };
    let total = usize::try_from(len)
        .ok()
        .and_then(|len| len.checked_add(t + l))
        .filter(|total| *total <= MAX_PACKET)
        .ok_or_else(|| Error::Protocol(format!("length {len} over {MAX_PACKET}")))?;
    Ok((buf.len() >= total).then_some(total))
}

fn name(out: &mut Vec<u8>, seq: u64) {
    out.extend_from_slice(&[0x07, 30, 0x08, 8]);
    out.extend_from_slice(b"bench-io");
    out.extend_from_slice(&[0x08, 8]);
    out.extend_from_slice(b"exchange");
    out.extend_from_slice(&[0x08, 8]);
    out.extend_from_slice(&seq.to_be_bytes());
}

/// Appends Interest number `seq` to `out`.
pub fn interest(out: &mut Vec<u8>, seq: u64) {
    let start = out.len();
    out.extend_from_slice(&[0x05, (INTEREST_LEN - 2) as u8]);
    name(out, seq);
    // Nonce and InterestLifetime (4 s).
    let nonce = (seq as u32).wrapping_mul(2_654_435_761);
    out.extend_from_slice(&[0x0a, 4]);
    out.extend_from_slice(&nonce.to_be_bytes());
    out.extend_from_slice(&[0x0c, 2, 0x0f, 0xa0]);
    debug_assert_eq!(out.len() - start, INTEREST_LEN);
}

/// Appends Data number `seq` to `out`.
pub fn data(out: &mut Vec<u8>, seq: u64) {
    let start = out.len();
    out.extend_from_slice(&[0x06, (DATA_LEN - 2) as u8]);
    name(out, seq);
    out.extend_from_slice(&[0x15, PAYLOAD as u8]);
    out.extend((0..PAYLOAD).map(|i| (seq as usize).wrapping_mul(31).wrapping_add(i) as u8));
    // SignatureInfo (DigestSha256's type, for the shape) and an 8-byte SignatureValue.
    out.extend_from_slice(&[0x16, 3, 0x1b, 1, 0x00, 0x17, 8]);
    out.extend_from_slice(&seq.to_le_bytes());
    debug_assert_eq!(out.len() - start, DATA_LEN);
}

/// Checks that `got` is exactly Interest (`kind` [`INTEREST`]) or Data (`kind` [`DATA`])
/// number `seq`.
///
/// # Errors
/// [`Error::Protocol`] naming the first byte that differs.
pub fn check(got: &[u8], kind: u64, seq: u64) -> Result<()> {
    let mut want = Vec::with_capacity(DATA_LEN);
    if kind == INTEREST {
        interest(&mut want, seq);
    } else {
        data(&mut want, seq);
    }
    if got == want.as_slice() {
        return Ok(());
    }
    let at = got
        .iter()
        .zip(&want)
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(want.len()));
    Err(Error::Protocol(format!(
        "packet {seq} (type {kind:#x}, {} bytes) differs from the expected {} bytes at byte {at}",
        got.len(),
        want.len()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_have_their_sizes_and_frame() {
        let mut i = Vec::new();
        interest(&mut i, 7);
        assert_eq!(i.len(), INTEREST_LEN);
        assert_eq!(frame_len(&i, INTEREST).unwrap(), Some(INTEREST_LEN));
        let mut d = Vec::new();
        data(&mut d, u64::MAX);
        assert_eq!(d.len(), DATA_LEN);
        assert_eq!(frame_len(&d, DATA).unwrap(), Some(DATA_LEN));
        for cut in 0..DATA_LEN {
            assert_eq!(frame_len(&d[..cut], DATA).unwrap(), None, "cut at {cut}");
        }
        assert!(frame_len(&d, INTEREST).is_err());
    }

    #[test]
    fn long_lengths_and_limits() {
        // Type 6, length 300 in the 3-byte form.
        let mut p = vec![0x06, 253, 0x01, 0x2c];
        p.resize(4 + 300, 0);
        assert_eq!(frame_len(&p, DATA).unwrap(), Some(304));
        assert_eq!(frame_len(&p[..303], DATA).unwrap(), None);
        let huge = [0x06, 254, 0, 1, 0, 0];
        assert!(frame_len(&huge, DATA).is_err());
    }

    #[test]
    fn check_finds_a_changed_byte() {
        let mut d = Vec::new();
        data(&mut d, 3);
        check(&d, DATA, 3).unwrap();
        assert!(check(&d, DATA, 4).is_err());
        d[100] ^= 1;
        let e = check(&d, DATA, 3).unwrap_err().to_string();
        assert!(e.contains("at byte 100"), "{e}");
    }
}
