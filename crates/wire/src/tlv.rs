//! TLV primitives: VAR-NUMBER, NonNegativeInteger, the element reader and the encoder helpers.
//!
//! Every TLV element is `TLV-TYPE TLV-LENGTH TLV-VALUE`, where TYPE and LENGTH are VAR-NUMBERs.
//!
//= https://docs.named-data.net/NDN-packet-spec/0.3/tlv.html#variable-size-encoding-for-type-t-and-length-l
//# VAR-NUMBER-1 = %x00-FC ; VAR-NUMBER-3 = %xFD 2OCTET ; VAR-NUMBER-5 = %xFE 4OCTET ;
//# VAR-NUMBER-9 = %xFF 8OCTET
//
// Nameway decodes VAR-NUMBERs only in their shortest form: every encoder we know of (ndn-cxx,
// python-ndn, NDNts, NFD) emits the shortest form, and refusing the others removes a class of
// "same packet, two encodings" ambiguities (cache keys, signatures over re-encoded fields).
// NonNegativeIntegers may use any of the four widths the spec allows.

use bytes::BufMut;

use crate::error::{DecodeError, ErrorKind};

/// TLV-TYPE numbers used by Nameway, named as in the NDN packet spec, NDNLPv2 and NFD management.
pub mod types {
    #![allow(missing_docs)]
    // Packets
    pub const INTEREST: u32 = 0x05;
    pub const DATA: u32 = 0x06;
    pub const LP_PACKET: u32 = 0x64;
    // Name and components
    pub const NAME: u32 = 0x07;
    pub const IMPLICIT_SHA256_DIGEST_COMPONENT: u32 = 0x01;
    pub const PARAMETERS_SHA256_DIGEST_COMPONENT: u32 = 0x02;
    pub const GENERIC_NAME_COMPONENT: u32 = 0x08;
    pub const KEYWORD_NAME_COMPONENT: u32 = 0x20;
    pub const SEGMENT_NAME_COMPONENT: u32 = 0x32;
    pub const BYTE_OFFSET_NAME_COMPONENT: u32 = 0x34;
    pub const VERSION_NAME_COMPONENT: u32 = 0x36;
    pub const TIMESTAMP_NAME_COMPONENT: u32 = 0x38;
    pub const SEQUENCE_NUM_NAME_COMPONENT: u32 = 0x3a;
    // Interest
    pub const CAN_BE_PREFIX: u32 = 0x21;
    pub const MUST_BE_FRESH: u32 = 0x12;
    pub const FORWARDING_HINT: u32 = 0x1e;
    pub const NONCE: u32 = 0x0a;
    pub const INTEREST_LIFETIME: u32 = 0x0c;
    pub const HOP_LIMIT: u32 = 0x22;
    pub const APPLICATION_PARAMETERS: u32 = 0x24;
    pub const INTEREST_SIGNATURE_INFO: u32 = 0x2c;
    pub const INTEREST_SIGNATURE_VALUE: u32 = 0x2e;
    // Data
    pub const META_INFO: u32 = 0x14;
    pub const CONTENT_TYPE: u32 = 0x18;
    pub const FRESHNESS_PERIOD: u32 = 0x19;
    pub const FINAL_BLOCK_ID: u32 = 0x1a;
    pub const CONTENT: u32 = 0x15;
    pub const SIGNATURE_INFO: u32 = 0x16;
    pub const SIGNATURE_VALUE: u32 = 0x17;
    // Signature
    pub const SIGNATURE_TYPE: u32 = 0x1b;
    pub const KEY_LOCATOR: u32 = 0x1c;
    pub const KEY_DIGEST: u32 = 0x1d;
    pub const SIGNATURE_NONCE: u32 = 0x26;
    pub const SIGNATURE_TIME: u32 = 0x28;
    pub const SIGNATURE_SEQ_NUM: u32 = 0x2a;
    pub const VALIDITY_PERIOD: u32 = 0xfd;
    pub const NOT_BEFORE: u32 = 0xfe;
    pub const NOT_AFTER: u32 = 0xff;
    // NDNLPv2
    pub const FRAGMENT: u32 = 0x50;
    pub const SEQUENCE: u32 = 0x51;
    pub const FRAG_INDEX: u32 = 0x52;
    pub const FRAG_COUNT: u32 = 0x53;
    pub const HOP_COUNT: u32 = 0x54;
    pub const PIT_TOKEN: u32 = 0x62;
    pub const NACK: u32 = 0x0320;
    pub const NACK_REASON: u32 = 0x0321;
    pub const INCOMING_FACE_ID: u32 = 0x032c;
    pub const NEXT_HOP_FACE_ID: u32 = 0x0330;
    pub const CACHE_POLICY: u32 = 0x0334;
    pub const CACHE_POLICY_TYPE: u32 = 0x0335;
    pub const CONGESTION_MARK: u32 = 0x0340;
    pub const ACK: u32 = 0x0344;
    pub const TX_SEQUENCE: u32 = 0x0348;
    pub const NON_DISCOVERY: u32 = 0x034c;
    pub const PREFIX_ANNOUNCEMENT: u32 = 0x0350;
    // Nameway's hop-by-hop security header fields (docs/secure-forwarding.md). Both are in the
    // NDNLPv2 header range and critical (low two bits not 00): a peer that does not know them
    // drops the packet instead of delivering ciphertext.
    pub const LINK_SECURITY: u32 = 0x0385;
    pub const LINK_HANDSHAKE: u32 = 0x0389;
    // Nameway's Nack hint (docs/routing.md): how long to wait before retrying a NoRoute Nack
    // whose route is being resolved. Ignorable (in 800..=959, low two bits 00), so NFD,
    // ndn-cxx and python-ndn skip it.
    pub const RETRY_AFTER: u32 = 0x0390;
}

