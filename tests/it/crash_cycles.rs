//! Crash safety under load: a real vyred (the `vyre` binary) driving the real Claude Code CLI
//! against the fake Messages API is killed with `kill -9` at a random moment of a scripted load
//! of turns, asks and sends, ten times. After each restart:
//!
//! - every event a client saw streamed before the kill is in the log, unchanged, exactly once;
//! - the log and the rows agree on what was running at the kill, and the restart ends exactly
//!   that: each live thread with `thread.stopped` reason `restart`, each running turn with one
//!   `thread.finished` reason `restart`, each open ask with one `ask.answered` `cancelled`;
//! - no session process is left: every process group recorded before the kill is gone, and no
//!   process carries the mark of a thread of the killed vyred;
//! - a send retried with the same uuid answers as the first time and makes no second turn.
//!
//! The load is random but seeded: the seed is printed, and `VYRE_CRASH_SEED=<seed>` runs the
//! same script again (the moment the kill lands within it still depends on the machine).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};
use vyre::surfaces::client::Client;

use crate::claude_e2e::claude_bin;
use crate::fake_api::FakeApi;
use crate::support::*;
use crate::threads_e2e::grant_key;

const CYCLES: usize = 10;
/// Threads the load keeps going at once.
const THREADS: usize = 2;

/// xorshift64*: small, and the same sequence for the same seed on every machine.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        (!items.is_empty()).then(|| &items[self.below(items.len() as u64) as usize])
    }
    fn uuid(&mut self) -> String {
        let (a, b) = (self.next(), self.next());
        format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            b >> 52,
            b & 0xffff_ffff_ffff
        )
    }
}

fn seed() -> u64 {
    let seed = std::env::var("VYRE_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
    eprintln!("crash_cycles: seed {seed} (VYRE_CRASH_SEED={seed} runs the same script)");
    seed
}

/// A send as the client made it, and what vyred answered, if it did.
#[derive(Debug, Clone)]
struct Attempt {
    thread: String,
    text: String,
    mode: &'static str,
    answer: Option<Value>,
}

/// What the client knows, shared by the load and the recorder.
#[derive(Default)]
struct Seen {
    /// Every event streamed to the client, by id.
    events: BTreeMap<i64, Value>,
    /// Sends by uuid.
    sends: BTreeMap<String, Attempt>,
    /// Process groups `threads.pids` reported.
    pgids: BTreeSet<i32>,
    /// What went wrong inside the load (asserted by the test).
    faults: Vec<String>,
}

type Shared = Arc<Mutex<Seen>>;

fn group_alive(pgid: i32) -> bool {
    kill(Pid::from_raw(-pgid), None).is_ok()
}

/// Processes (other than zombies) whose environment marks them as one of `threads`' sessions.
fn tagged(threads: &BTreeSet<String>) -> Vec<(u32, String)> {
    let mut found = vec![];
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        if stat.contains(") Z ") {
            continue;
        }
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        for kv in environ.split(|b| *b == 0) {
            if let Some(t) = kv.strip_prefix(b"VYRE_THREAD=")
                && let Ok(t) = std::str::from_utf8(t)
                && threads.contains(t)
            {
                found.push((pid, t.to_string()));
            }
        }
    }
    found
}

/// The store as a killed vyred left it.
struct AtKill {
    /// The newest event id committed.
    last: i64,
    /// Every event: id → (type, thread, payload).
    log: BTreeMap<i64, (String, Option<String>, Value)>,
    /// threads_runs: id → (status, turns, pgid).
    runs: BTreeMap<String, (String, i64, Option<i32>)>,
}

fn read_store(db: &Path) -> AtKill {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT id, type, thread, payload FROM events ORDER BY id")
        .unwrap();
    let log: BTreeMap<i64, (String, Option<String>, Value)> = stmt
        .query_map([], |r| {
            let payload: String = r.get(3)?;
            Ok((
                r.get(0)?,
                (
                    r.get(1)?,
                    r.get(2)?,
                    serde_json::from_str(&payload).unwrap(),
                ),
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut stmt = conn
        .prepare("SELECT id, status, turns, pgid FROM threads_runs")
        .unwrap();
    let runs = stmt
        .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?))))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    AtKill {
        last: log.keys().next_back().copied().unwrap_or(0),
        log,
        runs,
    }
}

