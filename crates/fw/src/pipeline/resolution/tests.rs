#![allow(clippy::unwrap_used)]

use bytes::Bytes;
use nameway_wire::lp::NackReason;
use nameway_wire::{Component, Data, Interest, InterestView, LpPacket, Name, Packet};

use super::*;
use crate::{Config, FaceScope, LinkType};

const H: [u8; 32] = [0xab; 32];

fn sc(h: [u8; 32], rest: &str) -> Name {
    let mut n = Name::from_components(&[
        Component {
            typ: types::KEYWORD_NAME_COMPONENT,
            value: Bytes::from_static(b"sc"),
        },
        Component::generic(Bytes::copy_from_slice(&h)),
    ])
    .unwrap();
    if rest.is_empty() {
        return n;
    }
    for c in rest.parse::<Name>().unwrap().iter() {
        n = n.append(&c.to_owned()).unwrap();
    }
    n
}

fn interest(name: &Name, nonce: u32) -> Bytes {
    let mut i = Interest::new(name.clone());
    i.nonce = Some(nonce);
    i.encode()
}

struct Net {
    fw: Forwarder,
    app: FaceId,
    up: FaceId,
}

fn net() -> Net {
    let mut fw = Forwarder::new(Config::default());
    let app = fw.add_face(FaceScope::Local, LinkType::PointToPoint);
    let up = fw.add_face(FaceScope::NonLocal, LinkType::PointToPoint);
    Net { fw, app, up }
}

fn t(ms: u64) -> Time {
    Time::from_millis(ms)
}

fn sent(fw: &mut Forwarder) -> Vec<(FaceId, Bytes)> {
    std::iter::from_fn(|| fw.poll_transmit().map(|t| (t.face, t.wire))).collect()
}

#[test]
fn off_by_default_an_sc_interest_without_route_is_nacked_as_before() {
    let Net { mut fw, app, .. } = net();
    fw.handle_packet(t(0), app, interest(&sc(H, "/a"), 1));
    assert_eq!(fw.poll_route_event(), None);
    let out = sent(&mut fw);
    assert_eq!(out.len(), 1);
    let Ok(Packet::Lp(lp)) = Packet::classify(out[0].1.clone()) else {
        panic!("not a Nack")
    };
    assert_eq!(lp.nack, Some(NackReason::NoRoute));
}

#[test]
fn a_miss_is_held_once_per_name_then_released_with_the_hint() {
    let Net { mut fw, app, up } = net();
    let router = sc([0x11; 32], "");
    fw.enable_resolution(vec![]);
    fw.handle_packet(t(0), app, interest(&sc(H, "/a"), 1));
    fw.handle_packet(t(1), app, interest(&sc(H, "/b"), 2));
    assert!(sent(&mut fw).is_empty(), "held, not forwarded nor Nacked");
    assert_eq!(fw.poll_route_event(), Some(RouteEvent::Miss { h: H }));
    assert_eq!(fw.poll_route_event(), None, "one event per name");
    assert_eq!(fw.status().n_pit_entries, 2);
    // The daemon resolved it: a hint and a route toward the delegate.
    fw.add_nexthop(&router, up, 0).unwrap();
    assert!(fw.set_route_hint(H, router.clone()));
    assert_eq!(fw.release_held(t(5), &H), 2);
    let out = sent(&mut fw);
    assert_eq!(out.len(), 2);
    for (face, wire) in &out {
        assert_eq!(*face, up);
        let v = InterestView::new_checked(wire.clone()).unwrap();
        assert_eq!(v.forwarding_hint(), vec![router.clone()]);
    }
    // Later Interests get the hint at once, with no event.
    fw.handle_packet(t(6), app, interest(&sc(H, "/c"), 3));
    let out = sent(&mut fw);
    assert_eq!(out.len(), 1);
    assert_eq!(fw.poll_route_event(), None);
    let c = fw.resolution_counters();
    assert_eq!((c.held, c.released, c.hinted), (2, 2, 3));
}

#[test]
fn a_route_of_the_name_itself_or_a_hint_already_there_is_left_alone() {
    let Net { mut fw, app, up } = net();
    fw.enable_resolution(vec![]);
    // A default route does not count: the name is still resolved.
    fw.add_nexthop(&Name::default(), up, 0).unwrap();
    fw.handle_packet(t(0), app, interest(&sc(H, "/a"), 1));
    assert_eq!(fw.poll_route_event(), Some(RouteEvent::Miss { h: H }));
    // A local producer's route of /32=sc/<h> does.
    let other = [0x22; 32];
    fw.add_nexthop(&sc(other, ""), app, 0).unwrap();
    let from_up = interest(&sc(other, "/x"), 2);
    fw.handle_packet(t(1), up, from_up);
    assert_eq!(sent(&mut fw)[0].0, app);
    // An Interest with a hint is routed by it (transit), never held.
    let mut i = Interest::new(sc([0x33; 32], "/y"));
    i.nonce = Some(3);
    i.forwarding_hint = vec![sc([0x44; 32], "")];
    fw.handle_packet(t(2), app, i.encode());
    assert_eq!(fw.poll_route_event(), None);
    assert_eq!(sent(&mut fw)[0].0, up, "the default route carries it");
}

