//! The [`Forwarder`]: the tables, the face table, and the `handle_*`/`poll_*` surface.

use core::fmt;
use core::time::Duration;

use bytes::Bytes;
use nameway_wire::lp::CachePolicyType;
use nameway_wire::random::SplitMix64;
use nameway_wire::tlv::{self, types};
use nameway_wire::{LpPacket, Name, NameHasher, Packet, PrefixHashes};
use smallvec::SmallVec;

use crate::counters::{DropReason, FaceCounters, FibCounters, ForwarderCounters, ForwarderStatus};
use crate::pipeline::{Outbox, Transmit};
use crate::rate_limit::{RateLimit, TokenBucket};
use crate::shard::{ControlOp, PeerTotals};
use crate::strategy::{
    builtin, BestRoute, Strategy, StrategyContext, StrategyError, StrategyRegistry, BEST_ROUTE_NAME,
};
use crate::table::cs::{ContentStore, InMemoryCs, DEFAULT_CS_CAPACITY};
use crate::table::dead_nonce_list::{DeadNonceList, DEFAULT_DNL_LIFETIME};
use crate::table::face_table::{Face, FaceId, FaceScope, FaceTable, LinkType};
use crate::table::fib::{Fib, FibError, NextHop};
use crate::table::pit::{Pit, PitEntryId};
use crate::table::straggler_list::StragglerList;
use crate::table::strategy_choice::StrategyChoice;
use crate::time::Time;

/// Forwarder settings. `Config::default()` gives NFD's defaults where NFD has one.
#[derive(Clone, Debug)]
pub struct Config {
    /// Seed of the internal generator (Nonces for Interests that arrive without one).
    pub seed: u64,
    /// The keyed name hasher; `None` uses [`NameHasher::process()`]. Tests fix a seed to be
    /// reproducible; shards of one process must share the hasher.
    pub hasher: Option<NameHasher>,
    /// Most PIT entries (pending Interests); an Interest that needs one more is dropped
    /// ([`DropReason::PitFull`]). Also the most straggler records.
    pub pit_capacity: usize,
    /// Content store capacity in packets (NFD: 65,536).
    pub cs_capacity: usize,
    /// Most dead-nonce list records.
    pub dnl_capacity: usize,
    /// Lifetime of a dead-nonce list record (NFD: 6 s).
    pub dnl_lifetime: Duration,
    /// How long the Nonces a satisfied PIT entry sent upstream are remembered so that a late
    /// duplicate (a straggler) is still recognised as a loop (NFD's straggler timer).
    pub straggler_time: Duration,
    /// Most PIT expirations one [`Forwarder::handle_timeout`] call processes (bounded work;
    /// the rest are due at once in [`Forwarder::poll_timeout`]).
    pub timeout_burst: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            seed: 0,
            hasher: None,
            pit_capacity: 1 << 20,
            cs_capacity: DEFAULT_CS_CAPACITY,
            dnl_capacity: 1 << 18,
            dnl_lifetime: DEFAULT_DNL_LIFETIME,
            straggler_time: Duration::from_millis(100),
            timeout_burst: 4096,
        }
    }
}

/// A face could not be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FaceError {
    /// The id is already in the face table.
    IdInUse,
}

impl fmt::Display for FaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::IdInUse => f.write_str("face id already in use"),
        }
    }
}

impl std::error::Error for FaceError {}

/// Link-layer fields that travel with a network-layer packet into the pipelines.
#[derive(Debug, Default)]
pub(crate) struct LpFields {
    pub(crate) pit_token: Option<Bytes>,
    /// NextHopFaceId, honoured only from local faces.
    pub(crate) next_hop: Option<FaceId>,
    pub(crate) congestion_mark: Option<u64>,
    /// CachePolicy NoCache, honoured only from local faces.
    pub(crate) no_cache: bool,
}

