//! Unicast UDP faces on shared sockets (NFD `UdpChannel` + `UnicastUdpTransport`).
//!
//! One [`UdpChannel`] per bound socket. Its receive task reads in batches (recvmmsg, GRO via
//! quinn-udp), finds the face of each datagram's source address, and runs that face's
//! [`LinkRx`] (reassembly). The first datagram from an unknown source creates an on-demand
//! face (listener sockets only). Each face has its own writer task: it fragments to the MTU
//! ([`LinkTx`]) and sends with GSO where the kernel has it.
//!
//! UDP faces are non-local unless [`crate::FaceSystemConfig::udp_loopback_is_local`] is set
//! and the peer is on loopback. On-demand faces that receive nothing for
//! [`crate::FaceSystemConfig::udp_idle_timeout`] are closed. Send errors are counted and never
//! close a face.

use std::collections::HashMap;
use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use quinn_udp::{RecvMeta, Transmit, UdpSocketState, BATCH_SIZE};
use smallvec::SmallVec;
use socket2::{Domain, Protocol, Socket, Type};
use tokio::io::Interest;
use tokio::net::UdpSocket;
use tokio::sync::mpsc::error::TrySendError;

use crate::config::FaceOptions;
use crate::counters::{add, bump, AtomicCounters};
use crate::error::FaceError;
use crate::event::{DownReason, FaceEvent};
use crate::face::{FaceHandle, FaceParams, TxQueue};
use crate::id::{FaceId, FaceKind, FaceScope, Persistency};
use crate::link::{random_u64, LinkRx, LinkTx, RxDrop, RxOutcome};
use crate::placement;
use crate::secure::{SecureLink, SecureMode};
use crate::sys;
use crate::system::{is_loopback, lock, Shared};
use crate::uri::{canonical_addr, unspecified_like, FaceUri};

/// Receive buffer per datagram slot: the largest UDP payload, which also holds a GRO batch.
const SLOT: usize = 64 * 1024;
/// Largest GSO send (all segments together), below the 64 KiB IP limit.
const GSO_MAX_BYTES: usize = 65_000;
/// Packets a face writer takes from its queue per round.
const WRITE_BATCH: usize = 32;
/// How often a secure face's writer checks for handshake work.
pub(crate) const HANDSHAKE_TICK: Duration = Duration::from_millis(200);
/// Socket buffer size asked for (the kernel may grant less).
const SOCKET_BUFFER: usize = 4 * 1024 * 1024;

/// One bound UDP socket and the faces on it, keyed by remote endpoint.
#[derive(Debug)]
pub(crate) struct UdpChannel {
    socket: UdpSocket,
    state: UdpSocketState,
    pub(crate) local: SocketAddr,
    /// Listener sockets create on-demand faces; the sockets `create` binds do not.
    accept_new: bool,
    peers: Mutex<HashMap<SocketAddr, Peer>>,
    /// GSO is used only for segments up to this size (lowered when the kernel refuses one).
    gso_max_segment: AtomicUsize,
}

#[derive(Debug)]
struct Peer {
    face: Arc<FaceHandle>,
    link: LinkRx,
    last_rx_ms: u64,
    /// Whether the driver was told about the face; datagrams before that are dropped.
    announced: bool,
}

impl UdpChannel {
    /// Binds a UDP socket for batched I/O.
    pub(crate) fn bind(addr: SocketAddr, accept_new: bool) -> io::Result<Arc<Self>> {
        let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
        if addr.is_ipv6() {
            socket.set_only_v6(true)?;
        }
        socket.set_nonblocking(true)?;
        socket.bind(&addr.into())?;
        let socket: std::net::UdpSocket = socket.into();
        let state = UdpSocketState::new((&socket).into())?;
        if let Err(e) = sys::allow_ip_fragmentation(&socket, addr.is_ipv6()) {
            tracing::debug!(error = %e, "cannot re-enable IP fragmentation on a UDP socket");
        }
        let _ = state.set_recv_buffer_size((&socket).into(), SOCKET_BUFFER);
        let _ = state.set_send_buffer_size((&socket).into(), SOCKET_BUFFER);
        let socket = UdpSocket::from_std(socket)?;
        let local = canonical_addr(socket.local_addr()?);
        Ok(Arc::new(Self {
            socket,
            state,
            local,
            accept_new,
            peers: Mutex::new(HashMap::new()),
            gso_max_segment: AtomicUsize::new(usize::MAX),
        }))
    }

