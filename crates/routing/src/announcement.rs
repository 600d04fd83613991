//! Route certificates: NDN Prefix Announcements, exactly as ndn-cxx's `PrefixAnnouncement`,
//! NFD's `rib/announce` and NDNts's `PrefixAnn` encode them, with two non-critical fields of
//! Nameway's inside the Content.
//!
//! ```text
//! Data Name = <announced prefix>/32=PA/v=<version>/seg=0
//!      MetaInfo ContentType = 5 (PrefixAnn)
//!      Content = ExpirationPeriod (0x6d, ms)
//!                [ValidityPeriod (0xfd) NotBefore NotAfter]
//!                [NwDelegate (0x8e00) Name /32=sc/<hR>]     ; Nameway, non-critical
//!                [NwPublicKey (0x8e02) SubjectPublicKeyInfo] ; Nameway, non-critical
//!      Signature: Ed25519 (5) or ECDSA P-256 (3), KeyLocator KeyDigest(h)
//! ```
//!
//! The decoder takes any Prefix Announcement (NDNts, python-ndn and ndn-cxx applications send
//! ones without Nameway's fields, for any prefix) and reports what it found; the chain
//! verifier ([`crate::ChainVerifier`]) requires the Nameway fields.
//!
//! The version is the signing time in ms since the Unix epoch (ndn-cxx's default), which the
//! verifier uses twice: the route expires at version + ExpirationPeriod, and a newer version
//! of a name replaces an older one (mobility).

use bytes::Bytes;
use nameway_wire::data::content_type;
use nameway_wire::tlv::{self as wtlv, types};
use nameway_wire::{Component, Data, DataView, KeyLocator, MetaInfo, Name, Signer};

use crate::error::{BuildError, FormatError};
use crate::key::{KeyCheckError, NameKey, PublicKey};
use crate::sc::KeyHash;
use crate::time::{format_iso, parse_iso};
use crate::tlv::{self, set_once, value_of, walk_content};

/// The `32=PA` keyword component of announcement names.
pub const PA_KEYWORD: &[u8] = b"PA";

/// A ValidityPeriod, in ms since the Unix epoch (whole seconds on the wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Validity {
    /// NotBefore.
    pub not_before_ms: u64,
    /// NotAfter.
    pub not_after_ms: u64,
}

/// What an announcement says, for [`Announcement::build`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnnouncementParams {
    /// The announced prefix.
    pub prefix: Name,
    /// The version: the signing time in ms since the Unix epoch.
    pub version: u64,
    /// ExpirationPeriod in ms.
    pub expiration_ms: u64,
    /// ValidityPeriod (written in whole seconds, truncated).
    pub validity: Option<Validity>,
    /// NwDelegate: the router the name is delegated to.
    pub delegate: Option<Name>,
    /// NwPublicKey: the signing key's SubjectPublicKeyInfo DER.
    pub public_key: Option<Bytes>,
}

/// A decoded Prefix Announcement: the Data and the fields found in it.
#[derive(Clone, Debug)]
pub struct Announcement {
    view: DataView,
    prefix: Name,
    version: u64,
    segment: u64,
    expiration_ms: u64,
    validity: Option<Validity>,
    delegate: Option<Name>,
    public_key: Option<Bytes>,
}

impl PartialEq for Announcement {
    fn eq(&self, other: &Self) -> bool {
        self.view.wire() == other.view.wire()
    }
}

impl Eq for Announcement {}

impl Announcement {
    /// Encodes and signs an announcement of `params` with `signer` (its SignatureType and
    /// KeyLocator).
    ///
    /// # Errors
    /// [`BuildError`] when signing fails or the packet would be too large.
    pub fn build(params: &AnnouncementParams, signer: &dyn Signer) -> Result<Self, BuildError> {
        let name = params
            .prefix
            .append(&pa_component())?
            .append(&Component::version(params.version))?
            .append(&Component::segment(0))?;
        let mut data = Data::new(name, encode_content(params));
        data.meta_info = Some(MetaInfo {
            content_type: Some(content_type::PREFIX_ANN),
            ..MetaInfo::default()
        });
        data.sign(signer)?;
        Ok(Self::decode(data.encode())?)
    }

