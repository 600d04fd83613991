//! NFD management TLVs: captured client vectors, the ControlResponse shapes python-ndn and
//! NDNts accept or refuse, field order, and round trips of every type.

// Test helpers outside #[test] fns may unwrap: a panic is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use nameway_wire::mgmt::{
    self, route_flags, route_origin, status_code, ControlParameters, ControlResponse, CsInfo,
    FaceQueryFilter, FaceStatus, FibEntry, ForwarderStatus, NextHopRecord, RibEntry, Route,
    StrategyChoice,
};
use nameway_wire::{Component, ErrorKind, Interest, LpPacket, Name};
use proptest::prelude::*;

fn hex(s: &str) -> Bytes {
    let clean: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    Bytes::from(hex::decode(clean).unwrap())
}

fn name(uri: &str) -> Name {
    uri.parse().unwrap()
}

/// docs/nfd-interop.md §4.1: python appv2 registering /example.
const PY_APPV2_REGISTER: &str = "
0599075008096c6f63616c686f737408036e6664080372696208087265676973746572080d680b070908076578616d706c65
02205388a7740003e4e3f8f064137f530cc278fdc25a63f754706b09b761feda420e0a04c892b7b40c0203e8
24002c171b01002608e5f8c7c792645cd82808000001a1ff7ade8c2e20af32d7091b4ae52a2b55c35fa668fb83fbd8d85e9ae4879b002ca4b896dcc8c8";

/// docs/nfd-interop.md §4.1: NDNts registering /example, inside an LpPacket.
const NDNTS_LP_REGISTER: &str = "
64b462064167ffffffff50aa05a8075f08096c6f63616c686f737408036e6664080372696208087265676973746572081c68
1a070908076578616d706c656f01416a01006c01026d0400124f8002202cae6bf5f381a9876b6dadc4d461a4a9d22e247c8bef
30c8f2f265d699edd8fd0a0455e5f61d0c020f9f24002c171b010026080d0ecf283cdad6972808000001a1ff7cfc5a2e20f340
a4d95d2db4ab94724aae9d87871806bfe45e00f064e2ab53605eb3010558";

/// docs/nfd-interop.md §5.3: the rib/register success response (Content of the reply Data).
const REGISTER_RESPONSE: &str =
    "6521 6601c8 67024f4b 6818 0709 0807 6578616d706c65 6902 0100 6f0100 6a0100 6c0101";

/// The ControlParameters in name component 4 of a command Interest.
fn command_parameters(interest: &Interest) -> ControlParameters {
    let comp = interest.name.get(4).unwrap();
    ControlParameters::decode(&Bytes::copy_from_slice(comp.value())).unwrap()
}

#[test]
fn python_register_parameters() {
    let interest = Interest::decode(&hex(PY_APPV2_REGISTER)).unwrap();
    let p = command_parameters(&interest);
    assert_eq!(p, ControlParameters::with_name(name("/example")));
    assert_eq!(p.encode(), hex("680b 0709 0807 6578616d706c65"));
}

#[test]
fn ndnts_register_parameters() {
    let lp = LpPacket::decode(&hex(NDNTS_LP_REGISTER)).unwrap();
    let interest = Interest::decode(&lp.fragment.unwrap()).unwrap();
    let p = command_parameters(&interest);
    let expected = ControlParameters {
        name: Some(name("/example")),
        origin: Some(route_origin::CLIENT),
        cost: Some(0),
        flags: Some(route_flags::CAPTURE),
        expiration_period: Some(1_200_000),
        ..ControlParameters::default()
    };
    assert_eq!(p, expected);
    assert_eq!(
        p.encode(),
        hex("681a 0709 0807 6578616d706c65 6f0141 6a0100 6c0102 6d04 00124f80")
    );
}

