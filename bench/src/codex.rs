//! `--only codex`: what vyred adds to Codex's first text delta (issue 28). Codex is the pinned
//! CLI (`$VYRE_TEST_CODEX`, where `tests/run` installs it) against the fake Responses API. The
//! reference is the same Codex driven directly by vyre's Codex provider (`turn/start` written,
//! the first `item/agentMessage/delta` read); vyred's figure is an in-process vyred with a
//! thread on provider `codex`, from `threads.send` to the first `thread.text` with a delta.
//! Both stay up for the whole run and take turns one after another, alternating who goes first.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use vyre::kernel::contracts::provider::{Credential, Launch, Provider};
use vyre::kernel::contracts::secret::Secret;
use vyre::kernel::paths::VyreHome;
use vyre::modules::sessions::codex::CodexProvider;
use vyre::modules::sessions::npm_cli::{CODEX, NpmCli};
use vyre::modules::sessions::sandbox::{Contain, Wanted};

use crate::Opts;
use crate::fake_api::FakeApi;
use crate::inproc::InProcess;
use crate::report::{Against, Report};
use crate::sessions;
use crate::sessions_latency::Vyred;
use crate::spawn::{self, TempDir};

/// Where `tests/run` installs it.
const PINNED_CODEX: &str = "/var/tmp/vyre-codex/node_modules/.bin/codex";

/// A key for the fake API; it checks none.
const KEY: &str = "sk-proj-bench-00000000";

fn codex_cli() -> Option<PathBuf> {
    sessions::pinned_program("VYRE_TEST_CODEX", PINNED_CODEX)
}

pub async fn run(opts: &Opts, report: &mut Report) -> Result<(), String> {
    let Some(codex) = codex_cli() else {
        let why = format!(
            "codex: no Codex CLI at $VYRE_TEST_CODEX or {PINNED_CODEX}; skipped (tests/run installs it)"
        );
        eprintln!("{why}");
        report.note(why);
        return Ok(());
    };
    let turns = if opts.quick { 5 } else { 60 };
    let apis = [FakeApi::start().await, FakeApi::start().await];
    let dir = TempDir::new("codex")?;
    let folder = |name: &str| {
        let p = dir.path().join(name);
        std::fs::create_dir_all(&p)
            .map(|_| p)
            .map_err(|e| e.to_string())
    };
    // Direct: vyre's Codex provider alone, uncontained (what is measured is the path, not the
    // sandbox; vyred's sessions below are uncontained too).
    let home = folder("direct-home")?;
    let provider = CodexProvider {
        cli: Arc::new(NpmCli::of(&CODEX, codex.clone(), home.clone())),
        base_url: Some(format!("{}/v1", apis[0].url())),
        home,
        contain: Arc::new(Contain::new(Wanted::None, None, vec![], vec![])),
        ids: folder("direct-ids")?,
        prices: Default::default(),
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
        credential: Credential::ApiKey(Secret::new(KEY.into())),
        budget_usd: None,
        plugin_dirs: vec![],
        env: vec![],
        processes: None,
        host_tools: None,
    };
    let direct = provider
        .start(launch)
        .await
        .map_err(|e| format!("Codex did not start: {e}"))?;
    let vyred = match vyred(&codex, &apis[1], &dir).await {
        Ok(v) => v,
        Err(e) => {
            direct.stop(std::time::Duration::from_secs(5)).await;
            return Err(e);
        }
    };
    crate::acp::side_by_side(
        (direct, &apis[0]),
        (vyred, &apis[1]),
        turns,
        report,
        Against::CodexDirect,
        "codex",
        "Codex",
    )
    .await?;
    report.note(format!(
        "codex: the pinned Codex CLI against the fake Responses API (one fake each); 1 warm-up turn then {turns} turns on each side, alternating who goes first; reference = Codex driven directly by vyre's Codex provider, from writing turn/start to its first item/agentMessage/delta; vyred = an in-process vyred, from calling threads.send to the first thread.text with a delta; both uncontained"
    ));
    Ok(())
}

/// An in-process vyred with one thread on Codex, its key in the vault.
async fn vyred(codex: &std::path::Path, api: &FakeApi, dir: &TempDir) -> Result<Vyred, String> {
    let home = dir.path().join("vyred-home");
    let work = dir.path().join("vyred-work");
    for d in [&home, &work] {
        std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
    }
    let vyre_home = dir.path().join("vyre");
    let config = json!({ "sessions": {
        "home": home, "spares": 0, "containment": "none",
        "codex": codex, "codex_base_url": format!("{}/v1", api.url()),
    } });
    spawn::write_config(&vyre_home, &config)?;
    let vyred = InProcess::start(VyreHome::at(vyre_home), vec![]).await?;
    let sock = vyred.client();
    for (tool, input) in [
        (
            "vault.put",
            json!({ "name": "openai-api-key", "value": KEY }),
        ),
        (
            "vault.grant",
            json!({ "item": "openai-api-key", "to": "sessions" }),
        ),
    ] {
        sock.call(tool, &input)
            .await
            .map_err(|e| format!("{tool}: {e}"))?;
    }
    Vyred::attach(vyred, json!({ "cwd": work, "provider": "codex" })).await
}
