//! A UDP relay between two endpoints on 127.0.0.1, for end-to-end tests of what crosses a link:
//! it records every datagram and injects faults per direction (drop, bit flip, reorder) and
//! replays recorded datagrams on demand. Plain std threads: usable from `#[test]` functions
//! that spawn daemons, no async runtime. Self-contained (std only), so that other crates'
//! tests can include it with `#[path]`.
//!
//! ```text
//!   daemon A                        relay                                 daemon B (b_addr)
//!   face udp4://<a_facing>  ──▶  a-facing socket ══ A→B ══▶ b-facing socket ──▶  UDP listener
//!   A's source address      ◀──  a-facing socket ◀══ B→A ══ b-facing socket ◀──  its replies
//! ```
//!
//! Daemon A is told to use `udp4://<a_facing_addr>` as its face's remote. Everything the relay
//! sends toward B leaves from ONE socket (the b-facing one), so B sees a single stable source
//! address and makes a single on-demand face for it; B's replies come back to that socket and
//! go out of the a-facing socket to the last address A sent from.
//!
//! Records are what the relay *received*, with what it did to each; replays are not recorded
//! (they are counted).
//!
//! ```text
//! let b = Daemon::start("");
//! let relay = Relay::start(SocketAddr::from(([127, 0, 0, 1], b.udp)));
//! let a = Daemon::start("");
//! // on A: nameway face create udp4://{relay.a_facing_addr()}, and a route over that face
//! relay.set_fault(Direction::AtoB, Fault::flip_next(1, Matcher::link_security()));
//! // ... fetch through A; then relay.search(marker), relay.counters(Direction::AtoB)
//! ```

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The LinkSecurity header field's type bytes (`fd 03 85`): a datagram carrying them is an
/// encrypted NDNLPv2 packet.
pub const LINK_SECURITY: [u8; 3] = [0xfd, 0x03, 0x85];

/// How long a datagram held for [`Fault::Reorder`] waits for a next one before it is sent
/// anyway (so that a reorder at the end of a flow loses nothing).
pub const REORDER_HOLD_MAX: Duration = Duration::from_millis(300);

/// How often the relay threads wake without traffic: the bound on stop latency and on the
/// release of an overdue held datagram.
const TICK: Duration = Duration::from_millis(20);

/// Largest datagram relayed.
const MAX_DATAGRAM: usize = 65_536;

/// The seed of [`Relay::start`]: flips land on the same bits run after run.
const DEFAULT_SEED: u64 = 0x6e61_6d65_7761_7931;

/// Which way a datagram crosses the relay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From side A (the daemon whose face points at the relay) toward B's address.
    AtoB,
    /// From B back to A's last source address.
    BtoA,
}

impl Direction {
    /// Both directions.
    pub const ALL: [Direction; 2] = [Direction::AtoB, Direction::BtoA];

    fn index(self) -> usize {
        match self {
            Direction::AtoB => 0,
            Direction::BtoA => 1,
        }
    }
}

/// Which datagrams a fault or a replay applies to.
#[derive(Clone)]
pub struct Matcher(Arc<dyn Predicate>);

/// A test on a datagram's bytes, shareable with the relay's threads.
pub trait Predicate: Fn(&[u8]) -> bool + Send + Sync {}

impl<F: Fn(&[u8]) -> bool + Send + Sync> Predicate for F {}

impl Matcher {
    /// Every datagram.
    pub fn any() -> Self {
        Self::new(|_| true)
    }

    /// Datagrams containing `marker` (an empty marker matches every datagram).
    pub fn contains(marker: &[u8]) -> Self {
        let marker = marker.to_vec();
        Self::new(move |d| contains(d, &marker))
    }

    /// Datagrams carrying a LinkSecurity field ([`LINK_SECURITY`]).
    pub fn link_security() -> Self {
        Self::contains(&LINK_SECURITY)
    }

    /// Datagrams for which `f` is true.
    pub fn new(f: impl Predicate + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// Whether `datagram` matches.
    pub fn matches(&self, datagram: &[u8]) -> bool {
        (self.0)(datagram)
    }
}

impl std::fmt::Debug for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Matcher(..)")
    }
}