/// Largest packet Nameway accepts or emits, as ndn-cxx `MAX_NDN_PACKET_SIZE`.
pub const MAX_PACKET_SIZE: usize = 8800;

/// Deepest element nesting the generic decoders (dissect, skipping) will follow.
pub const MAX_DEPTH: usize = 32;

/// Whether an unrecognized element of this TLV-TYPE must make the decoder fail.
///
//= https://docs.named-data.net/NDN-packet-spec/0.3/tlv.html#considerations-for-evolvability-of-tlv-based-encoding
//# TLV-TYPE numbers 0-31 (inclusive) are "grandfathered" and are always critical. For TLV-TYPE
//# numbers greater than 31, odd numbers are critical and even numbers are non-critical.
pub const fn is_critical(typ: u32) -> bool {
    typ <= 31 || typ & 1 == 1
}

/// Reads a VAR-NUMBER from the front of `buf`; returns the number and the bytes consumed.
///
/// # Errors
/// [`ErrorKind::Truncated`] when `buf` ends early and [`ErrorKind::NonMinimalVarNumber`] when a
/// longer form encodes a number that fits a shorter one. Offsets are relative to `buf`.
#[inline]
pub fn read_var_number(buf: &[u8]) -> Result<(u64, usize), DecodeError> {
    let Some(&first) = buf.first() else {
        return Err(DecodeError::new(ErrorKind::Truncated, 0));
    };
    let (len, min) = match first {
        0..=0xfc => return Ok((u64::from(first), 1)),
        0xfd => (2, 0xfd),
        0xfe => (4, 0x1_0000),
        0xff => (8, 0x1_0000_0000),
    };
    let Some(bytes) = buf.get(1..1 + len) else {
        return Err(DecodeError::new(ErrorKind::Truncated, 0));
    };
    let n = bytes.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
    if n < min {
        return Err(DecodeError::new(ErrorKind::NonMinimalVarNumber, 0));
    }
    Ok((n, 1 + len))
}

/// Encoded size of `n` as a VAR-NUMBER.
#[inline]
pub const fn var_number_len(n: u64) -> usize {
    if n <= 0xfc {
        1
    } else if n <= 0xffff {
        3
    } else if n <= 0xffff_ffff {
        5
    } else {
        9
    }
}

/// Writes `n` as a VAR-NUMBER in its shortest form.
#[inline]
pub fn put_var_number(buf: &mut impl BufMut, n: u64) {
    if n <= 0xfc {
        buf.put_u8(n as u8);
    } else if n <= 0xffff {
        buf.put_u8(0xfd);
        buf.put_u16(n as u16);
    } else if n <= 0xffff_ffff {
        buf.put_u8(0xfe);
        buf.put_u32(n as u32);
    } else {
        buf.put_u8(0xff);
        buf.put_u64(n);
    }
}

