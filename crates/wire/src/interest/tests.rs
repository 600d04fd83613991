use bytes::Bytes;
use proptest::prelude::*;

use super::*;
use crate::signature::signature_type;
use crate::testutil::{arb_name, assert_paths_agree, generic_name, name_fields, packet_variants};

fn b(hex_str: &str) -> Bytes {
    let clean: String = hex_str.split_whitespace().collect();
    Bytes::from(hex::decode(clean).unwrap())
}

/// python-ndn consumer Interest, docs/nfd-interop.md §3.5: /example/x, MustBeFresh, Nonce, 4000 ms.
const PYTHON_CONSUMER: &str = "051a 070c 0807 6578616d706c65 0801 78 1200 0a04 7e7cf9ce 0c02 0fa0";

/// python-ndn appv2 rib/register, v0.3 signed Interest (docs/nfd-interop.md §4.1).
const APPV2_REGISTER: &str = "0599075008096c6f63616c686f737408036e6664080372696208087265676973746572080d680b070908076578616d706c65
02205388a7740003e4e3f8f064137f530cc278fdc25a63f754706b09b761feda420e0a04c892b7b40c0203e8
24002c171b01002608e5f8c7c792645cd82808000001a1ff7ade8c2e20af32d7091b4ae52a2b55c35fa668fb83fbd8d85e9ae4879b002ca4b896dcc8c8";

/// python-ndn legacy rib/register, v0.2 command Interest (docs/nfd-interop.md §4.1).
const LEGACY_REGISTER: &str = "0579076d08096c6f63616c686f737408036e6664080372696208087265676973746572080d680b070908076578616d706c65
0808000001a1ff7b0d3d080874dbb8bcddd2397e080516031b0100082217207585aa52b2300f1bdf0a8e4a6ac2048cd19c45
2ed3af9f3894a824c2a7247e7e0a0433abfeb50c0203e8";

#[test]
fn a_compact_interest_is_48_bytes() {
    assert_eq!(core::mem::size_of::<CompactInterest>(), 48);
    // Lifetimes at and past what 32 bits hold are read from the packet.
    for lifetime in [
        u64::from(u32::MAX) - 1,
        u64::from(u32::MAX),
        1 << 40,
        u64::MAX,
    ] {
        let mut i = Interest::new("/a".parse().unwrap());
        i.lifetime_ms = Some(lifetime);
        let c = InterestView::new_checked(i.encode()).unwrap().compact();
        assert_eq!(c.lifetime_ms(), lifetime);
    }
}

#[test]
fn python_consumer_interest() {
    let wire = b(PYTHON_CONSUMER);
    let i = Interest::decode(&wire).unwrap();
    assert_eq!(i.name.to_string(), "/example/x");
    assert!(i.must_be_fresh && !i.can_be_prefix);
    assert_eq!(i.nonce, Some(0x7e7c_f9ce));
    assert_eq!(i.lifetime_ms, Some(4000));
    assert_eq!(i.hop_limit, None);
    assert_eq!(i.encode(), wire, "re-encoding is byte-exact");

    let v = InterestView::new_checked(wire.clone()).unwrap();
    assert_eq!(v.name(), &i.name);
    assert!(v.must_be_fresh() && !v.can_be_prefix());
    assert_eq!(v.nonce(), Some(0x7e7c_f9ce));
    assert_eq!(v.lifetime_ms(), 4000);
    assert!(!v.has_parameters() && !v.is_signed());
}

#[test]
fn appv2_signed_register_interest() {
    let wire = b(APPV2_REGISTER);
    assert_eq!(wire.len(), 155);
    let i = Interest::decode(&wire).unwrap();
    assert_eq!(i.name.len(), 6);
    assert_eq!(i.name.prefix(4).to_string(), "/localhost/nfd/rib/register");
    assert_eq!(
        i.name.last().unwrap().typ(),
        types::PARAMETERS_SHA256_DIGEST_COMPONENT
    );
    assert_eq!(i.app_parameters.as_deref(), Some(&[][..]));
    let si = i.signature_info.as_ref().unwrap();
    assert_eq!(si.signature_type, signature_type::DIGEST_SHA256);
    assert_eq!(si.nonce.as_ref().map(Bytes::len), Some(8));
    assert_eq!(si.time, Some(0x0000_01a1_ff7a_de8c));
    assert_eq!(i.signature_value.as_ref().map(Bytes::len), Some(32));
    assert_eq!(i.encode(), wire);
    let v = InterestView::new_checked(wire).unwrap();
    assert!(v.has_parameters() && v.is_signed());
}

