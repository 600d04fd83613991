//! Names and name components, with the typed components of the naming conventions (rev3), NDN
//! URI parsing and printing in canonical form, and canonical ordering.
//!
//= https://docs.named-data.net/NDN-packet-spec/0.3/name.html
//# Name = NAME-TYPE TLV-LENGTH *NameComponent

use core::cmp::Ordering;
use core::fmt;
use core::str::FromStr;

use bytes::{BufMut, Bytes, BytesMut};
use smallvec::SmallVec;

use crate::error::{DecodeError, ErrorKind, ParseError};
use crate::tlv::{self, types, Reader};

/// End offsets of a name's components in its TLV-VALUE (inline up to 16 components).
pub(crate) type ComponentEnds = SmallVec<[u16; 16]>;

/// Component ends being collected: an array and a count that stay in registers while the
/// name is scanned (`SmallVec::push` keeps its length in memory, and each push waited on the
/// previous one's store), spilled to a small vector past 16 components.
struct Ends {
    buf: [u16; 16],
    n: usize,
    spill: Option<ComponentEnds>,
}

impl Ends {
    #[inline(always)]
    fn push(&mut self, end: usize) {
        // Fits: the whole value is at most MAX_PACKET_SIZE (< u16::MAX) bytes.
        let end = end as u16;
        match self.buf.get_mut(self.n) {
            Some(slot) => *slot = end,
            None => self
                .spill
                .get_or_insert_with(|| SmallVec::from_buf(self.buf))
                .push(end),
        }
        self.n += 1;
    }

    #[inline(always)]
    fn finish(self) -> ComponentEnds {
        match self.spill {
            Some(v) => v,
            // n <= 16 here, as `from_buf_and_len` requires.
            None => SmallVec::from_buf_and_len(self.buf, self.n),
        }
    }
}

/// Length in bytes of the SHA-256 digest components.
pub const DIGEST_LEN: usize = 32;

/// An NDN name: the TLV-VALUE of a Name element (its components back to back), with the end
/// offset of every component so that component access and prefixes are O(1).
///
/// Cloning is cheap: the bytes are shared.
#[derive(Clone)]
pub struct Name {
    /// Holds the TLV-VALUE at `start..start + len`: often the whole packet the name was
    /// decoded from, so that a packet view and its name share one handle (one
    /// reference-count update fewer on each side of every packet).
    buf: Bytes,
    start: u32,
    /// The value's length (`ends.last()`, kept here so that reading the value does not go
    /// through the small vector).
    len: u16,
    // Inline up to 16 components: longer names are rare, and 11-component names (a common
    // benchmark shape) must not allocate.
    ends: ComponentEnds,
}

/// A borrowed name component.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ComponentRef<'a> {
    typ: u32,
    value: &'a [u8],
    wire: &'a [u8],
}

/// An owned name component, for building names.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Component {
    /// TLV-TYPE (1..=65535).
    pub typ: u32,
    /// TLV-VALUE.
    pub value: Bytes,
}

impl Name {
    /// The name with no components (`/`).
    pub const fn root() -> Self {
        Self {
            buf: Bytes::new(),
            start: 0,
            len: 0,
            ends: SmallVec::new_const(),
        }
    }

    /// Decodes a whole Name element (`07 LL ...`).
    ///
    /// # Errors
    /// A malformed element, another TLV-TYPE, or a bad component.
    pub fn decode(wire: &Bytes) -> Result<Self, DecodeError> {
        let e = tlv::read_single(wire)?;
        if e.typ != types::NAME {
            return Err(e.error(ErrorKind::UnexpectedType {
                expected: types::NAME,
                found: e.typ,
            }));
        }
        Self::from_value_in(wire.clone(), e.value_range())
    }

    /// Builds a name from the TLV-VALUE of a Name element; `base` is the value's offset in the
    /// enclosing packet, used for error locations.
    ///
    /// # Errors
    /// A malformed component, a component type out of 1..=65535, a digest component whose
    /// value is not 32 bytes, or a name longer than the packet size limit.
    #[inline(always)]
    pub fn from_value(value: Bytes, base: usize) -> Result<Self, DecodeError> {
        let (ends, _) = Self::scan_value(&value, base)?;
        Ok(Self::from_parts(value, 0, ends))
    }

    /// Builds a name from the TLV-VALUE at `range` of `packet`, keeping the whole packet
    /// (shared, not sliced): a decoder's view and its name then hold one handle.
    /// `range.start` is also the error location base.
    ///
    /// # Errors
    /// As [`Name::from_value`]; [`ErrorKind::Truncated`] when `range` is not in `packet`,
    /// [`ErrorKind::TooLarge`] when it ends past 4 GiB.
    #[inline(always)]
    pub fn from_value_in(
        packet: Bytes,
        range: core::ops::Range<usize>,
    ) -> Result<Self, DecodeError> {
        let start = range.start;
        if u32::try_from(range.end).is_err() {
            return Err(DecodeError::new(ErrorKind::TooLarge, start));
        }
        let Some(value) = packet.get(range) else {
            return Err(DecodeError::new(ErrorKind::Truncated, start));
        };
        let (ends, _) = Self::scan_value(value, start)?;
        Ok(Self::from_parts(packet, start, ends))
    }

