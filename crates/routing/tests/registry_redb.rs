//! The redb registry store with a real file: a registry survives closing and reopening, and
//! damaged records written behind its back are refused with a reason and skipped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use nameway_routing::redb_store::{RedbStore, RedbStoreError};
use nameway_routing::registry::StoredRecordError;
use nameway_routing::{
    Announcement, ChainVerifier, InsertOutcome, LocatorRecord, NameKey, Origin, PersistentRegistry,
    VerifierConfig,
};
use redb::{Database, ReadableTable, TableDefinition};

const T: u64 = 1_760_000_000_000;
const LIFETIME: u64 = 600_000;

#[test]
fn survives_reopen_and_refuses_damaged_records() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/registry.redb");
    let router = NameKey::generate().unwrap();
    let loc = LocatorRecord::build(&router, &["udp4://192.0.2.1:6363"], T, 3_600_000).unwrap();
    let mut verifier = ChainVerifier::new(VerifierConfig::default());
    let owners: Vec<NameKey> = (0..5).map(|_| NameKey::generate().unwrap()).collect();
    {
        let (mut reg, report) =
            PersistentRegistry::open(RedbStore::open(&path).unwrap(), T).unwrap();
        assert_eq!(report.names, 0);
        for o in &owners {
            let pa = Announcement::delegation(o, &router.hash(), T, LIFETIME).unwrap();
            let route = verifier
                .verify(T, pa.wire(), loc.wire(), Origin::Direct)
                .unwrap();
            assert_eq!(reg.insert(&route).unwrap(), InsertOutcome::Inserted);
        }
        assert_eq!(reg.store().queued(), 6);
        reg.flush().unwrap();
        assert_eq!(reg.store().queued(), 0);
    }
    let (reg, report) = PersistentRegistry::open(RedbStore::open(&path).unwrap(), T + 1).unwrap();
    assert_eq!(
        (report.names, report.locators, report.refused_count),
        (5, 1, 0)
    );
    for o in &owners {
        let rec = reg.registry().get(&o.hash(), T + 1).unwrap();
        assert_eq!(rec.locator, loc.wire());
        let pa = Announcement::decode(rec.announcement).unwrap();
        assert_eq!(pa.key_hash(), Some(o.hash()));
        pa.check_signature(o.spki()).unwrap();
    }
    drop(reg);

    // Damage the file behind the store's back: a garbage record, a record with a flipped
    // byte, and a 5-byte key.
    {
        let db = Database::create(&path).unwrap();
        let t: TableDefinition<&[u8], &[u8]> = TableDefinition::new("routing_announcements");
        let tx = db.begin_write().unwrap();
        {
            let mut table = tx.open_table(t).unwrap();
            let h0 = owners[0].hash();
            let mut flipped = table
                .get(&h0.as_bytes()[..])
                .unwrap()
                .unwrap()
                .value()
                .to_vec();
            flipped[3] ^= 0xff;
            table
                .insert(&h0.as_bytes()[..], flipped.as_slice())
                .unwrap();
            table
                .insert(&owners[1].hash().as_bytes()[..], &b"not a packet"[..])
                .unwrap();
            table.insert(&b"short"[..], &b"x"[..]).unwrap();
        }
        tx.commit().unwrap();
    }
    let (reg, report) = PersistentRegistry::open(RedbStore::open(&path).unwrap(), T + 2).unwrap();
    assert_eq!(report.names, 3);
    assert_eq!(report.refused_count, 3);
    let mut kinds: Vec<String> = report
        .refused
        .iter()
        .map(|e| match &e.error {
            StoredRecordError::Decode(_) => "decode".to_owned(),
            StoredRecordError::BadKey(n) => format!("key{n}"),
            StoredRecordError::WrongKey => "wrong-key".to_owned(),
            other => format!("{other:?}"),
        })
        .collect();
    kinds.sort();
    // The flipped byte is in the Data's TLV-LENGTH: that record no longer decodes.
    assert_eq!(kinds, ["decode", "decode", "key5"]);
    for e in &report.refused {
        let text = e.to_string();
        assert!(text.starts_with("Announcement record "), "{text}");
    }
    assert!(reg.registry().get(&owners[0].hash(), T + 2).is_none());
    assert!(reg.registry().get(&owners[1].hash(), T + 2).is_none());
    assert!(reg.registry().get(&owners[4].hash(), T + 2).is_some());
}

#[test]
fn another_format_is_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("registry.redb");
    {
        let db = Database::create(&path).unwrap();
        let meta: TableDefinition<&str, u64> = TableDefinition::new("routing_meta");
        let tx = db.begin_write().unwrap();
        tx.open_table(meta).unwrap().insert("format", 99).unwrap();
        tx.commit().unwrap();
    }
    let err = RedbStore::open(&path).err().unwrap();
    assert!(matches!(err, RedbStoreError::Format { found: 99, .. }));
    assert!(err.to_string().contains("format 99"), "{err}");
    // A directory where the file should be is an open error, not a panic.
    let err = RedbStore::open(dir.path()).err().unwrap();
    assert!(matches!(err, RedbStoreError::Open { .. }), "{err}");
}
