//! `nameway routing id|announce|lookup|list|explain`: secure location-independent routing
//! (namewayd with `[routing] mode = "secure"`, docs/routing.md).
//!
//! `id`, `list` and `explain` read namewayd's `routing/status` and `routing/list` datasets;
//! `lookup` and `explain` also ask a RIB service through the forwarder, as the first hop does,
//! and verify the answer here; `announce` signs a delegation with the name's key and sends it
//! with `rib/announce`.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context as _};
use bytes::Bytes;
use nameway_routing::rib::{self, Answer};
use nameway_routing::sc::display_name;
use nameway_routing::{Announcement, ChainVerifier, KeyHash, NameKey, Origin, VerifierConfig};
use nameway_wire::mgmt::{ControlParameters, ControlResponse, FibEntry, RibEntry};
use nameway_wire::security::DigestSha256;
use nameway_wire::signature::signature_type;
use nameway_wire::{Component, Interest, Name, SignatureInfo};
use serde::Serialize;
use serde_json::Value;

use crate::client::{self, parse_name, Client, ClientError};
use crate::output::{iso_time, outln, print_fields, print_json, JsonFlag, Table};

/// `nameway routing ...`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum RoutingCommand {
    /// This router's name (`sc:<hex>`, the hash of its routing key), FaceUris and RIBs.
    Id(JsonFlag),
    /// The self-certifying name of a private key file (`nameway key generate ed25519 FILE`):
    /// `sc:<hex>`, the SHA-256 of its public key. Reads the file only.
    Name(NameArgs),
    /// Announce a self-certifying name: sign a delegation to this router with the name's key
    /// and send it (rib/announce). The route goes to --face, or to the face of the
    /// application that registered the name.
    Announce(AnnounceArgs),
    /// Ask the RIB service for a name and verify the answer here.
    Lookup(LookupArgs),
    /// The routes the first hop holds, the names this router announces, the RIB service's
    /// registry, and the routing counters.
    List(JsonFlag),
    /// Walk registry -> chain -> FIB -> hint for a name and say where it fails.
    Explain(LookupArgs),
}

/// Arguments of `nameway routing announce`.
#[derive(Debug, clap::Args)]
pub(crate) struct AnnounceArgs {
    /// The name, `sc:<hex>` or `/32=sc/...` (default: the key's own name).
    name: Option<String>,
    /// The name's private key (`nameway key generate ed25519 FILE`).
    #[arg(long)]
    key: PathBuf,
    /// The router the name is delegated to (default: this forwarder).
    #[arg(long, value_name = "ROUTER")]
    delegate: Option<String>,
    /// The face the route goes to: FaceId or remote FaceUri.
    #[arg(long)]
    face: Option<String>,
    /// How long the announcement lives (ms, or 30s, 10m, 1h).
    #[arg(long, default_value = "10m")]
    lifetime: String,
    #[command(flatten)]
    out: JsonFlag,
}

/// Arguments of `nameway routing name`.
#[derive(Debug, clap::Args)]
pub(crate) struct NameArgs {
    /// The private key (PKCS#8 PEM or DER, Ed25519 or ECDSA P-256).
    key: PathBuf,
}

/// Arguments of `nameway routing lookup` and `explain`.
#[derive(Debug, clap::Args)]
pub(crate) struct LookupArgs {
    /// The name, `sc:<hex>[/...]` or `/32=sc/<h>[/...]`.
    name: String,
    /// The RIB service prefix to ask (default: the forwarder's `[[routing.rib]]`).
    #[arg(long)]
    rib: Option<String>,
    #[command(flatten)]
    out: JsonFlag,
}

