//! `nameway face list|create|update|destroy`: the `faces` management module.

use anyhow::bail;
use nameway_wire::mgmt::{face_persistency, ControlParameters, FaceStatus};
use serde::Serialize;

use crate::client::{self, Client};
use crate::output::{
    link_type_name, outln, persistency_name, print_json, scope_name, write_out, JsonFlag, Table,
};

/// `nameway face ...`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum FaceCommand {
    /// List the faces with their counters (faces/list).
    List(JsonFlag),
    /// Create a face toward a remote FaceUri, e.g. udp4://192.0.2.1:6363 (faces/create).
    Create(CreateArgs),
    /// Destroy a face, given by FaceId or by remote FaceUri (faces/destroy).
    Destroy(DestroyArgs),
    /// Change a face: its persistency, or (namewayd) the Interests per second it may send
    /// (faces/update).
    Update(UpdateArgs),
}

/// Arguments of `nameway face update`.
#[derive(Debug, clap::Args)]
pub(crate) struct UpdateArgs {
    /// FaceId, or the face's remote FaceUri as `nameway face list` shows it.
    face: String,
    /// persistent or permanent.
    #[arg(long, value_enum)]
    persistency: Option<Persistency>,
    #[command(flatten)]
    limit: RateLimitArgs,
    #[command(flatten)]
    out: JsonFlag,
}

/// A per-face Interest rate limit (namewayd's extension to faces/create and faces/update).
#[derive(Debug, clap::Args)]
pub(crate) struct RateLimitArgs {
    /// Interests per second this face may send (a token bucket; the excess is dropped and
    /// counted as rate-limit); 0 lifts the limit.
    #[arg(long, value_name = "PER_SECOND")]
    rate_limit: Option<u64>,
    /// Size of the bucket [default: one second's worth].
    #[arg(long, requires = "rate_limit")]
    burst: Option<u64>,
}

/// Arguments of `nameway face create`.
#[derive(Debug, clap::Args)]
pub(crate) struct CreateArgs {
    /// Remote FaceUri: udp4://host:port, tcp4://host:port (udp://, tcp:// and names resolve).
    uri: String,
    /// persistent: closed when the link fails; permanent: kept through failures.
    #[arg(long, value_enum, default_value_t = Persistency::Persistent)]
    persistency: Persistency,
    /// MTU in bytes (UDP).
    #[arg(long)]
    mtu: Option<u64>,
    /// Secure face (namewayd, UDP or TCP): handshake with the peer forwarder (whose key must be
    /// trusted) and encrypt Data per the security policy (`nameway security`).
    #[arg(long)]
    secure: bool,
    /// With --secure: encrypt every packet whole, headers and payload, whatever its name.
    #[arg(long, requires = "secure")]
    link_wide: bool,
    #[command(flatten)]
    limit: RateLimitArgs,
    #[command(flatten)]
    out: JsonFlag,
}

/// Arguments of `nameway face destroy`.
#[derive(Debug, clap::Args)]
pub(crate) struct DestroyArgs {
    /// FaceId, or the face's remote FaceUri as `nameway face list` shows it.
    face: String,
    #[command(flatten)]
    out: JsonFlag,
}

/// Persistency a user may ask for (on-demand faces are made by the forwarder only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Persistency {
    Persistent,
    Permanent,
}

impl Persistency {
    /// The FacePersistency code.
    fn code(self) -> u64 {
        match self {
            Self::Persistent => face_persistency::PERSISTENT,
            Self::Permanent => face_persistency::PERMANENT,
        }
    }
}

/// One face in `nameway face list --json`.
#[derive(Debug, Serialize)]
pub(crate) struct FaceView {
    face_id: u64,
    uri: String,
    local_uri: String,
    scope: String,
    persistency: String,
    link_type: String,
    mtu: Option<u64>,
    expiration_period_ms: Option<u64>,
    flags: u64,
    n_in_interests: u64,
    n_in_data: u64,
    n_in_nacks: u64,
    n_out_interests: u64,
    n_out_data: u64,
    n_out_nacks: u64,
    n_in_bytes: u64,
    n_out_bytes: u64,
    /// From namewayd's `faces/drops` dataset (absent with another forwarder).
    #[serde(skip_serializing_if = "Option::is_none")]
    pit_entries: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    interest_rate_limit: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    drops: Option<serde_json::Map<String, serde_json::Value>>,
    /// Link-layer drops (queue full, malformed, injected faults...), from the same dataset.
    #[serde(skip_serializing_if = "Option::is_none")]
    link_drops: Option<serde_json::Map<String, serde_json::Value>>,
}

