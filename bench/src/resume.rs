//! Resumes: what it costs vyred to close a Claude session for idleness and resume it on the next
//! send, on the release binary with the pinned Claude Code CLI against the fake Messages API.
//!
//! - the time from a send to a closed thread to its first text delta, beside a fresh start
//!   ([`crate::resume_latency`]);
//! - vyred's own memory over 1,000 turns across 50 threads, each closed and resumed at every
//!   turn ([`crate::resume_history`]): the history lives in the store and the transcripts, so
//!   it should not grow with them.
//!
//! Sessions close through `sessions.idle_minutes`, set very small here, so every close is the
//! one a person meets (`thread.stopped` with reason `idle`), not `threads.stop`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use vyre::surfaces::client::{Client, EventStream};

use crate::Opts;
use crate::fake_api::FakeApi;
use crate::report::{Against, Report, Val};
use crate::sessions::{self, mib, percentile};
use crate::spawn::{self, Server};
use crate::{first_words, resume_history, resume_latency};

/// `sessions.idle_minutes` for these runs: a session closes 0.6 s after its turn ends.
pub const IDLE_MINUTES: f64 = 0.01;

/// A new session's first words (goals 1 and 4), on a warm spare, cold, without the plugin and
/// against the CLI started directly.
pub async fn first_words(opts: &Opts, report: &mut Report) -> Result<(), String> {
    let Some(cli) = the_cli(report, "first-words") else {
        return Ok(());
    };
    let threads = if opts.quick { 5 } else { 20 };
    let first = first_words::run(&cli, threads).await?;
    first_words_rows(report, &first);
    Ok(())
}

/// The pinned CLI, or a note that `bench` is skipped without it.
fn the_cli(report: &mut Report, bench: &str) -> Option<PathBuf> {
    let cli = sessions::claude_cli();
    if cli.is_none() {
        let why = format!(
            "{bench}: no Claude Code CLI at $VYRE_TEST_CLAUDE or {}; the {bench} benchmark is skipped (tests/run installs it)",
            sessions::PINNED_CLI
        );
        eprintln!("{why}");
        report.note(why);
    }
    cli
}

pub async fn run(opts: &Opts, report: &mut Report) -> Result<(), String> {
    let Some(cli) = the_cli(report, "resume") else {
        return Ok(());
    };
    let threads = if opts.quick { 5 } else { 20 };
    let latency = resume_latency::run(&cli, threads).await?;
    latency_rows(report, &latency);
    let shape = if opts.quick {
        resume_history::Shape {
            threads: 10,
            turns_each: 5,
        }
    } else {
        resume_history::Shape {
            threads: 50,
            turns_each: 20,
        }
    };
    let history = resume_history::run(&cli, shape).await?;
    history_rows(report, &history);
    Ok(())
}

/// The release vyred on a fresh home, its Claude sessions on `cli` against `api`, closing after
/// [`IDLE_MINUTES`]; `work/` in its temp folder is the sessions' folder.
pub fn spawn_vyred(cli: &Path, api: &FakeApi) -> Result<Server, String> {
    let vyred = spawn::vyred()?;
    let url = api.url();
    Server::spawn_configured(&vyred, |dir| {
        let work = dir.join("work");
        std::fs::create_dir_all(&work)
            .map_err(|e| format!("cannot create {}: {e}", work.display()))?;
        let mut config = sessions::claude_config(cli, &url, &dir.join("home"));
        config["sessions"]["idle_minutes"] = json!(IDLE_MINUTES);
        Ok(Some(config))
    })
}

/// The sessions' folder of a vyred from [`spawn_vyred`].
pub fn work(server: &Server) -> PathBuf {
    server.dir().join("work")
}

/// Wait until vyred answers, put the key in its vault, and subscribe to the events a turn and
/// its close are read from.
pub async fn connect(server: &mut Server) -> Result<(Client, EventStream), String> {
    server.wait_healthy(Duration::from_millis(10)).await?;
    let client = Client::socket(server.socket());
    sessions::add_key(&client).await?;
    let stream = client
        .events(
            "types=thread.started,thread.text,thread.finished,thread.stopped",
            None,
        )
        .await
        .map_err(|e| format!("cannot subscribe: {e}"))?;
    Ok((client, stream))
}

