//! Interest packets: the owned [`Interest`] for building and full decoding, and the checked
//! [`InterestView`] the forwarder uses to read only what it needs and rewrite HopLimit and Nonce
//! in place.
//!
//= https://docs.named-data.net/NDN-packet-spec/0.3/interest.html
//# Interest = INTEREST-TYPE TLV-LENGTH Name [CanBePrefix] [MustBeFresh] [ForwardingHint]
//# [Nonce] [InterestLifetime] [HopLimit] [ApplicationParameters [InterestSignatureInfo
//# InterestSignatureValue]]

use core::ops::Range;

use bytes::{BufMut, Bytes, BytesMut};
use sha2::{Digest, Sha256};

use crate::error::{DecodeError, ErrorKind};
use crate::name::{self, Component, ComponentEnds, Name};
use crate::signature::{slice_abs, SignError, SignatureInfo, Signer, Verifier, VerifyError};
use crate::tlv::{self, types, Reader, Span};

mod compact;

pub use compact::CompactInterest;

/// InterestLifetime when the element is absent.
pub const DEFAULT_LIFETIME_MS: u64 = 4000;

/// An Interest with every field, owned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Interest {
    /// Name; when ApplicationParameters is present it holds the ParametersSha256DigestComponent.
    pub name: Name,
    /// CanBePrefix.
    pub can_be_prefix: bool,
    /// MustBeFresh.
    pub must_be_fresh: bool,
    /// ForwardingHint: the names to forward toward instead of `name`.
    pub forwarding_hint: Vec<Name>,
    /// Nonce (4 octets, big-endian).
    pub nonce: Option<u32>,
    /// InterestLifetime in milliseconds; absent means 4000.
    pub lifetime_ms: Option<u64>,
    /// HopLimit.
    pub hop_limit: Option<u8>,
    /// ApplicationParameters.
    pub app_parameters: Option<Bytes>,
    /// InterestSignatureInfo.
    pub signature_info: Option<SignatureInfo>,
    /// InterestSignatureValue.
    pub signature_value: Option<Bytes>,
}

/// Positions of every field of an Interest, found in one checked pass.
struct Fields {
    /// Where the Name's TLV-VALUE starts, and its component ends (the name is built by the
    /// caller, which owns the packet, so that it can share the packet's handle).
    name_start: usize,
    name_ends: ComponentEnds,
    can_be_prefix: bool,
    must_be_fresh: bool,
    forwarding_hint: Option<Range<usize>>,
    nonce: Option<(u32, usize)>,
    lifetime_ms: Option<u64>,
    hop_limit: Option<(u8, usize)>,
    app_parameters: Option<Range<usize>>,
    /// Start of the ApplicationParameters element.
    parameters_start: usize,
    signature_info: Option<Range<usize>>,
    signature_value: Option<Range<usize>>,
}

fn rank(typ: u32) -> u8 {
    match typ {
        types::NAME => 1,
        types::CAN_BE_PREFIX => 2,
        types::MUST_BE_FRESH => 3,
        types::FORWARDING_HINT => 4,
        types::NONCE => 5,
        types::INTEREST_LIFETIME => 6,
        types::HOP_LIMIT => 7,
        types::APPLICATION_PARAMETERS => 8,
        types::INTEREST_SIGNATURE_INFO => 9,
        types::INTEREST_SIGNATURE_VALUE => 10,
        _ => 0,
    }
}

