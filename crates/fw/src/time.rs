//! Time, passed in by the caller: the forwarder reads no clock, and its randomness comes from a
//! seed (`nameway_wire::random::SplitMix64` seeded by `Config::seed`), so a run is a pure
//! function of its inputs (quinn-proto's rule).

use core::fmt;
use core::ops::{Add, AddAssign};
use core::time::Duration;

/// A point on a monotonic clock: nanoseconds from an arbitrary origin chosen by the caller.
///
/// Only differences between two `Time`s mean anything. Arithmetic saturates instead of
/// overflowing, so a huge InterestLifetime cannot wrap a deadline into the past.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(u64);

impl Time {
    /// The origin.
    pub const ZERO: Self = Self(0);
    /// The latest representable time ("never").
    pub const MAX: Self = Self(u64::MAX);

    /// The time `ns` nanoseconds after the origin.
    pub const fn from_nanos(ns: u64) -> Self {
        Self(ns)
    }

    /// The time `ms` milliseconds after the origin.
    pub const fn from_millis(ms: u64) -> Self {
        Self(ms.saturating_mul(1_000_000))
    }

    /// Nanoseconds since the origin.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// `self + d`, saturating at [`Time::MAX`].
    #[must_use]
    pub fn saturating_add(self, d: Duration) -> Self {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        Self(self.0.saturating_add(ns))
    }

    /// `self + ms` milliseconds, saturating.
    #[must_use]
    pub const fn add_millis(self, ms: u64) -> Self {
        Self(self.0.saturating_add(ms.saturating_mul(1_000_000)))
    }

    /// How long after `earlier` this is; zero when `earlier` is later.
    pub const fn saturating_since(self, earlier: Time) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

impl Add<Duration> for Time {
    type Output = Time;

    fn add(self, d: Duration) -> Time {
        self.saturating_add(d)
    }
}

impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, d: Duration) {
        *self = self.saturating_add(d);
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:09}s",
            self.0 / 1_000_000_000,
            self.0 % 1_000_000_000
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_saturates() {
        assert_eq!(Time::MAX + Duration::from_secs(1), Time::MAX);
        assert_eq!(
            Time::from_millis(2).saturating_since(Time::from_millis(5)),
            Duration::ZERO
        );
        assert_eq!(
            Time::from_millis(5).saturating_since(Time::from_millis(2)),
            Duration::from_millis(3)
        );
        assert_eq!(Time::from_millis(1).add_millis(u64::MAX), Time::MAX);
        assert_eq!(Time::from_nanos(1_500_000_000).to_string(), "1.500000000s");
    }
}
