//! Face datasets: FaceStatus (`faces/list`, `faces/query`) and FaceQueryFilter.

use bytes::Bytes;

use super::codec::{self, Fields};
use super::{dataset_entry, tlv_codec, types};
use crate::error::DecodeError;
use crate::tlv::{self, Element};

/// FaceStatus (0x80): one entry of the `faces/list` and `faces/query` datasets.
///
/// Fields in ndn-cxx order (`mgmt/nfd/face-status.cpp`); the optional ones are Option.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaceStatus {
    /// FaceId (0x69).
    pub face_id: u64,
    /// Uri (0x72): the remote FaceUri.
    pub uri: String,
    /// LocalUri (0x81).
    pub local_uri: String,
    /// ExpirationPeriod (0x6d), milliseconds left before an on-demand face closes.
    pub expiration_period: Option<u64>,
    /// FaceScope (0x84); see [`super::face_scope`].
    pub face_scope: u64,
    /// FacePersistency (0x85); see [`super::face_persistency`].
    pub face_persistency: u64,
    /// LinkType (0x86); see [`super::link_type`].
    pub link_type: u64,
    /// BaseCongestionMarkingInterval (0x87), nanoseconds.
    pub base_congestion_marking_interval: Option<u64>,
    /// DefaultCongestionThreshold (0x88), bytes.
    pub default_congestion_threshold: Option<u64>,
    /// Mtu (0x89), bytes.
    pub mtu: Option<u64>,
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
    /// NInBytes (0x94).
    pub n_in_bytes: u64,
    /// NOutBytes (0x95).
    pub n_out_bytes: u64,
    /// Flags (0x6c); see [`super::face_flags`].
    pub flags: u64,
}

fn face_status_rank(typ: u32) -> u8 {
    match typ {
        types::FACE_ID => 1,
        types::URI => 2,
        types::LOCAL_URI => 3,
        types::EXPIRATION_PERIOD => 4,
        types::FACE_SCOPE => 5,
        types::FACE_PERSISTENCY => 6,
        types::LINK_TYPE => 7,
        types::BASE_CONGESTION_MARKING_INTERVAL => 8,
        types::DEFAULT_CONGESTION_THRESHOLD => 9,
        types::MTU => 10,
        types::N_IN_INTERESTS => 11,
        types::N_IN_DATA => 12,
        types::N_IN_NACKS => 13,
        types::N_OUT_INTERESTS => 14,
        types::N_OUT_DATA => 15,
        types::N_OUT_NACKS => 16,
        types::N_IN_BYTES => 17,
        types::N_OUT_BYTES => 18,
        types::FLAGS => 19,
        _ => 0,
    }
}

impl FaceStatus {
    fn decode_element(_wire: &Bytes, e: &Element<'_>) -> Result<Self, DecodeError> {
        let mut fields = Fields::new(e, face_status_rank);
        let mut s = Self::default();
        while let Some(f) = fields.next()? {
            match f.typ {
                types::FACE_ID => s.face_id = f.nni()?,
                types::URI => s.uri = codec::string(&f)?,
                types::LOCAL_URI => s.local_uri = codec::string(&f)?,
                types::EXPIRATION_PERIOD => s.expiration_period = Some(f.nni()?),
                types::FACE_SCOPE => s.face_scope = f.nni()?,
                types::FACE_PERSISTENCY => s.face_persistency = f.nni()?,
                types::LINK_TYPE => s.link_type = f.nni()?,
                types::BASE_CONGESTION_MARKING_INTERVAL => {
                    s.base_congestion_marking_interval = Some(f.nni()?);
                }
                types::DEFAULT_CONGESTION_THRESHOLD => {
                    s.default_congestion_threshold = Some(f.nni()?);
                }
                types::MTU => s.mtu = Some(f.nni()?),
                types::N_IN_INTERESTS => s.n_in_interests = f.nni()?,
                types::N_IN_DATA => s.n_in_data = f.nni()?,
                types::N_IN_NACKS => s.n_in_nacks = f.nni()?,
                types::N_OUT_INTERESTS => s.n_out_interests = f.nni()?,
                types::N_OUT_DATA => s.n_out_data = f.nni()?,
                types::N_OUT_NACKS => s.n_out_nacks = f.nni()?,
                types::N_IN_BYTES => s.n_in_bytes = f.nni()?,
                types::N_OUT_BYTES => s.n_out_bytes = f.nni()?,
                _ => s.flags = f.nni()?,
            }
        }
        fields.require(&[
            types::FACE_ID,
            types::URI,
            types::LOCAL_URI,
            types::FACE_SCOPE,
            types::FACE_PERSISTENCY,
            types::LINK_TYPE,
            types::N_IN_INTERESTS,
            types::N_IN_DATA,
            types::N_IN_NACKS,
            types::N_OUT_INTERESTS,
            types::N_OUT_DATA,
            types::N_OUT_NACKS,
            types::N_IN_BYTES,
            types::N_OUT_BYTES,
            types::FLAGS,
        ])?;
        Ok(s)
    }