#[test]
fn register_response_is_byte_exact() {
    let body = ControlParameters {
        name: Some(name("/example")),
        face_id: Some(256),
        origin: Some(route_origin::APP),
        cost: Some(0),
        flags: Some(route_flags::CHILD_INHERIT),
        ..ControlParameters::default()
    };
    let resp = ControlResponse::new(status_code::OK, "OK", &body);
    assert_eq!(resp.encode(), hex(REGISTER_RESPONSE));
    let back = ControlResponse::decode(&hex(REGISTER_RESPONSE)).unwrap();
    assert_eq!(back, resp);
    assert_eq!(back.parameters().unwrap(), Some(body));
}

#[test]
fn response_shapes_of_section_5_2() {
    // With ExpirationPeriod appended: fine.
    let r = ControlResponse::decode(&hex(
        "6525 6601c8 67024f4b 681c 0709 0807 6578616d706c65 6902 0100 6f0100 6a0100 6c0101 6d0203e8",
    ))
    .unwrap();
    assert_eq!(
        r.parameters().unwrap().unwrap().expiration_period,
        Some(1000)
    );
    // Empty body 68 00: fine, all fields absent.
    let r = ControlResponse::decode(&hex("6509 6601c8 67024f4b 6800")).unwrap();
    assert_eq!(r.parameters().unwrap(), Some(ControlParameters::default()));
    // No body: decodes (the body is optional on the wire) but has no parameters.
    let r = ControlResponse::decode(&hex("6507 6601c8 67024f4b")).unwrap();
    assert!(r.body.is_empty());
    assert_eq!(r.parameters().unwrap(), None);
    // Error code with a body.
    let r = ControlResponse::decode(&hex("650b 660201 93 6703 626164 6800")).unwrap();
    assert_eq!(r.status_code, status_code::FORBIDDEN);
    assert_eq!(r.status_text, "bad");
    // Cost before Origin: python-ndn refuses the body, and so do we.
    let r = ControlResponse::decode(&hex(
        "651e 6601c8 67024f4b 6815 0709 0807 6578616d706c65 6902 0100 6a0100 6f0100",
    ))
    .unwrap();
    assert_eq!(
        r.parameters().unwrap_err().kind,
        ErrorKind::OutOfOrder { typ: 0x6f }
    );
    // An unknown critical (odd) element in the body.
    let r = ControlResponse::decode(&hex("650c 6601c8 67024f4b 6803 7101 00")).unwrap();
    assert_eq!(
        r.parameters().unwrap_err().kind,
        ErrorKind::UnrecognizedCritical { typ: 0x71 }
    );
    // No StatusText: NDNts refuses it, and so do we.
    let err = ControlResponse::decode(&hex("6505 6601c8 6800")).unwrap_err();
    assert!(matches!(
        err.kind,
        ErrorKind::UnexpectedType {
            expected: 0x67,
            found: 0x68
        }
    ));
    let err = ControlResponse::decode(&hex("6503 6601c8")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Missing { typ: 0x67 });
    // StatusCode must come first and fit 32 bits.
    assert!(ControlResponse::decode(&hex("6507 67024f4b 6601c8")).is_err());
    assert!(ControlResponse::decode(&hex("650c 6608 0000000100000000 6700")).is_err());
}

