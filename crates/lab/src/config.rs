//! Each forwarder's configuration file: namewayd's (the node's fragment merged over
//! `[defaults] config`, then what the lab owns: listeners, one `[[face]]` per link with the
//! link's faults, the routes, the identities of secure links) and NFD's.

use std::collections::HashMap;

use toml::{Table, Value};

use crate::error::TopologyError;
use crate::plan::{Plan, IP_UDP_HEADERS, NDN_PORT};
use crate::topology::{Secure, Topology};

/// Keys of `[faces]` the lab sets itself.
const LAB_FACE_KEYS: [&str; 3] = ["unix", "udp", "tcp"];

/// PIT capacity of lab forwarders unless their fragment sets one: enough for any experiment
/// here, and 50 forwarders do not reserve room for a million entries each.
const LAB_PIT_CAPACITY: i64 = 65_536;

/// Public keys of the nodes that have secure links (hexadecimal), by node index.
pub type Identities = HashMap<usize, String>;

/// namewayd's configuration for forwarder `node`.
///
/// # Errors
/// The fragment is not TOML, or sets a key the lab owns.
pub fn namewayd(
    t: &Topology,
    plan: &Plan,
    node: usize,
    ids: &Identities,
) -> Result<String, TopologyError> {
    let n = &t.nodes[node];
    let ctx = format!("node {}", n.name);
    let parse = |text: &str, what: &str| {
        text.parse::<Table>().map_err(|e| {
            TopologyError::invalid(
                &ctx,
                format!("{what} is not TOML: {}", e.message().replace('\n', " ")),
            )
        })
    };
    let mut table = parse(&t.defaults.config, "[defaults] config")?;
    merge(&mut table, parse(&n.config, "config")?);
    let p = &plan.nodes[node];

    let mut faces = take_table(&mut table, "faces");
    for key in LAB_FACE_KEYS {
        if faces.contains_key(key) {
            return Err(TopologyError::invalid(
                ctx,
                format!("config sets faces.{key}, which the lab sets"),
            ));
        }
    }
    faces.insert("unix".into(), Value::String(p.socket.display().to_string()));
    faces.insert("udp".into(), strings([format!("0.0.0.0:{NDN_PORT}")]));
    faces.insert("tcp".into(), strings([format!("127.0.0.1:{NDN_PORT}")]));
    let mtu = p
        .interfaces
        .iter()
        .map(|i| t.links[i.link].mtu)
        .min()
        .unwrap_or(1500);
    faces
        .entry("udp_mtu")
        .or_insert(Value::Integer(i64::from(mtu - IP_UDP_HEADERS)));
    table.insert("faces".into(), Value::Table(faces));
    let mut forwarder = take_table(&mut table, "forwarder");
    forwarder
        .entry("pit_capacity")
        .or_insert(Value::Integer(LAB_PIT_CAPACITY));
    table.insert("forwarder".into(), Value::Table(forwarder));

    let mut secure_peers = Vec::new();
    let mut face_list = Vec::new();
    for (k, iface) in p.interfaces.iter().enumerate() {
        let link = &t.links[iface.link];
        let mut face = Table::new();
        face.insert("uri".into(), Value::String(iface.peer_uri()));
        if let Some(mode) = link.secure {
            // One side starts the handshake: the node later in the file, which the lab starts
            // once the other is up, so that the other's own face for the link exists before
            // the first handshake arrives (else it would make one on demand, without the
            // link's faults). The other side answers on its plain face, which then encrypts
            // like any secure face.
            if is_initiator(node, iface.peer) {
                face.insert("secure".into(), Value::Boolean(true));
                face.insert("link_wide".into(), Value::Boolean(mode == Secure::LinkWide));
            }
            if let Some(key) = ids.get(&iface.peer) {
                secure_peers.push(key.clone());
            }
        }
        if link.is_impaired() {
            let mut fault = Table::new();
            fault.insert("delay_ms".into(), int(link.delay_ms));
            fault.insert("jitter_ms".into(), int(link.jitter_ms));
            fault.insert("loss".into(), Value::Float(link.loss));
            // Each direction of each link draws its own losses, the same in every run.
            fault.insert(
                "seed".into(),
                int((iface.link as u64) * 2 + u64::from(k > 0) + 1),
            );
            face.insert("fault".into(), Value::Table(fault));
        }
        face_list.push(Value::Table(face));
    }
    append(&mut table, "face", face_list);

    let routes = plan
        .routes
        .iter()
        .filter(|r| r.node == node)
        .filter_map(|r| {
            let iface = plan.interface(node, r.link)?;
            let mut route = Table::new();
            route.insert("prefix".into(), Value::String(r.prefix.clone()));
            route.insert("face".into(), Value::String(iface.peer_uri()));
            route.insert("cost".into(), int(r.cost));
            Some(Value::Table(route))
        })
        .collect();
    append(&mut table, "route", routes);

    if !secure_peers.is_empty() {
        let mut security = take_table(&mut table, "security");
        if security.contains_key("identity") {
            return Err(TopologyError::invalid(
                ctx,
                "config sets security.identity, which the lab sets for secure links",
            ));
        }
        security.insert(
            "identity".into(),
            Value::String(p.dir.join("identity.key").display().to_string()),
        );
        let trusted = security
            .entry("trusted_peers")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = trusted {
            list.extend(secure_peers.into_iter().map(Value::String));
        }
        table.insert("security".into(), Value::Table(security));
    }
    Ok(table.to_string())
}

