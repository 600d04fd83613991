//! TCP listeners and outgoing TCP faces (NFD `TcpChannel`).
//!
//! Faces whose peer is on loopback (127.0.0.0/8, ::1) are local, as NFD's default
//! `face_system.tcp.local` whitelist makes them (unless
//! [`crate::FaceSystemConfig::tcp_loopback_is_local`] is off). With `[security]`, non-local
//! faces carry a secure link (they answer a handshake; one created secure starts it), run by
//! the stream I/O exactly as on UDP faces. A permanent face whose connection fails
//! reconnects with exponential backoff, keeping its FaceId (and routes); packets sent to it
//! meanwhile are dropped and counted as `drop_link_down`.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use socket2::{Domain, Protocol, Socket, Type};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

use crate::accept::AcceptFailures;
use crate::config::FaceOptions;
use crate::counters::bump;
use crate::error::FaceError;
use crate::event::DownReason;
use crate::face::{FaceHandle, FaceParams, TxQueue};
use crate::id::{FaceId, FaceKind, FaceScope, Persistency};
use crate::placement::{self, Accepted};
use crate::secure::{SecureLink, SecureMode};
use crate::stream;
use crate::system::{is_loopback, Shared};
use crate::uri::{unspecified_like, FaceUri};

/// Binds a TCP listener (IPv6 sockets are IPv6-only, so `0.0.0.0` and `::` can both be bound).
pub(crate) fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    if addr.is_ipv6() {
        socket.set_only_v6(true)?;
    }
    socket.set_reuse_address(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(1024)?;
    TcpListener::from_std(socket.into())
}

/// Accepts connections until shutdown.
/// `uri` is the listener's, for its warnings.
pub(crate) async fn accept_loop(shared: Arc<Shared>, listener: TcpListener, uri: FaceUri) {
    let mut stop = shared.shutdown_signal();
    let mut failures = AcceptFailures::new(uri);
    loop {
        let accepted = tokio::select! {
            _ = stop.wait_for(|s| *s) => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => {
                let s = shared.clone();
                placement::accept(&shared, stream, move |id, st| run_accepted(s, id, st, peer));
            }
            Err(e) => failures.failed(&shared.counters, &e).await,
        }
    }
}

fn params(
    shared: &Shared,
    local: SocketAddr,
    peer: SocketAddr,
    persistency: Persistency,
    initiate: Option<SecureMode>,
) -> FaceParams {
    let local_scope = shared.config.tcp_loopback_is_local && is_loopback(peer);
    // With `[security]`, a non-local TCP face (another forwarder) can answer a handshake, and
    // one created secure starts it; local faces are applications and stay plain.
    let secure = shared
        .config
        .security
        .as_ref()
        .filter(|_| !local_scope || initiate.is_some())
        .map(|ctx| Arc::new(SecureLink::new(ctx.clone(), initiate)));
    FaceParams {
        kind: FaceKind::Tcp,
        remote: FaceUri::tcp(peer),
        local: FaceUri::tcp(local),
        scope: if local_scope {
            FaceScope::Local
        } else {
            FaceScope::NonLocal
        },
        persistency,
        mtu: None,
        secure,
    }
}

async fn run_accepted(
    shared: Arc<Shared>,
    id: FaceId,
    stream: Accepted<TcpStream>,
    peer: SocketAddr,
) {
    let Ok(stream) = stream.adopt() else {
        bump(&shared.counters.accept_errors);
        return;
    };
    let _ = stream.set_nodelay(true);
    let local = stream.local_addr().unwrap_or(peer);
    let Ok((face, queue)) = shared.register_face_as(
        id,
        params(&shared, local, peer, Persistency::OnDemand, None),
        None,
    ) else {
        return; // shutting down
    };
    shared.announce_up(&face).await;
    let (reader, writer) = stream.into_split();
    let (reason, _) = stream::run(&shared, &face, reader, writer, queue).await;
    shared.face_closed(&face, reason).await;
}

/// Connects to `addr` and starts a face on the connection.
pub(crate) async fn connect(
    shared: &Arc<Shared>,
    addr: SocketAddr,
    persistency: Persistency,
    options: FaceOptions,
) -> Result<FaceId, FaceError> {
    if options.secure.is_some() && shared.config.security.is_none() {
        return Err(FaceError::SecurityNotConfigured);
    }
    let stream = match connect_once(shared, addr).await {
        Ok(stream) => Some(stream),
        Err(e) if options.connect_in_background && persistency == Persistency::Permanent => {
            tracing::warn!(
                remote = %addr,
                error = %e,
                "cannot connect yet; the permanent face is down and keeps trying"
            );
            None
        }
        Err(e) => return Err(FaceError::Connect(e)),
    };
    // Unknown until connected: the unspecified address of the peer's family.
    let local = stream
        .as_ref()
        .and_then(|s| s.local_addr().ok())
        .unwrap_or_else(|| SocketAddr::new(unspecified_like(addr.ip()), 0));
    let (face, queue) = shared.register_face(
        params(shared, local, addr, persistency, options.secure),
        options.fault,
    )?;
    let id = face.id;
    spawn_supervise(shared, face, stream, queue, addr);
    Ok(id)
}

