//! `nameway route list|add|remove`: routes in the RIB (`rib/register`, `rib/unregister`,
//! `rib/list`), and the FIB they produce (`fib/list`).

use nameway_wire::mgmt::{route_flags, route_origin, ControlParameters, FibEntry, RibEntry};
use serde::Serialize;

use crate::client::{self, parse_name, Client};
use crate::face::resolve_face;
use crate::output::{origin_name, outln, print_json, write_out, JsonFlag, Table};

/// `nameway route ...`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum RouteCommand {
    /// List the routes (rib/list), or the FIB next hops with --fib (fib/list).
    List(ListArgs),
    /// Add a route toward a face (rib/register).
    Add(AddArgs),
    /// Remove a route (rib/unregister).
    Remove(RemoveArgs),
}

/// Arguments of `nameway route list`.
#[derive(Debug, clap::Args)]
pub(crate) struct ListArgs {
    /// Show the FIB (the next hops in use) instead of the RIB.
    #[arg(long)]
    fib: bool,
    #[command(flatten)]
    out: JsonFlag,
}

/// Arguments of `nameway route add`.
#[derive(Debug, clap::Args)]
pub(crate) struct AddArgs {
    /// Name prefix, e.g. /example.
    prefix: String,
    /// FaceId, or the face's remote FaceUri.
    face: String,
    /// Routing cost.
    #[arg(long, default_value_t = 0)]
    cost: u64,
    /// Route origin (0 app, 65 client, 128 nlsr, 255 static).
    #[arg(long, default_value_t = route_origin::STATIC)]
    origin: u64,
    /// Remove the route after this many milliseconds (default: never).
    #[arg(long, value_name = "MS")]
    expires: Option<u64>,
    /// Do not apply the route to longer prefixes (clears CHILD_INHERIT).
    #[arg(long)]
    no_inherit: bool,
    /// Routes of longer prefixes do not go beyond this one (sets CAPTURE).
    #[arg(long)]
    capture: bool,
    #[command(flatten)]
    out: JsonFlag,
}

/// Arguments of `nameway route remove`.
#[derive(Debug, clap::Args)]
pub(crate) struct RemoveArgs {
    /// Name prefix.
    prefix: String,
    /// FaceId, or the face's remote FaceUri.
    face: String,
    /// Route origin of the route to remove.
    #[arg(long, default_value_t = route_origin::STATIC)]
    origin: u64,
    #[command(flatten)]
    out: JsonFlag,
}

/// One route in `nameway route list --json` (flattened: one object per route).
#[derive(Debug, Serialize)]
struct RouteView {
    prefix: String,
    face_id: u64,
    origin: u64,
    cost: u64,
    flags: u64,
    child_inherit: bool,
    capture: bool,
    expires_ms: Option<u64>,
}

/// One next hop in `nameway route list --fib --json`.
#[derive(Debug, Serialize)]
struct NextHopView {
    prefix: String,
    face_id: u64,
    cost: u64,
}

/// What `route add` / `route remove` did (the response's parameters).
#[derive(Debug, Serialize)]
struct RouteChange {
    prefix: Option<String>,
    face_id: Option<u64>,
    origin: Option<u64>,
    cost: Option<u64>,
    flags: Option<u64>,
    expires_ms: Option<u64>,
}

impl From<&ControlParameters> for RouteChange {
    fn from(p: &ControlParameters) -> Self {
        Self {
            prefix: p.name.as_ref().map(client::show_name),
            face_id: p.face_id,
            origin: p.origin,
            cost: p.cost,
            flags: p.flags,
            expires_ms: p.expiration_period,
        }
    }
}

/// Runs `nameway route ...`.
///
/// # Errors
/// The forwarder cannot be reached or refuses the command, or an argument is invalid.
pub(crate) async fn run(transport: Option<&str>, cmd: &RouteCommand) -> anyhow::Result<()> {
    let mut c = client::connect(transport).await?;
    match cmd {
        RouteCommand::List(args) if args.fib => list_fib(&mut c, args.out.json).await,
        RouteCommand::List(args) => list_rib(&mut c, args.out.json).await,
        RouteCommand::Add(args) => add(&mut c, args).await,
        RouteCommand::Remove(args) => remove(&mut c, args).await,
    }
}

