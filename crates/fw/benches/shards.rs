//! E1: in-process scaling of sharded forwarding. Each input shard's thread is fed pre-encoded
//! packets from memory (no sockets): a burst of Interests from its consumer face, then the Data
//! of the same names from its producer face, as a producer answering at once would. Dispatch,
//! hand-off rings and forwarding are measured; transmits go to a counting sink.
//!
//! Runs, in one group per workload (criterion reports time per exchange, all threads together):
//! - `unsharded`: one plain `Forwarder` on one thread (no dispatch), the reference;
//! - `1shard`: one shard on one thread (dispatch, no hand-offs);
//! - `2shards`: two shards on two threads, each feeding its own consumer/producer pair;
//! - `ceiling`: two independent unsharded forwarders on two threads with disjoint loads, which
//!   measures what the machine itself gives (shared caches, memory, the hypervisor).
//!
//! Workloads: `uniform` (`/s<t>/item<i>/c/d`, K=2), `dominant_k2` (`/ndn/video/title<t>/seg=i`
//! with the default K=2: every name on one shard), `dominant_k4` (the same with `/ndn/video`
//! given K=4), `cbp10` (uniform, 10 % of the Interests CanBePrefix for `/s<t>/item<i>/c`),
//! `cbp10_span` (10 % CanBePrefix for `/s<t>/item<i>` under a default K of 3: shorter than K,
//! so noted in the span filter and their Data probed and copied).
//!
//! A `dispatch` group measures the dispatch rule alone (an Interest and its Data routed).
//!
//! After each run the bench prints the imbalance (max/mean of the Interests each shard
//! forwarded), hand-offs and Data copies per exchange, and checks every exchange was satisfied.
//!
//! `cargo bench -p nameway-fw --bench shards -- --warm-up-time 1 --measurement-time 5`

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use core::time::Duration;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Instant;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nameway_fw::shard::{build, ControlOp, DispatchTable, Dispatcher, Shard};
use nameway_fw::{Config, FaceId, FaceScope, Forwarder, LinkType, PacketKind, Time};
use nameway_wire::{Data, Interest, MetaInfo, Name, NameHasher};

/// Distinct names per input thread, cycled: more than the content store holds.
const POOL: usize = 1 << 17;
const CS_CAPACITY: usize = 1 << 16;
/// Interests (then their Data) read per turn.
const BURST: usize = 32;
const HASHER: NameHasher = NameHasher::with_seed(1);

#[derive(Clone, Copy, Debug)]
enum Workload {
    Uniform,
    DominantK2,
    DominantK4,
    Cbp10,
    Cbp10Span,
}

impl Workload {
    const ALL: [Self; 5] = [
        Self::Uniform,
        Self::DominantK2,
        Self::DominantK4,
        Self::Cbp10,
        Self::Cbp10Span,
    ];

    fn label(self) -> &'static str {
        match self {
            Self::Uniform => "uniform",
            Self::DominantK2 => "dominant_k2",
            Self::DominantK4 => "dominant_k4",
            Self::Cbp10 => "cbp10",
            Self::Cbp10Span => "cbp10_span",
        }
    }

    fn table(self) -> DispatchTable {
        let k = if matches!(self, Self::Cbp10Span) {
            3
        } else {
            2
        };
        let mut t = DispatchTable::new(HASHER, k).unwrap();
        if matches!(self, Self::DominantK4) {
            t.set(&"/ndn/video".parse().unwrap(), 4).unwrap();
        }
        t
    }

    /// The route of input thread `t` and its `i`-th (Interest, Data).
    fn route(self, t: usize) -> Name {
        match self {
            Self::DominantK2 | Self::DominantK4 => format!("/ndn/video/title{t}"),
            _ => format!("/s{t}"),
        }
        .parse()
        .unwrap()
    }

    fn packets(self, t: usize) -> Vec<(Bytes, Bytes)> {
        (0..POOL)
            .map(|i| {
                let (data_name, interest_name, cbp) = match self {
                    Self::DominantK2 | Self::DominantK4 => {
                        let n = format!("/ndn/video/title{t}/seg={i}");
                        (n.clone(), n, false)
                    }
                    Self::Cbp10 if i % 10 == 0 => (
                        format!("/s{t}/item{i}/c/d"),
                        format!("/s{t}/item{i}/c"),
                        true,
                    ),
                    Self::Cbp10Span if i % 10 == 0 => {
                        (format!("/s{t}/item{i}/c/d"), format!("/s{t}/item{i}"), true)
                    }
                    _ => {
                        let n = format!("/s{t}/item{i}/c/d");
                        (n.clone(), n, false)
                    }
                };
                let mut interest = Interest::new(interest_name.parse().unwrap());
                interest.nonce = Some(i as u32);
                interest.can_be_prefix = cbp;
                (interest.encode(), data(&data_name))
            })
            .collect()
    }
}