/// Per thread, from a log: whether its session is live (its last `thread.started` is newer than
/// its last `thread.stopped`), the turn left open (a `thread.turn` with no `thread.finished`
/// after it), and the asks raised and not answered.
#[derive(Default, Debug)]
struct Open {
    live: BTreeSet<String>,
    turns: BTreeMap<String, String>,
    asks: BTreeMap<String, String>,
}

fn open_at(log: &BTreeMap<i64, (String, Option<String>, Value)>) -> Open {
    let mut open = Open::default();
    for (kind, thread, payload) in log.values() {
        let Some(thread) = thread.clone() else {
            continue;
        };
        match kind.as_str() {
            "thread.started" => {
                open.live.insert(thread);
            }
            "thread.stopped" => {
                open.live.remove(&thread);
            }
            "thread.turn" => {
                open.turns
                    .insert(thread, payload["turn"].as_str().unwrap().to_string());
            }
            "thread.finished" => {
                open.turns.remove(&thread);
            }
            "ask.raised" => {
                open.asks
                    .insert(payload["ask"].as_str().unwrap().to_string(), thread);
            }
            "ask.answered" => {
                open.asks.remove(payload["ask"].as_str().unwrap());
            }
            _ => {}
        }
    }
    open
}

/// What the restarted vyred must have done about what the killed one left, and what it must
/// not have done. `after` is the log from the restart on.
fn check_restart(cycle: usize, at: &AtKill, after: &[(i64, String, Option<String>, Value)]) {
    let open = open_at(&at.log);
    // The rows and the log agree on what ran at the kill.
    for (thread, turn) in &open.turns {
        let (status, turns, _) = &at.runs[thread];
        assert!(
            matches!(status.as_str(), "running" | "waiting"),
            "cycle {cycle}: turn {turn} was open in the log, but its row says {status}"
        );
        assert_eq!(turn, &format!("{thread}:{turns}"), "cycle {cycle}");
    }
    for (thread, (status, ..)) in &at.runs {
        if matches!(status.as_str(), "running" | "waiting") {
            assert!(
                open.turns.contains_key(thread),
                "cycle {cycle}: thread {thread}'s row says {status} but no turn was open in the log"
            );
        }
    }
    for thread in &open.live {
        let (status, ..) = &at.runs[thread];
        assert!(
            !matches!(status.as_str(), "stopped" | "failed"),
            "cycle {cycle}: thread {thread} was live in the log, but its row says {status}"
        );
    }
    let of = |kind: &str, thread: &str| -> Vec<&Value> {
        after
            .iter()
            .filter(|(_, k, t, _)| k == kind && t.as_deref() == Some(thread))
            .map(|(.., p)| p)
            .collect()
    };
    for (thread, (status, ..)) in &at.runs {
        let stopped = of("thread.stopped", thread);
        if matches!(status.as_str(), "stopped" | "failed") {
            assert!(stopped.is_empty(), "cycle {cycle}: {thread} stopped again");
            continue;
        }
        assert_eq!(
            stopped.len(),
            1,
            "cycle {cycle}: thread {thread} ({status} at the kill) ends once: {stopped:?}"
        );
        assert_eq!(stopped[0]["reason"], "restart", "cycle {cycle}");
        let finished = of("thread.finished", thread);
        match open.turns.get(thread) {
            Some(turn) => {
                assert_eq!(
                    finished.len(),
                    1,
                    "cycle {cycle}: the running turn {turn} ends once: {finished:?}"
                );
                assert_eq!(finished[0]["reason"], "restart");
                assert_eq!(finished[0]["turn"], turn.as_str());
            }
            None => assert!(finished.is_empty(), "cycle {cycle}: {finished:?}"),
        }
    }
    for (ask, thread) in &open.asks {
        let answered: Vec<&Value> = of("ask.answered", thread)
            .into_iter()
            .filter(|p| p["ask"] == ask.as_str())
            .collect();
        assert_eq!(
            answered.len(),
            1,
            "cycle {cycle}: open ask {ask} is closed once"
        );
        assert_eq!(answered[0]["decision"], "cancelled");
    }
}

/// Events in the log after `since`, as the API streams them.
async fn log_after(sock: &Client, since: i64) -> Vec<(i64, String, Option<String>, Value)> {
    let mut stream = sock
        .events(&format!("since={since}&follow=false"), None)
        .await
        .unwrap();
    let mut out = vec![];
    while let Some(m) = stream.next().await {
        let e: Value = serde_json::from_str(&m.unwrap().data).unwrap();
        out.push((
            e["id"].as_i64().unwrap(),
            e["type"].as_str().unwrap().to_string(),
            e["thread"].as_str().map(String::from),
            e["payload"].clone(),
        ));
    }
    out
}