async fn list_rib(c: &mut Client, json: bool) -> anyhow::Result<()> {
    let rib: Vec<RibEntry> = c.list("rib", "list").await?;
    let routes: Vec<RouteView> = rib
        .iter()
        .flat_map(|e| {
            e.routes.iter().map(|r| RouteView {
                prefix: client::show_name(&e.name),
                face_id: r.face_id,
                origin: r.origin,
                cost: r.cost,
                flags: r.flags,
                child_inherit: r.flags & route_flags::CHILD_INHERIT != 0,
                capture: r.flags & route_flags::CAPTURE != 0,
                expires_ms: r.expiration_period,
            })
        })
        .collect();
    if json {
        return print_json(&routes);
    }
    let mut t = Table::new(&["Prefix", "FaceId", "Origin", "Cost", "Flags", "Expires"]);
    for r in &routes {
        t.row(vec![
            r.prefix.clone(),
            r.face_id.to_string(),
            origin_name(r.origin),
            r.cost.to_string(),
            flag_names(r.flags),
            r.expires_ms
                .map_or_else(|| "never".into(), |ms| format!("{}s", ms / 1000)),
        ]);
    }
    write_out(&t.render())?;
    Ok(())
}

async fn list_fib(c: &mut Client, json: bool) -> anyhow::Result<()> {
    let fib: Vec<FibEntry> = c.list("fib", "list").await?;
    let hops: Vec<NextHopView> = fib
        .iter()
        .flat_map(|e| {
            e.next_hops.iter().map(|h| NextHopView {
                prefix: client::show_name(&e.name),
                face_id: h.face_id,
                cost: h.cost,
            })
        })
        .collect();
    if json {
        return print_json(&hops);
    }
    let mut t = Table::new(&["Prefix", "FaceId", "Cost"]);
    for h in &hops {
        t.row(vec![
            h.prefix.clone(),
            h.face_id.to_string(),
            h.cost.to_string(),
        ]);
    }
    write_out(&t.render())?;
    Ok(())
}

async fn add(c: &mut Client, args: &AddArgs) -> anyhow::Result<()> {
    let prefix = parse_name(&args.prefix)?;
    let face = resolve_face(c, &args.face).await?;
    let mut flags = route_flags::CHILD_INHERIT;
    if args.no_inherit {
        flags &= !route_flags::CHILD_INHERIT;
    }
    if args.capture {
        flags |= route_flags::CAPTURE;
    }
    let params = ControlParameters {
        name: Some(prefix),
        face_id: Some(face),
        origin: Some(args.origin),
        cost: Some(args.cost),
        flags: Some(flags),
        expiration_period: args.expires,
        ..ControlParameters::default()
    };
    let done = RouteChange::from(&c.command_ok("rib", "register", &params).await?);
    if args.out.json {
        return print_json(&done);
    }
    outln!(
        "route added: prefix={} face={} origin={} cost={} flags={}",
        done.prefix.as_deref().unwrap_or(&args.prefix),
        done.face_id.unwrap_or(face),
        origin_name(done.origin.unwrap_or(args.origin)),
        done.cost.unwrap_or(args.cost),
        flag_names(done.flags.unwrap_or(flags)),
    )?;
    Ok(())
}

async fn remove(c: &mut Client, args: &RemoveArgs) -> anyhow::Result<()> {
    let prefix = parse_name(&args.prefix)?;
    let face = match args.face.parse::<u64>() {
        Ok(id) => id,
        Err(_) => resolve_face(c, &args.face).await?,
    };
    let params = ControlParameters {
        name: Some(prefix),
        face_id: Some(face),
        origin: Some(args.origin),
        ..ControlParameters::default()
    };
    let done = RouteChange::from(&c.command_ok("rib", "unregister", &params).await?);
    if args.out.json {
        return print_json(&done);
    }
    outln!(
        "route removed: prefix={} face={} origin={}",
        done.prefix.as_deref().unwrap_or(&args.prefix),
        done.face_id.unwrap_or(face),
        origin_name(done.origin.unwrap_or(args.origin)),
    )?;
    Ok(())
}

/// `child-inherit|capture`, or `none`.
fn flag_names(flags: u64) -> String {
    let mut names = Vec::new();
    if flags & route_flags::CHILD_INHERIT != 0 {
        names.push("child-inherit");
    }
    if flags & route_flags::CAPTURE != 0 {
        names.push("capture");
    }
    if names.is_empty() {
        "none".into()
    } else {
        names.join("|")
    }
}