#[test]
fn control_parameters_order_rules() {
    // python-ndn order (also ours): Mtu before Flags and FacePersistency.
    let py = hex("6815 7206 756470343a2f 8902 0578 6c01 01 7001 01 8501 00");
    // ndn-cxx order: Flags, Mask, FacePersistency, then Mtu.
    let cxx = hex("6815 7206 756470343a2f 6c01 01 7001 01 8501 00 8902 0578");
    let a = ControlParameters::decode(&py).unwrap();
    let b = ControlParameters::decode(&cxx).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.mtu, Some(1400));
    assert_eq!(b.encode(), py);
    // Consistent with neither order.
    let mixed = hex("680d 8902 0578 6c01 01 8701 05 8501 00");
    assert_eq!(
        ControlParameters::decode(&mixed).unwrap_err().kind,
        ErrorKind::OutOfOrder { typ: 0x87 }
    );
    // A known field twice.
    let dup = hex("6806 6a01 00 6a01 01");
    assert_eq!(
        ControlParameters::decode(&dup).unwrap_err().kind,
        ErrorKind::OutOfOrder { typ: 0x6a }
    );
    // Unknown non-critical fields are skipped, wherever they are.
    let extra = hex("680a fd0100 01 00 6a01 07 9e00");
    assert_eq!(ControlParameters::decode(&extra).unwrap().cost, Some(7));
    // Bad values.
    assert!(ControlParameters::decode(&hex("6805 6a03 000001")).is_err()); // 3-byte NNI
    assert!(ControlParameters::decode(&hex("6804 7202 c328")).is_err()); // not UTF-8
    assert!(ControlParameters::decode(&hex("6802 6b00")).is_err()); // Strategy without Name
    assert!(ControlParameters::decode(&hex("6502 6800")).is_err()); // wrong outer type
}

#[test]
fn strategy_parameters() {
    let p = ControlParameters {
        name: Some(name("/a")),
        strategy: Some(name("/localhost/nfd/strategy/best-route")),
        ..ControlParameters::default()
    };
    let wire = p.encode();
    assert_eq!(wire[..8], hex("682f 0703 080161 6b")[..]);
    assert_eq!(ControlParameters::decode(&wire).unwrap(), p);
}

#[test]
fn dataset_vectors() {
    // CsInfo: Capacity, Flags, NCsEntries, NHits, NMisses (not in TLV-TYPE order).
    let cs = CsInfo {
        capacity: 65536,
        flags: 3,
        n_entries: 2,
        n_hits: 7,
        n_misses: 1,
    };
    let wire = hex("8012 8304 00010000 6c01 03 8701 02 8101 07 8201 01");
    assert_eq!(cs.encode(), wire);
    assert_eq!(CsInfo::decode(&wire).unwrap(), cs);
    // FibEntry with two next hops.
    let fib = FibEntry {
        name: name("/a"),
        next_hops: vec![
            NextHopRecord {
                face_id: 256,
                cost: 10,
            },
            NextHopRecord {
                face_id: 257,
                cost: 0,
            },
        ],
    };
    let wire = hex("8017 0703 080161 8107 6902 0100 6a01 0a 8107 6902 0101 6a01 00");
    assert_eq!(fib.encode(), wire);
    assert_eq!(FibEntry::decode(&wire).unwrap(), fib);
    // RibEntry: one route with ExpirationPeriod, one without.
    let rib = RibEntry {
        name: name("/a"),
        routes: vec![
            Route {
                face_id: 300,
                origin: 65,
                cost: 0,
                flags: 2,
                expiration_period: Some(5000),
            },
            Route {
                face_id: 1,
                origin: 255,
                cost: 1,
                flags: 1,
                expiration_period: None,
            },
        ],
    };
    let wire = hex(
        "8026 0703 080161 8111 6902 012c 6f01 41 6a01 00 6c01 02 6d02 1388 810c 6901 01 6f01 ff 6a01 01 6c01 01",
    );
    assert_eq!(rib.encode(), wire);
    assert_eq!(RibEntry::decode(&wire).unwrap(), rib);
    // StrategyChoice.
    let sc = StrategyChoice {
        name: name("/"),
        strategy: name("/s/v=5"),
    };
    let wire = hex("800c 0700 6b08 0706 080173 360105");
    assert_eq!(sc.encode(), wire);
    assert_eq!(StrategyChoice::decode(&wire).unwrap(), sc);
    // A list of entries, and an entry of the wrong type in it.
    let list = FibEntry::encode_list(&[fib.clone(), fib.clone()]);
    assert_eq!(
        FibEntry::decode_list(&list).unwrap(),
        vec![fib.clone(), fib]
    );
    assert_eq!(mgmt::decode_list::<CsInfo>(&Bytes::new()).unwrap(), vec![]);
    let mut bad = list.to_vec();
    bad.extend_from_slice(&hex("8100"));
    assert!(matches!(
        FibEntry::decode_list(&Bytes::from(bad)).unwrap_err().kind,
        ErrorKind::UnexpectedType {
            expected: 0x80,
            found: 0x81
        }
    ));
}

