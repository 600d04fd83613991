//! [`CompactInterest`]: what a table keeps of an Interest for a long time.
//!
//! An [`InterestView`] holds its name's component ends (inline for 16 components) so that
//! component access is O(1) on the forwarding path: 112 bytes. A PIT entry holds its latest
//! Interest for the Interest's whole lifetime, and needs the components rarely (a strategy
//! change, ASF's namespace); it keeps this form instead, 48 bytes: the packet, where the name's
//! value is, and the fields the pipelines read, the rest read from the packet when asked.
//! [`CompactInterest::view`] gives the full view back without checking the packet again.

use bytes::Bytes;

use super::InterestView;
use crate::name::Name;
use crate::tlv::{self, types, Span};

/// `flags` bits.
const CAN_BE_PREFIX: u8 = 1;
const MUST_BE_FRESH: u8 = 1 << 1;
const HAS_PARAMETERS: u8 = 1 << 2;
const SIGNED: u8 = 1 << 3;
const FORWARDING_HINT: u8 = 1 << 4;
const HAS_NONCE: u8 = 1 << 5;

/// `lifetime_ms` of an InterestLifetime that does not fit: it is read from the packet.
const LONG_LIFETIME: u32 = u32::MAX;

/// A checked Interest kept for a long time: the packet and where its fields are, in 48 bytes
/// (an [`InterestView`] is 112). Made by [`InterestView::compact`]; the accessors are the
/// view's, except that [`CompactInterest::name`] builds the name (sharing the packet).
#[derive(Clone, Debug)]
pub struct CompactInterest {
    wire: Bytes,
    /// InterestLifetime (the default applied), or [`LONG_LIFETIME`].
    lifetime_ms: u32,
    /// The Nonce, when `flags` has [`HAS_NONCE`] (a PIT entry reads it for every record).
    nonce: u32,
    /// Where the Name's TLV-VALUE starts in `wire`, and its length.
    name_start: u16,
    name_len: u16,
    /// Where the HopLimit's value is (0: no HopLimit).
    hop_limit_pos: u16,
    hop_limit: u8,
    flags: u8,
}

impl InterestView {
    /// The view in the form a table keeps: the same packet (moved, not cloned), 48 bytes.
    #[inline(always)]
    pub fn compact(self) -> CompactInterest {
        let flag = |on: bool, bit: u8| if on { bit } else { 0 };
        let flags = flag(self.can_be_prefix, CAN_BE_PREFIX)
            | flag(self.must_be_fresh, MUST_BE_FRESH)
            | flag(self.has_parameters, HAS_PARAMETERS)
            | flag(self.signed, SIGNED)
            | flag(self.forwarding_hint.get().is_some(), FORWARDING_HINT)
            | flag(self.nonce_pos != 0, HAS_NONCE);
        let lifetime_ms = u32::try_from(self.lifetime_ms)
            .ok()
            .filter(|&l| l != LONG_LIFETIME)
            .unwrap_or(LONG_LIFETIME);
        let (name_start, name_len) = self.name.value_span();
        CompactInterest {
            lifetime_ms,
            nonce: self.nonce,
            name_start,
            name_len,
            hop_limit_pos: self.hop_limit_pos,
            hop_limit: self.hop_limit,
            flags,
            wire: self.name.into_backing(),
        }
    }
}

impl CompactInterest {
    /// The whole Interest TLV.
    #[inline]
    pub fn wire(&self) -> &Bytes {
        &self.wire
    }

    /// The Name's TLV-VALUE (its components back to back).
    #[inline]
    pub fn name_value(&self) -> &[u8] {
        let start = usize::from(self.name_start);
        self.wire
            .get(start..start + usize::from(self.name_len))
            .unwrap_or_default()
    }

    /// The number of components of the Name (counted by walking them: O(length of the name);
    /// a caller holding the name's `PrefixHashes` has the count there).
    pub fn name_len(&self) -> usize {
        self.component_ends().count()
    }

    /// The Name, sharing the packet (its components are found again: O(length of the name)).
    pub fn name(&self) -> Name {
        let start = usize::from(self.name_start);
        // The value was checked when the view was made; the same octets scan the same way.
        let (ends, _) = Name::scan_value(self.name_value(), start).unwrap_or_default();
        Name::from_parts(self.wire.clone(), start, ends)
    }

    /// CanBePrefix.
    #[inline]
    pub fn can_be_prefix(&self) -> bool {
        self.flags & CAN_BE_PREFIX != 0
    }

