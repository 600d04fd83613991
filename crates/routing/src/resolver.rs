//! The first-hop resolver: turns a FIB miss for `/32=sc/<h>/...` into a verified route, in the
//! shape of quinn-proto (`on_*` in, `poll_*` out, time passed in, no I/O).
//!
//! ```text
//! on_miss(now, h)        -> Known(route) | Pending | NoSuchName | Overloaded
//! poll_query(now)        -> Query to send to a RIB service (rate-capped)
//! on_answer(now, data)   -> the RIB's answer: verified through the cache
//! on_query_nack(now, n)  -> a Nack for a look-up: retried like a timeout
//! on_announcement(...)   -> a chain pushed to this node (mobility, local producers)
//! on_timeout(now)        -> look-up timeouts, retries, route expiry
//! poll_timeout()         -> when to call on_timeout (or poll_query) next
//! poll_event()           -> RouteReady | RouteReplaced | RouteRemoved | Failed
//! ```
//!
//! Look-ups are deduplicated per name (one in flight per `h`), bounded (`max_pending`, queued
//! and in flight together), sent at most `resolve_rate` per second (token bucket; beyond it
//! they wait in order), retried after a timeout or Nack with doubling back-off a bounded number
//! of times, and a "no such name" answer is kept in a negative cache for its FreshnessPeriod
//! (capped). Routes follow the mobility rule: a newer announcement version for the same name
//! replaces the route at once; an older or equal one never replaces it.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use bytes::Bytes;
use foldhash::fast::RandomState;
use nameway_wire::{DataView, Interest, Name};

use crate::cache::ClockCache;
use crate::error::{RejectReason, Rejected};
use crate::rib::{self, Answer};
use crate::sc::KeyHash;
use crate::token_bucket::TokenBucket;
use crate::verifier::{ChainVerifier, Origin, VerifiedRoute, VerifierConfig, VerifyCounters};

/// Resolver settings (the `[routing]` section's limits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolverConfig {
    /// RIB service prefixes (`/example/32=RIB`); retries rotate through them.
    pub rib_prefixes: Vec<Name>,
    /// Most look-ups queued or in flight; beyond, a miss is [`MissOutcome::Overloaded`].
    pub max_pending: usize,
    /// Look-up Interests per second.
    pub resolve_rate: u32,
    /// Look-up Interests that may go out back to back after a quiet time.
    pub resolve_burst: u32,
    /// InterestLifetime of a look-up, and how long to wait for its answer.
    pub query_lifetime_ms: u64,
    /// Retries after the first attempt times out or is Nacked.
    pub max_retries: u32,
    /// Wait before the first retry; doubled for each further one.
    pub retry_backoff_ms: u64,
    /// Longest wait between retries.
    pub retry_backoff_max_ms: u64,
    /// Negative-cache time for a "no such name" answer without FreshnessPeriod, and for a
    /// rejected answer.
    pub negative_ttl_ms: u64,
    /// Longest negative-cache time, whatever the answer says.
    pub negative_ttl_max_ms: u64,
    /// Most names in the negative cache.
    pub negative_cache_capacity: usize,
    /// Most routes held; beyond, the one expiring first goes.
    pub max_routes: usize,
    /// The chain verifier's settings.
    pub verifier: VerifierConfig,
}

impl Default for ResolverConfig {
    fn default() -> Self {
        Self {
            rib_prefixes: Vec::new(),
            max_pending: 4096,
            resolve_rate: 2000,
            resolve_burst: 200,
            query_lifetime_ms: 1000,
            max_retries: 3,
            retry_backoff_ms: 100,
            retry_backoff_max_ms: 2000,
            negative_ttl_ms: 5000,
            negative_ttl_max_ms: 60_000,
            negative_cache_capacity: 1 << 16,
            max_routes: 1 << 20,
            verifier: VerifierConfig::default(),
        }
    }
}

/// Why a configuration cannot make a resolver.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// No RIB service prefix to ask.
    #[error("no RIB service prefix")]
    NoRib,
    /// `resolve_rate` is 0.
    #[error("resolve_rate must be at least 1 per second")]
    ZeroRate,
    /// `max_pending` is 0.
    #[error("max_pending must be at least 1")]
    ZeroPending,
}

