//! The watchers' tools. The person sees and does everything; a session sees and changes only
//! the watchers of projects it may see (others are "not here"), and never turns one on: what it
//! writes waits, paused, for the person, who sees what the watcher needs from the vault.

use serde_json::json;

use super::folder::{self, WriteError};
use super::shapes::*;
use super::spec::{Declared, Schedule};
use super::state;
use super::{Purpose, Watchers, changed, key};
use crate::kernel::module::{Ctx, StartError, ToolDef};
use crate::kernel::tools::{CallCx, Caller, Reach, ToolError};

/// Files `watchers.source` shows.
const SHOWN_FILES: usize = 50;

pub fn unknown(name: &str) -> ToolError {
    ToolError::not_found(
        "unknown_watcher",
        format!("there is no watcher {name:?} here (watchers.list lists them)"),
    )
}

impl Watchers {
    /// `name` as it is now, for the tools.
    async fn shown(&self, name: &str) -> Result<Shown, ToolError> {
        let read = folder::one(self.root(), name).ok_or_else(|| unknown(name))?;
        let n = name.to_string();
        let now = crate::now_ms();
        let st = self
            .ctx()
            .store()
            .write(move |tx| state::ensure(tx.conn(), &n, now))
            .await?;
        // A watcher that is off has no next run, even in the moment before its deadline is
        // cleared (a list read on its `watcher.changed` can fall there).
        let next_run_at = match st.paused || st.disabled.is_some() {
            true => None,
            false => self.ctx().deadlines().due_at(&key(name)).await?,
        };
        let (project, schedule, emits, needs, problem) = match read {
            Ok(w) => {
                let declared = std::fs::read_to_string(w.folder.join(super::spec::FILE))
                    .ok()
                    .and_then(|t| serde_json::from_str::<Declared>(&t).ok());
                (
                    Some(w.project),
                    declared.map(|d| d.schedule),
                    Some(w.emits),
                    w.needs,
                    None,
                )
            }
            Err(why) => (None, None, None, vec![], Some(why)),
        };
        Ok(Shown {
            name: name.to_string(),
            project,
            schedule,
            emits,
            needs,
            paused: st.paused,
            waiting: st.waiting,
            disabled: st.disabled,
            failures: st.failures,
            last_run_at: st.last_run_at,
            last_ok_at: st.last_ok_at,
            last_error: st.last_error,
            next_run_at,
            zone: jiff::tz::TimeZone::system()
                .iana_name()
                .unwrap_or("UTC")
                .to_string(),
            created_by: st.created_by,
            filed: st.filed,
            problem,
            hook: None,
        })
    }

    /// Whether `cx` may see a watcher of `project`: a person and the assistant every one, a
    /// session only those of the projects it sees.
    async fn may(&self, cx: &CallCx, project: Option<&str>) -> Result<bool, ToolError> {
        let scope = cx.scope(Reach::Projects).await?;
        Ok(scope.is_everything()
            || scope.sees_every_project()
            || project.is_some_and(|p| scope.sees_project(p)))
    }

    /// `name` for `cx`, or "not here" when it may not see it.
    async fn seen(&self, name: &str, cx: &CallCx) -> Result<Shown, ToolError> {
        let shown = self.shown(name).await?;
        if !self.may(cx, shown.project.as_deref()).await? {
            return Err(unknown(name));
        }
        Ok(shown)
    }

    async fn list(&self, input: ListInput, cx: CallCx) -> Result<Vec<Shown>, ToolError> {
        let mut out = Vec::new();
        for (name, _) in folder::all(self.root()) {
            let shown = self.shown(&name).await?;
            if input
                .project
                .as_ref()
                .is_some_and(|p| shown.project.as_ref() != Some(p))
            {
                continue;
            }
            if self.may(&cx, shown.project.as_deref()).await? {
                out.push(shown);
            }
        }
        Ok(out)
    }

