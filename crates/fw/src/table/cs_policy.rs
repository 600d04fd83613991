//! The content store's admission policy: per name prefix, whether Data is admitted and with
//! which priority, by longest-prefix match; and an optional partitioned placement, where
//! each of `k` forwarders on a path caches only the names whose hash picks it.
//!
//! The twin of [`SecurityPolicy`](crate::SecurityPolicy): the same hashed name-prefix table
//! ([`super::name_table`]), probed with the prefix hashes the Data pipeline computed already,
//! so an empty policy costs one branch and a non-empty one a few probes per Data packet.

use core::fmt;

use nameway_wire::{Name, NameHasher, PrefixHashes};

use super::name_table::{NameTable, MAX_PREFIX_DEPTH};

/// Seed of the placement hash: fixed, so that every forwarder on a path picks the same one
/// for a name whatever its own process seed.
const PLACEMENT_SEED: u64 = 0x4E57_4353_5041_5254;

/// How Data under a prefix is admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsPriority {
    /// Admitted as any Data (the store evicts its least recently used entry to make room).
    Normal,
    /// Admitted only while the store has free room: it never evicts another entry.
    Low,
}

/// The rule of a prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CsRule {
    /// Whether Data under the prefix is admitted at all.
    pub admit: bool,
    /// How it is admitted.
    pub priority: CsPriority,
}

/// Partitioned placement: this forwarder is number `index` of `k` on a path, and caches a
/// Data packet only when the placement hash of its name modulo `k` is `index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partition {
    /// This forwarder's number, `< k`.
    pub index: u32,
    /// Forwarders on the path.
    pub k: u32,
}

impl Partition {
    /// Whether `name` is placed here.
    pub fn places(&self, name: &Name) -> bool {
        self.k <= 1
            || NameHasher::with_seed(PLACEMENT_SEED).hash_name(name) % u64::from(self.k)
                == u64::from(self.index)
    }
}

/// Why a policy was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CsPolicyError {
    /// A prefix has more than [`MAX_PREFIX_DEPTH`] components, as in the FIB.
    PrefixTooLong,
    /// A partition whose index is not below its size.
    BadPartition {
        /// The index given.
        index: u32,
        /// The size given.
        k: u32,
    },
}

impl fmt::Display for CsPolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PrefixTooLong => write!(f, "prefix longer than {MAX_PREFIX_DEPTH} components"),
            Self::BadPartition { index, k } => {
                write!(f, "partition index {index} is not below k = {k}")
            }
        }
    }
}

impl std::error::Error for CsPolicyError {}

/// What the policy decides for one Data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Not admitted.
    Refuse,
    /// Admitted, evicting if needed.
    Admit,
    /// Admitted only if the store has free room.
    IfRoom,
}

/// Name prefix → [`CsRule`] with an optional [`Partition`]; see the module documentation.
#[derive(Clone)]
pub struct CsPolicy {
    hasher: NameHasher,
    table: NameTable<CsRule>,
    partition: Option<Partition>,
}

impl CsPolicy {
    /// An empty policy (everything admitted) probing with `hasher`'s prefix hashes.
    pub fn with_hasher(hasher: NameHasher) -> Self {
        Self {
            hasher,
            table: NameTable::new(),
            partition: None,
        }
    }

    /// Replaces every rule and the partition.
    ///
    /// # Errors
    /// [`CsPolicyError`]; the policy is then unchanged.
    pub fn replace(
        &mut self,
        rules: &[(Name, CsRule)],
        partition: Option<Partition>,
    ) -> Result<(), CsPolicyError> {
        if let Some(p) = partition {
            if p.index >= p.k {
                return Err(CsPolicyError::BadPartition {
                    index: p.index,
                    k: p.k,
                });
            }
        }
        let mut table = NameTable::new();
        for (prefix, rule) in rules {
            let hash = self.hasher.hash_name(prefix);
            match table.get_mut(prefix, hash) {
                Some(r) => *r = *rule,
                None => {
                    table
                        .get_or_insert_with(prefix, hash, || *rule)
                        .ok_or(CsPolicyError::PrefixTooLong)?;
                }
            }
        }
        self.table = table;
        self.partition = partition;
        Ok(())
    }

    /// Number of prefixes with a rule.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether there is no rule and no partition (everything admitted).
    pub fn is_empty(&self) -> bool {
        self.table.len() == 0 && self.partition.is_none()
    }

    /// The partition, if any.
    pub fn partition(&self) -> Option<Partition> {
        self.partition
    }