impl Fields {
    #[inline]
    fn parse(wire: &Bytes) -> Result<Self, DecodeError> {
        if wire.len() > tlv::MAX_PACKET_SIZE {
            return Err(DecodeError::in_element(
                ErrorKind::TooLarge,
                0,
                types::INTEREST,
            ));
        }
        let top = tlv::read_single(wire)?;
        if top.typ != types::INTEREST {
            return Err(top.error(ErrorKind::UnexpectedType {
                expected: types::INTEREST,
                found: top.typ,
            }));
        }
        let mut r = top.children();
        let name_el = r
            .expect(types::NAME)
            .map_err(|e| e.within(types::INTEREST))?;
        let (name_ends, parameters_digests) = Name::scan_value(name_el.value, name_el.value_start)?;
        if name_ends.is_empty() {
            //= https://docs.named-data.net/NDN-packet-spec/0.3/interest.html#name
            //# Interests that include Name TLV that has zero name components MUST be discarded.
            return Err(name_el.error(ErrorKind::EmptyName));
        }
        let mut f = Fields {
            name_start: name_el.value_start,
            name_ends,
            can_be_prefix: false,
            must_be_fresh: false,
            forwarding_hint: None,
            nonce: None,
            lifetime_ms: None,
            hop_limit: None,
            app_parameters: None,
            parameters_start: 0,
            signature_info: None,
            signature_value: None,
        };
        let mut last = 1;
        while let Some(e) = r.read_ranked(rank, &mut last)? {
            match e.typ {
                types::CAN_BE_PREFIX | types::MUST_BE_FRESH => {
                    if !e.value.is_empty() {
                        return Err(e.error(ErrorKind::InvalidValue("flag element is not empty")));
                    }
                    if e.typ == types::CAN_BE_PREFIX {
                        f.can_be_prefix = true;
                    } else {
                        f.must_be_fresh = true;
                    }
                }
                types::FORWARDING_HINT => {
                    let mut hr = e.children();
                    let mut any = false;
                    while let Some(h) = hr.read()? {
                        if h.typ == types::NAME {
                            // The checks and errors of `Name::from_value`, without taking a
                            // handle on the packet (two atomic updates) to build the name.
                            Name::check_value(h.value, h.value_start)?;
                            any = true;
                        } else {
                            tlv::skip_unrecognized(&h)?;
                        }
                    }
                    if !any {
                        return Err(e.error(ErrorKind::Missing { typ: types::NAME }));
                    }
                    f.forwarding_hint = Some(e.value_range());
                }
                types::NONCE => {
                    let n: [u8; 4] = e
                        .value
                        .try_into()
                        .map_err(|_| e.error(ErrorKind::InvalidValue("Nonce is not 4 octets")))?;
                    f.nonce = Some((u32::from_be_bytes(n), e.value_start));
                }
                types::INTEREST_LIFETIME => f.lifetime_ms = Some(e.nni()?),
                types::HOP_LIMIT => {
                    let [h] = e.value else {
                        return Err(e.error(ErrorKind::InvalidValue("HopLimit is not 1 octet")));
                    };
                    f.hop_limit = Some((*h, e.value_start));
                }
                types::APPLICATION_PARAMETERS => {
                    f.app_parameters = Some(e.value_range());
                    f.parameters_start = e.start;
                }
                types::INTEREST_SIGNATURE_INFO => {
                    // Checked here so the view accepts exactly what the owned decoder accepts.
                    SignatureInfo::check(&e, wire)?;
                    f.signature_info = Some(e.range());
                }
                _ => f.signature_value = Some(e.value_range()),
            }
        }
        if f.signature_info.is_some() && f.app_parameters.is_none() {
            //= https://docs.named-data.net/NDN-packet-spec/0.3/interest.html#interestsignature
            //# InterestSignatureInfo and InterestSignatureValue ... MUST be placed after
            //# ApplicationParameters (a signed Interest always has ApplicationParameters).
            return Err(DecodeError::in_element(
                ErrorKind::Missing {
                    typ: types::APPLICATION_PARAMETERS,
                },
                top.start,
                types::INTEREST,
            ));
        }
        f.check_digest_component(parameters_digests, name_el.start)?;
        if f.signature_info.is_some() != f.signature_value.is_some() {
            return Err(DecodeError::in_element(
                ErrorKind::Missing {
                    typ: if f.signature_info.is_some() {
                        types::INTEREST_SIGNATURE_VALUE
                    } else {
                        types::INTEREST_SIGNATURE_INFO
                    },
                },
                top.start,
                types::INTEREST,
            ));
        }
        Ok(f)
    }