#[test]
fn a_hint_naming_this_router_routes_by_the_name() {
    let Net { mut fw, app, up } = net();
    let me = sc([0x55; 32], "");
    fw.enable_resolution(vec![me.clone()]);
    fw.add_nexthop(&Name::default(), up, 0).unwrap();
    fw.add_nexthop(&sc(H, ""), app, 0).unwrap();
    let mut i = Interest::new(sc(H, "/z"));
    i.nonce = Some(9);
    i.forwarding_hint = vec![me];
    fw.handle_packet(t(0), up, i.encode());
    let out = sent(&mut fw);
    assert_eq!(
        out[0].0, app,
        "delivered to the producer, not back up the default route"
    );
    let delivered = InterestView::new_checked(out[0].1.clone()).unwrap();
    assert!(
        !delivered.has_forwarding_hint(),
        "the hint is taken off where it has arrived (NFD's producer region)"
    );
    assert_eq!(delivered.name(), &sc(H, "/z"));
}

#[test]
fn nack_held_sends_retry_after_to_every_downstream_and_frees_the_entry() {
    let Net { mut fw, app, up } = net();
    fw.enable_resolution(vec![]);
    fw.handle_packet(t(0), app, interest(&sc(H, "/a"), 1));
    fw.handle_packet(t(0), up, interest(&sc(H, "/a"), 2));
    assert_eq!(fw.nack_held(t(3), &H, Some(250)), 1);
    let out = sent(&mut fw);
    assert_eq!(out.len(), 2);
    for (_, wire) in out {
        let lp = LpPacket::decode(&wire).unwrap();
        assert_eq!(lp.nack, Some(NackReason::NoRoute));
        assert_eq!(lp.retry_after, Some(250));
    }
    assert_eq!(fw.status().n_pit_entries, 0);
    assert_eq!(fw.nack_held(t(4), &H, None), 0);
}

#[test]
fn while_refusing_a_new_name_is_nacked_at_once_and_a_held_one_still_joins() {
    let Net { mut fw, app, .. } = net();
    fw.enable_resolution(vec![]);
    fw.handle_packet(t(0), app, interest(&sc(H, "/a"), 1));
    assert_eq!(fw.poll_route_event(), Some(RouteEvent::Miss { h: H }));
    fw.set_miss_refusal(Some(700));
    // A name not held: Nacked at once with the RetryAfter, no event, no entry left.
    let other = [0x22; 32];
    fw.handle_packet(t(1), app, interest(&sc(other, "/x"), 2));
    let out = sent(&mut fw);
    assert_eq!(out.len(), 1);
    let lp = LpPacket::decode(&out[0].1).unwrap();
    assert_eq!(lp.nack, Some(NackReason::NoRoute));
    assert_eq!(lp.retry_after, Some(700));
    assert_eq!(fw.poll_route_event(), None);
    // A name whose look-up is pending still joins it.
    fw.handle_packet(t(2), app, interest(&sc(H, "/b"), 3));
    assert!(sent(&mut fw).is_empty());
    assert_eq!(fw.status().n_pit_entries, 2);
    let c = fw.resolution_counters();
    assert_eq!((c.refused, c.nacked, c.held), (1, 1, 2));
    // Lifted: a new name is held again.
    fw.set_miss_refusal(None);
    fw.handle_packet(t(3), app, interest(&sc(other, "/y"), 4));
    assert!(sent(&mut fw).is_empty());
    assert_eq!(fw.poll_route_event(), Some(RouteEvent::Miss { h: other }));
}

