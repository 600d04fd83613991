//! Fault injection on a face's egress: delay, jitter, loss and a rate limit with a drop-tail
//! buffer, seeded and deterministic (docs/design.md §9: this kernel has no netem, so links are
//! emulated here).
//!
//! [`FaultInjector`] is sans-I/O: it is told the time and the packet size and says when the
//! packet leaves, or that it is lost. The face system runs it in a small task between a face's
//! send queue and its writer (see [`crate::FaceOptions::fault`] and
//! [`crate::FaceSystemConfig::fault`]). Faults apply to network packets (before NDNLPv2
//! fragmentation). Packets keep their order: jitter never reorders, unlike netem.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use nameway_wire::random::SplitMix64;
use tokio::sync::mpsc;

use crate::counters::bump;
use crate::face::{FaceHandle, TxQueue};

/// What to do to a face's outgoing packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FaultConfig {
    /// One-way delay added to every packet.
    pub delay: Duration,
    /// Up to this much more delay, uniformly drawn per packet.
    pub jitter: Duration,
    /// Probability in `0.0..=1.0` that a packet is lost.
    pub loss: f64,
    /// Link rate in bits per second; packets are serialized one after another. `None`:
    /// unlimited.
    pub rate_bps: Option<u64>,
    /// Buffer in front of the rate-limited link, in bytes: a packet that would find more than
    /// this many bytes still waiting to be serialized (itself included) is dropped, as at a
    /// drop-tail router queue. `None`: unbounded (packets only wait). No effect without
    /// `rate_bps`.
    pub queue_bytes: Option<usize>,
    /// Seed of the random draws (loss, jitter); the same seed gives the same faults.
    pub seed: u64,
}

impl Default for FaultConfig {
    fn default() -> Self {
        Self {
            delay: Duration::ZERO,
            jitter: Duration::ZERO,
            loss: 0.0,
            rate_bps: None,
            queue_bytes: None,
            seed: 1,
        }
    }
}

/// Why the injector dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultDrop {
    /// Random loss (`loss`).
    Loss,
    /// The emulated link's buffer was full (`queue_bytes`): congestion.
    QueueFull,
}

/// Decides the fate of each outgoing packet.
#[derive(Debug)]
pub struct FaultInjector {
    config: FaultConfig,
    rng: SplitMix64,
    /// When the emulated link finishes serializing the previous packet.
    link_free: Option<Instant>,
    /// Departure time of the previous packet (departures never go backwards).
    last_departure: Option<Instant>,
}

impl FaultInjector {
    /// An injector with `config`.
    pub fn new(config: FaultConfig) -> Self {
        Self {
            config,
            rng: SplitMix64::new(config.seed),
            link_free: None,
            last_departure: None,
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &FaultConfig {
        &self.config
    }

    /// When a packet of `len` bytes handed over at `now` should be sent, or why it is dropped.
    ///
    /// # Errors
    /// [`FaultDrop`]: the packet is lost.
    pub fn on_packet(&mut self, now: Instant, len: usize) -> Result<Instant, FaultDrop> {
        if self.config.loss > 0.0 && self.rng.next_f64() < self.config.loss {
            return Err(FaultDrop::Loss);
        }
        let mut ready = now;
        if let Some(rate) = self.config.rate_bps.filter(|&r| r > 0) {
            let start = self.link_free.map_or(now, |free| free.max(now));
            if let Some(limit) = self.config.queue_bytes {
                // Bytes still to serialize when this packet arrives.
                let wait = start.saturating_duration_since(now).as_nanos();
                let backlog = wait * u128::from(rate) / 8 / 1_000_000_000;
                if backlog + len as u128 > limit as u128 {
                    return Err(FaultDrop::QueueFull);
                }
            }
            let nanos = (len as u128 * 8 * 1_000_000_000) / u128::from(rate);
            let tx = Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX));
            ready = start + tx;
            self.link_free = Some(ready);
        }
        let jitter = self.config.jitter.mul_f64(self.rng.next_f64());
        let departure = ready + self.config.delay + jitter;
        let departure = self
            .last_departure
            .map_or(departure, |last| departure.max(last));
        self.last_departure = Some(departure);
        Ok(departure)
    }
}