impl From<&FaceStatus> for FaceView {
    fn from(f: &FaceStatus) -> Self {
        Self {
            face_id: f.face_id,
            uri: f.uri.clone(),
            local_uri: f.local_uri.clone(),
            scope: scope_name(f.face_scope),
            persistency: persistency_name(f.face_persistency),
            link_type: link_type_name(f.link_type),
            mtu: f.mtu,
            expiration_period_ms: f.expiration_period,
            flags: f.flags,
            n_in_interests: f.n_in_interests,
            n_in_data: f.n_in_data,
            n_in_nacks: f.n_in_nacks,
            n_out_interests: f.n_out_interests,
            n_out_data: f.n_out_data,
            n_out_nacks: f.n_out_nacks,
            n_in_bytes: f.n_in_bytes,
            n_out_bytes: f.n_out_bytes,
            pit_entries: None,
            interest_rate_limit: None,
            drops: None,
            link_drops: None,
        }
    }
}

/// A face created or destroyed, from the response's ControlParameters.
#[derive(Debug, Serialize)]
struct FaceChange {
    face_id: Option<u64>,
    uri: Option<String>,
    local_uri: Option<String>,
    persistency: Option<String>,
    mtu: Option<u64>,
    /// Interests per second (0: none), when namewayd reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    interest_rate_limit: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    interest_burst: Option<u64>,
}

impl From<&ControlParameters> for FaceChange {
    fn from(p: &ControlParameters) -> Self {
        Self {
            face_id: p.face_id,
            uri: p.uri.clone(),
            local_uri: p.local_uri.clone(),
            persistency: p.face_persistency.map(persistency_name),
            mtu: p.mtu,
            interest_rate_limit: p.interest_rate_limit,
            interest_burst: p.interest_burst,
        }
    }
}

impl FaceChange {
    /// "1000/s burst 2000", "none", or "?" when the forwarder did not say.
    fn rate_limit_text(&self) -> String {
        match (self.interest_rate_limit, self.interest_burst) {
            (Some(0), _) => "none".to_owned(),
            (Some(r), Some(b)) => format!("{r}/s burst {b}"),
            (Some(r), None) => format!("{r}/s"),
            (None, _) => "?".to_owned(),
        }
    }
}

/// Runs `nameway face ...`.
///
/// # Errors
/// The forwarder cannot be reached, refuses the command, or the face does not exist.
pub(crate) async fn run(transport: Option<&str>, cmd: &FaceCommand) -> anyhow::Result<()> {
    let mut c = client::connect(transport).await?;
    match cmd {
        FaceCommand::List(out) => list(&mut c, out.json).await,
        FaceCommand::Create(args) => create(&mut c, args).await,
        FaceCommand::Destroy(args) => destroy(&mut c, args).await,
        FaceCommand::Update(args) => update(&mut c, args).await,
    }
}

