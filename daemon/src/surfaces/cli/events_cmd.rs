//! `vyre events`: print events from the log, and follow new ones with `--follow`.

use serde_json::{Value, json};

use super::fail;
use crate::surfaces::client::Client;

pub async fn events(
    client: &Client,
    since: Option<i64>,
    types: Option<String>,
    thread: Option<String>,
    follow: bool,
    as_json: bool,
) -> i32 {
    // Without --since: the last 20 events (or, following, only new ones).
    let since = match since {
        Some(id) => Some(id),
        None if follow => None,
        None => {
            let mut input = json!({ "limit": 20 });
            if let Some(t) = &types {
                input["types"] = json!(t.split(',').map(str::trim).collect::<Vec<_>>());
            }
            if let Some(t) = &thread {
                input["thread"] = json!(t);
            }
            match client.call("system.events", &input).await {
                Ok(Value::Array(list)) => {
                    for e in &list {
                        print_event(e, as_json);
                    }
                    return 0;
                }
                Ok(_) => return fail("unexpected answer from system.events"),
                Err(e) => return fail(&e.to_string()),
            }
        }
    };
    let mut query: Vec<String> = Vec::new();
    if let Some(id) = since {
        query.push(format!("since={id}"));
    }
    if let Some(t) = &types {
        query.push(format!("types={}", encode(t)));
    }
    if let Some(t) = &thread {
        query.push(format!("thread={}", encode(t)));
    }
    if !follow {
        query.push("follow=false".into());
    }
    let mut stream = match client.events(&query.join("&"), None).await {
        Ok(s) => s,
        Err(e) => return fail(&e.to_string()),
    };
    while let Some(msg) = stream.next().await {
        match msg {
            Ok(msg) => {
                let event: Value = serde_json::from_str(&msg.data).unwrap_or(Value::Null);
                print_event(&event, as_json);
            }
            Err(e) => return fail(&e.to_string()),
        }
    }
    0
}

fn print_event(e: &Value, as_json: bool) {
    if as_json {
        println!("{e}");
        return;
    }
    let thread = e["thread"]
        .as_str()
        .map(|t| format!(" [{t}]"))
        .unwrap_or_default();
    println!(
        "{:>6}  {}  {:<22} {}{}  {}",
        e["id"],
        format_time(e["at"].as_i64().unwrap_or(0)),
        e["type"].as_str().unwrap_or("?"),
        e["source"].as_str().unwrap_or("?"),
        thread,
        e["payload"]
    );
}

/// `HH:MM:SS` in UTC; the full time is in `--json`.
fn format_time(ms: i64) -> String {
    let s = (ms / 1000).rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", s / 3600, (s % 3600) / 60, s % 60)
}

/// Percent-encode a query value.
pub(crate) fn encode(v: &str) -> String {
    v.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'*' | b',' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
