//! Cache policy: the operator's policy file (`namewayctl serve --cache-policy FILE`) and the
//! per-router document it makes, pushed as the body of a signed `cs` object
//! (docs/controller.md, "Cache policy").
//!
//! ```toml
//! capacity = 65536          # every router's in-process store, in packets (optional)
//! admit = true              # NFD's cs/config admit flag (optional)
//! serve = true              # and serve (optional)
//! memory_bytes = 268435456  # the decoupled store's memory tier (optional)
//! disk_bytes = 10737418240  # and its disk tier (optional)
//!
//! [[prefix]]                # per-prefix admission, longest prefix wins
//! prefix = "/example/live"
//! admit = false
//! [[prefix]]
//! prefix = "/example/bulk"
//! priority = "low"          # admitted only while the store has free room
//!
//! [router."/example/r2"]    # one router's settings, over the defaults above
//! capacity = 1000
//!
//! [[partition]]             # partitioned placement along a path of k routers
//! routers = ["/example/r1", "/example/r2", "/example/r3"]
//! ```
//!
//! The document is canonical text (one `key value` line per setting, prefixes sorted), so
//! the controller compares documents to decide whether a router's policy changed, and the
//! agent parses it without a JSON dependency.

use std::collections::BTreeMap;

use nameway_wire::Name;
use serde::Deserialize;

mod edit;
pub use edit::{CacheEdit, SettingsPatch};

/// Why a policy file or document was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CachePolicyError {
    /// The file cannot be read.
    #[error("cache policy {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Not valid TOML of this shape.
    #[error("cache policy: {0}")]
    Toml(String),
    /// A name that does not parse.
    #[error("cache policy: {0:?} is not an NDN name")]
    BadName(String),
    /// A priority other than normal or low.
    #[error("cache policy: priority {0:?} (use normal or low)")]
    BadPriority(String),
    /// A router in two partitions, or an empty one.
    #[error("cache policy: {0}")]
    BadPartition(String),
    /// A document line that does not parse.
    #[error("cs document line {0:?}")]
    BadLine(String),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(flatten)]
    defaults: Settings,
    #[serde(default)]
    prefix: Vec<PrefixEntry>,
    #[serde(default)]
    router: BTreeMap<String, Settings>,
    #[serde(default)]
    partition: Vec<PartitionEntry>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct Settings {
    capacity: Option<u64>,
    admit: Option<bool>,
    serve: Option<bool>,
    memory_bytes: Option<u64>,
    disk_bytes: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PrefixEntry {
    prefix: String,
    #[serde(default = "yes")]
    admit: bool,
    #[serde(default)]
    priority: Option<String>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PartitionEntry {
    routers: Vec<String>,
}

/// One prefix's rule.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PrefixRule {
    /// The prefix.
    pub prefix: Name,
    /// Whether Data under it is admitted.
    pub admit: bool,
    /// Admitted only while the store has free room.
    pub low_priority: bool,
}

/// One router's cache policy: what a `cs` object carries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CsDocument {
    /// The in-process store's capacity in packets.
    pub capacity: Option<u64>,
    /// The admit flag.
    pub admit: Option<bool>,
    /// The serve flag.
    pub serve: Option<bool>,
    /// The decoupled store's memory tier, in bytes (`[cs] memory_capacity`).
    pub memory_bytes: Option<u64>,
    /// The decoupled store's disk tier, in bytes (`[cs] disk_capacity`).
    pub disk_bytes: Option<u64>,
    /// Per-prefix rules, sorted by prefix.
    pub prefixes: Vec<PrefixRule>,
    /// Partitioned placement: this router's index and the path's length.
    pub partition: Option<(u32, u32)>,
}

/// The operator's cache policy (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CachePolicy {
    defaults: Settings,
    routers: BTreeMap<Name, Settings>,
    prefixes: Vec<PrefixRule>,
    partitions: BTreeMap<Name, (u32, u32)>,
    /// The partitions as written (each path's routers in order), to write the file back.
    paths: Vec<Vec<Name>>,
}

