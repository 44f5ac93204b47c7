//! Schedules in cron's five fields (`minute hour day-of-month month day-of-week`), as a person
//! or Claude writes them for a watcher: `*/15 * * * *`, `0 9 * * mon-fri`, `30 8 1 * *`, and
//! `@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`. Numbers, lists, ranges, steps and the
//! names of months and days are read; the next time is found in a time zone, so "9 every
//! weekday" stays 9 across a clock change. Once a minute is the floor: a sixth field (seconds)
//! is refused, never rounded.
//!
//! As in cron, when both the day of the month and the day of the week are restricted, a day
//! that matches either runs.

use jiff::civil::{Date, DateTime, Time};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};

/// A parsed schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cron {
    minutes: u64,
    hours: u32,
    days: u32,
    months: u16,
    weekdays: u8,
    /// Whether each day field was `*` (for cron's either-day rule).
    any_day: bool,
    any_weekday: bool,
}

/// Days looked through for the next run before giving up (a schedule such as `0 0 30 2 *`,
/// the 30th of February, never runs).
const SEARCH_DAYS: i32 = 366 * 5;

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const WEEKDAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

impl Cron {
    /// `spec`, or why it is not a schedule Vyre runs.
    pub fn parse(spec: &str) -> Result<Cron, String> {
        let spec = spec.trim().to_lowercase();
        let expanded = match spec.as_str() {
            "@hourly" => "0 * * * *",
            "@daily" | "@midnight" => "0 0 * * *",
            "@weekly" => "0 0 * * 0",
            "@monthly" => "0 0 1 * *",
            "@yearly" | "@annually" => "0 0 1 1 *",
            s if s.starts_with('@') => {
                return Err(format!(
                    "{spec:?} is not a schedule: the shorthands are @hourly, @daily, @weekly, @monthly and @yearly"
                ));
            }
            s => s,
        };
        let fields: Vec<&str> = expanded.split_whitespace().collect();
        match fields.len() {
            5 => {}
            6 => {
                return Err(format!(
                    "{spec:?} has six fields: Vyre runs a schedule at most once a minute, so seconds are not a field (minute hour day month weekday)"
                ));
            }
            n => {
                return Err(format!(
                    "{spec:?} has {n} fields, not five: minute hour day-of-month month day-of-week, e.g. \"*/15 * * * *\" or \"0 9 * * mon-fri\""
                ));
            }
        }
        let field = |i: usize, name: &str, lo: u32, hi: u32, names: &[&str]| {
            bits(fields[i], lo, hi, names)
                .map_err(|why| format!("{spec:?}: the {name} field {:?} {why}", fields[i]))
        };
        let minutes = field(0, "minute", 0, 59, &[])?;
        let hours = field(1, "hour", 0, 23, &[])? as u32;
        let days = field(2, "day-of-month", 1, 31, &[])? as u32;
        let months = field(3, "month", 1, 12, &MONTHS)? as u16;
        // 7 is Sunday too, as in most crons.
        let mut weekdays = field(4, "day-of-week", 0, 7, &WEEKDAYS)?;
        if weekdays & (1 << 7) != 0 {
            weekdays = (weekdays | 1) & 0x7f;
        }
        Ok(Cron {
            minutes,
            hours,
            days,
            months,
            weekdays: weekdays as u8,
            any_day: fields[2] == "*",
            any_weekday: fields[4] == "*",
        })
    }

    fn day_runs(&self, d: Date) -> bool {
        if self.months & (1 << d.month()) == 0 {
            return false;
        }
        let by_day = self.days & (1 << d.day()) != 0;
        let by_weekday = self.weekdays & (1 << d.weekday().to_sunday_zero_offset()) != 0;
        match (self.any_day, self.any_weekday) {
            (true, true) => true,
            (false, true) => by_day,
            (true, false) => by_weekday,
            (false, false) => by_day || by_weekday,
        }
    }

    /// The first time after `after` this schedule runs, in `zone`; `None` when it never does.
    pub fn next_after(&self, after: Timestamp, zone: &TimeZone) -> Option<Timestamp> {
        let start = after.to_zoned_datetime(zone.clone()).datetime();
        let mut day = start.date();
        for _ in 0..SEARCH_DAYS {
            if self.day_runs(day) {
                for h in 0..24u8 {
                    if self.hours & (1 << h) == 0 {
                        continue;
                    }
                    for m in 0..60u8 {
                        if self.minutes & (1 << m) == 0 {
                            continue;
                        }
                        let dt = DateTime::from_parts(day, Time::constant(h as i8, m as i8, 0, 0));
                        if dt <= start {
                            continue;
                        }
                        // A time a clock change skips runs just after the gap, as cron does.
                        if let Ok(z) = dt.to_zoned_datetime(zone.clone())
                            && z.timestamp() > after
                        {
                            return Some(z.timestamp());
                        }
                    }
                }
            }
            day = day.checked_add(1.day()).ok()?;
        }
        None
    }
}

