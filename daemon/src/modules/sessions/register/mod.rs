//! The two built-in modules of the sessions layer: `sessions` (the provider router, the Claude
//! provider and the credential sessions run on; the vault grants are to it) and `threads` (the
//! Switchboard and its tools).
//!
//! - `io`: the tools' inputs and outputs;
//! - `thread_tools`: the `threads.*` tools;
//! - `slot_tools`: the `sessions.slots.*` tools.

mod io;
mod slot_tools;
mod thread_tools;

use std::collections::HashSet;
use std::sync::Arc;

pub use io::*;
pub use slot_tools::{SlotInput, TakeInput};

use crate::kernel::module::{Ctx, Module, StartFuture, ToolDef};
use crate::kernel::tools::{Caller, NoInput, ToolError};
use crate::modules::sessions::claude_provider::ClaudeProvider;
use crate::modules::sessions::npm_cli::{self, NpmCli, Probe, Source};
use crate::modules::sessions::router::Router;
use crate::modules::sessions::switchboard::{Owners, Switchboard};

/// The thread of a session caller, when vyred knows it.
pub(super) fn session_thread(caller: &Caller) -> Option<String> {
    match caller {
        Caller::Session { thread, .. } => thread.clone(),
        _ => None,
    }
}

/// A provider as `sessions.providers` lists it.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct ProviderInfo {
    pub name: String,
    /// `claude-cli-stream-json`, `acp`, ...
    pub driver: String,
    pub capabilities: crate::kernel::contracts::provider::Capabilities,
    /// The reasoning efforts its sessions take (`threads.start`'s `effort`), least first;
    /// empty when it has no such choice.
    pub efforts: Vec<String>,
    /// Whether a thread of it can go back to an earlier message (`threads.rewind`); a fork
    /// from one it can always.
    pub rewinds: bool,
}

pub struct SessionsModule {
    pub router: Arc<Router>,
}

impl Module for SessionsModule {
    fn name(&self) -> &str {
        "sessions"
    }
    fn manifest(&self) -> &str {
        include_str!("../manifests/sessions.json")
    }
    fn start(&self, ctx: Ctx) -> StartFuture {
        let router = self.router.clone();
        Box::pin(async move {
            let settings = ctx.config().sessions.clone();
            let run_as = run_as(&settings)?;
            if run_as.is_some() && settings.socket_dir.is_none() {
                tracing::warn!(
                    "sessions.uid is set but sessions.socket_dir is not: the sessions' own sockets stay in VYRE_HOME, which their user cannot reach, so their Vyre tools will fail"
                );
            }
            let home = ctx.sessions_home()?;
            let base_url = settings.base_url.or_else(|| {
                std::env::var("ANTHROPIC_BASE_URL")
                    .ok()
                    .filter(|v| !v.is_empty())
            });
            let vyre_home = ctx.home().root().to_path_buf();
            let contain = Arc::new(crate::modules::sessions::sandbox::Contain::new(
                crate::modules::sessions::sandbox::Wanted::parse(settings.containment.as_deref())?,
                run_as,
                crate::modules::sessions::sandbox::hidden_paths(&vyre_home),
                // A bundled CLI lives in VYRE_HOME (sessions.claude or sessions.codex =
                // "bundled").
                vec![
                    vyre_home.join(npm_cli::CLAUDE.dir),
                    vyre_home.join(npm_cli::CODEX.dir),
                ],
            ));
            let cli = Arc::new(NpmCli::new(
                &npm_cli::CLAUDE,
                Source::parse(
                    settings.claude.as_deref(),
                    ctx.home().root(),
                    &npm_cli::CLAUDE,
                ),
                Probe {
                    home: home.clone(),
                    contain: contain.clone(),
                },
                Some(ctx.clone()),
            ));
            ctx.provider(Arc::new(ClaudeProvider {
                cli: cli.clone(),
                base_url,
                home: home.clone(),
                contain: contain.clone(),
            }))?;
            // Codex when it is chosen, or found on PATH.
            let codex_source = Source::parse(
                settings.codex.as_deref(),
                ctx.home().root(),
                &npm_cli::CODEX,
            );
            if settings.codex.is_some() || npm_cli::on_path(npm_cli::CODEX.bin).is_some() {
                ctx.provider(Arc::new(crate::modules::sessions::codex::CodexProvider {
                    cli: Arc::new(NpmCli::new(
                        &npm_cli::CODEX,
                        codex_source,
                        Probe {
                            home: home.clone(),
                            contain: contain.clone(),
                        },
                        Some(ctx.clone()),
                    )),
                    base_url: settings.codex_base_url.clone(),
                    prices: Arc::new(settings.prices.clone()),
                    home: home.clone(),
                    contain: contain.clone(),
                    ids: vyre_home.join("codex-threads"),
                }))?;
            }
            for (name, agent) in &settings.acp {
                ctx.provider(Arc::new(crate::modules::sessions::acp::AcpProvider {
                    id: format!("acp-{name}"),
                    command: crate::modules::sessions::agent_process::Command {
                        label: "the ACP agent",
                        setting: "sessions.acp",
                        program: agent.command.clone().into(),
                        args: agent.args.clone(),
                        env: agent.env.clone().into_iter().collect(),
                    },
                    home: home.clone(),
                    contain: contain.clone(),
                    ids: vyre_home.join("acp").join(format!("acp-{name}")),
                }))?;
            }
            ctx.tool_with(
                ToolDef::new(
                    "sessions.claude",
                    "Which Claude Code CLI sessions run, and its version, found without installing anything.",
                )
                .onboarding()
                .sessions_open(),
                &cli,
                |cli, _: NoInput, _| async move { Ok::<_, ToolError>(cli.detect().await) },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "sessions.providers",
                    "The providers sessions can run on (claude, codex when it is installed or configured, and each ACP agent in sessions.acp as acp-<name>): name, driver, what each can do, the reasoning efforts it takes and whether its threads rewind.",
                )
                .sessions_open(),
                &router,
                |router, _: NoInput, _| async move {
                    Ok::<_, ToolError>(
                        router
                            .names()
                            .into_iter()
                            .filter_map(|name| {
                                let p = router.get(&name).ok()?;
                                Some(ProviderInfo {
                                    driver: p.driver().to_string(),
                                    capabilities: p.capabilities(),
                                    efforts: p.efforts().iter().map(|e| e.to_string()).collect(),
                                    rewinds: p.rewinds(),
                                    name,
                                })
                            })
                            .collect::<Vec<_>>(),
                    )
                },
            )?;
            ctx.store()
                .migrate(crate::modules::sessions::models::MIGRATIONS)
                .await?;
            crate::modules::sessions::models::register(&ctx, router.clone())?;
            let slots = Arc::new(crate::modules::sessions::slots::Slots::new(
                ctx.clone(),
                crate::modules::sessions::slots::Limits::from_config(&ctx.config().sessions.slots),
            ));
            slot_tools::register(&ctx, slots.clone())?;
            router.set_slots(slots);
            router.set_sessions_ctx(ctx, home);
            Ok(())
        })
    }
}

