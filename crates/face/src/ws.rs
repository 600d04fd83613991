//! WebSocket faces, as NFD's `websocket` face system serves browser applications (NDNts in a
//! web page): a listener accepts WebSocket connections (plain, or over TLS when a certificate
//! is configured), each connection is an on-demand face, and every binary message carries
//! exactly one TLV packet (an Interest, a Data or an LpPacket) each way.
//!
//! A text message, a message over [`MAX_MESSAGE`] bytes, or a message that is not exactly one
//! acceptable TLV closes that face only, counted (`drop_malformed` / `drop_too_large` on the
//! face, `closed_malformed` / `closed_too_large` / `closed_unknown_type` in the system
//! counters). Scope as NFD's `WebSocketTransport`: local when both ends are loopback, else
//! non-local. Pings are answered by the WebSocket layer.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_tungstenite::tungstenite::error::CapacityError;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use crate::accept::AcceptFailures;
use crate::close::CloseSignal;
use crate::counters::bump;
use crate::event::DownReason;
use crate::face::{FaceHandle, FaceParams, TxQueue};
use crate::framing::{FramingError, StreamFramer};
use crate::id::{FaceId, FaceKind, FaceScope, Persistency};
use crate::link::{LinkRx, LinkTx, RxDrop, RxOutcome};
use crate::placement::{self, Accepted};
use crate::stream::deliver;
use crate::system::Shared;
use crate::uri::FaceUri;

/// The largest message accepted: one NDN packet (8800 bytes).
pub(crate) const MAX_MESSAGE: usize = nameway_wire::MAX_PACKET_SIZE;
/// A client has this long to complete the TLS and WebSocket handshakes.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

fn ws_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE))
}

/// Accepts connections on `listener` (whose URI is `uri`, for its warnings) until shutdown;
/// `tls` makes it a `wss://` listener.
pub(crate) async fn accept_loop(
    shared: Arc<Shared>,
    listener: TcpListener,
    uri: FaceUri,
    tls: Option<TlsAcceptor>,
) {
    let mut stop = shared.shutdown_signal();
    let mut failures = AcceptFailures::new(uri);
    loop {
        let accepted = tokio::select! {
            _ = stop.wait_for(|s| *s) => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => {
                // The id first: it chooses the shard whose runtime runs the connection.
                let id = shared.next_face_id();
                let (s, tls) = (shared.clone(), tls.clone());
                placement::spawn_face(&shared, id, stream, move |st| {
                    run_accepted(s, id, st, peer, tls)
                });
            }
            Err(e) => failures.failed(&shared.counters, &e).await,
        }
    }
}

async fn run_accepted(
    shared: Arc<Shared>,
    id: FaceId,
    stream: Accepted<TcpStream>,
    peer: SocketAddr,
    tls: Option<TlsAcceptor>,
) {
    let Ok(stream) = stream.adopt() else {
        bump(&shared.counters.accept_errors);
        return;
    };
    let _ = stream.set_nodelay(true);
    let local = stream.local_addr().unwrap_or(peer);
    let secure = tls.is_some();
    let scope = scope_of(local, peer);
    let uri = |a: SocketAddr| {
        if secure {
            FaceUri::Wss(a)
        } else {
            FaceUri::Ws(a)
        }
    };
    let params = FaceParams {
        kind: FaceKind::WebSocket,
        remote: uri(peer),
        local: uri(local),
        scope,
        persistency: Persistency::OnDemand,
        mtu: None,
        secure: None,
    };
    match tls {
        Some(acceptor) => {
            let handshake = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await;
            match handshake {
                Ok(Ok(tls_stream)) => serve(shared, id, tls_stream, params, peer).await,
                Ok(Err(e)) => {
                    bump(&shared.counters.accept_errors);
                    tracing::debug!(%peer, error = %e, "TLS handshake failed");
                }
                Err(_) => {
                    bump(&shared.counters.accept_errors);
                    tracing::debug!(%peer, "TLS handshake timed out");
                }
            }
        }
        None => serve(shared, id, stream, params, peer).await,
    }
}

/// NFD's `WebSocketTransport` scope: local only when both ends are loopback (an IPv4-mapped
/// IPv6 loopback address counts, as NFD's `isLoopback`), else non-local.
fn scope_of(local: SocketAddr, peer: SocketAddr) -> FaceScope {
    if peer.ip().to_canonical().is_loopback() && local.ip().to_canonical().is_loopback() {
        FaceScope::Local
    } else {
        FaceScope::NonLocal
    }
}

