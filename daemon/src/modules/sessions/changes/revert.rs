//! `threads.revert {thread, turn, path?}`: a person puts back what one turn changed (one file, or
//! all of them) from the turn's "before" snapshot. Never the model's (PERSON_ONLY), and never over
//! newer work: a file that changed again since the turn ended (a later turn, the person's editor)
//! is refused by name and nothing is written, so a revert cannot lose what came after.

use std::path::{Component, Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::shadow::Shadow;
use super::{Row, rows};
use crate::kernel::module::Ctx;
use crate::kernel::tools::{CallCx, ToolError};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RevertInput {
    #[schemars(length(min = 1, max = 200))]
    thread: String,
    /// The turn (`<thread>:<n>`) whose changes are put back.
    #[schemars(length(min = 1, max = 300))]
    turn: String,
    /// Only this file (as `threads.changes` names it); every file of the turn when left out.
    #[serde(default)]
    #[schemars(length(min = 1, max = 4096))]
    path: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Reverted {
    pub turn: String,
    /// The files put back as they were before the turn (an added file is removed).
    pub paths: Vec<String>,
}

/// A turn as a person reads it: `<thread>:3` is turn 3.
fn turn_number(turn: &str) -> &str {
    turn.rsplit_once(':').map_or(turn, |(_, n)| n)
}

/// A path inside the folder, as git names it: relative, no `..`, no root.
pub(super) fn inside(path: &str) -> bool {
    let p = Path::new(path);
    !path.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)))
}

pub async fn revert(c: Ctx, input: RevertInput, cx: CallCx) -> Result<Reverted, ToolError> {
    let (thread, turn) = (input.thread.clone(), input.turn.clone());
    let row: Row = c
        .store()
        .read(move |conn| Ok(rows(conn, &thread, Some(&turn))?))
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| {
            ToolError::not_found(
                "no_changes",
                format!("no changes are known for turn {}", input.turn),
            )
        })?;
    let (Some(before), Some(after)) = (row.before.clone(), row.after.clone()) else {
        return Err(ToolError::conflict(
            "not_followed",
            format!(
                "turn {}'s changes are not known ({}), so they cannot be put back",
                input.turn,
                row.note.as_deref().unwrap_or("not followed")
            ),
        ));
    };
    let files: Vec<_> = match &input.path {
        Some(p) => {
            let f = row.files.iter().find(|f| &f.path == p).ok_or_else(|| {
                ToolError::not_found(
                    "no_such_change",
                    format!("turn {} did not change {p}", input.turn),
                )
            })?;
            vec![f.clone()]
        }
        None => row.files.clone(),
    };
    if let Some(bad) = files.iter().find(|f| !inside(&f.path)) {
        return Err(ToolError::invalid(format!(
            "{:?} is not a path in the folder",
            bad.path
        )));
    }
    let folder = PathBuf::from(&row.folder);
    let shadow = Shadow::open(&c.home().root().join("changes"), &folder)
        .await
        .map_err(|e| ToolError::unavailable("no_snapshots", e))?;
    // What changed since the turn ended: those files are refused, and nothing is written.
    let now = shadow
        .snapshot()
        .await
        .map_err(|e| ToolError::unavailable("no_snapshots", e))?
        .tree;
    let since: Vec<String> = shadow
        .changed(&after, &now)
        .await
        .map_err(|e| ToolError::unavailable("no_snapshots", e))?
        .into_iter()
        .map(|c| c.path)
        .collect();
    // A file already as it was before the turn has nothing to put back.
    let differ: Vec<String> = shadow
        .changed(&before, &now)
        .await
        .map_err(|e| ToolError::unavailable("no_snapshots", e))?
        .into_iter()
        .map(|c| c.path)
        .collect();
    let touches = |list: &[String], path: &str| {
        list.iter()
            .any(|s| s == path || s.starts_with(&format!("{path}/")))
    };
    let files: Vec<_> = files
        .into_iter()
        .filter(|f| touches(&differ, &f.path))
        .collect();
    let newer: Vec<&str> = files
        .iter()
        .filter(|f| touches(&since, &f.path))
        .map(|f| f.path.as_str())
        .collect();
    if !newer.is_empty() {
        return Err(ToolError::conflict(
            "changed_since",
            format!(
                "nothing was put back: {} changed again after turn {} ended, and putting it back would lose that",
                newer.join(", "),
                turn_number(&input.turn)
            ),
        ));
    }
    let mut paths = vec![];
    for f in &files {
        if f.status == "added" {
            shadow
                .remove(&f.path)
                .map_err(|e| ToolError::conflict("not_reverted", format!("{}: {e}", f.path)))?;
        } else {
            shadow
                .restore(&before, &f.path)
                .await
                .map_err(|e| ToolError::conflict("not_reverted", format!("{}: {e}", f.path)))?;
        }
        paths.push(f.path.clone());
    }
    let payload = json!({ "turn": input.turn, "paths": paths, "by": cx.caller.label() });
    crate::modules::sessions::timeline::tell(&c, &input.thread, "thread.reverted", payload).await?;
    Ok(Reverted {
        turn: input.turn,
        paths,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_turn_reads_as_its_number() {
        assert_eq!(super::turn_number("3d76f743-7f8e:12"), "12");
        assert_eq!(super::turn_number("odd"), "odd");
    }

    #[test]
    fn only_plain_paths_inside_the_folder() {
        for ok in ["a.txt", "src/a.rs", ".hidden"] {
            assert!(super::inside(ok), "{ok}");
        }
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "./a"] {
            assert!(!super::inside(bad), "{bad}");
        }
    }
}
