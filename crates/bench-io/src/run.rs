//! One round: the clients started as processes, one engine relaying between them, and the
//! relay's figures.

use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::relay::Stats;
use crate::uring::{Options, Recv};
use crate::usage::{children_cpu_us, io_threads, Usage};
use crate::{epoll, uring, Error, Result};

/// The engines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// [`epoll`].
    Epoll,
    /// [`uring`] with multishot receives over provided buffers.
    Uring,
    /// [`uring`] with one receive SQE per socket, re-armed after each completion.
    UringSingle,
    /// [`uring`] with multishot receives and a submission-polling kernel thread (1 ms idle).
    UringSqpoll,
}

impl Engine {
    /// Every engine, in the order the benchmark lists them.
    pub const ALL: [Engine; 4] = [
        Engine::Epoll,
        Engine::Uring,
        Engine::UringSingle,
        Engine::UringSqpoll,
    ];

    /// The engine's name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Epoll => "epoll",
            Engine::Uring => "uring",
            Engine::UringSingle => "uring-single",
            Engine::UringSqpoll => "uring-sqpoll",
        }
    }

    /// The engine called `name`.
    pub fn parse(name: &str) -> Option<Engine> {
        Engine::ALL.into_iter().find(|e| e.name() == name)
    }
}

/// The load: how many exchanges, the consumer's window, and how the clients use their
/// sockets.
#[derive(Debug, Clone, Copy)]
pub struct Load {
    /// Exchanges in the round.
    pub exchanges: u64,
    /// Interests the consumer keeps outstanding.
    pub window: u64,
    /// Clients that write their whole window at once and read all they can (`nameway
    /// bench`), instead of one packet per system call (ndnget / ndnserve).
    pub batching: bool,
    /// Clients that wait in epoll when a read finds nothing, as ndn-cxx's (Boost.Asio) do,
    /// instead of blocking in `read` ([`crate::client::Wait`]).
    pub clients_epoll: bool,
    /// The producer answers Interest number `n` with an Interest instead of a Data, which
    /// the relay must refuse (for tests of the error path).
    pub bad_packet_at: Option<u64>,
}

/// What one round measured.
#[derive(Debug, Clone)]
pub struct Round {
    /// The engine.
    pub engine: Engine,
    /// The relay's counters.
    pub stats: Stats,
    /// The relay thread's CPU over the round, µs.
    pub thread_cpu_us: u64,
    /// The process's CPU over the round (the relay and io_uring's kernel threads), µs.
    pub process_cpu_us: u64,
    /// The relay thread's context switches.
    pub switches: u64,
    /// The two clients' CPU over their lives (start-up included), µs.
    pub clients_cpu_us: u64,
    /// Wall-clock time of the relaying.
    pub elapsed: Duration,
    /// Whether multishot receives were used (io_uring engines).
    pub multishot: bool,
    /// io_uring's kernel threads seen in the process at the end of the round.
    pub io_threads: Vec<String>,
}

impl Round {
    /// Relay CPU per exchange, µs (the process's: it includes io_uring's kernel threads).
    pub fn cpu_per_exchange(&self) -> f64 {
        self.process_cpu_us as f64 / self.stats.exchanges.max(1) as f64
    }

    /// The relay thread's CPU per exchange, µs.
    pub fn thread_cpu_per_exchange(&self) -> f64 {
        self.thread_cpu_us as f64 / self.stats.exchanges.max(1) as f64
    }

    /// The clients' CPU per exchange, µs.
    pub fn clients_cpu_per_exchange(&self) -> f64 {
        self.clients_cpu_us as f64 / self.stats.exchanges.max(1) as f64
    }

    /// System calls per exchange.
    pub fn syscalls_per_exchange(&self) -> f64 {
        self.stats.syscalls as f64 / self.stats.exchanges.max(1) as f64
    }

    /// Context switches of the relay thread per exchange.
    pub fn switches_per_exchange(&self) -> f64 {
        self.switches as f64 / self.stats.exchanges.max(1) as f64
    }