#[test]
fn dataset_required_fields_and_order() {
    // NextHopRecord without Cost.
    let err = FibEntry::decode(&hex("800a 0703 080161 8103 6901 01")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Missing { typ: 0x6a });
    // Cost before FaceId.
    let err = FibEntry::decode(&hex("800d 0703 080161 8106 6a01 00 6901 01")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::OutOfOrder { typ: 0x69 });
    // NextHopRecord before Name.
    let err = FibEntry::decode(&hex("800d 8106 6901 01 6a01 00 0703 080161")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::OutOfOrder { typ: 0x07 });
    // FibEntry without Name.
    let err = FibEntry::decode(&hex("8000")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Missing { typ: 0x07 });
    // Route without Flags.
    let err = RibEntry::decode(&hex("8010 0703 080161 8109 6901 01 6f01 00 6a01 00"));
    assert_eq!(err.unwrap_err().kind, ErrorKind::Missing { typ: 0x6c });
    // CsInfo in TLV-TYPE order (NHits before NCsEntries) is out of ndn-cxx order.
    let err = CsInfo::decode(&hex("800f 8301 01 6c01 03 8101 07 8201 01 8701 02")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::OutOfOrder { typ: 0x87 });
    // StrategyChoice without Strategy.
    let err = StrategyChoice::decode(&hex("8002 0700")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Missing { typ: 0x6b });
}

fn sample_face() -> FaceStatus {
    FaceStatus {
        face_id: 300,
        uri: "udp4://192.0.2.1:6363".into(),
        local_uri: "udp4://192.0.2.2:6363".into(),
        expiration_period: Some(10_000),
        face_scope: mgmt::face_scope::NON_LOCAL,
        face_persistency: mgmt::face_persistency::ON_DEMAND,
        link_type: mgmt::link_type::POINT_TO_POINT,
        base_congestion_marking_interval: Some(100_000_000),
        default_congestion_threshold: Some(65536),
        mtu: Some(8800),
        n_in_interests: 1,
        n_in_data: 2,
        n_in_nacks: 3,
        n_out_interests: 4,
        n_out_data: 5,
        n_out_nacks: 6,
        n_in_bytes: 7,
        n_out_bytes: 8,
        flags: mgmt::face_flags::CONGESTION_MARKING_ENABLED,
    }
}

#[test]
fn face_status_field_order() {
    let face = sample_face();
    let wire = face.encode();
    let mut r = nameway_wire::tlv::read_single(&wire).unwrap().children();
    let mut order = Vec::new();
    while let Some(e) = r.read().unwrap() {
        order.push(e.typ);
    }
    // docs/nfd-interop.md §8.
    let expected = [
        0x69, 0x72, 0x81, 0x6d, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x90, 0x91, 0x97, 0x92, 0x93,
        0x98, 0x94, 0x95, 0x6c,
    ];
    assert_eq!(order, expected);
    assert_eq!(FaceStatus::decode(&wire).unwrap(), face);
    // The bare fields without the FaceStatus wrapper (ndnd issue 52) are refused.
    let err = FaceStatus::decode_list(&wire.slice(2..)).unwrap_err();
    assert!(matches!(
        err.kind,
        ErrorKind::UnexpectedType {
            expected: 0x80,
            found: 0x69
        }
    ));
}

