//! Warm spares (issue 26, ADR 0032): a session started ahead, under a thread id made for it,
//! with the flags the next start is likely to ask for, and handed to that start when it comes,
//! so its first words wait only for the model, not for Claude Code to start.
//!
//! - A spare is made like the starts vyred saw most often lately (a person's or a module's,
//!   never one a session asked for), a moment after a start and a little after vyred starts,
//!   up to `sessions.spares` of them within `sessions.spare_memory_mb`, and none on battery.
//! - A start takes the spare made for the same provider, folder, model, effort, mode and agent, and
//!   only after checking it: still running, not older than [`MAX_AGE`], its folder still the
//!   same folder, and the launch the start would make now the same as the spare's (a digest of
//!   everything it was started with: the credential, the agent's instructions and budget, the
//!   plugin, the CLI's program and the settings files it reads at start). Anything else is a
//!   cold start, said in `thread.started` (`warm: false` and why).
//! - Before it is taken, a spare has no row and is no one's: its socket's fence sees nothing,
//!   and its SessionStart brief waits for its first prompt (the harness, ADR 0032).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::FutureExt;

use super::launch::{Plan, Went};
use super::*;
use crate::kernel::contracts::provider::{Readiness, Session};
use crate::modules::sessions::spare_checks;

/// A spare older than this is started again (a token refreshed, the page cache moved on).
pub const MAX_AGE: Duration = Duration::from_secs(30 * 60);
/// How long after a start its spare is made, so a burst of starts is not slowed by spares.
const QUIET: Duration = Duration::from_secs(1);
/// How long after vyred starts the first spare is made.
const AFTER_START: Duration = Duration::from_secs(5);
/// How often held spares are looked at (exited, too old, on battery).
const LOOK: Duration = Duration::from_secs(60);
/// The starts the likely ones are counted from.
const RECENT: usize = 20;
/// A spare's memory before one was measured here (Claude Code 2.1 idle, with the plugin).
const FIRST_GUESS: u64 = 300 * 1024 * 1024;

/// What a start must ask for to take a spare.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    provider: String,
    cwd: PathBuf,
    model: Option<String>,
    effort: Option<String>,
    mode: &'static str,
    agent: Option<String>,
}

impl Key {
    fn of(req: &StartRequest) -> Key {
        Key {
            provider: req.provider.clone(),
            cwd: req.cwd.clone(),
            model: req.model.clone(),
            effort: req.effort.clone(),
            mode: req.mode.as_str(),
            agent: req.agent.clone(),
        }
    }
}

struct Spare {
    thread: String,
    key: Key,
    /// [`spare_checks::digest`] of its launch.
    digest: String,
    folder: Option<(u64, u64)>,
    session: Box<dyn Session>,
    made: Instant,
    rss: u64,
    readiness: Readiness,
}

/// The spares held, and the starts they are made from.
#[derive(Default)]
pub struct Spares {
    // std Mutex: a list looked through or changed, never across an await.
    held: Mutex<Vec<Spare>>,
    /// Spares being started now, so one key is never started twice at once.
    making: Mutex<HashSet<Key>>,
    /// The last [`RECENT`] starts, newest first.
    recent: Mutex<Vec<StartRequest>>,
    /// Moves with every start: a spare is made only once starts are quiet.
    starts: AtomicU64,
    /// The last spare's measured memory.
    measured: AtomicU64,
}

/// A spare as `threads.spares` shows it.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct SpareInfo {
    /// The thread id a start that takes it gets.
    pub thread: String,
    pub provider: String,
    pub cwd: String,
    pub model: Option<String>,
    pub mode: String,
    pub agent: Option<String>,
    /// Its process (Claude Code, or the sandbox, tini or user switch it runs under), its
    /// process session, and the resident memory of every process of that session.
    pub pid: i32,
    pub sid: i32,
    pub rss_bytes: u64,
    /// Seconds since it started.
    pub age_s: u64,
    /// Whether it took its first turn's own work ahead (ADR 0032), so the start that takes it
    /// answers sooner; when not, `not_readied` says why.
    pub readied: bool,
    pub not_readied: Option<String>,
}

/// Why a start did not take a spare.
type Cold = Option<String>;

impl Switchboard {
    fn want_spares(&self) -> usize {
        self.ctx.config().sessions.spares()
    }