#[test]
fn legacy_command_interest() {
    let wire = b(LEGACY_REGISTER);
    assert_eq!(wire.len(), 123);
    let i = Interest::decode(&wire).unwrap();
    assert_eq!(i.name.len(), 9);
    // [7] is the whole SignatureInfo TLV, [8] the whole SignatureValue TLV
    assert_eq!(
        i.name.get(7).unwrap().value(),
        &[0x16, 0x03, 0x1b, 0x01, 0x00]
    );
    assert_eq!(i.name.get(8).unwrap().value().len(), 34);
    assert_eq!(i.lifetime_ms, Some(1000));
    assert_eq!(i.encode(), wire);
}

#[test]
fn parameters_digest_is_checked() {
    let mut wire = b(APPV2_REGISTER).to_vec();
    // Flip a bit inside the SignatureValue: the digest component no longer matches.
    let last = wire.len() - 1;
    wire[last] ^= 1;
    let wire = Bytes::from(wire);
    let err = Interest::decode(&wire).unwrap_err();
    assert_eq!(err.kind, ErrorKind::ParametersDigestMismatch);
    // The forwarding view does not hash parameters, as NFD does not.
    assert!(InterestView::new_checked(wire).is_ok());
}

#[test]
fn parameters_and_digest_component_go_together() {
    // ApplicationParameters without the digest component
    let no_digest = b("050b 0703 080161 2404 01020304");
    let err = Interest::decode(&no_digest).unwrap_err();
    assert!(matches!(err.kind, ErrorKind::InvalidValue(_)), "{err}");
    // A digest component without ApplicationParameters
    let mut name = "/a".parse::<Name>().unwrap();
    name = name.append(&Component::parameters_digest([0; 32])).unwrap();
    let i = Interest::new(name);
    let err = Interest::decode(&i.encode()).unwrap_err();
    assert!(matches!(err.kind, ErrorKind::InvalidValue(_)), "{err}");
}

#[test]
fn encode_computes_parameters_digest() {
    let mut i = Interest::new("/p/q".parse().unwrap());
    i.app_parameters = Some(Bytes::from_static(b"hello"));
    i.nonce = Some(1);
    let wire = i.encode();
    let d = Interest::decode(&wire).unwrap();
    assert_eq!(d.name.len(), 3);
    assert_eq!(d.name.prefix(2), i.name);
    // Changing the parameters and re-encoding replaces the stale digest.
    let mut e = d.clone();
    e.app_parameters = Some(Bytes::from_static(b"world"));
    let d2 = Interest::decode(&e.encode()).unwrap();
    assert_eq!(d2.name.len(), 3);
    assert_ne!(d2.name, d.name);
}

#[test]
fn negative_cases() {
    let cases: &[(&str, ErrorKind)] = &[
        // empty Name
        ("0502 0700", ErrorKind::EmptyName),
        // truncated: length says 0x1a but fewer bytes follow
        ("051a 070c 0807 6578616d706c65", ErrorKind::LengthOverflow),
        // unknown critical element (type 0x25 is odd)
        ("0507 0703 080161 2500", ErrorKind::UnrecognizedCritical { typ: 0x25 }),
        // MustBeFresh before CanBePrefix
        ("0509 0703 080161 1200 2100", ErrorKind::OutOfOrder { typ: 0x21 }),
        // Nonce of 3 bytes
        ("050a 0703 080161 0a03 010203", ErrorKind::InvalidValue("Nonce is not 4 octets")),
        // HopLimit of 2 bytes
        ("0509 0703 080161 2202 0101", ErrorKind::InvalidValue("HopLimit is not 1 octet")),
        // InterestLifetime of 3 bytes
        ("050a 0703 080161 0c03 000001", ErrorKind::BadNonNegativeInteger),
        // non-minimal TLV-LENGTH
        ("05fd0005 0703 080161", ErrorKind::NonMinimalVarNumber),
        // not an Interest
        ("0605 0703 080161", ErrorKind::UnexpectedType { expected: 5, found: 6 }),
        // InterestSignatureInfo without ApplicationParameters
        ("050e 0703 080161 2c03 1b0100 2e02 abcd", ErrorKind::Missing { typ: 0x24 }),
        // InterestSignatureInfo without SignatureType (found by the fuzzer)
        ("052d 0725080161 0220 0000000000000000000000000000000000000000000000000000000000000000 2400 2c00 2e00",
         ErrorKind::Missing { typ: 0x1b }),
        // CanBePrefix with a value
        ("0508 0703 080161 210100", ErrorKind::InvalidValue("flag element is not empty")),
    ];
    for (hex_str, kind) in cases {
        let wire = b(hex_str);
        let err = Interest::decode(&wire).unwrap_err();
        assert_eq!(err.kind, *kind, "{hex_str}: {err}");
        assert!(InterestView::new_checked(wire).is_err());
    }
}

