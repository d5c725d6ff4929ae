//! When a scheduled job's ticks fall (docs/language.md §9.11): every multiple of a period since
//! 1970-01-01T00:00:00Z, or the minutes a five-field cron expression names, both in UTC. Times
//! are microseconds since 1970, as a `Time` is. Cron expressions are parsed and evaluated by the
//! `croner` crate (POSIX/Vixie syntax: lists, ranges, steps, month and weekday names, `L`, `#`,
//! `W`); the queue that runs the ticks is `queues/schedule.rs`.

use std::str::FromStr;

use chrono::{DateTime, Utc};

/// The ticks of one scheduled job.
#[derive(Clone, Debug)]
pub enum Schedule {
    /// Every multiple of this many microseconds (at least 1) since 1970.
    Every(i64),
    /// The minutes the cron expression names.
    Cron(Box<croner::Cron>),
}

impl Schedule {
    /// Every `ms` milliseconds (at least 1).
    pub fn every_ms(ms: u64) -> Schedule {
        Schedule::Every(i64::try_from(ms.max(1)).unwrap_or(i64::MAX / 1000).saturating_mul(1000))
    }

    /// The cron expression `text`, five fields (minute hour day-of-month month day-of-week);
    /// the error says what is wrong with it.
    pub fn cron(text: &str) -> Result<Schedule, String> {
        if text.split_whitespace().count() != 5 {
            return Err(format!(
                "{text:?} is not a cron expression of five fields (minute hour day-of-month month day-of-week)"
            ));
        }
        croner::Cron::from_str(text)
            .map(|cron| Schedule::Cron(Box::new(cron)))
            .map_err(|e| format!("{text:?} is not a cron expression: {e}"))
    }

    /// The latest tick at or before `now`, if there is one.
    pub fn latest_at_or_before(&self, now: i64) -> Option<i64> {
        match self {
            Schedule::Every(period) => Some(now.div_euclid(*period) * period),
            Schedule::Cron(cron) => {
                let at = cron.find_previous_occurrence(&utc(now)?, true).ok()?;
                Some(at.timestamp_micros())
            }
        }
    }

    /// The first tick after `t`, if there is one.
    pub fn next_after(&self, t: i64) -> Option<i64> {
        match self {
            Schedule::Every(period) => (t.div_euclid(*period) + 1).checked_mul(*period),
            Schedule::Cron(cron) => {
                let at = cron.find_next_occurrence(&utc(t)?, false).ok()?;
                Some(at.timestamp_micros())
            }
        }
    }
}

/// The schedule of the scheduled job `name` from its cron expression, or, for one that is not a
/// cron expression (only hand-written Low has one: the compiler checks High's), the end of the
/// service before it listens: the reason on stderr and exit status 2.
pub fn cron_or_exit(name: &str, text: &str) -> Schedule {
    Schedule::cron(text).unwrap_or_else(|error| {
        eprintln!("nagi: scheduled job {name}: {error}");
        std::process::exit(2)
    })
}

fn utc(micros: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_micros(micros)
}

#[cfg(test)]
mod tests {
    use super::Schedule;
    use crate::time::{format_time, parse_time};

    fn at(text: &str) -> i64 {
        parse_time(text).expect("a time")
    }

    #[test]
    fn periods_fall_on_multiples_since_1970() {
        let hourly = Schedule::every_ms(3_600_000);
        let now = at("2026-12-05T10:17:03.5Z");
        assert_eq!(hourly.latest_at_or_before(now).map(format_time), Some("2026-12-05T10:00:00.000000Z".into()));
        assert_eq!(hourly.next_after(now).map(format_time), Some("2026-12-05T11:00:00.000000Z".into()));
        let on_the_hour = at("2026-12-05T10:00:00Z");
        assert_eq!(hourly.latest_at_or_before(on_the_hour), Some(on_the_hour));
        assert_eq!(hourly.next_after(on_the_hour).map(format_time), Some("2026-12-05T11:00:00.000000Z".into()));
    }

    #[test]
    fn cron_expressions_are_read_in_utc() {
        let nightly = Schedule::cron("0 3 * * *").unwrap();
        let now = at("2026-12-05T10:17:03Z");
        assert_eq!(nightly.latest_at_or_before(now).map(format_time), Some("2026-12-05T03:00:00.000000Z".into()));
        assert_eq!(nightly.next_after(now).map(format_time), Some("2026-12-06T03:00:00.000000Z".into()));
        let fridays = Schedule::cron("30 12 * * FRI").unwrap();
        assert_eq!(fridays.next_after(now).map(format_time), Some("2026-12-11T12:30:00.000000Z".into()));
        assert!(Schedule::cron("0 3 * *").unwrap_err().contains("five fields"));
        assert!(Schedule::cron("0 25 * * *").unwrap_err().starts_with("\"0 25 * * *\" is not a cron expression"));
    }
}