    async fn create(&self, input: CreateInput, cx: CallCx) -> Result<Shown, ToolError> {
        // The project must be one here, and one the caller sees.
        self.ctx()
            .call_as(
                &cx.caller,
                "projects.get",
                json!({ "project": input.project }),
            )
            .await?;
        if let Some(Ok(old)) = folder::one(self.root(), &input.name)
            && input.replace
            && !self.may(&cx, Some(&old.project)).await?
        {
            // Another project's watcher is not this session's to rewrite.
            return Err(WriteError::Exists(input.name).into());
        }
        let declared = Declared {
            name: input.name.clone(),
            project: input.project.clone(),
            schedule: input.schedule,
            needs: input.needs,
            emits: input.emits,
            run: input.run,
            timeout_s: input.timeout_s,
        };
        let file = input
            .file
            .unwrap_or_else(|| super::spec::DEFAULT_SCRIPT.into());
        let root = self.root().to_path_buf();
        let (replace, script) = (input.replace, input.script);
        let (written, replaced) = tokio::task::spawn_blocking(move || {
            folder::write(&root, &declared, &file, &script, replace)
        })
        .await
        .map_err(ToolError::internal)??;
        let by = match &cx.caller {
            Caller::Session {
                thread: Some(t), ..
            } => t.clone(),
            c if c.is_person() => "person".to_string(),
            c => c.label(),
        };
        let (name, project) = (input.name, input.project);
        let secret = matches!(written.schedule, Schedule::Webhook).then(hook_secret);
        let hash = secret.as_deref().map(digest);
        let (n, p) = (name.clone(), project.clone());
        self.ctx()
            .store()
            .write(move |tx| {
                state::written(tx.conn(), &n, &by, crate::now_ms())?;
                state::set_hook(tx.conn(), &n, hash.as_deref())?;
                tx.emit(changed(
                    &n,
                    &p,
                    if replaced { "replaced" } else { "created" },
                ))
            })
            .await?;
        self.schedule(&name, false).await?;
        let mut shown = self.shown(&name).await?;
        shown.hook = secret.map(|s| format!("/v1/hooks/{name}/{s}"));
        Ok(shown)
    }

    /// Its webhook was called: with the right secret, a watcher that is on runs with what it
    /// was called with. A wrong name or secret is told as one, so neither can be guessed apart.
    async fn hook(&self, input: HookInput) -> Result<Accepted, ToolError> {
        let wrong =
            || ToolError::not_found("unknown_hook", "there is no webhook here at that address");
        let n = input.name.clone();
        let kept = self
            .ctx()
            .store()
            .read(move |c| state::hook_hash(c, &n))
            .await?
            .ok_or_else(wrong)?;
        let given = digest(&input.secret);
        if !bool::from(subtle::ConstantTimeEq::ct_eq(
            kept.as_bytes(),
            given.as_bytes(),
        )) {
            return Err(wrong());
        }
        let shown = self.shown(&input.name).await?;
        if shown.paused || shown.disabled.is_some() {
            return Err(ToolError::conflict(
                "paused",
                format!("watcher {:?} is not on; its person turns it on", input.name),
            ));
        }
        let me = self.clone();
        let body = input.body;
        self.ctx().spawn(async move {
            if let Err(e) = me.run(&input.name, Purpose::Real, Some(body)).await {
                tracing::warn!(watcher = %input.name, error = %e, "a webhook's run did not happen");
            }
        });
        Ok(Accepted { accepted: true })
    }

    async fn set_paused(&self, name: &str, paused: bool, cx: CallCx) -> Result<Shown, ToolError> {
        let shown = self.seen(name, &cx).await?;
        let project = shown.project.clone().ok_or_else(|| {
            ToolError::conflict("broken_watcher", shown.problem.clone().unwrap_or_default())
        })?;
        if !paused {
            // Turning it on is the person's grant of what it needs.
            for item in &shown.needs {
                self.ctx()
                    .call_as(
                        &cx.caller,
                        "vault.grant",
                        json!({ "item": item, "to": format!("watcher:{name}") }),
                    )
                    .await
                    .map_err(|e| {
                        ToolError::conflict(
                            "needs_missing",
                            format!(
                                "it needs the vault item {item:?}, which cannot be granted: {} (put it with `vyre vault put {item}`)",
                                e.message
                            ),
                        )
                    })?;
            }
        }
        let n = name.to_string();
        self.ctx()
            .store()
            .write(move |tx| {
                state::set_paused(tx.conn(), &n, paused)?;
                tx.emit(changed(
                    &n,
                    &project,
                    if paused { "paused" } else { "resumed" },
                ))
            })
            .await?;
        self.schedule(name, false).await?;
        if !paused && shown.disabled.is_some() {
            // On again: the notice that it was turned off goes from the devices.
            self.ctx()
                .notify_devices(json!({ "tag": format!("off:{name}"), "withdraw": true }));
        }
        self.shown(name).await
    }

