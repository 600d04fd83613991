//! The face table: the faces the driver has attached, with their scope, link type and
//! counters. The forwarder sees a face only as an id; the driver owns the sockets.

use crate::rate_limit::{RateLimit, TokenBucket};
use core::fmt;

use crate::counters::FaceCounters;

/// A face id. NFD numbers faces from 1; ids 1..=255 are reserved for internal faces (NFD uses 1
/// for management, 254 for the content store, 255 for the null face) and the forwarder hands out
/// 256 and up. Ids are never reused by a forwarder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct FaceId(pub u64);

impl FaceId {
    /// No face (NFD's `INVALID_FACEID`).
    pub const NONE: FaceId = FaceId(0);
    /// The first id [`crate::Forwarder::add_face`] hands out (NFD's `FACEID_RESERVED_MAX + 1`).
    pub const FIRST_DYNAMIC: FaceId = FaceId(256);
}

/// A map keyed by face id. Face ids are handed out by the forwarder, never chosen by a peer, so
/// the map uses [`nameway_wire::hash::IdHasher`] (a multiply) rather than SipHash, which was
/// most of a dead-nonce-list insert's own work.
pub(crate) type FaceIdMap<V> = std::collections::HashMap<
    FaceId,
    V,
    core::hash::BuildHasherDefault<nameway_wire::hash::IdHasher>,
>;

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
    /// PIT entries this face created and is charged for (fair admission).
    pit_held: u32,
    /// Interest rate limit, if one is set.
    pub(crate) interest_limit: Option<TokenBucket>,
}

impl Face {
    /// The id.
    pub fn id(&self) -> FaceId {
        self.id
    }

    /// PIT entries this face created and is charged for under fair admission.
    pub fn pit_entries(&self) -> usize {
        self.pit_held as usize
    }

    /// The Interest rate limit, if one is set.
    pub fn interest_rate_limit(&self) -> Option<RateLimit> {
        self.interest_limit.as_ref().map(TokenBucket::limit)
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

/// A face's part of the PIT, as [`crate::table::pit::Pit::admit`] weighs it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PitShare {
    /// Entries the face is charged for.
    pub(crate) held: usize,
    /// Faces charged for at least one entry (the face itself included if it holds any).
    pub(crate) holders: usize,
}

/// Faces by id.
///
/// Face ids are small integers handed out in sequence, so the id itself is the hash: an
/// open-addressing index (linear probing from `id & mask`, at most half full, backward-shift
/// deletion) maps it to the face's place in a dense vector. A look-up, done several times per
/// packet, is one or two loads and a compare, where a general hash table spent tens of
/// instructions on hashing and group matching.
#[derive(Debug)]
pub(crate) struct FaceTable {
    faces: Vec<Face>,
    /// Place in `faces` plus one for each slot; 0 is empty.
    index: Vec<u32>,
    next_id: u64,
    /// Faces charged for at least one PIT entry.
    pit_holders: usize,
}

/// Index slots of an empty table (a power of two).
const MIN_INDEX: usize = 16;

impl FaceTable {
    pub(crate) fn new() -> Self {
        Self {
            faces: Vec::new(),
            index: vec![0; MIN_INDEX],
            next_id: FaceId::FIRST_DYNAMIC.0,
            pit_holders: 0,
        }
    }

    #[inline]
    fn mask(&self) -> usize {
        self.index.len() - 1
    }

    /// The index slot that holds `id`, and the face's place in `faces`.
    #[inline]
    fn find(&self, id: FaceId) -> Option<(usize, usize)> {
        let mask = self.mask();
        let mut i = id.0 as usize & mask;
        // At most half the slots are used: an empty one ends the probe.
        for _ in 0..self.index.len() {
            let at = (*self.index.get(i)? as usize).checked_sub(1)?;
            if self.faces.get(at)?.id == id {
                return Some((i, at));
            }
            i = (i + 1) & mask;
        }
        None
    }

    /// Writes `at + 1` into the first empty slot of `id`'s probe.
    fn place(&mut self, id: FaceId, at: usize) {
        let mask = self.mask();
        let mut i = id.0 as usize & mask;
        for _ in 0..self.index.len() {
            match self.index.get_mut(i) {
                Some(slot) if *slot == 0 => {
                    *slot = at as u32 + 1;
                    return;
                }
                Some(_) => i = (i + 1) & mask,
                None => return,
            }
        }
    }

