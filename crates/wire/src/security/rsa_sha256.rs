//! SignatureSha256WithRsa (SignatureType 1): RSASSA-PKCS1-v1_5 with SHA-256.
//!
//= https://docs.named-data.net/NDN-packet-spec/0.3/signature.html#signaturesha256withrsa
//# The TLV-VALUE of SignatureValue is a RSASSA-PKCS1-v1_5 signature over the SHA-256 digest

use core::fmt;

use rsa::pkcs1::{DecodeRsaPrivateKey, DecodeRsaPublicKey};
use rsa::pkcs1v15::{Signature, SigningKey, VerifyingKey};
use rsa::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use rsa::signature::{DigestVerifier, MultipartSigner};
use rsa::traits::PublicKeyParts;
use rsa::{PrivateKey as RsaPrivateKey, PublicKey as RsaPublicKey};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use super::{CryptoRng, KeyError};
use crate::signature::{signature_type, KeyLocator, SignError, Signer, Verifier, VerifyError};

const ALG: &str = "RSA";

/// Smallest modulus accepted for loading, generating or verifying, in bits.
pub const RSA_MIN_BITS: usize = 2048;
/// Largest modulus accepted, in bits.
pub const RSA_MAX_BITS: usize = 8192;

/// An RSA private key that signs with RSASSA-PKCS1-v1_5 over SHA-256.
///
/// Private-key operations use blinding, with randomness from the operating system. The key is
/// zeroized on drop and never printed.
#[derive(Clone)]
pub struct RsaSha256Signer {
    key: SigningKey<Sha256>,
    key_locator: Option<KeyLocator>,
}

/// An RSA public key that verifies RSASSA-PKCS1-v1_5 SHA-256 signatures.
#[derive(Clone, Debug, PartialEq)]
pub struct RsaSha256Verifier {
    key: VerifyingKey<Sha256>,
}

fn check_size(bits: usize) -> Result<(), KeyError> {
    if (RSA_MIN_BITS..=RSA_MAX_BITS).contains(&bits) {
        Ok(())
    } else {
        Err(KeyError::Unsupported(
            "RSA modulus must be 2048 to 8192 bits",
        ))
    }
}

impl RsaSha256Signer {
    /// Loads a PKCS#8 DER private key.
    ///
    /// # Errors
    /// [`KeyError::Malformed`] for bad DER or a non-RSA key; [`KeyError::Unsupported`] for a
    /// modulus outside 2048..=8192 bits.
    pub fn from_pkcs8_der(der: &[u8]) -> Result<Self, KeyError> {
        Self::from_key(RsaPrivateKey::from_pkcs8_der(der).map_err(|_| KeyError::Malformed(ALG))?)
    }

    /// Loads a PKCS#8 PEM private key (`-----BEGIN PRIVATE KEY-----`).
    ///
    /// # Errors
    /// As [`RsaSha256Signer::from_pkcs8_der`].
    pub fn from_pkcs8_pem(pem: &str) -> Result<Self, KeyError> {
        Self::from_key(RsaPrivateKey::from_pkcs8_pem(pem).map_err(|_| KeyError::Malformed(ALG))?)
    }

    /// Loads a PKCS#1 DER `RSAPrivateKey` (OpenSSL's and PyCryptodome's traditional format).
    ///
    /// # Errors
    /// As [`RsaSha256Signer::from_pkcs8_der`].
    pub fn from_pkcs1_der(der: &[u8]) -> Result<Self, KeyError> {
        Self::from_key(RsaPrivateKey::from_pkcs1_der(der).map_err(|_| KeyError::Malformed(ALG))?)
    }

    /// A new key of `bits` bits (2048 to 4096) drawn from `rng`, with exponent 65537.
    ///
    /// This takes seconds (longer in debug builds).
    ///
    /// # Errors
    /// [`KeyError::Unsupported`] for a size outside 2048..=4096.
    pub fn generate_with_rng<R: CryptoRng + ?Sized>(
        rng: &mut R,
        bits: usize,
    ) -> Result<Self, KeyError> {
        if !(RSA_MIN_BITS..=4096).contains(&bits) {
            return Err(KeyError::Unsupported(
                "RSA key generation supports 2048 to 4096 bits",
            ));
        }
        let key = RsaPrivateKey::new(rng, bits).map_err(|_| KeyError::Unsupported(ALG))?;
        Self::from_key(key)
    }

    /// A new key of `bits` bits (2048 to 4096) from the operating system's RNG.
    ///
    /// # Errors
    /// [`KeyError::Rng`] when the system RNG fails, or as [`RsaSha256Signer::generate_with_rng`].
    pub fn generate(bits: usize) -> Result<Self, KeyError> {
        Self::generate_with_rng(&mut super::os_rng()?, bits)
    }

