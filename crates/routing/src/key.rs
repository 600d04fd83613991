//! The keys that own self-certifying names: [`NameKey`] signs (Ed25519 by default, ECDSA P-256
//! accepted), [`PublicKey`] verifies a SubjectPublicKeyInfo DER by the SignatureType it signs.

use bytes::Bytes;
use nameway_wire::security::{
    EcdsaP256Signer, EcdsaP256Verifier, Ed25519Signer, Ed25519Verifier, KeyError,
};
use nameway_wire::signature::signature_type;
use nameway_wire::{KeyLocator, Name, SignError, Signer, Verifier, VerifyError};

use crate::sc::KeyHash;

/// A private key and the self-certifying name it owns.
///
/// Signatures carry `KeyLocator = KeyDigest(h)`, the key's own hash, so a verifier finds the
/// key in the record (NwPublicKey) and checks that it hashes to `h`.
#[derive(Clone, Debug)]
pub struct NameKey {
    signer: KeySigner,
    spki: Bytes,
    hash: KeyHash,
}

#[derive(Clone, Debug)]
enum KeySigner {
    Ed25519(Ed25519Signer),
    EcdsaP256(EcdsaP256Signer),
}

impl NameKey {
    /// A new Ed25519 key from the operating system's RNG.
    ///
    /// # Errors
    /// [`KeyError::Rng`] when the RNG fails, [`KeyError::Encode`] if the key cannot be
    /// exported.
    pub fn generate() -> Result<Self, KeyError> {
        Self::from_ed25519(Ed25519Signer::generate()?)
    }

    /// Wraps an Ed25519 key (SignatureType 5).
    ///
    /// # Errors
    /// [`KeyError::Encode`] if the public key cannot be exported.
    pub fn from_ed25519(key: Ed25519Signer) -> Result<Self, KeyError> {
        let spki = Bytes::from(key.verifier().to_public_key_der()?);
        let hash = KeyHash::of_spki(&spki);
        let key = key.with_key_locator(KeyLocator::KeyDigest(Bytes::copy_from_slice(
            hash.as_bytes(),
        )));
        Ok(Self {
            signer: KeySigner::Ed25519(key),
            spki,
            hash,
        })
    }

    /// Wraps an ECDSA P-256 key (SignatureType 3).
    ///
    /// # Errors
    /// [`KeyError::Encode`] if the public key cannot be exported.
    pub fn from_ecdsa_p256(key: EcdsaP256Signer) -> Result<Self, KeyError> {
        let spki = Bytes::from(key.verifier().to_public_key_der()?);
        let hash = KeyHash::of_spki(&spki);
        let key = key.with_key_locator(KeyLocator::KeyDigest(Bytes::copy_from_slice(
            hash.as_bytes(),
        )));
        Ok(Self {
            signer: KeySigner::EcdsaP256(key),
            spki,
            hash,
        })
    }

    /// Loads a PKCS#8 DER private key, Ed25519 or ECDSA P-256.
    ///
    /// # Errors
    /// [`KeyError::Malformed`] when it is neither.
    pub fn from_pkcs8_der(der: &[u8]) -> Result<Self, KeyError> {
        match Ed25519Signer::from_pkcs8_der(der) {
            Ok(k) => Self::from_ed25519(k),
            Err(_) => Self::from_ecdsa_p256(EcdsaP256Signer::from_pkcs8_der(der)?),
        }
    }

    /// The public key as SubjectPublicKeyInfo DER (what NwPublicKey carries).
    pub fn spki(&self) -> &Bytes {
        &self.spki
    }

    /// The SHA-256 of [`NameKey::spki`].
    pub fn hash(&self) -> KeyHash {
        self.hash
    }

    /// The self-certifying name this key owns, `/32=sc/<h>`.
    pub fn name(&self) -> Name {
        self.hash.name()
    }

    fn inner(&self) -> &dyn Signer {
        match &self.signer {
            KeySigner::Ed25519(k) => k,
            KeySigner::EcdsaP256(k) => k,
        }
    }
}

impl Signer for NameKey {
    fn signature_type(&self) -> u64 {
        self.inner().signature_type()
    }

    fn key_locator(&self) -> Option<KeyLocator> {
        self.inner().key_locator()
    }

    fn sign(&self, parts: &[&[u8]]) -> Result<Vec<u8>, SignError> {
        self.inner().sign(parts)
    }
}

