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
        direct,
        vyred,
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

/// `turns` turns (after one to warm up) of the program driven `direct`ly and through `vyred`,
/// alternating who goes first; both are stopped after. Rows `<key>.first_delta_p50_ms` ... and
/// `<key>.added_p50_ms` ..., named `<label>: ...`.
pub async fn side_by_side(
    mut direct: Box<dyn Session>,
    mut vyred: Vyred,
    turns: usize,
    report: &mut Report,
    against: Against,
    key: &str,
    label: &str,
) -> Result<(), String> {
    eprintln!("{key}: 1 + {turns} turns each, direct and through vyred, alternating...");
    let (mut d_ms, mut v_ms) = (Vec::new(), Vec::new());
    let result = async {
        for i in 0..=turns {
            let text = format!("bench turn {i}");
            for k in 0..2 {
                if (i + k) % 2 == 0 {
                    let ms = direct_turn(direct.as_mut(), &text).await?;
                    if i > 0 {
                        d_ms.push(ms);
                    }
                } else {
                    let ms = vyred.turn(&text).await?;
                    if i > 0 {
                        v_ms.push(ms);
                    }
                }
            }
        }
        Ok::<_, String>(())
    }
    .await;
    direct.stop(std::time::Duration::from_secs(5)).await;
    let stopped = vyred.stop().await;
    result?;
    stopped?;
    d_ms.sort_by(f64::total_cmp);
    v_ms.sort_by(f64::total_cmp);
    let ms = |v: f64| Val::Num(v, 1);
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