#[test]
fn too_deep_or_too_large() {
    let mut v = vec![0x05, 0xfd, 0x22, 0x61, 0x07, 0x03, 0x08, 0x01, 0x61];
    v.resize(4 + 0x2261, 0); // 8805 bytes of zeros: also invalid type 0, but size is checked first
    let err = Interest::decode(&Bytes::from(v)).unwrap_err();
    assert_eq!(err.kind, ErrorKind::TooLarge);
}

#[test]
fn unknown_non_critical_elements_are_ignored() {
    // type 0x30 (even, > 31) after Name
    let wire = b("0509 0703 080161 3002 abcd");
    let i = Interest::decode(&wire).unwrap();
    assert_eq!(i.name.to_string(), "/a");
}

#[test]
fn hop_limit_rewrite_splices() {
    let mut i = Interest::new("/a/b".parse().unwrap());
    i.nonce = Some(7);
    i.hop_limit = Some(5);
    i.lifetime_ms = Some(100);
    let v = InterestView::new_checked(i.encode()).unwrap();
    assert_eq!(v.hop_limit(), Some(5));
    let out = InterestView::new_checked(v.with_hop_limit(4)).unwrap();
    assert_eq!(out.hop_limit(), Some(4));
    assert_eq!(out.nonce(), Some(7));
    assert_eq!(out.wire().len(), v.wire().len());
    // Without HopLimit the bytes are shared, not copied.
    let no_hl = InterestView::new_checked(Interest::new("/a".parse().unwrap()).encode()).unwrap();
    assert_eq!(no_hl.with_hop_limit(3).as_ptr(), no_hl.wire().as_ptr());
}

#[test]
fn nonce_rewrite_and_insert() {
    let mut i = Interest::new("/a/b".parse().unwrap());
    i.can_be_prefix = true;
    i.lifetime_ms = Some(1000);
    i.hop_limit = Some(9);
    let v = InterestView::new_checked(i.encode()).unwrap();
    assert_eq!(v.nonce(), None);
    let inserted = Interest::decode(&v.with_nonce(0xdead_beef)).unwrap();
    assert_eq!(inserted.nonce, Some(0xdead_beef));
    assert_eq!(inserted.lifetime_ms, Some(1000));
    assert_eq!(inserted.hop_limit, Some(9));
    assert!(inserted.can_be_prefix);

    let mut v2 = InterestView::new_checked(v.with_nonce(1)).unwrap();
    v2.set_nonce(2);
    assert_eq!(v2.nonce(), Some(2));
    assert_eq!(Interest::decode(v2.wire()).unwrap().nonce, Some(2));
}

#[test]
fn forwarding_hint() {
    let mut i = Interest::new("/a".parse().unwrap());
    i.forwarding_hint = vec!["/hint/one".parse().unwrap(), "/hint/two".parse().unwrap()];
    let wire = i.encode();
    let v = InterestView::new_checked(wire.clone()).unwrap();
    assert!(v.has_forwarding_hint());
    assert_eq!(v.forwarding_hint(), i.forwarding_hint);
    assert_eq!(Interest::decode(&wire).unwrap(), i);
}

fn arb_interest() -> impl Strategy<Value = Interest> {
    (
        arb_name(1, 8),
        any::<bool>(),
        any::<bool>(),
        proptest::collection::vec(arb_name(1, 4), 0..3),
        proptest::option::of(any::<u32>()),
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<u8>()),
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40)),
        proptest::option::of((
            any::<u8>(),
            proptest::option::of(any::<u64>()),
            any::<[u8; 8]>(),
        )),
    )
        .prop_map(|(name, cbp, mbf, fh, nonce, lifetime, hop, params, sig)| {
            let mut i = Interest {
                name,
                can_be_prefix: cbp,
                must_be_fresh: mbf,
                forwarding_hint: fh,
                nonce,
                lifetime_ms: lifetime,
                hop_limit: hop,
                app_parameters: params.map(Bytes::from),
                ..Interest::default()
            };
            if let (Some((t, time, nonce)), Some(_)) = (sig, &i.app_parameters) {
                i.signature_info = Some(SignatureInfo {
                    signature_type: u64::from(t),
                    time,
                    nonce: Some(Bytes::copy_from_slice(&nonce)),
                    ..SignatureInfo::default()
                });
                i.signature_value = Some(Bytes::from_static(&[0xaa; 32]));
            }
            // Normalise: encode places the digest component; decode gives the canonical value.
            Interest::decode(&i.encode()).unwrap()
        })
}

