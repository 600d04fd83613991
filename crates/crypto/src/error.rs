//! The error type of every fallible operation in this crate.

use core::fmt;

use crate::forro14::Forro14Backend;
use crate::suite::Suite;

/// Why a cipher operation or a cipher construction failed.
///
/// Caller mistakes (wrong key, nonce or tag length, a message longer than the
/// counter allows, an unavailable backend) are distinguished from the one
/// error a peer can cause, [`CryptoError::AuthenticationFailed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CryptoError {
    /// The key does not have the length the suite needs.
    KeyLength {
        /// Length the suite needs, in bytes.
        expected: usize,
        /// Length that was given, in bytes.
        actual: usize,
    },
    /// The nonce does not have the length the suite needs.
    NonceLength {
        /// Length the suite needs, in bytes.
        expected: usize,
        /// Length that was given, in bytes.
        actual: usize,
    },
    /// The detached tag does not have the length the suite produces.
    TagLength {
        /// Length the suite produces, in bytes.
        expected: usize,
        /// Length that was given, in bytes.
        actual: usize,
    },
    /// An appended-tag buffer is shorter than the tag, so it cannot hold one.
    Truncated,
    /// The message would run the block counter past its last value, which
    /// would reuse keystream. Nothing was encrypted.
    MessageTooLong,
    /// The tag does not match: the ciphertext, nonce, associated data or tag
    /// was changed, or the key is wrong. The buffer has been overwritten with
    /// zeros: no unauthenticated plaintext is ever handed back.
    AuthenticationFailed,
    /// The suite name is not one of [`Suite::ALL`].
    UnknownSuite,
    /// The suite is insecure (CPA) and was requested through a constructor
    /// without the `danger_` prefix.
    InsecureSuite(Suite),
    /// The suite does not offer this operation (for example raw keystream
    /// access on an AEAD).
    Unsupported {
        /// The suite that was asked.
        suite: Suite,
        /// The operation that it does not offer.
        operation: &'static str,
    },
    /// The requested Forro14 backend needs CPU features this machine lacks.
    BackendUnavailable(Forro14Backend),
    /// A CPA key with no usable bit set (the identity permutation), or with
    /// zero key bits.
    WeakKey,
    /// A CPA parameter is out of range.
    InvalidParameter(&'static str),
    /// OpenSSL failed in the middle of sealing a long message and the
    /// buffer could not be restored; it has been overwritten with zeros.
    /// (Not seen in practice: kept so that such a failure is an error, never
    /// a wrong ciphertext.)
    BackendFailed,
}

impl fmt::Display for CryptoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::KeyLength { expected, actual } => {
                write!(f, "key is {actual} bytes, the suite needs {expected}")
            }
            Self::NonceLength { expected, actual } => {
                write!(f, "nonce is {actual} bytes, the suite needs {expected}")
            }
            Self::TagLength { expected, actual } => {
                write!(f, "tag is {actual} bytes, the suite uses {expected}")
            }
            Self::Truncated => f.write_str("buffer is shorter than the authentication tag"),
            Self::MessageTooLong => {
                f.write_str("message would overflow the block counter and reuse keystream")
            }
            Self::AuthenticationFailed => f.write_str("authentication failed"),
            Self::UnknownSuite => f.write_str("unknown cipher suite name"),
            Self::InsecureSuite(s) => write!(
                f,
                "suite {} is not encryption; select it only through a danger_ constructor",
                s.name()
            ),
            Self::Unsupported { suite, operation } => {
                write!(f, "suite {} does not support {operation}", suite.name())
            }
            Self::BackendUnavailable(b) => {
                write!(f, "Forro14 backend {b:?} is not supported by this CPU")
            }
            Self::WeakKey => f.write_str("key selects the identity permutation"),
            Self::InvalidParameter(what) => write!(f, "invalid parameter: {what}"),
            Self::BackendFailed => {
                f.write_str("OpenSSL failed while sealing; the buffer was wiped")
            }
        }
    }
}

impl std::error::Error for CryptoError {}
