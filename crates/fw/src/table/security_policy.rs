//! The security policy (issue 13): which [`SecurityLevel`] protects the packets under a name
//! prefix between secure neighbours, by longest-prefix match.
//!
//! Sans-I/O and without locks, like every table here: the owner (a face, management) shares it
//! as it needs. It is built on the hashed name-prefix table that the FIB and the strategy
//! choice use ([`super::name_table`]): one hash table per prefix length, probed from the
//! longest, every hash hit confirmed against the stored name's bytes, so a hash collision costs
//! one comparison, never a wrong level.
//!
//! A prefix may map to [`SecurityLevel::None`], which carves a clear subtree out of an
//! encrypted one (`/` → aes-256-gcm, `/public` → none). A name under no prefix gets
//! [`SecurityLevel::None`].

use core::fmt;

use nameway_wire::lp::SecurityLevel;
use nameway_wire::{Name, NameHasher, PrefixHashes};

use super::name_table::{NameTable, MAX_PREFIX_DEPTH};

/// Name prefix → [`SecurityLevel`], longest-prefix match on name hashes.
///
/// The table owns a [`NameHasher`] (by default the process-wide one, which the
/// [`Forwarder`](crate::Forwarder) also uses unless its `Config::hasher` says otherwise).
/// [`SecurityPolicy::lookup`] hashes the name itself, only as deep as the deepest prefix in the
/// table; [`SecurityPolicy::lookup_hashes`] takes prefix hashes the caller already has, which
/// must come from [`SecurityPolicy::hasher`].
///
/// ```
/// use nameway_fw::SecurityPolicy;
/// use nameway_wire::lp::SecurityLevel;
/// use nameway_wire::Name;
///
/// let n = |s: &str| s.parse::<Name>().unwrap();
/// let mut policy = SecurityPolicy::new();
/// policy.set(n("/"), SecurityLevel::ChaCha20Poly1305).unwrap();
/// policy.set(n("/video"), SecurityLevel::Aes256Gcm).unwrap();
/// policy.set(n("/video/public"), SecurityLevel::None).unwrap();
///
/// assert_eq!(policy.lookup(&n("/video/a/seg=1")), SecurityLevel::Aes256Gcm);
/// assert_eq!(policy.lookup(&n("/video/public/x")), SecurityLevel::None);
/// assert_eq!(policy.lookup(&n("/chat")), SecurityLevel::ChaCha20Poly1305);
/// assert!(policy.unset(&n("/video")));
/// assert_eq!(policy.lookup(&n("/video/a/seg=1")), SecurityLevel::ChaCha20Poly1305);
/// ```
#[derive(Clone)]
pub struct SecurityPolicy {
    hasher: NameHasher,
    table: NameTable<SecurityLevel>,
}

/// Why a policy change was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SecurityPolicyError {
    /// The prefix has more than [`MAX_PREFIX_DEPTH`] components, as in the FIB.
    PrefixTooLong,
}

impl fmt::Display for SecurityPolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PrefixTooLong => write!(f, "prefix longer than {MAX_PREFIX_DEPTH} components"),
        }
    }
}

impl std::error::Error for SecurityPolicyError {}

impl SecurityPolicy {
    /// An empty policy (every name [`SecurityLevel::None`]) hashing with
    /// [`NameHasher::process`].
    pub fn new() -> Self {
        Self::with_hasher(*NameHasher::process())
    }

    /// An empty policy hashing with `hasher`: the forwarder's, when it was given its own, or
    /// a fixed seed in tests.
    pub fn with_hasher(hasher: NameHasher) -> Self {
        Self {
            hasher,
            table: NameTable::new(),
        }
    }

    /// The hasher whose prefix hashes [`SecurityPolicy::lookup_hashes`] expects.
    pub fn hasher(&self) -> &NameHasher {
        &self.hasher
    }

    /// Number of prefixes with a level (the root prefix included when set).
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether no prefix has a level.
    pub fn is_empty(&self) -> bool {
        self.table.len() == 0
    }

    /// Sets the level of `prefix` (the root prefix `/` sets the link-wide default), replacing
    /// any level it had; returns the level it replaced.
    ///
    /// # Errors
    /// [`SecurityPolicyError::PrefixTooLong`] when `prefix` has more than
    /// [`MAX_PREFIX_DEPTH`] components; the table is unchanged.
    pub fn set(
        &mut self,
        prefix: Name,
        level: SecurityLevel,
    ) -> Result<Option<SecurityLevel>, SecurityPolicyError> {
        let hash = self.hasher.hash_name(&prefix);
        if let Some(old) = self.table.get_mut(&prefix, hash) {
            return Ok(Some(core::mem::replace(old, level)));
        }
        self.table
            .get_or_insert_with(&prefix, hash, || level)
            .ok_or(SecurityPolicyError::PrefixTooLong)?;
        Ok(None)
    }

