//! Event throughput and delivery: a vyred started in this process (library API), events
//! appended through the store, and 0, 10 or 100 subscribers reading `GET /v1/events` as
//! Server-Sent Events over the unix socket, in a process of their own (this binary run as
//! `vyre-bench --subscribe`, [`crate::events_subscribers`]), so their reading and parsing is not
//! counted as vyred's: they still share the machine's cores with it, as a person's devices
//! would not.
//!
//! Each event carries `t`, the system clock in nanoseconds just before the write is queued
//! (both processes read the same clock); a subscriber takes the difference on receipt.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use vyre::kernel::Kernel;
use vyre::kernel::events::NewEvent;
use vyre::kernel::paths::VyreHome;

use crate::Opts;
use crate::inproc::InProcess;
use crate::report::{Report, Val};
use crate::spawn::TempDir;

/// Concurrent emitters for the throughput figures (writes share group commits).
const EMITTERS: usize = 64;
/// Events per second in the paced latency runs: a steady trickle, and the goal's load (issue 26:
/// 50,000 appended each second with 100 subscribers, delivered within 10 ms at p99).
const PACED_RATE: u64 = 1_000;
const GOAL_RATE: u64 = 50_000;
pub const KIND: &str = "bench.pinged";

/// The system clock in nanoseconds, which the subscribers' process reads too.
pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

#[derive(Clone, Copy)]
enum Load {
    /// `n` emitters, each appending and awaiting its write in a loop, as fast as they can.
    Flat(usize),
    /// A fixed rate (events per second) shared by `n` emitters: event `i` is appended at
    /// `i / rate` seconds by whichever emitter is free, so the rate holds as long as writes keep
    /// up (the figure is the rate reached).
    Paced { rate: u64, emitters: usize },
}

struct Scenario {
    load: Load,
    subscribers: usize,
    events: u64,
}

struct Outcome {
    appended_per_s: f64,
    /// Delivery latency at the 50th and 99th percentile of every event at every subscriber
    /// (ms); none without subscribers.
    p50_ms: Option<f64>,
    p99_ms: Option<f64>,
    /// Events each subscriber got, in order and without repeats.
    received: Vec<u64>,
    /// Subscribers that saw an id out of order or twice.
    disordered: usize,
    /// From the first append to the last delivery.
    all_delivered_after: Option<Duration>,
    /// CPU time over the run (s): this process (vyred and the emitters) and the subscribers'.
    own_cpu_s: f64,
    subscribers_cpu_s: f64,
}

impl Outcome {
    fn percentile_ms(&self, p: f64) -> Option<f64> {
        if p < 0.9 { self.p50_ms } else { self.p99_ms }
    }
}

pub async fn run(opts: &Opts, report: &mut Report) -> Result<(), String> {
    let (flat_n, seq_n, paced_n, goal_n) = if opts.quick {
        (10_000, 2_000, 1_000, 50_000)
    } else {
        (100_000, 20_000, 5_000, 250_000)
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
            load: Load::Paced {
                rate: PACED_RATE,
                emitters: 1,
            },
            subscribers: subs,
            events: paced_n,
        })
        .await?;
        paced.push((subs, out));
    }
    let goal = scenario(Scenario {
        load: Load::Paced {
            rate: GOAL_RATE,
            emitters: EMITTERS,
        },
        subscribers: 100,
        events: goal_n,
    })
    .await?;
    report.row(
        "events.append_per_s.goal.subs_100",
        &format!("events/s reached, paced at {GOAL_RATE}/s, 100 subscribers"),
        Val::Num(goal.appended_per_s, 0),
        none(),
        ">= 50,000",
    );

    let latency_rows = flat
        .iter()
        .filter(|(subs, _)| *subs > 0)
        .map(|(subs, out)| ("full", format!("full load, {subs} subs"), *subs, out))
        .chain(
            paced
                .iter()
                .map(|(subs, out)| ("paced", format!("{PACED_RATE}/s, {subs} subs"), *subs, out)),
        )
        .chain(std::iter::once((
            "goal",
            format!("{GOAL_RATE}/s, 100 subs"),
            100,
            &goal,
        )));
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
        if let (Some(after), "full" | "goal") = (out.all_delivered_after, load) {
            let total: u64 = out.received.iter().sum();
            report.row(
                &format!("events.delivered_per_s.{load}.subs_{subs}"),
                &format!("deliveries/s, {what}"),
                Val::Num(total as f64 / after.as_secs_f64(), 0),
                none(),
                "",
            );
            // Where the two cores went: vyred's process (and the emitters in it) against the
            // subscribers' own, per thousand deliveries.
            let per_k = |s: f64| Val::Num(s * 1e6 / total.max(1) as f64, 2);
            report.row(
                &format!("events.cpu_ms_per_k.vyred.subs_{subs}"),
                &format!("  CPU per 1,000 deliveries (ms), vyred + emitters, {what}"),
                per_k(out.own_cpu_s),
                none(),
                "",
            );
            report.row(
                &format!("events.cpu_ms_per_k.subscribers.subs_{subs}"),
                &format!("  CPU per 1,000 deliveries (ms), the subscribers, {what}"),
                per_k(out.subscribers_cpu_s),
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
        .chain(std::iter::once(("goal", 100, goal_n, &goal)))
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
                match load {
                    "full" => "full load".to_string(),
                    "goal" => format!("{GOAL_RATE}/s"),
                    _ => "paced".to_string(),
                }
            ),
            Val::Text(text),
            none(),
            "every one, in order",
        );
    }
    report.note(format!(
        "events: vyred in-process; payload {{\"i\",\"t\"}}; full load = {EMITTERS} emitters awaiting their writes in a loop ({flat_n} events), sequential = {seq_n}, paced = {paced_n} at {PACED_RATE}/s by one emitter, goal = {goal_n} at {GOAL_RATE}/s by {EMITTERS} emitters (the timer wakes them each millisecond, so events come in bursts of about 50); subscribers read SSE over the unix socket in a process of their own (`vyre-bench --subscribe`), so their reading and parsing is not vyred's, though with 100 of them they still share the 2 cores with it and bound the append rate; latency is the system clock at receipt minus the clock just before the append, both processes reading the same clock; no Node equivalent, reference columns empty"
    ));
    Ok(())
}