/// What one thread's events said during one turn, through to its idle close.
#[derive(Default)]
pub struct TurnSeen {
    /// Whether `thread.started` came, and then whether it said `resumed`.
    pub resumed: Option<bool>,
    /// When the first `thread.text` with a delta arrived.
    pub first_delta: Option<Instant>,
    /// The deltas, joined: the fake answers `reply to [<text>]`.
    pub text: String,
    pub finished: bool,
    pub stopped: bool,
}

impl TurnSeen {
    /// Take in one event of this thread, which arrived `at`. A failed turn, or a session that
    /// closed for any reason but idleness or before its turn finished, is an error.
    pub fn see(&mut self, e: &Value, at: Instant) -> Result<(), String> {
        let payload = &e["payload"];
        match e["type"].as_str() {
            Some("thread.started") => self.resumed = Some(payload["resumed"] == true),
            Some("thread.text") => {
                if let Some(delta) = payload["delta"].as_str() {
                    self.first_delta.get_or_insert(at);
                    self.text.push_str(delta);
                }
            }
            Some("thread.finished") => {
                if payload["ok"] != true {
                    return Err(format!("a turn failed: {e}"));
                }
                self.finished = true;
            }
            Some("thread.stopped") => {
                if !self.finished {
                    return Err(format!("a session closed before its turn finished: {e}"));
                }
                if payload["reason"] != "idle" {
                    return Err(format!("a session closed, but not for idleness: {e}"));
                }
                self.stopped = true;
            }
            _ => {}
        }
        Ok(())
    }

    /// The turn finished and the session closed for idleness.
    pub fn done(&self) -> bool {
        self.finished && self.stopped
    }

    /// A finished turn whose session started as asked (`resumed` or not) and answered `text`,
    /// and nothing else: a resume that replayed its history as new deltas would fail here.
    pub fn check(&self, text: &str, resumed: bool) -> Result<(), String> {
        match self.resumed {
            Some(r) if r == resumed => {}
            Some(r) => return Err(format!("thread.started said resumed: {r}, not {resumed}")),
            None => return Err("a turn came without thread.started".into()),
        }
        let want = format!("reply to [{text}]");
        if self.text != want {
            return Err(format!(
                "a turn answered {:?}, not {want:?}",
                self.text.trim()
            ));
        }
        Ok(())
    }
}

/// The size of a file, or of every file under a folder, in bytes; 0 when it is missing.
pub fn disk_bytes(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|dir| dir.flatten().map(|e| disk_bytes(&e.path())).sum())
        .unwrap_or(0)
}

