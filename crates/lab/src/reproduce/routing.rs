//! Slot 7: the secure-routing results (throughput against payload size with and without encryption,
//! RIB-miss rate). Empty until the routing work fills it; its report says so.

use super::Ctx;
use crate::report::Report;

/// The empty slot's report: no figures, and why.
pub(super) fn run(ctx: &Ctx<'_>) -> Report {
    let mut r = Report::new(
        "routing",
        7,
        "Secure location-independent routing (slot)",
        ctx.quick,
    );
    r.published = "The Global Data Plane's Rust router: 3.00 Gbit/s per core at 1766-byte payloads in clear and 1.12 Gbit/s encrypted, linear to 8 cores; throughput against payload size with and without encryption, and the rate of RIB misses.".into();
    r.setup = "Nothing is measured yet: this slot is kept for the secure-routing work (docs/design.md §7), which adds routing certificates, the routing information service and route-miss handling. Its reproduction will plug in here with the same report format.".into();
    r.findings
        .push("EMPTY SLOT: no Nameway figure exists for this result yet.".into());
    r
}
