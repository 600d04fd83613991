//! `namewayctl serve`: the controller as a service (docs/controller.md, "Phase 2").
//!
//! A TCP listener for the agents, a mutual-TLS one, or both (one task per connection: the
//! Noise or TLS handshake, the ServerHello signed by the anchor, the agent's Hello checked by [`auth`], then its reports
//! in and signed configuration objects out), one task owning the [`state`] that every
//! connection feeds, and an optional HTTP listener with the counters and the topology.

mod api;
pub mod auth;
mod cache_api;
mod cs_versions;
mod explain;
mod feed;
mod http;
mod key_push;
mod offer;
mod page;
mod routing;
pub mod state;
mod withdrawn;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

use crate::ca::{anchor_cert_path, anchor_key_path, Authority, CaError};
use crate::ca_store::BoxedCaStore;
use crate::channel::{self, messages::server_proof, Message, Report};
use crate::registry::Registry;
use crate::sqlite::{Durability, SqliteStore};
use crate::store::{Registration, RegistryStore};
use crate::{now_ms, GroupCommitConfig, StoreError};

use self::auth::{Auth, Refusal};
pub use self::cache_api::api_token_path;
use self::key_push::KeyPusher;
use self::state::{ConnId, ControllerState, Push};

/// How often the CA's tables (deny list, routers' records, group keys) are read for the
/// connected routers when nothing wakes the check: on SQLite (`namewayctl deny` and `keys`
/// write the file from another process), and on PostgreSQL while the feed's listener is not
/// connected. While it is, the writers' notifications wake the check at once and it polls
/// every [`ServeConfig::ca_poll_listening`] only.
pub const CA_POLL: Duration = Duration::from_millis(500);

/// [`ServeConfig::ca_poll_listening`] by default.
pub const CA_POLL_LISTENING: Duration = Duration::from_secs(5);

/// How long a forwarder has for the handshake and its Hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// `namewayctl serve`'s settings.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// The database (initialised with `namewayctl init`).
    pub db: PathBuf,
    /// Where agents connect with Noise (None: TLS only).
    pub listen: Option<SocketAddr>,
    /// Where agents connect with mutual TLS, and the controller's TLS settings.
    pub tls: Option<(SocketAddr, crate::channel::tls::ServerTls)>,
    /// The HTTP listener (counters, topology), if any.
    pub http: Option<SocketAddr>,
    /// ECMP limit.
    pub max_nexthops: usize,
    /// Lifetime of a registration in the registry (renewed by every report).
    pub registration_ttl_ms: u64,
    /// Lifetime of the router certificates issued, in seconds (7 days by default; agents
    /// renew at 2/3 of it).
    pub cert_lifetime_s: u64,
    /// The cache policy file, read at start and again whenever it changes.
    pub cache_policy: Option<PathBuf>,
    /// How often the CA's tables are read again while the shared database's notifications
    /// are heard (a fallback: [`CA_POLL`] while they are not, and on SQLite).
    pub ca_poll_listening: Duration,
}

/// Why the service cannot start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The database or the anchor cannot be opened.
    #[error(transparent)]
    Ca(#[from] CaError),
    /// The registry cannot be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The cache policy file is refused.
    #[error(transparent)]
    CachePolicy(#[from] crate::cache_policy::CachePolicyError),
    /// The operators' API token cannot be read or made.
    #[error("API token {0}")]
    ApiToken(String),
    /// Neither a Noise nor a TLS listener is configured.
    #[error(
        "no listener for the agents: give --listen (Noise), --tls-listen (mutual TLS), or both"
    )]
    NoListener,
    /// A listener cannot be opened.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// Counters of the service (besides [`auth::AuthCounters`]).
#[derive(Debug, Default)]
pub struct ServeCounters {
    /// Connections accepted on the TCP listener.
    pub connections: AtomicU64,
    /// Agents connected now.
    pub connected: AtomicU64,
    /// Objects sent.
    pub objects_sent: AtomicU64,
    /// Messages from admitted agents that were not expected (the connection is closed).
    pub bad_messages: AtomicU64,
    /// CA checks run at once because something woke them (a notification of the shared
    /// database, a renewal here), not by the poll.
    pub ca_wakes: AtomicU64,
}

