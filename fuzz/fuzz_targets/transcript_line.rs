//! One line of a Claude Code transcript through the daemon's reader (`transcripts/line.rs`).
//!
//! Checked beyond "no panic":
//! - whitespace around a line (a CRLF file, an indented line) changes nothing;
//! - what was read, written out again as a current CLI line, reads back the same (words, ids,
//!   place, time; a title; a summary);
//! - what is said is never blank, a message id belongs to Claude's words only, and a person's
//!   words are never a command the CLI ran for them;
//! - timestamps: a time read from a line, written out again, reads back to the same
//!   millisecond, and so does any millisecond from year 0 to 9999.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use vyre::kernel::transcripts::line::{self, Line, Role};

/// Milliseconds since the epoch as the CLI writes them (`2026-11-30T12:51:34.220Z`), for years 0
/// to 9999 (Howard Hinnant's civil-from-days, the inverse of what `parse_time` uses).
fn format_time(ms: i64) -> Option<String> {
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    if !(0..=9999).contains(&y) {
        return None;
    }
    let (h, mi, s, milli) = (
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000,
    );
    Some(format!(
        "{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}Z"
    ))
}

/// A millisecond from the input, anywhere from year 0 to 9999.
fn some_ms(data: &[u8]) -> i64 {
    const YEAR_0: i64 = -62_167_219_200_000;
    const YEAR_10000: i64 = 253_402_300_800_000;
    let mut b = [0u8; 8];
    for (i, x) in data.iter().take(8).enumerate() {
        b[i] = *x;
    }
    YEAR_0 + (u64::from_le_bytes(b) % (YEAR_10000 - YEAR_0) as u64) as i64
}

fn check_time(ms: i64) {
    if let Some(text) = format_time(ms) {
        assert_eq!(line::parse_time(&text), Some(ms), "{text}");
    }
}

fuzz_target!(|data: &[u8]| {
    let read = line::parse(data);
    let mut padded = b" \t".to_vec();
    padded.extend_from_slice(data);
    padded.extend_from_slice(b" \r\n");
    assert_eq!(line::parse(&padded), read, "whitespace around the line");

    check_time(some_ms(data));
    if let Ok(text) = std::str::from_utf8(data)
        && let Some(ms) = line::parse_time(text)
    {
        check_time(ms);
    }

    let again = match &read {
        Ok(Line::Said(s)) => {
            assert!(!s.text.trim().is_empty(), "{s:?}");
            assert!(s.message_id.is_none() || s.role == Role::Assistant, "{s:?}");
            let t = s.text.trim_start();
            assert!(
                s.role == Role::Assistant
                    || !(t.starts_with("<command-")
                        || t.starts_with("<local-command-")
                        || t.starts_with("<system-reminder>")),
                "{s:?}"
            );
            let mut v = json!({
                "type": s.role.as_str(),
                "uuid": s.uuid,
                "isSidechain": false,
                "message": { "role": s.role.as_str(), "content": [{ "type": "text", "text": s.text }] },
            });
            if let Some(id) = &s.message_id {
                v["message"]["id"] = json!(id);
            }
            let mut expected = s.clone();
            expected.at = None;
            if let Some(at) = s.at {
                check_time(at);
                if let Some(ts) = format_time(at) {
                    v["timestamp"] = json!(ts);
                    expected.at = Some(at);
                }
            }
            for (key, value) in [
                ("cwd", &s.cwd),
                ("sessionId", &s.session),
                ("entrypoint", &s.entrypoint),
            ] {
                if let Some(value) = value {
                    v[key] = json!(value);
                }
            }
            Some((v, Line::Said(expected)))
        }
        Ok(Line::Title(t)) => Some((
            json!({ "type": "custom-title", "customTitle": t, "sessionId": "s" }),
            Line::Title(t.clone()),
        )),
        Ok(Line::Summary(t)) => Some((
            json!({ "type": "summary", "summary": t, "leafUuid": "u" }),
            Line::Summary(t.clone()),
        )),
        // A place is a Codex rollout's (`transcripts::rollout`), never a Claude Code line's.
        Ok(Line::Place { .. }) => panic!("a Claude Code line read as a place"),
        Ok(Line::Passed) | Err(_) => None,
    };
    if let Some((v, expected)) = again {
        let text = serde_json::to_string(&v).expect("a Value serializes");
        assert_eq!(line::parse(text.as_bytes()), Ok(expected), "{text}");
    }
});
