//! The registry of cipher suites: names, parameters and constructors.

use core::fmt;
use core::str::FromStr;

use crate::cpa::Cpa;
use crate::error::CryptoError;
use crate::provider::PayloadCipher;

mod aead;
mod stream;

/// A cipher suite, selected by its name (`"forro14"`, `"chacha20-poly1305"`,
/// ...).
///
/// ```
/// use nameway_crypto::Suite;
/// let s: Suite = "xforro14-poly1305".parse()?;
/// assert_eq!((s.key_len(), s.nonce_len(), s.tag_len()), (32, 24, 16));
/// assert!(s.authenticates());
/// # Ok::<(), nameway_crypto::CryptoError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Suite {
    /// `cpa`: the content-permutation algorithm with the paper's parameters
    /// (8-bit codewords, 128-bit key). **Not encryption**: it leaks every
    /// codeword value, one known plaintext reveals the key, and nothing is
    /// authenticated. Only [`Suite::danger_new_cipher`] builds it.
    Cpa,
    /// `chacha20`: ChaCha20 (RFC 8439, 96-bit nonce, 32-bit counter), no
    /// authentication.
    ChaCha20,
    /// `forro14`: Forro14 (64-bit nonce, 64-bit counter), no authentication.
    Forro14,
    /// `chacha20-poly1305`: the RFC 8439 AEAD.
    ChaCha20Poly1305,
    /// `xchacha20-poly1305`: ChaCha20-Poly1305 with a 192-bit nonce.
    XChaCha20Poly1305,
    /// `xforro14-poly1305`: RFC 8439's construction with HForro14/Forro14
    /// and a 192-bit nonce (spec §8.4).
    XForro14Poly1305,
    /// `aes-128-gcm`: AES-GCM with a 128-bit key and a 96-bit nonce.
    Aes128Gcm,
    /// `aes-256-gcm`: AES-GCM with a 256-bit key and a 96-bit nonce.
    Aes256Gcm,
}

impl Suite {
    /// Every suite, in the order of the benchmark table.
    pub const ALL: [Suite; 8] = [
        Suite::Cpa,
        Suite::ChaCha20,
        Suite::Forro14,
        Suite::ChaCha20Poly1305,
        Suite::XChaCha20Poly1305,
        Suite::XForro14Poly1305,
        Suite::Aes128Gcm,
        Suite::Aes256Gcm,
    ];

    /// The registry name.
    pub const fn name(self) -> &'static str {
        match self {
            Suite::Cpa => "cpa",
            Suite::ChaCha20 => "chacha20",
            Suite::Forro14 => "forro14",
            Suite::ChaCha20Poly1305 => "chacha20-poly1305",
            Suite::XChaCha20Poly1305 => "xchacha20-poly1305",
            Suite::XForro14Poly1305 => "xforro14-poly1305",
            Suite::Aes128Gcm => "aes-128-gcm",
            Suite::Aes256Gcm => "aes-256-gcm",
        }
    }

    /// Looks a suite up by its registry name (exact, lower case).
    ///
    /// # Errors
    /// [`CryptoError::UnknownSuite`] if no suite has that name.
    pub fn from_name(name: &str) -> Result<Self, CryptoError> {
        Self::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or(CryptoError::UnknownSuite)
    }

    /// Key length in bytes.
    pub const fn key_len(self) -> usize {
        match self {
            Suite::Cpa | Suite::Aes128Gcm => 16,
            _ => 32,
        }
    }

    /// Nonce length in bytes (0 for CPA, which has none).
    pub const fn nonce_len(self) -> usize {
        match self {
            Suite::Cpa => 0,
            Suite::Forro14 => 8,
            Suite::XChaCha20Poly1305 | Suite::XForro14Poly1305 => 24,
            _ => 12,
        }
    }

    /// Tag length in bytes (0 for suites that do not authenticate).
    pub const fn tag_len(self) -> usize {
        if self.authenticates() {
            16
        } else {
            0
        }
    }

    /// Whether the suite authenticates the payload and associated data.
    pub const fn authenticates(self) -> bool {
        !matches!(self, Suite::Cpa | Suite::ChaCha20 | Suite::Forro14)
    }

    /// Whether the suite hides payload values at all. Only CPA does not.
    pub const fn is_encryption(self) -> bool {
        !matches!(self, Suite::Cpa)
    }

    /// Builds a cipher for `key`. Refuses CPA, which is not encryption; use
    /// [`Suite::danger_new_cipher`] to build it deliberately.
    ///
    /// # Errors
    /// [`CryptoError::InsecureSuite`] for [`Suite::Cpa`];
    /// [`CryptoError::KeyLength`] if `key` is not [`Suite::key_len`] bytes.
    pub fn new_cipher(self, key: &[u8]) -> Result<Box<dyn PayloadCipher>, CryptoError> {
        if !self.is_encryption() {
            return Err(CryptoError::InsecureSuite(self));
        }
        self.danger_new_cipher(key)
    }

    /// Builds a cipher for `key`, **including CPA**, which only permutes
    /// codewords: it leaks every value, one known plaintext reveals the key,
    /// and it authenticates nothing. Use it only for baseline measurements.
    ///
    /// # Errors
    /// [`CryptoError::KeyLength`] if `key` is not [`Suite::key_len`] bytes;
    /// [`CryptoError::WeakKey`] for an all-zero CPA key.
    pub fn danger_new_cipher(self, key: &[u8]) -> Result<Box<dyn PayloadCipher>, CryptoError> {
        let expected = self.key_len();
        if key.len() != expected {
            return Err(CryptoError::KeyLength {
                expected,
                actual: key.len(),
            });
        }
        Ok(match self {
            Suite::Cpa => Box::new(Cpa::danger_new(key, 128, 8)?),
            Suite::ChaCha20 => Box::new(stream::ChaCha20Cipher::new(key)?),
            Suite::Forro14 => Box::new(stream::Forro14Cipher::new(key)?),
            Suite::ChaCha20Poly1305 => Box::new(aead::RingAead::chacha20_poly1305(key)?),
            Suite::XChaCha20Poly1305 => Box::new(aead::XChaCha20Poly1305Cipher::new(key)?),
            Suite::XForro14Poly1305 => Box::new(aead::XForro14Poly1305Cipher::new(key)?),
            Suite::Aes128Gcm => Box::new(aead::RingAead::aes_128_gcm(key)?),
            Suite::Aes256Gcm => Box::new(aead::RingAead::aes_256_gcm(key)?),
        })
    }
}

impl fmt::Display for Suite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Suite {
    type Err = CryptoError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::from_name(s)
    }
}

/// `nonce` as a fixed-size array, or [`CryptoError::NonceLength`].
pub(crate) fn fixed_nonce<const N: usize>(nonce: &[u8]) -> Result<[u8; N], CryptoError> {
    nonce.try_into().map_err(|_| CryptoError::NonceLength {
        expected: N,
        actual: nonce.len(),
    })
}

/// `key` as a fixed-size array, or [`CryptoError::KeyLength`].
pub(crate) fn fixed_key<const N: usize>(key: &[u8]) -> Result<[u8; N], CryptoError> {
    key.try_into().map_err(|_| CryptoError::KeyLength {
        expected: N,
        actual: key.len(),
    })
}

/// Refuses a non-empty tag for a suite that produces none.
pub(crate) fn expect_empty_tag(tag: &[u8]) -> Result<(), CryptoError> {
    if tag.is_empty() {
        Ok(())
    } else {
        Err(CryptoError::TagLength {
            expected: 0,
            actual: tag.len(),
        })
    }
}