    /// ApplicationParameters present if and only if the name has exactly one
    /// ParametersSha256DigestComponent (`count`, from the name scan).
    fn check_digest_component(&self, count: usize, name_start: usize) -> Result<(), DecodeError> {
        let ok = if self.app_parameters.is_some() {
            count == 1
        } else {
            count == 0
        };
        if ok {
            Ok(())
        } else {
            Err(DecodeError::in_element(
                ErrorKind::InvalidValue(
                    "ApplicationParameters requires exactly one ParametersSha256DigestComponent",
                ),
                name_start,
                types::NAME,
            ))
        }
    }
}

impl Interest {
    /// An Interest for `name` with no other field set.
    pub fn new(name: Name) -> Self {
        Self {
            name,
            ..Self::default()
        }
    }

    /// Decodes and fully checks an Interest, including the ParametersSha256DigestComponent.
    ///
    /// # Errors
    /// Any malformed or misplaced element, an empty Name, or a parameters digest mismatch.
    pub fn decode(wire: &Bytes) -> Result<Self, DecodeError> {
        let f = Fields::parse(wire)?;
        let forwarding_hint = match &f.forwarding_hint {
            Some(range) => decode_hint_names(wire, range.clone())?,
            None => Vec::new(),
        };
        let signature_info = match &f.signature_info {
            Some(range) => {
                let el =
                    Reader::with_base(wire.get(range.clone()).unwrap_or_default(), range.start)
                        .read_element()?;
                Some(SignatureInfo::decode(&el, wire)?)
            }
            None => None,
        };
        let interest = Self {
            can_be_prefix: f.can_be_prefix,
            must_be_fresh: f.must_be_fresh,
            forwarding_hint,
            nonce: f.nonce.map(|(n, _)| n),
            lifetime_ms: f.lifetime_ms,
            hop_limit: f.hop_limit.map(|(h, _)| h),
            app_parameters: f
                .app_parameters
                .clone()
                .map(|r| slice_abs(wire, r, f.parameters_start))
                .transpose()?,
            signature_info,
            signature_value: f
                .signature_value
                .clone()
                .map(|r| slice_abs(wire, r, 0))
                .transpose()?,
            name: Name::from_parts(wire.clone(), f.name_start, f.name_ends),
        };
        if f.app_parameters.is_some() {
            let covered = wire.get(f.parameters_start..).unwrap_or_default();
            let digest: [u8; 32] = Sha256::digest(covered).into();
            let found = interest
                .name
                .iter()
                .find(|c| c.typ() == types::PARAMETERS_SHA256_DIGEST_COMPONENT);
            if found.map(|c| c.value()) != Some(&digest[..]) {
                return Err(DecodeError::in_element(
                    ErrorKind::ParametersDigestMismatch,
                    0,
                    types::INTEREST,
                ));
            }
        }
        Ok(interest)
    }

    /// Encodes the Interest. When ApplicationParameters is present the
    /// ParametersSha256DigestComponent is computed and placed (replacing a stale one, or
    /// appended), so the output always decodes.
    pub fn encode(&self) -> Bytes {
        let tail = self.encode_parameters_block();
        let name = self.name_with_digest(&tail);
        let mut body_len = name.encoded_len();
        body_len += self.middle_len();
        body_len += tail.len();
        let mut buf = BytesMut::with_capacity(tlv::tlv_len(types::INTEREST, body_len));
        tlv::put_header(&mut buf, types::INTEREST, body_len);
        name.encode(&mut buf);
        self.encode_middle(&mut buf);
        buf.put_slice(&tail);
        buf.freeze()
    }

    /// The name as it will be encoded: with a correct ParametersSha256DigestComponent when
    /// there are parameters.
    fn name_with_digest(&self, tail: &[u8]) -> Name {
        if self.app_parameters.is_none() {
            return self.name.clone();
        }
        let digest: [u8; 32] = Sha256::digest(tail).into();
        let comp = Component::parameters_digest(digest);
        let mut comps: Vec<Component> = self.name.iter().map(|c| c.to_owned()).collect();
        match comps
            .iter_mut()
            .find(|c| c.typ == types::PARAMETERS_SHA256_DIGEST_COMPONENT)
        {
            Some(c) => *c = comp,
            None => comps.push(comp),
        }
        Name::from_components(&comps).unwrap_or_else(|_| self.name.clone())
    }

