//! [`FaceSystemConfig`]: listeners and face defaults, with NFD's values where NFD has one.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use nameway_wire::lp::ReassemblerConfig;

use crate::fault::FaultConfig;
use crate::uri::DEFAULT_PORT;

/// NFD's Unix socket path, where python-ndn and NDNts look first.
pub const DEFAULT_UNIX_PATH: &str = "/run/nfd/nfd.sock";

/// MTU of unicast UDP faces: NFD's `face_system.udp.unicast_mtu` default. Packets are at most
/// 8800 bytes, so with this MTU nothing is fragmented at the NDNLPv2 layer (IP fragments
/// instead, as with NFD). NDNts' `cli-common` uses 1400.
pub const DEFAULT_UDP_MTU: usize = 8800;

/// Everything the face system needs to start. `Default` gives NFD's listeners on loopback.
#[derive(Clone, Debug)]
pub struct FaceSystemConfig {
    /// Unix stream listener path; `None` disables it. Default `/run/nfd/nfd.sock`. The parent
    /// directory is created, a stale socket file is replaced, the socket is made mode 0666,
    /// and the file is removed on shutdown.
    pub unix_path: Option<PathBuf>,
    /// TCP listeners. Default `127.0.0.1:6363` and `[::1]:6363`. Port 0 picks a free port
    /// (see [`crate::FaceSystem::listeners`]).
    pub tcp: Vec<SocketAddr>,
    /// UDP listeners (one shared socket each; peers get on-demand faces). Default as TCP.
    pub udp: Vec<SocketAddr>,
    /// WebSocket listeners (NFD's `websocket` face system; browser applications). Default none
    /// here; the daemon's config decides.
    pub websocket: Vec<SocketAddr>,
    /// PEM certificate chain and private key: with them the WebSocket listeners speak TLS
    /// (`wss://`). Default `None`.
    pub websocket_tls: Option<(PathBuf, PathBuf)>,
    /// Give UDP faces from loopback local scope. Default `false`, as NFD (python-ndn over
    /// `udp://127.0.0.1` then cannot use `/localhost/nfd`).
    pub udp_loopback_is_local: bool,
    /// Give TCP faces from loopback local scope. Default `true`, as NFD (nfdc and apps over
    /// `tcp://127.0.0.1` may use `/localhost/nfd`). Local-scope TCP faces are applications and
    /// never secure links; set `false` to run secure forwarder links over loopback (tests).
    pub tcp_loopback_is_local: bool,
    /// Close on-demand UDP faces that received nothing for this long. Default 600 s (NFD
    /// `face_system.udp.idle_timeout`).
    pub udp_idle_timeout: Duration,
    /// MTU of UDP faces (NDNLPv2 fragmentation above it). Default [`DEFAULT_UDP_MTU`].
    pub udp_mtu: usize,
    /// Reassembly limits for UDP faces. Default NFD's (400 fragments, 500 ms).
    pub reassembly: ReassemblerConfig,
    /// Reassemble fragments on Unix and TCP faces too. Default `false`: NFD drops
    /// fragmented LpPackets on stream faces (`allowReassembly` is set only for datagram
    /// faces), and no client fragments on a stream.
    pub stream_reassembly: bool,
    /// Packets each face's send queue holds at most, whatever their size. Default 65536 (a
    /// value past what a tokio channel holds, 2^61 - 1, is taken as that).
    pub tx_queue: usize,
    /// Bytes each face's send queue holds. Past it, a packet toward a non-local face (another
    /// forwarder) is dropped and counted (`drop_queue_full`; the driver answers a dropped
    /// Interest with a Nack Congestion); a packet toward a local face (an application) is
    /// still queued, up to four times this, and the face that sent the Interest is asked to
    /// slow down ([`crate::FaceSystem::slow_down`]), so bursts toward local apps are held,
    /// not lost. Default 4 MiB.
    pub tx_queue_bytes: usize,
    /// Capacity of the event queue toward the forwarder. Default 4096 (at most 2^61 - 1, as
    /// `tx_queue`).
    pub event_queue: usize,
    /// How long `create` waits for a TCP connection. Default 10 s.
    pub connect_timeout: Duration,
    /// First wait before a permanent TCP face reconnects; doubled up to
    /// [`FaceSystemConfig::reconnect_max`]. Default 1 s.
    pub reconnect_initial: Duration,
    /// Longest wait between reconnection attempts. Default 60 s.
    pub reconnect_max: Duration,
    /// How long [`crate::FaceSystem::shutdown`] waits for writers to flush. Default 5 s.
    pub shutdown_timeout: Duration,
    /// Debug option: inject faults (delay, jitter, loss, rate) on the egress of every
    /// non-local face (links between forwarders; a face's own [`crate::FaceOptions::fault`]
    /// applies whatever its scope). Default `None`.
    pub fault: Option<FaultConfig>,
    /// Hop-by-hop security ([`crate::secure`]): this forwarder's identity, trusted peers,
    /// policy and rekey settings. `None`: no secure faces, and packets carrying the security
    /// header fields are dropped.
    pub security: Option<std::sync::Arc<crate::secure::SecurityContext>>,
}

impl Default for FaceSystemConfig {
    fn default() -> Self {
        let loopback = vec![
            SocketAddr::from((Ipv4Addr::LOCALHOST, DEFAULT_PORT)),
            SocketAddr::from((Ipv6Addr::LOCALHOST, DEFAULT_PORT)),
        ];
        Self {
            unix_path: Some(PathBuf::from(DEFAULT_UNIX_PATH)),
            tcp: loopback.clone(),
            udp: loopback,
            websocket: Vec::new(),
            websocket_tls: None,
            udp_loopback_is_local: false,
            tcp_loopback_is_local: true,
            udp_idle_timeout: Duration::from_secs(600),
            udp_mtu: DEFAULT_UDP_MTU,
            reassembly: ReassemblerConfig::default(),
            stream_reassembly: false,
            tx_queue: 65536,
            tx_queue_bytes: 4 << 20,
            event_queue: 4096,
            connect_timeout: Duration::from_secs(10),
            reconnect_initial: Duration::from_secs(1),
            reconnect_max: Duration::from_secs(60),
            shutdown_timeout: Duration::from_secs(5),
            fault: None,
            security: None,
        }
    }
}

impl FaceSystemConfig {
    /// No listeners at all (for tests and for daemons that add their own).
    pub fn without_listeners() -> Self {
        Self {
            unix_path: None,
            tcp: Vec::new(),
            udp: Vec::new(),
            ..Self::default()
        }
    }
}

/// Per-face options for [`crate::FaceSystem::create_with`].
#[derive(Clone, Debug, Default)]
pub struct FaceOptions {
    /// MTU of a UDP face instead of [`FaceSystemConfig::udp_mtu`]. Ignored on stream faces.
    pub mtu: Option<usize>,
    /// Faults to inject on this face's egress (overrides [`FaceSystemConfig::fault`]).
    pub fault: Option<FaultConfig>,
    /// Make the face secure: it handshakes with its peer and encrypts per the policy
    /// ([`crate::secure::SecureMode::PerPrefix`]) or everything
    /// ([`crate::secure::SecureMode::LinkWide`]). UDP faces only.
    pub secure: Option<crate::secure::SecureMode>,
    /// A permanent TCP face whose first connection fails is created anyway, down, and
    /// connects in the background (with the reconnection backoff) instead of failing with
    /// [`crate::FaceError::Connect`]: for the faces of a configuration file, whose peers may
    /// start later. Management's `faces/create` leaves it off, as NFD fails then.
    pub connect_in_background: bool,
}