/// Runs `nameway routing ...`.
///
/// # Errors
/// The forwarder cannot be reached, refuses, or a name or key is invalid.
pub(crate) async fn run(transport: Option<&str>, cmd: &RoutingCommand) -> anyhow::Result<()> {
    if let RoutingCommand::Name(args) = cmd {
        return key_name(&args.key);
    }
    let mut c = client::connect(transport).await?;
    match cmd {
        RoutingCommand::Id(out) => id(&mut c, out.json).await,
        RoutingCommand::Name(args) => key_name(&args.key),
        RoutingCommand::Announce(args) => announce(&mut c, args).await,
        RoutingCommand::Lookup(args) => lookup_cmd(&mut c, args).await,
        RoutingCommand::List(out) => list(&mut c, out.json).await,
        RoutingCommand::Explain(args) => explain(&mut c, args).await,
    }
}

/// `routing/status` as JSON.
async fn status(c: &mut Client) -> anyhow::Result<Value> {
    let raw = match c.dataset("routing", "status").await {
        Ok(raw) => raw,
        Err(ClientError::Timeout { .. } | ClientError::Nack { .. }) => bail!(
            "the forwarder has no routing/status dataset: is it namewayd with [routing] mode = \"secure\"?"
        ),
        Err(e) => return Err(e.into()),
    };
    serde_json::from_slice(&raw).context("bad routing/status dataset")
}

/// Prints the self-certifying name of the private key at `path`.
fn key_name(path: &std::path::Path) -> anyhow::Result<()> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let key = NameKey::from_file_bytes(&bytes).with_context(|| {
        format!(
            "{}: not an Ed25519 or ECDSA P-256 private key",
            path.display()
        )
    })?;
    outln!("{}", display_name(&key.name()))?;
    Ok(())
}

async fn id(c: &mut Client, json: bool) -> anyhow::Result<()> {
    let s = status(c).await?;
    if json {
        return print_json(&serde_json::json!({
            "router": s["router"],
            "router_hex": s["router_hex"],
            "face_uris": s["face_uris"],
            "rib": s["rib"],
            "rib_service": s["rib_service"],
        }));
    }
    outln!("{}", s["router"].as_str().unwrap_or("?"))?;
    print_fields(&[
        ("faceUris", join(&s["face_uris"])),
        ("rib", join(&s["rib"])),
        (
            "ribService",
            if s["rib_service"].is_null() {
                "off".into()
            } else {
                join(&s["rib_service"])
            },
        ),
    ])?;
    Ok(())
}

fn join(v: &Value) -> String {
    let items: Vec<&str> = v
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if items.is_empty() {
        "none".into()
    } else {
        items.join(" ")
    }
}

/// What `announce` did.
#[derive(Debug, Serialize)]
struct Announced {
    name: String,
    delegate: String,
    face_id: Option<u64>,
    version: u64,
    expires_ms: Option<u64>,
}

async fn announce(c: &mut Client, args: &AnnounceArgs) -> anyhow::Result<()> {
    let bytes =
        std::fs::read(&args.key).with_context(|| format!("cannot read {}", args.key.display()))?;
    let key = NameKey::from_file_bytes(&bytes).with_context(|| {
        format!(
            "{}: not an Ed25519 or ECDSA P-256 private key",
            args.key.display()
        )
    })?;
    let name = match &args.name {
        Some(n) => parse_name(n)?,
        None => key.name(),
    };
    if name != key.name() {
        bail!(
            "{} is not the name of this key ({}): a self-certifying name is the hash of its owner's key",
            display_name(&name),
            display_name(&key.name())
        );
    }
    let delegate = match &args.delegate {
        Some(d) => router_hash(d)?,
        None => {
            let s = status(c).await?;
            KeyHash::from_hex(s["router_hex"].as_str().unwrap_or_default())
                .map_err(|e| anyhow::anyhow!("bad routing/status router: {e}"))?
        }
    };
    let face = match &args.face {
        Some(f) => Some(crate::face::resolve_face(c, f).await?),
        None => Some(registered_face(c, &name).await?),
    };
    let lifetime = parse_duration_ms(&args.lifetime)?;
    let pa = Announcement::delegation(&key, &delegate, client::wall_ms(), lifetime)
        .context("cannot sign the announcement")?;
    let params = ControlParameters {
        face_id: face,
        ..ControlParameters::default()
    };
    let response = rib_announce(c, pa.wire(), &params).await?;
    if response.status_code != 200 {
        bail!(
            "rib/announce refused: {} {}",
            response.status_code,
            response.status_text
        );
    }
    let body = response.parameters().ok().flatten().unwrap_or_default();
    let done = Announced {
        name: display_name(&name),
        delegate: display_name(&delegate.name()),
        face_id: body.face_id,
        version: pa.version(),
        expires_ms: body.expiration_period,
    };
    if args.out.json {
        return print_json(&done);
    }
    outln!(
        "announced {} on face {} for {} ms, delegated to {}",
        done.name,
        done.face_id.map_or("?".into(), |f| f.to_string()),
        done.expires_ms.unwrap_or(0),
        done.delegate
    )?;
    Ok(())
}