/// The values of one field as bits: `*`, `n`, `a-b`, `*/s`, `a-b/s`, `a/s`, lists of those,
/// and names for months and weekdays.
fn bits(field: &str, lo: u32, hi: u32, names: &[&str]) -> Result<u64, String> {
    let value = |s: &str| -> Result<u32, String> {
        if let Some(i) = names.iter().position(|n| *n == s) {
            // Months are named from 1, weekdays from 0.
            return Ok(i as u32 + if names.len() == 12 { 1 } else { 0 });
        }
        let v: u32 = s.parse().map_err(|_| {
            format!(
                "has {s:?}, which is not a number{}",
                if names.is_empty() { "" } else { " or a name" }
            )
        })?;
        if v < lo || v > hi {
            return Err(format!("has {v}, outside {lo} to {hi}"));
        }
        Ok(v)
    };
    let mut out = 0u64;
    for part in field.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => {
                let step: u32 = s
                    .parse()
                    .map_err(|_| format!("has a step {s:?} that is not a number"))?;
                if step == 0 {
                    return Err("has a step of 0".into());
                }
                (r, step)
            }
            None => (part, 1),
        };
        let (from, to) = if range == "*" {
            (lo, hi)
        } else if let Some((a, b)) = range.split_once('-') {
            let (a, b) = (value(a)?, value(b)?);
            if a > b {
                return Err(format!("has a range {range:?} that runs backwards"));
            }
            (a, b)
        } else {
            let a = value(range)?;
            // `5/15`: from 5 to the end, every 15.
            (a, if step > 1 { hi } else { a })
        };
        let mut v = from;
        while v <= to {
            out |= 1 << v;
            v += step;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn next(spec: &str, after: &str, zone: &str) -> String {
        let tz = TimeZone::get(zone).unwrap();
        Cron::parse(spec)
            .unwrap()
            .next_after(after.parse().unwrap(), &tz)
            .map_or("never".into(), |t| t.to_string())
    }

    #[test]
    fn each_schedule_runs_next_when_cron_would() {
        // Thursday 3 December 2026, 14:20 UTC (15:20 in Paris).
        let now = "2026-12-03T14:20:00Z";
        for (spec, want) in [
            ("* * * * *", "2026-12-03T14:21:00Z"),
            ("*/15 * * * *", "2026-12-03T14:30:00Z"),
            ("5/15 * * * *", "2026-12-03T14:35:00Z"),
            ("0 9 * * mon-fri", "2026-12-04T08:00:00Z"),
            ("0 9 * * sat,sun", "2026-12-05T08:00:00Z"),
            ("0 9 * * 7", "2026-12-06T08:00:00Z"),
            ("30 8 1 * *", "2027-01-01T07:30:00Z"),
            ("0 0 1 jan *", "2026-12-31T23:00:00Z"),
            ("@hourly", "2026-12-03T15:00:00Z"),
            ("@daily", "2026-12-03T23:00:00Z"),
            ("@weekly", "2026-12-05T23:00:00Z"),
            ("0 12 13 * fri", "2026-12-04T11:00:00Z"),
            ("0 0 29 2 *", "2028-02-28T23:00:00Z"),
            ("0 0 30 2 *", "never"),
        ] {
            assert_eq!(next(spec, now, "Europe/Paris"), want, "{spec:?}");
        }
        // Across the spring clock change (Paris, 29 March 2026: 02:00 becomes 03:00): a run in
        // the gap is moved past it; 9:00 stays 9:00 in the new offset.
        assert_eq!(
            next("30 2 * * *", "2026-03-28T12:00:00Z", "Europe/Paris"),
            "2026-03-29T01:30:00Z"
        );
        assert_eq!(
            next("0 9 * * *", "2026-03-28T12:00:00Z", "Europe/Paris"),
            "2026-03-29T07:00:00Z"
        );
        // Strictly after: a run at exactly `after` is the next one's.
        assert_eq!(
            next("0 * * * *", "2026-12-03T14:00:00Z", "UTC"),
            "2026-12-03T15:00:00Z"
        );
    }

    #[test]
    fn a_schedule_vyre_does_not_run_is_refused_in_words() {
        for (spec, words) in [
            ("* * * * * *", "at most once a minute"),
            ("*/10 * * *", "4 fields"),
            ("", "0 fields"),
            ("60 * * * *", "outside 0 to 59"),
            ("* 24 * * *", "outside 0 to 23"),
            ("* * 0 * *", "outside 1 to 31"),
            ("* * * 13 *", "outside 1 to 12"),
            ("* * * * 8", "outside 0 to 7"),
            ("*/0 * * * *", "step of 0"),
            ("5-1 * * * *", "backwards"),
            ("x * * * *", "not a number"),
            ("* * * foo *", "not a number or a name"),
            ("@often", "shorthands"),
        ] {
            let err = Cron::parse(spec).unwrap_err();
            assert!(err.contains(words), "{spec:?}: {err}");
        }
    }
}