/// What a miss leads to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MissOutcome {
    /// A verified route exists already: install it (the FIB lost it, or raced).
    Known(Arc<VerifiedRoute>),
    /// A look-up is queued or in flight (this miss started it or joined it): hold the
    /// Interest until an event for this name.
    Pending,
    /// The name does not exist, as a RIB service said recently: Nack with RetryAfter.
    NoSuchName {
        /// How long the negative answer still holds.
        retry_after_ms: u64,
    },
    /// Too many look-ups pending: Nack NoRoute.
    Overloaded,
}

/// A look-up Interest to send (see [`Query::interest`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    /// The name looked up.
    pub h: KeyHash,
    /// `<rib prefix>/32=sc/<h>`.
    pub name: Name,
    /// InterestLifetime.
    pub lifetime_ms: u64,
    /// 0 for the first attempt, then 1, 2... for retries.
    pub attempt: u32,
}

impl Query {
    /// The Interest, MustBeFresh, with the caller's random `nonce`.
    pub fn interest(&self, nonce: u32) -> Interest {
        let mut i = Interest::new(self.name.clone());
        i.must_be_fresh = true;
        i.lifetime_ms = Some(self.lifetime_ms);
        i.nonce = Some(nonce);
        i
    }
}

/// Why a look-up ended without a route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The RIB service says the name does not exist; negatively cached this long.
    NoSuchName {
        /// How long the negative answer holds.
        retry_after_ms: u64,
    },
    /// The RIB service's answer did not verify (counted under its reason).
    Rejected(Rejected),
    /// No answer after every attempt.
    TimedOut {
        /// Queries sent.
        attempts: u32,
    },
}

/// Why a route went away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemoveReason {
    /// Its chain expired.
    Expired,
    /// The route table was full and it was the next to expire.
    Evicted,
}

/// What the daemon must act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResolverEvent {
    /// A verified route for `h`: install `/32=sc/<h>` toward the delegate (ForwardingHint
    /// `delegate_name`), then forward the Interests held for it. Also sent when a look-up
    /// confirms the route already held.
    RouteReady(Arc<VerifiedRoute>),
    /// A newer version replaced the route: remove `old`'s delegate, install `new`'s.
    RouteReplaced {
        /// The route that goes.
        old: Arc<VerifiedRoute>,
        /// The route that comes.
        new: Arc<VerifiedRoute>,
    },
    /// A route went away: remove it.
    RouteRemoved {
        /// The route.
        route: Arc<VerifiedRoute>,
        /// Why.
        reason: RemoveReason,
    },
    /// A look-up for `h` ended without a route: Nack the Interests held for it.
    Failed {
        /// The name.
        h: KeyHash,
        /// Why.
        failure: Failure,
    },
}

/// What the resolver did, for export.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResolverCounters {
    /// Misses reported.
    pub misses: u64,
    /// Look-ups started.
    pub lookups_started: u64,
    /// Misses that joined a pending look-up.
    pub deduplicated: u64,
    /// Misses answered from the negative cache.
    pub negative_hits: u64,
    /// Misses refused because `max_pending` look-ups were pending.
    pub overloaded: u64,
    /// Look-up Interests sent (first attempts and retries).
    pub queries_sent: u64,
    /// Of which retries.
    pub retries: u64,
    /// Attempts that timed out.
    pub timeouts: u64,
    /// Attempts Nacked.
    pub nacks: u64,
    /// "Found" answers whose chain verified.
    pub answers_found: u64,
    /// "No such name" answers.
    pub answers_not_found: u64,
    /// Answers refused (malformed, or a chain that did not verify).
    pub answers_rejected: u64,
    /// Data or Nacks for no pending look-up.
    pub unsolicited: u64,
    /// Look-ups given up after every attempt timed out.
    pub lookups_timed_out: u64,
    /// Routes installed for a name without one.
    pub routes_installed: u64,
    /// Routes replaced by a newer version.
    pub routes_replaced: u64,
    /// Chains not newer than the route held (kept the route).
    pub stale_chains: u64,
    /// Routes removed at expiry.
    pub routes_expired: u64,
    /// Routes removed because the table was full.
    pub routes_evicted: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Waiting for a token.
    Queued,
    /// Sent; answer expected by the deadline.
    InFlight(u64),
    /// Waiting to be queued again at this time.
    Backoff(u64),
}

