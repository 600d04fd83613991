//! The daemon's configuration: one typed TOML document with a default for every key.
//!
//! `namewayd` runs with no file at all (the embedded defaults); `--config FILE` reads a TOML file
//! whose keys override the defaults; unknown keys are errors, so a typo is caught by
//! `namewayd --check-config`. docs/namewayd.sample.toml lists every key with its default.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

/// The whole configuration.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Logging.
    pub log: LogConfig,
    /// Listeners and face defaults.
    pub faces: FacesConfig,
    /// The forwarding core.
    pub forwarder: ForwarderConfig,
    /// The content store.
    pub cs: CsConfig,
    /// NFD management.
    pub mgmt: MgmtConfig,
    /// The HTTP listener: metrics, status page.
    pub http: HttpConfig,
    /// Hop-by-hop security between forwarders.
    pub security: SecurityConfig,
    /// Secure location-independent routing (self-certifying names, the RIB service).
    pub routing: crate::routing::config::RoutingConfig,
    /// The agent of the controller (`namewayctl serve`), when `uri` is set.
    pub controller: crate::agent::config::ControllerConfig,
    /// Faces created at start-up (permanent).
    #[serde(rename = "face")]
    pub static_faces: Vec<StaticFace>,
    /// Routes installed at start-up.
    #[serde(rename = "route")]
    pub static_routes: Vec<StaticRoute>,
    /// Strategy choices installed at start-up.
    #[serde(rename = "strategy")]
    pub static_strategies: Vec<StaticStrategy>,
}

/// `[log]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogConfig {
    /// A `tracing` filter (`info`, `namewayd=debug,nameway_face=info`); `RUST_LOG` overrides.
    pub level: String,
    /// Log lines as JSON instead of text.
    pub json: bool,
}

/// `[faces]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FacesConfig {
    /// Unix stream listener path; an empty string disables it.
    pub unix: PathBuf,
    /// TCP listen addresses.
    pub tcp: Vec<SocketAddr>,
    /// UDP listen addresses.
    pub udp: Vec<SocketAddr>,
    /// WebSocket listen addresses (browser applications, NDNts); none by default.
    pub websocket: Vec<SocketAddr>,
    /// PEM certificate chain for `wss://` (with `websocket_key`); empty: plain `ws://`.
    pub websocket_cert: PathBuf,
    /// PEM private key for `wss://`.
    pub websocket_key: PathBuf,
    /// Give UDP faces from loopback local scope (NFD does not).
    pub udp_loopback_is_local: bool,
    /// Give TCP faces from loopback local scope (NFD does; local TCP faces are applications,
    /// never secure links).
    pub tcp_loopback_is_local: bool,
    /// MTU of UDP faces; larger packets are fragmented with NDNLPv2.
    pub udp_mtu: usize,
    /// Close on-demand UDP faces idle this long (milliseconds).
    pub udp_idle_timeout_ms: u64,
    /// Packets a face's send queue holds at most, whatever their size.
    pub tx_queue: usize,
    /// Bytes a face's send queue holds: toward another forwarder, more are dropped (counted,
    /// and a dropped Interest is answered with a Nack Congestion); toward an application, up to
    /// four times this is held while the faces sending it Interests are slowed down.
    pub tx_queue_bytes: ByteSize,
    /// Capacity of the queue from the faces to the forwarder.
    pub event_queue: usize,
    /// Interests per second each face may send (a token bucket); 0, the default, is no limit.
    /// Management (`/localhost` from local faces) is never limited.
    pub interest_rate_limit: u32,
    /// Burst of that bucket; 0 means one second's worth (`interest_rate_limit`).
    pub interest_burst: u32,
    /// Debug: faults injected on the egress of every non-local face (links between
    /// forwarders), to try transports and strategies on a lossy or slow link.
    pub fault: Option<FaultTable>,
}

/// `[faces.fault]` (every non-local face) or `[face.fault]` (one `[[face]]`): what to do to the
/// packets a face sends.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FaultTable {
    /// Probability that a packet is lost, 0.0 to 1.0.
    pub loss: f64,
    /// Delay added to every packet, in milliseconds.
    pub delay_ms: u64,
    /// Up to this much more delay per packet, in milliseconds (never reorders).
    pub jitter_ms: u64,
    /// Link rate in Mbit/s; 0: unlimited.
    pub rate_mbps: u64,
    /// Buffer in front of that rate, in KiB (drop-tail: a packet that does not fit is dropped
    /// and counted as `fault-queue`); 0: unbounded.
    pub queue_kib: u64,
    /// Seed of the draws; the same seed gives the same losses.
    pub seed: u64,
}

