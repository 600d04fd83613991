//! The AEAD suites: ring's ChaCha20-Poly1305 and AES-GCM behind one adapter,
//! XChaCha20-Poly1305 as HChaCha20 plus ring's ChaCha20-Poly1305, and this
//! crate's XForro14-Poly1305.
//!
//! ring keeps its expanded keys (the AES round keys, the GHASH key powers,
//! the ChaCha20 key) in memory it does not zeroize on drop; see the crate
//! documentation's "Guarantees". Every copy of key bytes this module makes is
//! zeroized.

use core::fmt;

use chacha20::R20;
use ring::aead::{Aad, Algorithm, LessSafeKey, Nonce, UnboundKey};
use zeroize::{Zeroize, ZeroizeOnDrop};

use super::{fixed_key, fixed_nonce, Suite};
use crate::error::CryptoError;
use crate::forro14::XForro14Poly1305;
use crate::libcrypto::{self, EvpAead, EvpCipher, Outcome, LARGE};
use crate::provider::{PayloadCipher, Tag};

/// A ring AEAD with a 12-byte nonce and a 16-byte tag: `chacha20-poly1305`,
/// `aes-128-gcm` or `aes-256-gcm`.
///
/// ChaCha20-Poly1305 also keeps an OpenSSL context, if OpenSSL can be
/// loaded, for messages of [`LARGE`] bytes or more (see [`crate::libcrypto`]).
pub(crate) struct RingAead {
    suite: Suite,
    key: LessSafeKey,
    large: Option<EvpAead>,
}

impl RingAead {
    /// `chacha20-poly1305` (RFC 8439).
    pub(crate) fn chacha20_poly1305(key: &[u8]) -> Result<Self, CryptoError> {
        Self::new(Suite::ChaCha20Poly1305, &ring::aead::CHACHA20_POLY1305, key)
    }

    /// `aes-128-gcm`.
    pub(crate) fn aes_128_gcm(key: &[u8]) -> Result<Self, CryptoError> {
        Self::new(Suite::Aes128Gcm, &ring::aead::AES_128_GCM, key)
    }

    /// `aes-256-gcm`.
    pub(crate) fn aes_256_gcm(key: &[u8]) -> Result<Self, CryptoError> {
        Self::new(Suite::Aes256Gcm, &ring::aead::AES_256_GCM, key)
    }

    fn new(suite: Suite, algorithm: &'static Algorithm, key: &[u8]) -> Result<Self, CryptoError> {
        let ring = ring_key(algorithm, key).map_err(|_| CryptoError::KeyLength {
            expected: suite.key_len(),
            actual: key.len(),
        })?;
        let large = match (suite, <&[u8; 32]>::try_from(key)) {
            (Suite::ChaCha20Poly1305, Ok(k)) => large_aead(k),
            _ => None,
        };
        Ok(Self {
            suite,
            key: ring,
            large,
        })
    }
}

impl PayloadCipher for RingAead {
    fn suite(&self) -> Suite {
        self.suite
    }

    fn seal_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<Tag, CryptoError> {
        let nonce = fixed_nonce::<12>(nonce)?;
        if let Some(tag) = seal_large(self.large.as_ref(), None, &nonce, aad, buf)? {
            return Ok(tag);
        }
        ring_seal(&self.key, nonce, aad, buf)
    }

    fn open_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> Result<(), CryptoError> {
        let nonce = fixed_nonce::<12>(nonce)?;
        let tag = fixed_tag(tag)?;
        if open_large(self.large.as_ref(), None, &nonce, aad, buf, &tag)? {
            return Ok(());
        }
        ring_open(&self.key, nonce, aad, buf, tag)
    }
}

impl fmt::Debug for RingAead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RingAead")
            .field("suite", &self.suite)
            .finish_non_exhaustive()
    }
}