    /// The announcement of Nameway's secure routing: `key`'s own name `/32=sc/<h>` delegated
    /// to the router `delegate`, signed now (`now_ms`, the version), living `lifetime_ms`
    /// (ExpirationPeriod, and a ValidityPeriod from now to now + lifetime), with the key in
    /// NwPublicKey.
    ///
    /// # Errors
    /// [`BuildError`] when signing fails.
    pub fn delegation(
        key: &NameKey,
        delegate: &KeyHash,
        now_ms: u64,
        lifetime_ms: u64,
    ) -> Result<Self, BuildError> {
        let params = AnnouncementParams {
            prefix: key.name(),
            version: now_ms,
            expiration_ms: lifetime_ms,
            validity: Some(Validity {
                not_before_ms: now_ms,
                not_after_ms: now_ms.saturating_add(lifetime_ms),
            }),
            delegate: Some(delegate.name()),
            public_key: Some(key.spki().clone()),
        };
        Self::build(&params, key)
    }

    /// Decodes a Prefix Announcement Data (`06 LL ...`) with ndn-cxx's rules: the name ends
    /// with `32=PA`, a version and a segment; ContentType is PrefixAnn; the Content holds an
    /// ExpirationPeriod; unknown critical elements are refused, unknown non-critical skipped.
    /// Nameway's fields are read when present. Signatures are not checked here.
    ///
    /// # Errors
    /// [`FormatError`] saying what is wrong.
    pub fn decode(wire: Bytes) -> Result<Self, FormatError> {
        let view = DataView::new_checked(wire)?;
        let (prefix, version, segment) = split_name(view.name())?;
        if view.content_type() != content_type::PREFIX_ANN {
            return Err(FormatError::ContentType {
                expected: content_type::PREFIX_ANN,
                found: view.content_type(),
            });
        }
        let content = view.content();
        if content.is_empty() {
            return Err(FormatError::Missing("Content"));
        }
        let f = ContentFields::decode(&content)?;
        Ok(Self {
            prefix,
            version,
            segment,
            expiration_ms: f
                .expiration
                .ok_or(FormatError::Missing("ExpirationPeriod"))?,
            validity: f.validity,
            delegate: f.delegate,
            public_key: f.public_key,
            view,
        })
    }

    /// The whole Data TLV.
    pub fn wire(&self) -> &Bytes {
        self.view.wire()
    }

    /// The checked Data view (signed portion, SignatureInfo, SignatureValue).
    pub fn view(&self) -> &DataView {
        &self.view
    }

    /// The announced prefix (the Data name without `32=PA/v=/seg=`).
    pub fn prefix(&self) -> &Name {
        &self.prefix
    }

    /// The version (signing time in ms since the Unix epoch, by convention).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The segment number (0 in every announcement NDNts and ndn-cxx build).
    pub fn segment(&self) -> u64 {
        self.segment
    }

    /// ExpirationPeriod in ms.
    pub fn expiration_ms(&self) -> u64 {
        self.expiration_ms
    }

    /// ValidityPeriod, if present.
    pub fn validity(&self) -> Option<Validity> {
        self.validity
    }

    /// NwDelegate, if present.
    pub fn delegate(&self) -> Option<&Name> {
        self.delegate.as_ref()
    }

    /// NwPublicKey, if present.
    pub fn public_key(&self) -> Option<&Bytes> {
        self.public_key.as_ref()
    }

    /// The SignatureType.
    pub fn signature_type(&self) -> u64 {
        self.view.signature_info().signature_type
    }

    /// The KeyLocator, if any.
    pub fn key_locator(&self) -> Option<KeyLocator> {
        self.view.signature_info().key_locator
    }

    /// `h` when the announced prefix is exactly a self-certifying name `/32=sc/<h>`.
    pub fn key_hash(&self) -> Option<KeyHash> {
        KeyHash::from_name(&self.prefix).filter(|_| self.prefix.len() == 2)
    }

    /// When the route ends: version + ExpirationPeriod, or NotAfter if earlier.
    pub fn expires_at_ms(&self) -> u64 {
        let by_expiration = self.version.saturating_add(self.expiration_ms);
        match self.validity {
            Some(v) => by_expiration.min(v.not_after_ms),
            None => by_expiration,
        }
    }

    /// Checks the signature over the received bytes with the SubjectPublicKeyInfo `spki`
    /// (Ed25519 or ECDSA P-256, by SignatureType).
    ///
    /// # Errors
    /// [`KeyCheckError`] saying what failed.
    pub fn check_signature(&self, spki: &[u8]) -> Result<(), KeyCheckError> {
        PublicKey::check(
            self.signature_type(),
            spki,
            self.view.signed_portion(),
            &self.view.signature_value(),
        )
    }
}

/// The `32=PA` keyword component.
pub fn pa_component() -> Component {
    Component {
        typ: types::KEYWORD_NAME_COMPONENT,
        value: Bytes::from_static(PA_KEYWORD),
    }
}

