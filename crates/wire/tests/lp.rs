//! NDNLPv2: LpPacket decoding against captured vectors and ndn-cxx's acceptance rules, Nack
//! encoding against NFD's format, the classifier, and fragmentation with reassembly.

// Test helpers outside #[test] fns may unwrap: a panic is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use nameway_wire::lp::{
    fragment, CachePolicyType, LpPacket, NackReason, Packet, Reassembler, ReassemblerConfig,
};
use nameway_wire::{ErrorKind, Interest};
use proptest::prelude::*;

fn hex(s: &str) -> Bytes {
    let clean: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    Bytes::from(hex::decode(clean).unwrap())
}

/// docs/nfd-interop.md §4.1: NDNts wraps its v0.3 rib/register Interest with PitToken 4167ffffffff.
const NDNTS_LP: &str = "
64b462064167ffffffff50aa05a8075f08096c6f63616c686f737408036e6664080372696208087265676973746572081c68
1a070908076578616d706c656f01416a01006c01026d0400124f8002202cae6bf5f381a9876b6dadc4d461a4a9d22e247c8bef
30c8f2f265d699edd8fd0a0455e5f61d0c020f9f24002c171b010026080d0ecf283cdad6972808000001a1ff7cfc5a2e20f340
a4d95d2db4ab94724aae9d87871806bfe45e00f064e2ab53605eb3010558";

/// docs/nfd-interop.md §3.5: a python-ndn consumer Interest for /example/x.
const PY_INTEREST: &str = "051a 070c 0807 6578616d706c65 0801 78 1200 0a04 7e7cf9ce 0c02 0fa0";

/// An LpPacket around the given TLV-VALUE hex.
fn lp(value: &str) -> Bytes {
    let value = hex(value);
    let mut out = vec![0x64];
    if value.len() < 0xfd {
        out.push(value.len() as u8);
    } else {
        out.extend_from_slice(&[0xfd, (value.len() >> 8) as u8, value.len() as u8]);
    }
    out.extend_from_slice(&value);
    Bytes::from(out)
}

/// An LpPacket with the given header fields and [`PY_INTEREST`] as Fragment.
fn lp_with(header: &str) -> Bytes {
    lp(&format!("{header} 501c {PY_INTEREST}"))
}

fn kind(wire: &Bytes) -> ErrorKind {
    LpPacket::decode(wire).unwrap_err().kind
}

#[test]
fn ndnts_pit_token_vector() {
    let wire = hex(NDNTS_LP);
    let pkt = LpPacket::decode(&wire).unwrap();
    assert_eq!(pkt.pit_token.as_deref(), Some(&hex("4167ffffffff")[..]));
    let frag = pkt.fragment.clone().unwrap();
    assert_eq!(frag, wire.slice(12..)); // 64b4 6206<token> 50aa | Interest
    assert_eq!(frag[..2], [0x05, 0xa8]);
    let interest = Interest::decode(&frag).unwrap();
    assert_eq!(interest.name.len(), 6);
    assert!(!pkt.is_idle() && !pkt.is_fragmented() && !pkt.is_nack());
    // Canonical order in, same bytes out.
    assert_eq!(pkt.encode(), wire);
    assert_eq!(pkt.encoded_len(), wire.len());
    assert_eq!(Packet::classify(wire).unwrap(), Packet::Lp(pkt));
}

#[test]
fn idle_packet() {
    let wire = hex("6400");
    let pkt = LpPacket::decode(&wire).unwrap();
    assert!(pkt.is_idle());
    assert_eq!(pkt, LpPacket::default());
    assert_eq!(LpPacket::default().encode(), wire);
    // Ack-only packets are IDLE too.
    let acks = hex("6418 fd0344 08 0000000000000001 fd0344 08 0000000000000002");
    let pkt = LpPacket::decode(&acks).unwrap();
    assert!(pkt.is_idle());
    assert_eq!(pkt.acks, vec![1, 2]);
    assert_eq!(pkt.encode(), acks);
}