proptest! {
    #[test]
    fn interest_round_trip(i in arb_interest()) {
        let wire = i.encode();
        prop_assert_eq!(Interest::decode(&wire).unwrap(), i.clone());
        let v = InterestView::new_checked(wire).unwrap();
        prop_assert_eq!(v.name(), &i.name);
        prop_assert_eq!(v.nonce(), i.nonce);
        prop_assert_eq!(v.hop_limit(), i.hop_limit);
        prop_assert_eq!(v.lifetime_ms(), i.lifetime());
        prop_assert_eq!(v.can_be_prefix(), i.can_be_prefix);
        prop_assert_eq!(v.must_be_fresh(), i.must_be_fresh);
        prop_assert_eq!(v.forwarding_hint(), i.forwarding_hint.clone());
        assert_fast_path_agrees(v.wire());
    }

    /// The compact form a PIT entry keeps reads every field as the view does, and gives the
    /// same view back, over the same packet.
    #[test]
    fn compact_interest_keeps_every_field(i in arb_interest()) {
        let v = InterestView::new_checked(i.encode()).unwrap();
        let c = v.clone().compact();
        prop_assert_eq!(c.wire().as_ptr(), v.wire().as_ptr());
        prop_assert_eq!(c.name_value(), v.name().value_bytes());
        prop_assert_eq!(c.name_len(), v.name().len());
        for d in 0..=v.name().len() {
            prop_assert_eq!(c.prefix_value_len(d), v.name().prefix_value_len(d));
        }
        prop_assert_eq!(&c.name(), v.name());
        prop_assert_eq!(c.nonce(), v.nonce());
        prop_assert_eq!(c.lifetime_ms(), v.lifetime_ms());
        prop_assert_eq!(c.hop_limit(), v.hop_limit());
        prop_assert_eq!(c.can_be_prefix(), v.can_be_prefix());
        prop_assert_eq!(c.must_be_fresh(), v.must_be_fresh());
        prop_assert_eq!(c.has_forwarding_hint(), v.has_forwarding_hint());
        prop_assert_eq!(c.with_hop_limit(3), v.with_hop_limit(3));
        let back = c.view();
        prop_assert_eq!(back.wire().as_ptr(), v.wire().as_ptr());
        prop_assert_eq!(back.name(), v.name());
        prop_assert_eq!(back.name().component_wires().collect::<Vec<_>>(),
            v.name().component_wires().collect::<Vec<_>>());
        prop_assert_eq!(back.nonce(), v.nonce());
        prop_assert_eq!(back.lifetime_ms(), v.lifetime_ms());
        prop_assert_eq!(back.hop_limit(), v.hop_limit());
        prop_assert_eq!(back.can_be_prefix(), v.can_be_prefix());
        prop_assert_eq!(back.must_be_fresh(), v.must_be_fresh());
        prop_assert_eq!(back.has_parameters(), v.has_parameters());
        prop_assert_eq!(back.is_signed(), v.is_signed());
        prop_assert_eq!(back.forwarding_hint(), v.forwarding_hint());
        prop_assert_eq!(back.with_nonce(9), v.with_nonce(9));
    }

    #[test]
    fn interest_decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let wire = Bytes::from(bytes);
        assert_fast_path_agrees(&wire);
        let owned = Interest::decode(&wire);
        let view = InterestView::new_checked(wire);
        // The view accepts everything the owned decoder accepts.
        if owned.is_ok() {
            prop_assert!(view.is_ok());
        }
    }

    #[test]
    fn names_print_and_parse_back(name in arb_name(0, 10)) {
        let uri = name.to_string();
        prop_assert_eq!(uri.parse::<Name>().unwrap(), name);
    }
}

