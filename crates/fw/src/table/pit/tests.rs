use bytes::Bytes;
use nameway_wire::lp::NackReason;
use nameway_wire::{Component, Data, Interest, NameHasher};

use super::*;
use crate::table::face_table::FaceId;

const H: NameHasher = NameHasher::with_seed(11);

fn interest(name: &str, nonce: u32, cbp: bool, mbf: bool) -> InterestView {
    let mut i = Interest::new(name.parse().unwrap());
    i.nonce = Some(nonce);
    i.can_be_prefix = cbp;
    i.must_be_fresh = mbf;
    InterestView::new_checked(i.encode()).unwrap()
}

fn data(name: &str) -> DataView {
    DataView::new_checked(Data::new(name.parse().unwrap(), Bytes::from_static(b"x")).encode())
        .unwrap()
}

fn insert(pit: &mut Pit, i: InterestView) -> PitEntryId {
    let hash = H.hash_name(i.name());
    pit.insert(i, hash, 0, FaceId(300)).unwrap()
}

fn find(pit: &mut Pit, i: &InterestView) -> Option<PitEntryId> {
    let hash = H.hash_name(i.name());
    pit.find(i, hash)
}

fn matches(pit: &mut Pit, d: &DataView) -> SmallVec<[PitEntryId; 4]> {
    let mut out = SmallVec::new();
    pit.find_data_matches(d, &H.prefix_hashes(d.name()), &H, &mut out);
    out
}

#[test]
fn entries_are_keyed_by_name_and_selectors() {
    let mut pit = Pit::new(10);
    let a = insert(&mut pit, interest("/a/b", 1, false, false));
    let b = insert(&mut pit, interest("/a/b", 2, true, false));
    let c = insert(&mut pit, interest("/a/b", 3, false, true));
    assert_eq!(pit.len(), 3);
    assert_eq!(find(&mut pit, &interest("/a/b", 9, false, false)), Some(a));
    assert_eq!(find(&mut pit, &interest("/a/b", 9, true, false)), Some(b));
    assert_eq!(find(&mut pit, &interest("/a/b", 9, false, true)), Some(c));
    assert_eq!(find(&mut pit, &interest("/a/b", 9, true, true)), None);
    assert_eq!(find(&mut pit, &interest("/a/c", 9, false, false)), None);
    assert_eq!(pit.remove(a), Some(FaceId(300)));
    assert!(pit.get(a).is_none());
    assert_eq!(pit.remove(a), None);
    // the slot is reused with a new generation: the old id stays dead
    let d = insert(&mut pit, interest("/x", 1, false, false));
    assert!(pit.get(a).is_none());
    assert!(pit.get(d).is_some());
}

/// No share needed: the table is not under pressure, or the Interest is management.
fn unused() -> PitShare {
    panic!("the share is only weighed once the table is half full")
}

#[test]
fn capacity_is_enforced_with_a_reserve_for_localhost() {
    let mut pit = Pit::new(2);
    insert(&mut pit, interest("/a", 1, false, false));
    insert(&mut pit, interest("/b", 1, false, false));
    assert_eq!(pit.admit(false, unused), Err(Refused::Full));
    // Management (/localhost from a local face) still gets in, up to the reserve.
    assert_eq!(pit.admit(true, unused), Ok(()));
    for n in 0..LOCALHOST_RESERVE {
        let i = interest(&format!("/localhost/nfd/x/{n}"), 1, false, false);
        let hash = H.hash_name(i.name());
        pit.insert(i, hash, 0, FaceId(301)).unwrap();
    }
    assert_eq!(pit.admit(true, unused), Err(Refused::Full));
    let i = interest("/c", 1, false, false);
    let hash = H.hash_name(i.name());
    assert_eq!(pit.insert(i, hash, 0, FaceId(300)), Err(PitFull));
    assert_eq!(pit.len(), 2 + LOCALHOST_RESERVE);
}

