//! The RIB dataset (`rib/list`): RibEntry and Route.

use bytes::Bytes;

use super::codec::{self, Fields};
use super::{dataset_entry, tlv_codec, types};
use crate::error::DecodeError;
use crate::name::Name;
use crate::tlv::{self, types as pkt, Element};

/// RibEntry (0x80): a RIB prefix and its routes (ndn-cxx `mgmt/nfd/rib-entry.cpp`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RibEntry {
    /// Name (0x07): the prefix.
    pub name: Name,
    /// Route (0x81) elements, in wire order.
    pub routes: Vec<Route>,
}

/// Route (0x81): one route of a [`RibEntry`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Route {
    /// FaceId (0x69).
    pub face_id: u64,
    /// Origin (0x6f); see [`super::route_origin`].
    pub origin: u64,
    /// Cost (0x6a).
    pub cost: u64,
    /// Flags (0x6c); see [`super::route_flags`].
    pub flags: u64,
    /// ExpirationPeriod (0x6d), milliseconds left; absent for a route that never expires.
    pub expiration_period: Option<u64>,
}

fn entry_rank(typ: u32) -> u8 {
    match typ {
        pkt::NAME => 1,
        types::ROUTE => 2,
        _ => 0,
    }
}

fn route_rank(typ: u32) -> u8 {
    match typ {
        types::FACE_ID => 1,
        types::ORIGIN => 2,
        types::COST => 3,
        types::FLAGS => 4,
        types::EXPIRATION_PERIOD => 5,
        _ => 0,
    }
}

impl RibEntry {
    fn decode_element(wire: &Bytes, e: &Element<'_>) -> Result<Self, DecodeError> {
        let mut fields = Fields::new(e, entry_rank).repeatable(types::ROUTE);
        let mut entry = Self::default();
        while let Some(f) = fields.next()? {
            match f.typ {
                pkt::NAME => entry.name = codec::name(wire, &f)?,
                _ => entry.routes.push(Route::decode_element(wire, &f)?),
            }
        }
        fields.require(&[pkt::NAME])?;
        Ok(entry)
    }

    fn encode_value(&self, buf: &mut Vec<u8>) {
        self.name.encode(buf);
        for r in &self.routes {
            codec::put_nested(buf, types::ROUTE, |b| r.encode_value(b));
        }
    }
}

impl Route {
    fn decode_element(_wire: &Bytes, e: &Element<'_>) -> Result<Self, DecodeError> {
        let mut fields = Fields::new(e, route_rank);
        let mut route = Self::default();
        while let Some(f) = fields.next()? {
            let n = f.nni()?;
            match f.typ {
                types::FACE_ID => route.face_id = n,
                types::ORIGIN => route.origin = n,
                types::COST => route.cost = n,
                types::FLAGS => route.flags = n,
                _ => route.expiration_period = Some(n),
            }
        }
        fields.require(&[types::FACE_ID, types::ORIGIN, types::COST, types::FLAGS])?;
        Ok(route)
    }

    fn encode_value(&self, buf: &mut Vec<u8>) {
        tlv::put_nni_tlv(buf, types::FACE_ID, self.face_id);
        tlv::put_nni_tlv(buf, types::ORIGIN, self.origin);
        tlv::put_nni_tlv(buf, types::COST, self.cost);
        tlv::put_nni_tlv(buf, types::FLAGS, self.flags);
        codec::put_opt_nni(buf, types::EXPIRATION_PERIOD, self.expiration_period);
    }
}

tlv_codec!(RibEntry, types::RIB_ENTRY, "RibEntry");
dataset_entry!(RibEntry, types::RIB_ENTRY, "RibEntry");
tlv_codec!(Route, types::ROUTE, "Route");