/// Whether `node` starts the handshake of a secure link with `peer`.
pub fn is_initiator(node: usize, peer: usize) -> bool {
    node > peer
}

/// NFD's configuration (INFO format) for forwarder `node`: its Unix socket, UDP on every
/// address, a 65536-packet LRU store, best-route, any signed command allowed.
pub fn nfd(t: &Topology, plan: &Plan, node: usize) -> String {
    let p = &plan.nodes[node];
    let mtu = p
        .interfaces
        .iter()
        .map(|i| t.links[i.link].mtu)
        .min()
        .unwrap_or(1500)
        .saturating_sub(IP_UDP_HEADERS)
        // NFD accepts 64..=8800.
        .min(8800);
    format!(
        "log\n{{\n  default_level WARN\n}}\ntables\n{{\n  cs_max_packets 65536\n  cs_policy lru\n  cs_unsolicited_policy drop-all\n  strategy_choice\n  {{\n    / /localhost/nfd/strategy/best-route\n    /localhost /localhost/nfd/strategy/multicast\n    /localhost/nfd /localhost/nfd/strategy/best-route\n  }}\n}}\nface_system\n{{\n  general\n  {{\n    enable_congestion_marking yes\n  }}\n  unix\n  {{\n    path {sock}\n  }}\n  tcp\n  {{\n    listen yes\n    port {NDN_PORT}\n    enable_v4 yes\n    enable_v6 no\n  }}\n  udp\n  {{\n    listen yes\n    port {NDN_PORT}\n    enable_v4 yes\n    enable_v6 no\n    unicast_mtu {mtu}\n    mcast no\n  }}\n  ether\n  {{\n    listen no\n    mcast no\n  }}\n}}\nauthorizations\n{{\n  authorize\n  {{\n    certfile any\n    privileges\n    {{\n      faces\n      fib\n      cs\n      strategy-choice\n    }}\n  }}\n}}\nrib\n{{\n  localhost_security\n  {{\n    trust-anchor\n    {{\n      type any\n    }}\n  }}\n  prefix_announcement_validation\n  {{\n    trust-anchor\n    {{\n      type any\n    }}\n  }}\n}}\n",
        sock = p.socket.display(),
    )
}

fn int(v: u64) -> Value {
    Value::Integer(i64::try_from(v).unwrap_or(i64::MAX))
}

fn strings<const N: usize>(items: [String; N]) -> Value {
    Value::Array(items.into_iter().map(Value::String).collect())
}

/// Takes `table[key]` out as a table (empty when absent or not a table: the configuration
/// check then reports the user's key); put it back with `insert`.
fn take_table(table: &mut Table, key: &str) -> Table {
    match table.remove(key) {
        Some(Value::Table(t)) => t,
        _ => Table::new(),
    }
}

