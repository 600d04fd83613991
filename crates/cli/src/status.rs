//! `nameway status`: the forwarder's general status (`status/general`) with the number of
//! faces, FIB entries, RIB entries and routes (`faces/list`, `fib/list`, `rib/list`).

use nameway_wire::mgmt::{FaceStatus, FibEntry, ForwarderStatus, RibEntry};
use serde::Serialize;

use crate::client;
use crate::output::{iso_time, outln, print_fields, print_json, JsonFlag};

/// Arguments of `nameway status`.
#[derive(Debug, clap::Args)]
pub(crate) struct StatusArgs {
    #[command(flatten)]
    out: JsonFlag,
}

/// `nameway status --json`.
#[derive(Debug, Serialize)]
struct StatusView {
    version: String,
    start_timestamp_ms: u64,
    current_timestamp_ms: u64,
    uptime_s: u64,
    n_name_tree_entries: u64,
    n_fib_entries: u64,
    n_pit_entries: u64,
    n_measurements_entries: u64,
    n_cs_entries: u64,
    n_in_interests: u64,
    n_in_data: u64,
    n_in_nacks: u64,
    n_out_interests: u64,
    n_out_data: u64,
    n_out_nacks: u64,
    n_satisfied_interests: u64,
    n_unsatisfied_interests: u64,
    n_faces: usize,
    n_rib_entries: usize,
    n_routes: usize,
    n_next_hops: usize,
    /// Drops since start by reason, forwarder and link layer, faces that closed included
    /// (namewayd's `status/counters`; absent with another forwarder).
    #[serde(skip_serializing_if = "Option::is_none")]
    drops: Option<Drops>,
    /// Secure routing's counters (namewayd's `routing/status`; absent when routing is off).
    #[serde(skip_serializing_if = "Option::is_none")]
    routing: Option<serde_json::Value>,
    /// The controller agent's counters (namewayd's `status/counters`; absent when
    /// `[controller]` is off).
    #[serde(skip_serializing_if = "Option::is_none")]
    controller: Option<serde_json::Value>,
}

/// Drop totals by reason, zeros left out.
#[derive(Debug, Default, Serialize)]
struct Drops {
    forwarder: std::collections::BTreeMap<String, u64>,
    link: std::collections::BTreeMap<String, u64>,
}

impl Drops {
    /// From a `status/counters` document.
    fn from_counters(c: &serde_json::Value) -> Self {
        let nonzero = |v: &serde_json::Value| {
            v.as_object()
                .into_iter()
                .flatten()
                .filter_map(|(k, v)| Some((k.clone(), v.as_u64()?)))
                .filter(|(_, n)| *n > 0)
                .collect()
        };
        Self {
            forwarder: nonzero(&c["forwarder"]["drops"]),
            link: nonzero(&c["forwarder"]["link_drops"]),
        }
    }

