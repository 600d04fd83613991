//! The forwarding information base: name prefixes with next hops and costs, longest-prefix
//! match over the prefix hashes computed once per packet ([`super::name_table`]).
//!
//! An entry exists only while it has at least one next hop, as in NFD: removing the last next
//! hop removes the prefix.

use core::fmt;

use nameway_wire::{CompactInterest, Name, NameHasher, PrefixHashes};
use smallvec::SmallVec;

use super::face_table::FaceId;
use super::name_table::{NameTable, MAX_PREFIX_DEPTH};

/// One next hop of a FIB entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NextHop {
    /// The upstream face.
    pub face: FaceId,
    /// Routing cost; lower is better.
    pub cost: u64,
}

/// Why a FIB change was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FibError {
    /// The prefix has more than [`MAX_PREFIX_DEPTH`] components (NFD answers 414).
    PrefixTooLong,
    /// The face is not in the face table (NFD answers 410).
    UnknownFace,
}

impl fmt::Display for FibError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PrefixTooLong => write!(f, "prefix longer than {MAX_PREFIX_DEPTH} components"),
            Self::UnknownFace => f.write_str("face not found"),
        }
    }
}

impl std::error::Error for FibError {}

/// The FIB.
#[derive(Debug)]
pub(crate) struct Fib {
    /// Next hops of each prefix, sorted by cost, then by face id.
    table: NameTable<SmallVec<[NextHop; 2]>>,
}

