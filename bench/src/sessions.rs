//! Sessions: what vyred adds to the Claude Code CLI it drives, against the scripted fake
//! Messages API on loopback (`tests/it/fake_api.rs`), and what many sessions cost it.
//!
//! - latency to the first text delta, through vyred and with the CLI driven directly, and
//!   vyred's own path timed on the fake provider (`tests/it/fake_provider.rs`)
//!   ([`crate::sessions_latency`]);
//! - vyred's own memory with 6 idle live sessions, on the release binary
//!   ([`crate::sessions_idle`]);
//! - 200 concurrent sessions of a fake provider (`tests/it/fake_provider.rs`), in-process
//!   ([`crate::sessions_many`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use vyre::surfaces::client::{Client, EventStream};

use crate::Opts;
use crate::report::{Against, Report, Val};
use crate::{sessions_idle, sessions_latency, sessions_many};

/// The API key sessions run on; the fake API accepts any.
pub const KEY: &str = "sk-ant-api03-bench-0000";
/// Where `tests/run` installs the pinned CLI.
pub const PINNED_CLI: &str = "/var/tmp/vyre-claude-code/node_modules/.bin/claude";
/// Turns timed on the fake provider, where a turn takes about a millisecond.
const OWN_PATH_TURNS: usize = 200;
/// How long any one step (a turn, an answer, an event) may take before the bench gives up.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(60);

pub async fn run(opts: &Opts, report: &mut Report) -> Result<(), String> {
    let cli = claude_cli();
    match &cli {
        Some(cli) => {
            let turns = if opts.quick { 5 } else { 20 };
            let latency = sessions_latency::run(cli, turns).await?;
            latency_rows(report, &latency);
        }
        None => {
            let why = format!(
                "sessions: no Claude Code CLI at $VYRE_TEST_CLAUDE or {PINNED_CLI}; the rows that need it are skipped (tests/run installs it)"
            );
            eprintln!("{why}");
            report.note(why);
        }
    }
    let own = sessions_latency::own_path(if opts.quick { 20 } else { OWN_PATH_TURNS }).await?;
    own_path_rows(report, &own);
    if let Some(cli) = &cli {
        let idle = sessions_idle::run(cli).await?;
        idle_rows(report, &idle);
    }
    let many = sessions_many::run().await?;
    many_rows(report, &many);
    Ok(())
}

/// The pinned CLI: `$VYRE_TEST_CLAUDE`, else where `tests/run` puts it.
pub fn claude_cli() -> Option<PathBuf> {
    pinned_program("VYRE_TEST_CLAUDE", PINNED_CLI)
}

/// A program the tests pin: the path in variable `var`, else `pinned` (where `tests/run`
/// installs it), whichever is a file.
pub fn pinned_program(var: &str, pinned: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .into_iter()
        .chain([PathBuf::from(pinned)])
        .find(|p| p.is_file())
}

/// The `config.json` that runs Claude sessions on `cli` against the fake API at `api`, with
/// `home` as the sessions' HOME, on an API key from the vault.
pub fn claude_config(cli: &Path, api: &str, home: &Path) -> Value {
    // No warm spare (ADR 0032): these figures are of sessions in use; the first words bench
    // (`first_words`) measures spares on and off.
    json!({ "sessions": { "claude": cli, "base_url": api, "home": home, "auth": "api-key", "spares": 0 } })
}

/// Put the key in the vault and grant it to the sessions module.
pub async fn add_key(client: &Client) -> Result<(), String> {
    client
        .call(
            "vault.put",
            &json!({ "name": "anthropic-api-key", "value": KEY }),
        )
        .await
        .map_err(|e| format!("vault.put failed: {e}"))?;
    client
        .call(
            "vault.grant",
            &json!({ "item": "anthropic-api-key", "to": "sessions" }),
        )
        .await
        .map_err(|e| format!("vault.grant failed: {e}"))?;
    Ok(())
}

/// `threads.start`, answering the new thread's id.
pub async fn start_thread(client: &Client, input: Value) -> Result<String, String> {
    let started = client
        .call("threads.start", &input)
        .await
        .map_err(|e| format!("threads.start failed: {e}"))?;
    started["thread"]
        .as_str()
        .map(String::from)
        .ok_or_else(|| format!("threads.start answered no thread: {started}"))
}

/// The next event of the stream, parsed, and when it arrived.
pub async fn next_event(stream: &mut EventStream) -> Result<(Value, Instant), String> {
    let msg = tokio::time::timeout(STEP_TIMEOUT, stream.next())
        .await
        .map_err(|_| format!("no event within {}s", STEP_TIMEOUT.as_secs()))?
        .ok_or("the event stream ended")?
        .map_err(|e| format!("the event stream failed: {e}"))?;
    let at = Instant::now();
    let event = serde_json::from_str(&msg.data)
        .map_err(|e| format!("an event is not JSON ({e}): {}", msg.data))?;
    Ok((event, at))
}

