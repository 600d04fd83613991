//! Names of the pieces of a published object (NDN naming conventions, rev. 3).
//!
//! - `<prefix>/v=<version>/seg=<n>`: segment `n` (VersionNameComponent, SegmentNameComponent);
//! - `<prefix>/v=<version>/32=manifest/seg=<k>`: manifest `k` ([`crate::manifest`]);
//! - `<prefix>/32=metadata/v=<t>/seg=0`: Realtime Data Retrieval metadata, whose Content is
//!   the versioned name (what ndnget and NDNts look for to discover the version).

use bytes::Bytes;
use nameway_wire::name::{Component, ComponentRef};
use nameway_wire::tlv::types;
use nameway_wire::{Name, ParseError};

/// The keyword component of manifest names.
pub const MANIFEST_KEYWORD: &[u8] = b"manifest";
/// The keyword component of Realtime Data Retrieval metadata names.
pub const METADATA_KEYWORD: &[u8] = b"metadata";

/// A KeywordNameComponent (`32=...`).
pub fn keyword(value: &'static [u8]) -> Component {
    Component {
        typ: types::KEYWORD_NAME_COMPONENT,
        value: Bytes::from_static(value),
    }
}

/// Whether `c` is the KeywordNameComponent `value`.
pub fn is_keyword(c: &ComponentRef<'_>, value: &[u8]) -> bool {
    c.typ() == types::KEYWORD_NAME_COMPONENT && c.value() == value
}

/// `<versioned>/seg=<n>`.
///
/// # Errors
/// The name would be too long.
pub fn segment_name(versioned: &Name, n: u64) -> Result<Name, ParseError> {
    versioned.append(&Component::segment(n))
}

/// `<versioned>/32=manifest/seg=<k>`.
///
/// # Errors
/// The name would be too long.
pub fn manifest_name(versioned: &Name, k: u64) -> Result<Name, ParseError> {
    versioned
        .append(&keyword(MANIFEST_KEYWORD))?
        .append(&Component::segment(k))
}

/// `<prefix>/32=metadata`.
///
/// # Errors
/// The name would be too long.
pub fn metadata_prefix(prefix: &Name) -> Result<Name, ParseError> {
    prefix.append(&keyword(METADATA_KEYWORD))
}

/// Whether `name` ends in a VersionNameComponent.
pub fn ends_in_version(name: &Name) -> bool {
    name.last()
        .is_some_and(|c| c.typ() == types::VERSION_NAME_COMPONENT)
}