/// What the HTTP listener shows, refreshed by the state task.
#[derive(Debug, Default, Clone)]
pub struct Status {
    /// Usable links: (a, b, cost).
    pub links: Vec<(String, String, u64)>,
    /// Routers: (name, connected, current version, acknowledged version).
    pub routers: Vec<(String, bool, u64, u64)>,
    /// Registrations (router, prefix, face).
    pub registrations: Vec<(String, String, u64)>,
    /// Every reported link, with each end's view.
    pub link_views: Vec<state::LinkView>,
    /// Every router's computed FIB and versions.
    pub fibs: Vec<state::RouterFib>,
    /// The state machine's counters.
    pub state: state::StateCounters,
    /// The cache policy in force.
    pub cache: crate::cache_policy::CachePolicy,
}

enum Event {
    Connected {
        conn: ConnId,
        admitted: auth::Admitted,
        tx: mpsc::UnboundedSender<Message>,
    },
    Report(ConnId, Report),
    Ack(ConnId, u64),
    CsAck(ConnId, u64),
    Gone(ConnId),
}

/// A bound service, ready to run.
#[derive(Debug)]
pub struct Server {
    listener: Option<TcpListener>,
    tls_listener: Option<(TcpListener, crate::channel::tls::ServerTls)>,
    http: Option<TcpListener>,
    shared: Arc<Shared>,
    config: ServeConfig,
    /// The shared database's change feed (`serve/feed.rs`), when the registry is on
    /// PostgreSQL and shared live: where the state task tells it about its routers, and
    /// where the routers served elsewhere come from.
    feed: Option<(
        std::sync::mpsc::Sender<feed::Local>,
        mpsc::UnboundedReceiver<Vec<feed::RemoteRouter>>,
    )>,
}

/// A registry store chosen at run time: the SQLite file, or a shared PostgreSQL database.
pub type BoxedStore = Box<dyn RegistryStore + Send>;

struct Shared {
    auth: Auth,
    registry: Registry<BoxedStore>,
    counters: ServeCounters,
    status: Mutex<Status>,
    /// The operators' API token (`<db>.api-token`), when there is an HTTP listener.
    api_token: Option<String>,
    /// The cache policy file `POST /api/cache` writes.
    cache_file: Option<PathBuf>,
    /// One writer of the policy file at a time.
    cache_writer: Mutex<()>,
    /// Writes to the API, by result.
    api_writes: cache_api::ApiWrites,
    /// The objects offered on each connection (`serve/offer.rs`).
    offers: offer::ConnOffers,
    /// Wakes the state task's CA check (deny list, trust, group keys) now: a notification
    /// of the shared database (`serve/feed.rs`), or a router enrolled or renewed here.
    ca_wake: tokio::sync::Notify,
    /// Whether the feed's listener hears the CA's notifications (the check then polls
    /// every [`ServeConfig::ca_poll_listening`] instead of [`CA_POLL`]).
    ca_listening: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("auth", &self.auth)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Opens the database, the anchor and the listeners.
    ///
    /// # Errors
    /// [`ServeError`].
    pub async fn bind(config: ServeConfig) -> Result<Self, ServeError> {
        Self::bind_with_registry(config, None).await
    }

