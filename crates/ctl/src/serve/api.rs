//! The operators' JSON API under `/api/` (docs/controller.md, "Operators"): the topology,
//! the enrolled routers, the routes computed for a prefix, and the registry. Each function
//! renders one answer from what the service holds; [`Request::parse`] checks the target.

use std::fmt::Write as _;

use nameway_wire::Name;

use super::state::{longest_match, RouterFib};
use super::Shared;

/// One API request, its query checked.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Request {
    /// `/api/topology`.
    Topology,
    /// `/api/nodes`.
    Nodes,
    /// `/api/routes?prefix=NAME`.
    Routes(Name),
    /// `/api/registry`.
    Registry,
    /// `/api/keys`: group keys (ids, prefixes, levels, members, validity; never a key) and
    /// router certificates.
    Keys,
    /// `/api/explain?name=NAME`.
    Explain(Name),
    /// `/api/cache`: the cache policy in force (`POST` changes it: [`super::cache_api`]).
    Cache,
}

/// Why a target under `/api/` is not answered.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(super) enum ApiError {
    /// No such endpoint (404).
    #[error("not found")]
    NotFound,
    /// The query is not what the endpoint takes (400).
    #[error("{0}")]
    BadQuery(String),
}

impl Request {
    /// Parses a request target (`/api/routes?prefix=%2Fexample`); `None` when it is not
    /// under `/api/`.
    pub(super) fn parse(target: &str) -> Option<Result<Self, ApiError>> {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let endpoint = path.strip_prefix("/api/")?;
        Some(Self::endpoint(endpoint, query))
    }

    fn endpoint(endpoint: &str, query: &str) -> Result<Self, ApiError> {
        let params = parse_query(query)?;
        let no_query = |r: Self| {
            if let Some((k, _)) = params.first() {
                return Err(ApiError::BadQuery(format!("unexpected parameter {k:?}")));
            }
            Ok(r)
        };
        match endpoint {
            "topology" => no_query(Self::Topology),
            "nodes" => no_query(Self::Nodes),
            "registry" => no_query(Self::Registry),
            "keys" => no_query(Self::Keys),
            "cache" => no_query(Self::Cache),
            "explain" => {
                let mut name = None;
                for (k, v) in &params {
                    match k.as_str() {
                        "name" if name.is_none() => name = Some(v),
                        "name" => return Err(ApiError::BadQuery("name given twice".into())),
                        other => {
                            return Err(ApiError::BadQuery(format!(
                                "unexpected parameter {other:?}"
                            )))
                        }
                    }
                }
                let n = name.ok_or_else(|| ApiError::BadQuery("missing name".into()))?;
                let name = n
                    .parse::<Name>()
                    .map_err(|e| ApiError::BadQuery(format!("name {n:?} is not a name: {e}")))?;
                Ok(Self::Explain(name))
            }
            "routes" => {
                let mut prefix = None;
                for (k, v) in &params {
                    match k.as_str() {
                        "prefix" if prefix.is_none() => prefix = Some(v),
                        "prefix" => return Err(ApiError::BadQuery("prefix given twice".into())),
                        other => {
                            return Err(ApiError::BadQuery(format!(
                                "unexpected parameter {other:?}"
                            )))
                        }
                    }
                }
                let p = prefix.ok_or_else(|| ApiError::BadQuery("missing prefix".into()))?;
                let name = p
                    .parse::<Name>()
                    .map_err(|e| ApiError::BadQuery(format!("prefix {p:?} is not a name: {e}")))?;
                Ok(Self::Routes(name))
            }
            _ => Err(ApiError::NotFound),
        }
    }
}

/// `k=v&k=v`, each percent-decoded (`+` is kept as it is: names may hold it).
pub(super) fn parse_query(query: &str) -> Result<Vec<(String, String)>, ApiError> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            Ok((percent_decode(k)?, percent_decode(v)?))
        })
        .collect()
}

fn percent_decode(s: &str) -> Result<String, ApiError> {
    let bad = || ApiError::BadQuery(format!("bad percent-encoding in {s:?}"));
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3).ok_or_else(bad)?;
            let hex = std::str::from_utf8(hex).map_err(|_| bad())?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| ApiError::BadQuery(format!("{s:?} is not UTF-8")))
}

/// A JSON string literal.
pub(super) fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn json_opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "null".into(), |v| v.to_string())
}