fn first_words_rows(report: &mut Report, f: &first_words::FirstWords) {
    let ms = |v: f64| Val::Num(v, 0);
    for (p, name) in [(0.5, "p50"), (0.95, "p95")] {
        report.row_against(
            Against::ClaudeCli,
            &format!("start.warm_first_delta_{name}_ms"),
            &format!("new session on a warm spare: first delta, {name} (ms)"),
            ms(percentile(&f.warm, p)),
            ms(percentile(&f.direct, p)),
            if name == "p50" { "< 100" } else { "" },
        );
    }
    report.row_against(
        Against::ClaudeCli,
        "start.warm_asked_p50_ms",
        "  of which until the CLI asks the model (p50, ms)",
        ms(percentile(&f.warm_asked, 0.5)),
        ms(percentile(&f.direct_asked, 0.5)),
        "",
    );
    report.row_against(
        Against::ClaudeCli,
        "start.ahead_first_delta_p50_ms",
        "  against the CLI itself started ahead (readied, held 2 s), p50 (ms)",
        ms(percentile(&f.warm, 0.5)),
        ms(percentile(&f.ahead, 0.5)),
        "",
    );
    report.row_against(
        Against::ClaudeCli,
        "start.ahead_asked_p50_ms",
        "    of which until the CLI asks the model (p50, ms)",
        ms(percentile(&f.warm_asked, 0.5)),
        ms(percentile(&f.ahead_asked, 0.5)),
        "",
    );
    report.row_against(
        Against::ClaudeCli,
        "start.warm_bare_first_delta_p50_ms",
        "  warm without the harness plugin, p50 (ms)",
        ms(percentile(&f.warm_bare, 0.5)),
        ms(percentile(&f.ahead, 0.5)),
        "",
    );
    report.row_against(
        Against::ClaudeCli,
        "start.warm_bare_asked_p50_ms",
        "    of which until the CLI asks the model (p50, ms)",
        ms(percentile(&f.warm_bare_asked, 0.5)),
        ms(percentile(&f.ahead_asked, 0.5)),
        "",
    );
    report.row_against(
        Against::ClaudeCli,
        "start.warm_answered_p50_ms",
        "  and from the model's answer to the reader (p50, ms)",
        ms(percentile(&f.warm, 0.5) - percentile(&f.warm_asked, 0.5)),
        ms(percentile(&f.direct, 0.5) - percentile(&f.direct_asked, 0.5)),
        "",
    );
    for (p, name) in [(0.5, "p50"), (0.95, "p95")] {
        report.row_against(
            Against::ClaudeCli,
            &format!("start.cold_first_delta_{name}_ms"),
            &format!("  no spare (cold start), {name} (ms)"),
            ms(percentile(&f.cold, p)),
            ms(percentile(&f.direct, p)),
            "",
        );
    }
    for (p, name) in [(0.5, "p50"), (0.95, "p95")] {
        report.row_against(
            Against::ClaudeCli,
            &format!("start.bare_first_delta_{name}_ms"),
            &format!("  cold without the harness plugin, {name} (ms)"),
            ms(percentile(&f.bare, p)),
            ms(percentile(&f.direct, p)),
            "",
        );
    }
    report.row_against(
        Against::ClaudeCli,
        "start.plugin_first_turn_ms",
        "  the plugin's cost to a first turn without a spare (cold minus bare, p50, ms)",
        ms(percentile(&f.cold, 0.5) - percentile(&f.bare, 0.5)),
        Val::Missing("-".into()),
        "",
    );
    report.row_against(
        Against::ClaudeCli,
        "start.plugin_warm_first_turn_ms",
        "  the plugin's cost to a first turn on a spare (warm minus warm without it, p50, ms)",
        ms(percentile(&f.warm, 0.5) - percentile(&f.warm_bare, 0.5)),
        Val::Missing("-".into()),
        "< 15",
    );
    report.row_against(
        Against::ClaudeCli,
        "start.plugin_first_turn_cpu_ms",
        "  the plugin's CPU to a first turn (the session's CPU at its end, cold minus bare, medians, ms)",
        Val::Num(f.turn_cpu_ms - f.bare_turn_cpu_ms, 0),
        Val::Missing("-".into()),
        "",
    );
    report.row_against(
        Against::ClaudeCli,
        "start.plugin_rss_mib",
        "  the plugin's memory after a first turn (with minus without, MiB)",
        Val::Num(
            (f.turn_rss as f64 - f.bare_turn_rss as f64) / (1024.0 * 1024.0),
            1,
        ),
        Val::Missing("-".into()),
        "",
    );
    report.row_against(
        Against::ClaudeCli,
        "start.spare_rss_mib",
        "  a warm spare's memory (its processes' RSS, MiB)",
        Val::Num(f.spare_rss as f64 / (1024.0 * 1024.0), 1),
        Val::Missing("-".into()),
        "",
    );
    report.note(format!(
        "first words: target/release/vyre daemon on a fresh home, the pinned Claude Code CLI against the fake Messages API; 1 warm-up then {} new threads in one folder, one at a time, each stopped after its first turn; vyred = threads.start with a first message, from the call to the thread's first thread.text delta, with sessions.spares = 1 (each start comes {} s after the spare is held, as the next start a person makes after reading the last answer finds it) and, on the cold row, sessions.spares = 0; the bare row is cold with sessions.harness = false (no plugin: no hooks, none of Vyre's tools), and the plugin's cost is warm minus warm without it on a spare (both readied: the harness's prompt hook or the driver's own holds the readying prompt back) and cold minus bare without one, in time to the first delta, in the session's memory after that turn (the RSS of every process of its session, median) and in the CPU its processes had used by then (utime and stime, with the children they reaped, median); reference = the CLI started directly by vyre's Claude driver (spawn, initialize, the message, the first text_delta) with CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1; the ahead row's reference is that CLI started ahead of its message as a spare is (initialize answered, get_context_usage summary, its first turn taken ahead and held back by the driver's prompt hook, held {} s, no plugin), from writing the message to its first text_delta: what Claude Code itself takes for a first turn it was ready for. The spare's memory is its process session's RSS (Claude Code and its sandbox; Vyre's tools are served by vyred itself)",
        f.warm.len(),
        first_words::HELD.as_secs(),
        first_words::HELD.as_secs()
    ));
}