    /// Removes the level of exactly `prefix`; names under it fall back to the next shorter
    /// prefix. False when `prefix` had no level.
    pub fn unset(&mut self, prefix: &Name) -> bool {
        let hash = self.hasher.hash_name(prefix);
        self.table.remove(prefix, hash).is_some()
    }

    /// The level set for exactly `prefix`, if any (no longest-prefix match).
    pub fn get(&self, prefix: &Name) -> Option<SecurityLevel> {
        self.table
            .get(prefix, self.hasher.hash_name(prefix))
            .copied()
    }

    /// The level of the longest prefix of `name` in the table; [`SecurityLevel::None`] when no
    /// prefix matches.
    ///
    /// Hashes only the first components of `name`, as many as the deepest prefix in the table
    /// has, and allocates nothing while that depth is under 12 components. An empty table
    /// answers without hashing.
    #[inline]
    pub fn lookup(&self, name: &Name) -> SecurityLevel {
        let Some(depth) = self.table.max_depth() else {
            return SecurityLevel::None;
        };
        self.lookup_hashes(name, &self.hasher.prefix_hashes_upto(name, depth))
    }

    /// [`SecurityPolicy::lookup`] with the prefix hashes of `name` already computed (once per
    /// packet, as the forwarder does for the FIB) by [`SecurityPolicy::hasher`]. Hashes of
    /// only the first components of `name` are enough: prefixes longer than `hashes` covers
    /// are not probed.
    ///
    /// Hashes from another hasher give no wrong level (every hit is confirmed against the
    /// prefix bytes) but miss prefixes that should match.
    #[inline]
    pub fn lookup_hashes(&self, name: &Name, hashes: &PrefixHashes) -> SecurityLevel {
        self.table
            .longest_prefix_match(name, hashes)
            .map_or(SecurityLevel::None, |e| e.value)
    }

    /// Every `(prefix, level)`, sorted by prefix in NDN canonical order (the root first), for
    /// listing.
    pub fn iter(&self) -> impl Iterator<Item = (&Name, SecurityLevel)> + '_ {
        let mut entries: Vec<(&Name, SecurityLevel)> =
            self.table.iter().map(|e| (&e.prefix, e.value)).collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        entries.into_iter()
    }
}