    /// Sends datagrams to `dest`, grouping equal-size runs into GSO sends.
    /// `scratch` is reused between calls to gather GSO runs.
    async fn send_datagrams(
        &self,
        dest: SocketAddr,
        dgrams: &[Bytes],
        counters: &AtomicCounters,
        scratch: &mut Vec<u8>,
    ) {
        let mut i = 0;
        while let Some(first) = dgrams.get(i) {
            let run = self.gso_run(dgrams.get(i..).unwrap_or_default());
            let result = if run <= 1 {
                self.send_one(dest, first, None).await
            } else {
                scratch.clear();
                for d in dgrams.iter().skip(i).take(run) {
                    scratch.extend_from_slice(d);
                }
                let sent = self.send_one(dest, scratch, Some(first.len())).await;
                if sent.is_err() {
                    // Refused (e.g. a segment above the device MTU): stop using GSO for
                    // segments this large, and send this run one by one.
                    self.gso_max_segment
                        .fetch_min(first.len().saturating_sub(1), Ordering::Relaxed);
                    for d in dgrams.iter().skip(i).take(run) {
                        let result = self.send_one(dest, d, None).await;
                        record(counters, d.len(), result.map_err(|e| e.kind()));
                    }
                    i += run;
                    continue;
                }
                sent
            };
            for d in dgrams.iter().skip(i).take(run.max(1)) {
                record(
                    counters,
                    d.len(),
                    result.as_ref().map(|_| ()).map_err(io::Error::kind),
                );
            }
            i += run.max(1);
        }
    }

    /// How many datagrams from the front of `dgrams` one GSO send can carry: all the same
    /// size as the first, except that the last may be shorter.
    fn gso_run(&self, dgrams: &[Bytes]) -> usize {
        let Some(first) = dgrams.first() else {
            return 0;
        };
        let size = first.len();
        let max_segments = self.state.max_gso_segments().min(BATCH_SIZE);
        if max_segments <= 1 || size == 0 || size > self.gso_max_segment.load(Ordering::Relaxed) {
            return 1;
        }
        let (mut n, mut total) = (1, size);
        for d in dgrams.iter().skip(1) {
            if n >= max_segments
                || d.len() > size
                || d.is_empty()
                || total + d.len() > GSO_MAX_BYTES
            {
                break;
            }
            n += 1;
            total += d.len();
            if d.len() < size {
                break;
            }
        }
        n
    }

    async fn send_one(
        &self,
        dest: SocketAddr,
        contents: &[u8],
        segment: Option<usize>,
    ) -> io::Result<()> {
        let transmit = Transmit {
            destination: dest,
            ecn: None,
            contents,
            segment_size: segment,
            src_ip: None,
        };
        self.socket
            .async_io(Interest::WRITABLE, || {
                self.state.try_send((&self.socket).into(), &transmit)
            })
            .await
    }

