//! Wake-up coalescing for the forwarding threads (`[forwarder] coalesce`).
//!
//! A forwarding thread that has handled packets and finds nothing more to do parks in
//! `epoll_wait`, and the next packet wakes it. Clients that send one packet per system call
//! (the ndn-cxx tools, most NDN applications) thus wake the forwarder for almost every
//! packet, and on a virtual machine a sleep and the wake-up that ends it cost more than
//! forwarding the packet. With coalescing on, such a thread first waits a fixed time (the
//! `wait`, 100 µs by default) without watching its sockets: packets that arrive meanwhile wake
//! nobody, and the next turn reads them together, as a network card's interrupt moderation
//! (`rx-usecs`) does. A thread that handled nothing since it last parked parks at once, so an
//! idle forwarder answers the first packet without delay; under load every hop adds up to the
//! wait (plus the kernel's timer slack) to a packet's latency.
//!
//! Clients that batch (several packets per write, as `nameway bench` and the Nameway
//! transport do) are hurt by it instead: their packets come in bursts a turn already takes
//! whole, and a timer wake-up costs more than the wake-up it replaces. So `"auto"` measures:
//! each thread runs epochs of [`EPOCH_PACKETS`] packets, reads its own CPU time at their ends,
//! and from time to time runs [`PROBE_EPOCHS`] epochs the other way; coalescing stays on only
//! while it costs at least [`MARGIN`] less CPU per packet than not coalescing. A light load
//! (an epoch longer than [`LIGHT_EPOCH`]) turns it off: it saves little CPU there and adds
//! latency. The decision is [`Tuner`] (no I/O, unit-tested); [`install`] hooks it into a
//! runtime's `on_thread_park`.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::Deserialize;

/// `[forwarder] coalesce`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Coalesce {
    /// Park as soon as there is nothing to do (`"off"`, the default).
    #[default]
    Off,
    /// Wait before parking after every turn that handled packets (`"on"`).
    On,
    /// Wait only while that costs less CPU per packet, measured by each thread (`"auto"`).
    Auto,
}

/// Packets per measuring epoch of `"auto"`.
pub const EPOCH_PACKETS: u64 = 4096;
/// Epochs run the other way at each probe.
pub const PROBE_EPOCHS: u32 = 2;
/// Epochs between probes after a decision; doubled each time the probe confirms it, up to
/// `SETTLE_EPOCHS << MAX_BACKOFF`.
pub const SETTLE_EPOCHS: u32 = 16;
/// Most doublings of [`SETTLE_EPOCHS`].
pub const MAX_BACKOFF: u32 = 4;
/// Coalescing must cost at most this share of not coalescing's CPU per packet to stay on.
pub const MARGIN: f64 = 0.9;
/// An epoch that takes longer than this is a light load: coalescing goes off.
pub const LIGHT_EPOCH: Duration = Duration::from_secs(1);
/// Longest `coalesce_wait_us`.
pub const MAX_WAIT_US: u64 = 10_000;

/// What every forwarding thread's coalescing did (`/metrics`, the status JSON): one set
/// per process ([`COUNTERS`]).
#[derive(Debug, Default)]
pub struct Counters {
    /// Waits before parking.
    pub waits: AtomicU64,
    /// Decisions of `"auto"` that turned coalescing on or off.
    pub switches: AtomicU64,
    /// Epochs measured by `"auto"` with coalescing on.
    pub epochs_on: AtomicU64,
    /// Epochs measured by `"auto"` with coalescing off.
    pub epochs_off: AtomicU64,
    /// Threads coalescing now.
    pub coalescing: AtomicI64,
}

crate::stats! {
    /// Wake-up coalescing (`[forwarder] coalesce`), summed over the forwarding threads.
    pub struct CoalesceStats {
        /// The mode configured: off, on or auto.
        pub mode: String = info("nameway_coalesce_info"; by "mode")
            help "The [forwarder] coalesce mode in force",
        /// The wait before parking, in microseconds.
        pub wait_us: u64 = gauge("nameway_coalesce_wait_microseconds")
            help "How long a forwarding thread waits before parking after a turn that handled packets, when it coalesces",
        /// Times a forwarding thread waited before parking.
        pub waits: u64 = counter("nameway_coalesce_waits")
            help "Times a forwarding thread waited before parking, so that packets arriving meanwhile are read in one turn",
        /// Times `"auto"` turned coalescing on or off.
        pub switches: u64 = counter("nameway_coalesce_switches")
            help "Times [forwarder] coalesce = \"auto\" turned coalescing on or off after measuring both",
        /// Epochs `"auto"` measured with coalescing on.
        pub epochs_on: u64 = counter("nameway_coalesce_epochs", "coalescing" = "on")
            help "Measuring epochs of [forwarder] coalesce = \"auto\", by whether the thread coalesced",
        /// Epochs `"auto"` measured with coalescing off.
        pub epochs_off: u64 = counter("nameway_coalesce_epochs", "coalescing" = "off"),
        /// Forwarding threads coalescing now.
        pub coalescing_threads: i64 = gauge("nameway_coalesce_threads")
            help "Forwarding threads coalescing their wake-ups now",
    }
}

