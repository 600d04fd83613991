//! The group keys the controller granted this forwarder (docs/controller.md, "Group keys"):
//! opened from their HPKE seal with the forwarder's X25519 identity by the connection task,
//! then held here by the driver, which installs each prefix's level in the security policy.
//!
//! Per prefix the keyring holds every key the last `security` object listed: the newest (by
//! NotBefore) is the prefix's current key, and every listed key that has not expired is
//! accepted (the rotation's overlap). A key id the keyring does not hold is refused and
//! counted ([`Keyring::opening_key`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};

use nameway_ctl::sealed::{open_key, KemKeyPair};
use nameway_ctl::security_object::Grant;
use nameway_face::secure::GroupKeyGrant;
use nameway_wire::lp::SecurityLevel;
use nameway_wire::Name;
use zeroize::Zeroizing;

/// One opened group key.
pub struct GroupKey {
    /// The prefix it protects.
    pub prefix: Name,
    /// The prefix's level.
    pub level: SecurityLevel,
    /// Its id.
    pub key_id: String,
    /// The 256-bit key.
    pub key: Zeroizing<[u8; 32]>,
    /// Valid from (ms since the epoch).
    pub not_before_ms: u64,
    /// Valid until (ms since the epoch).
    pub not_after_ms: u64,
}

impl std::fmt::Debug for GroupKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupKey")
            .field("prefix", &self.prefix)
            .field("level", &self.level)
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

/// Group keys refused, by reason.
#[derive(Debug, Default)]
pub struct KeyRefusals {
    /// A sealed key that does not open with this forwarder's identity (another recipient,
    /// another key id, tampered).
    pub bad_seal: AtomicU64,
    /// A `security` object whose body does not decode.
    pub malformed: AtomicU64,
    /// A key id asked for that the keyring does not hold (unknown or expired).
    pub unknown_key_id: AtomicU64,
}

/// Opens the grants of a verified `security` object with `kem`; a grant that does not open
/// is left out, counted and logged (one line).
pub(crate) fn open_grants(
    kem: &KemKeyPair,
    router: &str,
    grants: &[Grant],
    refusals: &KeyRefusals,
) -> Vec<GroupKey> {
    grants
        .iter()
        .filter_map(|g| match open_key(kem, router, &g.key_id, &g.sealed) {
            Ok(key) => Some(GroupKey {
                prefix: g.prefix.clone(),
                level: g.level,
                key_id: g.key_id.clone(),
                key,
                not_before_ms: g.not_before_ms,
                not_after_ms: g.not_after_ms,
            }),
            Err(e) => {
                refusals.bad_seal.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(key_id = %g.key_id, prefix = %g.prefix, "group key refused: {e}");
                None
            }
        })
        .collect()
}

/// What changed in the policy when a new set of keys was installed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct KeyringChange {
    /// Prefixes that now have keys, with their level.
    pub set: Vec<(Name, SecurityLevel)>,
    /// Prefixes that no longer have any key.
    pub unset: Vec<Name>,
}

/// See the module documentation.
#[derive(Debug, Default)]
pub struct Keyring {
    keys: BTreeMap<String, GroupKey>,
}

impl Keyring {
    /// Replaces the keys with `keys` (a whole snapshot); returns the policy changes.
    pub fn replace(&mut self, keys: Vec<GroupKey>) -> KeyringChange {
        let before: BTreeSet<Name> = self.prefixes();
        self.keys = keys.into_iter().map(|k| (k.key_id.clone(), k)).collect();
        let after = self.prefixes();
        let set = after
            .iter()
            .filter_map(|p| self.current(p, 0).map(|k| (p.clone(), k.level)))
            .collect();
        let unset = before.difference(&after).cloned().collect();
        KeyringChange { set, unset }
    }

    fn prefixes(&self) -> BTreeSet<Name> {
        self.keys.values().map(|k| k.prefix.clone()).collect()
    }

    /// The key to send `prefix`'s Data with at `now_ms`: the newest of its keys already
    /// valid (the oldest one when none is yet).
    pub fn current(&self, prefix: &Name, now_ms: u64) -> Option<&GroupKey> {
        let mut of_prefix: Vec<&GroupKey> = self
            .keys
            .values()
            .filter(|k| &k.prefix == prefix && (now_ms == 0 || now_ms < k.not_after_ms))
            .collect();
        of_prefix.sort_by_key(|k| (k.not_before_ms, k.key_id.clone()));
        of_prefix
            .iter()
            .rev()
            .find(|k| k.not_before_ms <= now_ms || now_ms == 0)
            .or_else(|| of_prefix.first())
            .copied()
    }

    /// The key `key_id` to open with at `now_ms`, if held and not expired; otherwise the
    /// refusal is counted.
    pub fn opening_key(
        &self,
        key_id: &str,
        now_ms: u64,
        refusals: &KeyRefusals,
    ) -> Option<&GroupKey> {
        let k = self.keys.get(key_id).filter(|k| now_ms < k.not_after_ms);
        if k.is_none() {
            refusals.unknown_key_id.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(%key_id, "group key id refused: not held or expired");
        }
        k
    }

    /// The ids held, sorted.
    pub fn ids(&self) -> Vec<String> {
        self.keys.keys().cloned().collect()
    }