/// What the relay does to the datagrams of one direction. A counted fault applies to the next
/// `count` matching datagrams and then turns back into [`Fault::Pass`]; datagrams that do not
/// match pass.
#[derive(Clone, Debug, Default)]
pub enum Fault {
    /// Forward everything unchanged.
    #[default]
    Pass,
    /// Drop the next `count` matching datagrams.
    Drop { count: usize, matching: Matcher },
    /// Flip one bit, at a random position, in each of the next `count` matching datagrams; with
    /// `within_last`, the bit lies in the datagram's last that many bytes (its tag, say).
    /// Empty datagrams pass.
    Flip {
        count: usize,
        matching: Matcher,
        within_last: Option<usize>,
    },
    /// Hold the next matching datagram and send it right after the next datagram of the same
    /// direction (matching or not): the two swap. `count` swaps, then pass. A held datagram is
    /// sent anyway after [`REORDER_HOLD_MAX`], and when the fault is replaced.
    Reorder { count: usize, matching: Matcher },
}

impl Fault {
    /// [`Fault::Drop`].
    pub fn drop_next(count: usize, matching: Matcher) -> Self {
        Self::Drop { count, matching }
    }

    /// [`Fault::Flip`] anywhere in the datagram.
    pub fn flip_next(count: usize, matching: Matcher) -> Self {
        Self::Flip {
            count,
            matching,
            within_last: None,
        }
    }

    /// [`Fault::Flip`] within the datagram's last `bytes` bytes.
    pub fn flip_next_within_last(count: usize, bytes: usize, matching: Matcher) -> Self {
        Self::Flip {
            count,
            matching,
            within_last: Some(bytes),
        }
    }

    /// [`Fault::Reorder`].
    pub fn reorder_next(count: usize, matching: Matcher) -> Self {
        Self::Reorder { count, matching }
    }

    fn remaining(&self) -> usize {
        match self {
            Fault::Pass => 0,
            Fault::Drop { count, .. }
            | Fault::Flip { count, .. }
            | Fault::Reorder { count, .. } => *count,
        }
    }
}

/// What the relay did with a datagram it received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Sent on unchanged.
    Forwarded,
    /// Dropped by [`Fault::Drop`].
    Dropped,
    /// Sent on with bit `bit` flipped (`bytes[bit / 8] ^= 1 << (bit % 8)`).
    Flipped { bit: usize },
    /// Held by [`Fault::Reorder`], sent after the next datagram (or after
    /// [`REORDER_HOLD_MAX`]).
    Held,
    /// Could not be sent: B→A before A sent anything, or a socket error.
    Undeliverable,
}

/// One datagram the relay received.
#[derive(Clone, Debug)]
pub struct Record {
    /// Which way it was going.
    pub direction: Direction,
    /// When it arrived, from the relay's start.
    pub at: Duration,
    /// The bytes as received (before any flip).
    pub bytes: Vec<u8>,
    /// What the relay did with it.
    pub action: Action,
}

impl Record {
    /// Whether the datagram contains `marker`.
    pub fn contains(&self, marker: &[u8]) -> bool {
        contains(&self.bytes, marker)
    }
}

/// What the relay did in one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Datagrams received.
    pub received: u64,
    /// Datagrams sent on (flipped and reordered ones included, replays not).
    pub forwarded: u64,
    /// Dropped by [`Fault::Drop`].
    pub dropped: u64,
    /// Sent with a bit flipped.
    pub flipped: u64,
    /// Swaps done by [`Fault::Reorder`].
    pub reordered: u64,
    /// Recorded datagrams sent again by [`Relay::replay`].
    pub replayed: u64,
    /// Socket errors (receive or send), and B→A datagrams with no A address to go to.
    pub errors: u64,
}

/// A running relay; stops (threads joined) on drop.
pub struct Relay {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

struct Shared {
    /// Receives from A, sends B's replies to A.
    a_sock: UdpSocket,
    /// Sends to B, receives B's replies.
    b_sock: UdpSocket,
    b_addr: SocketAddr,
    start: Instant,
    stop: AtomicBool,
    state: Mutex<State>,
}

struct State {
    faults: [Fault; 2],
    /// The datagram a reorder holds in each direction, and since when.
    held: [Option<(Vec<u8>, Instant)>; 2],
    records: Vec<Record>,
    counters: [Counters; 2],
    /// Where B→A datagrams go: the last source A sent from.
    a_source: Option<SocketAddr>,
    rng: u64,
}

impl Relay {
    /// Binds the a-facing and b-facing sockets on 127.0.0.1 and starts relaying to and from
    /// `b_addr`.
    pub fn start(b_addr: SocketAddr) -> Self {
        Self::start_seeded(b_addr, DEFAULT_SEED)
    }

