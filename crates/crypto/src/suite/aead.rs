//! The AEAD suites: the RustCrypto ChaCha20-Poly1305, XChaCha20-Poly1305 and
//! AES-GCM behind one adapter, and this crate's XForro14-Poly1305.

use core::fmt;

use aes_gcm::aead::consts::U16;
use aes_gcm::aead::{AeadCore, AeadInOut, KeyInit};
use aes_gcm::{Aes128Gcm, Aes256Gcm};
use chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};
use zeroize::Zeroize;

use super::{fixed_key, fixed_nonce, Suite};
use crate::error::CryptoError;
use crate::forro14::XForro14Poly1305;
use crate::provider::{PayloadCipher, Tag};

/// A RustCrypto AEAD with a 16-byte tag. The wrapped type zeroizes its key
/// on drop (the crates' `zeroize` feature is enabled) and verifies tags in
/// constant time before decrypting.
pub(crate) struct RustCryptoAead<A> {
    suite: Suite,
    aead: A,
}

pub(crate) fn chacha20_poly1305(
    key: &[u8],
) -> Result<RustCryptoAead<ChaCha20Poly1305>, CryptoError> {
    RustCryptoAead::new(Suite::ChaCha20Poly1305, key)
}

pub(crate) fn xchacha20_poly1305(
    key: &[u8],
) -> Result<RustCryptoAead<XChaCha20Poly1305>, CryptoError> {
    RustCryptoAead::new(Suite::XChaCha20Poly1305, key)
}

pub(crate) fn aes_128_gcm(key: &[u8]) -> Result<RustCryptoAead<Aes128Gcm>, CryptoError> {
    RustCryptoAead::new(Suite::Aes128Gcm, key)
}

pub(crate) fn aes_256_gcm(key: &[u8]) -> Result<RustCryptoAead<Aes256Gcm>, CryptoError> {
    RustCryptoAead::new(Suite::Aes256Gcm, key)
}

impl<A: KeyInit> RustCryptoAead<A> {
    fn new(suite: Suite, key: &[u8]) -> Result<Self, CryptoError> {
        let aead = A::new_from_slice(key).map_err(|_| CryptoError::KeyLength {
            expected: suite.key_len(),
            actual: key.len(),
        })?;
        Ok(Self { suite, aead })
    }
}

impl<A> PayloadCipher for RustCryptoAead<A>
where
    A: AeadInOut + AeadCore<TagSize = U16> + Send + Sync,
{
    fn suite(&self) -> Suite {
        self.suite
    }

    fn seal_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<Tag, CryptoError> {
        let nonce = self.nonce(nonce)?;
        let tag = self
            .aead
            .encrypt_inout_detached(&nonce, aad, buf.into())
            .map_err(|_| CryptoError::MessageTooLong)?;
        Ok(Tag::new(tag.into()))
    }

    fn open_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> Result<(), CryptoError> {
        let nonce = self.nonce(nonce)?;
        let tag = aes_gcm::aead::Tag::<A>::try_from(tag).map_err(|_| CryptoError::TagLength {
            expected: Tag::MAX_LEN,
            actual: tag.len(),
        })?;
        self.aead
            .decrypt_inout_detached(&nonce, aad, buf.into(), &tag)
            .map_err(|_| CryptoError::AuthenticationFailed)
    }
}

impl<A: AeadCore> RustCryptoAead<A> {
    fn nonce(&self, nonce: &[u8]) -> Result<aes_gcm::aead::Nonce<A>, CryptoError> {
        aes_gcm::aead::Nonce::<A>::try_from(nonce).map_err(|_| CryptoError::NonceLength {
            expected: self.suite.nonce_len(),
            actual: nonce.len(),
        })
    }
}

impl<A> fmt::Debug for RustCryptoAead<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RustCryptoAead")
            .field("suite", &self.suite)
            .finish_non_exhaustive()
    }
}

/// `xforro14-poly1305`: this crate's XForro14-Poly1305.
#[derive(Debug)]
pub(crate) struct XForro14Poly1305Cipher {
    aead: XForro14Poly1305,
}

impl XForro14Poly1305Cipher {
    pub(crate) fn new(key: &[u8]) -> Result<Self, CryptoError> {
        let mut key = fixed_key::<32>(key)?;
        let aead = XForro14Poly1305::new(&key);
        key.zeroize();
        Ok(Self { aead })
    }
}

impl PayloadCipher for XForro14Poly1305Cipher {
    fn suite(&self) -> Suite {
        Suite::XForro14Poly1305
    }

    fn seal_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<Tag, CryptoError> {
        let tag = self
            .aead
            .seal_in_place_detached(&fixed_nonce::<24>(nonce)?, aad, buf)?;
        Ok(Tag::new(tag))
    }

    fn open_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> Result<(), CryptoError> {
        let nonce = fixed_nonce::<24>(nonce)?;
        let tag: [u8; 16] = tag.try_into().map_err(|_| CryptoError::TagLength {
            expected: Tag::MAX_LEN,
            actual: tag.len(),
        })?;
        self.aead.open_in_place_detached(&nonce, aad, buf, &tag)
    }
}