fn data(name: &str) -> Bytes {
    let mut d = Data::new(name.parse().unwrap(), Bytes::from(vec![0x5a; 100]));
    d.meta_info = Some(MetaInfo {
        freshness_period: Some(10_000),
        ..MetaInfo::default()
    });
    d.signature_value = Bytes::from(vec![0; 32]);
    d.encode()
}

fn consumer(t: usize) -> FaceId {
    FaceId(300 + 2 * t as u64)
}

fn producer(t: usize) -> FaceId {
    FaceId(301 + 2 * t as u64)
}

fn config(seed: u64) -> Config {
    Config {
        seed,
        hasher: Some(HASHER),
        cs_capacity: CS_CAPACITY,
        ..Config::default()
    }
}

fn sharded(w: Workload, n: usize) -> Vec<Shard> {
    let (mut shards, mut control) = build(config(0), w.table(), n, 4096).unwrap();
    for t in 0..n {
        for (id, scope) in [
            (consumer(t), FaceScope::Local),
            (producer(t), FaceScope::NonLocal),
        ] {
            let link_type = LinkType::PointToPoint;
            control
                .send(ControlOp::AddFace {
                    id,
                    scope,
                    link_type,
                })
                .unwrap();
        }
        let prefix = w.route(t);
        let face = producer(t);
        control
            .send(ControlOp::AddNexthop {
                prefix,
                face,
                cost: 0,
            })
            .unwrap();
    }
    for s in &mut shards {
        s.apply_control();
    }
    shards
}

fn unsharded(w: Workload) -> Forwarder {
    let mut fw = Forwarder::new(config(0));
    fw.add_face_with_id(consumer(0), FaceScope::Local, LinkType::PointToPoint)
        .unwrap();
    fw.add_face_with_id(producer(0), FaceScope::NonLocal, LinkType::PointToPoint)
        .unwrap();
    fw.add_nexthop(&w.route(0), producer(0), 0).unwrap();
    fw
}

/// One input thread's state across criterion's samples.
struct Feed {
    packets: Vec<(Bytes, Bytes)>,
    next: usize,
    /// The clock (ns) shared by the feeds of one sharded forwarder: one time base for every
    /// shard, as the daemon's one wall clock (each exchange moves it on by 10 µs).
    clock: Arc<AtomicU64>,
    now: Time,
    /// Data sent to the consumer face (the counting sink).
    delivered: u64,
    /// Exchanges fed.
    exchanges: u64,
    /// Turns with a full ring toward another shard and nothing received.
    idle_turns: u64,
    /// CPU time of the thread(s) that ran this feed, over all samples (ns).
    cpu_ns: u64,
    /// The part of `cpu_ns` spent giving the CPU up while blocked on another shard.
    idle_cpu_ns: u64,
}

/// CPU time of the calling thread (ns), `CLOCK_THREAD_CPUTIME_ID`: exact at every call, and a
/// thread that waits for the CPU (the machine is shared) is not charged, unlike wall time.
fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

impl Feed {
    fn new(w: Workload, t: usize, clock: Arc<AtomicU64>) -> Self {
        Self {
            packets: w.packets(t),
            next: 0,
            clock,
            now: Time::ZERO,
            delivered: 0,
            exchanges: 0,
            idle_turns: 0,
            cpu_ns: 0,
            idle_cpu_ns: 0,
        }
    }

