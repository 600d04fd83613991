//! Shared decoding and encoding helpers of the management TLVs.

use bytes::Bytes;

use crate::error::{DecodeError, ErrorKind};
use crate::name::Name;
use crate::signature::slice_abs;
use crate::tlv::{self, Element, Reader};

/// Reads the known fields of a container in order, skipping unrecognized non-critical ones.
///
/// Order is given by rank functions (0 = unknown, then increasing). A container may accept
/// two canonical orders (ControlParameters: python-ndn's and ndn-cxx's); a field is out of
/// order when the fields so far follow neither.
pub(crate) struct Fields<'a> {
    container: Element<'a>,
    reader: Reader<'a>,
    orders: [Order; 2],
    repeatable: Option<u32>,
    /// Bit `rank` (in the first order) set for every known field read.
    seen: u64,
}

#[derive(Clone, Copy)]
struct Order {
    rank: fn(u32) -> u8,
    last: u8,
    ok: bool,
}

impl<'a> Fields<'a> {
    /// Fields of `container` in the single order `rank`.
    pub(crate) fn new(container: &Element<'a>, rank: fn(u32) -> u8) -> Self {
        Self::either(container, rank, rank)
    }

    /// Fields of `container` in order `a` or order `b`. Both must know the same types.
    pub(crate) fn either(container: &Element<'a>, a: fn(u32) -> u8, b: fn(u32) -> u8) -> Self {
        let order = |rank| Order {
            rank,
            last: 0,
            ok: true,
        };
        Self {
            container: *container,
            reader: container.children(),
            orders: [order(a), order(b)],
            repeatable: None,
            seen: 0,
        }
    }

    /// Allows `typ` to repeat (back to back).
    pub(crate) fn repeatable(mut self, typ: u32) -> Self {
        self.repeatable = Some(typ);
        self
    }

    /// The next known field.
    ///
    /// # Errors
    /// A malformed element, an unrecognized critical field, or a known field out of order or
    /// repeated.
    pub(crate) fn next(&mut self) -> Result<Option<Element<'a>>, DecodeError> {
        while let Some(e) = self.reader.read()? {
            if (self.orders[0].rank)(e.typ) == 0 {
                tlv::skip_unrecognized(&e)?;
                continue;
            }
            let repeat = self.repeatable == Some(e.typ);
            for o in &mut self.orders {
                let rank = (o.rank)(e.typ);
                if rank < o.last || (rank == o.last && !repeat) {
                    o.ok = false;
                }
                o.last = rank;
            }
            if !self.orders.iter().any(|o| o.ok) {
                return Err(e.error(ErrorKind::OutOfOrder { typ: e.typ }));
            }
            self.seen |= rank_bit(self.orders[0].rank, e.typ);
            return Ok(Some(e));
        }
        Ok(None)
    }
}

impl Fields<'_> {
    /// Checks that every field of `required` was read (call after the last `next`).
    ///
    /// # Errors
    /// [`ErrorKind::Missing`] for the first field not read, located at the container.
    pub(crate) fn require(&self, required: &[u32]) -> Result<(), DecodeError> {
        let rank = self.orders[0].rank;
        match required
            .iter()
            .find(|&&t| self.seen & rank_bit(rank, t) == 0)
        {
            Some(&typ) => Err(self.container.error(ErrorKind::Missing { typ })),
            None => Ok(()),
        }
    }
}

/// The `seen` bit of a field (ranks are below 64).
fn rank_bit(rank: fn(u32) -> u8, typ: u32) -> u64 {
    1u64.checked_shl(u32::from(rank(typ))).unwrap_or(0)
}

/// Reads exactly one element of type `typ` spanning all of `wire`.
pub(crate) fn top(wire: &Bytes, typ: u32) -> Result<Element<'_>, DecodeError> {
    let e = tlv::read_single(wire)?;
    if e.typ != typ {
        return Err(e.error(ErrorKind::UnexpectedType {
            expected: typ,
            found: e.typ,
        }));
    }
    Ok(e)
}

/// Decodes a Content made of `typ` elements back to back.
pub(crate) fn list<T>(
    content: &Bytes,
    typ: u32,
    decode: fn(&Bytes, &Element<'_>) -> Result<T, DecodeError>,
) -> Result<Vec<T>, DecodeError> {
    let mut out = Vec::new();
    let mut r = Reader::new(content);
    while let Some(e) = r.read()? {
        if e.typ != typ {
            return Err(e.error(ErrorKind::UnexpectedType {
                expected: typ,
                found: e.typ,
            }));
        }
        out.push(decode(content, &e)?);
    }
    Ok(out)
}

/// A UTF-8 string field (Uri, StatusText, NfdVersion...).
pub(crate) fn string(e: &Element<'_>) -> Result<String, DecodeError> {
    core::str::from_utf8(e.value)
        .map(str::to_owned)
        .map_err(|_| e.error(ErrorKind::InvalidValue("string is not UTF-8")))
}

/// A Name field, sharing `wire`.
pub(crate) fn name(wire: &Bytes, e: &Element<'_>) -> Result<Name, DecodeError> {
    Name::from_value(slice_abs(wire, e.value_range(), e.start)?, e.value_start)
}

/// The Name inside a Strategy field (`6b LL 07 LL ...`).
pub(crate) fn strategy(wire: &Bytes, e: &Element<'_>) -> Result<Name, DecodeError> {
    let mut fields = Fields::new(e, |t| u8::from(t == tlv::types::NAME));
    let mut found = Name::root();
    while let Some(f) = fields.next()? {
        found = name(wire, &f)?;
    }
    fields.require(&[tlv::types::NAME])?;
    Ok(found)
}

/// Writes a whole element of type `typ` around `value`.
pub(crate) fn wrap(typ: u32, value: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(tlv::tlv_len(typ, value.len()));
    tlv::put_tlv(&mut out, typ, value);
    Bytes::from(out)
}

/// Writes an element of type `typ` whose value `f` writes.
pub(crate) fn put_nested(buf: &mut Vec<u8>, typ: u32, f: impl FnOnce(&mut Vec<u8>)) {
    let mut value = Vec::new();
    f(&mut value);
    tlv::put_tlv(buf, typ, &value);
}

/// Writes a Strategy field holding `name`.
pub(crate) fn put_strategy(buf: &mut Vec<u8>, typ: u32, name: &Name) {
    put_nested(buf, typ, |b| name.encode(b));
}

/// Writes a string field.
pub(crate) fn put_string(buf: &mut Vec<u8>, typ: u32, s: &str) {
    tlv::put_tlv(buf, typ, s.as_bytes());
}

/// Writes a NonNegativeInteger field when present.
pub(crate) fn put_opt_nni(buf: &mut Vec<u8>, typ: u32, n: Option<u64>) {
    if let Some(n) = n {
        tlv::put_nni_tlv(buf, typ, n);
    }
}

/// Writes a string field when present.
pub(crate) fn put_opt_string(buf: &mut Vec<u8>, typ: u32, s: Option<&str>) {
    if let Some(s) = s {
        put_string(buf, typ, s);
    }
}
