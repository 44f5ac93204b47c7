//! `vyre` with no arguments: the home (spec section 10). Every project with its thread count
//! and last activity, a new session without a project, and every agent. Picking a project shows
//! its sessions newest first, to resume in this terminal or to start anew; picking an agent talks
//! to it. Arrow keys and type-to-filter in a terminal; a plain list when piped. Inside a
//! project's folder, that project is preselected (not opened).

use std::fmt;
use std::io::IsTerminal;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use inquire::{Select, Text};
use serde_json::{Value, json};

use super::{fail, resume_cmd};
use crate::surfaces::client::{Client, ClientError};

enum Item {
    Project {
        name: String,
        home: PathBuf,
        threads: u64,
        last: Option<i64>,
    },
    NewSession,
    Agent {
        name: String,
        kind: String,
        /// What its current thread is doing, when it is live.
        doing: Option<String>,
        /// Its current thread, if it has one.
        thread: Option<String>,
    },
}

impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Item::Project {
                name,
                threads,
                last,
                ..
            } => write!(
                f,
                "{name}  ·  {threads} thread{}  ·  {}",
                if *threads == 1 { "" } else { "s" },
                ago(*last)
            ),
            Item::NewSession => write!(f, "+ New session (no project)"),
            Item::Agent {
                name, kind, doing, ..
            } => write!(
                f,
                "@{name}{}{}",
                if kind == "assistant" {
                    "  ·  your assistant"
                } else {
                    ""
                },
                match doing.as_deref() {
                    Some("running") => "  ·  working",
                    Some("waiting") => "  ·  waiting for you",
                    Some(_) => "  ·  idle",
                    None => "",
                }
            ),
        }
    }
}

enum Pick {
    New(PathBuf),
    Session { id: String, label: String },
}

impl fmt::Display for Pick {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pick::New(_) => write!(f, "+ New session here"),
            Pick::Session { label, .. } => f.write_str(label),
        }
    }
}

/// "3 min ago", "2 h ago", "5 d ago".
fn ago(at: Option<i64>) -> String {
    let Some(at) = at else {
        return "no activity yet".into();
    };
    let s = ((crate::now_ms() - at) / 1000).max(0);
    match s {
        0..60 => "just now".into(),
        60..3600 => format!("{} min ago", s / 60),
        3600..86_400 => format!("{} h ago", s / 3600),
        _ => format!("{} d ago", s / 86_400),
    }
}

async fn items(client: &Client) -> Result<Vec<Item>, ClientError> {
    let projects = client.call("projects.list", &json!({})).await?;
    let agents = client.call("agents.list", &json!({})).await?;
    let threads = client.call("threads.list", &json!({})).await?;
    let doing = |thread: &Value| {
        threads
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["thread"] == *thread && t["live"] == true)
            .and_then(|t| t["state"].as_str().map(String::from))
    };
    let mut items: Vec<Item> = projects
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| Item::Project {
            name: p["name"].as_str().unwrap_or("?").to_string(),
            home: PathBuf::from(p["home"].as_str().unwrap_or("/")),
            threads: p["threads"].as_u64().unwrap_or(0),
            last: p["last_activity"].as_i64(),
        })
        .collect();
    items.push(Item::NewSession);
    items.extend(
        agents
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| Item::Agent {
                name: a["name"].as_str().unwrap_or("?").to_string(),
                kind: a["kind"].as_str().unwrap_or("agent").to_string(),
                doing: doing(&a["thread"]),
                thread: a["thread"].as_str().map(String::from),
            }),
    );
    Ok(items)
}

pub async fn home(client: &Client) -> i32 {
    let items = match items(client).await {
        Ok(items) => items,
        Err(e) => return fail(&e.to_string()),
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        print_plain(&items);
        return 0;
    }
    // Inside a project's folder, that project: vyred says which (`projects.at` for this
    // process's folder).
    let here_name = client
        .call("projects.at", &json!({}))
        .await
        .ok()
        .and_then(|at| at["project"].as_str().map(String::from));
    let here = items
        .iter()
        .position(|i| matches!(i, Item::Project { name, .. } if Some(name) == here_name.as_ref()))
        .unwrap_or(0);
    let mut items = items;
    let mut start = here;
    loop {
        let chosen = Select::new("Vyre", items)
            .with_starting_cursor(start)
            .with_page_size(15)
            .with_help_message("↑↓ to move, type to filter, enter to open, esc to leave")
            .raw_prompt_skippable();
        let chosen = match chosen {
            Ok(Some(c)) => c,
            Ok(None) => return 0,
            Err(e) => return fail(&e.to_string()),
        };
        start = chosen.index;
        match chosen.value {
            Item::NewSession => return claude_in(&cwd, &[]),
            Item::Agent { name, thread, .. } => return talk(client, &name, thread).await,
            Item::Project { name, home, .. } => {
                match sessions(client, &name, &home).await {
                    Ok(Some(Pick::New(dir))) => return claude_in(&dir, &[]),
                    Ok(Some(Pick::Session { id, .. })) => {
                        return resume_cmd::resume(client, &id).await;
                    }
                    // Esc: back to the home.
                    Ok(None) => {}
                    Err(code) => return code,
                }
            }
        }
        items = match self::items(client).await {
            Ok(items) => items,
            Err(e) => return fail(&e.to_string()),
        };
    }
}