    /// As [`Server::bind`], with the registry and the CA's records in `shared` (a
    /// PostgreSQL database the controllers share) instead of the SQLite file `config.db`,
    /// of which only the anchor (its key and certificate files beside it) is used.
    /// `shared` gives two connections: one for the group-commit writer (registrations), one
    /// for the CA (tokens, routers' records and certificates, deny list, group keys). The
    /// database's domain (`meta`) is set to the anchor's on first use, and a database of
    /// another domain is refused.
    ///
    /// # Errors
    /// [`ServeError`].
    pub async fn bind_with_registry(
        config: ServeConfig,
        shared: Option<(BoxedStore, BoxedCaStore)>,
    ) -> Result<Self, ServeError> {
        if let Some(p) = &config.cache_policy {
            crate::cache_policy::CachePolicy::load(p)?;
        }
        let mut ca = Authority::load(&anchor_key_path(&config.db), &anchor_cert_path(&config.db))?;
        ca.set_router_cert_lifetime(config.cert_lifetime_s);
        let (reg_store, ca_store): (BoxedStore, BoxedCaStore) = match shared {
            Some((reg, mut ca_store)) => {
                tokio::task::block_in_place(|| {
                    claim_domain(&mut ca_store, ca.domain())?;
                    carry_over(&config.db, &mut ca_store)
                })?;
                (reg, ca_store)
            }
            None => {
                let ca_store = SqliteStore::open(&config.db, Durability::Full)?;
                // Not a second `open`: see `SqliteStore::open_another`.
                let reg = ca_store.open_another(Durability::Normal)?;
                (Box::new(reg), Box::new(ca_store))
            }
        };
        // Blocking, and a synchronous PostgreSQL client must not run on a runtime thread.
        let (registry, _) = tokio::task::block_in_place(|| {
            Registry::open(reg_store, now_ms(), GroupCommitConfig::default())
        })?;
        let listen = |addr: SocketAddr| async move {
            TcpListener::bind(addr)
                .await
                .map_err(|source| ServeError::Listen { addr, source })
        };
        if config.listen.is_none() && config.tls.is_none() {
            return Err(ServeError::NoListener);
        }
        let listener = match config.listen {
            Some(a) => Some(listen(a).await?),
            None => None,
        };
        let tls_listener = match &config.tls {
            Some((a, tls)) => Some((listen(*a).await?, tls.clone())),
            None => None,
        };
        let http = match config.http {
            Some(a) => Some(listen(a).await?),
            None => None,
        };
        let api_token = match http {
            Some(_) => Some(cache_api::load_or_make_token(&config.db).map_err(|e| {
                ServeError::ApiToken(format!("{}: {e}", api_token_path(&config.db).display()))
            })?),
            None => None,
        };
        Ok(Self {
            listener,
            tls_listener,
            http,
            shared: Arc::new(Shared {
                auth: Auth::new(ca, ca_store),
                registry,
                counters: ServeCounters::default(),
                status: Mutex::new(Status::default()),
                api_token,
                cache_file: config.cache_policy.clone(),
                cache_writer: Mutex::new(()),
                api_writes: cache_api::ApiWrites::default(),
                offers: offer::ConnOffers::default(),
                ca_wake: tokio::sync::Notify::new(),
                ca_listening: std::sync::atomic::AtomicBool::new(false),
            }),
            config,
            feed: None,
        })
    }

    /// Shares the topology and the registrations live with the other controllers on the
    /// PostgreSQL database `store` connects to (the registry's database): `serve/feed.rs`.
    /// The feed's thread starts now and owns `store` (a synchronous client must not run, nor
    /// be dropped, on a runtime thread).
    #[cfg(feature = "postgres")]
    pub fn share_live(&mut self, store: crate::PostgresStore) {
        let (remote_tx, remote_rx) = mpsc::unbounded_channel();
        let local = feed::start(store, self.shared.clone(), remote_tx);
        self.feed = Some((local, remote_rx));
    }

    /// The agents' Noise listener address.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.listener.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// The agents' mutual-TLS listener address.
    pub fn tls_addr(&self) -> Option<SocketAddr> {
        self.tls_listener
            .as_ref()
            .and_then(|(l, _)| l.local_addr().ok())
    }

    /// The HTTP listener's address.
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// The anchor's public key as agents pin it (`ed25519:<hex>`).
    pub fn pin(&self) -> String {
        channel::raw_ed25519(self.shared.auth.ca.certificate().key_der())
            .map(|k| channel::pin_string(&k))
            .unwrap_or_default()
    }