    async fn try_it(
        &self,
        input: NameInput,
        purpose: Purpose,
        cx: CallCx,
    ) -> Result<Tried, ToolError> {
        let shown = self.seen(&input.name, &cx).await?;
        if purpose == Purpose::Real && (shown.paused || shown.disabled.is_some()) {
            return Err(ToolError::conflict(
                "paused",
                format!(
                    "watcher {:?} is not on; the person turns it on with watchers.resume (watchers.test tries it without filing)",
                    input.name
                ),
            ));
        }
        let o = self.run(&input.name, purpose, None).await?;
        Ok(Tried {
            ok: o.ok,
            items: o.items,
            logs: o.logs,
            since: o.since,
            error: o.error,
            took_ms: o.took_ms,
            filed: o.filed,
        })
    }

    /// Its `watcher.json` and its script, as they are on disk now.
    async fn source(&self, input: NameInput, cx: CallCx) -> Result<Source, ToolError> {
        self.seen(&input.name, &cx).await?;
        let folder = self.root().join(&input.name);
        tokio::task::spawn_blocking(move || {
            let all = folder::files(&folder);
            let digest = folder::digest(&all);
            let shown = all.iter().take(SHOWN_FILES).map(|(name, path)| {
                let bytes = std::fs::read(path).unwrap_or_default();
                let text = if bytes.len() > folder::MAX_SCRIPT {
                    format!("({} KiB: too large to show)", bytes.len() / 1024)
                } else {
                    String::from_utf8(bytes).unwrap_or_else(|_| "(not text: not shown)".to_string())
                };
                SourceFile {
                    name: name.clone(),
                    text,
                }
            });
            Source {
                files: shown.collect(),
                left_out: all.len().saturating_sub(SHOWN_FILES),
                digest,
            }
        })
        .await
        .map_err(ToolError::internal)
    }

    /// Turn `name` on, as the person read it when they give the digest of what they read.
    async fn resume(&self, input: ResumeInput, cx: CallCx) -> Result<Shown, ToolError> {
        let Some(read) = input.digest.clone() else {
            return self.set_paused(&input.name, false, cx).await;
        };
        let changed = || {
            ToolError::conflict(
                "changed",
                format!(
                    "watcher {:?} was rewritten since you read it: read what it runs now before turning it on",
                    input.name
                ),
            )
        };
        if self.digest_of(&input.name).await? != read {
            return Err(changed());
        }
        let on = self.set_paused(&input.name, false, cx.clone()).await?;
        // Rewritten in the moment between the check and turning it on: off again.
        if self.digest_of(&input.name).await? != read {
            self.set_paused(&input.name, true, cx).await?;
            return Err(changed());
        }
        Ok(on)
    }

    async fn digest_of(&self, name: &str) -> Result<String, ToolError> {
        let folder = self.root().join(name);
        tokio::task::spawn_blocking(move || folder::digest(&folder::files(&folder)))
            .await
            .map_err(ToolError::internal)
    }

    async fn logs(&self, input: LogsInput, cx: CallCx) -> Result<Logs, ToolError> {
        self.seen(&input.name, &cx).await?;
        let (n, limit) = (input.name, input.limit.unwrap_or(100) as i64);
        let lines = self
            .ctx()
            .store()
            .read(move |c| state::lines(c, &n, limit))
            .await?;
        Ok(Logs {
            lines: lines
                .into_iter()
                .map(|(at, line)| Line { at, line })
                .collect(),
        })
    }

    async fn items(&self, input: ItemsInput, cx: CallCx) -> Result<Items, ToolError> {
        let scope = cx.scope(Reach::Projects).await?;
        let everything = scope.is_everything() || scope.sees_every_project();
        if let Some(p) = &input.project
            && !everything
            && !scope.sees_project(p)
        {
            return Err(crate::kernel::tools::fence::not_your_project(p));
        }
        let fence: Option<Vec<String>> = match (&input.project, everything) {
            (Some(p), _) => Some(vec![p.clone()]),
            (None, true) => None,
            (None, false) => Some(
                scope
                    .visible()
                    .map(|v| v.iter().cloned().collect())
                    .unwrap_or_default(),
            ),
        };
        let limit = input.limit.unwrap_or(100) as i64;
        let name = input.name;
        let items = self
            .ctx()
            .store()
            .read(move |c| state::items(c, name.as_deref(), fence.as_deref(), limit))
            .await?;
        Ok(Items { items })
    }