#[test]
fn forwarder_status_is_unwrapped() {
    let status = ForwarderStatus {
        nfd_version: "22.12".into(),
        start_timestamp: 1_700_000_000_000,
        current_timestamp: 1_700_000_100_000,
        n_name_tree_entries: 10,
        n_fib_entries: 3,
        n_pit_entries: 1,
        n_cs_entries: 5,
        n_satisfied_interests: 9,
        ..ForwarderStatus::default()
    };
    let content = status.encode();
    assert_eq!(content[..8], hex("8005 32322e3132 81")[..]);
    assert_eq!(ForwarderStatus::decode(&content).unwrap(), status);
    // Missing the last field.
    let cut = content.slice(..content.len() - 3);
    assert_eq!(
        ForwarderStatus::decode(&cut).unwrap_err().kind,
        ErrorKind::Missing { typ: 0x9a }
    );
}

#[test]
fn face_query_filter() {
    let f = FaceQueryFilter {
        uri_scheme: Some("udp4".into()),
        face_persistency: Some(mgmt::face_persistency::PERMANENT),
        ..FaceQueryFilter::default()
    };
    let wire = f.encode();
    assert_eq!(wire, hex("9609 8304 75647034 8501 02"));
    assert_eq!(FaceQueryFilter::decode(&wire).unwrap(), f);
    assert_eq!(
        FaceQueryFilter::decode(&hex("9600")).unwrap(),
        FaceQueryFilter::default()
    );
    // Uri before UriScheme.
    assert!(FaceQueryFilter::decode(&hex("960a 7202 6162 8304 75647034")).is_err());
}

// ---- property tests ----

fn arb_name() -> impl Strategy<Value = Name> {
    let comp = (
        prop_oneof![
            Just(0x08u32),
            Just(0x32),
            Just(0x36),
            Just(0x20),
            3u32..=0xffff
        ],
        proptest::collection::vec(any::<u8>(), 0..8),
    )
        .prop_map(|(typ, v)| Component {
            typ,
            value: Bytes::from(v),
        });
    proptest::collection::vec(comp, 0..5).prop_map(|cs| Name::from_components(&cs).unwrap())
}

fn arb_string() -> impl Strategy<Value = String> {
    "[a-z0-9:/.\\[\\]é]{0,24}"
}

fn opt<T: std::fmt::Debug + Clone>(
    s: impl Strategy<Value = T>,
) -> impl Strategy<Value = Option<T>> {
    proptest::option::of(s)
}

prop_compose! {
    fn arb_control_parameters()(
        (name, face_id, uri, local_uri, origin, cost, capacity, count) in (
            opt(arb_name()), opt(any::<u64>()), opt(arb_string()), opt(arb_string()),
            opt(any::<u64>()), opt(any::<u64>()), opt(any::<u64>()), opt(any::<u64>()),
        ),
        (bcmi, dct, mtu, flags, mask, strategy, expiration_period, face_persistency) in (
            opt(any::<u64>()), opt(any::<u64>()), opt(any::<u64>()), opt(any::<u64>()),
            opt(any::<u64>()), opt(arb_name()), opt(any::<u64>()), opt(0u64..3),
        ),
        (interest_rate_limit, interest_burst) in (opt(any::<u64>()), opt(any::<u64>())),
        (cs_policy, cs_memory_capacity, cs_disk_capacity) in (
            opt(arb_string()), opt(any::<u64>()), opt(any::<u64>()),
        ),
        (security_level, peer_key, secure_mode) in (
            opt(arb_string()), opt(arb_string()), opt(arb_string()),
        ),
    ) -> ControlParameters {
        ControlParameters {
            name, face_id, uri, local_uri, origin, cost, capacity, count,
            base_congestion_marking_interval: bcmi, default_congestion_threshold: dct, mtu,
            flags, mask, strategy, expiration_period, face_persistency,
            interest_rate_limit, interest_burst, cs_policy, cs_memory_capacity, cs_disk_capacity,
            security_level, peer_key, secure_mode,
        }
    }
}

