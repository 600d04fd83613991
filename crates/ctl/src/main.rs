//! `namewayctl`: the Nameway controller's command line (phase 1: the database, the CA and
//! route computation; the service that talks to forwarders comes with phase 2).
//!
//! Exit codes: 0 success, 1 failure, 2 usage error, 3 the database is unusable (not
//! SQLite, another application's, too new, corrupt), 4 an enrolment refused.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context as _};
use clap::{Parser, Subcommand};
use nameway_ctl::ca::{self, anchor_cert_path, anchor_key_path, Authority, CaError};
use nameway_ctl::ca_store::{BoxedCaStore, CaStore};
use nameway_ctl::serve::BoxedStore;
use nameway_ctl::{
    now_ms, parse_topology, Durability, GroupCommitConfig, NodeId, Registration, RegistrationKey,
    Registry, RegistryStore, SqliteStore, StoreError,
};
use nameway_wire::Name;

#[derive(Parser)]
#[command(name = "namewayctl", version, about = "The Nameway controller")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Creates the database and the domain's Ed25519 anchor (key beside the db, mode 0600).
    Init {
        /// The domain's name, e.g. /example.
        #[arg(long)]
        domain: String,
        /// The database file.
        #[arg(long)]
        db: PathBuf,
    },
    /// Makes a one-time enrolment token for a router (printed once; stored hashed).
    Token {
        /// The router's name, under the domain.
        #[arg(long)]
        router: String,
        /// Lifetime: 90s, 30m, 1h, 7d.
        #[arg(long, default_value = "1h")]
        ttl: String,
        /// The database file, or the PostgreSQL database the controllers share.
        #[arg(long)]
        db: PathBuf,
        /// With a PostgreSQL --db: the CA's file (`namewayctl init`) whose anchor it uses.
        #[arg(long)]
        ca: Option<PathBuf>,
    },
    /// Enrols a router with its token and public key; writes its certificate.
    Enrol {
        /// The router's name.
        #[arg(long)]
        router: String,
        /// The token `namewayctl token` printed.
        #[arg(long)]
        token: String,
        /// The router's Ed25519 public key (PEM or DER SubjectPublicKeyInfo).
        #[arg(long)]
        key: PathBuf,
        /// Where to write the certificate (base64, as ndnsec writes them).
        #[arg(long)]
        out: PathBuf,
        /// The router's X25519 public key (64 hex digits), to which group keys are sealed.
        #[arg(long)]
        kem_key: Option<String>,
        /// The database file.
        #[arg(long)]
        db: PathBuf,
    },
    /// The registry of names.
    Registry {
        #[command(subcommand)]
        op: RegistryOp,
    },
    /// Computes the routes to PREFIX from a topology file (and the registry, with --db).
    Routes {
        /// The name to route.
        prefix: String,
        /// The topology TOML file.
        #[arg(long)]
        topology: PathBuf,
        /// Also take origins from this registry database.
        #[arg(long)]
        db: Option<PathBuf>,
    },
    /// Shows the anchor and the enrolled routers' certificates.
    Keys {
        /// Makes a group key for this prefix, sealed to every --member (HPKE), instead of
        /// listing.
        #[arg(long)]
        group: Option<String>,
        /// A member router of the group key (repeat).
        #[arg(long = "member")]
        members: Vec<String>,
        /// The group key's lifetime.
        #[arg(long, default_value = "7d")]
        ttl: String,
        /// The prefix's security level (a level that encrypts).
        #[arg(long, default_value = nameway_ctl::group_keys::DEFAULT_LEVEL)]
        level: String,
        /// A rotation: the prefix's older keys stay valid this long after the new one is
        /// made (both open meanwhile), then expire.
        #[arg(long, default_value = "30s")]
        overlap: String,
        /// The database file, or the PostgreSQL database the controllers share.
        #[arg(long)]
        db: PathBuf,
        /// With a PostgreSQL --db: the CA's file (`namewayctl init`) whose anchor it uses.
        #[arg(long)]
        ca: Option<PathBuf>,
    },
    /// Adds a router (or certificate) name to the deny list; with --out, writes the whole
    /// list signed by the anchor (Data `<domain>/32=ctl/deny/v=<ms>`).
    Deny {
        /// The name refused (a router, or one certificate's name).
        name: String,
        /// Why (kept in the database).
        #[arg(long, default_value = "")]
        reason: String,
        /// Where to write the signed deny list.
        #[arg(long)]
        out: Option<PathBuf>,
        /// The database file, or the PostgreSQL database the controllers share.
        #[arg(long)]
        db: PathBuf,
        /// With a PostgreSQL --db: the CA's file (`namewayctl init`) whose anchor it uses.
        #[arg(long)]
        ca: Option<PathBuf>,
    },
    /// Writes a consistent copy of the database (safe while it is in use).
    Backup {
        /// The database file.
        #[arg(long)]
        db: PathBuf,
        /// The copy (must not exist).
        #[arg(long)]
        to: PathBuf,
    },
    /// Runs the controller: agents connect on --listen (Noise, pinned anchor) or --tls-listen
    /// (mutual TLS, pinned anchor too), their reports
    /// become routes, and every forwarder gets its FIB as signed objects.
    Serve {
        /// The database file (`namewayctl init`), or a PostgreSQL database the controllers
        /// share (`postgres://...`, `host=... dbname=...`; then `--ca` names the CA's file).
        #[arg(long)]
        db: PathBuf,
        /// When `--db` is a PostgreSQL database: the CA's file (`namewayctl init`), whose
        /// anchor key and certificate beside it this controller signs with; tokens,
        /// certificates, the deny list and group keys are in the shared database.
        #[arg(long)]
        ca: Option<PathBuf>,
        /// Where agents connect with Noise, e.g. 0.0.0.0:7400 (optional with --tls-listen).
        #[arg(long)]
        listen: Option<std::net::SocketAddr>,
        /// Where agents connect with mutual TLS 1.3, e.g. 0.0.0.0:7401 (needs --tls-cert,
        /// --tls-key and --tls-client-ca).
        #[arg(long, requires_all = ["tls_cert", "tls_key", "tls_client_ca"])]
        tls_listen: Option<std::net::SocketAddr>,
        /// The controller's TLS certificate chain (PEM).
        #[arg(long, requires = "tls_listen")]
        tls_cert: Option<PathBuf>,
        /// The controller's TLS private key (PEM).
        #[arg(long, requires = "tls_listen")]
        tls_key: Option<PathBuf>,
        /// The CA certificates (PEM) that sign the agents' client certificates; an agent
        /// without one is refused in the handshake.
        #[arg(long, requires = "tls_listen")]
        tls_client_ca: Option<PathBuf>,
        /// HTTP listener: /metrics and /status.
        #[arg(long)]
        http: Option<std::net::SocketAddr>,
        /// Equal-cost next hops per FIB entry, at most.
        #[arg(long, default_value_t = 2)]
        max_nexthops: usize,
        /// How long a reported registration lives in the registry without a report.
        #[arg(long, default_value = "10m")]
        registration_ttl: String,
        /// Lifetime of the router certificates issued (agents renew at 2/3 of it).
        #[arg(long, default_value = "7d")]
        cert_lifetime: String,
        /// Cache policy file (TOML; docs/controller.md, "Cache policy"), read again whenever
        /// it changes.
        #[arg(long)]
        cache_policy: Option<PathBuf>,
        /// With a PostgreSQL --db: how often the CA's tables (deny list, routers' records,
        /// group keys) are read again while the database's notifications are heard (they
        /// wake the check at once); every 500 ms while they are not.
        #[arg(long, default_value = "5s")]
        ca_poll: String,
    },
    /// Runs SQLite's integrity check on the database.
    Check {
        /// The database file.
        #[arg(long)]
        db: PathBuf,
    },
}