async fn list(c: &mut Client, json: bool) -> anyhow::Result<()> {
    let faces: Vec<FaceStatus> = c.list("faces", "list").await?;
    let mut views: Vec<FaceView> = faces.iter().map(FaceView::from).collect();
    // namewayd's drops by reason and PIT charge, joined by FaceId.
    if c.is_nameway().await? {
        let raw = c.dataset("faces", "drops").await?;
        let extra: Vec<serde_json::Value> = serde_json::from_slice(&raw)
            .map_err(|e| anyhow::anyhow!("bad faces/drops dataset: {e}"))?;
        // By FaceId: with thousands of faces a search per face took seconds.
        let by_id: std::collections::HashMap<u64, &serde_json::Value> = extra
            .iter()
            .filter_map(|x| Some((x["id"].as_u64()?, x)))
            .collect();
        for v in &mut views {
            let Some(x) = by_id.get(&v.face_id) else {
                continue;
            };
            v.pit_entries = x["pit_entries"].as_u64();
            v.interest_rate_limit = x["interest_rate_limit"].as_u64().map(|per_second| {
                serde_json::json!({ "per_second": per_second, "burst": x["interest_burst"] })
            });
            v.drops = x["drops"].as_object().cloned();
            v.link_drops = x["link_drops"].as_object().cloned();
        }
    }
    if json {
        return print_json(&views);
    }
    let mut t = Table::new(&[
        "FaceId",
        "Remote",
        "Local",
        "Scope",
        "Persistency",
        "InInterests",
        "InData",
        "InNacks",
        "OutInterests",
        "OutData",
        "OutNacks",
        "PitEntries",
        "Drops",
    ]);
    for (f, v) in faces.iter().zip(&views) {
        // e.g. "30000 face-quota, 2 no-route, 5 link queue-full"
        let forwarder = v.drops.iter().flatten().map(|(r, n)| format!("{n} {r}"));
        let link = v
            .link_drops
            .iter()
            .flatten()
            .map(|(r, n)| format!("{n} link {r}"));
        let drops = forwarder.chain(link).collect::<Vec<_>>().join(", ");
        t.row(vec![
            f.face_id.to_string(),
            f.uri.clone(),
            f.local_uri.clone(),
            scope_name(f.face_scope),
            persistency_name(f.face_persistency),
            f.n_in_interests.to_string(),
            f.n_in_data.to_string(),
            f.n_in_nacks.to_string(),
            f.n_out_interests.to_string(),
            f.n_out_data.to_string(),
            f.n_out_nacks.to_string(),
            v.pit_entries.map_or_else(String::new, |n| n.to_string()),
            drops,
        ]);
    }
    write_out(&t.render())?;
    Ok(())
}

async fn create(c: &mut Client, args: &CreateArgs) -> anyhow::Result<()> {
    let params = ControlParameters {
        uri: Some(args.uri.clone()),
        face_persistency: Some(args.persistency.code()),
        mtu: args.mtu,
        interest_rate_limit: args.limit.rate_limit,
        interest_burst: args.limit.burst,
        secure_mode: match (args.secure, args.link_wide) {
            (true, true) => Some("link-wide".to_owned()),
            (true, false) => Some("per-prefix".to_owned()),
            _ => None,
        },
        ..ControlParameters::default()
    };
    let response = c.command("faces", "create", &params).await?;
    let existing = response.parameters().ok().flatten();
    if response.status_code == 409 {
        if let Some(existing) = existing.filter(|p| p.face_id.is_some()) {
            // The face exists (the far side of a secure face, created by its handshake, or a
            // second `face create`): as nfdc, upgrade its persistency when asked for more, and
            // succeed either way.
            return face_exists(c, args, &existing).await;
        }
    }
    if response.status_code != 200 {
        anyhow::bail!(
            "faces/create failed: {} {}",
            response.status_code,
            response.status_text
        );
    }
    let body = response.parameters().ok().flatten().unwrap_or_default();
    let created = FaceChange::from(&body);
    if args.out.json {
        return print_json(&created);
    }
    if args.secure {
        eprintln!(
            "the face handshakes with its peer now: `nameway neighbour list` shows the state (the peer must trust this forwarder's key, `nameway identity show`)"
        );
    }
    let limit = match created.interest_rate_limit {
        Some(_) => format!(" rate-limit={}", created.rate_limit_text()),
        None => String::new(),
    };
    outln!(
        "face created: id={} remote={} local={} persistency={}{limit}",
        opt(created.face_id),
        created.uri.as_deref().unwrap_or("?"),
        created.local_uri.as_deref().unwrap_or("?"),
        created.persistency.as_deref().unwrap_or("?"),
    )?;
    Ok(())
}

/// How much a persistency keeps a face: on-demand < persistent < permanent (nfdc's order).
fn persistency_rank(code: u64) -> u8 {
    match code {
        face_persistency::PERMANENT => 2,
        face_persistency::PERSISTENT => 1,
        _ => 0,
    }
}