#[derive(Clone, Copy, Debug)]
struct Lookup {
    state: State,
    /// Queries sent so far.
    sent: u32,
}

/// See the module documentation.
pub struct Resolver {
    config: ResolverConfig,
    verifier: ChainVerifier,
    bucket: TokenBucket,
    pending: HashMap<KeyHash, Lookup, RandomState>,
    ready: VecDeque<KeyHash>,
    deadlines: BTreeSet<(u64, KeyHash)>,
    routes: HashMap<KeyHash, Arc<VerifiedRoute>, RandomState>,
    route_expiry: BTreeSet<(u64, KeyHash)>,
    negative: ClockCache<u64>,
    events: VecDeque<ResolverEvent>,
    counters: ResolverCounters,
}

impl Resolver {
    /// A resolver with no routes, its token bucket full at `now_ms`.
    ///
    /// # Errors
    /// [`ConfigError`] for a configuration that cannot work.
    pub fn new(config: ResolverConfig, now_ms: u64) -> Result<Self, ConfigError> {
        if config.rib_prefixes.is_empty() {
            return Err(ConfigError::NoRib);
        }
        if config.resolve_rate == 0 {
            return Err(ConfigError::ZeroRate);
        }
        if config.max_pending == 0 {
            return Err(ConfigError::ZeroPending);
        }
        Ok(Self {
            verifier: ChainVerifier::new(config.verifier),
            bucket: TokenBucket::new(config.resolve_rate, config.resolve_burst, now_ms),
            pending: HashMap::default(),
            ready: VecDeque::new(),
            deadlines: BTreeSet::new(),
            routes: HashMap::default(),
            route_expiry: BTreeSet::new(),
            negative: ClockCache::new(config.negative_cache_capacity),
            events: VecDeque::new(),
            counters: ResolverCounters::default(),
            config,
        })
    }

    /// The forwarder has no route for `/32=sc/<h>/...` (first hop, no ForwardingHint).
    pub fn on_miss(&mut self, now_ms: u64, h: KeyHash) -> MissOutcome {
        self.counters.misses += 1;
        if let Some(route) = self.routes.get(&h) {
            // A route past its end that `on_timeout` has not removed yet is not handed out.
            if self.valid_until(route) >= now_ms {
                return MissOutcome::Known(Arc::clone(route));
            }
        }
        if let Some(&until) = self.negative.get(h.as_bytes(), now_ms) {
            self.counters.negative_hits += 1;
            return MissOutcome::NoSuchName {
                retry_after_ms: until.saturating_sub(now_ms),
            };
        }
        self.start(h)
    }

    /// Looks `h` up again even though a route is held (the daemon saw the route fail, or it
    /// nears expiry); the answer replaces the route only if it is newer.
    pub fn refresh(&mut self, h: KeyHash) -> MissOutcome {
        self.start(h)
    }

    fn start(&mut self, h: KeyHash) -> MissOutcome {
        if self.pending.contains_key(&h) {
            self.counters.deduplicated += 1;
            return MissOutcome::Pending;
        }
        if self.pending.len() >= self.config.max_pending {
            self.counters.overloaded += 1;
            return MissOutcome::Overloaded;
        }
        self.counters.lookups_started += 1;
        self.pending.insert(
            h,
            Lookup {
                state: State::Queued,
                sent: 0,
            },
        );
        self.ready.push_back(h);
        MissOutcome::Pending
    }

    /// The next look-up Interest to send, if one is queued and the rate allows it now.
    pub fn poll_query(&mut self, now_ms: u64) -> Option<Query> {
        while let Some(&h) = self.ready.front() {
            let queued = self
                .pending
                .get(&h)
                .is_some_and(|l| l.state == State::Queued);
            if !queued {
                self.ready.pop_front();
                continue;
            }
            if !self.bucket.try_take(now_ms) {
                return None;
            }
            self.ready.pop_front();
            return self.send(now_ms, h);
        }
        None
    }