#[derive(Subcommand)]
enum RegistryOp {
    /// Lists the registrations.
    List {
        /// The database file.
        #[arg(long)]
        db: PathBuf,
    },
    /// Adds (or renews) a registration.
    Add {
        /// The prefix.
        prefix: String,
        /// The router that reaches it.
        #[arg(long)]
        node: String,
        /// The router's face toward the producer.
        #[arg(long, default_value_t = 0)]
        face: u64,
        /// Cost at the origin.
        #[arg(long, default_value_t = 0)]
        cost: u32,
        /// Lifetime (soft state).
        #[arg(long, default_value = "1h")]
        ttl: String,
        /// The database file.
        #[arg(long)]
        db: PathBuf,
    },
    /// Removes a registration.
    Remove {
        /// The prefix.
        prefix: String,
        /// The router.
        #[arg(long)]
        node: String,
        /// The router's face.
        #[arg(long, default_value_t = 0)]
        face: u64,
        /// The database file.
        #[arg(long)]
        db: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let line = format!("{e:#}");
            eprintln!(
                "namewayctl: {}",
                line.split_whitespace().collect::<Vec<_>>().join(" ")
            );
            ExitCode::from(exit_code(&e))
        }
    }
}

fn exit_code(e: &anyhow::Error) -> u8 {
    let store = |s: &StoreError| {
        matches!(
            s,
            StoreError::NotADatabase { .. }
                | StoreError::Foreign { .. }
                | StoreError::ForeignDatabase { .. }
                | StoreError::TooNew { .. }
                | StoreError::Corrupt { .. }
        )
    };
    for cause in e.chain() {
        if let Some(s) = cause.downcast_ref::<StoreError>() {
            if store(s) {
                return 3;
            }
        }
        if let Some(c) = cause.downcast_ref::<CaError>() {
            match c {
                CaError::Store(s) if store(s) => return 3,
                CaError::UnknownToken
                | CaError::TokenUsed
                | CaError::TokenExpired
                | CaError::WrongRouter { .. }
                | CaError::Denied(_)
                | CaError::OutsideDomain { .. }
                | CaError::BadRouterKey => return 4,
                _ => {}
            }
        }
    }
    1
}

fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Serve {
            db,
            ca,
            listen,
            tls_listen,
            tls_cert,
            tls_key,
            tls_client_ca,
            http,
            max_nexthops,
            registration_ttl,
            cert_lifetime,
            cache_policy,
            ca_poll,
        } => {
            // On PostgreSQL, one more connection: the change feed shared live with the other
            // controllers on the database.
            let live = is_postgres(&db).then(|| db.to_string_lossy().into_owned());
            let (ca_db, registry) = serve_stores(db, ca)?;
            exists(&ca_db)?;
            let tls = match (tls_listen, tls_cert, tls_key, tls_client_ca) {
                (Some(addr), Some(cert), Some(key), Some(ca)) => Some((
                    addr,
                    nameway_ctl::channel::tls::ServerTls::from_pem(&cert, &key, &ca)
                        .context("--tls-cert/--tls-key/--tls-client-ca")?,
                )),
                _ => None,
            };
            if listen.is_none() && tls.is_none() {
                bail!("give --listen (Noise), --tls-listen (mutual TLS), or both");
            }
            let config = nameway_ctl::serve::ServeConfig {
                db: ca_db,
                listen,
                tls,
                http,
                max_nexthops,
                registration_ttl_ms: parse_duration(&registration_ttl)?,
                cert_lifetime_s: parse_duration(&cert_lifetime)? / 1000,
                cache_policy,
                ca_poll_listening: std::time::Duration::from_millis(parse_duration(&ca_poll)?),
            };
            serve(config, registry, live)
        }
        Command::Init { domain, db } => init(&domain, &db),
        Command::Token {
            router,
            ttl,
            db,
            ca,
        } => {
            let (mut store, _) = ca_store(&db, ca.as_deref())?;
            let router = parse_name(&router)?;
            domain_of(&mut store, &db, &router)?;
            let token = ca::create_token(&mut store, &router, parse_duration(&ttl)?, now_ms())?;
            println!("{token}");
            Ok(())
        }
        Command::Enrol {
            router,
            token,
            key,
            out,
            kem_key,
            db,
        } => {
            let mut store = open_full(&db)?;
            let authority = Authority::load(&anchor_key_path(&db), &anchor_cert_path(&db))?;
            let router = parse_name(&router)?;
            let der = read_public_key(&key)?;
            let kem = kem_key
                .map(|h| match hex::decode(h.trim()) {
                    Ok(k) if k.len() == 32 => Ok(k),
                    _ => Err(anyhow::anyhow!("--kem-key must be 64 hex digits (X25519)")),
                })
                .transpose()?;
            let cert = ca::enrol(
                &mut store,
                &authority,
                &token,
                &router,
                &der,
                kem.as_deref(),
                now_ms(),
            )?;
            cert.save(&out)?;
            println!("{}", cert.name());
            Ok(())
        }
        Command::Registry { op } => registry(op),
        Command::Routes {
            prefix,
            topology,
            db,
        } => routes(&prefix, &topology, db.as_deref()),
        Command::Keys {
            group: Some(scope),
            members,
            ttl,
            level,
            overlap,
            db,
            ca,
        } => {
            let (mut store, _) = ca_store(&db, ca.as_deref())?;
            let scope = parse_name(&scope)?.to_string();
            let lv: nameway_wire::lp::SecurityLevel = level
                .parse()
                .map_err(|e| anyhow::anyhow!("--level {level:?}: {e}"))?;
            if !lv.encrypts() {
                bail!("--level {level:?} does not encrypt: a group key needs a level that does");
            }
            let overlap = parse_duration(&overlap)?;
            if members.is_empty() {
                bail!("a group key needs at least one --member");
            }
            let members: Vec<String> = members
                .iter()
                .map(|m| parse_name(m).map(|n| n.to_string()))
                .collect::<anyhow::Result<_>>()?;
            let refs: Vec<&str> = members.iter().map(String::as_str).collect();
            let now = now_ms();
            let id = nameway_ctl::group_keys::create_group_key(
                &mut store,
                &scope,
                lv.name(),
                &refs,
                now,
                now.saturating_add(parse_duration(&ttl)?),
            )?;
            let retired = nameway_ctl::group_keys::retire_others(
                &mut store,
                &scope,
                &id,
                now.saturating_add(overlap),
            )?;
            if retired > 0 {
                eprintln!(
                    "{retired} older key(s) of {scope} retire in {}s",
                    overlap / 1000
                );
            }
            println!("{id}");
            Ok(())
        }
        Command::Keys {
            group: None,
            db,
            ca,
            ..
        } => keys(&db, ca.as_deref()),
        Command::Deny {
            name,
            reason,
            out,
            db,
            ca,
        } => {
            let (mut store, anchor) = ca_store(&db, ca.as_deref())?;
            let name = parse_name(&name)?;
            domain_of(&mut store, &db, &name)?;
            ca::deny(&mut store, &name, &reason, now_ms())?;
            let names = ca::denied(&mut store)?;
            if let Some(out) = out {
                let authority =
                    Authority::load(&anchor_key_path(&anchor), &anchor_cert_path(&anchor))?;
                let wire = authority.sign_deny_list(&names, now_ms())?;
                std::fs::write(&out, &wire)
                    .with_context(|| format!("cannot write {}", out.display()))?;
            }
            println!("{} names denied", names.len());
            Ok(())
        }
        Command::Backup { db, to } => {
            let mut store = open(&db)?;
            store.backup(&to)?;
            println!("{}", to.display());
            Ok(())
        }
        Command::Check { db } => {
            let mut store = open(&db)?;
            store.integrity_check()?;
            println!("ok: schema version {}", store.schema_version()?);
            Ok(())
        }
    }
}

