//! DigestSha256 (SignatureType 0): an integrity check with no key.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::signature::{signature_type, KeyLocator, SignError, Signer, Verifier, VerifyError};

/// DigestSha256: the SignatureValue is the SHA-256 of the signed portion.
///
/// It proves integrity only, not origin; NFD and the client libraries use it for local
/// management commands and their responses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DigestSha256;

impl DigestSha256 {
    fn digest(parts: &[&[u8]]) -> [u8; 32] {
        let mut h = Sha256::new();
        for p in parts {
            h.update(p);
        }
        h.finalize().into()
    }
}

impl Signer for DigestSha256 {
    fn signature_type(&self) -> u64 {
        signature_type::DIGEST_SHA256
    }

    fn key_locator(&self) -> Option<KeyLocator> {
        None
    }

    fn sign(&self, parts: &[&[u8]]) -> Result<Vec<u8>, SignError> {
        Ok(Self::digest(parts).to_vec())
    }
}

impl Verifier for DigestSha256 {
    fn verify(
        &self,
        signature_type: u64,
        parts: &[&[u8]],
        signature: &[u8],
    ) -> Result<(), VerifyError> {
        super::expect_type(signature_type::DIGEST_SHA256, signature_type)?;
        if signature.len() != 32 {
            return Err(VerifyError::Malformed);
        }
        if bool::from(Self::digest(parts).ct_eq(signature)) {
            Ok(())
        } else {
            Err(VerifyError::Mismatch)
        }
    }
}