/// Runs [`supervise`] on the face's home shard's runtime ([`placement`]): the connection made
/// here leaves this runtime's reactor, and reconnections are made there. A connection that
/// cannot leave this runtime (the reactor refuses it) is dropped and logged: the face then
/// starts disconnected and connects again from its home shard, with the usual backoff.
fn spawn_supervise(
    shared: &Arc<Shared>,
    face: Arc<FaceHandle>,
    stream: Option<TcpStream>,
    queue: TxQueue,
    addr: SocketAddr,
) {
    let Some(rt) = shared.home_runtime(face.id) else {
        shared.spawn(supervise(shared.clone(), face, stream, queue, addr));
        return;
    };
    let moved = stream.map(|s| s.into_std());
    let s = shared.clone();
    shared.spawn_on(&rt, async move {
        let stream = match moved {
            None => None,
            Some(Ok(std)) => match TcpStream::from_std(std) {
                Ok(st) => Some(st),
                Err(e) => {
                    tracing::debug!(face = %face.id, error = %e, "cannot move a connection to its shard");
                    None
                }
            },
            Some(Err(e)) => {
                tracing::debug!(face = %face.id, error = %e, "cannot move a connection to its shard");
                None
            }
        };
        supervise(s, face, stream, queue, addr).await;
    });
}

async fn connect_once(shared: &Shared, addr: SocketAddr) -> io::Result<TcpStream> {
    let stream = tokio::time::timeout(shared.config.connect_timeout, TcpStream::connect(addr))
        .await
        .map_err(|_| io::Error::from(io::ErrorKind::TimedOut))??;
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

/// Runs an outgoing face: its connection (made already, or to make when `stream` is `None`),
/// then reconnections while it is permanent.
async fn supervise(
    shared: Arc<Shared>,
    face: Arc<FaceHandle>,
    stream: Option<TcpStream>,
    mut queue: TxQueue,
    addr: SocketAddr,
) {
    if stream.is_none() {
        face.set_connected(false);
    }
    shared.announce_up(&face).await;
    let mut stream = stream;
    let reason = loop {
        let connected = match stream.take() {
            Some(s) => s,
            None => match reconnect(&shared, &face, addr, &mut queue).await {
                Ok(s) => {
                    bump(&shared.counters.reconnects);
                    if let Ok(local) = s.local_addr() {
                        face.set_local(FaceUri::tcp(local));
                    }
                    face.set_connected(true);
                    tracing::info!(face = %face.id, remote = %addr, "permanent face connected");
                    s
                }
                Err(reason) => break reason,
            },
        };
        let (reader, writer) = connected.into_split();
        let (reason, returned) = stream::run(&shared, &face, reader, writer, queue).await;
        let Some(returned) = returned else {
            break reason;
        };
        queue = returned;
        if face.close_reason().is_some() || face.persistency() != Persistency::Permanent {
            break reason;
        }
        tracing::info!(face = %face.id, reason = %reason, "permanent face reconnecting");
        face.set_connected(false);
    };
    shared.face_closed(&face, reason).await;
}

/// Tries to connect again with exponential backoff until it works or the face closes.
/// Packets queued meanwhile are dropped and counted.
async fn reconnect(
    shared: &Shared,
    face: &FaceHandle,
    addr: SocketAddr,
    queue: &mut TxQueue,
) -> Result<TcpStream, DownReason> {
    let mut backoff = shared.config.reconnect_initial;
    loop {
        let deadline = Instant::now() + backoff;
        loop {
            tokio::select! {
                biased;
                reason = face.closed() => return Err(reason),
                () = tokio::time::sleep_until(deadline) => break,
                pkt = queue.recv() => match pkt {
                    Some(_) => bump(&face.counters.drop_link_down),
                    None => return Err(DownReason::Shutdown),
                },
            }
        }
        tokio::select! {
            biased;
            reason = face.closed() => return Err(reason),
            result = connect_once(shared, addr) => match result {
                Ok(stream) => return Ok(stream),
                Err(e) => tracing::debug!(face = %face.id, error = %e, "reconnect failed"),
            },
        }
        backoff = (backoff * 2).min(
            shared
                .config
                .reconnect_max
                .max(shared.config.reconnect_initial),
        );
    }
}
