use bytes::{BufMut, BytesMut};
use nameway_wire::lp::{fragment, NackReason};

use super::*;

/// A Data TLV of exactly `len` bytes (only the outer TLV is meaningful).
fn data(len: usize) -> Bytes {
    let value = len - 4;
    let mut b = BytesMut::with_capacity(len);
    b.put_u8(0x06);
    b.put_u8(0xfd);
    b.put_u16(value as u16);
    b.extend((0..value).map(|i| (i % 251) as u8));
    b.freeze()
}

fn udp() -> LinkService {
    LinkService::new(LinkConfig {
        mtu: Some(1400),
        reassembly: Some(ReassemblerConfig::default()),
    })
}

fn stream() -> LinkService {
    LinkService::new(LinkConfig::default())
}

#[test]
fn bare_and_lp_packets_go_up_unchanged() {
    let mut link = stream();
    let interest = Bytes::from_static(&[0x05, 0x05, 0x07, 0x03, 0x08, 0x01, 0x61]);
    let RxOutcome::Deliver(up) = link.on_receive(0, interest.clone()) else {
        panic!()
    };
    assert_eq!(up.as_ptr(), interest.as_ptr());
    let with_token = LpPacket {
        pit_token: Some(Bytes::from_static(&[1, 2, 3, 4, 5, 6])),
        ..LpPacket::wrap(interest)
    }
    .encode();
    assert_eq!(
        link.on_receive(0, with_token.clone()),
        RxOutcome::Deliver(with_token)
    );
}

#[test]
fn idle_is_consumed() {
    let mut link = stream();
    assert_eq!(
        link.on_receive(0, Bytes::from_static(&[0x64, 0x00])),
        RxOutcome::Idle
    );
    let acks_only = LpPacket {
        acks: vec![7],
        ..LpPacket::default()
    }
    .encode();
    assert_eq!(link.on_receive(0, acks_only), RxOutcome::Idle);
}

#[test]
fn bad_packets_are_dropped() {
    let mut link = udp();
    let cases: &[(&[u8], RxDrop)] = &[
        (&[0x08, 0x00], RxDrop::Malformed),
        (&[0x05, 0x05, 0x07], RxDrop::Malformed),
        (&[0x05, 0x00, 0x00], RxDrop::Malformed),
        (&[0x64, 0x02, 0x54, 0x00], RxDrop::Malformed), // HopCount with a bad NNI
        (&[0x64, 0x03, 0xfd, 0x03, 0x21], RxDrop::Malformed),
    ];
    for (bytes, why) in cases {
        assert_eq!(
            link.on_receive(0, Bytes::from_static(bytes)),
            RxOutcome::Dropped(*why)
        );
    }
    assert_eq!(
        link.on_receive(0, data(8801)),
        RxOutcome::Dropped(RxDrop::TooLarge)
    );
}

#[test]
fn fits_mtu_goes_out_unchanged() {
    let mut link = udp();
    let small = data(1400);
    let out = link.on_send(small.clone());
    assert_eq!(out.as_slice(), [small]);
    let mut s = stream();
    let big = data(8800);
    assert_eq!(s.on_send(big.clone()).as_slice(), [big]);
}

#[test]
fn fragments_and_reassembles_8000_bytes() {
    let (mut a, mut b) = (udp(), udp());
    let pkt = data(8000);
    let frags = a.on_send(pkt.clone());
    assert!(frags.len() >= 6, "{}", frags.len());
    for f in &frags {
        assert!(f.len() <= 1400);
        let lp = LpPacket::decode(f).unwrap();
        assert_eq!(lp.hop_count, None);
        assert!(lp.sequence.is_some());
    }
    let mut outcomes: Vec<_> = frags
        .iter()
        .rev()
        .map(|f| b.on_receive(5, f.clone()))
        .collect();
    assert_eq!(outcomes.pop(), Some(RxOutcome::Deliver(pkt)));
    assert!(outcomes.iter().all(|o| *o == RxOutcome::Fragment));
    assert_eq!(b.rx.take_reassembly_drops(), 0);
    // Sequences continue across packets.
    let next = a.on_send(data(3000));
    let seq = |f: &Bytes| LpPacket::decode(f).unwrap().sequence.unwrap();
    assert_eq!(seq(&next[0]), seq(&frags[frags.len() - 1]).wrapping_add(1));
}

