//! The unauthenticated stream-cipher suites: `chacha20` and `forro14`.

use core::fmt;

use chacha20::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
use chacha20::ChaCha20;
use zeroize::{Zeroize, ZeroizeOnDrop};

use super::{expect_empty_tag, fixed_key, fixed_nonce, Suite};
use crate::error::CryptoError;
use crate::forro14::{check_counter, Forro14, BLOCK_LEN};
use crate::provider::{PayloadCipher, Tag};

/// Seal and open of an unauthenticated stream suite: the keystream from block 0 applied in
/// place, no tag (and an empty tag required on open). The same for every stream suite.
macro_rules! stream_seal_open {
    () => {
        fn seal_in_place_detached(
            &self,
            nonce: &[u8],
            _aad: &[u8],
            buf: &mut [u8],
        ) -> Result<Tag, CryptoError> {
            self.apply_keystream(nonce, 0, buf)?;
            Ok(Tag::EMPTY)
        }

        fn open_in_place_detached(
            &self,
            nonce: &[u8],
            _aad: &[u8],
            buf: &mut [u8],
            tag: &[u8],
        ) -> Result<(), CryptoError> {
            expect_empty_tag(tag)?;
            self.apply_keystream(nonce, 0, buf)
        }
    };
}

/// `chacha20`: RustCrypto ChaCha20 with the IETF layout (96-bit nonce,
/// 32-bit block counter).
pub(crate) struct ChaCha20Cipher {
    key: [u8; 32],
}

impl ChaCha20Cipher {
    pub(crate) fn new(key: &[u8]) -> Result<Self, CryptoError> {
        Ok(Self {
            key: fixed_key::<32>(key)?,
        })
    }
}

impl PayloadCipher for ChaCha20Cipher {
    fn suite(&self) -> Suite {
        Suite::ChaCha20
    }

    stream_seal_open!();

    fn apply_keystream(
        &self,
        nonce: &[u8],
        counter: u64,
        buf: &mut [u8],
    ) -> Result<(), CryptoError> {
        let nonce = fixed_nonce::<12>(nonce)?;
        check_counter(counter, buf.len(), 1u128 << 32)?;
        let mut cipher = ChaCha20::new(&self.key.into(), &nonce.into());
        cipher
            .try_seek(counter * BLOCK_LEN as u64)
            .map_err(|_| CryptoError::MessageTooLong)?;
        cipher
            .try_apply_keystream(buf)
            .map_err(|_| CryptoError::MessageTooLong)
    }
}

impl fmt::Debug for ChaCha20Cipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChaCha20Cipher").finish_non_exhaustive()
    }
}

impl Drop for ChaCha20Cipher {
    fn drop(&mut self) {
        self.key.zeroize();
    }
}

impl ZeroizeOnDrop for ChaCha20Cipher {}

/// `forro14`: this crate's Forro14 (64-bit nonce, 64-bit counter) on the
/// fastest available backend.
#[derive(Debug)]
pub(crate) struct Forro14Cipher {
    cipher: Forro14,
}

impl Forro14Cipher {
    pub(crate) fn new(key: &[u8]) -> Result<Self, CryptoError> {
        let mut key = fixed_key::<32>(key)?;
        let cipher = Forro14::new(&key);
        key.zeroize();
        Ok(Self { cipher })
    }
}

impl PayloadCipher for Forro14Cipher {
    fn suite(&self) -> Suite {
        Suite::Forro14
    }

    stream_seal_open!();

    fn apply_keystream(
        &self,
        nonce: &[u8],
        counter: u64,
        buf: &mut [u8],
    ) -> Result<(), CryptoError> {
        self.cipher
            .apply_keystream(&fixed_nonce::<8>(nonce)?, counter, buf)
    }
}