/// The process's counters (a daemon is one process).
pub static COUNTERS: Counters = Counters {
    waits: AtomicU64::new(0),
    switches: AtomicU64::new(0),
    epochs_on: AtomicU64::new(0),
    epochs_off: AtomicU64::new(0),
    coalescing: AtomicI64::new(0),
};

impl Counters {
    /// The counters as statistics, with the configuration they run under.
    pub fn stats(&self, mode: Coalesce, wait: Duration) -> CoalesceStats {
        CoalesceStats {
            mode: match mode {
                Coalesce::Off => "off",
                Coalesce::On => "on",
                Coalesce::Auto => "auto",
            }
            .to_owned(),
            wait_us: wait.as_micros() as u64,
            waits: self.waits.load(Ordering::Relaxed),
            switches: self.switches.load(Ordering::Relaxed),
            epochs_on: self.epochs_on.load(Ordering::Relaxed),
            epochs_off: self.epochs_off.load(Ordering::Relaxed),
            coalescing_threads: self.coalescing.load(Ordering::Relaxed),
        }
    }
}

/// Where `"auto"` is between two epoch ends.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// Running the chosen way for `left` more epochs; `streak` probes in a row confirmed it.
    Settled { left: u32, streak: u32 },
    /// Running the other way for `left` more epochs, to compare with `baseline` (CPU
    /// nanoseconds per packet of the chosen way), `sum` and `epochs` so far.
    Probing {
        left: u32,
        baseline: f64,
        sum: f64,
        epochs: u32,
        streak: u32,
    },
}

/// One thread's coalescing decision. Sans-I/O: the caller gives it the packets handled and,
/// when it asks ([`Tuner::wants_clock`]), the time and the thread's CPU time.
#[derive(Debug)]
pub struct Tuner {
    mode: Coalesce,
    wait: Duration,
    /// Coalescing now.
    on: bool,
    phase: Phase,
    /// Packets in the current epoch.
    packets: u64,
    /// Wall and CPU time at the start of the current epoch (none before the first packet).
    start: Option<(Instant, Duration)>,
    /// CPU nanoseconds per packet of the last two epochs run the chosen way.
    recent: [Option<f64>; 2],
    /// The last probe's comparison, until taken: CPU ns per packet coalescing and not.
    compared: Option<(f64, f64)>,
}

/// What the tuner did at an epoch end (for the counters and the log).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EpochEnd {
    /// Nothing ended.
    None,
    /// An epoch ended; coalescing stays as it was.
    Measured {
        /// Whether the epoch ran coalescing.
        on: bool,
    },
    /// An epoch ended and coalescing was turned on or off.
    Switched {
        /// Whether the epoch ran coalescing.
        on: bool,
    },
}

impl Tuner {
    /// A tuner for `mode`, waiting `wait` when it coalesces. `"auto"` starts off, measuring.
    pub fn new(mode: Coalesce, wait: Duration) -> Self {
        Self {
            mode,
            wait,
            on: mode == Coalesce::On,
            // Two epochs the plain way give the first baseline, then the first probe.
            phase: Phase::Settled {
                left: PROBE_EPOCHS,
                streak: 0,
            },
            packets: 0,
            start: None,
            recent: [None; 2],
            compared: None,
        }
    }

    /// The comparison of the probe that just ended, if one did since the last call: CPU
    /// nanoseconds per packet with coalescing and without.
    pub fn take_comparison(&mut self) -> Option<(f64, f64)> {
        self.compared.take()
    }

    /// Whether the thread coalesces now.
    pub fn coalescing(&self) -> bool {
        self.on
    }