    fn middle_len(&self) -> usize {
        let mut n = 0;
        if self.can_be_prefix {
            n += 2;
        }
        if self.must_be_fresh {
            n += 2;
        }
        if !self.forwarding_hint.is_empty() {
            n += tlv::tlv_len(types::FORWARDING_HINT, self.hint_len());
        }
        if self.nonce.is_some() {
            n += 6;
        }
        if let Some(l) = self.lifetime_ms {
            n += tlv::nni_tlv_len(types::INTEREST_LIFETIME, l);
        }
        if self.hop_limit.is_some() {
            n += 3;
        }
        n
    }

    fn hint_len(&self) -> usize {
        self.forwarding_hint.iter().map(Name::encoded_len).sum()
    }

    fn encode_middle(&self, buf: &mut impl BufMut) {
        if self.can_be_prefix {
            tlv::put_header(buf, types::CAN_BE_PREFIX, 0);
        }
        if self.must_be_fresh {
            tlv::put_header(buf, types::MUST_BE_FRESH, 0);
        }
        if !self.forwarding_hint.is_empty() {
            tlv::put_header(buf, types::FORWARDING_HINT, self.hint_len());
            for n in &self.forwarding_hint {
                n.encode(buf);
            }
        }
        if let Some(n) = self.nonce {
            tlv::put_tlv(buf, types::NONCE, &n.to_be_bytes());
        }
        if let Some(l) = self.lifetime_ms {
            tlv::put_nni_tlv(buf, types::INTEREST_LIFETIME, l);
        }
        if let Some(h) = self.hop_limit {
            tlv::put_tlv(buf, types::HOP_LIMIT, &[h]);
        }
    }

    /// ApplicationParameters, InterestSignatureInfo and InterestSignatureValue, encoded.
    fn encode_parameters_block(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let Some(params) = &self.app_parameters else {
            return out;
        };
        tlv::put_tlv(&mut out, types::APPLICATION_PARAMETERS, params);
        if let Some(si) = &self.signature_info {
            si.encode(types::INTEREST_SIGNATURE_INFO, &mut out);
        }
        if let Some(sv) = &self.signature_value {
            tlv::put_tlv(&mut out, types::INTEREST_SIGNATURE_VALUE, sv);
        }
        out
    }

    /// Signs the Interest (packet format 0.3 signed Interest): sets InterestSignatureInfo from
    /// `info` with the signer's type and KeyLocator, adds empty ApplicationParameters when there
    /// are none, computes InterestSignatureValue over the signed portion and the
    /// ParametersSha256DigestComponent over the parameters block.
    ///
    /// `info` carries the anti-replay fields (SignatureNonce, SignatureTime, SignatureSeqNum).
    ///
    /// # Errors
    /// [`SignError`] from the signer.
    pub fn sign(&mut self, signer: &dyn Signer, mut info: SignatureInfo) -> Result<(), SignError> {
        info.signature_type = signer.signature_type();
        info.key_locator = signer.key_locator();
        if self.app_parameters.is_none() {
            self.app_parameters = Some(Bytes::new());
        }
        self.signature_info = Some(info);
        self.signature_value = None;
        let block = self.encode_parameters_block();
        let name_parts = self.signed_name_parts();
        let mut parts: Vec<&[u8]> = name_parts.iter().map(|c| &c[..]).collect();
        parts.push(&block);
        let sig = signer.sign(&parts)?;
        self.signature_value = Some(Bytes::from(sig));
        // Recompute the digest component now that the block is final.
        let tail = self.encode_parameters_block();
        self.name = self.name_with_digest(&tail);
        Ok(())
    }

    /// Name components covered by the signature: all but the ParametersSha256DigestComponent.
    fn signed_name_parts(&self) -> Vec<Vec<u8>> {
        self.name
            .iter()
            .filter(|c| c.typ() != types::PARAMETERS_SHA256_DIGEST_COMPONENT)
            .map(|c| c.wire().to_vec())
            .collect()
    }