    /// Checks the TLV-VALUE of a Name element and returns its component ends and how many
    /// ParametersSha256DigestComponents it has, for a decoder that builds the name later
    /// with [`Name::from_parts`].
    #[inline(always)]
    pub(crate) fn scan_value(
        value: &[u8],
        base: usize,
    ) -> Result<(ComponentEnds, usize), DecodeError> {
        if value.len() > tlv::MAX_PACKET_SIZE {
            return Err(DecodeError::in_element(
                ErrorKind::TooLarge,
                base,
                types::NAME,
            ));
        }
        // Fast path (`scan_simple`); anything else (a digest, a longer form, an error)
        // continues in `scan_value_rest` from the first component the fast path did not take,
        // so the checks and errors are those of `scan_components`.
        let mut buf = [0u16; 16];
        let (n, rest) = scan_simple(value, &mut buf);
        if n > 16 {
            return scan_value_rest(value, base, [0; 16], 0);
        }
        if rest.is_empty() {
            // n <= 16, as `from_buf_and_len` requires.
            return Ok((SmallVec::from_buf_and_len(buf, n), 0));
        }
        scan_value_rest(value, base, buf, n)
    }

    /// The name whose value starts at `start` in `buf`, with components ending at `ends`
    /// (from [`Name::scan_value`] over that value).
    #[inline(always)]
    pub(crate) fn from_parts(buf: Bytes, start: usize, ends: ComponentEnds) -> Self {
        // Both fit: a value is at most MAX_PACKET_SIZE octets, in a buffer the decoders
        // accept (at most MAX_PACKET_SIZE too, or a management response under 4 GiB).
        let len = ends.last().copied().unwrap_or(0);
        Self {
            buf,
            start: start as u32,
            len,
            ends,
        }
    }

    /// The name whose value, of `len` octets, starts at `start` in `buf`, with the first `n`
    /// of `ends` as its component ends: what [`scan_simple`] took of the whole value, `n <= 16`.
    #[inline(always)]
    pub(crate) fn from_simple_scan(
        buf: Bytes,
        start: usize,
        len: usize,
        ends: [u16; 16],
        n: usize,
    ) -> Self {
        // The casts fit, as in `from_parts`; n <= 16, as `from_buf_and_len` requires.
        Self {
            buf,
            start: start as u32,
            len: len as u16,
            ends: SmallVec::from_buf_and_len(ends, n),
        }
    }

    /// The buffer the name's value lives in (the whole packet for a decoded name).
    #[inline]
    pub(crate) fn backing(&self) -> &Bytes {
        &self.buf
    }

    /// Where the value sits in [`Name::backing`], as (start, length): offsets of a packet the
    /// views accept (at most MAX_PACKET_SIZE octets, so they fit).
    #[inline]
    pub(crate) fn value_span(&self) -> (u16, u16) {
        (self.start as u16, self.len)
    }

    /// The buffer the name's value lives in, taken out of the name.
    #[inline]
    pub(crate) fn into_backing(self) -> Bytes {
        self.buf
    }

    /// The same name over `packet`, a copy of the backing buffer with other octets changed
    /// (a patched Nonce): the value must sit at the same place.
    pub(crate) fn rebase(&mut self, packet: Bytes) {
        debug_assert_eq!(packet.get(self.value_range()), Some(self.value_bytes()));
        self.buf = packet;
    }

    /// Where the value sits in [`Name::backing`].
    #[inline]
    fn value_range(&self) -> core::ops::Range<usize> {
        let start = self.start as usize;
        start..start + usize::from(self.len)
    }

    /// Checks the TLV-VALUE of a Name element as [`Name::from_value`] does, without building
    /// the name.
    ///
    /// # Errors
    /// As [`Name::from_value`].
    pub fn check_value(value: &[u8], base: usize) -> Result<(), DecodeError> {
        if value.len() > tlv::MAX_PACKET_SIZE {
            return Err(DecodeError::in_element(
                ErrorKind::TooLarge,
                base,
                types::NAME,
            ));
        }
        // The fast path of `scan_value` (its ends unused), then the general walk from the
        // first component it did not take, if any.
        let (_, rest) = scan_simple(value, &mut [0; 16]);
        if rest.is_empty() {
            return Ok(());
        }
        check_value_rest(value, base, value.len() - rest.len())
    }

