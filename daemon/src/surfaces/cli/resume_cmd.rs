//! `vyre resume <id>`: open a session in this terminal as `claude --resume <id>`, in the folder
//! it ran in (ADR 0030 section 10). A session Vyre runs is handed over first: an idle one is
//! closed; one mid-turn or waiting on a question is left alone, and the command says so.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use serde_json::json;

use super::fail;
use crate::surfaces::client::Client;

pub async fn resume(client: &Client, id: &str) -> i32 {
    let cwd = match client.call("threads.get", &json!({ "thread": id })).await {
        Ok(info) => {
            if info["live"] == true {
                if info["state"] != "idle" {
                    return fail(&format!(
                        "Vyre is running {id} ({}); wait for it, or interrupt it with `vyre threads interrupt {id}`, then try again",
                        info["state"].as_str().unwrap_or("busy")
                    ));
                }
                if let Err(e) = client.call("threads.stop", &json!({ "thread": id })).await {
                    return fail(&format!("cannot hand {id} over: {e}"));
                }
            }
            info["cwd"].as_str().map(PathBuf::from)
        }
        Err(e) if e.code() == Some("unknown_thread") => {
            match client.call("recall.sessions", &json!({})).await {
                Ok(sessions) => sessions
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|s| s["thread"] == id)
                    .and_then(|s| s["cwd"].as_str().map(PathBuf::from)),
                Err(e) => return fail(&e.to_string()),
            }
        }
        Err(e) => return fail(&e.to_string()),
    };
    let Some(cwd) = cwd else {
        return fail(&format!(
            "there is no session {id}; `vyre projects catalog` lists them"
        ));
    };
    if !cwd.is_dir() {
        return fail(&format!(
            "{id} ran in {}, which is not on this machine any more",
            cwd.display()
        ));
    }
    let err = std::process::Command::new("claude")
        .args(["--resume", id])
        .current_dir(&cwd)
        .exec();
    fail(&format!(
        "cannot run `claude --resume {id}` in {}: {err}{}",
        cwd.display(),
        if err.kind() == std::io::ErrorKind::NotFound {
            " (is Claude Code installed and on PATH?)"
        } else {
            ""
        }
    ))
}
