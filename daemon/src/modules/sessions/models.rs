//! Models per purpose (ADR 0030 section 9): Opus for real work, a faster model for quick answers
//! and background jobs. The model of a new session is, in order: an explicit one, the purpose's
//! override set by a person (`sessions.models.set`), `sessions.models` in config, the default.
//! A person's choice may name a provider too (issue 28): a start that names none then runs on
//! it, with the purpose's model, or the provider's own default when the choice names none.

use std::collections::BTreeMap;

use rusqlite::params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::kernel::module::{Ctx, StartError, ToolDef};
use crate::kernel::store::Migration;
use crate::kernel::tools::ToolError;

pub const PURPOSES: &[&str] = &[
    "chat", "agent", "project", "capsule", "job", "memory", "planner", "learn",
];

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        sql: "CREATE TABLE sessions_models (
        purpose TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        set_at INTEGER NOT NULL,
        set_by TEXT NOT NULL
    );",
    },
    Migration {
        version: 2,
        // The provider a person chose for the purpose (null: Claude Code); with it, an empty
        // model is that provider's own default.
        sql: "ALTER TABLE sessions_models ADD COLUMN provider TEXT;",
    },
];

/// The provider of a purpose no one chose one for.
pub const DEFAULT_PROVIDER: &str = "claude";

