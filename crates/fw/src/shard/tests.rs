//! Sharded forwarding, driven in one thread: each shard's turn is played in order, so the
//! outcome is deterministic.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use nameway_wire::lp::LpPacket;
use nameway_wire::{Data, Interest, Name, NameHasher};
use proptest::prelude::*;

use super::*;
use crate::counters::DropReason;
use crate::pipeline::{Kind, Transmit};
use crate::table::face_table::{FaceId, FaceScope, LinkType};
use crate::time::Time;
use crate::NackReason;

pub(super) const HASHER: NameHasher = NameHasher::with_seed(11);
/// Two applications and a producer.
pub(super) const APP1: FaceId = FaceId(301);
pub(super) const APP2: FaceId = FaceId(302);
pub(super) const PRODUCER: FaceId = FaceId(303);

pub(super) fn name(s: &str) -> Name {
    s.parse().unwrap()
}

pub(super) fn interest(n: &str, nonce: u32, can_be_prefix: bool) -> Bytes {
    let mut i = Interest::new(name(n));
    i.nonce = Some(nonce);
    i.can_be_prefix = can_be_prefix;
    i.encode()
}

pub(super) fn data(n: &str) -> Bytes {
    let mut d = Data::new(name(n), Bytes::from_static(b"payload"));
    d.signature_value = Bytes::from(vec![0; 32]);
    d.encode()
}

pub(super) fn set_up(n: usize, table: DispatchTable, config: Config) -> (Vec<Shard>, Control) {
    let (mut shards, mut control) = build(config, table, n, 256).unwrap();
    for (id, scope) in [
        (APP1, FaceScope::Local),
        (APP2, FaceScope::Local),
        (PRODUCER, FaceScope::NonLocal),
    ] {
        let link_type = LinkType::PointToPoint;
        control
            .send(ControlOp::AddFace {
                id,
                scope,
                link_type,
            })
            .unwrap();
    }
    control
        .send(ControlOp::AddNexthop {
            prefix: Name::root(),
            face: PRODUCER,
            cost: 0,
        })
        .unwrap();
    for s in &mut shards {
        assert_eq!(s.apply_control(), 4);
    }
    (shards, control)
}

fn shards(n: usize) -> (Vec<Shard>, Control) {
    set_up(n, DispatchTable::new(HASHER, 2).unwrap(), Config::default())
}

/// Plays turns (publish, receive, transmit) until no shard has anything left; returns every
/// transmit with the shard that sent it.
pub(super) fn settle(shards: &mut [Shard], now: Time) -> Vec<(usize, Transmit)> {
    let mut out = Vec::new();
    loop {
        shards.iter_mut().for_each(Shard::flush);
        let mut moved = 0;
        for s in shards.iter_mut() {
            moved += s.handle_handoffs(now, 64);
            while let Some(t) = s.poll_transmit() {
                out.push((s.index(), t));
            }
        }
        if moved == 0 {
            return out;
        }
    }
}

pub(super) fn to(face: FaceId, kind: Kind, out: &[(usize, Transmit)]) -> Vec<usize> {
    out.iter()
        .filter(|(_, t)| t.face == face && t.kind == kind)
        .map(|(s, _)| *s)
        .collect()
}

/// Sends the change that adds `face` (non-local, point-to-point) as a second producer next hop
/// of `/` at cost 0.
fn add_producer_face(control: &mut Control, face: FaceId) {
    let (scope, link_type) = (FaceScope::NonLocal, LinkType::PointToPoint);
    control
        .send(ControlOp::AddFace {
            id: face,
            scope,
            link_type,
        })
        .unwrap();
    control
        .send(ControlOp::AddNexthop {
            prefix: Name::root(),
            face,
            cost: 0,
        })
        .unwrap();
}

pub(super) fn owner(shards: &[Shard], wire: &Bytes) -> usize {
    match shards[0].dispatcher().route(Time::ZERO, wire) {
        Route::Shards(mask) => {
            assert_eq!(mask.count_ones(), 1);
            mask.trailing_zeros() as usize
        }
        Route::Local => panic!("not routable"),
        Route::Drain { .. } => panic!("a draining split"),
    }
}

