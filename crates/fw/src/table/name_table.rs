//! A name-prefix table with longest-prefix match over precomputed prefix hashes: one hash table
//! per prefix length, probed from the longest length down, skipping lengths that hold nothing
//! (a 64-bit mask), confirming the full prefix bytes on a hash hit. The FIB, the strategy
//! choice table and the security policy are built on it.
//!
//! Per-length tables keep the tables of sparse lengths small and hot in cache: a million routes
//! at one length do not slow down the probe of another length.

use hashbrown::HashTable;
use nameway_wire::{Name, PrefixHashes};

use super::same_name_value;

/// Deepest prefix a table holds: NFD's `NameTree::getMaxDepth()` (and `Fib::getMaxDepth()`).
pub const MAX_PREFIX_DEPTH: usize = 32;

/// One prefix and its value.
#[derive(Clone, Debug)]
pub(crate) struct NameEntry<V> {
    pub(crate) prefix: Name,
    /// Hash of `prefix`, kept so that entries can be removed without the hasher.
    hash: u64,
    pub(crate) value: V,
}

/// Prefixes of up to [`MAX_PREFIX_DEPTH`] components, each with a value.
#[derive(Clone, Debug)]
pub(crate) struct NameTable<V> {
    /// `by_len[l]` maps the hash of an `l`-component prefix to its slot.
    by_len: Vec<HashTable<(u64, u32)>>,
    /// Bit `l` is set when `by_len[l]` is not empty.
    mask: u64,
    /// The slot of the root prefix, the one name of length 0: a look-up that falls through
    /// to it (the default strategy, a default route) needs no probe.
    root: Option<u32>,
    slots: Vec<Option<NameEntry<V>>>,
    free: Vec<u32>,
    len: usize,
}

