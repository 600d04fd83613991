//! The provider trait every suite implements.

use core::fmt;

use crate::error::CryptoError;
use crate::suite::Suite;

/// One payload cipher with its key: a stream cipher, an AEAD or CPA.
///
/// Build one with [`Suite::new_cipher`]. Every suite supports
/// [`seal_in_place_detached`](Self::seal_in_place_detached) and
/// [`open_in_place_detached`](Self::open_in_place_detached), so a caller can
/// treat all suites alike:
///
/// * AEADs encrypt and authenticate the buffer and authenticate `aad`; the
///   tag is [`Suite::tag_len`] bytes long.
/// * Stream ciphers (`chacha20`, `forro14`) XOR the keystream starting at
///   block counter 0; the tag is empty and **`aad` is ignored, nothing is
///   authenticated**. They also offer [`apply_keystream`](Self::apply_keystream)
///   with an explicit counter.
/// * CPA permutes codewords; the nonce is empty, the tag is empty, `aad` is
///   ignored, and it is not encryption (see [`crate::cpa`]).
///
/// Check [`Suite::authenticates`] before relying on a tag. Never seal two
/// messages under the same key and nonce: for every suite but CPA that
/// reuses keystream. The 24-byte-nonce suites may use random nonces.
pub trait PayloadCipher: Send + Sync + fmt::Debug {
    /// The suite this cipher implements.
    fn suite(&self) -> Suite;

    /// Encrypts `buf` in place and returns the tag (empty for suites that do
    /// not authenticate).
    ///
    /// # Errors
    /// [`CryptoError::NonceLength`] if `nonce` is not [`Suite::nonce_len`]
    /// bytes; [`CryptoError::MessageTooLong`] if `buf` exceeds the suite's
    /// counter range. On error `buf` is unchanged.
    fn seal_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<Tag, CryptoError>;

    /// Checks `tag` (AEADs, in constant time) and decrypts `buf` in place.
    ///
    /// # Errors
    /// [`CryptoError::AuthenticationFailed`] if the tag does not match, with
    /// `buf` overwritten with zeros (ring decrypts while it authenticates, so
    /// every AEAD suite zeroes the buffer rather than hand back unverified
    /// plaintext); [`CryptoError::TagLength`] if `tag` is not
    /// [`Suite::tag_len`] bytes; otherwise as for sealing, with `buf`
    /// unchanged.
    fn open_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> Result<(), CryptoError>;

    /// XORs the raw keystream for (`nonce`, `counter`, `counter + 1`, ...)
    /// into `buf`. Only stream-cipher suites offer this.
    ///
    /// # Errors
    /// [`CryptoError::Unsupported`] for AEADs and CPA;
    /// [`CryptoError::NonceLength`]; [`CryptoError::MessageTooLong`] if the
    /// counter would wrap (ChaCha20's IETF counter is 32 bits).
    fn apply_keystream(
        &self,
        nonce: &[u8],
        counter: u64,
        buf: &mut [u8],
    ) -> Result<(), CryptoError> {
        let _ = (nonce, counter, buf);
        Err(CryptoError::Unsupported {
            suite: self.suite(),
            operation: "apply_keystream",
        })
    }

    /// Encrypts `buf` in place and appends the tag to it.
    ///
    /// # Errors
    /// As [`seal_in_place_detached`](Self::seal_in_place_detached).
    fn seal_in_place_append(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut Vec<u8>,
    ) -> Result<(), CryptoError> {
        let tag = self.seal_in_place_detached(nonce, aad, buf)?;
        buf.extend_from_slice(tag.as_ref());
        Ok(())
    }

    /// Opens `ciphertext || tag` in place and returns the plaintext part of
    /// `buf`.
    ///
    /// # Errors
    /// [`CryptoError::Truncated`] if `buf` is shorter than the tag; otherwise
    /// as [`open_in_place_detached`](Self::open_in_place_detached).
    fn open_in_place_appended<'a>(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &'a mut [u8],
    ) -> Result<&'a mut [u8], CryptoError> {
        let split = buf
            .len()
            .checked_sub(self.suite().tag_len())
            .ok_or(CryptoError::Truncated)?;
        let (msg, tag) = buf.split_at_mut(split);
        self.open_in_place_detached(nonce, aad, msg, tag)?;
        Ok(msg)
    }
}

/// An authentication tag of up to 16 bytes (empty for suites that do not
/// authenticate). Tags are public; compare them only through
/// [`PayloadCipher::open_in_place_detached`], which does so in constant time.
#[derive(Clone, Copy)]
pub struct Tag {
    bytes: [u8; Tag::MAX_LEN],
    len: u8,
}

impl Tag {
    /// The longest tag any suite produces.
    pub const MAX_LEN: usize = 16;

    /// A zero-length tag, returned by suites that do not authenticate.
    pub const EMPTY: Tag = Tag {
        bytes: [0; Tag::MAX_LEN],
        len: 0,
    };

    /// A full 16-byte tag.
    pub(crate) fn new(bytes: [u8; Tag::MAX_LEN]) -> Self {
        Self {
            bytes,
            len: Tag::MAX_LEN as u8,
        }
    }

    /// The tag bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.len)).unwrap_or(&[])
    }

    /// Tag length in bytes.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Whether the tag is empty (the suite does not authenticate).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl AsRef<[u8]> for Tag {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl fmt::Debug for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tag({})", hex::encode(self.as_bytes()))
    }
}
