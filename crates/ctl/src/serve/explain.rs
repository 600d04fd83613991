//! `/api/explain?name=NAME` (docs/controller.md, "ctl explain"): for one name, the
//! registrations the controller routes it toward (the longest registered prefix), the route
//! each router's computed FIB has for it, and the cache policy that applies.

use nameway_wire::Name;

use super::api::{json_str, route_members};
use super::Status;

fn opt(v: Option<String>) -> String {
    v.unwrap_or_else(|| "null".into())
}

/// The JSON answer for `name` from the service's status.
pub(super) fn explain(s: &Status, name: &Name) -> String {
    // The registrations of the longest registered prefix of `name`.
    let regs: Vec<(Name, &str, u64)> = s
        .registrations
        .iter()
        .filter_map(|(router, prefix, face)| {
            let p: Name = prefix.parse().ok()?;
            p.is_prefix_of(name).then_some((p, router.as_str(), *face))
        })
        .collect();
    let best = regs.iter().map(|(p, _, _)| p.len()).max();
    let origins: Vec<String> = regs
        .iter()
        .filter(|(p, _, _)| Some(p.len()) == best)
        .map(|(p, r, f)| {
            format!(
                "{{\"prefix\":{},\"router\":{},\"face\":{f}}}",
                json_str(&p.to_string()),
                json_str(r)
            )
        })
        .collect();
    let routers: Vec<String> = s
        .fibs
        .iter()
        .map(|f| {
            let doc = f
                .router
                .parse::<Name>()
                .ok()
                .map(|r| s.cache.document(&r))
                .filter(|_| !s.cache.is_empty());
            let partition = doc
                .as_ref()
                .and_then(|d| d.partition)
                .map(|(i, k)| format!("{{\"index\":{i},\"k\":{k}}}"));
            let admit = doc.as_ref().and_then(|d| d.admit);
            format!(
                "{{{},\"cs_version\":{},\"cs_acked\":{},\"cs_admit\":{},\"partition\":{}}}",
                route_members(f, name),
                f.cs_versions.0,
                f.cs_versions.1,
                opt(admit.map(|a| a.to_string())),
                opt(partition)
            )
        })
        .collect();
    let rule = s.cache.rule_for(name).map(|r| {
        format!(
            "{{\"prefix\":{},\"admit\":{},\"priority\":{}}}",
            json_str(&r.prefix.to_string()),
            r.admit,
            json_str(if r.low_priority { "low" } else { "normal" })
        )
    });
    format!(
        "{{\"name\":{},\"origins\":[{}],\"routers\":[{}],\"cache_rule\":{},\"security\":null}}\n",
        json_str(&name.to_string()),
        origins.join(","),
        routers.join(","),
        opt(rule)
    )
}