    /// Serves until the process ends.
    pub async fn run(self) {
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let shared = self.shared.clone();
        if let Some(h) = self.http {
            tokio::spawn(http::serve(h, shared.clone()));
        }
        let feed = match self.feed {
            Some((local, remote)) => Feed {
                local: Some(local),
                remote: Some(remote),
            },
            None => Feed {
                local: None,
                remote: None,
            },
        };
        tokio::spawn(state_task(
            events_rx,
            shared.clone(),
            self.config.clone(),
            feed,
        ));
        let mut next: ConnId = 0;
        let tls = self.tls_listener.as_ref().map(|(_, t)| t.clone());
        loop {
            let (accepted, tls) = tokio::select! {
                a = accept_on(self.listener.as_ref()) => (a, None),
                a = accept_on(self.tls_listener.as_ref().map(|(l, _)| l)) => (a, tls.clone()),
            };
            let (stream, peer) = match accepted {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let _ = stream.set_nodelay(true);
            next += 1;
            shared.counters.connections.fetch_add(1, Ordering::Relaxed);
            tokio::spawn(connection(
                stream,
                tls,
                peer,
                next,
                shared.clone(),
                events_tx.clone(),
            ));
        }
    }
}

/// The next connection on `listener`; never ready without one.
async fn accept_on(listener: Option<&TcpListener>) -> std::io::Result<(TcpStream, SocketAddr)> {
    match listener {
        Some(l) => l.accept().await,
        None => std::future::pending().await,
    }
}

async fn connection(
    stream: TcpStream,
    tls: Option<crate::channel::tls::ServerTls>,
    peer: SocketAddr,
    conn: ConnId,
    shared: Arc<Shared>,
    events: mpsc::UnboundedSender<Event>,
) {
    let greeting =
        tokio::time::timeout(HELLO_TIMEOUT, greet(stream, tls.as_ref(), peer, &shared)).await;
    let (mut tx, mut rx, admitted, hh) = match greeting {
        Ok(Ok(g)) => g,
        Ok(Err(refusal)) => {
            tracing::warn!(%peer, "forwarder refused: {refusal}");
            return;
        }
        Err(_) => {
            let r = Refusal::Malformed("no hello in time".into());
            shared.auth.counters.refused(&r);
            tracing::warn!(%peer, "forwarder refused: {r}");
            return;
        }
    };
    let router = admitted.router.clone();
    tracing::info!(%peer, %router, enrolled = admitted.issued.is_some(), "forwarder connected");
    if let Err(e) = tokio::task::block_in_place(|| shared.auth.seen(&router, now_ms())) {
        tracing::warn!(%router, "cannot record the router as seen: {e}");
    }
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Message>();
    let _ = out_tx.send(Message::Welcome(admitted.issued.clone()));
    let _ = events.send(Event::Connected {
        conn,
        admitted,
        tx: out_tx.clone(),
    });
    shared.counters.connected.fetch_add(1, Ordering::Relaxed);
    let writer = tokio::spawn(async move {
        while let Some(m) = out_rx.recv().await {
            if tx.send(&m).await.is_err() {
                break;
            }
        }
    });
    loop {
        match rx.recv().await {
            Ok(Message::Report(r)) => {
                let _ = events.send(Event::Report(conn, r));
            }
            Ok(Message::Ack(v)) => {
                let _ = events.send(Event::Ack(conn, v));
            }
            Ok(Message::Renew(signature)) => {
                let renewed = tokio::task::block_in_place(|| {
                    shared.auth.renew(&router, &hh, &signature, now_ms())
                });
                match renewed {
                    Ok(cert) => {
                        tracing::info!(%router, cert = %cert.name(), "router certificate renewed");
                        // A certificate that had expired makes its key trusted again.
                        shared.ca_wake.notify_one();
                        let _ = out_tx.send(Message::Renewed(cert.wire().clone()));
                    }
                    Err(e) => {
                        tracing::warn!(%router, reason = e.reason(), "renewal refused: {e}");
                        let _ = out_tx.send(Message::Refused(e.to_string()));
                        // Let the writer send the refusal before the session closes.
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        break;
                    }
                }
            }
            Ok(Message::CsAck(v)) => {
                let _ = events.send(Event::CsAck(conn, v));
            }
            Ok(Message::Ndn(wire)) => offer::on_ndn(&shared, conn, &out_tx, wire),
            Ok(other) => {
                shared.counters.bad_messages.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(%router, "unexpected message from the agent: {other:?}");
                break;
            }
            Err(e) => {
                tracing::info!(%router, "forwarder disconnected: {e}");
                break;
            }
        }
    }
    writer.abort();
    shared.offers.gone(conn);
    shared.counters.connected.fetch_sub(1, Ordering::Relaxed);
    let _ = events.send(Event::Gone(conn));
}

type Halves = (
    channel::BoxSender,
    channel::BoxReceiver,
    auth::Admitted,
    Vec<u8>,
);

/// The handshake (Noise, or mutual TLS with `tls`), the ServerHello, the agent's Hello
/// checked.
async fn greet(
    stream: TcpStream,
    tls: Option<&crate::channel::tls::ServerTls>,
    peer: SocketAddr,
    shared: &Shared,
) -> Result<Halves, Refusal> {
    let malformed = |e: channel::ChannelError| {
        let r = Refusal::Malformed(e.to_string());
        shared.auth.counters.refused(&r);
        r
    };
    let session = match tls {
        None => channel::accept(stream).await.map_err(malformed)?.boxed(),
        Some(tls) => {
            let (session, fingerprint) = channel::tls::accept(stream, tls).await.map_err(|e| {
                let r = Refusal::Tls(e.to_string());
                shared.auth.counters.refused(&r);
                r
            })?;
            tracing::info!(%peer, client_cert_sha256 = %fingerprint, "TLS session");
            session.boxed()
        }
    };
    let hh = session.handshake_hash.clone();
    let (mut tx, mut rx) = session.split();
    let ca = &shared.auth.ca;
    let signature = channel::sign(ca.signing_key(), &server_proof(&hh)).map_err(|e| {
        let r = Refusal::Store(e.to_string());
        shared.auth.counters.refused(&r);
        r
    })?;
    tx.send(&Message::ServerHello {
        anchor_cert: ca.certificate().wire().clone(),
        signature,
    })
    .await
    .map_err(malformed)?;
    let hello = match rx.recv().await.map_err(malformed)? {
        Message::Hello(h) => h,
        other => {
            let r = Refusal::Malformed(format!("expected a Hello, got {other:?}"));
            shared.auth.counters.refused(&r);
            return Err(r);
        }
    };
    let admitted = tokio::task::block_in_place(|| shared.auth.admit(&hello, &hh, now_ms()));
    match admitted {
        Ok(a) => Ok((tx, rx, a, hh.to_vec())),
        Err(r) => {
            let _ = tx.send(&Message::Refused(r.to_string())).await;
            Err(r)
        }
    }
}

/// The state task's side of the feed (`serve/feed.rs`): where it tells the feed about its
/// routers' links, and where the routers served by other controllers come from.
struct Feed {
    local: Option<std::sync::mpsc::Sender<feed::Local>>,
    remote: Option<mpsc::UnboundedReceiver<Vec<feed::RemoteRouter>>>,
}

impl Feed {
    /// The feed's next batch of routers served elsewhere; never ready without a feed (or
    /// once its thread ended).
    async fn next_remote(&mut self) -> Vec<feed::RemoteRouter> {
        let got = match self.remote.as_mut() {
            Some(rx) => rx.recv().await,
            None => None,
        };
        match got {
            Some(batch) => batch,
            None => {
                self.remote = None;
                std::future::pending().await
            }
        }
    }