/// When `prefix` is under `/32=sc/<h>` and `key_path` holds the key hashing to `h`, and the
/// forwarder has secure routing on: announces `/32=sc/<h>` on this connection (a delegation to
/// the forwarder's router, 10 minutes) and returns `true`. `false` when it does not apply (the
/// caller registers the prefix as usual).
///
/// # Errors
/// The forwarder refuses the announcement.
pub(crate) async fn announce_own_name(
    c: &mut Client,
    key_path: &std::path::Path,
    prefix: &Name,
) -> anyhow::Result<bool> {
    let Some(h) = KeyHash::from_name(prefix) else {
        return Ok(false);
    };
    let Ok(key) = std::fs::read(key_path)
        .map_err(|_| ())
        .and_then(|b| NameKey::from_file_bytes(&b).map_err(|_| ()))
    else {
        return Ok(false);
    };
    if key.hash() != h {
        return Ok(false);
    }
    let Ok(s) = status(c).await else {
        return Ok(false);
    };
    let delegate = KeyHash::from_hex(s["router_hex"].as_str().unwrap_or_default())
        .map_err(|e| anyhow::anyhow!("bad routing/status router: {e}"))?;
    let pa = Announcement::delegation(&key, &delegate, client::wall_ms(), 600_000)
        .context("cannot sign the announcement")?;
    let response = rib_announce(c, pa.wire(), &ControlParameters::default()).await?;
    if response.status_code != 200 {
        bail!(
            "rib/announce of {} refused: {} {}",
            display_name(&key.name()),
            response.status_code,
            response.status_text
        );
    }
    Ok(true)
}

/// The face of the route an application registered for `name`.
async fn registered_face(c: &mut Client, name: &Name) -> anyhow::Result<u64> {
    let rib: Vec<RibEntry> = c.list("rib", "list").await?;
    rib.iter()
        .find(|e| e.name == *name)
        .and_then(|e| e.routes.first())
        .map(|r| r.face_id)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "no route for {}: start its producer first, or give --face",
                display_name(name)
            )
        })
}

/// A router given as `sc:<hex>`, `/32=sc/<h>` or 64 hex digits.
fn router_hash(s: &str) -> anyhow::Result<KeyHash> {
    if let Ok(h) = KeyHash::from_hex(s) {
        return Ok(h);
    }
    let name = parse_name(s)?;
    KeyHash::from_name(&name)
        .filter(|_| name.len() == 2)
        .ok_or_else(|| anyhow::anyhow!("{s:?} is not a router name (sc:<64 hex digits>)"))
}

/// Sends `rib/announce` with `pa` in ApplicationParameters (and `params` in the name when
/// they say something), signed as a v0.3 signed Interest (DigestSha256).
async fn rib_announce(
    c: &mut Client,
    pa: &Bytes,
    params: &ControlParameters,
) -> anyhow::Result<ControlResponse> {
    let mut name: Name = "/localhost/nfd/rib/announce".parse()?;
    if params.face_id.is_some() {
        name = name.append(&Component::generic(params.encode()))?;
    }
    let mut interest = Interest::new(name);
    interest.nonce = Some(client::random_u32());
    interest.lifetime_ms = Some(4000);
    interest.app_parameters = Some(pa.clone());
    let mut nonce = [0u8; 8];
    client::random_fill(&mut nonce);
    let info = SignatureInfo {
        nonce: Some(Bytes::copy_from_slice(&nonce)),
        time: Some(client::wall_ms()),
        ..SignatureInfo::new(signature_type::DIGEST_SHA256)
    };
    interest
        .sign(&DigestSha256, info)
        .context("cannot sign the command")?;
    let data = c.express(&interest, Duration::from_secs(4)).await?;
    let content = data.content.unwrap_or_default();
    ControlResponse::decode(&content).context("rib/announce: not a ControlResponse")
}