#[test]
fn an_interest_and_its_retransmission_from_faces_on_two_shards_meet_and_aggregate() {
    let (mut shards, _) = shards(2);
    let mut owners = [0; 2];
    for i in 0..40 {
        let n = format!("/app/item{i}/v1");
        let now = Time::from_millis(i);
        // APP1's I/O is on shard 0, APP2's on shard 1: the same name read on both.
        shards[0].handle_packet(now, APP1, interest(&n, 1000 + i as u32, false));
        shards[1].handle_packet(now, APP2, interest(&n, 2000 + i as u32, false));
        let out = settle(&mut shards, now);
        let up = to(PRODUCER, Kind::Interest, &out);
        assert_eq!(up.len(), 1, "{n}: aggregated into one upstream Interest");
        owners[up[0]] += 1;
        // The producer's face is read by shard 1; the Data reaches the owner, both get it.
        shards[1].handle_packet(now, PRODUCER, data(&n));
        let out = settle(&mut shards, now);
        assert_eq!(to(APP1, Kind::Data, &out), [up[0]], "{n}");
        assert_eq!(to(APP2, Kind::Data, &out), [up[0]], "{n}");
    }
    assert!(
        owners.iter().all(|&n| n > 5),
        "both shards own names: {owners:?}"
    );
    let handed: u64 = shards.iter().map(|s| s.counters().n_handed_off).sum();
    assert!(handed >= 40, "half the packets cross shards: {handed}");
    for s in &shards {
        let st = s.forwarder().status();
        assert_eq!(st.pit.entries, 0, "every entry satisfied");
        assert_eq!(st.counters.n_unsatisfied_interests, 0);
        assert_eq!(s.counters().n_ring_full, 0);
    }
}

#[test]
fn a_retransmission_with_the_same_nonce_from_another_shard_is_a_detected_loop() {
    let (mut shards, _) = shards(2);
    let now = Time::ZERO;
    for i in 0..20 {
        let n = format!("/loop/{i}");
        shards[0].handle_packet(now, APP1, interest(&n, 7, false));
        shards[1].handle_packet(now, APP2, interest(&n, 7, false));
    }
    let out = settle(&mut shards, now);
    assert_eq!(to(PRODUCER, Kind::Interest, &out).len(), 20);
    let dup: u64 = shards
        .iter()
        .map(|s| {
            s.forwarder()
                .status()
                .counters
                .drops
                .get(DropReason::DuplicateNonce)
        })
        .sum();
    let nacks = to(APP2, Kind::Nack, &out).len() as u64;
    assert_eq!(
        dup, 20,
        "every duplicate found in the owner's PIT ({nacks} Nacked)"
    );
}

#[test]
fn a_nack_from_upstream_reaches_the_shard_of_its_interest() {
    let (mut shards, _) = shards(2);
    let now = Time::ZERO;
    let mut seen = [false; 2];
    for i in 0..20 {
        let n = format!("/nack/{i}");
        let wire = interest(&n, 50 + i, false);
        seen[owner(&shards, &wire)] = true;
        shards[0].handle_packet(now, APP1, wire.clone());
        settle(&mut shards, now);
        let nack = LpPacket::nack(NackReason::NoRoute, wire, None).encode();
        shards[1].handle_packet(now, PRODUCER, nack);
        let out = settle(&mut shards, now);
        assert_eq!(to(APP1, Kind::Nack, &out).len(), 1, "{n}");
    }
    assert_eq!(seen, [true, true]);
}

#[test]
fn can_be_prefix_interests_shorter_than_k_are_satisfied_by_data_hashed_elsewhere() {
    let (mut shards, _) = shards(4);
    // The same rule with nothing noted: each packet's own shard.
    let plain = Dispatcher::new(DispatchTable::new(HASHER, 2).unwrap(), 4).unwrap();
    let mut elsewhere = 0;
    for i in 0..40u32 {
        let now = Time::from_millis(u64::from(i));
        let prefix = format!("/cbp{i}");
        let full = format!("/cbp{i}/x/y");
        let wire = interest(&prefix, i, true);
        if plain.route(now, &wire) != plain.route(now, &data(&full)) {
            elsewhere += 1;
        }
        shards[(i % 4) as usize].handle_packet(now, APP1, wire);
        settle(&mut shards, now);
        shards[((i + 1) % 4) as usize].handle_packet(now, PRODUCER, data(&full));
        let out = settle(&mut shards, now);
        assert_eq!(to(APP1, Kind::Data, &out).len(), 1, "{prefix} <- {full}");
    }
    assert!(elsewhere > 10, "the Data's own shard differs: {elsewhere}");
    let copies: u64 = shards.iter().map(|s| s.counters().n_data_copies).sum();
    assert!(copies >= elsewhere, "{copies} copies");
}

#[test]
fn can_be_prefix_interests_above_a_longer_table_entry_are_satisfied() {
    let mut table = DispatchTable::new(HASHER, 2).unwrap();
    table.set(&name("/ndn/video/title"), 4).unwrap();
    // No content store: each Interest must meet its own Data.
    let config = Config {
        cs_capacity: 0,
        ..Config::default()
    };
    let (mut shards, _) = set_up(4, table, config);
    for i in 0..16u32 {
        let now = Time::from_millis(u64::from(i));
        // `/ndn/video` has its K (2) components but the longer entry spreads the Data.
        shards[0].handle_packet(now, APP1, interest("/ndn/video", i, true));
        settle(&mut shards, now);
        let d = format!("/ndn/video/title/seg={i}");
        shards[1].handle_packet(now, PRODUCER, data(&d));
        let out = settle(&mut shards, now);
        assert_eq!(to(APP1, Kind::Data, &out).len(), 1, "{d}");
    }
}