    /// Builds a name from owned components.
    ///
    /// # Errors
    /// [`ParseError::TooLong`] past the packet size limit, [`ParseError::BadType`] for a
    /// component type out of range or a digest of the wrong length.
    pub fn from_components<'c>(
        comps: impl IntoIterator<Item = &'c Component>,
    ) -> Result<Self, ParseError> {
        let mut buf = BytesMut::new();
        let mut ends = SmallVec::new();
        for c in comps {
            check_component(c.typ, c.value.len())
                .map_err(|_| ParseError::BadType(c.typ.to_string()))?;
            tlv::put_tlv(&mut buf, c.typ, &c.value);
            if buf.len() > tlv::MAX_PACKET_SIZE {
                return Err(ParseError::TooLong);
            }
            ends.push(buf.len() as u16);
        }
        Ok(Self::from_parts(buf.freeze(), 0, ends))
    }

    /// Number of components.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether this is the root name (no components).
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Component `i`, or `None` past the end. Negative indexes are not supported; use
    /// [`Name::last`].
    pub fn get(&self, i: usize) -> Option<ComponentRef<'_>> {
        let end = usize::from(*self.ends.get(i)?);
        let start = if i == 0 {
            0
        } else {
            usize::from(*self.ends.get(i - 1)?)
        };
        let wire = self.value_bytes().get(start..end)?;
        parse_component(wire)
    }

    /// The last component.
    pub fn last(&self) -> Option<ComponentRef<'_>> {
        self.get(self.len().checked_sub(1)?)
    }

    /// Iterates over the components.
    pub fn iter(&self) -> impl Iterator<Item = ComponentRef<'_>> + '_ {
        (0..self.len()).filter_map(move |i| self.get(i))
    }

    /// The whole TLV of each component, in order, sliced at the recorded component ends
    /// without decoding anything (the hashing fast path).
    pub fn component_wires(&self) -> impl Iterator<Item = &[u8]> + '_ {
        // Each component is cut off the front of the rest of the value: one length check a
        // component (the ends are increasing and within the value, so it always passes), and
        // a `map` over the ends keeps the iterator's exact size, so that zipping it with a
        // slice runs on one counter.
        let mut rest = self.value_bytes();
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let end = usize::from(end);
            let (wire, tail) = rest
                .split_at_checked(end.wrapping_sub(start))
                .unwrap_or((rest, &[]));
            (start, rest) = (end, tail);
            wire
        })
    }

    /// The end offset of each component in [`Name::value_bytes`].
    #[inline]
    pub(crate) fn ends(&self) -> &[u16] {
        &self.ends
    }

    /// The first `n` components (all of them when `n >= len`). Shares the bytes.
    pub fn prefix(&self, n: usize) -> Self {
        let ends = self.ends.iter().take(n).copied().collect();
        Self::from_parts(self.buf.clone(), self.start as usize, ends)
    }

    /// Byte length of the encoding of the first `n` components (TLV-VALUE bytes).
    pub fn prefix_value_len(&self, n: usize) -> usize {
        match n {
            0 => 0,
            n => self
                .ends
                .get(n.min(self.len()) - 1)
                .map_or(0, |e| usize::from(*e)),
        }
    }

    /// Whether `self` is a prefix of (or equal to) `other`.
    pub fn is_prefix_of(&self, other: &Name) -> bool {
        self.len() <= other.len() && other.value_bytes().starts_with(self.value_bytes())
    }

    /// A new name with `c` appended.
    ///
    /// # Errors
    /// As [`Name::from_components`].
    pub fn append(&self, c: &Component) -> Result<Self, ParseError> {
        check_component(c.typ, c.value.len())
            .map_err(|_| ParseError::BadType(c.typ.to_string()))?;
        let value = self.value_bytes();
        let mut buf = BytesMut::with_capacity(value.len() + c.value.len() + 8);
        buf.put_slice(value);
        tlv::put_tlv(&mut buf, c.typ, &c.value);
        if buf.len() > tlv::MAX_PACKET_SIZE {
            return Err(ParseError::TooLong);
        }
        let mut ends = self.ends.clone();
        ends.push(buf.len() as u16);
        Ok(Self::from_parts(buf.freeze(), 0, ends))
    }

    /// The TLV-VALUE of the Name element (component TLVs back to back).
    #[inline]
    pub fn value_bytes(&self) -> &[u8] {
        self.buf.get(self.value_range()).unwrap_or_default()
    }

    /// Size of the whole Name element.
    pub fn encoded_len(&self) -> usize {
        tlv::tlv_len(types::NAME, self.value_bytes().len())
    }

    /// Writes the whole Name element.
    pub fn encode(&self, buf: &mut impl BufMut) {
        tlv::put_tlv(buf, types::NAME, self.value_bytes());
    }

    /// The whole Name element as bytes.
    pub fn to_wire(&self) -> Bytes {
        let mut buf = BytesMut::with_capacity(self.encoded_len());
        self.encode(&mut buf);
        buf.freeze()
    }

    /// Compares two names in the canonical order of the spec: component by component, a
    /// shorter name first when it is a prefix of the longer.
    pub fn canonical_cmp(&self, other: &Name) -> Ordering {
        for (a, b) in self.iter().zip(other.iter()) {
            match a.canonical_cmp(&b) {
                Ordering::Equal => {}
                o => return o,
            }
        }
        self.len().cmp(&other.len())
    }
}

