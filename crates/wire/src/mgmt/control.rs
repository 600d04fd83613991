//! ControlParameters (the argument of every command) and ControlResponse (the reply).

use bytes::Bytes;

use super::codec::{self, Fields};
use super::{tlv_codec, types};
use crate::error::{DecodeError, ErrorKind};
use crate::name::Name;
use crate::signature::slice_abs;
use crate::tlv::{self, types as pkt, Element, Reader};

/// ControlParameters (0x68): the arguments of a management command, or the parameters a
/// command took effect with (in a [`ControlResponse`] body).
///
/// Encoding order is python-ndn's `ControlParametersValue` order (docs/nfd-interop.md §4.3), which
/// python-ndn enforces when it decodes a response. Decoding also accepts ndn-cxx's encoding
/// order, which moves BaseCongestionMarkingInterval, DefaultCongestionThreshold and Mtu after
/// FacePersistency (ndn-cxx `ControlParameters::wireEncode`), so `nfdc face create ... mtu N`
/// is understood.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ControlParameters {
    /// Name (0x07): the prefix of a route, FIB entry or strategy choice.
    pub name: Option<Name>,
    /// FaceId (0x69); 0 in a command means the requesting face.
    pub face_id: Option<u64>,
    /// Uri (0x72): the remote FaceUri.
    pub uri: Option<String>,
    /// LocalUri (0x81): the local FaceUri.
    pub local_uri: Option<String>,
    /// Origin (0x6f); see [`super::route_origin`].
    pub origin: Option<u64>,
    /// Cost (0x6a).
    pub cost: Option<u64>,
    /// Capacity (0x83): CS capacity in packets.
    pub capacity: Option<u64>,
    /// Count (0x84): how many CS entries `cs/erase` may erase, or erased.
    pub count: Option<u64>,
    /// BaseCongestionMarkingInterval (0x87), nanoseconds.
    pub base_congestion_marking_interval: Option<u64>,
    /// DefaultCongestionThreshold (0x88), bytes.
    pub default_congestion_threshold: Option<u64>,
    /// Mtu (0x89), bytes.
    pub mtu: Option<u64>,
    /// Flags (0x6c): route flags ([`super::route_flags`]), face flags ([`super::face_flags`])
    /// or CS flags ([`super::cs_flags`]).
    pub flags: Option<u64>,
    /// Mask (0x70): which bits of Flags a command changes.
    pub mask: Option<u64>,
    /// Strategy (0x6b): the strategy's Name.
    pub strategy: Option<Name>,
    /// ExpirationPeriod (0x6d), milliseconds.
    pub expiration_period: Option<u64>,
    /// FacePersistency (0x85); see [`super::face_persistency`].
    pub face_persistency: Option<u64>,
    /// InterestRateLimit (0x0f30, namewayd's extension): Interests per second a face may send,
    /// 0 for no limit.
    pub interest_rate_limit: Option<u64>,
    /// InterestBurst (0x0f32, namewayd's extension): the token bucket's size.
    pub interest_burst: Option<u64>,
    /// CsPolicy (0x0f34, namewayd's extension): the memory tier's replacement policy.
    pub cs_policy: Option<String>,
    /// CsMemoryCapacity (0x0f36, namewayd's extension): the memory tier's bytes.
    pub cs_memory_capacity: Option<u64>,
    /// CsDiskCapacity (0x0f38, namewayd's extension): the disk tier's bytes.
    pub cs_disk_capacity: Option<u64>,
    /// SecurityLevel (0x0f3a, namewayd's extension): a level name (`security/set`).
    pub security_level: Option<String>,
    /// PeerKey (0x0f3c, namewayd's extension): a forwarder's public key, hexadecimal
    /// (`neighbours/trust`, `neighbours/untrust`).
    pub peer_key: Option<String>,
    /// SecureMode (0x0f3e, namewayd's extension): `per-prefix` or `link-wide` (`faces/create`).
    pub secure_mode: Option<String>,
}

