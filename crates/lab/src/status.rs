//! `nameway lab status`: one line per forwarder — faces, PIT entries, CS entries and hit
//! ratio, Interests in and out, drops — read from each node's management socket (NFD's
//! datasets; namewayd's `faces/drops` for the drops, which NFD does not publish).

use std::path::Path;
use std::time::Duration;

use nameway_transport::client::{Client, Transport};
use nameway_wire::mgmt::{CsInfo, FaceStatus, ForwarderStatus};
use serde::Serialize;

use crate::error::LabError;
use crate::state::State;
use crate::topology::NodeKind;

/// One forwarder's figures.
#[derive(Clone, Debug, Default, Serialize)]
pub struct NodeStatus {
    /// Node name.
    pub node: String,
    /// `nameway` or `nfd`.
    pub kind: String,
    /// Its process id.
    pub pid: Option<u32>,
    /// Whether its process runs.
    pub running: bool,
    /// Faces (apps and links).
    pub faces: usize,
    /// PIT entries.
    pub pit: u64,
    /// CS entries.
    pub cs_entries: u64,
    /// CS hits / (hits + misses), when there was a look-up.
    pub cs_hit_ratio: Option<f64>,
    /// Interests received.
    pub in_interests: u64,
    /// Interests sent.
    pub out_interests: u64,
    /// Data received.
    pub in_data: u64,
    /// Data sent.
    pub out_data: u64,
    /// Packets dropped, all reasons and faces (namewayd only).
    pub drops: Option<u64>,
    /// Resident memory in bytes.
    pub rss: Option<u64>,
    /// Why the figures are missing.
    pub error: Option<String>,
    /// When the figures were read.
    #[serde(skip)]
    pub sampled: Option<std::time::Instant>,
}

/// Figures of every forwarder of a lab.
pub async fn collect(state: &State) -> Vec<NodeStatus> {
    let mut out = Vec::new();
    for n in state.nodes.iter().filter(|n| n.kind.is_forwarder()) {
        let mut s = NodeStatus {
            node: n.name.clone(),
            kind: match n.kind {
                NodeKind::Nfd => "nfd".into(),
                _ => "nameway".into(),
            },
            pid: n.proc.map(|p| p.pid),
            running: n.proc.is_some_and(|p| p.alive()),
            rss: n.proc.and_then(|p| crate::process::rss_bytes(p.pid)),
            ..NodeStatus::default()
        };
        if let Err(e) = fill(&mut s, &n.socket).await {
            s.error = Some(e.to_string());
        }
        s.sampled = Some(std::time::Instant::now());
        out.push(s);
    }
    out
}

async fn fill(s: &mut NodeStatus, socket: &Path) -> Result<(), LabError> {
    let node = s.node.clone();
    let fail = |source| LabError::client(node.clone(), source);
    let work = async {
        let mut c = Client::connect(Transport::Unix(socket.to_path_buf()))
            .await
            .map_err(fail)?;
        let general = c.dataset("status", "general").await.map_err(fail)?;
        let g = ForwarderStatus::decode(&general).map_err(|e| LabError::Node {
            node: node.clone(),
            detail: format!("bad status/general: {e}"),
        })?;
        s.pit = g.n_pit_entries;
        s.cs_entries = g.n_cs_entries;
        s.in_interests = g.n_in_interests;
        s.out_interests = g.n_out_interests;
        s.in_data = g.n_in_data;
        s.out_data = g.n_out_data;
        let faces: Vec<FaceStatus> = c.list("faces", "list").await.map_err(fail)?;
        s.faces = faces.len();
        let cs: Vec<CsInfo> = c.list("cs", "info").await.map_err(fail)?;
        if let Some(info) = cs.first() {
            let lookups = info.n_hits + info.n_misses;
            s.cs_hit_ratio = (lookups > 0).then(|| info.n_hits as f64 / lookups as f64);
        }
        if g.nfd_version.starts_with("nameway") {
            let raw = c.dataset("faces", "drops").await.map_err(fail)?;
            s.drops = Some(sum_drops(&raw));
        }
        Ok::<(), LabError>(())
    };
    tokio::time::timeout(Duration::from_secs(5), work)
        .await
        .map_err(|_| LabError::NotReady {
            node: s.node.clone(),
            seconds: 5,
            detail: "management did not answer".into(),
        })?
}

