//! Congestion control and RTT estimation for the consumer (sans-I/O: time is passed in).
//!
//! - [`RttEstimator`]: RFC 6298 (SRTT, RTTVAR, RTO = SRTT + 4·RTTVAR, bounded, doubled on
//!   each timeout, reset by the next good sample), fed only with samples of segments sent
//!   once (Karn's rule).
//! - [`Controller`]: the window, by one of four algorithms ([`CcKind`]):
//!   - slow start ends early on delay, as HyStart does in Linux CUBIC: eight RTT samples in a
//!     row above the smallest RTT by clamp(min/8, 4 ms, 16 ms). On a host the queue that builds
//!     up is the consumer's own socket buffer, which never drops but inflates the RTT past the
//!     RTO, so waiting for a loss means a burst of spurious timeouts. On a long path, slow
//!     start's own burst (two segments sent per one acknowledged) inflates the late samples of
//!     a round well before the path is full, so there (smallest RTT 2 ms or more) the rise
//!     first starts Conservative Slow Start (growth / 4, from HyStart++, RFC 9406), and the
//!     first eight samples of the next round decide: back under the threshold (the queue
//!     drained: it was the burst), slow start resumes; still above, slow start ends with that
//!     round;
//!   - `fixed`: a constant window (ndnget's `--fixed-window`);
//!   - `aimd`: slow start to ssthresh, then +1 segment per RTT; halved on loss, at most once
//!     per RTT (ndncatchunks' AIMD);
//!   - `cubic`: RFC 8312 CUBIC (C = 0.4, β = 0.7, fast convergence, TCP-friendly region);
//!   - for both, a loss while the path shows no queue is taken as random, not congestion, as
//!     TCP Veno does (Fu and Liew, 2003): the segments this fetch keeps queued in the network,
//!     window × (1 − min RTT / last RTT), are fewer than [`RANDOM_LOSS_BACKLOG`], so the window
//!     is cut to what the path delivered in the last two rounds, rate × min RTT (TCP
//!     Westwood+) but never below 0.8 of it, instead of 0.5 or 0.7 (CUBIC's estimate of
//!     standard TCP then grows one segment per RTT, as AIMD does, not 0.53). A loss at a full
//!     buffer comes with the RTT inflated by that buffer and still gets the full cut; a lossy
//!     link (radio) no longer keeps the window at the size the loss rate alone allows;
//!   - `delay`: RAAQM-like delay-based control (Carofiglio et al.): each RTT sample between
//!     the recent minimum and maximum gives a probability of a multiplicative decrease, so the
//!     window backs off as queues build, before losses; recent RTTs that spread by less than
//!     an eighth of the smallest RTT are taken as jitter and cause no decrease.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

/// A congestion-control algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcKind {
    /// Constant window.
    Fixed,
    /// Additive increase, multiplicative decrease.
    Aimd,
    /// CUBIC (RFC 8312).
    Cubic,
    /// RAAQM-like delay-based control.
    Delay,
}

impl CcKind {
    /// Every algorithm.
    pub const ALL: [Self; 4] = [Self::Fixed, Self::Aimd, Self::Cubic, Self::Delay];

    /// The name tools print and accept.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Fixed => "fixed",
            Self::Aimd => "aimd",
            Self::Cubic => "cubic",
            Self::Delay => "delay",
        }
    }
}

impl fmt::Display for CcKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CcKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "fixed" => Ok(Self::Fixed),
            "aimd" => Ok(Self::Aimd),
            "cubic" => Ok(Self::Cubic),
            "delay" | "raaqm" => Ok(Self::Delay),
            _ => Err(format!(
                "unknown congestion control {s:?}: use fixed, aimd, cubic or delay"
            )),
        }
    }
}

/// RFC 6298 retransmission timer.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    rto: Duration,
    backoff: u32,
    min_rto: Duration,
    max_rto: Duration,
    /// Smallest, largest and sum of samples, and their count.
    pub min: Duration,
    /// Largest sample.
    pub max: Duration,
    sum: Duration,
    /// Samples taken.
    pub samples: u64,
}

impl RttEstimator {
    /// An estimator with RTO bounded to `min_rto..=max_rto` (initial RTO 1 s, clamped); a
    /// `max_rto` below `min_rto` is raised to it (`nameway get --min-rto 10000` means RTOs of
    /// 10 s, not a contradiction with the 4-s default maximum).
    pub fn new(min_rto: Duration, max_rto: Duration) -> Self {
        let max_rto = max_rto.max(min_rto);
        Self {
            srtt: None,
            rttvar: Duration::ZERO,
            rto: Duration::from_secs(1).clamp(min_rto, max_rto),
            backoff: 0,
            min_rto,
            max_rto,
            min: Duration::MAX,
            max: Duration::ZERO,
            sum: Duration::ZERO,
            samples: 0,
        }
    }