fn latency_rows(report: &mut Report, l: &resume_latency::Latency) {
    let ms = |v: f64| Val::Num(v, 0);
    for (p, name) in [(0.5, "p50"), (0.95, "p95")] {
        report.row_against(
            Against::FreshStart,
            &format!("resume.first_delta_{name}_ms"),
            &format!("resume of an idle-closed thread: first delta, {name} (ms)"),
            ms(percentile(&l.resumed, p)),
            ms(percentile(&l.fresh, p)),
            "",
        );
    }
    for (p, name) in [(0.5, "p50"), (0.95, "p95")] {
        report.row_against(
            Against::FreshStart,
            &format!("resume.warmed_first_delta_{name}_ms"),
            &format!(
                "  warmed as the person writes ({} ms before the send), {name} (ms)",
                resume_latency::WRITING.as_millis()
            ),
            ms(percentile(&l.warmed, p)),
            ms(percentile(&l.fresh, p)),
            if name == "p50" { "< 150" } else { "" },
        );
    }
    for (p, name) in [(0.5, "p50"), (0.95, "p95")] {
        report.row_against(
            Against::FreshStart,
            &format!("resume.added_{name}_ms"),
            &format!("  resume minus fresh start, {name} (ms)"),
            ms(percentile(&l.resumed, p) - percentile(&l.fresh, p)),
            Val::Missing("-".into()),
            "",
        );
    }
    report.note(format!(
        "resume latency: target/release/vyre daemon on a fresh home with sessions.idle_minutes = {IDLE_MINUTES} ({:.1} s), the pinned Claude Code CLI against the fake Messages API; one thread at a time, 1 warm-up then {} threads: reference (fresh start) = threads.start with a first message, from the call to the thread's first thread.text delta; vyred = once that thread has closed for idleness (thread.stopped reason idle), threads.send to it, from the call to its first thread.text delta, after thread.started with resumed: true. Both include starting the CLI process and its initialize handshake; the resumed CLI also loads its transcript (one turn here). warmed = the same thread closed again, then threads.warm (what the app calls when the person starts writing in a closed thread) and, {} ms later, threads.send, from the send to its first delta: the resume ran while the person wrote",
        IDLE_MINUTES * 60.0,
        l.resumed.len(),
        resume_latency::WRITING.as_millis(),
    ));
}

