//! The topology file: nodes, links, routes and scenario steps, checked as a whole before
//! anything is started (docs/lab.md has the format).
//!
//! ```toml
//! [[node]]
//! name = "r1"                      # kind = "nameway" (the default), "nfd" or "app"
//! config = "[cs]\ncapacity = 1000" # an inline namewayd configuration fragment
//!
//! [[node]]
//! name = "r2"
//!
//! [[node]]
//! name = "producer"
//! kind = "app"
//! on = "r2"                        # runs in r2's namespace, talking to r2's forwarder
//! command = "nameway ping-server /p"
//!
//! [[link]]
//! a = "r1"
//! b = "r2"
//! rate_mbps = 100                  # tbf on both ends of the veth pair (the kernel)
//! delay_ms = 5                     # each way, in the forwarders' faces (the fault injector)
//! loss = 0.01
//!
//! [[route]]
//! prefix = "/p"
//! to = "r2"                        # on every forwarder, toward r2 along a shortest path
//! ```

use std::collections::{HashMap, HashSet, VecDeque};

use serde::Deserialize;

use crate::error::TopologyError;

/// Most nodes in one lab.
pub const MAX_NODES: usize = 1000;

/// What runs on a node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    /// `namewayd` with the node's configuration fragment.
    #[default]
    Nameway,
    /// NFD, as `scripts/build-nfd.sh` built it.
    Nfd,
    /// Any command, run in another node's namespace and talking to that node's forwarder.
    App,
}

impl NodeKind {
    /// Whether the node runs a forwarder (and has a namespace of its own).
    pub fn is_forwarder(self) -> bool {
        !matches!(self, Self::App)
    }
}

/// A `[[node]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    /// Its name: 1 to 24 letters, digits, `-` or `_`.
    pub name: String,
    /// What runs on it.
    #[serde(default)]
    pub kind: NodeKind,
    /// `nameway` nodes: a namewayd configuration fragment, merged over `[defaults] config`.
    #[serde(default)]
    pub config: String,
    /// `app` nodes: the forwarder node whose namespace the command runs in.
    #[serde(default)]
    pub on: Option<String>,
    /// `app` nodes: the command, run by `sh -c`.
    #[serde(default)]
    pub command: Option<String>,
    /// `app` nodes: the lab waits until the app's output contains this text before going on
    /// (a producer that says it has registered its prefix, say).
    #[serde(default)]
    pub ready: Option<String>,
}

/// How a link's faces are secured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Secure {
    /// Handshake, then encrypt what each forwarder's `[[security.policy]]` protects.
    PerPrefix,
    /// Handshake, then encrypt every packet whole.
    LinkWide,
}

/// A `[[link]]`: a veth pair between two forwarder nodes, one UDP face on each side.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// One end.
    pub a: String,
    /// The other end.
    pub b: String,
    /// Rate of each direction in Mbit/s, enforced by a tbf qdisc on each veth end.
    #[serde(default)]
    pub rate_mbps: Option<f64>,
    /// The tbf queue in front of that rate, in KiB (default: 100 ms at the rate, at least 64).
    #[serde(default)]
    pub queue_kib: Option<u64>,
    /// One-way delay of each direction, in milliseconds (the sender's face; on a link with an
    /// NFD end, only the namewayd end's direction).
    #[serde(default)]
    pub delay_ms: u64,
    /// Up to this much more delay per packet, in milliseconds (never reorders).
    #[serde(default)]
    pub jitter_ms: u64,
    /// Probability that a packet is lost, each direction, 0 to 1.
    #[serde(default)]
    pub loss: f64,
    /// MTU of the veth pair (default 1500); the forwarders' UDP faces fragment to fit it.
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// Secure faces on both ends; the lab makes the identities and trusts them both ways.
    #[serde(default)]
    pub secure: Option<Secure>,
}

fn default_mtu() -> u32 {
    1500
}

impl Link {
    /// `link a-b`, for messages.
    pub fn label(&self) -> String {
        format!("link {}-{}", self.a, self.b)
    }

