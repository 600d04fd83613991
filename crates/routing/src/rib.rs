//! The RIB service's messages: look-ups, answers (found / no such name), and registrations.
//!
//! ```text
//! look-up      Interest <rib prefix>/32=sc/<h>           MustBeFresh
//! found        Data     <rib prefix>/32=sc/<h>           ContentType 0, FreshnessPeriod f
//!                       Content = NwAnnouncement (0x8e06) { announcement Data }
//!                                 NwLocator (0x8e08)      { delegate's locator record Data }
//! not found    Data     <rib prefix>/32=sc/<h>           ContentType 3 (application Nack),
//!                       FreshnessPeriod = how long to cache the answer, empty Content
//! register     Interest <rib prefix>/32=REG/<params-sha256>  MustBeFresh
//!                       ApplicationParameters = NwAnnouncement { .. } NwLocator { .. }
//! reply        Data     (the Interest's name)            ContentType 0, FreshnessPeriod 0
//!                       Content = NwStatus (0x8e0a) 0 stored | 1 not newer | 2 refused
//!                                 [NwCurrentVersion (0x8e0e)] [NwRejectReason (0x8e0c)]
//! ```
//!
//! A "no such name" answer is an application-level Nack (ContentType 3): content stores on the
//! way keep it for its FreshnessPeriod like any Data, so repeated look-ups of a name that does
//! not exist stop at the first cache, and the resolver keeps it in its negative cache for the
//! same time (capped: the answer is not signed by the name's owner, so it may be forged).
//!
//! A registration needs no signature of its own: the announcement inside is signed by the
//! name's key and the locator record by the delegate's; the RIB service verifies that chain as
//! any resolver would, and the version rule makes a replayed registration a no-op. The
//! ParametersSha256DigestComponent makes each registration's name unique.
//!
//! The outer signature of answers is the RIB service's choice (DigestSha256 by default):
//! resolvers trust the chain inside, never the envelope.

use bytes::Bytes;
use nameway_wire::data::content_type;
use nameway_wire::tlv::{self as wtlv, types};
use nameway_wire::{Component, Data, DataView, Interest, MetaInfo, Name, SignatureInfo, Signer};

use crate::error::{BuildError, FormatError, RejectReason};
use crate::sc::{sc_component, KeyHash};
use crate::tlv::{self, set_once, value_of, walk_content};

/// The `32=REG` keyword component of registration Interests.
pub const REG_KEYWORD: &[u8] = b"REG";

/// The look-up name `<rib prefix>/32=sc/<h>`.
///
/// # Errors
/// [`BuildError::Name`] if the name would be too long.
pub fn lookup_name(rib_prefix: &Name, h: &KeyHash) -> Result<Name, BuildError> {
    Ok(rib_prefix
        .append(&sc_component())?
        .append(&Component::generic(Bytes::copy_from_slice(h.as_bytes())))?)
}

/// The hash looked up by `name`, when it is `<rib prefix>/32=sc/<h>` exactly.
pub fn parse_lookup(rib_prefix: &Name, name: &Name) -> Option<KeyHash> {
    let n = rib_prefix.len();
    if name.len() != n + 2 || !rib_prefix.is_prefix_of(name) {
        return None;
    }
    let rest: Vec<Component> = name.iter().skip(n).map(|c| c.to_owned()).collect();
    KeyHash::from_name(&Name::from_components(&rest).ok()?)
}

/// The look-up Interest for `h` (MustBeFresh, no CanBePrefix), with the caller's `nonce`.
///
/// # Errors
/// [`BuildError::Name`] if the name would be too long.
pub fn lookup_interest(
    rib_prefix: &Name,
    h: &KeyHash,
    lifetime_ms: u64,
    nonce: u32,
) -> Result<Interest, BuildError> {
    let mut i = Interest::new(lookup_name(rib_prefix, h)?);
    i.must_be_fresh = true;
    i.lifetime_ms = Some(lifetime_ms);
    i.nonce = Some(nonce);
    Ok(i)
}

/// A RIB service's answer to a look-up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The name's announcement and its delegate's locator record.
    Found {
        /// The announcement Data.
        announcement: Bytes,
        /// The locator record Data.
        locator: Bytes,
    },
    /// No such name; cache this answer for `ttl_ms` (its FreshnessPeriod).
    NotFound {
        /// How long the answer may be cached.
        ttl_ms: u64,
    },
}

/// A decoded answer Data.
#[derive(Clone, Debug)]
pub struct AnswerData {
    /// The Data name (the look-up name).
    pub name: Name,
    /// What it says.
    pub answer: Answer,
    /// Its FreshnessPeriod.
    pub freshness_ms: u64,
    /// Its outer SignatureInfo (not checked here: see the module documentation).
    pub signature_info: SignatureInfo,
}