/// The WebSocket handshake, then the face until the connection ends.
async fn serve<S>(shared: Arc<Shared>, id: FaceId, stream: S, params: FaceParams, peer: SocketAddr)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let handshake = tokio::time::timeout(
        HANDSHAKE_TIMEOUT,
        tokio_tungstenite::accept_async_with_config(stream, Some(ws_config())),
    )
    .await;
    let ws = match handshake {
        Ok(Ok(ws)) => ws,
        Ok(Err(e)) => {
            bump(&shared.counters.accept_errors);
            tracing::debug!(%peer, error = %e, "WebSocket handshake failed");
            return;
        }
        Err(_) => {
            bump(&shared.counters.accept_errors);
            tracing::debug!(%peer, "WebSocket handshake timed out");
            return;
        }
    };
    let Ok((face, queue)) = shared.register_face_as(id, params, None) else {
        return; // shutting down
    };
    shared.announce_up(&face).await;
    let (sink, source) = ws.split();
    let conn = Arc::new(CloseSignal::default());
    let writer = tokio::spawn(write_loop(sink, queue, face.clone(), conn.clone()));
    let reason = read_loop(source, &shared, &face, &conn).await;
    if face.close_reason().is_some() {
        // The face is closing: give the writer time to flush.
        let _ = tokio::time::timeout(shared.config.shutdown_timeout, writer).await;
    } else {
        conn.close(reason.clone());
        let _ = writer.await;
    }
    shared.face_closed(&face, reason).await;
}

/// Checks that a message is exactly one acceptable TLV; returns it, or why not.
fn one_packet(msg: Bytes) -> Result<Bytes, FramingError> {
    let mut framer = StreamFramer::default();
    framer.read_buffer().extend_from_slice(&msg);
    match framer.next_packet()? {
        Some(pkt) if pkt.len() == msg.len() => Ok(pkt),
        // Half a TLV, or a TLV followed by more bytes: not one packet.
        _ => Err(FramingError::Malformed),
    }
}

async fn read_loop<St>(
    mut source: St,
    shared: &Shared,
    face: &FaceHandle,
    conn: &Arc<CloseSignal>,
) -> DownReason
where
    St: futures_util::Stream<Item = Result<Message, WsError>> + Unpin,
{
    let mut link = LinkRx::new(None);
    loop {
        // Backpressure: a face this one feeds is congested.
        if face.is_paused() {
            if let Err(reason) = face.wait_resumed().await {
                return reason;
            }
        }
        let next = tokio::select! {
            biased;
            reason = face.closed() => return reason,
            reason = conn.closed() => return reason,
            next = source.next() => next,
        };
        let msg = match next {
            None | Some(Ok(Message::Close(_))) => return DownReason::PeerClosed,
            Some(Ok(Message::Binary(b))) => b,
            Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
            Some(Ok(Message::Text(_))) => {
                bump(&face.counters.drop_malformed);
                tracing::debug!(face = %face.id, "text message on a WebSocket face: closing it");
                return DownReason::Framing(FramingError::Malformed);
            }
            Some(Err(WsError::Capacity(CapacityError::MessageTooLong { size, .. }))) => {
                bump(&face.counters.drop_too_large);
                tracing::debug!(face = %face.id, size, "oversized WebSocket message: closing");
                return DownReason::Framing(FramingError::TooLarge { len: size as u64 });
            }
            Some(Err(e)) => {
                tracing::debug!(face = %face.id, error = %e, "WebSocket error");
                return DownReason::Io(std::io::ErrorKind::InvalidData);
            }
        };
        let pkt = match one_packet(msg) {
            Ok(pkt) => pkt,
            Err(e) => {
                let counter = match e {
                    FramingError::TooLarge { .. } => &face.counters.drop_too_large,
                    _ => &face.counters.drop_malformed,
                };
                bump(counter);
                tracing::debug!(face = %face.id, drop = %e, "bad WebSocket message: closing");
                return DownReason::Framing(e);
            }
        };
        face.counters.received(pkt.len());
        match link.on_receive(shared.now_ms(), pkt) {
            RxOutcome::Deliver(wire) => {
                bump(&face.counters.in_network);
                if let Err(reason) = deliver(shared, face, wire).await {
                    return reason;
                }
            }
            RxOutcome::Idle => bump(&face.counters.in_idle),
            RxOutcome::Handshake(_) => bump(&face.counters.drop_malformed),
            // No reassembly on WebSocket faces, as on NFD's: a fragment is dropped.
            RxOutcome::Fragment | RxOutcome::Dropped(RxDrop::TooLarge) => {
                bump(&face.counters.drop_reassembly);
            }
            RxOutcome::Dropped(_) => bump(&face.counters.drop_malformed),
        }
    }
}

