//! Group keys on the data path (docs/controller.md, "What the group key protects"): the keys
//! the controller granted this forwarder, per name prefix, as one immutable snapshot that the
//! agent replaces whole ([`GroupKeys::install`], an `ArcSwap` store between bursts) and the
//! secure faces read without a lock.
//!
//! A secure face seals the Content of a Data under a group prefix with a key derived from the
//! prefix's newest valid group key and a salt the sending session drew at random
//! ([`derive`]); the receiver derives the same key from the key id and salt in the
//! LinkSecurity header. Only AEAD levels are sealed this way: a prefix whose group level does
//! not authenticate stays sealed with the pairwise session keys (see [`GroupKeys::install`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;
use nameway_crypto::PayloadCipher;
use nameway_wire::lp::SecurityLevel;
use nameway_wire::Name;
use zeroize::Zeroizing;

use super::keys::{expand, suite_of};

/// Prefix of the info string of a derived group key: `HKDF-Expand(group key, GROUP_INFO ||
/// level || salt)`.
const GROUP_INFO: &[u8] = b"nameway group key v1 ";

/// One group key as the agent hands it over.
pub struct GroupKeyGrant {
    /// The prefix it protects.
    pub prefix: Name,
    /// The prefix's level.
    pub level: SecurityLevel,
    /// Its id on the wire (the 64-bit suffix of the controller's `<prefix>#<16 hex>` id).
    pub id: u64,
    /// The controller's id, for logs and counters.
    pub label: String,
    /// The 256-bit key.
    pub key: Zeroizing<[u8; 32]>,
    /// Valid from (ms since the Unix epoch).
    pub not_before_ms: u64,
    /// Valid until (ms since the Unix epoch).
    pub not_after_ms: u64,
}

impl std::fmt::Debug for GroupKeyGrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupKeyGrant")
            .field("prefix", &self.prefix)
            .field("level", &self.level)
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

/// A key of the snapshot, with its use counted.
pub(crate) struct GroupKey {
    pub(crate) prefix: Name,
    pub(crate) level: SecurityLevel,
    pub(crate) id: u64,
    label: String,
    key: Zeroizing<[u8; 32]>,
    not_before_ms: u64,
    not_after_ms: u64,
    /// Shared with the same key in the next snapshot, so that a swap loses no count.
    usage: Arc<KeyUsage>,
}

#[derive(Debug, Default)]
struct KeyUsage {
    sealed: AtomicU64,
    opened: AtomicU64,
}

impl GroupKey {
    fn valid_at(&self, unix_ms: u64) -> bool {
        self.not_before_ms <= unix_ms && unix_ms < self.not_after_ms
    }

    /// The cipher of this key for a sender's `salt`.
    pub(crate) fn derive(&self, salt: &[u8; 16]) -> Option<Arc<dyn PayloadCipher>> {
        derive(&self.key, self.level, salt)
    }

    pub(crate) fn count_sealed(&self) {
        self.usage.sealed.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_opened(&self) {
        self.usage.opened.fetch_add(1, Ordering::Relaxed);
    }
}

/// The cipher of `level` keyed with `HKDF-Expand(group, GROUP_INFO || level || salt)`.
pub(crate) fn derive(
    group: &[u8; 32],
    level: SecurityLevel,
    salt: &[u8; 16],
) -> Option<Arc<dyn PayloadCipher>> {
    let suite = suite_of(level)?;
    let mut key = Zeroizing::new(vec![0u8; suite.key_len()]);
    if !expand(
        group,
        &[GROUP_INFO, level.name().as_bytes(), salt],
        &mut key,
    ) {
        return None;
    }
    Some(Arc::from(suite.danger_new_cipher(&key).ok()?))
}

/// One immutable set of group keys.
#[derive(Default)]
pub(crate) struct KeySet {
    /// Per prefix (longest first), its keys (newest NotBefore first).
    by_prefix: Vec<(Name, Vec<Arc<GroupKey>>)>,
    /// Every key, by id.
    by_id: Vec<Arc<GroupKey>>,
}

impl KeySet {
    /// The longest group prefix of `name` and its keys.
    fn prefix_of(&self, name: &Name) -> Option<&(Name, Vec<Arc<GroupKey>>)> {
        self.by_prefix.iter().find(|(p, _)| p.is_prefix_of(name))
    }

    /// Whether `name` falls under a group prefix (its Data must be group-sealed).
    pub(crate) fn covers(&self, name: &Name) -> Option<&Name> {
        self.prefix_of(name).map(|(p, _)| p)
    }

