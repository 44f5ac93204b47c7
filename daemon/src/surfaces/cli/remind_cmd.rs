//! `vyre remind me in 20m to check the deploy`: a reminder in words, set with `planner.add`
//! in this machine's time zone. Two orders are read: the time first (`in 20m to ...`,
//! `tomorrow at 9 to ...`) or the thing first (`to stretch in 1h`, `to call the bank tomorrow`).

use serde_json::json;

use super::fail;
use crate::surfaces::client::Client;

/// Words that start a time at the end of "to <what> <when>" (compared in lower case).
const TIME_STARTS: [&str; 6] = [
    " in ",
    " at ",
    " tomorrow",
    " today",
    " when i next open",
    " next time i open",
];

/// `(when, what)` from the words after `remind`.
pub fn split(words: &[String]) -> Result<(String, String), String> {
    let said = words.join(" ");
    let said = said.trim();
    let rest = said.strip_prefix("me ").unwrap_or(said).trim();
    let usage =
        || format!("say when and what: `vyre remind me in 20m to check the deploy` (not {said:?})");
    let (when, what) = if let Some(what) = rest.strip_prefix("to ") {
        // The thing first: the time is the last of its words that starts one.
        // ASCII lower case keeps every byte where it was, so a place found in it is one in `what`.
        let lower = what.to_ascii_lowercase();
        let at = TIME_STARTS
            .iter()
            .filter_map(|w| lower.rfind(w))
            .max()
            .ok_or_else(usage)?;
        (what[at..].trim(), what[..at].trim())
    } else {
        let (when, what) = rest.split_once(" to ").ok_or_else(usage)?;
        (when.trim(), what.trim())
    };
    if when.is_empty() || what.is_empty() {
        return Err(usage());
    }
    Ok((when.to_string(), what.to_string()))
}

pub async fn remind(client: &Client, words: &[String]) -> i32 {
    let (when, what) = match split(words) {
        Ok(x) => x,
        Err(e) => return fail(&e),
    };
    let zone = jiff::tz::TimeZone::system();
    let mut input = json!({ "text": what, "at": when });
    if let Some(name) = zone.iana_name() {
        input["zone"] = json!(name);
    }
    match client.call("planner.add", &input).await {
        Ok(item) => {
            let at = item["due_at"]
                .as_i64()
                .and_then(|ms| jiff::Timestamp::from_millisecond(ms).ok())
                .map(|t| {
                    t.to_zoned_datetime(zone)
                        .strftime("%a %-d %b %H:%M")
                        .to_string()
                })
                .unwrap_or_else(|| "when you next open Vyre".to_string());
            println!("Reminder {} set for {at}: {what}", item["id"]);
            0
        }
        Err(e) => fail(&e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::split;

    fn s(words: &str) -> Result<(String, String), String> {
        split(&words.split(' ').map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn a_reminder_in_words_splits_into_when_and_what() {
        for (said, when, what) in [
            (
                "me in 20m to check the deploy",
                "in 20m",
                "check the deploy",
            ),
            ("in 20m to check the deploy", "in 20m", "check the deploy"),
            (
                "me tomorrow at 9 to call the bank",
                "tomorrow at 9",
                "call the bank",
            ),
            ("me to stretch in 1h", "in 1h", "stretch"),
            (
                "me to look at the logs at 18:00",
                "at 18:00",
                "look at the logs",
            ),
            ("me to call the bank tomorrow", "tomorrow", "call the bank"),
            ("me at 9 to go to the station", "at 9", "go to the station"),
            (
                "me to ask about the invoice when I next open Vyre",
                "when I next open Vyre",
                "ask about the invoice",
            ),
            (
                "me when I next open Vyre to water the plants",
                "when I next open Vyre",
                "water the plants",
            ),
            ("me to stretch In 1h", "In 1h", "stretch"),
        ] {
            assert_eq!(s(said), Ok((when.into(), what.into())), "{said:?}");
        }
        for bad in [
            "me",
            "me check the deploy",
            "me to",
            "me to stretch",
            "me in 20m to",
        ] {
            assert!(s(bad).unwrap_err().contains("say when and what"), "{bad:?}");
        }
    }
}
