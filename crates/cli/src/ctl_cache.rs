//! `nameway ctl cache show|set|remove`: the controller's cache policy through its operators'
//! API (`GET /api/cache`, `POST /api/cache?...` with the API token; docs/controller.md,
//! "Cache policy").

use anyhow::{bail, Context as _};
use serde_json::Value;

use crate::ctl::{percent_encode, Base};
use crate::output::{print_json, write_out, JsonFlag};

/// `nameway ctl cache ...`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum CacheCommand {
    /// The policy in force: every router's settings, per-router settings, prefix rules,
    /// partitions.
    Show(JsonFlag),
    /// Changes the policy: every router's settings, one router's (`--router`), or a prefix's
    /// rule (`--prefix`, with `--admit` and `--priority`).
    Set(SetArgs),
    /// Removes a prefix's rule or a router's own settings.
    Remove(RemoveArgs),
}

/// Where the API token is.
#[derive(Debug, clap::Args)]
pub(crate) struct TokenArgs {
    /// The file with the controller's API token (`<ca db>.api-token`, made by `namewayctl
    /// serve --http`); or the environment variable NAMEWAY_CTL_TOKEN.
    #[arg(long, value_name = "FILE")]
    token_file: Option<std::path::PathBuf>,
}

/// Arguments of `nameway ctl cache set`.
#[derive(Debug, clap::Args)]
pub(crate) struct SetArgs {
    /// Set this router's own settings (over every router's).
    #[arg(long, value_name = "NAME", conflicts_with = "prefix")]
    router: Option<String>,
    /// Set the rule of this prefix (longest prefix wins).
    #[arg(long, value_name = "NAME")]
    prefix: Option<String>,
    /// The in-process store's capacity, in packets.
    #[arg(long, value_name = "PACKETS", conflicts_with = "prefix")]
    capacity: Option<u64>,
    /// Admit Data (a router's setting, or the prefix's rule).
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
    admit: Option<bool>,
    /// Serve Data from the store.
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set, conflicts_with = "prefix")]
    serve: Option<bool>,
    /// The decoupled store's memory tier, in bytes.
    #[arg(long, value_name = "BYTES", conflicts_with = "prefix")]
    memory_bytes: Option<u64>,
    /// The decoupled store's disk tier, in bytes.
    #[arg(long, value_name = "BYTES", conflicts_with = "prefix")]
    disk_bytes: Option<u64>,
    /// The prefix's priority: normal, or low (admitted only while the store has free room).
    #[arg(long, value_parser = ["normal", "low"], requires = "prefix")]
    priority: Option<String>,
    #[command(flatten)]
    token: TokenArgs,
    #[command(flatten)]
    out: JsonFlag,
}

/// Arguments of `nameway ctl cache remove`.
#[derive(Debug, clap::Args)]
#[group(required = true, multiple = false, id = "what")]
pub(crate) struct RemoveArgs {
    /// Remove this prefix's rule.
    #[arg(long, value_name = "NAME", group = "what")]
    prefix: Option<String>,
    /// Remove this router's own settings.
    #[arg(long, value_name = "NAME", group = "what")]
    router: Option<String>,
    #[command(flatten)]
    token: TokenArgs,
    #[command(flatten)]
    out: JsonFlag,
}

impl TokenArgs {
    fn header(&self) -> anyhow::Result<String> {
        let token = match &self.token_file {
            Some(f) => std::fs::read_to_string(f)
                .with_context(|| format!("cannot read the API token in {}", f.display()))?,
            None => std::env::var("NAMEWAY_CTL_TOKEN").map_err(|_| {
                anyhow::anyhow!("changing the policy needs the API token: --token-file FILE (<ca db>.api-token) or NAMEWAY_CTL_TOKEN")
            })?,
        };
        let token = token.trim();
        if token.is_empty() || token.contains(char::is_whitespace) {
            bail!("the API token is empty or not one word");
        }
        Ok(format!("authorization: Bearer {token}\r\n"))
    }
}

fn param(q: &mut Vec<String>, k: &str, v: Option<impl ToString>) {
    if let Some(v) = v {
        q.push(format!("{k}={}", percent_encode(&v.to_string())));
    }
}

/// Runs `nameway ctl cache`.
pub(crate) async fn run(base: &Base, cmd: &CacheCommand) -> anyhow::Result<()> {
    let (body, out) = match cmd {
        CacheCommand::Show(out) => (base.get("/api/cache").await?, out),
        CacheCommand::Set(a) => {
            let mut q = Vec::new();
            param(&mut q, "router", a.router.as_ref());
            param(&mut q, "prefix", a.prefix.as_ref());
            param(&mut q, "capacity", a.capacity);
            param(&mut q, "admit", a.admit);
            param(&mut q, "serve", a.serve);
            param(&mut q, "memory_bytes", a.memory_bytes);
            param(&mut q, "disk_bytes", a.disk_bytes);
            param(&mut q, "priority", a.priority.as_ref());
            let target = format!("/api/cache?{}", q.join("&"));
            let body = base.request("POST", &target, &a.token.header()?).await?;
            (body, &a.out)
        }
        CacheCommand::Remove(a) => {
            let mut q = Vec::new();
            param(&mut q, "remove_prefix", a.prefix.as_ref());
            param(&mut q, "remove_router", a.router.as_ref());
            let target = format!("/api/cache?{}", q.join("&"));
            let body = base.request("POST", &target, &a.token.header()?).await?;
            (body, &a.out)
        }
    };
    let value: Value =
        serde_json::from_str(&body).context("the controller's cache policy is not JSON")?;
    if out.json {
        return print_json(&value);
    }
    write_out(&policy_text(&value))?;
    Ok(())
}

/// The policy as text.
fn policy_text(v: &Value) -> String {
    let s = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    let settings = |v: &Value| {
        let parts: Vec<String> = ["capacity", "admit", "serve", "memory_bytes", "disk_bytes"]
            .iter()
            .filter(|k| !v[**k].is_null())
            .map(|k| format!("{k}={}", v[*k]))
            .collect();
        if parts.is_empty() {
            "(as the forwarder has it)".to_owned()
        } else {
            parts.join(" ")
        }
    };
    let list = |k: &str| v[k].as_array().cloned().unwrap_or_default();
    let mut out = format!("every router: {}\n", settings(&v["defaults"]));
    for r in list("routers") {
        out += &format!("router {}: {}\n", s(&r["router"]), settings(&r));
    }
    for p in list("prefixes") {
        let admit = if p["admit"] == true {
            "admit"
        } else {
            "no-admit"
        };
        out += &format!(
            "prefix {}: {admit}, priority {}\n",
            s(&p["prefix"]),
            s(&p["priority"])
        );
    }
    for p in list("partitions") {
        let r: Vec<String> = p["routers"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(s)
            .collect();
        out += &format!("partition: {}\n", r.join(" "));
    }
    out
}