    /// Take the spare for `req` if one fits, with the plan a cold start would have made now;
    /// `Err(why)` when there is none to take (`None`: spares are off).
    pub(super) async fn take_spare(
        &self,
        req: &StartRequest,
    ) -> std::result::Result<(Box<dyn Session>, String, Plan), Cold> {
        if self.want_spares() == 0 {
            return Err(None);
        }
        let key = Key::of(req);
        let taken = {
            let mut held = self.spares.held.lock().expect("spares");
            held.iter()
                .position(|s| s.key == key)
                .map(|i| held.remove(i))
        };
        let Some(mut spare) = taken else {
            return Err(Some(
                "no warm spare for this folder and these options".into(),
            ));
        };
        match how_held(&mut spare.session) {
            Held::Quiet => {}
            Held::Gone => {
                self.discard(spare, "it had exited");
                return Err(Some("the warm spare had exited".into()));
            }
            Held::Spoke => {
                self.discard(spare, "it spoke before any message");
                return Err(Some(
                    "the warm spare said something before any message was sent to it".into(),
                ));
            }
        }
        if spare.made.elapsed() > MAX_AGE {
            self.discard(spare, "too old");
            return Err(Some("the warm spare was too old".into()));
        }
        if spare_checks::folder(&req.cwd) != spare.folder {
            self.discard(spare, "its folder was replaced");
            return Err(Some(
                "the folder was replaced since the warm spare started".into(),
            ));
        }
        let plan = match self.plan(&spare.thread, req, false).await {
            Ok(p) => p,
            Err(e) => {
                self.discard(spare, "its launch cannot be checked");
                return Err(Some(e.to_string()));
            }
        };
        let Ok(provider) = self.router.get(&req.provider) else {
            self.discard(spare, "its provider is gone");
            return Err(Some("the provider is gone".into()));
        };
        let now = spare_checks::digest(&plan.launch, &provider.stamp(&req.cwd).await);
        if now != spare.digest {
            self.discard(spare, "what it was started with changed");
            return Err(Some(
                "what a session starts with changed since the warm spare started (Claude Code, its settings, the agent or the credential)".into(),
            ));
        }
        tracing::debug!(thread = %spare.thread, age_ms = spare.made.elapsed().as_millis() as u64, "a warm spare taken");
        Ok((spare.session, spare.thread, plan))
    }

    /// Start a new thread on a spare taken for it: its row, then its actor.
    pub(super) async fn start_on_spare(
        self: &Arc<Self>,
        req: &StartRequest,
        started_by: Option<String>,
        (session, thread, plan): (Box<dyn Session>, String, Plan),
    ) -> Result<String> {
        let let_go = |board: &Switchboard, session: Box<dyn Session>| {
            board.forget_spare(&thread);
            board.ctx.spawn(async move {
                session.stop(STOP_GRACE).await;
            });
        };
        if let Err(e) = self.insert_run(&thread, req, started_by, false).await {
            let_go(self, session);
            return Err(e);
        }
        let ready = match self.make_room().await {
            Ok(()) => self.starting(&thread, &plan.auth).await,
            Err(e) => Err(e),
        };
        if let Err(e) = ready {
            let_go(self, session);
            // Its row exists now: it says it failed, never "starting" for ever (as `launch`).
            self.failed_to_start(&thread, &e.to_string()).await?;
            return Err(e);
        }
        let went = Went::new(plan.agent, plan.auth, Ok(()));
        self.went_live(&thread, req, session, went, 0).await?;
        Ok(thread)
    }

    /// A start happened: count it, and make its spare once starts are quiet.
    pub(super) fn started(self: &Arc<Self>, req: &StartRequest) {
        let wanted = self.want_spares();
        if wanted == 0 {
            return;
        }
        {
            let mut recent = self.spares.recent.lock().expect("spares");
            recent.insert(0, req.clone());
            recent.truncate(RECENT);
        }
        let at = self.spares.starts.fetch_add(1, Ordering::Relaxed) + 1;
        let board = self.clone();
        let stop = self.ctx.shutdown();
        self.ctx.spawn(async move {
            stop.run_until_cancelled(async move {
                tokio::time::sleep(QUIET).await;
                if board.spares.starts.load(Ordering::Relaxed) == at {
                    board.refill().await;
                }
            })
            .await;
        });
    }

    /// At the module's start: the recent starts from the store, spares made for them a little
    /// later, and held spares looked at every [`LOOK`].
    pub fn keep_spares(self: &Arc<Self>) {
        if self.want_spares() == 0 {
            return;
        }
        let board = self.clone();
        let stop = self.ctx.shutdown();
        self.ctx.spawn(async move {
            stop.run_until_cancelled(async move {
                if let Ok(recent) = board
                    .read(|c| Ok(rows::runs::recent_starts(c, RECENT)?))
                    .await
                {
                    *board.spares.recent.lock().expect("spares") = recent;
                }
                tokio::time::sleep(AFTER_START).await;
                loop {
                    board.look_at_spares();
                    board.refill().await;
                    tokio::time::sleep(LOOK).await;
                }
            })
            .await;
        });
    }