fn init(domain: &str, db: &Path) -> anyhow::Result<()> {
    let domain = parse_name(domain)?;
    if domain.is_empty() {
        bail!("the domain must have at least one component");
    }
    let mut store = open_full(db)?;
    if let Some(d) = store.meta("domain")? {
        bail!("{} is already initialised for domain {d}", db.display());
    }
    let authority = Authority::create(&domain, &anchor_key_path(db), &anchor_cert_path(db))?;
    store.set_meta("domain", &domain.to_string())?;
    store.audit(now_ms(), "operator", "init", &domain.to_string())?;
    println!("domain    {domain}");
    println!("database  {}", db.display());
    println!("anchor    {}", authority.certificate().name());
    println!("key       {}", anchor_key_path(db).display());
    println!("cert      {}", anchor_cert_path(db).display());
    Ok(())
}

fn registry(op: RegistryOp) -> anyhow::Result<()> {
    match op {
        RegistryOp::List { db } => {
            let (r, _) =
                Registry::open(open_registry(&db)?, now_ms(), GroupCommitConfig::default())?;
            for g in r.all() {
                let left = g.expires_ms.saturating_sub(now_ms()) / 1000;
                println!(
                    "{}  node {}  face {}  origin {}  cost {}  expires in {left}s",
                    g.prefix, g.node, g.face, g.origin, g.cost
                );
            }
            Ok(())
        }
        RegistryOp::Add {
            prefix,
            node,
            face,
            cost,
            ttl,
            db,
        } => {
            let (r, _) =
                Registry::open(open_registry(&db)?, now_ms(), GroupCommitConfig::default())?;
            r.register(Registration {
                prefix: parse_name(&prefix)?,
                node: parse_name(&node)?.to_string(),
                face,
                origin: 128,
                cost,
                flags: 1,
                expires_ms: now_ms().saturating_add(parse_duration(&ttl)?),
                owner_key: None,
                announcement: None,
            })?;
            let mut store = r.close()?;
            store.audit(now_ms(), "operator", "registry add", &prefix)?;
            Ok(())
        }
        RegistryOp::Remove {
            prefix,
            node,
            face,
            db,
        } => {
            let (r, _) =
                Registry::open(open_registry(&db)?, now_ms(), GroupCommitConfig::default())?;
            let key = RegistrationKey {
                prefix: parse_name(&prefix)?,
                node: parse_name(&node)?.to_string(),
                face,
            };
            if !r.unregister(&key)? {
                bail!("no registration of {prefix} at {node} face {face}");
            }
            let mut store = r.close()?;
            store.audit(now_ms(), "operator", "registry remove", &prefix)?;
            Ok(())
        }
    }
}