/// One fresh in-process vyred, `subscribers` SSE clients, then the load.
async fn scenario(s: Scenario) -> Result<Outcome, String> {
    let what = match s.load {
        Load::Flat(n) => format!("{n} emitter(s)"),
        Load::Paced { rate, emitters } => format!("{rate}/s by {emitters} emitter(s)"),
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
    // Every stream is subscribed before the subscribers' process says it is ready.
    let subscribers = match s.subscribers {
        0 => None,
        n => Some(crate::events_subscribers::Subscribers::spawn(socket, n, s.events).await?),
    };

    let start_ns = now_ns();
    let start = Instant::now();
    let cpu = || {
        crate::procfs::cpu_ticks(std::process::id())
            .map_or(0.0, |t| t as f64 / crate::procfs::clk_tck().0 as f64)
    };
    let cpu_before = cpu();
    match s.load {
        Load::Flat(n) => emit(kernel, n, None, s.events).await?,
        Load::Paced { rate, emitters } => emit(kernel, emitters, Some(rate), s.events).await?,
    }
    let appended = start.elapsed();
    let appended_per_s = s.events as f64 / appended.as_secs_f64();
    let Some(subscribers) = subscribers else {
        return Ok(Outcome {
            appended_per_s,
            p50_ms: None,
            p99_ms: None,
            received: vec![],
            disordered: 0,
            all_delivered_after: None,
            own_cpu_s: cpu() - cpu_before,
            subscribers_cpu_s: 0.0,
        });
    };
    let got = subscribers.finish().await?;
    let own_cpu_s = cpu() - cpu_before;
    let complete = got.received.iter().all(|&r| r == s.events);
    let last = got.last_delivery_ns;
    Ok(Outcome {
        appended_per_s,
        p50_ms: got.p50_us.map(|u| u as f64 / 1000.0),
        p99_ms: got.p99_us.map(|u| u as f64 / 1000.0),
        received: got.received,
        disordered: got.disordered,
        all_delivered_after: (complete && last > start_ns)
            .then(|| Duration::from_nanos(last - start_ns)),
        own_cpu_s,
        subscribers_cpu_s: got.cpu_s,
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

/// `events` appends by `emitters` tasks, each awaiting its write before taking the next; with a
/// `rate`, event `i` waits until `i / rate` seconds after the start.
async fn emit(
    kernel: &Kernel,
    emitters: usize,
    rate: Option<u64>,
    events: u64,
) -> Result<(), String> {
    let start = tokio::time::Instant::now();
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
                if let Some(rate) = rate {
                    let due = start + Duration::from_nanos(i * 1_000_000_000 / rate);
                    tokio::time::sleep_until(due).await;
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