#[test]
fn can_be_prefix_interests_of_k_components_go_with_their_data_and_copy_nothing() {
    let (mut shards, _) = shards(4);
    for i in 0..20u32 {
        let now = Time::ZERO;
        let p = format!("/site/app{i}");
        let d = format!("/site/app{i}/file/seg=0");
        assert_eq!(
            owner(&shards, &interest(&p, i, true)),
            owner(&shards, &data(&d))
        );
        shards[0].handle_packet(now, APP1, interest(&p, i, true));
        settle(&mut shards, now);
        shards[1].handle_packet(now, PRODUCER, data(&d));
        assert_eq!(to(APP1, Kind::Data, &settle(&mut shards, now)).len(), 1);
    }
    assert_eq!(
        shards
            .iter()
            .map(|s| s.counters().n_data_copies)
            .sum::<u64>(),
        0
    );
}

/// max/mean of the packets per shard.
fn imbalance(counts: &[usize]) -> f64 {
    let mean = counts.iter().sum::<usize>() as f64 / counts.len() as f64;
    *counts.iter().max().unwrap() as f64 / mean
}

fn spread(table: DispatchTable, n: usize, names: &[String]) -> Vec<usize> {
    let d = Dispatcher::new(table, n).unwrap();
    let mut counts = vec![0; n];
    for (i, x) in names.iter().enumerate() {
        match d.route(Time::ZERO, &interest(x, i as u32, false)) {
            Route::Shards(m) => counts[m.trailing_zeros() as usize] += 1,
            Route::Local | Route::Drain { .. } => panic!(),
        }
    }
    counts
}

#[test]
fn a_dominating_prefix_lands_on_one_shard_with_k2_and_spreads_with_its_own_k() {
    let names: Vec<String> = (0..20_000)
        .map(|i| format!("/ndn/video/title/seg={i}"))
        .collect();
    for n in [2, 4, 8] {
        let fixed = spread(DispatchTable::new(HASHER, 2).unwrap(), n, &names);
        assert_eq!(
            imbalance(&fixed),
            n as f64,
            "K=2: all on one shard {fixed:?}"
        );
        let mut table = DispatchTable::new(HASHER, 2).unwrap();
        table.set(&name("/ndn/video"), 4).unwrap();
        let skew = spread(table, n, &names);
        assert!(imbalance(&skew) < 1.1, "{n} shards: {skew:?}");
    }
}

#[test]
fn a_table_entry_shorter_than_its_prefix_or_zero_is_refused() {
    let mut table = DispatchTable::new(HASHER, 2).unwrap();
    assert!(matches!(
        table.set(&name("/a/b/c"), 2),
        Err(DispatchError::KShorterThanPrefix { len: 3, k: 2, .. })
    ));
    assert_eq!(table.set(&name("/a"), 0), Err(DispatchError::ZeroK));
    assert!(DispatchTable::new(HASHER, 0).is_err());
    let t = DispatchTable::new(HASHER, 2).unwrap();
    assert_eq!(
        Dispatcher::new(t.clone(), 65).unwrap_err(),
        DispatchError::ShardCount(65)
    );
    assert!(Dispatcher::new(t, 0).is_err());
}

#[test]
fn a_flood_pinned_to_one_shard_does_not_lock_out_another_app() {
    let config = Config {
        pit_capacity: 512,
        ..Config::default()
    };
    let (mut shards, _) = set_up(2, DispatchTable::new(HASHER, 2).unwrap(), config);
    let now = Time::ZERO;
    // The flood's names all hash to shard 0, read by shard 1 (every one handed off).
    let flood: Vec<Bytes> = (0..20_000u32)
        .map(|i| interest(&format!("/flood/n{i}"), i, false))
        .filter(|w| owner(&shards, w) == 0)
        .take(2000)
        .collect();
    let mut app_ok = [0usize; 2];
    let mut app_sent = [0usize; 2];
    for (k, chunk) in flood.chunks(64).enumerate() {
        // One turn: the flooding face's burst, then one Interest of the other app.
        for w in chunk {
            shards[1].handle_packet(now, APP1, w.clone());
        }
        let w = interest(&format!("/app/k{k}"), 1 << 20 | k as u32, false);
        let s = owner(&shards, &w);
        app_sent[s] += 1;
        shards[k % 2].handle_packet(now, APP2, w);
        let out = settle(&mut shards, now);
        let ours = out
            .iter()
            .filter(|(_, t)| t.face == PRODUCER && t.kind == Kind::Interest && t.cause == APP2);
        app_ok[s] += ours.count();
    }
    assert_eq!(
        app_ok, app_sent,
        "every Interest of the other app went upstream"
    );
    assert!(app_sent.iter().all(|&n| n > 0), "{app_sent:?}");
    let st = shards[0].forwarder().status();
    assert!(st.pit.entries <= 256, "shard 0 holds its share of the PIT");
    assert!(
        st.counters.drops.get(DropReason::FaceQuota) + st.counters.drops.get(DropReason::PitFull)
            > 1000
    );
}

