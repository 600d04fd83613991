//! Signers and verifiers for the NDN signature types, over well-kept RustCrypto and dalek crates.
//!
//! Each type implements the [`Signer`](crate::Signer) and/or [`Verifier`](crate::Verifier)
//! traits, so it plugs into [`Interest::sign`](crate::Interest::sign),
//! [`Interest::verify`](crate::Interest::verify), [`Data::sign`](crate::Data::sign) and
//! [`Data::verify`](crate::Data::verify):
//!
//! | SignatureType | Signer | Verifier | Signature bytes |
//! |---|---|---|---|
//! | 0 DigestSha256 | [`DigestSha256`] | [`DigestSha256`] | SHA-256 of the signed portion (32 B) |
//! | 1 SignatureSha256WithRsa | [`RsaSha256Signer`] | [`RsaSha256Verifier`] | RSASSA-PKCS1-v1_5 with SHA-256 |
//! | 3 SignatureSha256WithEcdsa | [`EcdsaP256Signer`] | [`EcdsaP256Verifier`] | ASN.1 DER `ECDSA-Sig-Value` over SHA-256, curve P-256 |
//! | 4 SignatureHmacWithSha256 | [`HmacSha256`] | [`HmacSha256`] | HMAC-SHA-256 (32 B), compared in constant time |
//! | 5 SignatureEd25519 | [`Ed25519Signer`] | [`Ed25519Verifier`] | raw 64-byte Ed25519 (RFC 8032) over the signed portion |
//!
//! Keys travel in the encodings ndn-cxx and python-ndn exchange: private keys as PKCS#8 (DER or
//! PEM; RSA also PKCS#1), public keys as X.509 SubjectPublicKeyInfo (DER or PEM). Key generation
//! takes a caller's [`CryptoRng`] (`generate_with_rng`) or seeds one from the operating system
//! (`generate`), so tests and simulations stay deterministic.
//!
//! [`verify_interest_wire`] and [`verify_data_wire`] check a received packet over its original
//! bytes rather than over re-encoded fields; prefer them for packets from the network.
//!
//! Secret keys are zeroized on drop (by the underlying crates for ECDSA, RSA and Ed25519; by
//! [`zeroize::Zeroizing`] for HMAC) and their `Debug` output never shows key material.
//!
//= https://docs.named-data.net/NDN-packet-spec/0.3/signature.html#signaturetype
//# 0 DigestSha256, 1 SignatureSha256WithRsa, 3 SignatureSha256WithEcdsa,
//# 4 SignatureHmacWithSha256, 5 SignatureEd25519

mod digest_sha256;
mod ecdsa_p256;
mod ed25519;
mod hmac_sha256;
mod rsa_sha256;
mod wire;

pub use digest_sha256::DigestSha256;
pub use ecdsa_p256::{EcdsaP256Signer, EcdsaP256Verifier};
pub use ed25519::{Ed25519Signer, Ed25519Verifier};
pub use hmac_sha256::HmacSha256;
pub use rand_core::CryptoRng;
pub use rsa_sha256::{RsaSha256Signer, RsaSha256Verifier, RSA_MAX_BITS, RSA_MIN_BITS};
pub use wire::{verify_data_wire, verify_interest_wire};

use chacha20::ChaCha20Rng;
use rand_core::SeedableRng;
use zeroize::Zeroizing;

use crate::signature::VerifyError;

/// Why a key could not be loaded, generated or exported.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The bytes are not a well-formed key of the expected algorithm (bad DER or PEM, another
    /// algorithm, another curve).
    #[error("malformed or mismatched {0} key")]
    Malformed(&'static str),
    /// The key is well-formed but outside what Nameway accepts (for example RSA below 2048 bits).
    #[error("unsupported key: {0}")]
    Unsupported(&'static str),
    /// The operating system's random number generator failed.
    #[error("random number generator failed")]
    Rng,
    /// The key could not be encoded.
    #[error("cannot encode {0} key")]
    Encode(&'static str),
}

/// A ChaCha20 CSPRNG seeded from the operating system, for the `generate()` functions.
///
/// Seeding once from `getrandom` and failing with [`KeyError::Rng`] keeps key generation free
/// of panics even when the system RNG is unavailable (the crates' own `generate()` functions
/// panic instead).
fn os_rng() -> Result<ChaCha20Rng, KeyError> {
    let mut seed = Zeroizing::new([0u8; 32]);
    getrandom::fill(seed.as_mut()).map_err(|_| KeyError::Rng)?;
    Ok(ChaCha20Rng::from_seed(*seed))
}

/// Checks that a verifier is asked about its own SignatureType.
fn expect_type(expected: u64, found: u64) -> Result<(), VerifyError> {
    if expected == found {
        Ok(())
    } else {
        Err(VerifyError::WrongType(found))
    }
}

/// Adds the KeyLocator builder methods shared by every keyed signer (a `key_locator` field).
macro_rules! key_locator_methods {
    () => {
        /// Puts `locator` in the SignatureInfo of every packet this signer signs.
        #[must_use]
        pub fn with_key_locator(mut self, locator: $crate::signature::KeyLocator) -> Self {
            self.key_locator = Some(locator);
            self
        }

        /// Puts KeyLocator = `name` (the key or certificate name) in every SignatureInfo.
        #[must_use]
        pub fn with_key_name(self, name: $crate::name::Name) -> Self {
            self.with_key_locator($crate::signature::KeyLocator::Name(name))
        }
    };
}
pub(crate) use key_locator_methods;
