//! SignatureEd25519 (SignatureType 5).
//!
//= https://docs.named-data.net/NDN-packet-spec/0.3/signature.html#signatureed25519
//# The TLV-VALUE of SignatureValue is a 64-octet EdDSA signature

use core::fmt;

use ed25519_dalek::ed25519::signature::{MultipartSigner, MultipartVerifier};
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use ed25519_dalek::{Signature, SigningKey, VerifyingKey};
use zeroize::Zeroizing;

use super::{CryptoRng, KeyError};
use crate::signature::{signature_type, KeyLocator, SignError, Signer, Verifier, VerifyError};

const ALG: &str = "Ed25519";

/// An Ed25519 private key: signs the signed portion itself (PureEdDSA, no pre-hash).
///
/// The key is zeroized on drop and never printed.
#[derive(Clone)]
pub struct Ed25519Signer {
    key: SigningKey,
    key_locator: Option<KeyLocator>,
}

/// An Ed25519 public key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ed25519Verifier {
    key: VerifyingKey,
}

impl Ed25519Signer {
    /// Loads a PKCS#8 DER private key (RFC 8410; v1 or v2).
    ///
    /// # Errors
    /// [`KeyError::Malformed`] for bad DER or a key of another algorithm.
    pub fn from_pkcs8_der(der: &[u8]) -> Result<Self, KeyError> {
        let key = SigningKey::from_pkcs8_der(der).map_err(|_| KeyError::Malformed(ALG))?;
        Ok(Self::from_key(key))
    }

    /// Loads a PKCS#8 PEM private key (`-----BEGIN PRIVATE KEY-----`).
    ///
    /// # Errors
    /// As [`Ed25519Signer::from_pkcs8_der`].
    pub fn from_pkcs8_pem(pem: &str) -> Result<Self, KeyError> {
        let key = SigningKey::from_pkcs8_pem(pem).map_err(|_| KeyError::Malformed(ALG))?;
        Ok(Self::from_key(key))
    }

    /// A new key drawn from `rng`.
    pub fn generate_with_rng<R: CryptoRng + ?Sized>(rng: &mut R) -> Self {
        let mut seed = Zeroizing::new([0u8; 32]);
        rng.fill_bytes(seed.as_mut());
        Self::from_key(SigningKey::from_bytes(&seed))
    }

    /// A new key from the operating system's RNG.
    ///
    /// # Errors
    /// [`KeyError::Rng`] when the system RNG fails.
    pub fn generate() -> Result<Self, KeyError> {
        Ok(Self::generate_with_rng(&mut super::os_rng()?))
    }

    fn from_key(key: SigningKey) -> Self {
        Self {
            key,
            key_locator: None,
        }
    }

    super::key_locator_methods!();

    /// The matching public key.
    pub fn verifier(&self) -> Ed25519Verifier {
        Ed25519Verifier {
            key: self.key.verifying_key(),
        }
    }

    /// The private key as PKCS#8 DER (zeroized when dropped).
    ///
    /// # Errors
    /// [`KeyError::Encode`] if encoding fails.
    pub fn to_pkcs8_der(&self) -> Result<Zeroizing<Vec<u8>>, KeyError> {
        let doc = self.key.to_pkcs8_der().map_err(|_| KeyError::Encode(ALG))?;
        Ok(doc.to_bytes())
    }
}

impl fmt::Debug for Ed25519Signer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ed25519Signer")
            .field("key", &"<redacted>")
            .field("key_locator", &self.key_locator)
            .finish()
    }
}

impl Signer for Ed25519Signer {
    fn signature_type(&self) -> u64 {
        signature_type::ED25519
    }

    fn key_locator(&self) -> Option<KeyLocator> {
        self.key_locator.clone()
    }

    fn sign(&self, parts: &[&[u8]]) -> Result<Vec<u8>, SignError> {
        let sig: Signature = self
            .key
            .try_multipart_sign(parts)
            .map_err(|_| SignError::Key("Ed25519 signing failed".into()))?;
        Ok(sig.to_bytes().to_vec())
    }
}

impl Ed25519Verifier {
    /// Loads a SubjectPublicKeyInfo DER public key (RFC 8410).
    ///
    /// # Errors
    /// [`KeyError::Malformed`] for bad DER, a key of another algorithm, or an invalid point.
    pub fn from_public_key_der(der: &[u8]) -> Result<Self, KeyError> {
        let key = VerifyingKey::from_public_key_der(der).map_err(|_| KeyError::Malformed(ALG))?;
        Ok(Self { key })
    }

    /// Loads a SubjectPublicKeyInfo PEM public key (`-----BEGIN PUBLIC KEY-----`).
    ///
    /// # Errors
    /// As [`Ed25519Verifier::from_public_key_der`].
    pub fn from_public_key_pem(pem: &str) -> Result<Self, KeyError> {
        let key = VerifyingKey::from_public_key_pem(pem).map_err(|_| KeyError::Malformed(ALG))?;
        Ok(Self { key })
    }

    /// The public key as SubjectPublicKeyInfo DER.
    ///
    /// # Errors
    /// [`KeyError::Encode`] if encoding fails.
    pub fn to_public_key_der(&self) -> Result<Vec<u8>, KeyError> {
        let doc = self
            .key
            .to_public_key_der()
            .map_err(|_| KeyError::Encode(ALG))?;
        Ok(doc.to_vec())
    }
}

impl Verifier for Ed25519Verifier {
    fn verify(
        &self,
        signature_type: u64,
        parts: &[&[u8]],
        signature: &[u8],
    ) -> Result<(), VerifyError> {
        super::expect_type(signature_type::ED25519, signature_type)?;
        let bytes: &[u8; 64] = signature.try_into().map_err(|_| VerifyError::Malformed)?;
        let sig = Signature::from_bytes(bytes);
        self.key
            .multipart_verify(parts, &sig)
            .map_err(|_| VerifyError::Mismatch)
    }
}
