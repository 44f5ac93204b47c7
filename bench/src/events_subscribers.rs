//! The events benchmark's subscribers, in a process of their own: this binary run as
//! `vyre-bench --subscribe <socket> <streams> <expected>` opens that many `GET /v1/events`
//! streams, says `ready` on stdout once every one is subscribed, reads until each has the
//! expected events (or, once told `done` on stdin, until [`DRAIN_TIMEOUT`] passes), and answers
//! one JSON line: what each stream got, how many saw an id twice or out of order, the delivery
//! latencies' percentiles and when the last event arrived.

use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use memchr::memmem;
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
/// The text is scanned as it comes ([`Scan`]), not parsed message by message: this process
/// stands in for a person's devices, and what it spends is not vyred's.
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
    let mut scan = Scan::default();
    let mut last_id = 0i64;
    let mut last_at = 0;
    while got.count < expected {
        let chunk = tokio::select! {
            chunk = stream.next_bytes() => chunk,
            _ = give_up.wait_for(|g| *g) => break,
        };
        let Some(Ok(chunk)) = chunk else { break };
        let now = now_ns();
        scan.feed(&chunk, |id, t| {
            if id <= last_id {
                got.disordered = true;
                return;
            }
            last_id = id;
            last_at = now;
            got.count += 1;
            if let Some(t) = t {
                got.latencies_us
                    .push((now.saturating_sub(t) / 1000).min(u32::MAX as u64) as u32);
            }
        });
    }
    last_delivery.fetch_max(last_at, Ordering::Relaxed);
    got
}

/// Whole SSE messages found in a stream's text as it arrives: each one's id and `t` field,
/// with what is left of an unfinished message carried to the next chunk.
#[derive(Default)]
struct Scan {
    carry: Vec<u8>,
}

impl Scan {
    /// Calls `each(id, t)` for every whole message with an id (comments have none).
    fn feed(&mut self, chunk: &[u8], each: impl FnMut(i64, Option<u64>)) {
        if self.carry.is_empty() {
            let used = scan(chunk, each);
            self.carry.extend_from_slice(&chunk[used..]);
        } else {
            self.carry.extend_from_slice(chunk);
            let used = scan(&self.carry, each);
            self.carry.drain(..used);
        }
    }
}

/// The messages ended in `buf` (vyred ends each with one blank line, `\n\n`); how many bytes
/// they take.
fn scan(buf: &[u8], mut each: impl FnMut(i64, Option<u64>)) -> usize {
    static BLANK_LINE: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"\n\n"));
    static T: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new(b"\"t\":"));
    let mut used = 0;
    for end in BLANK_LINE.find_iter(buf) {
        if end < used {
            continue;
        }
        let msg = &buf[used..end];
        used = end + 2;
        if let Some(id) = msg.strip_prefix(b"id: ").and_then(digits) {
            each(id as i64, field_u64(msg, &T));
        }
    }
    used
}

/// The number after `key` in a JSON text, without parsing the whole document.
fn field_u64(text: &[u8], key: &memmem::Finder<'_>) -> Option<u64> {
    let at = key.find(text)? + key.needle().len();
    let rest = &text[at..];
    let start = rest.iter().position(|b| !b.is_ascii_whitespace())?;
    digits(&rest[start..])
}

/// The whole number at the start of `text`.
fn digits(text: &[u8]) -> Option<u64> {
    let mut n: u64 = 0;
    let mut any = false;
    for &b in text {
        if !b.is_ascii_digit() {
            break;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
        any = true;
    }
    any.then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_timestamp() {
        let data = br#"{"id":3,"at":1,"type":"bench.pinged","payload":{"i":2,"t":12345}}"#;
        assert_eq!(
            field_u64(data, &memmem::Finder::new(b"\"t\":")),
            Some(12345)
        );
        assert_eq!(field_u64(data, &memmem::Finder::new(b"\"x\":")), None);
        assert_eq!(digits(b"18446744073709551616"), None, "too large");
        assert_eq!(digits(b"x1"), None);
    }

    #[test]
    fn counts_messages_split_anywhere() {
        let text = b": keep-alive\n\nid: 7\nevent: bench.pinged\ndata: {\"payload\":{\"i\":0,\"t\":99}}\n\nid: 8\nevent: bench.pinged\ndata: {\"payload\":{\"i\":1,\"t\":100}}\n\n";
        // Every way of cutting the text in two gives the same messages.
        for cut in 0..=text.len() {
            let mut scan = Scan::default();
            let mut seen = Vec::new();
            scan.feed(&text[..cut], |id, t| seen.push((id, t)));
            scan.feed(&text[cut..], |id, t| seen.push((id, t)));
            assert_eq!(seen, vec![(7, Some(99)), (8, Some(100))], "cut at {cut}");
            assert!(scan.carry.is_empty());
        }
        // An unfinished message waits for its end.
        let mut scan = Scan::default();
        let mut seen = Vec::new();
        scan.feed(b"id: 9\ndata: {\"t\":1}\n", |id, t| seen.push((id, t)));
        assert!(seen.is_empty());
        scan.feed(b"\n", |id, t| seen.push((id, t)));
        assert_eq!(seen, vec![(9, Some(1))]);
    }
}