/// `face create` of a face that exists: upgrades its persistency if the request asks for a
/// higher one (`faces/update`, as nfdc does), and reports it; exits 0 either way.
async fn face_exists(
    c: &mut Client,
    args: &CreateArgs,
    existing: &ControlParameters,
) -> anyhow::Result<()> {
    let wanted = args.persistency.code();
    let upgrade = existing
        .face_persistency
        .is_none_or(|have| persistency_rank(wanted) > persistency_rank(have));
    let (what, face) = if upgrade {
        let params = ControlParameters {
            face_id: existing.face_id,
            face_persistency: Some(wanted),
            ..ControlParameters::default()
        };
        let updated = c.command_ok("faces", "update", &params).await?;
        let mut face = FaceChange::from(existing);
        face.persistency = updated
            .face_persistency
            .or(Some(wanted))
            .map(persistency_name);
        ("face-updated", face)
    } else {
        ("face-exists", FaceChange::from(existing))
    };
    if args.out.json {
        return print_json(&serde_json::json!({ "result": what, "face": face }));
    }
    outln!(
        "{what} id={} remote={} local={} persistency={}",
        opt(face.face_id),
        face.uri.as_deref().unwrap_or("?"),
        face.local_uri.as_deref().unwrap_or("?"),
        face.persistency.as_deref().unwrap_or("?"),
    )?;
    Ok(())
}

async fn update(c: &mut Client, args: &UpdateArgs) -> anyhow::Result<()> {
    let id = resolve_face(c, &args.face).await?;
    if args.limit.rate_limit.is_some() && !c.is_nameway().await? {
        bail!("--rate-limit needs namewayd (NFD has no per-face rate limit)");
    }
    let params = ControlParameters {
        face_id: Some(id),
        face_persistency: args.persistency.map(Persistency::code),
        interest_rate_limit: args.limit.rate_limit,
        interest_burst: args.limit.burst,
        ..ControlParameters::default()
    };
    let body = c.command_ok("faces", "update", &params).await?;
    let updated = FaceChange::from(&body);
    if args.out.json {
        return print_json(&updated);
    }
    outln!(
        "face updated: id={} persistency={} rate-limit={}",
        opt(updated.face_id.or(Some(id))),
        updated.persistency.as_deref().unwrap_or("?"),
        updated.rate_limit_text(),
    )?;
    Ok(())
}

async fn destroy(c: &mut Client, args: &DestroyArgs) -> anyhow::Result<()> {
    let id = resolve_face(c, &args.face).await?;
    let params = ControlParameters {
        face_id: Some(id),
        ..ControlParameters::default()
    };
    let destroyed = FaceChange::from(&c.command_ok("faces", "destroy", &params).await?);
    if args.out.json {
        return print_json(&destroyed);
    }
    outln!("face destroyed: id={}", opt(destroyed.face_id.or(Some(id))))?;
    Ok(())
}

/// A FaceId from a number or a remote FaceUri; checks that the face exists.
///
/// # Errors
/// No face has that id or URI.
pub(crate) async fn resolve_face(c: &mut Client, face: &str) -> anyhow::Result<u64> {
    let faces: Vec<FaceStatus> = c.list("faces", "list").await?;
    if let Ok(id) = face.parse::<u64>() {
        if !faces.iter().any(|f| f.face_id == id) {
            bail!("there is no face {id}: see `nameway face list`");
        }
        return Ok(id);
    }
    let wanted = [
        face.to_owned(),
        face.replacen("udp://", "udp4://", 1),
        face.replacen("tcp://", "tcp4://", 1),
    ];
    match faces.iter().find(|f| wanted.contains(&f.uri)) {
        Some(f) => Ok(f.face_id),
        None => bail!(
            "no face has remote URI {face:?}: give a FaceId or a URI as `nameway face list` \
             shows it"
        ),
    }
}

fn opt(n: Option<u64>) -> String {
    n.map_or_else(|| "?".into(), |n| n.to_string())
}