    /// MustBeFresh.
    #[inline]
    pub fn must_be_fresh(&self) -> bool {
        self.flags & MUST_BE_FRESH != 0
    }

    /// Nonce, if present.
    #[inline]
    pub fn nonce(&self) -> Option<u32> {
        (self.flags & HAS_NONCE != 0).then_some(self.nonce)
    }

    /// InterestLifetime in milliseconds, the default (4000) applied.
    #[inline]
    pub fn lifetime_ms(&self) -> u64 {
        if self.lifetime_ms != LONG_LIFETIME {
            return u64::from(self.lifetime_ms);
        }
        self.element(types::INTEREST_LIFETIME)
            .and_then(|r| tlv::read_nni(self.wire.get(r)?).ok())
            .unwrap_or(u64::from(LONG_LIFETIME))
    }

    /// HopLimit, if present.
    #[inline]
    pub fn hop_limit(&self) -> Option<u8> {
        (self.hop_limit_pos != 0).then_some(self.hop_limit)
    }

    /// Whether a ForwardingHint is present.
    #[inline]
    pub fn has_forwarding_hint(&self) -> bool {
        self.flags & FORWARDING_HINT != 0
    }

    /// The ForwardingHint names (empty when absent).
    pub fn forwarding_hint(&self) -> Vec<Name> {
        if !self.has_forwarding_hint() {
            return Vec::new();
        }
        self.element(types::FORWARDING_HINT)
            .and_then(|r| super::decode_hint_names(&self.wire, r).ok())
            .unwrap_or_default()
    }

    /// The length of the TLV-VALUE of the name's first `n` components (the whole value when
    /// `n` is the name's length or more), found by walking the components' headers.
    #[inline]
    pub fn prefix_value_len(&self, n: usize) -> usize {
        self.component_ends().take(n).last().unwrap_or(0)
    }

    /// Where each component of the name ends in its TLV-VALUE, from its headers (the value was
    /// checked when the view was made).
    #[inline]
    fn component_ends(&self) -> impl Iterator<Item = usize> + '_ {
        let value = self.name_value();
        let mut pos = 0;
        core::iter::from_fn(move || {
            let rest = value.get(pos..).filter(|r| !r.is_empty())?;
            let size = match *rest {
                // One-octet TYPE and LENGTH: nearly every component.
                [0..=0xfc, l @ 0..=0xfc, ..] => 2 + usize::from(l),
                _ => {
                    let (_, t) = tlv::read_var_number(rest).ok()?;
                    let (len, l) = tlv::read_var_number(rest.get(t..)?).ok()?;
                    (t + l).saturating_add(len as usize)
                }
            };
            pos = pos.saturating_add(size).min(value.len());
            Some(pos)
        })
    }

    /// The full view again: the same packet, its name's components found again, nothing
    /// checked twice.
    pub fn view(&self) -> InterestView {
        InterestView {
            name: self.name(),
            lifetime_ms: self.lifetime_ms(),
            nonce: self.nonce,
            nonce_pos: match self.nonce() {
                // The element's offset fits: the packet is at most MAX_PACKET_SIZE octets.
                Some(_) => self.element(types::NONCE).map_or(0, |r| Span::at(r.start)),
                None => 0,
            },
            hop_limit_pos: self.hop_limit_pos,
            forwarding_hint: match self.has_forwarding_hint() {
                true => self
                    .element(types::FORWARDING_HINT)
                    .map_or(Span::NONE, Span::of),
                false => Span::NONE,
            },
            hop_limit: self.hop_limit,
            can_be_prefix: self.can_be_prefix(),
            must_be_fresh: self.must_be_fresh(),
            has_parameters: self.flags & HAS_PARAMETERS != 0,
            signed: self.flags & SIGNED != 0,
        }
    }

    /// A copy of the packet with HopLimit set to `h` (see [`InterestView::with_hop_limit`]).
    pub fn with_hop_limit(&self, h: u8) -> Bytes {
        match self.hop_limit_pos {
            0 => self.wire.clone(),
            pos => super::patched(&self.wire, usize::from(pos), &[h]),
        }
    }

    /// Where the value of the top-level element of type `typ` is, if the packet has one.
    fn element(&self, typ: u32) -> Option<core::ops::Range<usize>> {
        let top = tlv::read_single(&self.wire).ok()?;
        let mut r = top.children();
        while let Ok(Some(e)) = r.read() {
            if e.typ == typ {
                return Some(e.value_range());
            }
        }
        None
    }
}