    /// One batch from the socket into `buf`; returns how many slots were filled.
    ///
    /// A batch that filled fewer slots than it had took every datagram the socket held, so
    /// the socket is marked not readable at once (as a stream face's short read is, see
    /// `stream::read_draining`): the next call waits for the next readiness event instead of
    /// making a `recvmmsg` only to be told `EAGAIN` (measured: 38 % of the channel's
    /// `recvmmsg` calls under `nameway bench` over UDP). A datagram arriving meanwhile raises
    /// a new event (the reactor's registration is edge-triggered), so none waits unseen.
    async fn recv(&self, buf: &mut [u8], meta: &mut [RecvMeta]) -> io::Result<usize> {
        // Slots per batch: `buf`'s chunks of SLOT bytes, as many as quinn-udp reads at once.
        let room = buf.len().div_ceil(SLOT).min(BATCH_SIZE);
        loop {
            self.socket.readable().await?;
            let result = crate::stream::read_marking_drained(
                room,
                |f| self.socket.try_io(Interest::READABLE, f),
                || {
                    let mut slices: SmallVec<[IoSliceMut<'_>; BATCH_SIZE]> =
                        buf.chunks_mut(SLOT).map(IoSliceMut::new).collect();
                    self.state.recv((&self.socket).into(), &mut slices, meta)
                },
            );
            match result {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                other => return other,
            }
        }
    }
}

/// Counts one datagram sent, or a send error.
fn record(counters: &AtomicCounters, len: usize, result: Result<(), io::ErrorKind>) {
    match result {
        Ok(()) => counters.sent(len),
        Err(_) => bump(&counters.drop_send_error),
    }
}

/// Registers a channel and starts its receive task.
pub(crate) fn start_channel(shared: &Arc<Shared>, channel: Arc<UdpChannel>) {
    lock(&shared.udp).push(channel.clone());
    shared.spawn(recv_loop(shared.clone(), channel));
}

/// Creates a face toward `remote` (management).
pub(crate) fn create(
    shared: &Arc<Shared>,
    remote: SocketAddr,
    persistency: Persistency,
    options: FaceOptions,
) -> Result<FaceId, FaceError> {
    let remote = canonical_addr(remote);
    let channel = channel_for(shared, remote)?;
    let mut peers = lock(&channel.peers);
    if let Some(peer) = peers.get(&remote) {
        peer.face.raise_persistency(persistency);
        return Err(FaceError::Exists(peer.face.id));
    }
    if options.secure.is_some() && shared.config.security.is_none() {
        return Err(FaceError::SecurityNotConfigured);
    }
    let mtu = options.mtu.unwrap_or(shared.config.udp_mtu);
    let params = face_params(shared, &channel, remote, persistency, mtu, options.secure);
    let (face, queue) = shared.register_face(params, options.fault)?;
    let link = LinkRx::new(Some(shared.config.reassembly));
    let peer = Peer {
        face: face.clone(),
        link,
        last_rx_ms: shared.now_ms(),
        announced: false,
    };
    peers.insert(remote, peer);
    drop(peers);
    let id = face.id;
    let writer = face_writer(shared.clone(), channel, face, queue, remote, true);
    placement::spawn_home(shared, id, writer);
    Ok(id)
}

/// The socket a management-created face to `remote` uses: a listener that can reach it (so
/// the peer's replies, sent to our well-known port, find the face), else a socket bound to
/// the unspecified address of the same family.
fn channel_for(shared: &Arc<Shared>, remote: SocketAddr) -> Result<Arc<UdpChannel>, FaceError> {
    let reaches = |c: &UdpChannel| {
        c.local.is_ipv4() == remote.is_ipv4()
            && (c.local.ip().is_unspecified()
                || c.local.ip().is_loopback() == remote.ip().is_loopback())
    };
    {
        let channels = lock(&shared.udp);
        let best = channels
            .iter()
            .filter(|c| reaches(c))
            .max_by_key(|c| (c.accept_new, c.local.ip().is_unspecified()));
        if let Some(c) = best {
            return Ok(c.clone());
        }
    }
    let channel = UdpChannel::bind(SocketAddr::new(unspecified_like(remote.ip()), 0), false)?;
    start_channel(shared, channel.clone());
    Ok(channel)
}

fn face_params(
    shared: &Shared,
    channel: &UdpChannel,
    remote: SocketAddr,
    persistency: Persistency,
    mtu: usize,
    initiate: Option<SecureMode>,
) -> FaceParams {
    let local_scope = shared.config.udp_loopback_is_local && is_loopback(remote);
    // With `[security]`, every UDP face can answer a handshake; one created secure starts it.
    let secure = shared
        .config
        .security
        .as_ref()
        .map(|ctx| Arc::new(SecureLink::new(ctx.clone(), initiate)));
    FaceParams {
        kind: FaceKind::Udp,
        remote: FaceUri::udp(remote),
        local: FaceUri::udp(channel.local),
        scope: if local_scope {
            FaceScope::Local
        } else {
            FaceScope::NonLocal
        },
        persistency,
        mtu: Some(mtu),
        secure,
    }
}

/// What one receive round does after the batch is in.
enum Wake {
    Stop,
    Sweep,
    Received(io::Result<usize>),
}

async fn recv_loop(shared: Arc<Shared>, channel: Arc<UdpChannel>) {
    let mut buf = vec![0u8; SLOT * BATCH_SIZE];
    let mut meta = [RecvMeta::default(); BATCH_SIZE];
    let mut stop = shared.shutdown_signal();
    let period = (shared.config.udp_idle_timeout / 4)
        .clamp(Duration::from_millis(50), Duration::from_secs(1));
    let mut sweep = tokio::time::interval(period);
    sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let wake = tokio::select! {
            biased;
            _ = stop.wait_for(|s| *s) => Wake::Stop,
            _ = sweep.tick() => Wake::Sweep,
            n = channel.recv(&mut buf, &mut meta) => Wake::Received(n),
        };
        match wake {
            Wake::Stop => return,
            Wake::Sweep => sweep_peers(&shared, &channel),
            Wake::Received(Ok(n)) => {
                on_batch(&shared, &channel, &buf, meta.get(..n).unwrap_or_default()).await
            }
            Wake::Received(Err(e)) => {
                tracing::debug!(local = %channel.local, error = %e, "UDP receive error");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

/// Hands each datagram of a batch to its face, creating on-demand faces for new peers.
async fn on_batch(shared: &Arc<Shared>, channel: &Arc<UdpChannel>, buf: &[u8], meta: &[RecvMeta]) {
    let now = shared.now_ms();
    let mut unknown: SmallVec<[(SocketAddr, Bytes); 4]> = SmallVec::new();
    {
        let mut peers = lock(&channel.peers);
        for (slot, m) in meta.iter().enumerate() {
            let start = slot * SLOT;
            let Some(data) = buf.get(start..start + m.len.min(SLOT)) else {
                continue;
            };
            let stride = if m.stride == 0 { m.len } else { m.stride };
            if data.is_empty() || stride == 0 {
                continue;
            }
            let src = canonical_addr(m.addr);
            for dgram in data.chunks(stride) {
                let wire = Bytes::copy_from_slice(dgram);
                match peers.get_mut(&src) {
                    Some(peer) => on_datagram(shared, peer, wire, now),
                    None if channel.accept_new => unknown.push((src, wire)),
                    None => bump(&shared.counters.udp_unknown_peer),
                }
            }
        }
    }
    for (src, wire) in unknown {
        let known = lock(&channel.peers).contains_key(&src);
        if !known && !new_face(shared, channel, src).await {
            return; // shutting down
        }
        if let Some(peer) = lock(&channel.peers).get_mut(&src) {
            on_datagram(shared, peer, wire, now);
        }
    }
}

/// Creates an on-demand face for a new peer and announces it. Returns false when shutting
/// down.
async fn new_face(shared: &Arc<Shared>, channel: &Arc<UdpChannel>, src: SocketAddr) -> bool {
    let params = face_params(
        shared,
        channel,
        src,
        Persistency::OnDemand,
        shared.config.udp_mtu,
        None,
    );
    let Ok((face, queue)) = shared.register_face(params, None) else {
        return false;
    };
    shared.announce_up(&face).await;
    let link = LinkRx::new(Some(shared.config.reassembly));
    let peer = Peer {
        face: face.clone(),
        link,
        last_rx_ms: shared.now_ms(),
        announced: true,
    };
    lock(&channel.peers).insert(src, peer);
    let id = face.id;
    let writer = face_writer(shared.clone(), channel.clone(), face, queue, src, false);
    placement::spawn_home(shared, id, writer);
    true
}

/// Runs one datagram through its face's link service and queues the result. Never waits: a
/// full event queue drops and counts.
fn on_datagram(shared: &Shared, peer: &mut Peer, wire: Bytes, now: u64) {
    let counters = &peer.face.counters;
    counters.received(wire.len());
    peer.last_rx_ms = now;
    if !peer.announced {
        bump(&counters.drop_rx_backlog);
        return;
    }
    let mut outcome = peer.link.on_receive(now, wire);
    if let Some(secure) = &peer.face.secure {
        outcome = match outcome {
            RxOutcome::Deliver(wire) => match secure.open(now, wire) {
                Ok(plain) => RxOutcome::Deliver(plain),
                Err((_, reply)) => {
                    // Counted by the secure link (`nameway neighbour list`).
                    if let Some(reply) = reply {
                        let _ = peer.face.send(reply);
                    }
                    return;
                }
            },
            RxOutcome::Handshake(value) => {
                if let Some(reply) = secure.on_handshake(now, &value) {
                    let _ = peer.face.send(reply);
                }
                return;
            }
            other => other,
        };
    }
    // Counters first: whoever sees the event also sees them updated.
    if let Some(c) = peer.link.reassembly_counters() {
        counters
            .in_reassembled
            .store(c.reassembled, Ordering::Relaxed);
    }
    add(&counters.drop_reassembly, peer.link.take_reassembly_drops());
    match outcome {
        RxOutcome::Deliver(wire) => match shared.packet_events(peer.face.id).try_reserve() {
            Ok(permit) => {
                bump(&counters.in_network);
                permit.send(FaceEvent::Packet {
                    face: peer.face.id,
                    wire,
                });
            }
            Err(TrySendError::Full(())) => bump(&counters.drop_rx_backlog),
            Err(TrySendError::Closed(())) => {}
        },
        RxOutcome::Idle => bump(&counters.in_idle),
        // A handshake toward a forwarder without `[security]`: not understood, dropped.
        RxOutcome::Handshake(_) => bump(&counters.drop_malformed),
        RxOutcome::Fragment => {}
        RxOutcome::Dropped(RxDrop::TooLarge) => bump(&counters.drop_too_large),
        RxOutcome::Dropped(_) => bump(&counters.drop_malformed),
    }
}

/// Expires reassembly state and closes idle on-demand faces.
fn sweep_peers(shared: &Shared, channel: &UdpChannel) {
    let now = shared.now_ms();
    let idle = u64::try_from(shared.config.udp_idle_timeout.as_millis()).unwrap_or(u64::MAX);
    let peers = &mut *lock(&channel.peers);
    for peer in peers.values_mut() {
        peer.link.handle_timeout(now);
        add(
            &peer.face.counters.drop_reassembly,
            peer.link.take_reassembly_drops(),
        );
        let on_demand = peer.face.persistency() == Persistency::OnDemand;
        if on_demand && now.saturating_sub(peer.last_rx_ms) >= idle {
            peer.face.close(DownReason::IdleTimeout);
        }
    }
}

/// A UDP face's writer: fragments and sends its queue; at close, flushes, leaves the channel
/// and reports the face down.
async fn face_writer(
    shared: Arc<Shared>,
    channel: Arc<UdpChannel>,
    face: Arc<FaceHandle>,
    mut queue: TxQueue,
    dest: SocketAddr,
    announce: bool,
) {
    if announce {
        shared.announce_up(&face).await;
        if let Some(peer) = lock(&channel.peers).get_mut(&dest) {
            peer.announced = true;
        }
    }
    let mut link = LinkTx::new(face.mtu, random_u64());
    let mut batch: Vec<Bytes> = Vec::with_capacity(WRITE_BATCH);
    let mut scratch = Vec::new();
    // Handshake (re)transmissions of a secure face.
    let mut tick = tokio::time::interval(HANDSHAKE_TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let secure = face.secure.clone();
    let reason = loop {
        tokio::select! {
            biased;
            _ = tick.tick(), if secure.is_some() => {
                if let Some(msg) = secure.as_ref().and_then(|s| s.poll(shared.now_ms())) {
                    batch.push(msg);
                    send_batch(&shared, &channel, dest, &mut batch, &mut link, &face, &mut scratch).await;
                }
            }
            reason = face.closed() => {
                while let Ok(pkt) = queue.try_recv() {
                    batch.push(pkt);
                }
                send_batch(&shared, &channel, dest, &mut batch, &mut link, &face, &mut scratch).await;
                break reason;
            }
            pkt = queue.recv() => {
                let Some(pkt) = pkt else {
                    break face.close_reason().unwrap_or(DownReason::Shutdown);
                };
                batch.push(pkt);
                while batch.len() < WRITE_BATCH {
                    let Ok(pkt) = queue.try_recv() else { break };
                    batch.push(pkt);
                }
                send_batch(&shared, &channel, dest, &mut batch, &mut link, &face, &mut scratch).await;
            }
        }
    };
    {
        let mut peers = lock(&channel.peers);
        if peers.get(&dest).is_some_and(|p| p.face.id == face.id) {
            peers.remove(&dest);
        }
    }
    shared.face_closed(&face, reason).await;
}

async fn send_batch(
    shared: &Shared,
    channel: &UdpChannel,
    dest: SocketAddr,
    batch: &mut Vec<Bytes>,
    link: &mut LinkTx,
    face: &FaceHandle,
    scratch: &mut Vec<u8>,
) {
    let mut dgrams: SmallVec<[Bytes; WRITE_BATCH]> = SmallVec::new();
    let now = shared.now_ms();
    for pkt in batch.drain(..) {
        // Encrypted per the policy on a secure face; a packet that needs a session not yet
        // there is dropped (counted by the secure link).
        let pkt = match &face.secure {
            Some(secure) => match secure.seal(now, pkt) {
                Ok(p) => p,
                Err(_) => continue,
            },
            None => pkt,
        };
        bump(&face.counters.out_network);
        let frags = link.on_send(pkt);
        match frags.len() {
            0 => bump(&face.counters.drop_mtu),
            1 => {}
            _ => bump(&face.counters.out_fragmented),
        }
        dgrams.extend(frags);
    }
    channel
        .send_datagrams(dest, &dgrams, &face.counters, scratch)
        .await;
}
