//! What a watcher's run says, one JSON object a line on its stdout (its stdin got one line:
//! `{"since": <its cursor>, "vault": {<name>: <value>}, "dry_run": <bool>, "webhook": <what its
//! webhook was called with, or null>}`):
//!
//! - `{"emit": {"title": "...", "body"?: "...", "url"?: "...", "id"?: "...", "at"?: ...}}`: an
//!   item to file into the project (`id` is the item's own, so the same one is filed once);
//! - `{"log": "..."}`: a line for the watcher's log;
//! - `{"since": <anything>}`: where the next run starts (the last one wins);
//! - `{"error": "..."}`: the script's own word that this run failed.
//!
//! A run is taken whole or not at all: one line that is not one of these (or too long, or too
//! many items) fails the run, nothing is filed and the cursor stays where it was, so nothing is
//! lost; the log says which line and why.

use serde::Serialize;
use serde_json::Value;

/// The most bytes a run may print (more and it is stopped).
pub const MAX_OUTPUT: usize = 4 * 1024 * 1024;
/// The longest line.
pub const MAX_LINE: usize = 256 * 1024;
/// The most items one run may file.
pub const MAX_ITEMS: usize = 1000;
const MAX_TITLE: usize = 500;
const MAX_BODY: usize = 20_000;
const MAX_LOG: usize = 4_000;
const MAX_SINCE: usize = 4_096;

/// An item a run filed.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Item {
    pub title: String,
    pub body: Option<String>,
    pub url: Option<String>,
    /// Its own id at the source, when it has one.
    pub id: Option<String>,
    /// When it happened at the source (ms since the epoch), when it says.
    pub at: Option<i64>,
}

/// What a run said.
#[derive(Debug, Default, PartialEq)]
pub struct Said {
    pub items: Vec<Item>,
    pub logs: Vec<String>,
    /// The cursor for the next run, when it moved it.
    pub since: Option<Value>,
    /// The script's own word that it failed.
    pub error: Option<String>,
}

/// Read a run's whole output; the first line that breaks the protocol fails the run.
pub fn read(output: &[u8]) -> Result<Said, String> {
    if output.len() > MAX_OUTPUT {
        return Err(format!(
            "it printed more than {} MiB",
            MAX_OUTPUT / 1024 / 1024
        ));
    }
    let mut said = Said::default();
    for (n, line) in output.split(|&b| b == b'\n').enumerate() {
        let n = n + 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if line.len() > MAX_LINE {
            return Err(format!("line {n} is longer than {} KiB", MAX_LINE / 1024));
        }
        let v: Value = serde_json::from_slice(line).map_err(|e| {
            format!(
                "line {n} is not JSON ({e}): {}",
                String::from_utf8_lossy(&line[..line.len().min(120)])
            )
        })?;
        let Some(obj) = v.as_object().filter(|o| o.len() == 1) else {
            return Err(format!(
                "line {n} is not one of {{\"emit\": ...}}, {{\"log\": ...}}, {{\"since\": ...}} or {{\"error\": ...}}"
            ));
        };
        let (key, value) = obj.iter().next().expect("one key");
        match key.as_str() {
            "emit" => {
                if said.items.len() >= MAX_ITEMS {
                    return Err(format!("it filed more than {MAX_ITEMS} items in one run"));
                }
                said.items
                    .push(item(value).map_err(|why| format!("line {n}: {why}"))?);
            }
            "log" => {
                let text = value
                    .as_str()
                    .ok_or_else(|| format!("line {n}: log takes a string"))?;
                said.logs.push(cut(text, MAX_LOG));
            }
            "since" => {
                if value.to_string().len() > MAX_SINCE {
                    return Err(format!("line {n}: since is longer than {MAX_SINCE} bytes"));
                }
                said.since = Some(value.clone());
            }
            "error" => {
                let text = value
                    .as_str()
                    .ok_or_else(|| format!("line {n}: error takes a string"))?;
                said.error = Some(cut(text, MAX_LOG));
            }
            other => {
                return Err(format!(
                    "line {n} says {other:?}, which is not emit, log, since or error"
                ));
            }
        }
    }
    Ok(said)
}

