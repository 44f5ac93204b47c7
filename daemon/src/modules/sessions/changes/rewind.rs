//! Rewind with its files (issue 25): `threads.rewind {thread, uuid, files: true}` puts back every
//! file the session changed from the turn that message began onwards, each as it was before
//! the first of those turns that changed it. As `threads.revert`, never over newer work: a file
//! that changed after the last turn that touched it (the person's editor, a link planted in its
//! place) is refused by name and nothing is written; what the person changed between turns is
//! not the session's and is left alone.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::json;

use super::shadow::Shadow;
use super::{Row, rows};
use crate::kernel::module::Ctx;
use crate::kernel::tools::ToolError;

/// A turn's number: `<thread>:3` is 3.
fn number(turn: &str) -> Option<u64> {
    turn.rsplit_once(':').and_then(|(_, n)| n.parse().ok())
}

/// The turn message `uuid` began in `thread`, from its `thread.turn` event.
pub async fn turn_of(ctx: &Ctx, thread: &str, uuid: &str) -> Result<String, ToolError> {
    let turns = ctx
        .events()
        .of_thread(thread, "thread.turn", 100_000)
        .await?;
    turns
        .iter()
        .rev()
        .map(|e| e.payload_value())
        .find(|p| p["uuid"] == uuid)
        .and_then(|p| p["turn"].as_str().map(String::from))
        .ok_or_else(|| {
            ToolError::conflict(
                "not_a_turn",
                "files are put back to where a turn began: rewind to a message that was sent to the session",
            )
        })
}

/// For each file a turn from `first` on changed: the tree it is put back from (the `before` of
/// the first such turn that changed it), whether it was added there (then it is removed), and
/// the tree it must still match (the `after` of the last turn that changed it).
struct Plan {
    folder: PathBuf,
    files: BTreeMap<String, (String, bool, String)>,
}

fn plan(rows: &[Row], first: u64) -> Result<Option<Plan>, ToolError> {
    let from: Vec<&Row> = rows
        .iter()
        .filter(|r| number(&r.turn).is_some_and(|n| n >= first))
        .collect();
    let Some(head) = from.first() else {
        return Ok(None);
    };
    let mut files: BTreeMap<String, (String, bool, String)> = BTreeMap::new();
    for r in &from {
        let (Some(before), Some(after)) = (&r.before, &r.after) else {
            return Err(ToolError::conflict(
                "not_followed",
                format!(
                    "turn {}'s changes are not known ({}), so the files cannot be put back",
                    number(&r.turn).unwrap_or(0),
                    r.note.as_deref().unwrap_or("not followed")
                ),
            ));
        };
        if r.folder != head.folder {
            return Err(ToolError::conflict(
                "folder_changed",
                "the thread's turns ran in more than one folder, so the files cannot be put back together",
            ));
        }
        for f in &r.files {
            if !super::revert::inside(&f.path) {
                return Err(ToolError::invalid(format!(
                    "{:?} is not a path in the folder",
                    f.path
                )));
            }
            files
                .entry(f.path.clone())
                .and_modify(|e| e.2 = after.clone())
                .or_insert_with(|| (before.clone(), f.status == "added", after.clone()));
        }
    }
    Ok(Some(Plan {
        folder: PathBuf::from(&head.folder),
        files,
    }))
}