    /// Takes one sample.
    pub fn sample(&mut self, rtt: Duration) {
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = rtt / 2;
            }
            Some(srtt) => {
                let diff = srtt.abs_diff(rtt);
                self.rttvar = self.rttvar * 3 / 4 + diff / 4;
                self.srtt = Some(srtt * 7 / 8 + rtt / 8);
            }
        }
        self.backoff = 0;
        let srtt = self.srtt.unwrap_or(rtt);
        self.rto = (srtt + (self.rttvar * 4).max(Duration::from_millis(1)))
            .clamp(self.min_rto, self.max_rto);
        self.min = self.min.min(rtt);
        self.max = self.max.max(rtt);
        self.sum += rtt;
        self.samples += 1;
    }

    /// Doubles the RTO after a timeout (up to the maximum).
    pub fn back_off(&mut self) {
        self.backoff = (self.backoff + 1).min(16);
    }

    /// The current retransmission timeout.
    pub fn rto(&self) -> Duration {
        self.rto
            .saturating_mul(1 << self.backoff.min(16))
            .min(self.max_rto)
    }

    /// Smoothed RTT (the first sample until there are more; the RTO before any).
    pub fn srtt(&self) -> Duration {
        self.srtt.unwrap_or(self.rto)
    }

    /// Mean of the samples.
    pub fn mean(&self) -> Duration {
        if self.samples == 0 {
            Duration::ZERO
        } else {
            // Not `sum / samples as u32`: a stream fetched for hours can take 2^32 samples.
            let nanos = self.sum.as_nanos() / u128::from(self.samples);
            Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
        }
    }
}

/// Tuning of a [`Controller`].
#[derive(Clone, Copy, Debug)]
pub struct CcOptions {
    /// The algorithm.
    pub kind: CcKind,
    /// Initial window (the whole window for `fixed`).
    pub initial_window: f64,
    /// Largest window.
    pub max_window: f64,
}

impl Default for CcOptions {
    fn default() -> Self {
        Self {
            kind: CcKind::Cubic,
            initial_window: 2.0,
            max_window: 4096.0,
        }
    }
}

/// A window size as a user writes it (`--window`, `--max-window`, `NW_OPT_WINDOW`): a number
/// of segments, 1 or more, possibly fractional, or `inf` for no limit; `nan` and anything
/// under 1 are refused.
///
/// # Errors
/// One line naming the value.
pub fn parse_window(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|w| *w >= 1.0)
        .ok_or_else(|| format!("window {text:?} is not a number of segments, 1 or more (or inf)"))
}

/// A congestion window that grows on acknowledgements and shrinks on loss.
#[derive(Clone, Debug)]
pub struct Controller {
    options: CcOptions,
    cwnd: f64,
    ssthresh: f64,
    /// Losses reacted to only if the lost segment was sent after the last decrease.
    last_decrease: Option<Instant>,
    /// CUBIC: window before the last reduction, when the epoch began, and K (the time the
    /// cubic curve takes from the epoch's window back to `w_max`).
    w_max: f64,
    epoch: Option<Instant>,
    k: f64,
    /// Window estimate of standard TCP in CUBIC's TCP-friendly region, and its growth per RTT.
    w_est: f64,
    w_est_alpha: f64,
    /// Delay: recent RTT samples (a ring) and the random state.
    recent: Vec<Duration>,
    recent_next: usize,
    rng: u64,
    /// The smallest RTT seen.
    min_rtt: Option<Duration>,
    /// Slow start's end: samples in a row above the delay threshold, the current round
    /// (started when, the smallest of its first samples, how many), Conservative Slow Start.
    above: u32,
    round_start: Option<Instant>,
    round_min: Option<Duration>,
    round_samples: u32,
    css: Option<Css>,
    /// The latest RTT sample (random-loss test).
    last_rtt: Option<Duration>,
    /// Decreases for losses judged random (included in `decreases`).
    pub random_losses: u64,
    /// Times slow start was left on delay rather than loss.
    pub hystart_exits: u64,
    /// Times the window was decreased.
    pub decreases: u64,
    /// Largest window reached.
    pub peak: f64,
    /// Delivery rate (segments per second) of the last two rounds of one smoothed RTT, and
    /// where the current round began (time, segments delivered by then).
    rates: [f64; 2],
    delivered: u64,
    rate_mark: Option<(Instant, u64)>,
}

