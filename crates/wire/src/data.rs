//! Data packets: the owned [`Data`] for building and full decoding, and the checked
//! [`DataView`] for the forwarding path (name, freshness, implicit digest, no copies).
//!
//= https://docs.named-data.net/NDN-packet-spec/0.3/data.html
//# Data = DATA-TYPE TLV-LENGTH Name [MetaInfo] [Content] DataSignature

use core::ops::Range;

use bytes::{BufMut, Bytes, BytesMut};
use sha2::{Digest, Sha256};

use crate::error::{DecodeError, ErrorKind};
use crate::name::{self, Component, ComponentEnds, Name};
use crate::signature::{slice_abs, SignError, SignatureInfo, Signer, Verifier, VerifyError};
use crate::tlv::{self, types, Element, Reader, Span};

/// ContentType values.
pub mod content_type {
    /// BLOB: the payload.
    pub const BLOB: u64 = 0;
    /// LINK: a list of delegation names.
    pub const LINK: u64 = 1;
    /// KEY: a public key or certificate.
    pub const KEY: u64 = 2;
    /// NACK: an application-level negative answer.
    pub const NACK: u64 = 3;
    /// PREFIX_ANN: a prefix announcement.
    pub const PREFIX_ANN: u64 = 5;
}

/// MetaInfo.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MetaInfo {
    /// ContentType; absent means BLOB.
    pub content_type: Option<u64>,
    /// FreshnessPeriod in milliseconds; absent means 0 (never fresh).
    pub freshness_period: Option<u64>,
    /// FinalBlockId: the last component of the last segment's name.
    pub final_block_id: Option<Component>,
}

/// A Data packet with every field, owned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Data {
    /// Name.
    pub name: Name,
    /// MetaInfo; `None` when the element is absent.
    pub meta_info: Option<MetaInfo>,
    /// Content; `None` when the element is absent (distinct from empty).
    pub content: Option<Bytes>,
    /// SignatureInfo.
    pub signature_info: SignatureInfo,
    /// SignatureValue.
    pub signature_value: Bytes,
}

/// Positions of every field of a Data, found in one checked pass.
struct Fields {
    /// Where the Name's TLV-VALUE starts, and its component ends (the caller, which owns
    /// the packet, builds the name so that it shares the packet's handle).
    name_start: usize,
    name_ends: ComponentEnds,
    meta_info: Option<Meta>,
    content: Option<Range<usize>>,
    signature_info: Range<usize>,
    signature_value: Range<usize>,
    /// First byte of Name to last byte of SignatureInfo.
    signed: Range<usize>,
}

fn rank(typ: u32) -> u8 {
    match typ {
        types::NAME => 1,
        types::META_INFO => 2,
        types::CONTENT => 3,
        types::SIGNATURE_INFO => 4,
        types::SIGNATURE_VALUE => 5,
        _ => 0,
    }
}

impl Fields {
    #[inline]
    fn parse(wire: &Bytes) -> Result<Self, DecodeError> {
        if wire.len() > tlv::MAX_PACKET_SIZE {
            return Err(DecodeError::in_element(ErrorKind::TooLarge, 0, types::DATA));
        }
        let top = tlv::read_single(wire)?;
        if top.typ != types::DATA {
            return Err(top.error(ErrorKind::UnexpectedType {
                expected: types::DATA,
                found: top.typ,
            }));
        }
        let mut r = top.children();
        let name_el = r.expect(types::NAME).map_err(|e| e.within(types::DATA))?;
        let mut f = Fields {
            name_start: name_el.value_start,
            name_ends: Name::scan_value(name_el.value, name_el.value_start)?.0,
            meta_info: None,
            content: None,
            signature_info: 0..0,
            signature_value: 0..0,
            signed: name_el.start..name_el.start,
        };
        let mut last = 1;
        while let Some(e) = r.read_ranked(rank, &mut last)? {
            match e.typ {
                types::META_INFO => f.meta_info = Some(Meta::parse(e.value, || e)?),
                types::CONTENT => f.content = Some(e.value_range()),
                types::SIGNATURE_INFO => {
                    // Check it now so that accessors cannot fail later.
                    SignatureInfo::check(&e, wire)?;
                    f.signature_info = e.range();
                    f.signed.end = e.end();
                }
                _ => {
                    if f.signed.end == name_el.start {
                        return Err(DecodeError::in_element(
                            ErrorKind::Missing {
                                typ: types::SIGNATURE_INFO,
                            },
                            e.start,
                            types::DATA,
                        ));
                    }
                    f.signature_value = e.value_range();
                }
            }
        }
        if last < 4 {
            return Err(DecodeError::in_element(
                ErrorKind::Missing {
                    typ: types::SIGNATURE_INFO,
                },
                r.offset(),
                types::DATA,
            ));
        }
        if last < 5 {
            return Err(DecodeError::in_element(
                ErrorKind::Missing {
                    typ: types::SIGNATURE_VALUE,
                },
                r.offset(),
                types::DATA,
            ));
        }
        Ok(f)
    }
}

