//! Hop-by-hop security between forwarders (docs/secure-forwarding.md).
//!
//! A forwarder has a long-term [`Identity`] (X25519). A UDP face created secure runs a Noise
//! `XX` handshake with its peer; each side checks the other's public key against the trust
//! list of its [`SecurityContext`]. The handshake's split gives one key per direction; from it
//! a one-way HKDF ratchet makes key epochs (a rekey after `rekey_packets` packets or
//! `rekey_interval`, the previous epoch still accepted during an overlap so that a rekey loses
//! nothing), and each epoch a key per level.
//!
//! Sending ([`SecureLink::seal`]): a Data whose name the policy ([`LevelLookup`]) protects has
//! its Content encrypted in place (same length), and travels in an LpPacket with the critical
//! LinkSecurity header (level, key id, counter, tag). AEAD levels authenticate the header,
//! the other LP fields and the whole Data outside the Content. In link-wide mode every packet
//! is encrypted whole. Receiving ([`SecureLink::open`]): the reverse, with a replay window
//! per key; a Data in clear whose name the policy protects is refused.
//!
//! Group keys ([`GroupKeys`], granted by the controller): a Data under a group prefix has its
//! Content sealed with a key derived from the prefix's group key and the sending epoch's salt
//! instead of the session key, and a member refuses such a Data sealed any other way.

mod group;
mod handshake;
mod identity;
mod keys;
mod link;

use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use nameway_wire::lp::SecurityLevel;
use nameway_wire::Name;

pub use group::{GroupKeyError, GroupKeyGrant, GroupKeys, GroupRefusal, GroupStats};
pub use identity::{BadPublicKey, Identity, IdentityError, PublicKey};
pub use link::{LinkState, NeighbourInfo, SecureCounters, SecureDrop, SecureLink};

/// What a secure face encrypts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SecureMode {
    /// The Content of Data whose name the security policy protects, with the policy's level.
    PerPrefix,
    /// Every packet, whole (headers and payload), with the link level, whatever its name.
    LinkWide,
}

impl SecureMode {
    /// The name used by the CLI and management.
    pub const fn as_str(self) -> &'static str {
        match self {
            SecureMode::PerPrefix => "per-prefix",
            SecureMode::LinkWide => "link-wide",
        }
    }

    pub(crate) const fn code(self) -> u8 {
        match self {
            SecureMode::PerPrefix => 0,
            SecureMode::LinkWide => 1,
        }
    }

    pub(crate) const fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(SecureMode::PerPrefix),
            1 => Some(SecureMode::LinkWide),
            _ => None,
        }
    }
}

/// The security policy as the faces see it: the level a Data name needs.
pub trait LevelLookup: Send + Sync + fmt::Debug {
    /// The level of `name` (longest matching prefix; `none` if nothing matches).
    fn level(&self, name: &Name) -> SecurityLevel;
    /// Whether no prefix is protected (a fast path: nothing to look up).
    fn is_empty(&self) -> bool;
}

/// A policy that protects nothing.
#[derive(Debug, Default)]
pub struct NoPolicy;

impl LevelLookup for NoPolicy {
    fn level(&self, _: &Name) -> SecurityLevel {
        SecurityLevel::None
    }

    fn is_empty(&self) -> bool {
        true
    }
}

/// Settings of a [`SecurityContext`].
#[derive(Clone, Debug)]
pub struct SecuritySettings {
    /// Advance the sending key epoch after this many packets.
    pub rekey_packets: u64,
    /// ... or after this long.
    pub rekey_interval: Duration,
    /// How long the previous key epoch (or session) stays accepted after a new one.
    pub overlap: Duration,
    /// The level of link-wide faces.
    pub link_level: SecurityLevel,
}

impl Default for SecuritySettings {
    fn default() -> Self {
        Self {
            rekey_packets: 1 << 20,
            rekey_interval: Duration::from_secs(120),
            overlap: Duration::from_secs(5),
            link_level: SecurityLevel::XForro14Poly1305,
        }
    }
}

/// What every secure face of a forwarder shares: its identity, the peers it trusts, the
/// policy and the rekey settings.
pub struct SecurityContext {
    identity: Identity,
    trusted: RwLock<BTreeSet<PublicKey>>,
    policy: Arc<dyn LevelLookup>,
    settings: SecuritySettings,
    groups: GroupKeys,
}

impl fmt::Debug for SecurityContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecurityContext")
            .field("identity", &self.identity)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl SecurityContext {
    /// A context.
    pub fn new(
        identity: Identity,
        trusted: impl IntoIterator<Item = PublicKey>,
        policy: Arc<dyn LevelLookup>,
        settings: SecuritySettings,
    ) -> Self {
        Self {
            identity,
            trusted: RwLock::new(trusted.into_iter().collect()),
            policy,
            settings,
            groups: GroupKeys::default(),
        }
    }

    /// The group keys the controller granted (empty without a controller): installed by the
    /// agent, read by every secure face.
    pub fn group_keys(&self) -> &GroupKeys {
        &self.groups
    }

    /// This forwarder's identity.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// The policy.
    pub fn policy(&self) -> &dyn LevelLookup {
        &*self.policy
    }

    /// The settings.
    pub fn settings(&self) -> &SecuritySettings {
        &self.settings
    }

    /// Whether handshakes with `key` are accepted.
    pub fn is_trusted(&self, key: &PublicKey) -> bool {
        self.trusted
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(key)
    }

    /// Trusts `key`; false if it already was.
    pub fn trust(&self, key: PublicKey) -> bool {
        self.trusted
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key)
    }

    /// Stops trusting `key`; false if it was not trusted. Existing sessions with it are ended
    /// by [`crate::FaceSystem::untrust`].
    pub fn untrust(&self, key: &PublicKey) -> bool {
        self.trusted
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(key)
    }

    /// The trusted keys, sorted.
    pub fn trusted(&self) -> Vec<PublicKey> {
        self.trusted
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .copied()
            .collect()
    }

    pub(crate) fn rekey_packets(&self) -> u64 {
        self.settings.rekey_packets.max(1)
    }

    pub(crate) fn rekey_ms(&self) -> u64 {
        u64::try_from(self.settings.rekey_interval.as_millis())
            .unwrap_or(u64::MAX)
            .max(1)
    }

    pub(crate) fn overlap_ms(&self) -> u64 {
        u64::try_from(self.settings.overlap.as_millis()).unwrap_or(u64::MAX)
    }

    pub(crate) fn link_level(&self) -> SecurityLevel {
        self.settings.link_level
    }
}
