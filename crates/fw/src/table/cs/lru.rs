//! Least-recently-used replacement: an intrusive doubly linked list over entry ids, O(1) per
//! operation and no allocation once the id space has grown.

use super::ReplacementPolicy;
use crate::prefetch::prefetch;

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Link {
    prev: u32,
    next: u32,
    linked: bool,
}

const UNLINKED: Link = Link {
    prev: NIL,
    next: NIL,
    linked: false,
};

/// LRU: evicts the entry used least recently (inserted or returned by a look-up).
#[derive(Debug)]
pub struct Lru {
    links: Vec<Link>,
    /// Least recently used.
    head: u32,
    /// Most recently used.
    tail: u32,
}

impl Lru {
    /// An empty list.
    pub fn new() -> Self {
        Self {
            links: Vec::new(),
            head: NIL,
            tail: NIL,
        }
    }

    fn link_mut(&mut self, id: u32) -> Option<&mut Link> {
        self.links.get_mut(id as usize)
    }

    fn unlink(&mut self, id: u32) {
        let Some(&l) = self.links.get(id as usize) else {
            return;
        };
        if !l.linked {
            return;
        }
        match self.link_mut(l.prev) {
            Some(p) => p.next = l.next,
            None => self.head = l.next,
        }
        match self.link_mut(l.next) {
            Some(n) => n.prev = l.prev,
            None => self.tail = l.prev,
        }
        if let Some(me) = self.link_mut(id) {
            *me = UNLINKED;
        }
    }

    fn push_back(&mut self, id: u32) {
        if self.links.len() <= id as usize {
            self.links.resize(id as usize + 1, UNLINKED);
        }
        let tail = self.tail;
        if let Some(t) = self.link_mut(tail) {
            t.next = id;
        } else {
            self.head = id;
        }
        if let Some(me) = self.link_mut(id) {
            *me = Link {
                prev: tail,
                next: NIL,
                linked: true,
            };
        }
        self.tail = id;
    }
}

impl Default for Lru {
    fn default() -> Self {
        Self::new()
    }
}

impl ReplacementPolicy for Lru {
    fn name(&self) -> &'static str {
        "lru"
    }

    #[inline]
    fn on_insert(&mut self, id: u32, _key: u64) {
        self.unlink(id);
        self.push_back(id);
    }

    fn on_access(&mut self, id: u32) {
        self.unlink(id);
        self.push_back(id);
    }

    fn on_erase(&mut self, id: u32) {
        self.unlink(id);
    }

    fn evict(&mut self) -> Option<u32> {
        let victim = self.head;
        if victim == NIL {
            return None;
        }
        self.unlink(victim);
        // The next eviction rewrites the link after the new head: it is as cold as the node.
        let after = self.links.get(self.head as usize).map(|l| l.next);
        if let Some(l) = after.and_then(|id| self.links.get(id as usize)) {
            prefetch(l);
        }
        Some(victim)
    }

    fn next_victim(&self) -> Option<u32> {
        (self.head != NIL).then_some(self.head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used() {
        let mut lru = Lru::new();
        for id in [3, 1, 2] {
            lru.on_insert(id, 0);
        }
        lru.on_access(3);
        assert_eq!(lru.evict(), Some(1));
        lru.on_erase(2);
        assert_eq!(lru.evict(), Some(3));
        assert_eq!(lru.evict(), None);
        // erasing an unknown or unlinked id is harmless
        lru.on_erase(99);
        lru.on_erase(3);
        lru.on_insert(5, 0);
        lru.on_insert(5, 0);
        assert_eq!(lru.evict(), Some(5));
        assert_eq!(lru.evict(), None);
    }
}