/// `[forwarder]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ForwarderConfig {
    /// Packets taken from the faces per loop turn before timers and output are served.
    pub rx_burst: usize,
    /// Most PIT entries: a number of entries, or a memory budget as a size string
    /// (`"256MiB"`), divided by [`PIT_BYTES_PER_ENTRY`].
    #[serde(deserialize_with = "pit_capacity")]
    pub pit_capacity: usize,
    /// Most dead-nonce list records.
    pub dnl_capacity: usize,
    /// Seed of the forwarder's generator; absent means random.
    pub seed: Option<u64>,
    /// Face I/O threads: 0 (the default) runs faces and the forwarder on one thread, which
    /// avoids a cross-thread wake-up per packet (measured: 4.4 instead of 15.7 µs of daemon CPU
    /// per exchange); N runs face I/O on N worker threads with the forwarder on its own.
    pub io_threads: usize,
    /// Forwarding threads (shards), each with its own PIT, content store and dead-nonce list
    /// and the packets of its share of the faces. Absent: the `NAMEWAY_THREADS` environment
    /// variable, else 1 (see [`ForwarderConfig::threads`]).
    pub threads: Option<usize>,
    /// Leading name components hashed to choose a packet's shard, where no
    /// `[[forwarder.dispatch]]` entry matches.
    pub dispatch_k: usize,
    /// Per-prefix dispatch: names under `prefix` hash their first `k` components (`k` at least
    /// the prefix's length), so a prefix that carries most of the traffic spreads over the
    /// shards.
    pub dispatch: Vec<DispatchRule>,
    /// Which shard an accepted Unix or TCP connection's face lives on with `threads` > 1.
    pub placement: Placement,
    /// With `threads` > 1: a dispatch key that keeps one shard busy while the others idle
    /// (three sampling windows in a row) is split by one component more, every shard at once
    /// (`nameway_fw::shard::split`). Off: the key is only logged with the
    /// `[[forwarder.dispatch]]` entry that would spread it.
    pub auto_split: bool,
    /// Wake-up coalescing: before a forwarding thread parks after a turn that handled
    /// packets, it waits `coalesce_wait_us` so that packets arriving meanwhile are read in one
    /// turn (`"on"`), only while that measurably costs less CPU per packet (`"auto"`), or
    /// never (`"off"`, the default). See [`crate::coalesce`]. Only with `io_threads = 0`.
    pub coalesce: crate::coalesce::Coalesce,
    /// The wait of `coalesce`, in microseconds (1 to [`crate::coalesce::MAX_WAIT_US`]).
    pub coalesce_wait_us: u64,
}

/// `[forwarder] placement`: how accepted connections are spread over the shards.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Round robin by face id (`"round-robin"`, the default).
    #[default]
    RoundRobin,
    /// The shard the connection's first packet belongs to by the dispatch rule (its first
    /// Interest, or the prefix of its first `rib/register`), waiting at most 100 ms for it;
    /// else round robin (`"traffic"`).
    Traffic,
}

/// One `[[forwarder.dispatch]]` entry.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct DispatchRule {
    /// The name prefix.
    pub prefix: String,
    /// Components hashed for names under it.
    pub k: usize,
}

/// The environment variable that gives `[forwarder] threads` when the file does not.
pub const THREADS_ENV: &str = "NAMEWAY_THREADS";

impl ForwarderConfig {
    /// The wait of `coalesce`.
    pub fn coalesce_wait(&self) -> std::time::Duration {
        std::time::Duration::from_micros(self.coalesce_wait_us)
    }

    /// The forwarding threads in force: `threads`, else 1. [`Config::resolve_threads`] fills
    /// `threads` from [`THREADS_ENV`] when the file does not set it.
    pub fn threads(&self) -> usize {
        self.threads.unwrap_or(1).max(1)
    }
}

/// The dispatch table of `[forwarder]`.
///
/// # Errors
/// A prefix that does not parse, or a `k` the table refuses.
pub fn dispatch_table(f: &ForwarderConfig) -> anyhow::Result<nameway_fw::shard::DispatchTable> {
    let hasher = *nameway_wire::NameHasher::process();
    let mut table = nameway_fw::shard::DispatchTable::new(hasher, f.dispatch_k)
        .map_err(|e| anyhow::anyhow!("forwarder.dispatch_k: {e}"))?;
    table.set_auto_split(f.auto_split);
    for r in &f.dispatch {
        let prefix: nameway_wire::Name = r
            .prefix
            .parse()
            .map_err(|e| anyhow::anyhow!("forwarder.dispatch prefix {:?}: {e}", r.prefix))?;
        table
            .set(&prefix, r.k)
            .map_err(|e| anyhow::anyhow!("forwarder.dispatch {:?}: {e}", r.prefix))?;
    }
    Ok(table)
}

