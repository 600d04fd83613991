//! Arbitrary packet sequences — valid and malformed Interests, Data, Nacks and LpPackets
//! across several faces, time advances, route changes, face removal — never panic and never
//! grow a table past its cap.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use core::time::Duration;

use bytes::Bytes;
use nameway_fw::sim::{make_data, make_nack};
use nameway_fw::{Config, FaceId, FaceScope, Forwarder, LinkType, NackReason, Time};
use nameway_wire::{Component, DataView, Interest, LpPacket, Name, NameHasher};
use proptest::prelude::*;

const PIT_CAP: usize = 8;
/// PIT entries `/localhost/nfd/x` can make past the capacity (see `check`).
const LOCALHOST_VARIANTS: usize = 8;
const CS_CAP: usize = 4;
const DNL_CAP: usize = 8;
const NAMES: [&str; 6] = [
    "/a",
    "/a/b",
    "/a/b/c",
    "/b/c",
    "/localhost/nfd/x",
    "/localhop/y",
];

#[derive(Clone, Debug)]
enum Op {
    Interest {
        face: usize,
        name: usize,
        digest: bool,
        cbp: bool,
        mbf: bool,
        nonce: u8,
        hop: Option<u8>,
        lifetime: Option<u16>,
        token: Option<Vec<u8>>,
        next_hop: Option<usize>,
    },
    Data {
        face: usize,
        name: usize,
        fresh: u16,
        token: bool,
        mark: bool,
    },
    Nack {
        face: usize,
        name: usize,
        nonce: u8,
        reason: u8,
    },
    Raw {
        face: usize,
        bytes: Vec<u8>,
    },
    Idle {
        face: usize,
    },
    Fragment {
        face: usize,
        name: usize,
    },
    Advance {
        ms: u16,
    },
    Route {
        name: usize,
        face: usize,
        cost: u8,
        add: bool,
    },
    RemoveFace {
        face: usize,
    },
    AddFace {
        local: bool,
        kind: u8,
    },
    Strategy {
        name: usize,
        multicast: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let face = 0usize..6;
    let name = 0usize..NAMES.len();
    prop_oneof![
        6 => (face.clone(), name.clone(), any::<bool>(), any::<bool>(), any::<bool>(), 0u8..4,
              proptest::option::of(0u8..3), proptest::option::of(0u16..300),
              proptest::option::of(proptest::collection::vec(any::<u8>(), 1..4)),
              proptest::option::of(0usize..6))
            .prop_map(|(face, name, digest, cbp, mbf, nonce, hop, lifetime, token, next_hop)| Op::Interest {
                face, name, digest, cbp, mbf, nonce, hop, lifetime, token, next_hop,
            }),
        4 => (face.clone(), name.clone(), 0u16..200, any::<bool>(), any::<bool>())
            .prop_map(|(face, name, fresh, token, mark)| Op::Data { face, name, fresh, token, mark }),
        2 => (face.clone(), name.clone(), 0u8..4, 0u8..4)
            .prop_map(|(face, name, nonce, reason)| Op::Nack { face, name, nonce, reason }),
        1 => (face.clone(), proptest::collection::vec(any::<u8>(), 0..40)).prop_map(|(face, bytes)| Op::Raw { face, bytes }),
        1 => face.clone().prop_map(|face| Op::Idle { face }),
        1 => (face.clone(), name.clone()).prop_map(|(face, name)| Op::Fragment { face, name }),
        3 => (0u16..400).prop_map(|ms| Op::Advance { ms }),
        2 => (name.clone(), face.clone(), any::<u8>(), any::<bool>()).prop_map(|(name, face, cost, add)| Op::Route { name, face, cost, add }),
        1 => face.clone().prop_map(|face| Op::RemoveFace { face }),
        1 => (any::<bool>(), 0u8..3).prop_map(|(local, kind)| Op::AddFace { local, kind }),
        1 => (name, any::<bool>()).prop_map(|(name, multicast)| Op::Strategy { name, multicast }),
    ]
}

fn full_name(name: &str) -> String {
    let d = DataView::new_checked(make_data(name, 0)).unwrap();
    let n: Name = name.parse().unwrap();
    n.append(&Component::implicit_digest(d.implicit_digest()))
        .unwrap()
        .to_string()
}

struct World {
    fw: Forwarder,
    faces: Vec<FaceId>,
    now: Time,
}

impl World {
    fn new() -> Self {
        let config = Config {
            hasher: Some(NameHasher::with_seed(3)),
            pit_capacity: PIT_CAP,
            cs_capacity: CS_CAP,
            dnl_capacity: DNL_CAP,
            ..Config::default()
        };
        let mut fw = Forwarder::new(config);
        let faces = vec![
            fw.add_face(FaceScope::Local, LinkType::PointToPoint),
            fw.add_face(FaceScope::NonLocal, LinkType::PointToPoint),
            fw.add_face(FaceScope::NonLocal, LinkType::MultiAccess),
            fw.add_face(FaceScope::Local, LinkType::PointToPoint),
        ];
        Self {
            fw,
            faces,
            now: Time::ZERO,
        }
    }

    /// A face id: mostly live ones, sometimes a dead or unknown one.
    fn face(&self, i: usize) -> FaceId {
        self.faces
            .get(i)
            .copied()
            .unwrap_or(FaceId(10_000 + i as u64))
    }

