//! A token bucket for the resolver's look-up rate, in whole milliseconds of the caller's clock.

/// `rate` tokens per second, at most `burst` saved up.
#[derive(Clone, Debug)]
pub(crate) struct TokenBucket {
    /// Tokens per second (≥ 1).
    rate: u64,
    /// Capacity in thousandths of a token.
    cap_milli: u64,
    /// Tokens held, in thousandths (one ms adds `rate` thousandths).
    milli: u64,
    last_ms: u64,
}

impl TokenBucket {
    /// A full bucket.
    pub(crate) fn new(rate: u32, burst: u32, now_ms: u64) -> Self {
        let cap_milli = u64::from(burst.max(1)) * 1000;
        Self {
            rate: u64::from(rate.max(1)),
            cap_milli,
            milli: cap_milli,
            last_ms: now_ms,
        }
    }

    fn refill(&mut self, now_ms: u64) {
        let elapsed = now_ms.saturating_sub(self.last_ms);
        self.milli = self
            .milli
            .saturating_add(elapsed.saturating_mul(self.rate))
            .min(self.cap_milli);
        self.last_ms = self.last_ms.max(now_ms);
    }

    /// Takes one token if there is one.
    pub(crate) fn try_take(&mut self, now_ms: u64) -> bool {
        self.refill(now_ms);
        if self.milli >= 1000 {
            self.milli -= 1000;
            true
        } else {
            false
        }
    }

    /// When the next token is there (`now_ms` if it is).
    pub(crate) fn next_token_at(&self, now_ms: u64) -> u64 {
        let now = now_ms.max(self.last_ms);
        let have = self
            .milli
            .saturating_add(now.saturating_sub(self.last_ms).saturating_mul(self.rate));
        if have >= 1000 {
            return now;
        }
        now + (1000 - have).div_ceil(self.rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_and_burst() {
        let mut b = TokenBucket::new(10, 3, 0);
        assert!((0..3).all(|_| b.try_take(0)));
        assert!(!b.try_take(0));
        assert_eq!(b.next_token_at(0), 100);
        assert!(!b.try_take(99));
        assert!(b.try_take(100));
        // One second idle refills to the burst, not more.
        assert_eq!((0..10).filter(|_| b.try_take(1100)).count(), 3);
        // Empty at 1100; the last try is 9999 ms later: 99 tokens at 10 per second.
        let mut taken = 0;
        for t in 1100..11_100 {
            taken += usize::from(b.try_take(t));
        }
        assert_eq!(taken, 99);
        // A clock step back takes nothing and gives nothing.
        assert!(!b.try_take(5000));
    }
}