/// `xchacha20-poly1305` (draft-irtf-cfrg-xchacha-03): per message,
/// `HChaCha20(key, nonce[0..16])` is the key of ring's ChaCha20-Poly1305 with
/// nonce `0000 0000 || nonce[16..24]`.
///
/// The subkey for an all-zero `nonce[0..16]` (the nonces Nameway's secure
/// links use: a counter in the last 8 bytes) is derived once, so those
/// messages pay no HChaCha20 and no key set-up. Messages of [`LARGE`] bytes
/// or more go through OpenSSL when it is loaded.
pub(crate) struct XChaCha20Poly1305Cipher {
    key: [u8; 32],
    zero_prefix_subkey: [u8; 32],
    zero_prefix: LessSafeKey,
    large: Option<EvpAead>,
}

impl XChaCha20Poly1305Cipher {
    pub(crate) fn new(key: &[u8]) -> Result<Self, CryptoError> {
        let key = fixed_key::<32>(key)?;
        let zero_prefix_subkey = hchacha20(&key, &[0u8; 16]);
        let zero_prefix = chacha_key(&zero_prefix_subkey)?;
        Ok(Self {
            large: large_aead(&zero_prefix_subkey),
            key,
            zero_prefix_subkey,
            zero_prefix,
        })
    }

    /// Calls `f` with the subkey (as bytes and as a ring key) and 12-byte
    /// nonce for a 24-byte nonce.
    fn with_subkey<T>(
        &self,
        nonce: &[u8],
        f: impl FnOnce(&[u8; 32], &LessSafeKey, [u8; 12]) -> Result<T, CryptoError>,
    ) -> Result<T, CryptoError> {
        let nonce = fixed_nonce::<24>(nonce)?;
        let mut prefix = [0u8; 16];
        let mut inner = [0u8; 12];
        prefix.copy_from_slice(&nonce[..16]);
        inner[4..].copy_from_slice(&nonce[16..]);
        if prefix == [0u8; 16] {
            return f(&self.zero_prefix_subkey, &self.zero_prefix, inner);
        }
        let mut derived = hchacha20(&self.key, &prefix);
        let result = chacha_key(&derived).and_then(|key| f(&derived, &key, inner));
        derived.zeroize();
        result
    }
}

/// HChaCha20(key, input): secret; zeroize it when done.
fn hchacha20(key: &[u8; 32], input: &[u8; 16]) -> [u8; 32] {
    let mut derived = chacha20::hchacha::<R20>(key.into(), input.into());
    let mut out = [0u8; 32];
    out.copy_from_slice(derived.as_slice());
    derived.as_mut_slice().zeroize();
    out
}

/// ring's ChaCha20-Poly1305 key for `key`.
fn chacha_key(key: &[u8; 32]) -> Result<LessSafeKey, CryptoError> {
    // ring accepts every 32-byte ChaCha20-Poly1305 key, so this error cannot
    // occur; it is mapped rather than unwrapped.
    ring_key(&ring::aead::CHACHA20_POLY1305, key).map_err(|_| CryptoError::KeyLength {
        expected: 32,
        actual: 32,
    })
}

/// OpenSSL's ChaCha20-Poly1305 under `key`, if OpenSSL is loaded.
fn large_aead(key: &[u8; 32]) -> Option<EvpAead> {
    EvpAead::new(libcrypto::get()?, EvpCipher::ChaCha20Poly1305, key)
}

/// Seals through OpenSSL if `buf` is long and OpenSSL is there and free:
/// `Ok(None)` means "not done, `buf` unchanged, use ring".
fn seal_large(
    evp: Option<&EvpAead>,
    key: Option<&[u8; 32]>,
    nonce: &[u8; 12],
    aad: &[u8],
    buf: &mut [u8],
) -> Result<Option<Tag>, CryptoError> {
    let Some(evp) = evp.filter(|_| buf.len() >= LARGE) else {
        return Ok(None);
    };
    match evp.seal(key, nonce, aad, buf) {
        Outcome::Done(tag) => Ok(Some(Tag::new(tag))),
        Outcome::NotDone => Ok(None),
        Outcome::BadTag | Outcome::Lost => Err(CryptoError::BackendFailed),
    }
}

