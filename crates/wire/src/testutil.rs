//! Proptest strategies shared by the unit tests of this crate.

use core::fmt::Debug;

use bytes::Bytes;
use proptest::prelude::*;

use crate::error::DecodeError;
use crate::name::{Component, Name};
use crate::tlv::types;

/// Any valid component: generic, typed numbers, digests, keyword, other types.
pub(crate) fn arb_component() -> impl Strategy<Value = Component> {
    prop_oneof![
        4 => proptest::collection::vec(any::<u8>(), 0..12).prop_map(Component::generic),
        1 => any::<u64>().prop_map(Component::segment),
        1 => any::<u64>().prop_map(Component::version),
        1 => any::<u64>().prop_map(Component::timestamp),
        1 => any::<u64>().prop_map(Component::sequence_num),
        1 => any::<u64>().prop_map(Component::byte_offset),
        1 => any::<[u8; 32]>().prop_map(Component::implicit_digest),
        1 => (1u32..=0xffff, proptest::collection::vec(any::<u8>(), 0..6))
            .prop_filter("digest types need 32 bytes", |(t, _)| *t != 1 && *t != 2)
            .prop_map(|(typ, v)| Component { typ, value: Bytes::from(v) }),
        1 => proptest::collection::vec(any::<u8>(), 0..6)
            .prop_map(|v| Component { typ: types::KEYWORD_NAME_COMPONENT, value: Bytes::from(v) }),
    ]
}

/// Any valid name of `min..max` components with no ParametersSha256DigestComponent.
pub(crate) fn arb_name(min: usize, max: usize) -> impl Strategy<Value = Name> {
    proptest::collection::vec(arb_component(), min..max)
        .prop_map(|comps| Name::from_components(&comps).unwrap())
}

/// `bytes`, every truncation of it, and every copy with one octet replaced by one of
/// `octets` or by itself with its lowest bit flipped: the inputs on which a fast path is
/// compared with the general code it shortcuts.
pub(crate) fn octet_variants(bytes: &[u8], octets: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![bytes.to_vec()];
    for cut in 0..bytes.len() {
        out.push(bytes[..cut].to_vec());
    }
    for i in 0..bytes.len() {
        for &v in octets.iter().chain(&[bytes[i] ^ 0x01]) {
            let mut w = bytes.to_vec();
            w[i] = v;
            out.push(w);
        }
    }
    out
}

/// A packet and what a fast path must treat as the general parser does: every truncation and
/// every one-octet corruption of the packet (each octet replaced by TLV-TYPEs and lengths the
/// decoders care about, and by its neighbours), and the same of its TLV-VALUE under an outer
/// header re-encoded to fit, so that the errors inside the packet are reached.
pub(crate) fn packet_variants(wire: &[u8]) -> Vec<Vec<u8>> {
    const OCTETS: [u8; 24] = [
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x0a, 0x0c, 0x12, 0x14, 0x15, 0x16,
        0x17, 0x19, 0x1b, 0x21, 0x22, 0x24, 0xfc, 0xfd, 0xff,
    ];
    let mutate = |bytes: &[u8], out: &mut Vec<Vec<u8>>, wrap: &dyn Fn(&[u8]) -> Vec<u8>| {
        for cut in 0..bytes.len() {
            out.push(wrap(&bytes[..cut]));
        }
        for i in 0..bytes.len() {
            let old = bytes[i];
            for v in
                OCTETS
                    .iter()
                    .copied()
                    .chain([old ^ 0x01, old.wrapping_add(1), old.wrapping_sub(1)])
            {
                let mut w = bytes.to_vec();
                w[i] = v;
                out.push(wrap(&w));
            }
        }
    };
    let mut out = vec![wire.to_vec()];
    mutate(wire, &mut out, &|w| w.to_vec());
    // A malformed outer header (one of the cases itself) has no value to vary.
    if let Ok(top) = crate::tlv::read_single(wire) {
        let wrap = |value: &[u8]| {
            let mut w = Vec::new();
            crate::tlv::put_tlv(&mut w, top.typ, value);
            w
        };
        mutate(top.value, &mut out, &wrap);
    }
    out
}

/// A name of `n` generic components of `len` octets each (`a…`, `b…`, ...).
pub(crate) fn generic_name(n: usize, len: usize) -> Name {
    (0..n).fold(Name::root(), |name, i| {
        name.append(&Component::generic(vec![b'a' + i as u8; len]))
            .unwrap()
    })
}

/// Asserts that a view's fast path and its general parser agree on `wire`: the same fields,
/// as `fields` reads them, or the same error.
pub(crate) fn assert_paths_agree<V, F: PartialEq + Debug>(
    wire: &[u8],
    fast: impl Fn(Bytes) -> Result<V, DecodeError>,
    general: impl Fn(Bytes) -> Result<V, DecodeError>,
    fields: impl Fn(&V) -> F,
) {
    let wire = Bytes::copy_from_slice(wire);
    let (f, g) = (fast(wire.clone()), general(wire.clone()));
    let hex = hex::encode(&wire);
    match (&f, &g) {
        (Ok(f), Ok(g)) => assert_eq!(fields(f), fields(g), "{hex}"),
        _ => assert_eq!(f.map(drop), g.map(drop), "{hex}"),
    }
}

/// What a view's name holds, for comparing two ways of building the view: its buffer, where
/// the value starts in it, the value, and each component's TLV.
pub(crate) fn name_fields(wire: &Bytes, name: &Name) -> impl PartialEq + Debug {
    let value = name.value_bytes();
    (
        wire.clone(),
        value.as_ptr() as usize - wire.as_ptr() as usize,
        value.to_vec(),
        name.component_wires()
            .map(<[u8]>::to_vec)
            .collect::<Vec<_>>(),
    )
}