/// Every count under `drops` and `link_drops` of namewayd's `faces/drops` dataset (JSON).
fn sum_drops(raw: &[u8]) -> u64 {
    let Ok(serde_json::Value::Array(faces)) = serde_json::from_slice(raw) else {
        return 0;
    };
    faces
        .iter()
        .flat_map(|f| ["drops", "link_drops"].map(|k| f.get(k)))
        .flatten()
        .filter_map(serde_json::Value::as_object)
        .flat_map(|m| m.values())
        .filter_map(serde_json::Value::as_u64)
        .sum()
}

/// The table `nameway lab status` prints; with `previous` (an earlier reading), Interests per
/// second since then instead of totals.
pub fn render(lab: &str, nodes: &[NodeStatus], previous: Option<&[NodeStatus]>) -> String {
    let rate_header = if previous.is_some() {
        "in I/s"
    } else {
        "in Interests"
    };
    let mut out = format!(
        "lab {lab}\n{:<16} {:<8} {:>7} {:>6} {:>8} {:>8} {:>7} {:>13} {:>13} {:>8} {:>8}\n",
        "node",
        "kind",
        "pid",
        "faces",
        "PIT",
        "CS",
        "CS hit",
        rate_header,
        "out Interests",
        "drops",
        "RSS MiB"
    );
    for s in nodes {
        if let Some(e) = &s.error {
            let state = if s.running { "running" } else { "not running" };
            out.push_str(&format!(
                "{:<16} {:<8} {:>7} {state}: {e}\n",
                s.node,
                s.kind,
                pid(s)
            ));
            continue;
        }
        let hit = s
            .cs_hit_ratio
            .map_or_else(|| "-".to_owned(), |r| format!("{:.1}%", r * 100.0));
        let incoming = match previous.and_then(|p| p.iter().find(|x| x.node == s.node)) {
            Some(p) => {
                let seconds = s.sampled.zip(p.sampled).map_or(1.0, |(now, then)| {
                    now.duration_since(then).as_secs_f64().max(1e-3)
                });
                let rate = s.in_interests.saturating_sub(p.in_interests) as f64 / seconds;
                format!("{rate:.0}")
            }
            None => s.in_interests.to_string(),
        };
        let drops = s.drops.map_or_else(|| "-".to_owned(), |d| d.to_string());
        let rss = s.rss.map_or_else(
            || "-".to_owned(),
            |r| format!("{:.1}", r as f64 / 1048576.0),
        );
        out.push_str(&format!(
            "{:<16} {:<8} {:>7} {:>6} {:>8} {:>8} {:>7} {:>13} {:>13} {:>8} {:>8}\n",
            s.node,
            s.kind,
            pid(s),
            s.faces,
            s.pit,
            s.cs_entries,
            hit,
            incoming,
            s.out_interests,
            drops,
            rss
        ));
    }
    out
}

fn pid(s: &NodeStatus) -> String {
    s.pid.map_or_else(|| "-".to_owned(), |p| p.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_are_summed_over_faces_and_reasons() {
        let raw = br#"[{"face_id":256,"drops":{"no-route":3,"pit-full":1},"link_drops":{"queue-full":2}},{"face_id":257,"drops":{},"link_drops":null}]"#;
        assert_eq!(sum_drops(raw), 6);
        assert_eq!(sum_drops(b"not json"), 0);
    }

    #[test]
    fn the_table_has_a_line_per_node() {
        let nodes = vec![
            NodeStatus {
                node: "r1".into(),
                kind: "nameway".into(),
                pid: Some(42),
                running: true,
                faces: 3,
                cs_hit_ratio: Some(0.5),
                in_interests: 100,
                drops: Some(2),
                ..NodeStatus::default()
            },
            NodeStatus {
                node: "r2".into(),
                kind: "nfd".into(),
                error: Some("gone".into()),
                ..NodeStatus::default()
            },
        ];
        let t = render("x", &nodes, None);
        assert!(t.contains("r1"), "{t}");
        assert!(t.contains("50.0%"), "{t}");
        assert!(t.contains("\nr2               nfd"), "{t}");
        assert!(t.contains("not running: gone"), "{t}");
        let mut earlier = nodes.clone();
        earlier[0].sampled = Some(std::time::Instant::now());
        let mut later = earlier.clone();
        later[0].in_interests = 130;
        later[0].sampled = earlier[0]
            .sampled
            .map(|t| t + std::time::Duration::from_secs(2));
        // 30 Interests in 2 s.
        assert!(render("x", &later, Some(&earlier)).contains(" 15 "));
    }
}