    fn take(&mut self, n: usize) -> &[(Bytes, Bytes)] {
        if self.next + n > self.packets.len() {
            self.next = 0;
        }
        let s = &self.packets[self.next..self.next + n];
        self.next += n;
        self.exchanges += n as u64;
        let step = 10_000 * n as u64;
        self.now = Time::from_nanos(self.clock.fetch_add(step, Ordering::Relaxed) + step);
        s
    }

    /// Gives the CPU up (nothing to do until another shard moves); the CPU this costs
    /// (the system call, and reading the account) is kept apart as idle time.
    fn idle(&mut self) {
        let before = thread_cpu_ns();
        std::thread::yield_now();
        self.idle_cpu_ns += thread_cpu_ns() - before;
    }

    /// The shared clock now (between bursts).
    fn tick(&mut self) -> Time {
        self.now = Time::from_nanos(self.clock.load(Ordering::Relaxed));
        self.now
    }
}

/// Runs `exchanges` exchanges through one shard whose I/O thread reads input `t`.
fn run_shard(shard: &mut Shard, feed: &mut Feed, t: usize, exchanges: usize, done: &AtomicUsize) {
    let n_shards = shard.dispatcher().shards();
    let mut left = exchanges;
    let sink = |s: &mut Shard, feed: &mut Feed| {
        while let Some(x) = s.poll_transmit() {
            if x.face.0 % 2 == 0 && x.kind == PacketKind::Data {
                feed.delivered += 1;
            }
        }
    };
    while left > 0 {
        shard.apply_control();
        let room = shard.handoff_room() >= 2 * BURST;
        if room {
            let k = left.min(BURST);
            left -= k;
            let (c, p) = (consumer(t), producer(t));
            let now = feed.now;
            let burst = feed.take(k).to_vec();
            for (i, _) in &burst {
                shard.handle_packet(now, c, i.clone());
            }
            for (_, d) in &burst {
                shard.handle_packet(now, p, d.clone());
            }
            shard.flush();
        }
        let now = feed.tick();
        let received = shard.handle_handoffs(now, usize::MAX);
        sink(shard, feed);
        if shard.poll_timeout().is_some_and(|x| x <= now) {
            shard.handle_timeout(now);
        }
        if !room && received == 0 {
            // Blocked on a full ring and nothing came in: the owner is behind (another
            // process has its CPU). Give the CPU up, as a driver parks, rather than spin.
            feed.idle_turns += 1;
            feed.idle();
        }
    }
    done.fetch_add(1, Ordering::AcqRel);
    // Every shard's last hand-offs were published before it counted itself done.
    while done.load(Ordering::Acquire) < n_shards {
        if shard.handle_handoffs(feed.now, usize::MAX) == 0 {
            feed.idle();
        }
        sink(shard, feed);
    }
    shard.handle_handoffs(feed.now, usize::MAX);
    sink(shard, feed);
}

fn run_unsharded(fw: &mut Forwarder, feed: &mut Feed, exchanges: usize) {
    let mut left = exchanges;
    while left > 0 {
        let k = left.min(BURST);
        left -= k;
        let now = feed.now;
        let burst = feed.take(k).to_vec();
        for (i, _) in &burst {
            fw.handle_packet(now, consumer(0), i.clone());
        }
        for (_, d) in &burst {
            fw.handle_packet(now, producer(0), d.clone());
        }
        while let Some(x) = fw.poll_transmit() {
            if x.face == consumer(0) && x.kind == PacketKind::Data {
                feed.delivered += 1;
            }
        }
        if fw.poll_timeout().is_some_and(|x| x <= now) {
            fw.handle_timeout(now);
        }
    }
}

/// Wall time of `iters` exchanges split over the shards, each on its own thread.
fn time_sharded(shards: &mut [Shard], feeds: &mut [Feed], iters: u64) -> Duration {
    let n = shards.len();
    let per = (iters as usize).div_ceil(n);
    let barrier = Barrier::new(n + 1);
    let done = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for (t, (shard, feed)) in shards.iter_mut().zip(feeds.iter_mut()).enumerate() {
            let (barrier, done) = (&barrier, &done);
            scope.spawn(move || {
                barrier.wait();
                let cpu = thread_cpu_ns();
                run_shard(shard, feed, t, per, done);
                feed.cpu_ns += thread_cpu_ns() - cpu;
            });
        }
        barrier.wait();
        let start = Instant::now();
        // The scope joins every thread before it returns.
        start
    })
    .elapsed()
}

