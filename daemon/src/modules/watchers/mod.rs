//! `watchers` (spec 7.6, issue 23): small programs Claude or the person writes that Vyre runs on
//! a schedule, each filing what it finds into a project. A watcher is a folder under
//! `VYRE_HOME/watchers/<name>/` ([`folder`]): `watcher.json` ([`spec`]) beside its script. A run
//! ([`run`]) happens in a network sandbox with only its own folder, speaking JSON lines
//! ([`protocol`]); what vyred keeps of it is [`state`].
//!
//! - Trust: a new watcher, and one a session wrote anew, waits paused until the person turns it
//!   on (`watchers.resume`, person only). Turning it on is also when the person grants it the
//!   vault items it `needs` (to `watcher:<name>`); a run gets those and nothing else.
//! - Time: each running watcher has one deadline on the kernel's timer (`run:<name>`) at its
//!   next cron time, so nothing polls. A failed run is tried again sooner (1, 2, 4 ... minutes,
//!   never later than its schedule); [`DISABLE_AFTER`] failures in a row turn it off with why.
//! - Tools: `watchers.create`, `.test` (a dry run: nothing filed), `.run`, `.list`, `.pause`,
//!   `.resume`, `.logs`, `.items`, `.remove` ([`tools`]). Events: `watcher.changed`,
//!   `watcher.ran`, `watcher.failed`, and each item filed as the watcher's own `watch.<name>.*`.

pub mod contain;
pub mod folder;
pub mod protocol;
pub mod run;
pub mod shapes;
pub mod spec;
pub mod state;
pub mod tools;

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::json;

use crate::kernel::contracts::secret::VaultValue;
use crate::kernel::contracts::vault::VaultError;

/// What a run is given of the vault: the items by name, and the env sets' variables.
type Vault = (BTreeMap<String, serde_json::Value>, Vec<(String, String)>);
use crate::kernel::deadlines::Due;
use crate::kernel::events::NewEvent;
use crate::kernel::module::{Ctx, Module, StartFuture};
use crate::kernel::tools::{ErrorKind, ToolError};
use contain::Contain;
use spec::{Schedule, Watcher};

pub struct WatchersModule;

/// Failed runs in a row that turn a watcher off.
pub const DISABLE_AFTER: i64 = 5;
/// Runs at once across all watchers (each is a sandboxed program; two cores here).
const AT_ONCE: usize = 2;
/// The first retry after a failure; each next one waits twice as long, up to an hour.
const RETRY_FIRST_MS: i64 = 60_000;
const RETRY_MOST_MS: i64 = 3_600_000;

/// The runner for `watch.js`, written where vyred keeps what it runs.
const RUNNER: &str = include_str!("runner.mjs");

#[derive(Clone)]
pub struct Watchers {
    inner: Arc<Inner>,
}

struct Inner {
    ctx: Ctx,
    root: PathBuf,
    /// What runs need, or why runs cannot happen here.
    env: Result<run::Env, String>,
    running: Mutex<HashSet<String>>,
    slots: tokio::sync::Semaphore,
}

/// How a run went.
pub struct Outcome {
    pub ok: bool,
    pub items: Vec<protocol::Item>,
    pub logs: Vec<String>,
    pub since: serde_json::Value,
    pub error: Option<String>,
    pub took_ms: i64,
    /// Items new to the project (a real run).
    pub filed: usize,
}

/// What a run is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// On schedule or asked for: items filed, the cursor moved, failures counted.
    Real,
    /// A try: nothing kept. `vault` says whether it is given its granted items (a person's try)
    /// or none (a session's).
    Dry { vault: bool },
}

fn key(name: &str) -> String {
    format!("run:{name}")
}

impl Watchers {
    fn ctx(&self) -> &Ctx {
        &self.inner.ctx
    }

    pub fn root(&self) -> &std::path::Path {
        &self.inner.root
    }

    /// When `w` runs next after `after` (ms), by its schedule in this machine's time zone.
    fn next_cron(w: &Watcher, after: i64) -> Option<i64> {
        let Schedule::Cron(cron) = &w.schedule else {
            return None;
        };
        let after = jiff::Timestamp::from_millisecond(after).ok()?;
        cron.next_after(after, &jiff::tz::TimeZone::system())
            .map(|t| t.as_millisecond())
    }

