use std::sync::Arc;

use super::*;
use crate::key::NameKey;
use crate::time::DEFAULT_LIFETIME_MS;
use crate::verifier::{ChainVerifier, Origin, VerifierConfig};

const T: u64 = 1_760_000_000_000;

struct Fixture {
    verifier: ChainVerifier,
    routers: Vec<(NameKey, LocatorRecord)>,
}

impl Fixture {
    fn new(routers: usize) -> Self {
        let routers = (0..routers)
            .map(|i| {
                let k = NameKey::generate().unwrap();
                let loc =
                    LocatorRecord::build(&k, &[format!("udp4://192.0.2.{i}:6363")], T, 3_600_000)
                        .unwrap();
                (k, loc)
            })
            .collect();
        Self {
            verifier: ChainVerifier::new(VerifierConfig::default()),
            routers,
        }
    }

    /// `owner` delegated to router `r`, signed at `at`.
    fn chain(&mut self, owner: &NameKey, r: usize, at: u64) -> Arc<VerifiedRoute> {
        let (rk, loc) = &self.routers[r];
        let pa = Announcement::delegation(owner, &rk.hash(), at, DEFAULT_LIFETIME_MS).unwrap();
        self.verifier
            .verify(at, pa.wire(), loc.wire(), Origin::Direct)
            .unwrap()
    }
}

#[test]
fn the_version_rule_and_look_ups() {
    let mut f = Fixture::new(2);
    let mut reg = Registry::new();
    let owner = NameKey::generate().unwrap();
    let h = owner.hash();
    let v1 = f.chain(&owner, 0, T);
    assert_eq!(reg.insert(&v1), InsertOutcome::Inserted);
    assert_eq!(
        reg.insert(&v1),
        InsertOutcome::NotNewer { current_version: T }
    );
    let rec = reg.get(&h, T).unwrap();
    assert_eq!(rec.announcement, v1.announcement);
    assert_eq!(rec.locator, v1.locator);
    assert_eq!((rec.delegate, rec.version), (f.routers[0].0.hash(), T));
    // Moved to router 1 with a newer version: replaced; the old version again: kept.
    let v2 = f.chain(&owner, 1, T + 1000);
    assert_eq!(reg.insert(&v2), InsertOutcome::Replaced { old_version: T });
    assert_eq!(
        reg.insert(&v1),
        InsertOutcome::NotNewer {
            current_version: T + 1000
        }
    );
    let rec = reg.get(&h, T + 2000).unwrap();
    assert_eq!(
        (rec.delegate, rec.version),
        (f.routers[1].0.hash(), T + 1000)
    );
    assert_eq!(rec.locator, f.routers[1].1.wire());
    // Router 0's record is not kept for nobody.
    assert_eq!(reg.locator_count(), 1);
    assert_eq!(reg.len(), 1);
    assert!(reg.get(&KeyHash::from_bytes([0; 32]), T).is_none());
    assert_eq!(
        reg.iter().collect::<Vec<_>>(),
        [NameInfo {
            h,
            delegate: f.routers[1].0.hash(),
            version: T + 1000,
            expires_at_ms: T + 1000 + DEFAULT_LIFETIME_MS,
        }]
    );
}

#[test]
fn names_share_their_routers_newest_locator_record() {
    let mut f = Fixture::new(1);
    let mut reg = Registry::new();
    let owners: Vec<NameKey> = (0..3).map(|_| NameKey::generate().unwrap()).collect();
    for o in &owners {
        let c = f.chain(o, 0, T);
        reg.insert(&c);
    }
    assert_eq!((reg.len(), reg.locator_count()), (3, 1));
    // The router renews its locator record; one re-registration updates it for every name.
    let rk = f.routers[0].0.clone();
    f.routers[0].1 =
        LocatorRecord::build(&rk, &["tcp4://198.51.100.1:6363"], T + 500, 3_600_000).unwrap();
    let again = f.chain(&owners[0], 0, T + 600);
    reg.insert(&again);
    for o in &owners {
        let rec = reg.get(&o.hash(), T + 700).unwrap();
        assert_eq!(rec.locator, f.routers[0].1.wire());
    }
    // An older locator record coming with a chain does not replace the newer one.
    let old_loc = LocatorRecord::build(&rk, &["x"], T, 3_600_000).unwrap();
    let pa =
        Announcement::delegation(&owners[1], &rk.hash(), T + 800, DEFAULT_LIFETIME_MS).unwrap();
    let c = f
        .verifier
        .verify(T + 800, pa.wire(), old_loc.wire(), Origin::Direct)
        .unwrap();
    reg.insert(&c);
    assert_eq!(
        reg.get(&owners[1].hash(), T + 900).unwrap().locator,
        f.routers[0].1.wire()
    );
    // The last name going frees the record.
    for o in &owners {
        assert!(reg.remove(&o.hash()));
    }
    assert!(!reg.remove(&owners[0].hash()));
    assert_eq!((reg.len(), reg.locator_count()), (0, 0));
}

#[test]
fn expired_names_are_not_answered_and_are_swept() {
    let mut f = Fixture::new(2);
    let mut reg = Registry::new();
    let a = NameKey::generate().unwrap();
    let b = NameKey::generate().unwrap();
    reg.insert(&f.chain(&a, 0, T));
    reg.insert(&f.chain(&b, 1, T + 120_000));
    let end_a = T + DEFAULT_LIFETIME_MS + CLOCK_GRACE_MS;
    assert!(reg.get(&a.hash(), end_a).is_some());
    assert!(reg.get(&a.hash(), end_a + 1).is_none());
    let (names, routers) = reg.sweep_expired(end_a + 1);
    assert_eq!(names, [a.hash()]);
    assert_eq!(routers, [f.routers[0].0.hash()]);
    assert_eq!((reg.len(), reg.locator_count()), (1, 1));
    assert!(reg.get(&b.hash(), end_a + 1).is_some());
}