fn routes(prefix: &str, topology: &Path, db: Option<&Path>) -> anyhow::Result<()> {
    let name = parse_name(prefix)?;
    let text = std::fs::read_to_string(topology)
        .with_context(|| format!("cannot read {}", topology.display()))?;
    let mut engine = parse_topology(&text)?;
    if let Some(db) = db {
        let (r, _) = Registry::open(open_registry(db)?, now_ms(), GroupCommitConfig::default())?;
        for g in r.all() {
            if let Some(router) = engine.topology().id(&g.node) {
                engine.add_origin(
                    g.prefix.clone(),
                    nameway_ctl::Origin {
                        router,
                        face: g.face,
                        cost: u64::from(g.cost),
                    },
                );
            }
        }
    }
    engine.compute_all();
    let topo = engine.topology();
    for r in 0..topo.len() {
        let id = NodeId::try_from(r)?;
        let fib = engine.fib(id).unwrap_or_default();
        let hit = (0..=name.len())
            .rev()
            .find_map(|n| fib.get_key_value(&name.prefix(n)));
        let Some((p, hops)) = hit else {
            println!("{}  {name}  no route", topo.name(id));
            continue;
        };
        for h in hops {
            let via = topo
                .adjacencies(id)
                .iter()
                .find(|a| a.face == h.face)
                .map_or("(local)".to_owned(), |a| format!("via {}", topo.name(a.to)));
            println!(
                "{}  {p}  face {}  cost {}  {via}",
                topo.name(id),
                h.face,
                h.cost
            );
        }
    }
    Ok(())
}

fn keys(db: &Path, ca: Option<&Path>) -> anyhow::Result<()> {
    let (mut store, anchor) = ca_store(db, ca)?;
    let authority = Authority::load(&anchor_key_path(&anchor), &anchor_cert_path(&anchor))?;
    let (nb, na) = authority.certificate().validity();
    println!("anchor  {}  {nb} .. {na}", authority.certificate().name());
    for n in store.nodes()? {
        let Some(wire) = n.cert else {
            println!("{}  no certificate", n.name);
            continue;
        };
        match nameway_transport::Certificate::decode(bytes::Bytes::from(wire)) {
            Ok(c) => {
                let (nb, na) = c.validity();
                println!("{}  {}  {nb} .. {na}", n.name, c.name());
            }
            Err(e) => println!("{}  unreadable certificate: {e}", n.name),
        }
    }
    for (id, members) in nameway_ctl::group_keys::group_keys(&mut store)? {
        println!("group   {id}  members {}", members.join(" "));
    }
    for d in ca::denied(&mut store)? {
        println!("denied  {d}");
    }
    Ok(())
}

