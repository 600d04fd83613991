//! Management changes broadcast to every shard, in order.
//!
//! Faces, next hops and strategy choices must be the same in every shard's forwarder: an
//! Interest may reach any shard. The management side (shard 0's thread in the daemon) sends each
//! change through a [`Control`] into one ring per shard; each shard applies what its ring holds
//! between bursts ([`super::Shard::apply_control`]), in the order sent. A change is sent to
//! every shard or to none.

use rtrb::{Consumer, Producer, RingBuffer};

use crate::rate_limit::RateLimit;
use crate::table::face_table::{FaceId, FaceScope, LinkType};
use nameway_wire::Name;

/// Default slots of one shard's control ring.
pub const CONTROL_RING_CAPACITY: usize = 1024;

/// One management change.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ControlOp {
    /// A face was created (the same id in every shard).
    AddFace {
        /// Its id.
        id: FaceId,
        /// Local or not.
        scope: FaceScope,
        /// Point-to-point or multi-access.
        link_type: LinkType,
    },
    /// A face went away.
    RemoveFace(FaceId),
    /// A next hop was added or its cost changed.
    AddNexthop {
        /// The FIB prefix.
        prefix: Name,
        /// The next hop's face.
        face: FaceId,
        /// Its cost.
        cost: u64,
    },
    /// A next hop was removed.
    RemoveNexthop {
        /// The FIB prefix.
        prefix: Name,
        /// The next hop's face.
        face: FaceId,
    },
    /// A strategy was chosen for a prefix.
    SetStrategy {
        /// The prefix.
        prefix: Name,
        /// The strategy's name (with or without its version).
        strategy: Name,
    },
    /// A prefix's strategy choice was removed.
    UnsetStrategy(Name),
    /// A face's Interest rate limit was set or cleared. Every shard keeps the bucket, and the
    /// one that reads the face uses it, for the Interests it forwards and those it hands to
    /// other shards (which do not apply it again): the limit holds for the face in total.
    SetInterestRateLimit {
        /// The face.
        face: FaceId,
        /// The limit, or none.
        limit: Option<RateLimit>,
    },
    /// NDNLPv2 local fields were enabled or disabled on a face.
    SetLocalFields {
        /// The face.
        face: FaceId,
        /// On or off.
        enabled: bool,
    },
    /// The content store capacity (of every shard together; each keeps its share, see
    /// [`crate::cs_share`]) changed.
    SetCsCapacity(usize),
    /// Data admission to the content store was switched.
    SetCsAdmit(bool),
    /// Serving from the content store was switched.
    SetCsServe(bool),
    /// The per-prefix admission rules and the placement were replaced (the controller's
    /// cache policy).
    SetCsPolicy {
        /// The rules, by prefix.
        rules: Vec<(Name, crate::CsRule)>,
        /// The partitioned placement, if any.
        partition: Option<crate::Partition>,
    },
    /// Packets under a prefix were erased from the content store (`cs/erase`).
    CsErase {
        /// The prefix.
        prefix: Name,
        /// Most packets erased in one shard.
        limit: usize,
    },
}

/// A change could not be sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ControlError {
    /// The control ring of this shard is full (it has not applied earlier changes yet);
    /// nothing was sent to any shard.
    Full {
        /// The shard whose ring is full.
        shard: usize,
    },
}

impl core::fmt::Display for ControlError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Full { shard } => write!(f, "the control ring of shard {shard} is full"),
        }
    }
}

impl std::error::Error for ControlError {}

/// The sending side of the control rings, one per shard. Owned by the management thread.
#[derive(Debug)]
pub struct Control {
    rings: Vec<Producer<ControlOp>>,
}

impl Control {
    /// Sends `op` to every shard, or to none.
    ///
    /// # Errors
    /// [`ControlError::Full`] when a shard's ring has no room.
    pub fn send(&mut self, op: ControlOp) -> Result<(), ControlError> {
        // The one producer checks every ring first; room only grows until it pushes.
        if let Some(shard) = self.rings.iter().position(Producer::is_full) {
            return Err(ControlError::Full { shard });
        }
        for ring in &mut self.rings {
            // Checked above: not full.
            let _ = ring.push(op.clone());
        }
        Ok(())
    }

    /// Sends `op` to every shard but `origin` (which applied it already), or to none.
    ///
    /// # Errors
    /// [`ControlError::Full`] when a shard's ring has no room.
    pub fn send_from(&mut self, origin: usize, op: &ControlOp) -> Result<(), ControlError> {
        let others = || {
            self.rings
                .iter()
                .enumerate()
                .filter(move |&(i, _)| i != origin)
        };
        if let Some((shard, _)) = others().find(|(_, r)| r.is_full()) {
            return Err(ControlError::Full { shard });
        }
        for (i, ring) in self.rings.iter_mut().enumerate() {
            if i != origin {
                // Checked above: not full.
                let _ = ring.push(op.clone());
            }
        }
        Ok(())
    }

    /// The number of shards.
    pub fn shards(&self) -> usize {
        self.rings.len()
    }
}

/// `n` control rings: the sender and each shard's receiving end.
pub(crate) fn control_rings(n: usize, capacity: usize) -> (Control, Vec<Consumer<ControlOp>>) {
    let (rings, inlets) = (0..n).map(|_| RingBuffer::new(capacity.max(1))).unzip();
    (Control { rings }, inlets)
}