#[test]
fn nack_matches_nfd_format() {
    let interest = hex(PY_INTEREST);
    let token = hex("4167ffffffff");
    let nack = LpPacket::nack(NackReason::NoRoute, interest.clone(), Some(token)).encode();
    // 64 LL [62 PitToken] fd0320 LL { fd0321 01 <reason> } 50 LL <Interest>
    let expected = hex(&format!(
        "642f 6206 4167ffffffff fd0320 05 fd0321 01 96 501c {PY_INTEREST}"
    ));
    assert_eq!(nack, expected);
    let back = LpPacket::decode(&nack).unwrap();
    assert_eq!(back.nack, Some(NackReason::NoRoute));
    assert_eq!(back.fragment, Some(interest.clone()));

    let bare = LpPacket::nack(NackReason::None, interest, None).encode();
    assert_eq!(
        bare,
        hex(&format!("6427 fd0320 05 fd0321 01 00 501c {PY_INTEREST}"))
    );
}

#[test]
fn nack_header_forms() {
    // Empty header: reason None (ndn-cxx); encoding adds NackReason back.
    let pkt = LpPacket::decode(&lp_with("fd0320 00")).unwrap();
    assert_eq!(pkt.nack, Some(NackReason::None));
    // Unknown reason code kept.
    let pkt = LpPacket::decode(&lp_with("fd0320 05 fd0321 01 07")).unwrap();
    assert_eq!(pkt.nack, Some(NackReason::Unknown(7)));
    assert_eq!(LpPacket::decode(&pkt.encode()).unwrap(), pkt);
    // Congestion, with a two-byte NNI and an ignored trailing element (ndn-cxx reads the first).
    let pkt = LpPacket::decode(&lp_with("fd0320 0a fd0321 02 0032 fd0360 00")).unwrap();
    assert_eq!(pkt.nack, Some(NackReason::Congestion));
    // First element must be NackReason.
    assert!(matches!(
        kind(&lp_with("fd0320 05 fd0322 01 00")),
        ErrorKind::UnexpectedType {
            expected: 0x0321,
            found: 0x0322
        }
    ));
}

#[test]
fn hop_count_is_accepted_and_never_emitted() {
    // HopCount 0x54 (ndnSIM): decoded; python-ndn ignores it; NDNts would reject it, so
    // Nameway does not re-emit it.
    let wire = lp_with("5401 05 6201 aa");
    let pkt = LpPacket::decode(&wire).unwrap();
    assert_eq!(pkt.hop_count, Some(5));
    assert_eq!(pkt.pit_token.as_deref(), Some(&[0xaa][..]));
    let out = pkt.encode();
    assert_eq!(out, lp_with("6201 aa"));
}

#[test]
fn all_header_fields_in_order() {
    let pa_data = "0603 0701 00"; // outer check only
    let wire = lp_with(&format!(
        "5108 0000000000000009 5201 01 5301 03 6202 abcd fd0320 05 fd0321 01 64
         fd032c 01 07 fd0330 02 0100 fd0334 05 fd0335 01 01 fd0340 01 01
         fd0344 08 0000000000000003 fd0348 08 0000000000000004 fd034c 00 fd0350 05 {pa_data}"
    ));
    let pkt = LpPacket::decode(&wire).unwrap();
    assert_eq!(pkt.sequence, Some(9));
    assert_eq!((pkt.frag_index, pkt.frag_count), (Some(1), Some(3)));
    assert!(pkt.is_fragmented());
    assert_eq!(pkt.nack, Some(NackReason::Duplicate));
    assert_eq!(pkt.incoming_face_id, Some(7));
    assert_eq!(pkt.next_hop_face_id, Some(256));
    assert_eq!(pkt.cache_policy, Some(CachePolicyType::NoCache));
    assert_eq!(pkt.congestion_mark, Some(1));
    assert_eq!(pkt.acks, vec![3]);
    assert_eq!(pkt.tx_sequence, Some(4));
    assert!(pkt.non_discovery);
    assert_eq!(pkt.prefix_announcement, Some(hex(pa_data)));
    assert_eq!(pkt.encode(), wire);
}

#[test]
fn retry_after_rides_on_a_nack_and_peers_may_skip_it() {
    // Nack NoRoute with RetryAfter = 1000 ms (0x0390 = 912: in 800..=959, low bits 00).
    let wire = lp_with("fd0320 05 fd0321 01 96 fd0390 02 03e8");
    let pkt = LpPacket::decode(&wire).unwrap();
    assert_eq!(pkt.nack, Some(NackReason::NoRoute));
    assert_eq!(pkt.retry_after, Some(1000));
    assert_eq!(pkt.encode(), wire);
    assert!(nameway_wire::lp::is_ignorable_field(0x0390));
    // Built from the struct: written after the other headers, before the Fragment.
    let built = LpPacket {
        retry_after: Some(250),
        ..LpPacket::nack(NackReason::NoRoute, hex(PY_INTEREST), None)
    };
    assert_eq!(
        built.encode(),
        lp_with("fd0320 05 fd0321 01 96 fd0390 01 fa")
    );
    assert_eq!(LpPacket::decode(&built.encode()).unwrap(), built);
    // Its value is a NonNegativeInteger (1, 2, 4 or 8 octets), in header order.
    for bad in [
        "fd0390 03 000001",
        "fd0390 00",
        "fd0390 01 01 fd0320 05 fd0321 01 96",
    ] {
        assert!(LpPacket::decode(&lp_with(bad)).is_err(), "{bad}");
    }
}

