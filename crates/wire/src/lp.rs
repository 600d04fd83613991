//! NDNLPv2: the [`LpPacket`] link-layer envelope (Nack, PitToken, fragmentation, local
//! fields), the fast-path [`Packet`] classifier, and NDNLPv2 fragmentation and reassembly
//! ([`fragment`], [`Reassembler`]).
//!
//= https://redmine.named-data.net/projects/nfd/wiki/NDNLPv2
//# LpPacket = LP-PACKET-TYPE TLV-LENGTH *LpHeaderField [Fragment]
//
// Acceptance rules follow ndn-cxx `lp::Packet::wireDecode` (lp/packet.cpp), which NFD uses:
// - header fields come in increasing TLV-TYPE order and Fragment comes last (ndn-cxx
//   `compareFieldSortOrder`); only Ack may repeat, and only back to back;
// - an unrecognized field may be ignored only if its TLV-TYPE is in 800..=959 and is a multiple
//   of 4 (`HEADER3_MIN..=HEADER3_MAX`, `type & 0x03 == 0`); any other unknown field rejects the
//   whole packet. Ignored fields still take part in the order check, as in ndn-cxx;
// - field values are checked as ndn-cxx's field decoders check them when NFD reads them:
//   Sequence, Ack and TxSequence are exactly 8 octets, PitToken is 1..=32 octets, Fragment is
//   not empty, NonDiscovery is empty, CachePolicy holds CachePolicyType 1, the first element of
//   a non-empty Nack is NackReason.
//
// RetryAfter (0x0390) is Nameway's own field: a hint on a NoRoute Nack of how long to wait
// before retrying. It is in the ignorable range, so NFD, ndn-cxx and python-ndn skip it.
//
// One deliberate difference: HopCount (0x54) is accepted and decoded. Upstream ndn-cxx does not
// know it and rejects the packet (84 is outside 800..=959); ndnSIM's ndn-cxx fork defines it
// (`HopCountTag = 84`, a NonNegativeInteger) and python-ndn ignores it. NDNts rejects it, so
// Nameway never emits it: `encode` leaves it out.

use core::fmt;

use bytes::{BufMut, Bytes, BytesMut};

use crate::error::{DecodeError, ErrorKind};
use crate::signature::slice_abs;
use crate::tlv::{self, types, Element};

mod reassembly;
mod security;

pub use reassembly::{fragment, Reassembler, ReassemblerConfig, ReassemblyCounters};
pub use security::{
    GroupSeal, LinkSecurity, SecurityHeader, SecurityLevel, UnknownLevel, LINK_HANDSHAKE_TYPE,
    LINK_SECURITY_GROUP_LEN, LINK_SECURITY_LEN, LINK_SECURITY_MAX_HEADER, LINK_SECURITY_TAG_LEN,
    LINK_SECURITY_TYPE,
};

/// Lowest TLV-TYPE of the 3-octet header field range (ndn-cxx `lp::tlv::HEADER3_MIN`).
pub const HEADER3_MIN: u32 = 800;
/// Highest TLV-TYPE of the 3-octet header field range (ndn-cxx `lp::tlv::HEADER3_MAX`).
pub const HEADER3_MAX: u32 = 959;
/// Shortest PitToken ndn-cxx accepts.
pub const PIT_TOKEN_MIN_LEN: usize = 1;
/// Longest PitToken ndn-cxx accepts.
pub const PIT_TOKEN_MAX_LEN: usize = 32;

/// Why an Interest was Nacked (NackReason, TLV-TYPE 0x0321).
///
/// Values other than the three NFD defines are kept as [`NackReason::Unknown`]; for severity
/// they count as [`NackReason::None`], as in ndn-cxx (`NackHeader::getReason` maps unknown codes
/// to `NONE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NackReason {
    /// 0: no reason given (also an empty Nack header).
    None,
    /// 50: the upstream link is congested.
    Congestion,
    /// 100: the upstream saw this Nonce before (a loop or a duplicate).
    Duplicate,
    /// 150: no route toward the name.
    NoRoute,
    /// Any other code, kept as received.
    Unknown(u64),
}

impl NackReason {
    /// The reason for a wire code.
    pub const fn from_code(code: u64) -> Self {
        match code {
            0 => Self::None,
            50 => Self::Congestion,
            100 => Self::Duplicate,
            150 => Self::NoRoute,
            other => Self::Unknown(other),
        }
    }