#[test]
fn a_full_hand_off_ring_drops_and_counts() {
    let (mut shards, _) = build(
        Config::default(),
        DispatchTable::new(HASHER, 2).unwrap(),
        2,
        64,
    )
    .unwrap();
    let wires: Vec<Bytes> = (0..1000u32)
        .map(|i| interest(&format!("/r/n{i}"), i, false))
        .filter(|w| owner(&shards, w) == 1)
        .take(200)
        .collect();
    for w in wires {
        shards[0].handle_packet(Time::ZERO, APP1, w);
    }
    shards[0].flush();
    assert_eq!(shards[0].counters().n_handed_off, 200);
    assert_eq!(shards[0].counters().n_ring_full, 200 - 64);
    assert_eq!(shards[1].handle_handoffs(Time::ZERO, 1000), 64);
}

#[test]
fn management_changes_reach_every_shard_in_order_between_bursts() {
    let (mut shards, mut control) = shards(2);
    let p = name("/mgmt");
    control
        .send(ControlOp::AddNexthop {
            prefix: p.clone(),
            face: APP2,
            cost: 1,
        })
        .unwrap();
    control
        .send(ControlOp::SetStrategy {
            prefix: p.clone(),
            strategy: name("/localhost/nfd/strategy/multicast"),
        })
        .unwrap();
    control
        .send(ControlOp::RemoveNexthop {
            prefix: p.clone(),
            face: APP2,
        })
        .unwrap();
    // Not yet applied: a burst sees the tables as they were.
    assert!(shards[1].forwarder().fib_nexthops(&p).is_none());
    for s in &mut shards {
        assert_eq!(s.apply_control(), 3);
        let fw = s.forwarder();
        assert!(
            fw.fib_nexthops(&p).is_none_or(<[_]>::is_empty),
            "added then removed"
        );
        let st = fw.effective_strategy(&name("/mgmt/x")).unwrap().to_string();
        assert!(st.contains("multicast"), "{st}");
        assert_eq!(s.counters().n_control_refused, 0);
    }
}

#[test]
fn a_change_is_sent_to_every_shard_or_to_none() {
    let (mut shards, mut control) = shards(2);
    shards[0].apply_control();
    let op = ControlOp::RemoveFace(FaceId(999));
    let mut sent = 0;
    let err = loop {
        match control.send(op.clone()) {
            Ok(()) => sent += 1,
            Err(e) => break e,
        }
        // Shard 0 keeps up, shard 1 does not.
        shards[0].apply_control();
    };
    assert_eq!(err, ControlError::Full { shard: 1 });
    assert_eq!(shards[1].apply_control(), sent);
    // A refused change (no such face) is counted, identically in every shard.
    assert_eq!(shards[1].counters().n_control_refused, sent as u64);
}

fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,3}",
        (0u64..50).prop_map(|i| format!("seg={i}")),
        (0u64..5).prop_map(|i| format!("v={i}")),
    ]
}

fn names() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(component(), 1..7)
}

fn uri(c: &[String]) -> String {
    if c.is_empty() {
        return "/".into();
    }
    c.iter().map(|x| format!("/{x}")).collect()
}

