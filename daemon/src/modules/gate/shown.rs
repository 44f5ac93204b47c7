//! What a held call shows the person before it goes (floor rules 1 and 2): where it goes and
//! the final content. For `git push`, the remote's address and the commits it would push, read
//! with git under settings that keep a repository's own config from running anything (a session
//! may have written that config).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::classify::Held;
use crate::kernel::shell::program;

/// Characters of content kept; the rest is summarised.
pub const CONTENT_MAX: usize = 64 * 1024;
/// How long git may take to say what a push sends.
const GIT_WAIT: Duration = Duration::from_secs(5);

/// Where it goes, what goes, and which input field an edit replaces.
#[derive(Debug, Clone, Default)]
pub struct Shown {
    pub destination: String,
    pub content: String,
    pub truncated: bool,
    /// The input field the person may edit before approving (`command`, `text` ...).
    pub field: Option<String>,
}

/// What `held` (a call of `tool` with `input` in `folder`) shows.
pub async fn show(held: &Held, tool: &str, input: &Value, folder: Option<&Path>) -> Shown {
    if tool == "Bash" {
        bash(held, input, folder).await
    } else {
        mcp(tool, input)
    }
}

/// `shown` with its content cut at [`CONTENT_MAX`].
pub fn cut(mut shown: Shown) -> Shown {
    if shown.content.len() > CONTENT_MAX {
        let mut cut = CONTENT_MAX;
        while !shown.content.is_char_boundary(cut) {
            cut -= 1;
        }
        shown.content.truncate(cut);
        shown.truncated = true;
    }
    shown
}

async fn bash(held: &Held, input: &Value, folder: Option<&Path>) -> Shown {
    let command = input["command"].as_str().unwrap_or_default().to_string();
    let words = &held.words;
    let plain: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .filter(|w| !w.starts_with('-'))
        .collect();
    let urls = || -> String {
        let u: Vec<&str> = words
            .iter()
            .map(String::as_str)
            .filter(|w| w.contains("://"))
            .collect();
        if u.is_empty() {
            plain
                .iter()
                .skip(1)
                .filter(|w| w.contains('.'))
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        } else {
            u.join(", ")
        }
    };
    let destination = match held.rule.as_str() {
        "git-push" => return git_push(words, command, folder).await,
        "curl-send" | "wget-send" | "httpie-send" => urls(),
        "gh-api" | "gh-pr" | "gh-issue" | "gh-release" | "gh-repo" | "gh-gist" => {
            match words.iter().position(|w| w == "-R" || w == "--repo") {
                Some(i) => format!("GitHub: {}", words.get(i + 1).map_or("", |s| s.as_str())),
                None => "GitHub (this folder's repository)".into(),
            }
        }
        "mail" | "git-send-email" => {
            let to: Vec<&str> = words
                .iter()
                .map(String::as_str)
                .filter(|w| w.contains('@') && !w.starts_with('@'))
                .collect();
            if to.is_empty() {
                "the recipients in the message".into()
            } else {
                to.join(", ")
            }
        }
        "publish" => match plain.first().map(|p| program(p)) {
            Some("npm" | "pnpm" | "yarn" | "bun") => "the npm registry".into(),
            Some("cargo") => "crates.io".into(),
            Some("twine" | "poetry" | "uv") => "PyPI".into(),
            Some("gem") => "RubyGems".into(),
            Some("docker" | "podman") => plain.get(2).map_or("a container registry".into(), |i| {
                format!("the registry of {i}")
            }),
            _ => "a package registry".into(),
        },
        "delete-outside" => {
            let paths: Vec<&str> = plain.iter().skip(1).copied().collect();
            format!("files outside the session's folder: {}", paths.join(" "))
        }
        _ => held.what.clone(),
    };
    Shown {
        destination,
        content: command,
        truncated: false,
        field: Some("command".into()),
    }
}

