//! Models per purpose (ADR 0030 section 9): Opus for real work, a faster model for quick answers
//! and background jobs. The model of a new session is, in order: an explicit one, the purpose's
//! override set by a person (`sessions.models.set`), `sessions.models` in config, the default.

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

pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    sql: "CREATE TABLE sessions_models (
        purpose TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        set_at INTEGER NOT NULL,
        set_by TEXT NOT NULL
    );",
}];

/// The default model of a purpose.
pub fn default_model(purpose: &str) -> &'static str {
    match purpose {
        "chat" | "agent" | "project" => "opus",
        _ => "haiku",
    }
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Choice {
    pub model: String,
    /// `set` (by a person), `config` (sessions.models) or `default`.
    pub source: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetInput {
    /// chat, agent, project, capsule, job, memory, planner or learn.
    #[schemars(pattern(r"^(chat|agent|project|capsule|job|memory|planner|learn)$"))]
    purpose: String,
    /// The model; leave it out to go back to config or the default.
    #[serde(default)]
    model: Option<String>,
}

async fn choices(ctx: &Ctx) -> Result<BTreeMap<String, Choice>, ToolError> {
    let set: Vec<(String, String)> = ctx
        .store()
        .read(|c| {
            let mut stmt = c.prepare("SELECT purpose, model FROM sessions_models")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await?;
    let config = &ctx.config().sessions.models;
    Ok(PURPOSES
        .iter()
        .map(|p| {
            let choice = if let Some((_, m)) = set.iter().find(|(q, _)| q == p) {
                Choice {
                    model: m.clone(),
                    source: "set".into(),
                }
            } else if let Some(m) = config.get(*p) {
                Choice {
                    model: m.to_string(),
                    source: "config".into(),
                }
            } else {
                Choice {
                    model: default_model(p).to_string(),
                    source: "default".into(),
                }
            };
            (p.to_string(), choice)
        })
        .collect())
}

pub fn register(ctx: &Ctx) -> Result<(), StartError> {
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
        ToolDef::new("sessions.models.set", "Choose the model for a purpose, or clear the choice.")
        .finishes().person_only(),
        ctx,
        |c, input: SetInput, cx| async move {
                if !PURPOSES.contains(&input.purpose.as_str()) {
                    return Err(ToolError::invalid(format!("purpose must be one of {}", PURPOSES.join(", "))));
                }
                let (purpose, model, by) = (input.purpose, input.model, cx.caller.label());
                c.store()
                    .write(move |tx| {
                        match model.filter(|m| !m.trim().is_empty()) {
                            Some(m) => tx.conn().execute(
                                "INSERT INTO sessions_models (purpose, model, set_at, set_by) VALUES (?1, ?2, ?3, ?4)
                                 ON CONFLICT(purpose) DO UPDATE SET model = excluded.model, set_at = excluded.set_at, set_by = excluded.set_by",
                                params![purpose, m, crate::now_ms(), by],
                            )?,
                            None => tx.conn().execute("DELETE FROM sessions_models WHERE purpose = ?1", [purpose])?,
                        };
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