    /// The key to seal `name` with at `unix_ms`: the newest valid key of its longest group
    /// prefix (the oldest unexpired one when none is valid yet). During a rotation's overlap
    /// (an older key still valid) the new key seals only from the overlap's middle on (at most
    /// [`MAX_SWITCH_DELAY_MS`] after its NotBefore): every member accepts it as soon as its
    /// snapshot arrives, so no member seals with a key another has not received yet, as long
    /// as the snapshots reach every member within half the overlap.
    pub(crate) fn sending_key(&self, name: &Name, unix_ms: u64) -> Option<&Arc<GroupKey>> {
        let (_, keys) = self.prefix_of(name)?;
        let mut valid = keys.iter().filter(|k| k.valid_at(unix_ms));
        match (valid.next(), valid.next()) {
            (Some(new), Some(old)) => {
                let half = old.not_after_ms.saturating_sub(new.not_before_ms) / 2;
                let switch = new
                    .not_before_ms
                    .saturating_add(half.min(MAX_SWITCH_DELAY_MS));
                Some(if unix_ms < switch { old } else { new })
            }
            (Some(new), None) => Some(new),
            (None, _) => keys.iter().rev().find(|k| unix_ms < k.not_after_ms),
        }
    }

    /// The key `id`, if held and not expired at `unix_ms` (during a rotation's overlap both
    /// the old and the new key open).
    pub(crate) fn opening_key(&self, id: u64, unix_ms: u64) -> Option<&Arc<GroupKey>> {
        let i = self.by_id.binary_search_by_key(&id, |k| k.id).ok()?;
        self.by_id
            .get(i)
            .filter(|k| k.not_before_ms.saturating_sub(CLOCK_SLACK_MS) <= unix_ms)
            .filter(|k| unix_ms < k.not_after_ms)
    }
}

/// The longest a new key waits before it seals during an overlap.
pub(crate) const MAX_SWITCH_DELAY_MS: u64 = 60_000;

/// How far ahead of its NotBefore a key already opens (members' clocks differ a little).
const CLOCK_SLACK_MS: u64 = 5_000;

/// Why a group key was not installed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GroupKeyError {
    /// The level does not authenticate: the prefix stays sealed with the pairwise session
    /// keys (a group key without integrity cannot tell a member's packet from anyone's).
    #[error("group key {0}: level {1} is not an AEAD; its prefix is sealed with the pairwise session keys")]
    NotAead(String, SecurityLevel),
    /// Two keys with the same wire id.
    #[error("group key {0}: its id is held twice")]
    DuplicateId(String),
}

/// Forwarder-wide counters of group sealing.
#[derive(Debug, Default)]
pub(crate) struct GroupCounters {
    sealed: AtomicU64,
    opened: AtomicU64,
    unknown_key_id: AtomicU64,
    not_group_sealed: AtomicU64,
    wrong_prefix: AtomicU64,
    bad_tag: AtomicU64,
    replay: AtomicU64,
    no_session: AtomicU64,
}

/// Why a group-sealed packet (or a Data that should have been) was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GroupRefusal {
    /// A group key id the keyring does not hold, or an expired one.
    UnknownKeyId,
    /// A Data under a group prefix sealed with a session key (or by a sender that is not a
    /// member and has no group key).
    NotGroupSealed,
    /// A key that is not the one of the Data's longest group prefix.
    WrongPrefix,
    /// The tag did not verify (tampered, or sealed by someone without the key).
    BadTag,
    /// The session counter was seen before.
    Replay,
    /// No session with the sender for the header's session key id.
    NoSession,
}

impl GroupRefusal {
    /// Every reason.
    pub const ALL: [GroupRefusal; 6] = [
        GroupRefusal::UnknownKeyId,
        GroupRefusal::NotGroupSealed,
        GroupRefusal::WrongPrefix,
        GroupRefusal::BadTag,
        GroupRefusal::Replay,
        GroupRefusal::NoSession,
    ];

    /// A short snake_case name for metrics.
    pub const fn as_str(self) -> &'static str {
        match self {
            GroupRefusal::UnknownKeyId => "unknown_key_id",
            GroupRefusal::NotGroupSealed => "not_group_sealed",
            GroupRefusal::WrongPrefix => "wrong_prefix",
            GroupRefusal::BadTag => "bad_tag",
            GroupRefusal::Replay => "replay",
            GroupRefusal::NoSession => "no_session",
        }
    }
}