proptest! {
    /// Whatever the table and shard count: an Interest (with or without the Data's implicit
    /// digest) and the Data of its name go to one shard, and a CanBePrefix Interest for any
    /// prefix of a Data name is among the Data's shards once it was dispatched.
    #[test]
    fn data_reaches_every_shard_holding_an_interest_it_satisfies(
        data_name in names(),
        cut in 0usize..7,
        entries in prop::collection::vec((names(), 0usize..4), 0..4),
        default_k in 1usize..4,
        n in 1usize..9,
    ) {
        let mut table = DispatchTable::new(HASHER, default_k).unwrap();
        for (p, extra) in &entries {
            table.set(&name(&uri(p)), p.len() + extra).unwrap();
        }
        let d = Dispatcher::new(table, n).unwrap();
        let full = uri(&data_name);
        let dw = data(&full);
        let Route::Shards(exact) = d.route(Time::ZERO, &interest(&full, 1, false)) else {
            panic!()
        };
        prop_assert_eq!(exact.count_ones(), 1);
        let digest = nameway_wire::DataView::new_checked(dw.clone()).unwrap().implicit_digest();
        let mut with_digest = Interest::new(name(&full).append(
            &nameway_wire::Component::implicit_digest(digest)).unwrap());
        with_digest.nonce = Some(3);
        prop_assert_eq!(d.route(Time::ZERO, &with_digest.encode()), Route::Shards(exact));

        let prefix = uri(&data_name[..cut.min(data_name.len())]);
        let now = Time::from_millis(10);
        let Route::Shards(cbp) = d.route(now, &interest(&prefix, 2, true)) else { panic!() };
        let Route::Shards(data_mask) = d.route(now, &dw) else { panic!() };
        prop_assert_eq!(data_mask & exact, exact, "the exact Interest's shard");
        prop_assert_eq!(data_mask & cbp, cbp, "the CanBePrefix Interest's shard");
    }
}

#[test]
fn a_route_change_under_load_takes_effect_in_every_shard_at_its_next_turn() {
    let (mut shards, mut control) = shards(2);
    let other = FaceId(304);
    let (scope, link_type) = (FaceScope::NonLocal, LinkType::PointToPoint);
    control
        .send(ControlOp::AddFace {
            id: other,
            scope,
            link_type,
        })
        .unwrap();
    let mut to_other = 0;
    for turn in 0..40u32 {
        if turn == 20 {
            // Sent while packets are in flight: applied at each shard's next turn.
            control
                .send(ControlOp::AddNexthop {
                    prefix: name("/load"),
                    face: other,
                    cost: 0,
                })
                .unwrap();
            control
                .send(ControlOp::RemoveNexthop {
                    prefix: Name::root(),
                    face: PRODUCER,
                })
                .unwrap();
        }
        let now = Time::from_millis(u64::from(turn));
        for s in &mut shards {
            s.apply_control();
        }
        for k in 0..16u32 {
            let w = interest(&format!("/load/t{turn}/k{k}"), turn << 8 | k, false);
            shards[(k % 2) as usize].handle_packet(now, APP1, w);
        }
        let out = settle(&mut shards, now);
        let (up, side) = (
            to(PRODUCER, Kind::Interest, &out).len(),
            to(other, Kind::Interest, &out).len(),
        );
        assert_eq!(up + side, 16, "turn {turn}: every Interest forwarded");
        if turn < 20 {
            assert_eq!(side, 0, "turn {turn}");
        } else {
            assert_eq!(up, 0, "turn {turn}: the old route is gone in both shards");
            to_other += side;
        }
    }
    assert_eq!(to_other, 20 * 16);
    for s in &shards {
        assert_eq!(s.counters().n_control_applied, 4 + 3);
        assert_eq!(s.counters().n_control_refused, 0);
    }
}

/// What management does to shard 0's forwarder, recorded and sent with `send_from`, leaves
/// shard 1 with the same faces, next hops, strategy choices and settings, in order (a next hop
/// added then removed is gone there too). A forwarder that does not record records nothing.
#[test]
fn changes_recorded_on_shard_zero_are_replayed_by_the_others_in_order() {
    let table = DispatchTable::new(HASHER, 2).unwrap();
    let config = Config {
        hasher: Some(HASHER),
        ..Config::default()
    };
    let (mut shards, mut control) = build(config, table, 2, 64).unwrap();
    let fw = shards[0].forwarder_mut();
    fw.add_face_with_id(FaceId(400), FaceScope::Local, LinkType::PointToPoint)
        .unwrap();
    assert!(fw.take_recorded().is_empty(), "not recording yet");
    fw.start_recording();
    fw.add_face_with_id(FaceId(401), FaceScope::NonLocal, LinkType::MultiAccess)
        .unwrap();
    fw.add_nexthop(&name("/a"), FaceId(401), 7).unwrap();
    fw.add_nexthop(&name("/b"), FaceId(401), 1).unwrap();
    assert!(fw.remove_nexthop(&name("/b"), FaceId(401)));
    assert!(
        !fw.remove_nexthop(&name("/b"), FaceId(401)),
        "absent: nothing recorded"
    );
    fw.set_strategy(&name("/a"), &name("/localhost/nfd/strategy/multicast"))
        .unwrap();
    fw.set_local_fields(FaceId(401), true);
    fw.set_cs_admit(false);
    let no_admit = crate::CsRule {
        admit: false,
        priority: crate::CsPriority::Normal,
    };
    fw.set_cs_policy(&[(name("/private"), no_admit)], None)
        .unwrap();
    let ops = fw.take_recorded();
    assert_eq!(ops.len(), 8, "{ops:?}");
    assert!(fw.take_recorded().is_empty(), "taken once");
    for op in &ops {
        control.send_from(0, op).unwrap();
    }
    assert_eq!(shards[0].apply_control(), 0, "shard 0 applied them already");
    assert_eq!(shards[1].apply_control(), 8);
    assert_eq!(shards[1].counters().n_control_refused, 0);
    let other = shards[1].forwarder();
    assert!(other.face(FaceId(401)).is_some());
    assert!(other.face(FaceId(400)).is_none(), "added before recording");
    let hops = other.fib_nexthops(&name("/a")).unwrap();
    assert_eq!((hops[0].face, hops[0].cost), (FaceId(401), 7));
    assert!(other.fib_nexthops(&name("/b")).is_none());
    assert_eq!(
        other
            .effective_strategy(&name("/a/x"))
            .map(ToString::to_string),
        shards[0]
            .forwarder()
            .effective_strategy(&name("/a/x"))
            .map(ToString::to_string)
    );
    assert!(!other.cs_admit());
    assert_eq!(other.cs_policy().rule(&name("/private/x")), Some(no_admit));
}

