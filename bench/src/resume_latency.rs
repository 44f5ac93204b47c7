//! Time to the first text delta when a send resumes a thread whose session closed for
//! idleness, beside a fresh start, on the release vyred.
//!
//! One thread at a time, so neither figure waits for another session's CLI: a thread starts
//! with a first message (the fresh start, timed), its session closes for idleness, a second
//! message resumes it (timed), and it closes again before the next thread starts. Fresh starts
//! and resumes alternate, so both see the same machine.

use std::path::Path;
use std::time::Instant;

use serde_json::json;
use vyre::surfaces::client::EventStream;

use crate::fake_api::FakeApi;
use crate::resume::{self, TurnSeen};
use crate::sessions;

/// Milliseconds from the call to the first text delta, sorted.
pub struct Latency {
    /// `threads.start` with a first message.
    pub fresh: Vec<f64>,
    /// `threads.send` to that thread once its session closed for idleness.
    pub resumed: Vec<f64>,
    /// The same, but `threads.warm` was called [`WRITING`] before the send, as the app does
    /// when the person starts writing.
    pub warmed: Vec<f64>,
}

/// How long before the send the person started writing (a few words).
pub const WRITING: std::time::Duration = std::time::Duration::from_millis(500);

pub async fn run(cli: &Path, threads: usize) -> Result<Latency, String> {
    let api = FakeApi::start().await;
    let mut server = resume::spawn_vyred(cli, &api)?;
    eprintln!(
        "resume: 1 + {threads} threads on the release vyred, each started, closed for idleness and resumed..."
    );
    let result = async {
        let (client, mut stream) = resume::connect(&mut server).await?;
        let work = resume::work(&server);
        let mut latency = Latency {
            fresh: Vec::with_capacity(threads),
            resumed: Vec::with_capacity(threads),
            warmed: Vec::with_capacity(threads),
        };
        // Thread 0 warms up (the CLI's files in the page cache) and is not counted.
        for i in 0..=threads {
            let text = format!("fresh {i}");
            let input = json!({ "cwd": work, "text": text });
            let sent = Instant::now();
            let (answer, seen) = tokio::join!(
                sessions::start_thread(&client, input),
                one_turn(&mut stream)
            );
            let thread = answer?;
            let fresh = took(&thread, seen?, sent, &text, false)?;

            let text = format!("resumed {i}");
            let input = json!({ "thread": thread, "text": text });
            let sent = Instant::now();
            let (answer, seen) =
                tokio::join!(client.call("threads.send", &input), one_turn(&mut stream));
            answer.map_err(|e| format!("threads.send failed: {e}"))?;
            let resumed = took(&thread, seen?, sent, &text, true)?;

            let text = format!("warmed {i}");
            let input = json!({ "thread": thread, "text": text });
            let writing = async {
                client
                    .call("threads.warm", &json!({ "thread": thread }))
                    .await
                    .map_err(|e| format!("threads.warm failed: {e}"))?;
                tokio::time::sleep(WRITING).await;
                let sent = Instant::now();
                client
                    .call("threads.send", &input)
                    .await
                    .map_err(|e| format!("threads.send failed: {e}"))?;
                Ok::<_, String>(sent)
            };
            let (sent, seen) = tokio::join!(writing, one_turn(&mut stream));
            let warmed = took(&thread, seen?, sent?, &text, true)?;
            if i > 0 {
                latency.fresh.push(fresh);
                latency.resumed.push(resumed);
                latency.warmed.push(warmed);
            }
        }
        Ok::<_, String>(latency)
    }
    .await;
    let stopped = server.stop().await;
    let mut latency = result?;
    stopped?;
    latency.fresh.sort_by(f64::total_cmp);
    latency.resumed.sort_by(f64::total_cmp);
    latency.warmed.sort_by(f64::total_cmp);
    Ok(latency)
}

/// The events of the one thread that is live, from its start (or resume) through its turn to
/// its idle close: the thread, and what they said.
async fn one_turn(stream: &mut EventStream) -> Result<(String, TurnSeen), String> {
    let mut thread = None;
    let mut seen = TurnSeen::default();
    while !seen.done() {
        let (e, at) = sessions::next_event(stream).await?;
        let of = e["thread"].as_str().unwrap_or_default().to_string();
        match &thread {
            None => thread = Some(of),
            Some(t) if *t != of => {
                return Err(format!("an event of another thread during a turn: {e}"));
            }
            Some(_) => {}
        }
        seen.see(&e, at)?;
    }
    Ok((thread.unwrap_or_default(), seen))
}

/// Milliseconds from `sent` to the first delta of a turn of `thread` that answered `text`,
/// started `resumed` or not.
fn took(
    thread: &str,
    (of, seen): (String, TurnSeen),
    sent: Instant,
    text: &str,
    resumed: bool,
) -> Result<f64, String> {
    if of != thread {
        return Err(format!("the events were of thread {of}, not {thread}"));
    }
    seen.check(text, resumed)?;
    let first = seen
        .first_delta
        .ok_or("a turn ended without a text delta")?;
    Ok((first - sent).as_secs_f64() * 1000.0)
}