    /// The keys spares should be held for now: the most frequent of the recent starts (the
    /// newest first among equals), as many as `sessions.spares`.
    fn likely(&self) -> Vec<StartRequest> {
        let recent = self.spares.recent.lock().expect("spares").clone();
        let mut counted: Vec<(usize, usize, StartRequest)> = Vec::new();
        for (i, req) in recent.into_iter().enumerate() {
            let key = Key::of(&req);
            match counted.iter_mut().find(|(_, _, r)| Key::of(r) == key) {
                Some((n, _, _)) => *n += 1,
                None => counted.push((1, i, req)),
            }
        }
        counted.sort_by_key(|(n, newest, _)| (std::cmp::Reverse(*n), *newest));
        counted
            .into_iter()
            .take(self.want_spares())
            .map(|(_, _, r)| r)
            .collect()
    }

    /// Hold a spare for each likely start, within the count and the memory budget: spares no
    /// longer likely go first.
    async fn refill(self: &Arc<Self>) {
        let likely = self.likely();
        // Nothing started yet and nothing held: not even the battery is asked.
        if likely.is_empty() && self.spares.held.lock().expect("spares").is_empty() {
            return;
        }
        if spare_checks::on_battery() {
            self.drop_spares("on battery");
            return;
        }
        let keys: Vec<Key> = likely.iter().map(Key::of).collect();
        let unlikely: Vec<Spare> = {
            let mut held = self.spares.held.lock().expect("spares");
            let (keep, go): (Vec<Spare>, Vec<Spare>) =
                held.drain(..).partition(|s| keys.contains(&s.key));
            *held = keep;
            go
        };
        for spare in unlikely {
            self.discard(spare, "no longer the likely start");
        }
        for req in likely {
            if let Err(why) = self.make_spare(&req).await {
                tracing::debug!(cwd = %req.cwd.display(), "no warm spare made: {why}");
            }
        }
    }

    /// Start a spare for `req`, unless one is held or being made, or it would not fit.
    async fn make_spare(self: &Arc<Self>, req: &StartRequest) -> std::result::Result<(), String> {
        let key = Key::of(req);
        {
            let held = self.spares.held.lock().expect("spares");
            if held.iter().any(|s| s.key == key) {
                return Ok(());
            }
            let making = self.spares.making.lock().expect("spares").len();
            if held.len() + making >= self.want_spares() {
                return Err("as many spares as sessions.spares are held".into());
            }
            let guess = match self.spares.measured.load(Ordering::Relaxed) {
                0 => FIRST_GUESS,
                m => m,
            };
            let holding: u64 = held.iter().map(|s| s.rss).sum();
            let budget = self.ctx.config().sessions.spare_memory();
            if holding + guess > budget {
                return Err(format!(
                    "a spare (about {} MiB) would pass sessions.spare_memory_mb ({} MiB)",
                    guess >> 20,
                    budget >> 20
                ));
            }
            if !self
                .spares
                .making
                .lock()
                .expect("spares")
                .insert(key.clone())
            {
                return Ok(());
            }
        }
        let made = self.start_spare(req, key.clone()).await;
        self.spares.making.lock().expect("spares").remove(&key);
        let spare = made?;
        self.spares.measured.store(spare.rss, Ordering::Relaxed);
        tracing::debug!(thread = %spare.thread, cwd = %req.cwd.display(), rss_mib = spare.rss >> 20, "a warm spare is held");
        self.spares.held.lock().expect("spares").push(spare);
        Ok(())
    }

    async fn start_spare(
        &self,
        req: &StartRequest,
        key: Key,
    ) -> std::result::Result<Spare, String> {
        if !req.cwd.is_dir() {
            return Err("its folder is gone".into());
        }
        let provider = self.router.get(&req.provider).map_err(|e| e.to_string())?;
        let thread = crate::kernel::ids::uuid_v4();
        let plan = self
            .plan(&thread, req, false)
            .await
            .map_err(|e| e.to_string())?;
        let digest = spare_checks::digest(&plan.launch, &provider.stamp(&req.cwd).await);
        let folder = spare_checks::folder(&req.cwd);
        let mut launch = plan.launch;
        launch.env.extend(self.socket_for(&thread));
        let mut session = match provider.start(launch).await {
            Ok(s) => s,
            Err(e) => {
                self.forget_spare(&thread);
                return Err(e.to_string());
            }
        };
        crate::modules::sessions::changes::follow::read_ahead(&self.ctx, &req.cwd);
        let readiness = match session.prepare().await {
            Ok(readiness) => readiness,
            Err(e) => {
                self.forget_spare(&thread);
                session.stop(STOP_GRACE).await;
                return Err(format!("it could not get ready for its first turn: {e}"));
            }
        };
        let rss = spare_checks::session_rss(session.ids().sid).unwrap_or(0);
        Ok(Spare {
            thread,
            key,
            digest,
            folder,
            session,
            made: Instant::now(),
            rss,
            readiness,
        })
    }