/// The forwarder: tables, faces, pipelines and strategies, with no I/O.
///
/// See the crate documentation for the call order.
pub struct Forwarder {
    pub(crate) config: Config,
    pub(crate) hasher: NameHasher,
    /// Nonces for Interests that arrive without one, reproducibly from `Config::seed`.
    pub(crate) rng: SplitMix64,
    pub(crate) faces: FaceTable,
    pub(crate) fib: Fib,
    pub(crate) fib_counters: FibCounters,
    pub(crate) pit: Pit,
    pub(crate) cs: Box<dyn ContentStore>,
    pub(crate) cs_admit: bool,
    pub(crate) cs_serve: bool,
    /// Per-prefix admission and partitioned placement (set by the controller).
    pub(crate) cs_policy: crate::CsPolicy,
    pub(crate) dnl: DeadNonceList,
    /// (name, Nonce) of the Interests that satisfied entries sent upstream, kept for
    /// [`Config::straggler_time`].
    pub(crate) stragglers: StragglerList,
    pub(crate) strategy_choice: StrategyChoice,
    pub(crate) registry: StrategyRegistry,
    pub(crate) out: Outbox,
    /// Reused buffer for the PIT entries one Data satisfies.
    pub(crate) matches: SmallVec<[PitEntryId; 4]>,
    /// The decoupled content store, when it replaces `cs`.
    pub(crate) external_cs: Option<crate::pipeline::external_cs::ExternalCs>,
    /// The first-hop hook of self-certifying names, when routing is on.
    pub(crate) resolution: Option<Box<crate::pipeline::resolution::Resolution>>,
    /// Management changes recorded for the other shards, when recording is on.
    pub(crate) recorded: Option<Vec<ControlOp>>,
    /// The other shards' counters, added to this one's in [`Forwarder::status`] and
    /// [`Forwarder::face_counters`].
    pub(crate) peers: Option<Box<PeerTotals>>,
    /// This forwarder's place among the shards (index, count) and the content store capacity
    /// of all of them together, of which it holds its share.
    pub(crate) cs_share: (usize, usize, usize),
    /// Set while handling packets another shard read: their face's rate limit was applied
    /// there ([`Forwarder::admit_handoff`]), not again here.
    pub(crate) handing_off: bool,
    /// The prefix hashes of the name of the packet being handled, when the shard's dispatcher
    /// computed them ([`Forwarder::handle_packet_hashed`]); taken by the pipeline that needs
    /// them, cleared after the packet.
    pub(crate) dispatched: Option<PrefixHashes>,
    /// Reused buffer for next hops reordered shard-local first
    /// ([`crate::shard::local_hops`]).
    pub(crate) local_hops: SmallVec<[NextHop; 4]>,
}

impl fmt::Debug for Forwarder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Forwarder")
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

impl Forwarder {
    /// A forwarder with an in-memory LRU content store and the built-in strategies.
    pub fn new(config: Config) -> Self {
        let cs = Box::new(InMemoryCs::new(config.cs_capacity));
        Self::with_content_store(config, cs)
    }

    /// A forwarder with the given content store.
    pub fn with_content_store(config: Config, cs: Box<dyn ContentStore>) -> Self {
        let hasher = config.hasher.unwrap_or(*NameHasher::process());
        let registry = builtin();
        let root = best_route(&registry);
        Self {
            rng: SplitMix64::new(config.seed),
            faces: FaceTable::new(),
            fib: Fib::new(),
            fib_counters: FibCounters::default(),
            pit: Pit::new(config.pit_capacity),
            cs,
            cs_admit: true,
            cs_serve: true,
            cs_policy: crate::CsPolicy::with_hasher(hasher),
            dnl: DeadNonceList::new(config.dnl_lifetime, config.dnl_capacity),
            stragglers: StragglerList::new(config.straggler_time, config.pit_capacity),
            strategy_choice: StrategyChoice::new(&hasher, root),
            registry,
            out: Outbox::default(),
            matches: SmallVec::new(),
            external_cs: None,
            resolution: None,
            recorded: None,
            peers: None,
            cs_share: (0, 1, config.cs_capacity),
            handing_off: false,
            dispatched: None,
            local_hops: SmallVec::new(),
            hasher,
            config,
        }
    }