    /// Rebuilds the index with `slots` slots.
    fn reindex(&mut self, slots: usize) {
        self.index.clear();
        self.index.resize(slots, 0);
        for at in 0..self.faces.len() {
            let id = self.faces.get(at).map(Face::id);
            if let Some(id) = id {
                self.place(id, at);
            }
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
        self.faces.push(Face {
            id,
            scope,
            link_type,
            local_fields: false,
            counters: FaceCounters::default(),
            pit_held: 0,
            interest_limit: None,
        });
        if self.faces.len() * 2 > self.index.len() {
            self.reindex(self.index.len() * 2);
        } else {
            self.place(id, self.faces.len() - 1);
        }
    }

    pub(crate) fn remove(&mut self, id: FaceId) -> Option<Face> {
        let (mut hole, at) = self.find(id)?;
        // Backward-shift deletion: later slots of the probe run move up into the hole when
        // their home slot does not lie between the hole and themselves.
        let mask = self.mask();
        let mut i = hole;
        loop {
            i = (i + 1) & mask;
            let Some(p) = self.index.get(i).and_then(|&p| (p as usize).checked_sub(1)) else {
                break;
            };
            let Some(home) = self.faces.get(p).map(|f| f.id.0 as usize & mask) else {
                break;
            };
            // Whether `home` is cyclically within (hole, i]: then the entry stays.
            let stays = if hole <= i {
                hole < home && home <= i
            } else {
                hole < home || home <= i
            };
            if !stays {
                self.index.swap(hole, i);
                hole = i;
            }
        }
        if let Some(slot) = self.index.get_mut(hole) {
            *slot = 0;
        }
        let face = self.faces.swap_remove(at);
        if face.pit_held > 0 {
            self.pit_holders -= 1;
        }
        // The face that moved into `at` (the last one) is re-pointed.
        if let Some(moved) = self.faces.get(at).map(Face::id) {
            if let Some((slot, _)) = self.find_slot_of_place(moved, self.faces.len()) {
                if let Some(s) = self.index.get_mut(slot) {
                    *s = at as u32 + 1;
                }
            }
        }
        Some(face)
    }

    /// The index slot of `id` while it still points at its old place `old`.
    fn find_slot_of_place(&self, id: FaceId, old: usize) -> Option<(usize, usize)> {
        let mask = self.mask();
        let mut i = id.0 as usize & mask;
        for _ in 0..self.index.len() {
            let p = *self.index.get(i)? as usize;
            if p == 0 {
                return None;
            }
            if p - 1 == old {
                return Some((i, old));
            }
            i = (i + 1) & mask;
        }
        None
    }

    #[inline]
    pub(crate) fn get(&self, id: FaceId) -> Option<&Face> {
        let (_, at) = self.find(id)?;
        self.faces.get(at)
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, id: FaceId) -> Option<&mut Face> {
        let (_, at) = self.find(id)?;
        self.faces.get_mut(at)
    }

    pub(crate) fn len(&self) -> usize {
        self.faces.len()
    }

    /// Charges `id` for one more PIT entry (no-op for a face that is gone).
    #[inline]
    pub(crate) fn charge_pit(&mut self, id: FaceId) {
        let Some(face) = self.find(id).and_then(|(_, at)| self.faces.get_mut(at)) else {
            return;
        };
        if face.pit_held == 0 {
            self.pit_holders += 1;
        }
        face.pit_held = face.pit_held.saturating_add(1);
    }

    /// Releases one PIT entry charged to `id`.
    #[inline]
    pub(crate) fn discharge_pit(&mut self, id: FaceId) {
        let Some(face) = self.find(id).and_then(|(_, at)| self.faces.get_mut(at)) else {
            return;
        };
        if face.pit_held == 1 {
            self.pit_holders -= 1;
        }
        face.pit_held = face.pit_held.saturating_sub(1);
    }

    /// The PIT entries charged to `id`, and how many faces hold any.
    pub(crate) fn pit_share(&self, id: FaceId) -> PitShare {
        PitShare {
            held: self.get(id).map_or(0, |f| f.pit_held as usize),
            holders: self.pit_holders,
        }
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

    proptest::proptest! {
        /// Any sequence of adds (dynamic ids, and chosen ones that collide in the index) and
        /// removes leaves the table agreeing with a plain map: every live face is found under
        /// its id, every removed one is gone.
        #[test]
        fn agrees_with_a_map(ops in proptest::collection::vec((0u8..3, 0u64..64), 0..300)) {
            let mut t = FaceTable::new();
            let mut model = std::collections::BTreeMap::new();
            for (op, x) in ops {
                match op {
                    0 => {
                        let id = t.add(FaceScope::Local, LinkType::PointToPoint);
                        model.insert(id, ());
                    }
                    1 => {
                        // Multiples of 16 share a home slot while the index is small.
                        let id = FaceId(x * 16);
                        proptest::prop_assert_eq!(
                            t.add_with_id(id, FaceScope::NonLocal, LinkType::AdHoc),
                            model.insert(id, ()).is_none()
                        );
                    }
                    _ => {
                        let id = model.keys().nth(x as usize % model.len().max(1)).copied();
                        if let Some(id) = id {
                            proptest::prop_assert_eq!(t.remove(id).map(|f| f.id()), Some(id));
                            model.remove(&id);
                            proptest::prop_assert!(t.get(id).is_none());
                        }
                    }
                }
                proptest::prop_assert_eq!(t.len(), model.len());
                for &id in model.keys() {
                    proptest::prop_assert_eq!(t.get(id).map(Face::id), Some(id));
                }
                let mut listed: Vec<FaceId> = t.iter().map(Face::id).collect();
                listed.sort();
                proptest::prop_assert_eq!(listed, model.keys().copied().collect::<Vec<_>>());
            }
        }
    }
}
