//! Before `vyre up` restarts an older vyred onto a new binary: let the turns that are running
//! finish first, up to a limit, so an upgrade does not cut a session off mid-answer. A turn still
//! running at the limit is stopped by the restart (`thread.stopped`, reason `restart`) and its
//! thread resumes on the next message, as after any restart.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::surfaces::client::Client;

/// How often the running turns are looked at while waiting.
const POLL: Duration = Duration::from_millis(250);

/// The threads in `listed` (`threads.list`'s answer) whose turn is under way: launching, running,
/// or waiting on a person's answer.
pub fn busy(listed: &Value) -> Vec<Busy> {
    listed
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| {
            let state = t["state"].as_str()?;
            matches!(state, "starting" | "running" | "waiting").then(|| Busy {
                thread: t["thread"].as_str().unwrap_or("?").to_string(),
                waiting: state == "waiting",
            })
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Busy {
    pub thread: String,
    /// Waiting on a person's answer (in Needs), not on the model.
    pub waiting: bool,
}

/// What became of the wait.
#[derive(Debug, PartialEq, Eq)]
pub enum Drained {
    /// Nothing was running.
    Idle,
    /// Everything that ran has finished.
    Finished { turns: usize },
    /// The limit came first: these were still under way.
    TimedOut { left: Vec<Busy> },
}

/// Wait until no turn runs on the vyred behind `client`, at most `limit`, saying what it waits
/// for once and what happened at the end.
pub async fn wait_for_turns(client: &Client, limit: Duration) -> Drained {
    let Some(first) = look(client).await else {
        return Drained::Idle;
    };
    if first.is_empty() {
        return Drained::Idle;
    }
    if limit.is_zero() {
        return Drained::TimedOut { left: first };
    }
    let asks = first.iter().filter(|b| b.waiting).count();
    println!(
        "Waiting for {} to finish before the restart (at most {}s; `vyre up --wait 0` restarts at once){}.",
        turns(first.len()),
        limit.as_secs(),
        if asks > 0 {
            format!(", {asks} of them on your answer in Needs")
        } else {
            String::new()
        }
    );
    let deadline = Instant::now() + limit;
    let mut seen = first.len();
    loop {
        tokio::time::sleep(POLL).await;
        let Some(now) = look(client).await else {
            return Drained::Finished { turns: seen };
        };
        if now.is_empty() {
            return Drained::Finished { turns: seen };
        }
        seen = seen.max(now.len());
        if Instant::now() >= deadline {
            return Drained::TimedOut { left: now };
        }
    }
}

async fn look(client: &Client) -> Option<Vec<Busy>> {
    client
        .call("threads.list", &json!({}))
        .await
        .ok()
        .map(|l| busy(&l))
}

pub fn turns(n: usize) -> String {
    if n == 1 {
        "1 turn".into()
    } else {
        format!("{n} turns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_threads_are_those_launching_running_or_waiting_on_a_person() {
        let listed = json!([
            { "thread": "a", "state": "running" },
            { "thread": "b", "state": "idle" },
            { "thread": "c", "state": "waiting" },
            { "thread": "d", "state": "stopped" },
            { "thread": "e", "state": "starting" },
            { "thread": "f", "state": "failed" },
            { "state": "running" },
        ]);
        let found = busy(&listed);
        let ids: Vec<&str> = found.iter().map(|b| b.thread.as_str()).collect();
        assert_eq!(ids, ["a", "c", "e", "?"]);
        assert!(found[1].waiting && !found[0].waiting);
        assert!(busy(&json!({ "error": "x" })).is_empty());
    }
}
