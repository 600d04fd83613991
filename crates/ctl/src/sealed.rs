//! Per-prefix symmetric keys sealed to each member router with HPKE (RFC 9180, base mode:
//! DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20-Poly1305).
//!
//! A sealed key is `enc (32 bytes) || ciphertext (32-byte key + 16-byte tag)`. The HPKE
//! `info` binds it to the key id and the recipient router's name, so a sealed key copied to
//! another router or relabelled does not open.

use hpke::aead::ChaCha20Poly1305;
use hpke::kdf::HkdfSha256;
use hpke::kem::X25519HkdfSha256;
use hpke::{Deserializable as _, Kem as _, OpModeR, OpModeS, Serializable as _};
use zeroize::Zeroizing;

type Kem = X25519HkdfSha256;

/// The length of a sealed 256-bit key.
pub const SEALED_LEN: usize = 32 + 32 + 16;

/// Why sealing or opening failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SealError {
    /// A public or private key that is not 32 bytes of X25519.
    #[error("not an X25519 key")]
    BadKey,
    /// The sealed key is not [`SEALED_LEN`] bytes.
    #[error("sealed key has {0} bytes, not {SEALED_LEN}")]
    BadLength(usize),
    /// The ciphertext does not open (wrong recipient, key id or router, or tampered).
    #[error("sealed key does not open")]
    Open,
    /// HPKE failed to seal.
    #[error("cannot seal: {0}")]
    Seal(String),
    /// The system RNG failed.
    #[error("random number generator failed")]
    Rng,
}

/// A router's X25519 key pair (its private half never leaves the router).
pub struct KemKeyPair {
    private: <Kem as hpke::Kem>::PrivateKey,
    public: [u8; 32],
}

impl std::fmt::Debug for KemKeyPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KemKeyPair")
            .field("public", &hex::encode(self.public))
            .finish_non_exhaustive()
    }
}

impl KemKeyPair {
    /// A new key pair from the OS RNG.
    ///
    /// # Errors
    /// [`SealError::Rng`].
    pub fn generate() -> Result<Self, SealError> {
        let mut ikm = Zeroizing::new([0u8; 32]);
        getrandom::fill(ikm.as_mut()).map_err(|_| SealError::Rng)?;
        Ok(Self::from_seed(&ikm))
    }

    /// The key pair derived from `seed` (RFC 9180 DeriveKeyPair).
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        let (private, public) = Kem::derive_keypair(seed);
        let mut p = [0u8; 32];
        p.copy_from_slice(&public.to_bytes());
        Self { private, public: p }
    }

    /// The key pair of an X25519 secret scalar: a forwarder's secure-link identity, whose
    /// public key the controller recorded at enrolment.
    ///
    /// # Errors
    /// [`SealError::BadKey`].
    pub fn from_private(secret: &[u8; 32]) -> Result<Self, SealError> {
        let private =
            <Kem as hpke::Kem>::PrivateKey::from_bytes(secret).map_err(|_| SealError::BadKey)?;
        let mut p = [0u8; 32];
        p.copy_from_slice(&Kem::sk_to_pk(&private).to_bytes());
        Ok(Self { private, public: p })
    }

    /// The public key, to give the controller.
    pub fn public(&self) -> [u8; 32] {
        self.public
    }
}

/// A fresh random 256-bit key.
///
/// # Errors
/// [`SealError::Rng`].
pub fn random_key() -> Result<Zeroizing<[u8; 32]>, SealError> {
    let mut k = Zeroizing::new([0u8; 32]);
    getrandom::fill(k.as_mut()).map_err(|_| SealError::Rng)?;
    Ok(k)
}

fn info(key_id: &str, router: &str) -> Vec<u8> {
    let mut v = b"nameway group key\0".to_vec();
    v.extend_from_slice(key_id.as_bytes());
    v.push(0);
    v.extend_from_slice(router.as_bytes());
    v
}

/// Seals `key` (id `key_id`) to `router` whose X25519 public key is `recipient`.
///
/// # Errors
/// [`SealError::BadKey`], [`SealError::Seal`].
pub fn seal_key(
    recipient: &[u8],
    router: &str,
    key_id: &str,
    key: &[u8; 32],
) -> Result<Vec<u8>, SealError> {
    let pk = <Kem as hpke::Kem>::PublicKey::from_bytes(recipient).map_err(|_| SealError::BadKey)?;
    let mut rng = rand_core::UnwrapErr(rand_core::OsRng);
    let (enc, ct) = hpke::single_shot_seal::<ChaCha20Poly1305, HkdfSha256, Kem, _>(
        &OpModeS::Base,
        &pk,
        &info(key_id, router),
        key,
        key_id.as_bytes(),
        &mut rng,
    )
    .map_err(|e| SealError::Seal(e.to_string()))?;
    let mut out = enc.to_bytes().to_vec();
    out.extend_from_slice(&ct);
    Ok(out)
}

/// Opens a key sealed to `router` with `pair`.
///
/// # Errors
/// [`SealError::BadLength`], [`SealError::Open`].
pub fn open_key(
    pair: &KemKeyPair,
    router: &str,
    key_id: &str,
    sealed: &[u8],
) -> Result<Zeroizing<[u8; 32]>, SealError> {
    if sealed.len() != SEALED_LEN {
        return Err(SealError::BadLength(sealed.len()));
    }
    let (enc, ct) = sealed.split_at(32);
    let enc = <Kem as hpke::Kem>::EncappedKey::from_bytes(enc).map_err(|_| SealError::Open)?;
    let pt = Zeroizing::new(
        hpke::single_shot_open::<ChaCha20Poly1305, HkdfSha256, Kem>(
            &OpModeR::Base,
            &pair.private,
            &enc,
            &info(key_id, router),
            ct,
            key_id.as_bytes(),
        )
        .map_err(|_| SealError::Open)?,
    );
    let mut key = Zeroizing::new([0u8; 32]);
    if pt.len() != 32 {
        return Err(SealError::Open);
    }
    key.copy_from_slice(&pt);
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_key_opens_only_for_its_router_and_id() {
        let r1 = KemKeyPair::generate().unwrap();
        let r2 = KemKeyPair::generate().unwrap();
        let key = random_key().unwrap();
        let sealed = seal_key(&r1.public(), "/ex/r1", "k1", &key).unwrap();
        assert_eq!(sealed.len(), SEALED_LEN);
        assert_eq!(*open_key(&r1, "/ex/r1", "k1", &sealed).unwrap(), *key);
        assert!(matches!(
            open_key(&r2, "/ex/r1", "k1", &sealed),
            Err(SealError::Open)
        ));
        assert!(matches!(
            open_key(&r1, "/ex/r2", "k1", &sealed),
            Err(SealError::Open)
        ));
        assert!(matches!(
            open_key(&r1, "/ex/r1", "k2", &sealed),
            Err(SealError::Open)
        ));
        let mut bad = sealed.clone();
        bad[40] ^= 1;
        assert!(matches!(
            open_key(&r1, "/ex/r1", "k1", &bad),
            Err(SealError::Open)
        ));
        assert!(matches!(
            open_key(&r1, "/ex/r1", "k1", &sealed[..10]),
            Err(SealError::BadLength(10))
        ));
        // Two seals of one key differ (fresh ephemeral keys).
        assert_ne!(
            sealed,
            seal_key(&r1.public(), "/ex/r1", "k1", &key).unwrap()
        );
    }
}