    /// Whether [`Tuner::before_park`] needs the clocks for `packets` more packets (an epoch
    /// starts or ends): the caller reads them only then.
    pub fn wants_clock(&self, packets: u64) -> bool {
        self.mode == Coalesce::Auto
            && packets > 0
            && (self.start.is_none() || self.packets + packets >= EPOCH_PACKETS)
    }

    /// The thread is about to park after handling `packets` since it last parked; `clock`
    /// is the wall time and the thread's CPU time when [`Tuner::wants_clock`] said so (else
    /// ignored; `None` when the CPU time cannot be read, which keeps coalescing off).
    /// Returns how long to wait before parking, and what happened to the epoch.
    pub fn before_park(
        &mut self,
        packets: u64,
        clock: Option<(Instant, Duration)>,
    ) -> (Option<Duration>, EpochEnd) {
        let mut end = EpochEnd::None;
        if self.mode == Coalesce::Auto && packets > 0 {
            match (self.start, clock) {
                (_, None) if self.wants_clock(packets) => {
                    // No CPU clock: no measurement, so no coalescing.
                    if self.on {
                        end = EpochEnd::Switched { on: true };
                    }
                    self.on = false;
                    self.start = None;
                    self.packets = 0;
                }
                (None, Some(now)) => {
                    self.start = Some(now);
                    self.packets = 0;
                }
                (Some(start), Some(now)) if self.packets + packets >= EPOCH_PACKETS => {
                    let n = self.packets + packets;
                    end = self.epoch_end(start, now, n);
                    self.start = Some(now);
                    self.packets = 0;
                }
                _ => self.packets += packets,
            }
        }
        let wait = (self.on && packets > 0).then_some(self.wait);
        (wait, end)
    }

    /// An epoch of `n` packets from `start` to `now` ended: decide.
    fn epoch_end(
        &mut self,
        start: (Instant, Duration),
        now: (Instant, Duration),
        n: u64,
    ) -> EpochEnd {
        let ran_on = self.on;
        let cost = now.1.saturating_sub(start.1).as_nanos() as f64 / n as f64;
        if now.0.saturating_duration_since(start.0) > LIGHT_EPOCH {
            // A light load: little to save, latency to lose. Plain, and measure again.
            self.on = false;
            self.recent = [None; 2];
            self.phase = Phase::Settled {
                left: PROBE_EPOCHS,
                streak: 0,
            };
            return if ran_on {
                EpochEnd::Switched { on: true }
            } else {
                EpochEnd::Measured { on: false }
            };
        }
        match self.phase {
            Phase::Settled { left, streak } => {
                self.recent = [self.recent[1], Some(cost)];
                if left > 1 {
                    self.phase = Phase::Settled {
                        left: left - 1,
                        streak,
                    };
                } else {
                    let known: Vec<f64> = self.recent.iter().flatten().copied().collect();
                    let baseline = known.iter().sum::<f64>() / known.len().max(1) as f64;
                    self.phase = Phase::Probing {
                        left: PROBE_EPOCHS,
                        baseline,
                        sum: 0.0,
                        epochs: 0,
                        streak,
                    };
                    self.on = !self.on;
                }
                EpochEnd::Measured { on: ran_on }
            }
            Phase::Probing {
                left,
                baseline,
                sum,
                epochs,
                streak,
            } => {
                let (sum, epochs) = (sum + cost, epochs + 1);
                if left > 1 {
                    self.phase = Phase::Probing {
                        left: left - 1,
                        baseline,
                        sum,
                        epochs,
                        streak,
                    };
                    return EpochEnd::Measured { on: ran_on };
                }
                let probe = sum / f64::from(epochs);
                // The probe ran `ran_on`; the chosen way is the other one.
                let (on_cost, off_cost) = if ran_on {
                    (probe, baseline)
                } else {
                    (baseline, probe)
                };
                self.compared = Some((on_cost, off_cost));
                let choose_on = on_cost < MARGIN * off_cost;
                let confirmed = choose_on != ran_on;
                let streak = if confirmed {
                    (streak + 1).min(MAX_BACKOFF)
                } else {
                    0
                };
                self.phase = Phase::Settled {
                    left: SETTLE_EPOCHS << streak,
                    streak,
                };
                self.on = choose_on;
                if confirmed {
                    // Back to the way it was before the probe.
                    EpochEnd::Measured { on: ran_on }
                } else {
                    // The probe's way won: the last measurements are of it.
                    self.recent = [None, Some(probe)];
                    EpochEnd::Switched { on: ran_on }
                }
            }
        }
    }
}

