//! vyred's own memory as history piles up: the release vyred drives many threads through many
//! turns, each session closing for idleness after every turn and resuming on the next send, and
//! its RSS is read from `/proc` with no session live after each round of turns.
//!
//! The history lives in the store and in the CLI's transcripts, so vyred's RSS after the last
//! round should match the RSS after the warm-up rounds.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::task::JoinSet;
use vyre::kernel::paths::VyreHome;
use vyre::surfaces::client::{Client, EventStream};

use crate::fake_api::FakeApi;
use crate::procfs;
use crate::resume::{self, TurnSeen};
use crate::sessions;
use crate::spawn::Server;

/// Threads with a turn in flight at once: under `sessions.max_live` (6), so no session is closed
/// to make room, only for idleness.
pub const AT_ONCE: usize = 5;
/// Rounds (one turn of every thread each) before the warm reading.
const WARM_ROUNDS: usize = 2;
/// Time after a round's last session closed before reading memory.
pub const SETTLE: Duration = Duration::from_secs(1);

/// How many threads, and how many turns each.
#[derive(Clone, Copy)]
pub struct Shape {
    pub threads: usize,
    pub turns_each: usize,
}

pub struct History {
    pub threads: usize,
    pub turns_each: usize,
    pub turns: usize,
    /// Turns whose session started with `resumed: true`.
    pub resumes: usize,
    /// Turns done at the warm reading.
    pub warm_turns: usize,
    pub warm: Rss,
    pub end: Rss,
    /// vyred's memory after each round, at rest.
    pub rounds: Vec<Rss>,
    /// `VmHWM`: vyred's peak RSS over its life.
    pub hwm_kb: u64,
    pub store_bytes: u64,
    pub transcripts_bytes: u64,
    /// vyred's utime + stime over the rounds.
    pub cpu_s: f64,
    pub wall: Duration,
}

/// vyred's resident memory at one reading, in kB.
#[derive(Clone, Copy, Default)]
pub struct Rss {
    /// `VmRSS`.
    pub kb: u64,
    /// `RssAnon`: the part that is not a file's pages (the heap, SQLite's page caches, stacks),
    /// so not the binary's code paged in as new paths run.
    pub anon_kb: u64,
}

impl Rss {
    fn read(pid: u32) -> std::io::Result<Rss> {
        Ok(Rss {
            kb: procfs::status_kb(pid, "VmRSS")?,
            anon_kb: procfs::status_kb(pid, "RssAnon")?,
        })
    }
}

pub async fn run(cli: &Path, shape: Shape) -> Result<History, String> {
    let api = FakeApi::start().await;
    let mut server = resume::spawn_vyred(cli, &api)?;
    eprintln!(
        "resume: {} threads x {} turns on the release vyred, each session closed for idleness and resumed at every turn...",
        shape.threads, shape.turns_each
    );
    let result = async {
        let (client, mut stream) = resume::connect(&mut server).await?;
        measure(&server, &client, &mut stream, shape).await
    }
    .await;
    let stopped = server.stop().await;
    let history = result?;
    stopped?;
    Ok(history)
}

