//! Sharded forwarding: N [`Forwarder`]s, each owning the PIT, content store and dead-nonce list
//! of the names dispatched to it, with no lock on the packet path.
//!
//! - [`dispatch`]: the rule that maps a packet to its shard (a hash of the first `K`
//!   components, `K` per prefix), the same for an Interest, its retransmissions, its Nack and
//!   the Data that answers it.
//! - [`ring`]: bounded single-producer single-consumer rings between every ordered pair of
//!   shards, filled in batches; a full ring drops and counts.
//! - [`local_hops`]: among next hops of equal cost, those homed on the shard go first.
//! - [`skew`]: sampling for a dispatch key that keeps one shard busy while others idle.
//! - [`split`]: splitting such a key by one component more, every shard at once, without
//!   losing what is in flight (automatic when the dispatch table allows it).
//! - [`control`]: management changes (faces, next hops, strategy choices) broadcast to every
//!   shard in order and applied between bursts.
//! - [`totals`]: the other shards' counters, added to the management shard's answers.
//! - [`Shard`]: one shard's `handle_*`/`poll_*` surface, still without I/O: a thread per shard
//!   drives one.
//!
//! ```
//! use bytes::Bytes;
//! use nameway_fw::shard::{build, ControlOp, DispatchTable};
//! use nameway_fw::{Config, FaceId, FaceScope, LinkType, Time};
//! use nameway_wire::{Interest, NameHasher};
//!
//! let hasher = NameHasher::with_seed(7);
//! let table = DispatchTable::new(hasher, 2).unwrap();
//! let (mut shards, mut control) = build(Config::default(), table, 2, 1024).unwrap();
//! for id in [1, 2] {
//!     let (scope, link_type) = (FaceScope::Local, LinkType::PointToPoint);
//!     control.send(ControlOp::AddFace { id: FaceId(id), scope, link_type }).unwrap();
//! }
//! let prefix = "/example".parse().unwrap();
//! control.send(ControlOp::AddNexthop { prefix, face: FaceId(2), cost: 0 }).unwrap();
//! shards.iter_mut().for_each(|s| { s.apply_control(); });
//!
//! let mut i = Interest::new("/example/x".parse().unwrap());
//! i.nonce = Some(1);
//! shards[0].handle_packet(Time::ZERO, FaceId(1), i.encode());
//! shards[0].flush();
//! let forwarded: usize = shards.iter_mut().map(|s| {
//!     s.handle_handoffs(Time::ZERO, 64);
//!     std::iter::from_fn(|| s.poll_transmit()).count()
//! }).sum();
//! assert_eq!(forwarded, 1);
//! ```

pub mod control;
mod core;
pub mod dispatch;
pub mod local_hops;
pub mod ring;
pub mod skew;
pub mod span;
pub mod split;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_split;
pub mod totals;

use std::sync::Arc;

pub use self::core::{Shard, ShardCounters};
pub use control::{Control, ControlError, ControlOp, CONTROL_RING_CAPACITY};
pub use dispatch::{
    DispatchError, DispatchKey, DispatchTable, Dispatcher, Route, DEFAULT_DISPATCH_K, MAX_SHARDS,
};
pub use ring::{HandOff, DEFAULT_RING_CAPACITY, HANDOFF_BATCH};
pub use skew::SkewReport;
pub use span::SpanFilter;
pub use split::{SplitRefused, Splits};
pub use totals::PeerTotals;

use crate::forwarder::{Config, Forwarder};

/// `n` shards dispatching by `table`, with hand-off rings of `ring_capacity` slots, and the
/// [`Control`] that sends them management changes. Each shard's forwarder gets `config` with
/// the table's name hasher, the PIT, content store and dead-nonce list capacities divided by
/// `n` (the same memory in total, the content store's exactly: [`crate::cs_share`]; fair PIT
/// admission then holds within each shard) and its own seed.
///
/// # Errors
/// [`DispatchError::ShardCount`] when `n` is 0 or above [`MAX_SHARDS`].
pub fn build(
    config: Config,
    table: DispatchTable,
    n: usize,
    ring_capacity: usize,
) -> Result<(Vec<Shard>, Control), DispatchError> {
    // The forwarders hash names as the dispatcher does, so a shard hands them the hashes the
    // dispatcher computed (`Forwarder::handle_packet_hashed`).
    let config = Config {
        hasher: Some(table.hasher()),
        ..config
    };
    let dispatcher = Arc::new(Dispatcher::new(table, n)?);
    let mut outlets: Vec<Vec<Option<ring::Outlet>>> =
        (0..n).map(|_| (0..n).map(|_| None).collect()).collect();
    let mut inlets: Vec<Vec<ring::Inlet>> = (0..n).map(|_| Vec::new()).collect();
    for (from, row) in outlets.iter_mut().enumerate() {
        for (to, slot) in row.iter_mut().enumerate() {
            if from != to {
                let (outlet, inlet) = ring::ring(ring_capacity);
                *slot = Some(outlet);
                if let Some(v) = inlets.get_mut(to) {
                    v.push(inlet);
                }
            }
        }
    }
    let (control, control_inlets) = control::control_rings(n, CONTROL_RING_CAPACITY);
    let shards = outlets
        .into_iter()
        .zip(inlets)
        .zip(control_inlets)
        .enumerate()
        .map(|(index, ((outlets, inlets), control))| {
            let shard_config = Config {
                seed: config.seed.wrapping_add(index as u64),
                pit_capacity: (config.pit_capacity / n).max(1),
                cs_capacity: crate::cs_share(config.cs_capacity, index, n),
                dnl_capacity: (config.dnl_capacity / n).max(1),
                ..config.clone()
            };
            let mut fw = Forwarder::new(shard_config);
            fw.set_shard_place(index, n, config.cs_capacity);
            Shard::new(index, fw, dispatcher.clone(), outlets, inlets, control)
        })
        .collect();
    Ok((shards, control))
}
