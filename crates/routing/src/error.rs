//! Errors: [`FormatError`] for bytes that are not a well-formed record, [`Rejected`] for a
//! record that is well formed but fails verification, with its [`RejectReason`].

use core::fmt;

use nameway_wire::{DecodeError, ParseError, SignError};

/// Why bytes are not a well-formed announcement, locator record or RIB message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// The packet itself does not decode (bad TLV, not a Data or Interest, too large).
    #[error("packet: {0}")]
    Packet(#[from] DecodeError),
    /// The name does not have the structure this record requires.
    #[error("name: {0}")]
    Name(&'static str),
    /// The Data has another ContentType than this record requires.
    #[error("ContentType is {found}, expected {expected}")]
    ContentType {
        /// The ContentType this record requires.
        expected: u64,
        /// The ContentType found.
        found: u64,
    },
    /// A required element is missing.
    #[error("missing {0}")]
    Missing(&'static str),
    /// An element appears twice where it may appear once.
    #[error("repeated {0}")]
    Repeated(&'static str),
    /// An element's value is not valid for its type.
    #[error("invalid {0}")]
    Invalid(&'static str),
    /// An element of a critical TLV-TYPE this decoder does not know (NDN's evolvability rule:
    /// unknown critical elements reject the whole record, unknown non-critical ones are
    /// skipped).
    #[error("unrecognized critical element of type {0:#x}")]
    UnrecognizedCritical(u32),
}

/// Why a record could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The key could not sign.
    #[error("signing: {0}")]
    Sign(#[from] SignError),
    /// A name could not be built (too long, bad component).
    #[error("name: {0}")]
    Name(#[from] ParseError),
    /// The encoded record is larger than a packet may be, or a field is out of range.
    #[error("record: {0}")]
    Record(#[from] FormatError),
}

/// Why a chain (announcement + locator record) was rejected, in the order the verifier checks.
///
/// Each reason is counted apart ([`crate::RejectCounts`]); [`RejectReason::as_str`] gives the
/// metric label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum RejectReason {
    /// The bytes are not a well-formed announcement or locator record, or the announcement is
    /// not of a self-certifying name, or lacks NwDelegate or NwPublicKey.
    Malformed,
    /// Step 1: the name's hash is not the SHA-256 of the announcement's NwPublicKey (a
    /// hijack: someone announcing a name with another key), or the KeyLocator names another
    /// key digest.
    NameKeyMismatch,
    /// Step 2: the announcement's signature does not verify with NwPublicKey, or its
    /// SignatureType is neither Ed25519 (5) nor ECDSA P-256 (3).
    BadSig,
    /// Step 3: past the ValidityPeriod's NotAfter, or past signing time + ExpirationPeriod
    /// (each with the clock grace); also a locator record past its expiry.
    Expired,
    /// Step 3: before the ValidityPeriod's NotBefore, or signed in the future (each with the
    /// clock grace).
    NotYetValid,
    /// Step 4: received from an authenticated neighbour that is neither the announcement's
    /// delegate nor the announced name itself (a forged delegation: a replayed announcement).
    DelegateMismatch,
    /// Step 4: received from a neighbour without an authenticated identity (no secure link),
    /// so the delegation cannot be checked.
    UntrustedPeer,
    /// Step 5: the locator record is not the delegate's: another name, a key that does not
    /// hash to the delegate's name, or a signature that does not verify with that key.
    BadLocator,
}

impl RejectReason {
    /// Every reason, in verification order.
    pub const ALL: [RejectReason; 8] = [
        Self::Malformed,
        Self::NameKeyMismatch,
        Self::BadSig,
        Self::Expired,
        Self::NotYetValid,
        Self::DelegateMismatch,
        Self::UntrustedPeer,
        Self::BadLocator,
    ];

    /// The metric label (`routing_rejected_total{reason=...}`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Malformed => "malformed",
            Self::NameKeyMismatch => "name_key_mismatch",
            Self::BadSig => "bad_sig",
            Self::Expired => "expired",
            Self::NotYetValid => "not_yet_valid",
            Self::DelegateMismatch => "delegate_mismatch",
            Self::UntrustedPeer => "untrusted_peer",
            Self::BadLocator => "bad_locator",
        }
    }

    /// The number carried in a registration reply (docs/routing.md).
    pub const fn code(self) -> u64 {
        match self {
            Self::Malformed => 1,
            Self::NameKeyMismatch => 2,
            Self::BadSig => 3,
            Self::Expired => 4,
            Self::NotYetValid => 5,
            Self::DelegateMismatch => 6,
            Self::UntrustedPeer => 7,
            Self::BadLocator => 8,
        }
    }

    /// The reason for a registration reply's number, if it is one.
    pub fn from_code(code: u64) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.code() == code)
    }

    /// Position in [`RejectReason::ALL`].
    pub(crate) const fn index(self) -> usize {
        // Codes are 1..=8 in the order of ALL.
        (self.code() - 1) as usize
    }
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A chain that failed verification: the reason (counted) and what exactly failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason}: {detail}")]
pub struct Rejected {
    /// The counted reason.
    pub reason: RejectReason,
    /// What failed, for logs and `nameway routing explain`.
    pub detail: String,
}

impl Rejected {
    /// A rejection for `reason` with a fixed description.
    pub(crate) fn new(reason: RejectReason, detail: impl Into<String>) -> Self {
        Self {
            reason,
            detail: detail.into(),
        }
    }

    /// A [`RejectReason::Malformed`] rejection from a decode error, naming the record.
    pub(crate) fn malformed(record: &str, err: &FormatError) -> Self {
        Self::new(RejectReason::Malformed, format!("{record}: {err}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_labels_are_distinct_and_round_trip() {
        let mut labels: Vec<_> = RejectReason::ALL.iter().map(|r| r.as_str()).collect();
        labels.sort_unstable();
        labels.dedup();
        assert_eq!(labels.len(), RejectReason::ALL.len());
        for (i, r) in RejectReason::ALL.into_iter().enumerate() {
            assert_eq!(r.index(), i);
            assert_eq!(RejectReason::from_code(r.code()), Some(r));
        }
        assert_eq!(RejectReason::from_code(0), None);
        assert_eq!(RejectReason::from_code(9), None);
    }
}
