//! `threads_runs`: a thread's session, the options a resume reuses, its state and counts.

use std::path::PathBuf;

use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params};

use crate::kernel::contracts::provider::ProcessIds;
use crate::modules::sessions::switchboard::types::{
    PermissionMode, StartRequest, ThreadInfo, ThreadStatus,
};

/// A new row, `starting`, with the options a resume reuses and who started it.
pub fn insert(
    c: &Connection,
    thread: &str,
    req: &StartRequest,
    driver: &str,
    started_by: Option<&str>,
) -> rusqlite::Result<()> {
    let now = crate::now_ms();
    c.execute(
        "INSERT INTO threads_runs (id, provider, driver, purpose, model, cwd, project, agent, auth, mode, status, created_at, updated_at, history, started_by, effort)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, '', ?9, ?10, ?11, ?11, 0, ?12, ?13)",
        params![
            thread,
            req.provider,
            driver,
            req.purpose,
            req.model,
            req.cwd.display().to_string(),
            req.project,
            req.agent,
            req.mode,
            ThreadStatus::Starting,
            now,
            started_by,
            req.effort
        ],
    )?;
    Ok(())
}

const INFO: &str = "SELECT id, provider, purpose, model, cwd, project, agent, auth, mode, status, turns, total_cost_usd, stopped_reason, created_at, updated_at, effort
     FROM threads_runs";

/// One thread, or every thread newest first.
pub fn infos(c: &Connection, thread: Option<&str>) -> rusqlite::Result<Vec<ThreadInfo>> {
    let mut stmt = c.prepare_cached(&format!(
        "{INFO} WHERE (?1 IS NULL OR id = ?1) ORDER BY updated_at DESC"
    ))?;
    let rows = stmt.query_map([thread], info)?;
    rows.collect()
}

/// The threads that belong to a project, newest first: started in `project`, run in one of
/// `folders` or inside one, or one of `threads`. Found by the indexes on `project` and `cwd`
/// and by id, so it costs what the project holds, not every thread Vyre ran.
pub fn belonging(
    c: &Connection,
    project: Option<&str>,
    folders: &[&str],
    threads: &[String],
) -> rusqlite::Result<Vec<ThreadInfo>> {
    let mut params = Vec::new();
    let mut wheres = crate::kernel::folders::ranges("cwd", folders, &mut params);
    if let Some(project) = project {
        params.push(Value::Text(project.to_string()));
        wheres.push(format!("project = ?{}", params.len()));
    }
    if !threads.is_empty() {
        params.push(Value::Text(
            serde_json::to_string(threads).unwrap_or_default(),
        ));
        wheres.push(format!(
            "id IN (SELECT value FROM json_each(?{}))",
            params.len()
        ));
    }
    if wheres.is_empty() {
        return Ok(Vec::new());
    }
    let mut stmt = c.prepare_cached(&format!(
        "{INFO} WHERE {} ORDER BY updated_at DESC",
        wheres.join(" OR ")
    ))?;
    let found = stmt
        .query_map(rusqlite::params_from_iter(params), info)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let named: std::collections::HashSet<&str> = threads.iter().map(String::as_str).collect();
    Ok(found
        .into_iter()
        .filter(|t| {
            project.is_some_and(|p| t.project.as_deref() == Some(p))
                || named.contains(t.thread.as_str())
                || crate::kernel::folders::within(&t.cwd, folders)
        })
        .collect())
}

fn info(r: &rusqlite::Row<'_>) -> rusqlite::Result<ThreadInfo> {
    Ok(ThreadInfo {
        thread: r.get(0)?,
        provider: r.get(1)?,
        purpose: r.get(2)?,
        model: r.get(3)?,
        effort: r.get(15)?,
        cwd: r.get(4)?,
        project: r.get(5)?,
        agent: r.get(6)?,
        auth: r.get(7)?,
        mode: r.get(8)?,
        state: r.get(9)?,
        live: false,
        turns: r.get(10)?,
        total_cost_usd: r.get(11)?,
        stopped_reason: r.get(12)?,
        created_at: r.get(13)?,
        updated_at: r.get(14)?,
    })
}

/// Every thread's id.
pub fn ids(c: &Connection) -> rusqlite::Result<std::collections::HashSet<String>> {
    let mut stmt = c.prepare("SELECT id FROM threads_runs")?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    rows.collect()
}