    fn send(&mut self, now_ms: u64, h: KeyHash) -> Option<Query> {
        let lifetime = self.config.query_lifetime_ms;
        let deadline = now_ms.saturating_add(lifetime);
        let lookup = self.pending.get_mut(&h)?;
        let attempt = lookup.sent;
        lookup.sent += 1;
        lookup.state = State::InFlight(deadline);
        self.deadlines.insert((deadline, h));
        self.counters.queries_sent += 1;
        if attempt > 0 {
            self.counters.retries += 1;
        }
        let n = self.config.rib_prefixes.len();
        let prefix = self.config.rib_prefixes.get(attempt as usize % n)?;
        let name = rib::lookup_name(prefix, &h).ok()?;
        Some(Query {
            h,
            name,
            lifetime_ms: lifetime,
            attempt,
        })
    }

    /// A Data received for a look-up. Returns `false` (counted) when it answers no pending
    /// look-up; the outcome comes out of [`Resolver::poll_event`].
    pub fn on_answer(&mut self, now_ms: u64, wire: Bytes) -> bool {
        let Some(h) = self.pending_for(&wire) else {
            self.counters.unsolicited += 1;
            return false;
        };
        match rib::decode_answer(&wire) {
            Err(e) => self.rejected_here(now_ms, h, Rejected::malformed("RIB answer", &e)),
            Ok(d) => match d.answer {
                Answer::NotFound { ttl_ms } => self.not_found(now_ms, h, ttl_ms),
                Answer::Found {
                    announcement,
                    locator,
                } => self.found(now_ms, h, &announcement, &locator),
            },
        }
        true
    }

    /// The pending look-up a Data's name answers.
    fn pending_for(&self, wire: &Bytes) -> Option<KeyHash> {
        let view = DataView::new_checked(wire.clone()).ok()?;
        self.pending_named(view.name())
    }

    fn pending_named(&self, name: &Name) -> Option<KeyHash> {
        self.config
            .rib_prefixes
            .iter()
            .find_map(|p| rib::parse_lookup(p, name))
            .filter(|h| self.pending.contains_key(h))
    }

    fn found(&mut self, now_ms: u64, h: KeyHash, announcement: &Bytes, locator: &Bytes) {
        let verified = self
            .verifier
            .verify(now_ms, announcement, locator, Origin::Direct);
        match verified {
            Ok(route) if route.h == h => {
                self.counters.answers_found += 1;
                self.finish(h);
                self.install(route);
            }
            Ok(_) => {
                let r = Rejected::new(
                    RejectReason::Malformed,
                    "the RIB answered with another name's announcement",
                );
                self.rejected_here(now_ms, h, r);
            }
            Err(r) => self.rejected(now_ms, h, r),
        }
    }

    fn not_found(&mut self, now_ms: u64, h: KeyHash, ttl_ms: u64) {
        self.counters.answers_not_found += 1;
        let ttl = match ttl_ms {
            0 => self.config.negative_ttl_ms,
            t => t.min(self.config.negative_ttl_max_ms),
        };
        self.negative_insert(now_ms, h, ttl);
        self.finish(h);
        self.events.push_back(ResolverEvent::Failed {
            h,
            failure: Failure::NoSuchName {
                retry_after_ms: ttl,
            },
        });
    }

    /// An answer that did not verify: negatively cached for `negative_ttl_ms`.
    fn rejected(&mut self, now_ms: u64, h: KeyHash, r: Rejected) {
        self.counters.answers_rejected += 1;
        self.negative_insert(now_ms, h, self.config.negative_ttl_ms);
        self.finish(h);
        self.events.push_back(ResolverEvent::Failed {
            h,
            failure: Failure::Rejected(r),
        });
    }