/// The fast path of [`Name::scan_value`]: takes components with one-octet TYPE and LENGTH
/// and a TYPE other than the two digests (whose length is constrained) from the front of
/// `value`, writing their ends to `ends` (component `i` at `i % 16`); returns how many it took
/// and the rest of the value. Such a TYPE is in range and such a LENGTH needs no other check
/// than fitting in the value, so when the rest is empty and at most 16 components were taken,
/// the general walk accepts the value with these ends and no ParametersSha256DigestComponent.
#[inline(always)]
pub(crate) fn scan_simple<'v>(value: &'v [u8], ends: &mut [u16; 16]) -> (usize, &'v [u8]) {
    let mut n = 0;
    let mut pos = 0;
    while let Some(&[3..=0xfc, l @ 0..=0xfc]) = value.get(pos..pos + 2) {
        let end = pos + 2 + usize::from(l);
        if end > value.len() {
            break;
        }
        pos = end;
        // The index wraps past 16 components rather than ending the loop, which kept the
        // compiler from unrolling it 16 times (with every end in a register, then stored one
        // by one); the caller scans such a name again. The end fits: a value the decoders
        // take is at most MAX_PACKET_SIZE (< u16::MAX) octets.
        if let Some(slot) = ends.get_mut(n % 16) {
            *slot = pos as u16;
        }
        n += 1;
    }
    (n, value.get(pos..).unwrap_or_default())
}

/// The rest of [`Name::check_value`] from `pos`, the first component its fast path did not take.
#[cold]
#[inline(never)]
fn check_value_rest(value: &[u8], base: usize, pos: usize) -> Result<(), DecodeError> {
    scan_components(value, base, pos, |_| {}).map(drop)
}

/// The rest of [`Name::scan_value`] after its fast path took the first `n` components (their
/// ends in `buf`).
#[cold]
#[inline(never)]
fn scan_value_rest(
    value: &[u8],
    base: usize,
    buf: [u16; 16],
    n: usize,
) -> Result<(ComponentEnds, usize), DecodeError> {
    let pos = n
        .checked_sub(1)
        .and_then(|i| buf.get(i))
        .map_or(0, |&e| usize::from(e));
    let mut ends = Ends {
        buf,
        n,
        spill: None,
    };
    let parameters_digests = scan_components(value, base, pos, |end| ends.push(end))?;
    Ok((ends.finish(), parameters_digests))
}

/// Walks the components of a Name TLV-VALUE, checking each (TYPE in 1..=65535, digest
/// components 32 bytes long) and reporting the end offset of each to `on_end`; `base` is the
/// value's offset in the packet, for error locations; the walk starts at `pos`, a component
/// boundary. Returns how many components are ParametersSha256DigestComponents (an Interest
/// checks them against its parameters).
#[inline(always)]
fn scan_components(
    value: &[u8],
    base: usize,
    mut pos: usize,
    mut on_end: impl FnMut(usize),
) -> Result<usize, DecodeError> {
    if value.len() > tlv::MAX_PACKET_SIZE {
        return Err(DecodeError::in_element(
            ErrorKind::TooLarge,
            base,
            types::NAME,
        ));
    }
    let mut parameters_digests = 0;
    while let Some(rest) = value.get(pos..).filter(|r| !r.is_empty()) {
        // Fast path for one-octet TYPE and LENGTH (nearly every component): such a TYPE is in
        // range, and only types 1 and 2 (the digests) constrain the length. The general
        // reader handles the rest and reports errors.
        let (typ, size) = match rest {
            [t @ 1..=0xfc, l @ 0..=0xfc, ..] if usize::from(*l) + 2 <= rest.len() => {
                let (typ, len) = (u32::from(*t), usize::from(*l));
                if typ <= types::PARAMETERS_SHA256_DIGEST_COMPONENT {
                    check_component(typ, len)
                        .map_err(|k| DecodeError::in_element(k, base + pos, typ))?;
                }
                (typ, len + 2)
            }
            _ => {
                let c = Reader::with_base(rest, base + pos).read_element()?;
                check_component(c.typ, c.value.len())
                    .map_err(|k| DecodeError::in_element(k, base + pos, c.typ))?;
                (c.typ, c.end() - (base + pos))
            }
        };
        if typ == types::PARAMETERS_SHA256_DIGEST_COMPONENT {
            parameters_digests += 1;
        }
        pos += size;
        on_end(pos);
    }
    Ok(parameters_digests)
}