    /// Every key held, for the secure faces (which seal and open the prefixes' Data with
    /// them). A key whose id has no 64-bit wire id is left out and logged.
    pub fn grants(&self) -> Vec<GroupKeyGrant> {
        self.keys
            .values()
            .filter_map(|k| {
                let Some(id) = wire_id(&k.key_id) else {
                    tracing::warn!(key_id = %k.key_id, "group key left out of the data path: its id does not end in #<16 hex digits>");
                    return None;
                };
                Some(GroupKeyGrant {
                    prefix: k.prefix.clone(),
                    level: k.level,
                    id,
                    label: k.key_id.clone(),
                    key: k.key.clone(),
                    not_before_ms: k.not_before_ms,
                    not_after_ms: k.not_after_ms,
                })
            })
            .collect()
    }
}

/// The id a group key travels under in LinkSecurity: the 64 bits after the `#` of the
/// controller's `<prefix>#<16 hex digits>`.
pub(crate) fn wire_id(key_id: &str) -> Option<u64> {
    let (_, hex) = key_id.rsplit_once('#')?;
    (hex.len() == 16)
        .then(|| u64::from_str_radix(hex, 16).ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_ids_are_the_64_bits_after_the_hash() {
        assert_eq!(
            wire_id("/example/video#00112233445566ff"),
            Some(0x0011_2233_4455_66ff)
        );
        assert_eq!(wire_id("/a#b#0000000000000001"), Some(1));
        for bad in [
            "/example/video",
            "/v#123",
            "/v#00112233445566zz",
            "/v#00112233445566ff0",
        ] {
            assert_eq!(wire_id(bad), None, "{bad}");
        }
    }
    use nameway_ctl::sealed::{random_key, seal_key};

    fn grant(kem: &KemKeyPair, router: &str, id: &str, nb: u64, na: u64) -> Grant {
        let key = random_key().unwrap();
        Grant {
            prefix: "/example/video".parse().unwrap(),
            level: SecurityLevel::ChaCha20Poly1305,
            key_id: id.into(),
            sealed: seal_key(&kem.public(), router, id, &key).unwrap().into(),
            not_before_ms: nb,
            not_after_ms: na,
        }
    }

    #[test]
    fn a_rotation_holds_both_keys_for_the_overlap_and_refuses_what_it_does_not_hold() {
        let me = KemKeyPair::generate().unwrap();
        let other = KemKeyPair::generate().unwrap();
        let refusals = KeyRefusals::default();
        let mut ring = Keyring::default();
        let p: Name = "/example/video".parse().unwrap();
        // Key 1 alone.
        let g1 = grant(
            &me,
            "/example/r1",
            "/example/video#0000000000000001",
            100,
            10_000,
        );
        let opened = open_grants(&me, "/example/r1", std::slice::from_ref(&g1), &refusals);
        let change = ring.replace(opened);
        assert_eq!(
            change.set,
            vec![(p.clone(), SecurityLevel::ChaCha20Poly1305)]
        );
        assert_eq!(
            ring.current(&p, 200).unwrap().key_id,
            "/example/video#0000000000000001"
        );
        // Rotation: key 2 arrives, key 1 retires at 3000; both open until then.
        let g1r = Grant {
            not_after_ms: 3000,
            ..g1
        };
        let g2 = grant(
            &me,
            "/example/r1",
            "/example/video#0000000000000002",
            2000,
            10_000,
        );
        let opened = open_grants(&me, "/example/r1", &[g1r, g2], &refusals);
        assert!(ring.replace(opened).unset.is_empty());
        assert_eq!(
            ring.current(&p, 1500).unwrap().key_id,
            "/example/video#0000000000000001"
        );
        assert_eq!(
            ring.current(&p, 2500).unwrap().key_id,
            "/example/video#0000000000000002"
        );
        assert!(ring
            .opening_key("/example/video#0000000000000001", 2500, &refusals)
            .is_some());
        assert!(ring
            .opening_key("/example/video#0000000000000002", 2500, &refusals)
            .is_some());
        // After the overlap key 1 no longer opens; an id never granted never does.
        assert!(ring
            .opening_key("/example/video#0000000000000001", 3000, &refusals)
            .is_none());
        assert!(ring.opening_key("k9", 2500, &refusals).is_none());
        assert_eq!(refusals.unknown_key_id.load(Ordering::Relaxed), 2);
        // A key sealed to another forwarder, or relabelled, does not open and is counted.
        let theirs = grant(&other, "/example/r1", "k3", 0, 10_000);
        let mut relabelled = grant(&me, "/example/r1", "k4", 0, 10_000);
        relabelled.key_id = "k5".into();
        assert!(open_grants(&me, "/example/r1", &[theirs, relabelled], &refusals).is_empty());
        assert_eq!(refusals.bad_seal.load(Ordering::Relaxed), 2);
        // An empty snapshot unsets the prefix.
        let mut ids: Vec<u64> = ring.grants().iter().map(|g| g.id).collect();
        ids.sort_unstable();
        assert_eq!(ids, vec![1, 2], "both keys reach the faces");
        assert_eq!(ring.replace(Vec::new()).unset, vec![p]);
        assert!(ring.ids().is_empty());
    }
}