    /// Verifies the InterestSignatureValue with `verifier`.
    ///
    /// # Errors
    /// [`VerifyError::Unsigned`] without a signature, or the verifier's error.
    pub fn verify(&self, verifier: &dyn Verifier) -> Result<(), VerifyError> {
        let (Some(info), Some(value)) = (&self.signature_info, &self.signature_value) else {
            return Err(VerifyError::Unsigned);
        };
        let mut block = Vec::new();
        if let Some(params) = &self.app_parameters {
            tlv::put_tlv(&mut block, types::APPLICATION_PARAMETERS, params);
        }
        info.encode(types::INTEREST_SIGNATURE_INFO, &mut block);
        let name_parts = self.signed_name_parts();
        let mut parts: Vec<&[u8]> = name_parts.iter().map(|c| &c[..]).collect();
        parts.push(&block);
        verifier.verify(info.signature_type, &parts, value)
    }

    /// InterestLifetime, with the default applied.
    pub fn lifetime(&self) -> u64 {
        self.lifetime_ms.unwrap_or(DEFAULT_LIFETIME_MS)
    }
}

fn decode_hint_names(wire: &Bytes, range: Range<usize>) -> Result<Vec<Name>, DecodeError> {
    let mut out = Vec::new();
    let mut r = Reader::with_base(wire.get(range.clone()).unwrap_or_default(), range.start);
    while let Some(h) = r.read()? {
        if h.typ == types::NAME {
            out.push(Name::from_value(
                wire.slice(h.value_range()),
                h.value_start,
            )?);
        }
    }
    Ok(out)
}

/// An Interest of the shape nearly every forwarded Interest has, read in one straight pass:
/// every element in one-octet TYPE and LENGTH (the Interest and its Name may also have a
/// three-octet LENGTH), a Name of 1 to 16 components that [`name::scan_simple`] takes
/// whole, then in this order any of CanBePrefix, MustBeFresh, Nonce, InterestLifetime and
/// HopLimit, each well-formed, and nothing else.
///
/// The general parser accepts every such packet and finds the same fields; anything else
/// (a ForwardingHint, parameters, an unrecognized element, any error) is left to it, so
/// errors are always its own. A test compares the two on corrupted and truncated packets.
struct Simple {
    name_start: usize,
    name_len: usize,
    components: usize,
    lifetime_ms: u64,
    nonce: u32,
    nonce_pos: u16,
    hop_limit_pos: u16,
    hop_limit: u8,
    can_be_prefix: bool,
    must_be_fresh: bool,
}

impl Simple {
    /// The fields of `wire` when it has the simple shape, with the component ends in `ends`.
    #[inline(always)]
    fn parse(wire: &[u8], ends: &mut [u16; 16]) -> Option<Self> {
        if wire.len() > tlv::MAX_PACKET_SIZE {
            return None;
        }
        let (value, []) = tlv::split_simple(wire, types::INTEREST as u8)? else {
            return None;
        };
        let (name, mut rest) = tlv::split_simple(value, types::NAME as u8)?;
        let (components, []) = name::scan_simple(name, ends) else {
            return None;
        };
        if components == 0 || components > 16 {
            return None;
        }
        // Offsets in the packet, from what is left of it; they fit 16 bits (MAX_PACKET_SIZE).
        let at = |rest: &[u8]| wire.len() - rest.len();
        let mut s = Self {
            name_start: at(rest) - name.len(),
            name_len: name.len(),
            components,
            lifetime_ms: DEFAULT_LIFETIME_MS,
            nonce: 0,
            nonce_pos: 0,
            hop_limit_pos: 0,
            hop_limit: 0,
            can_be_prefix: false,
            must_be_fresh: false,
        };
        if let [0x21, 0x00, ref tail @ ..] = *rest {
            s.can_be_prefix = true;
            rest = tail;
        }
        if let [0x12, 0x00, ref tail @ ..] = *rest {
            s.must_be_fresh = true;
            rest = tail;
        }
        if let [0x0a, 0x04, a, b, c, d, ref tail @ ..] = *rest {
            s.nonce = u32::from_be_bytes([a, b, c, d]);
            s.nonce_pos = Span::at(at(rest) + 2);
            rest = tail;
        }
        if let [0x0c, l @ 0..=0xfc, ref tail @ ..] = *rest {
            let (value, tail) = tail.split_at_checked(usize::from(l))?;
            s.lifetime_ms = tlv::read_nni(value).ok()?;
            rest = tail;
        }
        if let [0x22, 0x01, h, ref tail @ ..] = *rest {
            s.hop_limit = h;
            s.hop_limit_pos = Span::at(at(rest) + 2);
            rest = tail;
        }
        rest.is_empty().then_some(s)
    }
}

