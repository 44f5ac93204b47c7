//! A new session's first words (issue 26, ADR 0032): from `threads.start` with a first message
//! to the thread's first text delta, on the release vyred holding a warm spare and on one that
//! holds none, beside the CLI started directly by vyre's Claude driver (spawn, `initialize`,
//! the first message, its first delta): what a person waits for when they start a session.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use vyre::surfaces::client::{Client, EventStream};

use crate::fake_api::FakeApi;
use crate::sessions;
use crate::sessions_latency::Direct;
use crate::spawn::{self, Server, TempDir};

/// Milliseconds to the first delta, sorted, and what a spare held.
pub struct FirstWords {
    pub warm: Vec<f64>,
    pub cold: Vec<f64>,
    /// Cold, without the harness plugin (`sessions.harness: false`): the plugin's first-turn
    /// cost is `cold` minus this.
    pub bare: Vec<f64>,
    /// Warm, without the plugin: the plugin's cost to a first turn on a spare is `warm` minus
    /// this (its cost to the start is in the spare's making, before the person asks).
    pub warm_bare: Vec<f64>,
    pub warm_bare_asked: Vec<f64>,
    pub direct: Vec<f64>,
    /// Of `warm` and `direct`, the part until the CLI's Messages request for the first words
    /// reached the API (what vyred, its hooks and the CLI do before asking the model); the rest
    /// is the model's first delta back through the CLI (and vyred) to the reader.
    pub warm_asked: Vec<f64>,
    pub direct_asked: Vec<f64>,
    /// The CLI started directly ahead of its message, as a spare is (spawned, `initialize`
    /// answered, prepared, held [`HELD`]), then the message: the floor a spare can reach, what
    /// Claude Code itself takes from a message to its first delta; and of it, until it asked.
    pub ahead: Vec<f64>,
    pub ahead_asked: Vec<f64>,
    /// The resident memory of the spare's processes (Claude Code under its sandbox), bytes.
    pub spare_rss: u64,
    /// A session's processes after its first turn, median, with the plugin and without, bytes.
    pub turn_rss: u64,
    pub bare_turn_rss: u64,
    /// The CPU a session's processes had used when its first turn ended (its start and that
    /// turn; children reaped by then counted), median, with the plugin and without, ms: the
    /// plugin's cost without the wall clock's noise of a cold start on a busy machine.
    pub turn_cpu_ms: f64,
    pub bare_turn_cpu_ms: f64,
}

/// One vyred's starts.
struct Run {
    ms: Vec<f64>,
    asked: Vec<f64>,
    spare_rss: u64,
    turn_rss: Vec<u64>,
    turn_cpu_ms: Vec<f64>,
}

