//! Talking to the forwarder as an application does.
//!
//! - [`Transport`]: which socket, chosen like python-ndn (docs/nfd-interop.md §2): the `--transport`
//!   flag, else `NDN_CLIENT_TRANSPORT`, else `transport=` in the first `client.conf`, else
//!   `unix:///run/nfd/nfd.sock` (or the legacy `/run/nfd.sock` when only that exists).
//! - [`Conn`]: one connection. Stream sockets carry back-to-back TLVs (cut by the same
//!   [`StreamFramer`] the daemon's faces use); UDP carries one packet per datagram. LpPackets
//!   are unwrapped (Nack, PitToken, fragments reassembled, IDLE dropped) into [`Incoming`].
//! - [`Client`]: Interests with a timeout (a Nack is [`ClientError::Nack`] with its reason),
//!   v0.3 signed management commands (DigestSha256, SignatureNonce, SignatureTime), segmented
//!   status datasets (docs/nfd-interop.md §8) and prefix registration for producers.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use nameway_wire::lp::{Reassembler, ReassemblerConfig};
use nameway_wire::mgmt::{status_code, ControlParameters, ControlResponse, DatasetEntry};
use nameway_wire::name::Component;
use nameway_wire::security::DigestSha256;
use nameway_wire::signature::signature_type;
use nameway_wire::tlv::types;
use nameway_wire::{
    Data, DataView, FramingError, Interest, InterestView, NackReason, Name, Packet, StreamFramer,
};
use nameway_wire::{ParseError, SignatureInfo};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UdpSocket, UnixStream};

/// NFD's Unix socket, python-ndn's and NDNts's default on Linux.
pub const DEFAULT_UNIX: &str = "/run/nfd/nfd.sock";
/// The socket of older NFD installations, used when only it exists.
const LEGACY_UNIX: &str = "/run/nfd.sock";
/// NFD's TCP and UDP port.
pub const DEFAULT_PORT: u16 = 6363;
/// How long to wait for an answer by default (and the InterestLifetime then).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(4000);
/// The management prefix of a local forwarder.
const MGMT_PREFIX: &str = "/localhost/nfd";
/// Most segments fetched for one dataset (8000 bytes each: 80 MB).
const MAX_SEGMENTS: u64 = 10_000;
/// Discovery Interests sent for one dataset before a cached version is accepted anyway.
const MAX_DISCOVERIES: u32 = 3;
/// Longest wait for a cached dataset to go stale (NFD's datasets are fresh for 1 s).
const MAX_FRESHNESS_WAIT_MS: u64 = 2000;
/// Largest datagram accepted on UDP.
const MAX_DATAGRAM: usize = 65_536;
/// Files python-ndn reads `transport=` from, first found wins (after `~/.ndn/client.conf`).
const CLIENT_CONF: [&str; 3] = [
    "/usr/local/etc/ndn/client.conf",
    "/opt/local/etc/ndn/client.conf",
    "/etc/ndn/client.conf",
];

/// What can go wrong talking to the forwarder.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The transport URI does not parse.
    #[error(
        "{0:?} is not a transport URI: use unix:///path/to/nfd.sock, tcp://host[:port], \
         udp://host[:port] or ws://host:port"
    )]
    BadTransport(String),
    /// The socket cannot be opened (or UDP reports the port closed).
    #[error(
        "cannot connect to the forwarder at {uri} (is namewayd running? set \
         NDN_CLIENT_TRANSPORT or --transport)"
    )]
    Connect {
        /// The transport tried.
        uri: String,
        /// Why.
        source: io::Error,
    },
    /// The forwarder closed the connection.
    #[error("the forwarder at {uri} closed the connection")]
    Closed {
        /// The transport.
        uri: String,
    },
    /// Reading or writing failed.
    #[error("I/O error talking to the forwarder at {uri}")]
    Io {
        /// The transport.
        uri: String,
        /// Why.
        source: io::Error,
    },
    /// The byte stream from the forwarder cannot be cut into packets.
    #[error("the forwarder sent a stream that cannot be framed")]
    Framing(#[from] FramingError),
    /// A name given or built does not parse or is too long.
    #[error("bad name")]
    Name(#[from] ParseError),
    /// The Interest was Nacked.
    #[error("Nack for {name}: {reason}")]
    Nack {
        /// The Interest's name.
        name: Name,
        /// The NackReason.
        reason: NackReason,
    },
    /// No answer in time.
    #[error("timeout after {ms} ms waiting for Data for {name}{hint}")]
    Timeout {
        /// The Interest's name.
        name: Name,
        /// How long we waited.
        ms: u128,
        /// What the user may do about it (empty or starting with "; ").
        hint: String,
    },
    /// An answer that does not decode as what was asked for.
    #[error("malformed answer for {name}: {detail}")]
    Malformed {
        /// The name asked for.
        name: Name,
        /// What is wrong.
        detail: String,
    },
    /// A management command answered with a status code other than 200.
    #[error("{command} failed: {code} {text}")]
    Refused {
        /// `module/verb`.
        command: String,
        /// StatusCode.
        code: u32,
        /// StatusText.
        text: String,
    },
}

/// How to reach the forwarder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A Unix stream socket.
    Unix(PathBuf),
    /// TCP.
    Tcp {
        /// Host name or address (no brackets).
        host: String,
        /// Port.
        port: u16,
    },
    /// UDP, one packet per datagram.
    Udp {
        /// Host name or address (no brackets).
        host: String,
        /// Port.
        port: u16,
    },
    /// WebSocket, one packet per binary message (namewayd's WebSocket face).
    Ws {
        /// Host name or address (no brackets).
        host: String,
        /// Port.
        port: u16,
    },
}