/// Appends `items` to the array of tables `table[key]`.
fn append(table: &mut Table, key: &str, items: Vec<Value>) {
    if items.is_empty() {
        return;
    }
    match table.entry(key).or_insert_with(|| Value::Array(Vec::new())) {
        Value::Array(list) => list.extend(items),
        other => *other = Value::Array(items),
    }
}

/// Merges `over` into `base`: tables key by key, everything else replaced.
fn merge(base: &mut Table, over: Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn topo() -> Topology {
        Topology::parse(
            r#"
[defaults]
config = "[cs]\ncapacity = 10\nadmit = false\n[log]\nlevel = \"warn\"\n"
[[node]]
name = "a"
config = "[cs]\ncapacity = 20\n[[route]]\nprefix = \"/null\"\nface = \"null://\"\n"
[[node]]
name = "b"
[[link]]
a = "a"
b = "b"
delay_ms = 5
jitter_ms = 1
loss = 0.1
mtu = 9000
secure = "per-prefix"
[[route]]
prefix = "/b"
to = "b"
"#,
            "t",
        )
        .unwrap()
    }

    #[test]
    fn fragments_merge_and_the_lab_adds_faces_routes_and_trust() {
        let t = topo();
        let plan = Plan::new(&t, Path::new("/lab"));
        let ids = Identities::from([(1, "ab".repeat(32))]);
        // a (node 0) answers b's handshake: a plain face, but a's identity and b's key.
        let text = namewayd(&t, &plan, 0, &ids).unwrap();
        let c: Table = text.parse().unwrap();
        assert_eq!(c["cs"]["capacity"].as_integer(), Some(20));
        assert_eq!(c["cs"]["admit"].as_bool(), Some(false));
        assert_eq!(c["log"]["level"].as_str(), Some("warn"));
        assert_eq!(c["faces"]["unix"].as_str(), Some("/lab/t/nodes/a/nfd.sock"));
        assert_eq!(c["faces"]["udp_mtu"].as_integer(), Some(8972));
        let face = &c["face"][0];
        assert_eq!(face["uri"].as_str(), Some("udp4://10.0.0.2:6363"));
        assert_eq!(face.get("secure"), None);
        assert_eq!(face["fault"]["delay_ms"].as_integer(), Some(5));
        assert_eq!(face["fault"]["loss"].as_float(), Some(0.1));
        // The user's route stays, the lab's is added.
        assert_eq!(c["route"][0]["face"].as_str(), Some("null://"));
        assert_eq!(c["route"][1]["prefix"].as_str(), Some("/b"));
        assert_eq!(c["route"][1]["face"].as_str(), Some("udp4://10.0.0.2:6363"));
        assert_eq!(
            c["security"]["trusted_peers"][0].as_str(),
            Some("ab".repeat(32).as_str())
        );
        assert_eq!(
            c["security"]["identity"].as_str(),
            Some("/lab/t/nodes/a/identity.key")
        );
        // b has no route and a's key is unknown here: no trusted peer.
        let b: Table = namewayd(&t, &plan, 1, &Identities::new())
            .unwrap()
            .parse()
            .unwrap();
        assert!(b.get("route").is_none());
        assert!(b.get("security").is_none());
        assert_eq!(b["faces"]["unix"].as_str(), Some("/lab/t/nodes/b/nfd.sock"));
    }

    #[test]
    fn keys_the_lab_owns_are_refused() {
        let mut t = topo();
        t.nodes[1].config = "[faces]\nunix = \"/x\"\n".into();
        let plan = Plan::new(&t, Path::new("/lab"));
        let err = namewayd(&t, &plan, 1, &Identities::new())
            .unwrap_err()
            .to_string();
        assert_eq!(err, "node b: config sets faces.unix, which the lab sets");
        t.nodes[1].config = "[cs\n".into();
        let err = namewayd(&t, &plan, 1, &Identities::new())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("node b: config is not TOML"), "{err}");
    }

    #[test]
    fn nfd_listens_on_its_socket_with_the_link_mtu() {
        let t = topo();
        let plan = Plan::new(&t, Path::new("/lab"));
        let conf = nfd(&t, &plan, 1);
        assert!(conf.contains("path /lab/t/nodes/b/nfd.sock"));
        // The link's 9000 less 28, but NFD takes at most 8800.
        assert!(conf.contains("unicast_mtu 8800"));
    }
}
