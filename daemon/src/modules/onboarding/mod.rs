//! The onboarding (spec section 1): one step a screen in the web app, each skippable and
//! finishable later from Settings. You (your name and your assistant's), Claude Code (the CLI
//! found, and a setup token or API key into the vault), your address and your devices
//! (placeholders until the network and pairing), your history (indexing, first projects).
//! Finishing makes the owner and the assistant, turns the browser into a device, ends every
//! other onboarding device and link (`end`), and has the assistant greet its person. Once there
//! is an owner, `onboarding.you` and `onboarding.finish` refuse (`409 onboarded`); Settings
//! renames the owner with `onboarding.rename`.
//!
//! This module keeps only the names and each step's state; everything else it shows or does
//! is another module's tool, called with the person's own rights.

mod current;

use current::{assistant, names_of, state};

use std::collections::BTreeMap;

use rusqlite::params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::kernel::contracts::auth::AuthStatus;

use crate::kernel::events::NewEvent;
use crate::kernel::module::{Ctx, Module, StartFuture, ToolDef};
use crate::kernel::owner::OwnerRecord;
use crate::kernel::store::Migration;
use crate::kernel::tools::{Caller, ToolError};

pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    sql: "CREATE TABLE onboarding_state (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );",
}];

/// The steps, in the order the app shows them.
pub const STEPS: [&str; 5] = ["you", "claude", "address", "history", "devices"];
const DEFAULT_OWNER: &str = "you";
const DEFAULT_ASSISTANT: &str = "Juno";

pub struct OnboardingModule;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct YouInput {
    /// What the assistant calls you.
    #[schemars(length(min = 1, max = 64), pattern(crate::kernel::tools::shape::LABEL))]
    name: String,
    /// Your assistant's name, e.g. Juno.
    #[schemars(length(min = 1, max = 64), pattern(crate::kernel::tools::shape::LABEL))]
    assistant_name: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameInput {
    /// What the assistant calls you.
    #[schemars(length(min = 1, max = 64), pattern(crate::kernel::tools::shape::LABEL))]
    name: String,
}

/// Each mode's credential has its shape, said in the schema (and in words by
/// `kernel::tools::shape::describe`, which the input layer's refusal quotes): a setup token is
/// `sk-ant-oat…`, an API key `sk-ant-api…`, each at least 33 characters of letters, digits, `-`
/// and `_` (white space around it is trimmed).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("oneOf" = [
    { "properties": { "mode": { "const": "setup-token" }, "value": { "pattern": crate::kernel::tools::shape::SETUP_TOKEN } } },
    { "properties": { "mode": { "const": "api-key" }, "value": { "pattern": crate::kernel::tools::shape::API_KEY } } },
]))]
pub struct ClaudeInput {
    /// `setup-token` (from `claude setup-token`, a subscription) or `api-key` (an Anthropic key).
    mode: ClaudeMode,
    /// The secret. It goes into the vault and nowhere else.
    #[schemars(pattern(crate::kernel::tools::shape::NOT_BLANK))]
    value: String,
}

#[derive(Deserialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
pub enum ClaudeMode {
    SetupToken,
    ApiKey,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkipInput {
    /// you, claude, address, history or devices.
    #[schemars(pattern(r"^(you|claude|address|history|devices)$"))]
    step: String,
}

#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct FinishInput {
    /// A name for this browser as a device, e.g. "laptop".
    #[serde(default)]
    #[schemars(length(min = 1, max = 64), pattern(crate::kernel::tools::shape::LABEL))]
    device_name: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Finished {
    owner: OwnerRecord,
    /// The assistant's name as an agent.
    assistant: String,
    /// This browser as a device, when a browser finished it.
    device: Option<crate::kernel::device_tokens::DeviceRecord>,
    /// The assistant's thread where it greets you (none when sessions cannot run yet).
    thread: Option<String>,
    /// Why the greeting did not start, when it did not.
    greeting_error: Option<String>,
}

/// An agent's name from a person's: lowercase letters, digits and dashes.
pub fn agent_name(display: &str) -> String {
    let mut out = String::new();
    for c in display.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out.trim_end_matches('-').chars().take(32).collect();
    if out.is_empty() {
        "assistant".into()
    } else {
        out
    }
}

/// One of [`STEPS`], or a clear refusal.
fn check_step(step: &str) -> Result<(), ToolError> {
    if STEPS.contains(&step) {
        Ok(())
    } else {
        Err(ToolError::invalid(format!(
            "no step {step:?}; the steps are {}",
            STEPS.join(", ")
        )))
    }
}

fn check_display_name(what: &str, name: &str) -> Result<String, ToolError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 64 || name.chars().any(char::is_control) {
        return Err(ToolError::invalid(format!(
            "{what} must be 1 to 64 characters with no control characters"
        )));
    }
    Ok(name.to_string())
}

