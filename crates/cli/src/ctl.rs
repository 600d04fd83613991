//! `nameway ctl --controller http://HOST:PORT topology|nodes|routes PREFIX|registry`: the
//! controller's view, read from its operators' API (`namewayctl serve --http`, `/api/...`,
//! docs/controller.md "Operators").
//!
//! One HTTP/1.1 GET per command over a tokio `TcpStream` (the controller answers one request
//! per connection and closes it); a table by default, the controller's JSON with `--json`.

use std::time::Duration;

use anyhow::{bail, Context as _};
use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::output::{iso_time, print_json, write_out, JsonFlag, Table};

/// How long the controller has to connect and answer.
const TIMEOUT: Duration = Duration::from_secs(5);
/// The largest answer read.
const MAX_ANSWER: u64 = 64 << 20;

/// Arguments of `nameway ctl`.
#[derive(Debug, clap::Args)]
pub(crate) struct CtlArgs {
    /// The controller's HTTP listener (`namewayctl serve --http ADDR`): http://HOST:PORT.
    #[arg(long, value_name = "URL")]
    controller: String,
    #[command(subcommand)]
    command: CtlCommand,
}

/// `nameway ctl ...`.
#[derive(Debug, clap::Subcommand)]
enum CtlCommand {
    /// Routers (connected, FIB version sent and acknowledged) and links (each end's report,
    /// the cost routes use).
    Topology(JsonFlag),
    /// Enrolled routers: enrolment time, certificate expiry, deny list.
    Nodes(JsonFlag),
    /// Per router: the longest match of PREFIX in the FIB the controller computed for it.
    Routes(RoutesArgs),
    /// The registrations the controller holds: prefix, router, face, expiry.
    Registry(JsonFlag),
    /// Group keys (ids, prefixes, levels, members, validity; never a key) and routers'
    /// certificates (validity, denied).
    Keys(JsonFlag),
    /// For NAME: the registrations the controller routes it toward, each router's route
    /// (next hops and costs) and the cache policy that applies.
    Explain(ExplainArgs),
    /// The cache policy: show it, or change it (with the controller's API token).
    #[command(subcommand)]
    Cache(crate::ctl_cache::CacheCommand),
}

/// Arguments of `nameway ctl explain`.
#[derive(Debug, clap::Args)]
struct ExplainArgs {
    /// The name (NDN URI).
    name: String,
    #[command(flatten)]
    out: JsonFlag,
}

/// Arguments of `nameway ctl routes`.
#[derive(Debug, clap::Args)]
struct RoutesArgs {
    /// The name prefix (NDN URI).
    prefix: String,
    #[command(flatten)]
    out: JsonFlag,
}

/// Runs `nameway ctl`.
pub(crate) async fn run(args: &CtlArgs) -> anyhow::Result<()> {
    let base = Base::parse(&args.controller)?;
    let (target, out) = match &args.command {
        CtlCommand::Cache(c) => return crate::ctl_cache::run(&base, c).await,
        CtlCommand::Topology(o) => ("/api/topology".to_owned(), o),
        CtlCommand::Nodes(o) => ("/api/nodes".to_owned(), o),
        CtlCommand::Registry(o) => ("/api/registry".to_owned(), o),
        CtlCommand::Keys(o) => ("/api/keys".to_owned(), o),
        CtlCommand::Routes(r) => (
            format!("/api/routes?prefix={}", percent_encode(&r.prefix)),
            &r.out,
        ),
        CtlCommand::Explain(e) => (
            format!("/api/explain?name={}", percent_encode(&e.name)),
            &e.out,
        ),
    };
    let body = base.get(&target).await?;
    let value: Value = serde_json::from_str(&body)
        .with_context(|| format!("the controller's answer to {target} is not JSON"))?;
    if out.json {
        return print_json(&value);
    }
    let text = match &args.command {
        CtlCommand::Topology(_) => topology_table(serde_json::from_value(value)?),
        CtlCommand::Nodes(_) => nodes_table(serde_json::from_value(value)?),
        CtlCommand::Routes(_) => routes_table(serde_json::from_value(value)?),
        CtlCommand::Registry(_) => registry_table(serde_json::from_value(value)?),
        CtlCommand::Keys(_) => keys_table(serde_json::from_value(value)?),
        CtlCommand::Explain(_) => explain_text(&value),
        // Answered above.
        CtlCommand::Cache(_) => String::new(),
    };
    write_out(&text)?;
    Ok(())
}