/// A checked, zero-copy view of an Interest for the forwarding path.
///
/// Construction checks the whole packet structure (element order, critical types, the Name,
/// fixed-length fields), so every accessor is infallible. It does not hash the
/// ApplicationParameters; [`Interest::decode`] does.
#[derive(Clone, Debug)]
pub struct InterestView {
    /// The Name, over the whole packet: [`InterestView::wire`] is its backing buffer.
    name: Name,
    /// InterestLifetime, the default applied.
    lifetime_ms: u64,
    nonce: u32,
    /// Where the Nonce's value is (0: no Nonce).
    nonce_pos: u16,
    /// Where the HopLimit's value is (0: no HopLimit).
    hop_limit_pos: u16,
    forwarding_hint: Span,
    hop_limit: u8,
    can_be_prefix: bool,
    must_be_fresh: bool,
    has_parameters: bool,
    signed: bool,
}

impl InterestView {
    /// Checks `wire` (one whole Interest TLV) and records where its fields are.
    ///
    /// # Errors
    /// As [`Interest::decode`], except for the parameters digest value.
    #[inline]
    pub fn new_checked(wire: Bytes) -> Result<Self, DecodeError> {
        let mut ends = [0; 16];
        match Simple::parse(&wire, &mut ends) {
            Some(s) => Ok(Self {
                name: Name::from_simple_scan(wire, s.name_start, s.name_len, ends, s.components),
                lifetime_ms: s.lifetime_ms,
                nonce: s.nonce,
                nonce_pos: s.nonce_pos,
                hop_limit_pos: s.hop_limit_pos,
                forwarding_hint: Span::NONE,
                hop_limit: s.hop_limit,
                can_be_prefix: s.can_be_prefix,
                must_be_fresh: s.must_be_fresh,
                has_parameters: false,
                signed: false,
            }),
            None => Self::new_checked_general(wire),
        }
    }

    /// [`InterestView::new_checked`] through the general parser, for any Interest.
    #[cold]
    #[inline(never)]
    fn new_checked_general(wire: Bytes) -> Result<Self, DecodeError> {
        let f = Fields::parse(&wire)?;
        // Offsets fit 16 bits: `parse` refused packets over MAX_PACKET_SIZE.
        let (nonce, nonce_pos) = f.nonce.map_or((0, 0), |(n, at)| (n, Span::at(at)));
        let (hop_limit, hop_limit_pos) = f.hop_limit.map_or((0, 0), |(h, at)| (h, Span::at(at)));
        Ok(Self {
            name: Name::from_parts(wire, f.name_start, f.name_ends),
            lifetime_ms: f.lifetime_ms.unwrap_or(DEFAULT_LIFETIME_MS),
            nonce,
            nonce_pos,
            hop_limit_pos,
            forwarding_hint: f.forwarding_hint.map_or(Span::NONE, Span::of),
            hop_limit,
            can_be_prefix: f.can_be_prefix,
            must_be_fresh: f.must_be_fresh,
            has_parameters: f.app_parameters.is_some(),
            signed: f.signature_info.is_some(),
        })
    }

    /// The whole Interest TLV.
    pub fn wire(&self) -> &Bytes {
        self.name.backing()
    }

    /// The Name.
    pub fn name(&self) -> &Name {
        &self.name
    }

    /// CanBePrefix.
    pub fn can_be_prefix(&self) -> bool {
        self.can_be_prefix
    }

    /// MustBeFresh.
    pub fn must_be_fresh(&self) -> bool {
        self.must_be_fresh
    }