    /// The rule of the longest prefix of `name`, if any.
    pub fn rule(&self, name: &Name) -> Option<CsRule> {
        let depth = self.table.max_depth()?;
        let hashes = self.hasher.prefix_hashes_upto(name, depth);
        self.table
            .longest_prefix_match(name, &hashes)
            .map(|e| e.value)
    }

    /// What to do with Data named `name` whose prefix hashes (by this policy's hasher, the
    /// forwarder's) are `hashes`.
    #[inline]
    pub fn admission(&self, name: &Name, hashes: &PrefixHashes) -> Admission {
        let rule = match self.table.max_depth() {
            None => None,
            Some(_) => self
                .table
                .longest_prefix_match(name, hashes)
                .map(|e| e.value),
        };
        match rule {
            Some(CsRule { admit: false, .. }) => Admission::Refuse,
            _ if self.partition.is_some_and(|p| !p.places(name)) => Admission::Refuse,
            Some(CsRule {
                priority: CsPriority::Low,
                ..
            }) => Admission::IfRoom,
            _ => Admission::Admit,
        }
    }

    /// Every `(prefix, rule)`, sorted by prefix.
    pub fn iter(&self) -> impl Iterator<Item = (&Name, CsRule)> + '_ {
        let mut v: Vec<(&Name, CsRule)> = self.table.iter().map(|e| (&e.prefix, e.value)).collect();
        v.sort_unstable_by(|a, b| a.0.cmp(b.0));
        v.into_iter()
    }
}

impl fmt::Debug for CsPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CsPolicy")
            .field(
                "rules",
                &self
                    .iter()
                    .map(|(p, r)| (p.to_string(), r))
                    .collect::<Vec<_>>(),
            )
            .field("partition", &self.partition)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    const NORMAL: CsRule = CsRule {
        admit: true,
        priority: CsPriority::Normal,
    };

    fn decide(p: &CsPolicy, name: &str) -> Admission {
        let name = n(name);
        p.admission(&name, &p.hasher.prefix_hashes(&name))
    }

    #[test]
    fn longest_prefix_decides() {
        let mut p = CsPolicy::with_hasher(NameHasher::with_seed(3));
        assert_eq!(decide(&p, "/a/b"), Admission::Admit);
        let off = CsRule {
            admit: false,
            ..NORMAL
        };
        let low = CsRule {
            priority: CsPriority::Low,
            ..NORMAL
        };
        p.replace(
            &[
                (n("/live"), off),
                (n("/live/replay"), NORMAL),
                (n("/bulk"), low),
            ],
            None,
        )
        .unwrap();
        assert_eq!(decide(&p, "/live/x/seg=1"), Admission::Refuse);
        assert_eq!(decide(&p, "/live/replay/x"), Admission::Admit);
        assert_eq!(decide(&p, "/bulk/file"), Admission::IfRoom);
        assert_eq!(decide(&p, "/other"), Admission::Admit);
        assert_eq!(p.rule(&n("/live/a")), Some(off));
        // Replacing drops the old rules.
        p.replace(&[], None).unwrap();
        assert_eq!(decide(&p, "/live/x"), Admission::Admit);
        assert!(p.is_empty());
    }

    #[test]
    fn a_partition_places_each_name_at_exactly_one_forwarder() {
        let k = 3;
        let policies: Vec<CsPolicy> = (0..k)
            .map(|index| {
                // Each forwarder its own process hasher: placement must not depend on it.
                let mut p = CsPolicy::with_hasher(NameHasher::with_seed(u64::from(index) + 7));
                p.replace(&[], Some(Partition { index, k })).unwrap();
                p
            })
            .collect();
        let mut per = [0usize; 3];
        for i in 0..3000 {
            let name = format!("/video/obj{i}/seg=0");
            let at: Vec<usize> = (0..3)
                .filter(|&j| decide(&policies[j], &name) == Admission::Admit)
                .collect();
            assert_eq!(at.len(), 1, "{name}: {at:?}");
            per[at[0]] += 1;
        }
        assert!(per.iter().all(|&c| c > 800), "{per:?}");
        // A no-admit rule wins over the placement.
        let mut p = policies[0].clone();
        let off = CsRule {
            admit: false,
            ..NORMAL
        };
        p.replace(&[(n("/"), off)], Some(Partition { index: 0, k: 1 }))
            .unwrap();
        assert_eq!(decide(&p, "/x"), Admission::Refuse);
        assert_eq!(
            p.replace(&[], Some(Partition { index: 3, k: 3 })),
            Err(CsPolicyError::BadPartition { index: 3, k: 3 })
        );
    }
}