/// Checks the constraints of a component TLV-TYPE and length.
fn check_component(typ: u32, len: usize) -> Result<(), ErrorKind> {
    //= https://docs.named-data.net/NDN-packet-spec/0.3/name.html#name-component-types
    //# NameComponent TLV-TYPE ... MUST be in the range 1-65535 (inclusive)
    if !(1..=0xffff).contains(&typ) {
        return Err(ErrorKind::InvalidValue(
            "name component type outside 1..=65535",
        ));
    }
    let is_digest = typ == types::IMPLICIT_SHA256_DIGEST_COMPONENT
        || typ == types::PARAMETERS_SHA256_DIGEST_COMPONENT;
    if is_digest && len != DIGEST_LEN {
        return Err(ErrorKind::InvalidValue("digest component is not 32 bytes"));
    }
    Ok(())
}

/// Parses one already-validated component TLV.
fn parse_component(wire: &[u8]) -> Option<ComponentRef<'_>> {
    let (typ, tn) = tlv::read_var_number(wire).ok()?;
    let (_, ln) = tlv::read_var_number(wire.get(tn..)?).ok()?;
    Some(ComponentRef {
        typ: typ as u32,
        value: wire.get(tn + ln..)?,
        wire,
    })
}

impl PartialEq for Name {
    fn eq(&self, other: &Self) -> bool {
        // VAR-NUMBERs are decoded only in shortest form, so equal names have equal bytes.
        self.value_bytes() == other.value_bytes()
    }
}

impl Eq for Name {}

impl core::hash::Hash for Name {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.value_bytes().hash(state);
    }
}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Name {
    fn cmp(&self, other: &Self) -> Ordering {
        self.canonical_cmp(other)
    }
}

impl Default for Name {
    fn default() -> Self {
        Self::root()
    }
}

impl<'a> ComponentRef<'a> {
    /// TLV-TYPE.
    pub const fn typ(&self) -> u32 {
        self.typ
    }

    /// TLV-VALUE.
    pub const fn value(&self) -> &'a [u8] {
        self.value
    }

    /// The whole component TLV.
    pub const fn wire(&self) -> &'a [u8] {
        self.wire
    }

    /// The value as a NonNegativeInteger (segment, version, ...), if it is one.
    pub fn as_number(&self) -> Option<u64> {
        tlv::read_nni(self.value).ok()
    }

    /// The segment number, if this is a SegmentNameComponent.
    pub fn as_segment(&self) -> Option<u64> {
        (self.typ == types::SEGMENT_NAME_COMPONENT)
            .then(|| self.as_number())
            .flatten()
    }

    /// The version, if this is a VersionNameComponent.
    pub fn as_version(&self) -> Option<u64> {
        (self.typ == types::VERSION_NAME_COMPONENT)
            .then(|| self.as_number())
            .flatten()
    }

    /// An owned copy.
    pub fn to_owned(&self) -> Component {
        Component {
            typ: self.typ,
            value: Bytes::copy_from_slice(self.value),
        }
    }

    /// Canonical order: by type, then by length, then byte-wise.
    pub fn canonical_cmp(&self, other: &ComponentRef<'_>) -> Ordering {
        self.typ
            .cmp(&other.typ)
            .then(self.value.len().cmp(&other.value.len()))
            .then_with(|| self.value.cmp(other.value))
    }
}

impl Component {
    /// A GenericNameComponent.
    pub fn generic(value: impl Into<Bytes>) -> Self {
        Self {
            typ: types::GENERIC_NAME_COMPONENT,
            value: value.into(),
        }
    }

    /// A component of type `typ` whose value is the NonNegativeInteger `n`.
    pub fn number(typ: u32, n: u64) -> Self {
        let mut v = BytesMut::with_capacity(8);
        tlv::put_nni(&mut v, n);
        Self {
            typ,
            value: v.freeze(),
        }
    }

    /// A SegmentNameComponent (`seg=`).
    pub fn segment(n: u64) -> Self {
        Self::number(types::SEGMENT_NAME_COMPONENT, n)
    }

    /// A VersionNameComponent (`v=`).
    pub fn version(n: u64) -> Self {
        Self::number(types::VERSION_NAME_COMPONENT, n)
    }

    /// A TimestampNameComponent (`t=`, microseconds since the Unix epoch).
    pub fn timestamp(n: u64) -> Self {
        Self::number(types::TIMESTAMP_NAME_COMPONENT, n)
    }