    // ---- recording for the other shards ----

    /// From now on, records every management change (faces, next hops, strategy choices,
    /// rate limits, local fields, content store settings) as a [`ControlOp`] for
    /// [`Forwarder::take_recorded`]: the management shard of a sharded daemon sends them to
    /// the others. Off by default (a single forwarder records nothing).
    pub fn start_recording(&mut self) {
        self.recorded.get_or_insert_with(Vec::new);
    }

    /// The changes recorded since the last call, in order.
    pub fn take_recorded(&mut self) -> Vec<ControlOp> {
        self.recorded
            .as_mut()
            .map(core::mem::take)
            .unwrap_or_default()
    }

    fn record(&mut self, op: impl FnOnce() -> ControlOp) {
        if let Some(r) = &mut self.recorded {
            r.push(op());
        }
    }

    /// Sets the other shards' counters, added to this forwarder's own in
    /// [`Forwarder::status`] and [`Forwarder::face_counters`] (`None`: only its own).
    pub fn set_peer_totals(&mut self, peers: Option<PeerTotals>) {
        self.peers = peers.map(Box::new);
    }

    /// PIT entries charged to a face, the other shards' added (0 for an unknown face).
    pub fn face_pit_entries(&self, id: FaceId) -> usize {
        let own = self.faces.get(id).map_or(0, Face::pit_entries);
        own + self
            .peers
            .as_ref()
            .and_then(|p| p.pit_held.get(&id))
            .copied()
            .unwrap_or(0)
    }

    /// A face's counters, the other shards' added (see [`Forwarder::set_peer_totals`]).
    pub fn face_counters(&self, id: FaceId) -> Option<FaceCounters> {
        let mut c = *self.faces.get(id)?.counters();
        if let Some(p) = self.peers.as_ref().and_then(|p| p.faces.get(&id)) {
            c.add(p);
        }
        Some(c)
    }

    // ---- faces ----

    /// Adds a face; returns its id (256 and up, never reused).
    pub fn add_face(&mut self, scope: FaceScope, link_type: LinkType) -> FaceId {
        self.faces.add(scope, link_type)
    }

    /// Sets or clears a face's Interest rate limit (a token bucket, starting full); Interests
    /// over it are dropped and counted as [`DropReason::RateLimit`]. `/localhost` Interests from
    /// local faces (management) are not limited. Returns `false` when the face does not exist.
    pub fn set_interest_rate_limit(
        &mut self,
        id: FaceId,
        now: Time,
        limit: Option<RateLimit>,
    ) -> bool {
        let Some(face) = self.faces.get_mut(id) else {
            return false;
        };
        face.interest_limit = limit.map(|l| TokenBucket::new(l, now));
        self.record(|| ControlOp::SetInterestRateLimit { face: id, limit });
        true
    }

    /// A face's rate limit applied to a packet read on this shard and handed to another
    /// (sharded forwarding: the shard that reads a face holds its one token bucket, so the
    /// limit holds for the face as a whole). Returns `false` when the packet is an Interest
    /// over the limit: it is counted as received and dropped ([`DropReason::RateLimit`]).
    pub(crate) fn admit_handoff(&mut self, now: Time, id: FaceId, wire: &Bytes) -> bool {
        let Some(face) = self.faces.get_mut(id) else {
            return true;
        };
        if face.interest_limit.is_none() {
            return true;
        }
        let Some(name) = crate::shard::dispatch::interest_name(wire) else {
            return true;
        };
        let management = face.is_local() && crate::pipeline::is_localhost(&name);
        let admitted = management
            || face
                .interest_limit
                .as_mut()
                .is_none_or(|bucket| bucket.take(now));
        if !admitted {
            face.counters.n_in_interests += 1;
            self.out.counters.n_in_interests += 1;
            self.record_drop(id, DropReason::RateLimit);
        }
        admitted
    }