/// `[cs]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CsConfig {
    /// Capacity in packets.
    pub capacity: usize,
    /// Admit Data into the store.
    pub admit: bool,
    /// Serve Interests from the store.
    pub serve: bool,
    /// Use the decoupled store: the CS-list filter in the forwarder, the packets in the
    /// content-store server (`nameway-cs`) on a thread of its own. Implied by `disk_path`.
    pub decoupled: bool,
    /// Replacement policy of the memory tier (decoupled store): `lru`, `lfu` or `arc`.
    pub policy: String,
    /// Memory tier capacity in bytes (decoupled store), e.g. `"256MiB"`.
    pub memory_capacity: ByteSize,
    /// The disk tier's store file; empty (the default): no disk tier.
    pub disk_path: PathBuf,
    /// Disk tier capacity in bytes, e.g. `"100GiB"`.
    pub disk_capacity: ByteSize,
    /// The CS-list's false-positive rate.
    pub filter_fp_rate: f64,
    /// Bytes of Data queued toward the content-store server at most (decoupled store): past
    /// it, Data are not cached (counted as `insert_drops`), so a producer faster than the
    /// disk cannot grow the daemon's memory. Look-ups are never dropped.
    pub insert_queue: ByteSize,
}

impl CsConfig {
    /// Whether the decoupled store runs.
    pub fn is_decoupled(&self) -> bool {
        self.decoupled || !self.disk_path.as_os_str().is_empty()
    }
}

/// A size in bytes, written as a number or as a string with a unit: `"64MiB"`, `"1.5 GiB"`,
/// `"500KB"` (KiB, MiB, GiB, TiB are powers of 1024; KB, MB, GB, TB of 1000).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteSize(pub u64);

impl ByteSize {
    /// Parses `64MiB`, `1.5 GiB`, `500KB`, `4096`, `4096B`.
    ///
    /// # Errors
    /// Not a number with one of those units.
    pub fn parse(s: &str) -> Result<Self, String> {
        nameway_cs::parse_size(s).map(Self)
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(n) => Ok(Self(n)),
            Raw::Text(s) => Self::parse(&s).map_err(serde::de::Error::custom),
        }
    }
}

/// Resident memory counted per PIT entry when `pit_capacity` is given as a size: measured 385
/// bytes per pending 4-component Interest (`cargo run --release -p nameway-fw --example
/// pit_memory`), rounded up for longer names and table growth.
pub const PIT_BYTES_PER_ENTRY: u64 = 512;

/// A configuration file that does not parse, in one line: where, in which table, what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// 1-based line of the fault, when the parser knows it.
    pub line: Option<usize>,
    /// 1-based column.
    pub column: Option<usize>,
    /// The header of the table the fault is in (`[faces]`, `[[route]]`...), when it is in one.
    pub table: Option<String>,
    /// What is wrong, on one line.
    pub message: String,
}

impl ConfigError {
    /// From the parser's error and the text it read.
    fn new(text: &str, e: &toml::de::Error) -> Self {
        let start = e.span().map(|s| s.start.min(text.len()));
        let (line, column) = match start {
            Some(at) => {
                let before = &text[..at];
                let line = before.matches('\n').count() + 1;
                let column = at - before.rfind('\n').map_or(0, |n| n + 1) + 1;
                (Some(line), Some(column))
            }
            None => (None, None),
        };
        // The last table header above the fault.
        let table = start.and_then(|at| {
            text[..at]
                .lines()
                .rev()
                .map(str::trim)
                .find(|l| l.starts_with('[') && l.ends_with(']'))
                .map(str::to_owned)
        });
        // serde says "field"; a configuration has keys. One line, whatever the parser wrote.
        let message = e
            .message()
            .replace("unknown field", "unknown key")
            .replace("missing field", "missing key")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        Self {
            line,
            column,
            table,
            message,
        }
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let (Some(line), Some(column)) = (self.line, self.column) {
            write!(f, "line {line}, column {column}: ")?;
        }
        if let Some(table) = &self.table {
            write!(f, "in {table}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Whether a `[[route]]` face names the null face (`null://`).
pub fn is_null_uri(uri: &str) -> bool {
    matches!(
        uri.parse::<nameway_face::FaceUri>(),
        Ok(nameway_face::FaceUri::Null)
    )
}

fn pit_capacity<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Entries(u64),
        Size(String),
    }
    let entries = match Raw::deserialize(d)? {
        Raw::Entries(n) => n,
        Raw::Size(s) => {
            ByteSize::parse(&s).map_err(serde::de::Error::custom)?.0 / PIT_BYTES_PER_ENTRY
        }
    };
    usize::try_from(entries).map_err(|_| serde::de::Error::custom("pit_capacity is too large"))
}

/// `[mgmt]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MgmtConfig {
    /// Accepted distance between a signed command's timestamp and our clock (milliseconds).
    pub signature_grace_ms: u64,
    /// Refuse unsigned rib commands with 403, as NFD does.
    pub require_signed_rib_commands: bool,
    /// Serve `rib/register` and `rib/unregister` under `/localhop/nfd` too, from any face (what
    /// NFD's `localhop_security` enables; web applications over WebSocket register prefixes that
    /// way). The commands need only a valid signature here, so any host that can reach a face
    /// may then register prefixes: off by default.
    pub localhop_rib: bool,
}

/// `[http]`: Prometheus metrics at `/metrics`, the status page at `/`, JSON at `/api/status`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HttpConfig {
    /// Listen address, e.g. `127.0.0.1:7380`; absent (the default) means no HTTP listener.
    /// Keep it on loopback unless the network in front is trusted: nothing is authenticated.
    pub listen: Option<SocketAddr>,
}

