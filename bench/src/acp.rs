//! `--only acp`: what vyred adds to an ACP agent's first text delta (issue 28). The agent is
//! Zed's `claude-code-acp` (`$VYRE_TEST_ACP`, where `tests/run` installs it) on the pinned
//! Claude Code CLI against the fake Messages API. The reference is the same agent driven
//! directly by vyre's ACP provider (`session/prompt` written, the first
//! `agent_message_chunk` read); vyred's figure is an in-process vyred with a thread on
//! provider `acp-bench`, from `threads.send` to the first `thread.text` with a delta. Both stay
//! up for the whole run and take turns one after another, alternating who goes first.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use vyre::kernel::contracts::provider::{Credential, Happening, Launch, Provider, Session};
use vyre::kernel::paths::VyreHome;
use vyre::modules::sessions::acp::AcpProvider;
use vyre::modules::sessions::agent_process::Command;
use vyre::modules::sessions::sandbox::{Contain, Wanted};

use crate::Opts;
use crate::fake_api::FakeApi;
use crate::inproc::InProcess;
use crate::procfs;
use crate::report::{Against, Report, Val};
use crate::sessions::{self, STEP_TIMEOUT, percentile};
use crate::sessions_latency::Vyred;
use crate::spawn::{self, TempDir};

/// Where `tests/run` installs the agent.
const PINNED_ACP: &str = "/var/tmp/vyre-acp/node_modules/.bin/claude-code-acp";

fn acp_agent() -> Option<PathBuf> {
    sessions::pinned_program("VYRE_TEST_ACP", PINNED_ACP)
}

/// How the agent runs for either side: on `cli`, against `api`.
fn command(agent: &std::path::Path, cli: &std::path::Path, api: &FakeApi) -> Command {
    Command {
        label: "the ACP agent",
        setting: "sessions.acp",
        program: agent.to_path_buf(),
        args: vec![],
        env: vec![
            ("ANTHROPIC_BASE_URL".into(), api.url()),
            ("ANTHROPIC_API_KEY".into(), sessions::KEY.into()),
            ("CLAUDE_CODE_EXECUTABLE".into(), cli.display().to_string()),
            (
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
                "1".into(),
            ),
        ],
    }
}

pub async fn run(opts: &Opts, report: &mut Report) -> Result<(), String> {
    let (Some(agent), Some(cli)) = (acp_agent(), sessions::claude_cli()) else {
        let why = format!(
            "acp: no ACP agent at $VYRE_TEST_ACP or {PINNED_ACP}, or no Claude Code CLI; skipped (tests/run installs both)"
        );
        eprintln!("{why}");
        report.note(why);
        return Ok(());
    };
    let turns = if opts.quick { 5 } else { 20 };
    let apis = [FakeApi::start().await, FakeApi::start().await];
    let dir = TempDir::new("acp")?;
    let folder = |name: &str| {
        let p = dir.path().join(name);
        std::fs::create_dir_all(&p)
            .map(|_| p)
            .map_err(|e| e.to_string())
    };
    // Direct: vyre's ACP provider alone, uncontained (what is measured is the path, not the
    // sandbox; vyred's sessions below are uncontained too).
    let provider = AcpProvider {
        id: "acp-bench".into(),
        command: command(&agent, &cli, &apis[0]),
        home: folder("direct-home")?,
        contain: Arc::new(Contain::new(Wanted::None, None, vec![], vec![])),
        ids: folder("direct-ids")?,
    };
    let launch = Launch {
        id: vyre::kernel::ids::uuid_v4(),
        resume: false,
        fork_from: None,
        resume_at: None,
        cwd: folder("direct-work")?,
        model: None,
        effort: None,
        mode: "default".into(),
        append_system_prompt: None,
        system_prompt_snapshot: None,
        credential: Credential::Login,
        budget_usd: None,
        plugin_dirs: vec![],
        env: vec![],
        processes: None,
        host_tools: None,
    };
    let direct = provider
        .start(launch)
        .await
        .map_err(|e| format!("the ACP agent did not start: {e}"))?;
    let vyred = match vyred(&agent, &cli, &apis[1], &dir).await {
        Ok(v) => v,
        Err(e) => {
            direct.stop(std::time::Duration::from_secs(5)).await;
            return Err(e);
        }
    };
    side_by_side(
        (direct, &apis[0]),
        (vyred, &apis[1]),
        turns,
        report,
        Against::AcpDirect,
        "acp",
        "ACP agent",
    )
    .await?;
    report.note(format!(
        "acp: Zed's claude-code-acp on the pinned Claude Code CLI against the fake Messages API (one fake each); 1 warm-up turn then {turns} turns on each side, alternating who goes first; reference = the agent driven directly by vyre's ACP provider, from writing session/prompt to its first agent_message_chunk; vyred = an in-process vyred, from calling threads.send to the first thread.text with a delta; both uncontained. The agent's own time varies by tens of ms, so a few ms of difference is within the noise"
    ));
    Ok(())
}