    /// The wire code.
    pub const fn code(self) -> u64 {
        match self {
            Self::None => 0,
            Self::Congestion => 50,
            Self::Duplicate => 100,
            Self::NoRoute => 150,
            Self::Unknown(code) => code,
        }
    }

    /// Whether `self` is less severe than `other`, exactly as ndn-cxx `lp::isLessSevere`:
    /// None (and any unknown code) is the most severe; otherwise the smaller code is the less
    /// severe (Congestion < Duplicate < NoRoute).
    ///
    /// NFD combines the Nacks of all upstreams into the least severe one.
    pub const fn is_less_severe(self, other: Self) -> bool {
        let (x, y) = (self.known_code(), other.known_code());
        match (x, y) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(x), Some(y)) => x < y,
        }
    }

    /// The less severe of the two reasons (`self` when neither is less severe).
    #[must_use]
    pub const fn least_severe(self, other: Self) -> Self {
        if other.is_less_severe(self) {
            other
        } else {
            self
        }
    }

    /// The code of a defined reason other than None, or `None`.
    const fn known_code(self) -> Option<u64> {
        match self {
            Self::None | Self::Unknown(_) => None,
            known => Some(known.code()),
        }
    }
}

impl fmt::Display for NackReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => f.write_str("None"),
            Self::Congestion => f.write_str("Congestion"),
            Self::Duplicate => f.write_str("Duplicate"),
            Self::NoRoute => f.write_str("NoRoute"),
            Self::Unknown(code) => write!(f, "Unknown({code})"),
        }
    }
}

/// CachePolicyType (TLV-TYPE 0x0335) inside a CachePolicy header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CachePolicyType {
    /// 1: the forwarder must not cache the Data.
    NoCache,
}

impl CachePolicyType {
    /// The wire code.
    pub const fn code(self) -> u64 {
        match self {
            Self::NoCache => 1,
        }
    }
}

/// An NDNLPv2 packet with every field, owned. Fields are listed in wire order.
///
/// [`LpPacket::default()`] is the IDLE packet `64 00`. Decoding shares the input buffer: the
/// Fragment, PitToken and PrefixAnnouncement are slices of it, not copies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LpPacket {
    /// Sequence (0x51, 8 octets): the sequence number of this fragment.
    pub sequence: Option<u64>,
    /// FragIndex (0x52): index of this fragment; absent means 0.
    pub frag_index: Option<u64>,
    /// FragCount (0x53): number of fragments; absent means 1.
    pub frag_count: Option<u64>,
    /// HopCount (0x54), from ndnSIM. Decoded but **never encoded**: NDNts rejects packets that
    /// carry it, and upstream NFD does not know it.
    pub hop_count: Option<u64>,
    /// PitToken (0x62, 1..=32 opaque octets).
    pub pit_token: Option<Bytes>,
    /// Nack (0x0320) with its NackReason; an empty Nack header decodes as
    /// [`NackReason::None`]. Encoding always writes NackReason, as ndn-cxx does.
    pub nack: Option<NackReason>,
    /// IncomingFaceId (0x032c), a local field.
    pub incoming_face_id: Option<u64>,
    /// NextHopFaceId (0x0330), a local field.
    pub next_hop_face_id: Option<u64>,
    /// CachePolicy (0x0334), a local field.
    pub cache_policy: Option<CachePolicyType>,
    /// CongestionMark (0x0340).
    pub congestion_mark: Option<u64>,
    /// Ack (0x0344, 8 octets each), repeatable.
    pub acks: Vec<u64>,
    /// TxSequence (0x0348, 8 octets).
    pub tx_sequence: Option<u64>,
    /// NonDiscovery (0x034c), an empty flag.
    pub non_discovery: bool,
    /// PrefixAnnouncement (0x0350): the whole inner Data TLV (`06 LL ...`), not decoded.
    pub prefix_announcement: Option<Bytes>,
    /// LinkSecurity (0x0385, Nameway, critical): the packet is encrypted hop by hop.
    pub link_security: Option<LinkSecurity>,
    /// LinkHandshake (0x0389, Nameway, critical): a key-agreement message between forwarders.
    pub link_handshake: Option<Bytes>,
    /// RetryAfter (0x0390, Nameway, ignorable): milliseconds a consumer should wait before
    /// sending the Nacked Interest again (a NoRoute Nack for a name whose route is being
    /// resolved). Peers that do not know it skip it.
    pub retry_after: Option<u64>,
    /// Fragment (0x50): a network-layer packet or a piece of one; never empty. `None` makes
    /// an IDLE (keep-alive or Ack-only) packet.
    pub fragment: Option<Bytes>,
}