    async fn remove(&self, input: NameInput, cx: CallCx) -> Result<Shown, ToolError> {
        let shown = self.seen(&input.name, &cx).await?;
        let root = self.root().to_path_buf();
        let n = input.name.clone();
        tokio::task::spawn_blocking(move || folder::remove(&root, &n))
            .await
            .map_err(ToolError::internal)?
            .map_err(WriteError::Io)?;
        let (n, p) = (
            input.name.clone(),
            shown.project.clone().unwrap_or_default(),
        );
        self.ctx()
            .store()
            .write(move |tx| {
                state::remove(tx.conn(), &n)?;
                tx.emit(changed(&n, &p, "removed"))
            })
            .await?;
        self.ctx().deadlines().clear(&key(&input.name)).await?;
        if cx.caller.is_person() {
            // Whatever it was granted goes back with it (also items an older version needed).
            let to = format!("watcher:{}", input.name);
            let listed = self
                .ctx()
                .call_as(&cx.caller, "vault.list", json!({}))
                .await
                .unwrap_or_default();
            let granted = listed.as_array().into_iter().flatten().filter(|i| {
                i["grants"]
                    .as_array()
                    .is_some_and(|g| g.iter().any(|g| g == to.as_str()))
            });
            for item in granted {
                let _ = self
                    .ctx()
                    .call_as(
                        &cx.caller,
                        "vault.revoke",
                        json!({ "item": item["name"], "to": to }),
                    )
                    .await;
            }
        }
        Ok(shown)
    }
}

/// A new webhook secret: 32 random bytes, base64url.
fn hook_secret() -> String {
    use base64::Engine;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the OS random source");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// What is kept of a webhook secret.
fn digest(secret: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(secret.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl From<WriteError> for ToolError {
    fn from(e: WriteError) -> Self {
        match e {
            WriteError::Invalid(why) => ToolError::invalid(why),
            WriteError::Exists(_) => ToolError::conflict("exists", e.to_string()),
            WriteError::Io(_) => ToolError::internal(e),
        }
    }
}

pub fn register(ctx: &Ctx, w: &Watchers) -> Result<(), StartError> {
    ctx.tool_with(
        ToolDef::new(
            "watchers.create",
            "Write a watcher: a script Vyre runs on a schedule, filing what it finds into a project. It waits, paused, until the person turns it on.",
        )
        .sessions_fenced(),
        w,
        |w, input: CreateInput, cx| async move { w.create(input, cx).await },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "watchers.list",
            "Watchers, with how their last runs went and when they run next.",
        )
        .sessions_fenced(),
        w,
        |w, input: ListInput, cx| async move { w.list(input, cx).await },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "watchers.test",
            "Try a watcher once: what it would file and say, with nothing filed (a session's try gets no vault items).",
        )
        .sessions_fenced(),
        w,
        |w, input: NameInput, cx| async move {
            let vault = cx.caller.is_person();
            w.try_it(input, Purpose::Dry { vault }, cx).await
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "watchers.run",
            "Run a watcher that is on now, filing what it finds.",
        )
        .sessions_fenced(),
        w,
        |w, input: NameInput, cx| async move { w.try_it(input, Purpose::Real, cx).await },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "watchers.pause",
            "Stop a watcher running until it is turned on again.",
        )
        .sessions_fenced(),
        w,
        |w, input: NameInput, cx| async move { w.set_paused(&input.name, true, cx).await },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "watchers.resume",
            "Turn a watcher on, granting it the vault items it needs; a person's decision.",
        )
        .person_only(),
        w,
        |w, input: ResumeInput, cx| async move { w.resume(input, cx).await },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "watchers.hook",
            "A webhook watcher's address was called (POST /v1/hooks/<name>/<secret>): it runs with what it was sent.",
        ),
        w,
        |w, input: HookInput, _| async move { w.hook(input).await },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "watchers.source",
            "A watcher's files (watcher.json and its script) as they are: what it will run.",
        )
        .sessions_fenced(),
        w,
        |w, input: NameInput, cx| async move { w.source(input, cx).await },
    )?;
    ctx.tool_with(
        ToolDef::new("watchers.logs", "The last lines a watcher's runs wrote.").sessions_fenced(),
        w,
        |w, input: LogsInput, cx| async move { w.logs(input, cx).await },
    )?;
    ctx.tool_with(
        ToolDef::new("watchers.items", "What watchers filed, the newest first.").sessions_fenced(),
        w,
        |w, input: ItemsInput, cx| async move { w.items(input, cx).await },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "watchers.remove",
            "Remove a watcher (what it filed stays in its project).",
        )
        .sessions_fenced(),
        w,
        |w, input: NameInput, cx| async move { w.remove(input, cx).await },
    )?;
    Ok(())
}
