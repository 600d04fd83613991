//! Nameway's hop-by-hop security header fields: [`SecurityLevel`] (the per-prefix protection
//! levels), [`LinkSecurity`] (suite, key id and counter of an encrypted packet) and the
//! handshake field that carries Noise messages between two forwarders.
//!
//! Both fields are in the NDNLPv2 header range (800..=959) with the two low bits not 00, so
//! ndn-cxx, NFD and NDNts drop a packet that carries them: such a peer never delivers
//! ciphertext as if it were content. python-ndn 0.5.2 does not (it parses LpPackets with
//! `ignore_critical=True`); a secure link seals only toward a forwarder that completed its
//! handshake, which no application does.
//!
//! ```text
//! LinkSecurity  = 0xfd 0385 TLV-LENGTH(14 or 30)
//!                 level(1) flags(1) key-id(4, BE) counter(8, BE) [tag(16), AEAD levels]
//! LinkHandshake = 0xfd 0389 TLV-LENGTH opaque (see nameway-face's secure module)
//! ```

use core::fmt;
use core::str::FromStr;

use crate::error::{DecodeError, ErrorKind};
use crate::tlv::{types, Element};

/// Length of the LinkSecurity value without a tag (levels that do not authenticate).
pub const LINK_SECURITY_LEN: usize = 14;
/// Length of the authentication tag an AEAD level carries at the end of LinkSecurity.
pub const LINK_SECURITY_TAG_LEN: usize = 16;

/// The protection a name prefix gets between secure neighbours.
///
/// `cpa`, `chacha20` and `forro14` give **confidentiality only, no integrity**: a flipped bit
/// is delivered as a flipped bit. `cpa` only permutes codewords and is weak (it leaks every
/// codeword value and one known plaintext reveals the key). They exist to compare with the
/// published schemes; pick an AEAD level for real traffic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum SecurityLevel {
    /// Sent in clear.
    #[default]
    None,
    /// The content-permutation algorithm: weak, no integrity.
    Cpa,
    /// ChaCha20 (RFC 8439): no integrity.
    ChaCha20,
    /// Forro14: no integrity.
    Forro14,
    /// ChaCha20-Poly1305 (RFC 8439).
    ChaCha20Poly1305,
    /// XForro14-Poly1305.
    XForro14Poly1305,
    /// AES-256-GCM.
    Aes256Gcm,
}

impl SecurityLevel {
    /// Every level, `none` first.
    pub const ALL: [SecurityLevel; 7] = [
        SecurityLevel::None,
        SecurityLevel::Cpa,
        SecurityLevel::ChaCha20,
        SecurityLevel::Forro14,
        SecurityLevel::ChaCha20Poly1305,
        SecurityLevel::XForro14Poly1305,
        SecurityLevel::Aes256Gcm,
    ];

    /// The level's name, as in the config, the CLI and the cipher registry.
    pub const fn name(self) -> &'static str {
        match self {
            SecurityLevel::None => "none",
            SecurityLevel::Cpa => "cpa",
            SecurityLevel::ChaCha20 => "chacha20",
            SecurityLevel::Forro14 => "forro14",
            SecurityLevel::ChaCha20Poly1305 => "chacha20-poly1305",
            SecurityLevel::XForro14Poly1305 => "xforro14-poly1305",
            SecurityLevel::Aes256Gcm => "aes-256-gcm",
        }
    }

    /// The code that travels in LinkSecurity (and in management's SecurityLevel field).
    pub const fn code(self) -> u8 {
        match self {
            SecurityLevel::None => 0,
            SecurityLevel::Cpa => 1,
            SecurityLevel::ChaCha20 => 2,
            SecurityLevel::Forro14 => 3,
            SecurityLevel::ChaCha20Poly1305 => 4,
            SecurityLevel::XForro14Poly1305 => 5,
            SecurityLevel::Aes256Gcm => 6,
        }
    }

    /// The level of a code, if it is one.
    pub const fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            0 => SecurityLevel::None,
            1 => SecurityLevel::Cpa,
            2 => SecurityLevel::ChaCha20,
            3 => SecurityLevel::Forro14,
            4 => SecurityLevel::ChaCha20Poly1305,
            5 => SecurityLevel::XForro14Poly1305,
            6 => SecurityLevel::Aes256Gcm,
            _ => return None,
        })
    }

    /// Whether the level authenticates (an AEAD): tampering is detected and replays refused.
    pub const fn authenticates(self) -> bool {
        matches!(
            self,
            SecurityLevel::ChaCha20Poly1305
                | SecurityLevel::XForro14Poly1305
                | SecurityLevel::Aes256Gcm
        )
    }

    /// Whether the level encrypts at all.
    pub const fn encrypts(self) -> bool {
        !matches!(self, SecurityLevel::None)
    }

    /// The warning to show wherever this level is chosen, if it deserves one.
    pub const fn warning(self) -> Option<&'static str> {
        match self {
            SecurityLevel::Cpa => Some(
                "cpa only permutes codewords: it is weak (it leaks every byte value; one known \
                 plaintext reveals the key) and gives no integrity; use it only to compare",
            ),
            SecurityLevel::ChaCha20 | SecurityLevel::Forro14 => Some(
                "a bare stream cipher gives confidentiality only, no integrity: tampered or \
                 replayed packets are delivered; use an AEAD level for real traffic",
            ),
            _ => None,
        }
    }
}

impl fmt::Display for SecurityLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown level name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownLevel(pub String);