prop_compose! {
    fn arb_control_response()(
        status_code in any::<u32>(),
        status_text in arb_string(),
        body in opt(arb_control_parameters()),
    ) -> ControlResponse {
        let body = body.map(|p| p.encode()).unwrap_or_default();
        ControlResponse { status_code, status_text, body }
    }
}

prop_compose! {
    fn arb_face_status()(
        (face_id, uri, local_uri, expiration_period, face_scope, face_persistency, link_type) in (
            any::<u64>(), arb_string(), arb_string(), opt(any::<u64>()), 0u64..2, 0u64..3, 0u64..3,
        ),
        (bcmi, dct, mtu) in (opt(any::<u64>()), opt(any::<u64>()), opt(any::<u64>())),
        c in any::<[u64; 8]>(),
        flags in any::<u64>(),
    ) -> FaceStatus {
        FaceStatus {
            face_id, uri, local_uri, expiration_period, face_scope, face_persistency, link_type,
            base_congestion_marking_interval: bcmi, default_congestion_threshold: dct, mtu,
            n_in_interests: c[0], n_in_data: c[1], n_in_nacks: c[2], n_out_interests: c[3],
            n_out_data: c[4], n_out_nacks: c[5], n_in_bytes: c[6], n_out_bytes: c[7], flags,
        }
    }
}

prop_compose! {
    fn arb_face_query_filter()(
        face_id in opt(any::<u64>()),
        uri_scheme in opt(arb_string()),
        uri in opt(arb_string()),
        local_uri in opt(arb_string()),
        face_scope in opt(0u64..2),
        face_persistency in opt(0u64..3),
        link_type in opt(0u64..3),
    ) -> FaceQueryFilter {
        FaceQueryFilter { face_id, uri_scheme, uri, local_uri, face_scope, face_persistency, link_type }
    }
}

prop_compose! {
    fn arb_fib_entry()(
        name in arb_name(),
        hops in proptest::collection::vec((any::<u64>(), any::<u64>()), 0..4),
    ) -> FibEntry {
        let next_hops = hops.into_iter().map(|(face_id, cost)| NextHopRecord { face_id, cost }).collect();
        FibEntry { name, next_hops }
    }
}

prop_compose! {
    fn arb_route()(
        face_id in any::<u64>(),
        origin in prop_oneof![Just(route_origin::APP), Just(route_origin::CLIENT), any::<u64>()],
        cost in any::<u64>(),
        flags in 0u64..4,
        expiration_period in opt(any::<u64>()),
    ) -> Route {
        Route { face_id, origin, cost, flags, expiration_period }
    }
}

prop_compose! {
    fn arb_rib_entry()(name in arb_name(), routes in proptest::collection::vec(arb_route(), 0..4))
        -> RibEntry {
        RibEntry { name, routes }
    }
}

prop_compose! {
    fn arb_cs_info()(v in any::<[u64; 5]>()) -> CsInfo {
        CsInfo { capacity: v[0], flags: v[1], n_entries: v[2], n_hits: v[3], n_misses: v[4] }
    }
}

prop_compose! {
    fn arb_strategy_choice()(name in arb_name(), strategy in arb_name()) -> StrategyChoice {
        StrategyChoice { name, strategy }
    }
}

prop_compose! {
    fn arb_forwarder_status()(nfd_version in arb_string(), v in any::<[u64; 15]>()) -> ForwarderStatus {
        ForwarderStatus {
            nfd_version,
            start_timestamp: v[0], current_timestamp: v[1], n_name_tree_entries: v[2],
            n_fib_entries: v[3], n_pit_entries: v[4], n_measurements_entries: v[5],
            n_cs_entries: v[6], n_in_interests: v[7], n_in_data: v[8], n_in_nacks: v[9],
            n_out_interests: v[10], n_out_data: v[11], n_out_nacks: v[12],
            n_satisfied_interests: v[13], n_unsatisfied_interests: v[14],
        }
    }
}

