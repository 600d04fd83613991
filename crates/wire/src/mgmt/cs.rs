//! The Content Store dataset (`cs/info`): CsInfo.

use bytes::Bytes;

use super::codec::Fields;
use super::{dataset_entry, tlv_codec, types};
use crate::error::DecodeError;
use crate::tlv::{self, Element};

/// CsInfo (0x80): the `cs/info` dataset entry (ndn-cxx `mgmt/nfd/cs-info.cpp`). Field order is
/// Capacity 0x83, Flags 0x6c, NCsEntries 0x87, NHits 0x81, NMisses 0x82: not by TLV-TYPE.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CsInfo {
    /// Capacity (0x83), in packets.
    pub capacity: u64,
    /// Flags (0x6c); see [`super::cs_flags`].
    pub flags: u64,
    /// NCsEntries (0x87).
    pub n_entries: u64,
    /// NHits (0x81).
    pub n_hits: u64,
    /// NMisses (0x82).
    pub n_misses: u64,
}

fn rank(typ: u32) -> u8 {
    match typ {
        types::CAPACITY => 1,
        types::FLAGS => 2,
        types::N_CS_ENTRIES => 3,
        types::N_HITS => 4,
        types::N_MISSES => 5,
        _ => 0,
    }
}

impl CsInfo {
    fn decode_element(_wire: &Bytes, e: &Element<'_>) -> Result<Self, DecodeError> {
        let mut fields = Fields::new(e, rank);
        let mut c = Self::default();
        while let Some(f) = fields.next()? {
            let n = f.nni()?;
            match f.typ {
                types::CAPACITY => c.capacity = n,
                types::FLAGS => c.flags = n,
                types::N_CS_ENTRIES => c.n_entries = n,
                types::N_HITS => c.n_hits = n,
                _ => c.n_misses = n,
            }
        }
        fields.require(&[
            types::CAPACITY,
            types::FLAGS,
            types::N_CS_ENTRIES,
            types::N_HITS,
            types::N_MISSES,
        ])?;
        Ok(c)
    }

    fn encode_value(&self, buf: &mut Vec<u8>) {
        tlv::put_nni_tlv(buf, types::CAPACITY, self.capacity);
        tlv::put_nni_tlv(buf, types::FLAGS, self.flags);
        tlv::put_nni_tlv(buf, types::N_CS_ENTRIES, self.n_entries);
        tlv::put_nni_tlv(buf, types::N_HITS, self.n_hits);
        tlv::put_nni_tlv(buf, types::N_MISSES, self.n_misses);
    }
}

tlv_codec!(CsInfo, types::CS_INFO, "CsInfo");
dataset_entry!(CsInfo, types::CS_INFO, "CsInfo");
