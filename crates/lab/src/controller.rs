//! A controller in the lab: the topology's `[controller]` section, its out-of-band management
//! network, the `[controller]` block of every forwarder's configuration, and the
//! `namewayctl` commands that make the domain, the tokens and the running service.
//!
//! ```toml
//! [controller]
//! domain = "/lab"              # the routers are /lab/<node>
//! args = ["--max-nexthops", "2"]   # more `namewayctl serve` arguments
//! ```
//!
//! The management network is a namespace `nwl-<lab>-ctl` holding a bridge `br0`
//! (172.31.0.1/16, where `namewayctl serve` listens) and, per forwarder, one veth pair: `mgmt0`
//! in the forwarder's namespace (172.31.0.2 for the first forwarder, then on) and `m<k>` on
//! the bridge. The data links (10.0.0.0/8) never carry the controller's channel, and the
//! channel never carries data: as operators run a controller. Links between forwarders must
//! be secure: the agents find their neighbours by the hellos on secure faces.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Deserialize;
use toml::{Table, Value};

use crate::error::{LabError, TopologyError};
use crate::net::{missing, one_line};
use crate::plan::{netns_prefix, Plan};
use crate::topology::{NodeKind, Topology};

/// The port `namewayctl serve` listens on for agents, on the management bridge.
pub const CTL_PORT: u16 = 7400;
/// The name the controller's namespace and folder take (no node may have it).
pub const CTL_NODE: &str = "ctl";
/// The management bridge's address (the controller's).
pub const CTL_ADDR: Ipv4Addr = Ipv4Addr::new(172, 31, 0, 1);
/// Keys of a node's `[controller]` the lab sets itself.
const LAB_CTL_KEYS: [&str; 5] = ["uri", "key", "name", "token", "state_dir"];
/// `namewayctl serve` options the lab sets itself.
const LAB_SERVE_ARGS: [&str; 3] = ["--db", "--listen", "--ca"];
/// A well-formed pin that pins nothing: the configurations are checked with it before the
/// controller runs (it prints the real one when it starts).
pub const PLACEHOLDER_PIN: &str =
    "ed25519:0000000000000000000000000000000000000000000000000000000000000000";

/// `[controller]` of a topology file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerSection {
    /// The domain (`namewayctl init --domain`); router `r1` is `<domain>/r1`.
    #[serde(default = "default_domain")]
    pub domain: String,
    /// More arguments for `namewayctl serve`.
    #[serde(default)]
    pub args: Vec<String>,
}

fn default_domain() -> String {
    "/lab".into()
}

impl ControllerSection {
    /// Checks the section against the topology.
    ///
    /// # Errors
    /// One line naming the section, node or link at fault.
    pub fn validate(&self, t: &Topology) -> Result<(), TopologyError> {
        let ctx = "[controller]";
        let name = self.domain.parse::<nameway_wire::Name>().map_err(|e| {
            TopologyError::invalid(
                ctx,
                format!("domain {:?} is not an NDN name ({e})", self.domain),
            )
        })?;
        if name.is_empty() {
            return Err(TopologyError::invalid(
                ctx,
                "domain must have a component, as /lab",
            ));
        }
        if let Some(a) = self.args.iter().find(|a| {
            LAB_SERVE_ARGS
                .iter()
                .any(|k| *a == k || a.starts_with(&format!("{k}=")))
        }) {
            return Err(TopologyError::invalid(
                ctx,
                format!("args set {a}, which the lab sets"),
            ));
        }
        for n in &t.nodes {
            if n.name == CTL_NODE {
                return Err(TopologyError::invalid(
                    format!("node {}", n.name),
                    "the name is the controller's namespace's: choose another",
                ));
            }
            if n.kind == NodeKind::Nfd {
                return Err(TopologyError::invalid(
                    format!("node {}", n.name),
                    "NFD nodes cannot join the lab's controller (not done): use nameway nodes",
                ));
            }
        }
        for l in &t.links {
            if l.secure.is_none() {
                return Err(TopologyError::invalid(
                    l.label(),
                    "with a [controller], links must be secure (secure = \"per-prefix\"): the agents find neighbours by hellos on secure faces",
                ));
            }
        }
        let forwarders = t.nodes.iter().filter(|n| n.kind.is_forwarder()).count();
        if forwarders > 65_000 {
            return Err(TopologyError::invalid(
                ctx,
                "more forwarders than 172.31.0.0/16 holds",
            ));
        }
        Ok(())
    }
}