/// `[[face]]`: a permanent face created at start-up.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StaticFace {
    /// FaceUri, e.g. `udp4://192.0.2.1:6363`.
    pub uri: String,
    /// Secure face: handshake with the peer and encrypt what the policy protects (UDP or TCP;
    /// needs `[security] identity`).
    #[serde(default)]
    pub secure: bool,
    /// With `secure`: encrypt every packet whole (the link level), whatever its name.
    #[serde(default)]
    pub link_wide: bool,
    /// `[face.fault]`: faults injected on this face's egress, local or not, instead of
    /// `[faces.fault]` (one emulated link per neighbour, as `nameway lab` sets them).
    #[serde(default)]
    pub fault: Option<FaultTable>,
}

/// `[security]`: hop-by-hop encryption between forwarders (docs/secure-forwarding.md).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SecurityConfig {
    /// This forwarder's identity key file, created (mode 0600) on first start. Empty: no
    /// secure faces, and packets carrying the security header are dropped.
    pub identity: PathBuf,
    /// Public keys (64 hexadecimal digits, `nameway identity show` on the peer) of the
    /// forwarders this one accepts handshakes with.
    pub trusted_peers: Vec<String>,
    /// Advance the sending key after this many packets.
    pub rekey_packets: u64,
    /// ... or after this many seconds.
    pub rekey_seconds: u64,
    /// How long the previous key stays accepted after a rekey, in milliseconds.
    pub rekey_overlap_ms: u64,
    /// The level of link-wide secure faces.
    pub link_level: String,
    /// Prefix → level entries.
    pub policy: Vec<SecurityPolicyEntry>,
}

impl Default for SecurityConfig {
    fn default() -> Self {
        Self {
            identity: PathBuf::new(),
            trusted_peers: Vec::new(),
            rekey_packets: 1 << 20,
            rekey_seconds: 120,
            rekey_overlap_ms: 5000,
            link_level: "xforro14-poly1305".into(),
            policy: Vec::new(),
        }
    }
}

/// `[[security.policy]]`: the level of a name prefix.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecurityPolicyEntry {
    /// Name prefix.
    pub prefix: String,
    /// `none`, `cpa`, `chacha20`, `forro14`, `chacha20-poly1305`, `xforro14-poly1305` or
    /// `aes-256-gcm`.
    pub level: String,
}

/// `[[route]]`: a route installed at start-up.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StaticRoute {
    /// Name prefix in NDN URI form.
    pub prefix: String,
    /// FaceUri of a `[[face]]`.
    pub face: String,
    /// Routing cost.
    #[serde(default)]
    pub cost: u64,
}

/// `[[strategy]]`: a strategy choice installed at start-up.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StaticStrategy {
    /// Name prefix.
    pub prefix: String,
    /// Strategy name, e.g. `/localhost/nfd/strategy/multicast`.
    pub strategy: String,
}

impl Default for LogConfig {
    fn default() -> Self {
        Self {
            level: "info".into(),
            json: false,
        }
    }
}

