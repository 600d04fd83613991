//! The other shards' counters, merged into the management shard's answers.
//!
//! Each shard publishes a snapshot of its counters between bursts; the management shard adds
//! them to its own ([`crate::Forwarder::set_peer_totals`]) so `fw status`, `faces/list` and
//! `/metrics` count every shard. Table sizes replicated in every shard (faces, FIB, strategy
//! choices) are not added: they are the same everywhere.

use std::collections::HashMap;

use crate::counters::{
    CsCounters, DnlCounters, DropCounters, FaceCounters, FibCounters, ForwarderCounters,
    ForwarderStatus, PitCounters,
};
use crate::table::face_table::FaceId;
use crate::Forwarder;

/// Counters of other shards, summed.
#[derive(Clone, Debug, Default)]
pub struct PeerTotals {
    /// Their forwarders' status (tables owned per shard and packet counters).
    pub status: ForwarderStatus,
    /// Their per-face counters.
    pub faces: HashMap<FaceId, FaceCounters>,
    /// Their PIT entries charged to each face.
    pub pit_held: HashMap<FaceId, usize>,
}

impl PeerTotals {
    /// The snapshot of one shard's forwarder (its own counters only).
    pub fn of(fw: &Forwarder) -> Self {
        Self {
            status: fw.own_status(),
            faces: fw.faces().map(|f| (f.id(), *f.counters())).collect(),
            pit_held: fw
                .faces()
                .filter(|f| f.pit_entries() > 0)
                .map(|f| (f.id(), f.pit_entries()))
                .collect(),
        }
    }

    /// Adds another shard's snapshot.
    pub fn add(&mut self, other: &PeerTotals) {
        self.status.add_shard(&other.status);
        for (id, c) in &other.faces {
            self.faces.entry(*id).or_default().add(c);
        }
        for (id, n) in &other.pit_held {
            *self.pit_held.entry(*id).or_default() += n;
        }
    }
}

impl DropCounters {
    /// Adds `other`'s counts.
    pub fn add_all(&mut self, other: &DropCounters) {
        for (r, n) in other.iter() {
            self.add_n(r, n);
        }
    }
}

impl FaceCounters {
    /// Adds `other`'s counts.
    pub fn add(&mut self, o: &FaceCounters) {
        self.n_in_interests += o.n_in_interests;
        self.n_in_data += o.n_in_data;
        self.n_in_nacks += o.n_in_nacks;
        self.n_out_interests += o.n_out_interests;
        self.n_out_data += o.n_out_data;
        self.n_out_nacks += o.n_out_nacks;
        self.n_in_bytes += o.n_in_bytes;
        self.n_out_bytes += o.n_out_bytes;
        self.n_in_idle += o.n_in_idle;
        self.drops.add_all(&o.drops);
    }
}

impl ForwarderCounters {
    /// Adds `other`'s counts.
    pub fn add(&mut self, o: &ForwarderCounters) {
        self.n_in_interests += o.n_in_interests;
        self.n_in_data += o.n_in_data;
        self.n_in_nacks += o.n_in_nacks;
        self.n_out_interests += o.n_out_interests;
        self.n_out_data += o.n_out_data;
        self.n_out_nacks += o.n_out_nacks;
        self.n_satisfied_interests += o.n_satisfied_interests;
        self.n_unsatisfied_interests += o.n_unsatisfied_interests;
        self.drops.add_all(&o.drops);
    }
}

impl ForwarderStatus {
    /// Adds another shard's status: its PIT, content store, dead-nonce list and packet
    /// counters (faces, FIB and strategy choices are the same in every shard).
    pub fn add_shard(&mut self, o: &ForwarderStatus) {
        self.n_pit_entries += o.n_pit_entries;
        self.n_cs_entries += o.n_cs_entries;
        self.n_dead_nonces += o.n_dead_nonces;
        self.n_straggler_nonces += o.n_straggler_nonces;
        self.counters.add(&o.counters);
        let (p, q) = (&mut self.pit, &o.pit);
        *p = PitCounters {
            entries: p.entries + q.entries,
            capacity: p.capacity + q.capacity,
            inserts: p.inserts + q.inserts,
            hits: p.hits + q.hits,
            data_misses: p.data_misses + q.data_misses,
        };
        self.fib = FibCounters {
            entries: self.fib.entries,
            lookups: self.fib.lookups + o.fib.lookups,
            misses: self.fib.misses + o.fib.misses,
        };
        let (c, d) = (&mut self.cs, &o.cs);
        *c = CsCounters {
            entries: c.entries + d.entries,
            capacity: c.capacity + d.capacity,
            hits: c.hits + d.hits,
            misses: c.misses + d.misses,
            inserts: c.inserts + d.inserts,
            evictions: c.evictions + d.evictions,
        };
        let (n, m) = (&mut self.dnl, &o.dnl);
        *n = DnlCounters {
            entries: n.entries + m.entries,
            capacity: n.capacity + m.capacity,
            hits: n.hits + m.hits,
            evicted_own: n.evicted_own + m.evicted_own,
            evicted_heaviest: n.evicted_heaviest + m.evicted_heaviest,
        };
    }
}
