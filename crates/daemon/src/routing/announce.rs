//! This router's registrations: a self-certifying name announced here (`rib/announce`,
//! delegated to this router) is registered with every RIB service together with this
//! router's locator record. Every 2/3 of `announce_lifetime` the locator record is signed
//! afresh and every name still announced (its announcement valid, its local route present)
//! is registered again, so a RIB service restarted empty is refilled within one renewal
//! period. A registration without an answer is retried after 1, 2, 4 ... 30 s.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use bytes::Bytes;
use nameway_fw::{Forwarder, Time};
use nameway_routing::rib::{self, RegistrationStatus};
use nameway_routing::{KeyHash, LocatorRecord};
use nameway_wire::{DataView, Name};

use super::{Routing, ROUTING_FACE};
use crate::mgmt::Management;

/// InterestLifetime of a registration.
const REGISTRATION_LIFETIME_MS: u64 = 4000;
/// First retry after a registration got no answer; doubled up to [`RETRY_MAX_MS`].
const RETRY_FIRST_MS: u64 = 1000;
const RETRY_MAX_MS: u64 = 30_000;

/// A name this router registers.
struct Owned {
    announcement: Bytes,
    expires_at_ms: u64,
    /// Registrations without an answer in a row.
    failures: u32,
}

/// See the module documentation.
pub(super) struct Announcer {
    lifetime_ms: u64,
    locator: LocatorRecord,
    next_cycle_ms: u64,
    owned: HashMap<KeyHash, Owned>,
    /// Registration Interests in flight: name -> (h, deadline).
    in_flight: HashMap<Name, (KeyHash, u64)>,
    retries: BTreeSet<(u64, KeyHash)>,
    counters: BTreeMap<&'static str, u64>,
}

impl Announcer {
    pub(super) fn new(locator: LocatorRecord, now_ms: u64, lifetime_ms: u64) -> Self {
        Self {
            lifetime_ms,
            locator,
            next_cycle_ms: now_ms.saturating_add(renewal_period(lifetime_ms)),
            owned: HashMap::new(),
            in_flight: HashMap::new(),
            retries: BTreeSet::new(),
            counters: ["stored", "not_newer", "refused", "no_answer"]
                .into_iter()
                .map(|k| (k, 0))
                .collect(),
        }
    }

    /// Names registered and renewed.
    pub(super) fn len(&self) -> usize {
        self.owned.len()
    }

    /// The names with their announcement's expiry.
    pub(super) fn names(&self) -> impl Iterator<Item = (&KeyHash, u64)> + '_ {
        self.owned.iter().map(|(h, o)| (h, o.expires_at_ms))
    }

    /// Replies by kind.
    pub(super) fn counters(&self) -> BTreeMap<&'static str, u64> {
        self.counters.clone()
    }

    /// When something is due.
    pub(super) fn poll_timeout(&self) -> Option<u64> {
        let flight = self.in_flight.values().map(|&(_, d)| d).min();
        let retry = self.retries.first().map(|&(t, _)| t);
        let cycle = (!self.owned.is_empty()).then_some(self.next_cycle_ms);
        [flight, retry, cycle].into_iter().flatten().min()
    }

    /// A registration reply; `false` when `data` answers no registration of ours.
    pub(super) fn on_reply(&mut self, now_ms: u64, data: &Bytes) -> bool {
        let Ok(view) = DataView::new_checked(data.clone()) else {
            return false;
        };
        let Some((h, _)) = self.in_flight.remove(view.name()) else {
            return false;
        };
        let shown = nameway_routing::sc::display_name(&h.name());
        let kind = match rib::decode_registration_reply(data) {
            Ok(RegistrationStatus::Stored) => {
                tracing::debug!(name = %shown, "routing: registered with the RIB service");
                "stored"
            }
            Ok(RegistrationStatus::NotNewer { current_version }) => {
                tracing::debug!(name = %shown, current_version, "routing: the RIB service holds a newer or the same announcement");
                "not_newer"
            }
            Ok(RegistrationStatus::Refused(reason)) => {
                tracing::warn!(name = %shown, reason = reason.as_str(), "routing: the RIB service refused the registration");
                "refused"
            }
            Err(e) => {
                tracing::warn!(name = %shown, error = %e, "routing: a registration reply that does not decode");
                "refused"
            }
        };
        *self.counters.entry(kind).or_default() += 1;
        if let Some(o) = self.owned.get_mut(&h) {
            o.failures = 0;
        }
        let _ = now_ms;
        true
    }

    /// A Nack for a registration; `false` when it is for none of ours.
    pub(super) fn on_nack(&mut self, now_ms: u64, name: &Name) -> bool {
        let Some((h, _)) = self.in_flight.remove(name) else {
            return false;
        };
        self.failed(now_ms, h);
        true
    }

    /// A registration of `h` got no answer: retry later.
    fn failed(&mut self, now_ms: u64, h: KeyHash) {
        *self.counters.entry("no_answer").or_default() += 1;
        let Some(o) = self.owned.get_mut(&h) else {
            return;
        };
        let wait = RETRY_FIRST_MS
            .saturating_mul(1 << o.failures.min(10))
            .min(RETRY_MAX_MS);
        o.failures += 1;
        self.retries.insert((now_ms.saturating_add(wait), h));
    }
}