impl Transport {
    /// Parses `unix:///path`, `tcp[4|6]://host[:port]` or `udp[4|6]://host[:port]` (port 6363
    /// when absent; IPv6 addresses in brackets).
    ///
    /// # Errors
    /// [`ClientError::BadTransport`].
    pub fn parse(uri: &str) -> Result<Self, ClientError> {
        let bad = || ClientError::BadTransport(uri.to_owned());
        let (scheme, rest) = uri.split_once("://").ok_or_else(bad)?;
        match scheme {
            "unix" if rest.starts_with('/') => Ok(Self::Unix(PathBuf::from(rest))),
            "tcp" | "tcp4" | "tcp6" => {
                let (host, port) = host_port(rest).ok_or_else(bad)?;
                Ok(Self::Tcp { host, port })
            }
            "udp" | "udp4" | "udp6" => {
                let (host, port) = host_port(rest).ok_or_else(bad)?;
                Ok(Self::Udp { host, port })
            }
            "ws" => {
                let (host, port) = host_port(rest).ok_or_else(bad)?;
                Ok(Self::Ws { host, port })
            }
            _ => Err(bad()),
        }
    }

    /// The transport to use: `flag`, else `NDN_CLIENT_TRANSPORT`, else `transport=` from the
    /// first `client.conf` found, else the platform default (python-ndn's order).
    ///
    /// # Errors
    /// The chosen URI does not parse.
    pub fn resolve(flag: Option<&str>) -> Result<Self, ClientError> {
        if let Some(uri) = flag {
            return Self::parse(uri);
        }
        if let Some(uri) = std::env::var("NDN_CLIENT_TRANSPORT")
            .ok()
            .filter(|s| !s.is_empty())
        {
            return Self::parse(&uri);
        }
        if let Some(uri) = client_conf_transport() {
            return Self::parse(&uri);
        }
        Ok(Self::Unix(default_unix_path()))
    }

    /// Whether the forwarder gives this face local scope, so `/localhost/nfd` may be used:
    /// Unix always, TCP from loopback, UDP never (NFD's rule, docs/nfd-interop.md §2.3).
    pub fn is_local(&self) -> bool {
        match self {
            Self::Unix(_) => true,
            Self::Tcp { host, .. } | Self::Ws { host, .. } => is_loopback(host),
            Self::Udp { .. } => false,
        }
    }
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = |h: &str| {
            if h.contains(':') {
                format!("[{h}]")
            } else {
                h.to_owned()
            }
        };
        match self {
            Self::Unix(p) => write!(f, "unix://{}", p.display()),
            Self::Tcp { host: h, port } => write!(f, "tcp://{}:{port}", host(h)),
            Self::Udp { host: h, port } => write!(f, "udp://{}:{port}", host(h)),
            Self::Ws { host: h, port } => write!(f, "ws://{}:{port}", host(h)),
        }
    }
}

/// `host[:port]`, `[v6]` or `[v6]:port`, with an optional trailing `/`.
fn host_port(rest: &str) -> Option<(String, u16)> {
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        match after {
            "" => (host, None),
            p => (host, Some(p.strip_prefix(':')?)),
        }
    } else {
        match rest.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (rest, None),
        }
    };
    if host.is_empty() || host.contains('/') {
        return None;
    }
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => DEFAULT_PORT,
    };
    Some((host.to_owned(), port))
}

fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `/run/nfd/nfd.sock`, unless it is missing and the legacy `/run/nfd.sock` exists.
fn default_unix_path() -> PathBuf {
    let default = Path::new(DEFAULT_UNIX);
    if !default.exists() && Path::new(LEGACY_UNIX).exists() {
        return PathBuf::from(LEGACY_UNIX);
    }
    default.to_path_buf()
}

/// `transport=` from the first client.conf that exists (an INI file; python-ndn's list).
fn client_conf_transport() -> Option<String> {
    let home = std::env::var_os("HOME").map(|h| Path::new(&h).join(".ndn/client.conf"));
    let file = home
        .into_iter()
        .chain(CLIENT_CONF.iter().map(PathBuf::from))
        .find(|p| p.is_file())?;
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "transport").then(|| value.trim().to_owned())
    })
}

/// A packet from the forwarder, unwrapped from its LpPacket if it had one.
#[derive(Clone, Debug)]
pub enum Incoming {
    /// An Interest (a whole `05` TLV).
    Interest(Bytes),
    /// A Data (a whole `06` TLV).
    Data(Bytes),
    /// A Nack with its reason and the Nacked Interest.
    Nack {
        /// NackReason (None when the header had none).
        reason: NackReason,
        /// The Interest as we sent it.
        interest: Bytes,
        /// NDNLPv2 RetryAfter (ms): when the forwarder expects the Interest to succeed (a
        /// route being resolved, docs/routing.md).
        retry_after: Option<u64>,
    },
}