/// CUBIC's scaling constant.
const CUBIC_C: f64 = 0.4;
/// CUBIC's multiplicative decrease.
const CUBIC_BETA: f64 = 0.7;
/// Growth per RTT of CUBIC's estimate of standard TCP after a congestion cut (RFC 9438 §4.3:
/// 3(1 − β)/(1 + β), so that cutting to 0.7 and growing this fast averages what AIMD's 0.5
/// and 1 do). After a random-loss cut both cut to 0.8, so it grows as AIMD does: 1.
const CUBIC_ALPHA: f64 = 3.0 * (1.0 - CUBIC_BETA) / (1.0 + CUBIC_BETA);
/// AIMD's multiplicative decrease.
const AIMD_BETA: f64 = 0.5;
/// Loss discrimination (AIMD, CUBIC): below this many of our segments queued in the network a
/// loss is taken as random (Veno's β of 3 segments) and the window is cut by
/// [`RANDOM_LOSS_BETA`] only.
pub const RANDOM_LOSS_BACKLOG: f64 = 3.0;
/// Multiplicative decrease on a loss judged random (Veno: 4/5).
pub const RANDOM_LOSS_BETA: f64 = 0.8;
/// Delay-based: multiplicative decrease, probability bounds and samples remembered.
const DELAY_BETA: f64 = 0.8;
const DELAY_P_MIN: f64 = 0.000_01;
const DELAY_P_MAX: f64 = 0.01;
const DELAY_SAMPLES: usize = 30;
/// Slow start's end (HyStart, with HyStart++'s Conservative Slow Start): bounds of the delay
/// threshold, samples (in a row; at a round's start), CSS's growth divisor, and the round
/// boundaries CSS lasts (the rest of the round it began in, and the next).
const HYSTART_MIN_ETA: Duration = Duration::from_millis(4);
const HYSTART_MAX_ETA: Duration = Duration::from_millis(16);
const HYSTART_SAMPLES: u32 = 8;
const CSS_GROWTH_DIVISOR: f64 = 4.0;
const CSS_ROUNDS: u32 = 2;
/// Paths whose smallest RTT is under this are on one host (or a LAN): slow start ends at the
/// rise itself, without Conservative Slow Start.
const CSS_MIN_RTT: Duration = Duration::from_millis(2);

/// Conservative Slow Start: entered when the RTT rose; left for slow start if the next round
/// starts back under the threshold, or for congestion avoidance at the end of that round.
#[derive(Clone, Copy, Debug)]
struct Css {
    /// Round boundaries crossed since it began.
    rounds: u32,
}

impl Controller {
    /// A controller starting at `options.initial_window`.
    pub fn new(options: CcOptions) -> Self {
        let cwnd = options
            .initial_window
            .clamp(1.0, options.max_window.max(1.0));
        Self {
            options,
            cwnd,
            ssthresh: f64::INFINITY,
            last_decrease: None,
            w_max: 0.0,
            epoch: None,
            k: 0.0,
            w_est: cwnd,
            w_est_alpha: CUBIC_ALPHA,
            recent: Vec::with_capacity(DELAY_SAMPLES),
            recent_next: 0,
            rng: nameway_wire::random::u64() | 1,
            min_rtt: None,
            above: 0,
            round_start: None,
            round_min: None,
            round_samples: 0,
            css: None,
            last_rtt: None,
            random_losses: 0,
            hystart_exits: 0,
            decreases: 0,
            peak: cwnd,
            rates: [0.0; 2],
            delivered: 0,
            rate_mark: None,
        }
    }

    /// Segments that may be in flight now.
    pub fn window(&self) -> usize {
        self.cwnd.floor().max(1.0) as usize
    }

    /// The algorithm.
    pub fn kind(&self) -> CcKind {
        self.options.kind
    }

    /// A segment was acknowledged (its Data arrived) at `now`, with an RTT sample if it was
    /// sent only once; `srtt` is the current smoothed RTT.
    pub fn on_ack(&mut self, now: Instant, rtt: Option<Duration>, srtt: Duration) {
        if let Some(rtt) = rtt {
            self.hystart(now, rtt, srtt);
            self.last_rtt = Some(rtt);
        }
        self.measure_rate(now, srtt);
        match self.options.kind {
            CcKind::Fixed => {}
            CcKind::Aimd => {
                if self.cwnd < self.ssthresh {
                    self.cwnd += self.slow_start_step();
                } else {
                    self.cwnd += 1.0 / self.cwnd;
                }
            }
            CcKind::Cubic => self.cubic_ack(now, srtt),
            CcKind::Delay => {
                if self.cwnd < self.ssthresh {
                    self.cwnd += self.slow_start_step();
                } else {
                    self.cwnd += 1.0 / self.cwnd;
                }
                if let Some(rtt) = rtt {
                    self.delay_sample(now, rtt, srtt);
                }
            }
        }
        self.cwnd = self.cwnd.min(self.options.max_window);
        self.peak = self.peak.max(self.cwnd);
    }

    /// A segment sent at `sent` was lost (timeout or congestion Nack), noticed at `now`.
    pub fn on_loss(&mut self, now: Instant, sent: Instant) {
        if self.options.kind == CcKind::Fixed {
            return;
        }
        if self.last_decrease.is_some_and(|t| sent < t) {
            return; // this window already reacted
        }
        let random = self.options.kind != CcKind::Delay && self.backlog() < RANDOM_LOSS_BACKLOG;
        let beta = match self.options.kind {
            CcKind::Cubic => {
                // Fast convergence: release bandwidth when the window stopped short of W_max
                // (not for a random loss, which says nothing about other flows).
                self.w_max = if self.cwnd < self.w_max && !random {
                    self.cwnd * (1.0 + CUBIC_BETA) / 2.0
                } else {
                    self.cwnd
                };
                self.epoch = None;
                CUBIC_BETA
            }
            CcKind::Delay => DELAY_BETA,
            _ => AIMD_BETA,
        };
        self.w_est_alpha = if random { 1.0 } else { CUBIC_ALPHA };
        if random {
            self.random_losses += 1;
            // Westwood+ (Mascolo et al.): back to what the path delivered, rate × min RTT,
            // when that is more than Veno's 0.8: with no queue the window was all in use and
            // the loss says nothing about capacity.
            let floor = self.cwnd * beta.max(RANDOM_LOSS_BETA);
            let delivered = self.delivered_window().min(self.cwnd);
            self.cut_to(now, floor.max(delivered));
        } else {
            self.cut_to(now, self.cwnd * beta);
        }
    }