    /// Adds a face with a chosen id (e.g. an internal face below 256).
    ///
    /// # Errors
    /// [`FaceError::IdInUse`].
    pub fn add_face_with_id(
        &mut self,
        id: FaceId,
        scope: FaceScope,
        link_type: LinkType,
    ) -> Result<(), FaceError> {
        if self.faces.add_with_id(id, scope, link_type) {
            self.record(|| ControlOp::AddFace {
                id,
                scope,
                link_type,
            });
            Ok(())
        } else {
            Err(FaceError::IdInUse)
        }
    }

    /// Removes a face with its next hops and its PIT in- and out-records (entries left with
    /// neither are removed). Packets queued for it are discarded. False if it did not exist.
    pub fn remove_face(&mut self, id: FaceId) -> bool {
        if self.faces.remove(id).is_none() {
            return false;
        }
        self.fib.remove_face(id);
        for pid in self.pit.ids() {
            let Some(entry) = self.pit.get_mut(pid) else {
                continue;
            };
            entry.remove_in_record(id);
            entry.remove_out_record(id);
            if !entry.has_in_records() && entry.out_records().is_empty() {
                self.remove_pit_entry(pid);
            }
        }
        self.out.queue.retain(|t| t.face != id);
        self.record(|| ControlOp::RemoveFace(id));
        true
    }

    /// Enables or disables NDNLPv2 local fields on a face (NFD's LocalFieldsEnabled flag): with
    /// them on, Interests sent to the face are wrapped in an LpPacket carrying IncomingFaceId.
    /// Returns `false` when the face does not exist.
    pub fn set_local_fields(&mut self, id: FaceId, enabled: bool) -> bool {
        match self.faces.get_mut(id) {
            Some(face) => {
                face.set_local_fields(enabled);
                self.record(|| ControlOp::SetLocalFields { face: id, enabled });
                true
            }
            None => false,
        }
    }

    /// A face.
    pub fn face(&self, id: FaceId) -> Option<&Face> {
        self.faces.get(id)
    }