/// 2/3 of the lifetime.
fn renewal_period(lifetime_ms: u64) -> u64 {
    lifetime_ms / 3 * 2
}

impl Routing {
    /// Takes the announcements management accepted for this router and registers them.
    pub(super) fn take_announcements(
        &mut self,
        now: u64,
        fw: &mut Forwarder,
        mgmt: &mut Management,
    ) {
        let Some(admission) = mgmt.routing.as_mut() else {
            return;
        };
        if admission.queue.is_empty() {
            return;
        }
        let fw_now = self.clocks().1;
        for a in std::mem::take(&mut admission.queue) {
            let newer = self
                .announce
                .owned
                .get(&a.h)
                .is_none_or(|o| o.announcement != a.announcement);
            self.announce.owned.insert(
                a.h,
                Owned {
                    announcement: a.announcement,
                    expires_at_ms: a.expires_at_ms,
                    failures: 0,
                },
            );
            if newer {
                self.register(now, fw_now, fw, a.h);
            }
        }
    }

    /// Renewals, retries and registrations without an answer.
    pub(super) fn announce_due(
        &mut self,
        now: u64,
        fw_now: Time,
        fw: &mut Forwarder,
        mgmt: &Management,
    ) {
        let a = &mut self.announce;
        let late: Vec<(Name, KeyHash)> = a
            .in_flight
            .iter()
            .filter(|(_, &(_, d))| d <= now)
            .map(|(n, &(h, _))| (n.clone(), h))
            .collect();
        for (name, h) in late {
            a.in_flight.remove(&name);
            a.failed(now, h);
        }
        let mut due = Vec::new();
        while let Some(&(t, h)) = a.retries.first() {
            if t > now {
                break;
            }
            a.retries.pop_first();
            due.push(h);
        }
        if !a.owned.is_empty() && now >= a.next_cycle_ms {
            a.next_cycle_ms = now.saturating_add(renewal_period(a.lifetime_ms));
            match LocatorRecord::build(&self.key, &self.face_uris, now, a.lifetime_ms) {
                Ok(loc) => a.locator = loc,
                Err(e) => tracing::error!(error = %e, "routing: cannot sign the locator record"),
            }
            let routed = |h: &KeyHash| {
                let name = h.name();
                mgmt.rib()
                    .entries()
                    .any(|(n, r)| *n == name && !r.is_empty())
            };
            a.owned.retain(|h, o| {
                let keep = o.expires_at_ms > now && routed(h);
                if !keep {
                    tracing::info!(name = %nameway_routing::sc::display_name(&h.name()), "routing: announcement expired or withdrawn, no longer registered");
                }
                keep
            });
            a.retries.clear();
            due = a.owned.keys().copied().collect();
        }
        for h in due {
            self.register(now, fw_now, fw, h);
        }
    }

    /// Sends the registration of `h` to every RIB service.
    fn register(&mut self, now: u64, fw_now: Time, fw: &mut Forwarder, h: KeyHash) {
        let a = &mut self.announce;
        let Some(owned) = a.owned.get(&h) else {
            return;
        };
        for prefix in &self.rib_prefixes {
            let nonce = random_u32();
            let interest = match rib::registration_interest(
                prefix,
                &owned.announcement,
                a.locator.wire(),
                REGISTRATION_LIFETIME_MS,
                nonce,
            ) {
                Ok(i) => i,
                Err(e) => {
                    tracing::error!(error = %e, "routing: cannot build a registration");
                    continue;
                }
            };
            let wire = interest.encode();
            let Ok(view) = nameway_wire::InterestView::new_checked(wire.clone()) else {
                continue;
            };
            let deadline = now.saturating_add(REGISTRATION_LIFETIME_MS);
            a.in_flight.insert(view.name().clone(), (h, deadline));
            fw.handle_packet(fw_now, ROUTING_FACE, wire);
        }
    }
}

/// A random Nonce.
pub(super) fn random_u32() -> u32 {
    getrandom::u32().unwrap_or_else(|_| {
        use std::hash::{BuildHasher, RandomState};
        RandomState::new().hash_one(0u8) as u32
    })
}