    /// Our segments queued in the network by the latest RTT sample (Veno's N): the window
    /// times the share of the RTT above the smallest one. Infinite without samples, so a loss
    /// before any RTT is known counts as congestion.
    fn backlog(&self) -> f64 {
        match (self.min_rtt, self.last_rtt) {
            (Some(min), Some(last)) if !last.is_zero() => {
                self.cwnd * (1.0 - min.as_secs_f64() / last.as_secs_f64())
            }
            _ => f64::INFINITY,
        }
    }

    /// Growth per acknowledged segment below ssthresh: one in slow start, a quarter in
    /// Conservative Slow Start.
    fn slow_start_step(&self) -> f64 {
        if self.css.is_some() {
            1.0 / CSS_GROWTH_DIVISOR
        } else {
            1.0
        }
    }

    /// Slow start's end on delay: eight RTT samples in a row above the smallest RTT by
    /// clamp(min/8, 4 ms, 16 ms) start Conservative Slow Start (growth / 4, from HyStart++,
    /// RFC 9406); the first eight samples of the next round (rounds of one smoothed RTT) tell a
    /// standing queue from the round's own burst: back under the threshold, slow start
    /// resumes; otherwise it ends when that round does.
    fn hystart(&mut self, now: Instant, rtt: Duration, srtt: Duration) {
        let min = *self.min_rtt.get_or_insert(rtt);
        if rtt < min {
            self.min_rtt = Some(rtt);
        }
        if self.cwnd >= self.ssthresh || self.options.kind == CcKind::Fixed {
            return;
        }
        let threshold = min + (min / 8).clamp(HYSTART_MIN_ETA, HYSTART_MAX_ETA);
        let start = *self.round_start.get_or_insert(now);
        if now.duration_since(start) >= srtt {
            self.round_start = Some(now);
            self.round_min = None;
            self.round_samples = 0;
            if let Some(css) = &mut self.css {
                css.rounds += 1;
                if css.rounds >= CSS_ROUNDS {
                    self.css = None;
                    self.ssthresh = self.cwnd;
                    self.hystart_exits += 1;
                    return;
                }
            }
        }
        if self.css.is_none() {
            if rtt > threshold {
                self.above += 1;
                if self.above >= HYSTART_SAMPLES {
                    self.above = 0;
                    if min < CSS_MIN_RTT {
                        // On a host: the queue is the consumer's own socket buffer, not a
                        // burst at a link; waiting a round more costs spurious losses.
                        self.ssthresh = self.cwnd;
                        self.hystart_exits += 1;
                        return;
                    }
                    self.css = Some(Css { rounds: 0 });
                }
            } else {
                self.above = 0;
            }
        } else if self.round_samples < HYSTART_SAMPLES {
            self.round_samples += 1;
            let round_min = *self
                .round_min
                .insert(self.round_min.map_or(rtt, |m| m.min(rtt)));
            if self.round_samples == HYSTART_SAMPLES && round_min <= threshold {
                self.css = None;
            }
        }
    }

    /// Counts one delivered segment; at each round of one smoothed RTT (at least 1 ms) the
    /// round's delivery rate replaces the older of the two kept.
    fn measure_rate(&mut self, now: Instant, srtt: Duration) {
        self.delivered += 1;
        let Some((start, at)) = self.rate_mark else {
            self.rate_mark = Some((now, self.delivered));
            return;
        };
        let elapsed = now.saturating_duration_since(start);
        if elapsed >= srtt.max(Duration::from_millis(1)) {
            let rate = (self.delivered - at) as f64 / elapsed.as_secs_f64();
            self.rates = [self.rates[1], rate];
            self.rate_mark = Some((now, self.delivered));
        }
    }

    /// The window the path delivered in the last two rounds: the higher rate × min RTT.
    fn delivered_window(&self) -> f64 {
        let rate = self.rates[0].max(self.rates[1]);
        self.min_rtt.map_or(0.0, |m| rate * m.as_secs_f64())
    }

    /// Cuts the window to `window`: at least two segments, but never growing a window of one.
    fn cut_to(&mut self, now: Instant, window: f64) {
        self.css = None;
        self.cwnd = window
            .max(2.0_f64.min(self.options.max_window))
            .min(self.cwnd);
        self.ssthresh = self.cwnd;
        self.w_est = self.cwnd;
        self.last_decrease = Some(now);
        self.decreases += 1;
    }

