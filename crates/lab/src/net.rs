//! The emulated network: namespaces, veth pairs, addresses, MTUs and tbf rates, made and
//! removed with iproute2 in batches (one `ip` for the pairs, one `ip` and one `tc` per
//! namespace), so 50 nodes come up in well under a second.
//!
//! What this kernel offers (checked when the lab was written, docs/lab.md): `tbf`, `htb`,
//! `pfifo`, `clsact` and `ingress` qdiscs; no `netem`, `fq`, `fq_codel`, `cake`, `etf`, `sfq`
//! or `prio`. So rates are tbf on each veth end here, and delay, jitter and loss live in the
//! forwarders' faces (the fault injector).

use std::io::Write as _;
use std::process::{Command, Stdio};

use crate::error::LabError;
use crate::plan::Plan;
use crate::topology::Topology;

/// A token bucket on one veth end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tbf {
    /// Rate in bits per second.
    pub rate_bps: u64,
    /// Bucket size in bytes: what may leave at once.
    pub burst: u64,
    /// Queue in bytes in front of the bucket (drop-tail).
    pub limit: u64,
}

impl Tbf {
    /// The tbf of a link of `rate_mbps` with an MTU of `mtu` and `queue_kib` of buffer
    /// (default: 100 ms at the rate, at least 64 KiB). The bucket holds 1 ms at the rate, at
    /// least two frames: the kernel refills it by timer, and a smaller bucket caps the rate
    /// below the setting.
    pub fn new(rate_mbps: f64, mtu: u32, queue_kib: Option<u64>) -> Self {
        // Validated: 0 < rate <= 100000 Mbit/s.
        let rate_bps = (rate_mbps * 1e6).round() as u64;
        let frame = u64::from(mtu) + 14;
        let burst = (rate_bps / 8 / 1000).max(2 * frame);
        let limit = match queue_kib {
            Some(k) => k * 1024,
            None => (rate_bps / 8 / 10).max(64 * 1024),
        };
        Self {
            rate_bps,
            burst,
            limit: limit.max(burst),
        }
    }

    /// The `tc` arguments after `qdisc replace dev DEV root`.
    pub fn args(&self) -> String {
        format!(
            "tbf rate {}bit burst {} limit {}",
            self.rate_bps, self.burst, self.limit
        )
    }
}

/// Creates the namespaces and links of `plan`.
///
/// # Errors
/// [`LabError::Command`] with iproute2's message.
pub fn create(t: &Topology, plan: &Plan) -> Result<(), LabError> {
    let mut root = String::new();
    for ns in plan.namespaces() {
        root.push_str(&format!("netns add {ns}\n"));
    }
    for (i, l) in t.links.iter().enumerate() {
        let (Some(a), Some(b)) = (t.node_index(&l.a), t.node_index(&l.b)) else {
            continue;
        };
        let (Some(ia), Some(ib)) = (plan.interface(a, i), plan.interface(b, i)) else {
            continue;
        };
        root.push_str(&format!(
            "link add name {} netns {} type veth peer name {} netns {}\n",
            ia.name, plan.nodes[a].netns, ib.name, plan.nodes[b].netns
        ));
    }
    let mgmt = plan
        .ctl_netns
        .as_ref()
        .map(|ns| (ns, crate::controller::root_batch(plan)));
    if let Some((_, (lines, _))) = &mgmt {
        root.push_str(lines);
    }
    batch("ip", None, &root)?;
    if let Some((ns, (_, inside))) = &mgmt {
        batch("ip", Some(ns), inside)?;
    }
    for (k, node) in plan
        .nodes
        .iter()
        .filter(|n| n.kind.is_forwarder())
        .enumerate()
    {
        let mut ip = String::from("link set lo up\n");
        if mgmt.is_some() {
            ip.push_str(&crate::controller::node_batch(k));
        }
        let mut tc = String::new();
        for iface in &node.interfaces {
            let link = &t.links[iface.link];
            ip.push_str(&format!(
                "link set dev {} mtu {} up\n",
                iface.name, link.mtu
            ));
            ip.push_str(&format!("addr add {}/30 dev {}\n", iface.addr, iface.name));
            if let Some(rate) = link.rate_mbps {
                let tbf = Tbf::new(rate, link.mtu, link.queue_kib);
                tc.push_str(&format!(
                    "qdisc replace dev {} root {}\n",
                    iface.name,
                    tbf.args()
                ));
            }
        }
        batch("ip", Some(&node.netns), &ip)?;
        if !tc.is_empty() {
            batch("tc", Some(&node.netns), &tc)?;
        }
    }
    Ok(())
}

/// The network namespaces that exist.
///
/// # Errors
/// `ip netns list` failed.
pub fn namespaces() -> Result<Vec<String>, LabError> {
    let out = Command::new("ip")
        .args(["netns", "list"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| missing("ip", &e))?;
    if !out.status.success() {
        return Err(LabError::Command {
            command: "ip netns list".into(),
            detail: one_line(&out.stderr),
        });
    }
    // Lines are `name` or `name (id: 3)`.
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect())
}