    /// [`Relay::start`] with the seed of the bit-flip positions.
    pub fn start_seeded(b_addr: SocketAddr, seed: u64) -> Self {
        let bind = || {
            let s = UdpSocket::bind("127.0.0.1:0").expect("relay: bind 127.0.0.1:0");
            s.set_read_timeout(Some(TICK))
                .expect("relay: set_read_timeout");
            s
        };
        let shared = Arc::new(Shared {
            a_sock: bind(),
            b_sock: bind(),
            b_addr,
            start: Instant::now(),
            stop: AtomicBool::new(false),
            state: Mutex::new(State {
                faults: [Fault::Pass, Fault::Pass],
                held: [None, None],
                records: Vec::new(),
                counters: [Counters::default(); 2],
                a_source: None,
                // xorshift must not start at zero.
                rng: seed | 1,
            }),
        });
        let threads = Direction::ALL
            .into_iter()
            .map(|dir| {
                let shared = Arc::clone(&shared);
                std::thread::Builder::new()
                    .name(format!("relay-{dir:?}"))
                    .spawn(move || shared.run(dir))
                    .expect("relay: spawn thread")
            })
            .collect();
        Relay { shared, threads }
    }

    /// The address side A must send to (its face's remote).
    pub fn a_facing_addr(&self) -> SocketAddr {
        self.shared.a_sock.local_addr().expect("relay: local_addr")
    }

    /// The single source address B sees the relay's datagrams come from.
    pub fn b_facing_addr(&self) -> SocketAddr {
        self.shared.b_sock.local_addr().expect("relay: local_addr")
    }

    /// Where B→A datagrams go: the last address A sent from, if A sent anything yet.
    pub fn a_source(&self) -> Option<SocketAddr> {
        self.shared.lock().a_source
    }

    /// Replaces the fault of `dir`. A datagram a reorder was holding is sent now.
    pub fn set_fault(&self, dir: Direction, fault: Fault) {
        let held = {
            let mut st = self.shared.lock();
            st.faults[dir.index()] = fault;
            st.held[dir.index()].take()
        };
        if let Some((bytes, _)) = held {
            self.shared.send(dir, &bytes);
        }
    }

    /// How many datagrams the fault of `dir` still applies to (0 once it is back to pass).
    pub fn fault_remaining(&self, dir: Direction) -> usize {
        self.shared.lock().faults[dir.index()].remaining()
    }

    /// A copy of every datagram received so far, in order of arrival.
    pub fn records(&self) -> Vec<Record> {
        self.shared.lock().records.clone()
    }

    /// Forgets the records (counters stay).
    pub fn clear_records(&self) {
        self.shared.lock().records.clear();
    }

    /// How many received datagrams, in both directions, contain `marker`.
    pub fn search(&self, marker: &[u8]) -> usize {
        let st = self.shared.lock();
        st.records.iter().filter(|r| r.contains(marker)).count()
    }

    /// How many received datagrams going `dir` contain `marker`.
    pub fn search_in(&self, dir: Direction, marker: &[u8]) -> usize {
        let st = self.shared.lock();
        st.records
            .iter()
            .filter(|r| r.direction == dir && r.contains(marker))
            .count()
    }

    /// Sends again, in order of arrival, up to `count` recorded datagrams that went `dir` and
    /// match `matching`, with the bytes they had when received (whatever was done to them);
    /// returns how many were sent.
    pub fn replay(&self, dir: Direction, matching: &Matcher, count: usize) -> usize {
        let picked: Vec<Vec<u8>> = {
            let st = self.shared.lock();
            st.records
                .iter()
                .filter(|r| r.direction == dir && matching.matches(&r.bytes))
                .take(count)
                .map(|r| r.bytes.clone())
                .collect()
        };
        let sent = picked
            .iter()
            .filter(|bytes| self.shared.send(dir, bytes))
            .count();
        self.shared.lock().counters[dir.index()].replayed += sent as u64;
        sent
    }

    /// What the relay did in `dir` so far.
    pub fn counters(&self, dir: Direction) -> Counters {
        self.shared.lock().counters[dir.index()]
    }

