//! A face's send queue, kept inside the face's handle: a bounded FIFO of packets for one
//! writer that costs nothing while empty.
//!
//! A tokio bounded channel allocates its shared state and a first block of 32 slots when it
//! is created (about 1.6 KB per face, held for the face's life). Most faces of a forwarder
//! for many small applications are idle, so this queue allocates its ring when the first
//! packet arrives and gives it back when the writer has taken the last one.

use std::collections::VecDeque;
use std::sync::Mutex;

use bytes::Bytes;
use tokio::sync::Notify;

use crate::system::lock;

/// Slots reserved when an empty queue takes its first packet (a burst grows it further).
const FIRST_SLOTS: usize = 8;

/// Why a packet was not queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PushError {
    /// The queue holds its maximum number of packets.
    Full,
    /// The writer is gone for good.
    Closed,
}

#[derive(Debug, Default)]
struct State {
    packets: VecDeque<Bytes>,
    /// The writer dropped its end: nothing is queued any more.
    closed: bool,
}

/// A bounded packet queue with one reader (the face's writer) and any number of senders.
#[derive(Debug)]
pub(crate) struct SendQueue {
    state: Mutex<State>,
    /// Wakes the writer waiting in [`SendQueue::pop`] (it keeps a permit when nobody waits).
    ready: Notify,
    /// Packets held at most.
    max_packets: usize,
}

impl SendQueue {
    /// An empty queue of at most `max_packets` packets (at least one); allocates nothing.
    pub(crate) fn new(max_packets: usize) -> Self {
        Self {
            state: Mutex::new(State::default()),
            ready: Notify::new(),
            max_packets: max_packets.max(1),
        }
    }

    /// Queues `pkt` unless the queue is full or its writer is gone (then `pkt` comes back).
    pub(crate) fn push(&self, pkt: Bytes) -> Result<(), (PushError, Bytes)> {
        {
            let mut state = lock(&self.state);
            if state.closed {
                return Err((PushError::Closed, pkt));
            }
            if state.packets.len() >= self.max_packets {
                return Err((PushError::Full, pkt));
            }
            if state.packets.capacity() == 0 {
                state.packets.reserve(FIRST_SLOTS.min(self.max_packets));
            }
            state.packets.push_back(pkt);
        }
        self.ready.notify_one();
        Ok(())
    }

    /// The next packet if one is queued. Taking the last one gives the ring back.
    pub(crate) fn try_pop(&self) -> Option<Bytes> {
        let mut state = lock(&self.state);
        let pkt = state.packets.pop_front();
        if state.packets.is_empty() && state.packets.capacity() > 0 {
            state.packets = VecDeque::new();
        }
        pkt
    }

    /// Waits for the next packet (cancel-safe: a packet is only taken when returned).
    pub(crate) async fn pop(&self) -> Bytes {
        loop {
            if let Some(pkt) = self.try_pop() {
                return pkt;
            }
            // A push after the check above left a permit: this returns at once then.
            self.ready.notified().await;
        }
    }

    /// The writer is gone: later pushes fail with [`PushError::Closed`]; what was queued is
    /// dropped. Returns the bytes dropped.
    pub(crate) fn close(&self) -> usize {
        let mut state = lock(&self.state);
        state.closed = true;
        let dropped = std::mem::take(&mut state.packets);
        dropped.iter().map(Bytes::len).sum()
    }

    /// Whether no packet is queued now.
    pub(crate) fn is_empty(&self) -> bool {
        lock(&self.state).packets.is_empty()
    }

    /// Packets queued now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        lock(&self.state).packets.len()
    }

    /// Slots allocated now (0 while the queue is empty).
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        lock(&self.state).packets.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(n: u8) -> Bytes {
        Bytes::from(vec![n; 3])
    }

    #[test]
    fn empty_queue_holds_no_ring() {
        let q = SendQueue::new(100);
        assert_eq!(q.capacity(), 0);
        q.push(pkt(1)).unwrap();
        q.push(pkt(2)).unwrap();
        assert!(q.capacity() >= 2);
        assert_eq!(q.try_pop(), Some(pkt(1)));
        assert!(q.capacity() > 0, "one packet still queued");
        assert_eq!(q.try_pop(), Some(pkt(2)));
        assert_eq!(q.capacity(), 0, "drained: the ring is given back");
        assert_eq!(q.try_pop(), None);
    }

    #[test]
    fn bounded_in_packets_and_fifo() {
        let q = SendQueue::new(3);
        for n in 0..3 {
            q.push(pkt(n)).unwrap();
        }
        assert_eq!(q.push(pkt(9)), Err((PushError::Full, pkt(9))));
        assert_eq!(q.len(), 3);
        for n in 0..3 {
            assert_eq!(q.try_pop(), Some(pkt(n)));
        }
        q.push(pkt(4)).unwrap();
        assert_eq!(q.try_pop(), Some(pkt(4)));
    }

    #[test]
    fn closed_queue_refuses_and_drops() {
        let q = SendQueue::new(10);
        q.push(pkt(1)).unwrap();
        assert_eq!(q.close(), 3);
        assert_eq!(q.push(pkt(2)), Err((PushError::Closed, pkt(2))));
        assert_eq!(q.try_pop(), None);
    }

    #[tokio::test]
    async fn pop_waits_for_a_push() {
        let q = std::sync::Arc::new(SendQueue::new(10));
        let waiter = tokio::spawn({
            let q = q.clone();
            async move { q.pop().await }
        });
        tokio::task::yield_now().await;
        q.push(pkt(7)).unwrap();
        assert_eq!(waiter.await.unwrap(), pkt(7));
        // A push while nobody waits is not lost.
        q.push(pkt(8)).unwrap();
        assert_eq!(q.pop().await, pkt(8));
    }
}