#[test]
fn unknown_fields_follow_the_800_959_rule() {
    // 0x0360 = 864: in 800..=959 and a multiple of 4: ignored.
    let pkt = LpPacket::decode(&lp_with("6201 aa fd0360 02 abcd")).unwrap();
    assert_eq!(pkt.pit_token.as_deref(), Some(&[0xaa][..]));
    assert_eq!(pkt.fragment, Some(hex(PY_INTEREST)));
    // Everything else unknown is critical.
    for typ in [
        "fd0321", "fd0361", "fd0362", "fd0363", "fd03c0", "fd031c", "56", "63", "fd0400",
    ] {
        let wire = lp_with(&format!("{typ} 00"));
        let t = u32::from_str_radix(typ.trim_start_matches("fd"), 16).unwrap();
        assert_eq!(
            kind(&wire),
            ErrorKind::UnrecognizedCritical { typ: t },
            "type {typ}"
        );
    }
}

#[test]
fn order_is_enforced_like_ndn_cxx() {
    let frag = format!("501c {PY_INTEREST}");
    let cases = [
        // Fragment not last.
        format!("{frag} 6203 aabbcc"),
        // Two Fragments.
        format!("{frag} {frag}"),
        // PitToken before Sequence.
        format!("6201 aa 5108 0000000000000001 {frag}"),
        // Repeated PitToken.
        format!("6201 aa 6201 bb {frag}"),
        // Nack before PitToken.
        format!("fd0320 00 6201 aa {frag}"),
        // Ignorable unknown field out of order, as in ndn-cxx.
        format!("fd0360 00 fd034c 00 {frag}"),
        // Repeated ignorable field.
        format!("fd0360 00 fd0360 00 {frag}"),
        // Ack not back to back.
        format!("fd0344 08 0000000000000001 fd0340 01 00 fd0344 08 0000000000000002 {frag}"),
    ];
    for case in cases {
        let wire = lp(&case);
        assert!(
            matches!(kind(&wire), ErrorKind::OutOfOrder { .. }),
            "{case}: {:?}",
            LpPacket::decode(&wire)
        );
    }
}

#[test]
fn bad_field_values() {
    let cases = [
        "5107 00000000000001",    // Sequence not 8 octets
        "5203 000001",            // FragIndex: 3-byte NNI
        "5300",                   // FragCount: empty NNI
        "6200",                   // empty PitToken
        "fd034c 01 00",           // NonDiscovery not empty
        "fd0334 00",              // CachePolicy without type
        "fd0334 05 fd0335 01 02", // unknown CachePolicyType
        "fd0350 03 050100",       // PrefixAnnouncement holding an Interest
        "fd0344 04 00000001",     // Ack not 8 octets
    ];
    for case in cases {
        assert!(LpPacket::decode(&lp_with(case)).is_err(), "{case}");
    }
    let thirty_three = "62 21".to_owned() + &"ab".repeat(33);
    assert!(LpPacket::decode(&lp_with(&thirty_three)).is_err());
    let thirty_two = "62 20".to_owned() + &"ab".repeat(32);
    assert!(LpPacket::decode(&lp_with(&thirty_two)).is_ok());
    // Empty Fragment: ndn-cxx refuses it ("cannot be empty").
    assert_eq!(
        kind(&lp("5000")),
        ErrorKind::InvalidValue("Fragment is empty")
    );
}

