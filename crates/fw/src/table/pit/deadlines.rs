//! The PIT's expiry deadlines: a binary min-heap of [`Deadline`]s.

use crate::time::Time;

/// When the entry in a slot expires: 12 bytes (packed; one per pending entry, so the 4 bytes
/// of padding an unpacked pair would take are 4 MB at 10^6 pending Interests), ordered by time,
/// then slot.
///
/// There is no generation: a deadline is acted on only when the slot's entry expires at exactly
/// that time (`live` in pit.rs), and then it is that entry's deadline whoever pushed it; a
/// deadline removed in its place ([`Deadlines::remove_if_last`]) is the entry's own or a stale
/// one, never another live entry's only one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(C, packed(4))]
pub(super) struct Deadline {
    pub(super) at: Time,
    pub(super) slot: u32,
}

/// A binary min-heap in a vector: like `BinaryHeap` with `Reverse`, plus removing the last
/// element, which is a leaf, so that the rest stays a heap.
#[derive(Debug)]
pub(super) struct Deadlines<T> {
    heap: Vec<T>,
}

impl<T> Default for Deadlines<T> {
    fn default() -> Self {
        Self { heap: Vec::new() }
    }
}

impl<T: Copy + Ord> Deadlines<T> {
    pub(super) fn len(&self) -> usize {
        self.heap.len()
    }

    pub(super) fn peek(&self) -> Option<&T> {
        self.heap.first()
    }

    pub(super) fn push(&mut self, d: T) {
        let mut i = self.heap.len();
        self.heap.push(d);
        while i > 0 {
            let parent = (i - 1) / 2;
            match self.heap.get(parent) {
                // Both in bounds: `i` is at most the index just pushed.
                Some(p) if *p > d => self.heap.swap(parent, i),
                _ => break,
            }
            i = parent;
        }
    }

    pub(super) fn pop(&mut self) -> Option<T> {
        let last = self.heap.pop()?;
        let Some(top) = self.heap.first_mut() else {
            return Some(last);
        };
        let min = core::mem::replace(top, last);
        self.sift_down(0);
        Some(min)
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let mut least = i;
            for child in [2 * i + 1, 2 * i + 2] {
                if let (Some(c), Some(l)) = (self.heap.get(child), self.heap.get(least)) {
                    if c < l {
                        least = child;
                    }
                }
            }
            if least == i {
                return;
            }
            // Both in bounds: `least` was read above.
            self.heap.swap(i, least);
            i = least;
        }
    }

    /// Removes `d` if it is the last element.
    #[inline]
    pub(super) fn remove_if_last(&mut self, d: T) {
        if self.heap.last() == Some(&d) {
            self.heap.pop();
        }
    }

    /// Replaces the contents with `items` (sorted: a sorted vector is a heap).
    pub(super) fn rebuild(&mut self, items: impl Iterator<Item = T>) {
        self.heap.clear();
        self.heap.extend(items);
        self.heap.sort_unstable();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_is_12_bytes_and_orders_by_time_then_slot() {
        assert_eq!(core::mem::size_of::<Deadline>(), 12);
        let d = |ms, slot| Deadline {
            at: Time::from_millis(ms),
            slot,
        };
        assert!(d(1, 9) < d(2, 0));
        assert!(d(2, 0) < d(2, 1));
    }
}