fn name(s: &str) -> Result<Name, CachePolicyError> {
    s.parse()
        .map_err(|_| CachePolicyError::BadName(s.to_owned()))
}

impl CachePolicy {
    /// Reads a policy file.
    ///
    /// # Errors
    /// [`CachePolicyError`].
    pub fn load(path: &std::path::Path) -> Result<Self, CachePolicyError> {
        let text = std::fs::read_to_string(path).map_err(|source| CachePolicyError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text)
    }

    /// Parses a policy file's text.
    ///
    /// # Errors
    /// [`CachePolicyError`].
    pub fn parse(text: &str) -> Result<Self, CachePolicyError> {
        let f: File = toml::from_str(text).map_err(|e| CachePolicyError::Toml(e.to_string()))?;
        let mut prefixes = Vec::new();
        for p in f.prefix {
            let low_priority = match p.priority.as_deref() {
                None | Some("normal") => false,
                Some("low") => true,
                Some(other) => return Err(CachePolicyError::BadPriority(other.to_owned())),
            };
            prefixes.push(PrefixRule {
                prefix: name(&p.prefix)?,
                admit: p.admit,
                low_priority,
            });
        }
        prefixes.sort();
        let mut routers = BTreeMap::new();
        for (r, s) in f.router {
            routers.insert(name(&r)?, s);
        }
        let mut partitions = BTreeMap::new();
        let mut paths = Vec::new();
        for p in f.partition {
            let k = u32::try_from(p.routers.len())
                .map_err(|_| CachePolicyError::BadPartition("too many routers".into()))?;
            if k == 0 {
                return Err(CachePolicyError::BadPartition(
                    "a partition without routers".into(),
                ));
            }
            for (i, r) in (0u32..).zip(&p.routers) {
                if partitions.insert(name(r)?, (i, k)).is_some() {
                    return Err(CachePolicyError::BadPartition(format!(
                        "{r} is in two partitions"
                    )));
                }
            }
            paths.push(
                p.routers
                    .iter()
                    .map(|r| name(r))
                    .collect::<Result<_, _>>()?,
            );
        }
        Ok(Self {
            defaults: f.defaults,
            routers,
            prefixes,
            partitions,
            paths,
        })
    }

    /// Whether the policy says nothing (no object is sent).
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }

    /// The document of `router` (the defaults with its own settings over them).
    pub fn document(&self, router: &Name) -> CsDocument {
        let own = self.routers.get(router).copied().unwrap_or_default();
        let d = self.defaults;
        CsDocument {
            capacity: own.capacity.or(d.capacity),
            admit: own.admit.or(d.admit),
            serve: own.serve.or(d.serve),
            memory_bytes: own.memory_bytes.or(d.memory_bytes),
            disk_bytes: own.disk_bytes.or(d.disk_bytes),
            prefixes: self.prefixes.clone(),
            partition: self.partitions.get(router).copied(),
        }
    }

    /// The rule that applies to `name` (longest prefix), if any.
    pub fn rule_for(&self, name: &Name) -> Option<&PrefixRule> {
        self.prefixes
            .iter()
            .filter(|r| r.prefix.is_prefix_of(name))
            .max_by_key(|r| r.prefix.len())
    }
}

impl CsDocument {
    /// The canonical text.
    pub fn encode(&self) -> String {
        let mut s = String::new();
        if let Some(c) = self.capacity {
            s += &format!("capacity {c}\n");
        }
        if let Some(a) = self.admit {
            s += &format!("admit {a}\n");
        }
        if let Some(v) = self.serve {
            s += &format!("serve {v}\n");
        }
        // Only when set: an agent older than these lines refuses a document with them.
        if let Some(b) = self.memory_bytes {
            s += &format!("memory_bytes {b}\n");
        }
        if let Some(b) = self.disk_bytes {
            s += &format!("disk_bytes {b}\n");
        }
        if let Some((i, k)) = self.partition {
            s += &format!("partition {i} {k}\n");
        }
        for p in &self.prefixes {
            let admit = if p.admit { "admit" } else { "no-admit" };
            let prio = if p.low_priority { "low" } else { "normal" };
            s += &format!("prefix {admit} {prio} {}\n", p.prefix);
        }
        s
    }