/// Parses `500ms`, `30s`, `10m`, `1h` or a number of ms.
fn parse_duration_ms(s: &str) -> anyhow::Result<u64> {
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let n: u64 = n
        .parse()
        .map_err(|_| anyhow::anyhow!("{s:?} is not a duration (500ms, 30s, 10m, 1h)"))?;
    let scale = match unit {
        "" | "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => bail!("{s:?}: unknown unit (ms, s, m, h)"),
    };
    Ok(n.saturating_mul(scale))
}

/// What a RIB service said about a name, verified here.
#[derive(Debug, Serialize)]
struct LookupView {
    name: String,
    rib: String,
    /// `found`, `not_found`, `rejected`, `no_answer`.
    result: String,
    detail: Option<String>,
    delegate: Option<String>,
    face_uris: Vec<String>,
    version: Option<u64>,
    expires: Option<String>,
}

/// Looks `h` up at each RIB prefix in turn until one answers.
async fn lookup(c: &mut Client, h: &KeyHash, ribs: &[Name]) -> anyhow::Result<LookupView> {
    let mut last = None;
    for prefix in ribs {
        let interest = rib::lookup_interest(prefix, h, 2000, client::random_u32())?;
        let mut view = LookupView {
            name: display_name(&h.name()),
            rib: prefix.to_string(),
            result: "no_answer".into(),
            detail: None,
            delegate: None,
            face_uris: Vec::new(),
            version: None,
            expires: None,
        };
        match c.express_wire(&interest, Duration::from_secs(2)).await {
            Ok(wire) => {
                answer_into(&mut view, h, &wire);
                return Ok(view);
            }
            Err(e @ (ClientError::Timeout { .. } | ClientError::Nack { .. })) => {
                view.detail = Some(e.to_string());
                last = Some(view);
            }
            Err(e) => return Err(e.into()),
        }
    }
    last.ok_or_else(|| anyhow::anyhow!("no RIB service prefix: give --rib"))
}

fn answer_into(view: &mut LookupView, h: &KeyHash, wire: &Bytes) {
    let answer = match rib::decode_answer(wire) {
        Ok(a) => a.answer,
        Err(e) => {
            view.result = "rejected".into();
            view.detail = Some(format!("the answer does not decode: {e}"));
            return;
        }
    };
    let (pa, loc) = match answer {
        Answer::NotFound { ttl_ms } => {
            view.result = "not_found".into();
            view.detail = Some(format!("no such name (cached {ttl_ms} ms)"));
            return;
        }
        Answer::Found {
            announcement,
            locator,
        } => (announcement, locator),
    };
    let mut verifier = ChainVerifier::new(VerifierConfig::default());
    match verifier.verify(client::wall_ms(), &pa, &loc, Origin::Direct) {
        Ok(route) if route.h == *h => {
            view.result = "found".into();
            view.delegate = Some(display_name(&route.delegate_name));
            view.face_uris = route.face_uris.clone();
            view.version = Some(route.version);
            view.expires = Some(iso_time(route.expires_at_ms));
        }
        Ok(route) => {
            view.result = "rejected".into();
            view.detail = Some(format!(
                "the answer is about another name, {}",
                display_name(&route.name())
            ));
        }
        Err(r) => {
            view.result = "rejected".into();
            view.detail = Some(format!("{}: {}", r.reason, r.detail));
        }
    }
}