    fn from_key(key: RsaPrivateKey) -> Result<Self, KeyError> {
        check_size(key.size() * 8)?;
        Ok(Self {
            key: SigningKey::new(key),
            key_locator: None,
        })
    }

    super::key_locator_methods!();

    /// The matching public key.
    pub fn verifier(&self) -> RsaSha256Verifier {
        let private: &RsaPrivateKey = self.key.as_ref();
        RsaSha256Verifier {
            key: VerifyingKey::new(private.to_public_key()),
        }
    }

    /// The modulus size in bits.
    pub fn bits(&self) -> usize {
        let private: &RsaPrivateKey = self.key.as_ref();
        private.size() * 8
    }

    /// The private key as PKCS#8 DER (zeroized when dropped).
    ///
    /// # Errors
    /// [`KeyError::Encode`] if encoding fails.
    pub fn to_pkcs8_der(&self) -> Result<Zeroizing<Vec<u8>>, KeyError> {
        let private: &RsaPrivateKey = self.key.as_ref();
        let doc = private.to_pkcs8_der().map_err(|_| KeyError::Encode(ALG))?;
        Ok(doc.to_bytes())
    }
}

impl fmt::Debug for RsaSha256Signer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RsaSha256Signer")
            .field("bits", &self.bits())
            .field("key", &"<redacted>")
            .field("key_locator", &self.key_locator)
            .finish()
    }
}

impl Signer for RsaSha256Signer {
    fn signature_type(&self) -> u64 {
        signature_type::SHA256_WITH_RSA
    }

    fn key_locator(&self) -> Option<KeyLocator> {
        self.key_locator.clone()
    }

    fn sign(&self, parts: &[&[u8]]) -> Result<Vec<u8>, SignError> {
        let sig: Signature = self
            .key
            .try_multipart_sign(parts)
            .map_err(|_| SignError::Key("RSA signing failed".into()))?;
        Ok(Box::<[u8]>::from(sig).into_vec())
    }
}

impl RsaSha256Verifier {
    /// Loads a SubjectPublicKeyInfo DER public key (the content of an NDN certificate).
    ///
    /// # Errors
    /// [`KeyError::Malformed`] for bad DER or a non-RSA key; [`KeyError::Unsupported`] for a
    /// modulus outside 2048..=8192 bits.
    pub fn from_public_key_der(der: &[u8]) -> Result<Self, KeyError> {
        Self::from_key(
            RsaPublicKey::from_public_key_der(der).map_err(|_| KeyError::Malformed(ALG))?,
        )
    }

    /// Loads a SubjectPublicKeyInfo PEM public key (`-----BEGIN PUBLIC KEY-----`).
    ///
    /// # Errors
    /// As [`RsaSha256Verifier::from_public_key_der`].
    pub fn from_public_key_pem(pem: &str) -> Result<Self, KeyError> {
        Self::from_key(
            RsaPublicKey::from_public_key_pem(pem).map_err(|_| KeyError::Malformed(ALG))?,
        )
    }

    /// Loads a PKCS#1 DER `RSAPublicKey`.
    ///
    /// # Errors
    /// As [`RsaSha256Verifier::from_public_key_der`].
    pub fn from_pkcs1_der(der: &[u8]) -> Result<Self, KeyError> {
        Self::from_key(RsaPublicKey::from_pkcs1_der(der).map_err(|_| KeyError::Malformed(ALG))?)
    }

    fn from_key(key: RsaPublicKey) -> Result<Self, KeyError> {
        check_size(key.size() * 8)?;
        Ok(Self {
            key: VerifyingKey::new(key),
        })
    }

    /// The public key as SubjectPublicKeyInfo DER.
    ///
    /// # Errors
    /// [`KeyError::Encode`] if encoding fails.
    pub fn to_public_key_der(&self) -> Result<Vec<u8>, KeyError> {
        let public: &RsaPublicKey = self.key.as_ref();
        let doc = public
            .to_public_key_der()
            .map_err(|_| KeyError::Encode(ALG))?;
        Ok(doc.to_vec())
    }
}

impl Verifier for RsaSha256Verifier {
    fn verify(
        &self,
        signature_type: u64,
        parts: &[&[u8]],
        signature: &[u8],
    ) -> Result<(), VerifyError> {
        super::expect_type(signature_type::SHA256_WITH_RSA, signature_type)?;
        let public: &RsaPublicKey = self.key.as_ref();
        if signature.len() != public.size() {
            return Err(VerifyError::Malformed);
        }
        let sig = Signature::try_from(signature).map_err(|_| VerifyError::Malformed)?;
        let hash_parts = |d: &mut Sha256| {
            parts.iter().for_each(|p| d.update(p));
            Ok(())
        };
        self.key
            .verify_digest(hash_parts, &sig)
            .map_err(|_| VerifyError::Mismatch)
    }
}