/// Decodes a NonNegativeInteger from a whole TLV-VALUE.
///
/// # Errors
/// [`ErrorKind::BadNonNegativeInteger`] unless the value is 1, 2, 4 or 8 bytes long.
#[inline(always)]
pub fn read_nni(value: &[u8]) -> Result<u64, ErrorKind> {
    // One load per width rather than a loop over the octets.
    match *value {
        [a] => Ok(u64::from(a)),
        [a, b] => Ok(u64::from(u16::from_be_bytes([a, b]))),
        [a, b, c, d] => Ok(u64::from(u32::from_be_bytes([a, b, c, d]))),
        [a, b, c, d, e, f, g, h] => Ok(u64::from_be_bytes([a, b, c, d, e, f, g, h])),
        _ => Err(ErrorKind::BadNonNegativeInteger),
    }
}

/// Encoded size of `n` as a NonNegativeInteger (shortest of 1, 2, 4, 8 bytes).
#[inline]
pub const fn nni_len(n: u64) -> usize {
    if n <= 0xff {
        1
    } else if n <= 0xffff {
        2
    } else if n <= 0xffff_ffff {
        4
    } else {
        8
    }
}

/// Writes `n` as a NonNegativeInteger in its shortest form.
#[inline]
pub fn put_nni(buf: &mut impl BufMut, n: u64) {
    match nni_len(n) {
        1 => buf.put_u8(n as u8),
        2 => buf.put_u16(n as u16),
        4 => buf.put_u32(n as u32),
        _ => buf.put_u64(n),
    }
}

/// Encoded size of a whole TLV element whose TLV-VALUE is `value_len` bytes.
#[inline]
pub const fn tlv_len(typ: u32, value_len: usize) -> usize {
    var_number_len(typ as u64) + var_number_len(value_len as u64) + value_len
}

/// Writes a TLV-TYPE and TLV-LENGTH.
#[inline]
pub fn put_header(buf: &mut impl BufMut, typ: u32, value_len: usize) {
    put_var_number(buf, u64::from(typ));
    put_var_number(buf, value_len as u64);
}

/// Writes a whole element with the given value bytes.
#[inline]
pub fn put_tlv(buf: &mut impl BufMut, typ: u32, value: &[u8]) {
    put_header(buf, typ, value.len());
    buf.put_slice(value);
}

/// Writes an element whose value is a NonNegativeInteger.
#[inline]
pub fn put_nni_tlv(buf: &mut impl BufMut, typ: u32, n: u64) {
    put_header(buf, typ, nni_len(n));
    put_nni(buf, n);
}

/// Encoded size of an element whose value is the NonNegativeInteger `n`.
#[inline]
pub const fn nni_tlv_len(typ: u32, n: u64) -> usize {
    tlv_len(typ, nni_len(n))
}

/// One TLV element, borrowed from the buffer it was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Element<'a> {
    /// TLV-TYPE.
    pub typ: u32,
    /// TLV-VALUE.
    pub value: &'a [u8],
    /// Absolute offset of the first byte of TLV-TYPE.
    pub start: usize,
    /// Absolute offset of the first byte of TLV-VALUE.
    pub value_start: usize,
}

impl<'a> Element<'a> {
    /// Absolute offset one past the last byte of the element.
    pub const fn end(&self) -> usize {
        self.value_start + self.value.len()
    }

    /// Range of the TLV-VALUE in the original buffer.
    pub const fn value_range(&self) -> core::ops::Range<usize> {
        self.value_start..self.end()
    }

    /// Range of the whole element in the original buffer.
    pub const fn range(&self) -> core::ops::Range<usize> {
        self.start..self.end()
    }

    /// Decodes the value as a NonNegativeInteger.
    ///
    /// # Errors
    /// [`ErrorKind::BadNonNegativeInteger`] with this element's location.
    pub fn nni(&self) -> Result<u64, DecodeError> {
        read_nni(self.value).map_err(|k| DecodeError::in_element(k, self.value_start, self.typ))
    }