async fn measure(
    server: &Server,
    client: &Client,
    stream: &mut EventStream,
    shape: Shape,
) -> Result<History, String> {
    let pid = server.pid();
    let read_err = |e: std::io::Error| format!("cannot read /proc: {e}");
    let (tck, _) = procfs::clk_tck();
    let work = resume::work(server);
    let mut ids: Vec<Option<String>> = vec![None; shape.threads];
    let mut resumes = 0;
    let mut rounds = Vec::with_capacity(shape.turns_each);
    let cpu_before = procfs::cpu_ticks(pid).map_err(read_err)?;
    let began = Instant::now();
    for round in 0..shape.turns_each {
        resumes += run_round(client, stream, &work, round, &mut ids).await?;
        tokio::time::sleep(SETTLE).await;
        let live = client
            .call("threads.pids", &json!({}))
            .await
            .map_err(|e| format!("threads.pids failed: {e}"))?;
        let live = live["pids"].as_array().map_or(0, Vec::len);
        if live != 0 {
            return Err(format!("{live} sessions still live after round {round}"));
        }
        let rss = Rss::read(pid).map_err(read_err)?;
        rounds.push(rss);
        eprintln!(
            "resume:   round {}/{}: {:.0} s, vyred RSS {:.1} MiB ({:.1} anonymous)",
            round + 1,
            shape.turns_each,
            began.elapsed().as_secs_f64(),
            sessions::mib(rss.kb),
            sessions::mib(rss.anon_kb),
        );
    }
    let wall = began.elapsed();
    let cpu_after = procfs::cpu_ticks(pid).map_err(read_err)?;
    let warm = WARM_ROUNDS.min(shape.turns_each);
    let database = VyreHome::at(server.dir().join("vyre")).database();
    let store_bytes = ["", "-wal", "-shm"]
        .iter()
        .map(|suffix| {
            let mut path = database.clone().into_os_string();
            path.push(suffix);
            resume::disk_bytes(Path::new(&path))
        })
        .sum();
    Ok(History {
        threads: shape.threads,
        turns_each: shape.turns_each,
        turns: shape.threads * shape.turns_each,
        resumes,
        warm_turns: shape.threads * warm,
        warm: rounds
            .get(warm.saturating_sub(1))
            .copied()
            .unwrap_or_default(),
        end: rounds.last().copied().unwrap_or_default(),
        rounds,
        hwm_kb: procfs::status_kb(pid, "VmHWM").map_err(read_err)?,
        store_bytes,
        transcripts_bytes: resume::disk_bytes(&server.dir().join("home/.claude/projects")),
        cpu_s: cpu_after.saturating_sub(cpu_before) as f64 / tck as f64,
        wall,
    })
}

/// One turn of every thread, [`AT_ONCE`] at a time, each through to its idle close: round 0
/// starts the threads, later rounds resume them. Answers how many turns resumed.
async fn run_round(
    client: &Client,
    stream: &mut EventStream,
    work: &Path,
    round: usize,
    ids: &mut [Option<String>],
) -> Result<usize, String> {
    let mut calls = JoinSet::new();
    let mut next = 0;
    let send = |calls: &mut JoinSet<_>, i: usize, thread: Option<String>| {
        let client = client.clone();
        let text = format!("thread {i} turn {round}");
        let work = work.to_path_buf();
        calls.spawn(async move {
            let answer = match thread {
                None => {
                    let input = json!({ "cwd": work, "text": text });
                    sessions::start_thread(&client, input).await
                }
                Some(thread) => {
                    let input = json!({ "thread": thread, "text": text });
                    client
                        .call("threads.send", &input)
                        .await
                        .map(|_| thread)
                        .map_err(|e| format!("threads.send failed: {e}"))
                }
            };
            (i, text, answer)
        });
    };
    while next < ids.len().min(AT_ONCE) {
        send(&mut calls, next, ids[next].clone());
        next += 1;
    }
    // Threads whose call has answered: id -> (index, the text sent). Events may come before.
    let mut in_flight: HashMap<String, (usize, String)> = HashMap::new();
    let mut seen: HashMap<String, TurnSeen> = HashMap::new();
    let (mut done, mut resumes) = (0, 0);
    while done < ids.len() {
        tokio::select! {
            Some(joined) = calls.join_next() => {
                let (i, text, answer) = joined.map_err(|e| format!("a call's task failed: {e}"))?;
                let thread = answer?;
                ids[i] = Some(thread.clone());
                in_flight.insert(thread, (i, text));
            }
            event = sessions::next_event(stream) => {
                let (e, at) = event?;
                let thread = e["thread"].as_str().unwrap_or_default().to_string();
                seen.entry(thread).or_default().see(&e, at)?;
            }
        }
        let ended: Vec<String> = in_flight
            .keys()
            .filter(|t| seen.get(*t).is_some_and(TurnSeen::done))
            .cloned()
            .collect();
        for thread in ended {
            let (_, text) = in_flight.remove(&thread).unwrap_or_default();
            let turn = seen.remove(&thread).unwrap_or_default();
            // Every turn after the first finds its session closed, and resumes it.
            turn.check(&text, round > 0)?;
            resumes += usize::from(round > 0);
            done += 1;
            if next < ids.len() {
                send(&mut calls, next, ids[next].clone());
                next += 1;
            }
        }
    }
    Ok(resumes)
}