    /// Set or clear `name`'s deadline from what it is now: running on a schedule, it is due at
    /// its next time (kept when an earlier one is set: a retry, or one missed while down).
    pub async fn schedule(&self, name: &str, keep_earlier: bool) -> Result<Option<i64>, ToolError> {
        let n = name.to_string();
        let st = self.ctx().store().read(move |c| state::get(c, &n)).await?;
        let w = folder::one(self.root(), name).and_then(Result::ok);
        let runs = st.is_some_and(|s| !s.paused && s.disabled.is_none());
        let next = match (&w, runs) {
            (Some(w), true) => Self::next_cron(w, crate::now_ms()),
            _ => None,
        };
        let d = self.ctx().deadlines();
        match next {
            None => {
                d.clear(&key(name)).await?;
                Ok(None)
            }
            Some(at) => {
                if keep_earlier
                    && let Some(set) = d.due_at(&key(name)).await?
                    && set <= at
                {
                    return Ok(Some(set));
                }
                d.set(&key(name), at).await?;
                Ok(Some(at))
            }
        }
    }

    /// The vault items `w` needs, as granted to it, and the variables of the env sets among
    /// them.
    async fn vault_of(&self, w: &Watcher) -> Result<Vault, String> {
        let mut values = BTreeMap::new();
        let mut env = Vec::new();
        for item in &w.needs {
            let value = self
                .ctx()
                .vault()
                .fetch_for_watcher(&w.name, item)
                .await
                .map_err(|e| match e {
                VaultError::NotGranted { .. } => format!(
                    "it needs the vault item {item:?}, which it is given when the person turns it on"
                ),
                VaultError::NotFound => format!(
                    "it needs the vault item {item:?}, which is not in the vault: put it with `vyre vault put {item}`"
                ),
                e => format!("it needs the vault item {item:?}: {e}"),
            })?;
            let given = match &value {
                VaultValue::Env(vars) => {
                    let mut set = serde_json::Map::new();
                    for (k, v) in vars {
                        env.push((k.clone(), v.expose().to_string()));
                        set.insert(k.clone(), v.expose().into());
                    }
                    serde_json::Value::Object(set)
                }
                value => value.primary().expose().into(),
            };
            values.insert(item.clone(), given);
        }
        Ok((values, env))
    }

    /// Run `name` once, for `purpose`. A real run files what it found and keeps its cursor,
    /// or counts the failure; either way it is told as an event.
    pub async fn run(
        &self,
        name: &str,
        purpose: Purpose,
        webhook: Option<serde_json::Value>,
    ) -> Result<Outcome, ToolError> {
        let w = folder::one(self.root(), name)
            .ok_or_else(|| tools::unknown(name))?
            .map_err(|why| ToolError::conflict("broken_watcher", why))?;
        let env = self
            .inner
            .env
            .clone()
            .map_err(|why| ToolError::new(ErrorKind::Unavailable, "cannot_run", why))?;
        if !self
            .inner
            .running
            .lock()
            .expect("running")
            .insert(name.to_string())
        {
            return Err(ToolError::conflict(
                "running",
                format!("watcher {name:?} is running now; try again when it ends"),
            ));
        }
        let _running = Running(self.clone(), name.to_string());
        let _slot = self.inner.slots.acquire().await.map_err(|_| {
            ToolError::new(
                ErrorKind::Unavailable,
                "stopping",
                "vyred is stopping; nothing more runs",
            )
        })?;
        let n = name.to_string();
        let st = self
            .ctx()
            .store()
            .write(move |tx| state::ensure(tx.conn(), &n, crate::now_ms()))
            .await?;
        let vault = match purpose {
            Purpose::Real | Purpose::Dry { vault: true } => self.vault_of(&w).await,
            Purpose::Dry { vault: false } => Ok((BTreeMap::new(), Vec::new())),
        };
        let started = crate::now_ms();
        let ran = match vault {
            Err(why) => {
                let line = format!("failed: {why}");
                Err((why, vec![line]))
            }
            Ok((vault, vars)) => {
                let req = run::Request {
                    since: st.since.clone(),
                    vault,
                    env: vars,
                    dry_run: purpose != Purpose::Real,
                    webhook,
                };
                let w2 = w.clone();
                match tokio::task::spawn_blocking(move || run::run(&w2, &env, &req)).await {
                    Ok(Ok(ran)) => Ok(ran),
                    // The person reads why; the log keeps how it ended too.
                    Ok(Err(run::RunError::Failed {
                        why,
                        status,
                        mut logs,
                    })) => {
                        logs.push(match why.contains(&status) {
                            true => format!("failed: {why}"),
                            false => format!("failed: {why} ({status})"),
                        });
                        Err((why, logs))
                    }
                    Ok(Err(e)) => Err((e.to_string(), vec![format!("failed: {e}")])),
                    Err(e) => {
                        let why = format!("the run was lost: {e}");
                        Err((why.clone(), vec![format!("failed: {why}")]))
                    }
                }
            }
        };
        let took_ms = crate::now_ms() - started;
        let outcome = match ran {
            Ok(r) => {
                let mut logs = r.said.logs;
                if !r.stderr.is_empty() {
                    logs.extend(r.stderr.lines().map(|l| format!("stderr: {l}")));
                }
                Outcome {
                    ok: true,
                    since: r.said.since.clone().unwrap_or(st.since),
                    items: r.said.items,
                    logs,
                    error: None,
                    took_ms,
                    filed: 0,
                }
            }
            Err((why, logs)) => Outcome {
                ok: false,
                items: vec![],
                logs,
                since: st.since,
                error: Some(why),
                took_ms,
                filed: 0,
            },
        };
        if purpose != Purpose::Real {
            return Ok(outcome);
        }
        self.keep(&w, outcome).await
    }