/// The other shards' counters are added to shard 0's status and per-face counters.
#[test]
fn peer_totals_add_the_other_shards_counters() {
    let (mut shards, _control) = shards(2);
    // Interests from APP1 on both shards' forwarders directly (no dispatch).
    for (i, s) in shards.iter_mut().enumerate() {
        s.handle_local(
            Time::ZERO,
            APP1,
            interest(&format!("/p/{i}"), i as u32 + 1, false),
        );
    }
    let peer = PeerTotals::of(shards[1].forwarder());
    let fw = shards[0].forwarder_mut();
    assert_eq!(fw.status().counters.n_in_interests, 1);
    fw.set_peer_totals(Some(peer));
    assert_eq!(fw.status().counters.n_in_interests, 2);
    assert_eq!(fw.status().n_pit_entries, 2);
    assert_eq!(fw.own_status().counters.n_in_interests, 1);
    assert_eq!(fw.face_counters(APP1).unwrap().n_in_interests, 2);
    assert_eq!(fw.face_pit_entries(APP1), 2);
    assert_eq!(
        fw.status().n_fib_entries,
        1,
        "replicated tables are not added"
    );
}

#[test]
fn the_content_store_capacity_is_split_so_the_shares_add_up_to_the_total() {
    let table = DispatchTable::new(HASHER, DEFAULT_DISPATCH_K).unwrap();
    let config = Config {
        cs_capacity: 1235,
        ..Config::default()
    };
    let (mut shards, mut control) = build(config, table, 3, 64).unwrap();
    let capacities = |s: &[Shard]| -> Vec<usize> {
        s.iter()
            .map(|s| s.forwarder().content_store().capacity())
            .collect()
    };
    assert_eq!(capacities(&shards), [412, 412, 411]);
    // Set on shard 0 (recorded) and replayed by the others: the total, each its share.
    shards[0].forwarder_mut().start_recording();
    shards[0].forwarder_mut().set_cs_capacity(1001);
    for op in shards[0].forwarder_mut().take_recorded() {
        control.send_from(0, &op).unwrap();
    }
    shards.iter_mut().for_each(|s| {
        s.apply_control();
    });
    assert_eq!(capacities(&shards), [334, 334, 333]);
    assert!(shards
        .iter()
        .all(|s| s.forwarder().cs_capacity_total() == 1001));
}

#[test]
fn a_face_rate_limit_holds_in_total_whichever_shards_own_the_names() {
    let (mut shards, mut control) = shards(2);
    let limit = crate::RateLimit {
        per_second: 1,
        burst: 10,
    };
    control
        .send(ControlOp::SetInterestRateLimit {
            face: APP1,
            limit: Some(limit),
        })
        .unwrap();
    shards.iter_mut().for_each(|s| {
        s.apply_control();
    });
    let now = Time::ZERO;
    // 100 Interests of names spread over both shards, all read by shard 1 (APP1's reader).
    let wires: Vec<Bytes> = (0..100u32)
        .map(|i| interest(&format!("/limited/n{i}"), i + 1, false))
        .collect();
    let elsewhere = wires.iter().filter(|w| owner(&shards, w) == 0).count();
    assert!((20..80).contains(&elsewhere), "{elsewhere}");
    for w in wires {
        shards[1].handle_packet(now, APP1, w);
    }
    let out = settle(&mut shards, now);
    let upstream = to(PRODUCER, Kind::Interest, &out).len();
    assert_eq!(upstream, 10, "the burst, once for the face");
    let status = |s: &Shard| s.forwarder().status();
    let limited: u64 = shards
        .iter()
        .map(|s| status(s).counters.drops.get(DropReason::RateLimit))
        .sum();
    assert_eq!(limited, 90);
    let received: u64 = shards
        .iter()
        .map(|s| status(s).counters.n_in_interests)
        .sum();
    assert_eq!(received, 100, "each Interest counted once");
}