    /// A reader over the elements nested in this element's value.
    pub const fn children(&self) -> Reader<'a> {
        Reader::with_base(self.value, self.value_start)
    }

    /// An error of `kind` located at this element.
    pub const fn error(&self, kind: ErrorKind) -> DecodeError {
        DecodeError::in_element(kind, self.start, self.typ)
    }
}

/// Iterates over back-to-back TLV elements in a buffer, checking every TYPE and LENGTH.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    /// A reader over `buf` whose offsets start at 0.
    pub const fn new(buf: &'a [u8]) -> Self {
        Self::with_base(buf, 0)
    }

    /// A reader over `buf` that reports offsets as `base + position in buf`.
    pub const fn with_base(buf: &'a [u8], base: usize) -> Self {
        Self { buf, pos: 0, base }
    }

    /// Whether every element has been read.
    pub const fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Absolute offset of the next element.
    pub const fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// Reads the next element, or `None` at the end of the buffer.
    ///
    /// # Errors
    /// A malformed TYPE or LENGTH, or a LENGTH running past the buffer.
    #[inline(always)]
    pub fn read(&mut self) -> Result<Option<Element<'a>>, DecodeError> {
        // The fast path is repeated here rather than wrapping `read_element`: converting its
        // `Result<Element>` into this `Result<Option<Element>>` compiles to a copy through the
        // stack that stalls on store forwarding, in the hottest loop of every decoder.
        let rest = self.buf.get(self.pos..).unwrap_or_default();
        match rest {
            [] => Ok(None),
            [t @ 1..=0xfc, l @ 0..=0xfc, ..] if usize::from(*l) + 2 <= rest.len() => {
                let len = usize::from(*l);
                let start = self.base + self.pos;
                self.pos += 2 + len;
                Ok(Some(Element {
                    typ: u32::from(*t),
                    value: rest.get(2..2 + len).unwrap_or_default(),
                    start,
                    value_start: start + 2,
                }))
            }
            _ => {
                let w = read_general(self.buf, self.pos, self.base)?;
                self.pos = w.pos;
                Ok(Some(w.element()))
            }
        }
    }

    /// Reads the next known element of a container whose known elements come in a fixed order
    /// (Interest, Data, MetaInfo, SignatureInfo), or `None` at the end. `rank` gives a known
    /// TLV-TYPE's place in that order (1, 2, ...) and 0 for an unknown one; `last` is the place
    /// of the element read before, and is updated. Unknown non-critical elements are skipped
    /// (see [`is_critical`]).
    ///
    /// # Errors
    /// A malformed element, [`ErrorKind::UnrecognizedCritical`] for an unknown critical element,
    /// [`ErrorKind::OutOfOrder`] for a known element at or before the place of the last one.
    #[inline(always)]
    pub(crate) fn read_ranked(
        &mut self,
        rank: impl Fn(u32) -> u8,
        last: &mut u8,
    ) -> Result<Option<Element<'a>>, DecodeError> {
        while let Some(e) = self.read()? {
            let rk = rank(e.typ);
            if rk == 0 {
                skip_unrecognized(&e)?;
                continue;
            }
            if rk <= *last {
                return Err(e.error(ErrorKind::OutOfOrder { typ: e.typ }));
            }
            *last = rk;
            return Ok(Some(e));
        }
        Ok(None)
    }

    /// Reads the next element, which must exist.
    ///
    /// # Errors
    /// [`ErrorKind::Truncated`] at the end of the buffer, or a malformed element.
    #[inline(always)]
    pub fn read_element(&mut self) -> Result<Element<'a>, DecodeError> {
        // Fast path, inlined into every caller so that the element stays in registers:
        // one-octet TYPE and LENGTH, which covers every element of a typical packet except
        // the outermost ones. TYPE 0 and lengths past the buffer take the slow path, which
        // reports them.
        let rest = self.buf.get(self.pos..).unwrap_or_default();
        if let [t @ 1..=0xfc, l @ 0..=0xfc, ..] = rest {
            let len = usize::from(*l);
            if let Some(value) = rest.get(2..2 + len) {
                let start = self.base + self.pos;
                self.pos += 2 + len;
                return Ok(Element {
                    typ: u32::from(*t),
                    value,
                    start,
                    value_start: start + 2,
                });
            }
        }
        let w = read_general(self.buf, self.pos, self.base)?;
        self.pos = w.pos;
        Ok(w.element())
    }

    /// Reads the next element if its type is `typ`; leaves the reader unchanged otherwise.
    ///
    /// # Errors
    /// A malformed element.
    #[inline]
    pub fn read_if(&mut self, typ: u32) -> Result<Option<Element<'a>>, DecodeError> {
        let saved = self.pos;
        match self.read()? {
            Some(e) if e.typ == typ => Ok(Some(e)),
            Some(_) => {
                self.pos = saved;
                Ok(None)
            }
            None => Ok(None),
        }
    }

    /// Reads the next element and checks that it has type `typ`.
    ///
    /// # Errors
    /// [`ErrorKind::Missing`] at the end, [`ErrorKind::UnexpectedType`] for another type.
    #[inline(always)]
    pub fn expect(&mut self, typ: u32) -> Result<Element<'a>, DecodeError> {
        // The one-octet fast path, as in `read_element`, returning the element directly
        // (through `read` it went through an `Option` and a second match).
        let rest = self.buf.get(self.pos..).unwrap_or_default();
        if let [t @ 1..=0xfc, l @ 0..=0xfc, ..] = rest {
            let len = usize::from(*l);
            if let (true, Some(value)) = (u32::from(*t) == typ, rest.get(2..2 + len)) {
                let start = self.base + self.pos;
                self.pos += 2 + len;
                return Ok(Element {
                    typ,
                    value,
                    start,
                    value_start: start + 2,
                });
            }
        }
        let w = expect_general(self.buf, self.pos, self.base, typ)?;
        self.pos = w.pos;
        Ok(w.element())
    }

    /// Peeks at the type of the next element without consuming it.
    ///
    /// # Errors
    /// A malformed element.
    pub fn peek_type(&self) -> Result<Option<u32>, DecodeError> {
        let mut clone = self.clone();
        Ok(clone.read()?.map(|e| e.typ))
    }
}