/// The controller's namespace in lab `lab`.
pub fn netns(lab: &str) -> String {
    format!("{}{CTL_NODE}", netns_prefix(lab))
}

/// The management address of the `k`-th forwarder (in file order, from 0).
pub fn mgmt_addr(k: usize) -> Ipv4Addr {
    let base = u32::from(CTL_ADDR) + 1;
    Ipv4Addr::from(base + u32::try_from(k).unwrap_or(0))
}

/// The controller's folder (its database, anchor key and tokens): removed with the nodes'.
pub fn dir(plan: &Plan) -> PathBuf {
    plan.dir.join("nodes").join(CTL_NODE)
}

/// The controller's log.
pub fn log(plan: &Plan) -> PathBuf {
    plan.dir.join("logs").join("ctl.log")
}

/// The database file.
pub fn db(plan: &Plan) -> PathBuf {
    dir(plan).join("ctl.db")
}

/// Router name of node `name`.
pub fn router_name(section: &ControllerSection, name: &str) -> String {
    format!("{}/{name}", section.domain.trim_end_matches('/'))
}

/// The `ip -batch` lines (root namespace, after the namespaces exist, then the controller's)
/// that make the management network; each forwarder's own lines come from [`node_batch`].
pub fn root_batch(plan: &Plan) -> (String, String) {
    let ctl = netns(&plan.lab);
    let mut root = String::new();
    let mut inside = format!(
        "link set lo up\nlink add name br0 type bridge\nlink set br0 up\naddr add {CTL_ADDR}/16 dev br0\n"
    );
    for (k, n) in plan
        .nodes
        .iter()
        .filter(|n| n.kind.is_forwarder())
        .enumerate()
    {
        root.push_str(&format!(
            "link add name mgmt0 netns {} type veth peer name m{k} netns {ctl}\n",
            n.netns
        ));
        inside.push_str(&format!("link set m{k} master br0 up\n"));
    }
    (root, inside)
}

/// The lines for forwarder number `k`'s namespace: `mgmt0` up with its address.
pub fn node_batch(k: usize) -> String {
    format!(
        "link set dev mgmt0 up\naddr add {}/16 dev mgmt0\n",
        mgmt_addr(k)
    )
}

/// Adds the lab's `[controller]` keys to a forwarder's configuration `table`.
///
/// # Errors
/// The fragment sets a key the lab sets.
pub fn add_agent_config(
    table: &mut Table,
    ctx: &str,
    router: &str,
    token: &str,
    pin: &str,
    state_dir: &Path,
) -> Result<(), TopologyError> {
    let mut ctl = match table.remove("controller") {
        Some(Value::Table(t)) => t,
        _ => Table::new(),
    };
    if let Some(k) = LAB_CTL_KEYS.iter().find(|k| ctl.contains_key(**k)) {
        return Err(TopologyError::invalid(
            ctx,
            format!("config sets controller.{k}, which the lab sets"),
        ));
    }
    ctl.insert(
        "uri".into(),
        Value::String(format!("tcp://{CTL_ADDR}:{CTL_PORT}")),
    );
    ctl.insert("key".into(), Value::String(pin.into()));
    ctl.insert("name".into(), Value::String(router.into()));
    ctl.insert("token".into(), Value::String(token.into()));
    ctl.insert(
        "state_dir".into(),
        Value::String(state_dir.display().to_string()),
    );
    table.insert("controller".into(), Value::Table(ctl));
    Ok(())
}