async fn saved(ctx: &Ctx) -> Result<BTreeMap<String, String>, ToolError> {
    Ok(ctx
        .store()
        .read(|c| {
            let mut stmt = c.prepare("SELECT key, value FROM onboarding_state")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<Result<BTreeMap<String, String>, _>>()?)
        })
        .await?)
}

async fn save(
    ctx: &Ctx,
    pairs: Vec<(String, String)>,
    step: Option<(&str, &str)>,
) -> Result<(), ToolError> {
    let step = step.map(|(s, st)| (s.to_string(), st.to_string()));
    ctx.store()
        .write(move |tx| {
            for (k, v) in &pairs {
                tx.conn().execute(
                    "INSERT INTO onboarding_state (key, value) VALUES (?1, ?2)
                     ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    params![k, v],
                )?;
            }
            if let Some((step, state)) = &step {
                tx.conn().execute(
                    "INSERT INTO onboarding_state (key, value) VALUES (?1, ?2)
                     ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    params![format!("step:{step}"), state],
                )?;
                tx.emit(NewEvent::new(
                    "onboarding.step",
                    json!({ "step": step, "state": state }),
                ))?;
            }
            Ok(())
        })
        .await?;
    Ok(())
}

async fn finish(ctx: &Ctx, caller: &Caller, input: FinishInput) -> Result<Finished, ToolError> {
    if ctx.owner().exists() {
        return Err(onboarded());
    }
    if let Some(name) = &input.device_name {
        crate::kernel::device_tokens::check_name(name)?;
    }
    let saved = saved(ctx).await?;
    let names = names_of(&saved, None);
    // The assistant first: should it fail, nothing has ended and finishing can be tried again.
    let agent = match assistant(ctx).await {
        Some(a) => a.name,
        None => {
            let name = agent_name(&names.assistant);
            let instructions = format!(
                "You are {}, the personal assistant of {}. You run on their own machine through Vyre. Be brief and warm.",
                names.assistant, names.owner
            );
            ctx.call_as(
                caller,
                "agents.create",
                // The assistant's spec powers (section 10), granted explicitly: it sees every
                // session and drives any thread. Another agent is fenced to its own threads.
                json!({ "name": name, "kind": "assistant", "instructions": instructions, "grants": ["threads", "recall"] }),
            )
            .await?;
            name
        }
    };
    let keep = match caller {
        Caller::Device { id, kind, .. } if kind == crate::kernel::device_tokens::ONBOARDING => {
            Some((id.clone(), input.device_name.clone()))
        }
        _ => None,
    };
    let crate::kernel::owner::Ended { owner, device } =
        ctx.end_onboarding(&names.owner, keep).await?;
    let greeting = format!(
        "{} has just finished setting you up. Greet them by name in a sentence or two and say what you can help with.",
        owner.name
    );
    let (thread, greeting_error) = match ctx
        .call(
            "agents.ask",
            // Vyre's instruction to its assistant, not the person's words: never shown as theirs.
            json!({ "agent": agent, "text": greeting, "internal": true }),
        )
        .await
    {
        Ok(v) => (v["thread"].as_str().map(str::to_string), None),
        Err(e) => {
            tracing::warn!(error = %e, "the assistant's greeting did not start");
            let why = match &*e.code {
                "unknown_item" | "vault_locked" | "vault_key_missing" => format!(
                    "{} can greet you once sessions can sign in to Claude: add a setup token or an API key in Settings",
                    names.assistant
                ),
                _ => e.message,
            };
            (None, Some(why))
        }
    };
    let event = json!({ "owner": owner.name, "assistant": agent, "thread": thread });
    ctx.events()
        .emit(NewEvent::new("onboarding.finished", event))
        .await?;
    Ok(Finished {
        owner,
        assistant: agent,
        device,
        thread,
        greeting_error,
    })
}