    /// A rejection the verifier did not see (a malformed answer envelope, an answer for
    /// another name): counted with the verifier's, then handled as any rejection.
    fn rejected_here(&mut self, now_ms: u64, h: KeyHash, r: Rejected) {
        self.verifier.count_rejection(r.reason);
        self.rejected(now_ms, h, r);
    }

    fn negative_insert(&mut self, now_ms: u64, h: KeyHash, ttl: u64) {
        let until = now_ms.saturating_add(ttl);
        self.negative.insert(*h.as_bytes(), until, until, now_ms);
    }

    /// A Nack for the look-up Interest named `name`: retried like a timeout. Returns `false`
    /// (counted) when it is for no look-up in flight.
    pub fn on_query_nack(&mut self, now_ms: u64, name: &Name) -> bool {
        let Some(h) = self.pending_named(name) else {
            self.counters.unsolicited += 1;
            return false;
        };
        match self.pending.get(&h).map(|l| l.state) {
            Some(State::InFlight(deadline)) => {
                self.counters.nacks += 1;
                self.deadlines.remove(&(deadline, h));
                self.attempt_failed(now_ms, h);
                true
            }
            _ => {
                self.counters.unsolicited += 1;
                false
            }
        }
    }

    /// A chain pushed to this node (a neighbour's announcement with the neighbour's
    /// authenticated identity, or a local producer's with [`Origin::Direct`]): verified and
    /// installed under the mobility rule. Ends a pending look-up of the same name.
    ///
    /// # Errors
    /// [`Rejected`] (counted) when the chain does not verify.
    pub fn on_announcement(
        &mut self,
        now_ms: u64,
        announcement: &Bytes,
        locator: &Bytes,
        origin: Origin,
    ) -> Result<Arc<VerifiedRoute>, Rejected> {
        let route = self
            .verifier
            .verify(now_ms, announcement, locator, origin)?;
        self.finish(route.h);
        self.negative.remove(route.h.as_bytes());
        self.install(Arc::clone(&route));
        Ok(route)
    }

    /// Installs a verified route under the mobility rule and says so.
    fn install(&mut self, route: Arc<VerifiedRoute>) {
        let h = route.h;
        let until = self.valid_until(&route);
        match self.routes.get(&h) {
            Some(old) if route.version <= old.version => {
                self.counters.stale_chains += 1;
                let current = Arc::clone(old);
                self.events.push_back(ResolverEvent::RouteReady(current));
            }
            Some(old) => {
                let old = Arc::clone(old);
                self.route_expiry.remove(&(self.valid_until(&old), h));
                self.route_expiry.insert((until, h));
                self.routes.insert(h, Arc::clone(&route));
                self.counters.routes_replaced += 1;
                self.events
                    .push_back(ResolverEvent::RouteReplaced { old, new: route });
            }
            None => {
                if self.routes.len() >= self.config.max_routes {
                    self.evict_one();
                }
                self.route_expiry.insert((until, h));
                self.routes.insert(h, Arc::clone(&route));
                self.counters.routes_installed += 1;
                self.events.push_back(ResolverEvent::RouteReady(route));
            }
        }
    }

    /// A route is used until its chain's acceptance ends (expiry plus the clock grace, as the
    /// verifier accepts it).
    fn valid_until(&self, route: &VerifiedRoute) -> u64 {
        route
            .expires_at_ms
            .saturating_add(self.config.verifier.grace_ms)
    }

    fn evict_one(&mut self) {
        let Some((_, h)) = self.route_expiry.pop_first() else {
            return;
        };
        if let Some(route) = self.routes.remove(&h) {
            self.counters.routes_evicted += 1;
            self.events.push_back(ResolverEvent::RouteRemoved {
                route,
                reason: RemoveReason::Evicted,
            });
        }
    }

    /// Ends the look-up of `h`, if any.
    fn finish(&mut self, h: KeyHash) {
        if let Some(l) = self.pending.remove(&h) {
            match l.state {
                State::InFlight(t) | State::Backoff(t) => {
                    self.deadlines.remove(&(t, h));
                }
                // Rare (a pushed chain ends a look-up still waiting for a token).
                State::Queued => self.ready.retain(|x| *x != h),
            }
        }
    }