/// Whether the thread has a row.
pub fn exists(c: &Connection, thread: &str) -> rusqlite::Result<bool> {
    Ok(
        c.query_row("SELECT 1 FROM threads_runs WHERE id = ?1", [thread], |_| {
            Ok(())
        })
        .optional()?
        .is_some(),
    )
}

/// The options the thread was started with (what a resume or a fork reuses) and its turns.
pub fn options(c: &Connection, thread: &str) -> rusqlite::Result<Option<(StartRequest, u64)>> {
    c.query_row(
        "SELECT provider, purpose, model, cwd, project, agent, mode, effort, turns FROM threads_runs WHERE id = ?1",
        [thread],
        |r| Ok((start_request(r)?, r.get::<_, i64>(8)?.max(0) as u64)),
    )
    .optional()
}

/// The options of the last `n` threads started by no session (a person, or a module), newest
/// first: where the next start is likely to be (ADR 0032).
pub fn recent_starts(c: &Connection, n: usize) -> rusqlite::Result<Vec<StartRequest>> {
    let mut stmt = c.prepare(
        "SELECT provider, purpose, model, cwd, project, agent, mode, effort FROM threads_runs
         WHERE started_by IS NULL ORDER BY created_at DESC LIMIT ?1",
    )?;
    let rows = stmt.query_map([n as i64], start_request)?;
    rows.collect()
}

/// A start's options from a row whose first columns are `provider, purpose, model, cwd,
/// project, agent, mode, effort`.
fn start_request(r: &rusqlite::Row<'_>) -> rusqlite::Result<StartRequest> {
    Ok(StartRequest {
        provider: r.get(0)?,
        purpose: r.get(1)?,
        model: r.get(2)?,
        cwd: PathBuf::from(r.get::<_, String>(3)?),
        project: r.get(4)?,
        agent: r.get(5)?,
        mode: r.get(6)?,
        effort: r.get(7)?,
    })
}

/// Whether the thread's transcript is known to have been written (true for an unknown one).
pub fn history(c: &Connection, thread: &str) -> rusqlite::Result<bool> {
    Ok(c.query_row(
        "SELECT history FROM threads_runs WHERE id = ?1",
        [thread],
        |r| r.get::<_, i64>(0),
    )
    .optional()?
    .is_none_or(|h| h != 0))
}

/// Until when the thread runs on the fallback API key, if it does.
pub fn fallback_until(c: &Connection, thread: &str) -> rusqlite::Result<Option<i64>> {
    Ok(c.query_row(
        "SELECT fallback_until FROM threads_runs WHERE id = ?1",
        [thread],
        |r| r.get(0),
    )
    .optional()?
    .flatten())
}

pub fn set_fallback(c: &Connection, thread: &str, until: i64) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE threads_runs SET fallback_until = ?1 WHERE id = ?2",
        params![until, thread],
    )?;
    Ok(())
}

/// When Vyre last changed a thread it did not just adopt (0: never).
pub fn ours_updated_at(c: &Connection, thread: &str) -> rusqlite::Result<i64> {
    Ok(c.query_row(
        "SELECT updated_at FROM threads_runs WHERE id = ?1 AND stopped_reason != 'adopted'",
        [thread],
        |r| r.get(0),
    )
    .optional()?
    .unwrap_or(0))
}

/// An adopted session's row: stopped, with the turns its transcript holds.
pub fn adopted(c: &Connection, thread: &str, turns: i64) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE threads_runs SET status = ?3, stopped_reason = 'adopted', turns = ?2 WHERE id = ?1",
        params![thread, turns, ThreadStatus::Stopped],
    )?;
    Ok(())
}

pub fn set_status(c: &Connection, thread: &str, status: ThreadStatus) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE threads_runs SET status = ?1, updated_at = ?2 WHERE id = ?3",
        params![status, crate::now_ms(), thread],
    )?;
    Ok(())
}

pub fn set_auth(c: &Connection, thread: &str, auth: &str) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE threads_runs SET auth = ?1, updated_at = ?2 WHERE id = ?3",
        params![auth, crate::now_ms(), thread],
    )?;
    Ok(())
}

pub fn set_mode(c: &Connection, thread: &str, mode: PermissionMode) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE threads_runs SET mode = ?1, updated_at = ?2 WHERE id = ?3",
        params![mode, crate::now_ms(), thread],
    )?;
    Ok(())
}

