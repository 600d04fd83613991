//! Locator records: a router's signed statement of where it can be reached.
//!
//! ```text
//! Data Name = /32=sc/<hR>/32=LOC/v=<version>
//!      MetaInfo ContentType = 0 (BLOB)
//!      Content = [ExpirationPeriod (0x6d, ms)]
//!                NwFaceUri (0x8e04) UTF-8 FaceUri      ; repeatable, in preference order
//!                NwPublicKey (0x8e02) SubjectPublicKeyInfo
//!                [NwLinkKey (0x8e10) X25519 public key, 32 bytes]  ; its Noise static key
//!      Signature: the router's key (Ed25519 or ECDSA P-256), KeyLocator KeyDigest(hR)
//! ```
//!
//! The version is the signing time in ms since the Unix epoch; with an ExpirationPeriod, the
//! record expires that long after the version. This replaces the published design's
//! certificate binding a router to an address.

use bytes::Bytes;
use nameway_wire::data::content_type;
use nameway_wire::tlv::{self as wtlv, types};
use nameway_wire::{Component, Data, DataView, Name};

use crate::error::{BuildError, FormatError};
use crate::key::{KeyCheckError, NameKey, PublicKey};
use crate::sc::KeyHash;
use crate::tlv::{self, set_once, value_of, walk_content};

/// The `32=LOC` keyword component of locator record names.
pub const LOC_KEYWORD: &[u8] = b"LOC";

/// Most NwFaceUri elements a record may hold.
pub const MAX_FACE_URIS: usize = 32;

/// A decoded locator record.
#[derive(Clone, Debug)]
pub struct LocatorRecord {
    view: DataView,
    router: KeyHash,
    version: u64,
    expiration_ms: Option<u64>,
    face_uris: Vec<String>,
    public_key: Bytes,
    link_key: Option<[u8; 32]>,
}

impl PartialEq for LocatorRecord {
    fn eq(&self, other: &Self) -> bool {
        self.view.wire() == other.view.wire()
    }
}

impl Eq for LocatorRecord {}

impl LocatorRecord {
    /// Signs the locator record of the router owning `key`: `face_uris` in preference order,
    /// version `now_ms`, ExpirationPeriod `lifetime_ms`.
    ///
    /// # Errors
    /// [`BuildError`] when signing fails, a FaceUri is empty, or there are more than
    /// [`MAX_FACE_URIS`].
    pub fn build<S: AsRef<str>>(
        key: &NameKey,
        face_uris: &[S],
        now_ms: u64,
        lifetime_ms: u64,
    ) -> Result<Self, BuildError> {
        Self::build_with_link_key(key, face_uris, None, now_ms, lifetime_ms)
    }

    /// [`LocatorRecord::build`] with the router's secure-link static public key (NwLinkKey),
    /// so that neighbours which authenticate that key on a link know it is this router.
    ///
    /// # Errors
    /// As [`LocatorRecord::build`].
    pub fn build_with_link_key<S: AsRef<str>>(
        key: &NameKey,
        face_uris: &[S],
        link_key: Option<[u8; 32]>,
        now_ms: u64,
        lifetime_ms: u64,
    ) -> Result<Self, BuildError> {
        if face_uris.len() > MAX_FACE_URIS {
            return Err(FormatError::Invalid("NwFaceUri (too many)").into());
        }
        if face_uris.iter().any(|u| u.as_ref().is_empty()) {
            return Err(FormatError::Invalid("NwFaceUri (empty)").into());
        }
        let name = key
            .name()
            .append(&loc_component())?
            .append(&Component::version(now_ms))?;
        let mut content = Vec::with_capacity(128);
        wtlv::put_nni_tlv(&mut content, tlv::EXPIRATION_PERIOD, lifetime_ms);
        for uri in face_uris {
            wtlv::put_tlv(&mut content, tlv::NW_FACE_URI, uri.as_ref().as_bytes());
        }
        wtlv::put_tlv(&mut content, tlv::NW_PUBLIC_KEY, key.spki());
        if let Some(k) = &link_key {
            wtlv::put_tlv(&mut content, tlv::NW_LINK_KEY, k);
        }
        let mut data = Data::new(name, content);
        data.sign(key)?;
        Ok(Self::decode(data.encode())?)
    }

