//! The chain verifier: an announcement delegating `/32=sc/<h>` to a router, and that router's
//! locator record, checked in the order of docs/routing.md, with a cache of verified chains.
//!
//! 1. `h == SHA-256(NwPublicKey)` (and a KeyDigest KeyLocator, if any, names `h`);
//! 2. the announcement's signature verifies with NwPublicKey (Ed25519 or ECDSA P-256);
//! 3. the ValidityPeriod covers now and version + ExpirationPeriod is not past, each with
//!    [`CLOCK_GRACE_MS`] of grace; a version in the future is not yet valid;
//! 4. from a neighbour: NwDelegate is the neighbour's authenticated identity, or the announced
//!    name is the neighbour's own;
//! 5. the locator record is the delegate's: its name's hash is NwDelegate's, its NwPublicKey
//!    hashes to it, its signature verifies, and it has not expired.
//!
//! Verified chains are cached under the SHA-256 of (announcement wire || locator wire) until
//! they expire, so a chain seen again costs one hash and no signature; verified locator
//! records are cached on their own too, so a new announcement delegated to a router whose
//! record was seen costs one signature.

use std::sync::Arc;

use bytes::Bytes;
use nameway_wire::{KeyLocator, Name};
use sha2::{Digest as _, Sha256};

use crate::announcement::Announcement;
use crate::cache::{ClockCache, Digest};
use crate::error::{RejectReason, Rejected};
use crate::locator::LocatorRecord;
use crate::sc::KeyHash;
use crate::time::CLOCK_GRACE_MS;

/// Where a chain came from, which decides step 4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Fetched from a RIB service, registered with this node's RIB service, or given by a
    /// local application: the chain's own signatures are the whole proof (no step 4).
    Direct,
    /// Sent by a neighbour forwarder: `Some(h)` is the hash of its authenticated secure-link
    /// identity (its Noise static key's SubjectPublicKeyInfo), `None` a link without one.
    Neighbour(Option<KeyHash>),
}

/// A chain that passed every step: what the forwarder needs to route `/32=sc/<h>`. Shared
/// (`Arc`) between the verifier's cache, the resolver's routes and its events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifiedRoute {
    /// The name's hash `h`.
    pub h: KeyHash,
    /// The delegate router's hash `hR`.
    pub delegate: KeyHash,
    /// The delegate router's name `/32=sc/<hR>`: the ForwardingHint to add.
    pub delegate_name: Name,
    /// The delegate's FaceUris from its locator record, in preference order.
    pub face_uris: Vec<String>,
    /// The delegate's secure-link static public key (NwLinkKey), if its record carries it:
    /// the key its Noise handshake must show.
    pub delegate_link_key: Option<[u8; 32]>,
    /// The announcement's version (its signing time, ms since the Unix epoch).
    pub version: u64,
    /// The locator record's version.
    pub locator_version: u64,
    /// When the chain stops being valid (ms since the Unix epoch): the earliest of the
    /// announcement's NotAfter, its version + ExpirationPeriod and the locator record's
    /// expiry. Verification accepts it until [`CLOCK_GRACE_MS`] after.
    pub expires_at_ms: u64,
    /// The announcement as received.
    pub announcement: Bytes,
    /// The locator record as received.
    pub locator: Bytes,
}

impl VerifiedRoute {
    /// The self-certifying name `/32=sc/<h>`.
    pub fn name(&self) -> Name {
        self.h.name()
    }
}

/// Rejections by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RejectCounts([u64; RejectReason::ALL.len()]);

impl RejectCounts {
    /// The count for `reason`.
    pub fn get(&self, reason: RejectReason) -> u64 {
        self.0.get(reason.index()).copied().unwrap_or(0)
    }

    /// Every reason with its count, in verification order.
    pub fn iter(&self) -> impl Iterator<Item = (RejectReason, u64)> + '_ {
        RejectReason::ALL.into_iter().map(|r| (r, self.get(r)))
    }

    /// All rejections.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    pub(crate) fn add(&mut self, reason: RejectReason) {
        if let Some(c) = self.0.get_mut(reason.index()) {
            *c += 1;
        }
    }
}

/// What the verifier did, for export (`routing_sigverify_total`,
/// `routing_rejected_total{reason}`...).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerifyCounters {
    /// Signatures checked (announcements and locator records, whatever the outcome).
    pub signatures_verified: u64,
    /// Chains accepted after a full verification.
    pub chains_verified: u64,
    /// Chains accepted from the cache, with no signature checked.
    pub cache_hits: u64,
    /// Locator records accepted from the locator cache (one signature saved each).
    pub locator_cache_hits: u64,
    /// Rejections by reason.
    pub rejected: RejectCounts,
}

/// Verifier settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerifierConfig {
    /// Most verified chains kept (CLOCK replacement beyond).
    pub chain_cache_capacity: usize,
    /// Most verified locator records kept.
    pub locator_cache_capacity: usize,
    /// Clock grace for validity checks.
    pub grace_ms: u64,
}