#[test]
fn management_names_go_to_shard_zero() {
    let table = DispatchTable::new(HASHER, DEFAULT_DISPATCH_K).unwrap();
    let d = Dispatcher::new(table, 8).unwrap();
    for (i, n) in (0..64u32).map(|i| (i, format!("/localhop/nfd/rib/register/p{i}"))) {
        let route = d.route(Time::ZERO, &interest(&n, i + 1, false));
        assert!(matches!(route, Route::Shards(1)), "{n}: {route:?}");
        let route = d.route(Time::ZERO, &data(&format!("/localhost/nfd/x{i}")));
        assert!(matches!(route, Route::Shards(1)), "{route:?}");
        let hello = format!("/localhop/nameway/hello/t{i}");
        let route = d.route(Time::ZERO, &interest(&hello, i + 1, false));
        assert!(matches!(route, Route::Shards(1)), "{hello}: {route:?}");
    }
    // Other /localhop names are ordinary.
    let elsewhere = (0..64u32)
        .map(|i| {
            d.route(
                Time::ZERO,
                &interest(&format!("/localhop/app{i}"), i + 1, false),
            )
        })
        .filter(|r| !matches!(r, Route::Shards(1)))
        .count();
    assert!(elsewhere > 0);
}

#[test]
fn each_shard_forwards_to_the_producer_face_homed_on_it_among_equal_costs() {
    let (mut shards, mut control) = shards(2);
    // A second connection of the producer, homed on the other shard (ids: 303 % 2 = 1,
    // 304 % 2 = 0), registering the same prefix at the same cost.
    let second = FaceId(304);
    assert_ne!(
        local_hops::face_home(PRODUCER, 2),
        local_hops::face_home(second, 2)
    );
    add_producer_face(&mut control, second);
    shards.iter_mut().for_each(|s| {
        s.apply_control();
    });
    let mut per_shard = [0; 2];
    for i in 0..40u32 {
        let n = format!("/app/item{i}/v1");
        let now = Time::from_millis(u64::from(i));
        let wire = interest(&n, 5000 + i, false);
        let owner = owner(&shards, &wire);
        shards[owner].handle_packet(now, if owner == 0 { APP2 } else { APP1 }, wire);
        let out = settle(&mut shards, now);
        let up: Vec<_> = out
            .iter()
            .filter(|(_, t)| t.kind == Kind::Interest)
            .map(|(s, t)| (*s, t.face))
            .collect();
        assert_eq!(up.len(), 1, "{n}: one upstream Interest");
        let (sent_by, face) = up[0];
        assert_eq!(sent_by, owner);
        assert_eq!(
            local_hops::face_home(face, 2),
            owner,
            "{n}: the owner's own producer face"
        );
        per_shard[owner] += 1;
        // The Data comes back on that face, read by the owner: nothing crosses.
        shards[owner].handle_packet(now, face, data(&n));
        let out = settle(&mut shards, now);
        assert_eq!(out.iter().filter(|(_, t)| t.kind == Kind::Data).count(), 1);
    }
    assert!(per_shard.iter().all(|&n| n > 5), "{per_shard:?}");
    let handed: u64 = shards.iter().map(|s| s.counters().n_handed_off).sum();
    assert_eq!(handed, 0, "no packet crossed shards");
}

#[test]
fn with_one_shard_the_first_next_hop_of_equal_cost_is_kept() {
    let (mut shards, mut control) = shards(1);
    let second = FaceId(304);
    add_producer_face(&mut control, second);
    shards[0].apply_control();
    let hops: Vec<_> = shards[0]
        .forwarder()
        .fib_nexthops(&Name::root())
        .unwrap()
        .iter()
        .map(|h| h.face)
        .collect();
    assert_eq!(hops.len(), 2);
    for i in 0..10u32 {
        let n = format!("/app/item{i}/v1");
        shards[0].handle_packet(Time::ZERO, APP1, interest(&n, 7000 + i, false));
        let out = settle(&mut shards, Time::ZERO);
        assert_eq!(
            to(hops[0], Kind::Interest, &out),
            [0],
            "{n}: the FIB's first"
        );
    }
}