    /// A SequenceNumNameComponent (`seq=`).
    pub fn sequence_num(n: u64) -> Self {
        Self::number(types::SEQUENCE_NUM_NAME_COMPONENT, n)
    }

    /// A ByteOffsetNameComponent (`off=`).
    pub fn byte_offset(n: u64) -> Self {
        Self::number(types::BYTE_OFFSET_NAME_COMPONENT, n)
    }

    /// An ImplicitSha256DigestComponent.
    pub fn implicit_digest(digest: [u8; DIGEST_LEN]) -> Self {
        Self {
            typ: types::IMPLICIT_SHA256_DIGEST_COMPONENT,
            value: Bytes::copy_from_slice(&digest),
        }
    }

    /// A ParametersSha256DigestComponent.
    pub fn parameters_digest(digest: [u8; DIGEST_LEN]) -> Self {
        Self {
            typ: types::PARAMETERS_SHA256_DIGEST_COMPONENT,
            value: Bytes::copy_from_slice(&digest),
        }
    }

    /// Parses one component in NDN URI form (`abc`, `seg=3`, `sha256digest=...`, `32=x`).
    ///
    /// # Errors
    /// A bad escape, type or value.
    pub fn from_uri(s: &str) -> Result<Self, ParseError> {
        parse_uri_component(s)
    }
}

/// The URI keyword for a typed component whose value is a number, as in naming conventions rev3.
fn number_keyword(typ: u32) -> Option<&'static str> {
    match typ {
        types::SEGMENT_NAME_COMPONENT => Some("seg"),
        types::BYTE_OFFSET_NAME_COMPONENT => Some("off"),
        types::VERSION_NAME_COMPONENT => Some("v"),
        types::TIMESTAMP_NAME_COMPONENT => Some("t"),
        types::SEQUENCE_NUM_NAME_COMPONENT => Some("seq"),
        _ => None,
    }
}

fn digest_keyword(typ: u32) -> Option<&'static str> {
    match typ {
        types::IMPLICIT_SHA256_DIGEST_COMPONENT => Some("sha256digest"),
        types::PARAMETERS_SHA256_DIGEST_COMPONENT => Some("params-sha256"),
        _ => None,
    }
}

impl fmt::Display for ComponentRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(kw) = digest_keyword(self.typ) {
            return write!(f, "{kw}={}", hex::encode(self.value));
        }
        if let (Some(kw), Some(n)) = (number_keyword(self.typ), self.as_number()) {
            return write!(f, "{kw}={n}");
        }
        if self.typ != types::GENERIC_NAME_COMPONENT {
            write!(f, "{}=", self.typ)?;
        }
        write_escaped(f, self.value)
    }
}

impl fmt::Debug for ComponentRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Percent-encodes a value as ndn-cxx does: unreserved characters stay, others become `%XX`;
/// a value made only of periods gets three more periods.
fn write_escaped(f: &mut fmt::Formatter<'_>, value: &[u8]) -> fmt::Result {
    if value.iter().all(|&b| b == b'.') {
        for _ in 0..value.len() + 3 {
            f.write_str(".")?;
        }
        return Ok(());
    }
    for &b in value {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            write!(f, "{}", b as char)?;
        } else {
            write!(f, "%{b:02X}")?;
        }
    }
    Ok(())
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("/");
        }
        for c in self.iter() {
            write!(f, "/{c}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Name({self})")
    }
}

impl FromStr for Name {
    type Err = ParseError;

    /// Parses an NDN URI: `/a/b`, `ndn:/a/b`, typed components (`seg=1`, `v=2`, `t=3`,
    /// `seq=4`, `off=5`, `sha256digest=<hex>`, `params-sha256=<hex>`, `N=value`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let path = s.strip_prefix("ndn:").unwrap_or(s);
        let Some(path) = path.strip_prefix('/') else {
            return Err(ParseError::NotAbsolute);
        };
        let comps = path
            .split('/')
            .filter(|c| !c.is_empty())
            .map(parse_uri_component)
            .collect::<Result<Vec<_>, _>>()?;
        Name::from_components(&comps)
    }
}

