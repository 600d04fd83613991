//! Manifests: one signed packet that vouches for the next N segments by their implicit
//! digests, so one signature covers N packets.
//!
//! The layout follows the structure of FLIC (the File-Like ICN Collection of the ICN research
//! group, draft-irtf-icnrg-flic): a manifest is a Node holding one HashGroup, whose GroupData
//! says which segment the group starts at and how many payload bytes it covers, and whose
//! Ptrs list SHA-256 digests in segment order. It uses FLIC's segmented naming (the hash
//! pointers name packets `<object>/seg=<StartSegmentId + i>`). Types are scoped to their
//! container as in FLIC. Two choices are ours, documented in docs/transport.md:
//! - Ptrs is one element holding the 32-byte digests back to back (no TLV header per digest),
//!   so that 256 pointers fit in one 8800-byte packet (with a header each they would not);
//! - manifests form a flat sequence, each one signed, rather than a tree signed only at its
//!   root: a consumer verifies any manifest as soon as it arrives, without first fetching the
//!   path from the root, at the cost of one signature per N segments instead of one in all.
//!
//! The manifest covering segments `k*N .. k*N+N-1` is the Data
//! `<object>/32=manifest/seg=k`; its FinalBlockId names the last manifest.

use bytes::{Bytes, BytesMut};
use nameway_wire::tlv::{self, Reader};

/// SHA-256 digest length: the size of one pointer.
pub const DIGEST_LEN: usize = 32;
/// Most pointers one manifest may hold (256 fit in an 8800-byte packet with the name,
/// SignatureInfo and an RSA-2048 signature).
pub const MAX_POINTERS: usize = 256;

/// The implicit digests (SHA-256 of each whole packet) of many packets at once.
///
/// One SHA-256 is a serial chain of rounds, so one message at a time leaves the hardware
/// waiting on each round's result; independent messages hashed side by side do not
/// (`tape-sha256`: 16 messages across the lanes of AVX-512, or a few interleaved on SHA-NI).
/// On this project's benchmark host (a Xeon with SHA-NI and AVX-512), 8100-byte packets:
/// `sha2` one at a time 1.43 GB/s, four at a time 1.7, sixteen or more 2.8. The result is
/// SHA-256, byte for byte: the tests check it against RustCrypto's `sha2` at every length a
/// packet can have.
pub fn implicit_digests(packets: &[&[u8]]) -> Vec<[u8; DIGEST_LEN]> {
    let mut out = vec![[0; DIGEST_LEN]; packets.len()];
    tape_sha256::hash_many(packets, &mut out);
    out
}

/// TLV-TYPEs, scoped to their container as in FLIC.
mod types {
    /// Content: the Node.
    pub(super) const NODE: u32 = 0x02;
    /// In Node.
    pub(super) const HASH_GROUP: u32 = 0x02;
    /// In HashGroup.
    pub(super) const GROUP_DATA: u32 = 0x01;
    /// In HashGroup.
    pub(super) const PTRS: u32 = 0x02;
    /// In GroupData: payload bytes of the segments the group points to.
    pub(super) const LEAF_SIZE: u32 = 0x01;
    /// In GroupData: the segment number of the first pointer.
    pub(super) const START_SEGMENT_ID: u32 = 0x05;
}

/// The content of one manifest packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// Segment number of the first pointer.
    pub start_segment: u64,
    /// Payload bytes of the segments pointed to.
    pub leaf_size: u64,
    /// Implicit SHA-256 digests of segments `start_segment..`, in order.
    pub digests: Vec<[u8; DIGEST_LEN]>,
}

