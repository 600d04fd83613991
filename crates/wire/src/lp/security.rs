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
//! LinkSecurity  = 0xfd 0385 TLV-LENGTH(14, 30 or 54)
//!                 level(1) flags(1) key-id(4, BE) counter(8, BE)
//!                 [group-key-id(8, BE) salt(16), flag 0x02: sealed with a group key]
//!                 [tag(16), AEAD levels]
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
/// Length of the group part of LinkSecurity (group key id and the sender's salt).
pub const LINK_SECURITY_GROUP_LEN: usize = 24;
/// The longest LinkSecurity value without its tag (with the group part).
pub const LINK_SECURITY_MAX_HEADER: usize = LINK_SECURITY_LEN + LINK_SECURITY_GROUP_LEN;

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
    /// Sealed with a group key rather than the session's key (flag 0x02): which key and the
    /// salt of the key it is sealed with. Only with an AEAD level and Content-only sealing.
    pub group: Option<GroupSeal>,
}

/// The group part of a LinkSecurity header: the packet's Content is sealed with a key derived
/// from the group key `key_id` and the sender's random `salt` (drawn once per sending
/// session, so that senders sharing the group key never share a derived key); the session key
/// id and counter beside it are the nonce and place the packet in its link's replay window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupSeal {
    /// The group key's id (the 64-bit suffix of the controller's `<prefix>#<16 hex>` id).
    pub key_id: u64,
    /// Random per sending session (many forwarders send under one group key).
    pub salt: [u8; 16],
}

const FLAG_WHOLE_PACKET: u8 = 0x01;
const FLAG_GROUP: u8 = 0x02;

/// The encoded LinkSecurity value without its tag (what an AEAD authenticates of the header).
#[derive(Clone, Copy, Debug)]
pub struct SecurityHeader {
    buf: [u8; LINK_SECURITY_MAX_HEADER],
    len: usize,
}

impl core::ops::Deref for SecurityHeader {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }
}

impl LinkSecurity {
    /// Length of the encoded value (14, 30, or 54 when group-sealed).
    pub fn value_len(&self) -> usize {
        LINK_SECURITY_LEN
            + self.group.map_or(0, |_| LINK_SECURITY_GROUP_LEN)
            + self.tag.map_or(0, |t| t.len())
    }

    /// The value without the tag: what an AEAD authenticates of this header.
    pub fn header_bytes(&self) -> SecurityHeader {
        let mut v = [0u8; LINK_SECURITY_MAX_HEADER];
        v[0] = self.level.code();
        v[1] = if self.whole_packet {
            FLAG_WHOLE_PACKET
        } else {
            0
        } | if self.group.is_some() { FLAG_GROUP } else { 0 };
        v[2..6].copy_from_slice(&self.key_id.to_be_bytes());
        v[6..14].copy_from_slice(&self.counter.to_be_bytes());
        let len = match &self.group {
            Some(g) => {
                v[14..22].copy_from_slice(&g.key_id.to_be_bytes());
                v[22..38].copy_from_slice(&g.salt);
                LINK_SECURITY_MAX_HEADER
            }
            None => LINK_SECURITY_LEN,
        };
        SecurityHeader { buf: v, len }
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
        let bad = |why: &'static str| e.error(ErrorKind::InvalidValue(why));
        let head = e
            .value
            .get(..LINK_SECURITY_LEN)
            .ok_or_else(|| bad("LinkSecurity is shorter than 14 octets"))?;
        let level = SecurityLevel::from_code(head[0])
            .filter(|l| l.encrypts())
            .ok_or_else(|| bad("unknown LinkSecurity level"))?;
        let flags = head[1];
        if flags & !(FLAG_WHOLE_PACKET | FLAG_GROUP) != 0 {
            return Err(bad("unknown LinkSecurity flags"));
        }
        let grouped = flags & FLAG_GROUP != 0;
        let group_len = if grouped { LINK_SECURITY_GROUP_LEN } else { 0 };
        let tag_len = if level.authenticates() {
            LINK_SECURITY_TAG_LEN
        } else {
            0
        };
        if e.value.len() != LINK_SECURITY_LEN + group_len + tag_len {
            return Err(bad(
                "LinkSecurity length does not match its level and flags",
            ));
        }
        if grouped && (!level.authenticates() || flags & FLAG_WHOLE_PACKET != 0) {
            return Err(bad(
                "a group-sealed LinkSecurity needs an AEAD level and Content-only sealing",
            ));
        }
        let mut key_id = [0u8; 4];
        key_id.copy_from_slice(&head[2..6]);
        let mut counter = [0u8; 8];
        counter.copy_from_slice(&head[6..14]);
        let rest = &e.value[LINK_SECURITY_LEN..];
        let group = grouped.then(|| {
            let mut id = [0u8; 8];
            id.copy_from_slice(&rest[..8]);
            let mut salt = [0u8; 16];
            salt.copy_from_slice(&rest[8..LINK_SECURITY_GROUP_LEN]);
            GroupSeal {
                key_id: u64::from_be_bytes(id),
                salt,
            }
        });
        let tag = level.authenticates().then(|| {
            let mut t = [0u8; LINK_SECURITY_TAG_LEN];
            t.copy_from_slice(&rest[group_len..]);
            t
        });
        Ok(Self {
            level,
            whole_packet: flags & FLAG_WHOLE_PACKET != 0,
            key_id: u32::from_be_bytes(key_id),
            counter: u64::from_be_bytes(counter),
            tag,
            group,
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
    fn group_sealed_headers_round_trip_and_need_an_aead_level() {
        use crate::lp::LpPacket;
        let sec = LinkSecurity {
            level: SecurityLevel::XForro14Poly1305,
            whole_packet: false,
            key_id: 0x0102_0003,
            counter: 77,
            tag: Some([9; LINK_SECURITY_TAG_LEN]),
            group: Some(GroupSeal {
                key_id: 0xfeed_beef_0011_2233,
                salt: [5; 16],
            }),
        };
        assert_eq!(sec.value_len(), 54);
        assert_eq!(sec.header_bytes().len(), 38);
        let lp = LpPacket {
            link_security: Some(sec),
            fragment: Some(bytes::Bytes::from_static(&[0x06, 0x00])),
            ..LpPacket::default()
        };
        let back = LpPacket::decode(&lp.encode()).unwrap();
        assert_eq!(back.link_security, Some(sec));
        // Without its tag (a non-AEAD level) or link-wide, a group header is refused.
        for bad in [
            LinkSecurity {
                level: SecurityLevel::ChaCha20,
                tag: None,
                ..sec
            },
            LinkSecurity {
                whole_packet: true,
                ..sec
            },
        ] {
            let lp = LpPacket {
                link_security: Some(bad),
                ..lp.clone()
            };
            assert!(LpPacket::decode(&lp.encode()).is_err(), "{bad:?}");
        }
        // A group flag whose group part is missing is refused.
        let mut wire = lp.encode().to_vec();
        let flag_at = wire
            .windows(4)
            .position(|w| w == [0x85, 54, 0x05, 0x02])
            .unwrap()
            + 3;
        wire[flag_at] = 0x00;
        assert!(LpPacket::decode(&bytes::Bytes::from(wire)).is_err());
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