/// A public key parsed for the SignatureType it is to check.
#[derive(Clone, Debug)]
pub enum PublicKey {
    /// Ed25519, for SignatureType 5.
    Ed25519(Ed25519Verifier),
    /// ECDSA P-256, for SignatureType 3.
    EcdsaP256(EcdsaP256Verifier),
}

/// Why a key could not check a signature.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyCheckError {
    /// The SignatureType is neither Ed25519 (5) nor ECDSA P-256 (3).
    #[error("signature type {0} is not accepted (Ed25519 or ECDSA P-256 only)")]
    UnsupportedType(u64),
    /// The key is not a well-formed key of the signature's algorithm.
    #[error("key: {0}")]
    Key(#[from] KeyError),
    /// The signature does not verify.
    #[error("signature: {0}")]
    Signature(#[from] VerifyError),
}

impl PublicKey {
    /// Parses `spki` as a key of the algorithm of `signature_type`.
    ///
    /// # Errors
    /// [`KeyCheckError::UnsupportedType`] or [`KeyCheckError::Key`].
    pub fn for_signature(signature_type: u64, spki: &[u8]) -> Result<Self, KeyCheckError> {
        match signature_type {
            signature_type::ED25519 => {
                Ok(Self::Ed25519(Ed25519Verifier::from_public_key_der(spki)?))
            }
            signature_type::SHA256_WITH_ECDSA => Ok(Self::EcdsaP256(
                EcdsaP256Verifier::from_public_key_der(spki)?,
            )),
            other => Err(KeyCheckError::UnsupportedType(other)),
        }
    }

    /// Verifies `signature` over `signed` with the key `spki`, for `signature_type`.
    ///
    /// # Errors
    /// [`KeyCheckError`] saying what failed.
    pub fn check(
        signature_type: u64,
        spki: &[u8],
        signed: &[u8],
        signature: &[u8],
    ) -> Result<(), KeyCheckError> {
        let key = Self::for_signature(signature_type, spki)?;
        Ok(key.verify(signature_type, &[signed], signature)?)
    }
}

impl Verifier for PublicKey {
    fn verify(
        &self,
        signature_type: u64,
        parts: &[&[u8]],
        signature: &[u8],
    ) -> Result<(), VerifyError> {
        match self {
            Self::Ed25519(k) => k.verify(signature_type, parts, signature),
            Self::EcdsaP256(k) => k.verify(signature_type, parts, signature),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_algorithms_sign_and_check_with_their_hash_as_locator() {
        let keys = [
            NameKey::generate().unwrap(),
            NameKey::from_ecdsa_p256(EcdsaP256Signer::generate().unwrap()).unwrap(),
        ];
        for key in keys {
            assert_eq!(key.hash(), KeyHash::of_spki(key.spki()));
            assert_eq!(
                key.key_locator(),
                Some(KeyLocator::KeyDigest(Bytes::copy_from_slice(
                    key.hash().as_bytes()
                )))
            );
            let sig = key.sign(&[b"portion"]).unwrap();
            let typ = key.signature_type();
            PublicKey::check(typ, key.spki(), b"portion", &sig).unwrap();
            assert!(matches!(
                PublicKey::check(typ, key.spki(), b"portion!", &sig),
                Err(KeyCheckError::Signature(_))
            ));
            let other = if typ == 5 { 3 } else { 5 };
            assert!(matches!(
                PublicKey::check(other, key.spki(), b"portion", &sig),
                Err(KeyCheckError::Key(_))
            ));
            assert_eq!(
                PublicKey::check(1, key.spki(), b"portion", &sig),
                Err(KeyCheckError::UnsupportedType(1))
            );
        }
    }

    #[test]
    fn pkcs8_of_either_algorithm_loads() {
        let ed = Ed25519Signer::generate().unwrap();
        let k = NameKey::from_pkcs8_der(&ed.to_pkcs8_der().unwrap()).unwrap();
        assert_eq!(k.signature_type(), 5);
        let ec = EcdsaP256Signer::generate().unwrap();
        let k = NameKey::from_pkcs8_der(&ec.to_pkcs8_der().unwrap()).unwrap();
        assert_eq!(k.signature_type(), 3);
        assert!(NameKey::from_pkcs8_der(b"garbage").is_err());
    }
}
