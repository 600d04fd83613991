//! [`NameTree`]: the in-memory index of registrations that look-ups use.
//!
//! One hash map from prefix to its registrations; longest-prefix match probes the name's
//! prefixes from the longest down (a name has at most a few dozen components), so a look-up
//! costs a handful of hash probes whatever the registry's size.

use std::collections::HashMap;

use nameway_wire::Name;

use crate::store::{Registration, RegistrationKey};

/// Registrations by prefix.
#[derive(Debug, Default)]
pub struct NameTree {
    map: HashMap<Name, Vec<Registration>, foldhash::fast::RandomState>,
    len: usize,
}

impl NameTree {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many registrations (not prefixes) it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many distinct prefixes it holds.
    pub fn prefixes(&self) -> usize {
        self.map.len()
    }

    /// Inserts `reg`, replacing the registration with the same key.
    pub fn upsert(&mut self, reg: Registration) {
        let entries = self.map.entry(reg.prefix.clone()).or_default();
        if let Some(slot) = entries
            .iter_mut()
            .find(|e| e.node == reg.node && e.face == reg.face)
        {
            *slot = reg;
        } else {
            entries.push(reg);
            self.len += 1;
        }
    }

    /// Removes the registration `key`; whether it was there.
    pub fn remove(&mut self, key: &RegistrationKey) -> bool {
        let Some(entries) = self.map.get_mut(&key.prefix) else {
            return false;
        };
        let before = entries.len();
        entries.retain(|e| !(e.node == key.node && e.face == key.face));
        let removed = before != entries.len();
        if entries.is_empty() {
            self.map.remove(&key.prefix);
        }
        if removed {
            self.len -= 1;
        }
        removed
    }

    /// The registrations of exactly `prefix`.
    pub fn exact(&self, prefix: &Name) -> &[Registration] {
        self.map.get(prefix).map_or(&[], Vec::as_slice)
    }

    /// The longest registered prefix of `name` and its registrations.
    pub fn longest_prefix_match(&self, name: &Name) -> Option<&[Registration]> {
        (0..=name.len())
            .rev()
            .find_map(|n| self.map.get(&name.prefix(n)))
            .map(Vec::as_slice)
    }

    /// Every registration, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Registration> + '_ {
        self.map.values().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(prefix: &str, node: &str, face: u64) -> Registration {
        Registration {
            prefix: prefix.parse().unwrap(),
            node: node.into(),
            face,
            origin: 0,
            cost: 0,
            flags: 0,
            expires_ms: 10,
            owner_key: None,
            announcement: None,
        }
    }

    #[test]
    fn longest_prefix_match_prefers_the_longest() {
        let mut t = NameTree::new();
        t.upsert(reg("/a", "/r1", 1));
        t.upsert(reg("/a/b", "/r2", 1));
        let hit = t.longest_prefix_match(&"/a/b/c".parse().unwrap()).unwrap();
        assert_eq!(hit[0].node, "/r2");
        let hit = t.longest_prefix_match(&"/a/x".parse().unwrap()).unwrap();
        assert_eq!(hit[0].node, "/r1");
        assert!(t.longest_prefix_match(&"/z".parse().unwrap()).is_none());
    }

    #[test]
    fn upsert_replaces_same_key_and_remove_counts() {
        let mut t = NameTree::new();
        t.upsert(reg("/a", "/r1", 1));
        let mut renewed = reg("/a", "/r1", 1);
        renewed.expires_ms = 99;
        t.upsert(renewed);
        t.upsert(reg("/a", "/r1", 2));
        assert_eq!(t.len(), 2);
        assert_eq!(t.exact(&"/a".parse().unwrap())[0].expires_ms, 99);
        assert!(t.remove(&reg("/a", "/r1", 1).key()));
        assert!(!t.remove(&reg("/a", "/r1", 1).key()));
        assert!(t.remove(&reg("/a", "/r1", 2).key()));
        assert!(t.is_empty());
        assert_eq!(t.prefixes(), 0);
    }
}