    /// The attempt in flight for `h` failed (timeout or Nack): back off and retry, or give up.
    fn attempt_failed(&mut self, now_ms: u64, h: KeyHash) {
        let Some(lookup) = self.pending.get_mut(&h) else {
            return;
        };
        if lookup.sent > self.config.max_retries {
            let attempts = lookup.sent;
            self.pending.remove(&h);
            self.counters.lookups_timed_out += 1;
            self.events.push_back(ResolverEvent::Failed {
                h,
                failure: Failure::TimedOut { attempts },
            });
            return;
        }
        let shift = lookup.sent.saturating_sub(1).min(20);
        let wait = self
            .config
            .retry_backoff_ms
            .saturating_mul(1 << shift)
            .min(self.config.retry_backoff_max_ms);
        let at = now_ms.saturating_add(wait);
        lookup.state = State::Backoff(at);
        self.deadlines.insert((at, h));
    }

    /// Handles every timer due by `now_ms`: look-up timeouts, retries coming off back-off,
    /// route expiry.
    pub fn on_timeout(&mut self, now_ms: u64) {
        while let Some(&(t, h)) = self.deadlines.first() {
            if t > now_ms {
                break;
            }
            self.deadlines.pop_first();
            match self.pending.get(&h).map(|l| l.state) {
                Some(State::InFlight(d)) if d == t => {
                    self.counters.timeouts += 1;
                    self.attempt_failed(now_ms, h);
                }
                Some(State::Backoff(d)) if d == t => {
                    if let Some(l) = self.pending.get_mut(&h) {
                        l.state = State::Queued;
                    }
                    self.ready.push_back(h);
                }
                _ => {}
            }
        }
        while let Some(&(t, h)) = self.route_expiry.first() {
            if t >= now_ms {
                break;
            }
            self.route_expiry.pop_first();
            if let Some(route) = self.routes.remove(&h) {
                self.counters.routes_expired += 1;
                self.events.push_back(ResolverEvent::RouteRemoved {
                    route,
                    reason: RemoveReason::Expired,
                });
            }
        }
    }

    /// When [`Resolver::on_timeout`] has work, or a queued look-up can be sent with
    /// [`Resolver::poll_query`]; `None` when idle.
    pub fn poll_timeout(&self) -> Option<u64> {
        let deadline = self.deadlines.first().map(|&(t, _)| t);
        let expiry = self.route_expiry.first().map(|&(t, _)| t.saturating_add(1));
        // `ready` holds only queued look-ups (`finish` takes them out).
        let token = (!self.ready.is_empty()).then(|| self.bucket.next_token_at(0));
        [deadline, expiry, token].into_iter().flatten().min()
    }

    /// The next event to act on.
    pub fn poll_event(&mut self) -> Option<ResolverEvent> {
        self.events.pop_front()
    }

    /// The route held for `h`.
    pub fn route(&self, h: &KeyHash) -> Option<&Arc<VerifiedRoute>> {
        self.routes.get(h)
    }

    /// Every route held (`nameway routing list`).
    pub fn routes(&self) -> impl Iterator<Item = &Arc<VerifiedRoute>> + '_ {
        self.routes.values()
    }

    /// Removes the route for `h` (no event: the caller acts on it).
    pub fn remove_route(&mut self, h: &KeyHash) -> Option<Arc<VerifiedRoute>> {
        let route = self.routes.remove(h)?;
        self.route_expiry.remove(&(self.valid_until(&route), *h));
        Some(route)
    }

    /// Look-ups queued or in flight.
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// Whether a look-up of `h` is queued or in flight.
    pub fn is_pending(&self, h: &KeyHash) -> bool {
        self.pending.contains_key(h)
    }

    /// The resolver's counters.
    pub fn counters(&self) -> &ResolverCounters {
        &self.counters
    }

    /// The chain verifier's counters (signatures, cache hits, rejections by reason).
    pub fn verify_counters(&self) -> &VerifyCounters {
        self.verifier.counters()
    }

    /// The configuration.
    pub fn config(&self) -> &ResolverConfig {
        &self.config
    }
}

#[cfg(test)]
mod tests;