impl Fib {
    pub(crate) fn new() -> Self {
        Self {
            table: NameTable::new(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    /// Adds a next hop, or updates its cost.
    pub(crate) fn add_nexthop(
        &mut self,
        hasher: &NameHasher,
        prefix: &Name,
        face: FaceId,
        cost: u64,
    ) -> Result<(), FibError> {
        let hash = hasher.hash_name(prefix);
        let hops = self
            .table
            .get_or_insert_with(prefix, hash, SmallVec::new)
            .ok_or(FibError::PrefixTooLong)?;
        hops.retain(|h| h.face != face);
        let at = hops
            .iter()
            .position(|h| (h.cost, h.face) > (cost, face))
            .unwrap_or(hops.len());
        hops.insert(at, NextHop { face, cost });
        Ok(())
    }

    /// Removes a next hop; removes the prefix with its last next hop. False when there was no
    /// such next hop.
    pub(crate) fn remove_nexthop(
        &mut self,
        hasher: &NameHasher,
        prefix: &Name,
        face: FaceId,
    ) -> bool {
        let hash = hasher.hash_name(prefix);
        let Some(hops) = self.table.get_mut(prefix, hash) else {
            return false;
        };
        let before = hops.len();
        hops.retain(|h| h.face != face);
        let removed = hops.len() != before;
        if hops.is_empty() {
            self.table.remove(prefix, hash);
        }
        removed
    }

    /// Removes every next hop through `face` (the face is gone).
    pub(crate) fn remove_face(&mut self, face: FaceId) {
        self.table.retain(|_, hops| {
            hops.retain(|h| h.face != face);
            !hops.is_empty()
        });
    }

    /// The next hops of exactly `prefix`.
    pub(crate) fn nexthops_of(&self, hasher: &NameHasher, prefix: &Name) -> Option<&[NextHop]> {
        self.table
            .get(prefix, hasher.hash_name(prefix))
            .map(|h| h.as_slice())
    }

    /// Longest-prefix match: the matched prefix and its next hops.
    #[inline]
    pub(crate) fn longest_prefix_match(
        &self,
        name: &Name,
        hashes: &PrefixHashes,
    ) -> Option<(&Name, &[NextHop])> {
        self.table
            .longest_prefix_match(name, hashes)
            .map(|e| (&e.prefix, e.value.as_slice()))
    }

    /// Longest-prefix match for the name of a PIT entry's Interest, `hashes` being that name's
    /// prefix hashes (which also give its length).
    #[inline]
    pub(crate) fn longest_prefix_match_interest(
        &self,
        interest: &CompactInterest,
        hashes: &PrefixHashes,
    ) -> Option<(&Name, &[NextHop])> {
        self.table
            .longest_prefix_match_parts(hashes.name_len(), interest.name_value(), hashes, |d| {
                interest.prefix_value_len(d)
            })
            .map(|e| (&e.prefix, e.value.as_slice()))
    }

    /// Every entry, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&Name, &[NextHop])> + '_ {
        self.table.iter().map(|e| (&e.prefix, e.value.as_slice()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    fn faces(hops: &[NextHop]) -> Vec<(u64, u64)> {
        hops.iter().map(|h| (h.face.0, h.cost)).collect()
    }

    #[test]
    fn nexthops_sorted_by_cost_and_updated_in_place() {
        let h = NameHasher::with_seed(1);
        let mut fib = Fib::new();
        fib.add_nexthop(&h, &n("/a"), FaceId(300), 10).unwrap();
        fib.add_nexthop(&h, &n("/a"), FaceId(301), 5).unwrap();
        fib.add_nexthop(&h, &n("/a"), FaceId(302), 5).unwrap();
        assert_eq!(
            faces(fib.nexthops_of(&h, &n("/a")).unwrap()),
            [(301, 5), (302, 5), (300, 10)]
        );
        fib.add_nexthop(&h, &n("/a"), FaceId(300), 1).unwrap();
        assert_eq!(
            faces(fib.nexthops_of(&h, &n("/a")).unwrap()),
            [(300, 1), (301, 5), (302, 5)]
        );
        assert_eq!(fib.len(), 1);
    }

    #[test]
    fn entry_goes_with_its_last_nexthop() {
        let h = NameHasher::with_seed(1);
        let mut fib = Fib::new();
        fib.add_nexthop(&h, &n("/a"), FaceId(300), 0).unwrap();
        fib.add_nexthop(&h, &n("/a/b"), FaceId(301), 0).unwrap();
        assert!(!fib.remove_nexthop(&h, &n("/a"), FaceId(999)));
        assert!(fib.remove_nexthop(&h, &n("/a"), FaceId(300)));
        assert_eq!(fib.len(), 1);
        let name = n("/a/c");
        assert!(fib
            .longest_prefix_match(&name, &h.prefix_hashes(&name))
            .is_none());
        fib.add_nexthop(&h, &n("/a/c"), FaceId(301), 0).unwrap();
        fib.remove_face(FaceId(301));
        assert_eq!(fib.len(), 0);
    }

    #[test]
    fn too_deep_prefix_is_refused() {
        let h = NameHasher::with_seed(1);
        let mut fib = Fib::new();
        let deep: Name = (0..33)
            .map(|i| format!("/{i}"))
            .collect::<String>()
            .parse()
            .unwrap();
        assert_eq!(
            fib.add_nexthop(&h, &deep, FaceId(300), 0),
            Err(FibError::PrefixTooLong)
        );
        assert_eq!(fib.len(), 0);
    }

    #[test]
    fn lpm_returns_prefix() {
        let h = NameHasher::with_seed(1);
        let mut fib = Fib::new();
        fib.add_nexthop(&h, &n("/"), FaceId(1), 0).unwrap();
        fib.add_nexthop(&h, &n("/a/b"), FaceId(2), 0).unwrap();
        let name = n("/a/b/c");
        let (prefix, hops) = fib
            .longest_prefix_match(&name, &h.prefix_hashes(&name))
            .unwrap();
        assert_eq!(prefix, &n("/a/b"));
        assert_eq!(hops[0].face, FaceId(2));
        let name = n("/z");
        let (prefix, _) = fib
            .longest_prefix_match(&name, &h.prefix_hashes(&name))
            .unwrap();
        assert!(prefix.is_empty());
    }
}