impl Default for VerifierConfig {
    fn default() -> Self {
        Self {
            chain_cache_capacity: 1 << 16,
            locator_cache_capacity: 1 << 12,
            grace_ms: CLOCK_GRACE_MS,
        }
    }
}

/// A verified locator record, as the locator cache keeps it.
#[derive(Clone)]
struct VerifiedLocator {
    router: KeyHash,
    face_uris: Vec<String>,
    link_key: Option<[u8; 32]>,
    version: u64,
    expires_at_ms: u64,
}

/// See the module documentation.
pub struct ChainVerifier {
    config: VerifierConfig,
    chains: ClockCache<Arc<VerifiedRoute>>,
    locators: ClockCache<VerifiedLocator>,
    counters: VerifyCounters,
}

impl ChainVerifier {
    /// A verifier with empty caches.
    pub fn new(config: VerifierConfig) -> Self {
        Self {
            chains: ClockCache::new(config.chain_cache_capacity),
            locators: ClockCache::new(config.locator_cache_capacity),
            config,
            counters: VerifyCounters::default(),
        }
    }

    /// Verifies the chain `announcement` + `locator` (whole Data TLVs) received from `origin`
    /// at wall-clock time `now_ms`; a rejection is counted under its reason.
    ///
    /// # Errors
    /// [`Rejected`] with the first failing step's reason.
    pub fn verify(
        &mut self,
        now_ms: u64,
        announcement: &Bytes,
        locator: &Bytes,
        origin: Origin,
    ) -> Result<Arc<VerifiedRoute>, Rejected> {
        let result = self.verify_uncounted(now_ms, announcement, locator, origin);
        if let Err(r) = &result {
            self.counters.rejected.add(r.reason);
        }
        result
    }

    /// What the verifier did so far.
    pub fn counters(&self) -> &VerifyCounters {
        &self.counters
    }

    /// Chains in the cache (some may have expired and not been met yet).
    pub fn cached_chains(&self) -> usize {
        self.chains.len()
    }

    /// Counts a rejection decided outside [`ChainVerifier::verify`] (a malformed RIB answer
    /// envelope), so that one set of counters covers every refusal.
    pub(crate) fn count_rejection(&mut self, reason: RejectReason) {
        self.counters.rejected.add(reason);
    }

    /// Empties both caches (counters are kept).
    pub fn clear_cache(&mut self) {
        self.chains.clear();
        self.locators.clear();
    }

    fn verify_uncounted(
        &mut self,
        now_ms: u64,
        announcement: &Bytes,
        locator: &Bytes,
        origin: Origin,
    ) -> Result<Arc<VerifiedRoute>, Rejected> {
        let key = chain_key(announcement, locator);
        let grace = self.config.grace_ms;
        if let Some(route) = self.chains.get(&key, now_ms) {
            check_origin(route.h, route.delegate, origin)?;
            self.counters.cache_hits += 1;
            return Ok(Arc::clone(route));
        }
        let route = Arc::new(self.verify_cold(now_ms, announcement, locator, origin)?);
        self.counters.chains_verified += 1;
        let until = route.expires_at_ms.saturating_add(grace);
        self.chains.insert(key, Arc::clone(&route), until, now_ms);
        Ok(route)
    }

    fn verify_cold(
        &mut self,
        now_ms: u64,
        announcement: &Bytes,
        locator: &Bytes,
        origin: Origin,
    ) -> Result<VerifiedRoute, Rejected> {
        let pa = Announcement::decode(announcement.clone())
            .map_err(|e| Rejected::malformed("announcement", &e))?;
        let link = ChainLink::of(&pa)?;
        self.check_key_and_signature(&pa, &link)?;
        check_time(&pa, now_ms, self.config.grace_ms)?;
        check_origin(link.h, link.delegate, origin)?;
        let loc = self.check_locator(now_ms, locator, link.delegate)?;
        Ok(VerifiedRoute {
            h: link.h,
            delegate: link.delegate,
            delegate_name: link.delegate.name(),
            face_uris: loc.face_uris,
            delegate_link_key: loc.link_key,
            version: pa.version(),
            locator_version: loc.version,
            expires_at_ms: pa.expires_at_ms().min(loc.expires_at_ms),
            announcement: announcement.clone(),
            locator: locator.clone(),
        })
    }

    /// Steps 1 and 2.
    fn check_key_and_signature(
        &mut self,
        pa: &Announcement,
        link: &ChainLink,
    ) -> Result<(), Rejected> {
        if KeyHash::of_spki(&link.public_key) != link.h {
            return Err(Rejected::new(
                RejectReason::NameKeyMismatch,
                "NwPublicKey does not hash to the announced name",
            ));
        }
        if let Some(KeyLocator::KeyDigest(d)) = pa.key_locator() {
            if d[..] != link.h.as_bytes()[..] {
                return Err(Rejected::new(
                    RejectReason::NameKeyMismatch,
                    "KeyLocator names another key digest",
                ));
            }
        }
        self.counters.signatures_verified += 1;
        pa.check_signature(&link.public_key)
            .map_err(|e| Rejected::new(RejectReason::BadSig, format!("announcement: {e}")))
    }

