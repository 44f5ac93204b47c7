//! vyred's own memory with idle live sessions: the release binary on a fresh home, 6 Claude
//! threads each through one turn against the fake API, then left alone and read from `/proc`.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::fake_api::FakeApi;
use crate::procfs;
use crate::sessions;
use crate::spawn::{self, Server};

/// Live sessions kept idle.
const SESSIONS: usize = 6;
/// Time after the last turn ends before reading memory.
pub const SETTLE: Duration = Duration::from_secs(5);

pub struct IdleSessions {
    pub sessions: usize,
    pub vyred_rss_kb: u64,
    /// The processes below vyred (the CLIs and whatever runs them) and their total RSS.
    pub children: usize,
    pub children_rss_kb: u64,
    /// The sessions' `vyre mcp` helpers (Vyre's MCP server, one per session): how many, and
    /// their memory summed as RSS (each counts the `vyre` binary's pages it shares with the
    /// others), PSS (shared pages split among their sharers) and private (its own alone).
    pub helpers: usize,
    pub helpers_rss_kb: u64,
    pub helpers_pss_kb: u64,
    pub helpers_private_kb: u64,
}

pub async fn run(cli: &Path) -> Result<IdleSessions, String> {
    let vyred = spawn::vyred()?;
    let api = FakeApi::start().await;
    let url = api.url();
    let mut server = Server::spawn_configured(&vyred, |dir| {
        let work = dir.join("work");
        std::fs::create_dir_all(&work)
            .map_err(|e| format!("cannot create {}: {e}", work.display()))?;
        Ok(Some(sessions::claude_config(cli, &url, &dir.join("home"))))
    })?;
    eprintln!("sessions: {SESSIONS} idle sessions on the release vyred...");
    let result = async {
        server.wait_healthy(Duration::from_millis(10)).await?;
        measure(&server, &server.dir().join("work")).await
    }
    .await;
    let stopped = server.stop().await;
    let idle = result?;
    stopped?;
    Ok(idle)
}

async fn measure(server: &Server, work: &Path) -> Result<IdleSessions, String> {
    let client = vyre::surfaces::client::Client::socket(server.socket());
    sessions::add_key(&client).await?;
    let mut stream = client
        .events("types=thread.finished", None)
        .await
        .map_err(|e| format!("cannot subscribe: {e}"))?;
    let mut threads = HashSet::new();
    for i in 0..SESSIONS {
        let input = json!({ "cwd": work, "text": format!("idle session {i}") });
        threads.insert(sessions::start_thread(&client, input).await?);
    }
    let mut finished = HashSet::new();
    while finished.len() < SESSIONS {
        let (e, _) = sessions::next_event(&mut stream).await?;
        let thread = e["thread"].as_str().unwrap_or_default().to_string();
        if threads.contains(&thread) {
            if e["payload"]["ok"] != true {
                return Err(format!("a first turn failed: {e}"));
            }
            finished.insert(thread);
        }
    }
    let live = client
        .call("threads.pids", &json!({}))
        .await
        .map_err(|e| format!("threads.pids failed: {e}"))?;
    let live = live["pids"].as_array().map_or(0, Vec::len);
    if live != SESSIONS {
        return Err(format!("{live} live sessions, not {SESSIONS}"));
    }
    tokio::time::sleep(SETTLE).await;

    let pid = server.pid();
    let read_err = |e: std::io::Error| format!("cannot read /proc: {e}");
    let vyred_rss_kb = procfs::status_kb(pid, "VmRSS").map_err(read_err)?;
    let below = procfs::descendants(pid).map_err(read_err)?;
    // A process that exits between listing and reading counts as nothing.
    let children_rss_kb = below
        .iter()
        .filter_map(|&p| procfs::status_kb(p, "VmRSS").ok())
        .sum();
    let helpers: Vec<u32> = below
        .iter()
        .copied()
        .filter(|&p| procfs::cmdline(p).is_ok_and(|c| c.ends_with("vyre mcp")))
        .collect();
    let sum = |key: &str| -> u64 {
        helpers
            .iter()
            .filter_map(|&p| procfs::rollup_kb(p, key).ok())
            .sum()
    };
    Ok(IdleSessions {
        sessions: SESSIONS,
        vyred_rss_kb,
        children: below.len(),
        children_rss_kb,
        helpers: helpers.len(),
        helpers_rss_kb: sum("Rss"),
        helpers_pss_kb: sum("Pss"),
        helpers_private_kb: sum("Private_Clean") + sum("Private_Dirty"),
    })
}
