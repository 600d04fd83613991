//! The decoupled content store: the CS-list ([`CsFilter`]) in the Interest pipeline, a
//! content-store server outside the forwarder.
//!
//! With [`Forwarder::enable_external_cs`], the in-process store is no longer consulted. An
//! Interest that the filter says may be cached enters the PIT (so later Interests for the same
//! name aggregate on it) with its in-record, and a [`CsRequest::Lookup`] goes out through
//! [`Forwarder::poll_cs_request`]; the strategy waits. The caller answers with
//! [`Forwarder::handle_cs_answer`]:
//! - a Data: it enters the Data pipeline as if it came from the content-store face (254), and
//!   satisfies every pending downstream of every entry it matches; it is not admitted again;
//! - nothing (a false positive of the filter): the Interest goes on to the strategy and the
//!   FIB exactly as a miss would have — one hand-off later, never lost.
//!
//! A filter miss goes straight to the strategy. Admitted Data become [`CsRequest::Insert`]s;
//! the server reports which names entered and left it, and the caller feeds them back with
//! [`Forwarder::cs_filter_insert`] and [`Forwarder::cs_filter_remove`], so the filter holds
//! exactly what the server holds.

use std::collections::{HashMap, VecDeque};

use bytes::Bytes;
use nameway_wire::{Name, PrefixHashes};

use super::interest::on_outgoing_interest;
use crate::forwarder::{Forwarder, LpFields};
use crate::table::cs_filter::CsFilter;
use crate::table::face_table::{FaceId, FaceScope, LinkType};
use crate::table::pit::{PitEntry, PitEntryId};
use crate::time::Time;

/// The internal face a content-store answer arrives on (NFD's `FACEID_CONTENT_STORE`).
pub const CONTENT_STORE_FACE: FaceId = FaceId(254);

/// Most look-ups outstanding at once; past this, Interests skip the store (counted).
const MAX_PENDING: usize = 65_536;

/// How long an Interest waits for the server's answer before it goes on to the strategy as a
/// miss would (counted as a late look-up). A server behind on writing to its disk must not
/// hold Interests back: a consumer would retransmit them in vain and give up.
pub const LOOKUP_DEADLINE: std::time::Duration = std::time::Duration::from_millis(50);

/// What the forwarder asks of the content-store server.
#[derive(Clone, Debug)]
pub enum CsRequest {
    /// Find a Data for an Interest; answer with [`Forwarder::handle_cs_answer`] and `token`.
    Lookup {
        /// Given back with the answer.
        token: u64,
        /// The Interest name (ending with an implicit digest when it names one).
        name: Name,
        /// CanBePrefix.
        can_be_prefix: bool,
        /// MustBeFresh.
        must_be_fresh: bool,
    },
    /// Store a Data (its whole TLV).
    Insert {
        /// The Data.
        data: Bytes,
        /// Its name's prefix hashes: the server keeps them and gives them back when the name
        /// enters or leaves it, so that the filter is updated without hashing the name again
        /// ([`Forwarder::cs_filter_insert_hashes`]). Inline up to 11 components, so admitting
        /// a Data allocates nothing on the forwarder's thread.
        hashes: PrefixHashes,
    },
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    entry: PitEntryId,
    ingress: FaceId,
    next_hop: Option<FaceId>,
}

/// The state of the decoupled store inside the forwarder.
#[derive(Debug)]
pub(crate) struct ExternalCs {
    pub(crate) filter: CsFilter,
    next_token: u64,
    pending: HashMap<u64, Pending>,
    by_entry: HashMap<PitEntryId, u64>,
    requests: VecDeque<CsRequest>,
    /// Look-ups by deadline (tokens increase with time, so this is in deadline order).
    deadlines: VecDeque<(Time, u64)>,
    pub(crate) hits: u64,
    pub(crate) skipped: u64,
    /// Look-ups the server did not answer within [`LOOKUP_DEADLINE`].
    pub(crate) late: u64,
}

impl ExternalCs {
    pub(crate) fn admit(&mut self, data: Bytes, hashes: PrefixHashes) {
        self.requests.push_back(CsRequest::Insert { data, hashes });
    }
}

/// The hash a look-up asks the filter for, and whether it is a CanBePrefix one: an Interest
/// ending with an implicit digest asks for its name without the digest, exactly.
fn filter_key(entry: &PitEntry, hashes: &PrefixHashes) -> (u64, usize, bool) {
    let len = hashes.name_len();
    if entry.is_digest_named() && len > 0 {
        let n = len - 1;
        (hashes.get(n).unwrap_or_default(), n, false)
    } else {
        (hashes.full(), len, entry.interest().can_be_prefix())
    }
}

