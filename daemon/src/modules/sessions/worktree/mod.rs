//! A worktree per session (issue 25, ADR 0031): `threads.start {worktree: true | "<branch>"}`
//! runs the session in a new git worktree on its own branch, in a folder beside the repository
//! (`<parent>/.vyre-worktrees/<repo>/<branch>`), so its work never mixes with the person's
//! checkout. `threads.worktree.merge` brings the branch into the checkout's branch (a
//! fast-forward or a merge commit); `threads.worktree.remove` takes the worktree away and
//! refuses, while anything in it is saved nowhere else (files not committed, commits no other
//! branch or remote has), unless the person names the branch to confirm. Nothing else Vyre does
//! (a stop, an idle close, a restart) touches a worktree. Kept in `threads_worktrees`.

pub mod git;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::{OptionalExtension, params};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::kernel::events::NewEvent;
use crate::kernel::module::{Ctx, StartError, ToolDef};
use crate::kernel::tools::{CallCx, ToolError};
use crate::modules::sessions::switchboard::Switchboard;
use git::{Repo, Unsaved, branch_ok};

/// What `threads.start` asks for: `true` for a branch Vyre names, or the branch's name.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Wish {
    Named(bool),
    Branch(#[schemars(length(min = 1, max = 100))] String),
}

/// A thread's worktree, as `threads.get` shows it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct Worktree {
    /// The repository's main checkout.
    pub repo: String,
    /// The worktree's folder.
    pub path: String,
    pub branch: String,
    /// The commit it started from.
    pub base: String,
    /// The repository's filters that were off when its files were checked out (e.g. `lfs`:
    /// those files are as stored, and `git lfs pull` in the session fills them in).
    pub filters_off: Vec<String>,
    pub created_at: i64,
    /// When it was last merged, and the commit the checkout's branch reached.
    pub merged_at: Option<i64>,
    pub merged_to: Option<String>,
    /// When it was taken away (the thread's folder is gone since).
    pub removed_at: Option<i64>,
}

/// A worktree made for a thread that is about to start.
pub struct Made {
    pub repo: Repo,
    pub worktree: Worktree,
    /// Where the session starts: the same place within the worktree as `cwd` in the checkout.
    pub cwd: PathBuf,
}

/// Who git runs as: the sessions' own user when they have one (ADR 0013).
fn user(ctx: &Ctx) -> Option<(u32, u32)> {
    let s = &ctx.config().sessions;
    s.uid.zip(s.gid)
}

/// Four random hex digits, so two sessions started with the same words get two branches.
fn suffix() -> String {
    let mut b = [0u8; 2];
    getrandom::fill(&mut b).expect("the OS random source");
    format!("{:02x}{:02x}", b[0], b[1])
}

/// The branch Vyre names from the first words of the message: `vyre/fix-the-login-3f2a`.
pub fn branch_from(text: Option<&str>) -> String {
    let words: Vec<String> = text
        .unwrap_or_default()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(5)
        .map(str::to_ascii_lowercase)
        .collect();
    let mut slug = words.join("-");
    slug.truncate(40);
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() {
        format!("vyre/session-{}", suffix())
    } else {
        format!("vyre/{slug}-{}", suffix())
    }
}