/// The fields of a MetaInfo.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Meta {
    content_type: Option<u64>,
    freshness_period: Option<u64>,
    final_block_id: Option<Range<usize>>,
}

impl Meta {
    /// Reads and checks a MetaInfo whose TLV-VALUE is `value`; `element` gives the whole
    /// element, for the walk only (built for every packet, it cost 6 instructions).
    #[inline(always)]
    fn parse<'a>(
        value: &'a [u8],
        element: impl FnOnce() -> Element<'a>,
    ) -> Result<Self, DecodeError> {
        match Self::freshness_only(value) {
            Some(p) => Ok(Self {
                freshness_period: Some(p),
                ..Self::default()
            }),
            None => Self::walk(&element()),
        }
    }

    /// The FreshnessPeriod of a MetaInfo value holding only a FreshnessPeriod in one-octet
    /// TYPE and LENGTH, which the general walk accepts exactly when its value is a
    /// NonNegativeInteger; `None` for any other value, left to the walk.
    #[inline(always)]
    fn freshness_only(value: &[u8]) -> Option<u64> {
        match *value {
            [0x19, l, ref value @ ..] if usize::from(l) == value.len() => tlv::read_nni(value).ok(),
            _ => None,
        }
    }

    #[inline(never)]
    fn walk(e: &Element<'_>) -> Result<Self, DecodeError> {
        let mut meta = Self::default();
        let mut r = e.children();
        let mut last = 0;
        let mrank = |typ| match typ {
            types::CONTENT_TYPE => 1,
            types::FRESHNESS_PERIOD => 2,
            types::FINAL_BLOCK_ID => 3,
            _ => 0,
        };
        while let Some(m) = r.read_ranked(mrank, &mut last)? {
            match m.typ {
                types::CONTENT_TYPE => meta.content_type = Some(m.nni()?),
                types::FRESHNESS_PERIOD => meta.freshness_period = Some(m.nni()?),
                _ => {
                    let c = tlv::read_single(m.value).map_err(|err| err.shifted(m.value_start))?;
                    if !(1..=0xffff).contains(&c.typ) {
                        return Err(m.error(ErrorKind::InvalidValue("FinalBlockId component type")));
                    }
                    meta.final_block_id = Some(m.value_range());
                }
            }
        }
        Ok(meta)
    }
}

fn component_at(wire: &Bytes, range: Range<usize>) -> Option<Component> {
    let bytes = wire.get(range.clone())?;
    let c = tlv::read_single(bytes).ok()?;
    Some(Component {
        typ: c.typ,
        value: wire.slice(range.start + (c.value_start)..range.end),
    })
}

impl Data {
    /// A Data named `name` with `content`, no MetaInfo, and an empty DigestSha256 signature
    /// slot (call [`Data::sign`] before sending).
    pub fn new(name: Name, content: impl Into<Bytes>) -> Self {
        Self {
            name,
            content: Some(content.into()),
            ..Self::default()
        }
    }

    /// Decodes and checks a Data packet.
    ///
    /// # Errors
    /// Any malformed or misplaced element, missing SignatureInfo or SignatureValue.
    pub fn decode(wire: &Bytes) -> Result<Self, DecodeError> {
        let f = Fields::parse(wire)?;
        let si_bytes = wire.get(f.signature_info.clone()).unwrap_or_default();
        let si_el = Reader::with_base(si_bytes, f.signature_info.start).read_element()?;
        let meta_info = f.meta_info.as_ref().map(|m| MetaInfo {
            content_type: m.content_type,
            freshness_period: m.freshness_period,
            final_block_id: m.final_block_id.clone().and_then(|r| component_at(wire, r)),
        });
        Ok(Self {
            meta_info,
            content: f
                .content
                .clone()
                .map(|r| slice_abs(wire, r, 0))
                .transpose()?,
            signature_info: SignatureInfo::decode(&si_el, wire)?,
            signature_value: slice_abs(wire, f.signature_value.clone(), 0)?,
            name: Name::from_parts(wire.clone(), f.name_start, f.name_ends),
        })
    }