/// The name's hash, and the RIB prefixes to ask.
async fn target(c: &mut Client, args: &LookupArgs) -> anyhow::Result<(KeyHash, Vec<Name>)> {
    let name = parse_name(&args.name)?;
    let h = KeyHash::from_name(&name).ok_or_else(|| {
        anyhow::anyhow!(
            "{} is not a self-certifying name (/32=sc/<h> or sc:<hex>)",
            args.name
        )
    })?;
    let ribs = match &args.rib {
        Some(r) => vec![parse_name(r)?],
        None => status(c)
            .await?
            .get("rib")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str()?.parse().ok())
            .collect(),
    };
    Ok((h, ribs))
}

async fn lookup_cmd(c: &mut Client, args: &LookupArgs) -> anyhow::Result<()> {
    let (h, ribs) = target(c, args).await?;
    let view = lookup(c, &h, &ribs).await?;
    if args.out.json {
        return print_json(&view);
    }
    print_lookup(&view)?;
    if view.result != "found" {
        bail!("{} not resolved ({})", view.name, view.result);
    }
    Ok(())
}

fn print_lookup(view: &LookupView) -> std::io::Result<()> {
    print_fields(&[
        ("name", view.name.clone()),
        ("rib", view.rib.clone()),
        ("result", view.result.clone()),
        (
            "delegate",
            view.delegate.clone().unwrap_or_else(|| "-".into()),
        ),
        ("faceUris", view.face_uris.join(" ")),
        (
            "version",
            view.version.map_or("-".into(), |v| v.to_string()),
        ),
        (
            "expires",
            view.expires.clone().unwrap_or_else(|| "-".into()),
        ),
        ("detail", view.detail.clone().unwrap_or_else(|| "-".into())),
    ])
}

async fn list(c: &mut Client, json: bool) -> anyhow::Result<()> {
    let s = status(c).await?;
    let raw = c.dataset("routing", "list").await?;
    let l: Value = serde_json::from_slice(&raw).context("bad routing/list dataset")?;
    if json {
        return print_json(&serde_json::json!({ "status": s, "list": l }));
    }
    outln!("router {}", s["router"].as_str().unwrap_or("?"))?;
    let mut t = Table::new(&["route", "delegate", "hint", "version", "expires in (s)"]);
    for r in l["routes"].as_array().into_iter().flatten() {
        t.row(vec![
            text(&r["name"]),
            text(&r["delegate"]),
            r["hint"].as_str().unwrap_or("-").to_owned(),
            r["version"].to_string(),
            (r["expires_in_ms"].as_u64().unwrap_or(0) / 1000).to_string(),
        ]);
    }
    crate::output::write_out(&t.render())?;
    let mut t = Table::new(&["announced here", "expires in (s)"]);
    for r in l["announced"].as_array().into_iter().flatten() {
        t.row(vec![
            text(&r["name"]),
            (r["expires_in_ms"].as_u64().unwrap_or(0) / 1000).to_string(),
        ]);
    }
    crate::output::write_out(&t.render())?;
    if let Some(reg) = l["registry"].as_array().filter(|r| !r.is_empty()) {
        let mut t = Table::new(&["registry", "delegate", "version", "expires in (s)"]);
        for r in reg {
            t.row(vec![
                text(&r["name"]),
                text(&r["delegate"]),
                r["version"].to_string(),
                (r["expires_in_ms"].as_u64().unwrap_or(0) / 1000).to_string(),
            ]);
        }
        crate::output::write_out(&t.render())?;
    }
    outln!("counters:")?;
    print_counters(&s["stats"])?;
    Ok(())
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or("?").to_owned()
}