/// Make the worktree `wish` asks for, for a session that would start in `cwd`.
pub async fn make(
    ctx: &Ctx,
    cwd: &Path,
    wish: &Wish,
    text: Option<&str>,
) -> Result<Option<Made>, ToolError> {
    let branch = match wish {
        Wish::Named(false) => return Ok(None),
        Wish::Named(true) => branch_from(text),
        Wish::Branch(b) if branch_ok(b) => b.clone(),
        Wish::Branch(b) => {
            return Err(ToolError::invalid(format!(
                "{b:?} is not a branch name Vyre makes: letters, digits, `-`, `_`, `.` and `/`, not starting with `-`"
            )));
        }
    };
    let (repo, rel) = Repo::at(cwd, user(ctx)).await?;
    let base = repo.head().await?;
    let (Some(parent), Some(name)) = (repo.top.parent(), repo.top.file_name()) else {
        return Err(ToolError::conflict(
            "no_room",
            format!(
                "{} has no folder beside it for a worktree",
                repo.top.display()
            ),
        ));
    };
    let path = parent
        .join(".vyre-worktrees")
        .join(name)
        .join(branch.replace('/', "-"));
    if path.exists() {
        return Err(ToolError::conflict(
            "worktree_exists",
            format!("{} is there already", path.display()),
        ));
    }
    let filters_off = repo.add(&path, &branch).await?;
    // Not `path.join("")`, which would end the folder in a slash.
    let cwd = if rel.as_os_str().is_empty() {
        path.clone()
    } else {
        path.join(&rel)
    };
    Ok(Some(Made {
        worktree: Worktree {
            repo: repo.top.display().to_string(),
            path: path.display().to_string(),
            branch,
            base,
            filters_off,
            created_at: crate::now_ms(),
            merged_at: None,
            merged_to: None,
            removed_at: None,
        },
        repo,
        cwd: if cwd.is_dir() { cwd } else { path },
    }))
}

/// The thread could not start in the worktree just made: take it back (it holds nothing yet).
pub async fn unmake(made: Made) {
    let w = &made.worktree;
    if let Err(e) = made.repo.remove(Path::new(&w.path), &w.branch, false).await {
        tracing::warn!(path = %w.path, error = %e.message, "a worktree made for a thread that did not start stays");
    }
}

/// Keep `made` as `thread`'s worktree and say so in the thread.
pub async fn record(ctx: &Ctx, thread: &str, made: &Made) -> Result<(), ToolError> {
    let (t, w) = (thread.to_string(), made.worktree.clone());
    ctx.store()
        .write(move |tx| {
            tx.conn().execute(
                "INSERT INTO threads_worktrees (thread, repo, path, branch, base, filters_off, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![t, w.repo, w.path, w.branch, w.base, json!(w.filters_off).to_string(), w.created_at],
            )?;
            crate::modules::sessions::timeline::record(
                tx,
                NewEvent::new(
                    "thread.worktree",
                    json!({ "repo": w.repo, "path": w.path, "branch": w.branch, "base": w.base, "filters_off": w.filters_off }),
                )
                .thread(&t),
            )?;
            Ok(())
        })
        .await?;
    Ok(())
}

/// `thread`'s worktree, if it was started in one.
pub async fn of(ctx: &Ctx, thread: &str) -> Result<Option<Worktree>, ToolError> {
    let t = thread.to_string();
    Ok(ctx
        .store()
        .read(move |c| {
            Ok(c.query_row(
                "SELECT repo, path, branch, base, filters_off, created_at, merged_at, merged_to, removed_at
                 FROM threads_worktrees WHERE thread = ?1",
                [t],
                |r| {
                    Ok(Worktree {
                        repo: r.get(0)?,
                        path: r.get(1)?,
                        branch: r.get(2)?,
                        base: r.get(3)?,
                        filters_off: serde_json::from_str(&r.get::<_, String>(4)?)
                            .unwrap_or_default(),
                        created_at: r.get(5)?,
                        merged_at: r.get(6)?,
                        merged_to: r.get(7)?,
                        removed_at: r.get(8)?,
                    })
                },
            )
            .optional()?)
        })
        .await?)
}