impl Default for FacesConfig {
    fn default() -> Self {
        let loopback: Vec<SocketAddr> = vec![
            SocketAddr::from(([127, 0, 0, 1], 6363)),
            SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, 6363)),
        ];
        Self {
            unix: PathBuf::from("/run/nfd/nfd.sock"),
            tcp: loopback.clone(),
            udp: loopback,
            websocket: Vec::new(),
            websocket_cert: PathBuf::new(),
            websocket_key: PathBuf::new(),
            udp_loopback_is_local: false,
            tcp_loopback_is_local: true,
            udp_mtu: 8800,
            udp_idle_timeout_ms: 600_000,
            tx_queue: 65536,
            tx_queue_bytes: ByteSize(4 << 20),
            event_queue: 4096,
            interest_rate_limit: 0,
            interest_burst: 0,
            fault: None,
        }
    }
}

impl Default for ForwarderConfig {
    fn default() -> Self {
        Self {
            rx_burst: 64,
            pit_capacity: 1 << 20,
            dnl_capacity: 1 << 18,
            seed: None,
            io_threads: 0,
            threads: None,
            dispatch_k: nameway_fw::shard::DEFAULT_DISPATCH_K,
            dispatch: Vec::new(),
            placement: Placement::RoundRobin,
            auto_split: true,
            coalesce: crate::coalesce::Coalesce::Off,
            coalesce_wait_us: 100,
        }
    }
}

impl Default for CsConfig {
    fn default() -> Self {
        Self {
            capacity: 65_536,
            admit: true,
            serve: true,
            decoupled: false,
            policy: "lru".into(),
            memory_capacity: ByteSize(256 << 20),
            disk_path: PathBuf::new(),
            disk_capacity: ByteSize(1 << 30),
            filter_fp_rate: 0.01,
            insert_queue: ByteSize(16 << 20),
        }
    }
}

impl Default for MgmtConfig {
    fn default() -> Self {
        Self {
            signature_grace_ms: 120_000,
            require_signed_rib_commands: true,
            localhop_rib: false,
        }
    }
}

/// Most packets `faces.tx_queue` and `faces.event_queue` may hold.
const MAX_QUEUE: usize = 1 << 24;
/// Most `forwarder.threads` (a shard set is a 64-bit mask).
pub const MAX_THREADS: usize = nameway_fw::shard::MAX_SHARDS;

/// Most `forwarder.io_threads`.
const MAX_IO_THREADS: usize = 1024;

