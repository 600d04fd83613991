//! Shard-local next hops: among next hops of equal cost, a shard tries first those whose face
//! is homed on itself, so an Interest dispatched to shard `s` leaves through a face that `s`
//! reads and writes, and the Data that answers it comes back on that face, to `s`, without
//! crossing to another thread.
//!
//! This matters for a producer that opens one connection per forwarding thread and registers
//! the same prefix on each (as an NDN-DPDK producer does per lcore): every shard then has a
//! next hop of its own. Costs still decide first, and only the order within one cost changes:
//! best-route takes the first eligible next hop, so it takes a local one when one of the
//! cheapest is local; multicast sends to all of them either way. With one shard nothing
//! changes (the FIB's order is used as it is).

use smallvec::SmallVec;

use crate::table::face_table::FaceId;
use crate::table::fib::NextHop;

/// The shard among `n` that reads and writes `face`: faces are homed round robin by id
/// (`id % n`), the rule the face system uses (`nameway_face::home_shard`), and a face placed
/// on a chosen shard gets an id of that residue.
pub fn face_home(face: FaceId, n: usize) -> usize {
    if n <= 1 {
        0
    } else {
        (face.0 % n as u64) as usize
    }
}

/// `hops` (lowest cost first) reordered into `buf` so that within each run of equal cost the
/// next hops homed on shard `index` of `n` come first, both groups keeping their order.
/// False, with `buf` untouched, when the order would not change (one shard, fewer than two
/// next hops, or no local next hop behind a remote one of the same cost): use `hops` as it is.
pub(crate) fn prefer_local(
    hops: &[NextHop],
    index: usize,
    n: usize,
    buf: &mut SmallVec<[NextHop; 4]>,
) -> bool {
    if n <= 1 || hops.len() < 2 {
        return false;
    }
    let local = |h: &NextHop| face_home(h.face, n) == index;
    // A local next hop behind a remote one of the same cost shows as an adjacent pair.
    let reorder = hops
        .windows(2)
        .any(|w| matches!(w, [a, b] if a.cost == b.cost && !local(a) && local(b)));
    if !reorder {
        return false;
    }
    buf.clear();
    for run in hops.chunk_by(|a, b| a.cost == b.cost) {
        buf.extend(run.iter().filter(|h| local(h)).copied());
        buf.extend(run.iter().filter(|h| !local(h)).copied());
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(face: u64, cost: u64) -> NextHop {
        NextHop {
            face: FaceId(face),
            cost,
        }
    }

    fn faces(v: &[NextHop]) -> Vec<u64> {
        v.iter().map(|h| h.face.0).collect()
    }

    #[test]
    fn local_next_hop_of_equal_cost_goes_first() {
        let hops = [hop(10, 5), hop(11, 5), hop(12, 7), hop(13, 7)];
        let mut buf = SmallVec::new();
        // Shard 1 of 2 owns the odd ids.
        assert!(prefer_local(&hops, 1, 2, &mut buf));
        assert_eq!(faces(&buf), [11, 10, 13, 12]);
        // Shard 0 already has its own first in each cost.
        assert!(!prefer_local(&hops, 0, 2, &mut buf));
    }

    #[test]
    fn cost_still_decides_first() {
        // The local next hop (11) is dearer: it stays behind.
        let hops = [hop(10, 1), hop(11, 2)];
        let mut buf = SmallVec::new();
        assert!(!prefer_local(&hops, 1, 2, &mut buf));
    }

    #[test]
    fn one_shard_keeps_the_fib_order() {
        let hops = [hop(10, 5), hop(11, 5)];
        let mut buf = SmallVec::new();
        assert!(!prefer_local(&hops, 0, 1, &mut buf));
        assert!(buf.is_empty());
    }

    #[test]
    fn several_remote_before_a_local_one() {
        let hops = [hop(1, 0), hop(3, 0), hop(4, 0), hop(5, 0)];
        let mut buf = SmallVec::new();
        assert!(prefer_local(&hops, 0, 2, &mut buf));
        assert_eq!(faces(&buf), [4, 1, 3, 5]);
    }
}