impl LpPacket {
    /// An LpPacket carrying `fragment` (a whole network-layer packet) and nothing else.
    pub fn wrap(fragment: Bytes) -> Self {
        Self {
            fragment: Some(fragment),
            ..Self::default()
        }
    }

    /// A Nack in exactly NFD's format:
    /// `64 LL [62 PitToken] fd0320 LL { fd0321 LL <reason> } 50 LL <Interest>`.
    ///
    /// `interest_wire` should be the Interest as received from the downstream, unchanged, so
    /// that the application finds its pending entry. NackReason is always present (python-ndn
    /// takes a Nack without NackReason for an Interest).
    pub fn nack(reason: NackReason, interest_wire: Bytes, pit_token: Option<Bytes>) -> Self {
        Self {
            pit_token,
            nack: Some(reason),
            fragment: Some(interest_wire),
            ..Self::default()
        }
    }

    /// Whether this is an IDLE packet: no Fragment (NDNts keep-alive `64 00`, or Acks only).
    pub fn is_idle(&self) -> bool {
        self.fragment.is_none()
    }

    /// Whether this is one fragment of a larger packet: FragCount > 1 or FragIndex present.
    /// python-ndn drops such packets, so never send them to an application face.
    pub fn is_fragmented(&self) -> bool {
        self.frag_count.is_some_and(|c| c > 1) || self.frag_index.is_some()
    }

    /// Whether the packet carries a Nack header.
    pub fn is_nack(&self) -> bool {
        self.nack.is_some()
    }

    /// Decodes one whole LpPacket (`64 LL ...`).
    ///
    /// # Errors
    /// A malformed element, a packet over [`crate::MAX_PACKET_SIZE`], another top-level type,
    /// a field out of order or repeated, an unknown field that cannot be ignored, or a field
    /// value ndn-cxx would refuse (see the module documentation).
    pub fn decode(wire: &Bytes) -> Result<Self, DecodeError> {
        if wire.len() > tlv::MAX_PACKET_SIZE {
            return Err(DecodeError::in_element(
                ErrorKind::TooLarge,
                0,
                types::LP_PACKET,
            ));
        }
        let top = tlv::read_single(wire)?;
        if top.typ != types::LP_PACKET {
            return Err(top.error(ErrorKind::UnexpectedType {
                expected: types::LP_PACKET,
                found: top.typ,
            }));
        }
        Self::decode_element(wire, &top)
    }

    /// Decodes the LpPacket element `top`, read from `wire` (offsets are absolute in `wire`).
    fn decode_element(wire: &Bytes, top: &Element<'_>) -> Result<Self, DecodeError> {
        let mut pkt = Self::default();
        let mut r = top.children();
        let mut prev: Option<u32> = None;
        while let Some(e) = r.read()? {
            check_field_order(&e, prev)?;
            prev = Some(e.typ);
            pkt.decode_field(wire, &e)?;
        }
        Ok(pkt)
    }

