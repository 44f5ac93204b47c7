//! iCalendar (RFC 5545) in and out: what a calendar app exports and imports. Out, each item
//! becomes the component a calendar expects: a reminder, an alarm or a timer an event at its
//! time with an alarm, a todo a to-do (with its due time and whether it is done), a note a
//! journal entry. In, events, to-dos and journal entries come back as those kinds; what the
//! planner has no place for (attendees, recurrence, locations) is left out, and said so.

use jiff::tz::TimeZone;
use jiff::{Timestamp, civil};

use super::items::{Item, Kind};

/// The most a file may hold.
pub const MAX_BYTES: usize = 2 * 1024 * 1024;
pub const MAX_ITEMS: usize = 5000;

/// An item read from a calendar file.
#[derive(Debug, Clone, PartialEq)]
pub struct Read {
    pub kind: Kind,
    pub text: String,
    pub due_at: Option<i64>,
    pub done: bool,
    /// Its UID, so the same file imported twice adds nothing the second time.
    pub uid: Option<String>,
    /// It repeats (RRULE): only its first time is kept.
    pub repeats: bool,
}

/// `items` as one calendar.
pub fn write(items: &[Item], now: i64) -> String {
    let mut out = String::new();
    let mut line = |s: String| fold(&mut out, &s);
    line("BEGIN:VCALENDAR".into());
    line("VERSION:2.0".into());
    line("PRODID:-//Vyre//Planner//EN".into());
    line("CALSCALE:GREGORIAN".into());
    let stamp = utc(now);
    for item in items {
        let (component, when) = match item.kind {
            Kind::Reminder | Kind::Alarm | Kind::Timer => ("VEVENT", "DTSTART"),
            Kind::Todo => ("VTODO", "DUE"),
            Kind::Note => ("VJOURNAL", "DTSTART"),
        };
        // An event needs a time; one set for "when I next open Vyre" has none yet.
        if component == "VEVENT" && item.due_at.is_none() {
            continue;
        }
        line(format!("BEGIN:{component}"));
        line(format!(
            "UID:{}",
            item.uid
                .clone()
                .unwrap_or_else(|| format!("planner-{}@vyre", item.id))
        ));
        line(format!("DTSTAMP:{stamp}"));
        line(format!("SUMMARY:{}", escape(&item.text)));
        if let Some(at) = item.due_at {
            line(format!("{when}:{}", utc(at)));
        }
        if item.kind == Kind::Note {
            line(format!("DTSTART:{}", utc(item.created_at)));
        }
        if let Some(project) = &item.project {
            line(format!("CATEGORIES:{}", escape(project)));
        }
        if item.kind == Kind::Todo {
            match item.done_at {
                Some(done) => {
                    line("STATUS:COMPLETED".into());
                    line(format!("COMPLETED:{}", utc(done)));
                }
                None => line("STATUS:NEEDS-ACTION".into()),
            }
        }
        if component == "VEVENT" {
            line("BEGIN:VALARM".into());
            line("ACTION:DISPLAY".into());
            line(format!("DESCRIPTION:{}", escape(&item.text)));
            line("TRIGGER:PT0S".into());
            line("END:VALARM".into());
        }
        line(format!("END:{component}"));
    }
    line("END:VCALENDAR".into());
    out
}