impl Module for OnboardingModule {
    fn name(&self) -> &str {
        "onboarding"
    }
    fn manifest(&self) -> &str {
        include_str!("module.json")
    }
    fn start(&self, ctx: Ctx) -> StartFuture {
        Box::pin(async move {
            ctx.store().migrate(MIGRATIONS).await?;
            ctx.tool_with(
                ToolDef::new(
                    "onboarding.state",
                    "Where the onboarding is: each step's state, the names, Claude Code and its credential, the history's indexing.",
                )
                .onboarding(),
                &ctx,
                |c, _: crate::kernel::tools::NoInput, _| async move { state(&c).await },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "onboarding.you",
                    "Your name and your assistant's, before the onboarding is finished.",
                )
                .onboarding()
                .finishes()
                .person_only(),
                &ctx,
                |c, input: YouInput, _| async move {
                    if c.owner().exists() {
                        return Err(onboarded());
                    }
                    let name = check_display_name("your name", &input.name)?;
                    let assistant =
                        check_display_name("the assistant's name", &input.assistant_name)?;
                    save(
                        &c,
                        vec![
                            ("owner_name".into(), name),
                            ("assistant_name".into(), assistant),
                        ],
                        Some(("you", "done")),
                    )
                    .await?;
                    state(&c).await
                },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "onboarding.rename",
                    "Your name, once the onboarding is finished (Settings).",
                )
                .finishes()
                .person_only(),
                &ctx,
                |c, input: RenameInput, _| async move {
                    let name = check_display_name("your name", &input.name)?;
                    if c.owner().rename(&name).await?.is_none() {
                        return Err(ToolError::conflict(
                            "not_onboarded",
                            "there is no owner to rename yet: finish the onboarding",
                        ));
                    }
                    save(&c, vec![("owner_name".into(), name)], None).await?;
                    state(&c).await
                },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "onboarding.claude",
                    "Store the credential Claude Code sessions use (a setup token or an API key) in the vault, granted to sessions.",
                )
                .onboarding()
                .finishes()
                .person_only(),
                &ctx,
                |c, input: ClaudeInput, cx| async move {
                        let value = input.value.trim();
                        let item = match input.mode {
                            ClaudeMode::SetupToken => crate::kernel::contracts::auth::SETUP_TOKEN_ITEM,
                            ClaudeMode::ApiKey => crate::kernel::contracts::auth::API_KEY_ITEM,
                        };
                        c.call_as(
                            &cx.caller,
                            "vault.put",
                            json!({ "name": item, "kind": "secret", "value": value, "replace": true }),
                        )
                        .await?;
                        c.call_as(
                            &cx.caller,
                            "vault.grant",
                            json!({ "item": item, "to": crate::kernel::contracts::auth::SESSIONS_GRANTEE }),
                        )
                        .await?;
                        save(&c, vec![], Some(("claude", "done"))).await?;
                        state(&c).await
                    },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "onboarding.skip",
                    "Skip a step for now; Settings can finish it later.",
                )
                .onboarding()
                .finishes()
                .person_only(),
                &ctx,
                |c, input: SkipInput, _| async move {
                    check_step(&input.step)?;
                    let current = saved(&c).await?;
                    // A step done stays done.
                    if current
                        .get(&format!("step:{}", input.step))
                        .map(String::as_str)
                        != Some("done")
                    {
                        save(&c, vec![], Some((&input.step, "skipped"))).await?;
                    }
                    state(&c).await
                },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "onboarding.done",
                    "Mark a step done, for steps whose work is other tools' (your history: a first project; your address and devices).",
                )
                .onboarding()
                .finishes()
                .person_only(),
                &ctx,
                |c, input: SkipInput, _| async move {
                        check_step(&input.step)?;
                        save(&c, vec![], Some((&input.step, "done"))).await?;
                        state(&c).await
                    },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "onboarding.finish",
                    "Finish the onboarding: make the owner and the assistant, make this browser a device, and have the assistant greet you.",
                )
                .onboarding()
                .finishes()
                .person_only(),
                &ctx,
                |c, input: FinishInput, cx| async move { finish(&c, &cx.caller, input).await },
            )?;
            Ok(())
        })
    }
}

/// The refusal of anything that would start the onboarding again once there is an owner.
pub fn onboarded() -> ToolError {
    ToolError::conflict(
        "onboarded",
        "the onboarding is finished: Vyre has its owner (change your name in Settings)",
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_agent_name_from_a_persons() {
        assert_eq!(super::agent_name("Juno"), "juno");
        assert_eq!(super::agent_name("  Mister Bean! "), "mister-bean");
        assert_eq!(super::agent_name("!!!"), "assistant");
        assert_eq!(super::agent_name("Zoë"), "zo");
    }
}