    /// Decodes a locator record. Signatures are not checked here.
    ///
    /// # Errors
    /// [`FormatError`] saying what is wrong.
    pub fn decode(wire: Bytes) -> Result<Self, FormatError> {
        let view = DataView::new_checked(wire)?;
        let (router, version) = split_name(view.name())?;
        if view.content_type() != content_type::BLOB {
            return Err(FormatError::ContentType {
                expected: content_type::BLOB,
                found: view.content_type(),
            });
        }
        let content = view.content();
        let mut expiration = None;
        let mut public_key = None;
        let mut link_key = None;
        let mut face_uris = Vec::new();
        let known = [
            tlv::EXPIRATION_PERIOD,
            tlv::NW_FACE_URI,
            tlv::NW_PUBLIC_KEY,
            tlv::NW_LINK_KEY,
        ];
        walk_content(&content, &known, |e| match e.typ {
            tlv::EXPIRATION_PERIOD => set_once(&mut expiration, e.nni()?, "ExpirationPeriod"),
            tlv::NW_FACE_URI => {
                let uri = core::str::from_utf8(e.value)
                    .ok()
                    .filter(|u| !u.is_empty())
                    .ok_or(FormatError::Invalid("NwFaceUri (empty or not UTF-8)"))?;
                if face_uris.len() == MAX_FACE_URIS {
                    return Err(FormatError::Invalid("NwFaceUri (too many)"));
                }
                face_uris.push(uri.to_owned());
                Ok(())
            }
            tlv::NW_LINK_KEY => {
                let k: [u8; 32] = e
                    .value
                    .try_into()
                    .map_err(|_| FormatError::Invalid("NwLinkKey (not 32 bytes)"))?;
                set_once(&mut link_key, k, "NwLinkKey")
            }
            _ => {
                if e.value.is_empty() {
                    return Err(FormatError::Invalid("NwPublicKey (empty)"));
                }
                set_once(&mut public_key, value_of(&content, e), "NwPublicKey")
            }
        })?;
        Ok(Self {
            router,
            version,
            expiration_ms: expiration,
            face_uris,
            public_key: public_key.ok_or(FormatError::Missing("NwPublicKey"))?,
            link_key,
            view,
        })
    }

    /// The whole Data TLV.
    pub fn wire(&self) -> &Bytes {
        self.view.wire()
    }

    /// The checked Data view.
    pub fn view(&self) -> &DataView {
        &self.view
    }

    /// The router's hash, from the name.
    pub fn router(&self) -> KeyHash {
        self.router
    }

    /// The version (signing time in ms since the Unix epoch).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// ExpirationPeriod, if present.
    pub fn expiration_ms(&self) -> Option<u64> {
        self.expiration_ms
    }

    /// When the record ends (version + ExpirationPeriod); `None` without ExpirationPeriod.
    pub fn expires_at_ms(&self) -> Option<u64> {
        self.expiration_ms.map(|e| self.version.saturating_add(e))
    }

    /// The router's FaceUris, in preference order.
    pub fn face_uris(&self) -> &[String] {
        &self.face_uris
    }

    /// NwPublicKey: the router's SubjectPublicKeyInfo DER.
    pub fn public_key(&self) -> &Bytes {
        &self.public_key
    }

    /// NwLinkKey: the router's secure-link static public key, if the record carries it.
    pub fn link_key(&self) -> Option<&[u8; 32]> {
        self.link_key.as_ref()
    }

    /// The SignatureType.
    pub fn signature_type(&self) -> u64 {
        self.view.signature_info().signature_type
    }

    /// Checks the signature over the received bytes with NwPublicKey.
    ///
    /// # Errors
    /// [`KeyCheckError`] saying what failed.
    pub fn check_signature(&self) -> Result<(), KeyCheckError> {
        PublicKey::check(
            self.signature_type(),
            &self.public_key,
            self.view.signed_portion(),
            &self.view.signature_value(),
        )
    }
}

/// The `32=LOC` keyword component.
pub fn loc_component() -> Component {
    Component {
        typ: types::KEYWORD_NAME_COMPONENT,
        value: Bytes::from_static(LOC_KEYWORD),
    }
}

/// Splits `/32=sc/<hR>/32=LOC/v=<version>`.
fn split_name(name: &Name) -> Result<(KeyHash, u64), FormatError> {
    const WHY: &str = "not /32=sc/<h>/32=LOC/<version>";
    if name.len() != 4 {
        return Err(FormatError::Name(WHY));
    }
    let router = KeyHash::from_name(name).ok_or(FormatError::Name(WHY))?;
    let kw = name.get(2).ok_or(FormatError::Name(WHY))?;
    if kw.typ() != types::KEYWORD_NAME_COMPONENT || kw.value() != LOC_KEYWORD {
        return Err(FormatError::Name(WHY));
    }
    let version = name
        .get(3)
        .and_then(|c| c.as_version())
        .ok_or(FormatError::Name(WHY))?;
    Ok((router, version))
}