impl Forwarder {
    /// Switches to the decoupled content store with `filter` (empty, or built from the server's
    /// names with [`Forwarder::cs_filter_insert`] before serving). Adds the content-store face.
    pub fn enable_external_cs(&mut self, filter: CsFilter) {
        if self.faces.get(CONTENT_STORE_FACE).is_none() {
            let _ = self.faces.add_with_id(
                CONTENT_STORE_FACE,
                FaceScope::Local,
                LinkType::PointToPoint,
            );
        }
        self.external_cs = Some(ExternalCs {
            filter,
            next_token: 0,
            pending: HashMap::new(),
            by_entry: HashMap::new(),
            requests: VecDeque::new(),
            deadlines: VecDeque::new(),
            hits: 0,
            skipped: 0,
            late: 0,
        });
    }

    /// The CS-list, when the decoupled store is on.
    pub fn cs_filter(&self) -> Option<&CsFilter> {
        self.external_cs.as_ref().map(|e| &e.filter)
    }

    /// Look-ups answered with a Data by the server, Interests that skipped the store because
    /// too many look-ups were outstanding, and look-ups not answered within
    /// [`LOOKUP_DEADLINE`] (their Interests went on as misses).
    pub fn external_cs_counters(&self) -> Option<(u64, u64, u64)> {
        self.external_cs
            .as_ref()
            .map(|e| (e.hits, e.skipped, e.late))
    }

    /// The earliest look-up deadline, for [`Forwarder::poll_timeout`].
    pub(crate) fn next_lookup_deadline(&self) -> Option<Time> {
        let ext = self.external_cs.as_ref()?;
        ext.deadlines.front().map(|(t, _)| *t)
    }

    /// Sends on every Interest whose look-up is past its deadline, as a miss would.
    pub(crate) fn expire_lookups(&mut self, now: Time) {
        loop {
            let Some(ext) = self.external_cs.as_mut() else {
                return;
            };
            let Some(&(deadline, token)) = ext.deadlines.front() else {
                return;
            };
            if deadline > now {
                return;
            }
            ext.deadlines.pop_front();
            // Answered already: nothing to do.
            let Some(&p) = ext.pending.get(&token) else {
                continue;
            };
            let gone = self.pit.get(p.entry).is_none();
            if !gone && !self.has_upstream(&p) {
                // A miss would only be Nacked NoRoute: wait for the store's answer while the
                // Interest lives (a consumer fetching what only the cache holds, from a store
                // slowed by its disk or a busy machine).
                if let Some(ext) = self.external_cs.as_mut() {
                    ext.deadlines
                        .push_back((now.saturating_add(LOOKUP_DEADLINE), token));
                }
                continue;
            }
            let Some(ext) = self.external_cs.as_mut() else {
                return;
            };
            ext.pending.remove(&token);
            ext.by_entry.remove(&p.entry);
            if gone {
                continue;
            }
            ext.late += 1;
            self.after_cs_miss(now, p);
        }
    }

    /// Whether the Interest of `p` has somewhere to go but the store: the next hop it came
    /// with, or a FIB route (looked up without counting it: the strategy counts its own).
    fn has_upstream(&self, p: &Pending) -> bool {
        if p.next_hop.is_some() {
            return true;
        }
        let Some(entry) = self.pit.get(p.entry) else {
            return false;
        };
        let regions = self.resolution.as_ref().map_or(&[][..], |r| &r.regions[..]);
        let mut uncounted = crate::counters::FibCounters::default();
        !crate::pipeline::interest::lookup_fib(
            &self.fib,
            &mut uncounted,
            &self.hasher,
            entry.interest(),
            None,
            regions,
        )
        .is_empty()
    }

    /// The next request for the content-store server.
    pub fn poll_cs_request(&mut self) -> Option<CsRequest> {
        self.external_cs.as_mut()?.requests.pop_front()
    }

    /// A name entered the server: enters it in the filter.
    pub fn cs_filter_insert(&mut self, name: &Name) {
        let hashes = self.hasher.prefix_hashes(name);
        if let Some(e) = &mut self.external_cs {
            e.filter.insert(&hashes);
        }
    }

    /// A name entered the server, with the hashes its insert request carried.
    pub fn cs_filter_insert_hashes(&mut self, hashes: &[u64]) {
        if let Some(e) = &mut self.external_cs {
            e.filter.insert_hashes(hashes);
        }
    }

