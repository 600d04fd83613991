//! The PIT's expiry deadlines: a binary min-heap.

use super::PitEntryId;
use crate::time::Time;

/// A binary min-heap of (deadline, entry), in a vector: like `BinaryHeap` with `Reverse`,
/// plus removing the last element, which is a leaf, so that the rest stays a heap.
#[derive(Debug, Default)]
pub(super) struct Deadlines {
    heap: Vec<(Time, PitEntryId)>,
}

impl Deadlines {
    pub(super) fn len(&self) -> usize {
        self.heap.len()
    }

    pub(super) fn peek(&self) -> Option<&(Time, PitEntryId)> {
        self.heap.first()
    }

    pub(super) fn push(&mut self, d: (Time, PitEntryId)) {
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

    pub(super) fn pop(&mut self) -> Option<(Time, PitEntryId)> {
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
    pub(super) fn remove_if_last(&mut self, d: (Time, PitEntryId)) {
        if self.heap.last() == Some(&d) {
            self.heap.pop();
        }
    }

    /// Replaces the contents with `items` (sorted: a sorted vector is a heap).
    pub(super) fn rebuild(&mut self, items: impl Iterator<Item = (Time, PitEntryId)>) {
        self.heap.clear();
        self.heap.extend(items);
        self.heap.sort_unstable();
    }
}