    fn meta_info_len(m: &MetaInfo) -> usize {
        let mut n = 0;
        if let Some(t) = m.content_type {
            n += tlv::nni_tlv_len(types::CONTENT_TYPE, t);
        }
        if let Some(p) = m.freshness_period {
            n += tlv::nni_tlv_len(types::FRESHNESS_PERIOD, p);
        }
        if let Some(c) = &m.final_block_id {
            n += tlv::tlv_len(types::FINAL_BLOCK_ID, tlv::tlv_len(c.typ, c.value.len()));
        }
        n
    }

    /// Size of the signed portion (Name through SignatureInfo).
    fn signed_len(&self) -> usize {
        let mut n = self.name.encoded_len();
        if let Some(m) = &self.meta_info {
            n += tlv::tlv_len(types::META_INFO, Self::meta_info_len(m));
        }
        if let Some(c) = &self.content {
            n += tlv::tlv_len(types::CONTENT, c.len());
        }
        n + self.signature_info.encoded_len(types::SIGNATURE_INFO)
    }

    fn encode_signed_portion(&self, buf: &mut impl BufMut) {
        self.name.encode(buf);
        if let Some(m) = &self.meta_info {
            tlv::put_header(buf, types::META_INFO, Self::meta_info_len(m));
            if let Some(t) = m.content_type {
                tlv::put_nni_tlv(buf, types::CONTENT_TYPE, t);
            }
            if let Some(p) = m.freshness_period {
                tlv::put_nni_tlv(buf, types::FRESHNESS_PERIOD, p);
            }
            if let Some(c) = &m.final_block_id {
                tlv::put_header(
                    buf,
                    types::FINAL_BLOCK_ID,
                    tlv::tlv_len(c.typ, c.value.len()),
                );
                tlv::put_tlv(buf, c.typ, &c.value);
            }
        }
        if let Some(c) = &self.content {
            tlv::put_tlv(buf, types::CONTENT, c);
        }
        self.signature_info.encode(types::SIGNATURE_INFO, buf);
    }

    /// Encodes the packet with its current SignatureInfo and SignatureValue.
    pub fn encode(&self) -> Bytes {
        let body =
            self.signed_len() + tlv::tlv_len(types::SIGNATURE_VALUE, self.signature_value.len());
        let mut buf = BytesMut::with_capacity(tlv::tlv_len(types::DATA, body));
        tlv::put_header(&mut buf, types::DATA, body);
        self.encode_signed_portion(&mut buf);
        tlv::put_tlv(&mut buf, types::SIGNATURE_VALUE, &self.signature_value);
        buf.freeze()
    }

    /// Signs the packet: sets SignatureType and KeyLocator from `signer` (keeping any other
    /// SignatureInfo fields) and computes SignatureValue over Name through SignatureInfo.
    ///
    /// # Errors
    /// [`SignError`] from the signer.
    pub fn sign(&mut self, signer: &dyn Signer) -> Result<(), SignError> {
        self.signature_info.signature_type = signer.signature_type();
        self.signature_info.key_locator = signer.key_locator();
        let mut portion = Vec::with_capacity(self.signed_len());
        self.encode_signed_portion(&mut portion);
        self.signature_value = Bytes::from(signer.sign(&[&portion])?);
        Ok(())
    }

    /// Verifies the SignatureValue with `verifier`.
    ///
    /// # Errors
    /// The verifier's error.
    pub fn verify(&self, verifier: &dyn Verifier) -> Result<(), VerifyError> {
        let mut portion = Vec::with_capacity(self.signed_len());
        self.encode_signed_portion(&mut portion);
        verifier.verify(
            self.signature_info.signature_type,
            &[&portion],
            &self.signature_value,
        )
    }

