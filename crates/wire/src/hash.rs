//! Keyed hashes of every prefix of a name, computed in one pass.
//!
//! The forwarder's tables (PIT, FIB, CS filter) are indexed by these hashes (docs/design.md §3). The hash
//! is foldhash seeded with a per-process random key, so a remote party cannot choose names that
//! collide in our tables without knowing the key; the tables still confirm the full name on a
//! hit, so a collision costs time, never correctness.
//!
//! Prefix `i` covers the first `i` component TLVs (type, length and value bytes), so component
//! boundaries are part of what is hashed: `/ab/c` and `/a/bc` hash differently.

use core::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;

use foldhash::fast::FixedState;
use smallvec::SmallVec;

use crate::name::Name;

/// A keyed hasher for names.
#[derive(Clone, Copy, Debug)]
pub struct NameHasher {
    state: FixedState,
}

/// The hashes of every prefix of one name: `get(0)` is the root name, `get(name.len())` the
/// whole name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrefixHashes {
    hashes: SmallVec<[u64; INLINE_HASHES]>,
}

/// Prefix hashes kept inline: names of up to 11 components.
const INLINE_HASHES: usize = 12;

impl NameHasher {
    /// A hasher with a fixed seed (for tests and for several processes that must agree).
    pub const fn with_seed(seed: u64) -> Self {
        Self {
            state: FixedState::with_seed(seed),
        }
    }

    /// The process-wide hasher, seeded once from the operating system's generator
    /// ([`crate::random::u64`], with its fallback: never a fixed seed, never a panic). Every
    /// table in the process uses it, so hashes agree across threads.
    pub fn process() -> &'static Self {
        static HASHER: OnceLock<NameHasher> = OnceLock::new();
        HASHER.get_or_init(|| Self::with_seed(crate::random::u64()))
    }

    /// Hashes of every prefix of `name`, in one pass over its bytes.
    pub fn prefix_hashes(&self, name: &Name) -> PrefixHashes {
        let mut h = self.state.build_hasher();
        let root = h.finish();
        let n = name.len();
        let hashes = if n < INLINE_HASHES {
            // The common case, into a plain array with the count in a register: a small
            // vector's `push` keeps its length in memory, and each push waited on the
            // previous one's store.
            let mut buf = [0u64; INLINE_HASHES];
            let mut slots = buf.iter_mut();
            if let Some(s) = slots.next() {
                *s = root;
            }
            // Zipping two slices runs on one counter; each component is sliced between the
            // previous end and its own (through `component_wires`, a mapped iterator, the zip
            // kept two counters: 213 instructions at 4 components instead of 201).
            let value = name.value_bytes();
            let mut start = 0;
            for (slot, &end) in slots.zip(name.ends()) {
                let end = usize::from(end);
                h.write(value.get(start..end).unwrap_or_default());
                start = end;
                *slot = h.finish();
            }
            // n + 1 <= INLINE_HASHES, as `from_buf_and_len` requires.
            SmallVec::from_buf_and_len(buf, n + 1)
        } else {
            let mut v = SmallVec::with_capacity(n + 1);
            v.push(root);
            for wire in name.component_wires() {
                h.write(wire);
                v.push(h.finish());
            }
            v
        };
        PrefixHashes { hashes }
    }

    /// Hashes of the prefixes of `name` of up to `depth` components: the same values as
    /// [`NameHasher::prefix_hashes`], cut at `depth` (`name_len()` is
    /// `min(name.len(), depth)`).
    ///
    /// For a table whose deepest entry has `depth` components: a longer name costs no more
    /// than its first `depth` components, and nothing is allocated while `depth` is under 12.
    pub fn prefix_hashes_upto(&self, name: &Name, depth: usize) -> PrefixHashes {
        if name.len() <= depth {
            return self.prefix_hashes(name);
        }
        let mut h = self.state.build_hasher();
        let mut hashes = SmallVec::with_capacity(depth + 1);
        hashes.push(h.finish());
        for wire in name.component_wires().take(depth) {
            h.write(wire);
            hashes.push(h.finish());
        }
        PrefixHashes { hashes }
    }

    /// Hash of the whole name (the same value as `prefix_hashes(name).full()`).
    pub fn hash_name(&self, name: &Name) -> u64 {
        let mut h = self.state.build_hasher();
        for wire in name.component_wires() {
            h.write(wire);
        }
        h.finish()
    }
}

impl PrefixHashes {
    /// Hash of the prefix made of the first `n` components.
    pub fn get(&self, n: usize) -> Option<u64> {
        self.hashes.get(n).copied()
    }

