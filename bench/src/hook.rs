//! The hook round trip: what one Claude Code hook of the harness plugin costs, as Claude Code
//! runs it: spawn `vyre hook PreToolUse`, write the hook's input on its stdin, read its answer.
//! With vyred up (an answer from `harness.hook`), and down (nothing to say, exit at once).
//! The reference is the same spawn of `/bin/true`: the floor any hook command pays.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::Opts;
use crate::report::{Against, Report, Val};
use crate::spawn::{self, Kind, Server};

const INPUT: &[u8] = br#"{"session_id":"bench","transcript_path":"/nonexistent","cwd":"/","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la"},"tool_use_id":"toolu_bench"}"#;

pub async fn run(opts: &Opts, report: &mut Report) -> Result<(), String> {
    let runs = if opts.quick { 50 } else { 300 };
    let kind = spawn::vyred()?;
    let Kind::Vyred(vyre) = &kind else {
        return Err("no vyre binary".into());
    };
    let mut server = Server::spawn(&kind)?;
    server
        .wait_healthy(std::time::Duration::from_millis(1))
        .await?;
    let home = server.dir().join("vyre");
    eprintln!("hook: {runs} round trips with vyred up...");
    let up = times(runs, || hook(vyre, &home))?;
    server.stop().await?;
    eprintln!("hook: {runs} round trips with vyred down...");
    let down = times(runs, || hook(vyre, &home))?;
    let bare = times(runs, || once(Command::new("/bin/true")))?;
    for (key, label, t, target) in [
        ("up", "vyre hook round trip, vyred up", &up, "< 5"),
        ("down", "vyre hook round trip, vyred down", &down, "< 2"),
    ] {
        for (stat, p) in [("p50", 0.50), ("p95", 0.95)] {
            report.row_against(
                Against::BareProcess,
                &format!("hook.{key}_{stat}_ms"),
                &format!("{label}, {stat} (ms)"),
                Val::Num(pct(t, p), 2),
                Val::Num(pct(&bare, p), 2),
                if stat == "p50" { target } else { "" },
            );
        }
    }
    report.note(format!(
        "hook: {runs} spawns each of the release `vyre hook PreToolUse` with a PreToolUse input on stdin (a harmless `ls -la`, so vyred answers nothing after running the floor), timed from spawn to exit with its output read; vyred up on a fresh home, then stopped; the reference spawns /bin/true the same way"
    ));
    Ok(())
}

fn hook(vyre: &Path, home: &Path) -> Result<(), String> {
    let mut cmd = Command::new(vyre);
    cmd.args(["hook", "PreToolUse"])
        .env_clear()
        .env("VYRE_HOME", home)
        .env("HOME", home);
    once(cmd)
}

fn once(mut cmd: Command) -> Result<(), String> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot spawn: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // /bin/true may exit before reading: a closed pipe is fine.
        let _ = stdin.write_all(INPUT);
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("cannot wait: {e}"))?;
    if !out.status.success() {
        return Err(format!("the hook exited with {}", out.status));
    }
    Ok(())
}

/// Milliseconds of each run, sorted.
fn times(runs: usize, mut f: impl FnMut() -> Result<(), String>) -> Result<Vec<f64>, String> {
    let mut t = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        f()?;
        t.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    t.sort_by(f64::total_cmp);
    Ok(t)
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}