    /// Parses the canonical text.
    ///
    /// # Errors
    /// [`CachePolicyError::BadLine`].
    pub fn decode(text: &str) -> Result<Self, CachePolicyError> {
        let mut d = Self::default();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let bad = || CachePolicyError::BadLine(line.to_owned());
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["capacity", c] => d.capacity = Some(c.parse().map_err(|_| bad())?),
                ["admit", a] => d.admit = Some(a.parse().map_err(|_| bad())?),
                ["serve", v] => d.serve = Some(v.parse().map_err(|_| bad())?),
                ["memory_bytes", b] => d.memory_bytes = Some(b.parse().map_err(|_| bad())?),
                ["disk_bytes", b] => d.disk_bytes = Some(b.parse().map_err(|_| bad())?),
                ["partition", i, k] => {
                    let i: u32 = i.parse().map_err(|_| bad())?;
                    let k: u32 = k.parse().map_err(|_| bad())?;
                    if i >= k {
                        return Err(bad());
                    }
                    d.partition = Some((i, k));
                }
                ["prefix", admit, prio, prefix] => d.prefixes.push(PrefixRule {
                    prefix: prefix.parse().map_err(|_| bad())?,
                    admit: match *admit {
                        "admit" => true,
                        "no-admit" => false,
                        _ => return Err(bad()),
                    },
                    low_priority: match *prio {
                        "low" => true,
                        "normal" => false,
                        _ => return Err(bad()),
                    },
                }),
                _ => return Err(bad()),
            }
        }
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
capacity = 5000
admit = true
[[prefix]]
prefix = "/example/live"
admit = false
[[prefix]]
prefix = "/example/bulk"
priority = "low"
[router."/example/r2"]
capacity = 100
serve = false
disk_bytes = 1000000
[[partition]]
routers = ["/example/r1", "/example/r2", "/example/r3"]
"#;

    #[test]
    fn a_file_makes_each_routers_document_and_it_round_trips() {
        let p = CachePolicy::parse(FILE).unwrap();
        let r2 = p.document(&"/example/r2".parse().unwrap());
        assert_eq!(r2.capacity, Some(100));
        assert_eq!(r2.serve, Some(false));
        assert_eq!(r2.admit, Some(true));
        assert_eq!(r2.partition, Some((1, 3)));
        assert_eq!(r2.prefixes.len(), 2);
        assert_eq!((r2.memory_bytes, r2.disk_bytes), (None, Some(1_000_000)));
        let r9 = p.document(&"/example/r9".parse().unwrap());
        assert_eq!((r9.capacity, r9.partition), (Some(5000), None));
        assert_eq!(r9.disk_bytes, None);
        assert_eq!(CsDocument::decode(&r2.encode()).unwrap(), r2);
        let rule = p
            .rule_for(&"/example/live/cam1/seg=3".parse().unwrap())
            .unwrap();
        assert!(!rule.admit);
        assert!(CachePolicy::parse("").unwrap().is_empty());
    }

    #[test]
    fn bad_files_and_documents_are_refused_in_one_line() {
        for (text, want) in [
            (
                "[[prefix]]\nprefix = \"/a\"\npriority = \"high\"\n",
                "priority",
            ),
            ("capcity = 3\n", "capcity"),
            (
                "[[partition]]\nrouters = [\"/a\"]\n[[partition]]\nrouters = [\"/a\"]\n",
                "two partitions",
            ),
        ] {
            let e = CachePolicy::parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
        assert!(CsDocument::decode("partition 3 3\n").is_err());
        assert!(CsDocument::decode("prefix maybe low /a\n").is_err());
        assert!(CsDocument::decode("capacity lots\n").is_err());
    }
}
