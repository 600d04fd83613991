//! Self-certifying names: `/32=sc/<h>`, where `32=sc` is a KeywordNameComponent and `h` a
//! 32-byte GenericNameComponent holding the SHA-256 of the owner's SubjectPublicKeyInfo DER
//! (the digest ndn-cxx calls a key's "sha256" KeyId).
//!
//! The CLI shorthand `sc:<64 hex digits>` stands for `/32=sc/<h>`; components after it are
//! written in NDN URI form: `sc:<hex>/video/seg=3` is `/32=sc/<h>/video/seg=3`.

use core::fmt;
use core::str::FromStr;

use bytes::Bytes;
use nameway_wire::tlv::types;
use nameway_wire::{Component, Name, ParseError};
use sha2::{Digest, Sha256};

/// The keyword of self-certifying names (`32=sc`).
pub const SC_KEYWORD: &[u8] = b"sc";

/// The SHA-256 of a SubjectPublicKeyInfo DER: the identity a self-certifying name carries.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct KeyHash([u8; 32]);

/// Why a `sc:` shorthand or a key hash in hex did not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScParseError {
    /// The text does not start with `sc:`.
    #[error("not a sc: name")]
    NotShorthand,
    /// The hash is not 64 hexadecimal digits.
    #[error("the key hash is not 64 hexadecimal digits")]
    BadHash,
    /// The components after the hash are not a valid NDN URI.
    #[error("suffix: {0}")]
    Suffix(#[from] ParseError),
}

impl KeyHash {
    /// The hash of a SubjectPublicKeyInfo DER.
    pub fn of_spki(der: &[u8]) -> Self {
        Self(Sha256::digest(der).into())
    }

    /// A hash from its 32 bytes.
    pub const fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The 32 bytes.
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// A hash from 32 bytes in a slice; `None` for another length.
    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok().map(Self)
    }

    /// The self-certifying name `/32=sc/<h>`.
    pub fn name(&self) -> Name {
        let comps = [
            sc_component(),
            Component::generic(Bytes::copy_from_slice(&self.0)),
        ];
        // Two valid components always make a name.
        Name::from_components(&comps).unwrap_or_default()
    }

    /// The hash a name is under: `Some(h)` when `name` starts with `/32=sc/<h>` (32 bytes,
    /// GenericNameComponent), whatever follows.
    pub fn from_name(name: &Name) -> Option<Self> {
        let first = name.get(0)?;
        if first.typ() != types::KEYWORD_NAME_COMPONENT || first.value() != SC_KEYWORD {
            return None;
        }
        let second = name.get(1)?;
        if second.typ() != types::GENERIC_NAME_COMPONENT {
            return None;
        }
        Self::from_slice(second.value())
    }

    /// Whether `name` is exactly `/32=sc/<h>` for this hash.
    pub fn is_name(&self, name: &Name) -> bool {
        name.len() == 2 && Self::from_name(name) == Some(*self)
    }

    /// 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        let mut s = String::with_capacity(64);
        for b in self.0 {
            s.push(char::from(HEX[usize::from(b >> 4)]));
            s.push(char::from(HEX[usize::from(b & 0xf)]));
        }
        s
    }

    /// Parses 64 hex digits (either case).
    ///
    /// # Errors
    /// [`ScParseError::BadHash`] for another length or a non-hex digit.
    pub fn from_hex(s: &str) -> Result<Self, ScParseError> {
        let digits = s.as_bytes();
        if digits.len() != 64 {
            return Err(ScParseError::BadHash);
        }
        let mut out = [0u8; 32];
        for (slot, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
            let hi = hex_value(pair.first().copied()).ok_or(ScParseError::BadHash)?;
            let lo = hex_value(pair.get(1).copied()).ok_or(ScParseError::BadHash)?;
            *slot = hi << 4 | lo;
        }
        Ok(Self(out))
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn hex_value(c: Option<u8>) -> Option<u8> {
    match c? {
        c @ b'0'..=b'9' => Some(c - b'0'),
        c @ b'a'..=b'f' => Some(c - b'a' + 10),
        c @ b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

impl fmt::Display for KeyHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for KeyHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyHash({})", self.to_hex())
    }
}

impl FromStr for KeyHash {
    type Err = ScParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::from_hex(s)
    }
}

/// The `32=sc` keyword component.
pub fn sc_component() -> Component {
    Component {
        typ: types::KEYWORD_NAME_COMPONENT,
        value: Bytes::from_static(SC_KEYWORD),
    }
}

