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
/// A call the Gate holds (Claude Code is told to ask), and one it does not look at.
const HELD: &[u8] = br#"{"session_id":"bench","transcript_path":"/nonexistent","cwd":"/work","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cargo test && git push origin main"},"tool_use_id":"toolu_bench"}"#;
const UNGATED: &[u8] = br#"{"session_id":"bench","transcript_path":"/nonexistent","cwd":"/work","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/work/README.md"},"tool_use_id":"toolu_bench"}"#;
/// Commands as sessions run them, for the Gate's check itself.
const COMMANDS: &[&str] = &[
    "ls -la",
    "cargo test --workspace 2>&1 | tail -20",
    "git status --short && git diff --stat",
    "cd web && npm run build",
    "git push origin main",
    "curl -s https://example.com/api | jq .items",
    "rm -rf target/debug/incremental",
    "bash -c 'make && make install'",
    "FOO=1 timeout 60 python3 -m pytest -q tests/",
    "gh pr create --title \"Fix\" --body \"Fixes the thing\"",
];

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
    let up = times(runs, || hook(vyre, &home, INPUT))?;
    eprintln!("hook: {runs} round trips of a held call and of one the Gate does not look at...");
    let (mut held, mut ungated) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        held.extend(times(1, || hook(vyre, &home, HELD))?);
        ungated.extend(times(1, || hook(vyre, &home, UNGATED))?);
    }
    held.sort_by(f64::total_cmp);
    ungated.sort_by(f64::total_cmp);
    server.stop().await?;
    eprintln!("hook: {runs} round trips with vyred down...");
    let down = times(runs, || hook(vyre, &home, INPUT))?;
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
    for (stat, p) in [("p50", 0.50), ("p95", 0.95)] {
        report.row_against(
            Against::Ungated,
            &format!("hook.held_{stat}_ms"),
            &format!("vyre hook round trip of a call the Gate holds, {stat} (ms)"),
            Val::Num(pct(&held, p), 2),
            Val::Num(pct(&ungated, p), 2),
            if stat == "p50" { "< 1 more" } else { "" },
        );
    }
    let (gate, floor) = checks();
    report.row_against(
        Against::Ungated,
        "hook.gate_check_p50_us",
        "the Gate's check of a command, p50 (µs)",
        Val::Num(pct(&gate, 0.5), 2),
        Val::Num(pct(&floor, 0.5), 2),
        "< 1000",
    );
    report.note(format!(
        "hook: the held call is `cargo test && git push origin main` (the Gate's `ask`), alternated with a Read the Gate does not look at, {runs} each; the check is `gate::classify` on {} commands as sessions run them, 2,000 rounds, against the floor's own check of the same commands",
        COMMANDS.len()
    ));
    report.note(format!(
        "hook: {runs} spawns each of the release `vyre hook PreToolUse` with a PreToolUse input on stdin (a harmless `ls -la`, so vyred answers nothing after running the floor), timed from spawn to exit with its output read; vyred up on a fresh home, then stopped; the reference spawns /bin/true the same way"
    ));
    Ok(())
}

fn hook(vyre: &Path, home: &Path, input: &[u8]) -> Result<(), String> {
    let mut cmd = Command::new(vyre);
    cmd.args(["hook", "PreToolUse"])
        .env_clear()
        .env("VYRE_HOME", home)
        .env("HOME", home);
    once_with(cmd, input)
}

/// Microseconds of the Gate's check and of the floor's, per command, sorted.
fn checks() -> (Vec<f64>, Vec<f64>) {
    use vyre::modules::gate::classify::{Call, Rules, classify};
    let rules = Rules::default();
    let inputs: Vec<serde_json::Value> = COMMANDS
        .iter()
        .map(|c| serde_json::json!({ "command": c }))
        .collect();
    let folder = Path::new("/work");
    let (mut gate, mut floor) = (Vec::new(), Vec::new());
    for _ in 0..2000 {
        for input in &inputs {
            let start = Instant::now();
            std::hint::black_box(classify(
                &Call {
                    tool: "Bash",
                    input,
                    folder: Some(folder),
                },
                &rules,
            ));
            gate.push(start.elapsed().as_secs_f64() * 1e6);
            let start = Instant::now();
            std::hint::black_box(vyre::kernel::floor::check("Bash", input));
            floor.push(start.elapsed().as_secs_f64() * 1e6);
        }
    }
    gate.sort_by(f64::total_cmp);
    floor.sort_by(f64::total_cmp);
    (gate, floor)
}

fn once(cmd: Command) -> Result<(), String> {
    once_with(cmd, INPUT)
}

fn once_with(mut cmd: Command, input: &[u8]) -> Result<(), String> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot spawn: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // /bin/true may exit before reading: a closed pipe is fine.
        let _ = stdin.write_all(input);
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
