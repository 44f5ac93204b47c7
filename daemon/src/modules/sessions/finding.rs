//! The `threads` tools that help a person find and start sessions (issue 18):
//! `threads.folders` (recent folders to start in, fenced to what the caller sees) and
//! `threads.rename` (a thread's name, by a person or by the session itself).

use std::path::PathBuf;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::about::{self, About};
use super::recent_folders::{self, Folder, ProjectHome, Seen};
use super::switchboard::Switchboard;
use crate::kernel::module::{Ctx, StartError, ToolDef};
use crate::kernel::tools::{Reach, ToolError};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FoldersInput {
    /// Words of the folder's path or its project's name (`~/src` works); none: the most recent.
    #[serde(default)]
    query: Option<String>,
    /// At most this many (1 to 100, default 20).
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Serialize, JsonSchema)]
pub struct Folders {
    /// The sessions' HOME: what `~` means in a folder given to `threads.start`.
    home: String,
    /// Existing folders where sessions ran and projects live, most recently used first.
    folders: Vec<Folder>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameInput {
    thread: String,
    /// The thread's new name; empty gives it back its automatic title (its first message's).
    #[schemars(length(max = about::NAMED_MAX))]
    title: String,
}

pub fn register(ctx: &Ctx, board: Arc<Switchboard>, home: Arc<PathBuf>) -> Result<(), StartError> {
    let c = ctx.clone();
    let h = home.clone();
    let vyre_home = Arc::new(ctx.home().root().to_path_buf());
    ctx.tool_with(
        ToolDef::new(
            "threads.folders",
            "Folders to start a session in: where the sessions and projects the caller may see ran, with their project and last use, most recent first.",
        )
        .sessions_fenced(),
        &(c, h, vyre_home),
        |(c, home, vyre_home), input: FoldersInput, cx| async move {
                let limit = input.limit.unwrap_or(20).clamp(1, 100) as usize;
                // Read as this module (everything), then narrowed here to what the caller sees:
                // a session, its own threads' folders and its projects'.
                let scope = cx.scope(Reach::Threads).await?;
                let catalog = c
                    .call("projects.catalog", json!({ "limit": 5000 }))
                    .await
                    .unwrap_or_default();
                let projects = c
                    .call("projects.list", json!({}))
                    .await
                    .unwrap_or_default();
                let sessions: Vec<Seen> = catalog
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|e| e["thread"].as_str().is_some_and(|t| scope.sees(t)))
                    .filter_map(|e| {
                        Some(Seen {
                            cwd: e["cwd"].as_str()?.to_string(),
                            project: e["projects"][0].as_str().map(String::from),
                            at: e["last_activity"].as_i64(),
                        })
                    })
                    .collect();
                let homes: Vec<ProjectHome> = projects
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|p| p["name"].as_str().is_some_and(|n| scope.sees_project(n)))
                    .filter_map(|p| {
                        Some(ProjectHome {
                            name: p["name"].as_str()?.to_string(),
                            home: p["home"].as_str()?.to_string(),
                            at: p["last_activity"].as_i64(),
                        })
                    })
                    .collect();
                let query = input.query.unwrap_or_default();
                tokio::task::spawn_blocking(move || Folders {
                    home: home.display().to_string(),
                    folders: recent_folders::suggest(sessions, &homes, &query, &home, limit, |p| {
                        p.is_dir() && !recent_folders::vyres_own(p, &vyre_home)
                    }),
                })
                .await
                .map_err(ToolError::internal)
            },
    )?;

    let c = ctx.clone();
    ctx.tool_with(
        ToolDef::new(
            "threads.rename",
            "Name a thread (an empty name gives it back its first message's words).",
        )
        .finishes()
        .sessions_own_thread("thread"),
        &(c, board),
        |(c, b), input: RenameInput, cx| async move {
            if b.info(&input.thread).await?.is_none() {
                return Err(ToolError::not_found(
                    "unknown_thread",
                    format!(
                        "there is no thread {:?}; threads.list shows them",
                        input.thread
                    ),
                ));
            }
            let name = about::name_from(&input.title)?;
            let about: About = about::rename(&c, &input.thread, name, &cx.caller.label()).await?;
            Ok::<_, ToolError>(about)
        },
    )?;
    Ok(())
}
