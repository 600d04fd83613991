//! Proptest strategies shared by the unit tests of this crate.

use bytes::Bytes;
use proptest::prelude::*;

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