/// Opens through OpenSSL if `buf` is long and OpenSSL is there and free:
/// `Ok(false)` means "not done, `buf` unchanged, use ring".
fn open_large(
    evp: Option<&EvpAead>,
    key: Option<&[u8; 32]>,
    nonce: &[u8; 12],
    aad: &[u8],
    buf: &mut [u8],
    tag: &[u8; 16],
) -> Result<bool, CryptoError> {
    let Some(evp) = evp.filter(|_| buf.len() >= LARGE) else {
        return Ok(false);
    };
    match evp.open(key, nonce, aad, buf, tag) {
        Outcome::Done(()) => Ok(true),
        Outcome::NotDone => Ok(false),
        Outcome::BadTag | Outcome::Lost => Err(CryptoError::AuthenticationFailed),
    }
}

impl PayloadCipher for XChaCha20Poly1305Cipher {
    fn suite(&self) -> Suite {
        Suite::XChaCha20Poly1305
    }

    fn seal_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<Tag, CryptoError> {
        self.with_subkey(nonce, |subkey, key, nonce| {
            if let Some(tag) = seal_large(self.large.as_ref(), Some(subkey), &nonce, aad, buf)? {
                return Ok(tag);
            }
            ring_seal(key, nonce, aad, buf)
        })
    }

    fn open_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> Result<(), CryptoError> {
        let tag = fixed_tag(tag)?;
        self.with_subkey(nonce, |subkey, key, nonce| {
            if open_large(self.large.as_ref(), Some(subkey), &nonce, aad, buf, &tag)? {
                return Ok(());
            }
            ring_open(key, nonce, aad, buf, tag)
        })
    }
}

impl fmt::Debug for XChaCha20Poly1305Cipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("XChaCha20Poly1305Cipher")
            .finish_non_exhaustive()
    }
}

impl Drop for XChaCha20Poly1305Cipher {
    fn drop(&mut self) {
        self.key.zeroize();
        self.zero_prefix_subkey.zeroize();
    }
}

impl ZeroizeOnDrop for XChaCha20Poly1305Cipher {}

/// A ring key for `algorithm`, or ring's error if `key` has the wrong length.
fn ring_key(
    algorithm: &'static Algorithm,
    key: &[u8],
) -> Result<LessSafeKey, ring::error::Unspecified> {
    Ok(LessSafeKey::new(UnboundKey::new(algorithm, key)?))
}

/// Seals `buf` in place. ring refuses a message longer than the algorithm's
/// limit before writing anything, which is the only way sealing can fail.
fn ring_seal(
    key: &LessSafeKey,
    nonce: [u8; 12],
    aad: &[u8],
    buf: &mut [u8],
) -> Result<Tag, CryptoError> {
    let tag = key
        .seal_in_place_separate_tag(Nonce::assume_unique_for_key(nonce), Aad::from(aad), buf)
        .map_err(|_| CryptoError::MessageTooLong)?;
    let mut bytes = [0u8; Tag::MAX_LEN];
    bytes.copy_from_slice(tag.as_ref());
    Ok(Tag::new(bytes))
}

/// Opens `buf` in place. On a tag mismatch ring overwrites `buf` with zeros
/// (it decrypts while it authenticates), so no unauthenticated plaintext is
/// ever left behind.
fn ring_open(
    key: &LessSafeKey,
    nonce: [u8; 12],
    aad: &[u8],
    buf: &mut [u8],
    tag: [u8; Tag::MAX_LEN],
) -> Result<(), CryptoError> {
    key.open_in_place_separate_tag(
        Nonce::assume_unique_for_key(nonce),
        Aad::from(aad),
        tag.into(),
        buf,
        0..,
    )
    .map(|_| ())
    .map_err(|_| {
        // ring zeroes the buffer itself; do it again so the contract does not
        // hang on a detail of ring's implementation.
        buf.fill(0);
        CryptoError::AuthenticationFailed
    })
}

/// `tag` as a 16-byte array, or [`CryptoError::TagLength`].
fn fixed_tag(tag: &[u8]) -> Result<[u8; Tag::MAX_LEN], CryptoError> {
    tag.try_into().map_err(|_| CryptoError::TagLength {
        expected: Tag::MAX_LEN,
        actual: tag.len(),
    })
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
        self.aead
            .open_in_place_detached(&nonce, aad, buf, &fixed_tag(tag)?)
    }
}