    fn encode_value(&self, buf: &mut Vec<u8>) {
        tlv::put_nni_tlv(buf, types::FACE_ID, self.face_id);
        codec::put_string(buf, types::URI, &self.uri);
        codec::put_string(buf, types::LOCAL_URI, &self.local_uri);
        codec::put_opt_nni(buf, types::EXPIRATION_PERIOD, self.expiration_period);
        tlv::put_nni_tlv(buf, types::FACE_SCOPE, self.face_scope);
        tlv::put_nni_tlv(buf, types::FACE_PERSISTENCY, self.face_persistency);
        tlv::put_nni_tlv(buf, types::LINK_TYPE, self.link_type);
        codec::put_opt_nni(
            buf,
            types::BASE_CONGESTION_MARKING_INTERVAL,
            self.base_congestion_marking_interval,
        );
        codec::put_opt_nni(
            buf,
            types::DEFAULT_CONGESTION_THRESHOLD,
            self.default_congestion_threshold,
        );
        codec::put_opt_nni(buf, types::MTU, self.mtu);
        let values = [
            self.n_in_interests,
            self.n_in_data,
            self.n_in_nacks,
            self.n_out_interests,
            self.n_out_data,
            self.n_out_nacks,
            self.n_in_bytes,
            self.n_out_bytes,
        ];
        for (typ, n) in COUNTERS.iter().zip(values) {
            tlv::put_nni_tlv(buf, *typ, n);
        }
        tlv::put_nni_tlv(buf, types::FLAGS, self.flags);
    }
}

/// The packet counters of FaceStatus, in wire order.
const COUNTERS: [u32; 8] = [
    types::N_IN_INTERESTS,
    types::N_IN_DATA,
    types::N_IN_NACKS,
    types::N_OUT_INTERESTS,
    types::N_OUT_DATA,
    types::N_OUT_NACKS,
    types::N_IN_BYTES,
    types::N_OUT_BYTES,
];

tlv_codec!(FaceStatus, types::FACE_STATUS, "FaceStatus");
dataset_entry!(FaceStatus, types::FACE_STATUS, "FaceStatus");

/// FaceQueryFilter (0x96): the argument of `faces/query`, every field optional
/// (ndn-cxx `mgmt/nfd/face-query-filter.cpp`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaceQueryFilter {
    /// FaceId (0x69).
    pub face_id: Option<u64>,
    /// UriScheme (0x83), e.g. `udp4`.
    pub uri_scheme: Option<String>,
    /// Uri (0x72): the remote FaceUri.
    pub uri: Option<String>,
    /// LocalUri (0x81).
    pub local_uri: Option<String>,
    /// FaceScope (0x84).
    pub face_scope: Option<u64>,
    /// FacePersistency (0x85).
    pub face_persistency: Option<u64>,
    /// LinkType (0x86).
    pub link_type: Option<u64>,
}

fn filter_rank(typ: u32) -> u8 {
    match typ {
        types::FACE_ID => 1,
        types::URI_SCHEME => 2,
        types::URI => 3,
        types::LOCAL_URI => 4,
        types::FACE_SCOPE => 5,
        types::FACE_PERSISTENCY => 6,
        types::LINK_TYPE => 7,
        _ => 0,
    }
}

impl FaceQueryFilter {
    fn decode_element(_wire: &Bytes, e: &Element<'_>) -> Result<Self, DecodeError> {
        let mut q = Self::default();
        let mut fields = Fields::new(e, filter_rank);
        while let Some(f) = fields.next()? {
            match f.typ {
                types::FACE_ID => q.face_id = Some(f.nni()?),
                types::URI_SCHEME => q.uri_scheme = Some(codec::string(&f)?),
                types::URI => q.uri = Some(codec::string(&f)?),
                types::LOCAL_URI => q.local_uri = Some(codec::string(&f)?),
                types::FACE_SCOPE => q.face_scope = Some(f.nni()?),
                types::FACE_PERSISTENCY => q.face_persistency = Some(f.nni()?),
                _ => q.link_type = Some(f.nni()?),
            }
        }
        Ok(q)
    }

    fn encode_value(&self, buf: &mut Vec<u8>) {
        codec::put_opt_nni(buf, types::FACE_ID, self.face_id);
        codec::put_opt_string(buf, types::URI_SCHEME, self.uri_scheme.as_deref());
        codec::put_opt_string(buf, types::URI, self.uri.as_deref());
        codec::put_opt_string(buf, types::LOCAL_URI, self.local_uri.as_deref());
        codec::put_opt_nni(buf, types::FACE_SCOPE, self.face_scope);
        codec::put_opt_nni(buf, types::FACE_PERSISTENCY, self.face_persistency);
        codec::put_opt_nni(buf, types::LINK_TYPE, self.link_type);
    }
}

tlv_codec!(FaceQueryFilter, types::FACE_QUERY_FILTER, "FaceQueryFilter");