    fn decode_field(&mut self, wire: &Bytes, e: &Element<'_>) -> Result<(), DecodeError> {
        match e.typ {
            types::SEQUENCE => self.sequence = Some(fixed_u64(e)?),
            types::FRAG_INDEX => self.frag_index = Some(e.nni()?),
            types::FRAG_COUNT => self.frag_count = Some(e.nni()?),
            types::HOP_COUNT => self.hop_count = Some(e.nni()?),
            types::PIT_TOKEN => {
                if !(PIT_TOKEN_MIN_LEN..=PIT_TOKEN_MAX_LEN).contains(&e.value.len()) {
                    return Err(e.error(ErrorKind::InvalidValue("PitToken is not 1..=32 octets")));
                }
                self.pit_token = Some(slice_abs(wire, e.value_range(), e.start)?);
            }
            types::NACK => self.nack = Some(decode_nack(e)?),
            types::INCOMING_FACE_ID => self.incoming_face_id = Some(e.nni()?),
            types::NEXT_HOP_FACE_ID => self.next_hop_face_id = Some(e.nni()?),
            types::CACHE_POLICY => self.cache_policy = Some(decode_cache_policy(e)?),
            types::CONGESTION_MARK => self.congestion_mark = Some(e.nni()?),
            types::ACK => self.acks.push(fixed_u64(e)?),
            types::TX_SEQUENCE => self.tx_sequence = Some(fixed_u64(e)?),
            types::NON_DISCOVERY => {
                if !e.value.is_empty() {
                    return Err(e.error(ErrorKind::InvalidValue("NonDiscovery is not empty")));
                }
                self.non_discovery = true;
            }
            types::PREFIX_ANNOUNCEMENT => {
                let inner = tlv::read_single(e.value).map_err(|err| err.shifted(e.value_start))?;
                if inner.typ != types::DATA {
                    return Err(DecodeError::in_element(
                        ErrorKind::UnexpectedType {
                            expected: types::DATA,
                            found: inner.typ,
                        },
                        e.value_start,
                        types::PREFIX_ANNOUNCEMENT,
                    ));
                }
                self.prefix_announcement = Some(slice_abs(wire, e.value_range(), e.start)?);
            }
            types::LINK_SECURITY => self.link_security = Some(LinkSecurity::decode(e)?),
            types::LINK_HANDSHAKE => {
                self.link_handshake = Some(slice_abs(wire, e.value_range(), e.start)?);
            }
            types::RETRY_AFTER => self.retry_after = Some(e.nni()?),
            types::FRAGMENT => {
                if e.value.is_empty() {
                    return Err(e.error(ErrorKind::InvalidValue("Fragment is empty")));
                }
                self.fragment = Some(slice_abs(wire, e.value_range(), e.start)?);
            }
            // An ignorable unknown field (checked by `check_field_order`).
            _ => {}
        }
        Ok(())
    }

    /// Size of the encoded packet.
    pub fn encoded_len(&self) -> usize {
        tlv::tlv_len(types::LP_PACKET, self.value_len())
    }

    /// Encodes the packet: header fields in increasing TLV-TYPE order, Fragment last.
    /// HopCount is never written. Unknown fields seen while decoding are not kept.
    pub fn encode(&self) -> Bytes {
        let len = self.value_len();
        let mut buf = BytesMut::with_capacity(tlv::tlv_len(types::LP_PACKET, len));
        tlv::put_header(&mut buf, types::LP_PACKET, len);
        self.encode_value(&mut buf);
        buf.freeze()
    }

    fn value_len(&self) -> usize {
        let mut n = 0;
        if self.sequence.is_some() {
            n += tlv::tlv_len(types::SEQUENCE, 8);
        }
        n += opt_nni_len(types::FRAG_INDEX, self.frag_index);
        n += opt_nni_len(types::FRAG_COUNT, self.frag_count);
        if let Some(t) = &self.pit_token {
            n += tlv::tlv_len(types::PIT_TOKEN, t.len());
        }
        if let Some(reason) = self.nack {
            n += tlv::tlv_len(types::NACK, nack_value_len(reason));
        }
        n += opt_nni_len(types::INCOMING_FACE_ID, self.incoming_face_id);
        n += opt_nni_len(types::NEXT_HOP_FACE_ID, self.next_hop_face_id);
        if let Some(p) = self.cache_policy {
            n += tlv::tlv_len(
                types::CACHE_POLICY,
                tlv::nni_tlv_len(types::CACHE_POLICY_TYPE, p.code()),
            );
        }
        n += opt_nni_len(types::CONGESTION_MARK, self.congestion_mark);
        n += self.acks.len() * tlv::tlv_len(types::ACK, 8);
        if self.tx_sequence.is_some() {
            n += tlv::tlv_len(types::TX_SEQUENCE, 8);
        }
        if self.non_discovery {
            n += tlv::tlv_len(types::NON_DISCOVERY, 0);
        }
        if let Some(pa) = &self.prefix_announcement {
            n += tlv::tlv_len(types::PREFIX_ANNOUNCEMENT, pa.len());
        }
        if let Some(sec) = &self.link_security {
            n += tlv::tlv_len(types::LINK_SECURITY, sec.value_len());
        }
        if let Some(h) = &self.link_handshake {
            n += tlv::tlv_len(types::LINK_HANDSHAKE, h.len());
        }
        n += opt_nni_len(types::RETRY_AFTER, self.retry_after);
        if let Some(f) = &self.fragment {
            n += tlv::tlv_len(types::FRAGMENT, f.len());
        }
        n
    }