/// `turns` turns (after one to warm up) of the program driven `direct`ly and through `vyred`
/// (each against its own fake API, given beside it), alternating who goes
/// first; both are stopped after. Rows `<key>.first_delta_p50_ms` ..., `<key>.added_p50_ms`
/// ..., and the first delta split where the model's request reaches the API:
/// `<key>.asked_p50_ms` (the prompt sent to the request read) and `<key>.answered_p50_ms`
/// (from there to the first delta), and `<key>.bench_cpu_ms_per_turn`: this process's CPU over
/// each side's turns (it holds both drivers, both fake APIs and vyred, so the difference is
/// mostly vyred's own), named `<label>: ...`.
pub async fn side_by_side(
    (mut direct, direct_api): (Box<dyn Session>, &FakeApi),
    (mut vyred, vyred_api): (Vyred, &FakeApi),
    turns: usize,
    report: &mut Report,
    against: Against,
    key: &str,
    label: &str,
) -> Result<(), String> {
    eprintln!("{key}: 1 + {turns} turns each, direct and through vyred, alternating...");
    let (mut d_ms, mut v_ms) = (Vec::new(), Vec::new());
    // Per side, the milliseconds from the prompt sent to the model's request read by the API,
    // and the bench process's CPU ticks over the measured turns.
    let mut asked: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut ticks = [0u64; 2];
    let result = async {
        for i in 0..=turns {
            let text = format!("bench turn {i}");
            for k in 0..2 {
                let side = (i + k) % 2;
                let sent = Instant::now();
                let cpu = procfs::cpu_ticks(std::process::id()).map_err(|e| e.to_string())?;
                let ms = if side == 0 {
                    direct_turn(direct.as_mut(), &text).await?
                } else {
                    vyred.turn(&text).await?
                };
                if i == 0 {
                    continue;
                }
                let cpu = procfs::cpu_ticks(std::process::id()).map_err(|e| e.to_string())? - cpu;
                ticks[side] += cpu;
                [&mut d_ms, &mut v_ms][side].push(ms);
                let request = [direct_api, vyred_api][side]
                    .first_request_since(sent)
                    .ok_or("a turn's first delta came with no request to the API")?;
                asked[side].push((request - sent).as_secs_f64() * 1000.0);
            }
        }
        Ok::<_, String>(())
    }
    .await;
    direct.stop(std::time::Duration::from_secs(5)).await;
    let stopped = vyred.stop().await;
    result?;
    stopped?;
    let ms = |v: f64| Val::Num(v, 1);
    // What the answered part is: each turn's first delta less its asked part (before sorting).
    let answered = |all: &[f64], asked: &[f64]| -> Vec<f64> {
        let mut v: Vec<f64> = all.iter().zip(asked).map(|(a, b)| a - b).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let answered = [answered(&d_ms, &asked[0]), answered(&v_ms, &asked[1])];
    for v in &mut asked {
        v.sort_by(f64::total_cmp);
    }
    for (part, [d, v], what) in [
        (
            "asked",
            &asked,
            "the prompt sent to the model's request read by the API",
        ),
        ("answered", &answered, "from there to the first delta"),
    ] {
        report.row_against(
            against,
            &format!("{key}.{part}_p50_ms"),
            &format!("{label}: first delta's {part} part, p50 (ms; {what})"),
            ms(percentile(v, 0.5)),
            ms(percentile(d, 0.5)),
            "",
        );
    }
    let per_turn = |t: u64| t as f64 * 1000.0 / procfs::clk_tck().0 as f64 / turns as f64;
    report.row_against(
        against,
        &format!("{key}.bench_cpu_ms_per_turn"),
        &format!(
            "{label}: the bench process's CPU per turn (ms; vyred's side holds vyred, the other only the driver)"
        ),
        ms(per_turn(ticks[1])),
        ms(per_turn(ticks[0])),
        "",
    );
    d_ms.sort_by(f64::total_cmp);
    v_ms.sort_by(f64::total_cmp);
    for (p, name) in [(0.5, "p50"), (0.95, "p95")] {
        report.row_against(
            against,
            &format!("{key}.first_delta_{name}_ms"),
            &format!("{label}: first text delta, {name} (ms)"),
            ms(percentile(&v_ms, p)),
            ms(percentile(&d_ms, p)),
            "",
        );
    }
    for (p, name) in [(0.5, "p50"), (0.95, "p95")] {
        report.row_against(
            against,
            &format!("{key}.added_{name}_ms"),
            &format!("{label}: added latency to first delta, {name} (ms)"),
            ms(percentile(&v_ms, p) - percentile(&d_ms, p)),
            Val::Missing("-".into()),
            if name == "p50" { "< 5" } else { "" },
        );
    }
    Ok(())
}

/// One turn of the directly driven agent: milliseconds to its first text delta.
async fn direct_turn(session: &mut dyn Session, text: &str) -> Result<f64, String> {
    let sent = Instant::now();
    session
        .send(
            json!([{ "type": "text", "text": text }]),
            &vyre::kernel::ids::uuid_v4(),
            None,
        )
        .map_err(|e| format!("the agent refused a prompt: {e}"))?;
    let mut first = None;
    loop {
        let h = tokio::time::timeout(STEP_TIMEOUT, session.next())
            .await
            .map_err(|_| format!("the agent said nothing for {}s", STEP_TIMEOUT.as_secs()))?
            .ok_or("the agent exited")?;
        match h {
            Happening::Text { delta: Some(_), .. } if first.is_none() => {
                first = Some(sent.elapsed());
            }
            Happening::Finished { ok: true, .. } => break,
            Happening::Finished { error, .. } => {
                return Err(format!("a direct turn failed: {error:?}"));
            }
            _ => {}
        }
    }
    let first = first.ok_or("a direct turn ended without a text delta")?;
    Ok(first.as_secs_f64() * 1000.0)
}

/// An in-process vyred with one thread on the agent, as the sessions bench drives its own.
async fn vyred(
    agent: &std::path::Path,
    cli: &std::path::Path,
    api: &FakeApi,
    dir: &TempDir,
) -> Result<Vyred, String> {
    let command = command(agent, cli, api);
    let env: serde_json::Map<String, serde_json::Value> = command
        .env
        .into_iter()
        .map(|(k, v)| (k, json!(v)))
        .collect();
    let home = dir.path().join("vyred-home");
    let work = dir.path().join("vyred-work");
    for d in [&home, &work] {
        std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
    }
    let vyre_home = dir.path().join("vyre");
    let config = json!({ "sessions": {
        "home": home, "spares": 0, "containment": "none",
        "acp": { "bench": { "command": agent, "env": env } },
    } });
    spawn::write_config(&vyre_home, &config)?;
    let vyred = InProcess::start(VyreHome::at(vyre_home), vec![]).await?;
    Vyred::attach(vyred, json!({ "cwd": work, "provider": "acp-bench" })).await
}