#[test]
fn a_flooding_face_gets_at_most_its_share_and_others_still_get_in() {
    let mut pit = Pit::new(1000);
    // What the face table keeps: entries charged per face.
    let mut held = std::collections::HashMap::<FaceId, usize>::new();
    let share = |held: &std::collections::HashMap<FaceId, usize>, face| PitShare {
        held: held.get(&face).copied().unwrap_or(0),
        holders: held.len(),
    };
    let (flood, flood2, legit) = (FaceId(400), FaceId(401), FaceId(402));
    let mut n = 0;
    let mut fill = |pit: &mut Pit, held: &mut std::collections::HashMap<FaceId, usize>, face| {
        let mut admitted = 0;
        while pit.admit(false, || share(held, face)).is_ok() {
            n += 1;
            let i = interest(&format!("/f/{n}"), 1, false, false);
            let hash = H.hash_name(i.name());
            let id = pit.insert(i, hash, 0, face).unwrap();
            assert_eq!(pit.get(id).map(|_| ()), Some(()));
            *held.entry(face).or_default() += 1;
            admitted += 1;
        }
        admitted
    };
    // Alone, a face may fill half the table (its share with one left for a newcomer).
    assert_eq!(fill(&mut pit, &mut held, flood), 500);
    assert_eq!(
        pit.admit(false, || share(&held, flood)),
        Err(Refused::Quota)
    );
    // A second flooder gets a third.
    assert_eq!(fill(&mut pit, &mut held, flood2), 333);
    assert_eq!(
        pit.admit(false, || share(&held, flood2)),
        Err(Refused::Quota)
    );
    // A legitimate face still gets in (its share is a quarter), the table is not full.
    assert!(pit.admit(false, || share(&held, legit)).is_ok());
    assert!(pit.len() < 1000);
}

#[test]
fn data_matches_exact_prefix_and_digest() {
    let mut pit = Pit::new(10);
    let exact = insert(&mut pit, interest("/a/b/c", 1, false, false));
    let exact_mbf = insert(&mut pit, interest("/a/b/c", 1, false, true));
    let prefix = insert(&mut pit, interest("/a/b", 1, true, false));
    let not_prefix = insert(&mut pit, interest("/a", 1, false, false));
    let other = insert(&mut pit, interest("/a/x", 1, true, false));
    let d = data("/a/b/c");
    let digest = d.implicit_digest();
    let full = d
        .name()
        .append(&Component::implicit_digest(digest))
        .unwrap();
    let by_digest = insert(&mut pit, interest(&full.to_string(), 1, false, false));
    let mut got = matches(&mut pit, &d).to_vec();
    got.sort();
    let mut want = vec![exact, exact_mbf, prefix, by_digest];
    want.sort();
    assert_eq!(got, want);
    assert!(!got.contains(&not_prefix) && !got.contains(&other));
    // satisfied entries leave the PIT: nothing matches any more
    for id in want {
        assert!(pit.remove(id).is_some());
    }
    assert!(matches(&mut pit, &d).is_empty());
    assert_eq!(pit.counters().data_misses, 1);
}

#[test]
fn can_be_prefix_counts_follow_removal() {
    let mut pit = Pit::new(10);
    let p = insert(&mut pit, interest("/a", 1, true, false));
    assert_eq!(matches(&mut pit, &data("/a/b")).len(), 1);
    pit.remove(p);
    assert!(pit.can_be_prefix_by_len.iter().all(|&c| c == 0));
    assert!(matches(&mut pit, &data("/a/b")).is_empty());
}

#[test]
fn expiry_heap_with_lazy_deletion() {
    let mut pit = Pit::new(10);
    let a = insert(&mut pit, interest("/a", 1, false, false));
    let b = insert(&mut pit, interest("/b", 1, false, false));
    pit.set_expiry(a, Time::from_millis(10));
    pit.set_expiry(b, Time::from_millis(20));
    pit.set_expiry(a, Time::from_millis(30)); // re-armed: the 10 ms deadline is stale
                                              // the stale deadline may cause one early wake-up, which finds nothing
    assert_eq!(pit.next_expiry(), Some(Time::from_millis(10)));
    assert_eq!(pit.pop_expired(Time::from_millis(15)), None);
    assert_eq!(pit.next_expiry(), Some(Time::from_millis(20)));
    assert_eq!(pit.pop_expired(Time::from_millis(25)), Some(b));
    pit.remove(b);
    assert_eq!(pit.pop_expired(Time::from_millis(25)), None);
    assert_eq!(pit.next_expiry(), Some(Time::from_millis(30)));
    pit.remove(a);
    assert_eq!(pit.pop_expired(Time::from_millis(100)), None);
    assert_eq!(pit.next_expiry(), None);
}

#[test]
fn timer_heap_stays_bounded_under_rearming() {
    let mut pit = Pit::new(10);
    let a = insert(&mut pit, interest("/a", 1, false, false));
    for t in 0..10_000 {
        pit.set_expiry(a, Time::from_millis(t));
    }
    assert!(pit.timer_len() <= 2 * pit.len() + 65);
}