impl fmt::Display for UnknownLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown security level {:?} (none, cpa, chacha20, forro14, chacha20-poly1305, \
             xforro14-poly1305, aes-256-gcm)",
            self.0
        )
    }
}

impl std::error::Error for UnknownLevel {}

impl FromStr for SecurityLevel {
    type Err = UnknownLevel;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or_else(|| UnknownLevel(s.to_owned()))
    }
}

/// The LinkSecurity header of an encrypted packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkSecurity {
    /// The level (cipher suite) the packet is protected with; never `none`.
    pub level: SecurityLevel,
    /// The whole inner packet is encrypted (link-wide mode), not only a Data's Content.
    pub whole_packet: bool,
    /// Which key (the sender's key epoch).
    pub key_id: u32,
    /// Per-key packet counter: the nonce, and the replay window's position.
    pub counter: u64,
    /// The AEAD tag (present exactly when the level authenticates). Carried here rather than
    /// appended to the ciphertext so that the encrypted packet keeps its length and TLV
    /// headers.
    pub tag: Option<[u8; LINK_SECURITY_TAG_LEN]>,
}

const FLAG_WHOLE_PACKET: u8 = 0x01;

impl LinkSecurity {
    /// Length of the encoded value (14, or 30 with a tag).
    pub fn value_len(&self) -> usize {
        LINK_SECURITY_LEN + self.tag.map_or(0, |t| t.len())
    }

    /// The value without the tag: what an AEAD authenticates of this header.
    pub fn header_bytes(&self) -> [u8; LINK_SECURITY_LEN] {
        let mut v = [0u8; LINK_SECURITY_LEN];
        v[0] = self.level.code();
        v[1] = if self.whole_packet {
            FLAG_WHOLE_PACKET
        } else {
            0
        };
        v[2..6].copy_from_slice(&self.key_id.to_be_bytes());
        v[6..14].copy_from_slice(&self.counter.to_be_bytes());
        v
    }

    /// Writes the value (header, then the tag if any).
    pub(crate) fn put_value(&self, buf: &mut impl bytes::BufMut) {
        buf.put_slice(&self.header_bytes());
        if let Some(tag) = &self.tag {
            buf.put_slice(tag);
        }
    }

    /// Decodes the value of element `e`.
    pub(crate) fn decode(e: &Element<'_>) -> Result<Self, DecodeError> {
        let (head, tag) = match e.value.len() {
            LINK_SECURITY_LEN => (e.value, None),
            n if n == LINK_SECURITY_LEN + LINK_SECURITY_TAG_LEN => {
                let (head, tag) = e.value.split_at(LINK_SECURITY_LEN);
                let mut t = [0u8; LINK_SECURITY_TAG_LEN];
                t.copy_from_slice(tag);
                (head, Some(t))
            }
            _ => {
                return Err(e.error(ErrorKind::InvalidValue(
                    "LinkSecurity is not 14 or 30 octets",
                )))
            }
        };
        let mut v = [0u8; LINK_SECURITY_LEN];
        v.copy_from_slice(head);
        let level = SecurityLevel::from_code(v[0])
            .filter(|l| l.encrypts())
            .ok_or_else(|| e.error(ErrorKind::InvalidValue("unknown LinkSecurity level")))?;
        if v[1] & !FLAG_WHOLE_PACKET != 0 {
            return Err(e.error(ErrorKind::InvalidValue("unknown LinkSecurity flags")));
        }
        if level.authenticates() != tag.is_some() {
            return Err(e.error(ErrorKind::InvalidValue(
                "LinkSecurity tag does not match its level",
            )));
        }
        let mut key_id = [0u8; 4];
        key_id.copy_from_slice(&v[2..6]);
        let mut counter = [0u8; 8];
        counter.copy_from_slice(&v[6..14]);
        Ok(Self {
            level,
            whole_packet: v[1] & FLAG_WHOLE_PACKET != 0,
            key_id: u32::from_be_bytes(key_id),
            counter: u64::from_be_bytes(counter),
            tag,
        })
    }
}

/// TLV-TYPE of LinkSecurity, re-exported for callers that build headers by hand.
pub const LINK_SECURITY_TYPE: u32 = types::LINK_SECURITY;
/// TLV-TYPE of LinkHandshake.
pub const LINK_HANDSHAKE_TYPE: u32 = types::LINK_HANDSHAKE;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_round_trip_by_name_and_code() {
        for l in SecurityLevel::ALL {
            assert_eq!(l.name().parse::<SecurityLevel>().unwrap(), l);
            assert_eq!(SecurityLevel::from_code(l.code()), Some(l));
        }
        assert!("aes-128-gcm".parse::<SecurityLevel>().is_err());
        assert!(SecurityLevel::Cpa.warning().unwrap().contains("weak"));
        assert!(SecurityLevel::Forro14
            .warning()
            .unwrap()
            .contains("no integrity"));
        assert!(SecurityLevel::Aes256Gcm.warning().is_none());
    }

    #[test]
    fn both_fields_are_critical() {
        assert!(crate::tlv::is_critical(types::LINK_SECURITY));
        assert!(!super::super::is_ignorable_field(types::LINK_SECURITY));
        assert!(!super::super::is_ignorable_field(types::LINK_HANDSHAKE));
        assert!(
            (super::super::HEADER3_MIN..=super::super::HEADER3_MAX).contains(&types::LINK_SECURITY)
        );
    }
}