    /// FreshnessPeriod in milliseconds (0 when absent).
    pub fn freshness_period(&self) -> u64 {
        self.meta_info
            .as_ref()
            .and_then(|m| m.freshness_period)
            .unwrap_or(0)
    }
}

/// A Data of the shape nearly every forwarded Data has, read in one straight pass: a Name
/// of at most 16 components that [`name::scan_simple`] takes whole, then any MetaInfo, then
/// any Content, then SignatureInfo and SignatureValue, and nothing else; every element with
/// a one-octet TYPE and a one- or three-octet LENGTH.
///
/// The general parser reads such a packet element by element in the same order with the same
/// reader, so the fast path finds the same fields, and its errors are the general parser's:
/// the MetaInfo and the SignatureInfo are checked by the same functions, at the same point of
/// the packet. Anything else is left to the general parser. A test compares the two on
/// corrupted and truncated packets.
struct Simple {
    name_start: usize,
    name_len: usize,
    components: usize,
    meta: Meta,
    content: Span,
    signature_info: Span,
    signature_value: Span,
    signed: Span,
}

impl Simple {
    /// The fields of `wire` when it has the simple shape, with the component ends in `ends`;
    /// `Ok(None)` for another shape.
    #[inline(always)]
    fn parse(wire: &Bytes, ends: &mut [u16; 16]) -> Result<Option<Self>, DecodeError> {
        if wire.len() > tlv::MAX_PACKET_SIZE {
            return Ok(None);
        }
        let Some((value, [])) = tlv::split_simple(wire, types::DATA as u8) else {
            return Ok(None);
        };
        // Offsets in the packet, from what is left of it; they fit 16 bits (MAX_PACKET_SIZE).
        let at = |rest: &[u8]| wire.len() - rest.len();
        let signed_start = at(value);
        let Some((name, mut rest)) = tlv::split_simple(value, types::NAME as u8) else {
            return Ok(None);
        };
        let (components @ 0..=16, []) = name::scan_simple(name, ends) else {
            return Ok(None);
        };
        let name_start = at(rest) - name.len();
        let mut meta = Meta::default();
        if let Some((value, tail)) = tlv::split_simple(rest, types::META_INFO as u8) {
            meta = Meta::parse(value, || {
                element(types::META_INFO, value, at(rest), at(tail))
            })?;
            rest = tail;
        }
        let mut content = Span::NONE;
        if let Some((value, tail)) = tlv::split_simple(rest, types::CONTENT as u8) {
            content = Span::of(at(tail) - value.len()..at(tail));
            rest = tail;
        }
        let Some((info, tail)) = tlv::split_simple(rest, types::SIGNATURE_INFO as u8) else {
            return Ok(None);
        };
        // `check`'s own fast case, tested here so that the element is built in memory only
        // for the walk (through `check` it was built for every packet: 18 instructions).
        if !SignatureInfo::is_simple(info) {
            let e = element(types::SIGNATURE_INFO, info, at(rest), at(tail));
            SignatureInfo::check(&e, wire)?;
        }
        let signature_info = Span::of(at(rest)..at(tail));
        let Some((value, [])) = tlv::split_simple(tail, types::SIGNATURE_VALUE as u8) else {
            return Ok(None);
        };
        Ok(Some(Self {
            name_start,
            name_len: name.len(),
            components,
            meta,
            content,
            signature_info,
            signature_value: Span::of(wire.len() - value.len()..wire.len()),
            signed: Span::of(signed_start..at(tail)),
        }))
    }
}

/// The element of type `typ` and TLV-VALUE `value` that spans `start..end` of the packet.
fn element(typ: u32, value: &[u8], start: usize, end: usize) -> Element<'_> {
    Element {
        typ,
        value,
        start,
        value_start: end - value.len(),
    }
}

/// A checked, zero-copy view of a Data packet for the forwarding path.
#[derive(Clone, Debug)]
pub struct DataView {
    /// The Name, over the whole packet: [`DataView::wire`] is its backing buffer.
    name: Name,
    /// ContentType, BLOB when absent.
    content_type: u64,
    /// FreshnessPeriod, 0 when absent.
    freshness_period: u64,
    final_block_id: Span,
    content: Span,
    signature_info: Span,
    signature_value: Span,
    signed: Span,
}

