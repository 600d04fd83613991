//! The strategy choice dataset (`strategy-choice/list`): StrategyChoice.

use bytes::Bytes;

use super::codec::{self, Fields};
use super::{dataset_entry, tlv_codec, types};
use crate::error::DecodeError;
use crate::name::Name;
use crate::tlv::{types as pkt, Element};

/// StrategyChoice (0x80): the strategy chosen for a prefix (ndn-cxx
/// `mgmt/nfd/strategy-choice.cpp`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StrategyChoice {
    /// Name (0x07): the prefix.
    pub name: Name,
    /// Strategy (0x6b): the strategy's versioned name, e.g.
    /// `/localhost/nfd/strategy/best-route/v=5`.
    pub strategy: Name,
}

fn rank(typ: u32) -> u8 {
    match typ {
        pkt::NAME => 1,
        types::STRATEGY => 2,
        _ => 0,
    }
}

impl StrategyChoice {
    fn decode_element(wire: &Bytes, e: &Element<'_>) -> Result<Self, DecodeError> {
        let mut fields = Fields::new(e, rank);
        let mut choice = Self::default();
        while let Some(f) = fields.next()? {
            match f.typ {
                pkt::NAME => choice.name = codec::name(wire, &f)?,
                _ => choice.strategy = codec::strategy(wire, &f)?,
            }
        }
        fields.require(&[pkt::NAME, types::STRATEGY])?;
        Ok(choice)
    }

    fn encode_value(&self, buf: &mut Vec<u8>) {
        self.name.encode(buf);
        codec::put_strategy(buf, types::STRATEGY, &self.strategy);
    }
}

tlv_codec!(StrategyChoice, types::STRATEGY_CHOICE, "StrategyChoice");
dataset_entry!(StrategyChoice, types::STRATEGY_CHOICE, "StrategyChoice");