fn history_rows(report: &mut Report, h: &resume_history::History) {
    let none = || Val::Missing("-".into());
    let n = format!("{} turns", h.turns);
    let rows = [
        (
            "resume.history.rss_warm_mib",
            format!("vyred RSS after {} turns, none live (MiB)", h.warm_turns),
            Val::Num(mib(h.warm.kb), 1),
            "",
        ),
        (
            "resume.history.rss_end_mib",
            format!("vyred RSS after {n}, none live (MiB)"),
            Val::Num(mib(h.end.kb), 1),
            "",
        ),
        (
            "resume.history.rss_growth_mib",
            format!(
                "  growth over the last {} turns (MiB)",
                h.turns - h.warm_turns
            ),
            Val::Num(mib(h.end.kb) - mib(h.warm.kb), 1),
            "~0 (history is not kept in memory)",
        ),
        (
            "resume.history.rss_anon_growth_mib",
            "    of which anonymous memory, RssAnon (MiB)".to_string(),
            Val::Num(mib(h.end.anon_kb) - mib(h.warm.anon_kb), 1),
            "",
        ),
        (
            "resume.history.rss_peak_mib",
            "  vyred peak RSS over the run, VmHWM (MiB)".to_string(),
            Val::Num(mib(h.hwm_kb), 1),
            "",
        ),
        (
            "resume.history.store_mib",
            format!("store on disk after {n} (MiB)"),
            Val::Num(h.store_bytes as f64 / 1048576.0, 1),
            "",
        ),
        (
            "resume.history.transcripts_mib",
            format!("CLI transcripts on disk after {n} (MiB)"),
            Val::Num(h.transcripts_bytes as f64 / 1048576.0, 1),
            "",
        ),
        (
            "resume.history.resumes",
            format!("resumes in {n} (thread.started resumed: true)"),
            Val::Num(h.resumes as f64, 0),
            "",
        ),
        (
            "resume.history.wall_s",
            format!("{n}: wall time (s)"),
            Val::Num(h.wall.as_secs_f64(), 0),
            "",
        ),
        (
            "resume.history.vyred_cpu_ms_per_turn",
            "  vyred's own CPU per turn (ms)".to_string(),
            Val::Num(h.cpu_s * 1000.0 / h.turns as f64, 1),
            "",
        ),
    ];
    for (key, label, val, target) in rows {
        report.row_against(Against::FreshStart, key, &label, val, none(), target);
    }
    let series: Vec<String> = h
        .rounds
        .iter()
        .map(|r| format!("{:.1} ({:.1})", mib(r.kb), mib(r.anon_kb)))
        .collect();
    report.note(format!(
        "resume history: target/release/vyre daemon on a fresh home (sessions.idle_minutes = {IDLE_MINUTES}, sessions.max_live at its default), {} threads of {} turns each ({} turns), {} threads at a time: round 1 starts each thread with threads.start and a first message, every later round sends each thread one more message after its session closed for idleness, so it resumes on its transcript; RSS is VmRSS of vyred's own pid, {:.0} s after a round ends with no session live; the store is vyre.db with its -wal and -shm; the transcripts are the CLI's files under the sessions' HOME. vyred's RSS after each round, with its RssAnon in brackets (MiB): {}",
        h.threads,
        h.turns_each,
        h.turns,
        resume_history::AT_ONCE,
        resume_history::SETTLE.as_secs_f64(),
        series.join(", "),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: &str, payload: Value) -> Value {
        json!({ "type": kind, "thread": "t", "payload": payload })
    }

    #[test]
    fn follows_a_resumed_turn_to_its_idle_close() {
        let mut seen = TurnSeen::default();
        let at = Instant::now();
        for e in [
            event("thread.started", json!({ "resumed": true })),
            event("thread.text", json!({ "delta": "reply to " })),
            event("thread.text", json!({ "delta": "[two]" })),
            event("thread.text", json!({ "done": true })),
            event("thread.finished", json!({ "ok": true })),
        ] {
            seen.see(&e, at).unwrap();
        }
        assert!(!seen.done());
        seen.see(&event("thread.stopped", json!({ "reason": "idle" })), at)
            .unwrap();
        assert!(seen.done());
        assert_eq!(seen.first_delta, Some(at));
        assert!(seen.check("two", true).is_ok());
        assert!(seen.check("two", false).is_err());
        assert!(seen.check("one", true).is_err());
    }

    #[test]
    fn refuses_a_failed_turn_and_other_closes() {
        let at = Instant::now();
        let failed = event("thread.finished", json!({ "ok": false }));
        assert!(TurnSeen::default().see(&failed, at).is_err());
        let early = event("thread.stopped", json!({ "reason": "idle" }));
        assert!(TurnSeen::default().see(&early, at).is_err());
        let mut seen = TurnSeen::default();
        seen.see(&event("thread.finished", json!({ "ok": true })), at)
            .unwrap();
        let stopped = event("thread.stopped", json!({ "reason": "stopped" }));
        assert!(seen.see(&stopped, at).is_err());
    }
}