fn time_ceiling(fws: &mut [Forwarder], feeds: &mut [Feed], iters: u64) -> Duration {
    let per = (iters as usize).div_ceil(fws.len());
    let barrier = Barrier::new(fws.len() + 1);
    std::thread::scope(|scope| {
        for (fw, feed) in fws.iter_mut().zip(feeds.iter_mut()) {
            let barrier = &barrier;
            scope.spawn(move || {
                barrier.wait();
                let cpu = thread_cpu_ns();
                run_unsharded(fw, feed, per);
                feed.cpu_ns += thread_cpu_ns() - cpu;
            });
        }
        barrier.wait();
        Instant::now()
    })
    .elapsed()
}

fn report(w: Workload, label: &str, shards: &[Shard], feeds: &[Feed]) {
    let forwarded: Vec<u64> = shards
        .iter()
        .map(|s| s.forwarder().status().counters.n_out_interests)
        .collect();
    let total: u64 = forwarded.iter().sum();
    let mean = total as f64 / shards.len() as f64;
    let max = *forwarded.iter().max().unwrap() as f64;
    let handed: u64 = shards.iter().map(|s| s.counters().n_handed_off).sum();
    let copies: u64 = shards.iter().map(|s| s.counters().n_data_copies).sum();
    let ring_full: u64 = shards.iter().map(|s| s.counters().n_ring_full).sum();
    let delivered: u64 = feeds.iter().map(|f| f.delivered).sum();
    let idle: u64 = feeds.iter().map(|f| f.idle_turns).sum();
    let satisfied: u64 = shards
        .iter()
        .map(|s| s.forwarder().status().counters.n_satisfied_interests)
        .sum();
    let cs_hits: u64 = shards.iter().map(|s| s.forwarder().status().cs.hits).sum();
    let received: u64 = shards
        .iter()
        .map(|s| s.forwarder().status().counters.n_in_interests)
        .sum();
    eprintln!(
        "shards/{}/{label}: imbalance {:.3} (Interests per shard {forwarded:?}), \
         hand-offs {:.2}/exchange, Data copies {:.3}/exchange, ring full {ring_full}, {idle} idle turns, \
         delivered {delivered} of {total} forwarded, {received} received, {cs_hits} CS hits, \
         {satisfied} satisfied",
        w.label(),
        if mean > 0.0 { max / mean } else { 0.0 },
        handed as f64 / total.max(1) as f64,
        copies as f64 / total.max(1) as f64,
    );
    assert_eq!(ring_full, 0);
    assert_eq!(delivered, total, "every exchange delivered");
    assert_eq!(satisfied, total, "every PIT entry satisfied");
}

/// CPU of a run: ns per exchange over every thread, all of it and without the time spent
/// giving the CPU up while blocked on another shard (which a machine with a core per shard
/// would rarely see; on this shared one the other shard's thread is often descheduled); and
/// the busiest thread's busy ns per exchange of the whole run, which bounds the rate when each
/// thread has a core of its own.
#[derive(Clone, Copy, Default)]
struct Cpu {
    all: f64,
    busy: f64,
    busiest: f64,
}

fn cpu_per_exchange(feeds: &[Feed]) -> Cpu {
    let cpu: u64 = feeds.iter().map(|f| f.cpu_ns).sum();
    let idle: u64 = feeds.iter().map(|f| f.idle_cpu_ns).sum();
    let busiest = feeds
        .iter()
        .map(|f| f.cpu_ns.saturating_sub(f.idle_cpu_ns))
        .max()
        .unwrap_or(0);
    let n = feeds.iter().map(|f| f.exchanges).sum::<u64>().max(1) as f64;
    Cpu {
        all: cpu as f64 / n,
        busy: cpu.saturating_sub(idle) as f64 / n,
        busiest: busiest as f64 / n,
    }
}