/// Put back what turns from `turn` on changed; the paths put back. `check_only`: refuse as it
/// would, and write nothing (so a refusal need not stop the session first).
pub async fn put_back_since(
    c: &Ctx,
    thread: &str,
    turn: &str,
    by: String,
    check_only: bool,
) -> Result<Vec<String>, ToolError> {
    let first = number(turn).unwrap_or(0);
    let t = thread.to_string();
    let all = c
        .store()
        .read(move |conn| Ok(rows(conn, &t, None)?))
        .await?;
    let Some(plan) = plan(&all, first)? else {
        return Ok(vec![]);
    };
    let shadow = Shadow::open(&c.home().root().join("changes"), &plan.folder)
        .await
        .map_err(|e| ToolError::unavailable("no_snapshots", e))?;
    let unavailable = |e: String| ToolError::unavailable("no_snapshots", e);
    let now = shadow.snapshot().await.map_err(unavailable)?.tree;
    let touches = |list: &[String], path: &str| {
        list.iter()
            .any(|s| s == path || s.starts_with(&format!("{path}/")))
    };
    // Each tree compared with now once: what differs from the last turn's end (changed since)
    // and from the first turn's start (still to put back).
    let mut differs: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (before, _, after) in plan.files.values() {
        for tree in [before, after] {
            if !differs.contains_key(tree) {
                let changed = shadow.changed(tree, &now).await.map_err(unavailable)?;
                differs.insert(tree.clone(), changed.into_iter().map(|c| c.path).collect());
            }
        }
    }
    let newer: Vec<&str> = plan
        .files
        .iter()
        .filter(|(p, (_, _, after))| touches(&differs[after], p))
        .map(|(p, _)| p.as_str())
        .collect();
    if !newer.is_empty() {
        return Err(ToolError::conflict(
            "changed_since",
            format!(
                "nothing was rewound: {} changed again after the session's last change to it, and putting it back would lose that",
                newer.join(", ")
            ),
        ));
    }
    if check_only {
        return Ok(vec![]);
    }
    let mut paths = vec![];
    for (path, (before, added, _)) in &plan.files {
        if !touches(&differs[before], path) {
            continue;
        }
        let done = if *added {
            shadow.remove(path)
        } else {
            shadow.restore(before, path).await
        };
        done.map_err(|e| ToolError::conflict("not_reverted", format!("{path}: {e}")))?;
        paths.push(path.clone());
    }
    let payload = json!({ "turn": turn, "paths": paths, "by": by, "rewind": true });
    crate::modules::sessions::timeline::tell(c, thread, "thread.reverted", payload).await?;
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modules::sessions::changes::follow::File;

    fn row(turn: &str, before: &str, after: &str, files: &[(&str, &str)]) -> Row {
        Row {
            turn: turn.into(),
            folder: "/w".into(),
            before: Some(before.into()),
            after: Some(after.into()),
            files: files
                .iter()
                .map(|(p, s)| File {
                    path: (*p).into(),
                    status: (*s).into(),
                    announced: false,
                    too_big: false,
                })
                .collect(),
            note: None,
            at: 0,
        }
    }

    #[test]
    fn each_file_goes_back_to_before_the_first_turn_that_changed_it() {
        let rows = vec![
            row("t:1", "b1", "a1", &[("old.txt", "modified")]),
            row(
                "t:2",
                "b2",
                "a2",
                &[("a.txt", "modified"), ("new.txt", "added")],
            ),
            row(
                "t:3",
                "b3",
                "a3",
                &[("a.txt", "modified"), ("c.txt", "deleted")],
            ),
        ];
        let p = plan(&rows, 2).unwrap().unwrap();
        assert_eq!(p.files.len(), 3, "turn 1's file is not touched");
        assert_eq!(p.files["a.txt"], ("b2".into(), false, "a3".into()));
        assert_eq!(p.files["new.txt"], ("b2".into(), true, "a2".into()));
        assert_eq!(p.files["c.txt"], ("b3".into(), false, "a3".into()));
        assert!(plan(&rows, 4).unwrap().is_none(), "nothing after");
        let mut unfollowed = rows.clone();
        unfollowed[2].after = None;
        assert_eq!(plan(&unfollowed, 2).err().unwrap().code, "not_followed");
        let hostile = vec![row("t:1", "b", "a", &[("../etc/passwd", "modified")])];
        assert_eq!(plan(&hostile, 1).err().unwrap().code, "invalid_input");
    }
}