/// The FreshnessPeriod of a "found" answer: the chain's remaining life, at most `max_ms`.
/// Keep `max_ms` short (a second): a content store answers later look-ups with this Data until
/// then, so a moved producer's new announcement reaches resolvers only after it.
pub fn found_freshness(now_ms: u64, expires_at_ms: u64, max_ms: u64) -> u64 {
    expires_at_ms.saturating_sub(now_ms).min(max_ms)
}

/// Encodes an answer Data named `name` (the look-up's name), signed by `signer`. A found
/// answer gets FreshnessPeriod `freshness_ms`, a not-found one its `ttl_ms`.
///
/// # Errors
/// [`BuildError`] when signing fails.
pub fn encode_answer(
    name: &Name,
    answer: &Answer,
    freshness_ms: u64,
    signer: &dyn Signer,
) -> Result<Bytes, BuildError> {
    let (ct, freshness, content) = match answer {
        Answer::Found {
            announcement,
            locator,
        } => {
            let mut c = Vec::with_capacity(announcement.len() + locator.len() + 8);
            wtlv::put_tlv(&mut c, tlv::NW_ANNOUNCEMENT, announcement);
            wtlv::put_tlv(&mut c, tlv::NW_LOCATOR, locator);
            (content_type::BLOB, freshness_ms, c)
        }
        Answer::NotFound { ttl_ms } => (content_type::NACK, *ttl_ms, Vec::new()),
    };
    let mut data = Data::new(name.clone(), content);
    data.meta_info = Some(MetaInfo {
        content_type: Some(ct),
        freshness_period: Some(freshness),
        final_block_id: None,
    });
    data.sign(signer)?;
    let wire = data.encode();
    if wire.len() > wtlv::MAX_PACKET_SIZE {
        return Err(FormatError::Invalid("answer larger than a packet").into());
    }
    Ok(wire)
}

/// Decodes an answer Data. The records inside are returned as bytes, for the verifier.
///
/// # Errors
/// [`FormatError`] for a Data that is not an answer.
pub fn decode_answer(wire: &Bytes) -> Result<AnswerData, FormatError> {
    let view = DataView::new_checked(wire.clone())?;
    let answer = match view.content_type() {
        content_type::NACK => Answer::NotFound {
            ttl_ms: view.freshness_period_ms(),
        },
        content_type::BLOB => {
            let (announcement, locator) = decode_chain(&view.content())?;
            Answer::Found {
                announcement,
                locator,
            }
        }
        found => {
            return Err(FormatError::ContentType {
                expected: content_type::BLOB,
                found,
            })
        }
    };
    Ok(AnswerData {
        name: view.name().clone(),
        answer,
        freshness_ms: view.freshness_period_ms(),
        signature_info: view.signature_info(),
    })
}

/// Reads NwAnnouncement and NwLocator, each holding one whole Data.
fn decode_chain(block: &Bytes) -> Result<(Bytes, Bytes), FormatError> {
    let (mut announcement, mut locator) = (None, None);
    let known = [tlv::NW_ANNOUNCEMENT, tlv::NW_LOCATOR];
    walk_content(block, &known, |e| {
        let inner = value_of(block, e);
        let is_data = wtlv::read_single(&inner).is_ok_and(|d| d.typ == types::DATA);
        if e.typ == tlv::NW_ANNOUNCEMENT {
            if !is_data {
                return Err(FormatError::Invalid("NwAnnouncement (not one Data)"));
            }
            set_once(&mut announcement, inner, "NwAnnouncement")
        } else {
            if !is_data {
                return Err(FormatError::Invalid("NwLocator (not one Data)"));
            }
            set_once(&mut locator, inner, "NwLocator")
        }
    })?;
    Ok((
        announcement.ok_or(FormatError::Missing("NwAnnouncement"))?,
        locator.ok_or(FormatError::Missing("NwLocator"))?,
    ))
}

/// The `32=REG` keyword component.
pub fn reg_component() -> Component {
    Component {
        typ: types::KEYWORD_NAME_COMPONENT,
        value: Bytes::from_static(REG_KEYWORD),
    }
}

/// The registration Interest carrying `announcement` and `locator` to the RIB service at
/// `rib_prefix` (its name gets the ParametersSha256DigestComponent when encoded).
///
/// # Errors
/// [`BuildError`] if the name would be too long or the Interest too large.
pub fn registration_interest(
    rib_prefix: &Name,
    announcement: &Bytes,
    locator: &Bytes,
    lifetime_ms: u64,
    nonce: u32,
) -> Result<Interest, BuildError> {
    let mut params = Vec::with_capacity(announcement.len() + locator.len() + 8);
    wtlv::put_tlv(&mut params, tlv::NW_ANNOUNCEMENT, announcement);
    wtlv::put_tlv(&mut params, tlv::NW_LOCATOR, locator);
    let mut i = Interest::new(rib_prefix.append(&reg_component())?);
    i.must_be_fresh = true;
    i.lifetime_ms = Some(lifetime_ms);
    i.nonce = Some(nonce);
    i.app_parameters = Some(Bytes::from(params));
    if i.encode().len() > wtlv::MAX_PACKET_SIZE {
        return Err(FormatError::Invalid("registration larger than a packet").into());
    }
    Ok(i)
}