    /// Hash of the whole name.
    pub fn full(&self) -> u64 {
        self.hashes.last().copied().unwrap_or_default()
    }

    /// Number of components of the hashed name.
    pub fn name_len(&self) -> usize {
        self.hashes.len().saturating_sub(1)
    }

    /// All hashes, from the root prefix to the whole name.
    pub fn as_slice(&self) -> &[u64] {
        &self.hashes
    }
}

/// A hasher for maps keyed by identifiers that this process hands out itself (face ids, entry
/// ids): small and sequential, never chosen by a peer, so a multiply spreads them well enough
/// and SipHash's protection against chosen keys buys nothing. Not for keys a peer can choose
/// (names, addresses).
#[derive(Clone, Copy, Debug, Default)]
pub struct IdHasher(u64);

impl core::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        // An odd multiplier permutes the low bits (a table's bucket) and mixes into the high
        // ones (hashbrown's control byte).
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    #[test]
    fn prefix_hashes_agree_with_prefix_names() {
        let h = NameHasher::with_seed(7);
        let name = n("/a/b/c/seg=4");
        let ph = h.prefix_hashes(&name);
        assert_eq!(ph.name_len(), 4);
        for i in 0..=4 {
            assert_eq!(ph.get(i), Some(h.hash_name(&name.prefix(i))), "prefix {i}");
        }
        assert_eq!(ph.full(), h.hash_name(&name));
        assert_eq!(ph.get(5), None);
    }

    #[test]
    fn short_and_long_names_agree_with_their_prefixes() {
        // Up to 11 components the hashes are built inline, longer names spill.
        let h = NameHasher::with_seed(7);
        for len in [0usize, 1, 10, 11, 12, 20] {
            let uri: String = (0..len).map(|i| format!("/c{i}")).collect();
            let name = if uri.is_empty() {
                Name::root()
            } else {
                n(&uri)
            };
            let ph = h.prefix_hashes(&name);
            assert_eq!(ph.name_len(), len);
            for i in 0..=len {
                assert_eq!(
                    ph.get(i),
                    Some(h.hash_name(&name.prefix(i))),
                    "{len}: prefix {i}"
                );
            }
            assert_eq!(ph.get(len + 1), None);
        }
    }

    #[test]
    fn hashes_upto_a_depth_are_a_cut_of_all_hashes() {
        let h = NameHasher::with_seed(7);
        let uri: String = (0..20).map(|i| format!("/c{i}")).collect();
        let name = n(&uri);
        let all = h.prefix_hashes(&name);
        for depth in [0usize, 1, 4, 11, 12, 19, 20, 21, 40] {
            let cut = h.prefix_hashes_upto(&name, depth);
            assert_eq!(cut.name_len(), depth.min(20), "depth {depth}");
            assert_eq!(
                cut.as_slice(),
                &all.as_slice()[..=depth.min(20)],
                "depth {depth}"
            );
        }
        assert_eq!(
            h.prefix_hashes_upto(&Name::root(), 3),
            h.prefix_hashes(&Name::root())
        );
    }

    #[test]
    fn component_boundaries_matter() {
        let h = NameHasher::with_seed(1);
        assert_ne!(h.hash_name(&n("/ab/c")), h.hash_name(&n("/a/bc")));
        assert_eq!(h.hash_name(&n("/a")), h.hash_name(&n("/8=a")));
        assert_ne!(h.hash_name(&n("/seg=1")), h.hash_name(&n("/%01")));
    }

    #[test]
    fn seeds_change_hashes() {
        let name = n("/x/y");
        assert_ne!(
            NameHasher::with_seed(1).hash_name(&name),
            NameHasher::with_seed(2).hash_name(&name)
        );
        let p = NameHasher::process();
        assert_eq!(p.hash_name(&name), NameHasher::process().hash_name(&name));
    }

    #[test]
    fn id_hasher_spreads_sequential_ids() {
        use core::hash::{BuildHasher, BuildHasherDefault};
        let b = BuildHasherDefault::<IdHasher>::default();
        let hashes: Vec<u64> = (256u64..256 + 1024).map(|id| b.hash_one(id)).collect();
        // The low 10 bits (a 1024-bucket table's index) are all distinct...
        let mut low: Vec<u64> = hashes.iter().map(|h| h & 1023).collect();
        low.sort_unstable();
        low.dedup();
        assert_eq!(low.len(), 1024);
        // ...and the top 7 bits (the control byte) take most of their 128 values.
        let mut top: Vec<u64> = hashes.iter().map(|h| h >> 57).collect();
        top.sort_unstable();
        top.dedup();
        assert!(top.len() > 100, "{}", top.len());
    }
}
