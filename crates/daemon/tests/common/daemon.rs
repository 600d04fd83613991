//! The running-daemon fixture shared by the end-to-end tests of `namewayd` and of `nameway`
//! (the `nameway` tests include this file with `#[path]`): a real `namewayd` on a temporary
//! Unix socket and free TCP/UDP ports, killed on drop.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A running namewayd with its own Unix socket, TCP and UDP ports.
pub struct Daemon {
    pub child: Child,
    pub dir: tempfile::TempDir,
    pub unix: PathBuf,
    pub tcp: u16,
    pub udp: u16,
}

/// A port free for both TCP and UDP a moment ago, chosen BELOW the kernel's ephemeral range
/// (`net.ipv4.ip_local_port_range`): a port from that range, closed again, can be handed to any
/// other socket's `connect` or `bind(0)` before the daemon binds it (this failed a CI run),
/// while one below it is never given out by the kernel. Each test process walks its own
/// stretch of the range (offset by its pid), so parallel tests and processes rarely meet;
/// a port still taken is skipped.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u32>().ok())
        .unwrap_or(32768);
    if low < 12_000 {
        // An unusual range leaves no room below it: fall back to one the kernel picked.
        loop {
            let t = TcpListener::bind("127.0.0.1:0").unwrap();
            let port = t.local_addr().unwrap().port();
            if UdpSocket::bind(("127.0.0.1", port)).is_ok() {
                return port;
            }
        }
    }
    let (base, span) = (10_000u32, low - 10_000);
    let start = std::process::id().wrapping_mul(7_919) % span;
    for _ in 0..span {
        let k = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = (base + (start + k) % span) as u16;
        let Ok(t) = TcpListener::bind(("127.0.0.1", port)) else {
            continue;
        };
        if UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            drop(t);
            return port;
        }
    }
    panic!("no port free for TCP and UDP in 10000..{low}");
}

impl Daemon {
    /// Starts the namewayd binary `bin` with `extra` appended to its config, and waits until
    /// its listeners are open. The TCP and UDP ports are chosen here; when one was taken
    /// between its choice and the daemon's bind (another test's connection can get it as its
    /// ephemeral port), the daemon is started again on others.
    pub fn start_with(bin: &Path, extra: &str) -> Self {
        let mut attempts = 0;
        loop {
            match Self::try_start_on(bin, free_port(), free_port(), extra) {
                Ok(d) => return d,
                Err(log) if attempts < 5 && log.contains("Address already in use") => {
                    attempts += 1;
                }
                Err(log) => panic!("namewayd exited before it started: {log}"),
            }
        }
    }

    /// As [`Daemon::start_with`], on the TCP and UDP ports given (chosen before, so that
    /// other daemons' configurations can name them).
    pub fn start_on(bin: &Path, tcp: u16, udp: u16, extra: &str) -> Self {
        Self::try_start_on(bin, tcp, udp, extra)
            .unwrap_or_else(|log| panic!("namewayd exited before it started: {log}"))
    }

    /// Starts the daemon and waits until it has opened its listeners (its Unix socket exists
    /// and it logged them); `Err` with its log when it exited first.
    fn try_start_on(bin: &Path, tcp: u16, udp: u16, extra: &str) -> Result<Self, String> {
        let dir = tempfile::tempdir().unwrap();
        let unix = dir.path().join("nfd.sock");
        let config = format!(
            "[faces]\nunix = {unix:?}\ntcp = [\"127.0.0.1:{tcp}\"]\nudp = [\"127.0.0.1:{udp}\"]\n{extra}\n"
        );
        let path = dir.path().join("namewayd.toml");
        std::fs::write(&path, config).unwrap();
        let log = std::fs::File::create(dir.path().join("namewayd.log")).unwrap();
        let child = Command::new(bin)
            .arg("--config")
            .arg(&path)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut d = Daemon {
            child,
            dir,
            unix,
            tcp,
            udp,
        };
        // namewayd logs "listening" for each listener once all of them are open; a daemon
        // whose log level hides it counts as started 5 s after its socket appeared.
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut socket_seen: Option<Instant> = None;
        loop {
            if let Ok(Some(status)) = d.child.try_wait() {
                return Err(format!("({status}) {}", d.log()));
            }
            if d.unix.exists() {
                let seen = *socket_seen.get_or_insert_with(Instant::now);
                if d.log().contains(" listening ") || seen.elapsed() > Duration::from_secs(5) {
                    return Ok(d);
                }
            }
            assert!(
                Instant::now() < deadline,
                "namewayd did not start: {}",
                d.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The daemon's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("namewayd.log")).unwrap_or_default()
    }

    /// The client transport for the daemon's Unix socket (NDN_CLIENT_TRANSPORT,
    /// `nameway --transport`).
    pub fn transport(&self) -> String {
        format!("unix://{}", self.unix.display())
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads `stdout` line by line on a thread; the lines `parse` accepts arrive on the receiver.
pub fn read_lines<T: Send + 'static>(
    stdout: ChildStdout,
    parse: fn(String) -> Option<T>,
) -> mpsc::Receiver<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(v) = parse(line) {
                if tx.send(v).is_err() {
                    break;
                }
            }
        }
    });
    rx
}

/// One GET with std only (`base` is `http://host:port`): status line, head and body.
pub fn http_get(base: &str, path: &str) -> (String, String, Vec<u8>) {
    let addr = base.trim_start_matches("http://");
    // The daemon opens its HTTP listener after the Unix socket the tests wait for: a
    // connection right after start may be refused for a moment.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut s = loop {
        match std::net::TcpStream::connect(addr) {
            Ok(s) => break s,
            Err(e)
                if e.kind() == std::io::ErrorKind::ConnectionRefused
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("cannot connect to {addr}: {e}"),
        }
    };
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let status = head.lines().next().unwrap().to_string();
    (status, head, raw[split + 4..].to_vec())
}