/// Parses the shorthand `sc:<64 hex>[/suffix...]` into `/32=sc/<h>[/suffix...]`.
///
/// # Errors
/// [`ScParseError`] when the text is not the shorthand or a part of it is invalid.
pub fn parse_shorthand(s: &str) -> Result<Name, ScParseError> {
    let rest = s.strip_prefix("sc:").ok_or(ScParseError::NotShorthand)?;
    let (hash, suffix) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let base = KeyHash::from_hex(hash)?.name();
    if suffix.is_empty() || suffix == "/" {
        return Ok(base);
    }
    let tail: Name = suffix.parse()?;
    let comps: Vec<Component> = base
        .iter()
        .chain(tail.iter())
        .map(|c| c.to_owned())
        .collect();
    Ok(Name::from_components(&comps)?)
}

/// Parses either form the CLI accepts: the `sc:` shorthand or an NDN URI.
///
/// # Errors
/// [`ScParseError`] for a bad shorthand, or the URI's [`ParseError`].
pub fn parse_name(s: &str) -> Result<Name, ScParseError> {
    if s.starts_with("sc:") {
        parse_shorthand(s)
    } else {
        Ok(s.parse()?)
    }
}

/// Prints a name the way the CLI shows it: `sc:<hex>` plus any suffix in URI form for a name
/// under `/32=sc/<h>`, the plain URI otherwise.
pub fn display_name(name: &Name) -> String {
    let Some(h) = KeyHash::from_name(name) else {
        return name.to_string();
    };
    let mut s = format!("sc:{h}");
    for c in name.iter().skip(2) {
        s.push('/');
        s.push_str(&c.to_string());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPKI_HEX: &str =
        "302a300506032b6570032100d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";

    #[test]
    fn name_is_keyword_then_32_byte_generic() {
        let der = hex::decode(SPKI_HEX).unwrap();
        let h = KeyHash::of_spki(&der);
        let name = h.name();
        let wire = name.to_wire();
        assert_eq!(
            &wire[..8],
            &[0x07, 0x26, 0x20, 0x02, b's', b'c', 0x08, 0x20]
        );
        assert_eq!(&wire[8..], h.as_bytes());
        assert_eq!(
            name.to_string(),
            format!("/32=sc/{}", percent(h.as_bytes()))
        );
        assert_eq!(KeyHash::from_name(&name), Some(h));
        assert!(h.is_name(&name));
        let longer: Name = format!("{name}/video/seg=3").parse().unwrap();
        assert_eq!(KeyHash::from_name(&longer), Some(h));
        assert!(!h.is_name(&longer));
    }

    fn percent(b: &[u8]) -> String {
        b.iter()
            .map(|&c| {
                if c.is_ascii_alphanumeric() || b"-._~".contains(&c) {
                    (c as char).to_string()
                } else {
                    format!("%{c:02X}")
                }
            })
            .collect()
    }

    #[test]
    fn other_names_are_not_self_certifying() {
        let h = "00".repeat(32);
        for uri in [
            "/".to_owned(),
            "/32=sc".to_owned(),
            "/sc/a".to_owned(),
            format!("/sc/{}", "%00".repeat(32)),
            format!("/32=SC/{}", "%00".repeat(32)),
            format!("/32=sc/{}", "%00".repeat(31)),
            format!("/32=sc/{}", "%00".repeat(33)),
            format!("/32=sc/33={}", "%00".repeat(32)),
        ] {
            let name: Name = uri.parse().unwrap();
            assert_eq!(KeyHash::from_name(&name), None, "{uri}");
        }
        assert!(KeyHash::from_hex(&h).is_ok());
    }

    #[test]
    fn shorthand_round_trips_with_suffix() {
        let hex = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90";
        let h = KeyHash::from_hex(hex).unwrap();
        let bare = parse_shorthand(&format!("sc:{hex}")).unwrap();
        assert_eq!(bare, h.name());
        assert_eq!(display_name(&bare), format!("sc:{hex}"));
        let with = parse_name(&format!("sc:{}/video/v=7/seg=3", hex.to_uppercase())).unwrap();
        assert_eq!(with.len(), 5);
        assert_eq!(display_name(&with), format!("sc:{hex}/video/v=7/seg=3"));
        assert_eq!(parse_name(&display_name(&with)).unwrap(), with);
        assert_eq!(parse_name(&format!("sc:{hex}/")).unwrap(), bare);
        // A plain URI passes through both ways.
        let plain = parse_name("/example/a").unwrap();
        assert_eq!(display_name(&plain), "/example/a");
    }

    #[test]
    fn bad_shorthands() {
        let good = "ab".repeat(32);
        assert_eq!(parse_shorthand("/a"), Err(ScParseError::NotShorthand));
        for bad in [
            "sc:".to_owned(),
            format!("sc:{}", &good[1..]),
            format!("sc:{good}0"),
            format!("sc:{}g", &good[1..]),
            format!("sc:{}é", &good[2..]),
        ] {
            assert_eq!(parse_shorthand(&bad), Err(ScParseError::BadHash), "{bad}");
        }
        assert!(matches!(
            parse_shorthand(&format!("sc:{good}/%zz")),
            Err(ScParseError::Suffix(_))
        ));
    }
}
