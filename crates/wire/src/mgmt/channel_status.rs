//! The channel dataset (`faces/channels`): ChannelStatus, one per listener.

use bytes::Bytes;

use super::codec::{self, Fields};
use super::{dataset_entry, tlv_codec, types};
use crate::error::DecodeError;
use crate::tlv::Element;

/// ChannelStatus (0x82): a listening channel, by its local FaceUri (ndn-cxx
/// `mgmt/nfd/channel-status.cpp`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChannelStatus {
    /// LocalUri (0x81), e.g. `tcp4://127.0.0.1:6363`.
    pub local_uri: String,
}

fn rank(typ: u32) -> u8 {
    match typ {
        types::LOCAL_URI => 1,
        _ => 0,
    }
}

impl ChannelStatus {
    fn decode_element(_wire: &Bytes, e: &Element<'_>) -> Result<Self, DecodeError> {
        let mut fields = Fields::new(e, rank);
        let mut status = Self::default();
        while let Some(f) = fields.next()? {
            status.local_uri = codec::string(&f)?;
        }
        fields.require(&[types::LOCAL_URI])?;
        Ok(status)
    }

    fn encode_value(&self, buf: &mut Vec<u8>) {
        codec::put_string(buf, types::LOCAL_URI, &self.local_uri);
    }
}

tlv_codec!(ChannelStatus, types::CHANNEL_STATUS, "ChannelStatus");
dataset_entry!(ChannelStatus, types::CHANNEL_STATUS, "ChannelStatus");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_wire_form() {
        let c = ChannelStatus {
            local_uri: "udp4://127.0.0.1:6363".into(),
        };
        let wire = c.encode();
        assert_eq!(&wire[..4], &[0x82, 0x17, 0x81, 0x15]);
        assert_eq!(ChannelStatus::decode(&wire).unwrap(), c);
        let list = ChannelStatus::encode_list(&[c.clone(), c.clone()]);
        assert_eq!(
            ChannelStatus::decode_list(&list).unwrap(),
            vec![c.clone(), c]
        );
        assert!(ChannelStatus::decode(&Bytes::from_static(&[0x82, 0x00])).is_err());
    }
}