/// `serve`'s CA file and, when `--db` is PostgreSQL, its two connections: the registry's
/// and the CA's.
type ServeStores = (PathBuf, Option<(BoxedStore, BoxedCaStore)>);

fn serve_stores(db: PathBuf, ca: Option<PathBuf>) -> anyhow::Result<ServeStores> {
    match (is_postgres(&db), ca) {
        (false, None) => Ok((db, None)),
        (false, Some(_)) => {
            bail!("--ca is for a PostgreSQL --db; with an SQLite --db the CA is in that file")
        }
        (true, None) => bail!(
            "{}: the anchor's key is not in the PostgreSQL database: give the CA's SQLite \
             file (namewayctl init), beside which the anchor's key is, with --ca",
            db.display()
        ),
        (true, Some(ca)) => {
            let registry = open_registry(&db)?;
            let (ca_store, _) = ca_store(&db, Some(&ca))?;
            Ok((ca, Some((registry, ca_store))))
        }
    }
}

fn serve(
    config: nameway_ctl::serve::ServeConfig,
    registry: Option<(BoxedStore, BoxedCaStore)>,
    live: Option<String>,
) -> anyhow::Result<()> {
    #[cfg(feature = "postgres")]
    let feed = live
        .map(|conninfo| nameway_ctl::PostgresStore::connect(&conninfo))
        .transpose()?;
    #[cfg(not(feature = "postgres"))]
    drop(live);
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    rt.block_on(async move {
        #[allow(unused_mut)] // without the feature `postgres`
        let mut server = nameway_ctl::serve::Server::bind_with_registry(config, registry).await?;
        #[cfg(feature = "postgres")]
        if let Some(store) = feed {
            server.share_live(store);
        }
        // Read by scripts and tests: where agents connect, and the key they pin.
        if let Some(a) = server.local_addr() {
            println!("listening {a}");
        }
        if let Some(a) = server.tls_addr() {
            println!("tls {a}");
        }
        if let Some(a) = server.http_addr() {
            println!("http {a}");
        }
        println!("anchor {}", server.pin());
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .context("cannot handle SIGTERM")?;
        tokio::select! {
            () = server.run() => {}
            _ = term.recv() => tracing::info!("SIGTERM"),
            _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT"),
        }
        Ok(())
    })
}

/// The registry's store named by `--db`: a PostgreSQL database for a `postgres://` or
/// `postgresql://` URL or a `key=value` conninfo (`host=/run/postgresql dbname=nameway`),
/// else the SQLite file at that path.
fn open_registry(db: &Path) -> anyhow::Result<BoxedStore> {
    let text = db.to_string_lossy();
    if !is_postgres(db) {
        return Ok(Box::new(open(db)?));
    }
    #[cfg(feature = "postgres")]
    return Ok(Box::new(nameway_ctl::PostgresStore::connect(&text)?));
    #[cfg(not(feature = "postgres"))]
    bail!("{text}: this namewayctl is built without PostgreSQL (cargo feature `postgres`)")
}

/// Whether `--db` names a PostgreSQL database: a `postgres://`/`postgresql://` URL or a
/// `key=value` conninfo.
fn is_postgres(db: &Path) -> bool {
    let text = db.to_string_lossy();
    text.starts_with("postgres://")
        || text.starts_with("postgresql://")
        || text.split_once('=').is_some_and(|(k, _)| {
            !k.is_empty() && k.trim().chars().all(|c| c.is_ascii_lowercase() || c == '_')
        })
}

/// The CA's commands keep the local SQLite file (its key files live beside it).
fn sqlite_only(db: &Path) -> anyhow::Result<()> {
    if is_postgres(db) {
        bail!(
            "{}: the CA's commands take the controller's local SQLite file; a PostgreSQL \
             database holds only the registry (namewayctl registry, routes)",
            db.display()
        );
    }
    Ok(())
}

fn open(db: &Path) -> anyhow::Result<SqliteStore> {
    sqlite_only(db)?;
    exists(db)?;
    Ok(SqliteStore::open(db, Durability::Normal)?)
}

