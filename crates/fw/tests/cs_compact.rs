//! A cached packet must not keep a larger receive buffer alive.
#![allow(clippy::unwrap_used)]

use bytes::{Bytes, BytesMut};
use nameway_fw::{ContentStore, InMemoryCs, Time};
use nameway_wire::{Data, DataView, Interest, InterestView, NameHasher};

#[test]
fn cached_data_is_a_compact_copy() {
    let data = Data::new("/a/b".parse().unwrap(), Bytes::from_static(b"payload")).encode();
    // The packet sits in the middle of a 16 KiB receive buffer, as on a stream face.
    let mut buf = BytesMut::zeroed(100);
    buf.extend_from_slice(&data);
    buf.resize(16 * 1024, 0);
    let big = buf.freeze();
    let slice = big.slice(100..100 + data.len());
    let view = DataView::new_checked(slice).unwrap();

    let hasher = NameHasher::with_seed(1);
    let mut cs = InMemoryCs::new(8);
    cs.insert(
        &view,
        &hasher.prefix_hashes(view.name()),
        Time::from_millis(0),
    );

    let mut i = Interest::new("/a/b".parse().unwrap());
    i.nonce = Some(1);
    let iv = InterestView::new_checked(i.encode()).unwrap();
    let hit = cs
        .lookup(&iv, &hasher.prefix_hashes(iv.name()), Time::from_millis(1))
        .unwrap();
    assert_eq!(hit, data);
    let range = big.as_ptr() as usize..big.as_ptr() as usize + big.len();
    assert!(
        !range.contains(&(hit.as_ptr() as usize)),
        "cache entry points into the receive buffer"
    );
}
