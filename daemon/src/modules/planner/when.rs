//! When a person means, from the words they use for it: `in 20m`, `in 2 hours`, `20 minutes`,
//! `at 15:00`, `9am`, `tomorrow`, `tomorrow at 9:30pm`, `today 18:00`, `2026-12-24 18:00`,
//! `2026-12-24`, or an exact instant (`2026-12-24T17:00:00Z`). Clock times are in the person's
//! time zone (the app and the CLI send theirs); a clock time already past today is tomorrow.

use jiff::civil::{Date, Time};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp, ZonedDateTime};

/// The hour a day named without a time means (`tomorrow`, `2026-12-24`).
const MORNING: i8 = 9;

/// The farthest ahead anything may be set: ten years.
const FARTHEST: SignedDuration = SignedDuration::from_hours(24 * 3653);

/// The instant `phrase` names, seen at `now` in `zone`; or why it names none.
pub fn parse(phrase: &str, now: Timestamp, zone: &TimeZone) -> Result<Timestamp, String> {
    let p = phrase.trim().to_lowercase();
    if p.is_empty() {
        return Err("say when: e.g. \"in 20m\", \"at 15:00\" or \"tomorrow 9am\"".into());
    }
    let at = instant(&p, now, zone).ok_or_else(|| {
        format!(
            "{phrase:?} is not a time Vyre reads: say e.g. \"in 20m\", \"in 2 hours\", \"at 15:00\", \"9am\", \"tomorrow 9:30\", \"2026-12-24 18:00\" or an RFC 3339 instant"
        )
    })?;
    if at.duration_since(now) > FARTHEST {
        return Err(format!("{phrase:?} is more than ten years away"));
    }
    Ok(at)
}

fn instant(p: &str, now: Timestamp, zone: &TimeZone) -> Option<Timestamp> {
    if let Some(rest) = p.strip_prefix("in ") {
        return later(rest, now);
    }
    if let Ok(t) = p.parse::<Timestamp>() {
        return Some(t);
    }
    if let Some(t) = later(p, now) {
        return Some(t);
    }
    let today = now.to_zoned_datetime(zone.clone()).date();
    for (word, days) in [("today", 0), ("tomorrow", 1)] {
        if let Some(rest) = p.strip_prefix(word) {
            let rest = rest.trim_start();
            let rest = rest.strip_prefix("at ").unwrap_or(rest).trim();
            let date = today.checked_add(jiff::Span::new().days(days)).ok()?;
            let time = if rest.is_empty() {
                Time::constant(MORNING, 0, 0, 0)
            } else {
                clock(rest)?
            };
            return on(date, time, zone);
        }
    }
    if let Ok(date) = p.parse::<Date>()
        && !p.contains(':')
    {
        return on(date, Time::constant(MORNING, 0, 0, 0), zone);
    }
    if let Ok(dt) = p.parse::<jiff::civil::DateTime>() {
        return dt
            .to_zoned_datetime(zone.clone())
            .ok()
            .map(|z| z.timestamp());
    }
    let time = clock(p.strip_prefix("at ").unwrap_or(p).trim())?;
    let at = on(today, time, zone)?;
    if at > now {
        Some(at)
    } else {
        on(today.tomorrow().ok()?, time, zone)
    }
}

/// `20m`, `2 hours`, `1h30m`: that long after `now` (never now or before).
fn later(span: &str, now: Timestamp) -> Option<Timestamp> {
    let d: SignedDuration = span.trim().parse().ok()?;
    if d <= SignedDuration::ZERO || d > FARTHEST {
        return None;
    }
    now.checked_add(d).ok()
}

/// A clock time: `15:00`, `9`, `9am`, `9:30pm`, `12am` (midnight).
fn clock(s: &str) -> Option<Time> {
    let s = s.trim();
    let (digits, half) = if let Some(d) = s.strip_suffix("am") {
        (d.trim(), Some(false))
    } else if let Some(d) = s.strip_suffix("pm") {
        (d.trim(), Some(true))
    } else {
        (s, None)
    };
    let (h, m) = match digits.split_once(':') {
        Some((h, m)) if m.len() == 2 => (h.parse::<i8>().ok()?, m.parse::<i8>().ok()?),
        Some(_) => return None,
        None => (digits.parse::<i8>().ok()?, 0),
    };
    let h = match half {
        Some(pm) if (1..=12).contains(&h) => h % 12 + if pm { 12 } else { 0 },
        Some(_) => return None,
        None => h,
    };
    Time::new(h, m, 0, 0).ok()
}