    fn cubic_ack(&mut self, now: Instant, srtt: Duration) {
        if self.cwnd < self.ssthresh {
            self.cwnd += self.slow_start_step();
            return;
        }
        let epoch = match self.epoch {
            Some(epoch) => epoch,
            None => {
                if self.w_max < self.cwnd {
                    self.w_max = self.cwnd;
                }
                self.w_est = self.cwnd;
                // RFC 9438 §4.2: K from the window the epoch starts at, so the curve starts
                // there whatever the cut was (0.7, or 0.8 after a random loss).
                self.k = ((self.w_max - self.cwnd).max(0.0) / CUBIC_C).cbrt();
                self.epoch = Some(now);
                now
            }
        };
        let k = self.k;
        let t = now.duration_since(epoch).as_secs_f64() + srtt.as_secs_f64();
        let target = CUBIC_C * (t - k).powi(3) + self.w_max;
        // TCP-friendly estimate (RFC 8312 §4.2).
        self.w_est += self.w_est_alpha / self.cwnd;
        let target = target.max(self.w_est);
        if target > self.cwnd {
            self.cwnd += ((target - self.cwnd) / self.cwnd).min(1.0);
        } else {
            self.cwnd += 0.01 / self.cwnd;
        }
    }

    fn delay_sample(&mut self, now: Instant, rtt: Duration, srtt: Duration) {
        if self.recent.len() < DELAY_SAMPLES {
            self.recent.push(rtt);
        } else if let Some(slot) = self.recent.get_mut(self.recent_next) {
            *slot = rtt;
        }
        self.recent_next = (self.recent_next + 1) % DELAY_SAMPLES;
        if self.recent.len() < DELAY_SAMPLES {
            return;
        }
        let min = self.recent.iter().min().copied().unwrap_or(rtt);
        let max = self.recent.iter().max().copied().unwrap_or(rtt);
        // A spread under an eighth of the path's smallest RTT is jitter (timers, scheduling),
        // not a queue: scaled to [0, 1] it would otherwise back off at random on a path
        // that is not congested, and a lossy but idle link would never fill.
        let floor = self.min_rtt.unwrap_or(min) / 8;
        if max <= min || max - min < floor {
            return;
        }
        let position = (rtt.saturating_sub(min)).as_secs_f64() / (max - min).as_secs_f64();
        let p = DELAY_P_MIN + (DELAY_P_MAX - DELAY_P_MIN) * position.clamp(0.0, 1.0);
        // At most one decrease per smoothed RTT, as for losses.
        if self
            .last_decrease
            .is_some_and(|t| now.duration_since(t) < srtt)
        {
            return;
        }
        if self.uniform() < p {
            self.cut_to(now, self.cwnd * DELAY_BETA);
        }
    }