/// The routing counters, one per line (maps as `key=value`, zeros left out).
pub(crate) fn print_counters(stats: &Value) -> std::io::Result<()> {
    let mut fields = Vec::new();
    for (k, v) in stats.as_object().into_iter().flatten() {
        let shown = match v {
            Value::Object(m) => {
                let parts: Vec<String> = m
                    .iter()
                    .filter(|(_, n)| n.as_u64() != Some(0))
                    .map(|(k, n)| format!("{k}={n}"))
                    .collect();
                if parts.is_empty() {
                    "none".into()
                } else {
                    parts.join(" ")
                }
            }
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        fields.push((k.as_str(), shown));
    }
    print_fields(&fields)
}

/// One step of `explain`.
#[derive(Debug, Serialize)]
struct Step {
    step: &'static str,
    ok: bool,
    detail: String,
}

async fn explain(c: &mut Client, args: &LookupArgs) -> anyhow::Result<()> {
    let (h, ribs) = target(c, args).await?;
    let mut steps = Vec::new();
    let found = lookup(c, &h, &ribs).await?;
    let registry_ok = found.result != "no_answer" && found.result != "not_found";
    steps.push(Step {
        step: "registry",
        ok: registry_ok,
        detail: match found.result.as_str() {
            "no_answer" => format!(
                "no RIB service answered at {} ({})",
                found.rib,
                found.detail.clone().unwrap_or_default()
            ),
            "not_found" => format!("{} has no such name", found.rib),
            _ => format!("{} holds an announcement", found.rib),
        },
    });
    if registry_ok {
        steps.push(Step {
            step: "chain",
            ok: found.result == "found",
            detail: if found.result == "found" {
                format!(
                    "verified: delegated to {}, version {}, reachable at {}, valid until {}",
                    found.delegate.clone().unwrap_or_default(),
                    found.version.unwrap_or(0),
                    found.face_uris.join(" "),
                    found.expires.clone().unwrap_or_default()
                )
            } else {
                format!("refused: {}", found.detail.clone().unwrap_or_default())
            },
        });
    }
    let chain_ok = found.result == "found";
    let raw = c.dataset("routing", "list").await?;
    let l: Value = serde_json::from_slice(&raw).context("bad routing/list dataset")?;
    let shown = display_name(&h.name());
    let held = l["routes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["name"].as_str() == Some(shown.as_str()));
    if chain_ok {
        let fib: Vec<FibEntry> = c.list("fib", "list").await?;
        let own = fib.iter().find(|e| KeyHash::from_name(&e.name) == Some(h));
        let delegate_name = found
            .delegate
            .as_deref()
            .and_then(|d| nameway_routing::sc::parse_name(d).ok());
        let to_delegate = delegate_name
            .as_ref()
            .and_then(|d| fib.iter().find(|e| e.name == *d));
        let faces = |e: &FibEntry| {
            e.next_hops
                .iter()
                .map(|n| n.face_id.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let (ok, detail) = match (own, to_delegate) {
            (Some(e), _) => (
                true,
                format!("{} -> face {} (a route of the name itself)", display_name(&e.name), faces(e)),
            ),
            (None, Some(e)) => (
                true,
                format!("{} -> face {}", display_name(&e.name), faces(e)),
            ),
            (None, None) => (
                false,
                format!(
                    "no FIB entry for the delegate {}: the first Interest creates a face to its locator record's FaceUri",
                    found.delegate.clone().unwrap_or_default()
                ),
            ),
        };
        steps.push(Step {
            step: "fib",
            ok,
            detail,
        });
        let hint = held.and_then(|r| r["hint"].as_str().map(str::to_owned));
        steps.push(Step {
            step: "hint",
            ok: hint.is_some() || own.is_some(),
            detail: match (&hint, own) {
                (Some(hint), _) => format!("Interests for {shown} get ForwardingHint {hint}"),
                (None, Some(_)) => "none needed: the name has a route here".into(),
                (None, None) => "not set: no Interest for the name has been forwarded here yet (or its route expired)".into(),
            },
        });
    }
    let failed = steps.iter().find(|s| !s.ok).map(|s| s.step);
    if args.out.json {
        return print_json(&serde_json::json!({
            "name": shown,
            "steps": steps,
            "fails_at": failed,
        }));
    }
    outln!("{shown}")?;
    for s in &steps {
        outln!(
            "  {:<9} {}  {}",
            s.step,
            if s.ok { "ok  " } else { "FAIL" },
            s.detail
        )?;
    }
    match failed {
        Some(step) => outln!("fails at: {step}")?,
        None => outln!("resolves: every step holds")?,
    }
    Ok(())
}