impl<V> NameTable<V> {
    pub(crate) fn new() -> Self {
        Self {
            by_len: (0..=MAX_PREFIX_DEPTH).map(|_| HashTable::new()).collect(),
            mask: 0,
            root: None,
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The component count of the deepest prefix in the table; `None` when it is empty.
    pub(crate) fn max_depth(&self) -> Option<usize> {
        (self.mask != 0).then(|| 63 - self.mask.leading_zeros() as usize)
    }

    /// The slot of exactly `prefix` (whose whole-name hash is `hash`).
    fn find_slot(&self, prefix: &Name, hash: u64) -> Option<u32> {
        let table = self.by_len.get(prefix.len())?;
        let slots = &self.slots;
        table
            .find(hash, |&(h, s)| {
                h == hash && slot_prefix_is(slots, s, prefix.value_bytes())
            })
            .map(|&(_, s)| s)
    }

    /// The value stored for exactly `prefix`.
    pub(crate) fn get(&self, prefix: &Name, hash: u64) -> Option<&V> {
        let s = self.find_slot(prefix, hash)?;
        self.slots.get(s as usize)?.as_ref().map(|e| &e.value)
    }

    /// The value stored for exactly `prefix`, mutably.
    pub(crate) fn get_mut(&mut self, prefix: &Name, hash: u64) -> Option<&mut V> {
        let s = self.find_slot(prefix, hash)?;
        self.slots
            .get_mut(s as usize)?
            .as_mut()
            .map(|e| &mut e.value)
    }

    /// Inserts `value` for `prefix` unless present; returns the stored value either way, or
    /// `None` when the prefix is deeper than [`MAX_PREFIX_DEPTH`].
    pub(crate) fn get_or_insert_with(
        &mut self,
        prefix: &Name,
        hash: u64,
        make: impl FnOnce() -> V,
    ) -> Option<&mut V> {
        let depth = prefix.len();
        if depth > MAX_PREFIX_DEPTH {
            return None;
        }
        let slot = match self.find_slot(prefix, hash) {
            Some(s) => s,
            None => {
                let entry = NameEntry {
                    prefix: prefix.clone(),
                    hash,
                    value: make(),
                };
                let s = match self.free.pop() {
                    Some(s) => {
                        if let Some(slot) = self.slots.get_mut(s as usize) {
                            *slot = Some(entry);
                        }
                        s
                    }
                    None => {
                        self.slots.push(Some(entry));
                        (self.slots.len() - 1) as u32
                    }
                };
                let table = self.by_len.get_mut(depth)?;
                table.insert_unique(hash, (hash, s), |&(h, _)| h);
                self.mask |= 1 << depth;
                if depth == 0 {
                    self.root = Some(s);
                }
                self.len += 1;
                s
            }
        };
        self.slots
            .get_mut(slot as usize)?
            .as_mut()
            .map(|e| &mut e.value)
    }

    /// Removes `prefix`; returns its value.
    pub(crate) fn remove(&mut self, prefix: &Name, hash: u64) -> Option<V> {
        let depth = prefix.len();
        let table = self.by_len.get_mut(depth)?;
        let slots = &self.slots;
        let found = table
            .find_entry(hash, |&(h, s)| {
                h == hash && slot_prefix_is(slots, s, prefix.value_bytes())
            })
            .ok()?;
        let ((_, s), _) = found.remove();
        if table.is_empty() {
            self.mask &= !(1 << depth);
        }
        if depth == 0 {
            self.root = None;
        }
        self.len -= 1;
        self.free.push(s);
        self.slots.get_mut(s as usize)?.take().map(|e| e.value)
    }

    /// The longest prefix of `name` in the table, `hashes` being the name's prefix hashes.
    #[inline]
    pub(crate) fn longest_prefix_match(
        &self,
        name: &Name,
        hashes: &PrefixHashes,
    ) -> Option<&NameEntry<V>> {
        self.longest_prefix_match_parts(name.len(), name.value_bytes(), hashes, |d| {
            name.prefix_value_len(d)
        })
    }

    /// [`NameTable::longest_prefix_match`] for a name given as its TLV-VALUE `value` of `len`
    /// components, `prefix_len(d)` being the value length of its first `d` components (a PIT
    /// entry keeps no component offsets: it walks the components instead).
    #[inline(always)]
    pub(crate) fn longest_prefix_match_parts(
        &self,
        len: usize,
        value: &[u8],
        hashes: &PrefixHashes,
        prefix_len: impl Fn(usize) -> usize,
    ) -> Option<&NameEntry<V>> {
        let max = len.min(MAX_PREFIX_DEPTH).min(hashes.name_len());
        // Lengths 0..=max that hold something, probed from the longest.
        let mut pending = self.mask & (u64::MAX >> (63 - max));
        while pending != 0 {
            let depth = 63 - pending.leading_zeros() as usize;
            pending &= !(1 << depth);
            if depth == 0 {
                return self.slots.get(self.root? as usize)?.as_ref();
            }
            let (Some(table), Some(hash)) = (self.by_len.get(depth), hashes.get(depth)) else {
                continue;
            };
            let Some(prefix) = value.get(..prefix_len(depth)) else {
                continue;
            };
            let slots = &self.slots;
            let hit = table.find(hash, |&(h, s)| {
                h == hash && slot_prefix_is(slots, s, prefix)
            });
            if let Some(&(_, s)) = hit {
                return self.slots.get(s as usize)?.as_ref();
            }
        }
        None
    }

    /// Every entry, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &NameEntry<V>> + '_ {
        self.slots.iter().filter_map(Option::as_ref)
    }

    /// Keeps only the entries for which `keep` returns true (it may also change them).
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&Name, &mut V) -> bool) {
        let mut doomed = Vec::new();
        for e in self.slots.iter_mut().flatten() {
            if !keep(&e.prefix, &mut e.value) {
                doomed.push((e.prefix.clone(), e.hash));
            }
        }
        for (prefix, hash) in doomed {
            self.remove(&prefix, hash);
        }
    }
}

#[inline]
fn slot_prefix_is<V>(slots: &[Option<NameEntry<V>>], s: u32, value: &[u8]) -> bool {
    slots
        .get(s as usize)
        .and_then(Option::as_ref)
        .is_some_and(|e| same_name_value(e.prefix.value_bytes(), value))
}

#[cfg(test)]
mod tests {
    use nameway_wire::NameHasher;

    use super::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    fn insert(t: &mut NameTable<u32>, h: &NameHasher, s: &str, v: u32) {
        let name = n(s);
        *t.get_or_insert_with(&name, h.hash_name(&name), || 0)
            .unwrap() = v;
    }