    /// Exchanges per second of wall-clock time.
    pub fn rate(&self) -> f64 {
        self.stats.exchanges as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// A client process that is killed if the round ends without waiting for it.
struct Client {
    child: Child,
    role: &'static str,
}

impl Client {
    fn spawn(exe: &Path, role: &'static str, path: &Path, load: Load) -> Result<Client> {
        let mut cmd = Command::new(exe);
        cmd.arg(role).arg("--connect").arg(path);
        if role == "consumer" {
            cmd.arg("--exchanges")
                .arg(load.exchanges.to_string())
                .arg("--window")
                .arg(load.window.to_string());
        }
        if load.batching {
            cmd.arg("--batching");
        }
        if load.clients_epoll {
            cmd.arg("--epoll");
        }
        if let (Some(n), "producer") = (load.bad_packet_at, role) {
            cmd.arg("--bad-packet-at").arg(n.to_string());
        }
        let child = cmd
            .spawn()
            .map_err(|e| Error::Client(format!("cannot start {}: {e}", exe.display())))?;
        Ok(Client { child, role })
    }

    /// Accepts this client's connection, giving up after 10 s or if it exits first.
    fn accept(&mut self, listener: &UnixListener) -> Result<UnixStream> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match listener.accept() {
                Ok((sock, _)) => {
                    sock.set_nonblocking(false)
                        .map_err(|e| Error::Io("set_nonblocking", e))?;
                    return Ok(sock);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(Error::Io("accept", e)),
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(Error::Client(format!(
                    "the {} exited before connecting ({status})",
                    self.role
                )));
            }
            if Instant::now() > deadline {
                return Err(Error::Client(format!(
                    "the {} did not connect within 10 s",
                    self.role
                )));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn wait(mut self) -> Result<()> {
        let status = self
            .child
            .wait()
            .map_err(|e| Error::Io("wait for a client", e))?;
        if status.success() {
            Ok(())
        } else {
            Err(Error::Client(format!(
                "the {} failed ({status})",
                self.role
            )))
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn socket_path() -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("bench-io-{}-{n}.sock", std::process::id()))
}

/// Runs one round: starts `exe consumer` and `exe producer`, relays `load` between them with
/// `engine` on the calling thread, and checks that both clients succeeded (each checks every
/// byte it receives).
///
/// # Errors
/// A client that fails to start, connect or finish; the engine's errors; a relay that did
/// not relay exactly `load.exchanges` exchanges.
pub fn run_round(exe: &Path, engine: Engine, load: Load) -> Result<Round> {
    let children_before = children_cpu_us();
    let path = socket_path();
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).map_err(|e| Error::Io("bind", e))?;
    let accepted = (|| {
        listener
            .set_nonblocking(true)
            .map_err(|e| Error::Io("set_nonblocking", e))?;
        let mut consumer = Client::spawn(exe, "consumer", &path, load)?;
        let c = consumer.accept(&listener)?;
        let mut producer = Client::spawn(exe, "producer", &path, load)?;
        let p = producer.accept(&listener)?;
        Ok((consumer, c, producer, p))
    })();
    let _ = std::fs::remove_file(&path);
    let (consumer, c, producer, p) = accepted?;

    let before = Usage::now();
    let relayed = match engine {
        Engine::Epoll => epoll::run(c, p).map(|s| (s, false)),
        Engine::Uring | Engine::UringSingle | Engine::UringSqpoll => {
            let options = Options {
                recv: if engine == Engine::UringSingle {
                    Recv::Single
                } else {
                    Recv::Multishot
                },
                sqpoll: (engine == Engine::UringSqpoll).then_some(1),
            };
            uring::run(c, p, options).map(|(s, r)| (s, r == Recv::Multishot))
        }
    };
    let after = Usage::now();
    let threads = io_threads();
    let (stats, multishot) = relayed?;
    consumer.wait()?;
    producer.wait()?;
    let clients_cpu_us = children_cpu_us().saturating_sub(children_before);
    if stats.exchanges != load.exchanges || stats.interests != load.exchanges {
        return Err(Error::Protocol(format!(
            "relayed {} Interests and {} Data for {} exchanges",
            stats.interests, stats.exchanges, load.exchanges
        )));
    }
    Ok(Round {
        engine,
        stats,
        thread_cpu_us: after.thread_cpu_us - before.thread_cpu_us,
        process_cpu_us: after.process_cpu_us - before.process_cpu_us,
        switches: after.thread_switches - before.thread_switches,
        clients_cpu_us,
        elapsed: after.at - before.at,
        multishot,
        io_threads: threads,
    })
}