enum Io {
    Unix(UnixStream),
    Tcp(TcpStream),
    Udp(UdpSocket),
    Ws(Box<tokio_tungstenite::WebSocketStream<TcpStream>>),
    /// An in-memory byte stream (packets framed as on a stream socket): the other end is
    /// bridged by the caller, e.g. onto a channel that carries NDN packets.
    Memory(tokio::io::DuplexStream),
}

/// A WebSocket error as an I/O error (the connection is gone or broken either way).
fn ws_io(e: tokio_tungstenite::tungstenite::Error) -> io::Error {
    match e {
        tokio_tungstenite::tungstenite::Error::Io(e) => e,
        other => io::Error::new(io::ErrorKind::ConnectionReset, other),
    }
}

/// How much a stream connection's read buffer grows by. An application's packets are gone
/// once delivered (no content store pins them), so it reads in larger steps than the
/// forwarder's faces (16 KiB): at 8000-byte segments a read takes about 8 packets instead of
/// 2 to 4. Same-run A/B (64 MiB, fixed window 64, 15 rounds): unsigned `nameway get` 1.05x,
/// with manifests of 256 1.02x.
const READ_CHUNK: usize = 64 * 1024;

/// One connection to the forwarder (one face on its side).
pub struct Conn {
    io: Io,
    uri: String,
    framer: StreamFramer,
    datagram: Vec<u8>,
    pending_datagram: Option<Bytes>,
    reassembler: Reassembler,
    start: Instant,
    out: Vec<u8>,
    out_ends: Vec<usize>,
}

impl Conn {
    /// Opens a connection.
    ///
    /// # Errors
    /// [`ClientError::Connect`] naming the transport.
    pub async fn connect(transport: &Transport) -> Result<Self, ClientError> {
        let uri = transport.to_string();
        let io = connect_io(transport)
            .await
            .map_err(|source| ClientError::Connect {
                uri: uri.clone(),
                source,
            })?;
        Ok(Self::with_io(io, uri))
    }

    /// A connection over one end of an in-memory stream (`tokio::io::duplex`): packets are
    /// framed as on a stream socket; whoever holds the other end answers them. `label`
    /// names the connection in errors.
    pub fn over_memory(stream: tokio::io::DuplexStream, label: &str) -> Self {
        Self::with_io(Io::Memory(stream), label.to_owned())
    }

    fn with_io(io: Io, uri: String) -> Self {
        Self {
            io,
            uri,
            framer: StreamFramer::default().with_read_chunk(READ_CHUNK),
            datagram: vec![0; MAX_DATAGRAM],
            pending_datagram: None,
            reassembler: Reassembler::new(ReassemblerConfig::default()),
            start: Instant::now(),
            out: Vec::new(),
            out_ends: Vec::new(),
        }
    }

    /// Queues one packet; [`Conn::flush`] sends what is queued (one write on a stream, one
    /// datagram per packet on UDP).
    pub fn queue(&mut self, wire: &[u8]) {
        self.out.extend_from_slice(wire);
        self.out_ends.push(self.out.len());
    }

    /// Sends every queued packet. Not cancel-safe: do not race it in a `select!`.
    ///
    /// # Errors
    /// The socket failed.
    pub async fn flush(&mut self) -> Result<(), ClientError> {
        let result = match &mut self.io {
            Io::Unix(s) => s.write_all(&self.out).await,
            Io::Tcp(s) => s.write_all(&self.out).await,
            Io::Memory(s) => s.write_all(&self.out).await,
            Io::Udp(s) => {
                let mut result = Ok(());
                let mut start = 0;
                for &end in &self.out_ends {
                    if let Err(e) = s.send(self.out.get(start..end).unwrap_or_default()).await {
                        result = Err(e);
                        break;
                    }
                    start = end;
                }
                result
            }
            Io::Ws(ws) => {
                use futures_util::SinkExt as _;
                let mut result = Ok(());
                let mut start = 0;
                for &end in &self.out_ends {
                    let msg = Bytes::copy_from_slice(self.out.get(start..end).unwrap_or_default());
                    if let Err(e) = ws
                        .feed(tokio_tungstenite::tungstenite::Message::Binary(msg))
                        .await
                    {
                        result = Err(ws_io(e));
                        break;
                    }
                    start = end;
                }
                match result {
                    Ok(()) => ws.flush().await.map_err(ws_io),
                    err => err,
                }
            }
        };
        self.out.clear();
        self.out_ends.clear();
        result.map_err(|e| self.io_error(e))
    }

    /// Sends one packet now.
    ///
    /// # Errors
    /// The socket failed.
    pub async fn send(&mut self, wire: &[u8]) -> Result<(), ClientError> {
        self.queue(wire);
        self.flush().await
    }

    /// The next packet from the forwarder. Cancel-safe: a packet half-received when the future
    /// is dropped stays buffered.
    ///
    /// # Errors
    /// The socket failed or closed, or the stream cannot be framed.
    pub async fn recv(&mut self) -> Result<Incoming, ClientError> {
        loop {
            if let Some(p) = self.try_recv()? {
                return Ok(p);
            }
            self.fill().await?;
        }
    }