/// Runs `namewayctl ARGS` to its end; its standard output.
///
/// # Errors
/// It is missing or fails (its error output as one line).
pub async fn namewayctl(bin: &Path, args: &[&str]) -> Result<String, LabError> {
    let out = tokio::process::Command::new(bin)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|e| missing(&bin.display().to_string(), &e))?;
    if !out.status.success() {
        return Err(LabError::Command {
            command: format!("namewayctl {}", args.first().copied().unwrap_or_default()),
            detail: one_line(&out.stderr),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Waits for `namewayctl serve`'s pin (`anchor ed25519:...`) in its log.
///
/// # Errors
/// [`LabError::NotReady`] past `timeout`, with the end of the log.
pub async fn wait_pin(
    log: &Path,
    timeout: Duration,
    mut exited: impl FnMut() -> Result<(), LabError>,
) -> Result<String, LabError> {
    let deadline = Instant::now() + timeout;
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(pin) = text
            .lines()
            .find_map(|l| l.strip_prefix("anchor ").map(str::trim))
        {
            return Ok(pin.to_owned());
        }
        exited()?;
        if Instant::now() > deadline {
            return Err(LabError::NotReady {
                node: CTL_NODE.into(),
                seconds: timeout.as_secs(),
                detail: format!(
                    "namewayctl serve never printed its anchor; log: {}",
                    crate::process::log_tail(log, 3)
                ),
            });
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(extra: &str) -> Result<Topology, TopologyError> {
        Topology::parse(
            &format!(
                "[controller]\n{extra}\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[link]]\na = \"a\"\nb = \"b\"\nsecure = \"per-prefix\"\n"
            ),
            "t",
        )
    }

    #[test]
    fn the_section_is_checked_with_one_line_errors() {
        let t = topo("").unwrap();
        assert_eq!(t.controller.as_ref().unwrap().domain, "/lab");
        let err = |extra: &str| topo(extra).unwrap_err().to_string();
        assert_eq!(
            err("domain = \"/\""),
            "[controller]: domain must have a component, as /lab"
        );
        assert_eq!(
            err("args = [\"--listen\", \"0.0.0.0:1\"]"),
            "[controller]: args set --listen, which the lab sets"
        );
        assert!(
            err("port = 1").contains("unknown field `port`"),
            "{}",
            err("port = 1")
        );
        let plain = Topology::parse(
            "[controller]\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[link]]\na = \"a\"\nb = \"b\"\n",
            "t",
        )
        .unwrap_err()
        .to_string();
        assert!(
            plain.starts_with("link a-b: with a [controller], links must be secure"),
            "{plain}"
        );
        let ctl = Topology::parse("[controller]\n[[node]]\nname = \"ctl\"\n", "t")
            .unwrap_err()
            .to_string();
        assert!(
            ctl.starts_with("node ctl: the name is the controller's"),
            "{ctl}"
        );
    }

    #[test]
    fn the_management_network_and_the_agent_block() {
        let t = topo("domain = \"/d/\"").unwrap();
        let plan = Plan::new(&t, Path::new("/lab"));
        let (root, inside) = root_batch(&plan);
        assert!(root.starts_with("link add name mgmt0 netns nwl-t-a type veth peer name m0"));
        assert!(root.contains(
            "link add name mgmt0 netns nwl-t-b type veth peer name m1 netns nwl-t-ctl\n"
        ));
        assert!(inside.contains("addr add 172.31.0.1/16 dev br0\n"));
        assert!(inside.contains("link set m1 master br0 up\n"));
        assert_eq!(
            node_batch(1),
            "link set dev mgmt0 up\naddr add 172.31.0.3/16 dev mgmt0\n"
        );
        let section = t.controller.as_ref().unwrap();
        assert_eq!(router_name(section, "a"), "/d/a");
        let mut table: Table = "[controller]\nhello_interval_ms = 100\n".parse().unwrap();
        add_agent_config(
            &mut table,
            "node a",
            "/d/a",
            "tok",
            PLACEHOLDER_PIN,
            Path::new("/s"),
        )
        .unwrap();
        let c = &table["controller"];
        assert_eq!(c["uri"].as_str(), Some("tcp://172.31.0.1:7400"));
        assert_eq!(c["hello_interval_ms"].as_integer(), Some(100));
        assert_eq!(c["state_dir"].as_str(), Some("/s"));
        let mut bad: Table = "[controller]\ntoken = \"x\"\n".parse().unwrap();
        let e = add_agent_config(&mut bad, "node a", "/d/a", "t", "p", Path::new("/s"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "node a: config sets controller.token, which the lab sets"
        );
    }
}
