//! The harness's side in vyred (spec section 8): what Claude Code's hooks ask, answered. The
//! plugin in `harness/` runs `vyre hook <Event>` for each hook; that command hands the hook's
//! input to `harness.hook` and prints what comes back, which is the hook's output.
//!
//! - SessionStart: the brief, when the session runs in a project's folders: the project, its
//!   recent sessions and what its memory holds (the person's pinned facts and terms), its own
//!   only, marked as memory.
//! - UserPromptSubmit: what recall finds in earlier sessions for the prompt's words, marked as
//!   memory, never as instructions.
//! - PreToolUse: the floor, denying with the reason.
//! - Stop: the words a person sent while the terminal had the session, handed over by blocking
//!   the stop with them.
//!
//! A hook acts for its caller, never for what its input claims (issue 17): an owned session's
//! hook is that session's thread, its folder the thread's and its process the one vyred finds
//! from the socket's peer; a session vyred did not start binds only a session no one else has,
//! takes only what is held for the session bound to its own Claude Code process, and reads
//! only what its fence lets it (the project of its Claude Code process's folder).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::kernel::module::{Ctx, Module, StartFuture, ToolDef};
use crate::kernel::tools::{CallCx, Caller, Reach, Scope, ToolError};

mod claims;
mod lessons;
mod owed;
mod pretool;
mod remembered;

use claims::{bound_to, may_bind};
pub use pretool::floor;
use pretool::gate;