pub async fn run(cli: &Path, starts: usize) -> Result<FirstWords, String> {
    let api = FakeApi::start().await;
    eprintln!("first words: 1 + {starts} new sessions each, warm, cold and the CLI directly...");
    let warm = through_vyred(cli, &api, starts, 1, true).await?;
    let warm_bare = through_vyred(cli, &api, starts, 1, false).await?;
    let cold = through_vyred(cli, &api, starts, 0, true).await?;
    let bare = through_vyred(cli, &api, starts, 0, false).await?;
    let mut direct = Vec::with_capacity(starts);
    let mut direct_asked = Vec::with_capacity(starts);
    let dir = TempDir::new("first-words")?;
    let quiet = || {
        vec![(
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".to_string(),
            std::ffi::OsString::from("1"),
        )]
    };
    for i in 0..=starts {
        let sent = Instant::now();
        let mut d = Direct::start(cli, &api, &dir, &format!("direct-{i}"), quiet()).await?;
        let spawned = sent.elapsed().as_secs_f64() * 1000.0;
        let text = format!("direct {i}");
        let first = d.turn(&text).await;
        d.process.stop(Duration::from_secs(5)).await;
        if i > 0 {
            direct.push(spawned + first?);
            direct_asked.push(asked(&api, sent, &text)?);
        }
    }
    let (mut ahead, mut ahead_asked) = (Vec::with_capacity(starts), Vec::with_capacity(starts));
    for i in 0..=starts {
        let mut d = Direct::start(cli, &api, &dir, &format!("ahead-{i}"), quiet()).await?;
        d.prepare().await?;
        tokio::time::sleep(HELD).await;
        let text = format!("ahead {i}");
        let sent = Instant::now();
        let first = d.turn(&text).await;
        d.process.stop(Duration::from_secs(5)).await;
        if i > 0 {
            ahead.push(first?);
            ahead_asked.push(asked(&api, sent, &text)?);
        }
    }
    let sort = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v
    };
    let middle = |v: Vec<f64>| sort(v).get(starts / 2).copied().unwrap_or(0.0);
    let median = |mut v: Vec<u64>| {
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0)
    };
    Ok(FirstWords {
        warm_asked: sort(warm.asked),
        warm_bare: sort(warm_bare.ms),
        warm_bare_asked: sort(warm_bare.asked),
        direct_asked: sort(direct_asked),
        ahead: sort(ahead),
        ahead_asked: sort(ahead_asked),
        warm: sort(warm.ms),
        spare_rss: warm.spare_rss,
        turn_rss: median(cold.turn_rss),
        cold: sort(cold.ms),
        bare_turn_rss: median(bare.turn_rss),
        turn_cpu_ms: middle(cold.turn_cpu_ms),
        bare_turn_cpu_ms: middle(bare.turn_cpu_ms),
        bare: sort(bare.ms),
        direct: sort(direct),
    })
}

/// `starts` new threads (after one not counted) in one folder on a fresh release vyred with
/// `sessions.spares` = `spares` and the harness plugin on or off, one at a time, each stopped
/// after its first turn; with a spare, each start waits until the spare is held, as a person's
/// next start would find it.
async fn through_vyred(
    cli: &Path,
    api: &FakeApi,
    starts: usize,
    spares: u32,
    harness: bool,
) -> Result<Run, String> {
    let vyred = spawn::vyred()?;
    let url = api.url();
    let mut server = Server::spawn_configured(&vyred, |dir| {
        std::fs::create_dir_all(dir.join("work")).map_err(|e| e.to_string())?;
        let mut config = sessions::claude_config(cli, &url, &dir.join("home"));
        config["sessions"]["spares"] = json!(spares);
        config["sessions"]["harness"] = json!(harness);
        Ok(Some(config))
    })?;
    let result = async {
        server.wait_healthy(Duration::from_millis(10)).await?;
        let client = Client::socket(server.socket());
        sessions::add_key(&client).await?;
        let mut stream = client
            .events("types=thread.started,thread.text,thread.finished", None)
            .await
            .map_err(|e| format!("cannot subscribe: {e}"))?;
        let work = server.dir().join("work");
        let mut ms = Vec::with_capacity(starts);
        let mut asked_ms = Vec::with_capacity(starts);
        let mut rss = 0;
        let mut turn_rss = Vec::with_capacity(starts);
        let mut turn_cpu_ms = Vec::with_capacity(starts);
        for i in 0..=starts {
            if spares > 0 && i > 0 {
                rss = rss.max(spare_held(&client).await?);
            }
            let text = format!("first words {i}");
            let sent = Instant::now();
            let (started, seen) = tokio::join!(
                sessions::start_thread(&client, json!({ "cwd": work, "text": text })),
                first_turn(&mut stream)
            );
            let thread = started?;
            let (of, warm, first) = seen?;
            if of != thread {
                return Err(format!("the events were of {of}, not {thread}"));
            }
            if i > 0 && spares > 0 && warm != Some(true) {
                return Err(format!("start {i} did not take the held spare"));
            }
            if i > 0 {
                let (rss, cpu_ms) = live_cost(&client).await?;
                turn_rss.push(rss);
                turn_cpu_ms.push(cpu_ms);
            }
            client
                .call("threads.stop", &json!({ "thread": thread }))
                .await
                .map_err(|e| format!("threads.stop failed: {e}"))?;
            if i > 0 {
                ms.push((first - sent).as_secs_f64() * 1000.0);
                asked_ms.push(asked(api, sent, &text)?);
            }
        }
        Ok::<_, String>(Run {
            ms,
            asked: asked_ms,
            spare_rss: rss,
            turn_rss,
            turn_cpu_ms,
        })
    }
    .await;
    let stopped = server.stop().await;
    let out = result?;
    stopped?;
    Ok(out)
}

