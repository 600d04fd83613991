//! The `security` configuration object: the per-prefix levels and group keys a member
//! router holds, each key sealed to that router (HPKE, [`crate::sealed`]).
//!
//! It travels as the Body of a signed [`crate::objects::ConfigObject`] of kind `security`
//! (always a whole snapshot: the keys a router must hold now). Body, TLV:
//!
//! ```text
//! Body       = *Grant
//! Grant      = 0xB0 (Name Level KeyId SealedKey NotBefore NotAfter)
//! Level      = 0xB1 NonNegativeInteger   ; the LinkSecurity level code (docs/secure-forwarding.md)
//! KeyId      = 0xB2 *OCTET               ; UTF-8, `<prefix>#<16 hex digits>`
//! SealedKey  = 0xB3 80OCTET              ; enc (32) || ciphertext (48)
//! NotBefore  = 0xB4 NonNegativeInteger   ; ms since the Unix epoch
//! NotAfter   = 0xB5 NonNegativeInteger
//! ```
//!
//! Several grants of one prefix are a rotation: the newest (by NotBefore) is the one to
//! send with, and every listed key opens until its NotAfter (the overlap).

use bytes::Bytes;
use nameway_wire::lp::SecurityLevel;
use nameway_wire::tlv::{put_nni_tlv, put_tlv, Reader};
use nameway_wire::Name;

#[cfg(feature = "server")]
use crate::group_keys::{sealed_in, GroupKeyError};

const GRANT: u32 = 0xB0;
const LEVEL: u32 = 0xB1;
const KEY_ID: u32 = 0xB2;
const SEALED_KEY: u32 = 0xB3;
const NOT_BEFORE: u32 = 0xB4;
const NOT_AFTER: u32 = 0xB5;
const NAME: u32 = 0x07;
const LINK_KEY: u32 = 0xDA;

/// One group key granted to one router.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The prefix it protects.
    pub prefix: Name,
    /// The prefix's security level.
    pub level: SecurityLevel,
    /// The key's id.
    pub key_id: String,
    /// The key, sealed to this router.
    pub sealed: Bytes,
    /// Valid from (ms since the epoch).
    pub not_before_ms: u64,
    /// Valid until (ms since the epoch).
    pub not_after_ms: u64,
}

/// Encodes grants as a `security` object's Body.
pub fn encode_grants(grants: &[Grant]) -> Bytes {
    let mut out = Vec::new();
    for g in grants {
        let mut v = g.prefix.to_wire().to_vec();
        put_nni_tlv(&mut v, LEVEL, u64::from(g.level.code()));
        put_tlv(&mut v, KEY_ID, g.key_id.as_bytes());
        put_tlv(&mut v, SEALED_KEY, &g.sealed);
        put_nni_tlv(&mut v, NOT_BEFORE, g.not_before_ms);
        put_nni_tlv(&mut v, NOT_AFTER, g.not_after_ms);
        put_tlv(&mut out, GRANT, &v);
    }
    Bytes::from(out)
}

/// Decodes a `security` object's Body.
///
/// # Errors
/// A one-line reason: not TLV, an unknown element, a missing or malformed field.
pub fn decode_grants(body: &Bytes) -> Result<Vec<Grant>, String> {
    let mut out = Vec::new();
    let mut r = Reader::new(body);
    while let Some(e) = r.read().map_err(|e| format!("security object: {e}"))? {
        if e.typ != GRANT {
            return Err(format!("security object: unknown element {:#x}", e.typ));
        }
        let value = body.slice(e.value_range());
        let mut f = Reader::new(&value);
        let (mut prefix, mut level, mut key_id, mut sealed, mut nb, mut na) =
            (None, None, None, None, None, None);
        while let Some(x) = f.read().map_err(|e| format!("grant: {e}"))? {
            let v = value.slice(x.value_range());
            match x.typ {
                NAME => {
                    prefix = Some(
                        Name::decode(&value.slice(x.range()))
                            .map_err(|e| format!("grant prefix: {e}"))?,
                    );
                }
                LEVEL => {
                    let code = x.nni().map_err(|e| format!("grant level: {e}"))?;
                    level = u8::try_from(code).ok().and_then(SecurityLevel::from_code);
                    if level.is_none() {
                        return Err(format!("grant level {code} is not a level"));
                    }
                }
                KEY_ID => {
                    key_id =
                        Some(String::from_utf8(v.to_vec()).map_err(|_| "grant key id: not UTF-8")?);
                }
                SEALED_KEY => sealed = Some(v),
                NOT_BEFORE => nb = Some(x.nni().map_err(|e| format!("grant: {e}"))?),
                NOT_AFTER => na = Some(x.nni().map_err(|e| format!("grant: {e}"))?),
                t => return Err(format!("grant: unknown element {t:#x}")),
            }
        }
        let (Some(prefix), Some(level), Some(key_id), Some(sealed), Some(nb), Some(na)) =
            (prefix, level, key_id, sealed, nb, na)
        else {
            return Err("grant: a field is missing".into());
        };
        out.push(Grant {
            prefix,
            level,
            key_id,
            sealed,
            not_before_ms: nb,
            not_after_ms: na,
        });
    }
    Ok(out)
}

