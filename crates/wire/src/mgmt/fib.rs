//! The FIB dataset (`fib/list`): FibEntry and NextHopRecord.

use bytes::Bytes;

use super::codec::{self, Fields};
use super::{dataset_entry, tlv_codec, types};
use crate::error::DecodeError;
use crate::name::Name;
use crate::tlv::{self, types as pkt, Element};

/// FibEntry (0x80): a FIB prefix and its next hops (ndn-cxx `mgmt/nfd/fib-entry.cpp`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FibEntry {
    /// Name (0x07): the prefix.
    pub name: Name,
    /// NextHopRecord (0x81) elements, in wire order.
    pub next_hops: Vec<NextHopRecord>,
}

/// NextHopRecord (0x81): one next hop of a [`FibEntry`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NextHopRecord {
    /// FaceId (0x69).
    pub face_id: u64,
    /// Cost (0x6a).
    pub cost: u64,
}

fn entry_rank(typ: u32) -> u8 {
    match typ {
        pkt::NAME => 1,
        types::NEXT_HOP_RECORD => 2,
        _ => 0,
    }
}

fn record_rank(typ: u32) -> u8 {
    match typ {
        types::FACE_ID => 1,
        types::COST => 2,
        _ => 0,
    }
}

impl FibEntry {
    fn decode_element(wire: &Bytes, e: &Element<'_>) -> Result<Self, DecodeError> {
        let mut fields = Fields::new(e, entry_rank).repeatable(types::NEXT_HOP_RECORD);
        let mut entry = Self::default();
        while let Some(f) = fields.next()? {
            match f.typ {
                pkt::NAME => entry.name = codec::name(wire, &f)?,
                _ => entry
                    .next_hops
                    .push(NextHopRecord::decode_element(wire, &f)?),
            }
        }
        fields.require(&[pkt::NAME])?;
        Ok(entry)
    }

    fn encode_value(&self, buf: &mut Vec<u8>) {
        self.name.encode(buf);
        for nh in &self.next_hops {
            codec::put_nested(buf, types::NEXT_HOP_RECORD, |b| nh.encode_value(b));
        }
    }
}

impl NextHopRecord {
    fn decode_element(_wire: &Bytes, e: &Element<'_>) -> Result<Self, DecodeError> {
        let mut fields = Fields::new(e, record_rank);
        let mut record = Self::default();
        while let Some(f) = fields.next()? {
            match f.typ {
                types::FACE_ID => record.face_id = f.nni()?,
                _ => record.cost = f.nni()?,
            }
        }
        fields.require(&[types::FACE_ID, types::COST])?;
        Ok(record)
    }

    fn encode_value(&self, buf: &mut Vec<u8>) {
        tlv::put_nni_tlv(buf, types::FACE_ID, self.face_id);
        tlv::put_nni_tlv(buf, types::COST, self.cost);
    }
}

tlv_codec!(FibEntry, types::FIB_ENTRY, "FibEntry");
dataset_entry!(FibEntry, types::FIB_ENTRY, "FibEntry");
tlv_codec!(NextHopRecord, types::NEXT_HOP_RECORD, "NextHopRecord");