proptest! {
    #[test]
    fn control_parameters_round_trip(p in arb_control_parameters()) {
        let wire = p.encode();
        prop_assert_eq!(ControlParameters::decode(&wire).unwrap(), p);
    }

    #[test]
    fn control_response_round_trip(r in arb_control_response()) {
        let wire = r.encode();
        let back = ControlResponse::decode(&wire).unwrap();
        prop_assert_eq!(&back, &r);
        if !r.body.is_empty() {
            prop_assert_eq!(back.parameters().unwrap().unwrap().encode(), r.body);
        }
    }

    #[test]
    fn face_status_round_trip(list in proptest::collection::vec(arb_face_status(), 0..4)) {
        for f in &list {
            prop_assert_eq!(&FaceStatus::decode(&f.encode()).unwrap(), f);
        }
        prop_assert_eq!(FaceStatus::decode_list(&FaceStatus::encode_list(&list)).unwrap(), list);
    }

    #[test]
    fn face_query_filter_round_trip(f in arb_face_query_filter()) {
        prop_assert_eq!(FaceQueryFilter::decode(&f.encode()).unwrap(), f);
    }

    #[test]
    fn fib_entry_round_trip(list in proptest::collection::vec(arb_fib_entry(), 0..4)) {
        for e in &list {
            prop_assert_eq!(&FibEntry::decode(&e.encode()).unwrap(), e);
        }
        prop_assert_eq!(FibEntry::decode_list(&FibEntry::encode_list(&list)).unwrap(), list);
    }

    #[test]
    fn rib_entry_round_trip(list in proptest::collection::vec(arb_rib_entry(), 0..4)) {
        for e in &list {
            prop_assert_eq!(&RibEntry::decode(&e.encode()).unwrap(), e);
        }
        prop_assert_eq!(RibEntry::decode_list(&RibEntry::encode_list(&list)).unwrap(), list);
    }

    #[test]
    fn cs_info_round_trip(c in arb_cs_info()) {
        prop_assert_eq!(CsInfo::decode(&c.encode()).unwrap(), c);
        prop_assert_eq!(CsInfo::decode_list(&CsInfo::encode_list(&[c, c])).unwrap(), vec![c, c]);
    }

    #[test]
    fn strategy_choice_round_trip(list in proptest::collection::vec(arb_strategy_choice(), 0..4)) {
        for e in &list {
            prop_assert_eq!(&StrategyChoice::decode(&e.encode()).unwrap(), e);
        }
        let wire = StrategyChoice::encode_list(&list);
        prop_assert_eq!(mgmt::decode_list::<StrategyChoice>(&wire).unwrap(), list);
    }

    #[test]
    fn forwarder_status_round_trip(s in arb_forwarder_status()) {
        prop_assert_eq!(ForwarderStatus::decode(&s.encode()).unwrap(), s);
    }

    #[test]
    fn decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
        let b = Bytes::from(bytes);
        let _ = ControlParameters::decode(&b);
        let _ = ControlResponse::decode(&b).map(|r| r.parameters());
        let _ = FaceStatus::decode_list(&b);
        let _ = FaceQueryFilter::decode(&b);
        let _ = FibEntry::decode_list(&b);
        let _ = RibEntry::decode_list(&b);
        let _ = CsInfo::decode_list(&b);
        let _ = StrategyChoice::decode_list(&b);
        let _ = ForwarderStatus::decode(&b);
    }

    #[test]
    fn mutated_parameters_never_panic(p in arb_control_parameters(), pos in any::<usize>(), byte in any::<u8>()) {
        let mut wire = p.encode().to_vec();
        let i = pos % wire.len();
        wire[i] = byte;
        let _ = ControlParameters::decode(&Bytes::from(wire));
    }
}