/// python-ndn's order, which is also the encoding order.
fn rank(typ: u32) -> u8 {
    match typ {
        pkt::NAME => 1,
        types::FACE_ID => 2,
        types::URI => 3,
        types::LOCAL_URI => 4,
        types::ORIGIN => 5,
        types::COST => 6,
        types::CAPACITY => 7,
        types::COUNT => 8,
        types::BASE_CONGESTION_MARKING_INTERVAL => 9,
        types::DEFAULT_CONGESTION_THRESHOLD => 10,
        types::MTU => 11,
        types::FLAGS => 12,
        types::MASK => 13,
        types::STRATEGY => 14,
        types::EXPIRATION_PERIOD => 15,
        types::FACE_PERSISTENCY => 16,
        types::INTEREST_RATE_LIMIT => 17,
        types::INTEREST_BURST => 18,
        types::CS_POLICY => 19,
        types::CS_MEMORY_CAPACITY => 20,
        types::CS_DISK_CAPACITY => 21,
        types::SECURITY_LEVEL => 22,
        types::PEER_KEY => 23,
        types::SECURE_MODE => 24,
        _ => 0,
    }
}

/// ndn-cxx's encoding order.
fn rank_ndn_cxx(typ: u32) -> u8 {
    match typ {
        types::FLAGS => 9,
        types::MASK => 10,
        types::STRATEGY => 11,
        types::EXPIRATION_PERIOD => 12,
        types::FACE_PERSISTENCY => 13,
        types::BASE_CONGESTION_MARKING_INTERVAL => 14,
        types::DEFAULT_CONGESTION_THRESHOLD => 15,
        types::MTU => 16,
        other => rank(other),
    }
}

impl ControlParameters {
    /// Parameters with only a Name (what python-ndn sends to `rib/register`).
    pub fn with_name(name: Name) -> Self {
        Self {
            name: Some(name),
            ..Self::default()
        }
    }

    fn decode_element(wire: &Bytes, e: &Element<'_>) -> Result<Self, DecodeError> {
        let mut p = Self::default();
        let mut fields = Fields::either(e, rank, rank_ndn_cxx);
        while let Some(f) = fields.next()? {
            match f.typ {
                pkt::NAME => p.name = Some(codec::name(wire, &f)?),
                types::FACE_ID => p.face_id = Some(f.nni()?),
                types::URI => p.uri = Some(codec::string(&f)?),
                types::LOCAL_URI => p.local_uri = Some(codec::string(&f)?),
                types::ORIGIN => p.origin = Some(f.nni()?),
                types::COST => p.cost = Some(f.nni()?),
                types::CAPACITY => p.capacity = Some(f.nni()?),
                types::COUNT => p.count = Some(f.nni()?),
                types::BASE_CONGESTION_MARKING_INTERVAL => {
                    p.base_congestion_marking_interval = Some(f.nni()?);
                }
                types::DEFAULT_CONGESTION_THRESHOLD => {
                    p.default_congestion_threshold = Some(f.nni()?);
                }
                types::MTU => p.mtu = Some(f.nni()?),
                types::FLAGS => p.flags = Some(f.nni()?),
                types::MASK => p.mask = Some(f.nni()?),
                types::STRATEGY => p.strategy = Some(codec::strategy(wire, &f)?),
                types::EXPIRATION_PERIOD => p.expiration_period = Some(f.nni()?),
                types::INTEREST_RATE_LIMIT => p.interest_rate_limit = Some(f.nni()?),
                types::INTEREST_BURST => p.interest_burst = Some(f.nni()?),
                types::CS_POLICY => p.cs_policy = Some(codec::string(&f)?),
                types::CS_MEMORY_CAPACITY => p.cs_memory_capacity = Some(f.nni()?),
                types::CS_DISK_CAPACITY => p.cs_disk_capacity = Some(f.nni()?),
                types::SECURITY_LEVEL => p.security_level = Some(codec::string(&f)?),
                types::PEER_KEY => p.peer_key = Some(codec::string(&f)?),
                types::SECURE_MODE => p.secure_mode = Some(codec::string(&f)?),
                _ => p.face_persistency = Some(f.nni()?),
            }
        }
        Ok(p)
    }