/// CPU per exchange of each run and the capacity it implies with a core per thread: the
/// busiest thread at 100 %, so `1 / busiest` exchanges per ns.
fn summary(w: Workload, cpu: &[(&str, Cpu)]) {
    let get = |l: &str| {
        cpu.iter()
            .find(|(x, _)| *x == l)
            .map_or(Cpu::default(), |(_, c)| *c)
    };
    let (one, two, ceiling) = (get("1shard"), get("2shards"), get("ceiling"));
    if two.all == 0.0 {
        return; // filtered out
    }
    let line: Vec<String> = cpu
        .iter()
        .map(|(l, c)| format!("{l} {:.0}/{:.0}/{:.0}", c.all, c.busy, c.busiest))
        .collect();
    eprintln!(
        "E1 {}: CPU ns per exchange all/busy/busiest thread: {}; capacity 2shards/1shard = \
         {:.2}x, ceiling/unsharded-1-thread = {:.2}x, 2shards/ceiling = {:.2}",
        w.label(),
        line.join(", "),
        one.busiest / two.busiest,
        get("unsharded").busiest / ceiling.busiest,
        ceiling.busiest / two.busiest,
    );
}

fn shards_bench(c: &mut Criterion) {
    for w in Workload::ALL {
        let mut group = c.benchmark_group(format!("shards/{}", w.label()));
        group.throughput(Throughput::Elements(1));

        let mut fw = unsharded(w);
        let mut feed = Feed::new(w, 0, Arc::default());
        group.bench_function(BenchmarkId::from_parameter("unsharded"), |b| {
            b.iter_custom(|iters| {
                let (start, cpu) = (Instant::now(), thread_cpu_ns());
                run_unsharded(&mut fw, &mut feed, iters as usize);
                feed.cpu_ns += thread_cpu_ns() - cpu;
                start.elapsed()
            });
        });

        let mut cpu = vec![("unsharded", cpu_per_exchange(std::slice::from_ref(&feed)))];
        for n in [1, 2] {
            let mut shards = sharded(w, n);
            let clock = Arc::new(AtomicU64::new(0));
            let mut feeds: Vec<Feed> = (0..n).map(|t| Feed::new(w, t, clock.clone())).collect();
            let label = if n == 1 { "1shard" } else { "2shards" };
            group.bench_function(BenchmarkId::from_parameter(label), |b| {
                b.iter_custom(|iters| time_sharded(&mut shards, &mut feeds, iters));
            });
            report(w, label, &shards, &feeds);
            cpu.push((label, cpu_per_exchange(&feeds)));
        }

        let mut fws = [unsharded(w), unsharded(w)];
        // Independent forwarders, independent clocks.
        let mut feeds = [
            Feed::new(w, 0, Arc::default()),
            Feed::new(w, 0, Arc::default()),
        ];
        group.bench_function(BenchmarkId::from_parameter("ceiling"), |b| {
            b.iter_custom(|iters| time_ceiling(&mut fws, &mut feeds, iters));
        });
        group.finish();
        cpu.push(("ceiling", cpu_per_exchange(&feeds)));
        summary(w, &cpu);
    }
}

/// The dispatch rule alone: one Interest and its Data routed (name parse, prefix hashes,
/// table look-up), per workload.
fn dispatch(c: &mut Criterion) {
    let mut group = c.benchmark_group("dispatch");
    group.throughput(Throughput::Elements(1));
    for w in [Workload::Uniform, Workload::DominantK4, Workload::Cbp10Span] {
        let d = Dispatcher::new(w.table(), 2).unwrap();
        let packets = w.packets(0);
        let mut i = 0;
        let mut now = Time::ZERO;
        group.bench_function(w.label(), |b| {
            b.iter(|| {
                let (interest, data) = &packets[i % POOL];
                i += 1;
                now += Duration::from_micros(10);
                (
                    black_box(d.route(now, interest)),
                    black_box(d.route(now, data)),
                )
            });
        });
    }
    group.finish();
}

criterion_group!(benches, dispatch, shards_bench);
criterion_main!(benches);