    /// Whether the link delays or loses packets (the faces' fault injector does that).
    pub fn is_impaired(&self) -> bool {
        self.delay_ms > 0 || self.jitter_ms > 0 || self.loss > 0.0
    }
}

/// A `[[route]]`: either one route on `node` through its neighbour `via`, or routes toward
/// node `to` along shortest paths (on `node` only, or on every other forwarder).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// Name prefix.
    pub prefix: String,
    /// The forwarder the route is installed on (with `to`: absent means every forwarder).
    #[serde(default)]
    pub node: Option<String>,
    /// The neighbour the route points to.
    #[serde(default)]
    pub via: Option<String>,
    /// The node the prefix is reached at.
    #[serde(default)]
    pub to: Option<String>,
    /// Routing cost.
    #[serde(default)]
    pub cost: u64,
}

impl Route {
    fn label(&self) -> String {
        format!("route {}", self.prefix)
    }
}

/// A `[[step]]` of a scenario (`nameway lab run`): a command run on a node, in order.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// The node whose namespace (and forwarder) the command uses.
    pub on: String,
    /// The command, run by `sh -c`.
    pub run: String,
    /// Seconds the step may take; past that it fails.
    #[serde(default = "default_step_timeout")]
    pub timeout_s: f64,
    /// The exit status that counts as success.
    #[serde(default)]
    pub expect_exit: i32,
    /// Start it and go on at once; it is stopped when the scenario ends.
    #[serde(default)]
    pub background: bool,
}

fn default_step_timeout() -> f64 {
    60.0
}

/// `[defaults]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    /// A namewayd configuration fragment every `nameway` node starts from.
    #[serde(default)]
    pub config: String,
}

/// A whole topology file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// The lab's name (namespaces are `nwl-<name>-<node>`); default: the file's stem.
    #[serde(default)]
    pub name: Option<String>,
    /// Settings for every node.
    #[serde(default)]
    pub defaults: Defaults,
    /// Nodes.
    #[serde(default, rename = "node")]
    pub nodes: Vec<Node>,
    /// Links.
    #[serde(default, rename = "link")]
    pub links: Vec<Link>,
    /// Static routes.
    #[serde(default, rename = "route")]
    pub routes: Vec<Route>,
    /// Scenario steps.
    #[serde(default, rename = "step")]
    pub steps: Vec<Step>,
    /// A controller every nameway node joins (`namewayctl serve` on a management network).
    #[serde(default)]
    pub controller: Option<crate::controller::ControllerSection>,
}

/// A route resolved to one forwarder and one neighbour.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedRoute {
    /// Index of the forwarder in [`Topology::nodes`].
    pub node: usize,
    /// Index of the link it goes out on in [`Topology::links`].
    pub link: usize,
    /// Name prefix.
    pub prefix: String,
    /// Cost.
    pub cost: u64,
}

const NAME_RULE: &str =
    "a name is 1 to 24 letters, digits, '-' or '_', starting with a letter or digit";
const LAB_RULE: &str =
    "a lab name is 1 to 16 lower-case letters, digits or '-', starting with a letter or digit";

impl Topology {
    /// Parses and checks a topology file; `stem` names the lab when the file does not.
    ///
    /// # Errors
    /// [`TopologyError`]: one line naming what is wrong.
    pub fn parse(text: &str, stem: &str) -> Result<Self, TopologyError> {
        let mut t: Self = toml::from_str(text).map_err(|e| syntax_error(text, &e))?;
        if t.name.is_none() {
            t.name = Some(stem.to_owned());
        }
        t.validate()?;
        Ok(t)
    }

    /// The lab's name.
    pub fn lab_name(&self) -> &str {
        self.name.as_deref().unwrap_or("lab")
    }