    fn encode_value(&self, buf: &mut Vec<u8>) {
        if let Some(n) = &self.name {
            n.encode(buf);
        }
        codec::put_opt_nni(buf, types::FACE_ID, self.face_id);
        codec::put_opt_string(buf, types::URI, self.uri.as_deref());
        codec::put_opt_string(buf, types::LOCAL_URI, self.local_uri.as_deref());
        codec::put_opt_nni(buf, types::ORIGIN, self.origin);
        codec::put_opt_nni(buf, types::COST, self.cost);
        codec::put_opt_nni(buf, types::CAPACITY, self.capacity);
        codec::put_opt_nni(buf, types::COUNT, self.count);
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
        codec::put_opt_nni(buf, types::FLAGS, self.flags);
        codec::put_opt_nni(buf, types::MASK, self.mask);
        if let Some(s) = &self.strategy {
            codec::put_strategy(buf, types::STRATEGY, s);
        }
        codec::put_opt_nni(buf, types::EXPIRATION_PERIOD, self.expiration_period);
        codec::put_opt_nni(buf, types::FACE_PERSISTENCY, self.face_persistency);
        codec::put_opt_nni(buf, types::INTEREST_RATE_LIMIT, self.interest_rate_limit);
        codec::put_opt_nni(buf, types::INTEREST_BURST, self.interest_burst);
        codec::put_opt_string(buf, types::CS_POLICY, self.cs_policy.as_deref());
        codec::put_opt_nni(buf, types::CS_MEMORY_CAPACITY, self.cs_memory_capacity);
        codec::put_opt_nni(buf, types::CS_DISK_CAPACITY, self.cs_disk_capacity);
        codec::put_opt_string(buf, types::SECURITY_LEVEL, self.security_level.as_deref());
        codec::put_opt_string(buf, types::PEER_KEY, self.peer_key.as_deref());
        codec::put_opt_string(buf, types::SECURE_MODE, self.secure_mode.as_deref());
    }
}

tlv_codec!(
    ControlParameters,
    types::CONTROL_PARAMETERS,
    "ControlParameters"
);

/// ControlResponse (0x65): StatusCode, StatusText, then a body.
///
/// Encoding always writes StatusText (NDNts requires it). Give every response a
/// ControlParameters body, errors included: python-ndn crashes on a response without one
/// (docs/nfd-interop.md §5.2); [`ControlResponse::new`] does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ControlResponse {
    /// StatusCode (0x66); see [`super::status_code`]. ndn-cxx reads it as a 32-bit number.
    pub status_code: u32,
    /// StatusText (0x67).
    pub status_text: String,
    /// The elements after StatusText, as they are (usually one ControlParameters; empty when
    /// the response has no body). Must be well-formed TLV elements.
    pub body: Bytes,
}

impl ControlResponse {
    /// A response with a ControlParameters body.
    pub fn new(status_code: u32, status_text: impl Into<String>, body: &ControlParameters) -> Self {
        Self {
            status_code,
            status_text: status_text.into(),
            body: body.encode(),
        }
    }

    /// The body decoded as ControlParameters: `None` when the body is empty or its first
    /// element is of another type.
    ///
    /// # Errors
    /// A malformed ControlParameters, or elements after it.
    pub fn parameters(&self) -> Result<Option<ControlParameters>, DecodeError> {
        match Reader::new(&self.body).peek_type()? {
            Some(types::CONTROL_PARAMETERS) => ControlParameters::decode(&self.body).map(Some),
            _ => Ok(None),
        }
    }

    fn decode_element(wire: &Bytes, e: &Element<'_>) -> Result<Self, DecodeError> {
        let mut r = e.children();
        let code = r
            .expect(types::STATUS_CODE)
            .map_err(|err| err.within(e.typ))?;
        let status_code = u32::try_from(code.nni()?)
            .map_err(|_| code.error(ErrorKind::InvalidValue("StatusCode exceeds 32 bits")))?;
        let text = r
            .expect(types::STATUS_TEXT)
            .map_err(|err| err.within(e.typ))?;
        let status_text = codec::string(&text)?;
        let body_start = r.offset();
        while r.read()?.is_some() {}
        Ok(Self {
            status_code,
            status_text,
            body: slice_abs(wire, body_start..e.end(), body_start)?,
        })
    }

    fn encode_value(&self, buf: &mut Vec<u8>) {
        tlv::put_nni_tlv(buf, types::STATUS_CODE, u64::from(self.status_code));
        codec::put_string(buf, types::STATUS_TEXT, &self.status_text);
        buf.extend_from_slice(&self.body);
    }
}

tlv_codec!(ControlResponse, types::CONTROL_RESPONSE, "ControlResponse");
