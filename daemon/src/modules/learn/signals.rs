//! Signals (spec 7.11): what the person does that teaches Vyre, each kept with the turn it came
//! from. Vyre's own threads are read from their events: a person's prompt (`thread.turn`,
//! `thread.sent` marked `by_person`) that corrects, a tool call denied with a reason (`ask.answered`), a Gate item edited before
//! approval or refused with a reason (`gate.approved`, `gate.rejected`), a turn's changes the
//! person put back (`thread.reverted`). A terminal's prompts
//! come through the harness's UserPromptSubmit hook (`learn.check {stage: prompt, learn}`).

use serde_json::{Value, json};

use super::lessons::{self, Level, New, Scope};
use super::rules::{self, Check};
use crate::kernel::events::{Filter, NewEvent};
use crate::kernel::module::Ctx;
use crate::kernel::tools::ToolError;

/// Keep a lesson (or find the active one that says the same) and say so when it is new.
#[allow(clippy::too_many_arguments)]
pub async fn teach(
    ctx: &Ctx,
    rule: &str,
    check: Option<&Check>,
    level: Level,
    scope: Scope,
    target: Option<&str>,
    source: &Value,
    thread: Option<&str>,
    pending: bool,
) -> Result<i64, ToolError> {
    let (rule, check, source, target, thread) = (
        rule.to_string(),
        check.cloned(),
        source.clone(),
        target.map(String::from),
        thread.map(String::from),
    );
    Ok(ctx
        .store()
        .write(move |tx| {
            let (id, new) = lessons::add(
                tx.conn(),
                &New {
                    scope,
                    target: target.as_deref(),
                    rule: &rule,
                    check: check.as_ref(),
                    level,
                    source: &source,
                    pending,
                },
            )?;
            if new {
                let mut e = NewEvent::new(
                    "lesson.learned",
                    json!({ "lesson": id, "rule": rule, "checked": check.is_some(), "level": level, "source": source["kind"], "pending": pending }),
                );
                if let Some(t) = &thread {
                    e = e.thread(t);
                }
                tx.emit(e)?;
            }
            Ok(id)
        })
        .await?)
}

/// A prompt: a correction becomes a lesson (a signal either way is kept); `pending` when no
/// person is known to have typed it.
pub async fn from_prompt(
    ctx: &Ctx,
    thread: Option<&str>,
    turn: Option<&str>,
    text: &str,
    pending: bool,
) {
    let Some(parsed) = rules::correction(text) else {
        return;
    };
    let kind = if text.trim_start().starts_with("/vyre") {
        "remember"
    } else {
        "correction"
    };
    let source = json!({ "kind": kind, "thread": thread, "turn": turn, "text": clip(text) });
    match teach(
        ctx,
        &parsed.rule,
        parsed.check.as_ref(),
        Level::Remind,
        Scope::All,
        None,
        &source,
        thread,
        pending,
    )
    .await
    {
        Ok(id) => record(ctx, kind, thread, turn, text, Some(id)).await,
        Err(e) => tracing::warn!(error = %e, "a lesson was not kept"),
    }
}

async fn record(
    ctx: &Ctx,
    kind: &str,
    thread: Option<&str>,
    turn: Option<&str>,
    text: &str,
    lesson: Option<i64>,
) {
    let (k, th, tu, tx_) = (
        kind.to_string(),
        thread.map(String::from),
        turn.map(String::from),
        clip(text),
    );
    let kept = ctx
        .store()
        .write(move |tx| lessons::signal(tx.conn(), &k, th.as_deref(), tu.as_deref(), &tx_, lesson))
        .await;
    if let Err(e) = kept {
        tracing::warn!(error = %e, "a signal was not kept");
    }
}

fn clip(text: &str) -> String {
    crate::kernel::redact::mask(&text.chars().take(2000).collect::<String>()).into_owned()
}

/// Follow Vyre's own threads for signals, until vyred stops.
pub fn follow(ctx: &Ctx) {
    let filter = Filter {
        types: vec![
            "thread.turn".into(),
            "thread.sent".into(),
            "ask.answered".into(),
            "gate.approved".into(),
            "gate.rejected".into(),
            "thread.reverted".into(),
        ],
        ..Filter::default()
    };
    let c = ctx.clone();
    ctx.events().on(filter, move |event| {
        let c = c.clone();
        async move {
            let p = event.payload_value();
            let thread = event.thread.as_deref();
            let turn = p["turn"].as_str();
            match event.kind.as_str() {
                "thread.turn" | "thread.sent" => {
                    // Only a person's words teach: a session or an agent that sends words to a
                    // thread (or Vyre's own greeting) must not make rules for every session.
                    if p["by_person"] != true {
                        return;
                    }
                    if let Some(text) = p["text"].as_str() {
                        from_prompt(&c, thread, turn, text, false).await;
                    }
                }
                "ask.answered" if p["decision"] == "deny" => {
                    let why = p["message"].as_str().unwrap_or("");
                    record(&c, "denied", thread, turn, why, None).await;
                    if !why.is_empty() {
                        from_prompt(&c, thread, turn, why, false).await;
                    }
                }
                "gate.approved" if p["edited"] == true => {
                    record(
                        &c,
                        "edited",
                        thread,
                        turn,
                        "a Gate item edited before approval",
                        None,
                    )
                    .await;
                }
                "gate.rejected" => {
                    let why = p["why"].as_str().unwrap_or("");
                    record(&c, "refused", thread, turn, why, None).await;
                    if !why.is_empty() {
                        from_prompt(&c, thread, turn, why, false).await;
                    }
                }
                "thread.reverted" => {
                    let paths: Vec<&str> = p["paths"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .collect();
                    let text = format!("the person put back {}", paths.join(", "));
                    record(&c, "reverted", thread, turn, &text, None).await;
                }
                _ => {}
            }
        }
    });
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignalsInput {
    /// At most this many, the newest (100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    limit: Option<u32>,
}

/// `learn.signals`: what Vyre noticed the person do that may teach it, newest first.
pub fn register(ctx: &Ctx) -> Result<(), crate::kernel::module::StartError> {
    ctx.tool_with(
        crate::kernel::module::ToolDef::new(
            "learn.signals",
            "What Vyre noticed the person do that may teach it, newest first: corrections, denied calls, Gate items edited or refused, changes put back; each with its thread and turn, and the lesson it taught if any.",
        ),
        ctx,
        |c, input: SignalsInput, _| async move {
            let limit = input.limit.unwrap_or(100).clamp(1, 1000) as usize;
            Ok::<_, ToolError>(
                c.store()
                    .read(move |conn| lessons::signals(conn, limit))
                    .await?,
            )
        },
    )
}