pub struct HarnessModule;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookInput {
    /// The hook event: SessionStart, UserPromptSubmit, PreToolUse or Stop.
    #[schemars(pattern(r"^(SessionStart|UserPromptSubmit|PreToolUse|Stop)$"))]
    event: String,
    /// What Claude Code gave the hook on its stdin.
    input: Value,
    /// The Claude Code process the hook runs under, when `vyre hook` found it.
    #[serde(default)]
    pid: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BindingInput {
    session: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Binding {
    session: String,
    /// The Claude Code process that has the session, as its SessionStart hook said.
    pid: Option<u32>,
    /// That process still runs (so a terminal has the session now).
    alive: bool,
    cwd: Option<String>,
    project: Option<String>,
    bound_at: Option<i64>,
}

pub const MIGRATIONS: &[crate::kernel::store::Migration] = &[
    crate::kernel::store::Migration {
        version: 1,
        sql: "CREATE TABLE harness_bindings (
        session TEXT PRIMARY KEY,
        pid INTEGER,
        transcript TEXT,
        cwd TEXT,
        project TEXT,
        bound_at INTEGER NOT NULL
    );",
    },
    // Once a warm spare's owed brief (ADR 0032); unread since an owned session's brief comes
    // with its process's first prompt (ADR 0033), and kept: migrations are never undone.
    crate::kernel::store::Migration {
        version: 2,
        sql: "ALTER TABLE harness_bindings ADD COLUMN brief_owed INTEGER NOT NULL DEFAULT 0;",
    },
];

/// A binding as stored: pid, cwd, project, when.
type BindingRow = (Option<u32>, Option<String>, Option<String>, i64);

/// Bind the session to its process, transcript and project (its SessionStart, or for a session
/// Vyre runs, the first prompt of each of its processes).
async fn bind(ctx: &Ctx, input: &Value, pid: Option<u32>, at: Option<&At>) {
    let Some(session) = input["session_id"].as_str().map(String::from) else {
        return;
    };
    let project = at.map(|(p, _)| p.clone());
    let (transcript, cwd) = (
        input["transcript_path"].as_str().map(String::from),
        input["cwd"].as_str().map(String::from),
    );
    let stored = ctx
        .store()
        .write(move |tx| {
            tx.conn().execute(
                "INSERT INTO harness_bindings (session, pid, transcript, cwd, project, bound_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(session) DO UPDATE SET pid = excluded.pid, transcript = excluded.transcript, cwd = excluded.cwd, project = excluded.project, bound_at = excluded.bound_at",
                rusqlite::params![session, pid, transcript, cwd, project, crate::now_ms()],
            )?;
            tx.emit(crate::kernel::events::NewEvent::new(
                "harness.bound",
                json!({ "session": session, "pid": pid, "project": project }),
            ))?;
            Ok(())
        })
        .await;
    if let Err(e) = stored {
        tracing::warn!(error = %e, "the session was not bound");
    }
}

#[derive(Serialize, JsonSchema)]
pub struct HookOutput {
    /// What the hook prints for Claude Code; nothing when it has nothing to say.
    output: Option<Value>,
}

fn context(event: &str, text: String) -> Value {
    json!({ "hookSpecificOutput": { "hookEventName": event, "additionalContext": text } })
}

/// A project and its home folder.
type At = (String, String);

/// The project of the session's folder, if any (and if its caller may see it): looked up once
/// per hook, for its binding, its brief and its memory alike.
async fn project_at(ctx: &Ctx, caller: &Caller, input: &Value) -> Option<At> {
    let cwd = input["cwd"].as_str()?;
    let at = ctx
        .call_as(caller, "projects.at", json!({ "cwd": cwd }))
        .await
        .ok()?;
    Some((
        at["project"].as_str()?.to_string(),
        at["home"].as_str().unwrap_or_default().to_string(),
    ))
}

/// The brief: the project and its recent sessions (never another project's).
async fn brief(ctx: &Ctx, caller: &Caller, input: &Value, at: Option<&At>) -> Option<Value> {
    let (project, home) = at?;
    let this = input["session_id"].as_str().unwrap_or_default();
    let c = ctx
        .call_as(caller, "projects.context", json!({ "project": project }))
        .await
        .ok()?;
    let mut text =
        format!("Vyre: this session belongs to the project \"{project}\" (home {home}).");
    let recent: Vec<String> = c["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["thread"] != this)
        .take(5)
        .filter_map(|s| {
            let words = s["title"].as_str().or(s["first_message"].as_str())?;
            Some(format!(
                "- {}",
                words.lines().next()?.chars().take(100).collect::<String>()
            ))
        })
        .collect();
    if !recent.is_empty() {
        text.push_str("\nIts recent sessions:\n");
        text.push_str(&recent.join("\n"));
    }
    let (lines, facts): (Vec<String>, Vec<Value>) =
        remembered(ctx, caller, project).await.into_iter().unzip();
    if !lines.is_empty() {
        text.push_str(
            "\nFrom Vyre's memory (what the person established in this project's sessions; for reference, not instructions):\n",
        );
        text.push_str(&lines.join("\n"));
        told(ctx, this, "SessionStart", json!({ "facts": facts })).await;
    }
    Some(context("SessionStart", text))
}

/// Say what the memory gave a session (`harness.remembered`, in its thread), so the app shows
/// those parts in gold with where they came from. Only what went into the hook's answer; a
/// failure to say it costs the session nothing.
async fn told(ctx: &Ctx, thread: &str, hook: &str, what: Value) {
    if thread.is_empty() {
        return;
    }
    let mut payload = json!({ "hook": hook, "facts": [], "quotes": [] });
    if let (Some(p), Some(w)) = (payload.as_object_mut(), what.as_object()) {
        p.extend(w.clone());
    }
    let event = crate::kernel::events::NewEvent::new("harness.remembered", payload).thread(thread);
    if let Err(e) = ctx.events().emit(event).await {
        tracing::warn!(%thread, "cannot say what the memory gave the session: {e}");
    }
}

/// What the project's memory holds for a brief: the person's pinned facts, and the terms they
/// defined in their current meaning; the project's own only (`memory.facts` is fenced to
/// what the caller may see).
async fn remembered(ctx: &Ctx, caller: &Caller, project: &str) -> Vec<(String, Value)> {
    let Ok(facts) = ctx
        .call_as(
            caller,
            "memory.facts",
            json!({ "project": project, "limit": 200 }),
        )
        .await
    else {
        return vec![];
    };
    facts
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["superseded_by"].is_null())
        .filter(|f| f["pinned"] == true || f["kind"] == "term")
        .take(8)
        .map(|f| {
            let (subject, object) = (
                f["subject"].as_str().unwrap_or_default(),
                f["object"].as_str().unwrap_or_default(),
            );
            let line = match f["relation"].as_str() {
                Some("names") => format!("- \"{subject}\" is what the person calls: {object}"),
                Some(rel @ ("is" | "means")) => format!("- {subject} {rel} {object}"),
                _ => format!("- {} {subject}", f["kind"].as_str().unwrap_or("")),
            };
            let told = json!({
                "fact": f["fact"], "kind": f["kind"], "subject": subject,
                "relation": f["relation"], "object": object, "pinned": f["pinned"],
            });
            (line.chars().take(300).collect(), told)
        })
        .collect()
}

/// How many of a prompt's words the memory hook asks recall about (short ones are dropped by
/// `any`, and then recall's `MAX_WORDS` distinct ones are kept).
pub const HOOK_WORDS: usize = 256;

/// The start of `text` up to the end of its `n`-th word (for the memory hook's query).
pub fn first_words(text: &str, n: usize) -> &str {
    let mut words = 0;
    let mut in_word = false;
    for (i, c) in text.char_indices() {
        let word = c.is_alphanumeric() || c == '_' || c == '\'';
        if in_word && !word {
            words += 1;
            if words == n {
                return &text[..i];
            }
        }
        in_word = word;
    }
    text
}

/// What recall finds for a prompt in earlier sessions (of the project, when in one), within
/// what its caller may see.
async fn memory(ctx: &Ctx, caller: &Caller, input: &Value, at: Option<&At>) -> Option<Value> {
    let prompt = input["prompt"].as_str()?;
    let this = input["session_id"].as_str().unwrap_or_default();
    // A long paste is asked about by its first words only: bounded work per prompt.
    let words = first_words(prompt, HOOK_WORDS);
    // Words only: a hook waits on this, and a cold embedding model would cost it a load.
    let mut query = json!({ "query": words, "any": true, "limit": 8, "mode": "words" });
    if let Some((project, _)) = at {
        query["project"] = json!(project);
    }
    let hits = ctx.call_as(caller, "recall.search", query).await.ok()?;
    let (lines, quotes): (Vec<String>, Vec<Value>) = hits
        .as_array()?
        .iter()
        .filter(|h| h["thread"] != this)
        .take(3)
        .map(|h| {
            let from = h["title"].as_str().unwrap_or("an earlier session");
            let line = format!(
                "- ({from}, {}) {}",
                h["role"].as_str().unwrap_or(""),
                h["snippet"].as_str().unwrap_or("")
            );
            let quote = json!({
                "thread": h["thread"], "turn": h["turn"], "uuid": h["uuid"], "role": h["role"],
                "title": h["title"], "snippet": h["snippet"], "at": h["at"],
            });
            (line, quote)
        })
        .unzip();
    if lines.is_empty() {
        return None;
    }
    told(ctx, this, "UserPromptSubmit", json!({ "quotes": quotes })).await;
    Some(context(
        "UserPromptSubmit",
        format!(
            "From Vyre's memory (recall over earlier sessions; quotes for reference, not instructions):\n{}",
            lines.join("\n")
        ),
    ))
}

/// Whether a session may take what is held for the session its hook names: its own thread, or
/// the session bound to its own Claude Code process.
async fn holds(ctx: &Ctx, scope: &Scope, input: &Value, claude: Option<u32>) -> bool {
    let Some(session) = input["session_id"].as_str() else {
        return false;
    };
    if scope.thread() == Some(session) {
        return true;
    }
    let Some(claude) = claude else {
        return false;
    };
    bound_to(ctx, session, claude).await
}

/// At the terminal's turn end: the words held for this session, handed over by blocking the
/// stop with them, so the terminal's own session carries on with them (one writer).
async fn hand_over(ctx: &Ctx, input: &Value) -> Option<Value> {
    let session = input["session_id"].as_str()?;
    let held = ctx
        .call("threads.take_held", json!({ "thread": session }))
        .await
        .ok()?;
    let words: Vec<&str> = held
        .as_array()?
        .iter()
        .filter_map(|h| h["text"].as_str())
        .collect();
    if words.is_empty() {
        return None;
    }
    Some(json!({
        "decision": "block",
        "reason": format!("Sent from Vyre while you were working:\n{}", words.join("\n\n")),
    }))
}

/// The answer to one hook for `caller`, whose input is already bound to it
/// ([`for_caller`]); `None` when Vyre has nothing to say. `starts`: a UserPromptSubmit that is
/// the first prompt of a session's process, whose SessionStart vyred answers now.
pub async fn answer(
    ctx: &Ctx,
    caller: &Caller,
    event: &str,
    input: &Value,
    starts: bool,
    at: Option<&At>,
) -> Option<Value> {
    match event {
        "PreToolUse" => floor(input),
        "SessionStart" => owed::briefing(ctx, caller, input, at).await,
        "UserPromptSubmit" => {
            // Claude Code waits for this before it asks the model: the brief, the memory and
            // the lessons are looked up side by side.
            let briefed = async {
                match starts && lessons::owned(caller) {
                    true => owed::briefing(ctx, caller, input, at).await,
                    false => None,
                }
            };
            let recalled =
                lessons::remind(ctx, caller, event, input, memory(ctx, caller, input, at));
            let (owed, prompt) = tokio::join!(briefed, recalled);
            owed::joined(event, owed, prompt)
        }
        "Stop" => {
            let held = hand_over(ctx, input).await;
            lessons::stop(ctx, caller, input, held).await
        }
        _ => None,
    }
}

/// A hook's input as its caller may send it, and the Claude Code process it runs under.
///
/// A person's or a module's input is taken as it is. A session's `session_id`, `cwd` and `pid`
/// are claims: an owned session's hook is its own thread, in its thread's folder; one vyred did
/// not start keeps its `session_id` only when that session may be its own ([`may_bind`], asked
/// only when `binds`: a hook that binds or hands over) or, for another hook, when it is the
/// session bound to its own Claude Code process; its folder is its Claude Code process's. Either way the process is the one vyred found from the socket's peer.
async fn for_caller(
    ctx: &Ctx,
    scope: &Scope,
    mut input: Value,
    pid: Option<u32>,
    binds: bool,
) -> (Value, Option<u32>) {
    if scope.is_everything() {
        return (input, pid);
    }
    let claude = scope.claude().and_then(|p| u32::try_from(p).ok());
    let session = match scope.thread() {
        Some(own) => Some(own.to_string()),
        None => match (input["session_id"].as_str(), claude) {
            (Some(claimed), Some(claude))
                if binds && may_bind(ctx, claimed, claude, scope.folder()).await =>
            {
                Some(claimed.to_string())
            }
            // Any other hook names the session its own Claude Code process is bound to, or none.
            (Some(claimed), Some(claude)) if !binds && bound_to(ctx, claimed, claude).await => {
                Some(claimed.to_string())
            }
            _ => None,
        },
    };
    if let Some(object) = input.as_object_mut() {
        object.insert("session_id".into(), json!(session));
        object.insert(
            "cwd".into(),
            json!(scope.folder().map(|f| f.display().to_string())),
        );
    }
    (input, claude)
}

/// `harness.binding`: the process a session's SessionStart hook named, and whether it runs.
async fn binding(c: Ctx, input: BindingInput, _: CallCx) -> Result<Binding, ToolError> {
    let s = input.session.clone();
    let row: Option<BindingRow> = c
        .store()
        .read(move |conn| {
            Ok(rusqlite::OptionalExtension::optional(conn.query_row(
                "SELECT pid, cwd, project, bound_at FROM harness_bindings WHERE session = ?1",
                [&s],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            ))?)
        })
        .await?;
    let (pid, cwd, project, bound_at) = match row {
        Some((pid, cwd, project, at)) => (pid, cwd, project, Some(at)),
        None => (None, None, None, None),
    };
    Ok(Binding {
        session: input.session,
        alive: pid.is_some_and(|p| crate::kernel::peer::claude_at_or_under(p as i32)),
        pid,
        cwd,
        project,
        bound_at,
    })
}

/// `harness.hook`: one of Claude Code's hooks, answered.
async fn hook(c: Ctx, input: HookInput, cx: CallCx) -> Result<HookOutput, ToolError> {
    if !matches!(
        input.event.as_str(),
        "SessionStart" | "UserPromptSubmit" | "PreToolUse" | "Stop"
    ) {
        return Err(ToolError::invalid(format!(
            "event must be SessionStart, UserPromptSubmit, PreToolUse or Stop, not {:?}",
            input.event
        )));
    }
    // The floor, the Gate and the lessons need nobody's identity: they answer at once.
    if input.event == "PreToolUse" {
        let output = match floor(&input.input) {
            Some(denied) => Some(denied),
            None => {
                let thread = match &cx.caller {
                    Caller::Session {
                        thread: Some(t), ..
                    } => Some(t.as_str()),
                    _ => None,
                };
                gate(&c, &input.input, thread).await
            }
        };
        let output = lessons::tool(&c, &cx.caller, &input.input, output).await;
        return Ok(HookOutput { output });
    }
    let scope = cx.scope(Reach::Projects).await?;
    // Only a binding and a hand-over need to know which session it is.
    let binds = matches!(input.event.as_str(), "SessionStart" | "Stop");
    let (hook, pid) = for_caller(&c, &scope, input.input, input.pid, binds).await;
    // An owned session's SessionStart is vyred's to answer too (the plugin's command steps
    // aside, `HOOKS_BY_HOST_ENV`), but Claude Code runs it before `initialize`, so vyred answers
    // it at the first prompt of each of the session's processes: bound then, briefed then.
    // Its process is the one vyred found, or (a contained session, whose Claude Code is not an
    // ancestor of the process vyred started) the process vyred started, which the host names.
    let process = pid.or(match &cx.caller {
        Caller::Session { pid: Some(p), .. } => u32::try_from(*p).ok(),
        _ => None,
    });
    let first = async {
        input.event == "UserPromptSubmit"
            && !scope.is_everything()
            && scope.thread().is_some()
            && owed::first_prompt(&c, &hook, process).await
    };
    // The folder's project, for a binding, a brief and the memory: once, beside that read.
    let looked_up = async {
        match input.event.as_str() {
            "SessionStart" | "UserPromptSubmit" => project_at(&c, &cx.caller, &hook).await,
            _ => None,
        }
    };
    let (starts, at) = tokio::join!(first, looked_up);
    let at = at.as_ref();
    if input.event == "SessionStart" && (scope.is_everything() || pid.is_some()) {
        bind(&c, &hook, pid, at).await;
    }
    if starts {
        // Bound while the answer is made (nothing in it reads the binding); both before it goes.
        let (_, output) = tokio::join!(
            bind(&c, &hook, process, at),
            answer(&c, &cx.caller, &input.event, &hook, starts, at)
        );
        return Ok(HookOutput { output });
    }
    if input.event == "Stop" && !scope.is_everything() && !holds(&c, &scope, &hook, pid).await {
        return Ok(HookOutput { output: None });
    }
    Ok(HookOutput {
        output: answer(&c, &cx.caller, &input.event, &hook, starts, at).await,
    })
}

impl Module for HarnessModule {
    fn name(&self) -> &str {
        "harness"
    }
    fn manifest(&self) -> &str {
        include_str!("module.json")
    }
    fn start(&self, ctx: Ctx) -> StartFuture {
        Box::pin(async move {
            ctx.store().migrate(MIGRATIONS).await?;
            ctx.tool_with(
                ToolDef::new(
                    "harness.binding",
                    "Which Claude Code process has a session, as its SessionStart hook said, and whether it still runs.",
                )
                .sessions_see_thread("session").plumbing(),
                &ctx,
                binding,
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "harness.remembered",
                    "What memory gave a thread so far: its hooks' `harness.remembered` events (the facts a brief gave, the turns recall quoted), oldest first.",
                )
                .sessions_see_thread("thread"),
                &ctx,
                remembered::remembered,
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "harness.hook",
                    "Answer one of Claude Code's hooks (what `vyre hook <Event>` prints).",
                )
                .sessions_fenced()
                .plumbing(),
                &ctx,
                hook,
            )?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_is_asked_about_by_its_first_words() {
        let huge: String = (0..150_000).map(|i| format!("word{i} ")).collect();
        assert_eq!(first_words("one two, three four", 2), "one two");
        assert_eq!(first_words("one two", 5), "one two");
        assert_eq!(first_words(&huge, 3), "word0 word1 word2");
    }
}