#[test]
fn a_store_round_trip_skips_and_reports_bad_records() {
    let mut f = Fixture::new(2);
    let owners: Vec<NameKey> = (0..4).map(|_| NameKey::generate().unwrap()).collect();
    let (mut pr, report) = PersistentRegistry::open(MemoryStore::default(), T).unwrap();
    assert_eq!(report, LoadReport::default());
    for (i, o) in owners.iter().enumerate() {
        let c = f.chain(o, i % 2, T + i as u64);
        assert_eq!(pr.insert(&c).unwrap(), InsertOutcome::Inserted);
    }
    pr.flush().unwrap();
    assert_eq!(pr.store().len(), 6);
    let mut store = pr.store().clone();
    // Damage: a short key, bytes that do not decode, an announcement filed under another
    // name, a plain announcement, one whose delegate's record is missing, and a locator
    // record with a changed signature byte.
    let good = pr.registry().get(&owners[0].hash(), T).unwrap();
    store.put_raw(RecordKind::Announcement, &[1, 2, 3], &good.announcement);
    store.put_raw(RecordKind::Announcement, &[2; 32], b"\x06\x03junk");
    store.put_raw(RecordKind::Announcement, &[3; 32], &good.announcement);
    let plain = Announcement::build(
        &crate::AnnouncementParams {
            prefix: owners[3].name(),
            version: T,
            expiration_ms: DEFAULT_LIFETIME_MS,
            validity: None,
            delegate: None,
            public_key: None,
        },
        &owners[3],
    )
    .unwrap();
    let stranger = NameKey::generate().unwrap();
    let orphan =
        Announcement::delegation(&stranger, &KeyHash::from_bytes([9; 32]), T, 600_000).unwrap();
    store.put_raw(
        RecordKind::Announcement,
        stranger.hash().as_bytes(),
        orphan.wire(),
    );
    let mut bad_loc = f.routers[1].1.wire().to_vec();
    let n = bad_loc.len();
    bad_loc[n - 1] ^= 1;
    store.put_raw(
        RecordKind::Locator,
        f.routers[1].0.hash().as_bytes(),
        &bad_loc,
    );
    // Stored under owner 3 (replacing its delegation): refused as not a delegation.
    store.put_raw(
        RecordKind::Announcement,
        owners[3].hash().as_bytes(),
        plain.wire(),
    );
    let (pr2, report) = PersistentRegistry::open(store, T + 10).unwrap();
    let mut errors: Vec<StoredRecordError> =
        report.refused.iter().map(|e| e.error.clone()).collect();
    errors.sort_by_key(|e| format!("{e:?}"));
    let mut want = vec![
        StoredRecordError::BadKey(3),
        StoredRecordError::WrongKey,
        StoredRecordError::NotDelegation,
        StoredRecordError::NoLocator,
        StoredRecordError::BadSignature,
        // Owner 1's delegate (router 1) lost its record, so owner 1 goes too.
        StoredRecordError::NoLocator,
    ];
    want.push(
        match &errors
            .iter()
            .find(|e| matches!(e, StoredRecordError::Decode(_)))
        {
            Some(e) => (*e).clone(),
            None => panic!("no decode error in {errors:?}"),
        },
    );
    want.sort_by_key(|e| format!("{e:?}"));
    assert_eq!(errors, want);
    assert_eq!(report.refused_count, 7);
    assert!(report.refused.iter().all(|e| !e.to_string().is_empty()));
    // Owners 0 and 2 (router 0) came back whole.
    assert_eq!((report.names, report.locators), (2, 1));
    for o in [&owners[0], &owners[2]] {
        let before = pr.registry().get(&o.hash(), T).unwrap();
        assert_eq!(pr2.registry().get(&o.hash(), T).unwrap(), before);
    }
}

#[test]
fn expired_records_are_deleted_on_open() {
    let mut f = Fixture::new(1);
    let (mut pr, _) = PersistentRegistry::open(MemoryStore::default(), T).unwrap();
    let a = NameKey::generate().unwrap();
    let b = NameKey::generate().unwrap();
    pr.insert(&f.chain(&a, 0, T)).unwrap();
    pr.insert(&f.chain(&b, 0, T + 300_000)).unwrap();
    let later = T + DEFAULT_LIFETIME_MS + CLOCK_GRACE_MS + 1;
    let (pr2, report) = PersistentRegistry::open(pr.store().clone(), later).unwrap();
    assert_eq!(report.expired, [(RecordKind::Announcement, a.hash())]);
    assert_eq!(report.names, 1);
    assert_eq!(
        pr2.store().len(),
        2,
        "a's announcement deleted, b and the router kept"
    );
    // Sweeping through the persistent registry deletes from the store too.
    let mut pr2 = pr2;
    assert_eq!(
        pr2.sweep_expired(T + 300_000 + DEFAULT_LIFETIME_MS + CLOCK_GRACE_MS + 1)
            .unwrap(),
        1
    );
    assert!(pr2.store().is_empty());
    let _ = pr2.remove(&b.hash()).unwrap();
}