    fn apply(&mut self, op: Op) {
        let now = self.now;
        match op {
            Op::Interest {
                face,
                name,
                digest,
                cbp,
                mbf,
                nonce,
                hop,
                lifetime,
                token,
                next_hop,
            } => {
                let n = if digest {
                    full_name(NAMES[name])
                } else {
                    NAMES[name].to_owned()
                };
                let mut i = Interest::new(n.parse().unwrap());
                i.can_be_prefix = cbp;
                i.must_be_fresh = mbf;
                i.nonce = Some(u32::from(nonce));
                i.hop_limit = hop;
                i.lifetime_ms = lifetime.map(u64::from);
                let wire = i.encode();
                let wire = if token.is_some() || next_hop.is_some() {
                    let mut lp = LpPacket::wrap(wire);
                    lp.pit_token = token.map(Bytes::from);
                    lp.next_hop_face_id = next_hop.map(|f| self.face(f).0);
                    lp.encode()
                } else {
                    wire
                };
                self.fw.handle_packet(now, self.face(face), wire);
            }
            Op::Data {
                face,
                name,
                fresh,
                token,
                mark,
            } => {
                let wire = make_data(NAMES[name], u64::from(fresh));
                let wire = if token || mark {
                    let mut lp = LpPacket::wrap(wire);
                    lp.pit_token = token.then(|| Bytes::from_static(b"t"));
                    lp.congestion_mark = mark.then_some(1);
                    lp.encode()
                } else {
                    wire
                };
                self.fw.handle_packet(now, self.face(face), wire);
            }
            Op::Nack {
                face,
                name,
                nonce,
                reason,
            } => {
                let mut i = Interest::new(NAMES[name].parse().unwrap());
                i.nonce = Some(u32::from(nonce));
                let reason = [
                    NackReason::None,
                    NackReason::Congestion,
                    NackReason::Duplicate,
                    NackReason::NoRoute,
                ][reason as usize];
                self.fw
                    .handle_packet(now, self.face(face), make_nack(i.encode(), reason));
            }
            Op::Raw { face, bytes } => {
                self.fw
                    .handle_packet(now, self.face(face), Bytes::from(bytes))
            }
            Op::Idle { face } => {
                self.fw
                    .handle_packet(now, self.face(face), Bytes::from_static(&[0x64, 0x00]))
            }
            Op::Fragment { face, name } => {
                let mut lp = LpPacket::wrap(make_data(NAMES[name], 0));
                lp.frag_count = Some(2);
                self.fw.handle_packet(now, self.face(face), lp.encode());
            }
            Op::Advance { ms } => {
                self.now += Duration::from_millis(u64::from(ms));
                while self.fw.poll_timeout().is_some_and(|t| t <= self.now) {
                    self.fw.handle_timeout(self.now);
                }
            }
            Op::Route {
                name,
                face,
                cost,
                add,
            } => {
                let prefix: Name = NAMES[name].parse().unwrap();
                let f = self.face(face);
                if add {
                    let _ = self.fw.add_nexthop(&prefix, f, u64::from(cost));
                } else {
                    self.fw.remove_nexthop(&prefix, f);
                }
            }
            Op::RemoveFace { face } => {
                let f = self.face(face);
                self.fw.remove_face(f);
            }
            Op::AddFace { local, kind } => {
                let scope = if local {
                    FaceScope::Local
                } else {
                    FaceScope::NonLocal
                };
                let link = [
                    LinkType::PointToPoint,
                    LinkType::MultiAccess,
                    LinkType::AdHoc,
                ][kind as usize];
                let id = self.fw.add_face(scope, link);
                self.faces.push(id);
            }
            Op::Strategy { name, multicast } => {
                let s = if multicast {
                    "/localhost/nfd/strategy/multicast/v=4"
                } else {
                    "/localhost/nfd/strategy/best-route"
                };
                let _ = self
                    .fw
                    .set_strategy(&NAMES[name].parse().unwrap(), &s.parse().unwrap());
            }
        }
        while self.fw.poll_transmit().is_some() {}
    }

    fn check(&mut self) -> Result<(), TestCaseError> {
        let st = self.fw.status();
        // Management's reserve lets `/localhost` Interests from local faces past the capacity
        // (a full table never locks out the operator); the only such name here,
        // /localhost/nfd/x, makes at most 8 entries (CanBePrefix x MustBeFresh x digest).
        prop_assert!(st.n_pit_entries <= PIT_CAP + LOCALHOST_VARIANTS);
        prop_assert!(st.n_cs_entries <= CS_CAP);
        prop_assert!(st.n_dead_nonces <= DNL_CAP);
        prop_assert!(st.n_straggler_nonces <= PIT_CAP);
        prop_assert!(self.fw.pit_timer_len() <= 2 * st.n_pit_entries + 65);
        if st.n_pit_entries > 0 {
            prop_assert!(
                self.fw.poll_timeout().is_some(),
                "every entry has a deadline"
            );
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn sequences_never_panic_nor_outgrow_the_caps(ops in proptest::collection::vec(op(), 1..80)) {
        let mut w = World::new();
        for op in ops {
            w.apply(op);
            w.check()?;
        }
        // everything expires eventually
        w.apply(Op::Advance { ms: 0 });
        w.now += Duration::from_secs(120);
        while w.fw.poll_timeout().is_some_and(|t| t <= w.now) {
            w.fw.handle_timeout(w.now);
        }
        prop_assert_eq!(w.fw.status().n_pit_entries, 0);
    }
}