    /// The next packet already received (buffered, or waiting in the socket), without
    /// waiting for more.
    ///
    /// # Errors
    /// The stream cannot be framed, or the socket failed.
    pub fn try_recv(&mut self) -> Result<Option<Incoming>, ClientError> {
        loop {
            let raw = match &mut self.io {
                Io::Ws(ws) => match self.pending_datagram.take() {
                    Some(d) => Some(d),
                    None => {
                        use futures_util::{FutureExt as _, StreamExt as _};
                        match ws.next().now_or_never() {
                            Some(Some(Ok(tokio_tungstenite::tungstenite::Message::Binary(b)))) => {
                                Some(b)
                            }
                            Some(None) => {
                                return Err(ClientError::Closed {
                                    uri: self.uri.clone(),
                                })
                            }
                            Some(Some(Err(e))) => return Err(self.io_error(ws_io(e))),
                            // Pings, pongs, nothing yet.
                            Some(Some(Ok(_))) | None => None,
                        }
                    }
                },
                Io::Udp(s) => match self.pending_datagram.take() {
                    Some(d) => Some(d),
                    None => match s.try_recv(&mut self.datagram) {
                        Ok(n) => Some(Bytes::copy_from_slice(
                            self.datagram.get(..n).unwrap_or_default(),
                        )),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => None,
                        Err(e) => return Err(self.io_error(e)),
                    },
                },
                _ => self.framer.next_packet()?,
            };
            let Some(raw) = raw else {
                return Ok(None);
            };
            if let Some(p) = self.unwrap_packet(raw) {
                return Ok(Some(p));
            }
        }
    }

    /// Reads more bytes (a stream) or one datagram.
    async fn fill(&mut self) -> Result<(), ClientError> {
        let result = match &mut self.io {
            Io::Unix(s) => s.read_buf(self.framer.read_buffer()).await,
            Io::Tcp(s) => s.read_buf(self.framer.read_buffer()).await,
            Io::Memory(s) => s.read_buf(self.framer.read_buffer()).await,
            Io::Udp(s) => match s.recv(&mut self.datagram).await {
                Ok(n) => {
                    let d = self.datagram.get(..n).unwrap_or_default();
                    self.pending_datagram = (n > 0).then(|| Bytes::copy_from_slice(d));
                    return Ok(());
                }
                Err(e) => Err(e),
            },
            Io::Ws(ws) => {
                use futures_util::StreamExt as _;
                match ws.next().await {
                    Some(Ok(tokio_tungstenite::tungstenite::Message::Binary(b))) => {
                        self.pending_datagram = Some(b);
                        return Ok(());
                    }
                    Some(Ok(tokio_tungstenite::tungstenite::Message::Close(_))) | None => Ok(0),
                    Some(Ok(_)) => return Ok(()),
                    Some(Err(e)) => Err(ws_io(e)),
                }
            }
        };
        match result {
            Ok(0) => Err(ClientError::Closed {
                uri: self.uri.clone(),
            }),
            Ok(_) => Ok(()),
            Err(e) => Err(self.io_error(e)),
        }
    }

    /// Sorts a received packet; `None` for what an application ignores (IDLE packets,
    /// incomplete fragments, undecodable packets).
    fn unwrap_packet(&mut self, raw: Bytes) -> Option<Incoming> {
        let lp = match Packet::classify(raw).ok()? {
            Packet::Interest(w) => return Some(Incoming::Interest(w)),
            Packet::Data(w) => return Some(Incoming::Data(w)),
            Packet::Lp(lp) => lp,
        };
        if let Some(reason) = lp.nack {
            return lp.fragment.map(|interest| Incoming::Nack {
                reason,
                interest,
                retry_after: lp.retry_after,
            });
        }
        let now_ms = self.start.elapsed().as_millis() as u64;
        let whole = self.reassembler.receive(now_ms, &lp)?;
        match whole.first().map(|&t| u32::from(t)) {
            Some(types::INTEREST) => Some(Incoming::Interest(whole)),
            Some(types::DATA) => Some(Incoming::Data(whole)),
            _ => None,
        }
    }

    /// Maps an I/O error; "connection refused" (UDP with no listener) is a connect error.
    fn io_error(&self, source: io::Error) -> ClientError {
        let uri = self.uri.clone();
        match source.kind() {
            io::ErrorKind::ConnectionRefused => ClientError::Connect { uri, source },
            io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::UnexpectedEof => ClientError::Closed { uri },
            _ => ClientError::Io { uri, source },
        }
    }
}

/// The send buffer asked for on a Unix connection to the forwarder. What a producer sends
/// waits there until the forwarder reads it; the system default (net.core.wmem_default,
/// 208 KiB, some 25 Data packets of 8000 B) made the producer block, and wake, every few
/// dozen packets while the forwarder was busy. Same-run A/B through namewayd (two daemons
/// side by side, fetches alternated, 256 MiB at 8000 B, medians of 7): 4 MiB here gave
/// fixed window 64 / AIMD / CUBIC 1.05 / 1.23 / 1.19x the goodput; 416 KiB (what a host with
/// the default net.core.wmem_max grants) 1.10 / 1.07 / 1.12x. The forwarder's side of the
/// socket keeps the default: a larger buffer there measured 0.93-0.96x.
const UNIX_SEND_BUFFER: usize = 4 << 20;