#[test]
fn truncations_and_framing() {
    let wire = hex(NDNTS_LP);
    for len in 0..wire.len() {
        assert!(
            LpPacket::decode(&wire.slice(..len)).is_err(),
            "prefix {len}"
        );
        assert!(Packet::classify(wire.slice(..len)).is_err(), "prefix {len}");
    }
    let mut longer = wire.to_vec();
    longer.push(0);
    assert_eq!(kind(&Bytes::from(longer)), ErrorKind::TrailingBytes);
    assert!(matches!(
        kind(&hex(PY_INTEREST)),
        ErrorKind::UnexpectedType { .. }
    ));
    // Over the 8800-byte limit.
    let mut big = vec![0x64, 0xfd, 0x22, 0x5e, 0x50, 0xfd, 0x22, 0x5a];
    big.resize(8801 + 1, 0x05);
    assert_eq!(kind(&Bytes::from(big.clone())), ErrorKind::TooLarge);
    assert_eq!(
        Packet::classify(Bytes::from(big)).unwrap_err().kind,
        ErrorKind::TooLarge
    );
}

// ---- property tests ----

fn arb_bytes(min: usize, max: usize) -> impl Strategy<Value = Bytes> {
    proptest::collection::vec(any::<u8>(), min..max).prop_map(Bytes::from)
}

fn arb_reason() -> impl Strategy<Value = NackReason> {
    any::<u64>().prop_map(NackReason::from_code)
}

prop_compose! {
    fn arb_header()(
        sequence in proptest::option::of(any::<u64>()),
        frag_index in proptest::option::of(any::<u64>()),
        frag_count in proptest::option::of(any::<u64>()),
        pit_token in proptest::option::of(arb_bytes(1, 33)),
        nack in proptest::option::of(arb_reason()),
        incoming_face_id in proptest::option::of(any::<u64>()),
        next_hop_face_id in proptest::option::of(any::<u64>()),
        no_cache in any::<bool>(),
        congestion_mark in proptest::option::of(any::<u64>()),
        acks in proptest::collection::vec(any::<u64>(), 0..4),
        tx_sequence in proptest::option::of(any::<u64>()),
        non_discovery in any::<bool>(),
        retry_after in proptest::option::of(any::<u64>()),
    ) -> LpPacket {
        LpPacket {
            sequence, frag_index, frag_count, pit_token, nack, incoming_face_id,
            next_hop_face_id, congestion_mark, acks, tx_sequence, non_discovery, retry_after,
            cache_policy: no_cache.then_some(CachePolicyType::NoCache),
            ..LpPacket::default()
        }
    }
}

prop_compose! {
    fn arb_lp_packet()(
        mut pkt in arb_header(),
        announcement in proptest::option::of(arb_bytes(0, 20)),
        fragment in proptest::option::of(arb_bytes(1, 300)),
    ) -> LpPacket {
        // A PrefixAnnouncement must hold a Data element; its inside is not checked.
        pkt.prefix_announcement = announcement.map(|content| {
            let mut d = vec![0x06, content.len() as u8];
            d.extend_from_slice(&content);
            Bytes::from(d)
        });
        pkt.fragment = fragment;
        pkt
    }
}

proptest! {
    #[test]
    fn lp_packet_round_trips(pkt in arb_lp_packet()) {
        let wire = pkt.encode();
        prop_assert_eq!(wire.len(), pkt.encoded_len());
        let back = LpPacket::decode(&wire).unwrap();
        prop_assert_eq!(&back, &pkt);
        prop_assert_eq!(back.encode(), wire.clone());
        prop_assert_eq!(Packet::classify(wire).unwrap(), Packet::Lp(pkt));
    }

    #[test]
    fn decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let wire = Bytes::from(bytes);
        let _ = LpPacket::decode(&wire);
        let _ = Packet::classify(wire);
    }

    #[test]
    fn mutated_packets_never_panic(pkt in arb_lp_packet(), pos in any::<usize>(), byte in any::<u8>()) {
        let mut wire = pkt.encode().to_vec();
        let i = pos % wire.len();
        wire[i] = byte;
        let _ = LpPacket::decode(&Bytes::from(wire));
    }

    #[test]
    fn fragments_reassemble_in_any_order(
        payload in arb_bytes(1, 9000),
        mtu in 64usize..2000,
        seq in any::<u64>(),
        order in any::<u64>(),
    ) {
        let frags = fragment(&payload, mtu, seq);
        prop_assert!(!frags.is_empty());
        let mut pkts: Vec<LpPacket> = frags.iter().map(|f| {
            assert!(f.len() <= mtu);
            LpPacket::decode(f).unwrap()
        }).collect();
        shuffle(&mut pkts, order);
        let config = ReassemblerConfig { max_packet_size: 10_000, ..ReassemblerConfig::default() };
        let mut r = Reassembler::new(config);
        let last = pkts.len() - 1;
        for (i, p) in pkts.iter().enumerate() {
            let out = r.receive(0, p);
            prop_assert_eq!(out.is_some(), i == last);
            if let Some(out) = out {
                prop_assert_eq!(&out, &payload);
            }
        }
        prop_assert!(r.is_empty());
    }
}

