//! Event throughput and delivery: a vyred started in this process (library API), events
//! appended through the store, and 0, 10 or 100 subscribers reading `GET /v1/events` as
//! Server-Sent Events over the unix socket.
//!
//! Each event carries `t`, nanoseconds since a process-wide [`Instant`] taken just before the
//! write is queued; a subscriber takes the difference on receipt. Emitters, daemon and
//! subscribers share this process and its cores, so the figures are conservative.

use std::path::Path;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::sync::watch;
use vyre::kernel::Kernel;
use vyre::kernel::events::NewEvent;
use vyre::kernel::paths::VyreHome;
use vyre::surfaces::client::{Client, EventStream};

use crate::Opts;
use crate::inproc::InProcess;
use crate::report::{Report, Val};
use crate::spawn::TempDir;

/// Concurrent emitters for the throughput figures (writes share group commits).
const EMITTERS: usize = 64;
/// Events per second in the paced latency runs.
const PACED_RATE: u64 = 1_000;
/// How long subscribers get, after the last append, to receive everything.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(180);
const KIND: &str = "bench.pinged";

fn base() -> Instant {
    static BASE: OnceLock<Instant> = OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

fn now_ns() -> u64 {
    base().elapsed().as_nanos() as u64
}

#[derive(Clone, Copy)]
enum Load {
    /// `n` emitters, each appending and awaiting its write in a loop, as fast as they can.
    Flat(usize),
    /// One emitter at a fixed rate (events per second).
    Paced(u64),
}

struct Scenario {
    load: Load,
    subscribers: usize,
    events: u64,
}

struct Outcome {
    appended_per_s: f64,
    /// Delivery latencies of every event at every subscriber, in microseconds, sorted.
    latencies_us: Vec<u32>,
    /// Events each subscriber got, in order and without repeats.
    received: Vec<u64>,
    /// Subscribers that saw an id out of order or twice.
    disordered: usize,
    /// From the first append to the last delivery.
    all_delivered_after: Option<Duration>,
}

impl Outcome {
    fn percentile_ms(&self, p: f64) -> Option<f64> {
        if self.latencies_us.is_empty() {
            return None;
        }
        let i = ((self.latencies_us.len() as f64 * p).ceil() as usize)
            .clamp(1, self.latencies_us.len())
            - 1;
        Some(self.latencies_us[i] as f64 / 1000.0)
    }
}

pub async fn run(opts: &Opts, report: &mut Report) -> Result<(), String> {
    base();
    let (flat_n, seq_n, paced_n) = if opts.quick {
        (10_000, 2_000, 1_000)
    } else {
        (100_000, 20_000, 5_000)
    };
    let none = || Val::Missing("-".into());

    let seq = scenario(Scenario {
        load: Load::Flat(1),
        subscribers: 0,
        events: seq_n,
    })
    .await?;
    report.row(
        "events.append_per_s.seq",
        "events/s, 1 emitter, 0 subscribers",
        Val::Num(seq.appended_per_s, 0),
        none(),
        "",
    );

    let mut flat = Vec::new();
    for subs in [0, 10, 100] {
        let out = scenario(Scenario {
            load: Load::Flat(EMITTERS),
            subscribers: subs,
            events: flat_n,
        })
        .await?;
        let target = if subs == 100 { ">= 50,000" } else { "" };
        report.row(
            &format!("events.append_per_s.subs_{subs}"),
            &format!("events/s, {EMITTERS} emitters, {subs} subscribers"),
            Val::Num(out.appended_per_s, 0),
            none(),
            target,
        );
        flat.push((subs, out));
    }

    let mut paced = Vec::new();
    for subs in [10, 100] {
        let out = scenario(Scenario {
            load: Load::Paced(PACED_RATE),
            subscribers: subs,
            events: paced_n,
        })
        .await?;
        paced.push((subs, out));
    }

    let latency_rows = flat
        .iter()
        .filter(|(subs, _)| *subs > 0)
        .map(|(subs, out)| ("full", format!("full load, {subs} subs"), *subs, out))
        .chain(
            paced
                .iter()
                .map(|(subs, out)| ("paced", format!("{PACED_RATE}/s, {subs} subs"), *subs, out)),
        );
    for (load, what, subs, out) in latency_rows {
        for (p, name) in [(0.5, "p50"), (0.99, "p99")] {
            report.row(
                &format!("events.latency_{name}_ms.{load}.subs_{subs}"),
                &format!("delivery {name} (ms), {what}"),
                out.percentile_ms(p)
                    .map_or(Val::Missing("none".into()), |v| Val::Num(v, 2)),
                none(),
                if name == "p99" { "< 10" } else { "" },
            );
        }
        if let (Some(after), "full") = (out.all_delivered_after, load) {
            let total: u64 = out.received.iter().sum();
            report.row(
                &format!("events.delivered_per_s.{load}.subs_{subs}"),
                &format!("deliveries/s, {what}"),
                Val::Num(total as f64 / after.as_secs_f64(), 0),
                none(),
                "",
            );
        }
    }

    for (load, subs, n, out) in flat
        .iter()
        .filter(|(subs, _)| *subs > 0)
        .map(|(s, o)| ("full", *s, flat_n, o))
        .chain(paced.iter().map(|(s, o)| ("paced", *s, paced_n, o)))
    {
        let complete = out.received.iter().filter(|&&r| r == n).count();
        let ok = complete == subs && out.disordered == 0;
        let text = if ok {
            format!("all {subs} got {n}")
        } else {
            format!("{complete}/{subs} complete, {} disordered", out.disordered)
        };
        report.row(
            &format!("events.complete.{load}.subs_{subs}"),
            &format!(
                "every event to every subscriber, {}, {subs} subs",
                if load == "full" { "full load" } else { "paced" }
            ),
            Val::Text(text),
            none(),
            "every one, in order",
        );
    }
    report.note(format!(
        "events: vyred in-process; payload {{\"i\",\"t\"}}; full load = {EMITTERS} emitters awaiting their writes in a loop ({flat_n} events), sequential = {seq_n}, paced = {paced_n} at {PACED_RATE}/s; subscribers read SSE over the unix socket in the same process, so with 100 of them their own reading and parsing shares the 2 cores with vyred and bounds the append rate (a profile shows the time spread over socket wake-ups, copies and the clients' parsing, not one hot spot in vyred); no Node equivalent, reference columns empty"
    ));
    Ok(())
}

/// One fresh in-process vyred, `subscribers` SSE clients, then the load.
async fn scenario(s: Scenario) -> Result<Outcome, String> {
    let what = match s.load {
        Load::Flat(n) => format!("{n} emitter(s)"),
        Load::Paced(r) => format!("{r}/s"),
    };
    eprintln!(
        "events: {} events, {what}, {} subscribers...",
        s.events, s.subscribers
    );
    let dir = TempDir::new("events")?;
    // One caller opens every subscriber's stream: room for them all beside the default limit
    // (`limits.streams`, 16 per caller, which stops one caller holding vyred's memory).
    let home = dir.path().join("vyre");
    crate::spawn::write_config(
        &home,
        &serde_json::json!({ "limits": { "streams": s.subscribers + 16 } }),
    )?;
    let vyred = InProcess::start(VyreHome::at(home), vec![]).await?;
    let result = drive(&s, vyred.kernel(), vyred.socket()).await;
    vyred.stop().await?;
    drop(dir);
    result
}

async fn drive(s: &Scenario, kernel: &Kernel, socket: &Path) -> Result<Outcome, String> {
    let (give_up, give_up_rx) = watch::channel(false);
    let last_delivery = Arc::new(AtomicU64::new(0));
    let mut subscribers = Vec::with_capacity(s.subscribers);
    for _ in 0..s.subscribers {
        // The stream is subscribed to the bus before the answer's headers arrive.
        let stream = Client::socket(socket)
            .events(&format!("types={KIND}"), None)
            .await
            .map_err(|e| format!("cannot subscribe: {e}"))?;
        subscribers.push(tokio::spawn(subscriber(
            stream,
            s.events,
            give_up_rx.clone(),
            last_delivery.clone(),
        )));
    }

    let start_ns = now_ns();
    let start = Instant::now();
    match s.load {
        Load::Flat(n) => emit_flat(kernel, n, s.events).await?,
        Load::Paced(rate) => emit_paced(kernel, rate, s.events).await?,
    }
    let appended = start.elapsed();

    // Give subscribers until the deadline to receive everything.
    let timer = tokio::spawn(async move {
        tokio::time::sleep(DRAIN_TIMEOUT).await;
        let _ = give_up.send(true);
    });
    let mut latencies_us = Vec::new();
    let mut received = Vec::new();
    let mut disordered = 0;
    for sub in subscribers {
        let got = sub
            .await
            .map_err(|e| format!("a subscriber task failed: {e}"))?;
        latencies_us.extend(got.latencies_us);
        received.push(got.count);
        disordered += usize::from(got.disordered);
    }
    timer.abort();
    latencies_us.sort_unstable();
    let complete = received.iter().all(|&r| r == s.events);
    let last = last_delivery.load(Ordering::Relaxed);
    Ok(Outcome {
        appended_per_s: s.events as f64 / appended.as_secs_f64(),
        latencies_us,
        received,
        disordered,
        all_delivered_after: (s.subscribers > 0 && complete && last > start_ns)
            .then(|| Duration::from_nanos(last - start_ns)),
    })
}

async fn append(kernel: &Kernel, i: u64) -> Result<i64, String> {
    let t = now_ns();
    kernel
        .store()
        .write(move |tx| tx.emit(NewEvent::new(KIND, json!({ "i": i, "t": t }))))
        .await
        .map_err(|e| format!("cannot append event {i}: {e}"))
}

async fn emit_flat(kernel: &Kernel, emitters: usize, events: u64) -> Result<(), String> {
    let next = Arc::new(AtomicU64::new(0));
    let mut tasks: Vec<tokio::task::JoinHandle<Result<(), String>>> = Vec::with_capacity(emitters);
    for _ in 0..emitters {
        let kernel = kernel.clone();
        let next = next.clone();
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= events {
                    return Ok(());
                }
                append(&kernel, i).await?;
            }
        }));
    }
    for task in tasks {
        task.await
            .map_err(|e| format!("an emitter task failed: {e}"))??;
    }
    Ok(())
}

async fn emit_paced(kernel: &Kernel, rate: u64, events: u64) -> Result<(), String> {
    let start = tokio::time::Instant::now();
    let period = Duration::from_nanos(1_000_000_000 / rate);
    for i in 0..events {
        tokio::time::sleep_until(start + period * i as u32).await;
        append(kernel, i).await?;
    }
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