#[test]
fn records_and_duplicate_nonces() {
    let mut pit = Pit::new(10);
    let id = insert(&mut pit, interest("/a", 1, false, false));
    let (f1, f2, up) = (FaceId(300), FaceId(301), FaceId(302));
    let now = Time::from_millis(5);
    let e = pit.get_mut(id).unwrap();
    e.insert_in_record(now, f1, Some(Bytes::from_static(b"tok")));
    assert_eq!(e.in_record(f1).unwrap().expiry(), Time::from_millis(4005));
    assert_eq!(
        e.in_record(f1).unwrap().pit_token().map(|t| &t[..]),
        Some(&b"tok"[..])
    );
    e.insert_out_record(now, up);
    assert!(e.has_pending_out_records(now));
    // same nonce from the same p2p downstream: not a loop (even though it went upstream);
    // from another downstream, or on a multi-access face: a loop
    assert!(!e.has_duplicate_nonce(1, f1, true));
    assert!(e.has_duplicate_nonce(1, f1, false));
    assert!(e.has_duplicate_nonce(1, f2, true));
    assert!(!e.has_duplicate_nonce(2, f2, true));
    e.set_incoming_nack(up, NackReason::NoRoute);
    assert!(!e.has_pending_out_records(now));
    assert_eq!(
        e.out_record(up).unwrap().incoming_nack(),
        Some(NackReason::NoRoute)
    );
    e.set_interest(interest("/a", 2, false, false));
    e.insert_in_record(now, f2, None);
    assert_eq!(e.last_in_record_expiry(), Some(Time::from_millis(4005)));
    assert_eq!(e.in_records().len(), 2);
}

#[test]
fn outgoing_wire_decrements_hop_limit_once() {
    let mut pit = Pit::new(10);
    let mut i = Interest::new("/a".parse().unwrap());
    i.nonce = Some(1);
    i.hop_limit = Some(5);
    let v = InterestView::new_checked(i.encode()).unwrap();
    let id = insert(&mut pit, v);
    let e = pit.get_mut(id).unwrap();
    let w = e.outgoing_wire();
    assert_eq!(
        InterestView::new_checked(w.clone()).unwrap().hop_limit(),
        Some(4)
    );
    assert_eq!(e.outgoing_wire().as_ptr(), w.as_ptr(), "built once");
    let plain = insert(&mut pit, interest("/b", 1, false, false));
    let e = pit.get_mut(plain).unwrap();
    assert_eq!(
        e.outgoing_wire().as_ptr(),
        e.interest().wire().as_ptr(),
        "shared, not copied"
    );
}

#[test]
fn each_downstream_keeps_the_interest_it_sent() {
    let mut pit = Pit::new(10);
    let id = insert(&mut pit, interest("/a", 1, false, false));
    let (f1, f2, f3) = (FaceId(300), FaceId(301), FaceId(302));
    let now = Time::ZERO;
    let nonce_of = |e: &PitEntry, f| {
        let r = e.in_record(f).unwrap();
        InterestView::new_checked(e.in_record_interest(r).clone())
            .unwrap()
            .nonce()
    };
    let e = pit.get_mut(id).unwrap();
    e.insert_in_record(now, f1, None);
    assert_eq!(nonce_of(e, f1), Some(1));
    e.set_interest(interest("/a", 2, false, false));
    e.insert_in_record(now, f2, None);
    e.set_interest(interest("/a", 3, false, false));
    e.insert_in_record(now, f3, None);
    assert_eq!(nonce_of(e, f1), Some(1));
    assert_eq!(nonce_of(e, f2), Some(2));
    assert_eq!(nonce_of(e, f3), Some(3));
    // f1 retransmits: its record now follows the entry's latest Interest
    e.set_interest(interest("/a", 4, false, false));
    e.insert_in_record(now, f1, None);
    assert_eq!(nonce_of(e, f1), Some(4));
    assert_eq!(nonce_of(e, f3), Some(3));
}

#[test]
fn deadlines_pop_in_order_like_a_binary_heap() {
    use core::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut ours = Deadlines::default();
    let mut reference = BinaryHeap::new();
    let mut x: u64 = 7;
    for round in 0..2_000u32 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let d = (
            Time::from_millis(x >> 54),
            PitEntryId {
                slot: (x >> 40) as u32 % 16,
                gen: round % 3,
            },
        );
        if x.is_multiple_of(3) {
            assert_eq!(ours.pop(), reference.pop().map(|Reverse(d)| d));
        } else {
            ours.push(d);
            reference.push(Reverse(d));
        }
        assert_eq!(ours.peek(), reference.peek().map(|Reverse(d)| d));
    }
    while let Some(Reverse(d)) = reference.pop() {
        assert_eq!(ours.pop(), Some(d));
    }
    assert_eq!(ours.pop(), None);
}