/// A snapshot of the group counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupStats {
    /// Data sealed with a group key (sent).
    pub sealed: u64,
    /// Group-sealed Data opened (received and verified).
    pub opened: u64,
    /// Refused, by reason ([`GroupRefusal::as_str`]), every reason listed.
    pub refused: Vec<(&'static str, u64)>,
    /// Per key held now: its controller id, packets sealed and opened with it.
    pub keys: Vec<(String, u64, u64)>,
}

/// The group keys every secure face of a forwarder shares.
#[derive(Default)]
pub struct GroupKeys {
    set: ArcSwap<KeySet>,
    counters: GroupCounters,
}

impl std::fmt::Debug for GroupKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupKeys")
            .field("keys", &self.set.load().by_id.len())
            .finish_non_exhaustive()
    }
}

impl GroupKeys {
    /// Replaces every key with `grants` (a whole snapshot, swapped in at once: a packet sees
    /// the old set or the new one). Keys whose level is not an AEAD, or whose id is held
    /// twice, are left out and returned.
    pub fn install(&self, grants: Vec<GroupKeyGrant>) -> Vec<GroupKeyError> {
        let mut errors = Vec::new();
        let old = self.set.load();
        let mut by_id: Vec<Arc<GroupKey>> = Vec::new();
        for g in grants {
            if !g.level.authenticates() {
                errors.push(GroupKeyError::NotAead(g.label, g.level));
                continue;
            }
            if by_id.iter().any(|k| k.id == g.id) {
                errors.push(GroupKeyError::DuplicateId(g.label));
                continue;
            }
            by_id.push(Arc::new(GroupKey {
                prefix: g.prefix,
                level: g.level,
                id: g.id,
                label: g.label,
                key: g.key,
                not_before_ms: g.not_before_ms,
                not_after_ms: g.not_after_ms,
                usage: old
                    .by_id
                    .iter()
                    .find(|k| k.id == g.id)
                    .map(|k| k.usage.clone())
                    .unwrap_or_default(),
            }));
        }
        by_id.sort_by_key(|k| k.id);
        let mut by_prefix: Vec<(Name, Vec<Arc<GroupKey>>)> = Vec::new();
        for k in &by_id {
            match by_prefix.iter_mut().find(|(p, _)| *p == k.prefix) {
                Some((_, keys)) => keys.push(k.clone()),
                None => by_prefix.push((k.prefix.clone(), vec![k.clone()])),
            }
        }
        for (_, keys) in &mut by_prefix {
            keys.sort_by_key(|k| std::cmp::Reverse(k.not_before_ms));
        }
        by_prefix.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        self.set.store(Arc::new(KeySet { by_prefix, by_id }));
        errors
    }

    /// Whether no key is held (the fast path: nothing to look up).
    pub fn is_empty(&self) -> bool {
        self.set.load().by_id.is_empty()
    }

    /// The current snapshot.
    pub(crate) fn snapshot(&self) -> arc_swap::Guard<Arc<KeySet>> {
        self.set.load()
    }

    pub(crate) fn count_sealed(&self) {
        self.counters.sealed.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_opened(&self) {
        self.counters.opened.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn refuse(&self, why: GroupRefusal) {
        let c = &self.counters;
        let slot = match why {
            GroupRefusal::UnknownKeyId => &c.unknown_key_id,
            GroupRefusal::NotGroupSealed => &c.not_group_sealed,
            GroupRefusal::WrongPrefix => &c.wrong_prefix,
            GroupRefusal::BadTag => &c.bad_tag,
            GroupRefusal::Replay => &c.replay,
            GroupRefusal::NoSession => &c.no_session,
        };
        slot.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters now, and each key held with its use.
    pub fn stats(&self) -> GroupStats {
        let c = &self.counters;
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let refused = GroupRefusal::ALL
            .into_iter()
            .map(|r| {
                let v = match r {
                    GroupRefusal::UnknownKeyId => g(&c.unknown_key_id),
                    GroupRefusal::NotGroupSealed => g(&c.not_group_sealed),
                    GroupRefusal::WrongPrefix => g(&c.wrong_prefix),
                    GroupRefusal::BadTag => g(&c.bad_tag),
                    GroupRefusal::Replay => g(&c.replay),
                    GroupRefusal::NoSession => g(&c.no_session),
                };
                (r.as_str(), v)
            })
            .collect();
        GroupStats {
            sealed: g(&c.sealed),
            opened: g(&c.opened),
            refused,
            keys: self
                .set
                .load()
                .by_id
                .iter()
                .map(|k| (k.label.clone(), g(&k.usage.sealed), g(&k.usage.opened)))
                .collect(),
        }
    }
}

/// Milliseconds since the Unix epoch (the group keys' validity clock).
pub(crate) fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