thread_local! {
    /// Packets the forwarding loop on this thread handled since the thread last parked.
    static HANDLED: Cell<u64> = const { Cell::new(0) };
    /// This thread's tuner, made at its first park.
    static TUNER: RefCell<Option<Tuner>> = const { RefCell::new(None) };
}

/// Notes that the forwarding loop on this thread handled `n` packets (the hook reads it).
pub fn note_packets(n: usize) {
    HANDLED.with(|h| h.set(h.get().saturating_add(n as u64)));
}

/// The thread's CPU time (user and system).
fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        t.tv_sec.max(0) as u64,
        t.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// Installs coalescing on a current-thread runtime being built: every thread that parks
/// runs its own [`Tuner`]. `"off"` installs nothing.
pub fn install(builder: &mut tokio::runtime::Builder, mode: Coalesce, wait: Duration) {
    if mode == Coalesce::Off {
        return;
    }
    builder.on_thread_park(move || before_park(mode, wait, &COUNTERS));
}

fn before_park(mode: Coalesce, wait: Duration, counters: &Counters) {
    let packets = HANDLED.with(|h| h.replace(0));
    let sleep = TUNER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let tuner = slot.get_or_insert_with(|| {
            if mode == Coalesce::On {
                counters.coalescing.fetch_add(1, Ordering::Relaxed);
            }
            Tuner::new(mode, wait)
        });
        let was = tuner.coalescing();
        let clock = tuner
            .wants_clock(packets)
            .then(|| (Instant::now(), thread_cpu()));
        let (sleep, end) = tuner.before_park(packets, clock);
        match end {
            EpochEnd::None => {}
            EpochEnd::Measured { on } | EpochEnd::Switched { on } => {
                let c = if on {
                    &counters.epochs_on
                } else {
                    &counters.epochs_off
                };
                c.fetch_add(1, Ordering::Relaxed);
            }
        }
        if let EpochEnd::Switched { .. } = end {
            counters.switches.fetch_add(1, Ordering::Relaxed);
        }
        if let Some((on_ns, off_ns)) = tuner.take_comparison() {
            tracing::debug!(
                on_ns_per_packet = on_ns as u64,
                off_ns_per_packet = off_ns as u64,
                coalescing = tuner.coalescing(),
                "coalescing measured both ways"
            );
        }
        match (was, tuner.coalescing()) {
            (false, true) => {
                counters.coalescing.fetch_add(1, Ordering::Relaxed);
            }
            (true, false) => {
                counters.coalescing.fetch_sub(1, Ordering::Relaxed);
            }
            _ => {}
        }
        sleep
    });
    if let Some(d) = sleep {
        counters.waits.fetch_add(1, Ordering::Relaxed);
        std::thread::sleep(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WAIT: Duration = Duration::from_micros(100);

    /// Runs one epoch of `EPOCH_PACKETS` packets in one park, costing `ns_per_packet` of
    /// CPU over `wall`, from the clocks in `t`; returns what the tuner did at its end.
    fn epoch(
        tuner: &mut Tuner,
        t: &mut (Instant, Duration),
        ns_per_packet: u64,
        wall: Duration,
    ) -> EpochEnd {
        if tuner.wants_clock(1) && tuner.start.is_none() {
            tuner.before_park(1, Some(*t));
            tuner.packets = 0;
        }
        t.0 += wall;
        t.1 += Duration::from_nanos(ns_per_packet * EPOCH_PACKETS);
        assert!(tuner.wants_clock(EPOCH_PACKETS));
        tuner.before_park(EPOCH_PACKETS, Some(*t)).1
    }

    /// Feeds epochs whose cost depends on whether the tuner coalesces, and returns how
    /// many of `n` epochs ran coalescing.
    fn run(tuner: &mut Tuner, t: &mut (Instant, Duration), n: usize, on: u64, off: u64) -> usize {
        let mut ran_on = 0;
        for _ in 0..n {
            let cost = if tuner.coalescing() { on } else { off };
            ran_on += usize::from(tuner.coalescing());
            epoch(tuner, t, cost, Duration::from_millis(100));
        }
        ran_on
    }

    fn clocks() -> (Instant, Duration) {
        (Instant::now(), Duration::from_secs(1))
    }

    #[test]
    fn off_never_waits_and_on_waits_only_after_a_turn_that_handled_packets() {
        let mut off = Tuner::new(Coalesce::Off, WAIT);
        assert_eq!(off.before_park(10, None), (None, EpochEnd::None));
        assert!(!off.wants_clock(1 << 20));
        let mut on = Tuner::new(Coalesce::On, WAIT);
        assert_eq!(on.before_park(1, None), (Some(WAIT), EpochEnd::None));
        assert_eq!(on.before_park(0, None), (None, EpochEnd::None));
        assert!(!on.wants_clock(1 << 20));
    }

    #[test]
    fn auto_turns_coalescing_on_when_it_costs_less_per_packet() {
        let mut tuner = Tuner::new(Coalesce::Auto, WAIT);
        let mut t = clocks();
        // Coalescing costs 14 µs per packet, not coalescing 22: on after the first probe.
        assert_eq!(run(&mut tuner, &mut t, 2, 14_000, 22_000), 0);
        assert!(tuner.coalescing(), "probes after two plain epochs");
        assert_eq!(tuner.take_comparison(), None);
        run(&mut tuner, &mut t, 2, 14_000, 22_000);
        assert!(tuner.coalescing(), "the probe won and stays");
        // What the debug log reports: the two costs it compared, once.
        assert_eq!(tuner.take_comparison(), Some((14_000.0, 22_000.0)));
        assert_eq!(tuner.take_comparison(), None);
        // From then on it runs coalescing but for the probes: at most 2 epochs in 18 off.
        let on = run(&mut tuner, &mut t, 200, 14_000, 22_000);
        assert!(on >= 180, "coalesced {on} of 200 epochs");
        assert_eq!(tuner.before_park(1, None).0, Some(WAIT));
    }

    #[test]
    fn auto_keeps_coalescing_off_for_batching_clients() {
        let mut tuner = Tuner::new(Coalesce::Auto, WAIT);
        let mut t = clocks();
        // Coalescing costs more (a timer wake-up per turn for no fewer turns).
        let on = run(&mut tuner, &mut t, 300, 5_000, 3_000);
        // Probes only: 2 epochs each, after 16, 32, 64, 128, 256 epochs.
        assert!(on <= 2 * 5, "coalesced {on} of 300 epochs");
        assert!(!tuner.coalescing());
    }

    #[test]
    fn auto_needs_the_margin_to_coalesce() {
        let mut tuner = Tuner::new(Coalesce::Auto, WAIT);
        let mut t = clocks();
        // 5 % cheaper is within the noise of a shared machine: not worth the latency.
        let on = run(&mut tuner, &mut t, 100, 9_500, 10_000);
        assert!(on <= 2 * 4, "coalesced {on} of 100 epochs");
    }

    #[test]
    fn auto_follows_the_load_when_it_changes() {
        let mut tuner = Tuner::new(Coalesce::Auto, WAIT);
        let mut t = clocks();
        run(&mut tuner, &mut t, 40, 10_000, 20_000);
        assert!(tuner.coalescing());
        // Batching clients take over: the next probe (off) wins and it turns off.
        run(&mut tuner, &mut t, 400, 6_000, 3_000);
        assert!(!tuner.coalescing());
        let later = run(&mut tuner, &mut t, 100, 6_000, 3_000);
        assert!(later <= 2 * 2, "coalesced {later} of the last 100 epochs");
    }

    #[test]
    fn a_light_load_turns_coalescing_off() {
        let mut tuner = Tuner::new(Coalesce::Auto, WAIT);
        let mut t = clocks();
        run(&mut tuner, &mut t, 4, 10_000, 20_000);
        assert!(tuner.coalescing());
        // An epoch that takes two seconds: off at once.
        let end = epoch(&mut tuner, &mut t, 10_000, Duration::from_secs(2));
        assert_eq!(end, EpochEnd::Switched { on: true });
        assert!(!tuner.coalescing());
        assert_eq!(tuner.before_park(1, None).0, None);
    }

    #[test]
    fn no_cpu_clock_means_no_coalescing() {
        let mut tuner = Tuner::new(Coalesce::Auto, WAIT);
        let mut t = clocks();
        run(&mut tuner, &mut t, 4, 10_000, 20_000);
        assert!(tuner.coalescing());
        tuner.packets = EPOCH_PACKETS - 1;
        assert!(tuner.wants_clock(1));
        let (wait, end) = tuner.before_park(1, None);
        assert_eq!((wait, end), (None, EpochEnd::Switched { on: true }));
        assert!(!tuner.coalescing());
    }

    #[test]
    fn the_thread_cpu_clock_advances_with_work() {
        let a = thread_cpu();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(thread_cpu() > a);
    }
}