fn parse_uri_component(s: &str) -> Result<Component, ParseError> {
    let (typ, rest) = match s.split_once('=') {
        Some((t, v)) => (Some(t), v),
        None => (None, s),
    };
    let Some(t) = typ else {
        return Ok(Component::generic(unescape_value(s)?));
    };
    match t {
        "seg" | "off" | "v" | "t" | "seq" => {
            let n: u64 = rest
                .parse()
                .map_err(|_| ParseError::BadValue(s.to_owned()))?;
            let typ = match t {
                "seg" => types::SEGMENT_NAME_COMPONENT,
                "off" => types::BYTE_OFFSET_NAME_COMPONENT,
                "v" => types::VERSION_NAME_COMPONENT,
                "t" => types::TIMESTAMP_NAME_COMPONENT,
                _ => types::SEQUENCE_NUM_NAME_COMPONENT,
            };
            Ok(Component::number(typ, n))
        }
        "sha256digest" | "params-sha256" => {
            let digest = parse_hex32(rest).ok_or_else(|| ParseError::BadValue(s.to_owned()))?;
            Ok(if t == "sha256digest" {
                Component::implicit_digest(digest)
            } else {
                Component::parameters_digest(digest)
            })
        }
        _ if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => {
            let typ: u32 = t.parse().map_err(|_| ParseError::BadType(s.to_owned()))?;
            let value = unescape_value(rest)?;
            check_component(typ, value.len()).map_err(|_| ParseError::BadType(s.to_owned()))?;
            Ok(Component { typ, value })
        }
        _ => Err(ParseError::BadType(s.to_owned())),
    }
}

fn parse_hex32(s: &str) -> Option<[u8; DIGEST_LEN]> {
    let mut out = [0u8; DIGEST_LEN];
    hex::decode_to_slice(s, &mut out).ok()?;
    Some(out)
}