/// Deletes namespaces (and with them the veth ends inside them, whose peers go too). Returns
/// the ones that existed.
///
/// # Errors
/// [`LabError::Command`] when one that exists cannot be deleted.
pub fn delete_namespaces(names: &[String]) -> Result<Vec<String>, LabError> {
    let existing = namespaces()?;
    let gone: Vec<String> = names
        .iter()
        .filter(|n| existing.contains(n))
        .cloned()
        .collect();
    if gone.is_empty() {
        return Ok(gone);
    }
    let script: String = gone.iter().map(|n| format!("netns del {n}\n")).collect();
    batch("ip", None, &script)?;
    Ok(gone)
}

/// Bytes received and sent so far by interface `dev` in namespace `netns` (the kernel's
/// counters: whatever the forwarder, and never a cached answer).
///
/// # Errors
/// `ip` fails or prints something unexpected.
pub async fn link_bytes(netns: &str, dev: &str) -> Result<(u64, u64), LabError> {
    let out = tokio::process::Command::new("ip")
        .args(["-n", netns, "-j", "-s", "link", "show", "dev", dev])
        .stdin(Stdio::null())
        .output()
        .await
        .map_err(|e| missing("ip", &e))?;
    let fail = |detail: String| LabError::Command {
        command: format!("ip -n {netns} -s link show dev {dev}"),
        detail,
    };
    if !out.status.success() {
        return Err(fail(one_line(&out.stderr)));
    }
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| fail(e.to_string()))?;
    let stats = &v[0]["stats64"];
    match (stats["rx"]["bytes"].as_u64(), stats["tx"]["bytes"].as_u64()) {
        (Some(rx), Some(tx)) => Ok((rx, tx)),
        _ => Err(fail("no stats64 in its output".into())),
    }
}

/// UDP datagrams the kernel has dropped in namespace `netns` because a socket's receive
/// buffer was full (`RcvbufErrors` of `/proc/net/snmp`, read inside the namespace).
///
/// # Errors
/// The file cannot be read there.
pub async fn udp_rcvbuf_errors(netns: &str) -> Result<u64, LabError> {
    let out = tokio::process::Command::new("ip")
        .args(["netns", "exec", netns, "cat", "/proc/net/snmp"])
        .stdin(Stdio::null())
        .output()
        .await
        .map_err(|e| missing("ip", &e))?;
    let text = String::from_utf8_lossy(&out.stdout);
    parse_rcvbuf_errors(&text).ok_or_else(|| LabError::Command {
        command: format!("ip netns exec {netns} cat /proc/net/snmp"),
        detail: one_line(&out.stderr),
    })
}

/// `RcvbufErrors` from the two `Udp:` lines of `/proc/net/snmp` (names, then values).
fn parse_rcvbuf_errors(snmp: &str) -> Option<u64> {
    let mut udp = snmp.lines().filter(|l| l.starts_with("Udp:"));
    let (names, values) = (udp.next()?, udp.next()?);
    let at = names.split_whitespace().position(|n| n == "RcvbufErrors")?;
    values.split_whitespace().nth(at)?.parse().ok()
}

/// Runs `program [-n NETNS] -batch -` with `script` on its input.
fn batch(program: &str, netns: Option<&str>, script: &str) -> Result<(), LabError> {
    let mut cmd = Command::new(program);
    if let Some(ns) = netns {
        cmd.args(["-n", ns]);
    }
    cmd.args(["-batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| missing(program, &e))?;
    if let Some(mut input) = child.stdin.take() {
        // A write error shows as the command's failure below.
        let _ = input.write_all(script.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| LabError::io(program, e))?;
    if out.status.success() {
        return Ok(());
    }
    let first = script.lines().next().unwrap_or_default();
    Err(LabError::Command {
        command: format!(
            "{program}{} -batch ({first} ...)",
            netns.map(|n| format!(" -n {n}")).unwrap_or_default()
        ),
        detail: one_line(&out.stderr),
    })
}

/// A program that could not be run: missing, or another I/O error.
pub(crate) fn missing(program: &str, e: &std::io::Error) -> LabError {
    if e.kind() == std::io::ErrorKind::NotFound {
        LabError::Missing {
            program: program.into(),
            hint: match program {
                "ip" | "tc" => "install iproute2".into(),
                "setpriv" => "install util-linux".into(),
                _ => e.to_string(),
            },
        }
    } else {
        LabError::io(program, std::io::Error::new(e.kind(), e.to_string()))
    }
}

/// Error output as one line.
pub(crate) fn one_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udp_receive_buffer_drops_are_read_from_snmp() {
        let snmp = "Ip: Forwarding DefaultTTL\nIp: 1 64\nUdp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\nUdp: 22416 0 56636 25698 56636 0\nUdpLite: InDatagrams\nUdpLite: 0\n";
        assert_eq!(parse_rcvbuf_errors(snmp), Some(56636));
        assert_eq!(parse_rcvbuf_errors("Ip: x\n"), None);
    }

    #[test]
    fn tbf_buckets_queues_and_arguments() {
        let t = Tbf::new(100.0, 1500, None);
        assert_eq!(t.rate_bps, 100_000_000);
        assert_eq!(t.burst, 12_500);
        assert_eq!(t.limit, 1_250_000);
        assert_eq!(t.args(), "tbf rate 100000000bit burst 12500 limit 1250000");
        // Slow links: the bucket still takes two full frames, the queue at least 64 KiB.
        let slow = Tbf::new(1.0, 9000, None);
        assert_eq!(slow.burst, 2 * 9014);
        assert_eq!(slow.limit, 64 * 1024);
        assert_eq!(Tbf::new(10.0, 1500, Some(32)).limit, 32 * 1024);
    }
}