fn item(v: &Value) -> Result<Item, String> {
    let o = v.as_object().ok_or("emit takes an object")?;
    if let Some(k) = o
        .keys()
        .find(|k| !["title", "body", "url", "id", "at"].contains(&k.as_str()))
    {
        return Err(format!(
            "an item has {k:?}: it takes title, body, url, id and at"
        ));
    }
    let text = |k: &str, max: usize| -> Result<Option<String>, String> {
        match o.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.len() <= max => Ok(Some(s.clone())),
            Some(Value::String(_)) => Err(format!("an item's {k} is longer than {max} bytes")),
            Some(_) => Err(format!("an item's {k} must be a string")),
        }
    };
    let title = text("title", MAX_TITLE)?
        .filter(|t| !t.trim().is_empty())
        .ok_or("an item needs a title")?;
    let url = text("url", 2_000)?;
    if let Some(u) = &url
        && !(u.starts_with("https://") || u.starts_with("http://"))
    {
        return Err(format!("an item's url {u:?} is not http(s)"));
    }
    let at = match o.get("at") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => Some(n.as_i64().ok_or("an item's at is not whole milliseconds")?),
        Some(Value::String(s)) => Some(
            s.parse::<jiff::Timestamp>()
                .map_err(|_| format!("an item's at {s:?} is not an RFC 3339 time"))?
                .as_millisecond(),
        ),
        Some(_) => return Err("an item's at is milliseconds or an RFC 3339 time".into()),
    };
    Ok(Item {
        title,
        body: text("body", MAX_BODY)?,
        url,
        id: text("id", 200)?,
        at,
    })
}

/// At most `max` bytes of `s`, on a character boundary.
fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_files_its_items_logs_and_moves_its_cursor() {
        let out = br#"{"log": "looking since 41"}
{"emit": {"title": "Issue 42 opened", "url": "https://example.com/42", "id": "42", "at": "2026-12-03T10:00:00Z"}}

{"emit": {"title": "Issue 43 opened", "body": "It breaks", "at": 1796292000000}}
{"since": {"issue": 43}}
"#;
        let said = read(out).unwrap();
        assert_eq!(said.items.len(), 2);
        assert_eq!(said.items[0].id.as_deref(), Some("42"));
        assert_eq!(said.items[0].at, Some(1796292000000));
        assert_eq!(said.since, Some(serde_json::json!({ "issue": 43 })));
        assert_eq!(said.logs, vec!["looking since 41".to_string()]);
        assert_eq!(said.error, None);
        assert_eq!(read(b"").unwrap(), Said::default(), "nothing new is fine");
    }

    #[test]
    fn one_line_that_breaks_the_protocol_fails_the_whole_run_in_words() {
        for (out, words) in [
            (
                &b"{\"emit\": {\"title\": \"ok\"}}\nnot json\n"[..],
                "line 2 is not JSON",
            ),
            (b"[1, 2]", "not one of"),
            (b"{\"emit\": {}, \"log\": \"x\"}", "not one of"),
            (
                b"{\"shell\": \"rm -rf /\"}",
                "not emit, log, since or error",
            ),
            (b"{\"emit\": {\"body\": \"no title\"}}", "needs a title"),
            (
                b"{\"emit\": {\"title\": \"x\", \"url\": \"javascript:alert(1)\"}}",
                "not http(s)",
            ),
            (
                b"{\"emit\": {\"title\": \"x\", \"secret\": 1}}",
                "it takes title",
            ),
            (
                b"{\"emit\": {\"title\": \"x\", \"at\": \"yesterday\"}}",
                "not an RFC 3339",
            ),
            (b"{\"log\": 5}", "log takes a string"),
        ] {
            let err = read(out).unwrap_err();
            assert!(err.contains(words), "{words}: {err}");
        }
        let many = "{\"emit\": {\"title\": \"x\"}}\n".repeat(MAX_ITEMS + 1);
        assert!(
            read(many.as_bytes())
                .unwrap_err()
                .contains("more than 1000 items")
        );
        let huge = vec![b'x'; MAX_OUTPUT + 1];
        assert!(read(&huge).unwrap_err().contains("more than 4 MiB"));
        let long = format!("{{\"log\": \"{}\"}}", "y".repeat(MAX_LINE));
        assert!(
            read(long.as_bytes())
                .unwrap_err()
                .contains("longer than 256 KiB")
        );
        let since = format!("{{\"since\": \"{}\"}}", "z".repeat(MAX_SINCE));
        assert!(
            read(since.as_bytes())
                .unwrap_err()
                .contains("since is longer")
        );
        // A long log line is kept cut, not refused.
        let said = read(format!("{{\"log\": \"{}\"}}", "é".repeat(3000)).as_bytes()).unwrap();
        assert!(said.logs[0].len() <= MAX_LOG + 3 && said.logs[0].ends_with('…'));
    }
}