// The slow paths of `Reader` are functions of the reader's fields rather than methods on
// `&mut Reader`: a reader whose address is taken lives in memory, and every element read in
// a decoder's loop then reloaded and stored its position.

/// An element as the reader's slow paths return it, through memory, with the position after
/// it: every field a whole word. Returned as an [`Element`], its 32-bit TYPE was stored in
/// half of an 8-octet slot that the caller then copied with an 8-octet load, a load wider
/// than the store it reads, which the CPU cannot forward from its store buffer: the load
/// waits until the store reaches the cache (about 8% of the Data pipeline's own time in a
/// profile of the forwarder).
struct Wide<'a> {
    value: &'a [u8],
    start: usize,
    value_start: usize,
    typ: u64,
    pos: usize,
}

impl<'a> Wide<'a> {
    #[inline(always)]
    fn element(&self) -> Element<'a> {
        Element {
            // The slow paths checked that the TYPE fits 32 bits.
            typ: self.typ as u32,
            value: self.value,
            start: self.start,
            value_start: self.value_start,
        }
    }
}

/// Reads the element at `pos` of `buf` (offsets reported from `base`) in any TYPE and LENGTH
/// form, with every error reported; returns it and the position after it.
#[cold]
#[inline(never)]
fn read_general(buf: &[u8], pos: usize, base: usize) -> Result<Wide<'_>, DecodeError> {
    let start = base + pos;
    let rest = buf.get(pos..).unwrap_or_default();
    let (typ, tn) = read_var_number(rest).map_err(|e| e.shifted(start))?;
    if typ == 0 || typ > u64::from(u32::MAX) {
        return Err(DecodeError::new(ErrorKind::InvalidType, start));
    }
    let after_type = rest.get(tn..).unwrap_or_default();
    let (len, ln) =
        read_var_number(after_type).map_err(|e| e.shifted(start + tn).within(typ as u32))?;
    let value_off = tn + ln;
    let available = (rest.len() - value_off) as u64;
    if len > available {
        return Err(DecodeError::in_element(
            ErrorKind::LengthOverflow,
            start,
            typ as u32,
        ));
    }
    let len = len as usize;
    Ok(Wide {
        value: rest.get(value_off..value_off + len).unwrap_or_default(),
        start,
        value_start: start + value_off,
        typ,
        pos: pos + value_off + len,
    })
}

