//! The events benchmark's subscribers, in a process of their own: this binary run as
//! `vyre-bench --subscribe <socket> <streams> <expected>` opens that many `GET /v1/events`
//! streams, says `ready` on stdout once every one is subscribed, reads until each has the
//! expected events (or, once told `done` on stdin, until [`DRAIN_TIMEOUT`] passes), and answers
//! one JSON line: what each stream got, how many saw an id twice or out of order, the delivery
//! latencies' percentiles and when the last event arrived.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::watch;
use vyre::surfaces::client::{Client, EventStream};

use crate::events::{KIND, now_ns};

/// How long the subscribers get, after the last append, to receive everything.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(180);

/// What the subscribers' process answers.
pub struct Got {
    pub received: Vec<u64>,
    pub disordered: usize,
    pub p50_us: Option<u64>,
    pub p99_us: Option<u64>,
    pub last_delivery_ns: u64,
    /// The subscribers' process's CPU time over its life (s).
    pub cpu_s: f64,
}

/// The subscribers' process, its streams open.
pub struct Subscribers {
    child: tokio::process::Child,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Subscribers {
    pub async fn spawn(socket: &Path, streams: usize, expected: u64) -> Result<Self, String> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
        let mut child = tokio::process::Command::new(exe)
            .arg("--subscribe")
            .arg(socket)
            .arg(streams.to_string())
            .arg(expected.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start the subscribers' process: {e}"))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        match lines.next_line().await {
            Ok(Some(l)) if l == "ready" => Ok(Subscribers { child, lines }),
            other => Err(format!(
                "the subscribers' process did not get ready: {other:?}"
            )),
        }
    }

    /// Say the appends are done, and read what the subscribers got.
    pub async fn finish(mut self) -> Result<Got, String> {
        let mut stdin = self.child.stdin.take();
        if let Some(stdin) = stdin.as_mut() {
            let _ = stdin.write_all(b"done\n").await;
        }
        let line = self
            .lines
            .next_line()
            .await
            .map_err(|e| e.to_string())?
            .ok_or("the subscribers' process answered nothing")?;
        // Read before it is reaped: its CPU time, all of it spent reading the streams.
        let cpu_s = self
            .child
            .id()
            .and_then(|pid| crate::procfs::cpu_ticks(pid).ok())
            .map_or(0.0, |t| t as f64 / crate::procfs::clk_tck().0 as f64);
        drop(stdin);
        let _ = self.child.wait().await;
        let v: Value = serde_json::from_str(&line).map_err(|e| format!("{e}: {line}"))?;
        Ok(Got {
            received: v["received"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_u64).collect())
                .unwrap_or_default(),
            disordered: v["disordered"].as_u64().unwrap_or(0) as usize,
            p50_us: v["p50_us"].as_u64(),
            p99_us: v["p99_us"].as_u64(),
            last_delivery_ns: v["last_delivery_ns"].as_u64().unwrap_or(0),
            cpu_s,
        })
    }
}

/// `vyre-bench --subscribe <socket> <streams> <expected>`: the child's side.
pub async fn child(args: &[String]) -> Result<(), String> {
    let [socket, streams, expected] = args else {
        return Err("--subscribe takes <socket> <streams> <expected>".into());
    };
    let streams: usize = streams.parse().map_err(|_| "streams is a number")?;
    let expected: u64 = expected.parse().map_err(|_| "expected is a number")?;
    let (give_up, give_up_rx) = watch::channel(false);
    let last_delivery = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::with_capacity(streams);
    for _ in 0..streams {
        // The stream is subscribed to the bus before the answer's headers arrive.
        let stream = Client::socket(socket)
            .events(&format!("types={KIND}"), None)
            .await
            .map_err(|e| format!("cannot subscribe: {e}"))?;
        tasks.push(tokio::spawn(subscriber(
            stream,
            expected,
            give_up_rx.clone(),
            last_delivery.clone(),
        )));
    }
    println!("ready");
    // Once the appends are done, the streams get until the deadline to receive everything;
    // stdin's end says the parent is done with this process.
    let (end, ended) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let mut stdin = BufReader::new(tokio::io::stdin()).lines();
        let _ = stdin.next_line().await;
        let drain = tokio::spawn(async move {
            tokio::time::sleep(DRAIN_TIMEOUT).await;
            let _ = give_up.send(true);
        });
        let _ = stdin.next_line().await;
        drain.abort();
        let _ = end.send(());
    });
    let mut latencies_us = Vec::new();
    let mut received = Vec::new();
    let mut disordered = 0;
    for task in tasks {
        let got = task
            .await
            .map_err(|e| format!("a subscriber failed: {e}"))?;
        latencies_us.extend(got.latencies_us);
        received.push(got.count);
        disordered += usize::from(got.disordered);
    }
    latencies_us.sort_unstable();
    let at = |p: f64| -> Option<u32> {
        let n = latencies_us.len();
        (n > 0).then(|| latencies_us[((n as f64 * p).ceil() as usize).clamp(1, n) - 1])
    };
    println!(
        "{}",
        json!({
            "received": received,
            "disordered": disordered,
            "p50_us": at(0.5),
            "p99_us": at(0.99),
            "last_delivery_ns": last_delivery.load(Ordering::Relaxed),
        })
    );
    // Stay until the parent has read this process's CPU time and closed stdin.
    let _ = ended.await;
    Ok(())
}

struct Received {
    count: u64,
    latencies_us: Vec<u32>,
    disordered: bool,
}

/// Read until `expected` events arrived, the stream ends, or the drain deadline passes.
async fn subscriber(
    mut stream: EventStream,
    expected: u64,
    mut give_up: watch::Receiver<bool>,
    last_delivery: Arc<AtomicU64>,
) -> Received {
    let mut got = Received {
        count: 0,
        latencies_us: Vec::new(),
        disordered: false,
    };
    let mut last_id = 0i64;
    let mut last_at = 0;
    while got.count < expected {
        let msg = tokio::select! {
            msg = stream.next() => msg,
            _ = give_up.wait_for(|g| *g) => break,
        };
        let Some(Ok(msg)) = msg else { break };
        let now = now_ns();
        let id: i64 = msg.id.as_deref().and_then(|i| i.parse().ok()).unwrap_or(0);
        if id <= last_id {
            got.disordered = true;
            continue;
        }
        last_id = id;
        last_at = now;
        got.count += 1;
        if let Some(t) = field_u64(&msg.data, "\"t\":") {
            got.latencies_us
                .push((now.saturating_sub(t) / 1000).min(u32::MAX as u64) as u32);
        }
    }
    last_delivery.fetch_max(last_at, Ordering::Relaxed);
    got
}

/// The number after `key` in a JSON text, without parsing the whole document.
fn field_u64(text: &str, key: &str) -> Option<u64> {
    let at = memchr::memmem::find(text.as_bytes(), key.as_bytes())? + key.len();
    let digits: &str = text[at..].trim_start();
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_timestamp() {
        let data = r#"{"id":3,"at":1,"type":"bench.pinged","payload":{"i":2,"t":12345}}"#;
        assert_eq!(field_u64(data, "\"t\":"), Some(12345));
        assert_eq!(field_u64(data, "\"x\":"), None);
    }
}
