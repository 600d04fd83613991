//! The controller's side of an object's transfer: the object published as segments and
//! manifests signed by the anchor ([`ConfigObject::publish`]), and the recent publications
//! of one connection answering the agent's Interests ([`Offers`]).

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;
use nameway_transport::{Publication, PublishOptions};
use nameway_wire::{InterestView, Name};

use super::ConfigObject;
use crate::ca::{Authority, CaError};

/// The Content octets of one segment: with the name and the digest signature a segment stays
/// well inside NDN's 8800-octet packet.
pub const SEGMENT_CONTENT: usize = 7 * 1024;

/// Segment digests per manifest (each manifest is one Data signed by the anchor).
pub const MANIFEST_POINTERS: usize = 64;

/// Publications one connection keeps for the agent to fetch: the oldest is dropped past it
/// (the agent fetches offers in order, so only an agent this far behind misses one).
pub const RECENT_OFFERS: usize = 16;

impl ConfigObject {
    /// The object as a [`Publication`] named `<object name>` (its version the object's),
    /// cut into segments of [`SEGMENT_CONTENT`] octets, their digests in manifests signed
    /// with the anchor's key, as `nameway put --manifest` publishes.
    ///
    /// # Errors
    /// The router is outside the domain; a name too long; a signing failure.
    pub fn publish(&self, ca: &Authority) -> Result<Publication, CaError> {
        let options = PublishOptions {
            payload_size: SEGMENT_CONTENT,
            manifest: Some(MANIFEST_POINTERS),
            freshness: Duration::from_secs(10),
            version: Some(self.version),
            ..PublishOptions::default()
        };
        Publication::from_bytes(
            self.name(ca)?,
            self.encode_content(),
            ca.signing_key().clone(),
            options,
        )
        .map_err(|e| CaError::BadObject(e.to_string()))
    }

    /// The object's versioned name, `<domain>/32=ctl/<router suffix>/<kind>/v=<n>`.
    ///
    /// # Errors
    /// The router is outside the domain; a name too long.
    pub fn versioned_name(&self, ca: &Authority) -> Result<Name, CaError> {
        self.name(ca)
    }
}

/// The recent publications of one connection (sans-I/O: Interests in, Data out).
#[derive(Debug, Default)]
pub struct Offers {
    recent: VecDeque<Publication>,
    answered: u64,
    unanswered: u64,
}

impl Offers {
    /// Nothing offered yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps `publication` for the agent (replacing one of the same name; the oldest dropped
    /// past [`RECENT_OFFERS`]) and returns the name to offer.
    pub fn offer(&mut self, publication: Publication) -> Name {
        let name = publication.name().clone();
        self.recent.retain(|p| *p.name() != name);
        if self.recent.len() == RECENT_OFFERS {
            self.recent.pop_front();
        }
        self.recent.push_back(publication);
        name
    }

    /// The Data answering the Interest `wire`, if an offered object has it (a segment or a
    /// manifest); `None` for what does not decode or names nothing offered (counted).
    pub fn answer(&mut self, wire: Bytes) -> Option<Bytes> {
        let answer = InterestView::new_checked(wire).ok().and_then(|interest| {
            self.recent
                .iter_mut()
                .filter(|p| p.name().is_prefix_of(interest.name()))
                .find_map(|p| p.answer(&interest))
        });
        match answer {
            Some(_) => self.answered += 1,
            None => self.unanswered += 1,
        }
        answer
    }

    /// Interests answered.
    pub fn answered(&self) -> u64 {
        self.answered
    }

    /// Interests that named nothing offered (or did not decode).
    pub fn unanswered(&self) -> u64 {
        self.unanswered
    }

    /// Objects held.
    pub fn len(&self) -> usize {
        self.recent.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.recent.is_empty()
    }
}
