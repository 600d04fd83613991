//! Hand-off rings between shards: one bounded single-producer single-consumer ring per ordered
//! pair of shards, filled in batches (no lock, no system call per packet).

use bytes::Bytes;
use rtrb::{Consumer, Producer, RingBuffer};

use crate::table::face_table::FaceId;

/// Packets gathered for one destination before they are published to its ring together.
pub const HANDOFF_BATCH: usize = 32;

/// Default slots of one hand-off ring.
pub const DEFAULT_RING_CAPACITY: usize = 4096;

/// One packet handed to the shard that owns it: the face it arrived on and its bytes.
#[derive(Debug)]
pub struct HandOff {
    /// The face the packet arrived on.
    pub face: FaceId,
    /// The packet as the face delivered it.
    pub wire: Bytes,
}

/// The sending end of one ring, with the batch not yet published.
#[derive(Debug)]
pub(crate) struct Outlet {
    producer: Producer<HandOff>,
    batch: Vec<HandOff>,
}

/// The receiving end of one ring.
pub(crate) type Inlet = Consumer<HandOff>;

impl Outlet {
    /// Queues `h`; true when the batch is full and should be published.
    pub(crate) fn push(&mut self, h: HandOff) -> bool {
        self.batch.push(h);
        self.batch.len() >= HANDOFF_BATCH
    }

    /// Free slots, less the batch not yet published.
    pub(crate) fn room(&self) -> usize {
        self.producer.slots().saturating_sub(self.batch.len())
    }

    /// Publishes the batch with one commit; returns how many did not fit (dropped).
    pub(crate) fn publish(&mut self) -> usize {
        if self.batch.is_empty() {
            return 0;
        }
        let room = self.producer.slots().min(self.batch.len());
        let dropped = self.batch.len() - room;
        let mut rest = self.batch.drain(..);
        if let Ok(chunk) = self.producer.write_chunk_uninit(room) {
            chunk.fill_from_iter(rest.by_ref().take(room));
        }
        // Whatever did not fit is dropped with the drain.
        drop(rest);
        dropped
    }
}

/// A ring of `capacity` slots: its sending and receiving ends.
pub(crate) fn ring(capacity: usize) -> (Outlet, Inlet) {
    let (producer, consumer) = RingBuffer::new(capacity.max(1));
    (
        Outlet {
            producer,
            batch: Vec::with_capacity(HANDOFF_BATCH),
        },
        consumer,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(i: u64) -> HandOff {
        HandOff {
            face: FaceId(i),
            wire: Bytes::new(),
        }
    }

    #[test]
    fn a_batch_is_published_in_order_and_what_does_not_fit_is_dropped() {
        let (mut out, mut inlet) = ring(4);
        for i in 0..3 {
            assert!(!out.push(h(i)));
        }
        assert_eq!(out.publish(), 0);
        for i in 3..6 {
            out.push(h(i));
        }
        assert_eq!(out.publish(), 2, "one slot left, three queued");
        let got: Vec<u64> = std::iter::from_fn(|| inlet.pop().ok())
            .map(|h| h.face.0)
            .collect();
        assert_eq!(got, [0, 1, 2, 3]);
    }
}