/// Moves packets from a face's send queue to its writer's queue through `injector`: lost
/// packets are counted (`drop_fault`, or `drop_fault_queue` when the emulated buffer was full),
/// the others wait until their departure time. Ends when
/// the face closes (packets still delayed are dropped) or a queue is closed.
pub(crate) async fn pump(
    mut rx: TxQueue,
    tx: mpsc::Sender<Bytes>,
    mut injector: FaultInjector,
    face: Arc<FaceHandle>,
) {
    let mut line: VecDeque<(tokio::time::Instant, Bytes)> = VecDeque::new();
    loop {
        let next = line.front().map(|(at, _)| *at);
        tokio::select! {
            biased;
            _ = face.closed() => return,
            () = sleep_until(next) => {
                let now = tokio::time::Instant::now();
                while line.front().is_some_and(|(at, _)| *at <= now) {
                    let Some((_, pkt)) = line.pop_front() else { break };
                    if tx.send(pkt).await.is_err() {
                        return;
                    }
                }
            }
            pkt = rx.recv() => {
                let Some(pkt) = pkt else { return };
                let now = tokio::time::Instant::now();
                match injector.on_packet(now.into_std(), pkt.len()) {
                    Ok(at) => line.push_back((tokio::time::Instant::from_std(at), pkt)),
                    Err(FaultDrop::Loss) => bump(&face.counters.drop_fault),
                    Err(FaultDrop::QueueFull) => bump(&face.counters.drop_fault_queue),
                }
            }
        }
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_only() {
        let t0 = Instant::now();
        let mut f = FaultInjector::new(FaultConfig {
            delay: Duration::from_millis(5),
            ..FaultConfig::default()
        });
        assert_eq!(f.on_packet(t0, 100), Ok(t0 + Duration::from_millis(5)));
    }

    #[test]
    fn loss_is_seeded_and_close_to_rate() {
        let t0 = Instant::now();
        let config = FaultConfig {
            loss: 0.3,
            seed: 42,
            ..FaultConfig::default()
        };
        let run = || {
            let mut f = FaultInjector::new(config);
            (0..10_000)
                .map(|_| f.on_packet(t0, 10).is_err())
                .collect::<Vec<_>>()
        };
        let a = run();
        assert_eq!(a, run());
        let lost = a.iter().filter(|&&l| l).count();
        assert!((2700..3300).contains(&lost), "{lost}");
        let mut none = FaultInjector::new(FaultConfig {
            loss: 1.0,
            ..config
        });
        assert_eq!(none.on_packet(t0, 1), Err(FaultDrop::Loss));
    }

    #[test]
    fn rate_serializes_and_order_is_kept() {
        let t0 = Instant::now();
        let mut f = FaultInjector::new(FaultConfig {
            rate_bps: Some(8_000_000), // 1 byte per microsecond
            jitter: Duration::from_millis(3),
            seed: 7,
            ..FaultConfig::default()
        });
        let mut last = t0;
        for i in 0..100u64 {
            let at = f.on_packet(t0, 1000).unwrap();
            assert!(at >= last);
            assert!(at >= t0 + Duration::from_micros(1000 * (i + 1)));
            last = at;
        }
    }

    #[test]
    fn a_full_buffer_drops_the_tail_and_drains_at_the_link_rate() {
        let t0 = Instant::now();
        let us = Duration::from_micros;
        let mut f = FaultInjector::new(FaultConfig {
            rate_bps: Some(8_000_000), // 1 byte per microsecond
            queue_bytes: Some(3000),
            ..FaultConfig::default()
        });
        // Three 1000-byte packets fit (0, 1000 and 2000 bytes ahead of them), the fourth not.
        assert_eq!(f.on_packet(t0, 1000), Ok(t0 + us(1000)));
        assert_eq!(f.on_packet(t0, 1000), Ok(t0 + us(2000)));
        assert_eq!(f.on_packet(t0, 1000), Ok(t0 + us(3000)));
        assert_eq!(f.on_packet(t0, 1000), Err(FaultDrop::QueueFull));
        // One packet's time later there is room for one more, which leaves after the third.
        assert_eq!(f.on_packet(t0 + us(1000), 1000), Ok(t0 + us(4000)));
        assert_eq!(f.on_packet(t0 + us(1000), 1), Err(FaultDrop::QueueFull));
        // Once drained, a packet larger than the buffer is still refused.
        assert_eq!(f.on_packet(t0 + us(9000), 3001), Err(FaultDrop::QueueFull));
        assert_eq!(f.on_packet(t0 + us(9000), 3000), Ok(t0 + us(12000)));
    }
}