/// The default model of a purpose.
pub fn default_model(purpose: &str) -> &'static str {
    match purpose {
        "chat" | "agent" | "project" => "opus",
        _ => "haiku",
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Choice {
    /// The model; null: the provider's own default (a choice of another provider that named no
    /// model).
    pub model: Option<String>,
    /// The provider sessions of this purpose run on when a start names none (`claude` unless a
    /// person chose another).
    pub provider: String,
    /// `set` (by a person), `config` (sessions.models) or `default`.
    pub source: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetInput {
    /// chat, agent, project, capsule, job, memory, planner or learn.
    #[schemars(pattern(r"^(chat|agent|project|capsule|job|memory|planner|learn)$"))]
    purpose: String,
    /// The model; leave it and `provider` out to go back to config or the default.
    #[serde(default)]
    model: Option<String>,
    /// The provider (`sessions.providers`); left out, Claude Code. Another provider's model
    /// may be left out too: its own default.
    #[serde(default)]
    provider: Option<String>,
}

async fn choices(ctx: &Ctx) -> Result<BTreeMap<String, Choice>, ToolError> {
    let set: Vec<(String, String, Option<String>)> = ctx
        .store()
        .read(|c| {
            let mut stmt = c.prepare("SELECT purpose, model, provider FROM sessions_models")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await?;
    let config = &ctx.config().sessions.models;
    Ok(PURPOSES
        .iter()
        .map(|p| {
            let choice = if let Some((_, m, provider)) = set.iter().find(|(q, _, _)| q == p) {
                Choice {
                    model: Some(m.clone()).filter(|m| !m.is_empty()),
                    provider: provider.clone().unwrap_or_else(|| DEFAULT_PROVIDER.into()),
                    source: "set".into(),
                }
            } else if let Some(m) = config.get(*p) {
                Choice {
                    model: Some(m.to_string()),
                    provider: DEFAULT_PROVIDER.into(),
                    source: "config".into(),
                }
            } else {
                Choice {
                    model: Some(default_model(p).to_string()),
                    provider: DEFAULT_PROVIDER.into(),
                    source: "default".into(),
                }
            };
            (p.to_string(), choice)
        })
        .collect())
}

/// The provider a start runs on (its own, else the purpose's) and the purpose's model for it
/// (ADR 0030 section 9): the purpose's choice when that provider is the purpose's; else, for
/// Claude Code, the purpose's default model, and for another provider (none of whose models a
/// purpose's Claude model is) none: its own default.
pub fn of_purpose(
    choice: Option<&Choice>,
    purpose: &str,
    provider: Option<String>,
) -> (String, Option<String>) {
    let provider = provider
        .or_else(|| choice.map(|c| c.provider.clone()))
        .unwrap_or_else(|| DEFAULT_PROVIDER.into());
    let model = match choice.filter(|c| c.provider == provider) {
        Some(c) => c.model.clone(),
        None if provider == DEFAULT_PROVIDER => Some(default_model(purpose).to_string()),
        None => None,
    };
    (provider, model)
}

pub fn register(
    ctx: &Ctx,
    router: std::sync::Arc<crate::modules::sessions::router::Router>,
) -> Result<(), StartError> {
    ctx.tool_with(
        ToolDef::new(
            "sessions.models.get",
            "The model each purpose uses and where that comes from (set, config or default).",
        )
        .sessions_open(),
        ctx,
        |c, _: crate::kernel::tools::NoInput, _| async move { choices(&c).await },
    )?;
    ctx.tool_with(
        ToolDef::new("sessions.models.set", "Choose the model for a purpose, and the provider its sessions run on when a start names none; or clear the choice.")
        .finishes().person_only(),
        &(ctx.clone(), router),
        |(c, router), input: SetInput, cx| async move {
                let providers = router.names();
                if !PURPOSES.contains(&input.purpose.as_str()) {
                    return Err(ToolError::invalid(format!("purpose must be one of {}", PURPOSES.join(", "))));
                }
                let model = input.model.map(|m| m.trim().to_string()).filter(|m| !m.is_empty());
                let provider = match input.provider.filter(|p| p != DEFAULT_PROVIDER) {
                    Some(p) if !providers.contains(&p) => {
                        return Err(ToolError::invalid(format!(
                            "there is no provider {p:?}; there are: {}",
                            providers.join(", ")
                        )));
                    }
                    other => other,
                };
                let (purpose, by) = (input.purpose, cx.caller.label());
                c.store()
                    .write(move |tx| {
                        if model.is_none() && provider.is_none() {
                            tx.conn().execute("DELETE FROM sessions_models WHERE purpose = ?1", [purpose])?;
                            return Ok(());
                        }
                        tx.conn().execute(
                            "INSERT INTO sessions_models (purpose, model, provider, set_at, set_by) VALUES (?1, ?2, ?3, ?4, ?5)
                             ON CONFLICT(purpose) DO UPDATE SET model = excluded.model, provider = excluded.provider, set_at = excluded.set_at, set_by = excluded.set_by",
                            params![purpose, model.unwrap_or_default(), provider, crate::now_ms(), by],
                        )?;
                        Ok(())
                    })
                    .await?;
                choices(&c).await
            },
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_runs_on_the_purposes_provider_with_its_model_unless_it_names_another() {
        let codex = Choice {
            model: None,
            provider: "codex".into(),
            source: "set".into(),
        };
        assert_eq!(
            of_purpose(Some(&codex), "capsule", None),
            ("codex".into(), None)
        );
        let with_model = Choice {
            model: Some("gpt-x".into()),
            ..codex.clone()
        };
        assert_eq!(
            of_purpose(Some(&with_model), "chat", None),
            ("codex".into(), Some("gpt-x".into()))
        );
        // A start naming Claude Code gets the purpose's Claude default, not Codex's model.
        assert_eq!(
            of_purpose(Some(&with_model), "chat", Some("claude".into())),
            ("claude".into(), Some("opus".into()))
        );
        // Another provider than the purpose's gets no Claude model.
        let claude = Choice {
            model: Some("haiku".into()),
            provider: DEFAULT_PROVIDER.into(),
            source: "config".into(),
        };
        assert_eq!(
            of_purpose(Some(&claude), "job", Some("acp-gemini".into())),
            ("acp-gemini".into(), None)
        );
        assert_eq!(
            of_purpose(None, "job", None),
            ("claude".into(), Some("haiku".into()))
        );
    }

    /// The published schema offers exactly the purposes the tool accepts (as a pattern: the
    /// input layer enforces types, and the tool the words).
    #[test]
    fn the_schema_names_every_purpose() {
        let schema = serde_json::to_value(schemars::schema_for!(SetInput)).unwrap();
        let pattern = schema["properties"]["purpose"]["pattern"].as_str().unwrap();
        assert_eq!(pattern, format!("^({})$", PURPOSES.join("|")));
        // threads.start takes the same purposes, as an enum (or none).
        let start = crate::kernel::tools::input::schema_of::<
            crate::modules::sessions::register::StartInput,
        >();
        let mut listed: Vec<serde_json::Value> = PURPOSES.iter().map(|p| (*p).into()).collect();
        listed.push(serde_json::Value::Null);
        assert_eq!(
            start["properties"]["purpose"]["enum"],
            serde_json::Value::Array(listed)
        );
    }
}
