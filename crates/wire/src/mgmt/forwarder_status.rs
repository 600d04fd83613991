//! The general status dataset (`status/general`): ForwarderStatus.

use bytes::Bytes;

use super::codec::{self, Fields};
use super::types;
use crate::error::DecodeError;
use crate::tlv::{self, types as pkt, Element};

/// ForwarderStatus: the `status/general` dataset (python-ndn `GeneralStatus`, ndn-cxx
/// `mgmt/nfd/forwarder-status.cpp`).
///
/// Unlike the other datasets it has no wrapper element: the Data Content *is* the list of
/// fields, so [`ForwarderStatus::decode`] takes the Content's TLV-VALUE and
/// [`ForwarderStatus::encode`] returns it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ForwarderStatus {
    /// NfdVersion (0x80), a string such as `22.12`.
    pub nfd_version: String,
    /// StartTimestamp (0x81), milliseconds since the Unix epoch.
    pub start_timestamp: u64,
    /// CurrentTimestamp (0x82), milliseconds since the Unix epoch.
    pub current_timestamp: u64,
    /// NNameTreeEntries (0x83).
    pub n_name_tree_entries: u64,
    /// NFibEntries (0x84).
    pub n_fib_entries: u64,
    /// NPitEntries (0x85).
    pub n_pit_entries: u64,
    /// NMeasurementsEntries (0x86).
    pub n_measurements_entries: u64,
    /// NCsEntries (0x87).
    pub n_cs_entries: u64,
    /// NInInterests (0x90).
    pub n_in_interests: u64,
    /// NInData (0x91).
    pub n_in_data: u64,
    /// NInNacks (0x97).
    pub n_in_nacks: u64,
    /// NOutInterests (0x92).
    pub n_out_interests: u64,
    /// NOutData (0x93).
    pub n_out_data: u64,
    /// NOutNacks (0x98).
    pub n_out_nacks: u64,
    /// NSatisfiedInterests (0x99).
    pub n_satisfied_interests: u64,
    /// NUnsatisfiedInterests (0x9a).
    pub n_unsatisfied_interests: u64,
}

/// The numeric fields after NfdVersion, in wire order.
const NUMBERS: [u32; 15] = [
    types::START_TIMESTAMP,
    types::CURRENT_TIMESTAMP,
    types::N_NAME_TREE_ENTRIES,
    types::N_FIB_ENTRIES,
    types::N_PIT_ENTRIES,
    types::N_MEASUREMENTS_ENTRIES,
    types::N_CS_ENTRIES,
    types::N_IN_INTERESTS,
    types::N_IN_DATA,
    types::N_IN_NACKS,
    types::N_OUT_INTERESTS,
    types::N_OUT_DATA,
    types::N_OUT_NACKS,
    types::N_SATISFIED_INTERESTS,
    types::N_UNSATISFIED_INTERESTS,
];

fn rank(typ: u32) -> u8 {
    if typ == types::NFD_VERSION {
        return 1;
    }
    NUMBERS
        .iter()
        .position(|&t| t == typ)
        .map_or(0, |i| i as u8 + 2)
}

impl ForwarderStatus {
    /// Decodes the fields of a `status/general` Content (its TLV-VALUE, no wrapper).
    ///
    /// # Errors
    /// A malformed element, a field repeated or out of order, an unrecognized critical field,
    /// a missing field, or an NfdVersion that is not UTF-8.
    pub fn decode(content: &Bytes) -> Result<Self, DecodeError> {
        let container = Element {
            typ: pkt::CONTENT,
            value: content,
            start: 0,
            value_start: 0,
        };
        let mut fields = Fields::new(&container, rank);
        let mut s = Self::default();
        while let Some(f) = fields.next()? {
            if f.typ == types::NFD_VERSION {
                s.nfd_version = codec::string(&f)?;
            } else {
                *s.number_mut(f.typ) = f.nni()?;
            }
        }
        fields.require(&[types::NFD_VERSION])?;
        fields.require(&NUMBERS)?;
        Ok(s)
    }

    /// The numeric field of TLV-TYPE `typ` (one of [`NUMBERS`]).
    fn number_mut(&mut self, typ: u32) -> &mut u64 {
        match typ {
            types::START_TIMESTAMP => &mut self.start_timestamp,
            types::CURRENT_TIMESTAMP => &mut self.current_timestamp,
            types::N_NAME_TREE_ENTRIES => &mut self.n_name_tree_entries,
            types::N_FIB_ENTRIES => &mut self.n_fib_entries,
            types::N_PIT_ENTRIES => &mut self.n_pit_entries,
            types::N_MEASUREMENTS_ENTRIES => &mut self.n_measurements_entries,
            types::N_CS_ENTRIES => &mut self.n_cs_entries,
            types::N_IN_INTERESTS => &mut self.n_in_interests,
            types::N_IN_DATA => &mut self.n_in_data,
            types::N_IN_NACKS => &mut self.n_in_nacks,
            types::N_OUT_INTERESTS => &mut self.n_out_interests,
            types::N_OUT_DATA => &mut self.n_out_data,
            types::N_OUT_NACKS => &mut self.n_out_nacks,
            types::N_SATISFIED_INTERESTS => &mut self.n_satisfied_interests,
            _ => &mut self.n_unsatisfied_interests,
        }
    }

    /// Encodes the fields, to be used as the whole TLV-VALUE of the Data Content.
    pub fn encode(&self) -> Bytes {
        let mut buf = Vec::new();
        codec::put_string(&mut buf, types::NFD_VERSION, &self.nfd_version);
        let values = [
            self.start_timestamp,
            self.current_timestamp,
            self.n_name_tree_entries,
            self.n_fib_entries,
            self.n_pit_entries,
            self.n_measurements_entries,
            self.n_cs_entries,
            self.n_in_interests,
            self.n_in_data,
            self.n_in_nacks,
            self.n_out_interests,
            self.n_out_data,
            self.n_out_nacks,
            self.n_satisfied_interests,
            self.n_unsatisfied_interests,
        ];
        for (typ, n) in NUMBERS.iter().zip(values) {
            tlv::put_nni_tlv(&mut buf, *typ, n);
        }
        Bytes::from(buf)
    }
}
