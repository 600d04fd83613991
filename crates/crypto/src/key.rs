//! Key bytes that zeroize on drop and never show up in `Debug` output.

use core::fmt;

use zeroize::{Zeroize, ZeroizeOnDrop};

/// Secret key bytes for any suite.
///
/// The bytes are overwritten with zeros when the value is dropped, and
/// `Debug` prints only the length. There is deliberately no `Display`,
/// `PartialEq` or `Clone`: compare keys by key id, not by content.
///
/// ```
/// use nameway_crypto::{SecretKey, Suite};
/// let key = SecretKey::from(vec![0x11; 32]);
/// assert_eq!(format!("{key:?}"), "SecretKey { len: 32, .. }");
/// let cipher = Suite::ChaCha20Poly1305.new_cipher(key.as_bytes())?;
/// # Ok::<(), nameway_crypto::CryptoError>(())
/// ```
pub struct SecretKey {
    bytes: Vec<u8>,
}

impl SecretKey {
    /// Copies `bytes` into a new key. Zeroize the source yourself if it was
    /// secret.
    pub fn from_slice(bytes: &[u8]) -> Self {
        Self {
            bytes: bytes.to_vec(),
        }
    }

    /// The key bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Key length in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the key has no bytes.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

impl From<Vec<u8>> for SecretKey {
    /// Takes ownership of `bytes`; they are zeroized when the key is dropped.
    fn from(bytes: Vec<u8>) -> Self {
        Self { bytes }
    }
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretKey")
            .field("len", &self.bytes.len())
            .finish_non_exhaustive()
    }
}

impl Drop for SecretKey {
    fn drop(&mut self) {
        self.bytes.zeroize();
    }
}

impl ZeroizeOnDrop for SecretKey {}
