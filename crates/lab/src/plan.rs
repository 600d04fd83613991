//! From a checked topology to what will exist: namespace and interface names, addresses,
//! directories, and each forwarder's faces and routes.
//!
//! Every link `i` is a /30 out of 10.0.0.0/8 (`a` gets .1, `b` .2 of its block), and its veth
//! ends are created directly inside the two namespaces as `eth<k>` (the node's k-th link), so
//! nothing of a lab ever exists in the root namespace: deleting the namespaces deletes the links.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use crate::topology::{NodeKind, ResolvedRoute, Topology};

/// The UDP port every forwarder of a lab listens on.
pub const NDN_PORT: u16 = 6363;
/// IPv4 and UDP headers: a UDP face's MTU is the link's less this.
pub const IP_UDP_HEADERS: u32 = 28;

/// One end of a link, on one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interface {
    /// Name inside the node's namespace (`eth0`, ...).
    pub name: String,
    /// This end's address (a /30).
    pub addr: Ipv4Addr,
    /// The other end's address.
    pub peer_addr: Ipv4Addr,
    /// The node at the other end.
    pub peer: usize,
    /// Index of the link in [`Topology::links`].
    pub link: usize,
}

impl Interface {
    /// The UDP FaceUri of the neighbour behind this interface.
    pub fn peer_uri(&self) -> String {
        format!("udp4://{}:{NDN_PORT}", self.peer_addr)
    }
}

/// Where a node lives.
#[derive(Clone, Debug)]
pub struct NodePlan {
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: NodeKind,
    /// The network namespace it runs in (an app: its forwarder's).
    pub netns: String,
    /// Its directory (configuration, socket, keys); removed by teardown.
    pub dir: PathBuf,
    /// Its log file; kept after teardown.
    pub log: PathBuf,
    /// The Unix socket of the forwarder it uses (an app: its forwarder's).
    pub socket: PathBuf,
    /// Its links (forwarders only).
    pub interfaces: Vec<Interface>,
    /// Index of the forwarder an app runs on; a forwarder's own index.
    pub host: usize,
}

/// Everything a lab will create, derived from a topology and a root directory.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The lab's name.
    pub lab: String,
    /// `<root>/<lab>`.
    pub dir: PathBuf,
    /// Per node, in topology order.
    pub nodes: Vec<NodePlan>,
    /// Routes per forwarder.
    pub routes: Vec<ResolvedRoute>,
    /// The controller's namespace, when the topology has a `[controller]`.
    pub ctl_netns: Option<String>,
}

/// The namespace of `node` in lab `lab`.
pub fn netns_name(lab: &str, node: &str) -> String {
    format!("{}{node}", netns_prefix(lab))
}

/// What every namespace of lab `lab` starts with (so leftovers can be found by name).
pub fn netns_prefix(lab: &str) -> String {
    format!("nwl-{lab}-")
}

/// The two addresses of link `i`: `a`'s and `b`'s.
pub fn link_addrs(i: usize) -> (Ipv4Addr, Ipv4Addr) {
    let base = 0x0a00_0000u32 + u32::try_from(i).unwrap_or(0) * 4;
    (Ipv4Addr::from(base + 1), Ipv4Addr::from(base + 2))
}