    fn encode_value(&self, buf: &mut impl BufMut) {
        if let Some(s) = self.sequence {
            tlv::put_tlv(buf, types::SEQUENCE, &s.to_be_bytes());
        }
        put_opt_nni(buf, types::FRAG_INDEX, self.frag_index);
        put_opt_nni(buf, types::FRAG_COUNT, self.frag_count);
        if let Some(t) = &self.pit_token {
            tlv::put_tlv(buf, types::PIT_TOKEN, t);
        }
        if let Some(reason) = self.nack {
            tlv::put_header(buf, types::NACK, nack_value_len(reason));
            tlv::put_nni_tlv(buf, types::NACK_REASON, reason.code());
        }
        put_opt_nni(buf, types::INCOMING_FACE_ID, self.incoming_face_id);
        put_opt_nni(buf, types::NEXT_HOP_FACE_ID, self.next_hop_face_id);
        if let Some(p) = self.cache_policy {
            let inner = tlv::nni_tlv_len(types::CACHE_POLICY_TYPE, p.code());
            tlv::put_header(buf, types::CACHE_POLICY, inner);
            tlv::put_nni_tlv(buf, types::CACHE_POLICY_TYPE, p.code());
        }
        put_opt_nni(buf, types::CONGESTION_MARK, self.congestion_mark);
        for a in &self.acks {
            tlv::put_tlv(buf, types::ACK, &a.to_be_bytes());
        }
        if let Some(s) = self.tx_sequence {
            tlv::put_tlv(buf, types::TX_SEQUENCE, &s.to_be_bytes());
        }
        if self.non_discovery {
            tlv::put_header(buf, types::NON_DISCOVERY, 0);
        }
        if let Some(pa) = &self.prefix_announcement {
            tlv::put_tlv(buf, types::PREFIX_ANNOUNCEMENT, pa);
        }
        if let Some(sec) = &self.link_security {
            tlv::put_header(buf, types::LINK_SECURITY, sec.value_len());
            sec.put_value(buf);
        }
        if let Some(h) = &self.link_handshake {
            tlv::put_tlv(buf, types::LINK_HANDSHAKE, h);
        }
        put_opt_nni(buf, types::RETRY_AFTER, self.retry_after);
        if let Some(f) = &self.fragment {
            tlv::put_tlv(buf, types::FRAGMENT, f);
        }
    }
}

/// Whether Nameway decodes this LpPacket field.
const fn is_known_field(typ: u32) -> bool {
    matches!(
        typ,
        types::FRAGMENT
            | types::SEQUENCE
            | types::FRAG_INDEX
            | types::FRAG_COUNT
            | types::HOP_COUNT
            | types::PIT_TOKEN
            | types::NACK
            | types::INCOMING_FACE_ID
            | types::NEXT_HOP_FACE_ID
            | types::CACHE_POLICY
            | types::CONGESTION_MARK
            | types::ACK
            | types::TX_SEQUENCE
            | types::NON_DISCOVERY
            | types::PREFIX_ANNOUNCEMENT
            | types::LINK_SECURITY
            | types::LINK_HANDSHAKE
            | types::RETRY_AFTER
    )
}

/// Whether an unknown LpPacket field may be skipped (ndn-cxx `FieldInfo::canIgnore`).
pub const fn is_ignorable_field(typ: u32) -> bool {
    HEADER3_MIN <= typ && typ <= HEADER3_MAX && typ & 0x03 == 0
}

/// Sort key of a field (ndn-cxx `compareFieldSortOrder`): headers by TLV-TYPE, Fragment last.
const fn sort_key(typ: u32) -> (u8, u32) {
    if typ == types::FRAGMENT {
        (2, typ)
    } else {
        (1, typ)
    }
}

/// Checks that field `e` may follow the field of type `prev` (ndn-cxx `Packet::wireDecode`).
fn check_field_order(e: &Element<'_>, prev: Option<u32>) -> Result<(), DecodeError> {
    if !is_known_field(e.typ) && !is_ignorable_field(e.typ) {
        return Err(e.error(ErrorKind::UnrecognizedCritical { typ: e.typ }));
    }
    let Some(prev) = prev else {
        return Ok(());
    };
    let repeat_ok = e.typ == prev && e.typ == types::ACK;
    if !repeat_ok && sort_key(prev) >= sort_key(e.typ) {
        return Err(e.error(ErrorKind::OutOfOrder { typ: e.typ }));
    }
    Ok(())
}