/// The value at fraction `p` of sorted figures (nearest rank).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

pub fn mib(kb: u64) -> f64 {
    kb as f64 / 1024.0
}

fn latency_rows(report: &mut Report, l: &sessions_latency::Latency) {
    let none = || Val::Missing("-".into());
    let ms = |v: f64| Val::Num(v, 1);
    let at = |runs: &sessions_latency::Runs, p: f64| percentile(&runs.ms, p);
    let ps = [(0.5, "p50"), (0.95, "p95")];
    for (p, name) in ps {
        report.row_against(
            Against::ClaudeCli,
            &format!("sessions.first_delta_{name}_ms"),
            &format!("first text delta, {name} (ms)"),
            ms(at(&l.vyred, p)),
            ms(at(&l.direct, p)),
            "",
        );
    }
    for (p, name) in ps {
        report.row_against(
            Against::ClaudeCli,
            &format!("sessions.added_{name}_ms"),
            &format!("added latency to first delta, {name} (ms)"),
            ms(at(&l.vyred, p) - at(&l.direct, p)),
            none(),
            if name == "p50" { "< 5" } else { "" },
        );
    }
    for (p, name) in ps {
        report.row_against(
            Against::ClaudeCli,
            &format!("sessions.direct_vyred_env.first_delta_{name}_ms"),
            &format!("  CLI direct in vyred's env: first delta, {name} (ms)"),
            none(),
            ms(at(&l.direct_vyred_env, p)),
            "",
        );
    }
    for (p, name) in ps {
        report.row_against(
            Against::ClaudeCli,
            &format!("sessions.added_own_{name}_ms"),
            &format!("  added vs the CLI direct in vyred's env, {name} (ms)"),
            ms(at(&l.vyred, p) - at(&l.direct_vyred_env, p)),
            none(),
            "",
        );
    }
    let whole = |runs: &sessions_latency::Runs| percentile(&runs.whole_ms, 0.5);
    report.row_against(
        Against::ClaudeCli,
        "sessions.turn_p50_ms",
        "whole turn, p50 (ms): to vyred's thread.finished, the CLI's result in vyred's env",
        ms(whole(&l.vyred)),
        ms(whole(&l.direct_vyred_env)),
        "",
    );
    report.row_against(
        Against::ClaudeCli,
        "sessions.added_turn_p50_ms",
        "  added to a whole turn, p50 (ms): the hooks at its end, the events",
        ms(whole(&l.vyred) - whole(&l.direct_vyred_env)),
        none(),
        "",
    );
    report.row_against(
        Against::ClaudeCli,
        "sessions.api_requests_per_turn",
        "Messages API requests per turn",
        Val::Num(l.vyred.requests_per_turn, 1),
        Val::Num(l.direct.requests_per_turn, 1),
        "",
    );
    report.note(format!(
        "sessions latency: the pinned Claude Code CLI against the fake Messages API on loopback (one fake per session, in this process); 3 sessions up together, 1 warm-up turn then {} turns each, in rotation; reference (the column, for the sessions rows) = the CLI driven directly by vyre's Claude driver with CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1, from writing the user message to its first text_delta; vyred = an in-process vyred, from calling threads.send over the socket to the first thread.text event with a delta; added = the difference at the same percentile. The CLI's own time varies by tens of ms from turn to turn, so over 20 turns a difference of a few ms is within the noise",
        l.vyred.ms.len(),
    ));
    report.note(format!(
        "Messages API requests per turn: {:.1} through vyred, {:.1} for the CLI direct with CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1, {:.1} for the CLI direct in vyred's environment (vyred sets the variable: without it the CLI adds a one-message small-model request each turn); the indented rows take the CLI direct in vyred's environment as the baseline, and the fake-provider rows time vyred's path with no CLI at all",
        l.vyred.requests_per_turn,
        l.direct.requests_per_turn,
        l.direct_vyred_env.requests_per_turn,
    ));
}

fn own_path_rows(report: &mut Report, own: &sessions_latency::Runs) {
    for (p, name) in [(0.5, "p50"), (0.95, "p95")] {
        report.row_against(
            Against::ClaudeCli,
            &format!("sessions.own_path_{name}_ms"),
            &format!("  vyred's path alone (fake provider), {name} (ms)"),
            Val::Num(percentile(&own.ms, p), 2),
            Val::Missing("-".into()),
            if name == "p50" { "< 5" } else { "" },
        );
    }
    report.note(format!(
        "sessions, vyred's path alone: an in-process vyred whose thread runs on the fake provider of tests/it/fake_provider.rs, which answers inside vyred as soon as the message reaches it; 1 warm-up turn then {} turns, timed as the vyred rows are (threads.send over the socket to the first thread.text delta): the tool call, the Switchboard, the event store's commits and the event stream, without a CLI, its pipes or its JSON lines",
        own.ms.len()
    ));
}