/// Milliseconds from `sent` until the first Messages request carrying `text` reached the API.
fn asked(api: &FakeApi, sent: Instant, text: &str) -> Result<f64, String> {
    api.message_requests()
        .into_iter()
        .filter(|r| r.at >= sent && r.body.to_string().contains(text))
        .map(|r| (r.at - sent).as_secs_f64() * 1000.0)
        .min_by(f64::total_cmp)
        .ok_or_else(|| format!("no Messages request carried {text:?}"))
}

/// The memory (bytes) and CPU used so far (ms) of every live session's processes (one here:
/// the thread just started).
async fn live_cost(client: &Client) -> Result<(u64, f64), String> {
    let pids: Value = client
        .call("threads.pids", &json!({}))
        .await
        .map_err(|e| format!("threads.pids failed: {e}"))?;
    let sids: Vec<i32> = pids["sids"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_i64())
        .map(|s| s as i32)
        .collect();
    // Each session's processes, found once (a walk of /proc), then their memory and CPU.
    let pids: Vec<u32> = sids
        .iter()
        .flat_map(|sid| vyre::modules::sessions::spawn::session_members(*sid))
        .map(|pid| pid as u32)
        .collect();
    let rss = pids
        .iter()
        .filter_map(|pid| crate::procfs::status_kb(*pid, "VmRSS").ok())
        .sum::<u64>()
        * 1024;
    let ticks: u64 = pids
        .iter()
        .filter_map(|pid| crate::procfs::cpu_ticks_with_children(*pid).ok())
        .sum();
    Ok((
        rss,
        ticks as f64 * 1000.0 / crate::procfs::clk_tck().0 as f64,
    ))
}

/// How long a spare has been held when the bench's next start comes (a person's next start
/// comes after they read the last answer; a spare only just made may still be settling).
pub const HELD: Duration = Duration::from_secs(2);

/// Wait until a spare is held, and then [`HELD`]; its memory.
async fn spare_held(client: &Client) -> Result<u64, String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let held: Value = client
            .call("threads.spares", &json!({}))
            .await
            .map_err(|e| format!("threads.spares failed: {e}"))?;
        if let Some(spare) = held.as_array().and_then(|a| a.first()) {
            tokio::time::sleep(HELD).await;
            return Ok(spare["rss_bytes"].as_u64().unwrap_or(0));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Err("no spare was held within 60 s".into())
}

/// The events of one new thread through its first turn: the thread, whether it started warm,
/// and when its first delta came.
async fn first_turn(stream: &mut EventStream) -> Result<(String, Option<bool>, Instant), String> {
    let (mut thread, mut warm, mut first) = (None::<String>, None, None);
    loop {
        let (e, at) = sessions::next_event(stream).await?;
        let of = e["thread"].as_str().unwrap_or_default().to_string();
        if thread.get_or_insert_with(|| of.clone()) != &of {
            return Err(format!("an event of another thread during a start: {e}"));
        }
        match e["type"].as_str() {
            Some("thread.started") => warm = e["payload"]["warm"].as_bool(),
            Some("thread.text") if e["payload"]["delta"].is_string() => {
                first.get_or_insert(at);
            }
            Some("thread.finished") => {
                if e["payload"]["ok"] != true {
                    return Err(format!("a first turn failed: {e}"));
                }
                let first = first.ok_or("a first turn without a text delta")?;
                return Ok((of, warm, first));
            }
            _ => {}
        }
    }
}