    fn tell(&self, m: impl FnOnce() -> feed::Local) {
        if let Some(tx) = &self.local {
            let _ = tx.send(m());
        }
    }
}

async fn state_task(
    mut events: mpsc::UnboundedReceiver<Event>,
    shared: Arc<Shared>,
    config: ServeConfig,
    mut feed: Feed,
) {
    let registry = &shared.registry;
    let mut stored = withdrawn::Stored::default();
    let mut state = ControllerState::new(config.max_nexthops);
    let mut conns: HashMap<ConnId, mpsc::UnboundedSender<Message>> = HashMap::new();
    let mut sweep = tokio::time::interval(Duration::from_secs(60));
    let mut keys = KeyPusher::default();
    // The CA check: at once when woken (`Shared::ca_wake`), else at the next poll.
    let ca_period = |shared: &Shared| {
        if shared.ca_listening.load(Ordering::Relaxed) {
            config.ca_poll_listening
        } else {
            CA_POLL
        }
    };
    let mut next_ca_check = tokio::time::Instant::now();
    let mut policy_check = tokio::time::interval(Duration::from_millis(500));
    let mut policy_stamp = None;
    loop {
        let event = tokio::select! {
            e = events.recv() => match e { Some(e) => e, None => return },
            batch = feed.next_remote() => {
                let mut pushes = Vec::new();
                for r in batch {
                    pushes.extend(state.remote(&r.name, r.link_key, r.report));
                }
                send(&shared, &conns, pushes);
                refresh_status(&shared, &state);
                continue;
            }
            () = tokio::time::sleep_until(next_ca_check) => {
                keys.poll(&shared, &conns);
                next_ca_check = tokio::time::Instant::now() + ca_period(&shared);
                continue;
            }
            () = shared.ca_wake.notified() => {
                keys.poll(&shared, &conns);
                shared.counters.ca_wakes.fetch_add(1, Ordering::Relaxed);
                next_ca_check = tokio::time::Instant::now() + ca_period(&shared);
                continue;
            }
            _ = policy_check.tick() => {
                if let Some(policy) = reload_policy(config.cache_policy.as_deref(), &mut policy_stamp) {
                    let pushes = state.set_cache_policy(policy);
                    send(&shared, &conns, pushes);
                    refresh_status(&shared, &state);
                }
                continue;
            }
            _ = sweep.tick() => {
                let swept = tokio::task::block_in_place(|| registry.sweep_expired(now_ms()));
                if let Err(e) = swept {
                    tracing::error!("registry sweep: {e}");
                }
                continue;
            }
        };
        let pushes = match event {
            Event::Connected { conn, admitted, tx } => {
                state.connected(&admitted.router, admitted.link_key, conn);
                keys.connected(conn, admitted.router.clone());
                conns.insert(conn, tx);
                keys.poll(&shared, &conns);
                Vec::new()
            }
            Event::Report(conn, report) => {
                if let Some(router) = state.router_on(conn) {
                    feed.tell(|| feed::Local::Links(router.clone(), report.neighbours.clone()));
                }
                let pushes = state.report(conn, report);
                persist(registry, &state, config.registration_ttl_ms, &mut stored);
                pushes
            }
            Event::Ack(conn, v) => {
                state.ack(conn, v);
                Vec::new()
            }
            Event::CsAck(conn, v) => {
                state.cs_ack(conn, v);
                Vec::new()
            }
            Event::Gone(conn) => {
                let router = state.router_on(conn).cloned();
                conns.remove(&conn);
                keys.gone(conn);
                let pushes = state.disconnected(conn);
                if let Some(router) = router.filter(|r| !state.has_connection(r)) {
                    feed.tell(|| feed::Local::Gone(router));
                }
                pushes
            }
        };
        send(&shared, &conns, pushes);
        refresh_status(&shared, &state);
    }
}

/// The cache policy file when it changed since `stamp` (its modification time and size);
/// a file that does not parse is logged and the policy in force kept.
fn reload_policy(
    path: Option<&std::path::Path>,
    stamp: &mut Option<(std::time::SystemTime, u64)>,
) -> Option<crate::cache_policy::CachePolicy> {
    let path = path?;
    let meta = std::fs::metadata(path).ok()?;
    let now = (meta.modified().ok()?, meta.len());
    if *stamp == Some(now) {
        return None;
    }
    *stamp = Some(now);
    match crate::cache_policy::CachePolicy::load(path) {
        Ok(p) => {
            tracing::info!(path = %path.display(), "cache policy loaded");
            Some(p)
        }
        Err(e) => {
            tracing::error!("{e}; the cache policy in force is kept");
            None
        }
    }
}

fn send(
    shared: &Shared,
    conns: &HashMap<ConnId, mpsc::UnboundedSender<Message>>,
    pushes: Vec<Push>,
) {
    for p in pushes {
        let Some(tx) = conns.get(&p.conn) else {
            continue;
        };
        match offer::send_object(shared, p.conn, tx, &p.object) {
            Ok(true) => {
                shared.counters.objects_sent.fetch_add(1, Ordering::Relaxed);
            }
            Ok(false) => {}
            Err(e) => tracing::error!(router = %p.object.router, "cannot sign an object: {e}"),
        }
    }
}

/// Writes the connected routers' registrations to the registry (soft state, renewed by
/// every report) and deletes those a reporting router no longer reports
/// (`serve/withdrawn.rs`).
fn persist(
    registry: &Registry<BoxedStore>,
    state: &ControllerState,
    ttl_ms: u64,
    stored: &mut withdrawn::Stored,
) {
    let expires_ms = now_ms().saturating_add(ttl_ms);
    let regs: Vec<Registration> = state
        .registrations()
        .into_iter()
        .map(|(router, g)| Registration {
            prefix: g.prefix,
            node: router.to_string(),
            face: g.face,
            origin: 0,
            cost: u32::try_from(g.cost).unwrap_or(u32::MAX),
            flags: 1,
            expires_ms,
            owner_key: None,
            announcement: None,
        })
        .collect();
    let gone = stored.withdrawn(&state.reported(), &regs);
    if !gone.is_empty() {
        if let Err(e) = tokio::task::block_in_place(|| registry.unregister_all(gone)) {
            tracing::error!("registry: {e}");
        }
    }
    if regs.is_empty() {
        return;
    }
    if let Err(e) = tokio::task::block_in_place(|| registry.register_all(regs)) {
        tracing::error!("registry: {e}");
    }
}

/// Carries the CA rows an older version left in the `--ca` file over to the shared store,
/// once (`crate::ca_carry`).
fn carry_over(ca_file: &std::path::Path, store: &mut BoxedCaStore) -> Result<(), CaError> {
    let done = crate::ca_carry::carry_over(ca_file, store, now_ms())?;
    if let Some(done) = done.filter(|d| d.found > 0) {
        tracing::info!(
            file = %ca_file.display(),
            "the CA's rows of the --ca file carried over to the shared store: {done}"
        );
    }
    Ok(())
}

/// Checks that the shared database is the anchor's domain's, setting it on first use.
fn claim_domain(store: &mut BoxedCaStore, domain: &nameway_wire::Name) -> Result<(), CaError> {
    use crate::ca_store::CaStore as _;
    if store.meta_value("domain")?.is_none() {
        store.put_meta("domain", &domain.to_string())?;
    }
    crate::ca::check_domain(store, domain)
}

fn refresh_status(shared: &Shared, state: &ControllerState) {
    let mut s = shared
        .status
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    s.links = state.links();
    s.routers = state.routers();
    s.registrations = state
        .registrations()
        .into_iter()
        .map(|(r, g)| (r.to_string(), g.prefix.to_string(), g.face))
        .collect();
    s.link_views = state.link_views();
    s.fibs = state.fibs();
    s.state = state.counters.clone();
    s.cache = state.cache_policy().clone();
}