/// An 8-octet big-endian number (Sequence, Ack, TxSequence).
fn fixed_u64(e: &Element<'_>) -> Result<u64, DecodeError> {
    let bytes: [u8; 8] = e
        .value
        .try_into()
        .map_err(|_| e.error(ErrorKind::InvalidValue("sequence number is not 8 octets")))?;
    Ok(u64::from_be_bytes(bytes))
}

/// Nack header: empty, or NackReason first; anything after it is ignored (ndn-cxx).
fn decode_nack(e: &Element<'_>) -> Result<NackReason, DecodeError> {
    let mut r = e.children();
    let reason = match r.read()? {
        None => NackReason::None,
        Some(first) if first.typ == types::NACK_REASON => NackReason::from_code(first.nni()?),
        Some(first) => {
            return Err(first.error(ErrorKind::UnexpectedType {
                expected: types::NACK_REASON,
                found: first.typ,
            }))
        }
    };
    while r.read()?.is_some() {}
    Ok(reason)
}

/// CachePolicy header: CachePolicyType first, and it must be a known policy (ndn-cxx).
fn decode_cache_policy(e: &Element<'_>) -> Result<CachePolicyType, DecodeError> {
    let mut r = e.children();
    let first = r.read()?.ok_or_else(|| {
        DecodeError::in_element(
            ErrorKind::Missing {
                typ: types::CACHE_POLICY_TYPE,
            },
            e.start,
            types::CACHE_POLICY,
        )
    })?;
    if first.typ != types::CACHE_POLICY_TYPE {
        return Err(first.error(ErrorKind::UnexpectedType {
            expected: types::CACHE_POLICY_TYPE,
            found: first.typ,
        }));
    }
    let policy = match first.nni()? {
        1 => CachePolicyType::NoCache,
        _ => return Err(first.error(ErrorKind::InvalidValue("unknown CachePolicyType"))),
    };
    while r.read()?.is_some() {}
    Ok(policy)
}

fn nack_value_len(reason: NackReason) -> usize {
    tlv::nni_tlv_len(types::NACK_REASON, reason.code())
}

fn opt_nni_len(typ: u32, n: Option<u64>) -> usize {
    n.map_or(0, |n| tlv::nni_tlv_len(typ, n))
}

fn put_opt_nni(buf: &mut impl BufMut, typ: u32, n: Option<u64>) {
    if let Some(n) = n {
        tlv::put_nni_tlv(buf, typ, n);
    }
}

/// A top-level packet as received on a face, sorted by its outer TLV-TYPE without decoding
/// the network-layer packet (the fast path's first step).
// Not boxed: NDNts wraps every Interest in an LpPacket, and a box would cost an allocation per
// packet on the fast path, where the value is matched and moved once.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Packet {
    /// A bare Interest (`05 LL ...`): the whole TLV, not yet decoded.
    Interest(Bytes),
    /// A bare Data (`06 LL ...`): the whole TLV, not yet decoded.
    Data(Bytes),
    /// An LpPacket, with its header decoded and its Fragment sliced from the input.
    Lp(LpPacket),
}