async fn write_loop<Si>(
    mut sink: Si,
    mut queue: TxQueue,
    face: Arc<FaceHandle>,
    conn: Arc<CloseSignal>,
) where
    Si: futures_util::Sink<Message, Error = WsError> + Unpin,
{
    let mut link = LinkTx::new(None, 0);
    loop {
        let pkt = tokio::select! {
            biased;
            _ = conn.closed() => return,
            _ = face.closed() => break,
            pkt = queue.recv() => pkt,
        };
        let Some(pkt) = pkt else { break };
        // One message per packet; the batch is flushed once.
        let mut batch = vec![pkt];
        while batch.len() < 64 {
            let Ok(p) = queue.try_recv() else { break };
            batch.push(p);
        }
        if send_all(&mut sink, batch, &mut link, &face).await.is_err() {
            bump(&face.counters.drop_send_error);
            conn.close(DownReason::Io(std::io::ErrorKind::BrokenPipe));
            return;
        }
    }
    // Closing: flush what is queued, then a Close frame.
    let mut rest = Vec::new();
    while let Ok(p) = queue.try_recv() {
        rest.push(p);
    }
    if send_all(&mut sink, rest, &mut link, &face).await.is_ok() {
        let _ = sink.send(Message::Close(None)).await;
    }
}

async fn send_all<Si>(
    sink: &mut Si,
    batch: Vec<Bytes>,
    link: &mut LinkTx,
    face: &FaceHandle,
) -> Result<(), WsError>
where
    Si: futures_util::Sink<Message, Error = WsError> + Unpin,
{
    for pkt in batch {
        bump(&face.counters.out_network);
        for frame in link.on_send(pkt) {
            let len = frame.len();
            sink.feed(Message::Binary(frame)).await?;
            face.counters.sent(len);
        }
    }
    sink.flush().await
}

/// Loads a PEM certificate chain and private key into a TLS acceptor for `wss://`.
///
/// # Errors
/// A file cannot be read, holds no certificate or no key, or rustls refuses the pair.
pub(crate) fn tls_acceptor(
    cert: &std::path::Path,
    key: &std::path::Path,
) -> Result<TlsAcceptor, String> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| format!("cannot read certificates from {}: {e}", cert.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("bad certificate in {}: {e}", cert.display()))?;
    if certs.is_empty() {
        return Err(format!("no certificate in {}", cert.display()));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("cannot read a private key from {}: {e}", key.display()))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = tokio_rustls::rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("TLS certificate and key refused: {e}"))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_is_local_only_loopback_to_loopback() {
        let a = |s: &str| s.parse::<SocketAddr>().unwrap();
        let lo4 = a("127.0.0.1:9696");
        assert_eq!(scope_of(lo4, a("127.0.0.1:50000")), FaceScope::Local);
        assert_eq!(
            scope_of(a("[::1]:9696"), a("[::1]:50000")),
            FaceScope::Local
        );
        let mapped = a("[::ffff:127.0.0.1]:9696");
        assert_eq!(
            scope_of(mapped, a("[::ffff:127.0.0.2]:1")),
            FaceScope::Local
        );
        assert_eq!(scope_of(lo4, a("192.0.2.7:50000")), FaceScope::NonLocal);
        assert_eq!(scope_of(a("192.0.2.1:9696"), lo4), FaceScope::NonLocal);
        assert_eq!(
            scope_of(mapped, a("[::ffff:192.0.2.7]:1")),
            FaceScope::NonLocal
        );
        assert_eq!(
            scope_of(a("[2001:db8::1]:9696"), a("[::1]:1")),
            FaceScope::NonLocal
        );
    }

    #[test]
    fn a_message_must_be_exactly_one_packet() {
        let interest = Bytes::from_static(&[0x05, 0x05, 0x07, 0x03, 0x08, 0x01, 0x61]);
        assert_eq!(one_packet(interest.clone()).unwrap(), interest);
        let mut two = interest.to_vec();
        two.extend_from_slice(&interest);
        assert!(one_packet(Bytes::from(two)).is_err());
        assert!(one_packet(interest.slice(..4)).is_err());
        assert!(matches!(
            one_packet(Bytes::from_static(&[0x09, 0x01, 0x00])),
            Err(FramingError::UnknownType { .. })
        ));
        assert!(one_packet(Bytes::new()).is_err());
    }
}
