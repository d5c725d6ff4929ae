//! Time for programs (Low's `time.*` and `duration.*` rows; docs/language.md, "Time"): each rule
//! once, for the Rust path, the LLVM path (`cabi::time`) and the interpreter's host.
//!
//! A `Time` is an instant in UTC, a count of microseconds since 1970-01-01T00:00:00Z, between
//! the first instant of year 0000 and the last microsecond of year 9999 (what four-digit RFC 3339
//! years can write); a `Duration` is a signed count of microseconds. Both are `i64`s in emitted
//! memory and in the interpreter, and the Rust path's [`Time`] and [`Duration`] wrap one.
//!
//! Text: a `Time` is written as RFC 3339 in UTC with exactly six fractional digits
//! (`2026-12-05T04:23:34.123456Z`): fixed width, so that texts sort as their instants do — which
//! is why SQLite stores it as this text — and read from any RFC 3339 text (any offset, up to nine
//! fractional digits, truncated to the microsecond). A `Duration` is written as the language
//! writes its literals, an integer and the largest unit that divides it (`250ms`, `90s`, `2h`,
//! `1500us`, `-5s`), and read back from the same form.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use ::time::OffsetDateTime;
use ::time::format_description::well_known::Rfc3339;
use ::time::macros::format_description;

use crate::trap::trap;

/// The first instant a `Time` holds: 0000-01-01T00:00:00Z, in microseconds since the epoch.
pub const MIN_MICROS: i64 = -62_167_219_200_000_000;
/// The last instant a `Time` holds: 9999-12-31T23:59:59.999999Z.
pub const MAX_MICROS: i64 = 253_402_300_799_999_999;

/// The units a `Duration` is written in, largest first, with their microseconds.
const UNITS: [(&str, i64); 6] =
    [("d", 86_400_000_000), ("h", 3_600_000_000), ("m", 60_000_000), ("s", 1_000_000), ("ms", 1_000), ("us", 1)];

/// A fixed clock, set by a test (`set_clock`): `now()` then answers it instead of the system's.
/// [`NOT_FIXED`] when no test fixed it (no `Time` is that far from 1970).
static FIXED: AtomicI64 = AtomicI64::new(NOT_FIXED);
const NOT_FIXED: i64 = i64::MIN;

/// The current instant, in microseconds since the epoch: the system's clock, or the clock a test
/// fixed.
pub fn now_micros() -> i64 {
    let fixed = FIXED.load(Ordering::Relaxed);
    if fixed != NOT_FIXED {
        return fixed;
    }
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(since) => i64::try_from(since.as_micros()).unwrap_or(MAX_MICROS).min(MAX_MICROS),
        // A system clock set before 1970.
        Err(before) => i64::try_from(before.duration().as_micros()).map_or(MIN_MICROS, |m| (-m).max(MIN_MICROS)),
    }
}

/// Fixes the clock `now()` reads at `micros` (a test's `set_clock`), or lets it follow the
/// system's again (`None`).
pub fn fix_clock(micros: Option<i64>) {
    FIXED.store(micros.unwrap_or(NOT_FIXED), Ordering::Relaxed);
}

/// The time since the process's first call of this function, in microseconds, from the
/// monotonic clock: it never goes backwards, whatever happens to the system's clock.
pub fn monotonic_micros() -> i64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let start = *START.get_or_init(Instant::now);
    i64::try_from(start.elapsed().as_micros()).unwrap_or(i64::MAX)
}

/// `micros` as a `Time`; errors (the trap's message) outside years 0000–9999.
pub fn try_time(micros: i64) -> Result<i64, String> {
    if (MIN_MICROS..=MAX_MICROS).contains(&micros) {
        Ok(micros)
    } else {
        Err(format!("time out of range: {micros} microseconds since 1970 is outside years 0000-9999"))
    }
}

/// As [`try_time`], trapping outside the range.
pub fn time(micros: i64) -> i64 {
    try_time(micros).unwrap_or_else(|message| trap(&message))
}

/// A `Time` as RFC 3339 in UTC with six fractional digits (`2026-12-05T04:23:34.123456Z`).
pub fn format_time(micros: i64) -> String {
    let at = OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros) * 1_000)
        .unwrap_or_else(|_| trap(&format!("time out of range: {micros}")));
    let format = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]Z");
    at.format(format).unwrap_or_else(|error| trap(&format!("cannot format a time: {error}")))
}

/// The instant an RFC 3339 text names (`2026-12-05T04:23:34Z`, `2026-12-05T05:23:34.5+01:00`),
/// truncated to the microsecond; `None` for anything else, or an instant outside years
/// 0000–9999 once in UTC.
pub fn parse_time(text: &str) -> Option<i64> {
    let at = OffsetDateTime::parse(text, &Rfc3339).ok()?;
    let micros = i64::try_from(at.unix_timestamp_nanos().div_euclid(1_000)).ok()?;
    try_time(micros).ok()
}

/// A `Duration` as the language writes its literals: the integer and the largest unit that
/// divides it exactly (`250ms`, `90s`, `2h`, `0s`, `-1500us`).
pub fn format_duration(micros: i64) -> String {
    if micros == 0 {
        return "0s".into();
    }
    let (unit, size) = UNITS.iter().find(|(_, size)| micros % size == 0).copied().unwrap_or(("us", 1));
    format!("{}{unit}", micros / size)
}