#[test]
fn an_entry_removed_before_others_are_armed_leaves_no_deadline() {
    let mut pit = Pit::new(10);
    let a = insert(&mut pit, interest("/a", 1, false, false));
    pit.set_expiry(a, Time::from_millis(10));
    pit.set_expiry(a, Time::from_millis(20)); // the 10 ms deadline was the last: gone
    assert_eq!(pit.timer_len(), 1);
    pit.remove(a);
    assert_eq!(pit.timer_len(), 0);
    assert_eq!(pit.next_expiry(), None);
    // Otherwise the deadline stays, stale, until it is popped.
    let b = insert(&mut pit, interest("/b", 1, false, false));
    let c = insert(&mut pit, interest("/c", 1, false, false));
    pit.set_expiry(b, Time::from_millis(10));
    pit.set_expiry(c, Time::from_millis(20));
    pit.remove(b);
    assert_eq!(pit.timer_len(), 2);
    assert_eq!(pit.pop_expired(Time::from_millis(30)), Some(c));
    assert_eq!(pit.pop_expired(Time::from_millis(30)), None);
}

#[test]
fn taking_an_in_record_token_keeps_the_others_in_order() {
    let mut pit = Pit::new(10);
    let id = insert(&mut pit, interest("/a", 1, false, false));
    let now = Time::from_millis(5);
    let e = pit.get_mut(id).unwrap();
    let faces = [FaceId(300), FaceId(301), FaceId(302)];
    for (k, f) in faces.into_iter().enumerate() {
        e.insert_in_record(now, f, (k != 1).then(|| Bytes::from(vec![k as u8])));
    }
    assert_eq!(e.take_in_record_token(FaceId(399)), None);
    assert_eq!(e.take_in_record_token(faces[1]), Some(None));
    let left: Vec<FaceId> = e.in_records().iter().map(InRecord::face).collect();
    assert_eq!(left, [faces[0], faces[2]]);
    assert_eq!(
        e.take_in_record_token(faces[2]),
        Some(Some(Bytes::from(vec![2u8])))
    );
    assert_eq!(
        e.take_in_record_token(faces[0]),
        Some(Some(Bytes::from(vec![0u8])))
    );
    assert!(!e.has_in_records());
}

/// Every slot under `hash` in the index, in probe order.
fn under(ix: &SlotIndex, hash: u64) -> Vec<u32> {
    ix.candidates(hash).collect()
}

#[test]
fn slot_index_agrees_with_a_map_under_collisions_and_removals() {
    // 7 entries at most: the table stays at 16 places and runs wrap around its end; 64: it
    // grows, and runs are long.
    slot_index_against_a_map(7);
    slot_index_against_a_map(64);
}

fn slot_index_against_a_map(slots: u32) {
    use std::collections::HashMap;
    // Few distinct home places (13 to 19) and equal low hash bits, so runs are long and cut
    // by removals.
    let hash_of = |k: u64| (k % 5) * 0x1_0000_0000 + (k % 7) + 13;
    let mut ix = SlotIndex::new();
    let mut model: HashMap<u32, u64> = HashMap::new();
    let mut x: u64 = 3;
    for step in 0..20_000u32 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let slot = (x >> 33) as u32 % slots;
        match model.get(&slot) {
            Some(&h) if x.is_multiple_of(2) => {
                ix.remove(h, slot);
                model.remove(&slot);
            }
            Some(_) => {}
            None => {
                let h = hash_of(x >> 20);
                ix.insert(h, slot);
                model.insert(slot, h);
            }
        }
        assert_eq!(ix.len, model.len());
        assert!(ix.len * 2 <= ix.places.len());
        if step % 97 == 0 {
            for k in 0..35u64 {
                let h = hash_of(k);
                let mut got = under(&ix, h);
                got.retain(|s| model[s] == h);
                got.sort_unstable();
                let mut want: Vec<u32> = model
                    .iter()
                    .filter(|&(_, &mh)| mh == h)
                    .map(|(&s, _)| s)
                    .collect();
                want.sort_unstable();
                assert_eq!(got, want, "hash {h:#x} at step {step}");
            }
        }
    }
}

#[test]
fn slot_index_find_stops_at_the_first_match() {
    let mut ix = SlotIndex::new();
    for slot in 0..5 {
        ix.insert(42, slot);
    }
    ix.insert(42 + 0x1_0000_0000, 9); // same low bits, another hash
    assert_eq!(under(&ix, 42), [0, 1, 2, 3, 4, 9]);
    assert_eq!(ix.find(42, |s| s >= 2), Some(2));
    assert_eq!(ix.find(42, |s| s == 7), None);
    assert_eq!(ix.find(43, |_| true), None);
    ix.remove(42, 0);
    assert_eq!(under(&ix, 42), [1, 2, 3, 4, 9]);
}
