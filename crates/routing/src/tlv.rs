//! TLV-TYPE numbers of the records, and the element walk their decoders share.
//!
//! Nameway's own types are even (non-critical) and above 32767 (the range the packet format
//! leaves to applications), so NFD, ndn-cxx, NDNts and python-ndn skip them inside a Prefix
//! Announcement's Content.

use bytes::Bytes;
use nameway_wire::tlv::{self, Element, Reader};

use crate::error::FormatError;

/// ExpirationPeriod (NFD management, 0x6d): how long the announced route lives, in ms.
pub const EXPIRATION_PERIOD: u32 = 0x6d;
/// ValidityPeriod (0xfd), as in certificates: NotBefore and NotAfter.
pub const VALIDITY_PERIOD: u32 = tlv::types::VALIDITY_PERIOD;
/// NotBefore (0xfe), `YYYYMMDDThhmmss`.
pub const NOT_BEFORE: u32 = tlv::types::NOT_BEFORE;
/// NotAfter (0xff), `YYYYMMDDThhmmss`.
pub const NOT_AFTER: u32 = tlv::types::NOT_AFTER;
/// NwDelegate (0x8e00): a Name, the router `/32=sc/<hR>` a name is delegated to.
pub const NW_DELEGATE: u32 = 0x8e00;
/// NwPublicKey (0x8e02): a SubjectPublicKeyInfo DER.
pub const NW_PUBLIC_KEY: u32 = 0x8e02;
/// NwFaceUri (0x8e04): one UTF-8 FaceUri of a router; repeatable.
pub const NW_FACE_URI: u32 = 0x8e04;
/// NwLinkKey (0x8e10): a router's secure-link (Noise XX) static public key, X25519, 32
/// bytes, in its locator record: binds the link identity neighbours authenticate to the
/// routing identity `/32=sc/<hR>` (an X25519 key cannot sign announcements).
pub const NW_LINK_KEY: u32 = 0x8e10;
/// NwAnnouncement (0x8e06): a whole announcement Data, in a RIB message.
pub const NW_ANNOUNCEMENT: u32 = 0x8e06;
/// NwLocator (0x8e08): a whole locator record Data, in a RIB message.
pub const NW_LOCATOR: u32 = 0x8e08;
/// NwStatus (0x8e0a): a registration reply's status number.
pub const NW_STATUS: u32 = 0x8e0a;
/// NwRejectReason (0x8e0c): why a registration was refused ([`crate::RejectReason::code`]).
pub const NW_REJECT_REASON: u32 = 0x8e0c;
/// NwCurrentVersion (0x8e0e): the version the RIB service holds, in a "not newer" reply.
pub const NW_CURRENT_VERSION: u32 = 0x8e0e;

/// Walks the elements of a record's Content, handing each known one to `on_known` and
/// skipping unknown non-critical ones. `known` says which types the record reads.
///
/// # Errors
/// A TLV error, an unknown critical element, or what `on_known` returns.
pub(crate) fn walk_content(
    content: &[u8],
    known: &[u32],
    mut on_known: impl FnMut(&Element<'_>) -> Result<(), FormatError>,
) -> Result<(), FormatError> {
    let mut r = Reader::new(content);
    while let Some(e) = r.read()? {
        if known.contains(&e.typ) {
            on_known(&e)?;
        } else if tlv::is_critical(e.typ) {
            return Err(FormatError::UnrecognizedCritical(e.typ));
        }
    }
    Ok(())
}

/// Sets `slot` once; a second occurrence is [`FormatError::Repeated`].
pub(crate) fn set_once<T>(
    slot: &mut Option<T>,
    value: T,
    what: &'static str,
) -> Result<(), FormatError> {
    if slot.is_some() {
        return Err(FormatError::Repeated(what));
    }
    *slot = Some(value);
    Ok(())
}

/// The element's value as a slice of `content` (which the element was read from), sharing it.
pub(crate) fn value_of(content: &Bytes, e: &Element<'_>) -> Bytes {
    content.slice(e.value_range())
}