/// `nameway ctl explain` as text.
fn explain_text(v: &Value) -> String {
    let s = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    let mut out = format!("name: {}\n", s(&v["name"]));
    let origins = v["origins"].as_array().cloned().unwrap_or_default();
    if origins.is_empty() {
        out += "origin: none registered\n";
    }
    for o in &origins {
        out += &format!(
            "origin: {} at {} face {}\n",
            s(&o["prefix"]),
            s(&o["router"]),
            o["face"]
        );
    }
    out += "routes:\n";
    for r in v["routers"].as_array().cloned().unwrap_or_default() {
        let hops: Vec<String> = r["nexthops"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|h| format!("face {} cost {}", h["face"], h["cost"]))
            .collect();
        let hops = if hops.is_empty() {
            "no route".to_owned()
        } else {
            format!("{} via {}", s(&r["match"]), hops.join(", "))
        };
        out += &format!(
            "  {}: {hops} (fib v{} acked v{})\n",
            s(&r["router"]),
            r["version"],
            r["acked"]
        );
    }
    match v["cache_rule"].as_object() {
        Some(c) => {
            out += &format!(
                "cache: {} (admit {}, priority {})\n",
                s(&c["prefix"]),
                c["admit"],
                s(&c["priority"])
            );
        }
        None => out += "cache: no per-prefix rule (admitted)\n",
    }
    out += "security: not set by the controller\n";
    out
}

/// `http://HOST:PORT`, checked.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Base {
    /// `HOST:PORT` as given (also the Host header).
    authority: String,
}

impl Base {
    fn parse(url: &str) -> anyhow::Result<Self> {
        let Some(rest) = url.strip_prefix("http://") else {
            bail!("--controller {url:?}: expected http://HOST:PORT");
        };
        let authority = rest.trim_end_matches('/');
        if authority.is_empty() || authority.contains('/') || !authority.contains(':') {
            bail!("--controller {url:?}: expected http://HOST:PORT");
        }
        Ok(Self {
            authority: authority.to_owned(),
        })
    }

    /// GET `target`: the body of a 200 answer.
    pub(crate) async fn get(&self, target: &str) -> anyhow::Result<String> {
        self.request("GET", target, "").await
    }

    /// `method` `target` with `headers` (each line ending with CRLF): the body of a 200
    /// answer.
    pub(crate) async fn request(
        &self,
        method: &str,
        target: &str,
        headers: &str,
    ) -> anyhow::Result<String> {
        let url = format!("http://{}", self.authority);
        let answer = tokio::time::timeout(TIMEOUT, self.exchange(method, target, headers))
            .await
            .map_err(|_| anyhow::anyhow!("the controller at {url} did not answer in {TIMEOUT:?}"))?
            .with_context(|| format!("cannot reach the controller at {url}"))?;
        let (head, body) = answer
            .split_once("\r\n\r\n")
            .with_context(|| format!("the controller at {url} sent no HTTP answer"))?;
        let status = head.lines().next().unwrap_or_default();
        let code = status.split_whitespace().nth(1).unwrap_or_default();
        if code != "200" {
            let why = body.lines().next().unwrap_or_default();
            bail!("the controller at {url} answered {target} with {code}: {why}");
        }
        Ok(body.to_owned())
    }

    async fn exchange(&self, method: &str, target: &str, headers: &str) -> std::io::Result<String> {
        let mut s = TcpStream::connect(&self.authority).await?;
        let req = format!(
            "{method} {target} HTTP/1.1\r\nhost: {}\r\n{headers}content-length: 0\r\nconnection: close\r\n\r\n",
            self.authority
        );
        s.write_all(req.as_bytes()).await?;
        let mut raw = Vec::new();
        (&mut s).take(MAX_ANSWER).read_to_end(&mut raw).await?;
        Ok(String::from_utf8_lossy(&raw).into_owned())
    }
}

/// Everything but unreserved characters and `/` as `%XX` (a name's own escapes included).
pub(crate) fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

#[derive(Debug, Deserialize)]
struct TopologyView {
    routers: Vec<RouterView>,
    links: Vec<LinkView>,
}

#[derive(Debug, Deserialize)]
struct RouterView {
    name: String,
    connected: bool,
    version: u64,
    acked: u64,
}

#[derive(Debug, Deserialize)]
struct LinkView {
    a: String,
    b: String,
    a_up: Option<bool>,
    b_up: Option<bool>,
    cost: Option<u64>,
    up: bool,
}

fn up_name(v: Option<bool>) -> String {
    match v {
        Some(true) => "up".into(),
        Some(false) => "down".into(),
        None => "-".into(),
    }
}

fn topology_table(t: TopologyView) -> String {
    let mut routers = Table::new(&["ROUTER", "CONNECTED", "VERSION", "ACKED"]);
    for r in t.routers {
        routers.row(vec![
            r.name,
            if r.connected { "yes" } else { "no" }.into(),
            r.version.to_string(),
            r.acked.to_string(),
        ]);
    }
    let mut links = Table::new(&["A", "B", "A-REPORTS", "B-REPORTS", "COST", "STATE"]);
    for l in t.links {
        links.row(vec![
            l.a,
            l.b,
            up_name(l.a_up),
            up_name(l.b_up),
            opt(l.cost),
            if l.up { "up" } else { "down" }.into(),
        ]);
    }
    format!("{}\n{}", routers.render(), links.render())
}

