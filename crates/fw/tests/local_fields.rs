//! NFD's LocalFieldsEnabled: Interests toward such a face carry IncomingFaceId.
#![allow(clippy::unwrap_used)]

use nameway_fw::{Config, FaceScope, Forwarder, LinkType, Time};
use nameway_wire::{Interest, LpPacket, Packet};

#[test]
fn incoming_face_id_is_added_only_with_local_fields() {
    let mut fw = Forwarder::new(Config::default());
    let app = fw.add_face(FaceScope::Local, LinkType::PointToPoint);
    let internal = fw.add_face(FaceScope::Local, LinkType::PointToPoint);
    fw.add_nexthop(&"/localhost/nfd".parse().unwrap(), internal, 0)
        .unwrap();

    let mut i = Interest::new("/localhost/nfd/rib/list".parse().unwrap());
    i.nonce = Some(1);
    fw.handle_packet(Time::from_millis(0), app, i.encode());
    let t = fw.poll_transmit().unwrap();
    assert!(
        matches!(Packet::classify(t.wire).unwrap(), Packet::Interest(_)),
        "bare by default"
    );

    assert!(fw.set_local_fields(internal, true));
    assert!(fw.face(internal).unwrap().local_fields_enabled());
    i.name = "/localhost/nfd/fib/list".parse().unwrap();
    i.nonce = Some(2);
    fw.handle_packet(Time::from_millis(1), app, i.encode());
    let t = fw.poll_transmit().unwrap();
    let Packet::Lp(lp) = Packet::classify(t.wire).unwrap() else {
        panic!("expected an LpPacket")
    };
    assert_eq!(lp.incoming_face_id, Some(app.0));
    let inner = Interest::decode(lp.fragment.as_ref().unwrap()).unwrap();
    assert_eq!(inner.name, i.name);
    let _: LpPacket = lp;
}