/// A `trust` object's Body: the secure-link keys (X25519, 32 bytes) of every router of the
/// domain whose certificate is valid and not denied, each as `LinkKey = 0xDA 32OCTET`.
pub fn encode_trust(keys: &[[u8; 32]]) -> Bytes {
    let mut out = Vec::with_capacity(keys.len() * 34);
    for k in keys {
        put_tlv(&mut out, LINK_KEY, k);
    }
    Bytes::from(out)
}

/// Decodes a `trust` object's Body.
///
/// # Errors
/// A one-line reason: not TLV, an unknown element, a key that is not 32 bytes.
pub fn decode_trust(body: &Bytes) -> Result<Vec<[u8; 32]>, String> {
    let mut out = Vec::new();
    let mut r = Reader::new(body);
    while let Some(e) = r.read().map_err(|e| format!("trust object: {e}"))? {
        if e.typ != LINK_KEY {
            return Err(format!("trust object: unknown element {:#x}", e.typ));
        }
        let k: [u8; 32] = body
            .get(e.value_range())
            .and_then(|v| v.try_into().ok())
            .ok_or("trust object: a link key is not 32 bytes")?;
        out.push(k);
    }
    Ok(out)
}

/// The grants `router` must hold at `now_ms`: every key it is a member of that has not
/// expired, oldest first (the keys read in one query).
///
/// # Errors
/// A database failure, a malformed key row, a prefix or level that does not parse.
#[cfg(feature = "server")]
pub fn grants_for<S: crate::ca_store::CaStore + ?Sized>(
    store: &mut S,
    router: &str,
    now_ms: u64,
) -> Result<Vec<Grant>, GroupKeyError> {
    let mut out = Vec::new();
    for k in store.group_key_rows()? {
        let bad = || GroupKeyError::Malformed(k.key_id.clone());
        if k.not_after_ms <= now_ms {
            continue;
        }
        let Some(sealed) = sealed_in(&k.sealed_per_node, router).ok_or_else(bad)? else {
            continue;
        };
        out.push(Grant {
            prefix: k.scope.parse().map_err(|_| bad())?,
            level: k.level.parse().map_err(|_| bad())?,
            key_id: k.key_id.clone(),
            sealed: Bytes::copy_from_slice(sealed),
            not_before_ms: k.not_before_ms,
            not_after_ms: k.not_after_ms,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_round_trip_and_malformed_bodies_are_refused() {
        let g = Grant {
            prefix: "/example/video".parse().unwrap(),
            level: SecurityLevel::ChaCha20Poly1305,
            key_id: "/example/video#0011223344556677".into(),
            sealed: Bytes::from(vec![3u8; 80]),
            not_before_ms: 1,
            not_after_ms: 1 << 42,
        };
        let body = encode_grants(&[g.clone(), g.clone()]);
        assert_eq!(decode_grants(&body).unwrap(), vec![g.clone(), g]);
        assert_eq!(decode_grants(&Bytes::new()).unwrap(), vec![]);
        let keys = [[1u8; 32], [2u8; 32]];
        assert_eq!(decode_trust(&encode_trust(&keys)).unwrap(), keys.to_vec());
        assert!(decode_trust(&Bytes::from_static(b"\xda\x01\x00")).is_err());
        assert!(decode_trust(&Bytes::from_static(b"\xb0\x00")).is_err());
        for bad in [
            &b"\xb0\x02\xb1\x00"[..],
            b"\xb9\x00",
            b"\xb0\x05\x07\x00\xb1\x01\x63",
            b"\xb0",
        ] {
            assert!(
                decode_grants(&Bytes::copy_from_slice(bad)).is_err(),
                "{bad:?}"
            );
        }
    }
}