/// Why a manifest's content does not decode.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// Not well-formed TLV.
    #[error("manifest is not well-formed: {0}")]
    Tlv(#[from] nameway_wire::DecodeError),
    /// A required element is missing or the pointers are not whole digests.
    #[error("manifest is malformed: {0}")]
    Malformed(&'static str),
}

impl Manifest {
    /// The segment numbers covered (the end saturates at 2^64 - 1; [`Manifest::decode`]
    /// refuses a manifest whose pointers would run past it).
    pub fn segments(&self) -> std::ops::Range<u64> {
        self.start_segment..self.start_segment.saturating_add(self.digests.len() as u64)
    }

    /// The digest listed for `segment`, if this manifest covers it.
    pub fn digest_of(&self, segment: u64) -> Option<&[u8; DIGEST_LEN]> {
        let i = segment.checked_sub(self.start_segment)?;
        self.digests.get(usize::try_from(i).ok()?)
    }

    /// Encodes the Node (the manifest Data's Content).
    pub fn encode(&self) -> Bytes {
        let group_data = tlv::nni_tlv_len(types::LEAF_SIZE, self.leaf_size)
            + tlv::nni_tlv_len(types::START_SEGMENT_ID, self.start_segment);
        let ptrs = self.digests.len() * DIGEST_LEN;
        let group = tlv::tlv_len(types::GROUP_DATA, group_data) + tlv::tlv_len(types::PTRS, ptrs);
        let node = tlv::tlv_len(types::HASH_GROUP, group);
        let mut buf = BytesMut::with_capacity(tlv::tlv_len(types::NODE, node));
        tlv::put_header(&mut buf, types::NODE, node);
        tlv::put_header(&mut buf, types::HASH_GROUP, group);
        tlv::put_header(&mut buf, types::GROUP_DATA, group_data);
        tlv::put_nni_tlv(&mut buf, types::LEAF_SIZE, self.leaf_size);
        tlv::put_nni_tlv(&mut buf, types::START_SEGMENT_ID, self.start_segment);
        tlv::put_header(&mut buf, types::PTRS, ptrs);
        for d in &self.digests {
            buf.extend_from_slice(d);
        }
        buf.freeze()
    }

    /// Decodes a manifest Data's Content. Unknown elements are skipped unless critical.
    ///
    /// # Errors
    /// Malformed TLV, a missing GroupData or Ptrs, or pointers that are not whole digests.
    pub fn decode(content: &[u8]) -> Result<Self, ManifestError> {
        let node = tlv::read_single(content)?;
        if node.typ != types::NODE {
            return Err(ManifestError::Malformed("no Node"));
        }
        let mut start = None;
        let mut leaf_size = 0;
        let mut digests = None;
        let mut in_node = node.children();
        while let Some(e) = in_node.read()? {
            if e.typ != types::HASH_GROUP {
                tlv::skip_unrecognized(&e)?;
                continue;
            }
            if digests.is_some() {
                return Err(ManifestError::Malformed("more than one HashGroup"));
            }
            let mut in_group: Reader<'_> = e.children();
            while let Some(g) = in_group.read()? {
                match g.typ {
                    types::GROUP_DATA => {
                        let mut fields = g.children();
                        while let Some(f) = fields.read()? {
                            match f.typ {
                                types::LEAF_SIZE => leaf_size = f.nni()?,
                                types::START_SEGMENT_ID => start = Some(f.nni()?),
                                _ => tlv::skip_unrecognized(&f)?,
                            }
                        }
                    }
                    types::PTRS => {
                        if g.value.len() % DIGEST_LEN != 0 || g.value.len() / DIGEST_LEN == 0 {
                            return Err(ManifestError::Malformed("Ptrs is not whole digests"));
                        }
                        digests = Some(
                            g.value
                                .chunks_exact(DIGEST_LEN)
                                .map(|c| {
                                    let mut d = [0; DIGEST_LEN];
                                    d.copy_from_slice(c);
                                    d
                                })
                                .collect::<Vec<_>>(),
                        );
                    }
                    _ => tlv::skip_unrecognized(&g)?,
                }
            }
        }
        let start_segment = start.ok_or(ManifestError::Malformed("no StartSegmentId"))?;
        let digests = digests.ok_or(ManifestError::Malformed("no Ptrs"))?;
        if start_segment.checked_add(digests.len() as u64).is_none() {
            return Err(ManifestError::Malformed(
                "Ptrs run past the last segment number",
            ));
        }
        Ok(Self {
            start_segment,
            leaf_size,
            digests,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_lookup() {
        let m = Manifest {
            start_segment: 256,
            leaf_size: 256 * 8000,
            digests: (0..=255u8).map(|i| [i; 32]).collect(),
        };
        let wire = m.encode();
        // 256 pointers fit in a packet: the content stays far below 8800 bytes.
        assert!(wire.len() < 8250, "{}", wire.len());
        let back = Manifest::decode(&wire).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.digest_of(256), Some(&[0; 32]));
        assert_eq!(back.digest_of(511), Some(&[255; 32]));
        assert_eq!(back.digest_of(255), None);
        assert_eq!(back.digest_of(512), None);
        assert_eq!(back.segments(), 256..512);
    }

    /// The batched digests are SHA-256: every length up to the largest packet (8800 bytes)
    /// and past it, in batches of every size up to 33 (odd batches leave lanes idle), against
    /// RustCrypto's `sha2` one packet at a time.
    #[test]
    fn batched_digests_are_sha256() {
        use sha2::{Digest as _, Sha256};
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut byte = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        };
        let pool: Vec<u8> = (0..9000 + 64).map(|_| byte()).collect();
        let check = |packets: &[&[u8]]| {
            let got = implicit_digests(packets);
            assert_eq!(got.len(), packets.len());
            for (p, d) in packets.iter().zip(&got) {
                let want: [u8; 32] = Sha256::digest(p).into();
                assert_eq!(
                    d,
                    &want,
                    "length {} in a batch of {}",
                    p.len(),
                    packets.len()
                );
            }
        };
        // Every length 0..=9000, eight at a time with different offsets and lengths mixed.
        let lengths: Vec<usize> = (0..=9000).collect();
        for chunk in lengths.chunks(8) {
            let packets: Vec<&[u8]> = chunk
                .iter()
                .enumerate()
                .map(|(i, &len)| &pool[i * 7..i * 7 + len])
                .collect();
            check(&packets);
        }
        // Batch sizes 0..=33 of one length near a block boundary and mixed lengths.
        for size in 0..=33 {
            let same: Vec<&[u8]> = (0..size).map(|i| &pool[i..i + 8119]).collect();
            check(&same);
            let mixed: Vec<&[u8]> = (0..size).map(|i| &pool[i..i + 55 + 263 * i]).collect();
            check(&mixed);
        }
    }

    #[test]
    fn malformed_manifests_are_refused() {
        let m = Manifest {
            start_segment: 0,
            leaf_size: 1,
            digests: vec![[7; 32]],
        };
        let wire = m.encode();
        for cut in 0..wire.len() {
            assert!(Manifest::decode(&wire[..cut]).is_err(), "cut at {cut}");
        }
        let mut bad = wire.to_vec();
        let last = bad.len() - 33;
        bad[last] = 31; // Ptrs length no longer a multiple of 32
        assert!(Manifest::decode(&bad).is_err());
    }

    #[test]
    fn pointers_past_the_last_segment_number_are_refused() {
        // A hostile manifest starting at 2^64 - 1 with two digests would name a segment
        // beyond any segment number (its range overflowed).
        let m = Manifest {
            start_segment: u64::MAX,
            leaf_size: 1,
            digests: vec![[7; 32]; 2],
        };
        assert_eq!(m.segments(), u64::MAX..u64::MAX, "saturates");
        assert!(matches!(
            Manifest::decode(&m.encode()),
            Err(ManifestError::Malformed(_))
        ));
        let last = Manifest {
            start_segment: u64::MAX - 1,
            digests: vec![[7; 32]],
            ..m
        };
        assert_eq!(Manifest::decode(&last.encode()).unwrap(), last);
    }
}
