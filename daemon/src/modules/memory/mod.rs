//! `memory`: the graph of what the person's conversations name, and its curator (spec 7.4;
//! ADR 0021). The curator ([`curator`]) is the only writer: it reads the turns recall has read
//! and keeps, without a model, the addresses, domains, URLs, emails, repositories and files
//! they name and the terms the person defines, each with the turn it came from. Recall owns
//! retrieval; memory owns facts.
//!
//! - `memory.facts {project?, about?, kind?, limit?, muted?}`: the statements, pinned first,
//!   then the most recently said; a term's older meanings say when they ended and by what.
//! - `memory.why {fact}`: the turns a statement was said in, with where the app opens them.
//! - `memory.pin {fact, on?}`, `memory.mute {fact, on?}`: the person's marks.
//!
//! A project sees only what its own threads said, and a session only what its threads and its
//! projects' said (the same fence as recall's): nothing of one project reaches another's.

mod curator;
mod extract;
mod facts;

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::kernel::events::Filter;
use crate::kernel::module::{Ctx, Module, StartFuture, ToolDef};
use crate::kernel::tools::{CallCx, Reach, ToolError};

use curator::Curator;
use facts::{Fact, Query, Source};

pub struct MemoryModule;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FactsInput {
    /// Only what this project's threads said.
    #[serde(default)]
    project: Option<String>,
    /// Only statements whose subject or object holds these words (any case).
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    about: Option<String>,
    /// Only this kind.
    #[serde(default)]
    kind: Option<Kind>,
    /// At most this many (1 to 500, default 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    limit: Option<u32>,
    /// Muted statements too.
    #[serde(default)]
    muted: bool,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Url,
    Domain,
    Email,
    Repo,
    Address,
    Path,
    Term,
    Person,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Url => "url",
            Kind::Domain => "domain",
            Kind::Email => "email",
            Kind::Repo => "repo",
            Kind::Address => "address",
            Kind::Path => "path",
            Kind::Term => "term",
            Kind::Person => "person",
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WhyInput {
    /// A fact's id, from `memory.facts`.
    #[schemars(range(min = 1))]
    fact: i64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MarkInput {
    /// A fact's id, from `memory.facts`.
    #[schemars(range(min = 1))]
    fact: i64,
    /// `false` takes the mark away (default `true`).
    #[serde(default)]
    on: Option<bool>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Why {
    kind: String,
    subject: String,
    relation: String,
    object: String,
    /// Each turn it was said in, first first.
    sources: Vec<Source>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Marked {
    fact: i64,
}

#[derive(Clone)]
struct Memory {
    ctx: Ctx,
}

impl Memory {
    /// The threads a caller may read facts of (`None`: every one), narrowed to `project`'s.
    async fn threads(
        &self,
        project: Option<&str>,
        cx: &CallCx,
    ) -> Result<Option<Vec<String>>, ToolError> {
        let scope = cx.scope(Reach::Threads).await?;
        let mut threads = None;
        if let Some(project) = project {
            if !scope.sees_project(project) {
                return Err(crate::kernel::tools::fence::not_your_project(project));
            }
            let of: Vec<String> = serde_json::from_value(
                self.ctx
                    .call("projects.threads", json!({ "project": project }))
                    .await?,
            )
            .unwrap_or_default();
            threads = Some(of);
        }
        if let Some(visible) = scope.visible() {
            threads = Some(match threads {
                Some(t) => t.into_iter().filter(|x| visible.contains(x)).collect(),
                None => visible.iter().cloned().collect(),
            });
        }
        Ok(threads)
    }

    async fn facts(&self, input: FactsInput, cx: CallCx) -> Result<Vec<Fact>, ToolError> {
        let threads = self.threads(input.project.as_deref(), &cx).await?;
        let q = Query {
            threads,
            about: input.about,
            kind: input.kind.map(|k| k.as_str().to_string()),
            limit: input.limit.unwrap_or(50) as usize,
            muted: input.muted,
        };
        Ok(self.ctx.store().read(move |c| facts::facts(c, &q)).await?)
    }

    async fn why(&self, input: WhyInput, cx: CallCx) -> Result<Why, ToolError> {
        let threads = self.threads(None, &cx).await?;
        let found = self
            .ctx
            .store()
            .read(move |c| facts::sources(c, input.fact, threads.as_deref()))
            .await?;
        let Some((statement, sources)) = found else {
            return Err(unknown(input.fact));
        };
        Ok(Why {
            kind: statement.kind.to_string(),
            subject: statement.subject,
            relation: statement.relation.to_string(),
            object: statement.object,
            sources,
        })
    }

    async fn mark(&self, input: MarkInput, pin: bool) -> Result<Marked, ToolError> {
        let on = Some(input.on.unwrap_or(true));
        let (pinned, muted) = if pin { (on, None) } else { (None, on) };
        let id = input.fact;
        let now = crate::now_ms();
        let found = self
            .ctx
            .store()
            .write(move |tx| facts::mark(tx.conn(), id, pinned, muted, now))
            .await?;
        if found {
            Ok(Marked { fact: id })
        } else {
            Err(unknown(id))
        }
    }
}

fn unknown(fact: i64) -> ToolError {
    ToolError::not_found(
        "unknown_fact",
        format!("there is no fact {fact} here (memory.facts lists them)"),
    )
}

impl Module for MemoryModule {
    fn name(&self) -> &str {
        "memory"
    }

    fn manifest(&self) -> &str {
        include_str!("module.json")
    }

    fn start(&self, ctx: Ctx) -> StartFuture {
        Box::pin(async move {
            ctx.store().migrate(facts::MIGRATIONS).await?;
            let memory = Memory { ctx: ctx.clone() };
            ctx.tool_with(
                ToolDef::new(
                    "memory.facts",
                    "What your conversations name (addresses, domains, URLs, emails, repositories, files) and the terms you defined, each with when it was said; a term's older meanings say when they ended.",
                )
                .sessions_fenced(),
                &memory,
                |m, input: FactsInput, cx| async move { m.facts(input, cx).await },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "memory.why",
                    "Where a fact came from: each turn it was said in, with where the app opens it.",
                )
                .sessions_fenced(),
                &memory,
                |m, input: WhyInput, cx| async move { m.why(input, cx).await },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "memory.pin",
                    "Pin a fact (on: false unpins it): it comes first wherever memory is shown.",
                )
                .person_only(),
                &memory,
                |m, input: MarkInput, _| async move { m.mark(input, true).await },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "memory.mute",
                    "Mute a fact (on: false unmutes it): it is no longer shown or given to sessions.",
                )
                .person_only(),
                &memory,
                |m, input: MarkInput, _| async move { m.mark(input, false).await },
            )?;
            let wake = Arc::new(tokio::sync::Notify::new());
            let woken = wake.clone();
            ctx.events().on(
                Filter {
                    types: vec!["history.indexed".into(), "recall.read".into()],
                    ..Filter::default()
                },
                move |_| {
                    woken.notify_one();
                    std::future::ready(())
                },
            );
            ctx.spawn(
                Curator {
                    ctx: ctx.clone(),
                    wake,
                }
                .run(),
            );
            Ok(())
        })
    }
}