    /// Let go of spares that exited, grew too old, or should not be held on battery.
    fn look_at_spares(&self) {
        let battery = spare_checks::on_battery();
        let gone: Vec<(Spare, &str)> = {
            let mut held = self.spares.held.lock().expect("spares");
            let mut gone = Vec::new();
            let mut keep = Vec::new();
            for mut s in held.drain(..) {
                if battery {
                    gone.push((s, "on battery"));
                } else if !matches!(how_held(&mut s.session), Held::Quiet) {
                    gone.push((s, "it had exited or spoke"));
                } else if s.made.elapsed() > MAX_AGE {
                    gone.push((s, "too old"));
                } else {
                    keep.push(s);
                }
            }
            *held = keep;
            gone
        };
        for (spare, why) in gone {
            self.discard(spare, why);
        }
    }

    /// Stop every spare (the machine went on battery).
    fn drop_spares(&self, why: &str) {
        let all: Vec<Spare> = self.spares.held.lock().expect("spares").drain(..).collect();
        for spare in all {
            self.discard(spare, why);
        }
    }

    /// Stop every spare and wait for them to end (vyred is stopping).
    pub(super) async fn stop_spares(&self) {
        let all: Vec<Spare> = self.spares.held.lock().expect("spares").drain(..).collect();
        for spare in all {
            self.forget_spare(&spare.thread);
            spare.session.stop(STOP_GRACE).await;
        }
    }

    /// Stop a spare and its whole group, and forget its socket and processes.
    fn discard(&self, spare: Spare, why: &str) {
        tracing::debug!(thread = %spare.thread, "a warm spare let go: {why}");
        self.forget_spare(&spare.thread);
        let session = spare.session;
        tokio::spawn(async move {
            session.stop(STOP_GRACE).await;
        });
    }

    fn forget_spare(&self, thread: &str) {
        self.close_socket(thread);
        self.ctx.session_processes().unregister(thread);
    }

    /// The spares held now (`threads.spares`): what each costs is shown, never hidden.
    pub fn spares_held(&self) -> Vec<SpareInfo> {
        self.spares
            .held
            .lock()
            .expect("spares")
            .iter()
            .map(|s| SpareInfo {
                thread: s.thread.clone(),
                provider: s.key.provider.clone(),
                cwd: s.key.cwd.display().to_string(),
                model: s.key.model.clone(),
                mode: s.key.mode.to_string(),
                agent: s.key.agent.clone(),
                pid: s.session.ids().pid,
                sid: s.session.ids().sid,
                rss_bytes: spare_checks::session_rss(s.session.ids().sid).unwrap_or(s.rss),
                age_s: s.made.elapsed().as_secs(),
                readied: s.readiness == Readiness::Readied,
                not_readied: match &s.readiness {
                    Readiness::Readied => None,
                    Readiness::Loaded(why) => Some(why.clone()),
                },
            })
            .collect()
    }
}

/// How a held session is now.
enum Held {
    /// Running, and silent as a session with no message is.
    Quiet,
    /// It said something: a session no one has written to says nothing, so something else wrote
    /// to it (another process of the sessions' user, through its stdin) or it went wrong.
    Spoke,
    /// Its stream closed: its process is gone.
    Gone,
}

fn how_held(session: &mut Box<dyn Session>) -> Held {
    match session.next().now_or_never() {
        None => Held::Quiet,
        Some(None) => Held::Gone,
        Some(Some(said)) => {
            tracing::warn!(?said, "a warm spare spoke before any message; it is let go");
            Held::Spoke
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spare is made with a start's flags; a start asking another effort must not take it.
    #[test]
    fn a_spare_is_taken_only_by_a_start_asking_for_its_effort() {
        let plain = StartRequest {
            cwd: "/w".into(),
            model: Some("opus".into()),
            effort: None,
            purpose: "chat".into(),
            project: None,
            provider: "claude".into(),
            agent: None,
            mode: PermissionMode::Default,
        };
        let high = StartRequest {
            effort: Some("high".into()),
            ..plain.clone()
        };
        assert_ne!(Key::of(&plain), Key::of(&high));
        assert_eq!(Key::of(&high), Key::of(&high.clone()));
    }
}