    /// Nonce, if present.
    pub fn nonce(&self) -> Option<u32> {
        (self.nonce_pos != 0).then_some(self.nonce)
    }

    /// InterestLifetime in milliseconds, the default (4000) applied.
    pub fn lifetime_ms(&self) -> u64 {
        self.lifetime_ms
    }

    /// HopLimit, if present.
    pub fn hop_limit(&self) -> Option<u8> {
        (self.hop_limit_pos != 0).then_some(self.hop_limit)
    }

    /// Whether ApplicationParameters is present.
    pub fn has_parameters(&self) -> bool {
        self.has_parameters
    }

    /// Whether the Interest carries InterestSignatureInfo and InterestSignatureValue.
    pub fn is_signed(&self) -> bool {
        self.signed
    }

    /// Whether a ForwardingHint is present.
    pub fn has_forwarding_hint(&self) -> bool {
        self.forwarding_hint.get().is_some()
    }

    /// The ForwardingHint names (empty when absent).
    pub fn forwarding_hint(&self) -> Vec<Name> {
        match self.forwarding_hint.get() {
            // Validated at construction, so this cannot fail.
            Some(range) => decode_hint_names(self.wire(), range).unwrap_or_default(),
            None => Vec::new(),
        }
    }

    /// A copy of the packet with HopLimit set to `h`. Returns the original bytes unchanged
    /// (shared, not copied) when the Interest has no HopLimit.
    pub fn with_hop_limit(&self, h: u8) -> Bytes {
        match self.hop_limit_pos {
            0 => self.wire().clone(),
            pos => self.patched(usize::from(pos), &[h]),
        }
    }

    /// A copy of the packet with Nonce set to `nonce`, inserting the element if absent.
    pub fn with_nonce(&self, nonce: u32) -> Bytes {
        if self.nonce_pos != 0 {
            return self.patched(usize::from(self.nonce_pos), &nonce.to_be_bytes());
        }
        self.with_inserted_nonce(nonce)
    }

    /// A view of the packet with Nonce set to `nonce` (see [`InterestView::with_nonce`]).
    pub fn set_nonce(&mut self, nonce: u32) {
        let wire = self.with_nonce(nonce);
        if self.nonce_pos == 0 {
            // Re-parse: the insertion moved every later field.
            if let Ok(v) = Self::new_checked(wire) {
                *self = v;
            }
            return;
        }
        self.name.rebase(wire);
        self.nonce = nonce;
    }

    fn patched(&self, pos: usize, bytes: &[u8]) -> Bytes {
        patched(self.wire(), pos, bytes)
    }

    fn with_inserted_nonce(&self, nonce: u32) -> Bytes {
        // The Nonce goes before InterestLifetime, HopLimit and the parameters block: after the
        // last element whose rank is below Nonce's.
        let wire = self.wire();
        let Ok(top) = tlv::read_single(wire) else {
            return wire.clone();
        };
        let mut r = top.children();
        let mut insert_at = top.value_start;
        while let Ok(Some(e)) = r.read() {
            let rk = rank(e.typ);
            if rk != 0 && rk > rank(types::NONCE) {
                break;
            }
            insert_at = e.end();
        }
        let body_len = top.value.len() + 6;
        let mut buf = BytesMut::with_capacity(tlv::tlv_len(types::INTEREST, body_len));
        tlv::put_header(&mut buf, types::INTEREST, body_len);
        buf.put_slice(wire.get(top.value_start..insert_at).unwrap_or_default());
        tlv::put_tlv(&mut buf, types::NONCE, &nonce.to_be_bytes());
        buf.put_slice(wire.get(insert_at..).unwrap_or_default());
        buf.freeze()
    }
}

/// A copy of `wire` with `bytes` written at `pos`.
fn patched(wire: &[u8], pos: usize, bytes: &[u8]) -> Bytes {
    let mut buf = BytesMut::from(wire);
    if let Some(dst) = buf.get_mut(pos..pos + bytes.len()) {
        dst.copy_from_slice(bytes);
    }
    buf.freeze()
}

#[cfg(test)]
mod tests;
