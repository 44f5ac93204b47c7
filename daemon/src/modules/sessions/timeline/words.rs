//! Errors and retries in words a person reads: what failed, why, and whether trying again can
//! help. The CLI says `API Error: 500 {"type":"error",...}`; the timeline says "Claude's API
//! failed (500 api_error: ...) and Claude Code gave up after retrying."

use serde_json::Value;

/// How a failed turn reads: its notice's code, text and whether Retry is worth offering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    pub code: &'static str,
    pub text: String,
    pub retryable: bool,
}

/// The HTTP status and the API's own message in `API Error: 500 {json}` (or plain words).
fn api_error(error: &str) -> Option<(u16, String)> {
    let rest = error.trim().strip_prefix("API Error: ")?;
    let (status, rest) = rest.split_once(' ').unwrap_or((rest, ""));
    let Ok(status) = status.parse::<u16>() else {
        return said_status(error.trim().strip_prefix("API Error: ")?);
    };
    let detail = match serde_json::from_str::<Value>(rest.trim()) {
        Ok(v) => {
            let e = &v["error"];
            match (e["type"].as_str(), e["message"].as_str()) {
                (Some(t), Some(m)) => format!("{t}: {m}"),
                (Some(t), None) => t.to_string(),
                (None, Some(m)) => m.to_string(),
                _ => rest.trim().to_string(),
            }
        }
        Err(_) => rest.trim().to_string(),
    };
    Some((status, detail))
}

/// The CLI's other shape: `Request rejected (429) · what the API said`.
fn said_status(rest: &str) -> Option<(u16, String)> {
    let open = rest.find('(')?;
    let status = rest.get(open + 1..open + 4)?.parse::<u16>().ok()?;
    if rest.get(open + 4..open + 5) != Some(")") || !(100..600).contains(&status) {
        return None;
    }
    let detail = match rest.split_once(" · ") {
        Some((_, d)) => d.trim().to_string(),
        None => rest.trim().to_string(),
    };
    Some((status, detail))
}

fn with_detail(status: u16, detail: &str) -> String {
    if detail.is_empty() {
        status.to_string()
    } else {
        format!("{status} {detail}")
    }
}

/// A turn's error (`thread.finished`'s `error`) in words.
pub fn failed_turn(error: &str) -> Said {
    let error = error.trim();
    if let Some((status, detail)) = api_error(error) {
        let d = with_detail(status, &detail);
        return match status {
            401 | 403 => Said {
                code: "auth",
                text: format!(
                    "Claude's API refused the credential ({d}). Check the API key or the sign-in in Settings, then retry."
                ),
                retryable: true,
            },
            429 => Said {
                code: "rate_limited",
                text: format!(
                    "Claude's API is rate limiting this account ({d}); Claude Code gave up after retrying. Wait a little, then retry."
                ),
                retryable: true,
            },
            529 => Said {
                code: "overloaded",
                text: format!(
                    "Claude's API is overloaded ({d}); Claude Code gave up after retrying. Retry in a moment."
                ),
                retryable: true,
            },
            s if s >= 500 => Said {
                code: "api_error",
                text: format!(
                    "Claude's API failed ({d}) and Claude Code gave up after retrying. Retry when it is back."
                ),
                retryable: true,
            },
            _ => Said {
                code: "api_error",
                text: format!("Claude's API refused the request ({d})."),
                retryable: true,
            },
        };
    }
    if error.starts_with("Reached maximum budget") {
        return Said {
            code: "budget",
            text: format!("{error}: this session's budget is spent."),
            retryable: false,
        };
    }
    if error.starts_with("Reached maximum number of turns") {
        return Said {
            code: "turn_failed",
            text: format!("{error}: the turn stopped before it was done."),
            retryable: true,
        };
    }
    if error.starts_with("Claude Code ") && error.contains("mid-turn") {
        return Said {
            code: "exited",
            text: format!("{error}. The session resumes when you send again."),
            retryable: true,
        };
    }
    let lower = error.to_ascii_lowercase();
    if lower.contains("connection") || lower.contains("econnrefused") || lower.contains("timed out")
    {
        return Said {
            code: "api_error",
            text: format!("Claude's API could not be reached ({error}). Retry when it is back."),
            retryable: true,
        };
    }
    Said {
        code: "turn_failed",
        text: if error.is_empty() {
            "The turn failed.".into()
        } else {
            format!("The turn failed: {error}")
        },
        retryable: true,
    }
}

/// A retry the CLI is about to make (`thread.retry`), in words.
pub fn retrying(status: Option<u64>, error: &str, attempt: u64, max: u64, delay_ms: u64) -> String {
    let why = match status {
        Some(429) => "is rate limiting (429)".to_string(),
        Some(529) => "is overloaded (529)".to_string(),
        Some(s) => format!("answered {s}"),
        None => "could not be reached".to_string(),
    };
    let error = error.trim();
    let detail = if error.is_empty() || error.len() > 120 {
        String::new()
    } else {
        format!(" ({error})")
    };
    format!(
        "Claude's API {why}{detail}; trying again in {} (attempt {attempt} of {max}).",
        seconds(delay_ms)
    )
}

/// After a turn that retried: how many tries it took.
pub fn retried(attempts: u64) -> String {
    match attempts {
        1 => "Claude's API failed once; the retry went through.".into(),
        n => format!("Claude's API failed {n} times; a retry went through."),
    }
}

fn seconds(ms: u64) -> String {
    if ms < 1000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        format!("{} s", (ms + 500) / 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_errors_read_as_sentences_with_what_to_do() {
        let s = failed_turn(
            r#"API Error: 500 {"type":"error","error":{"type":"api_error","message":"fake server error"}}"#,
        );
        assert_eq!(s.code, "api_error");
        assert!(
            s.text.contains("500 api_error: fake server error"),
            "{}",
            s.text
        );
        assert!(s.retryable);
        assert_eq!(failed_turn("API Error: 429 slow down").code, "rate_limited");
        // Claude Code 2.1.328's words for a 429 it gave up on.
        let limited = failed_turn(
            "API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit",
        );
        assert_eq!(limited.code, "rate_limited");
        assert!(
            limited.text.contains("(429 Number of request tokens"),
            "{}",
            limited.text
        );
        assert_eq!(
            failed_turn("API Error: Odd (abc) words").code,
            "turn_failed"
        );
        assert_eq!(failed_turn("API Error: 529 {}").code, "overloaded");
        assert_eq!(failed_turn("API Error: 401 bad key").code, "auth");
        let budget = failed_turn("Reached maximum budget ($0.01)");
        assert_eq!((budget.code, budget.retryable), ("budget", false));
        assert_eq!(
            failed_turn("Claude Code exited 1 mid-turn: boom").code,
            "exited"
        );
        assert_eq!(
            failed_turn("something odd").text,
            "The turn failed: something odd"
        );
    }

    #[test]
    fn retries_say_when_and_how_many() {
        assert_eq!(
            retrying(Some(500), "fake", 1, 10, 600),
            "Claude's API answered 500 (fake); trying again in 0.6 s (attempt 1 of 10)."
        );
        assert!(
            retrying(None, "", 2, 10, 2400).contains("could not be reached; trying again in 2 s")
        );
        assert_eq!(
            retried(1),
            "Claude's API failed once; the retry went through."
        );
    }
}