    /// A name left the server, with the hashes its insert request carried.
    pub fn cs_filter_remove_hashes(&mut self, hashes: &[u64]) {
        if let Some(e) = &mut self.external_cs {
            e.filter.remove_hashes(hashes);
        }
    }

    /// A name left the server: removes it from the filter.
    pub fn cs_filter_remove(&mut self, name: &Name) {
        let hashes = self.hasher.prefix_hashes(name);
        if let Some(e) = &mut self.external_cs {
            e.filter.remove(&hashes);
        }
    }

    /// In the Interest pipeline, where the content store would be consulted: with the
    /// decoupled store on and a filter hit (or a look-up already pending for this entry), the
    /// in-record is added, a look-up goes to the server, and true says the strategy must wait.
    pub(crate) fn hand_to_cs_server(
        &mut self,
        now: Time,
        ingress: FaceId,
        id: PitEntryId,
        hashes: &PrefixHashes,
        lp: &LpFields,
        may_look_up: bool,
    ) -> bool {
        let serve = self.cs_serve;
        let Some(ext) = self.external_cs.as_mut() else {
            return false;
        };
        // Most Interests find no look-up outstanding: skip the hash then.
        let pending = !ext.by_entry.is_empty() && ext.by_entry.contains_key(&id);
        let Some(entry) = self.pit.get_mut(id) else {
            return false;
        };
        if !pending {
            if !serve || !may_look_up {
                return false;
            }
            let (key, len, cbp) = filter_key(entry, hashes);
            let interest = entry.interest();
            if !ext.filter.may_contain_key(key, len, cbp) {
                return false;
            }
            if ext.pending.len() >= MAX_PENDING {
                ext.skipped += 1;
                return false;
            }
            let token = ext.next_token;
            ext.next_token += 1;
            ext.pending.insert(
                token,
                Pending {
                    entry: id,
                    ingress,
                    next_hop: lp.next_hop,
                },
            );
            ext.by_entry.insert(id, token);
            ext.deadlines
                .push_back((now.saturating_add(LOOKUP_DEADLINE), token));
            ext.requests.push_back(CsRequest::Lookup {
                token,
                name: interest.name(),
                can_be_prefix: interest.can_be_prefix(),
                must_be_fresh: interest.must_be_fresh(),
            });
        }
        entry.insert_in_record(now, ingress, lp.pit_token.clone());
        let expiry = entry.last_in_record_expiry().unwrap_or(now);
        self.pit.set_expiry(id, expiry);
        true
    }

    /// The server's answer to the look-up `token`: a Data satisfies the waiting entries; no Data
    /// (a false positive) sends the Interest on to the strategy. An answer for an entry that
    /// has gone meanwhile (expired, satisfied by a producer) is dropped.
    pub fn handle_cs_answer(&mut self, now: Time, token: u64, data: Option<Bytes>) {
        self.out.cause = FaceId::NONE;
        let Some(ext) = self.external_cs.as_mut() else {
            return;
        };
        let Some(p) = ext.pending.remove(&token) else {
            return;
        };
        ext.by_entry.remove(&p.entry);
        if data.is_none() {
            ext.filter.count_false_positive();
        }
        if self.pit.get(p.entry).is_none() {
            return;
        }
        match data {
            Some(wire) => {
                if let Some(ext) = self.external_cs.as_mut() {
                    ext.hits += 1;
                }
                let lp = LpFields {
                    no_cache: true,
                    ..LpFields::default()
                };
                self.on_incoming_data(now, CONTENT_STORE_FACE, wire, lp);
            }
            None => self.after_cs_miss(now, p),
        }
    }

    /// The look-up found nothing (or did not answer in time): the Interest goes on to its
    /// next hop or the strategy, exactly as a miss would have.
    fn after_cs_miss(&mut self, now: Time, p: Pending) {
        let Some(entry) = self.pit.get_mut(p.entry) else {
            return;
        };
        if let Some(egress) = p.next_hop {
            if self.faces.get(egress).is_some() {
                on_outgoing_interest(now, entry, egress, &mut self.faces, &mut self.out);
            }
            return;
        }
        let hashes = self.hasher.prefix_hashes(&entry.name());
        self.with_strategy(now, p.entry, true, Some(&hashes), |s, cx| {
            s.after_receive_interest(cx, p.ingress)
        });
        self.after_trigger(now, p.entry);
    }
}