#[cfg(test)]
mod tests {
    use nameway_wire::security::DigestSha256;
    use nameway_wire::MetaInfo;

    use super::*;

    #[test]
    fn round_trip() {
        let key = NameKey::generate().unwrap();
        let uris = ["udp4://192.0.2.1:6363", "tcp4://[2001:db8::1]:6363"];
        let loc = LocatorRecord::build(&key, &uris, 1_760_000_000_000, 600_000).unwrap();
        assert_eq!(loc.router(), key.hash());
        assert_eq!(loc.version(), 1_760_000_000_000);
        assert_eq!(loc.expires_at_ms(), Some(1_760_000_600_000));
        assert_eq!(loc.face_uris(), uris);
        assert_eq!(loc.public_key(), key.spki());
        assert_eq!(
            loc.view().name().to_string(),
            format!("{}/32=LOC/v=1760000000000", key.name())
        );
        loc.check_signature().unwrap();
        assert_eq!(LocatorRecord::decode(loc.wire().clone()).unwrap(), loc);
        assert_eq!(loc.link_key(), None);
        let none: [&str; 0] = [];
        let bare = LocatorRecord::build(&key, &none, 5, 6).unwrap();
        assert!(bare.face_uris().is_empty());
        let linked = LocatorRecord::build_with_link_key(&key, &uris, Some([7; 32]), 5, 6).unwrap();
        assert_eq!(linked.link_key(), Some(&[7; 32]));
        linked.check_signature().unwrap();
        assert!(LocatorRecord::build(&key, &[""], 5, 6).is_err());
        assert!(LocatorRecord::build(&key, &["u"; MAX_FACE_URIS + 1], 5, 6).is_err());
    }

    fn data(name: &str, ct: Option<u64>, content: &str) -> Bytes {
        let mut d = Data::new(name.parse().unwrap(), hex::decode(content).unwrap());
        d.meta_info = ct.map(|t| MetaInfo {
            content_type: Some(t),
            ..MetaInfo::default()
        });
        d.sign(&DigestSha256).unwrap();
        d.encode()
    }

    #[test]
    fn malformed_records() {
        let h = "%AA".repeat(32);
        let good = format!("/32=sc/{h}/32=LOC/v=5");
        let key = "fd8e0203010203";
        let cases: Vec<(String, Option<u64>, String, FormatError)> = vec![
            (
                format!("/32=sc/{h}/32=LOC"),
                None,
                key.into(),
                FormatError::Name("not /32=sc/<h>/32=LOC/<version>"),
            ),
            (
                format!("/32=sc/{h}/32=PA/v=5"),
                None,
                key.into(),
                FormatError::Name("not /32=sc/<h>/32=LOC/<version>"),
            ),
            (
                "/a/b/32=LOC/v=5".into(),
                None,
                key.into(),
                FormatError::Name("not /32=sc/<h>/32=LOC/<version>"),
            ),
            (
                good.clone(),
                Some(5),
                key.into(),
                FormatError::ContentType {
                    expected: 0,
                    found: 5,
                },
            ),
            (
                good.clone(),
                None,
                String::new(),
                FormatError::Missing("NwPublicKey"),
            ),
            (
                good.clone(),
                None,
                format!("{key}{key}"),
                FormatError::Repeated("NwPublicKey"),
            ),
            (
                good.clone(),
                None,
                format!("fd8e0402c328{key}"),
                FormatError::Invalid("NwFaceUri (empty or not UTF-8)"),
            ),
            (
                good.clone(),
                None,
                format!("fd8e0400{key}"),
                FormatError::Invalid("NwFaceUri (empty or not UTF-8)"),
            ),
            (
                good.clone(),
                None,
                format!("fd8e0500{key}"),
                FormatError::UnrecognizedCritical(0x8e05),
            ),
            (
                good.clone(),
                None,
                format!("{key}fd8e1001aa"),
                FormatError::Invalid("NwLinkKey (not 32 bytes)"),
            ),
        ];
        for (name, ct, content, want) in cases {
            let got = LocatorRecord::decode(data(&name, ct, &content)).unwrap_err();
            assert_eq!(got, want, "{name} {content}");
        }
        // Unknown non-critical elements are skipped; ExpirationPeriod is optional.
        let ok = LocatorRecord::decode(data(&good, Some(0), &format!("fd8e4000{key}"))).unwrap();
        assert_eq!(ok.expires_at_ms(), None);
        assert_eq!(&ok.public_key()[..], &[1, 2, 3]);
        assert!(
            ok.check_signature().is_err(),
            "DigestSha256 is not accepted"
        );
    }
}
