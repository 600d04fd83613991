//! The face table: the faces the driver has attached, with their scope, link type and
//! counters. The forwarder sees a face only as an id; the driver owns the sockets.

use core::fmt;

use hashbrown::HashTable;

use crate::counters::FaceCounters;

/// A face id. NFD numbers faces from 1; ids 1..=255 are reserved for internal faces (NFD uses 1
/// for management, 254 for the content store, 255 for the null face) and the forwarder hands out
/// 256 and up. Ids are never reused by a forwarder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FaceId(pub u64);

impl FaceId {
    /// The first id [`crate::Forwarder::add_face`] hands out (NFD's `FACEID_RESERVED_MAX + 1`).
    pub const FIRST_DYNAMIC: FaceId = FaceId(256);

    /// A well-mixed hash of the id, for the face table.
    pub(crate) const fn hash(self) -> u64 {
        self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
}

impl fmt::Display for FaceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Face scope (NFD FaceScope).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaceScope {
    /// An application on this host (Unix socket, TCP from loopback, the internal management
    /// face). `/localhost` packets may cross it; local fields (NextHopFaceId) are honoured.
    Local,
    /// Anything else.
    NonLocal,
}

/// Link type (NFD LinkType).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LinkType {
    /// One peer: loops are answered with Nack Duplicate, Nacks are sent and received.
    PointToPoint,
    /// A broadcast medium (Ethernet multicast, UDP multicast): no Nacks either way.
    MultiAccess,
    /// A wireless ad hoc medium: like multi-access, and Interests and Data may leave through
    /// the face they came in on.
    AdHoc,
}

/// A face as the forwarder knows it.
#[derive(Clone, Debug)]
pub struct Face {
    id: FaceId,
    scope: FaceScope,
    link_type: LinkType,
    local_fields: bool,
    pub(crate) counters: FaceCounters,
}

impl Face {
    /// The id.
    pub fn id(&self) -> FaceId {
        self.id
    }

    /// The scope.
    pub fn scope(&self) -> FaceScope {
        self.scope
    }

    /// The link type.
    pub fn link_type(&self) -> LinkType {
        self.link_type
    }

    /// Whether NDNLPv2 local fields are enabled (NFD's LocalFieldsEnabled face flag): Interests
    /// sent to this face carry IncomingFaceId, the face they arrived on.
    pub fn local_fields_enabled(&self) -> bool {
        self.local_fields
    }

    pub(crate) fn set_local_fields(&mut self, enabled: bool) {
        self.local_fields = enabled;
    }

    /// Whether the scope is local.
    pub fn is_local(&self) -> bool {
        self.scope == FaceScope::Local
    }

    /// Whether the link is point-to-point.
    pub fn is_point_to_point(&self) -> bool {
        self.link_type == LinkType::PointToPoint
    }

    /// The counters.
    pub fn counters(&self) -> &FaceCounters {
        &self.counters
    }
}

/// Faces by id.
#[derive(Debug)]
pub(crate) struct FaceTable {
    faces: HashTable<Face>,
    next_id: u64,
}

impl FaceTable {
    pub(crate) fn new() -> Self {
        Self {
            faces: HashTable::new(),
            next_id: FaceId::FIRST_DYNAMIC.0,
        }
    }

    /// Adds a face with the next free dynamic id.
    pub(crate) fn add(&mut self, scope: FaceScope, link_type: LinkType) -> FaceId {
        let mut id = FaceId(self.next_id);
        while self.get(id).is_some() {
            id = FaceId(id.0.saturating_add(1));
        }
        self.next_id = id.0.saturating_add(1);
        self.insert(id, scope, link_type);
        id
    }

    /// Adds a face with a chosen id; false when the id is taken.
    pub(crate) fn add_with_id(
        &mut self,
        id: FaceId,
        scope: FaceScope,
        link_type: LinkType,
    ) -> bool {
        if self.get(id).is_some() {
            return false;
        }
        self.insert(id, scope, link_type);
        true
    }

    fn insert(&mut self, id: FaceId, scope: FaceScope, link_type: LinkType) {
        let face = Face {
            id,
            scope,
            link_type,
            local_fields: false,
            counters: FaceCounters::default(),
        };
        self.faces.insert_unique(id.hash(), face, |f| f.id.hash());
    }

    pub(crate) fn remove(&mut self, id: FaceId) -> Option<Face> {
        match self.faces.find_entry(id.hash(), |f| f.id == id) {
            Ok(e) => Some(e.remove().0),
            Err(_) => None,
        }
    }

    #[inline]
    pub(crate) fn get(&self, id: FaceId) -> Option<&Face> {
        self.faces.find(id.hash(), |f| f.id == id)
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, id: FaceId) -> Option<&mut Face> {
        self.faces.find_mut(id.hash(), |f| f.id == id)
    }

    pub(crate) fn len(&self) -> usize {
        self.faces.len()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Face> + '_ {
        self.faces.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_dynamic_and_never_reused() {
        let mut t = FaceTable::new();
        let a = t.add(FaceScope::Local, LinkType::PointToPoint);
        let b = t.add(FaceScope::NonLocal, LinkType::MultiAccess);
        assert_eq!(a, FaceId(256));
        assert_eq!(b, FaceId(257));
        assert!(t.remove(a).is_some());
        assert!(t.get(a).is_none());
        assert_eq!(t.add(FaceScope::Local, LinkType::PointToPoint), FaceId(258));
        assert!(t.add_with_id(FaceId(1), FaceScope::Local, LinkType::PointToPoint));
        assert!(!t.add_with_id(FaceId(1), FaceScope::Local, LinkType::PointToPoint));
        assert_eq!(t.len(), 3);
        assert!(t
            .get(b)
            .is_some_and(|f| !f.is_local() && !f.is_point_to_point()));
    }

    #[test]
    fn skips_ids_taken_by_hand() {
        let mut t = FaceTable::new();
        assert!(t.add_with_id(FaceId(256), FaceScope::Local, LinkType::PointToPoint));
        assert_eq!(t.add(FaceScope::Local, LinkType::PointToPoint), FaceId(257));
    }
}