/// `git push`: the remote's address and what it would send.
async fn git_push(words: &[String], command: String, folder: Option<&Path>) -> Shown {
    let mut dir: Option<PathBuf> = folder.map(Path::to_path_buf);
    let mut args = Vec::new();
    let mut i = 1;
    let mut after_push = false;
    while let Some(w) = words.get(i) {
        if !after_push {
            if w == "-C"
                && let Some(d) = words.get(i + 1)
            {
                dir = Some(match &dir {
                    Some(base) => base.join(d),
                    None => PathBuf::from(d),
                });
                i += 2;
                continue;
            }
            if w == "-c" {
                i += 2;
                continue;
            }
            if w == "push" {
                after_push = true;
            }
        } else if !w.starts_with('-') {
            args.push(w.clone());
        }
        i += 1;
    }
    let remote = args.first().cloned();
    let refspecs: Vec<String> = args.iter().skip(1).cloned().collect();
    let Some(dir) = dir else {
        return Shown {
            destination: remote.unwrap_or_else(|| "the branch's remote".into()),
            content: command,
            truncated: false,
            field: Some("command".into()),
        };
    };
    let remote_name = match remote {
        Some(r) => r,
        None => git(
            &dir,
            &[
                "rev-parse",
                "--abbrev-ref",
                "--symbolic-full-name",
                "@{push}",
            ],
        )
        .await
        .and_then(|s| s.split('/').next().map(String::from))
        .unwrap_or_else(|| "origin".into()),
    };
    let url = if remote_name.contains(':') || remote_name.contains('/') {
        Some(remote_name.clone())
    } else {
        git(&dir, &["remote", "get-url", "--push", &remote_name]).await
    };
    let branch = git(&dir, &["rev-parse", "--abbrev-ref", "HEAD"]).await;
    let what = if refspecs.is_empty() {
        branch
            .clone()
            .unwrap_or_else(|| "the current branch".into())
    } else {
        refspecs.join(" ")
    };
    let destination = match &url {
        Some(url) => format!("{remote_name} ({}) · {what}", url.trim()),
        None => format!("{remote_name} · {what}"),
    };
    // The commits: each refspec's source (or HEAD) that the remote's branches do not have.
    let sources: Vec<String> = if refspecs.is_empty() {
        vec!["HEAD".into()]
    } else {
        refspecs
            .iter()
            .map(|r| {
                r.trim_start_matches('+')
                    .split(':')
                    .next()
                    .unwrap_or("HEAD")
                    .to_string()
            })
            .filter(|s| !s.is_empty())
            .collect()
    };
    let mut log_args: Vec<String> = [
        "log",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-show-signature",
        "--stat",
        "--patch",
        "--max-count=50",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    log_args.extend(sources.iter().filter(|s| !s.starts_with('-')).cloned());
    log_args.push("--not".into());
    log_args.push(format!("--remotes={remote_name}"));
    log_args.push("--".into());
    let refs: Vec<&str> = log_args.iter().map(String::as_str).collect();
    let commits = git(&dir, &refs).await;
    let content = match commits {
        Some(c) if !c.trim().is_empty() => format!("{command}\n\nWhat it pushes:\n\n{c}"),
        Some(_) => format!(
            "{command}\n\n(No commits that {remote_name} does not have; it may still move or delete a branch there.)"
        ),
        None => format!("{command}\n\n(Vyre could not read the commits it pushes.)"),
    };
    Shown {
        destination,
        content,
        truncated: false,
        field: Some("command".into()),
    }
}

/// A git command's output in `dir`, read under settings no repository can override into running
/// a program ([`crate::kernel::git`]), killed after [`GIT_WAIT`]. `None` when it fails.
pub async fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let ran = crate::kernel::git::run(Some(dir), args, &[], GIT_WAIT, CONTENT_MAX * 2)
        .await
        .ok()?;
    let mut text = String::from_utf8_lossy(&ran.stdout).into_owned();
    while text.len() > CONTENT_MAX * 2 {
        text.pop();
    }
    Some(text.trim_end().to_string())
}

/// An MCP tool: its server and whom it addresses; the content is its input.
fn mcp(tool: &str, input: &Value) -> Shown {
    let rest = tool.strip_prefix("mcp__").unwrap_or(tool);
    let (server, _) = rest.split_once("__").unwrap_or((rest, ""));
    let to: Vec<String> = [
        "to",
        "recipient",
        "recipients",
        "channel",
        "chat_id",
        "email",
        "phone",
        "url",
    ]
    .iter()
    .filter_map(|k| match &input[*k] {
        Value::Null => None,
        Value::String(s) => Some(format!("{k}: {s}")),
        v => Some(format!("{k}: {v}")),
    })
    .collect();
    let destination = if to.is_empty() {
        format!("the MCP server {server}")
    } else {
        format!("the MCP server {server} · {}", to.join(", "))
    };
    let field = ["body", "text", "message", "content"]
        .iter()
        .find(|k| input[**k].is_string())
        .map(|k| k.to_string());
    Shown {
        destination,
        content: serde_json::to_string_pretty(input).unwrap_or_default(),
        truncated: false,
        field,
    }
}