#[test]
fn a_view_and_its_name_share_one_handle() {
    // Each handle on a packet costs an atomic reference-count update when taken and when
    // dropped, on every packet the forwarder handles: the view's Name must not take its own.
    let mut i = Interest::new("/a/b/c".parse().unwrap());
    i.nonce = Some(7);
    let wire = Bytes::from(i.encode().to_vec());
    let view = InterestView::new_checked(wire).unwrap();
    assert!(view.wire().is_unique(), "the view holds a second handle");
    assert_eq!(view.name().to_string(), "/a/b/c");
    let value = view.name().value_bytes();
    let inside = view.wire().as_ptr_range();
    assert!(
        inside.contains(&value.as_ptr()),
        "the name reads the packet's bytes"
    );

    // A patched Nonce moves the name onto the new packet.
    let mut view = view;
    view.set_nonce(9);
    assert!(view.wire().is_unique());
    assert_eq!(view.nonce(), Some(9));
    assert_eq!(view.name().to_string(), "/a/b/c");
    assert!(view
        .wire()
        .as_ptr_range()
        .contains(&view.name().value_bytes().as_ptr()));
}

#[test]
fn views_are_small_enough_to_move_in_registers() {
    // The forwarder moves each view a few times per packet; past 128 octets the compiler
    // calls memcpy for every move.
    assert!(core::mem::size_of::<InterestView>() <= 128);
    assert!(core::mem::size_of::<crate::DataView>() <= 128);
}

/// Everything a view holds, for comparing two ways of building it.
fn view_fields(v: &InterestView) -> impl PartialEq + core::fmt::Debug {
    (
        name_fields(v.wire(), v.name()),
        (
            v.lifetime_ms,
            v.nonce,
            v.nonce_pos,
            v.hop_limit,
            v.hop_limit_pos,
        ),
        v.forwarding_hint,
        (v.can_be_prefix, v.must_be_fresh, v.has_parameters, v.signed),
    )
}

fn assert_fast_path_agrees(wire: &[u8]) {
    assert_paths_agree(
        wire,
        InterestView::new_checked,
        InterestView::new_checked_general,
        view_fields,
    );
}

/// Every truncation and one-octet corruption of Interests of the fast path's shape and
/// around it: the view reads what the general parser reads and refuses what it refuses,
/// with the same error.
#[test]
fn view_fast_path_agrees_with_the_general_parser() {
    let name = |uri: &str| uri.parse::<Name>().unwrap();
    let mut interests = Vec::new();
    let mut bench = Interest::new(
        name("/bench/a/b")
            .append(&Component::sequence_num(0xa1b2_c3d4))
            .unwrap(),
    );
    bench.nonce = Some(0x5566_7788);
    bench.lifetime_ms = Some(4000);
    interests.push(bench.clone());
    let mut all = bench.clone();
    all.can_be_prefix = true;
    all.must_be_fresh = true;
    all.hop_limit = Some(7);
    interests.push(all.clone());
    for lifetime in [None, Some(0x10), Some(0x1_0000), Some(0x1_0000_0000)] {
        let mut i = all.clone();
        i.lifetime_ms = lifetime;
        i.nonce = None;
        interests.push(i);
    }
    for (n, len) in [(1, 1), (16, 1), (17, 1), (16, 20), (1, 300)] {
        let mut i = bench.clone();
        i.name = generic_name(n, len);
        interests.push(i);
    }
    let mut hint = all.clone();
    hint.forwarding_hint = vec![name("/h")];
    interests.push(hint);
    let mut params = all.clone();
    params.app_parameters = Some(Bytes::from_static(b"p"));
    interests.push(params);
    let mut wires: Vec<Bytes> = interests.iter().map(Interest::encode).collect();
    wires.extend([
        b(PYTHON_CONSUMER),
        b(APPV2_REGISTER),
        b(LEGACY_REGISTER),
        b("050b 0703 080161 3002 abcd 2200"),
        // empty Names
        b("0502 0700"),
        b("0508 0700 0a04 01020304"),
        // three-octet lengths in their shortest form and not
        b("05fd000b 0703 080161 0a04 01020304"),
        b("050d 07fd0003 080161 0a04 01020304"),
    ]);
    let mut long = b("05fd0101 07fd00fd 08fb").to_vec();
    long.resize(long.len() + 0xfb, 0x61);
    wires.push(Bytes::from(long));
    let (mut checked, mut fast) = (0, 0);
    for wire in &wires {
        for w in packet_variants(wire) {
            assert_fast_path_agrees(&w);
            checked += 1;
            fast += usize::from(Simple::parse(&w, &mut [0; 16]).is_some());
        }
    }
    assert!(
        checked > 10_000 && fast > 1_000,
        "{checked} variants, {fast} fast"
    );
}