    /// A uniform number in [0, 1) (xorshift64*; not for secrets).
    fn uniform(&mut self) -> f64 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        (self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(kind: CcKind, acks: usize) -> Controller {
        run_at(kind, acks, Instant::now())
    }

    /// `acks` acknowledgements one millisecond apart from `start`, 10-ms RTT.
    fn run_at(kind: CcKind, acks: usize, start: Instant) -> Controller {
        let mut c = Controller::new(CcOptions {
            kind,
            initial_window: 2.0,
            max_window: 1000.0,
        });
        for i in 0..acks {
            let now = start + Duration::from_millis(i as u64);
            c.on_ack(
                now,
                Some(Duration::from_millis(10)),
                Duration::from_millis(10),
            );
        }
        c
    }

    #[test]
    fn rto_follows_rfc_6298() {
        let mut r = RttEstimator::new(Duration::from_millis(200), Duration::from_secs(4));
        assert_eq!(r.rto(), Duration::from_secs(1));
        r.sample(Duration::from_millis(100));
        // SRTT 100, RTTVAR 50: RTO = 300 ms.
        assert_eq!(r.rto(), Duration::from_millis(300));
        r.back_off();
        assert_eq!(r.rto(), Duration::from_millis(600));
        for _ in 0..10 {
            r.back_off();
        }
        assert_eq!(r.rto(), Duration::from_secs(4));
        r.sample(Duration::from_millis(100));
        assert!(r.rto() < Duration::from_millis(400));
        assert_eq!(r.min, Duration::from_millis(100));
        assert_eq!(r.samples, 2);
    }

    #[test]
    fn a_minimum_rto_above_the_maximum_raises_the_maximum() {
        let mut r = RttEstimator::new(Duration::from_secs(10), Duration::from_secs(4));
        assert_eq!(r.rto(), Duration::from_secs(10));
        r.sample(Duration::from_millis(5));
        assert_eq!(r.rto(), Duration::from_secs(10));
        r.back_off();
        assert_eq!(r.rto(), Duration::from_secs(10));
    }

    #[test]
    fn windows_grow_without_loss_and_fixed_stays() {
        assert_eq!(run(CcKind::Fixed, 500).window(), 2);
        for kind in [CcKind::Aimd, CcKind::Cubic, CcKind::Delay] {
            let c = run(kind, 500);
            assert!(c.window() > 100, "{kind}: {}", c.window());
        }
    }

    #[test]
    fn a_loss_shrinks_the_window_once_per_round() {
        for (kind, beta) in [
            (CcKind::Aimd, AIMD_BETA),
            (CcKind::Cubic, CUBIC_BETA),
            (CcKind::Delay, DELAY_BETA),
        ] {
            // Every time is from one start (times read from the clock made the test depend
            // on how long the thread was descheduled: under load the acknowledgement below
            // could come after the run's last one, and a delay sample cut the window first).
            let start = Instant::now();
            let mut c = run_at(kind, 100, start);
            // A queue has built: 20 ms against 10 ms, half the window is queued.
            let t = start + Duration::from_millis(100);
            c.on_ack(
                t,
                Some(Duration::from_millis(20)),
                Duration::from_millis(12),
            );
            let (before, decreases) = (c.cwnd, c.decreases);
            let now = t + Duration::from_secs(1);
            c.on_loss(now, now - Duration::from_millis(5));
            assert!((c.cwnd - before * beta).abs() < 1e-9, "{kind}");
            // A second loss of the same window (sent before the decrease) is ignored.
            c.on_loss(
                now + Duration::from_millis(1),
                now - Duration::from_millis(4),
            );
            assert!((c.cwnd - before * beta).abs() < 1e-9, "{kind}");
            assert_eq!(c.decreases, decreases + 1, "{kind}");
            assert_eq!(c.random_losses, 0);
        }
    }

    #[test]
    fn a_random_loss_keeps_the_window_the_path_delivered() {
        let ms = Duration::from_millis;
        for kind in [CcKind::Aimd, CcKind::Cubic] {
            // A window of 20 over a 10-ms path with no queue, acknowledged every `gap`.
            let lost_after = |gap: Duration| {
                let mut c = Controller::new(CcOptions {
                    kind,
                    initial_window: 20.0,
                    max_window: 20.0,
                });
                let mut now = Instant::now();
                for _ in 0..400 {
                    now += gap;
                    c.on_ack(now, Some(ms(10)), ms(10));
                }
                c.on_loss(now, now);
                assert_eq!((c.decreases, c.random_losses), (1, 1), "{kind}");
                c.cwnd
            };
            // 2000 segments/s x 10 ms: the whole window was in use, so it stays (Westwood+).
            let kept = lost_after(Duration::from_micros(500));
            assert!(kept > 19.0 && kept <= 20.0, "{kind}: {kept}");
            // Half that rate: a window of 10 delivered, so Veno's 0.8 applies.
            let kept = lost_after(ms(1));
            assert!((kept - 16.0).abs() < 1e-9, "{kind}: {kept}");
        }
    }

    #[test]
    fn a_loss_without_a_queue_is_random_and_cuts_less() {
        let ms = Duration::from_millis;
        for kind in [CcKind::Aimd, CcKind::Cubic] {
            // Every RTT sample at the minimum: nothing of ours is queued.
            let mut c = run(kind, 100);
            let before = c.cwnd;
            let now = Instant::now() + Duration::from_secs(1);
            c.on_loss(now, now - ms(5));
            assert!((c.cwnd - before * RANDOM_LOSS_BETA).abs() < 1e-9, "{kind}");
            assert_eq!((c.decreases, c.random_losses), (1, 1), "{kind}");

            // A window of 20 whose latest RTT sample is `last` against 10 ms, then a loss.
            let lost_at = |last: Duration| {
                let mut c = Controller::new(CcOptions {
                    kind,
                    initial_window: 20.0,
                    max_window: 20.0,
                });
                c.on_ack(now, Some(ms(10)), ms(10));
                c.on_ack(now, Some(last), ms(10));
                c.on_loss(now, now);
                c
            };
            // Two segments queued (RTT 10 -> 11.1 ms): still random.
            let c = lost_at(Duration::from_micros(11_100));
            assert_eq!(c.random_losses, 1, "{kind}");
            // Four queued (RTT 12.5 ms): congestion, the algorithm's own cut.
            let c = lost_at(Duration::from_micros(12_500));
            assert_eq!((c.decreases, c.random_losses), (1, 0), "{kind}");
            let beta = if kind == CcKind::Aimd {
                AIMD_BETA
            } else {
                CUBIC_BETA
            };
            assert!((c.cwnd - 20.0 * beta).abs() < 1e-9, "{kind}: {}", c.cwnd);
        }
        // No RTT sample yet: a loss is congestion.
        let mut c = Controller::new(CcOptions {
            kind: CcKind::Aimd,
            initial_window: 20.0,
            max_window: 20.0,
        });
        let now = Instant::now();
        c.on_loss(now, now);
        assert_eq!((c.cwnd, c.random_losses), (10.0, 0));
    }

    /// Acks for `rounds` rounds of `per_round` segments each, every one with RTT `rtt`, one
    /// round per `rtt` (the smoothed RTT passed is the same); returns the time after them.
    fn rounds(
        c: &mut Controller,
        mut now: Instant,
        rounds: u32,
        per_round: u32,
        rtt: Duration,
    ) -> Instant {
        for _ in 0..rounds {
            for _ in 0..per_round {
                c.on_ack(now, Some(rtt), rtt);
                now += rtt / per_round;
            }
        }
        now
    }

    #[test]
    fn slow_start_ends_when_the_rtt_climbs() {
        let us = Duration::from_micros;
        let ms = Duration::from_millis;
        for kind in [CcKind::Aimd, CcKind::Cubic] {
            // On a host (200 µs): slow start ends at the rise (8 samples over 200 µs + 4 ms).
            let mut c = Controller::new(CcOptions {
                kind,
                initial_window: 2.0,
                max_window: 4096.0,
            });
            let mut now = rounds(&mut c, Instant::now(), 5, 20, us(200));
            assert_eq!(c.hystart_exits, 0, "{kind}");
            for _ in 0..HYSTART_SAMPLES {
                c.on_ack(now, Some(ms(10)), ms(10));
                now += us(500);
            }
            assert_eq!(c.hystart_exits, 1, "{kind}");
            assert!(c.css.is_none(), "{kind}");
            let w = c.cwnd;
            // Now in congestion avoidance: growth is far slower than one per ack.
            rounds(&mut c, now, 1, 10, ms(10));
            assert!(c.cwnd < w + 2.0, "{kind}: {} -> {}", w, c.cwnd);

            // On a 20-ms path: a rise to 30 ms starts Conservative Slow Start (growth / 4),
            // and as the next round starts as high, slow start ends with it.
            let mut c = Controller::new(CcOptions {
                kind,
                initial_window: 2.0,
                max_window: 4096.0,
            });
            let mut now = rounds(&mut c, Instant::now(), 5, 20, ms(20));
            for _ in 0..HYSTART_SAMPLES {
                assert!(c.css.is_none(), "{kind}");
                c.on_ack(now, Some(ms(30)), ms(21));
                now += us(500);
            }
            assert!(c.css.is_some(), "{kind}");
            let w = c.cwnd;
            c.on_ack(now, Some(ms(30)), ms(21));
            assert!(
                (c.cwnd - w - 1.0 / CSS_GROWTH_DIVISOR).abs() < 1e-9,
                "{kind}"
            );
            assert_eq!(c.hystart_exits, 0, "{kind}");
            rounds(&mut c, now, 3, 20, ms(30));
            assert_eq!(c.hystart_exits, 1, "{kind}");
            assert!(c.css.is_none(), "{kind}");
        }
    }

    #[test]
    fn a_burst_of_delay_that_goes_away_resumes_slow_start() {
        let us = Duration::from_micros;
        let ms = Duration::from_millis;
        let mut c = Controller::new(CcOptions {
            kind: CcKind::Cubic,
            initial_window: 2.0,
            max_window: 4096.0,
        });
        let mut now = rounds(&mut c, Instant::now(), 3, 20, ms(20));
        for _ in 0..HYSTART_SAMPLES {
            c.on_ack(now, Some(ms(30)), ms(21));
            now += us(500);
        }
        assert!(c.css.is_some());
        // The next round starts back near the minimum: it was the burst, slow start goes on.
        let now = rounds(&mut c, now, 2, 20, ms(21));
        assert!(c.css.is_none());
        let w = c.cwnd;
        rounds(&mut c, now, 1, 20, ms(21));
        assert!((c.cwnd - w - 20.0).abs() < 1e-9, "{w} -> {}", c.cwnd);
        assert_eq!(c.hystart_exits, 0);
    }

    #[test]
    fn after_a_random_loss_cubic_regrows_as_aimd_does() {
        let ms10 = Duration::from_millis(10);
        let regrowth = |queue: Duration| {
            let mut c = run(CcKind::Cubic, 100);
            let start = Instant::now() + Duration::from_secs(1);
            // The latest sample decides whether the loss was random (no queue) or not.
            c.on_ack(start, Some(ms10 + queue), ms10);
            c.on_loss(start, start);
            let cut = c.cwnd;
            // Ten RTTs of acks; K is seconds away, so the TCP-friendly estimate leads.
            let mut now = start;
            for _ in 0..10 {
                let n = c.window();
                for _ in 0..n {
                    now += ms10 / n as u32;
                    c.on_ack(now, Some(ms10), ms10);
                }
            }
            (c.random_losses, c.cwnd - cut)
        };
        let (random, grown) = regrowth(Duration::ZERO);
        assert_eq!(random, 1);
        assert!(grown > 7.5, "random: {grown}");
        let (random, grown) = regrowth(Duration::from_millis(10));
        assert_eq!(random, 0);
        assert!(grown < 6.0, "congestion: {grown}");
    }

    #[test]
    fn cubic_regrows_toward_its_previous_maximum() {
        let mut c = run(CcKind::Cubic, 200);
        let start = Instant::now() + Duration::from_secs(1);
        c.on_loss(start, start);
        let reduced = c.cwnd;
        let w_max = c.w_max;
        let mut now = start;
        // K = cbrt(W_max (1 - β) / C) is about 5.3 s for W_max = 202: run 8 s of acks.
        for _ in 0..8000 {
            now += Duration::from_millis(1);
            c.on_ack(
                now,
                Some(Duration::from_millis(10)),
                Duration::from_millis(10),
            );
        }
        assert!(c.cwnd > reduced);
        assert!(c.cwnd >= w_max * 0.95, "{} vs {w_max}", c.cwnd);
    }

    #[test]
    fn delay_control_backs_off_when_rtt_climbs() {
        let mut c = Controller::new(CcOptions {
            kind: CcKind::Delay,
            initial_window: 64.0,
            max_window: 64.0,
        });
        c.ssthresh = 0.0;
        let mut now = Instant::now();
        // RTT climbing from 10 ms to 100 ms, many times: decreases must happen.
        for i in 0..20_000u64 {
            now += Duration::from_millis(2);
            let rtt = Duration::from_millis(10 + (i % 90));
            c.on_ack(now, Some(rtt), Duration::from_millis(1));
        }
        assert!(c.decreases > 0);
        // A flat RTT never triggers a decrease.
        let mut flat = Controller::new(CcOptions {
            kind: CcKind::Delay,
            initial_window: 64.0,
            max_window: 64.0,
        });
        for _ in 0..20_000u64 {
            now += Duration::from_millis(2);
            flat.on_ack(
                now,
                Some(Duration::from_millis(10)),
                Duration::from_millis(1),
            );
        }
        assert_eq!(flat.decreases, 0);
        // Jitter of 1 ms on a 20-ms path (under 20/8 ms) is not a queue either.
        let mut jitter = Controller::new(CcOptions {
            kind: CcKind::Delay,
            initial_window: 64.0,
            max_window: 64.0,
        });
        for i in 0..20_000u64 {
            now += Duration::from_millis(2);
            let rtt = Duration::from_micros(20_000 + (i * 7919) % 1000);
            jitter.on_ack(now, Some(rtt), Duration::from_millis(20));
        }
        assert_eq!(jitter.decreases, 0);
    }

    /// What a fetch can do to its controller: acknowledgements with or without an RTT sample
    /// (zero and very long RTTs included), losses of segments sent any time before, and time
    /// standing still or jumping.
    #[derive(Clone, Debug)]
    enum Event {
        Ack {
            after_us: u32,
            rtt_us: Option<u32>,
            srtt_us: u32,
        },
        Loss {
            after_us: u32,
            sent_ago_us: u32,
        },
    }

    fn event() -> impl proptest::strategy::Strategy<Value = Event> {
        use proptest::prelude::*;
        prop_oneof![
            8 => (0u32..50_000, proptest::option::of(0u32..2_000_000), 0u32..2_000_000)
                .prop_map(|(after_us, rtt_us, srtt_us)| Event::Ack { after_us, rtt_us, srtt_us }),
            1 => (0u32..50_000, 0u32..2_000_000)
                .prop_map(|(after_us, sent_ago_us)| Event::Loss { after_us, sent_ago_us }),
        ]
    }

    #[test]
    fn windows_are_numbers_of_segments_or_inf() {
        assert_eq!(parse_window("64"), Ok(64.0));
        assert_eq!(parse_window(" 1.5 "), Ok(1.5));
        assert_eq!(parse_window("inf"), Ok(f64::INFINITY));
        for bad in ["nan", "NaN", "0", "0.99", "-3", "-inf", "", "many"] {
            let err = parse_window(bad).unwrap_err();
            assert!(err.contains("1 or more"), "{bad:?}: {err}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_sequence_of_acks_and_losses_keeps_the_window_sane(
            kind in proptest::sample::select(vec![CcKind::Fixed, CcKind::Aimd, CcKind::Cubic, CcKind::Delay]),
            initial in 1.0f64..100.0,
            max in 1.0f64..5000.0,
            events in proptest::collection::vec(event(), 1..400),
        ) {
            let mut c = Controller::new(CcOptions { kind, initial_window: initial, max_window: max });
            let first = c.window();
            let mut rtt = RttEstimator::new(Duration::from_millis(200), Duration::from_secs(4));
            let mut now = Instant::now();
            let us = |n: u32| Duration::from_micros(u64::from(n));
            for e in events {
                let before = c.cwnd;
                let decreases = c.decreases;
                match e {
                    Event::Ack { after_us, rtt_us, srtt_us } => {
                        now += us(after_us);
                        if let Some(r) = rtt_us {
                            rtt.sample(us(r));
                        }
                        c.on_ack(now, rtt_us.map(us), us(srtt_us));
                    }
                    Event::Loss { after_us, sent_ago_us } => {
                        now += us(after_us);
                        let sent = now.checked_sub(us(sent_ago_us)).unwrap_or(now);
                        c.on_loss(now, sent);
                        if c.decreases > decreases {
                            proptest::prop_assert!(c.cwnd <= before, "a loss grew the window");
                        }
                    }
                }
                proptest::prop_assert!(c.cwnd.is_finite(), "window {}", c.cwnd);
                proptest::prop_assert!(c.window() >= 1);
                proptest::prop_assert!(c.window() as f64 <= max.max(1.0), "{} > {max}", c.window());
                proptest::prop_assert!(c.peak >= c.cwnd);
                if kind == CcKind::Fixed {
                    proptest::prop_assert_eq!(c.window(), first);
                }
                let rto = rtt.rto();
                proptest::prop_assert!(rto >= Duration::from_millis(200) && rto <= Duration::from_secs(4));
            }
            proptest::prop_assert!(rtt.mean() <= rtt.max);
        }
    }
}
