//! The `agents.*` tools: their inputs and outputs, and their registration.

use super::*;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateInput {
    /// Lowercase letters, digits and dashes, up to 32.
    #[schemars(length(min = 1, max = 32), pattern(crate::kernel::tools::shape::NAME))]
    name: String,
    /// `agent` (the default) or `assistant` (one per machine, made at onboarding).
    #[serde(default)]
    #[schemars(extend("enum" = ["agent", "assistant", null]))]
    kind: Option<String>,
    /// Appended to Claude Code's system prompt in every session of this agent.
    #[serde(default)]
    instructions: Option<String>,
    /// Its model; the `agent` purpose's model when left out.
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    auth: Option<AgentAuth>,
    /// `"*"` (every project) or the projects it may draw on; none when left out (the assistant:
    /// every one).
    #[serde(default)]
    projects: Option<Projects>,
    /// The folder its sessions work in (absolute, existing); `VYRE_HOME/agents/<name>` when
    /// left out.
    #[serde(default)]
    #[schemars(pattern(r"^/"))]
    cwd: Option<PathBuf>,
    /// Powers beyond its own threads: `threads` (start, drive, monitor and stop any session),
    /// `recall` (read every session's history). None when left out, the assistant included.
    #[serde(default)]
    grants: Option<Vec<Grant>>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateInput {
    name: String,
    #[serde(default)]
    instructions: Option<String>,
    /// A model; an empty string goes back to the `agent` purpose's.
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    auth: Option<AgentAuth>,
    #[serde(default)]
    projects: Option<Projects>,
    /// The folder its sessions work in (absolute, existing).
    #[serde(default)]
    #[schemars(pattern(r"^/"))]
    cwd: Option<PathBuf>,
    /// Replaces its grants (`[]` takes them all back).
    #[serde(default)]
    grants: Option<Vec<Grant>>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskInput {
    agent: String,
    #[schemars(pattern(crate::kernel::tools::shape::NOT_BLANK))]
    text: String,
    /// Start a new thread instead of going on with the current one.
    #[serde(default)]
    new: bool,
    /// Vyre's own instruction (the onboarding's greeting prompt), not the person's words: the
    /// timeline marks it and surfaces hide it. Only Vyre's modules may say so.
    #[serde(default)]
    internal: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentInput {
    agent: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Asked {
    agent: String,
    thread: String,
    /// Whether a new thread was started for this.
    started: bool,
    /// The send's uuid and how it went (`turn`, `steer`), when it went to a running thread.
    uuid: Option<String>,
    via: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Stopped {
    agent: String,
    stopped: Vec<String>,
}

pub(super) fn register(ctx: &Ctx, book: Book) -> Result<(), crate::kernel::module::StartError> {
    ctx.tool_with(
        ToolDef::new(
            "agents.list",
            "Every agent (the assistant first) and its current thread.",
        )
        .sessions_fenced(),
        &book,
        |b, _: crate::kernel::tools::NoInput, cx| async move {
            // A session sees the agents it acts for (its own; every one with the grant).
            let scope = cx.scope(crate::kernel::tools::Reach::Own).await?;
            let mut all = b.list().await?;
            all.retain(|a| scope.acts_for(&a.name));
            Ok::<_, ToolError>(all)
        },
    )?;

    let b = book.clone();
    let home = ctx.home().root().to_path_buf();
    ctx.tool_with(
        ToolDef::new(
            "agents.create",
            "Create an agent: its instructions, model, credentials, budget and projects.",
        )
        .finishes()
        .person_only(),
        &(b, home),
        |(b, home), input: CreateInput, _| async move {
            check_name(&input.name)?;
            // `agent` or `assistant`: the schema's enum, held by the input layer.
            let kind = input.kind.unwrap_or_else(|| "agent".into());
            let auth = input.auth.unwrap_or_default();
            let projects = input.projects.unwrap_or_else(|| {
                if kind == "assistant" {
                    Projects::All("*".into())
                } else {
                    Projects::default()
                }
            });
            let cwd = match input.cwd {
                Some(dir) => check_cwd(&dir)?,
                None => {
                    let dir = home.join("agents").join(&input.name);
                    std::fs::create_dir_all(&dir).map_err(|e| {
                        ToolError::internal(format!("cannot create {}: {e}", dir.display()))
                    })?;
                    dir.display().to_string()
                }
            };
            let profile = AgentProfile {
                name: input.name,
                kind,
                instructions: input.instructions.unwrap_or_default(),
                model: input.model.filter(|m| !m.trim().is_empty()),
                auth,
                projects,
                cwd,
                grants: grants_of(input.grants),
                thread: None,
                created_at: 0,
                updated_at: 0,
            };
            b.save(&profile, true).await?;
            b.get(&profile.name).await
        },
    )?;

    ctx.tool_with(
        ToolDef::new(
            "agents.update",
            "Change an agent. It applies from the agent's next turn: a live session restarts on its transcript with the change.",
        )
        .finishes()
        .person_only(),
        &book,
        |b, input: UpdateInput, _| async move {
                let mut p = b.get(&input.name).await?;
                if let Some(i) = input.instructions {
                    p.instructions = i;
                }
                if let Some(m) = input.model {
                    p.model = Some(m).filter(|m| !m.trim().is_empty());
                }
                if let Some(a) = input.auth {
                    p.auth = a;
                }
                if let Some(pr) = input.projects {
                    p.projects = pr;
                }
                if let Some(dir) = input.cwd {
                    p.cwd = check_cwd(&dir)?;
                }
                if let Some(g) = input.grants {
                    p.grants = grants_of(Some(g));
                }
                b.save(&p, false).await?;
                b.get(&p.name).await
            },
    )?;

    ctx.tool_with(
        ToolDef::new(
            "agents.ask",
            "Say something to an agent: to its current thread, starting one if it has none.",
        ).finishes().sessions_own_agent("agent"),
        &book,
        |b, input: AskInput, cx| async move {
                if input.internal && !matches!(cx.caller, crate::kernel::tools::Caller::Module { .. }) {
                    return Err(ToolError::refused(
                        "internal_for_modules",
                        "only Vyre's own modules mark words as internal",
                    ));
                }
                let agent = b.get(&input.agent).await?;
                if input.text.trim().is_empty() {
                    return Err(ToolError::invalid("text must not be empty"));
                }
                if let Some(thread) = agent.thread.as_deref().filter(|_| !input.new) {
                    let sent = b
                        .ctx
                        .call(
                            "threads.send",
                            json!({ "thread": thread, "text": input.text, "internal": input.internal }),
                        )
                        .await;
                    match sent {
                        Ok(sent) => {
                            return Ok(Asked {
                                agent: agent.name,
                                thread: thread.to_string(),
                                started: false,
                                uuid: sent["uuid"].as_str().map(String::from),
                                via: sent["via"].as_str().map(String::from),
                            });
                        }
                        // Its thread is gone (deleted, or its transcript is): start another.
                        Err(e) if matches!(&*e.code, "unknown_thread" | "no_history") => {
                            tracing::info!(agent = %agent.name, thread, "the agent's thread cannot go on ({}); starting a new one", e.code);
                        }
                        Err(e) => return Err(e),
                    }
                }
                let started = b
                    .ctx
                    .call(
                        "threads.start",
                        json!({ "cwd": agent.cwd, "agent": agent.name, "text": input.text, "internal": input.internal }),
                    )
                    .await?;
                let thread = started["thread"]
                    .as_str()
                    .ok_or_else(|| ToolError::internal("threads.start gave no thread"))?
                    .to_string();
                b.set_thread(&agent.name, &thread).await?;
                Ok(Asked {
                    agent: agent.name,
                    thread,
                    started: true,
                    uuid: None,
                    via: Some("turn".into()),
                })
            },
    )?;

    ctx.tool_with(
        ToolDef::new("agents.threads", "An agent's threads, newest first.")
            .sessions_own_agent("agent"),
        &book,
        |b, input: AgentInput, _| async move {
            b.get(&input.agent).await?;
            b.threads(&input.agent).await
        },
    )?;

    let b = book;
    ctx.tool_with(
        ToolDef::new(
            "agents.stop",
            "Stop every live session of an agent; the next ask resumes its current thread.",
        )
        .finishes()
        .sessions_own_agent("agent"),
        &b,
        |b, input: AgentInput, _| async move {
            b.get(&input.agent).await?;
            let mut stopped = Vec::new();
            for t in b.threads(&input.agent).await? {
                if t.info.live {
                    let thread = t.info.thread;
                    b.ctx
                        .call("threads.stop", json!({ "thread": &thread }))
                        .await?;
                    stopped.push(thread);
                }
            }
            Ok(Stopped {
                agent: input.agent,
                stopped,
            })
        },
    )?;
    Ok(())
}