/// Splits `<prefix>/32=PA/v=<version>/seg=<segment>`.
fn split_name(name: &Name) -> Result<(Name, u64, u64), FormatError> {
    const WHY: &str = "not <prefix>/32=PA/<version>/<segment>";
    let n = name.len();
    if n < 3 {
        return Err(FormatError::Name(WHY));
    }
    let kw = name.get(n - 3).ok_or(FormatError::Name(WHY))?;
    if kw.typ() != types::KEYWORD_NAME_COMPONENT || kw.value() != PA_KEYWORD {
        return Err(FormatError::Name(WHY));
    }
    let version = name.get(n - 2).and_then(|c| c.as_version());
    let segment = name.get(n - 1).and_then(|c| c.as_segment());
    match (version, segment) {
        (Some(v), Some(s)) => Ok((name.prefix(n - 3), v, s)),
        _ => Err(FormatError::Name(WHY)),
    }
}

/// The Content fields of an announcement.
#[derive(Default)]
struct ContentFields {
    expiration: Option<u64>,
    validity: Option<Validity>,
    delegate: Option<Name>,
    public_key: Option<Bytes>,
}

impl ContentFields {
    fn decode(content: &Bytes) -> Result<Self, FormatError> {
        let mut f = Self::default();
        let known = [
            tlv::EXPIRATION_PERIOD,
            tlv::VALIDITY_PERIOD,
            tlv::NW_DELEGATE,
            tlv::NW_PUBLIC_KEY,
        ];
        walk_content(content, &known, |e| match e.typ {
            tlv::EXPIRATION_PERIOD => set_once(&mut f.expiration, e.nni()?, "ExpirationPeriod"),
            tlv::VALIDITY_PERIOD => {
                set_once(&mut f.validity, decode_validity(e.value)?, "ValidityPeriod")
            }
            tlv::NW_DELEGATE => {
                let name = Name::decode(&value_of(content, e))
                    .map_err(|_| FormatError::Invalid("NwDelegate (not one Name)"))?;
                set_once(&mut f.delegate, name, "NwDelegate")
            }
            _ => {
                if e.value.is_empty() {
                    return Err(FormatError::Invalid("NwPublicKey (empty)"));
                }
                set_once(&mut f.public_key, value_of(content, e), "NwPublicKey")
            }
        })?;
        Ok(f)
    }
}

/// Decodes a ValidityPeriod's value: NotBefore then NotAfter, each `YYYYMMDDThhmmss`.
pub(crate) fn decode_validity(value: &[u8]) -> Result<Validity, FormatError> {
    const BAD: FormatError = FormatError::Invalid("ValidityPeriod");
    let mut r = wtlv::Reader::new(value);
    let nb = r.read()?.filter(|e| e.typ == tlv::NOT_BEFORE).ok_or(BAD)?;
    let na = r.read()?.filter(|e| e.typ == tlv::NOT_AFTER).ok_or(BAD)?;
    if !r.is_empty() {
        return Err(BAD);
    }
    Ok(Validity {
        not_before_ms: parse_iso(nb.value).ok_or(BAD)?,
        not_after_ms: parse_iso(na.value).ok_or(BAD)?,
    })
}

/// Appends a ValidityPeriod element.
pub(crate) fn put_validity(buf: &mut Vec<u8>, v: &Validity) {
    let (nb, na) = (format_iso(v.not_before_ms), format_iso(v.not_after_ms));
    let inner = wtlv::tlv_len(tlv::NOT_BEFORE, nb.len()) + wtlv::tlv_len(tlv::NOT_AFTER, na.len());
    wtlv::put_header(buf, tlv::VALIDITY_PERIOD, inner);
    wtlv::put_tlv(buf, tlv::NOT_BEFORE, &nb);
    wtlv::put_tlv(buf, tlv::NOT_AFTER, &na);
}

fn encode_content(p: &AnnouncementParams) -> Vec<u8> {
    let mut buf = Vec::with_capacity(160);
    wtlv::put_nni_tlv(&mut buf, tlv::EXPIRATION_PERIOD, p.expiration_ms);
    if let Some(v) = &p.validity {
        put_validity(&mut buf, v);
    }
    if let Some(d) = &p.delegate {
        wtlv::put_tlv(&mut buf, tlv::NW_DELEGATE, &d.to_wire());
    }
    if let Some(k) = &p.public_key {
        wtlv::put_tlv(&mut buf, tlv::NW_PUBLIC_KEY, k);
    }
    buf
}

#[cfg(test)]
mod tests;
