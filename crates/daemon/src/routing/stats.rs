//! The routing counters, declared once with [`crate::stats!`]: `/metrics`, `/api/status`
//! (`routing`), the `routing/status` dataset and `nameway routing list` all come from here.

use std::collections::BTreeMap;

crate::stats! {
    /// Secure routing (`[routing]`): verifications, look-ups, first-hop misses,
    /// announcements, registrations and the RIB service.
    pub struct RoutingStats {
        /// `off` or `secure`.
        pub mode: String = info("nameway_routing_info"; by "mode")
            help "Secure routing: mode, miss handling and this router's name",
        /// `hold` or `nack`.
        pub miss: String = info("nameway_routing_info"; by "miss"),
        /// This router's name, `sc:<hex>`.
        pub router: String = info("nameway_routing_info"; by "router"),
        /// Signatures checked (announcements, locator records, owners of announced names).
        pub signatures_verified: u64 = counter("nameway_routing_sigverify"),
        /// Chains accepted after a full verification.
        pub chains_verified: u64 = counter("nameway_routing_chains_verified"),
        /// Chains accepted from the verified-chain cache, with no signature checked.
        pub cache_hits: u64 = counter("nameway_routing_cache_hits", "cache" = "chain")
            help "Verifications answered from a cache, with no signature checked",
        /// Locator records accepted from the locator cache.
        pub locator_cache_hits: u64 = counter("nameway_routing_cache_hits", "cache" = "locator"),
        /// RIB answers refused by the first hop, by reason (every reason, zeros included).
        pub rejected_lookups: BTreeMap<&'static str, u64> = counter("nameway_routing_rejected", "where" = "lookup"; by "reason")
            help "Chains and announcements refused, by where and why",
        /// Registrations refused by this RIB service, by reason.
        pub rejected_registrations: BTreeMap<&'static str, u64> = counter("nameway_routing_rejected", "where" = "rib_service"; by "reason"),
        /// `rib/announce` and `rib/register` of self-certifying names refused, by reason
        /// (`name_key_mismatch` is the hijack).
        pub rejected_announcements: BTreeMap<&'static str, u64> = counter("nameway_routing_rejected", "where" = "announce"; by "reason"),
        /// Interests held at the first hop until their route is verified.
        pub misses_held: u64 = counter("nameway_routing_misses", "action" = "held")
            help "First-hop Interests for unresolved self-certifying names",
        /// Interests answered with Nack NoRoute at the first hop (nack mode, no such name,
        /// overload, failed look-up).
        pub misses_nacked: u64 = counter("nameway_routing_misses", "action" = "nacked"),
        /// Interests given a ForwardingHint at the first hop.
        pub hinted: u64 = counter("nameway_routing_hinted"),
        /// Nacks NoRoute from a delegate that started a new look-up (the producer moved).
        pub upstream_nacks: u64 = counter("nameway_routing_upstream_nacks"),
        /// Look-ups started (one per name at a time).
        pub lookups: u64 = counter("nameway_routing_lookups"),
        /// Look-up Interests sent, first attempts and retries.
        pub lookup_queries: u64 = counter("nameway_routing_lookup_queries"),
        /// Look-ups ended, by result: `found`, `not_found`, `rejected`, `timed_out`.
        pub lookup_results: BTreeMap<&'static str, u64> = counter("nameway_routing_lookup_results"; by "result"),
        /// Misses answered from the negative cache (no look-up sent).
        pub negative_hits: u64 = counter("nameway_routing_negative_hits"),
        /// Misses refused because `max_pending` look-ups were pending.
        pub overloaded: u64 = counter("nameway_routing_overloaded"),
        /// Look-ups queued or in flight now.
        pub pending: usize = gauge("nameway_routing_pending_lookups"),
        /// Verified routes held by the first hop.
        pub routes: usize = gauge("nameway_routing_routes"),
        /// Route changes: `installed`, `replaced` (a newer version: mobility), `expired`,
        /// `evicted`.
        pub route_changes: BTreeMap<&'static str, u64> = counter("nameway_routing_route_changes"; by "change"),
        /// Faces created toward delegate routers (from their locator records).
        pub delegate_faces: u64 = counter("nameway_routing_delegate_faces"),
        /// `rib/announce` commands accepted: `self_certifying` or `plain`.
        pub announcements: BTreeMap<&'static str, u64> = counter("nameway_routing_announcements"; by "kind"),
        /// Names this router registers with the RIB services and renews.
        pub announced_names: usize = gauge("nameway_routing_announced_names"),
        /// Registrations sent to RIB services, by reply: `stored`, `not_newer`, `refused`,
        /// `no_answer`.
        pub registrations: BTreeMap<&'static str, u64> = counter("nameway_routing_registrations"; by "reply"),
        /// RIB service: look-ups answered, by answer (`found`, `not_found`).
        pub service_lookups: BTreeMap<&'static str, u64> = counter("nameway_rib_service_lookups"; by "answer"),
        /// RIB service: registrations, by outcome (`stored`, `not_newer`, `refused`,
        /// `malformed`).
        pub service_registrations: BTreeMap<&'static str, u64> = counter("nameway_rib_service_registrations"; by "outcome"),
        /// RIB service: names in the registry.
        pub service_names: usize = gauge("nameway_rib_service_names"),
    }
}