fn open_full(db: &Path) -> anyhow::Result<SqliteStore> {
    sqlite_only(db)?;
    Ok(SqliteStore::open(db, Durability::Full)?)
}

fn exists(db: &Path) -> anyhow::Result<()> {
    if !db.exists() {
        bail!(
            "{}: no such database (run namewayctl init first)",
            db.display()
        );
    }
    Ok(())
}

/// The CA's records named by `--db`: the SQLite file itself, or with a PostgreSQL `--db`
/// the shared database (its domain set to the anchor's of `--ca` on first use); and the
/// path beside which the anchor's key and certificate are.
fn ca_store(db: &Path, ca: Option<&Path>) -> anyhow::Result<(BoxedCaStore, PathBuf)> {
    if !is_postgres(db) {
        if ca.is_some() {
            bail!("--ca is for a PostgreSQL --db; with an SQLite --db the CA is in that file");
        }
        exists(db)?;
        return Ok((Box::new(open_full(db)?), db.to_owned()));
    }
    let Some(ca) = ca else {
        bail!(
            "{}: give the CA's file (namewayctl init) with --ca: the anchor's key is not in \
             the shared database",
            db.display()
        );
    };
    exists(ca)?;
    let anchor = Authority::load(&anchor_key_path(ca), &anchor_cert_path(ca))?;
    let mut store = open_shared_ca(db)?;
    if store.meta_value("domain")?.is_none() {
        store.put_meta("domain", &anchor.domain().to_string())?;
    }
    ca::check_domain(&mut store, anchor.domain())?;
    // What an older version left in the file (before schema 3 the CA was there), once.
    let done = nameway_ctl::ca_carry::carry_over(ca, &mut store, now_ms())?;
    if let Some(done) = done.filter(|d| d.found > 0) {
        eprintln!(
            "namewayctl: the CA's rows of {} carried over to the shared database: {done}",
            ca.display()
        );
    }
    Ok((store, ca.to_owned()))
}

#[cfg(feature = "postgres")]
fn open_shared_ca(db: &Path) -> anyhow::Result<BoxedCaStore> {
    Ok(Box::new(nameway_ctl::PostgresStore::connect(
        &db.to_string_lossy(),
    )?))
}

#[cfg(not(feature = "postgres"))]
fn open_shared_ca(db: &Path) -> anyhow::Result<BoxedCaStore> {
    bail!(
        "{}: this namewayctl is built without PostgreSQL (cargo feature `postgres`)",
        db.display()
    )
}

fn domain_of<S: CaStore + ?Sized>(store: &mut S, db: &Path, router: &Name) -> anyhow::Result<Name> {
    let Some(d) = store.meta_value("domain")? else {
        bail!("{}: not initialised (run namewayctl init)", db.display());
    };
    let domain = parse_name(&d)?;
    if !domain.is_prefix_of(router) || domain.len() == router.len() {
        return Err(CaError::OutsideDomain {
            router: router.to_string(),
            domain: d,
        }
        .into());
    }
    Ok(domain)
}

fn parse_name(s: &str) -> anyhow::Result<Name> {
    s.parse::<Name>()
        .map_err(|e| anyhow::anyhow!("{s:?} is not an NDN name: {e}"))
}

fn read_public_key(path: &Path) -> anyhow::Result<Vec<u8>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if let Ok(text) = std::str::from_utf8(&bytes) {
        if text.contains("-----BEGIN") {
            let b64: String = text
                .lines()
                .filter(|l| !l.starts_with("-----"))
                .collect::<String>();
            return data_encoding::BASE64
                .decode(b64.trim().as_bytes())
                .with_context(|| format!("{}: bad PEM", path.display()));
        }
    }
    Ok(bytes)
}

/// `90s`, `30m`, `1h`, `7d` (or plain seconds) → ms.
fn parse_duration(s: &str) -> anyhow::Result<u64> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = num
        .parse()
        .with_context(|| format!("{s:?} is not a duration (90s, 30m, 1h, 7d)"))?;
    let scale = match unit {
        "" | "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => bail!("{s:?} is not a duration (90s, 30m, 1h, 7d)"),
    };
    Ok(n.saturating_mul(scale))
}