/// The mode the thread's row says it is in (`None`: no such thread, or a mode not Vyre's).
pub fn mode(c: &Connection, thread: &str) -> rusqlite::Result<Option<PermissionMode>> {
    let mode: Option<String> = c
        .query_row(
            "SELECT mode FROM threads_runs WHERE id = ?1",
            [thread],
            |r| r.get(0),
        )
        .optional()?;
    Ok(mode.and_then(|m| m.parse().ok()))
}

pub fn set_effort(c: &Connection, thread: &str, effort: Option<&str>) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE threads_runs SET effort = ?1, updated_at = ?2 WHERE id = ?3",
        params![effort, crate::now_ms(), thread],
    )?;
    Ok(())
}

pub fn set_model(c: &Connection, thread: &str, model: Option<&str>) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE threads_runs SET model = ?1, updated_at = ?2 WHERE id = ?3",
        params![model, crate::now_ms(), thread],
    )?;
    Ok(())
}

/// Its process runs: idle, with its ids; a resume found its history.
pub fn launched(
    c: &Connection,
    thread: &str,
    ids: ProcessIds,
    resumed: bool,
) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE threads_runs SET status = ?6, pid = ?1, pgid = ?2, sid = ?3, stopped_reason = NULL, updated_at = ?4, history = MAX(history, ?7) WHERE id = ?5",
        params![ids.pid, ids.pgid, ids.sid, crate::now_ms(), thread, ThreadStatus::Idle, resumed as i64],
    )?;
    Ok(())
}

/// Turn `turns` runs.
pub fn turn_began(c: &Connection, thread: &str, turns: u64) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE threads_runs SET turns = ?1, status = ?2, updated_at = ?3 WHERE id = ?4",
        params![turns as i64, ThreadStatus::Running, crate::now_ms(), thread],
    )?;
    Ok(())
}

/// The turn reported its result: idle, its cost counted, its transcript written.
/// A turn that cost `cost_usd` ended: the thread's total grows by it (across every process the
/// thread has had), and is returned.
pub fn turn_finished(c: &Connection, thread: &str, cost_usd: f64) -> rusqlite::Result<f64> {
    c.query_row(
        "UPDATE threads_runs SET total_cost_usd = total_cost_usd + ?1, status = ?2, history = 1, updated_at = ?3 WHERE id = ?4
         RETURNING total_cost_usd",
        params![cost_usd, ThreadStatus::Idle, crate::now_ms(), thread],
        |r| r.get(0),
    )
    .optional()
    .map(Option::unwrap_or_default)
}

/// What the thread has cost so far, every process of it together.
pub fn spent(c: &Connection, thread: &str) -> rusqlite::Result<f64> {
    c.query_row(
        "SELECT total_cost_usd FROM threads_runs WHERE id = ?1",
        [thread],
        |r| r.get(0),
    )
    .optional()
    .map(Option::unwrap_or_default)
}

pub fn stopped(c: &Connection, thread: &str, reason: &str) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE threads_runs SET status = ?1, stopped_reason = ?2, updated_at = ?3 WHERE id = ?4",
        params![ThreadStatus::Stopped, reason, crate::now_ms(), thread],
    )?;
    Ok(())
}

/// Who made a thread, and for which agent.
#[derive(Debug, PartialEq, Eq)]
pub struct Owner {
    pub thread: String,
    pub started_by: Option<String>,
    pub agent: Option<String>,
}

/// Every thread's maker and agent (what the Fence decides ownership from).
pub fn owners(c: &Connection) -> rusqlite::Result<Vec<Owner>> {
    let mut stmt = c.prepare("SELECT id, started_by, agent FROM threads_runs")?;
    let rows = stmt.query_map([], |r| {
        Ok(Owner {
            thread: r.get(0)?,
            started_by: r.get(1)?,
            agent: r.get(2)?,
        })
    })?;
    rows.collect()
}

/// The threads a vyred left live when it died, `(thread, status, turns)`, now stopped for
/// `restart` (`updated_at` now: what their processes wrote before they went was Vyre's own).
pub fn stop_left_live(c: &Connection) -> rusqlite::Result<Vec<(String, ThreadStatus, i64)>> {
    let left: Vec<(String, ThreadStatus, i64)> = {
        let mut stmt = c.prepare(
            "SELECT id, status, turns FROM threads_runs WHERE status NOT IN ('stopped', 'failed')",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<Result<_, _>>()?
    };
    c.execute(
        "UPDATE threads_runs SET status = 'stopped', stopped_reason = 'restart', updated_at = ?1
         WHERE status NOT IN ('stopped', 'failed')",
        [crate::now_ms()],
    )?;
    Ok(left)
}