/// Decodes percent escapes and the period rule.
fn unescape_value(s: &str) -> Result<Bytes, ParseError> {
    if !s.is_empty() && s.bytes().all(|b| b == b'.') {
        if s.len() < 3 {
            return Err(ParseError::BadPeriods(s.to_owned()));
        }
        return Ok(Bytes::from(vec![b'.'; s.len() - 3]));
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3).ok_or(ParseError::BadPercent(i))?;
            let hex = core::str::from_utf8(hex).map_err(|_| ParseError::BadPercent(i))?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| ParseError::BadPercent(i))?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    Ok(Bytes::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    #[test]
    fn decoded_names_of_every_length_keep_their_components() {
        // The scan keeps 16 component ends inline and spills past them.
        for len in [0usize, 1, 15, 16, 17, 40] {
            let uri: String = (0..len).map(|i| format!("/c{i}")).collect();
            let built = if uri.is_empty() {
                Name::root()
            } else {
                n(&uri)
            };
            let decoded = Name::decode(&built.to_wire()).unwrap();
            assert_eq!(decoded, built);
            assert_eq!(decoded.len(), len);
            for i in 0..len {
                assert_eq!(decoded.get(i).unwrap().value(), format!("c{i}").as_bytes());
                assert_eq!(decoded.prefix(i + 1), built.prefix(i + 1));
            }
        }
    }

    #[test]
    fn uri_round_trips_in_canonical_form() {
        let cases = [
            ("/", "/"),
            ("ndn:/a/b", "/a/b"),
            ("/a/b/", "/a/b"),
            ("/hello%20world/%7E", "/hello%20world/~"),
            ("/.../....", "/.../...."),
            (
                "/seg=3/v=1700000000000/t=5/seq=9/off=4096",
                "/seg=3/v=1700000000000/t=5/seq=9/off=4096",
            ),
            ("/8=abc", "/abc"),
            ("/32=kw", "/32=kw"),
            ("/1000=%00%01", "/1000=%00%01"),
            ("/a%3Db", "/a%3Db"),
        ];
        for (input, canonical) in cases {
            assert_eq!(n(input).to_string(), canonical, "{input}");
            assert_eq!(n(canonical).to_string(), canonical);
        }
    }

    #[test]
    fn digest_components() {
        let hex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
        let name = n(&format!("/a/sha256digest={hex}"));
        assert_eq!(
            name.last().unwrap().typ(),
            types::IMPLICIT_SHA256_DIGEST_COMPONENT
        );
        assert_eq!(name.to_string(), format!("/a/sha256digest={hex}"));
        let upper = n(&format!("/a/params-sha256={}", hex.to_uppercase()));
        assert_eq!(upper.to_string(), format!("/a/params-sha256={hex}"));
        assert!("/sha256digest=00".parse::<Name>().is_err());
    }

    #[test]
    fn bad_uris() {
        assert_eq!("a/b".parse::<Name>(), Err(ParseError::NotAbsolute));
        assert!(matches!(
            "/%4".parse::<Name>(),
            Err(ParseError::BadPercent(_))
        ));
        assert!(matches!(
            "/..".parse::<Name>(),
            Err(ParseError::BadPeriods(_))
        ));
        assert!(matches!(
            "/seg=x".parse::<Name>(),
            Err(ParseError::BadValue(_))
        ));
        assert!(matches!(
            "/0=x".parse::<Name>(),
            Err(ParseError::BadType(_))
        ));
        // as ndn-cxx: an unknown keyword before '=' is an error ('=' in data is written %3D)
        assert!(matches!(
            "/a=b".parse::<Name>(),
            Err(ParseError::BadType(_))
        ));
        assert!(matches!(
            "/65536=x".parse::<Name>(),
            Err(ParseError::BadType(_))
        ));
    }

    #[test]
    fn wire_encoding_matches_spec_example() {
        // /example/x as python-ndn encodes it (docs/nfd-interop.md §3.5)
        let wire = hex::decode("070c08076578616d706c65080178").unwrap();
        let name = Name::decode(&Bytes::from(wire.clone())).unwrap();
        assert_eq!(name.to_string(), "/example/x");
        assert_eq!(name.to_wire().as_ref(), &wire[..]);
    }

    #[test]
    fn canonical_order() {
        let mut names = [
            n("/b"),
            n("/a/b"),
            n("/aa"),
            n("/a"),
            n("/"),
            n("/seg=0"),
            n("/%00"),
        ];
        names.sort();
        let s: Vec<_> = names.iter().map(ToString::to_string).collect();
        // generic (8) < segment (0x32); shorter value first; then bytes
        assert_eq!(s, ["/", "/%00", "/a", "/a/b", "/b", "/aa", "/seg=0"]);
    }

    #[test]
    fn prefixes() {
        let name = n("/a/b/c");
        assert_eq!(name.prefix(2), n("/a/b"));
        assert_eq!(name.prefix(0), Name::root());
        assert_eq!(name.prefix(9), name);
        assert!(n("/a/b").is_prefix_of(&name));
        assert!(!n("/a/bc").is_prefix_of(&n("/a/b")));
        assert!(!n("/a/b").is_prefix_of(&n("/a/bc")));
    }

    /// The name scan as it was before its fast path: every component through the general
    /// walk, from the start.
    fn scan_reference(value: &[u8], base: usize) -> Result<(Vec<u16>, usize), DecodeError> {
        let mut ends = Vec::new();
        let digests = scan_components(value, base, 0, |e| ends.push(e as u16))?;
        Ok((ends, digests))
    }

    /// Every one-octet corruption and every truncation of names with short and long forms,
    /// digests, and 16 or more components: the fast scan accepts exactly what the general walk
    /// accepts, with the same ends, digest count and error.
    #[test]
    fn scan_agrees_with_the_general_walk() {
        let digest = Component::parameters_digest([0x11; DIGEST_LEN]);
        let long_type = Component {
            typ: 0x1234,
            value: Bytes::from_static(b"x"),
        };
        let long_value = Component {
            typ: types::GENERIC_NAME_COMPONENT,
            value: Bytes::from(vec![0x61; 300]),
        };
        let mut names: Vec<Vec<Component>> = Vec::new();
        for len in [0usize, 1, 4, 11, 15, 16, 17, 20] {
            let uri: String = (0..len).map(|i| format!("/c{i}")).collect();
            let name = if uri.is_empty() {
                Name::root()
            } else {
                n(&uri)
            };
            names.push(name.iter().map(|c| c.to_owned()).collect());
        }
        for (at, extra) in [
            (0, &digest),
            (3, &digest),
            (16, &digest),
            (2, &long_type),
            (1, &long_value),
        ] {
            let mut comps: Vec<Component> = n("/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q")
                .iter()
                .map(|c| c.to_owned())
                .collect();
            comps.insert(at, extra.clone());
            names.push(comps);
        }
        let mut checked = 0;
        for comps in &names {
            let value = Name::from_components(comps).unwrap().value_bytes().to_vec();
            let octets = [0x00, 0x01, 0x02, 0x03, 0x20, 0xfc, 0xfd, 0xfe, 0xff];
            for w in &crate::testutil::octet_variants(&value, &octets) {
                let fast = Name::scan_value(w, 7).map(|(ends, d)| (ends.to_vec(), d));
                let reference = scan_reference(w, 7);
                assert_eq!(
                    Name::check_value(w, 7),
                    reference.clone().map(drop),
                    "{}",
                    hex::encode(w)
                );
                assert_eq!(fast, reference, "{}", hex::encode(w));
                checked += 1;
            }
        }
        assert!(checked > 1000);
    }

    #[test]
    fn decode_rejects_bad_components() {
        // digest component of length 1
        let bad = Bytes::from_static(&[0x07, 0x03, 0x01, 0x01, 0xaa]);
        assert!(Name::decode(&bad).is_err());
        // component type 0
        let bad = Bytes::from_static(&[0x07, 0x02, 0x00, 0x00]);
        assert_eq!(Name::decode(&bad).unwrap_err().kind, ErrorKind::InvalidType);
        // truncated
        let bad = Bytes::from_static(&[0x07, 0x03, 0x08, 0x05, 0x61]);
        assert_eq!(
            Name::decode(&bad).unwrap_err().kind,
            ErrorKind::LengthOverflow
        );
    }
}