/// Each thread's worktree branch, for threads whose worktree is there.
pub async fn branches(ctx: &Ctx) -> Result<std::collections::HashMap<String, String>, ToolError> {
    Ok(ctx
        .store()
        .read(|c| {
            let mut stmt =
                c.prepare("SELECT thread, branch FROM threads_worktrees WHERE removed_at IS NULL")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await?)
}

async fn live_one(ctx: &Ctx, thread: &str) -> Result<(Worktree, Repo), ToolError> {
    let w = of(ctx, thread).await?.ok_or_else(|| {
        ToolError::not_found(
            "no_worktree",
            format!("thread {thread} was not started in a worktree"),
        )
    })?;
    if w.removed_at.is_some() {
        return Err(ToolError::conflict(
            "worktree_removed",
            format!("thread {thread}'s worktree was removed"),
        ));
    }
    let (repo, _) = Repo::at(Path::new(&w.repo), user(ctx)).await?;
    Ok((w, repo))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeInput {
    #[schemars(length(min = 1, max = 200))]
    thread: String,
    /// `fast-forward` (the default: the checkout's branch moves to the worktree's, refused
    /// when it cannot) or `merge` (a merge commit; the checkout's tracked files must be clean).
    #[serde(default)]
    #[schemars(extend("enum" = ["fast-forward", "merge", null]))]
    how: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Merged {
    pub branch: String,
    /// The checkout's branch it went into.
    pub into: String,
    pub how: String,
    /// The commit that branch is at now.
    pub commit: String,
}

async fn merge(c: Ctx, input: MergeInput, cx: CallCx) -> Result<Merged, ToolError> {
    let (w, repo) = live_one(&c, &input.thread).await?;
    let how = input.how.unwrap_or_else(|| "fast-forward".into());
    let commit = match how.as_str() {
        "fast-forward" => false,
        "merge" => true,
        other => {
            return Err(ToolError::invalid(format!(
                "how is fast-forward or merge, not {other:?}"
            )));
        }
    };
    let unsaved = repo.unsaved(Path::new(&w.path), &w.branch).await?;
    if !unsaved.uncommitted.is_empty() {
        return Err(ToolError::conflict(
            "uncommitted",
            format!(
                "{} file(s) in the worktree are not committed ({}): ask the session to commit them, or commit them yourself, then merge",
                unsaved.uncommitted.len(),
                listed(&unsaved.uncommitted)
            ),
        ));
    }
    let into = repo.current_branch().await.unwrap_or_default();
    let message = format!(
        "Merge {} (a Vyre session, thread {})",
        w.branch, input.thread
    );
    let head = repo.merge(&w.branch, commit, &message).await?;
    let (t, h, branch, by) = (
        input.thread.clone(),
        head.clone(),
        w.branch.clone(),
        cx.caller.label(),
    );
    let payload = json!({ "branch": branch, "into": into, "how": how, "commit": head, "by": by });
    c.store()
        .write(move |tx| {
            tx.conn().execute(
                "UPDATE threads_worktrees SET merged_at = ?1, merged_to = ?2 WHERE thread = ?3",
                params![crate::now_ms(), h, t],
            )?;
            crate::modules::sessions::timeline::record(
                tx,
                NewEvent::new("thread.worktree_merged", payload).thread(&t),
            )?;
            Ok(())
        })
        .await?;
    Ok(Merged {
        branch: w.branch,
        into,
        how,
        commit: head,
    })
}

fn listed(paths: &[String]) -> String {
    let mut out: Vec<&str> = paths.iter().take(5).map(String::as_str).collect();
    if paths.len() > 5 {
        out.push("...");
    }
    out.join(", ")
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveInput {
    #[schemars(length(min = 1, max = 200))]
    thread: String,
    /// The worktree's branch, typed by the person, to remove it with what is saved nowhere
    /// else (files not committed, commits no other branch or remote has): they are lost.
    #[serde(default)]
    #[schemars(length(min = 1, max = 100))]
    confirm: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Removed {
    pub path: String,
    pub branch: String,
    /// Whether the branch went too (it stays while it has commits nothing else has, unless
    /// confirmed).
    pub branch_deleted: bool,
    /// What was lost by the person's confirmation.
    pub lost_files: usize,
    pub lost_commits: u64,
}

async fn remove(
    (c, board): (Ctx, Arc<Switchboard>),
    input: RemoveInput,
    cx: CallCx,
) -> Result<Removed, ToolError> {
    let (w, repo) = live_one(&c, &input.thread).await?;
    let path = PathBuf::from(&w.path);
    let unsaved: Unsaved = repo.unsaved(&path, &w.branch).await?;
    let confirmed = input.confirm.as_deref() == Some(w.branch.as_str());
    if !unsaved.is_empty() && !confirmed {
        let mut what = vec![];
        if !unsaved.uncommitted.is_empty() {
            what.push(format!(
                "{} file(s) not committed ({})",
                unsaved.uncommitted.len(),
                listed(&unsaved.uncommitted)
            ));
        }
        if unsaved.unmerged > 0 {
            what.push(format!(
                "{} commit(s) on {} that no other branch or remote has",
                unsaved.unmerged, w.branch
            ));
        }
        return Err(ToolError::conflict(
            "unsaved_work",
            format!(
                "the worktree holds {}: merge or push them first, or confirm with the branch's name ({}) to lose them",
                what.join(" and "),
                w.branch
            ),
        ));
    }
    // The session must not run in a folder that goes away.
    board
        .stop(&input.thread, "worktree removed")
        .await
        .map_err(ToolError::from)?;
    let branch_deleted = repo.remove(&path, &w.branch, confirmed).await?;
    let (t, by) = (input.thread.clone(), cx.caller.label());
    let payload = json!({ "path": w.path, "branch": w.branch, "branch_deleted": branch_deleted, "lost_files": unsaved.uncommitted.len(), "lost_commits": unsaved.unmerged, "by": by });
    c.store()
        .write(move |tx| {
            tx.conn().execute(
                "UPDATE threads_worktrees SET removed_at = ?1 WHERE thread = ?2",
                params![crate::now_ms(), t],
            )?;
            crate::modules::sessions::timeline::record(
                tx,
                NewEvent::new("thread.worktree_removed", payload).thread(&t),
            )?;
            Ok(())
        })
        .await?;
    Ok(Removed {
        path: w.path,
        branch: w.branch,
        branch_deleted,
        lost_files: if confirmed {
            unsaved.uncommitted.len()
        } else {
            0
        },
        lost_commits: if confirmed { unsaved.unmerged } else { 0 },
    })
}

pub fn register(ctx: &Ctx, board: Arc<Switchboard>) -> Result<(), StartError> {
    ctx.tool_with(
        ToolDef::new(
            "threads.worktree.merge",
            "Bring a worktree thread's branch into the branch its repository's checkout is on: a fast-forward (the default) or a merge commit (`how: merge`); refused while the worktree has files not committed, and taken back whole when it conflicts (a person only).",
        )
        .person_only()
        .finishes(),
        ctx,
        merge,
    )?;
    ctx.tool_with(
        ToolDef::new(
            "threads.worktree.remove",
            "Stop a worktree thread and remove its worktree (and its branch once merged); refused while the worktree holds files not committed or commits no other branch or remote has, unless `confirm` names the branch (a person only).",
        )
        .person_only()
        .finishes(),
        &(ctx.clone(), board),
        remove,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_branch_is_named_from_the_first_words() {
        let b = branch_from(Some("Fix the login bug, please; it's urgent!"));
        assert!(b.starts_with("vyre/fix-the-login-bug-please-"), "{b}");
        assert!(branch_ok(&b), "{b}");
        let b = branch_from(Some("✨ $(rm -rf /) ✨"));
        assert!(b.starts_with("vyre/rm-rf-"), "{b}");
        assert!(branch_ok(&b));
        let b = branch_from(None);
        assert!(b.starts_with("vyre/session-") && branch_ok(&b), "{b}");
        assert!(branch_ok(&branch_from(Some(&"word ".repeat(100)))));
    }
}