    /// Step 5, through the locator cache.
    fn check_locator(
        &mut self,
        now_ms: u64,
        wire: &Bytes,
        delegate: KeyHash,
    ) -> Result<VerifiedLocator, Rejected> {
        let grace = self.config.grace_ms;
        let key: Digest = Sha256::digest(wire).into();
        if let Some(loc) = self.locators.get(&key, now_ms) {
            if loc.router != delegate {
                return Err(not_the_delegates());
            }
            self.counters.locator_cache_hits += 1;
            return Ok(loc.clone());
        }
        let loc = LocatorRecord::decode(wire.clone())
            .map_err(|e| Rejected::malformed("locator record", &e))?;
        if loc.router() != delegate {
            return Err(not_the_delegates());
        }
        if KeyHash::of_spki(loc.public_key()) != delegate {
            return Err(Rejected::new(
                RejectReason::BadLocator,
                "the locator record's key does not hash to the delegate's name",
            ));
        }
        self.counters.signatures_verified += 1;
        loc.check_signature()
            .map_err(|e| Rejected::new(RejectReason::BadLocator, format!("locator record: {e}")))?;
        let expires_at_ms = loc.expires_at_ms().unwrap_or(u64::MAX);
        if loc.version() > now_ms.saturating_add(grace) {
            return Err(Rejected::new(
                RejectReason::NotYetValid,
                "the locator record is signed in the future",
            ));
        }
        if expires_at_ms.saturating_add(grace) < now_ms {
            return Err(Rejected::new(
                RejectReason::Expired,
                "the locator record has expired",
            ));
        }
        let verified = VerifiedLocator {
            router: delegate,
            face_uris: loc.face_uris().to_vec(),
            link_key: loc.link_key().copied(),
            version: loc.version(),
            expires_at_ms,
        };
        let until = expires_at_ms.saturating_add(grace);
        self.locators.insert(key, verified.clone(), until, now_ms);
        Ok(verified)
    }
}

fn not_the_delegates() -> Rejected {
    Rejected::new(
        RejectReason::BadLocator,
        "the locator record is another router's than the delegate",
    )
}

/// The cache key of a chain.
fn chain_key(announcement: &[u8], locator: &[u8]) -> Digest {
    let mut h = Sha256::new();
    h.update(announcement);
    h.update(locator);
    h.finalize().into()
}

/// What the chain needs from an announcement, found before any check.
struct ChainLink {
    h: KeyHash,
    delegate: KeyHash,
    public_key: Bytes,
}

impl ChainLink {
    fn of(pa: &Announcement) -> Result<Self, Rejected> {
        let malformed = |what: &str| Rejected::new(RejectReason::Malformed, what);
        let h = pa
            .key_hash()
            .ok_or_else(|| malformed("the announced prefix is not a name /32=sc/<h>"))?;
        let public_key = pa
            .public_key()
            .cloned()
            .ok_or_else(|| malformed("the announcement has no NwPublicKey"))?;
        let delegate = pa
            .delegate()
            .filter(|d| d.len() == 2)
            .and_then(KeyHash::from_name)
            .ok_or_else(|| {
                malformed("the announcement's NwDelegate is missing or not /32=sc/<h>")
            })?;
        Ok(Self {
            h,
            delegate,
            public_key,
        })
    }
}

/// Step 3 for the announcement.
fn check_time(pa: &Announcement, now_ms: u64, grace: u64) -> Result<(), Rejected> {
    let late = now_ms.saturating_add(grace);
    let early = now_ms.saturating_sub(grace);
    if let Some(v) = pa.validity() {
        if v.not_before_ms > late {
            return Err(Rejected::new(
                RejectReason::NotYetValid,
                "before the ValidityPeriod's NotBefore",
            ));
        }
        if v.not_after_ms < early {
            return Err(Rejected::new(
                RejectReason::Expired,
                "past the ValidityPeriod's NotAfter",
            ));
        }
    }
    if pa.version() > late {
        return Err(Rejected::new(
            RejectReason::NotYetValid,
            "the version (signing time) is in the future",
        ));
    }
    if pa.version().saturating_add(pa.expiration_ms()) < early {
        return Err(Rejected::new(
            RejectReason::Expired,
            "past the signing time plus ExpirationPeriod",
        ));
    }
    Ok(())
}

/// Step 4.
fn check_origin(h: KeyHash, delegate: KeyHash, origin: Origin) -> Result<(), Rejected> {
    match origin {
        Origin::Direct => Ok(()),
        Origin::Neighbour(None) => Err(Rejected::new(
            RejectReason::UntrustedPeer,
            "received from a neighbour without an authenticated identity",
        )),
        Origin::Neighbour(Some(n)) if n == delegate || n == h => Ok(()),
        Origin::Neighbour(Some(_)) => Err(Rejected::new(
            RejectReason::DelegateMismatch,
            "the neighbour is neither the delegate nor the announced name",
        )),
    }
}

#[cfg(test)]
mod tests;