/// A router's FIB versions as JSON members (`/status`, `/api/topology`):
/// `"name","connected","version","acked"`.
pub(super) fn router_members(name: &str, connected: bool, version: u64, acked: u64) -> String {
    format!(
        "\"name\":{},\"connected\":{connected},\"version\":{version},\"acked\":{acked}",
        json_str(name)
    )
}

/// What a router's computed FIB has for `name`, as JSON members (`/api/routes`,
/// `/api/explain`): `"router","connected","match"` (the longest prefix, or null),
/// `"nexthops"` (face, cost), `"version","acked"`.
pub(super) fn route_members(f: &RouterFib, name: &Name) -> String {
    let (matched, hops) = match longest_match(&f.fib, name) {
        Some((p, hops)) => (Some(json_str(&p.to_string())), hops),
        None => (None, &[][..]),
    };
    let hops: Vec<String> = hops
        .iter()
        .map(|h| format!("{{\"face\":{},\"cost\":{}}}", h.face, h.cost))
        .collect();
    format!(
        "\"router\":{},\"connected\":{},\"match\":{},\"nexthops\":[{}],\"version\":{},\"acked\":{}",
        json_str(&f.router),
        f.connected,
        json_opt(matched),
        hops.join(","),
        f.version,
        f.acked
    )
}

/// The answer to `req`: (HTTP status, JSON body).
pub(super) fn answer(shared: &Shared, req: &Request) -> (&'static str, String) {
    match req {
        Request::Topology => ("200 OK", topology(shared)),
        Request::Nodes => match tokio::task::block_in_place(|| shared.auth.nodes()) {
            Ok((nodes, denied)) => ("200 OK", nodes_json(&nodes, &denied)),
            Err(e) => (
                "500 Internal Server Error",
                format!("{{\"error\":{}}}\n", json_str(&e.to_string())),
            ),
        },
        Request::Routes(prefix) => ("200 OK", routes(shared, prefix)),
        Request::Registry => ("200 OK", registry(shared)),
        Request::Keys => match tokio::task::block_in_place(|| shared.auth.key_infos()) {
            Ok((keys, nodes, denied)) => ("200 OK", keys_json(&keys, &nodes, &denied)),
            Err(e) => (
                "500 Internal Server Error",
                format!("{{\"error\":{}}}\n", json_str(&e)),
            ),
        },
        Request::Explain(name) => {
            let s = shared
                .status
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            ("200 OK", super::explain::explain(&s, name))
        }
        Request::Cache => {
            let s = shared
                .status
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            ("200 OK", format!("{}\n", s.cache.to_json()))
        }
    }
}

/// `/api/keys`: the group keys (never the key itself) and the routers' certificates.
fn keys_json(
    keys: &[crate::group_keys::GroupKeyInfo],
    nodes: &[crate::store::NodeRecord],
    denied: &[Name],
) -> String {
    let now = crate::now_ms();
    let groups: Vec<String> = keys
        .iter()
        .map(|k| {
            let members: Vec<String> = k.members.iter().map(|m| json_str(m)).collect();
            format!(
                "{{\"key_id\":{},\"prefix\":{},\"level\":{},\"members\":[{}],\"not_before_ms\":{},\"not_after_ms\":{},\"valid\":{}}}",
                json_str(&k.key_id),
                json_str(&k.scope),
                json_str(&k.level),
                members.join(","),
                k.not_before_ms,
                k.not_after_ms,
                k.not_before_ms <= now && now < k.not_after_ms
            )
        })
        .collect();
    let certs: Vec<String> = nodes
        .iter()
        .filter_map(|n| {
            let c =
                nameway_transport::Certificate::decode(bytes::Bytes::from(n.cert.clone()?)).ok()?;
            let (nb, na) = c.validity();
            let name: Name = n.name.parse().ok()?;
            Some(format!(
                "{{\"router\":{},\"name\":{},\"not_before\":{},\"not_after\":{},\"denied\":{}}}",
                json_str(&n.name),
                json_str(&c.name().to_string()),
                json_str(nb),
                json_str(na),
                denied.iter().any(|d| d.is_prefix_of(&name))
            ))
        })
        .collect();
    format!(
        "{{\"group_keys\":[{}],\"certificates\":[{}]}}\n",
        groups.join(","),
        certs.join(",")
    )
}