    /// Polls `done` every 5 ms until it is true (returns true) or `timeout` has passed
    /// (returns false).
    pub fn wait_until(&self, timeout: Duration, done: impl Fn(&Relay) -> bool) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if done(self) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            // The threads do not panic; if one did, say so unless a test is already failing.
            if let Err(e) = t.join() {
                if !std::thread::panicking() {
                    std::panic::resume_unwind(e);
                }
            }
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The loop of the thread that receives the datagrams going `dir`.
    fn run(&self, dir: Direction) {
        let sock = match dir {
            Direction::AtoB => &self.a_sock,
            Direction::BtoA => &self.b_sock,
        };
        let mut buf = vec![0u8; MAX_DATAGRAM];
        while !self.stop.load(Ordering::Relaxed) {
            match sock.recv_from(&mut buf) {
                Ok((n, from)) => {
                    let bytes = buf.get(..n).unwrap_or_default().to_vec();
                    self.on_datagram(dir, from, bytes);
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(_) => {
                    // E.g. ECONNREFUSED from an earlier send: count it, do not spin.
                    self.lock().counters[dir.index()].errors += 1;
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            self.release_overdue(dir);
        }
    }

    /// Applies the fault of `dir` to one received datagram, records it and sends what is to
    /// be sent.
    fn on_datagram(&self, dir: Direction, from: SocketAddr, bytes: Vec<u8>) {
        let now = Instant::now();
        let (out, action, index) = {
            let mut st = self.lock();
            if dir == Direction::AtoB {
                st.a_source = Some(from);
            }
            st.counters[dir.index()].received += 1;
            let (out, action) = st.apply_fault(dir, &bytes, now);
            st.records.push(Record {
                direction: dir,
                at: now.duration_since(self.start),
                bytes,
                action,
            });
            (out, action, st.records.len() - 1)
        };
        // The first datagram out is the one received (after a swap, the held one follows).
        let mut out = out.iter();
        let delivered = out.next().is_none_or(|d| self.send(dir, d));
        for d in out {
            self.send(dir, d);
        }
        if !delivered {
            let mut st = self.lock();
            if let Some(r) = st.records.get_mut(index) {
                if r.direction == dir && r.action == action {
                    r.action = Action::Undeliverable;
                }
            }
        }
    }

    /// Sends a held datagram that waited longer than [`REORDER_HOLD_MAX`].
    fn release_overdue(&self, dir: Direction) {
        let overdue = {
            let mut st = self.lock();
            let slot = &mut st.held[dir.index()];
            match slot {
                Some((_, since)) if since.elapsed() >= REORDER_HOLD_MAX => slot.take(),
                _ => None,
            }
        };
        if let Some((bytes, _)) = overdue {
            self.send(dir, &bytes);
        }
    }

    /// Sends `bytes` on in `dir` (to B, or to A's last source); false (counted as an error)
    /// when it could not be.
    fn send(&self, dir: Direction, bytes: &[u8]) -> bool {
        let (sock, to) = match dir {
            Direction::AtoB => (&self.b_sock, Some(self.b_addr)),
            Direction::BtoA => (&self.a_sock, self.lock().a_source),
        };
        let sent = to.is_some_and(|to| sock.send_to(bytes, to).is_ok());
        let mut st = self.lock();
        let c = &mut st.counters[dir.index()];
        if sent {
            c.forwarded += 1;
        } else {
            c.errors += 1;
        }
        sent
    }
}

impl State {
    /// What to send for a datagram just received going `dir`, in order, and what was done.
    fn apply_fault(
        &mut self,
        dir: Direction,
        bytes: &[u8],
        now: Instant,
    ) -> (Vec<Vec<u8>>, Action) {
        let d = dir.index();
        let pass = (vec![bytes.to_vec()], Action::Forwarded);
        let result = match &mut self.faults[d] {
            Fault::Pass => pass,
            Fault::Drop { count, matching } if *count > 0 && matching.matches(bytes) => {
                *count -= 1;
                self.counters[d].dropped += 1;
                (Vec::new(), Action::Dropped)
            }
            Fault::Flip {
                count,
                matching,
                within_last,
            } if *count > 0 && !bytes.is_empty() && matching.matches(bytes) => {
                *count -= 1;
                let span = within_last.map_or(bytes.len(), |x| x.clamp(1, bytes.len()));
                let byte = bytes.len() - span + (next_random(&mut self.rng) as usize % span);
                let bit = byte * 8 + (next_random(&mut self.rng) % 8) as usize;
                let mut flipped = bytes.to_vec();
                if let Some(b) = flipped.get_mut(byte) {
                    *b ^= 1 << (bit % 8);
                }
                self.counters[d].flipped += 1;
                (vec![flipped], Action::Flipped { bit })
            }
            Fault::Reorder { count, matching } if *count > 0 => {
                if let Some((held, _)) = self.held[d].take() {
                    *count -= 1;
                    self.counters[d].reordered += 1;
                    (vec![bytes.to_vec(), held], Action::Forwarded)
                } else if matching.matches(bytes) {
                    self.held[d] = Some((bytes.to_vec(), now));
                    (Vec::new(), Action::Held)
                } else {
                    pass
                }
            }
            _ => pass,
        };
        if self.faults[d].remaining() == 0 {
            self.faults[d] = Fault::Pass;
        }
        result
    }
}

/// xorshift64*: enough to spread flips, reproducible from the seed.
fn next_random(state: &mut u64) -> u64 {
    let mut x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    x.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// Whether `hay` contains `needle` (an empty needle is in everything).
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}
