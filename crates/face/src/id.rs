//! Face identity and properties: [`FaceId`], [`FaceScope`], [`LinkType`], [`Persistency`],
//! [`FaceKind`], with NFD's numbering and names.

use core::fmt;

/// A face's number, unique for the life of the daemon (never reused).
///
/// Numbering follows NFD (`daemon/face/face-common.hpp`): 0 is invalid, 1..=255 are reserved for
/// faces inside the daemon, and faces created by [`crate::FaceSystem`] start at
/// [`FaceId::FIRST_DYNAMIC`] = 256.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FaceId(pub u64);

impl FaceId {
    /// No face (NFD `INVALID_FACEID`).
    pub const INVALID: Self = Self(0);
    /// The daemon's internal management face (NFD `FACEID_INTERNAL_FACE`).
    pub const INTERNAL: Self = Self(1);
    /// The content store, as an ingress face for cached Data (NFD `FACEID_CONTENT_STORE`).
    pub const CONTENT_STORE: Self = Self(254);
    /// A face that drops everything (NFD `FACEID_NULL`).
    pub const NULL: Self = Self(255);
    /// The first number given to a socket face (NFD `FACEID_RESERVED_MAX + 1`).
    pub const FIRST_DYNAMIC: Self = Self(256);

    /// Whether this number is in the reserved range 1..=255.
    pub const fn is_reserved(self) -> bool {
        self.0 >= 1 && self.0 < Self::FIRST_DYNAMIC.0
    }
}

impl fmt::Display for FaceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Whether a face reaches only this host (NFD `FaceScope`, management code 0/1).
///
/// `/localhost` packets may cross only local faces; local clients manage the forwarder under
/// `/localhost/nfd`, non-local ones under `/localhop/nfd`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaceScope {
    /// Another host may be at the other end (management code 0).
    NonLocal,
    /// The other end is on this host: Unix faces, TCP from loopback (management code 1).
    Local,
}

impl FaceScope {
    /// The code used by NFD management (`FaceScope` in FaceStatus).
    pub const fn code(self) -> u64 {
        match self {
            Self::NonLocal => 0,
            Self::Local => 1,
        }
    }
}

/// How many peers a face reaches (NFD `LinkType`, management code 0/1/2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LinkType {
    /// Exactly one peer (every face of this crate so far; management code 0).
    PointToPoint,
    /// Possibly many peers, as multicast faces (management code 1).
    MultiAccess,
}

impl LinkType {
    /// The code used by NFD management (`LinkType` in FaceStatus).
    pub const fn code(self) -> u64 {
        match self {
            Self::PointToPoint => 0,
            Self::MultiAccess => 1,
        }
    }
}

/// How long a face lives (NFD `FacePersistency`, management code 0/1/2).
///
/// Ordered: `OnDemand < Persistent < Permanent`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Persistency {
    /// Created by an incoming peer; closed on error, end of stream or idle timeout.
    OnDemand,
    /// Created by management; closed on error.
    Persistent,
    /// Created by management; survives errors (a TCP face reconnects with backoff, a UDP face
    /// ignores send errors).
    Permanent,
}

impl Persistency {
    /// The code used by NFD management (`FacePersistency`).
    pub const fn code(self) -> u64 {
        match self {
            Self::Persistent => 0,
            Self::OnDemand => 1,
            Self::Permanent => 2,
        }
    }

    /// The persistency for a management code.
    pub const fn from_code(code: u64) -> Option<Self> {
        match code {
            0 => Some(Self::Persistent),
            1 => Some(Self::OnDemand),
            2 => Some(Self::Permanent),
            _ => None,
        }
    }

    pub(crate) const fn to_u8(self) -> u8 {
        match self {
            Self::OnDemand => 0,
            Self::Persistent => 1,
            Self::Permanent => 2,
        }
    }

    pub(crate) const fn from_u8(v: u8) -> Self {
        match v {
            0 => Self::OnDemand,
            1 => Self::Persistent,
            _ => Self::Permanent,
        }
    }
}

impl fmt::Display for Persistency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::OnDemand => "on-demand",
            Self::Persistent => "persistent",
            Self::Permanent => "permanent",
        })
    }
}

/// The transport under a face.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FaceKind {
    /// A Unix stream socket (accepted from the Unix listener).
    Unix,
    /// A TCP connection (accepted or connected).
    Tcp,
    /// A unicast UDP endpoint on a shared UDP socket.
    Udp,
    /// The null face (255): no transport, everything sent to it is dropped and counted.
    Null,
    /// A WebSocket connection (accepted from a WebSocket listener), one packet per message.
    WebSocket,
}

impl FaceKind {
    /// Whether the transport is a byte stream (Unix, TCP): TLVs back to back, never fragmented.
    pub const fn is_stream(self) -> bool {
        matches!(self, Self::Unix | Self::Tcp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nfd_codes() {
        assert_eq!(Persistency::Persistent.code(), 0);
        assert_eq!(Persistency::OnDemand.code(), 1);
        assert_eq!(Persistency::Permanent.code(), 2);
        for p in [
            Persistency::OnDemand,
            Persistency::Persistent,
            Persistency::Permanent,
        ] {
            assert_eq!(Persistency::from_code(p.code()), Some(p));
            assert_eq!(Persistency::from_u8(p.to_u8()), p);
        }
        assert!(Persistency::OnDemand < Persistency::Persistent);
        assert!(Persistency::Persistent < Persistency::Permanent);
        assert_eq!(FaceScope::Local.code(), 1);
        assert!(FaceId::INTERNAL.is_reserved());
        assert!(!FaceId::FIRST_DYNAMIC.is_reserved());
        assert!(!FaceId::INVALID.is_reserved());
    }
}