#[derive(Debug, Deserialize)]
struct NodesView {
    nodes: Vec<NodeView>,
}

#[derive(Debug, Deserialize)]
struct NodeView {
    name: String,
    enrolled: bool,
    enrolled_ms: Option<u64>,
    cert_expires: Option<String>,
    denied: bool,
}

fn nodes_table(n: NodesView) -> String {
    let mut t = Table::new(&["ROUTER", "ENROLLED", "CERT-EXPIRES", "DENIED"]);
    for n in n.nodes {
        let enrolled = match (n.enrolled, n.enrolled_ms) {
            (true, Some(ms)) => iso_time(ms),
            (true, None) => "yes".into(),
            (false, _) => "no".into(),
        };
        t.row(vec![
            n.name,
            enrolled,
            opt(n.cert_expires),
            if n.denied { "denied" } else { "-" }.into(),
        ]);
    }
    t.render()
}

#[derive(Debug, Deserialize)]
struct KeysView {
    group_keys: Vec<GroupKeyView>,
    certificates: Vec<CertView>,
}

#[derive(Debug, Deserialize)]
struct GroupKeyView {
    key_id: String,
    prefix: String,
    level: String,
    members: Vec<String>,
    not_before_ms: u64,
    not_after_ms: u64,
    valid: bool,
}

#[derive(Debug, Deserialize)]
struct CertView {
    router: String,
    name: String,
    not_after: String,
    denied: bool,
}

fn keys_table(k: KeysView) -> String {
    let mut g = Table::new(&[
        "KEY-ID",
        "PREFIX",
        "LEVEL",
        "MEMBERS",
        "NOT-BEFORE",
        "NOT-AFTER",
        "VALID",
    ]);
    for x in k.group_keys {
        g.row(vec![
            x.key_id,
            x.prefix,
            x.level,
            x.members.join(" "),
            iso_time(x.not_before_ms),
            iso_time(x.not_after_ms),
            if x.valid { "yes" } else { "no" }.into(),
        ]);
    }
    let mut c = Table::new(&["ROUTER", "CERTIFICATE", "NOT-AFTER", "DENIED"]);
    for x in k.certificates {
        c.row(vec![
            x.router,
            x.name,
            x.not_after,
            if x.denied { "denied" } else { "-" }.into(),
        ]);
    }
    format!("{}\n{}", g.render(), c.render())
}

#[derive(Debug, Deserialize)]
struct RoutesView {
    routers: Vec<RouteView>,
}

#[derive(Debug, Deserialize)]
struct RouteView {
    router: String,
    connected: bool,
    #[serde(rename = "match")]
    matched: Option<String>,
    nexthops: Vec<HopView>,
    version: u64,
    acked: u64,
}

#[derive(Debug, Deserialize)]
struct HopView {
    face: u64,
    cost: u64,
}

fn routes_table(r: RoutesView) -> String {
    let mut t = Table::new(&[
        "ROUTER",
        "MATCH",
        "NEXTHOPS",
        "VERSION",
        "ACKED",
        "CONNECTED",
    ]);
    for r in r.routers {
        let hops: Vec<String> = r
            .nexthops
            .iter()
            .map(|h| format!("face {} cost {}", h.face, h.cost))
            .collect();
        t.row(vec![
            r.router,
            opt(r.matched),
            if hops.is_empty() {
                "-".into()
            } else {
                hops.join(", ")
            },
            r.version.to_string(),
            r.acked.to_string(),
            if r.connected { "yes" } else { "no" }.into(),
        ]);
    }
    t.render()
}

#[derive(Debug, Deserialize)]
struct RegistryView {
    registrations: Vec<RegistrationView>,
}

#[derive(Debug, Deserialize)]
struct RegistrationView {
    prefix: String,
    router: String,
    face: u64,
    cost: u64,
    expires_ms: u64,
}

fn registry_table(r: RegistryView) -> String {
    let mut t = Table::new(&["PREFIX", "ROUTER", "FACE", "COST", "EXPIRES"]);
    for g in r.registrations {
        t.row(vec![
            g.prefix,
            g.router,
            g.face.to_string(),
            g.cost.to_string(),
            iso_time(g.expires_ms),
        ]);
    }
    t.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controller_urls_and_prefixes() {
        assert_eq!(
            Base::parse("http://127.0.0.1:8080/").unwrap(),
            Base {
                authority: "127.0.0.1:8080".into()
            }
        );
        for bad in ["127.0.0.1:8080", "https://h:1", "http://h", "http://h:1/x"] {
            assert!(Base::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(percent_encode("/a b/%00&x=1"), "/a%20b/%2500%26x%3D1");
    }
}