#[test]
fn headers_ride_on_the_first_fragment() {
    let (mut a, mut b) = (udp(), udp());
    let token = Bytes::from_static(&[9, 8, 7, 6, 5, 4]);
    let inner = data(5000);
    let wire = LpPacket {
        pit_token: Some(token.clone()),
        ..LpPacket::wrap(inner.clone())
    }
    .encode();
    let frags = a.on_send(wire);
    assert!(frags.len() > 1);
    let decoded: Vec<_> = frags.iter().map(|f| LpPacket::decode(f).unwrap()).collect();
    assert_eq!(decoded[0].pit_token, Some(token.clone()));
    assert!(decoded[1..].iter().all(|d| d.pit_token.is_none()));
    assert!(frags.iter().all(|f| f.len() <= 1400));
    let mut last = None;
    for f in frags {
        last = Some(b.on_receive(0, f));
    }
    let Some(RxOutcome::Deliver(up)) = last else {
        panic!("{last:?}")
    };
    let up = LpPacket::decode(&up).unwrap();
    assert_eq!(up.pit_token, Some(token));
    assert_eq!(up.fragment, Some(inner));
    assert_eq!(
        (up.sequence, up.frag_index, up.frag_count),
        (None, None, None)
    );
}

#[test]
fn nack_survives_fragmentation() {
    let (mut a, mut b) = (udp(), udp());
    let interest = {
        let mut i = BytesMut::new();
        i.put_slice(&[0x05, 0xfd, 0x07, 0xd0]);
        i.extend(std::iter::repeat_n(0xab, 2000));
        i.freeze()
    };
    let mut nack = LpPacket::nack(NackReason::NoRoute, interest.clone(), None);
    nack.retry_after = Some(1500);
    let mut last = None;
    let frags = a.on_send(nack.encode());
    assert!(frags.len() > 1);
    for f in frags {
        last = Some(b.on_receive(0, f));
    }
    let Some(RxOutcome::Deliver(up)) = last else {
        panic!()
    };
    let up = LpPacket::decode(&up).unwrap();
    assert_eq!(up.nack, Some(NackReason::NoRoute));
    assert_eq!(
        up.retry_after,
        Some(1500),
        "RetryAfter rides on the first fragment"
    );
    assert_eq!(up.fragment, Some(interest));
}

#[test]
fn stream_faces_drop_fragments() {
    let mut link = stream();
    let frags = fragment(&data(3000), 1000, 77);
    let n = frags.len() as u64;
    for f in frags {
        assert_eq!(link.on_receive(0, f), RxOutcome::Fragment);
    }
    assert_eq!(link.rx.take_reassembly_drops(), n);
    assert_eq!(link.rx.take_reassembly_drops(), 0);
}

#[test]
fn incomplete_packets_time_out() {
    let mut link = udp();
    let frags = fragment(&data(3000), 1000, 5);
    assert_eq!(link.on_receive(0, frags[0].clone()), RxOutcome::Fragment);
    assert_eq!(link.rx.poll_timeout(), Some(500));
    link.rx.handle_timeout(500);
    assert_eq!(link.rx.take_reassembly_drops(), 1);
    assert!(link.rx.headers.is_empty());
}

#[test]
fn reassembled_nested_lp_is_refused() {
    let mut link = udp();
    let nested = LpPacket::wrap(data(100)).encode();
    let frags = fragment(&nested, 60, 1);
    let mut last = None;
    for f in frags {
        last = Some(link.on_receive(0, f));
    }
    assert_eq!(last, Some(RxOutcome::Dropped(RxDrop::Malformed)));
}

#[test]
fn mtu_too_small_drops() {
    let mut link = LinkService::new(LinkConfig {
        mtu: Some(20),
        reassembly: None,
    });
    assert!(link.on_send(data(100)).is_empty());
}
