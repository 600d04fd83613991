//! SignatureHmacWithSha256 (SignatureType 4): a MAC with a shared secret key.

use core::fmt;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use zeroize::Zeroizing;

use super::{CryptoRng, KeyError};
use crate::signature::{signature_type, KeyLocator, SignError, Signer, Verifier, VerifyError};

/// Length of generated keys and of the MAC, in bytes.
const LEN: usize = 32;

/// HMAC-SHA-256 with a shared secret key: both the signer and the verifier.
///
/// The key is zeroized on drop and never printed; verification compares tags in constant time.
#[derive(Clone)]
pub struct HmacSha256 {
    key: Zeroizing<Vec<u8>>,
    key_locator: Option<KeyLocator>,
}

impl HmacSha256 {
    /// A signer and verifier with a copy of `key`.
    ///
    /// # Errors
    /// [`KeyError::Unsupported`] for an empty key.
    pub fn new(key: &[u8]) -> Result<Self, KeyError> {
        if key.is_empty() {
            return Err(KeyError::Unsupported("empty HMAC key"));
        }
        Ok(Self {
            key: Zeroizing::new(key.to_vec()),
            key_locator: None,
        })
    }

    /// A new random 256-bit key drawn from `rng`.
    pub fn generate_with_rng<R: CryptoRng + ?Sized>(rng: &mut R) -> Self {
        let mut key = Zeroizing::new(vec![0u8; LEN]);
        rng.fill_bytes(&mut key);
        Self {
            key,
            key_locator: None,
        }
    }

    /// A new random 256-bit key from the operating system's RNG.
    ///
    /// # Errors
    /// [`KeyError::Rng`] when the system RNG fails.
    pub fn generate() -> Result<Self, KeyError> {
        Ok(Self::generate_with_rng(&mut super::os_rng()?))
    }

    super::key_locator_methods!();

    /// The secret key bytes, to share with the peer. Handle with care: this is the secret.
    pub fn expose_secret(&self) -> &[u8] {
        &self.key
    }

    fn mac(&self, parts: &[&[u8]]) -> Result<Hmac<Sha256>, KeyError> {
        // HMAC accepts keys of any length; this cannot fail for a non-empty key.
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
            .map_err(|_| KeyError::Malformed("HMAC"))?;
        for p in parts {
            mac.update(p);
        }
        Ok(mac)
    }
}

impl fmt::Debug for HmacSha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HmacSha256")
            .field("key", &"<redacted>")
            .field("key_locator", &self.key_locator)
            .finish()
    }
}

impl Signer for HmacSha256 {
    fn signature_type(&self) -> u64 {
        signature_type::HMAC_WITH_SHA256
    }

    fn key_locator(&self) -> Option<KeyLocator> {
        self.key_locator.clone()
    }

    fn sign(&self, parts: &[&[u8]]) -> Result<Vec<u8>, SignError> {
        let mac = self.mac(parts).map_err(|e| SignError::Key(e.to_string()))?;
        Ok(mac.finalize().into_bytes().to_vec())
    }
}

impl Verifier for HmacSha256 {
    fn verify(
        &self,
        signature_type: u64,
        parts: &[&[u8]],
        signature: &[u8],
    ) -> Result<(), VerifyError> {
        super::expect_type(signature_type::HMAC_WITH_SHA256, signature_type)?;
        if signature.len() != LEN {
            return Err(VerifyError::Malformed);
        }
        let mac = self.mac(parts).map_err(|_| VerifyError::Mismatch)?;
        // `verify_slice` compares in constant time.
        mac.verify_slice(signature)
            .map_err(|_| VerifyError::Mismatch)
    }
}