impl Config {
    /// Parses a TOML document.
    ///
    /// # Errors
    /// Syntax errors, unknown keys and values of the wrong type, with their line.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::new(text, &e))
    }

    /// The features that cannot run with more than one forwarding thread today, by the key
    /// that turns each on (empty when none is on).
    pub fn single_thread_features(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.routing.is_on() {
            v.push("[routing] (held Interests and route hints live in one forwarder)");
        }
        if self.cs.is_decoupled() {
            v.push("the decoupled content store ([cs] decoupled or disk_path)");
        }
        v
    }

    /// Fills `[forwarder] threads` from [`THREADS_ENV`] when the file does not set it. A
    /// configuration that uses a feature needing one thread keeps one (logged by the caller
    /// from the returned message), since the variable is only a default.
    ///
    /// # Errors
    /// The variable is not a number.
    pub fn resolve_threads(&mut self, env: Option<&str>) -> Result<Option<String>, String> {
        if self.forwarder.threads.is_some() {
            return Ok(None);
        }
        let Some(v) = env else { return Ok(None) };
        let n: usize = v
            .trim()
            .parse()
            .map_err(|_| format!("{THREADS_ENV}={v:?} is not a number of threads"))?;
        let blocked = self.single_thread_features();
        if n > 1 && !blocked.is_empty() {
            self.forwarder.threads = Some(1);
            return Ok(Some(format!(
                "{THREADS_ENV}={n} ignored: this configuration uses {}",
                blocked.join(", ")
            )));
        }
        self.forwarder.threads = Some(n);
        Ok(None)
    }

    fn validate_threads(&self) -> Result<(), String> {
        let f = &self.forwarder;
        if f.threads == Some(0) || f.threads() > MAX_THREADS {
            return Err(format!(
                "forwarder.threads must be between 1 and {MAX_THREADS}"
            ));
        }
        if f.threads() > 1 {
            if let Some(feature) = self.single_thread_features().first() {
                return Err(format!(
                    "forwarder.threads = {} cannot be used with {feature}: set threads = 1",
                    f.threads()
                ));
            }
        }
        dispatch_table(f).map_err(|e| e.to_string())?;
        Ok(())
    }

    /// Checks what the types cannot: names and URIs parse, numbers are in range.
    ///
    /// # Errors
    /// A message naming the key at fault.
    pub fn validate(&self) -> Result<(), String> {
        if self.forwarder.rx_burst == 0 {
            return Err("forwarder.rx_burst must be at least 1".into());
        }
        if self.faces.websocket_cert.as_os_str().is_empty()
            != self.faces.websocket_key.as_os_str().is_empty()
        {
            return Err("faces.websocket_cert and faces.websocket_key go together".into());
        }
        // Beyond these a queue is a panic waiting for its face (tokio's channels hold at most
        // 2^61 slots) and a thread count an allocation failure; no use needs more.
        for (key, value) in [
            ("faces.tx_queue", self.faces.tx_queue),
            ("faces.event_queue", self.faces.event_queue),
        ] {
            if value > MAX_QUEUE {
                return Err(format!("{key} must be at most {MAX_QUEUE} packets"));
            }
        }
        if self.forwarder.io_threads > MAX_IO_THREADS {
            return Err(format!(
                "forwarder.io_threads must be at most {MAX_IO_THREADS}"
            ));
        }
        self.validate_threads()?;
        let wait = self.forwarder.coalesce_wait_us;
        if !(1..=crate::coalesce::MAX_WAIT_US).contains(&wait) {
            return Err(format!(
                "forwarder.coalesce_wait_us must be between 1 and {} (microseconds)",
                crate::coalesce::MAX_WAIT_US
            ));
        }
        if self.forwarder.coalesce != crate::coalesce::Coalesce::Off
            && self.forwarder.io_threads > 0
        {
            return Err("forwarder.coalesce needs forwarder.io_threads = 0 (the forwarder and its faces on one thread)".into());
        }
        if self.faces.udp_mtu < 576 {
            return Err("faces.udp_mtu must be at least 576".into());
        }
        for r in &self.static_routes {
            r.prefix
                .parse::<nameway_wire::Name>()
                .map_err(|e| format!("route prefix {:?}: {e}", r.prefix))?;
            if !is_null_uri(&r.face) && !self.static_faces.iter().any(|f| f.uri == r.face) {
                return Err(format!(
                    "route {:?}: face {:?} is not a [[face]]",
                    r.prefix, r.face
                ));
            }
        }
        self.cs
            .policy
            .parse::<nameway_cs::PolicyKind>()
            .map_err(|e| format!("cs.policy: {e}"))?;
        if self.faces.tx_queue_bytes.0 < 8800 {
            return Err("faces.tx_queue_bytes must hold one packet (8800 bytes) at least".into());
        }
        if self.cs.insert_queue.0 < 8800 {
            return Err("cs.insert_queue must hold one packet (8800 bytes) at least".into());
        }
        if !(self.cs.filter_fp_rate > 0.0 && self.cs.filter_fp_rate < 0.5) {
            return Err("cs.filter_fp_rate must be between 0 and 0.5".into());
        }
        let sec = &self.security;
        for p in &sec.trusted_peers {
            p.parse::<nameway_face::secure::PublicKey>()
                .map_err(|e| format!("security.trusted_peers: {e}"))?;
        }
        for e in &sec.policy {
            e.prefix
                .parse::<nameway_wire::Name>()
                .map_err(|err| format!("security.policy prefix {:?}: {err}", e.prefix))?;
            e.level
                .parse::<nameway_wire::lp::SecurityLevel>()
                .map_err(|err| format!("security.policy {:?}: {err}", e.prefix))?;
        }
        let link = sec
            .link_level
            .parse::<nameway_wire::lp::SecurityLevel>()
            .map_err(|err| format!("security.link_level: {err}"))?;
        if !link.encrypts() {
            return Err("security.link_level cannot be none".into());
        }
        if sec.rekey_packets == 0 || sec.rekey_seconds == 0 {
            return Err(
                "security.rekey_packets and security.rekey_seconds must be at least 1".into(),
            );
        }
        for f in &self.static_faces {
            if (f.secure || f.link_wide) && sec.identity.as_os_str().is_empty() {
                return Err(format!(
                    "face {:?} is secure: set [security] identity (a key file path)",
                    f.uri
                ));
            }
            if f.link_wide && !f.secure {
                return Err(format!("face {:?}: link_wide needs secure = true", f.uri));
            }
        }
        self.routing.validate()?;
        self.controller.validate()?;
        for s in &self.static_strategies {
            s.prefix
                .parse::<nameway_wire::Name>()
                .map_err(|e| format!("strategy prefix {:?}: {e}", s.prefix))?;
            s.strategy
                .parse::<nameway_wire::Name>()
                .map_err(|e| format!("strategy name {:?}: {e}", s.strategy))?;
        }
        Ok(())
    }

    /// UDP idle timeout as a duration.
    pub fn udp_idle_timeout(&self) -> Duration {
        Duration::from_millis(self.faces.udp_idle_timeout_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_gives_defaults() {
        let c = Config::from_toml("").unwrap();
        assert_eq!(c.faces.unix, PathBuf::from("/run/nfd/nfd.sock"));
        assert_eq!(c.cs.capacity, 65_536);
        assert!(c.validate().is_ok());
    }

    #[test]
    fn sample_config_parses_and_matches_defaults() {
        let text = include_str!("../../../docs/namewayd.sample.toml");
        let c = Config::from_toml(text).unwrap();
        let d = Config::default();
        assert_eq!(c.faces.tcp, d.faces.tcp);
        assert_eq!(c.faces.udp_mtu, d.faces.udp_mtu);
        assert_eq!(c.forwarder.rx_burst, d.forwarder.rx_burst);
        assert_eq!(c.forwarder.io_threads, d.forwarder.io_threads);
        assert_eq!(c.cs.capacity, d.cs.capacity);
        assert_eq!(c.mgmt.signature_grace_ms, d.mgmt.signature_grace_ms);
        assert!(c.validate().is_ok());
    }

    #[test]
    fn pit_capacity_is_entries_or_a_memory_budget() {
        let c = Config::from_toml("[forwarder]\npit_capacity = 1000\n").unwrap();
        assert_eq!(c.forwarder.pit_capacity, 1000);
        let c = Config::from_toml("[forwarder]\npit_capacity = \"256MiB\"\n").unwrap();
        assert_eq!(c.forwarder.pit_capacity, 256 << 20 >> 9);
        let err = Config::from_toml("[forwarder]\npit_capacity = \"lots\"\n").unwrap_err();
        assert!(err.to_string().contains("not a size"), "{err}");
    }

    #[test]
    fn unknown_keys_are_errors_in_one_line_naming_line_table_and_key() {
        let err = Config::from_toml("# top\n[cs]\ncapacity = 5\n  capacty = 5\n").unwrap_err();
        let text = err.to_string();
        assert!(!text.contains('\n'), "{text}");
        assert!(
            text.starts_with("line 4, column 3: in [cs]: unknown key `capacty`, expected one of"),
            "{text}"
        );
        let err = Config::from_toml("[[route]]\nprefix = \"/a\"\nfce = 3\n").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("line 3, column 1: in [[route]]: unknown key `fce`"),
            "{err}"
        );
        let err = Config::from_toml("log = 3\n").unwrap_err();
        assert_eq!(err.table, None, "{err}");
        assert_eq!(err.line, Some(1), "{err}");
    }

    #[test]
    fn security_settings_are_checked() {
        let bad_level = "[security]\nidentity = \"/tmp/x\"\n[[security.policy]]\nprefix = \"/a\"\nlevel = \"rot13\"\n";
        let err = Config::from_toml(bad_level)
            .unwrap()
            .validate()
            .unwrap_err();
        assert!(err.contains("unknown security level"), "{err}");
        let bad_key = "[security]\ntrusted_peers = [\"abc\"]\n";
        let err = Config::from_toml(bad_key).unwrap().validate().unwrap_err();
        assert!(err.contains("64 hexadecimal digits"), "{err}");
        let no_identity = "[[face]]\nuri = \"udp4://127.0.0.1:1\"\nsecure = true\n";
        let err = Config::from_toml(no_identity)
            .unwrap()
            .validate()
            .unwrap_err();
        assert!(err.contains("[security] identity"), "{err}");
        let ok = "[security]\nidentity = \"/tmp/x\"\n[[face]]\nuri = \"udp4://127.0.0.1:1\"\nsecure = true\nlink_wide = true\n";
        assert!(Config::from_toml(ok).unwrap().validate().is_ok());
    }

    #[test]
    fn coalescing_is_read_and_checked() {
        use crate::coalesce::Coalesce;
        let c =
            Config::from_toml("[forwarder]\ncoalesce = \"auto\"\ncoalesce_wait_us = 50\n").unwrap();
        assert!(c.validate().is_ok());
        assert_eq!(c.forwarder.coalesce, Coalesce::Auto);
        assert_eq!(
            c.forwarder.coalesce_wait(),
            std::time::Duration::from_micros(50)
        );
        assert_eq!(Config::default().forwarder.coalesce, Coalesce::Off);
        for (toml, says) in [
            (
                "[forwarder]\ncoalesce_wait_us = 0\n",
                "forwarder.coalesce_wait_us",
            ),
            (
                "[forwarder]\ncoalesce_wait_us = 10001\n",
                "forwarder.coalesce_wait_us",
            ),
            (
                "[forwarder]\ncoalesce = \"on\"\nio_threads = 2\n",
                "io_threads = 0",
            ),
        ] {
            let err = Config::from_toml(toml).unwrap().validate().unwrap_err();
            assert!(err.contains(says), "{toml}: {err}");
        }
        let err = Config::from_toml("[forwarder]\ncoalesce = \"sometimes\"\n").unwrap_err();
        assert!(err.to_string().contains("sometimes"), "{err}");
    }

    #[test]
    fn queues_and_threads_past_any_use_are_refused() {
        // A channel of 2^62 slots panics in tokio when the face starts (tx_queue: at the first
        // face, long after startup); 2^62 threads abort on allocation.
        for (toml, key) in [
            (
                "[faces]\ntx_queue = 4611686018427387904\n",
                "faces.tx_queue",
            ),
            (
                "[faces]\nevent_queue = 4611686018427387904\n",
                "faces.event_queue",
            ),
            ("[faces]\ntx_queue = 16777217\n", "faces.tx_queue"),
            (
                "[forwarder]\nio_threads = 4611686018427387904\n",
                "forwarder.io_threads",
            ),
            ("[forwarder]\nio_threads = 1025\n", "forwarder.io_threads"),
        ] {
            let err = Config::from_toml(toml).unwrap().validate().unwrap_err();
            assert!(err.contains(key), "{toml}: {err}");
        }
        let most = "[faces]\ntx_queue = 16777216\nevent_queue = 16777216\n[forwarder]\nio_threads = 1024\n";
        assert!(Config::from_toml(most).unwrap().validate().is_ok());
    }

    #[test]
    fn a_static_face_has_faults_of_its_own() {
        let text = "[[face]]\nuri = \"udp4://10.0.0.2:6363\"\n[face.fault]\ndelay_ms = 5\njitter_ms = 2\nloss = 0.25\nrate_mbps = 100\nqueue_kib = 64\nseed = 7\n[[face]]\nuri = \"udp4://10.0.0.6:6363\"\n";
        let c = Config::from_toml(text).unwrap();
        assert!(c.validate().is_ok());
        let f = c.static_faces[0].fault.as_ref().unwrap();
        assert_eq!((f.delay_ms, f.jitter_ms, f.rate_mbps), (5, 2, 100));
        assert_eq!((f.queue_kib, f.seed), (64, 7));
        assert!((f.loss - 0.25).abs() < f64::EPSILON);
        assert!(c.static_faces[1].fault.is_none());
        assert!(c.faces.fault.is_none());
        let err = Config::from_toml(
            "[[face]]\nuri = \"udp4://10.0.0.2:6363\"\n[face.fault]\ndelay = 5\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("delay"), "{err}");
    }

    #[test]
    fn routes_must_name_a_face() {
        let c = Config::from_toml("[[route]]\nprefix = \"/a\"\nface = \"udp4://127.0.0.1:1\"\n")
            .unwrap();
        assert!(c.validate().unwrap_err().contains("not a [[face]]"));
    }

    #[test]
    fn nameway_threads_is_a_default_the_file_and_single_thread_features_override() {
        let mut c = Config::default();
        assert_eq!(c.resolve_threads(Some("2")), Ok(None));
        assert_eq!(c.forwarder.threads(), 2);
        let mut c = Config::from_toml("[forwarder]\nthreads = 1\n").unwrap();
        assert_eq!(c.resolve_threads(Some("2")), Ok(None));
        assert_eq!(c.forwarder.threads(), 1, "the file wins");
        let mut c = Config::from_toml("[cs]\ndecoupled = true\n").unwrap();
        let note = c.resolve_threads(Some("2")).unwrap().unwrap();
        assert!(note.contains("decoupled content store"), "{note}");
        assert_eq!(c.forwarder.threads(), 1);
        assert!(Config::default().resolve_threads(Some("two")).is_err());
        // A face rate limit and management from neighbours work with several threads.
        let c = Config::from_toml(
            "[forwarder]\nthreads = 2\n[faces]\ninterest_rate_limit = 5\n[mgmt]\nlocalhop_rib = true\n",
        )
        .unwrap();
        assert_eq!(c.validate(), Ok(()));
        let c = Config::from_toml(
            "[forwarder]\nthreads = 2\n[[forwarder.dispatch]]\nprefix = \"/a/b\"\nk = 1\n",
        )
        .unwrap();
        assert!(c
            .validate()
            .unwrap_err()
            .contains("shorter than the prefix"));
    }
}