/// Follow the log from `since`, keeping what the client sees, until vyred dies.
async fn record(sock: Client, since: i64, seen: Shared) {
    let Ok(mut stream) = sock.events(&format!("since={since}"), None).await else {
        return;
    };
    while let Some(Ok(m)) = stream.next().await {
        let Ok(e) = serde_json::from_str::<Value>(&m.data) else {
            continue;
        };
        let id = e["id"].as_i64().unwrap_or(0);
        seen.lock().unwrap().events.insert(id, e);
    }
}

/// One send (or the same send again): recorded before it is made, its answer after.
async fn send(sock: &Client, seen: &Shared, uuid: &str, attempt: Attempt) {
    let before = {
        let mut s = seen.lock().unwrap();
        s.sends
            .entry(uuid.to_string())
            .or_insert_with(|| attempt.clone())
            .answer
            .clone()
    };
    let input = json!({ "thread": attempt.thread, "text": attempt.text, "mode": attempt.mode, "uuid": uuid });
    match sock.call("threads.send", &input).await {
        Ok(answer) => {
            let mut s = seen.lock().unwrap();
            match before {
                Some(first) if first != answer => s.faults.push(format!(
                    "send {uuid} retried answered {answer}, first {first}"
                )),
                _ => {}
            }
            s.sends.get_mut(uuid).unwrap().answer.get_or_insert(answer);
        }
        Err(e) => {
            // Refused (a conflict, busy) or cut by the kill: the client may try it again.
            let _ = e;
        }
    }
}