    /// Every face, in no particular order.
    pub fn faces(&self) -> impl Iterator<Item = &Face> + '_ {
        self.faces.iter()
    }

    // ---- the handle/poll surface ----

    /// [`Forwarder::handle_packet`] for a bare Interest or Data whose name's prefix hashes
    /// were computed already, by this forwarder's hasher (a shard's dispatcher: the name is
    /// not hashed twice).
    pub(crate) fn handle_packet_hashed(
        &mut self,
        now: Time,
        face: FaceId,
        wire: Bytes,
        hashes: PrefixHashes,
    ) {
        self.dispatched = Some(hashes);
        self.handle_packet(now, face, wire);
        self.dispatched = None;
    }

    /// The prefix hashes of `name`, the name of the packet being handled: the dispatcher's
    /// when it gave them, else computed here.
    #[inline]
    pub(crate) fn packet_hashes(&mut self, name: &nameway_wire::Name) -> PrefixHashes {
        match self.dispatched.take() {
            Some(h) => {
                debug_assert_eq!(h, self.hasher.prefix_hashes(name), "{name}");
                h
            }
            None => self.hasher.prefix_hashes(name),
        }
    }

    /// Handles one packet received on `face`: the bytes as the face delivers them after
    /// link-layer reassembly (a bare Interest or Data, or an LpPacket with a whole fragment or
    /// none). Never fails: bad input is counted and dropped.
    pub fn handle_packet(&mut self, now: Time, face: FaceId, wire: Bytes) {
        self.out.cause = face;
        let Some(f) = self.faces.get_mut(face) else {
            self.out.counters.drops.add(DropReason::UnknownFace);
            return;
        };
        f.counters.n_in_bytes += wire.len() as u64;
        let local = f.is_local();
        // A bare Interest or Data (the first octet is its one-octet TLV-TYPE) goes straight to
        // its pipeline, whose checked view validates the outer TLV as `Packet::classify`
        // would; only LpPackets and garbage take the general path.
        match wire.first().map(|&t| u32::from(t)) {
            Some(types::INTEREST) => {
                return self.on_incoming_interest(now, face, wire, LpFields::default());
            }
            Some(types::DATA) => {
                return self.on_incoming_data(now, face, wire, LpFields::default())
            }
            _ => {}
        }
        match Packet::classify(wire) {
            Ok(Packet::Interest(w)) => self.on_incoming_interest(now, face, w, LpFields::default()),
            Ok(Packet::Data(w)) => self.on_incoming_data(now, face, w, LpFields::default()),
            Ok(Packet::Lp(lp)) => self.on_incoming_lp_packet(now, face, local, lp),
            Err(_) => self.record_drop(face, DropReason::Malformed),
        }
        self.out.congestion_mark = None;
    }

    /// Opens an LpPacket and passes its fragment on with the fields that matter here.
    fn on_incoming_lp_packet(&mut self, now: Time, face: FaceId, local: bool, lp: LpPacket) {
        if lp.frag_count.unwrap_or(1) > 1 || lp.frag_index.unwrap_or(0) > 0 {
            self.record_drop(face, DropReason::Fragmented);
            return;
        }
        if lp.link_security.is_some() || lp.link_handshake.is_some() {
            self.record_drop(face, DropReason::Undecrypted);
            return;
        }
        let Some(fragment) = lp.fragment else {
            if let Some(f) = self.faces.get_mut(face) {
                f.counters.n_in_idle += 1;
            }
            return;
        };
        let fields = LpFields {
            pit_token: lp.pit_token,
            next_hop: lp.next_hop_face_id.filter(|_| local).map(FaceId),
            congestion_mark: lp.congestion_mark,
            no_cache: local && lp.cache_policy == Some(CachePolicyType::NoCache),
        };
        let typ = tlv::read_var_number(&fragment).map(|(t, _)| t);
        match (typ, lp.nack) {
            (Ok(t), Some(reason)) if t == u64::from(types::INTEREST) => {
                self.on_incoming_nack(now, face, reason, fragment, fields);
            }
            (Ok(t), None) if t == u64::from(types::INTEREST) => {
                self.on_incoming_interest(now, face, fragment, fields);
            }
            (Ok(t), None) if t == u64::from(types::DATA) => {
                self.on_incoming_data(now, face, fragment, fields);
            }
            _ => self.record_drop(face, DropReason::Malformed),
        }
    }

    /// Removes a PIT entry and releases the charge on the face that created it.
    pub(crate) fn remove_pit_entry(&mut self, id: PitEntryId) {
        if let Some(owner) = self.pit.remove(id) {
            self.faces.discharge_pit(owner);
        }
    }

    /// Handles the timers due at `now`: PIT entries expire (at most
    /// [`Config::timeout_burst`] per call), dead nonces age out.
    pub fn handle_timeout(&mut self, now: Time) {
        self.out.cause = FaceId::NONE;
        for _ in 0..self.config.timeout_burst {
            let Some(id) = self.pit.pop_expired(now) else {
                break;
            };
            self.on_interest_finalize(now, id);
        }
        self.dnl.expire(now);
        self.stragglers.expire(now);
        self.expire_lookups(now);
    }

    /// The next packet to send, if any.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.out.queue.pop_front()
    }

    /// When [`Forwarder::handle_timeout`] should next be called; `None` when no timer is set.
    ///
    /// It may be earlier than needed (a deadline that no longer holds); calling
    /// `handle_timeout` then does nothing but move it on. O(1).
    pub fn poll_timeout(&self) -> Option<Time> {
        match (self.pit.next_expiry(), self.next_lookup_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    // ---- FIB ----

    /// Adds a next hop to `prefix`, or updates its cost.
    ///
    /// # Errors
    /// [`FibError::UnknownFace`], [`FibError::PrefixTooLong`] (over 32 components).
    pub fn add_nexthop(&mut self, prefix: &Name, face: FaceId, cost: u64) -> Result<(), FibError> {
        if self.faces.get(face).is_none() {
            return Err(FibError::UnknownFace);
        }
        self.fib.add_nexthop(&self.hasher, prefix, face, cost)?;
        self.record(|| ControlOp::AddNexthop {
            prefix: prefix.clone(),
            face,
            cost,
        });
        Ok(())
    }

    /// Removes a next hop; the prefix goes with its last one. False when absent.
    pub fn remove_nexthop(&mut self, prefix: &Name, face: FaceId) -> bool {
        let removed = self.fib.remove_nexthop(&self.hasher, prefix, face);
        if removed {
            self.record(|| ControlOp::RemoveNexthop {
                prefix: prefix.clone(),
                face,
            });
        }
        removed
    }

    /// The next hops of exactly `prefix`, lowest cost first.
    pub fn fib_nexthops(&self, prefix: &Name) -> Option<&[NextHop]> {
        self.fib.nexthops_of(&self.hasher, prefix)
    }

    /// The FIB entry that longest-prefix matches `name`.
    pub fn fib_lookup(&self, name: &Name) -> Option<(&Name, &[NextHop])> {
        self.fib
            .longest_prefix_match(name, &self.hasher.prefix_hashes(name))
    }

    /// Every FIB entry as (prefix, next hops), in no particular order.
    pub fn fib_entries(&self) -> impl Iterator<Item = (&Name, &[NextHop])> + '_ {
        self.fib.iter()
    }

    // ---- strategy choice ----

    /// Registers a strategy (beside the built-in ones) so that it can be chosen.
    pub fn register_strategy(
        &mut self,
        name: Name,
        version: u64,
        factory: crate::strategy::StrategyFactory,
    ) {
        self.registry.register(name, version, factory);
    }

    /// The strategies that can be chosen.
    pub fn strategy_registry(&self) -> &StrategyRegistry {
        &self.registry
    }

    /// Chooses `strategy` (a registered name, with or without version) for `prefix`; returns
    /// the instance name (with version). Pending Interests under `prefix` move to it.
    ///
    /// # Errors
    /// [`StrategyError`]: unknown strategy or version, bad parameters, prefix too long.
    pub fn set_strategy(&mut self, prefix: &Name, strategy: &Name) -> Result<Name, StrategyError> {
        let instance = self.registry.create(strategy)?;
        let name = instance.instance_name().clone();
        self.strategy_choice.set(&self.hasher, prefix, instance)?;
        self.reassign_strategies();
        self.record(|| ControlOp::SetStrategy {
            prefix: prefix.clone(),
            strategy: strategy.clone(),
        });
        Ok(name)
    }

    /// Removes the choice for `prefix` (its names fall back to the parent's choice). Returns
    /// false when there was none.
    ///
    /// # Errors
    /// [`StrategyError::CannotUnsetRoot`].
    pub fn unset_strategy(&mut self, prefix: &Name) -> Result<bool, StrategyError> {
        let removed = self.strategy_choice.unset(&self.hasher, prefix)?;
        if removed {
            self.reassign_strategies();
            self.record(|| ControlOp::UnsetStrategy(prefix.clone()));
        }
        Ok(removed)
    }

    /// Measurements entries the strategies keep (NFD's `nMeasurementsEntries`).
    pub fn n_measurements_entries(&self) -> usize {
        self.strategy_choice.measurements_len()
    }

    /// Every strategy choice as (prefix, instance name).
    pub fn strategy_choices(&self) -> impl Iterator<Item = (&Name, &Name)> + '_ {
        self.strategy_choice.iter()
    }

    /// The instance name of the strategy that handles `name`.
    pub fn effective_strategy(&self, name: &Name) -> Option<&Name> {
        let slot = self
            .strategy_choice
            .effective(name, &self.hasher.prefix_hashes(name));
        self.strategy_choice
            .instance(slot)
            .map(|s| s.instance_name())
    }

    /// Points every PIT entry at its strategy after a change, dropping the scratch state of
    /// entries whose strategy changed (as NFD does).
    fn reassign_strategies(&mut self) {
        for id in self.pit.ids() {
            let Some(entry) = self.pit.get_mut(id) else {
                continue;
            };
            let name = entry.name();
            let hashes = self.hasher.prefix_hashes(&name);
            let slot = self.strategy_choice.effective(&name, &hashes);
            if slot != entry.strategy {
                entry.strategy = slot;
                entry.clear_scratch();
            }
        }
    }

    // ---- content store ----

    /// Changes the content store capacity (in packets, of every shard together: a shard keeps
    /// its share, see [`cs_share`]), evicting as needed.
    pub fn set_cs_capacity(&mut self, capacity: usize) {
        let (index, n, _) = self.cs_share;
        self.cs_share.2 = capacity;
        self.cs.set_capacity(cs_share(capacity, index, n));
        self.record(|| ControlOp::SetCsCapacity(capacity));
    }

    /// The content store capacity of every shard together (this forwarder's own with one
    /// shard), as last set.
    pub fn cs_capacity_total(&self) -> usize {
        self.cs_share.2
    }

    /// Makes this forwarder shard `index` of `n`: it holds its share of the content store
    /// capacity set from now on.
    pub(crate) fn set_shard_place(&mut self, index: usize, n: usize, cs_total: usize) {
        self.cs_share = (index, n.max(1), cs_total);
    }

    /// Whether Data is admitted to the content store (NFD `cs/config` flag admit).
    pub fn set_cs_admit(&mut self, admit: bool) {
        self.cs_admit = admit;
        self.record(|| ControlOp::SetCsAdmit(admit));
    }

    /// Whether the content store answers Interests (NFD `cs/config` flag serve).
    pub fn set_cs_serve(&mut self, serve: bool) {
        self.cs_serve = serve;
        self.record(|| ControlOp::SetCsServe(serve));
    }

    /// Replaces the per-prefix admission rules and the partitioned placement (see
    /// [`CsPolicy`](crate::CsPolicy)); Data already stored stays.
    ///
    /// # Errors
    /// [`CsPolicyError`](crate::CsPolicyError); the policy is then unchanged.
    pub fn set_cs_policy(
        &mut self,
        rules: &[(nameway_wire::Name, crate::CsRule)],
        partition: Option<crate::Partition>,
    ) -> Result<(), crate::CsPolicyError> {
        self.cs_policy.replace(rules, partition)?;
        self.record(|| ControlOp::SetCsPolicy {
            rules: rules.to_vec(),
            partition,
        });
        Ok(())
    }

    /// The per-prefix admission rules and the placement.
    pub fn cs_policy(&self) -> &crate::CsPolicy {
        &self.cs_policy
    }

    /// Whether Data is admitted to the content store.
    pub fn cs_admit(&self) -> bool {
        self.cs_admit
    }

    /// Whether the content store answers Interests.
    pub fn cs_serve(&self) -> bool {
        self.cs_serve
    }

    /// The content store (its counters, capacity, policy name).
    pub fn content_store(&self) -> &dyn ContentStore {
        &*self.cs
    }

    /// Erases up to `limit` packets under `prefix` from this forwarder's store only, recording
    /// nothing: for a caller that erases shard by shard to keep one limit across them (the
    /// daemon's `cs/erase`). Returns how many.
    pub fn cs_erase_here(&mut self, prefix: &Name, limit: usize) -> usize {
        let hashes = self.hasher.prefix_hashes(prefix);
        self.cs.erase(prefix, &hashes, limit)
    }

    /// Erases up to `limit` packets under `prefix` (NFD `cs/erase`); returns how many.
    pub fn cs_erase(&mut self, prefix: &Name, limit: usize) -> usize {
        let hashes = self.hasher.prefix_hashes(prefix);
        self.record(|| ControlOp::CsErase {
            prefix: prefix.clone(),
            limit,
        });
        self.cs.erase(prefix, &hashes, limit)
    }

    // ---- counters ----

    /// Forwarder-wide packet counters.
    pub fn counters(&self) -> &ForwarderCounters {
        &self.out.counters
    }

    /// A snapshot of every table's size and counters (NFD GeneralStatus-like).
    pub fn status(&self) -> ForwarderStatus {
        let mut st = self.own_status();
        if let Some(p) = &self.peers {
            st.add_shard(&p.status);
        }
        st
    }

    /// This forwarder's status without the other shards' counters.
    pub fn own_status(&self) -> ForwarderStatus {
        ForwarderStatus {
            n_faces: self.faces.len(),
            n_fib_entries: self.fib.len(),
            n_pit_entries: self.pit.len(),
            n_cs_entries: self.cs.len(),
            n_strategy_choice_entries: self.strategy_choice.len(),
            n_dead_nonces: self.dnl.len(),
            n_straggler_nonces: self.stragglers.len(),
            counters: self.out.counters,
            pit: self.pit.counters(),
            fib: FibCounters {
                entries: self.fib.len(),
                ..self.fib_counters
            },
            cs: self.cs.counters(),
            dnl: self.dnl.counters(),
        }
    }

    /// Deadlines in the PIT timer heap, stale ones included (bounded by about twice the PIT
    /// size); for tests of the size invariants.
    pub fn pit_timer_len(&self) -> usize {
        self.pit.timer_len()
    }

    // ---- helpers for the pipelines ----

    /// Counts a drop on `face` and in the totals.
    pub(crate) fn record_drop(&mut self, face: FaceId, reason: DropReason) {
        self.out.record_drop(&mut self.faces, face, reason);
    }

    /// Runs a strategy trigger on PIT entry `id`. With `lookup_fib`, the context carries the
    /// entry's next hops (`hashes`: the Interest name's prefix hashes, when already known).
    pub(crate) fn with_strategy(
        &mut self,
        now: Time,
        id: PitEntryId,
        lookup_fib: bool,
        hashes: Option<&PrefixHashes>,
        trigger: impl FnOnce(&mut dyn Strategy, &mut StrategyContext<'_>),
    ) {
        let Self {
            pit,
            fib,
            fib_counters,
            faces,
            out,
            strategy_choice,
            hasher,
            resolution,
            cs_share,
            local_hops,
            ..
        } = self;
        let Some(entry) = pit.get_mut(id) else {
            return;
        };
        let nexthops = if lookup_fib {
            let regions = resolution.as_ref().map_or(&[][..], |r| &r.regions[..]);
            crate::pipeline::interest::lookup_fib(
                fib,
                fib_counters,
                hasher,
                entry.interest(),
                hashes,
                regions,
            )
        } else {
            &[]
        };
        let (index, n, _) = *cs_share;
        let nexthops = if crate::shard::local_hops::prefer_local(nexthops, index, n, local_hops) {
            &local_hops[..]
        } else {
            nexthops
        };
        let Some(strategy) = strategy_choice.instance_mut(entry.strategy) else {
            return;
        };
        let mut cx = StrategyContext {
            now,
            entry,
            nexthops,
            faces,
            out,
            view: core::cell::OnceCell::new(),
        };
        trigger(strategy, &mut cx);
    }
}

fn best_route(registry: &StrategyRegistry) -> Box<dyn Strategy> {
    let name = BEST_ROUTE_NAME.parse::<Name>().ok();
    match name.and_then(|n| registry.create(&n).ok()) {
        Some(s) => s,
        // The built-in registry always has best-route; this keeps construction total.
        None => Box::new(BestRoute::default()),
    }
}

/// Shard `index`'s share of a content store capacity of `total` packets split over `n`
/// shards: `total / n`, one more for the first `total % n`, so the shares add up to `total`.
pub fn cs_share(total: usize, index: usize, n: usize) -> usize {
    let n = n.max(1);
    total / n + usize::from(index < total % n)
}