/// `time` on `date` in `zone` (a time a clock change skips is moved past the gap).
fn on(date: Date, time: Time, zone: &TimeZone) -> Option<Timestamp> {
    date.to_datetime(time)
        .to_zoned_datetime(zone.clone())
        .ok()
        .map(|z: ZonedDateTime| z.timestamp())
}

/// Whether `phrase` means "the next time I open Vyre" rather than a time: `when I next open
/// Vyre`, `next time I open Vyre`, `when I open Vyre`, `on open`.
pub fn on_open(phrase: &str) -> bool {
    let words: Vec<String> = phrase
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    matches!(
        words.join(" ").as_str(),
        "when i next open vyre"
            | "next time i open vyre"
            | "the next time i open vyre"
            | "when i open vyre"
            | "on open"
    )
}

/// The zone a person named (an IANA name such as `Europe/Paris`), or this machine's.
pub fn zone(name: Option<&str>) -> Result<TimeZone, String> {
    match name {
        Some(n) => TimeZone::get(n).map_err(|_| {
            format!(
                "{n:?} is not a time zone Vyre knows: name one like \"Europe/Paris\" or \"UTC\""
            )
        }),
        None => Ok(TimeZone::system()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(phrase: &str) -> Result<String, String> {
        // A Thursday afternoon in Paris (UTC+1 in December).
        let now: Timestamp = "2026-12-03T14:20:00Z".parse().unwrap();
        let paris = TimeZone::get("Europe/Paris").unwrap();
        parse(phrase, now, &paris).map(|t| t.to_string())
    }

    #[test]
    fn a_persons_words_become_the_instant_they_mean() {
        for (phrase, want) in [
            ("in 20m", "2026-12-03T14:40:00Z"),
            ("in 2 hours", "2026-12-03T16:20:00Z"),
            ("In 1h30m", "2026-12-03T15:50:00Z"),
            ("20 minutes", "2026-12-03T14:40:00Z"),
            ("at 18:00", "2026-12-03T17:00:00Z"),
            ("18:00", "2026-12-03T17:00:00Z"),
            ("9pm", "2026-12-03T20:00:00Z"),
            ("at 9:30am", "2026-12-04T08:30:00Z"),
            ("12am", "2026-12-03T23:00:00Z"),
            ("tomorrow", "2026-12-04T08:00:00Z"),
            ("tomorrow at 9:30pm", "2026-12-04T20:30:00Z"),
            ("today 18:00", "2026-12-03T17:00:00Z"),
            ("2026-12-24 18:00", "2026-12-24T17:00:00Z"),
            ("2026-12-24", "2026-12-24T08:00:00Z"),
            ("2026-07-01 09:00", "2026-07-01T07:00:00Z"),
            ("2026-12-24T17:00:00Z", "2026-12-24T17:00:00Z"),
        ] {
            assert_eq!(at(phrase).as_deref(), Ok(want), "{phrase:?}");
        }
    }

    #[test]
    fn words_that_name_no_time_say_how_to_say_one() {
        for bad in [
            "",
            "soon",
            "in -5m",
            "in 0s",
            "25:00",
            "13pm",
            "9:5",
            "in 20 years",
            "2046-01-01",
            "tomorrow at noonish",
        ] {
            let err = at(bad).unwrap_err();
            assert!(
                err.contains("say") || err.contains("ten years"),
                "{bad:?}: {err}"
            );
        }
        assert!(
            zone(Some("Mars/Olympus"))
                .unwrap_err()
                .contains("not a time zone")
        );
        assert!(zone(Some("UTC")).is_ok());
    }

    #[test]
    fn the_next_time_the_person_opens_vyre_is_not_a_time() {
        for yes in ["when I next open Vyre", "Next time I open Vyre!", "on open"] {
            assert!(on_open(yes), "{yes:?}");
        }
        for no in ["in 20m", "open", "when I next open the door", ""] {
            assert!(!on_open(no), "{no:?}");
        }
    }
}