impl Default for SecurityPolicy {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for SecurityPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.iter().map(|(p, l)| (p.to_string(), l.name())))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;
    use SecurityLevel::{Aes256Gcm, ChaCha20, ChaCha20Poly1305, Cpa, None as Clear};

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    fn policy(entries: &[(&str, SecurityLevel)]) -> SecurityPolicy {
        let mut p = SecurityPolicy::with_hasher(NameHasher::with_seed(13));
        for &(prefix, level) in entries {
            p.set(n(prefix), level).unwrap();
        }
        p
    }

    /// A name of `len` components `/0/1/.../len-1`.
    fn deep(len: usize) -> Name {
        if len == 0 {
            return Name::root();
        }
        n(&(0..len).map(|i| format!("/{i}")).collect::<String>())
    }

    #[test]
    fn longest_prefix_picks_the_level() {
        let p = policy(&[("/a", Cpa), ("/a/b/c", Aes256Gcm), ("/a/b", ChaCha20)]);
        assert_eq!(p.lookup(&n("/a")), Cpa);
        assert_eq!(p.lookup(&n("/a/x")), Cpa);
        assert_eq!(p.lookup(&n("/a/b")), ChaCha20);
        assert_eq!(p.lookup(&n("/a/b/x/y")), ChaCha20);
        assert_eq!(p.lookup(&n("/a/b/c/d")), Aes256Gcm);
        assert_eq!(p.lookup(&n("/b/a/b/c")), Clear);
        assert_eq!(p.lookup(&Name::root()), Clear);
        let name = n("/a/b/c/d");
        assert_eq!(
            p.lookup_hashes(&name, &p.hasher().prefix_hashes(&name)),
            Aes256Gcm
        );
    }

    #[test]
    fn unset_falls_back_to_the_shorter_prefix() {
        let mut p = policy(&[("/a", Cpa), ("/a/b", Aes256Gcm)]);
        assert!(p.unset(&n("/a/b")));
        assert_eq!(p.lookup(&n("/a/b/c")), Cpa);
        assert!(!p.unset(&n("/a/b")), "already gone");
        assert!(!p.unset(&n("/zzz")), "never set");
        assert!(!p.unset(&Name::root()), "root never set");
        assert!(p.unset(&n("/a")));
        assert_eq!(p.lookup(&n("/a/b/c")), Clear);
        assert!(p.is_empty());
        assert_eq!(p.len(), 0);
    }

    #[test]
    fn root_is_the_link_wide_default() {
        let mut p = policy(&[("/", ChaCha20Poly1305), ("/public", Clear)]);
        assert_eq!(p.lookup(&Name::root()), ChaCha20Poly1305);
        assert_eq!(p.lookup(&n("/x/y/z")), ChaCha20Poly1305);
        assert_eq!(p.lookup(&deep(40)), ChaCha20Poly1305);
        assert_eq!(p.lookup(&n("/public/x")), Clear, "a clear subtree");
        assert_eq!(p.get(&Name::root()), Some(ChaCha20Poly1305));
        assert!(p.unset(&Name::root()));
        assert_eq!(p.lookup(&n("/x/y/z")), Clear);
        assert_eq!(p.len(), 1);
    }

    #[test]
    fn set_replaces_and_gives_the_old_level() {
        let mut p = policy(&[]);
        assert_eq!(p.set(n("/a"), Cpa), Ok(None));
        assert_eq!(p.set(n("/a"), Aes256Gcm), Ok(Some(Cpa)));
        assert_eq!(p.lookup(&n("/a/b")), Aes256Gcm);
        assert_eq!(p.len(), 1);
    }

    #[test]
    fn exact_names_and_component_boundaries() {
        let p = policy(&[("/a/b", Aes256Gcm), ("/ab", Cpa)]);
        assert_eq!(p.lookup(&n("/a/b")), Aes256Gcm, "a name equal to a prefix");
        assert_eq!(p.get(&n("/a/b")), Some(Aes256Gcm));
        assert_eq!(p.get(&n("/a/b/c")), None, "get is exact");
        assert_eq!(p.get(&n("/a")), None);
        assert_eq!(p.lookup(&n("/a")), Clear, "shorter than the prefix");
        assert_eq!(p.lookup(&n("/a/bc")), Clear);
        assert_eq!(p.lookup(&n("/a/b/c")), Aes256Gcm);
        assert_eq!(p.lookup(&n("/ab/c")), Cpa);
        assert_eq!(p.lookup(&n("/abc")), Clear);
        // Typed components differ from generic ones with the same bytes.
        assert_eq!(p.lookup(&n("/a/seg=98")), Clear);
    }

    #[test]
    fn hash_hits_are_confirmed_by_the_stored_name() {
        // Hashes of /a/x handed in with the name /b/x: the probe at length 1 hits /a's hash,
        // the stored bytes say /a, not /b.
        let p = policy(&[("/a", Aes256Gcm)]);
        let hashes = p.hasher().prefix_hashes(&n("/a/x"));
        assert_eq!(p.lookup_hashes(&n("/b/x"), &hashes), Clear);
        // Hashes of another hasher miss, never mismatch.
        let other = NameHasher::with_seed(14).prefix_hashes(&n("/a/x"));
        assert_eq!(p.lookup_hashes(&n("/a/x"), &other), Clear);
        // Hashes cut short probe only the prefixes they cover.
        let name = n("/a/x");
        let cut = p.hasher().prefix_hashes_upto(&name, 1);
        assert_eq!(p.lookup_hashes(&name, &cut), Aes256Gcm);
        let root_only = p.hasher().prefix_hashes_upto(&name, 0);
        assert_eq!(p.lookup_hashes(&name, &root_only), Clear);
    }

    #[test]
    fn depth_is_capped_and_deep_names_still_match() {
        let mut p = policy(&[]);
        assert_eq!(
            p.set(deep(MAX_PREFIX_DEPTH + 1), Cpa),
            Err(SecurityPolicyError::PrefixTooLong)
        );
        assert!(p.is_empty());
        assert_eq!(p.set(deep(MAX_PREFIX_DEPTH), Aes256Gcm), Ok(None));
        assert_eq!(p.lookup(&deep(MAX_PREFIX_DEPTH + 8)), Aes256Gcm);
        assert_eq!(p.lookup(&deep(MAX_PREFIX_DEPTH)), Aes256Gcm);
        assert_eq!(p.lookup(&deep(MAX_PREFIX_DEPTH - 1)), Clear);
        // Prefixes on either side of the 12 inline hashes, names longer still.
        p.set(deep(3), Cpa).unwrap();
        p.set(deep(15), ChaCha20).unwrap();
        assert_eq!(p.lookup(&deep(14)), Cpa);
        assert_eq!(p.lookup(&deep(20)), ChaCha20);
        assert!(p.unset(&deep(MAX_PREFIX_DEPTH)));
        assert_eq!(p.lookup(&deep(40)), ChaCha20);
        let name = deep(40);
        assert_eq!(
            p.lookup_hashes(&name, &p.hasher().prefix_hashes(&name)),
            ChaCha20
        );
    }

    #[test]
    fn iter_lists_in_canonical_order() {
        let p = policy(&[
            ("/b", Cpa),
            ("/aa", Cpa),
            ("/a/b", ChaCha20),
            ("/", Aes256Gcm),
            ("/a", Clear),
        ]);
        let listed: Vec<(String, SecurityLevel)> =
            p.iter().map(|(n, l)| (n.to_string(), l)).collect();
        assert_eq!(
            listed,
            [
                ("/".to_string(), Aes256Gcm),
                ("/a".to_string(), Clear),
                ("/a/b".to_string(), ChaCha20),
                ("/b".to_string(), Cpa),
                ("/aa".to_string(), Cpa),
            ]
        );
        assert_eq!(
            format!("{p:?}"),
            r#"{"/": "aes-256-gcm", "/a": "none", "/a/b": "chacha20", "/b": "cpa", "/aa": "cpa"}"#
        );
    }

    /// Components that share bytes across boundaries (`/a/b` against `/ab`).
    const PARTS: [&str; 4] = ["a", "b", "ab", "c"];

    fn name_of(parts: &[usize]) -> Name {
        if parts.is_empty() {
            return Name::root();
        }
        n(&parts
            .iter()
            .map(|&i| format!("/{}", PARTS[i]))
            .collect::<String>())
    }

    /// The longest prefix of `name` in `model`, by comparing components.
    fn naive_lpm(model: &BTreeMap<Name, SecurityLevel>, name: &Name) -> SecurityLevel {
        model
            .iter()
            .filter(|(p, _)| p.len() <= name.len() && name.prefix(p.len()) == **p)
            .max_by_key(|(p, _)| p.len())
            .map_or(Clear, |(_, &l)| l)
    }

    proptest! {
        /// Any sequence of sets and unsets leaves the table answering every look-up as a
        /// linear scan of a plain map does, and listing exactly the map.
        #[test]
        fn agrees_with_a_linear_scan(
            seed in any::<u64>(),
            ops in prop::collection::vec(
                (any::<bool>(), prop::collection::vec(0..PARTS.len(), 0..5), 0..SecurityLevel::ALL.len()),
                0..40,
            ),
            queries in prop::collection::vec(prop::collection::vec(0..PARTS.len(), 0..8), 1..30),
        ) {
            let mut p = SecurityPolicy::with_hasher(NameHasher::with_seed(seed));
            let mut model = BTreeMap::new();
            for (set, parts, level) in ops {
                let prefix = name_of(&parts);
                if set {
                    let level = SecurityLevel::ALL[level];
                    prop_assert_eq!(p.set(prefix.clone(), level), Ok(model.insert(prefix, level)));
                } else {
                    prop_assert_eq!(p.unset(&prefix), model.remove(&prefix).is_some());
                }
            }
            prop_assert_eq!(p.len(), model.len());
            let listed: Vec<(Name, SecurityLevel)> = p.iter().map(|(n, l)| (n.clone(), l)).collect();
            let expected: Vec<(Name, SecurityLevel)> = model.iter().map(|(n, &l)| (n.clone(), l)).collect();
            prop_assert_eq!(listed, expected);
            for parts in queries {
                let name = name_of(&parts);
                let want = naive_lpm(&model, &name);
                prop_assert_eq!(p.lookup(&name), want, "{}", name);
                let hashes = p.hasher().prefix_hashes(&name);
                prop_assert_eq!(p.lookup_hashes(&name, &hashes), want, "{}", name);
            }
        }
    }
}