impl Plan {
    /// The plan of `t` under `root` (`<root>/<lab>/nodes/<node>`, `<root>/<lab>/logs`).
    ///
    /// `t` must have been validated ([`Topology::parse`] does it).
    pub fn new(t: &Topology, root: &Path) -> Self {
        let lab = t.lab_name().to_owned();
        let dir = root.join(&lab);
        let mut nodes: Vec<NodePlan> = t
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| NodePlan {
                name: n.name.clone(),
                kind: n.kind,
                netns: netns_name(&lab, &n.name),
                dir: dir.join("nodes").join(&n.name),
                log: dir.join("logs").join(format!("{}.log", n.name)),
                socket: dir.join("nodes").join(&n.name).join("nfd.sock"),
                interfaces: Vec::new(),
                host: i,
            })
            .collect();
        for (i, l) in t.links.iter().enumerate() {
            let (Some(a), Some(b)) = (t.node_index(&l.a), t.node_index(&l.b)) else {
                continue;
            };
            let (addr_a, addr_b) = link_addrs(i);
            for (me, peer, addr, peer_addr) in [(a, b, addr_a, addr_b), (b, a, addr_b, addr_a)] {
                let k = nodes[me].interfaces.len();
                nodes[me].interfaces.push(Interface {
                    name: format!("eth{k}"),
                    addr,
                    peer_addr,
                    peer,
                    link: i,
                });
            }
        }
        for (i, n) in t.nodes.iter().enumerate() {
            if let Some(host) = n.on.as_deref().and_then(|h| t.node_index(h)) {
                let (netns, socket) = (nodes[host].netns.clone(), nodes[host].socket.clone());
                nodes[i].netns = netns;
                nodes[i].socket = socket;
                nodes[i].host = host;
            }
        }
        Self {
            lab,
            dir,
            nodes,
            // Validated: resolving cannot fail.
            routes: t.resolve_routes().unwrap_or_default(),
            ctl_netns: t
                .controller
                .as_ref()
                .map(|_| crate::controller::netns(t.lab_name())),
        }
    }

    /// The interface of `node` on link `link`.
    pub fn interface(&self, node: usize, link: usize) -> Option<&Interface> {
        self.nodes
            .get(node)?
            .interfaces
            .iter()
            .find(|i| i.link == link)
    }

    /// The node called `name`.
    pub fn node(&self, name: &str) -> Option<&NodePlan> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// Index of the node called `name`.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// The namespaces the lab creates (one per forwarder, then the controller's).
    pub fn namespaces(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|n| n.kind.is_forwarder())
            .map(|n| n.netns.clone())
            .chain(self.ctl_netns.clone())
            .collect()
    }

    /// The state file.
    pub fn state_file(&self) -> PathBuf {
        self.dir.join("state.json")
    }

    /// The first address of `node` (an app: its forwarder's), for `{addr:NODE}` in commands.
    pub fn addr(&self, node: usize) -> Option<Ipv4Addr> {
        let host = self.nodes.get(node)?.host;
        self.nodes.get(host)?.interfaces.first().map(|i| i.addr)
    }

    /// `command` with every `{addr:NODE}` replaced by that node's first address.
    pub fn expand(&self, command: &str) -> String {
        let mut out = String::with_capacity(command.len());
        let mut rest = command;
        while let Some(start) = rest.find("{addr:") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 6..];
            let Some(end) = after.find('}') else {
                out.push_str(&rest[start..]);
                return out;
            };
            match self.index(&after[..end]).and_then(|i| self.addr(i)) {
                Some(a) => out.push_str(&a.to_string()),
                None => out.push_str(&rest[start..start + 7 + end]),
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_interfaces_and_apps() {
        let t = Topology::parse(
            "[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[node]]\nname = \"c\"\n[[node]]\nname = \"app\"\nkind = \"app\"\non = \"c\"\ncommand = \"true\"\n[[link]]\na = \"a\"\nb = \"b\"\n[[link]]\na = \"b\"\nb = \"c\"\n",
            "x",
        )
        .unwrap();
        let p = Plan::new(&t, Path::new("/run/nameway-lab"));
        assert_eq!(p.nodes[1].netns, "nwl-x-b");
        let b = &p.nodes[1].interfaces;
        assert_eq!(b.len(), 2);
        assert_eq!(
            (b[0].name.as_str(), b[0].addr),
            ("eth0", Ipv4Addr::new(10, 0, 0, 2))
        );
        assert_eq!(
            (b[1].name.as_str(), b[1].addr),
            ("eth1", Ipv4Addr::new(10, 0, 0, 5))
        );
        assert_eq!(b[1].peer_uri(), "udp4://10.0.0.6:6363");
        // The app shares c's namespace and socket.
        assert_eq!(p.nodes[3].netns, "nwl-x-c");
        assert_eq!(p.nodes[3].socket, p.nodes[2].socket);
        assert_eq!(p.namespaces(), ["nwl-x-a", "nwl-x-b", "nwl-x-c"]);
        assert_eq!(
            p.expand("iperf3 -c {addr:c} -B {addr:app} {addr:zz} {addr:"),
            "iperf3 -c 10.0.0.6 -B 10.0.0.6 {addr:zz} {addr:"
        );
        assert_eq!(
            link_addrs(64),
            (Ipv4Addr::new(10, 0, 1, 1), Ipv4Addr::new(10, 0, 1, 2))
        );
    }
}
