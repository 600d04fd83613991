//! Declared links (docs/controller.md, "Declared links"): a link the operator names because
//! its far end cannot prove who it is (an NFD, or a plain face without a secure link).
//!
//! Both agents use them: `nameway-nfd-agent --neighbour <key>=<face URI>` and namewayd's
//! `[controller] neighbours = [{ key = "<hex>", face = "udp4://…" }]`. The key is the far
//! end's link key as the controller knows it (sent at enrolment); a declared link is reported
//! up while this forwarder has a face with that remote URI, and, like every link, is used by
//! the controller only when both ends report it. An agent without a secure-link identity has
//! a link key of its own in `state_dir/link.key` for the far end to declare in turn.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

/// A link the operator declares: the neighbour's link key and this forwarder's face toward
/// it (its remote URI, as `faces/list` shows it).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "RawNeighbour")]
pub struct DeclaredNeighbour {
    /// The neighbour's link key (32 bytes).
    pub link_key: [u8; 32],
    /// The face's remote URI (`udp4://192.0.2.2:6363`).
    pub face_uri: String,
}

/// `{ key = "<64 hex digits>", face = "udp4://host:port" }` in `[controller] neighbours`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNeighbour {
    key: String,
    face: String,
}

impl TryFrom<RawNeighbour> for DeclaredNeighbour {
    type Error = String;

    fn try_from(r: RawNeighbour) -> Result<Self, String> {
        Self::new(&r.key, &r.face)
            .map_err(|e| format!("controller.neighbours {{ key = {:?} }}: {e}", r.key))
    }
}

impl DeclaredNeighbour {
    /// From a key in hex and a face URI.
    ///
    /// # Errors
    /// A one-line reason.
    pub fn new(key: &str, uri: &str) -> Result<Self, String> {
        let link_key = hex::decode(key.trim())
            .ok()
            .and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok())
            .ok_or("the link key must be 64 hex digits (32 bytes)")?;
        if !uri.contains("://") {
            return Err(format!("{uri:?} is not a face URI (udp4://host:port)"));
        }
        Ok(Self {
            link_key,
            face_uri: uri.trim().to_owned(),
        })
    }
}

impl std::str::FromStr for DeclaredNeighbour {
    type Err = String;

    /// `<64 hex digits>=<face URI>` (`--neighbour`).
    fn from_str(s: &str) -> Result<Self, String> {
        let (key, uri) = s
            .split_once('=')
            .ok_or_else(|| format!("--neighbour {s:?}: expected <link key hex>=<face URI>"))?;
        Self::new(key, uri).map_err(|e| format!("--neighbour {s:?}: {e}"))
    }
}

/// The declared links whose face exists: link key → face id. `faces` is (id, remote URI);
/// when several faces have the URI, the lowest id.
pub(crate) fn matched<'a>(
    declared: &[DeclaredNeighbour],
    faces: impl IntoIterator<Item = (u64, &'a str)>,
) -> BTreeMap<[u8; 32], u64> {
    let mut by_uri: BTreeMap<&str, u64> = BTreeMap::new();
    for (id, uri) in faces {
        by_uri
            .entry(uri)
            .and_modify(|f| *f = (*f).min(id))
            .or_insert(id);
    }
    declared
        .iter()
        .filter_map(|n| Some((n.link_key, *by_uri.get(n.face_uri.as_str())?)))
        .collect()
}

/// An agent's own link key when it has no secure-link identity: an X25519 key kept in
/// `state_dir/link.key` (made on first start).
///
/// # Errors
/// The file cannot be read or written.
pub(crate) fn own_link_key(state_dir: &Path) -> anyhow::Result<[u8; 32]> {
    let path = state_dir.join("link.key");
    let (id, _) = nameway_face::secure::Identity::load_or_create(&path)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(id.public_key().0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_declared_link_matches_the_face_with_its_remote_uri() {
        let declared = [
            DeclaredNeighbour::new(&"aa".repeat(32), "udp4://10.0.0.2:6363").unwrap(),
            DeclaredNeighbour::new(&"bb".repeat(32), "udp4://10.0.0.9:6363").unwrap(),
        ];
        let faces = [
            (300, "fd://31"),
            (262, "udp4://10.0.0.2:6363"),
            (260, "udp4://10.0.0.2:6363"),
        ];
        let m = matched(&declared, faces);
        assert_eq!(m.into_iter().collect::<Vec<_>>(), vec![([0xaa; 32], 260)]);
    }

    #[test]
    fn the_toml_shape_is_checked() {
        #[derive(Deserialize)]
        struct T {
            neighbours: Vec<DeclaredNeighbour>,
        }
        let good: T = toml::from_str(&format!(
            "neighbours = [{{ key = \"{}\", face = \"udp4://10.0.0.2:6363\" }}]",
            "ab".repeat(32)
        ))
        .unwrap();
        assert_eq!(good.neighbours[0].link_key, [0xab; 32]);
        for bad in [
            "neighbours = [{ key = \"ab\", face = \"udp4://h:1\" }]".to_owned(),
            format!(
                "neighbours = [{{ key = \"{}\", face = \"h:1\" }}]",
                "ab".repeat(32)
            ),
            format!(
                "neighbours = [{{ key = \"{}\", face = \"udp4://h:1\", cost = 3 }}]",
                "ab".repeat(32)
            ),
        ] {
            let e = toml::from_str::<T>(&bad).err().unwrap().to_string();
            assert!(e.contains("neighbours"), "{bad}: {e}");
        }
    }
}