    /// A real run's outcome kept: items filed and told, the log, and the next try.
    async fn keep(&self, w: &Watcher, mut outcome: Outcome) -> Result<Outcome, ToolError> {
        let (name, project, emits) = (w.name.clone(), w.project.clone(), w.emits.clone());
        let now = crate::now_ms();
        let (items, since, ok, error, took) = (
            outcome.items.clone(),
            outcome.since.clone(),
            outcome.ok,
            outcome.error.clone(),
            outcome.took_ms,
        );
        // A failure's own line is among them (`failed: why`, and how it ended).
        let lines = outcome.logs.clone();
        let failures = self
            .ctx()
            .store()
            .write(move |tx| {
                state::log(tx.conn(), &name, &lines, now)?;
                if !ok {
                    let why = error.unwrap_or_default();
                    let failures = state::failed(tx.conn(), &name, &why, DISABLE_AFTER, now)?;
                    let disabled = failures >= DISABLE_AFTER;
                    tx.emit(told(
                        "watcher.failed",
                        &name,
                        &project,
                        json!({ "error": why, "failures": failures, "disabled": disabled }),
                    ))?;
                    if disabled {
                        tx.emit(changed(&name, &project, "disabled"))?;
                    }
                    return Ok((0, failures));
                }
                let filed =
                    state::succeeded(tx.conn(), &name, &project, &items, Some(&since), now)?;
                for (id, item) in &filed {
                    tx.emit(told(
                        &emits,
                        &name,
                        &project,
                        json!({ "item": id, "title": item.title, "url": item.url, "body": item.body }),
                    ))?;
                }
                tx.emit(told(
                    "watcher.ran",
                    &name,
                    &project,
                    json!({ "filed": filed.len(), "took_ms": took }),
                ))?;
                Ok((filed.len(), 0))
            })
            .await?;
        outcome.filed = failures.0;
        if failures.1 > 0 {
            let why = outcome.error.clone().unwrap_or_default();
            self.retry(w, failures.1, &why).await?;
        }
        Ok(outcome)
    }

    /// After `failures` in a row: try again sooner than the schedule would, or stop (disabled,
    /// and the person told on their devices: nothing else would say it stopped).
    async fn retry(&self, w: &Watcher, failures: i64, why: &str) -> Result<(), ToolError> {
        if failures >= DISABLE_AFTER {
            self.ctx().deadlines().clear(&key(&w.name)).await?;
            self.ctx().notify_devices(turned_off(&w.name, why));
            return Ok(());
        }
        let wait = (RETRY_FIRST_MS << (failures - 1).clamp(0, 20)).min(RETRY_MOST_MS);
        let soon = crate::now_ms() + wait;
        let next = Self::next_cron(w, crate::now_ms());
        if next.is_none_or(|n| soon < n) {
            self.ctx().deadlines().set(&key(&w.name), soon).await?;
        }
        Ok(())
    }