/// A decoded registration: the chain to verify and store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registration {
    /// The Interest's name, for the reply.
    pub name: Name,
    /// The announcement Data.
    pub announcement: Bytes,
    /// The locator record Data.
    pub locator: Bytes,
}

/// Decodes a registration Interest sent to `rib_prefix`: `<rib prefix>/32=REG/<digest>`
/// with a correct ParametersSha256DigestComponent.
///
/// # Errors
/// [`FormatError`] for anything else.
pub fn parse_registration(rib_prefix: &Name, wire: &Bytes) -> Result<Registration, FormatError> {
    let i = Interest::decode(wire)?;
    let n = rib_prefix.len();
    let reg = i.name.get(n);
    let digest = i.name.get(n + 1);
    let shaped = i.name.len() == n + 2
        && rib_prefix.is_prefix_of(&i.name)
        && reg
            .is_some_and(|c| c.typ() == types::KEYWORD_NAME_COMPONENT && c.value() == REG_KEYWORD)
        && digest.is_some_and(|c| c.typ() == types::PARAMETERS_SHA256_DIGEST_COMPONENT);
    if !shaped {
        return Err(FormatError::Name("not <rib prefix>/32=REG/<params-sha256>"));
    }
    let params = i
        .app_parameters
        .ok_or(FormatError::Missing("ApplicationParameters"))?;
    let (announcement, locator) = decode_chain(&params)?;
    Ok(Registration {
        name: i.name,
        announcement,
        locator,
    })
}

/// What a RIB service did with a registration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegistrationStatus {
    /// Verified and stored (new, or newer than what it held).
    Stored,
    /// Verified, but the service holds this version or a newer one, kept.
    NotNewer {
        /// The version it holds.
        current_version: u64,
    },
    /// Refused by the verifier.
    Refused(RejectReason),
}

/// Encodes the reply to a registration named `name`.
///
/// # Errors
/// [`BuildError`] when signing fails.
pub fn encode_registration_reply(
    name: &Name,
    status: RegistrationStatus,
    signer: &dyn Signer,
) -> Result<Bytes, BuildError> {
    let mut c = Vec::with_capacity(16);
    match status {
        RegistrationStatus::Stored => wtlv::put_nni_tlv(&mut c, tlv::NW_STATUS, 0),
        RegistrationStatus::NotNewer { current_version } => {
            wtlv::put_nni_tlv(&mut c, tlv::NW_STATUS, 1);
            wtlv::put_nni_tlv(&mut c, tlv::NW_CURRENT_VERSION, current_version);
        }
        RegistrationStatus::Refused(reason) => {
            wtlv::put_nni_tlv(&mut c, tlv::NW_STATUS, 2);
            wtlv::put_nni_tlv(&mut c, tlv::NW_REJECT_REASON, reason.code());
        }
    }
    let mut data = Data::new(name.clone(), c);
    data.meta_info = Some(MetaInfo {
        freshness_period: Some(0),
        ..MetaInfo::default()
    });
    data.sign(signer)?;
    Ok(data.encode())
}

/// Decodes a registration reply.
///
/// # Errors
/// [`FormatError`] for a Data that is not one.
pub fn decode_registration_reply(wire: &Bytes) -> Result<RegistrationStatus, FormatError> {
    let view = DataView::new_checked(wire.clone())?;
    let content = view.content();
    let (mut status, mut version, mut reason) = (None, None, None);
    let known = [
        tlv::NW_STATUS,
        tlv::NW_CURRENT_VERSION,
        tlv::NW_REJECT_REASON,
    ];
    walk_content(&content, &known, |e| match e.typ {
        tlv::NW_STATUS => set_once(&mut status, e.nni()?, "NwStatus"),
        tlv::NW_CURRENT_VERSION => set_once(&mut version, e.nni()?, "NwCurrentVersion"),
        _ => set_once(&mut reason, e.nni()?, "NwRejectReason"),
    })?;
    match status.ok_or(FormatError::Missing("NwStatus"))? {
        0 => Ok(RegistrationStatus::Stored),
        1 => Ok(RegistrationStatus::NotNewer {
            current_version: version.ok_or(FormatError::Missing("NwCurrentVersion"))?,
        }),
        2 => reason
            .and_then(RejectReason::from_code)
            .map(RegistrationStatus::Refused)
            .ok_or(FormatError::Invalid("NwRejectReason")),
        _ => Err(FormatError::Invalid("NwStatus")),
    }
}

#[cfg(test)]
mod tests;