impl Packet {
    /// Sorts one received packet. Checks the outer TLV (well formed, spanning all of `wire`)
    /// and the [`crate::MAX_PACKET_SIZE`] limit; decodes the LpPacket header but not the
    /// network-layer packet inside, which is left to [`crate::InterestView`] and
    /// [`crate::DataView`]. No bytes are copied.
    ///
    /// # Errors
    /// [`ErrorKind::TooLarge`], a malformed outer TLV, trailing bytes,
    /// [`ErrorKind::UnrecognizedCritical`] for any other top-level TLV-TYPE (NFD and
    /// python-ndn drop those), or an LpPacket error as in [`LpPacket::decode`].
    pub fn classify(wire: Bytes) -> Result<Self, DecodeError> {
        if wire.len() > tlv::MAX_PACKET_SIZE {
            return Err(DecodeError::new(ErrorKind::TooLarge, 0));
        }
        let top = tlv::read_single(&wire)?;
        match top.typ {
            types::INTEREST => Ok(Self::Interest(wire)),
            types::DATA => Ok(Self::Data(wire)),
            types::LP_PACKET => LpPacket::decode_element(&wire, &top).map(Self::Lp),
            typ => Err(top.error(ErrorKind::UnrecognizedCritical { typ })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Bytes {
        Bytes::from(hex::decode(s.replace(' ', "")).unwrap())
    }

    #[test]
    fn link_security_fields_round_trip_in_order() {
        let lp = LpPacket {
            pit_token: Some(Bytes::from_static(b"tok")),
            link_security: Some(LinkSecurity {
                level: SecurityLevel::XForro14Poly1305,
                whole_packet: true,
                key_id: 7,
                counter: 0x0102_0304_0506_0708,
                tag: Some([0xaa; 16]),
                group: None,
            }),
            fragment: Some(hex("0603 070161")),
            ..LpPacket::default()
        };
        let wire = lp.encode();
        assert_eq!(
            &wire[..],
            &hex("642e 6203746f6b fd0385 1e 0501 00000007 0102030405060708 \
                 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 5005 0603070161")[..]
        );
        assert_eq!(LpPacket::decode(&wire).unwrap(), lp);
        let hs = LpPacket {
            link_handshake: Some(Bytes::from_static(b"\x01noise")),
            ..LpPacket::default()
        };
        assert_eq!(LpPacket::decode(&hs.encode()).unwrap(), hs);
        // A bad level, an unknown flag and a short value are refused.
        for bad in [
            "6411 fd0385 0e 0700 00000007 0102030405060708",
            "6411 fd0385 0e 0402 00000007 0102030405060708",
            "6410 fd0385 0d 0400 00000007 01020304050607",
            "6411 fd0385 0e 0000 00000007 0102030405060708",
            // an AEAD level without its tag, and a stream level with one
            "6411 fd0385 0e 0400 00000007 0102030405060708",
            "6421 fd0385 1e 0200 00000007 0102030405060708 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        ] {
            assert!(LpPacket::decode(&hex(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn severity_matches_ndn_cxx() {
        use NackReason::*;
        assert!(Congestion.is_less_severe(Duplicate));
        assert!(Duplicate.is_less_severe(NoRoute));
        assert!(NoRoute.is_less_severe(None));
        assert!(!None.is_less_severe(NoRoute));
        assert!(!None.is_less_severe(None));
        assert!(!NoRoute.is_less_severe(NoRoute));
        assert!(Congestion.is_less_severe(Unknown(7)));
        assert!(!Unknown(7).is_less_severe(None));
        assert_eq!(NoRoute.least_severe(Congestion), Congestion);
        assert_eq!(None.least_severe(Duplicate), Duplicate);
        assert_eq!(None.least_severe(Unknown(3)), None);
    }

    #[test]
    fn codes_round_trip() {
        for code in [0, 1, 50, 100, 150, 151, u64::MAX] {
            assert_eq!(NackReason::from_code(code).code(), code);
        }
    }

    #[test]
    fn ignorable_rule() {
        assert!(is_ignorable_field(800));
        assert!(is_ignorable_field(0x0360));
        assert!(is_ignorable_field(956));
        assert!(!is_ignorable_field(959));
        assert!(!is_ignorable_field(960));
        assert!(!is_ignorable_field(0x0321));
        assert!(!is_ignorable_field(0x0362));
        assert!(!is_ignorable_field(796));
    }

    #[test]
    fn classify_sorts_by_outer_type() {
        let interest = hex("0505 0703 080161");
        assert_eq!(
            Packet::classify(interest.clone()).unwrap(),
            Packet::Interest(interest)
        );
        let data = hex("0603 0701 00");
        assert!(matches!(Packet::classify(data).unwrap(), Packet::Data(_)));
        let idle = hex("6400");
        assert_eq!(
            Packet::classify(idle).unwrap(),
            Packet::Lp(LpPacket::default())
        );
        let err = Packet::classify(hex("0800")).unwrap_err();
        assert_eq!(err.kind, ErrorKind::UnrecognizedCritical { typ: 8 });
        let err = Packet::classify(hex("0500 00")).unwrap_err();
        assert_eq!(err.kind, ErrorKind::TrailingBytes);
    }

    #[test]
    fn fragment_is_zero_copy() {
        let wire = hex("6407 5005 0503 070100");
        let pkt = LpPacket::decode(&wire).unwrap();
        let frag = pkt.fragment.unwrap();
        assert_eq!(&frag[..], &wire[4..]);
        assert_eq!(frag.as_ptr(), wire[4..].as_ptr());
    }
}