pub struct ThreadsModule {
    pub router: Arc<Router>,
}

impl Module for ThreadsModule {
    fn name(&self) -> &str {
        "threads"
    }
    fn manifest(&self) -> &str {
        include_str!("../manifests/threads.json")
    }
    fn start(&self, ctx: Ctx) -> StartFuture {
        let router = self.router.clone();
        Box::pin(async move {
            ctx.store()
                .migrate(crate::modules::sessions::rows::MIGRATIONS)
                .await?;
            // Sessions a vyred left live when it died (a crash, kill -9): their processes went
            // with it; say so, and they resume on the next send.
            ctx.store().write(Switchboard::after_restart).await?;
            // A process of this store's threads that outlived the old vyred (its stdin closed
            // with it, so this is rare; or it was detached, or its thread was being started or
            // stopped when vyred died, its row no longer live) must not write the transcript
            // the next resume writes, nor run on: no session runs yet, so every one is ended.
            let ours: HashSet<String> = ctx
                .store()
                .read(|c| Ok(crate::modules::sessions::switchboard::rows::runs::ids(c)?))
                .await?;
            if !ours.is_empty() {
                let swept = tokio::task::spawn_blocking(move || {
                    crate::modules::sessions::spawn::kill_tagged_any("VYRE_THREAD", |v| {
                        std::str::from_utf8(v).is_ok_and(|t| ours.contains(t))
                    })
                })
                .await
                .unwrap_or(0);
                if swept > 0 {
                    tracing::warn!(
                        swept,
                        "ended session processes a previous vyred left behind"
                    );
                }
            }
            let owners = ctx.store().read(|c| Ok(Owners::load(c)?)).await?;
            let board = Switchboard::new(ctx.clone(), router, owners);
            ctx.provide_fence(board.clone())?;
            board.keep_spares();
            let home = Arc::new(ctx.sessions_home()?);
            thread_tools::register(&ctx, board.clone(), home.clone())?;
            crate::modules::sessions::finding::register(&ctx, board.clone(), home)?;
            // Threads are titled by the first words a person sends them.
            crate::modules::sessions::about::follow(&ctx);
            // When vyred stops, every session stops with it.
            let stop = ctx.shutdown();
            ctx.spawn(async move {
                stop.cancelled().await;
                board.stop_all("restart").await;
            });
            Ok(())
        })
    }
}

/// `sessions.uid` and `sessions.gid`, which go together (ADR 0013).
fn run_as(
    settings: &crate::kernel::config::SessionsConfig,
) -> Result<Option<crate::modules::sessions::spawn::RunAs>, String> {
    match (settings.uid, settings.gid) {
        (None, None) => Ok(None),
        (Some(uid), Some(gid)) => Ok(Some(crate::modules::sessions::spawn::RunAs { uid, gid })),
        _ => Err("sessions.uid and sessions.gid go together: set both, or neither".into()),
    }
}
