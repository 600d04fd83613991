//! `[security]`: the forwarder's identity, trusted peers and security policy, shared by the
//! face system (which seals and opens packets on its UDP faces) and management (which changes
//! the policy and the trust list at run time).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use anyhow::Context;
use nameway_face::secure::{
    Identity, LevelLookup, PublicKey, SecureMode, SecurityContext, SecuritySettings,
};
use nameway_fw::SecurityPolicy;
use nameway_wire::lp::SecurityLevel;
use nameway_wire::Name;

use crate::config::SecurityConfig;

/// The policy table behind a lock, read by every secure face's writer and reader.
#[derive(Debug)]
pub struct SharedPolicy {
    table: RwLock<SecurityPolicy>,
    /// Mirrors `table.is_empty()` so that faces skip the lock when nothing is protected.
    empty: AtomicBool,
}

impl Default for SharedPolicy {
    fn default() -> Self {
        Self {
            table: RwLock::new(SecurityPolicy::new()),
            empty: AtomicBool::new(true),
        }
    }
}

impl SharedPolicy {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, SecurityPolicy> {
        self.table
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sets `prefix` to `level` (and logs the level's warning, if it has one).
    ///
    /// # Errors
    /// A prefix with too many components.
    pub fn set(&self, prefix: &Name, level: SecurityLevel) -> anyhow::Result<()> {
        let mut t = self
            .table
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        t.set(prefix.clone(), level)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        self.empty.store(t.is_empty(), Ordering::Release);
        if let Some(w) = level.warning() {
            tracing::warn!(%prefix, %level, "{w}");
        }
        Ok(())
    }

    /// Removes `prefix`; false if it had no level.
    pub fn unset(&self, prefix: &Name) -> bool {
        let mut t = self
            .table
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let removed = t.unset(prefix);
        self.empty.store(t.is_empty(), Ordering::Release);
        removed
    }

    /// Every entry, sorted by prefix.
    pub fn entries(&self) -> Vec<(Name, SecurityLevel)> {
        self.read().iter().map(|(n, l)| (n.clone(), l)).collect()
    }
}

impl LevelLookup for SharedPolicy {
    fn level(&self, name: &Name) -> SecurityLevel {
        self.read().lookup(name)
    }

    fn is_empty(&self) -> bool {
        self.empty.load(Ordering::Acquire)
    }
}

/// What `[security]` sets up.
#[derive(Clone, Debug)]
pub struct Security {
    /// Shared with the face system.
    pub context: Arc<SecurityContext>,
    /// The policy, for management.
    pub policy: Arc<SharedPolicy>,
}

/// Loads (or creates) the identity and builds the context. `None` when `[security]` has no
/// identity.
///
/// # Errors
/// The identity file cannot be read, created or has loose permissions; a key or level does
/// not parse (already caught by [`crate::config::Config::validate`]).
pub fn setup(config: &SecurityConfig) -> anyhow::Result<Option<Security>> {
    if config.identity.as_os_str().is_empty() {
        if !config.policy.is_empty() {
            tracing::warn!("[security] policy entries are ignored: no identity is configured");
        }
        return Ok(None);
    }
    let (identity, created) = Identity::load_or_create(&config.identity)?;
    if created {
        tracing::info!(path = %config.identity.display(), key = %identity.public_key(), "created this forwarder's identity");
    } else {
        tracing::info!(key = %identity.public_key(), "identity loaded");
    }
    // Which code seals long messages (docs/ciphers.md): OpenSSL's, loaded now, or ours.
    match nameway_crypto::libcrypto::load() {
        Ok(lib) => tracing::info!(
            from_bytes = nameway_crypto::libcrypto::LARGE,
            openssl = %lib.version(),
            "ChaCha20-Poly1305 and Poly1305 of long messages through OpenSSL"
        ),
        Err(why) => tracing::info!(%why, "ciphers: Rust implementations only"),
    }
    let trusted = config
        .trusted_peers
        .iter()
        .map(|k| k.parse::<PublicKey>())
        .collect::<Result<Vec<_>, _>>()
        .context("security.trusted_peers")?;
    let policy = Arc::new(SharedPolicy::default());
    for e in &config.policy {
        let prefix: Name = e
            .prefix
            .parse()
            .with_context(|| format!("security.policy prefix {:?}", e.prefix))?;
        let level: SecurityLevel = e
            .level
            .parse()
            .with_context(|| format!("security.policy {:?}", e.prefix))?;
        policy.set(&prefix, level)?;
    }
    let link_level: SecurityLevel = config.link_level.parse().context("security.link_level")?;
    if let Some(w) = link_level.warning() {
        tracing::warn!(level = %link_level, "security.link_level: {w}");
    }
    let settings = SecuritySettings {
        rekey_packets: config.rekey_packets.max(1),
        rekey_interval: Duration::from_secs(config.rekey_seconds.max(1)),
        overlap: Duration::from_millis(config.rekey_overlap_ms),
        link_level,
    };
    let lookup: Arc<dyn LevelLookup> = policy.clone();
    let context = Arc::new(SecurityContext::new(identity, trusted, lookup, settings));
    Ok(Some(Security { context, policy }))
}

/// The secure mode named by management's SecureMode field.
pub fn parse_mode(s: &str) -> Option<SecureMode> {
    match s {
        "per-prefix" => Some(SecureMode::PerPrefix),
        "link-wide" => Some(SecureMode::LinkWide),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_shared_policy_matches_longest_prefixes_and_tracks_emptiness() {
        let p = SharedPolicy::default();
        assert!(p.is_empty());
        p.set(&"/a".parse().unwrap(), SecurityLevel::ChaCha20Poly1305)
            .unwrap();
        p.set(&"/a/b".parse().unwrap(), SecurityLevel::None)
            .unwrap();
        assert!(!p.is_empty());
        assert_eq!(
            p.level(&"/a/x".parse().unwrap()),
            SecurityLevel::ChaCha20Poly1305
        );
        assert_eq!(p.level(&"/a/b/c".parse().unwrap()), SecurityLevel::None);
        assert!(p.unset(&"/a".parse().unwrap()));
        assert!(p.unset(&"/a/b".parse().unwrap()));
        assert!(p.is_empty());
    }

    #[test]
    fn setup_creates_the_identity_and_loads_the_policy() {
        let dir = tempfile::tempdir().unwrap();
        let config = SecurityConfig {
            identity: dir.path().join("id.key"),
            trusted_peers: vec!["11".repeat(32)],
            policy: vec![crate::config::SecurityPolicyEntry {
                prefix: "/hospital".into(),
                level: "xforro14-poly1305".into(),
            }],
            ..SecurityConfig::default()
        };
        let s = setup(&config).unwrap().unwrap();
        assert!(dir.path().join("id.key").exists());
        assert_eq!(s.context.trusted().len(), 1);
        assert_eq!(
            s.policy.level(&"/hospital/x".parse().unwrap()),
            SecurityLevel::XForro14Poly1305
        );
        let again = setup(&config).unwrap().unwrap();
        assert_eq!(
            again.context.identity().public_key(),
            s.context.identity().public_key()
        );
    }
}