/// A duration written as [`format_duration`] writes one (an optional `-`, digits, a unit of
/// `d h m s ms us`); `None` for anything else or a value beyond an `i64` of microseconds.
pub fn parse_duration(text: &str) -> Option<i64> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = rest.split_at(digits);
    let size = UNITS.iter().find(|(name, _)| *name == unit)?.1;
    if number.is_empty() {
        return None;
    }
    let n: i128 = number.parse().ok()?;
    let micros = n.checked_mul(i128::from(size))?;
    i64::try_from(if negative { -micros } else { micros }).ok()
}

/// A `Time` on the Rust path: microseconds since the epoch, in range by construction. Ordered as
/// its instants, and written in JSON as its RFC 3339 text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(i64);

impl Time {
    /// The instant `micros` microseconds after the epoch; traps outside years 0000–9999.
    pub fn from_micros(micros: i64) -> Time {
        Time(time(micros))
    }

    /// Its microseconds since the epoch.
    pub fn micros(self) -> i64 {
        self.0
    }

    /// The instant `micros` microseconds after the epoch, which the caller knows is in range
    /// (it came from a `Time`).
    pub(crate) fn in_range(micros: i64) -> Time {
        Time(micros)
    }
}

impl std::fmt::Display for Time {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&format_time(self.0))
    }
}

/// A `Duration` on the Rust path: signed microseconds. Written in JSON as its text (`"250ms"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(i64);

impl Duration {
    /// The duration of `micros` microseconds.
    pub fn from_micros(micros: i64) -> Duration {
        Duration(micros)
    }

    /// Its microseconds.
    pub fn micros(self) -> i64 {
        self.0
    }
}

impl std::fmt::Display for Duration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&format_duration(self.0))
    }
}

impl serde::Serialize for Time {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_time(self.0))
    }
}

impl<'de> serde::Deserialize<'de> for Time {
    /// From RFC 3339 text; anything else is serde's `invalid value` (a 422 in a request body).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
        d.deserialize_str(crate::json::TextVisitor { expecting: "an RFC 3339 time", parse: parse_time }).map(Time)
    }
}

impl serde::Serialize for Duration {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_duration(self.0))
    }
}

impl<'de> serde::Deserialize<'de> for Duration {
    /// From a duration's text (`"250ms"`); anything else is serde's `invalid value`.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        d.deserialize_str(crate::json::TextVisitor { expecting: "a duration such as \"250ms\"", parse: parse_duration })
            .map(Duration)
    }
}

/// `now()` on the Rust path.
pub fn now() -> Time {
    Time(now_micros())
}

/// `monotonic()` on the Rust path.
pub fn monotonic() -> Duration {
    Duration(monotonic_micros())
}

/// `set_clock(t)` on the Rust path: `now()` answers `t` from here on.
pub fn set_clock(t: Time) {
    fix_clock(Some(t.0));
}

/// `parse_time(text)` on the Rust path.
pub fn parse(text: &str) -> Option<Time> {
    parse_time(text).map(Time)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_at_fixed_width_and_read_back() {
        assert_eq!(format_time(0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(format_time(1_764_908_614_123_456), "2025-12-05T04:23:34.123456Z");
        assert_eq!(format_time(-1), "1969-12-31T23:59:59.999999Z");
        assert_eq!(format_time(MIN_MICROS), "0000-01-01T00:00:00.000000Z");
        assert_eq!(format_time(MAX_MICROS), "9999-12-31T23:59:59.999999Z");
        for micros in [0, 1, -1, 1_764_908_614_123_456, MIN_MICROS, MAX_MICROS] {
            assert_eq!(parse_time(&format_time(micros)), Some(micros));
        }
    }

    #[test]
    fn any_rfc3339_text_is_read_in_utc_to_the_microsecond() {
        assert_eq!(parse_time("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(parse_time("1970-01-01T00:00:00.5Z"), Some(500_000));
        assert_eq!(parse_time("1970-01-01T00:00:00.000001999Z"), Some(1));
        assert_eq!(parse_time("1969-12-31T23:59:59.9999999Z"), Some(-1));
        assert_eq!(parse_time("2026-02-30T00:00:00Z"), None);
        // RFC 3339 §5.6 lets a space stand for the `T`.
        assert_eq!(parse_time("2026-12-05 04:23:34Z"), parse_time("2026-12-05T04:23:34Z"));
        assert_eq!(parse_time("yesterday"), None);
        assert_eq!(parse_time("0000-01-01T00:00:00+00:01"), None, "before year 0000 once in UTC");
    }

    #[test]
    fn times_out_of_range_are_refused() {
        assert!(try_time(MAX_MICROS + 1).is_err());
        assert!(try_time(MIN_MICROS - 1).is_err());
        assert_eq!(try_time(MAX_MICROS), Ok(MAX_MICROS));
    }

    #[test]
    fn durations_are_written_as_literals_and_read_back() {
        let cases = [
            (0, "0s"),
            (250_000, "250ms"),
            (90_000_000, "90s"),
            (120_000_000, "2m"),
            (7_200_000_000, "2h"),
            (86_400_000_000, "1d"),
            (1_500, "1500us"),
            (-5_000_000, "-5s"),
            (i64::MIN, "-9223372036854775808us"),
        ];
        for (micros, text) in cases {
            assert_eq!(format_duration(micros), text);
            assert_eq!(parse_duration(text), Some(micros), "{text}");
        }
        for bad in ["", "5", "ms", "5 s", "5sec", "+5s", "1.5s", "99999999999999999999d"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_fixed_clock_is_what_now_reads_until_it_is_released() {
        let before = now_micros();
        fix_clock(Some(42));
        assert_eq!(now_micros(), 42);
        fix_clock(None);
        assert!(now_micros() >= before);
        let a = monotonic_micros();
        assert!(monotonic_micros() >= a);
    }
}