/// [`Reader::expect`] in any TYPE and LENGTH form, with every error reported.
#[cold]
#[inline(never)]
fn expect_general(buf: &[u8], pos: usize, base: usize, typ: u32) -> Result<Wide<'_>, DecodeError> {
    if pos >= buf.len() {
        return Err(DecodeError::new(ErrorKind::Missing { typ }, base + pos));
    }
    let w = read_general(buf, pos, base)?;
    if w.typ != u64::from(typ) {
        let e = w.element();
        return Err(e.error(ErrorKind::UnexpectedType {
            expected: typ,
            found: e.typ,
        }));
    }
    Ok(w)
}

/// Reads exactly one element spanning all of `buf`.
///
/// # Errors
/// A malformed element, [`ErrorKind::TrailingBytes`] if bytes follow it.
#[inline]
pub fn read_single(buf: &[u8]) -> Result<Element<'_>, DecodeError> {
    let mut r = Reader::new(buf);
    let e = r.read_element()?;
    if !r.is_empty() {
        return Err(DecodeError::new(ErrorKind::TrailingBytes, e.end()));
    }
    Ok(e)
}

/// Splits an element of TLV-TYPE `typ` off the front of `buf` when its TYPE is that one octet
/// and its LENGTH is one octet or three (`FD` and two octets, shortest form); returns its
/// TLV-VALUE and what follows it. `None` for any other element, or one running past `buf`:
/// the decoders' fast paths then leave the packet to the general reader, which reads such an
/// element the same way and reports everything else.
#[inline(always)]
pub(crate) fn split_simple(buf: &[u8], typ: u8) -> Option<(&[u8], &[u8])> {
    let (len, rest) = match *buf {
        [t, l @ 0..=0xfc, ref rest @ ..] if t == typ => (usize::from(l), rest),
        [t, 0xfd, hi, lo, ref rest @ ..] if t == typ => {
            let l = u16::from_be_bytes([hi, lo]);
            if l < 0xfd {
                return None;
            }
            (usize::from(l), rest)
        }
        _ => return None,
    };
    rest.split_at_checked(len)
}

/// Checks that an unrecognized element may be skipped (it is non-critical).
///
/// # Errors
/// [`ErrorKind::UnrecognizedCritical`] for a critical type.
#[inline]
pub fn skip_unrecognized(e: &Element<'_>) -> Result<(), DecodeError> {
    if is_critical(e.typ) {
        Err(e.error(ErrorKind::UnrecognizedCritical { typ: e.typ }))
    } else {
        Ok(())
    }
}

