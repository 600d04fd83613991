//! The topology TOML file `namewayctl routes --topology` reads (until the agents report
//! links, phase 2).
//!
//! ```toml
//! max_nexthops = 2                # ECMP limit (default 2)
//! routers = ["/example/r9"]       # optional: routers without links
//!
//! [[link]]
//! a = "/example/r1"
//! b = "/example/r2"
//! cost = 10                       # default 1
//! face_a = 257                    # a's face toward b (default: b's index + 1)
//! face_b = 258
//! reported_by = "both"            # "both" (default), "a", "b": a link reported by one end is unused
//! up = true                       # default true
//!
//! [[prefix]]
//! name = "/example/video"
//! origin = "/example/r3"
//! face = 0                        # the origin's face toward the producer (default 0)
//! cost = 0
//! ```

use serde::Deserialize;

use crate::routes::{Origin, RouteEngine};
use crate::topology::{LinkReport, Topology};

/// Why a topology file was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyFileError {
    /// Not valid TOML of this shape.
    #[error("topology file: {0}")]
    Toml(String),
    /// A name that does not parse.
    #[error("topology file: {0:?} is not an NDN name")]
    BadName(String),
    /// `reported_by` other than both, a, b.
    #[error("topology file: reported_by {0:?} (use both, a or b)")]
    BadReporter(String),
    /// A prefix's origin is not a router of the file.
    #[error("topology file: origin {0} is not a router (give it a link or list it in routers)")]
    UnknownOrigin(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default = "default_nexthops")]
    max_nexthops: usize,
    #[serde(default)]
    routers: Vec<String>,
    #[serde(default)]
    link: Vec<Link>,
    #[serde(default)]
    prefix: Vec<Prefix>,
}

fn default_nexthops() -> usize {
    2
}

fn one() -> u32 {
    1
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Link {
    a: String,
    b: String,
    #[serde(default = "one")]
    cost: u32,
    face_a: Option<u64>,
    face_b: Option<u64>,
    reported_by: Option<String>,
    #[serde(default = "yes")]
    up: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Prefix {
    name: String,
    origin: String,
    #[serde(default)]
    face: u64,
    #[serde(default)]
    cost: u64,
}

/// Parses a topology file into an engine (not yet computed).
///
/// # Errors
/// [`TopologyFileError`].
pub fn parse_topology(text: &str) -> Result<RouteEngine, TopologyFileError> {
    let f: File =
        toml::from_str(text).map_err(|e| TopologyFileError::Toml(one_line(&e.to_string())))?;
    let mut topo = Topology::new();
    for r in &f.routers {
        topo.add_router(check_name(r)?);
    }
    for l in &f.link {
        let a = topo.add_router(check_name(&l.a)?);
        let b = topo.add_router(check_name(&l.b)?);
        let (by_a, by_b) = match l.reported_by.as_deref().unwrap_or("both") {
            "both" => (true, true),
            "a" => (true, false),
            "b" => (false, true),
            other => return Err(TopologyFileError::BadReporter(other.to_owned())),
        };
        if by_a {
            let face = l.face_a.unwrap_or(u64::from(b) + 1);
            topo.report(
                a,
                b,
                LinkReport {
                    face,
                    cost: l.cost,
                    up: l.up,
                },
            );
        }
        if by_b {
            let face = l.face_b.unwrap_or(u64::from(a) + 1);
            topo.report(
                b,
                a,
                LinkReport {
                    face,
                    cost: l.cost,
                    up: l.up,
                },
            );
        }
    }
    let mut engine = RouteEngine::new(topo, f.max_nexthops);
    for p in &f.prefix {
        let name = p
            .name
            .parse()
            .map_err(|_| TopologyFileError::BadName(p.name.clone()))?;
        let router = engine
            .topology()
            .id(&p.origin)
            .ok_or_else(|| TopologyFileError::UnknownOrigin(p.origin.clone()))?;
        engine.add_origin(
            name,
            Origin {
                router,
                face: p.face,
                cost: p.cost,
            },
        );
    }
    Ok(engine)
}

fn check_name(s: &str) -> Result<&str, TopologyFileError> {
    s.parse::<nameway_wire::Name>()
        .map(|_| s)
        .map_err(|_| TopologyFileError::BadName(s.to_owned()))
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