fn idle_rows(report: &mut Report, i: &sessions_idle::IdleSessions) {
    let none = || Val::Missing("-".into());
    report.row_against(
        Against::ClaudeCli,
        "sessions.rss_idle_6_mib",
        &format!("vyred RSS, {} idle live sessions (MiB)", i.sessions),
        Val::Num(mib(i.vyred_rss_kb), 1),
        none(),
        "< 30",
    );
    report.row_against(
        Against::ClaudeCli,
        "sessions.children_rss_idle_6_mib",
        &format!(
            "  their CLI processes, total RSS (MiB, {} processes)",
            i.children
        ),
        Val::Num(mib(i.children_rss_kb), 0),
        none(),
        "(Claude Code's, not vyred's)",
    );
    // Issue 26's per-session helper: vyred serves Vyre's tools itself now (ADR 0033), so none
    // is expected; the row says how many ran.
    report.row_against(
        Against::ClaudeCli,
        "sessions.helpers_6",
        "  `vyre mcp` helpers beside the 6 sessions (vyred serves their tools)",
        Val::Num(i.helpers as f64, 0),
        none(),
        "0",
    );
    if i.helpers > 0 {
        let each = |kb: u64| Val::Num(mib(kb) / i.helpers as f64, 1);
        report.row_against(
            Against::ClaudeCli,
            "sessions.helper_rss_each_mib",
            &format!(
                "  a session's `vyre mcp` helper, RSS each (MiB, {} helpers)",
                i.helpers
            ),
            each(i.helpers_rss_kb),
            none(),
            "",
        );
        report.row_against(
            Against::ClaudeCli,
            "sessions.helper_pss_each_mib",
            "    PSS each: the shared binary split among them (MiB)",
            each(i.helpers_pss_kb),
            none(),
            "",
        );
        report.row_against(
            Against::ClaudeCli,
            "sessions.helper_private_each_mib",
            "    private each: what one more session adds (MiB)",
            each(i.helpers_private_kb),
            none(),
            "< 3",
        );
    }
    report.note(format!(
        "sessions idle: target/release/vyre daemon on a fresh home, {} Claude sessions each through one turn, then {}s idle; vyred's RSS is VmRSS of its own pid; the CLI processes are every descendant of vyred; a `vyre mcp` helper's RSS counts the pages of the `vyre` binary every helper shares (read once from disk, held once in memory), PSS splits them among the sharers and private leaves them out (smaps_rollup's Private_Clean + Private_Dirty): private is what each further session costs",
        i.sessions,
        sessions_idle::SETTLE.as_secs()
    ));
}

fn many_rows(report: &mut Report, m: &sessions_many::Many) {
    let none = || Val::Missing("-".into());
    let n = m.sessions;
    let rows = [
        (
            "sessions.many.wall_s",
            format!("{n} fake sessions: start to all finished (s)"),
            Val::Num(m.wall.as_secs_f64(), 2),
        ),
        (
            "sessions.many.cpu_s",
            format!("{n} fake sessions: CPU of this process (s)"),
            Val::Num(m.cpu_s, 2),
        ),
        (
            "sessions.many.rss_before_mib",
            format!("{n} fake sessions: process RSS before vyred (MiB)"),
            Val::Num(mib(m.rss_before_kb), 1),
        ),
        (
            "sessions.many.rss_after_mib",
            format!("{n} fake sessions: process RSS with them live (MiB)"),
            Val::Num(mib(m.rss_after_kb), 1),
        ),
        (
            "sessions.many.stop_s",
            format!("{n} fake sessions: all stopped (s)"),
            Val::Num(m.stop.as_secs_f64(), 2),
        ),
        (
            "sessions.many.pids_after_stop",
            format!("{n} fake sessions: threads.pids after the stops"),
            Val::Num(m.pids_left as f64, 0),
        ),
    ];
    for (key, label, val) in rows {
        let target = if key.ends_with("pids_after_stop") {
            "0"
        } else {
            ""
        };
        report.row_against(Against::ClaudeCli, key, &label, val, none(), target);
    }
    report.note(format!(
        "sessions many: an in-process vyred with the fake provider of tests/it/fake_provider.rs (a real `sh` process per session, replies without a model); {n} threads.start with a first message, {} at a time over the socket, timed until all {n} thread.finished events arrived; CPU is utime+stime of the whole bench process over that window and the RSS is the whole process's, so both include the bench's own clients and event reader, not vyred alone",
        sessions_many::AT_ONCE
    ));
}
