//! Per-face Interest rate limits: a token bucket, in integer nanoseconds (no floating point,
//! no clock: `now` comes from the caller like every other time in the core).

use crate::time::Time;

/// A rate limit: `per_second` Interests on average, with bursts of up to `burst`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    /// Sustained rate, Interests per second (at least 1).
    pub per_second: u32,
    /// Bucket size: how many may arrive back to back after a quiet spell (at least 1).
    pub burst: u32,
}

/// A token bucket. One token is `1e9 / per_second` nanoseconds of credit; the bucket holds at
/// most `burst` tokens' worth.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TokenBucket {
    limit: RateLimit,
    /// Nanoseconds of credit per token.
    cost: u64,
    /// Credit held, in nanoseconds (≤ `cost * burst`).
    credit: u64,
    last: Time,
}

impl TokenBucket {
    /// A full bucket (the first `burst` pass at once).
    pub(crate) fn new(limit: RateLimit, now: Time) -> Self {
        let limit = RateLimit {
            per_second: limit.per_second.max(1),
            burst: limit.burst.max(1),
        };
        let cost = 1_000_000_000 / u64::from(limit.per_second);
        Self {
            limit,
            cost,
            credit: cost.saturating_mul(u64::from(limit.burst)),
            last: now,
        }
    }

    pub(crate) fn limit(&self) -> RateLimit {
        self.limit
    }

    /// Takes one token if there is one.
    #[inline]
    pub(crate) fn take(&mut self, now: Time) -> bool {
        let elapsed = now.saturating_since(self.last).as_nanos();
        let elapsed = u64::try_from(elapsed).unwrap_or(u64::MAX);
        if now > self.last {
            self.last = now;
        }
        let max = self.cost.saturating_mul(u64::from(self.limit.burst));
        self.credit = self.credit.saturating_add(elapsed).min(max);
        if self.credit >= self.cost {
            self.credit -= self.cost;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use core::time::Duration;

    use super::*;

    #[test]
    fn a_burst_then_the_rate() {
        let limit = RateLimit {
            per_second: 1000,
            burst: 100,
        };
        let mut b = TokenBucket::new(limit, Time::ZERO);
        // 10,000 at once: the burst passes, nothing else.
        let passed = (0..10_000).filter(|_| b.take(Time::ZERO)).count();
        assert_eq!(passed, 100);
        // Then 10,000 spread evenly over one second: 1,000 pass.
        let mut now = Time::ZERO;
        let mut passed = 0;
        for _ in 0..10_000 {
            now += Duration::from_micros(100);
            passed += usize::from(b.take(now));
        }
        assert_eq!(passed, 1000);
        // A quiet spell refills to the burst, not beyond.
        now += Duration::from_secs(60);
        let passed = (0..10_000).filter(|_| b.take(now)).count();
        assert_eq!(passed, 100);
    }

    #[test]
    fn zero_is_taken_as_one() {
        let mut b = TokenBucket::new(
            RateLimit {
                per_second: 0,
                burst: 0,
            },
            Time::ZERO,
        );
        assert!(b.take(Time::ZERO));
        assert!(!b.take(Time::ZERO));
        assert!(b.take(Time::from_millis(1000)));
    }
}