    /// A watcher's deadline: its next time is set first (so a run cut short by a stop leaves
    /// the schedule whole), then it runs apart from the timer.
    async fn due(&self, due: Due) -> bool {
        let Some(name) = due.key.strip_prefix("run:").map(str::to_string) else {
            return true;
        };
        if let Err(e) = self.schedule(&name, false).await {
            tracing::warn!(watcher = %name, error = %e, "a watcher's next run could not be set");
            return false;
        }
        let me = self.clone();
        self.ctx().spawn(async move {
            match me.run(&name, Purpose::Real, None).await {
                Ok(_) => {}
                // Running already (asked for by hand): this turn is skipped.
                Err(e) if e.code == "running" => {}
                Err(e) => tracing::warn!(watcher = %name, error = %e, "a watcher did not run"),
            }
        });
        true
    }

    /// At start: every running watcher gets its deadline (one missed while vyred was down
    /// stays, and runs now, once).
    async fn schedule_all(&self) {
        for (name, _) in folder::all(self.root()) {
            if let Err(e) = self.schedule(&name, true).await {
                tracing::warn!(watcher = %name, error = %e, "a watcher could not be scheduled");
            }
        }
    }
}

/// Marks a watcher as running until dropped.
struct Running(Watchers, String);

impl Drop for Running {
    fn drop(&mut self) {
        self.0
            .inner
            .running
            .lock()
            .expect("running")
            .remove(&self.1);
    }
}

/// An event about watcher `name`, in `project`.
fn told(kind: &str, name: &str, project: &str, extra: serde_json::Value) -> NewEvent {
    let mut payload = json!({ "watcher": name, "project": project });
    if let (Some(p), Some(e)) = (payload.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    NewEvent::new(kind, payload).project(project.to_string())
}

/// `push.notify`'s input: watcher `name` was turned off after failing, `why` the last failure.
fn turned_off(name: &str, why: &str) -> serde_json::Value {
    let why: String = why.chars().take(300).collect();
    json!({
        "tag": format!("off:{name}"),
        "title": format!("Watcher {name} was turned off"),
        "body": format!("It failed {DISABLE_AFTER} times in a row, the last: {why}. Its log says more; turn it on again once it is fixed."),
        "url": "/app/watchers",
    })
}

fn changed(name: &str, project: &str, change: &str) -> NewEvent {
    told(
        "watcher.changed",
        name,
        project,
        json!({ "change": change }),
    )
}

/// Where runs find what they need and how they are contained: as the sessions' user where
/// sessions run as one (the box), else in bubblewrap; Node, and the runner (written now).
fn environment(ctx: &Ctx) -> Result<run::Env, String> {
    let sessions = &ctx.config().sessions;
    let contain = match (sessions.uid, sessions.gid) {
        (Some(uid), Some(gid)) => Contain::User { uid, gid },
        _ => Contain::Sandbox {
            bwrap: crate::kernel::jail::bwrap().ok_or_else(|| {
                "bubblewrap (bwrap) is not installed, and watchers run only inside it (or as the sessions' user, sessions.uid)".to_string()
            })?,
        },
    };
    let dir = ctx.home().root().join("runtime");
    crate::kernel::paths::private_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let runner = dir.join("watch-runner.mjs");
    std::fs::write(&runner, RUNNER).map_err(|e| format!("{}: {e}", runner.display()))?;
    Ok(run::Env {
        contain,
        node: crate::kernel::jail::find("node"),
        runner,
    })
}

impl Module for WatchersModule {
    fn name(&self) -> &str {
        "watchers"
    }

    fn manifest(&self) -> &str {
        include_str!("module.json")
    }

    fn start(&self, ctx: Ctx) -> StartFuture {
        Box::pin(async move {
            ctx.store().migrate(state::MIGRATIONS).await?;
            let env = environment(&ctx);
            if let Err(why) = &env {
                tracing::warn!(%why, "watchers cannot run here");
            }
            let w = Watchers {
                inner: Arc::new(Inner {
                    root: folder::root(ctx.home().root()),
                    ctx: ctx.clone(),
                    env,
                    running: Mutex::new(HashSet::new()),
                    slots: tokio::sync::Semaphore::new(AT_ONCE),
                }),
            };
            tools::register(&ctx, &w)?;
            let due = w.clone();
            ctx.deadlines().on_due(move |d| {
                let w = due.clone();
                async move { w.due(d).await }
            });
            w.schedule_all().await;
            Ok(())
        })
    }
}