async fn connect_io(transport: &Transport) -> io::Result<Io> {
    match transport {
        Transport::Unix(path) => {
            let s = UnixStream::connect(path).await?;
            // Best effort: the kernel caps it at net.core.wmem_max (and doubles it).
            let _ = socket2::SockRef::from(&s).set_send_buffer_size(UNIX_SEND_BUFFER);
            Ok(Io::Unix(s))
        }
        Transport::Tcp { host, port } => {
            let s = TcpStream::connect((host.as_str(), *port)).await?;
            s.set_nodelay(true)?;
            Ok(Io::Tcp(s))
        }
        Transport::Udp { host, port } => {
            let addr = tokio::net::lookup_host((host.as_str(), *port))
                .await?
                .next()
                .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address"))?;
            let local: std::net::SocketAddr = if addr.is_ipv6() {
                (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
            } else {
                (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
            };
            let s = UdpSocket::bind(local).await?;
            // Bigger buffers keep bursts from being dropped by the kernel; best effort.
            let sock = socket2::SockRef::from(&s);
            let _ = sock.set_recv_buffer_size(4 << 20);
            let _ = sock.set_send_buffer_size(4 << 20);
            s.connect(addr).await?;
            Ok(Io::Udp(s))
        }
        Transport::Ws { host, port } => {
            let s = TcpStream::connect((host.as_str(), *port)).await?;
            s.set_nodelay(true)?;
            let url = format!(
                "ws://{}:{port}/",
                if host.contains(':') {
                    format!("[{host}]")
                } else {
                    host.clone()
                }
            );
            let (ws, _) = tokio_tungstenite::client_async(url, s)
                .await
                .map_err(ws_io)?;
            Ok(Io::Ws(Box::new(ws)))
        }
    }
}

/// Whether Data named `data_name` (with full name `full`) satisfies `interest`.
fn satisfies(interest: &Interest, data: &DataView) -> bool {
    let name = &interest.name;
    if name
        .last()
        .is_some_and(|c| c.typ() == types::IMPLICIT_SHA256_DIGEST_COMPONENT)
    {
        return *name == data.full_name();
    }
    if interest.can_be_prefix {
        name.is_prefix_of(data.name())
    } else {
        name == data.name()
    }
}

/// What a packet received is to the Interests a request has sent.
enum Reply {
    /// Data (as it arrived) satisfying the Interest at this index.
    Data(usize, Bytes),
    /// A Nack of the Interest at this index, with its reason.
    Nack(usize, NackReason),
}

/// Matches `incoming` with `pending`: Data that satisfies one of them, or a Nack whose Interest
/// has one's name. Anything else (Data or Nacks of other requests, Interests, packets that do
/// not parse) is `None`, to be dropped.
fn reply_to(incoming: Incoming, pending: &[Interest]) -> Option<Reply> {
    match incoming {
        Incoming::Data(wire) => {
            let view = DataView::new_checked(wire.clone()).ok()?;
            let i = pending.iter().position(|i| satisfies(i, &view))?;
            Some(Reply::Data(i, wire))
        }
        Incoming::Nack {
            reason, interest, ..
        } => {
            let view = InterestView::new_checked(interest).ok()?;
            let i = pending.iter().position(|i| i.name == *view.name())?;
            Some(Reply::Nack(i, reason))
        }
        Incoming::Interest(_) => None,
    }
}

/// Segment Interests a dataset fetch keeps in flight.
const DATASET_WINDOW: usize = 32;

/// A connection with request/response helpers on top.
pub struct Client {
    conn: Conn,
    /// `None` over an in-memory stream.
    transport: Option<Transport>,
    timeout: Duration,
    last_signature_time: u64,
    /// Wall-clock time (ms) this client last sent a command: a dataset fetched afterwards
    /// must be a version published after it, so that the command's effect shows.
    last_command_ms: Option<u64>,
}

impl Client {
    /// Connects to the forwarder.
    ///
    /// # Errors
    /// [`ClientError::Connect`].
    pub async fn connect(transport: Transport) -> Result<Self, ClientError> {
        Ok(Self {
            conn: Conn::connect(&transport).await?,
            transport: Some(transport),
            timeout: DEFAULT_TIMEOUT,
            last_signature_time: 0,
            last_command_ms: None,
        })
    }

    /// A client over `conn` made by [`Conn::over_memory`] (for [`crate::consumer::fetch`]
    /// over a channel that is not a socket).
    pub fn over(conn: Conn) -> Self {
        Self {
            conn,
            transport: None,
            timeout: DEFAULT_TIMEOUT,
            last_signature_time: 0,
            last_command_ms: None,
        }
    }

    /// The connection, for producers and custom loops.
    pub fn conn(&mut self) -> &mut Conn {
        &mut self.conn
    }

    /// The connection, for a producer that no longer needs the request helpers.
    pub fn into_conn(self) -> Conn {
        self.conn
    }

    /// Expresses `interest` and waits up to `timeout` for Data that satisfies it. Packets that
    /// answer something else are dropped.
    ///
    /// # Errors
    /// [`ClientError::Nack`], [`ClientError::Timeout`], or a connection error.
    pub async fn express(
        &mut self,
        interest: &Interest,
        timeout: Duration,
    ) -> Result<Data, ClientError> {
        let wire = self.express_wire(interest, timeout).await?;
        Data::decode(&wire).map_err(|e| ClientError::Malformed {
            name: interest.name.clone(),
            detail: e.to_string(),
        })
    }

    /// As [`Client::express`], returning the Data exactly as it arrived (what a signature
    /// covers; decoding and encoding again need not give the same bytes).
    ///
    /// # Errors
    /// As [`Client::express`].
    pub async fn express_wire(
        &mut self,
        interest: &Interest,
        timeout: Duration,
    ) -> Result<Bytes, ClientError> {
        self.conn.send(&interest.encode()).await?;
        let deadline = tokio::time::Instant::from_std(later(Instant::now(), timeout));
        loop {
            let Ok(incoming) = tokio::time::timeout_at(deadline, self.conn.recv()).await else {
                return Err(ClientError::Timeout {
                    name: interest.name.clone(),
                    ms: timeout.as_millis(),
                    hint: String::new(),
                });
            };
            match reply_to(incoming?, std::slice::from_ref(interest)) {
                Some(Reply::Data(_, wire)) => return Ok(wire),
                Some(Reply::Nack(_, reason)) => {
                    return Err(ClientError::Nack {
                        name: interest.name.clone(),
                        reason,
                    })
                }
                None => {}
            }
        }
    }

    /// Sends the signed command `/localhost/nfd/<module>/<verb>/<params>` (a v0.3 signed
    /// Interest, DigestSha256) and returns the ControlResponse, whatever its status code.
    ///
    /// # Errors
    /// A Nack, a timeout (with a hint on non-local faces), a connection error, or a reply
    /// that is not a ControlResponse.
    pub async fn command(
        &mut self,
        module: &str,
        verb: &str,
        params: &ControlParameters,
    ) -> Result<ControlResponse, ClientError> {
        let name = mgmt_name(module, verb)?.append(&Component::generic(params.encode()))?;
        let interest = self.signed(Interest::new(name));
        self.last_command_ms = Some(wall_ms());
        let data = self.express_mgmt(&interest).await?;
        let content = data.content.unwrap_or_default();
        ControlResponse::decode(&content).map_err(|e| ClientError::Malformed {
            name: interest.name.clone(),
            detail: format!("not a ControlResponse: {e}"),
        })
    }

    /// [`Client::command`], requiring StatusCode 200; returns the response's parameters.
    ///
    /// # Errors
    /// As [`Client::command`], and [`ClientError::Refused`] for another status code.
    pub async fn command_ok(
        &mut self,
        module: &str,
        verb: &str,
        params: &ControlParameters,
    ) -> Result<ControlParameters, ClientError> {
        let response = self.command(module, verb, params).await?;
        if response.status_code != status_code::OK {
            return Err(ClientError::Refused {
                command: format!("{module}/{verb}"),
                code: response.status_code,
                text: response.status_text,
            });
        }
        Ok(response.parameters().ok().flatten().unwrap_or_default())
    }

    /// Registers `prefix` toward this connection (`rib/register` with only a Name, as
    /// python-ndn does), so Interests under it arrive here.
    ///
    /// # Errors
    /// As [`Client::command_ok`].
    pub async fn register(&mut self, prefix: &Name) -> Result<ControlParameters, ClientError> {
        let params = ControlParameters::with_name(prefix.clone());
        self.command_ok("rib", "register", &params).await
    }

    /// Fetches a status dataset `/localhost/nfd/<module>/<verb>` (docs/nfd-interop.md §8): a
    /// CanBePrefix+MustBeFresh Interest finds the latest version `<name>/v=<ts>/seg=0`, then
    /// segments 1.. are fetched until FinalBlockId. Returns the concatenated Content.
    ///
    /// A forwarder's Content Store may answer the discovery Interest with a version published
    /// up to its FreshnessPeriod (1 s) ago; like nfdc, that copy is taken, so every command
    /// answers at once (`namewayd` marks its management Data NoCache, so it always publishes
    /// afresh; NFD caches them). Only when this client has itself sent a command must the
    /// dataset show its effect: a version (wall-clock milliseconds) published before the
    /// command is left to go stale and the dataset asked again.
    ///
    /// # Errors
    /// A Nack, a timeout, a connection error, or segments that are not a dataset.
    pub async fn dataset(&mut self, module: &str, verb: &str) -> Result<Bytes, ClientError> {
        let prefix = mgmt_name(module, verb)?;
        let mut attempts = 0;
        let (versioned, first) = loop {
            let (version, first) = self.discover(&prefix).await?;
            attempts += 1;
            let recent_enough = self.last_command_ms.is_none_or(|at| version >= at);
            if recent_enough || attempts >= MAX_DISCOVERIES {
                break (first.name.prefix(prefix.len() + 1), first);
            }
            // Published before our own command, so served from a cache: wait until it is stale.
            let stale_at = version + first.freshness_period().min(MAX_FRESHNESS_WAIT_MS);
            let wait = stale_at.saturating_sub(wall_ms()) + 1;
            tokio::time::sleep(Duration::from_millis(wait)).await;
        };
        let mut segments = vec![first];
        if segments[0].name.last().and_then(|c| c.as_segment()) != Some(0) {
            // A cache answered with a later segment: start again from segment 0.
            segments = vec![self.segment(&versioned, 0).await?];
        }
        let last = final_segment(&segments[0]);
        if last >= MAX_SEGMENTS {
            return Err(ClientError::Malformed {
                name: prefix,
                detail: format!("{last} segments is too many"),
            });
        }
        segments.extend(self.segments(&versioned, last).await?);
        let mut content = Vec::new();
        for s in &segments {
            content.extend_from_slice(s.content.as_deref().unwrap_or_default());
        }
        Ok(Bytes::from(content))
    }

    /// The CanBePrefix+MustBeFresh discovery Interest: returns the version and the Data,
    /// which must be named `<prefix>/v=<version>/seg=<n>`.
    async fn discover(&mut self, prefix: &Name) -> Result<(u64, Data), ClientError> {
        let mut discovery = Interest::new(prefix.clone());
        discovery.can_be_prefix = true;
        discovery.must_be_fresh = true;
        let first = self.express_mgmt(&self.plain(discovery)).await?;
        let version = first.name.get(prefix.len()).and_then(|c| c.as_version());
        let segment = first.name.last().and_then(|c| c.as_segment());
        match (first.name.len() == prefix.len() + 2, version, segment) {
            (true, Some(version), Some(_)) => Ok((version, first)),
            _ => Err(ClientError::Malformed {
                name: prefix.clone(),
                detail: format!("{} is not <prefix>/v=<version>/seg=<n>", first.name),
            }),
        }
    }

    /// Whether the forwarder is namewayd (so its own datasets, which NFD would not answer,
    /// may be asked for).
    ///
    /// # Errors
    /// As [`Client::dataset`].
    pub async fn is_nameway(&mut self) -> Result<bool, ClientError> {
        let general = self.dataset("status", "general").await?;
        Ok(nameway_wire::mgmt::ForwarderStatus::decode(&general)
            .is_ok_and(|s| s.nfd_version.starts_with("nameway")))
    }

    /// Fetches and decodes a dataset made of `T` entries.
    ///
    /// # Errors
    /// As [`Client::dataset`], or entries that do not decode.
    pub async fn list<T: DatasetEntry>(
        &mut self,
        module: &str,
        verb: &str,
    ) -> Result<Vec<T>, ClientError> {
        let content = self.dataset(module, verb).await?;
        T::decode_list(&content).map_err(|e| ClientError::Malformed {
            name: mgmt_name(module, verb).unwrap_or_default(),
            detail: format!("bad {module}/{verb} dataset: {e}"),
        })
    }

    /// Segments 1 to `last` of `versioned`, up to [`DATASET_WINDOW`] Interests in flight (a
    /// dataset of 8,000 faces is some 200 segments: one at a time took seconds).
    async fn segments(&mut self, versioned: &Name, last: u64) -> Result<Vec<Data>, ClientError> {
        let count = usize::try_from(last).unwrap_or(0);
        let mut got: Vec<Option<Data>> = vec![None; count];
        let mut interests = Vec::with_capacity(count);
        for n in 1..=last {
            interests.push(Interest::new(versioned.append(&Component::segment(n))?));
        }
        let (mut sent, mut received) = (0usize, 0usize);
        let mut deadline = tokio::time::Instant::from_std(later(Instant::now(), self.timeout));
        while received < count {
            while sent < count && sent - received < DATASET_WINDOW {
                let interest = self.plain(interests[sent].clone());
                self.conn.send(&interest.encode()).await?;
                sent += 1;
            }
            let Ok(incoming) = tokio::time::timeout_at(deadline, self.conn.recv()).await else {
                let missing = got.iter().position(Option::is_none).unwrap_or(0);
                return Err(ClientError::Timeout {
                    name: interests[missing].name.clone(),
                    ms: self.timeout.as_millis(),
                    hint: String::new(),
                });
            };
            match reply_to(incoming?, &interests[..sent]) {
                Some(Reply::Data(i, wire)) => {
                    let Ok(data) = Data::decode(&wire) else {
                        continue;
                    };
                    if got[i].is_none() {
                        got[i] = Some(data);
                        received += 1;
                        deadline =
                            tokio::time::Instant::from_std(later(Instant::now(), self.timeout));
                    }
                }
                Some(Reply::Nack(i, reason)) => {
                    return Err(ClientError::Nack {
                        name: interests[i].name.clone(),
                        reason,
                    })
                }
                None => {}
            }
        }
        Ok(got.into_iter().flatten().collect())
    }

    async fn segment(&mut self, versioned: &Name, n: u64) -> Result<Data, ClientError> {
        let name = versioned.append(&Component::segment(n))?;
        let interest = self.plain(Interest::new(name));
        self.express_mgmt(&interest).await
    }

    /// Sets Nonce and InterestLifetime, and signs with DigestSha256 as a v0.3 signed Interest
    /// (SignatureNonce, SignatureTime).
    fn signed(&mut self, interest: Interest) -> Interest {
        let mut interest = self.plain(interest);
        let mut nonce = [0u8; 8];
        random_fill(&mut nonce);
        let info = SignatureInfo {
            nonce: Some(Bytes::copy_from_slice(&nonce)),
            time: Some(self.next_signature_time()),
            ..SignatureInfo::new(signature_type::DIGEST_SHA256)
        };
        // DigestSha256 has no key: signing cannot fail.
        let _ = interest.sign(&DigestSha256, info);
        interest
    }

    /// Sets Nonce and InterestLifetime.
    fn plain(&self, mut interest: Interest) -> Interest {
        interest.nonce = Some(random_u32());
        interest.lifetime_ms = Some(millis(self.timeout));
        interest
    }

    /// [`Client::express`] for management: a timeout on a non-local face says why.
    async fn express_mgmt(&mut self, interest: &Interest) -> Result<Data, ClientError> {
        match self.express(interest, self.timeout).await {
            Err(ClientError::Timeout { name, ms, .. }) => {
                let hint = match &self.transport {
                    Some(t) if !t.is_local() => format!(
                        "; {t} is not a local face and the forwarder drops /localhost Interests \
                         from non-local faces: use unix:// or tcp://127.0.0.1 for management"
                    ),
                    _ => "; is the forwarder overloaded?".to_owned(),
                };
                Err(ClientError::Timeout { name, ms, hint })
            }
            other => other,
        }
    }

    /// Wall-clock milliseconds, strictly increasing per client (NFD refuses a command whose
    /// SignatureTime is not greater than the previous one's).
    fn next_signature_time(&mut self) -> u64 {
        let t = wall_ms().max(self.last_signature_time + 1);
        self.last_signature_time = t;
        t
    }
}

/// Resolves the transport from `flag` (see [`Transport::resolve`]) and connects.
///
/// # Errors
/// A bad transport URI, or [`ClientError::Connect`].
pub async fn connect(flag: Option<&str>) -> Result<Client, ClientError> {
    Client::connect(Transport::resolve(flag)?).await
}

/// `/localhost/nfd/<module>/<verb>`.
fn mgmt_name(module: &str, verb: &str) -> Result<Name, ClientError> {
    let base: Name = MGMT_PREFIX.parse()?;
    Ok(base
        .append(&Component::generic(Bytes::copy_from_slice(
            module.as_bytes(),
        )))?
        .append(&Component::generic(Bytes::copy_from_slice(verb.as_bytes())))?)
}

/// The segment number in a Data's FinalBlockId (0 when absent).
fn final_segment(data: &Data) -> u64 {
    data.meta_info
        .as_ref()
        .and_then(|m| m.final_block_id.as_ref())
        .filter(|c| c.typ == types::SEGMENT_NAME_COMPONENT)
        .and_then(|c| nameway_wire::tlv::read_nni(&c.value).ok())
        .unwrap_or(0)
}

/// How far ahead [`later`] puts a deadline that would overflow (as tokio's "far future").
const FAR_FUTURE: Duration = Duration::from_secs(30 * 365 * 86_400);

/// `t + d`, or [`FAR_FUTURE`] from `t` when that overflows: `Instant + Duration` panics on
/// overflow, and `Duration::MAX` is a natural way to say "never" in the options.
pub(crate) fn later(t: Instant, d: Duration) -> Instant {
    t.checked_add(d)
        .or_else(|| t.checked_add(FAR_FUTURE))
        .unwrap_or(t)
}

/// `d` in whole milliseconds, saturating (`as u64` would keep the low bits of a
/// `Duration::MAX` lifetime: some arbitrary value).
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Wall-clock milliseconds since the Unix epoch.
pub fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Random bytes, and random numbers for Nonces and sequence numbers: the operating system's
/// generator, with one fallback for the whole workspace (`nameway_wire::random`).
pub use nameway_wire::random::{fill as random_fill, u32 as random_u32, u64 as random_u64};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifetimes_beyond_u64_milliseconds_saturate() {
        assert_eq!(millis(Duration::from_millis(4000)), 4000);
        assert_eq!(millis(Duration::MAX), u64::MAX);
    }

    #[tokio::test]
    async fn a_unix_connection_asks_for_a_send_buffer_above_the_system_default() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let Io::Unix(s) = connect_io(&Transport::Unix(path)).await.unwrap() else {
            panic!("not a Unix connection");
        };
        let got = socket2::SockRef::from(&s).send_buffer_size().unwrap();
        let default: usize = std::fs::read_to_string("/proc/sys/net/core/wmem_default")
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(got > default, "send buffer {got}, system default {default}");
    }

    #[test]
    fn transports_parse_like_python_ndn() {
        let t = Transport::parse("unix:///run/nfd/nfd.sock").unwrap();
        assert_eq!(t, Transport::Unix("/run/nfd/nfd.sock".into()));
        assert!(t.is_local());
        let t = Transport::parse("tcp://127.0.0.1").unwrap();
        assert_eq!(t.to_string(), "tcp://127.0.0.1:6363");
        assert!(t.is_local());
        let t = Transport::parse("tcp6://[::1]:7000/").unwrap();
        assert_eq!(t.to_string(), "tcp://[::1]:7000");
        assert!(t.is_local());
        let t = Transport::parse("udp4://localhost:6363").unwrap();
        assert!(!t.is_local());
        assert!(Transport::parse("tcp://example.net").is_ok_and(|t| !t.is_local()));
        for bad in [
            "unix://run/nfd.sock",
            "http://x",
            "tcp://",
            "tcp://h:x",
            "udp://[::1",
        ] {
            assert!(Transport::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn mgmt_names() {
        let n = mgmt_name("faces", "list").unwrap();
        assert_eq!(n.to_string(), "/localhost/nfd/faces/list");
    }
}