#[test]
fn an_upstream_nack_of_a_hinted_interest_is_held_for_a_new_look_up() {
    let Net { mut fw, app, up } = net();
    let second = fw.add_face(FaceScope::NonLocal, LinkType::PointToPoint);
    let (old, new) = (sc([0x11; 32], ""), sc([0x12; 32], ""));
    fw.enable_resolution(vec![]);
    fw.add_nexthop(&old, up, 0).unwrap();
    fw.add_nexthop(&new, second, 0).unwrap();
    fw.set_route_hint(H, old.clone());
    fw.handle_packet(t(0), app, interest(&sc(H, "/a"), 7));
    let out = sent(&mut fw);
    assert_eq!(out[0].0, up);
    // The old delegate has no route any more (the producer moved).
    let nack = LpPacket::nack(NackReason::NoRoute, out[0].1.clone(), None).encode();
    fw.handle_packet(t(10), up, nack);
    assert!(sent(&mut fw).is_empty(), "the Nack is not passed down");
    assert_eq!(
        fw.poll_route_event(),
        Some(RouteEvent::Nacked {
            h: H,
            hint: old,
            face: up
        })
    );
    // A new look-up found the producer behind the other router.
    fw.set_route_hint(H, new.clone());
    assert_eq!(fw.release_held(t(20), &H), 1);
    let out = sent(&mut fw);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, second);
    let v = InterestView::new_checked(out[0].1.clone()).unwrap();
    assert_eq!(v.forwarding_hint(), vec![new]);
    // And the Data reaches the consumer.
    let data = Data::new(sc(H, "/a"), b"x".to_vec()).encode();
    fw.handle_packet(t(21), second, data);
    assert_eq!(sent(&mut fw)[0].0, app);
    assert_eq!(fw.resolution_counters().upstream_nacks, 1);
}

#[test]
fn a_held_entry_that_expires_is_gone_when_released() {
    let Net { mut fw, app, up } = net();
    fw.enable_resolution(vec![]);
    let mut i = Interest::new(sc(H, "/a"));
    i.nonce = Some(1);
    i.lifetime_ms = Some(100);
    fw.handle_packet(t(0), app, i.encode());
    fw.handle_timeout(t(200));
    assert_eq!(fw.status().n_pit_entries, 0);
    fw.add_nexthop(&sc([1; 32], ""), up, 0).unwrap();
    fw.set_route_hint(H, sc([1; 32], ""));
    assert_eq!(fw.release_held(t(300), &H), 0);
    assert!(sent(&mut fw).is_empty());
}

#[test]
fn a_released_entry_without_a_route_is_nacked_not_held_again() {
    let Net { mut fw, app, .. } = net();
    fw.enable_resolution(vec![]);
    fw.handle_packet(t(0), app, interest(&sc(H, "/a"), 1));
    let _ = fw.poll_route_event();
    // A hint whose router has no route: the strategy Nacks.
    fw.set_route_hint(H, sc([9; 32], ""));
    assert_eq!(fw.release_held(t(1), &H), 1);
    let out = sent(&mut fw);
    assert_eq!(out.len(), 1);
    assert_eq!(
        LpPacket::decode(&out[0].1).unwrap().nack,
        Some(NackReason::NoRoute)
    );
    assert_eq!(fw.poll_route_event(), None);
}

#[test]
fn the_hint_goes_where_the_packet_format_puts_it() {
    let mut i = Interest::new("/a/b".parse().unwrap());
    i.can_be_prefix = true;
    i.must_be_fresh = true;
    i.nonce = Some(5);
    i.lifetime_ms = Some(1000);
    i.hop_limit = Some(9);
    i.app_parameters = Some(Bytes::from_static(b"p"));
    let wire = i.encode();
    let hint: Name = "/r".parse().unwrap();
    let out = with_forwarding_hint(&wire, &hint).unwrap();
    let mut expected = Interest::decode(&wire).unwrap();
    expected.forwarding_hint = vec![hint.clone()];
    assert_eq!(out, expected.encode());
    let decoded = Interest::decode(&out).unwrap();
    assert_eq!(decoded.forwarding_hint, vec![hint.clone()]);
    assert_eq!(decoded.app_parameters, i.app_parameters);
    assert_eq!(with_forwarding_hint(&out, &hint), None, "one hint only");
    assert_eq!(without_forwarding_hint(&out), Some(wire.clone()));
    assert_eq!(without_forwarding_hint(&wire), None);
    assert_eq!(
        with_forwarding_hint(&Bytes::from_static(b"\x05\x05"), &hint),
        None
    );
}

#[test]
fn the_byte_test_of_a_self_certifying_name_agrees_with_the_parsed_one() {
    let short = Name::from_components(&[
        Component {
            typ: types::KEYWORD_NAME_COMPONENT,
            value: Bytes::from_static(b"sc"),
        },
        Component::generic(Bytes::from_static(&[1; 31])),
    ])
    .unwrap();
    let names = [
        sc(H, "/a/b"),
        sc(H, ""),
        short,
        "/a/b".parse().unwrap(),
        "/sc".parse().unwrap(),
        Name::default(),
    ];
    for name in names {
        assert_eq!(sc_hash_value(name.value_bytes()), sc_hash(&name), "{name}");
    }
    assert_eq!(sc_hash(&sc(H, "/a")), Some(H));
}