    fn text(m: &std::collections::BTreeMap<String, u64>) -> String {
        if m.is_empty() {
            return "none".into();
        }
        m.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The table sizes `nameway status` shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TableCounts {
    faces: usize,
    rib_entries: usize,
    routes: usize,
    next_hops: usize,
}

impl TableCounts {
    /// Counted from the whole datasets (any NFD-compatible forwarder).
    fn from_lists(faces: &[FaceStatus], fib: &[FibEntry], rib: &[RibEntry]) -> Self {
        Self {
            faces: faces.len(),
            rib_entries: rib.len(),
            routes: rib.iter().map(|e| e.routes.len()).sum(),
            next_hops: fib.iter().map(|e| e.next_hops.len()).sum(),
        }
    }

    /// From namewayd's `status/counters` (`None` from a daemon that does not count them).
    fn from_counters(c: &serde_json::Value) -> Option<Self> {
        let n = |v: &serde_json::Value| v.as_u64().and_then(|n| usize::try_from(n).ok());
        let t = &c["tables"];
        Some(Self {
            faces: n(&c["face_system"]["faces"])?,
            rib_entries: n(&t["rib_entries"])?,
            routes: n(&t["routes"])?,
            next_hops: n(&t["next_hops"])?,
        })
    }
}

impl StatusView {
    fn new(s: ForwarderStatus, t: TableCounts) -> Self {
        Self {
            uptime_s: s.current_timestamp.saturating_sub(s.start_timestamp) / 1000,
            version: s.nfd_version,
            start_timestamp_ms: s.start_timestamp,
            current_timestamp_ms: s.current_timestamp,
            n_name_tree_entries: s.n_name_tree_entries,
            n_fib_entries: s.n_fib_entries,
            n_pit_entries: s.n_pit_entries,
            n_measurements_entries: s.n_measurements_entries,
            n_cs_entries: s.n_cs_entries,
            n_in_interests: s.n_in_interests,
            n_in_data: s.n_in_data,
            n_in_nacks: s.n_in_nacks,
            n_out_interests: s.n_out_interests,
            n_out_data: s.n_out_data,
            n_out_nacks: s.n_out_nacks,
            n_satisfied_interests: s.n_satisfied_interests,
            n_unsatisfied_interests: s.n_unsatisfied_interests,
            n_faces: t.faces,
            n_rib_entries: t.rib_entries,
            n_routes: t.routes,
            n_next_hops: t.next_hops,
            drops: None,
            routing: None,
            controller: None,
        }
    }

    fn print_text(&self) -> std::io::Result<()> {
        outln!("General forwarder status:")?;
        print_fields(&[
            ("version", self.version.clone()),
            ("startTime", iso_time(self.start_timestamp_ms)),
            ("currentTime", iso_time(self.current_timestamp_ms)),
            ("uptime", format!("{} seconds", self.uptime_s)),
            ("nNameTreeEntries", self.n_name_tree_entries.to_string()),
            ("nFibEntries", self.n_fib_entries.to_string()),
            ("nPitEntries", self.n_pit_entries.to_string()),
            (
                "nMeasurementsEntries",
                self.n_measurements_entries.to_string(),
            ),
            ("nCsEntries", self.n_cs_entries.to_string()),
            ("nInInterests", self.n_in_interests.to_string()),
            ("nOutInterests", self.n_out_interests.to_string()),
            ("nInData", self.n_in_data.to_string()),
            ("nOutData", self.n_out_data.to_string()),
            ("nInNacks", self.n_in_nacks.to_string()),
            ("nOutNacks", self.n_out_nacks.to_string()),
            (
                "nSatisfiedInterests",
                self.n_satisfied_interests.to_string(),
            ),
            (
                "nUnsatisfiedInterests",
                self.n_unsatisfied_interests.to_string(),
            ),
            ("nFaces", self.n_faces.to_string()),
            ("nRibEntries", self.n_rib_entries.to_string()),
            ("nRoutes", self.n_routes.to_string()),
            ("nNextHops", self.n_next_hops.to_string()),
        ])?;
        if let Some(d) = &self.drops {
            print_fields(&[
                ("drops", Drops::text(&d.forwarder)),
                ("linkDrops", Drops::text(&d.link)),
            ])?;
        }
        if let Some(r) = &self.routing {
            outln!("Secure routing:")?;
            crate::routing::print_counters(r)?;
        }
        if let Some(c) = &self.controller {
            outln!("Controller:")?;
            print_controller(c)?;
        }
        Ok(())
    }
}

/// The `controller` block: reachability, sessions, objects applied and refused, hellos and
/// certificate renewals.
fn print_controller(c: &serde_json::Value) -> std::io::Result<()> {
    let map = |v: &serde_json::Value| {
        let m: std::collections::BTreeMap<String, u64> = v
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.clone(), v.as_u64()?)))
            .collect();
        m
    };
    let nonzero = |v: &serde_json::Value| {
        let m = map(v).into_iter().filter(|(_, n)| *n > 0).collect();
        Drops::text(&m)
    };
    let all = |v: &serde_json::Value| {
        map(v)
            .iter()
            .map(|(k, n)| format!("{k}={n}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let num = |k: &str| c[k].as_u64().unwrap_or(0).to_string();
    print_fields(&[
        (
            "reachable",
            if c["reachable"].as_bool() == Some(true) {
                "yes".into()
            } else {
                "no".into()
            },
        ),
        ("sessions", num("sessions")),
        ("sessionFailures", nonzero(&c["session_failures"])),
        ("refusedByController", num("refused_by_controller")),
        ("objectsApplied", all(&c["objects_applied"])),
        ("objectsRefused", nonzero(&c["objects_refused"])),
        ("appliedVersion", all(&c["applied_version"])),
        (
            "hellos",
            format!(
                "sent={} answered={} received={}",
                num("hellos_sent"),
                num("hellos_answered"),
                num("hellos_received")
            ),
        ),
        ("neighboursDead", num("neighbours_dead")),
        ("renewals", all(&c["renewals"])),
        ("csTiersApplied", num("cs_tiers_applied")),
        ("csTiersRefused", nonzero(&c["cs_tiers_refused"])),
    ])
}

/// Runs `nameway status`.
///
/// # Errors
/// The forwarder cannot be reached or answers with something that does not decode.
pub(crate) async fn run(transport: Option<&str>, args: &StatusArgs) -> anyhow::Result<()> {
    let mut c = client::connect(transport).await?;
    let general = c.dataset("status", "general").await?;
    let status = ForwarderStatus::decode(&general)
        .map_err(|e| anyhow::Error::new(e).context("bad status/general dataset"))?;
    let nameway = status.nfd_version.starts_with("nameway");
    // namewayd counts its tables itself (`status/counters`): listing 10,000 faces only to
    // count them would take hundreds of milliseconds. NFD has no such dataset.
    let counters = if nameway {
        let raw = c.dataset("status", "counters").await?;
        let counters: serde_json::Value = serde_json::from_slice(&raw)
            .map_err(|e| anyhow::anyhow!("bad status/counters dataset: {e}"))?;
        Some(counters)
    } else {
        None
    };
    let mut view = match counters.as_ref().and_then(TableCounts::from_counters) {
        Some(t) => StatusView::new(status, t),
        None => {
            let faces: Vec<FaceStatus> = c.list("faces", "list").await?;
            let fib: Vec<FibEntry> = c.list("fib", "list").await?;
            let rib: Vec<RibEntry> = c.list("rib", "list").await?;
            StatusView::new(status, TableCounts::from_lists(&faces, &fib, &rib))
        }
    };
    if let Some(counters) = &counters {
        view.drops = Some(Drops::from_counters(counters));
        view.controller = Some(counters["controller"].clone()).filter(|c| !c.is_null());
        // Only a daemon with [routing] on answers routing/status.
        if let Ok(raw) = c.dataset("routing", "status").await {
            view.routing = serde_json::from_slice::<serde_json::Value>(&raw)
                .ok()
                .map(|s| s["stats"].clone());
        }
    }
    if args.out.json {
        print_json(&view)
    } else {
        Ok(view.print_text()?)
    }
}