impl DataView {
    /// Checks `wire` (one whole Data TLV) and records where its fields are.
    ///
    /// # Errors
    /// As [`Data::decode`].
    #[inline]
    pub fn new_checked(wire: Bytes) -> Result<Self, DecodeError> {
        let mut ends = [0; 16];
        let s = match Simple::parse(&wire, &mut ends) {
            Ok(Some(s)) => s,
            Ok(None) => return Self::new_checked_general(wire),
            Err(e) => return Err(e),
        };
        Ok(Self {
            name: Name::from_simple_scan(wire, s.name_start, s.name_len, ends, s.components),
            content_type: s.meta.content_type.unwrap_or(content_type::BLOB),
            freshness_period: s.meta.freshness_period.unwrap_or(0),
            final_block_id: s.meta.final_block_id.map_or(Span::NONE, Span::of),
            content: s.content,
            signature_info: s.signature_info,
            signature_value: s.signature_value,
            signed: s.signed,
        })
    }

    /// [`DataView::new_checked`] through the general parser, for any Data.
    #[cold]
    #[inline(never)]
    fn new_checked_general(wire: Bytes) -> Result<Self, DecodeError> {
        let f = Fields::parse(&wire)?;
        let meta = f.meta_info.unwrap_or_default();
        // Offsets fit 16 bits: `parse` refused packets over MAX_PACKET_SIZE.
        Ok(Self {
            name: Name::from_parts(wire, f.name_start, f.name_ends),
            content_type: meta.content_type.unwrap_or(content_type::BLOB),
            freshness_period: meta.freshness_period.unwrap_or(0),
            final_block_id: meta.final_block_id.map_or(Span::NONE, Span::of),
            content: f.content.map_or(Span::NONE, Span::of),
            signature_info: Span::of(f.signature_info),
            signature_value: Span::of(f.signature_value),
            signed: Span::of(f.signed),
        })
    }

    /// The whole Data TLV, taking the view's handle (no reference-count update).
    pub fn into_wire(self) -> Bytes {
        self.name.into_backing()
    }

    /// The whole Data TLV.
    pub fn wire(&self) -> &Bytes {
        self.name.backing()
    }

    /// The Name.
    pub fn name(&self) -> &Name {
        &self.name
    }

    /// ContentType (BLOB when absent).
    pub fn content_type(&self) -> u64 {
        self.content_type
    }

    /// FreshnessPeriod in milliseconds (0, never fresh, when absent).
    pub fn freshness_period_ms(&self) -> u64 {
        self.freshness_period
    }

    /// FinalBlockId, if present.
    pub fn final_block_id(&self) -> Option<Component> {
        self.final_block_id
            .get()
            .and_then(|r| component_at(self.wire(), r))
    }

    /// Content bytes (empty when absent), shared with the packet.
    pub fn content(&self) -> Bytes {
        self.content
            .get()
            .map(|r| self.wire().slice(r))
            .unwrap_or_default()
    }

    /// Range of the Content TLV-VALUE in [`DataView::wire`], when present.
    pub fn content_range(&self) -> Option<Range<usize>> {
        self.content.get()
    }

    /// The SignatureInfo.
    pub fn signature_info(&self) -> SignatureInfo {
        let bytes = self
            .wire()
            .get(self.signature_info.range())
            .unwrap_or_default();
        Reader::with_base(bytes, self.signature_info.range().start)
            .read_element()
            .and_then(|e| SignatureInfo::decode(&e, self.wire()))
            .unwrap_or_default()
    }

    /// The SignatureValue bytes.
    pub fn signature_value(&self) -> Bytes {
        self.wire().slice(self.signature_value.range())
    }

    /// The signed portion (Name through SignatureInfo).
    pub fn signed_portion(&self) -> &[u8] {
        self.wire().get(self.signed.range()).unwrap_or_default()
    }

    /// The implicit SHA-256 digest: the hash of the whole Data TLV.
    pub fn implicit_digest(&self) -> [u8; 32] {
        Sha256::digest(self.wire()).into()
    }

    /// The full name: Name plus the ImplicitSha256DigestComponent.
    pub fn full_name(&self) -> Name {
        let c = Component::implicit_digest(self.implicit_digest());
        self.name.append(&c).unwrap_or_else(|_| self.name.clone())
    }
}

#[cfg(test)]
mod tests;
