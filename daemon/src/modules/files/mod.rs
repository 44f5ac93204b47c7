//! `files`: find and look at files on this machine, inside its roots (spec section 3): the
//! config's `roots` and every project's folders. A person's devices (and, later, a paired
//! Vyre) call it; sessions may not (they have their own tools for their own folder, and a
//! session must not read the person's other folders through Vyre). Each tool is a command:
//! `vyre files search <query>`, `vyre files preview <path>`, `vyre files fetch <path>`,
//! `vyre files roots`.
//!
//! - `roots`: the roots, and confining a path to them without following a link;
//! - `search`: the bounded walk behind `files.search`;
//! - `preview`: what `files.preview` shows of a file or folder;
//! - `fetch`: time-limited download links, served by the HTTP surface through `downloads`.

mod fetch;
mod preview;
mod roots;
mod search;
mod thumbnail;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::kernel::module::{Ctx, Module, StartFuture, ToolDef};
use crate::kernel::tools::{NoInput, ToolError};
use preview::Preview;
use roots::Roots;
use search::Results;

pub struct FilesModule;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchInput {
    /// Words that must all be in a file's path under its root (case folded).
    #[schemars(
        length(min = 1, max = 200),
        pattern(crate::kernel::tools::shape::A_WORD)
    )]
    query: String,
    /// How many results (1 to 500, default 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    limit: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreviewInput {
    /// The file or folder: absolute, or from `~`; inside the roots.
    #[schemars(
        length(min = 1, max = 4096),
        pattern(crate::kernel::tools::shape::FILE_PATH)
    )]
    path: String,
    /// How many lines of a text file (1 to 2000, default 200).
    #[serde(default)]
    #[schemars(range(min = 1, max = 2000))]
    lines: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FetchInput {
    /// The file: absolute, or from `~`; inside the roots.
    #[schemars(
        length(min = 1, max = 4096),
        pattern(crate::kernel::tools::shape::FILE_PATH)
    )]
    path: String,
}

/// A folder files may read.
#[derive(Serialize, JsonSchema)]
pub struct RootOut {
    /// From `~` when under the home.
    path: String,
}

/// The roots now: the config's, then the projects' folders (asked of `projects`, when it runs).
pub(crate) async fn roots(ctx: &Ctx) -> Roots {
    let mut folders: Vec<String> = ctx.config().roots.clone();
    if let Ok(Value::Array(projects)) = ctx.call("projects.list", json!({})).await {
        for p in projects {
            folders.extend(p["home"].as_str().map(String::from));
            folders.extend(
                p["workspaces"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|w| w.as_str().map(String::from)),
            );
        }
    }
    let home = ctx.user_home();
    tokio::task::spawn_blocking(move || Roots::new(folders, home))
        .await
        .unwrap_or_else(|_| Roots {
            roots: vec![],
            home: Default::default(),
        })
}

impl Module for FilesModule {
    fn name(&self) -> &str {
        "files"
    }

    fn manifest(&self) -> &str {
        include_str!("module.json")
    }

    fn start(&self, ctx: Ctx) -> StartFuture {
        Box::pin(async move {
            ctx.tool_with(
                ToolDef::new(
                    "files.roots",
                    "The folders files may read: the config's `roots` and every project's folders.",
                ),
                &ctx,
                |c, _: NoInput, _| async move {
                    let roots = roots(&c).await;
                    Ok::<_, ToolError>(
                        roots
                            .roots
                            .iter()
                            .map(|r| RootOut {
                                path: roots.shown(&r.path),
                            })
                            .collect::<Vec<_>>(),
                    )
                },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "files.search",
                    "Files and folders under the roots whose path holds every word of the query, names first; links are never followed.",
                ),
                &ctx,
                |c, input: SearchInput, _| async move {
                    let roots = roots(&c).await;
                    if roots.roots.is_empty() {
                        return Err(roots::FilesError::NoRoots.into());
                    }
                    let limit = input.limit.unwrap_or(50) as usize;
                    tokio::task::spawn_blocking(move || -> Results {
                        search::search(&roots, &input.query, limit)
                    })
                    .await
                    .map_err(ToolError::internal)
                },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "files.preview",
                    "A file's first lines (text), its bytes (a small image), or a folder's entries; inside the roots, never through a link.",
                ),
                &ctx,
                |c, input: PreviewInput, _| async move {
                    let roots = roots(&c).await;
                    let lines = input.lines.unwrap_or(200) as usize;
                    tokio::task::spawn_blocking(move || -> Result<Preview, ToolError> {
                        let target = roots.confine(&input.path)?;
                        let shown = roots.shown(&target.path);
                        Ok(preview::preview(&target, shown, lines)?)
                    })
                    .await
                    .map_err(ToolError::internal)?
                },
            )?;
            let links = fetch::Links::default();
            ctx.tool_with(
                ToolDef::new(
                    "files.fetch",
                    "A download link to a file inside the roots, good for ten minutes: GET it on this Vyre's address. Never through a link; any size, streamed.",
                ),
                &(ctx.clone(), links.clone()),
                |(c, l), input: FetchInput, _| async move { fetch::fetch(&c, &l, input.path).await },
            )?;
            ctx.provide::<dyn crate::kernel::contracts::downloads::Downloads>(
                std::sync::Arc::new(fetch::Served {
                    ctx: ctx.clone(),
                    links,
                }),
            )?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::tools::input::{InputCheck, schema_of};

    /// The schema says which paths files takes, so a path it refuses for its shape never
    /// reaches a handler (and schemathesis sees no valid input refused).
    #[test]
    fn the_schema_takes_paths_from_root_or_home_without_dots() {
        let check = InputCheck::new(&schema_of::<PreviewInput>()).unwrap();
        for good in [
            "/",
            "/etc/hosts",
            "~",
            "~/",
            "~/work/.env",
            "/a//b/",
            "/a/..b",
            "/a/...",
            "/a/b.c",
        ] {
            assert!(check.check(&mut json!({ "path": good })).is_ok(), "{good}");
        }
        for bad in [
            "", "src/a.rs", "~other/x", "/a/../b", "/a/./b", "/..", "~/..", "/a/.", " /a", "~x",
        ] {
            assert!(check.check(&mut json!({ "path": bad })).is_err(), "{bad:?}");
        }
    }
}