    /// Index of the node called `name`.
    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// Checks everything the types cannot.
    ///
    /// # Errors
    /// The first problem found, as one line.
    pub fn validate(&self) -> Result<(), TopologyError> {
        let lab = self.lab_name();
        if !is_lab_name(lab) {
            return Err(TopologyError::BadName {
                what: "lab",
                name: lab.to_owned(),
                rule: LAB_RULE,
            });
        }
        if self.nodes.is_empty() {
            return Err(TopologyError::Empty);
        }
        if self.nodes.len() > MAX_NODES {
            return Err(TopologyError::invalid(
                "topology",
                format!("{} nodes, at most {MAX_NODES}", self.nodes.len()),
            ));
        }
        self.check_nodes()?;
        self.check_links()?;
        self.resolve_routes()?;
        self.check_steps()?;
        match &self.controller {
            Some(c) => c.validate(self),
            None => Ok(()),
        }
    }

    fn check_nodes(&self) -> Result<(), TopologyError> {
        let mut seen = HashSet::new();
        for n in &self.nodes {
            if !is_node_name(&n.name) {
                return Err(TopologyError::BadName {
                    what: "node",
                    name: n.name.clone(),
                    rule: NAME_RULE,
                });
            }
            if !seen.insert(n.name.as_str()) {
                return Err(TopologyError::DuplicateNode(n.name.clone()));
            }
        }
        for n in &self.nodes {
            let ctx = format!("node {}", n.name);
            match n.kind {
                NodeKind::App => {
                    let Some(on) = &n.on else {
                        return Err(TopologyError::invalid(
                            ctx,
                            "an app needs `on`, the forwarder node it runs on",
                        ));
                    };
                    match self.node_index(on).map(|i| self.nodes[i].kind) {
                        None => {
                            return Err(TopologyError::UnknownNode {
                                context: ctx,
                                name: on.clone(),
                            })
                        }
                        Some(NodeKind::App) => {
                            return Err(TopologyError::invalid(
                                ctx,
                                format!("`on` names {on:?}, an app: name a forwarder"),
                            ))
                        }
                        Some(_) => {}
                    }
                    if n.command.as_deref().is_none_or(|c| c.trim().is_empty()) {
                        return Err(TopologyError::invalid(ctx, "an app needs a `command`"));
                    }
                    if !n.config.is_empty() {
                        return Err(TopologyError::invalid(
                            ctx,
                            "`config` is for nameway nodes; an app has a `command`",
                        ));
                    }
                }
                kind => {
                    if n.on.is_some() || n.command.is_some() || n.ready.is_some() {
                        return Err(TopologyError::invalid(
                            ctx,
                            "`on`, `command` and `ready` are for app nodes",
                        ));
                    }
                    if kind == NodeKind::Nfd && !n.config.is_empty() {
                        return Err(TopologyError::invalid(
                            ctx,
                            "`config` is a namewayd fragment: nfd nodes take none",
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    fn check_links(&self) -> Result<(), TopologyError> {
        let mut pairs = HashSet::new();
        for l in &self.links {
            let ctx = l.label();
            for end in [&l.a, &l.b] {
                let Some(i) = self.node_index(end) else {
                    return Err(TopologyError::UnknownNode {
                        context: ctx,
                        name: end.clone(),
                    });
                };
                if !self.nodes[i].kind.is_forwarder() {
                    return Err(TopologyError::invalid(
                        ctx,
                        format!("{end} is an app: link the forwarder it runs on"),
                    ));
                }
            }
            if l.a == l.b {
                return Err(TopologyError::SelfLink(l.a.clone()));
            }
            let key = if l.a < l.b {
                (&l.a, &l.b)
            } else {
                (&l.b, &l.a)
            };
            if !pairs.insert(key) {
                return Err(TopologyError::DuplicateLink(l.a.clone(), l.b.clone()));
            }
            check_link_values(l)?;
            let is_nfd = |e: &String| {
                self.node_index(e)
                    .is_some_and(|i| self.nodes[i].kind == NodeKind::Nfd)
            };
            if is_nfd(&l.a) && is_nfd(&l.b) && l.is_impaired() {
                return Err(TopologyError::invalid(ctx, "delay, jitter and loss are emulated by namewayd's faces, and both ends run NFD: put a nameway node between them"));
            }
            if let Some(end) = [&l.a, &l.b].into_iter().find(|e| is_nfd(e)) {
                if l.secure.is_some() {
                    return Err(TopologyError::invalid(
                        ctx,
                        format!("{end} runs NFD, which has no secure faces"),
                    ));
                }
            }
        }
        Ok(())
    }

    fn check_steps(&self) -> Result<(), TopologyError> {
        for (i, s) in self.steps.iter().enumerate() {
            let ctx = format!("step {} on {}", i + 1, s.on);
            let Some(n) = self.node_index(&s.on) else {
                return Err(TopologyError::UnknownNode {
                    context: ctx,
                    name: s.on.clone(),
                });
            };
            if !self.nodes[n].kind.is_forwarder() {
                return Err(TopologyError::invalid(ctx, "steps run on forwarder nodes"));
            }
            if !(s.timeout_s.is_finite() && s.timeout_s > 0.0) {
                return Err(TopologyError::invalid(ctx, "timeout_s must be above 0"));
            }
            if s.run.trim().is_empty() {
                return Err(TopologyError::invalid(ctx, "`run` is empty"));
            }
        }
        Ok(())
    }

    /// The links of forwarder `node`: (link index, neighbour index).
    pub fn neighbours(&self, node: usize) -> Vec<(usize, usize)> {
        let name = &self.nodes[node].name;
        self.links
            .iter()
            .enumerate()
            .filter_map(|(i, l)| {
                let other = if &l.a == name {
                    &l.b
                } else if &l.b == name {
                    &l.a
                } else {
                    return None;
                };
                self.node_index(other).map(|o| (i, o))
            })
            .collect()
    }

    /// Every `[[route]]` as routes on single forwarders.
    ///
    /// # Errors
    /// A route naming an unknown node, a `via` that is not a neighbour, a `to` that cannot be
    /// reached, a prefix that is not a name.
    pub fn resolve_routes(&self) -> Result<Vec<ResolvedRoute>, TopologyError> {
        let mut out = Vec::new();
        for r in &self.routes {
            let ctx = r.label();
            r.prefix
                .parse::<nameway_wire::Name>()
                .map_err(|e| TopologyError::invalid(&ctx, format!("not an NDN name ({e})")))?;
            let lookup = |name: &str| {
                self.node_index(name)
                    .filter(|&i| self.nodes[i].kind.is_forwarder())
                    .ok_or_else(|| TopologyError::UnknownNode {
                        context: ctx.clone(),
                        name: name.to_owned(),
                    })
            };
            match (&r.via, &r.to) {
                (Some(via), None) => {
                    let Some(node) = &r.node else {
                        return Err(TopologyError::invalid(
                            ctx,
                            "`via` needs `node`, the forwarder the route is on",
                        ));
                    };
                    let (n, v) = (lookup(node)?, lookup(via)?);
                    let Some(&(link, _)) = self.neighbours(n).iter().find(|(_, o)| *o == v) else {
                        return Err(TopologyError::invalid(
                            ctx,
                            format!("{via} is not a neighbour of {node}"),
                        ));
                    };
                    out.push(ResolvedRoute {
                        node: n,
                        link,
                        prefix: r.prefix.clone(),
                        cost: r.cost,
                    });
                }
                (None, Some(to)) => {
                    let target = lookup(to)?;
                    let next = self.next_hops_toward(target);
                    let sources: Vec<usize> = match &r.node {
                        Some(node) => vec![lookup(node)?],
                        None => (0..self.nodes.len())
                            .filter(|&i| i != target && self.nodes[i].kind.is_forwarder())
                            .collect(),
                    };
                    for n in sources {
                        if n == target {
                            continue;
                        }
                        let Some(link) = next[n] else {
                            return Err(TopologyError::invalid(
                                ctx,
                                format!("{to} cannot be reached from {}", self.nodes[n].name),
                            ));
                        };
                        out.push(ResolvedRoute {
                            node: n,
                            link,
                            prefix: r.prefix.clone(),
                            cost: r.cost,
                        });
                    }
                }
                _ => {
                    return Err(TopologyError::invalid(
                        ctx,
                        "give either `via` (with `node`) or `to`",
                    ))
                }
            }
        }
        Ok(out)
    }

    /// For every node, the link its shortest path toward `target` leaves by (breadth-first;
    /// ties go to the link listed first).
    fn next_hops_toward(&self, target: usize) -> Vec<Option<usize>> {
        let mut next = vec![None; self.nodes.len()];
        let mut seen = vec![false; self.nodes.len()];
        seen[target] = true;
        let mut queue = VecDeque::from([target]);
        let adjacency: HashMap<usize, Vec<(usize, usize)>> = (0..self.nodes.len())
            .map(|i| (i, self.neighbours(i)))
            .collect();
        while let Some(n) = queue.pop_front() {
            for &(link, o) in adjacency.get(&n).map(Vec::as_slice).unwrap_or_default() {
                if !seen[o] {
                    seen[o] = true;
                    next[o] = Some(link);
                    queue.push_back(o);
                }
            }
        }
        next
    }
}

fn check_link_values(l: &Link) -> Result<(), TopologyError> {
    let ctx = l.label();
    if let Some(rate) = l.rate_mbps {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(TopologyError::invalid(
                ctx,
                "rate_mbps must be above 0 (leave it out for no limit)",
            ));
        }
        if rate > 100_000.0 {
            return Err(TopologyError::invalid(
                ctx,
                "rate_mbps above 100000 (tbf's ceiling here)",
            ));
        }
    } else if l.queue_kib.is_some() {
        return Err(TopologyError::invalid(ctx, "queue_kib needs rate_mbps"));
    }
    if l.queue_kib == Some(0) {
        return Err(TopologyError::invalid(ctx, "queue_kib must be above 0"));
    }
    if !(0.0..=1.0).contains(&l.loss) {
        return Err(TopologyError::invalid(ctx, "loss must be between 0 and 1"));
    }
    if !(604..=65_535).contains(&l.mtu) {
        return Err(TopologyError::invalid(
            ctx,
            "mtu must be between 604 and 65535",
        ));
    }
    if l.delay_ms > 60_000 || l.jitter_ms > 60_000 {
        return Err(TopologyError::invalid(
            ctx,
            "delay_ms and jitter_ms must be at most 60000",
        ));
    }
    Ok(())
}

fn is_node_name(s: &str) -> bool {
    (1..=24).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && s.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
}

fn is_lab_name(s: &str) -> bool {
    (1..=16).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && s.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
}

/// A TOML error as one line: the node or link it is in when that can be told, the line, the
/// message.
fn syntax_error(text: &str, e: &toml::de::Error) -> TopologyError {
    let message = e.message().replace('\n', " ");
    let Some(span) = e.span() else {
        return TopologyError::Syntax(message);
    };
    let line = text
        .get(..span.start)
        .map_or(1, |t| t.matches('\n').count() + 1);
    let place = match enclosing_table(text, line) {
        Some(what) => format!("{what} (line {line})"),
        None => format!("line {line}"),
    };
    TopologyError::Syntax(format!("{place}: {message}"))
}

/// `node r1` or `link a-b` when `line` (from 1) is inside that `[[node]]` or `[[link]]`.
fn enclosing_table(text: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let upto = line.min(lines.len());
    let header = (0..upto)
        .rev()
        .find(|&i| lines[i].trim_start().starts_with('['))?;
    let kind = lines[header].trim();
    let end = (header + 1..lines.len())
        .find(|&i| lines[i].trim_start().starts_with('['))
        .unwrap_or(lines.len());
    let value = |key: &str| {
        lines[header + 1..end].iter().find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == key).then(|| v.trim().trim_matches('"').to_owned())
        })
    };
    match kind {
        "[[node]]" => value("name").map(|n| format!("node {n}")),
        "[[link]]" => Some(format!("link {}-{}", value("a")?, value("b")?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