    fn lpm(t: &NameTable<u32>, h: &NameHasher, s: &str) -> Option<(String, u32)> {
        let name = n(s);
        t.longest_prefix_match(&name, &h.prefix_hashes(&name))
            .map(|e| (e.prefix.to_string(), e.value))
    }

    #[test]
    fn longest_prefix_wins() {
        let h = NameHasher::with_seed(3);
        let mut t = NameTable::new();
        assert_eq!(lpm(&t, &h, "/a"), None);
        insert(&mut t, &h, "/", 1);
        insert(&mut t, &h, "/a", 2);
        insert(&mut t, &h, "/a/b/c", 3);
        assert_eq!(lpm(&t, &h, "/a/b"), Some(("/a".into(), 2)));
        assert_eq!(lpm(&t, &h, "/a/b/c/d"), Some(("/a/b/c".into(), 3)));
        assert_eq!(lpm(&t, &h, "/b"), Some(("/".into(), 1)));
        assert_eq!(lpm(&t, &h, "/a/bc"), Some(("/a".into(), 2)));
        assert_eq!(t.len(), 3);
        assert_eq!(t.max_depth(), Some(3));
        let a = n("/a");
        assert_eq!(t.remove(&a, h.hash_name(&a)), Some(2));
        assert_eq!(lpm(&t, &h, "/a/b"), Some(("/".into(), 1)));
        assert_eq!(t.remove(&a, h.hash_name(&a)), None);
        // Without the root entry, a name under no prefix matches nothing; with it back,
        // the root answers again.
        let root = Name::root();
        assert_eq!(t.remove(&root, h.hash_name(&root)), Some(1));
        assert_eq!(lpm(&t, &h, "/b"), None);
        assert_eq!(lpm(&t, &h, "/a/b/c"), Some(("/a/b/c".into(), 3)));
        let abc = n("/a/b/c");
        assert_eq!(t.remove(&abc, h.hash_name(&abc)), Some(3));
        assert_eq!(t.max_depth(), None);
        insert(&mut t, &h, "/", 4);
        assert_eq!(lpm(&t, &h, "/b"), Some(("/".into(), 4)));
    }

    #[test]
    fn hash_collisions_are_confirmed_by_bytes() {
        // A table whose hasher is constant: every prefix collides.
        let mut t: NameTable<u32> = NameTable::new();
        for (s, v) in [("/x", 1), ("/y", 2)] {
            *t.get_or_insert_with(&n(s), 42, || 0).unwrap() = v;
        }
        assert_eq!(t.get(&n("/x"), 42), Some(&1));
        assert_eq!(t.get(&n("/y"), 42), Some(&2));
        assert_eq!(t.get(&n("/z"), 42), None);
    }

    #[test]
    fn depth_is_capped_and_deep_names_still_match() {
        let h = NameHasher::with_seed(3);
        let mut t = NameTable::new();
        let deep: Name = (0..33)
            .map(|i| format!("/{i}"))
            .collect::<String>()
            .parse()
            .unwrap();
        assert!(t
            .get_or_insert_with(&deep, h.hash_name(&deep), || 0u32)
            .is_none());
        let p32 = deep.prefix(32);
        assert!(t
            .get_or_insert_with(&p32, h.hash_name(&p32), || 7)
            .is_some());
        let hit = t.longest_prefix_match(&deep, &h.prefix_hashes(&deep));
        assert_eq!(hit.map(|e| e.value), Some(7));
    }

    #[test]
    fn retain_and_reuse_slots() {
        let h = NameHasher::with_seed(5);
        let mut t = NameTable::new();
        for i in 0..10 {
            insert(&mut t, &h, &format!("/p/{i}"), i);
        }
        t.retain(|_, v| *v % 2 == 0);
        assert_eq!(t.len(), 5);
        assert_eq!(lpm(&t, &h, "/p/3/x"), None);
        assert_eq!(lpm(&t, &h, "/p/4/x"), Some(("/p/4".into(), 4)));
        insert(&mut t, &h, "/q", 99);
        assert_eq!(t.iter().count(), 6);
    }
}
