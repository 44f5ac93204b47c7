//! Every file a session changed (floor rule 5, issue 25): by an Edit or Write, and by any
//! command, found by comparing snapshots of the thread's folder taken as each turn begins and
//! ends ([`shadow`], in Vyre's own object store), followed per thread ([`follow`]).
//! `threads.changes {thread, turn?}` lists each turn's files with their unified diffs.

pub mod follow;
pub mod prune;
pub mod revert;
pub mod rewind;
pub mod shadow;

use std::path::PathBuf;

use rusqlite::params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::kernel::module::{Ctx, StartError, ToolDef};
use crate::kernel::tools::ToolError;
use follow::File;
use shadow::Shadow;

/// A file's diff is cut here, and a whole answer's diffs there.
const FILE_DIFF_MAX: usize = 256 * 1024;
const ANSWER_DIFF_MAX: usize = 2 * 1024 * 1024;
/// Turns an answer lists at most (the newest).
const TURNS_MAX: usize = 200;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangesInput {
    #[schemars(length(min = 1, max = 200))]
    thread: String,
    /// One turn (`<thread>:<n>`, as events name it); every turn when left out.
    #[serde(default)]
    #[schemars(length(min = 1, max = 300))]
    turn: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct FileChange {
    #[serde(flatten)]
    pub file: File,
    /// The unified diff ("Binary files ... differ" for a binary file); null once the answer's
    /// diffs passed 2 MiB.
    pub diff: Option<String>,
    /// The diff was cut (at 256 KiB for one file).
    pub cut: bool,
}

#[derive(Serialize, JsonSchema)]
pub struct TurnChanges {
    pub turn: String,
    pub folder: String,
    pub at: i64,
    /// Why the turn's changes are not known (a folder too big to follow, the home folder ...).
    pub note: Option<String>,
    pub files: Vec<FileChange>,
}

#[derive(Clone)]
pub(crate) struct Row {
    turn: String,
    folder: String,
    before: Option<String>,
    after: Option<String>,
    files: Vec<File>,
    note: Option<String>,
    at: i64,
}

pub(crate) fn rows(
    conn: &rusqlite::Connection,
    thread: &str,
    turn: Option<&str>,
) -> rusqlite::Result<Vec<Row>> {
    let mut stmt = conn.prepare(
        "SELECT turn, folder, before, after, files, note, at FROM threads_changes
         WHERE thread = ?1 AND (?2 IS NULL OR turn = ?2) ORDER BY at DESC LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![thread, turn, TURNS_MAX as i64], |r| {
        let files: String = r.get(4)?;
        Ok(Row {
            turn: r.get(0)?,
            folder: r.get(1)?,
            before: r.get(2)?,
            after: r.get(3)?,
            files: serde_json::from_str(&files).unwrap_or_default(),
            note: r.get(5)?,
            at: r.get(6)?,
        })
    })?;
    let mut out: Vec<Row> = rows.collect::<Result<_, _>>()?;
    out.reverse();
    Ok(out)
}

async fn changes(ctx: Ctx, input: ChangesInput) -> Result<Vec<TurnChanges>, ToolError> {
    let (thread, turn) = (input.thread.clone(), input.turn.clone());
    let rows = ctx
        .store()
        .read(move |c| Ok(rows(c, &thread, turn.as_deref())?))
        .await?;
    let root = ctx.home().root().join("changes");
    let mut budget = ANSWER_DIFF_MAX;
    let mut out = vec![];
    for row in rows {
        let mut files = vec![];
        let shadow = match (&row.before, &row.after) {
            (Some(_), Some(_)) => Shadow::open(&root, &PathBuf::from(&row.folder)).await.ok(),
            _ => None,
        };
        for file in row.files {
            let (diff, cut) = match (&shadow, &row.before, &row.after) {
                (Some(s), Some(a), Some(b)) if budget > 0 && !file.too_big => {
                    match s.diff(a, b, &file.path, FILE_DIFF_MAX.min(budget)).await {
                        Ok((d, cut)) => {
                            budget = budget.saturating_sub(d.len());
                            (Some(d), cut)
                        }
                        Err(_) => (None, false),
                    }
                }
                _ => (None, false),
            };
            files.push(FileChange { file, diff, cut });
        }
        out.push(TurnChanges {
            turn: row.turn,
            folder: row.folder,
            at: row.at,
            note: row.note,
            files,
        });
    }
    Ok(out)
}

pub fn register(ctx: &Ctx) -> Result<(), StartError> {
    prune::daily(ctx);
    ctx.tool_with(
        ToolDef::new(
            "threads.changes",
            "Every file a thread's turns changed in its folder, by a tool call or by a command without saying so (`announced: false`), with unified diffs; one turn's with `turn`.",
        )
        .sessions_see_thread("thread"),
        ctx,
        |c, input: ChangesInput, _| changes(c, input),
    )?;
    ctx.tool_with(
        ToolDef::new(
            "threads.revert",
            "Put back what one turn changed in the thread's folder (one file with `path`, or all of them) as it was before the turn; refused, with nothing written, for a file that changed again since (a person only).",
        )
        .person_only()
        .finishes(),
        ctx,
        revert::revert,
    )
}