fn print_plain(items: &[Item]) {
    println!("Projects");
    let mut any = false;
    for i in items {
        if let Item::Project { home, .. } = i {
            any = true;
            println!("  {i}  ·  {}", home.display());
        }
    }
    if !any {
        println!("  (none yet: `vyre projects create <name> --home <folder>`)");
    }
    println!("{}", Item::NewSession);
    println!("Agents");
    let agents: Vec<&Item> = items
        .iter()
        .filter(|i| matches!(i, Item::Agent { .. }))
        .collect();
    if agents.is_empty() {
        println!("  (none yet)");
    }
    for a in agents {
        println!("  {a}");
    }
}

/// A project's sessions, newest first; `Ok(None)` when the person went back.
async fn sessions(client: &Client, project: &str, home: &Path) -> Result<Option<Pick>, i32> {
    let catalog = client
        .call("projects.catalog", &json!({ "project": project }))
        .await
        .map_err(|e| fail(&e.to_string()))?;
    let mut picks = vec![Pick::New(home.to_path_buf())];
    for s in catalog.as_array().into_iter().flatten() {
        let words = s["title"]
            .as_str()
            .or(s["first_message"].as_str())
            .unwrap_or("(no words yet)");
        let words: String = words
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(60)
            .collect();
        picks.push(Pick::Session {
            id: s["thread"].as_str().unwrap_or_default().to_string(),
            label: format!(
                "{words}  ·  {}  ·  {}{}",
                ago(s["last_activity"].as_i64()),
                s["source"].as_str().unwrap_or("terminal"),
                if s["live"] == true { "  ·  live" } else { "" }
            ),
        });
    }
    Select::new(project, picks)
        .with_page_size(15)
        .with_help_message("enter to resume in this terminal, esc to go back")
        .prompt_skippable()
        .map_err(|e| fail(&e.to_string()))
}

/// Talk to an agent: one message, its reply streamed here. While the person writes it, the
/// agent's thread, if closed, is resumed (`threads.warm`), so the message finds it running, as
/// the app does (issue 26).
async fn talk(client: &Client, agent: &str, thread: Option<String>) -> i32 {
    let warming = thread.map(|thread| {
        let client = client.clone();
        tokio::spawn(async move {
            if let Err(e) = client
                .call("threads.warm", &json!({ "thread": thread }))
                .await
            {
                tracing::debug!("the agent's thread was not warmed: {e}");
            }
        })
    });
    // The prompt blocks; on its own thread, so the warm goes on meanwhile.
    let label = format!("Say to @{agent}:");
    let said = tokio::task::spawn_blocking(move || Text::new(&label).prompt_skippable()).await;
    let text = match said {
        Ok(Ok(Some(t))) if !t.trim().is_empty() => t,
        Ok(Ok(_)) => return 0,
        Ok(Err(e)) => return fail(&e.to_string()),
        Err(e) => return fail(&e.to_string()),
    };
    // A send while the warm still runs is fine: vyred starts a thread's session once.
    drop(warming);
    let mut stream = match client
        .events("types=thread.text,thread.finished,ask.raised", None)
        .await
    {
        Ok(s) => s,
        Err(e) => return fail(&e.to_string()),
    };
    let asked = match client
        .call("agents.ask", &json!({ "agent": agent, "text": text }))
        .await
    {
        Ok(a) => a,
        Err(e) => return fail(&e.to_string()),
    };
    let thread = asked["thread"].as_str().unwrap_or_default().to_string();
    while let Some(Ok(msg)) = stream.next().await {
        let Ok(e) = serde_json::from_str::<Value>(&msg.data) else {
            continue;
        };
        if e["thread"] != thread.as_str() {
            continue;
        }
        match e["type"].as_str() {
            Some("thread.text") if e["payload"]["kind"].is_null() => {
                if let Some(d) = e["payload"]["delta"].as_str() {
                    print!("{d}");
                    let _ = std::io::Write::flush(&mut std::io::stdout());
                }
            }
            Some("ask.raised") => println!(
                "\n[@{agent} asks: {} — answer it in the app or with `vyre threads answer {} allow`]",
                e["payload"]["summary"].as_str().unwrap_or(""),
                e["payload"]["ask"].as_str().unwrap_or("")
            ),
            Some("thread.finished") => {
                println!();
                return 0;
            }
            _ => {}
        }
    }
    0
}

/// Replace this process with `claude` in `dir`.
fn claude_in(dir: &Path, args: &[&str]) -> i32 {
    let err = std::process::Command::new("claude")
        .args(args)
        .current_dir(dir)
        .exec();
    fail(&format!(
        "cannot run `claude` in {}: {err} (is Claude Code installed and on PATH?)",
        dir.display()
    ))
}