fn topology(shared: &Shared) -> String {
    let s = shared
        .status
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let cs: std::collections::HashMap<&str, (u64, u64)> = s
        .fibs
        .iter()
        .map(|f| (f.router.as_str(), f.cs_versions))
        .collect();
    let routers: Vec<String> = s
        .routers
        .iter()
        .map(|(n, up, cur, ack)| {
            let (cs_cur, cs_ack) = cs.get(n.as_str()).copied().unwrap_or_default();
            format!(
                "{{{},\"cs_version\":{cs_cur},\"cs_acked\":{cs_ack}}}",
                router_members(n, *up, *cur, *ack)
            )
        })
        .collect();
    let links: Vec<String> = s
        .link_views
        .iter()
        .map(|l| {
            format!(
                "{{\"a\":{},\"b\":{},\"a_up\":{},\"b_up\":{},\"cost\":{},\"up\":{}}}",
                json_str(&l.a),
                json_str(&l.b),
                json_opt(l.a_up),
                json_opt(l.b_up),
                json_opt(l.cost),
                l.cost.is_some()
            )
        })
        .collect();
    format!(
        "{{\"routers\":[{}],\"links\":[{}]}}\n",
        routers.join(","),
        links.join(",")
    )
}

fn nodes_json(nodes: &[crate::store::NodeRecord], denied: &[Name]) -> String {
    let is_denied = |n: &str| denied.iter().any(|d| d.to_string() == n);
    let mut rows: Vec<String> = nodes
        .iter()
        .map(|n| {
            let expires = n
                .cert
                .as_ref()
                .and_then(|w| {
                    nameway_transport::Certificate::decode(bytes::Bytes::from(w.clone())).ok()
                })
                .map(|c| json_str(c.validity().1));
            format!(
                "{{\"name\":{},\"enrolled\":true,\"enrolled_ms\":{},\"cert_expires\":{},\"denied\":{}}}",
                json_str(&n.name),
                n.enrolled_ms,
                json_opt(expires),
                is_denied(&n.name)
            )
        })
        .collect();
    for d in denied {
        let d = d.to_string();
        if !nodes.iter().any(|n| n.name == d) {
            rows.push(format!(
                "{{\"name\":{},\"enrolled\":false,\"enrolled_ms\":null,\"cert_expires\":null,\"denied\":true}}",
                json_str(&d)
            ));
        }
    }
    format!("{{\"nodes\":[{}]}}\n", rows.join(","))
}

fn routes(shared: &Shared, prefix: &Name) -> String {
    let s = shared
        .status
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let rows: Vec<String> = s
        .fibs
        .iter()
        .map(|f| format!("{{{}}}", route_members(f, prefix)))
        .collect();
    format!(
        "{{\"prefix\":{},\"routers\":[{}]}}\n",
        json_str(&prefix.to_string()),
        rows.join(",")
    )
}

fn registry(shared: &Shared) -> String {
    let rows: Vec<String> = shared
        .registry
        .all()
        .iter()
        .map(|g| {
            format!(
                "{{\"prefix\":{},\"router\":{},\"face\":{},\"cost\":{},\"expires_ms\":{}}}",
                json_str(&g.prefix.to_string()),
                json_str(&g.node),
                g.face,
                g.cost,
                g.expires_ms
            )
        })
        .collect();
    format!("{{\"registrations\":[{}]}}\n", rows.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_checked_and_the_prefix_percent_decoded() {
        assert_eq!(Request::parse("/status"), None);
        assert_eq!(Request::parse("/api/topology"), Some(Ok(Request::Topology)));
        assert_eq!(
            Request::parse("/api/routes?prefix=%2Fexample%2Fapp"),
            Some(Ok(Request::Routes("/example/app".parse().unwrap())))
        );
        assert_eq!(Request::parse("/api/nope"), Some(Err(ApiError::NotFound)));
        assert_eq!(
            Request::parse("/api/explain?name=%2Fexample%2Fa"),
            Some(Ok(Request::Explain("/example/a".parse().unwrap())))
        );
        assert!(matches!(
            Request::parse("/api/explain"),
            Some(Err(ApiError::BadQuery(_)))
        ));
        for bad in [
            "/api/routes",
            "/api/routes?prefix=%zz",
            "/api/routes?prefix=%2",
            "/api/routes?prefix=%ff",
            "/api/routes?prefix=/a&prefix=/b",
            "/api/routes?name=/a",
            "/api/routes?prefix=noslash%2Fx",
            "/api/nodes?x=1",
        ] {
            assert!(
                matches!(Request::parse(bad), Some(Err(ApiError::BadQuery(_)))),
                "{bad}"
            );
        }
    }
}