/// The items of a calendar file; times without a zone are read in `zone`, a date alone at
/// 9:00 there.
pub fn read(text: &str, zone: &TimeZone) -> Result<Vec<Read>, String> {
    if text.len() > MAX_BYTES {
        return Err(format!(
            "the file is larger than {} MiB",
            MAX_BYTES / 1024 / 1024
        ));
    }
    let lines = unfold(text);
    if lines.first().map(|l| l.trim()) != Some("BEGIN:VCALENDAR") {
        return Err("this is not an iCalendar file: it does not begin with BEGIN:VCALENDAR".into());
    }
    let mut found = Vec::new();
    let mut current: Option<(Kind, Read)> = None;
    let mut depth_alarm = 0usize;
    for (n, raw) in lines.iter().enumerate() {
        let Some((head, value)) = raw.split_once(':') else {
            if raw.trim().is_empty() {
                continue;
            }
            return Err(format!("line {}: {raw:?} is not NAME:value", n + 1));
        };
        let mut parts = head.split(';');
        let name = parts.next().unwrap_or("").to_ascii_uppercase();
        let params: Vec<&str> = parts.collect();
        match (name.as_str(), value.trim()) {
            ("BEGIN", "VALARM") => depth_alarm += 1,
            ("END", "VALARM") => depth_alarm = depth_alarm.saturating_sub(1),
            ("BEGIN", c @ ("VEVENT" | "VTODO" | "VJOURNAL")) => {
                let kind = match c {
                    "VEVENT" => Kind::Reminder,
                    "VTODO" => Kind::Todo,
                    _ => Kind::Note,
                };
                current = Some((
                    kind,
                    Read {
                        kind,
                        text: String::new(),
                        due_at: None,
                        done: false,
                        uid: None,
                        repeats: false,
                    },
                ));
            }
            ("END", "VEVENT" | "VTODO" | "VJOURNAL") => {
                if let Some((_, item)) = current.take() {
                    if found.len() >= MAX_ITEMS {
                        return Err(format!("the file holds more than {MAX_ITEMS} items"));
                    }
                    found.push(item);
                }
            }
            _ if depth_alarm > 0 => {}
            (prop, value) => {
                let Some((kind, item)) = current.as_mut() else {
                    continue;
                };
                match prop {
                    "SUMMARY" => item.text = unescape(value),
                    "DESCRIPTION" if item.text.is_empty() => item.text = unescape(value),
                    "UID" => item.uid = Some(value.to_string()).filter(|u| !u.is_empty()),
                    "RRULE" => item.repeats = true,
                    "STATUS" => item.done = value.eq_ignore_ascii_case("COMPLETED"),
                    "COMPLETED" => item.done = true,
                    "DTSTART" if *kind != Kind::Note && item.due_at.is_none() => {
                        item.due_at = Some(
                            instant(value, &params, zone)
                                .map_err(|e| format!("line {}: {e}", n + 1))?,
                        );
                    }
                    "DUE" => {
                        item.due_at = Some(
                            instant(value, &params, zone)
                                .map_err(|e| format!("line {}: {e}", n + 1))?,
                        );
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(found
        .into_iter()
        .filter(|r| !r.text.trim().is_empty())
        .map(|mut r| {
            r.text = r.text.trim().chars().take(2000).collect();
            r
        })
        .collect())
}

/// A DATE-TIME or DATE value: `20261224T180000Z` (UTC), `20261224T180000` (in its TZID, or
/// `zone`), or `20261224` (9:00 that day).
fn instant(value: &str, params: &[&str], zone: &TimeZone) -> Result<i64, String> {
    let bad = || format!("{value:?} is not a date or a time iCalendar writes");
    let tz = params
        .iter()
        .find_map(|p| p.strip_prefix("TZID="))
        .map(|id| {
            TimeZone::get(id.trim_matches('"')).map_err(|_| format!("unknown time zone {id:?}"))
        })
        .transpose()?
        .unwrap_or_else(|| zone.clone());
    let v = value.trim();
    let (date, time, utc) = match v.split_once('T') {
        Some((d, t)) => match t.strip_suffix('Z') {
            Some(t) => (d, Some(t), true),
            None => (d, Some(t), false),
        },
        None => (v, None, false),
    };
    if date.len() != 8 || !date.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let num = |s: &str| s.parse::<i16>().map_err(|_| bad());
    let day = civil::Date::new(
        num(&date[..4])?,
        num(&date[4..6])? as i8,
        num(&date[6..])? as i8,
    )
    .map_err(|_| bad())?;
    let time = match time {
        Some(t) if t.len() >= 6 && t[..6].bytes().all(|b| b.is_ascii_digit()) => civil::Time::new(
            num(&t[..2])? as i8,
            num(&t[2..4])? as i8,
            num(&t[4..6])? as i8,
            0,
        )
        .map_err(|_| bad())?,
        Some(_) => return Err(bad()),
        None => civil::Time::new(9, 0, 0, 0).expect("9:00"),
    };
    let at = day.to_datetime(time);
    let zoned = if utc {
        at.to_zoned_datetime(TimeZone::UTC)
    } else {
        at.to_zoned_datetime(tz)
    }
    .map_err(|_| bad())?;
    Ok(zoned.timestamp().as_millisecond())
}

fn utc(ms: i64) -> String {
    Timestamp::from_millisecond(ms)
        .map(|t| t.strftime("%Y%m%dT%H%M%SZ").to_string())
        .unwrap_or_else(|_| "19700101T000000Z".into())
}

/// Lines joined where the file folded them (a line break then a space or a tab).
fn unfold(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for raw in text.split('\n') {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        match (raw.strip_prefix([' ', '\t']), lines.last_mut()) {
            (Some(rest), Some(last)) => last.push_str(rest),
            _ => lines.push(raw.to_string()),
        }
    }
    lines
}

/// A line, folded at 75 octets as RFC 5545 asks (never inside a character).
fn fold(out: &mut String, line: &str) {
    let mut width = 0;
    for c in line.chars() {
        if width + c.len_utf8() > 75 {
            out.push_str("\r\n ");
            width = 1;
        }
        out.push(c);
        width += c.len_utf8();
    }
    out.push_str("\r\n");
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace(';', "\\;")
        .replace(',', "\\,")
        .replace('\r', "")
        .replace('\n', "\\n")
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n' | 'N') => out.push('\n'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: i64, kind: Kind, text: &str, due_at: Option<i64>, done_at: Option<i64>) -> Item {
        Item {
            id,
            kind,
            text: text.into(),
            project: Some("Site".into()),
            due_at,
            done_at,
            fell_due_at: None,
            on_open: false,
            created_at: 1_700_000_000_000,
            created_by: "person".into(),
            uid: None,
        }
    }

    #[test]
    fn what_is_written_reads_back_the_same() {
        let at = 1_798_000_000_000;
        let items = vec![
            item(
                1,
                Kind::Reminder,
                "call the bank; ask, politely\nabout fees",
                Some(at),
                None,
            ),
            item(2, Kind::Todo, "ship it", Some(at + 3_600_000), Some(at)),
            item(3, Kind::Note, "the door code is in the vault", None, None),
            item(
                4,
                Kind::Alarm,
                &"a long alarm text ".repeat(10),
                Some(at),
                None,
            ),
        ];
        let text = write(&items, at);
        assert!(text.lines().all(|l| l.len() <= 76), "folded at 75 octets");
        assert!(text.contains("BEGIN:VALARM"));
        let back = read(&text, &TimeZone::UTC).unwrap();
        assert_eq!(back.len(), 4);
        assert_eq!(back[0].text, "call the bank; ask, politely\nabout fees");
        assert_eq!(back[0].due_at, Some(at));
        assert_eq!(back[0].uid.as_deref(), Some("planner-1@vyre"));
        assert_eq!(
            (back[1].kind, back[1].done, back[1].due_at),
            (Kind::Todo, true, Some(at + 3_600_000))
        );
        assert_eq!((back[2].kind, back[2].due_at), (Kind::Note, None));
        assert_eq!(back[3].text, "a long alarm text ".repeat(10).trim());
    }

    #[test]
    fn a_calendar_apps_file_is_read_in_its_zones_and_what_is_bad_is_said() {
        let file = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:abc@example.com\r\nSUMMARY:Dentist\r\nDTSTART;TZID=Europe/Paris:20261224T093000\r\nRRULE:FREQ=YEARLY\r\nBEGIN:VALARM\r\nTRIGGER:-PT15M\r\nDESCRIPTION:not the summary\r\nEND:VALARM\r\nEND:VEVENT\r\nBEGIN:VTODO\r\nSUMMARY:Taxes\r\nDUE;VALUE=DATE:20270415\r\nEND:VTODO\r\nBEGIN:VEVENT\r\nDTSTART:20261201T100000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";
        let got = read(file, &TimeZone::get("America/New_York").unwrap()).unwrap();
        assert_eq!(
            got.len(),
            2,
            "an event without a summary is left out: {got:?}"
        );
        assert_eq!(got[0].text, "Dentist");
        assert!(got[0].repeats);
        // 09:30 in Paris is 08:30 UTC in winter.
        assert_eq!(got[0].due_at, Some(1_798_101_000_000));
        assert_eq!(got[1].kind, Kind::Todo);
        let nine_ny = civil::date(2027, 4, 15)
            .at(9, 0, 0, 0)
            .to_zoned_datetime(TimeZone::get("America/New_York").unwrap())
            .unwrap()
            .timestamp()
            .as_millisecond();
        assert_eq!(got[1].due_at, Some(nine_ny));
        for (bad, says) in [
            ("hello", "not an iCalendar file"),
            (
                "BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:x\nDTSTART:2026-12-01\nEND:VEVENT",
                "not a date",
            ),
            (
                "BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;TZID=Mars/Olympus:20261201T100000\nEND:VEVENT",
                "unknown time zone",
            ),
            ("BEGIN:VCALENDAR\nno colon here", "NAME:value"),
        ] {
            let e = read(bad, &TimeZone::UTC).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }
}
