//! Wall-clock time as the crate takes it, and the `YYYYMMDDThhmmss` form of ValidityPeriod.
//!
//! The crate reads no clock. Every `now_ms` is milliseconds since the Unix epoch (UTC) from
//! the caller's wall clock (`SystemTime::now()` in the daemon): announcements carry wall-clock
//! times, so verification needs one. Timers use the same clock; a clock stepping back only
//! delays them (all arithmetic saturates).

/// Clock grace for validity checks: a signer's or verifier's clock may be off by this much.
pub const CLOCK_GRACE_MS: u64 = 60_000;

/// Default announcement lifetime: 10 minutes.
pub const DEFAULT_LIFETIME_MS: u64 = 600_000;

const MS_PER_DAY: u64 = 86_400_000;

/// Days since 1970-01-01 of a proleptic Gregorian date (years from 1970).
fn days_from_civil(year: u64, month: u64, day: u64) -> u64 {
    // Count from 0000-03-01 so that the leap day ends each 4-year cycle; then shift.
    let (y, m) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era_days = y / 400 * 146_097;
    let yoe = y % 400;
    let doy = (153 * m + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    // 719_468 days from 0000-03-01 to 1970-01-01.
    era_days + doe - 719_468
}

/// The (year, month, day) of a count of days since 1970-01-01.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = era * 400 + yoe + u64::from(month <= 2);
    (year, month, day)
}

fn days_in_month(year: u64, month: u64) -> u64 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        _ => 31,
    }
}

/// Parses `YYYYMMDDThhmmss` (UTC, the ValidityPeriod form) into ms since the Unix epoch.
/// `None` for any other form, an impossible date, or a date before 1970.
pub fn parse_iso(s: &[u8]) -> Option<u64> {
    let [y0, y1, y2, y3, mo0, mo1, d0, d1, b'T', h0, h1, mi0, mi1, s0, s1] = *s else {
        return None;
    };
    let num = |digits: &[u8]| -> Option<u64> {
        digits.iter().try_fold(0u64, |acc, &c| {
            c.is_ascii_digit().then(|| acc * 10 + u64::from(c - b'0'))
        })
    };
    let year = num(&[y0, y1, y2, y3])?;
    let month = num(&[mo0, mo1])?;
    let day = num(&[d0, d1])?;
    let (hour, min, sec) = (num(&[h0, h1])?, num(&[mi0, mi1])?, num(&[s0, s1])?);
    let date_ok = year >= 1970
        && (1..=12).contains(&month)
        && (1..=days_in_month(year, month)).contains(&day);
    if !date_ok || hour > 23 || min > 59 || sec > 59 {
        return None;
    }
    let secs = (hour * 60 + min) * 60 + sec;
    Some(days_from_civil(year, month, day) * MS_PER_DAY + secs * 1000)
}

/// Formats ms since the Unix epoch as `YYYYMMDDThhmmss` (UTC), truncating to the second.
pub fn format_iso(ms: u64) -> [u8; 15] {
    let (year, month, day) = civil_from_days(ms / MS_PER_DAY);
    let secs = ms % MS_PER_DAY / 1000;
    let (hour, min, sec) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut out = [0u8; 15];
    let mut put = |at: usize, width: usize, mut v: u64| {
        for i in (at..at + width).rev() {
            if let Some(slot) = out.get_mut(i) {
                *slot = b'0' + (v % 10) as u8;
            }
            v /= 10;
        }
    };
    put(0, 4, year);
    put(4, 2, month);
    put(6, 2, day);
    put(9, 2, hour);
    put(11, 2, min);
    put(13, 2, sec);
    out[8] = b'T';
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        let cases: &[(&[u8], u64)] = &[
            (b"19700101T000000", 0),
            (b"20000229T120000", 951_825_600_000),
            (b"20181030T000000", 1_540_857_600_000),
            (b"20181124T235959", 1_543_103_999_000),
            (b"20380119T031408", 2_147_483_648_000),
            (b"99991231T235959", 253_402_300_799_000),
        ];
        for &(s, ms) in cases {
            assert_eq!(parse_iso(s), Some(ms), "{}", String::from_utf8_lossy(s));
            assert_eq!(&format_iso(ms), s);
            assert_eq!(&format_iso(ms + 999), s, "sub-second part truncated");
        }
    }

    #[test]
    fn every_day_of_four_centuries_round_trips() {
        // 1970 through 2400: every leap-year rule (4, 100, 400) is crossed.
        let mut ms = 0;
        while ms < 13_569_465_600_000 {
            let s = format_iso(ms);
            assert_eq!(parse_iso(&s), Some(ms));
            ms += MS_PER_DAY + 3_723_000;
        }
    }

    #[test]
    fn bad_forms() {
        for s in [
            &b""[..],
            b"20181030T00000",
            b"20181030T0000000",
            b"20181030 000000",
            b"2018103aT000000",
            b"20181330T000000",
            b"20180229T000000",
            b"21000229T000000",
            b"20181000T000000",
            b"20181030T240000",
            b"20181030T006000",
            b"20181030T000060",
            b"19691231T235959",
            b"+2018103T000000",
        ] {
            assert_eq!(parse_iso(s), None, "{}", String::from_utf8_lossy(s));
        }
        assert_eq!(parse_iso(b"20000229T000000"), Some(951_782_400_000));
    }
}