/// The scripted load, until vyred is killed under it.
async fn load(sock: Client, seen: Shared, mut rng: Rng, work: PathBuf, retry: Vec<String>) {
    // First what a client does after a restart: the sends it is unsure of, and some it is sure
    // of, again with the same uuid.
    for uuid in retry {
        let attempt = seen.lock().unwrap().sends[&uuid].clone();
        send(&sock, &seen, &uuid, attempt).await;
    }
    let mut n = 0u64;
    loop {
        n += 1;
        if let Ok(pids) = sock.call("threads.pids", &json!({})).await {
            let mut s = seen.lock().unwrap();
            for p in pids["pgids"].as_array().into_iter().flatten() {
                s.pgids.insert(p.as_i64().unwrap_or(0) as i32);
            }
        }
        let threads: Vec<String> = match sock.call("threads.list", &json!({})).await {
            // Newest first: the load keeps to the newest few.
            Ok(list) => list
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t["thread"].as_str().map(String::from))
                .take(THREADS)
                .collect(),
            Err(_) => {
                // vyred is gone (or going): nothing more to do until the next cycle.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let text = match rng.below(3) {
            0 => format!("SLOWLY tell story {n}"),
            1 => format!("RUNBASH touch step-{n}.txt"),
            _ => format!("hello {n}"),
        };
        match rng.below(10) {
            0 | 1 if threads.len() < THREADS || rng.chance(10) => {
                let _ = sock
                    .call("threads.start", &json!({ "cwd": work, "text": text }))
                    .await;
            }
            0..=5 => {
                if let Some(thread) = rng.pick(&threads) {
                    let attempt = Attempt {
                        thread: thread.clone(),
                        text,
                        mode: if rng.chance(30) { "queue" } else { "steer" },
                        answer: None,
                    };
                    let uuid = rng.uuid();
                    send(&sock, &seen, &uuid, attempt).await;
                }
            }
            6 => {
                // The same send again, as a client that lost the answer.
                let earlier: Vec<String> = seen.lock().unwrap().sends.keys().cloned().collect();
                if let Some(uuid) = rng.pick(&earlier) {
                    let attempt = seen.lock().unwrap().sends[uuid].clone();
                    send(&sock, &seen, uuid, attempt).await;
                }
            }
            7 | 8 => {
                // Answer a question the client saw raised.
                let open: Vec<String> = {
                    let s = seen.lock().unwrap();
                    let mut open = BTreeSet::new();
                    for e in s.events.values() {
                        let ask = e["payload"]["ask"].as_str().unwrap_or_default().to_string();
                        match e["type"].as_str() {
                            Some("ask.raised") => {
                                open.insert(ask);
                            }
                            Some("ask.answered") => {
                                open.remove(&ask);
                            }
                            _ => {}
                        }
                    }
                    open.into_iter().collect()
                };
                if let Some(ask) = rng.pick(&open) {
                    let decision = if rng.chance(80) { "allow" } else { "deny" };
                    let _ = sock
                        .call(
                            "threads.answer",
                            &json!({ "ask": ask, "decision": decision }),
                        )
                        .await;
                }
            }
            _ => {
                if let Some(thread) = rng.pick(&threads) {
                    let _ = sock
                        .call("threads.interrupt", &json!({ "thread": thread }))
                        .await;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(20 + rng.below(250))).await;
    }
}

/// Checks over the whole log once the cycles are done.
fn check_whole_log(log: &[(i64, String, Option<String>, Value)], seen: &Seen) {
    // A send's uuid makes at most one turn, one steer and one queued row.
    let mut per_uuid: HashMap<(String, String), usize> = HashMap::new();
    for (_, kind, _, p) in log {
        let Some(uuid) = p["uuid"].as_str() else {
            continue;
        };
        let key = match kind.as_str() {
            "thread.turn" => "turn",
            "thread.sent" if p["via"] == "steer" => "steer",
            "thread.queued" if p["edited"] != true => "queued",
            _ => continue,
        };
        *per_uuid
            .entry((uuid.to_string(), key.to_string()))
            .or_default() += 1;
    }
    for ((uuid, key), n) in &per_uuid {
        assert_eq!(*n, 1, "send {uuid} made {n} of {key}");
    }
    // Every send vyred answered is in the log.
    for (uuid, attempt) in &seen.sends {
        if attempt.answer.is_some() {
            assert!(
                per_uuid.keys().any(|(u, _)| u == uuid),
                "the answered send {uuid} ({attempt:?}) left no trace in the log"
            );
        }
    }
    // Each thread's turns and their ends alternate, and each ends once.
    let mut open: HashMap<String, String> = HashMap::new();
    let mut asks: HashMap<String, (usize, usize)> = HashMap::new();
    for (id, kind, thread, p) in log {
        let thread = thread.clone().unwrap_or_default();
        match kind.as_str() {
            "thread.turn" => {
                let turn = p["turn"].as_str().unwrap().to_string();
                if let Some(before) = open.insert(thread, turn.clone()) {
                    panic!("event {id}: turn {turn} began while {before} had not ended");
                }
            }
            "thread.finished" => {
                let Some(turn) = open.remove(&thread) else {
                    panic!("event {id}: a turn of {thread} ended that was not running: {p}");
                };
                assert_eq!(p["turn"], turn.as_str(), "event {id}");
            }
            "ask.raised" => asks.entry(p["ask"].to_string()).or_default().0 += 1,
            "ask.answered" => asks.entry(p["ask"].to_string()).or_default().1 += 1,
            _ => {}
        }
    }
    assert!(
        open.is_empty(),
        "turns left running after the last restart: {open:?}"
    );
    for (ask, (raised, answered)) in asks {
        assert_eq!(
            (raised, answered),
            (1, 1),
            "ask {ask} raised and closed once"
        );
    }
}

#[test]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
fn kill_9_under_load_ten_times_loses_nothing_repeats_nothing_and_orphans_nothing() {
    let bin = claude_bin();
    let mut rng = Rng::new(seed());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let api = rt.block_on(FakeApi::start());
    let home = TempHome::new("crash-cycles");
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    let config = json!({ "sessions": { "claude": bin, "base_url": api.url(), "home": home.dir.join("home"), "auth": "api-key", "spares": 0 } });
    std::fs::write(home.home().config_file(), config.to_string()).unwrap();
    let db = home.vyre_home().join("vyre.db");
    let sock = home.socket_client();
    let seen: Shared = Arc::default();
    let mut at_kill: Option<AtKill> = None;
    let mut retry: Vec<String> = vec![];
    let mut killed_threads: BTreeSet<String> = BTreeSet::new();

    for cycle in 0..=CYCLES {
        let mut vyred = home.spawn_daemon();
        if let Some(at) = at_kill.take() {
            let after = rt.block_on(log_after(&sock, at.last));
            check_restart(cycle, &at, &after);
            // Everything the client saw streamed is in the log as it was, once.
            let log = rt.block_on(log_after(&sock, 0));
            let mut ids = BTreeSet::new();
            for (id, ..) in &log {
                assert!(ids.insert(*id), "event {id} twice in the log");
            }
            let by_id: HashMap<i64, &(i64, String, Option<String>, Value)> =
                log.iter().map(|e| (e.0, e)).collect();
            for (id, e) in &seen.lock().unwrap().events {
                let Some((_, kind, thread, payload)) = by_id.get(id) else {
                    panic!(
                        "cycle {cycle}: event {id} was streamed before the kill but is not in the log: {e}"
                    );
                };
                assert_eq!(
                    (e["type"].as_str(), e["thread"].as_str(), &e["payload"]),
                    (Some(kind.as_str()), thread.as_deref(), payload),
                    "cycle {cycle}: event {id}"
                );
            }
            // No session process of the killed vyred is left.
            let pgids = {
                let mut s = seen.lock().unwrap();
                s.pgids
                    .extend(at.runs.values().filter_map(|(.., pgid)| *pgid));
                s.pgids.clone()
            };
            killed_threads.extend(at.runs.keys().cloned());
            let gone = wait_until(Duration::from_secs(30), || {
                pgids.iter().all(|p| !group_alive(*p)) && tagged(&killed_threads).is_empty()
            });
            assert!(
                gone,
                "cycle {cycle}: left running: groups {:?}, tagged {:?}",
                pgids
                    .iter()
                    .filter(|p| group_alive(**p))
                    .collect::<Vec<_>>(),
                tagged(&killed_threads)
            );
            let faults = std::mem::take(&mut seen.lock().unwrap().faults);
            assert!(faults.is_empty(), "cycle {cycle}: {faults:?}");
        }
        if cycle == CYCLES {
            // The last start only checks the last kill; then a graceful stop.
            let log = rt.block_on(log_after(&sock, 0));
            check_whole_log(&log, &seen.lock().unwrap());
            vyred.signal(Signal::SIGTERM);
            assert!(vyred.wait(Duration::from_secs(60)).success());
            // A message that left the queue became a turn: none was lost on its way.
            let turned: BTreeSet<&str> = log
                .iter()
                .filter(|(_, kind, ..)| kind == "thread.turn")
                .filter_map(|(.., p)| p["uuid"].as_str())
                .collect();
            let conn = rusqlite::Connection::open(&db).unwrap();
            let mut stmt = conn
                .prepare("SELECT uuid FROM threads_inbox WHERE status = 'taken'")
                .unwrap();
            let taken: Vec<String> = stmt
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            for uuid in &taken {
                assert!(
                    turned.contains(uuid.as_str()),
                    "queued message {uuid} left the queue but never became a turn"
                );
            }
            eprintln!(
                "crash_cycles: {} events, {} turns, {} sends, {} handed over from the queue",
                log.len(),
                turned.len(),
                seen.lock().unwrap().sends.len(),
                taken.len()
            );
            break;
        }
        if cycle == 0 {
            rt.block_on(grant_key(&sock));
        }
        let since = seen
            .lock()
            .unwrap()
            .events
            .keys()
            .next_back()
            .copied()
            .unwrap_or(0);
        let recorder = rt.spawn(record(sock.clone(), since, seen.clone()));
        let load_rng = Rng::new(rng.next());
        let kill_after = Duration::from_millis(300 + rng.below(3700));
        let load = rt.spawn(load(
            sock.clone(),
            seen.clone(),
            load_rng,
            work.clone(),
            std::mem::take(&mut retry),
        ));
        std::thread::sleep(kill_after);
        vyred.signal(Signal::SIGKILL);
        vyred.wait(Duration::from_secs(10));
        load.abort();
        let _ =
            rt.block_on(async { tokio::time::timeout(Duration::from_secs(10), recorder).await });
        let at = read_store(&db);
        {
            let s = seen.lock().unwrap();
            let open = open_at(&at.log);
            eprintln!(
                "crash_cycles: cycle {cycle}: killed after {kill_after:?} at event {}: {} live, {} turns running, {} asks open; {} threads, {} sends so far",
                at.last,
                open.live.len(),
                open.turns.len(),
                open.asks.len(),
                at.runs.len(),
                s.sends.len()
            );
            // Next time: every send not answered, and a third of those answered, again.
            for (uuid, attempt) in &s.sends {
                if attempt.answer.is_none() || rng.chance(33) {
                    retry.push(uuid.clone());
                }
            }
        }
        at_kill = Some(at);
    }
    drop(api);
}