/// Reads `count` Interests `names(i)` on shard 0's APP1 (rings drained as it goes); returns
/// the skew reports the shard gave.
pub(super) fn feed(
    shards: &mut [Shard],
    count: u32,
    names: impl Fn(u32) -> String,
) -> Vec<skew::SkewReport> {
    let mut reports = Vec::new();
    for i in 0..count {
        let now = Time::from_millis(u64::from(i / 64));
        shards[0].handle_packet(now, APP1, interest(&names(i), 100_000 + i, false));
        if i % 64 == 63 {
            settle(shards, now);
        }
        reports.extend(shards[0].take_skew_report());
    }
    reports
}

pub(super) const WINDOW: u32 = skew::SAMPLE_EVERY * skew::WINDOW_SAMPLES;

#[test]
fn a_dominating_dispatch_key_is_reported_with_the_entry_that_spreads_it() {
    let (mut shards, _) = shards(2);
    let reports = feed(&mut shards, 2 * WINDOW, |i| format!("/video/title/seg={i}"));
    assert_eq!(reports.len(), 2, "both windows skewed: {reports:?}");
    let r = &reports[0];
    assert_eq!(r.prefix, name("/video/title"));
    assert_eq!((r.k, r.recommended_k()), (2, 3));
    assert!(r.shard_permille == 1000 && r.key_permille >= 900, "{r:?}");
    assert_eq!(shards[0].counters().n_skewed_windows, 2);

    // The recommended entry spreads the same load: no skew, both shards own names.
    let mut table = DispatchTable::new(HASHER, 2).unwrap();
    table.set(&name("/video/title"), r.recommended_k()).unwrap();
    let (mut shards, _) = set_up(2, table, Config::default());
    let reports = feed(&mut shards, 2 * WINDOW, |i| format!("/video/title/seg={i}"));
    assert!(reports.is_empty(), "{reports:?}");
    assert_eq!(shards[0].counters().n_skewed_windows, 0);
    let received = shards[1].counters().n_received;
    let local = shards[0].counters().n_local;
    assert!(
        received > u64::from(WINDOW) / 2 && local > u64::from(WINDOW) / 2,
        "{local} {received}"
    );
}

#[test]
fn spread_traffic_and_one_shard_are_not_reported() {
    let (mut two, _) = shards(2);
    let reports = feed(&mut two, 2 * WINDOW, |i| format!("/app{}/item/{i}", i % 50));
    assert!(reports.is_empty(), "{reports:?}");
    let (mut one, _) = shards(1);
    let reports = feed(&mut one, 2 * WINDOW, |i| format!("/video/title/seg={i}"));
    assert!(
        reports.is_empty(),
        "one shard has nothing to spread to: {reports:?}"
    );
}

/// A change sent to the shards before a packet is handed off reaches the receiving shard
/// before that packet, even when the shard last looked at its control ring before the change
/// was sent (management's reply goes out after the change is sent, so a packet read after
/// the reply must meet it: the daemon's `a_route_removed_under_load_is_not_used_after_the_reply`).
#[test]
fn a_handed_off_packet_meets_a_change_sent_before_it() {
    const PRODUCER2: FaceId = FaceId(304);
    let (mut shards, mut control) = shards(2);
    control
        .send(ControlOp::AddFace {
            id: PRODUCER2,
            scope: FaceScope::NonLocal,
            link_type: LinkType::PointToPoint,
        })
        .unwrap();
    for s in &mut shards {
        assert_eq!(s.apply_control(), 1);
    }
    // A name that shard 1 owns, read on shard 0.
    let wire = (0..)
        .map(|i| interest(&format!("/app/item{i}/v1"), 7, false))
        .find(|w| owner(&shards, w) == 1)
        .unwrap();
    // Shard 1 has just looked at its control ring (nothing there), as at the start of a turn.
    assert_eq!(shards[1].apply_control(), 0);
    // Management moves the route to PRODUCER2, then the packet is read and handed off.
    control
        .send(ControlOp::RemoveNexthop {
            prefix: Name::root(),
            face: PRODUCER,
        })
        .unwrap();
    control
        .send(ControlOp::AddNexthop {
            prefix: Name::root(),
            face: PRODUCER2,
            cost: 0,
        })
        .unwrap();
    assert_eq!(shards[0].apply_control(), 2);
    shards[0].handle_packet(Time::ZERO, APP1, wire);
    shards[0].flush();
    assert_eq!(shards[1].handle_handoffs(Time::ZERO, 64), 1);
    let out: Vec<(usize, Transmit)> = std::iter::from_fn(|| shards[1].poll_transmit())
        .map(|t| (1, t))
        .collect();
    assert_eq!(to(PRODUCER2, Kind::Interest, &out), vec![1], "{out:?}");
    assert!(
        to(PRODUCER, Kind::Interest, &out).is_empty(),
        "the removed next hop was used"
    );
}