/// Human name of a TLV-TYPE in the top-level packet namespace, for messages and dissect.
pub fn type_name(typ: u32) -> &'static str {
    use types::*;
    match typ {
        INTEREST => "Interest",
        DATA => "Data",
        LP_PACKET => "LpPacket",
        NAME => "Name",
        IMPLICIT_SHA256_DIGEST_COMPONENT => "ImplicitSha256DigestComponent",
        PARAMETERS_SHA256_DIGEST_COMPONENT => "ParametersSha256DigestComponent",
        GENERIC_NAME_COMPONENT => "GenericNameComponent",
        KEYWORD_NAME_COMPONENT => "KeywordNameComponent",
        SEGMENT_NAME_COMPONENT => "SegmentNameComponent",
        BYTE_OFFSET_NAME_COMPONENT => "ByteOffsetNameComponent",
        VERSION_NAME_COMPONENT => "VersionNameComponent",
        TIMESTAMP_NAME_COMPONENT => "TimestampNameComponent",
        SEQUENCE_NUM_NAME_COMPONENT => "SequenceNumNameComponent",
        CAN_BE_PREFIX => "CanBePrefix",
        MUST_BE_FRESH => "MustBeFresh",
        FORWARDING_HINT => "ForwardingHint",
        NONCE => "Nonce",
        INTEREST_LIFETIME => "InterestLifetime",
        HOP_LIMIT => "HopLimit",
        APPLICATION_PARAMETERS => "ApplicationParameters",
        INTEREST_SIGNATURE_INFO => "InterestSignatureInfo",
        INTEREST_SIGNATURE_VALUE => "InterestSignatureValue",
        META_INFO => "MetaInfo",
        CONTENT_TYPE => "ContentType",
        FRESHNESS_PERIOD => "FreshnessPeriod",
        FINAL_BLOCK_ID => "FinalBlockId",
        CONTENT => "Content",
        SIGNATURE_INFO => "SignatureInfo",
        SIGNATURE_VALUE => "SignatureValue",
        SIGNATURE_TYPE => "SignatureType",
        KEY_LOCATOR => "KeyLocator",
        KEY_DIGEST => "KeyDigest",
        SIGNATURE_NONCE => "SignatureNonce",
        SIGNATURE_TIME => "SignatureTime",
        SIGNATURE_SEQ_NUM => "SignatureSeqNum",
        VALIDITY_PERIOD => "ValidityPeriod",
        NOT_BEFORE => "NotBefore",
        NOT_AFTER => "NotAfter",
        FRAGMENT => "Fragment",
        SEQUENCE => "Sequence",
        FRAG_INDEX => "FragIndex",
        FRAG_COUNT => "FragCount",
        HOP_COUNT => "HopCount",
        PIT_TOKEN => "PitToken",
        NACK => "Nack",
        NACK_REASON => "NackReason",
        INCOMING_FACE_ID => "IncomingFaceId",
        NEXT_HOP_FACE_ID => "NextHopFaceId",
        CACHE_POLICY => "CachePolicy",
        CACHE_POLICY_TYPE => "CachePolicyType",
        CONGESTION_MARK => "CongestionMark",
        ACK => "Ack",
        TX_SEQUENCE => "TxSequence",
        NON_DISCOVERY => "NonDiscovery",
        PREFIX_ANNOUNCEMENT => "PrefixAnnouncement",
        LINK_SECURITY => "LinkSecurity",
        LINK_HANDSHAKE => "LinkHandshake",
        RETRY_AFTER => "RetryAfter",
        _ => "element",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (hex input, expected number and length, or None for an error)
    const VAR_NUMBER_CASES: &[(&str, Option<(u64, usize)>)] = &[
        ("00", Some((0, 1))),
        ("fc", Some((0xfc, 1))),
        ("fd00fd", Some((0xfd, 3))),
        ("fdffff", Some((0xffff, 3))),
        ("fe00010000", Some((0x1_0000, 5))),
        ("ff0000000100000000", Some((0x1_0000_0000, 9))),
        ("fd0001", None),             // non-minimal: 1 in 3 bytes
        ("fe0000ffff", None),         // non-minimal
        ("ff00000000ffffffff", None), // non-minimal
        ("fd00", None),               // truncated
        ("", None),                   // empty
    ];

    #[test]
    fn var_number_vectors() {
        for (input, expect) in VAR_NUMBER_CASES {
            let bytes = hex::decode(input).unwrap();
            let got = read_var_number(&bytes).ok();
            assert_eq!(got, *expect, "input {input}");
        }
    }

    #[test]
    fn var_number_round_trip_boundaries() {
        for n in [
            0,
            0xfc,
            0xfd,
            0xffff,
            0x1_0000,
            0xffff_ffff,
            0x1_0000_0000,
            u64::MAX,
        ] {
            let mut buf = Vec::new();
            put_var_number(&mut buf, n);
            assert_eq!(buf.len(), var_number_len(n));
            assert_eq!(read_var_number(&buf).unwrap(), (n, buf.len()));
        }
    }

    #[test]
    fn nni_widths() {
        assert_eq!(read_nni(&[0x05]), Ok(5));
        assert_eq!(read_nni(&[0x00, 0x05]), Ok(5)); // non-minimal width is allowed
        assert_eq!(read_nni(&[0, 0, 0]), Err(ErrorKind::BadNonNegativeInteger));
        assert_eq!(read_nni(&[]), Err(ErrorKind::BadNonNegativeInteger));
        let octets = [0x81, 0x02, 0x83, 0x04, 0x85, 0x06, 0x87, 0x08, 0x89];
        for len in 0..=octets.len() {
            let value = &octets[..len];
            let expected = match len {
                1 | 2 | 4 | 8 => Ok(value.iter().fold(0, |acc, &b| (acc << 8) | u64::from(b))),
                _ => Err(ErrorKind::BadNonNegativeInteger),
            };
            assert_eq!(read_nni(value), expected, "{len} octets");
        }
        for n in [
            0,
            0xff,
            0x100,
            0xffff,
            0x1_0000,
            u64::from(u32::MAX) + 1,
            u64::MAX,
        ] {
            let mut buf = Vec::new();
            put_nni(&mut buf, n);
            assert_eq!(buf.len(), nni_len(n));
            assert_eq!(read_nni(&buf), Ok(n));
        }
    }

    #[test]
    fn reader_reports_offsets() {
        // 0x08 len 2 "ab", then 0x08 len 5 but only 1 byte left
        let buf = hex::decode("080261620805").unwrap();
        let mut r = Reader::new(&buf);
        let e = r.read_element().unwrap();
        assert_eq!(
            (e.typ, e.value, e.start, e.value_start),
            (8, &b"ab"[..], 0, 2)
        );
        let err = r.read_element().unwrap_err();
        assert_eq!(err.kind, ErrorKind::LengthOverflow);
        assert_eq!(err.offset, 4);
        assert_eq!(err.element, Some(8));
    }

    #[test]
    fn expect_reports_missing_unexpected_and_long_forms() {
        // 0x08 len 1, then 0xfd00fd (type 253) len 1, read with a base of 10
        let buf = hex::decode("080161fd00fd0162").unwrap();
        let mut r = Reader::with_base(&buf, 10);
        let err = r.clone().expect(0x07).unwrap_err();
        assert_eq!(
            err,
            DecodeError::in_element(
                ErrorKind::UnexpectedType {
                    expected: 0x07,
                    found: 0x08
                },
                10,
                0x08
            )
        );
        assert_eq!(r.expect(0x08).unwrap().value, b"a");
        let e = r.clone().expect(0xfd).unwrap();
        assert_eq!((e.start, e.value_start, e.value), (13, 17, &b"b"[..]));
        assert_eq!(r.read().unwrap(), Some(e));
        let err = r.expect(0x08).unwrap_err();
        assert_eq!(err, DecodeError::new(ErrorKind::Missing { typ: 0x08 }, 18));
        assert_eq!(r.read(), Ok(None));
    }

    #[test]
    fn zero_type_is_invalid() {
        let err = read_single(&[0x00, 0x00]).unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidType);
    }

    #[test]
    fn trailing_bytes() {
        let err = read_single(&[0x08, 0x00, 0x08]).unwrap_err();
        assert_eq!(err.kind, ErrorKind::TrailingBytes);
        assert_eq!(err.offset, 2);
    }

    #[test]
    fn critical_rule() {
        assert!(is_critical(0x05));
        assert!(is_critical(31));
        assert!(!is_critical(32));
        assert!(is_critical(33));
        assert!(!is_critical(0x0350));
    }
}

/// A range of a packet in 16-bit offsets, for the views: a packet is at most
/// [`MAX_PACKET_SIZE`] octets, and a view this small moves in registers instead of through
/// `memcpy` (the views are moved several times per packet). `start == 0` means absent: no
/// field of a packet starts at its first octet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    start: u16,
    end: u16,
}

impl Span {
    /// Absent.
    pub(crate) const NONE: Self = Self { start: 0, end: 0 };

    /// `r`, which lies in a packet of at most [`MAX_PACKET_SIZE`] octets.
    #[inline]
    pub(crate) fn of(r: core::ops::Range<usize>) -> Self {
        Self {
            start: r.start as u16,
            end: r.end as u16,
        }
    }

    /// An offset of the packet (absent when 0).
    #[inline]
    pub(crate) fn at(pos: usize) -> u16 {
        pos as u16
    }

    /// The range, or `None` when absent.
    #[inline]
    pub(crate) fn get(self) -> Option<core::ops::Range<usize>> {
        (self.start != 0).then(|| self.range())
    }

    /// The range (empty at 0 when absent).
    #[inline]
    pub(crate) fn range(self) -> core::ops::Range<usize> {
        usize::from(self.start)..usize::from(self.end)
    }
}