/// A deterministic Fisher-Yates shuffle driven by `seed`.
fn shuffle<T>(items: &mut [T], mut seed: u64) {
    for i in (1..items.len()).rev() {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let j = (seed >> 33) as usize % (i + 1);
        items.swap(i, j);
    }
}

#[test]
fn fragment_and_reassemble_every_size_up_to_9000() {
    const MTU: usize = 1400;
    let config = ReassemblerConfig {
        max_packet_size: 9000,
        ..ReassemblerConfig::default()
    };
    let mut r = Reassembler::new(config);
    let data: Vec<u8> = (0..9000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    let data = Bytes::from(data);
    let mut seq = 1000u64;
    for size in 0..=9000usize {
        let payload = data.slice(..size);
        let frags = fragment(&payload, MTU, seq);
        if size == 0 {
            assert!(frags.is_empty(), "an empty packet has no fragments");
            continue;
        }
        let mut pkts: Vec<LpPacket> = frags
            .iter()
            .map(|f| {
                assert!(f.len() <= MTU, "size {size}: fragment of {} bytes", f.len());
                LpPacket::decode(f).unwrap()
            })
            .collect();
        let n = pkts.len() as u64;
        assert_eq!(pkts.iter().all(|p| p.is_fragmented()), n > 1);
        assert!(pkts
            .iter()
            .enumerate()
            .all(|(i, p)| p.sequence == Some(seq + i as u64)));
        seq += n;
        shuffle(&mut pkts, size as u64);
        let outs: Vec<Option<Bytes>> = pkts.iter().map(|p| r.receive(size as u64, p)).collect();
        let (last, rest) = outs.split_last().unwrap();
        assert!(rest.iter().all(Option::is_none), "size {size}");
        assert_eq!(last.as_ref(), Some(&payload), "size {size}");
    }
    assert!(r.is_empty());
    assert_eq!(
        r.counters().timed_out + r.counters().evicted + r.counters().duplicate,
        0
    );
}

#[test]
fn interleaved_packets_reassemble() {
    let a = Bytes::from(vec![0xaa; 5000]);
    let b = Bytes::from(vec![0xbb; 3000]);
    let fa = fragment(&a, 1400, 10);
    let fb = fragment(&b, 1400, 10 + fa.len() as u64);
    let mut r = Reassembler::default();
    let mut done = Vec::new();
    let (mut ia, mut ib) = (fa.iter().rev(), fb.iter());
    loop {
        let next = [ia.next(), ib.next()];
        if next.iter().all(Option::is_none) {
            break;
        }
        for f in next.into_iter().flatten() {
            if let Some(p) = r.receive(0, &LpPacket::decode(f).unwrap()) {
                done.push(p);
            }
        }
    }
    done.sort_by_key(|p| p.len());
    assert_eq!(done, vec![b, a]);
}

#[test]
fn fragmenter_edge_cases() {
    let wire = Bytes::from(vec![1u8; 100]);
    // Fits in one packet: Sequence + Fragment only (python-ndn drops FragIndex/FragCount).
    let one = fragment(&wire, 1400, 5);
    assert_eq!(one.len(), 1);
    let pkt = LpPacket::decode(&one[0]).unwrap();
    assert_eq!(
        (pkt.sequence, pkt.frag_index, pkt.frag_count),
        (Some(5), None, None)
    );
    assert!(!pkt.is_fragmented());
    // MTU too small for any payload.
    assert!(fragment(&wire, 20, 0).is_empty());
    // Sequence numbers wrap.
    let frags = fragment(&wire, 40, u64::MAX - 1);
    let seqs: Vec<_> = frags
        .iter()
        .map(|f| LpPacket::decode(f).unwrap().sequence.unwrap())
        .collect();
    assert_eq!(&seqs[..3], &[u64::MAX - 1, u64::MAX, 0]);
    let mut r = Reassembler::default();
    let out: Vec<_> = frags
        .iter()
        .filter_map(|f| r.receive(0, &LpPacket::decode(f).unwrap()))
        .collect();
    assert_eq!(out, vec![wire]);
}
