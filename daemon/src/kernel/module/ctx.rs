//! What a module gets when it starts: its own store namespace, events, calls to other modules'
//! tools, logging, and registration of the tools its manifest declares.

use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{Health, Manifest, ModuleDeadlines, ModuleEvents, ModuleVault, StartError};
use crate::kernel::contracts::Capability;
use crate::kernel::store::{Migration, StoreError, WriteTx};
use crate::kernel::tools::{CallCx, Caller, ForSessions, Need, Target, ToolError, ToolSpec};
use crate::kernel::{Kernel, KernelStatus};

/// A tool's name, description and flags, given at registration.
///
/// Sessions may call a tool only when it says so (issue 17): it names the input field that holds
/// what it acts on (`sessions_own_thread("thread")`), or says its handler fences what it returns
/// (`sessions_fenced()`), or that it carries nothing of anyone's (`sessions_open()`). A tool that
/// says nothing is refused to every session with `403 not_for_sessions`.
pub struct ToolDef {
    name: String,
    description: String,
    person_only: bool,
    finishes: bool,
    for_sessions: ForSessions,
    for_models: bool,
    onboarding: bool,
}

impl ToolDef {
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        ToolDef {
            name: name.into(),
            description: description.into(),
            person_only: false,
            finishes: false,
            for_sessions: ForSessions::No,
            for_models: true,
            onboarding: false,
        }
    }
    /// A browser still in the onboarding may call it: the onboarding's own steps and what its
    /// screens show. Nothing so marked may mint a credential (no `pairing.*`, no `devices.*`),
    /// so the onboarding's fence cannot be left by a door inside it (ADR 0009).
    pub fn onboarding(mut self) -> Self {
        self.onboarding = true;
        self
    }
    /// Vyre's plumbing: a session's processes may call it on its socket (its hooks, the `vyre`
    /// CLI), as its `sessions_*` rule says, but it is not offered to the session's model as a
    /// tool. Fewer tools for every session to load and every request to name, and none a
    /// prompt could steer into Vyre's own machinery.
    pub fn plumbing(mut self) -> Self {
        self.for_models = false;
        self
    }
    /// Only a verified person may call it: never a session, an agent or another module.
    pub fn person_only(mut self) -> Self {
        self.person_only = true;
        self
    }
    /// Once started, it runs to its end even if its caller goes away or vyred stops (shutdown
    /// waits for it). For a tool that changes state in several steps that must not be cut in
    /// the middle; every other call is cancelled with its caller (see [`crate::kernel::tools`]).
    pub fn finishes(mut self) -> Self {
        self.finishes = true;
        self
    }
    /// Sessions may call it on a thread they own (their own, one they started, their agent's):
    /// `field` is the input field that holds the thread.
    pub fn sessions_own_thread(self, field: &'static str) -> Self {
        self.sessions_check(field, Target::Thread, Need::Own)
    }
    /// Sessions may call it on a thread they may read (one they own, or one of their
    /// projects').
    pub fn sessions_see_thread(self, field: &'static str) -> Self {
        self.sessions_check(field, Target::Thread, Need::See)
    }
    /// Sessions may call it on a queued message of a thread they own.
    pub fn sessions_own_queued(self, field: &'static str) -> Self {
        self.sessions_check(field, Target::Queued, Need::Own)
    }
    /// Sessions may call it for the agent they run as (or with the `threads` grant).
    pub fn sessions_own_agent(self, field: &'static str) -> Self {
        self.sessions_check(field, Target::Agent, Need::Own)
    }
    /// Sessions may call it on a project they may see.
    pub fn sessions_see_project(self, field: &'static str) -> Self {
        self.sessions_check(field, Target::Project, Need::See)
    }
    /// Sessions may call it; its handler fences what it does and returns by the caller's
    /// scope (`CallCx::scope`): lists, searches, starts.
    pub fn sessions_fenced(mut self) -> Self {
        self.for_sessions = ForSessions::Fenced;
        self
    }
    /// Any session may call it: it carries nothing of any thread, project or person.
    pub fn sessions_open(mut self) -> Self {
        self.for_sessions = ForSessions::Open;
        self
    }
    fn sessions_check(mut self, field: &'static str, target: Target, need: Need) -> Self {
        self.for_sessions = ForSessions::Check {
            field,
            target,
            need,
        };
        self
    }
}

/// A module's handle on the kernel. Cloneable; clones share everything.
#[derive(Clone)]
pub struct Ctx {
    pub(super) name: Arc<str>,
    pub(super) manifest: Arc<Manifest>,
    pub(super) health: Health,
    pub(super) kernel: Kernel,
    shutdown: CancellationToken,
    /// This module's notices for the person's devices, in the order asked (started on first use).
    notices: Arc<std::sync::OnceLock<tokio::sync::mpsc::UnboundedSender<Value>>>,
}

impl Ctx {
    pub(crate) fn new(kernel: Kernel, manifest: Arc<Manifest>, health: Health) -> Self {
        Ctx {
            name: manifest.name.as_str().into(),
            shutdown: kernel.shutdown_token().child_token(),
            manifest,
            health,
            kernel,
            notices: Arc::default(),
        }
    }

    /// Notify every device the person subscribed (`push.notify {tag, title, body, url, urgent}`,
    /// or `{tag, withdraw: true}`), off the caller's path and in the order asked, so a withdrawal
    /// never overtakes the notice it takes back. A machine with no push module, or no device,
    /// sends nothing; the app still shows what the notice was about.
    pub fn notify_devices(&self, notice: Value) {
        let queue = self.notices.get_or_init(|| {
            let (queue, mut asked) = tokio::sync::mpsc::unbounded_channel::<Value>();
            let (ctx, stop) = (self.clone(), self.shutdown());
            self.spawn(async move {
                loop {
                    let notice = tokio::select! {
                        _ = stop.cancelled() => return,
                        notice = asked.recv() => match notice {
                            Some(n) => n,
                            None => return,
                        },
                    };
                    if let Err(e) = ctx.call("push.notify", notice).await {
                        tracing::debug!(module = %ctx.name, error = %e, "a notice was not pushed");
                    }
                }
            });
            queue
        });
        let _ = queue.send(notice);
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The module's own namespace in the store.
    pub fn store(&self) -> ModuleStore {
        ModuleStore { ctx: self.clone() }
    }

    /// Values from the vault, for the items this module's manifest declares under `needs.vault`
    /// and a person granted to it.
    pub fn vault(&self) -> ModuleVault {
        ModuleVault { ctx: self.clone() }
    }

    /// Register a session provider this module declares under `does.providers`.
    pub fn provider(
        &self,
        provider: Arc<dyn crate::kernel::contracts::provider::Provider>,
    ) -> Result<(), StartError> {
        let name = provider.id().to_string();
        let declared = self
            .manifest
            .does
            .providers
            .iter()
            .any(|p| match p.strip_suffix('*') {
                Some(family) => name.len() > family.len() && name.starts_with(family),
                None => *p == name,
            });
        if !declared {
            return Err(format!(
                "provider {name:?} is not declared in {}'s manifest (does.providers)",
                self.name
            )
            .into());
        }
        Ok(self.kernel.providers().register(provider)?)
    }

    /// Hand other modules capability `C` (see [`crate::kernel::contracts`]): only a module whose
    /// manifest lists `C::NAME` under `does.provides` may, and only one module per capability.
    pub fn provide<C: Capability + ?Sized>(&self, value: Arc<C>) -> Result<(), StartError> {
        if !self.manifest.does.provides.iter().any(|p| p == C::NAME) {
            return Err(format!(
                "capability {:?} is not declared in {}'s manifest (does.provides)",
                C::NAME,
                self.name
            )
            .into());
        }
        Ok(self.kernel.provide(&self.name, value)?)
    }

    /// Capability `C`, once the module that provides it has started.
    pub fn get<C: Capability + ?Sized>(&self) -> Option<Arc<C>> {
        self.kernel.get::<C>()
    }

    /// Calls to a paired Vyre's tools (`contracts::remote`), once the pairing module started;
    /// a module that uses it lists `pairing` under `requires`.
    pub fn remote(&self) -> Option<Arc<dyn crate::kernel::contracts::remote::Remote>> {
        self.get::<dyn crate::kernel::contracts::remote::Remote>()
    }

    /// The threads module hands the registry its Fence here (what a session may act on and
    /// see): the module that declares `fence` under `does.provides`.
    pub fn provide_fence(
        &self,
        fence: Arc<dyn crate::kernel::tools::Fence>,
    ) -> Result<(), StartError> {
        if !self.manifest.does.provides.iter().any(|p| p == "fence") {
            return Err(format!(
                "module {} may not provide the fence (does.provides)",
                self.name
            )
            .into());
        }
        self.kernel.registry().set_fence(fence);
        Ok(())
    }

    /// Emit, follow and read events.
    pub fn events(&self) -> ModuleEvents {
        ModuleEvents::new(self.clone())
    }

    /// Call another module's tool, through the same checks as any caller.
    pub async fn call(&self, tool: &str, input: Value) -> Result<Value, ToolError> {
        let caller = Caller::Module {
            name: self.name.to_string(),
        };
        self.kernel.registry().call(tool, input, caller).await
    }

    /// Call another module's tool for the caller of this module's own tool: a person's call
    /// that is made of other tools (the onboarding storing a credential) runs with that
    /// person's rights, never more. The caller is what vyred verified, passed along unchanged.
    pub async fn call_as(
        &self,
        caller: &Caller,
        tool: &str,
        input: Value,
    ) -> Result<Value, ToolError> {
        self.kernel
            .registry()
            .call(tool, input, caller.clone())
            .await
    }

    /// The tools `caller` may call, as vyred lists them to it (what a session is offered).
    pub fn tools_for(&self, caller: &Caller) -> Vec<Arc<ToolSpec>> {
        self.kernel.registry().specs_for(caller)
    }

    /// Register a tool declared under `does.tools`. Its input and output schemas come from `I`
    /// and `O`; input that does not deserialize into `I` is refused before `f` runs.
    pub fn tool<I, O, F, Fut>(&self, def: ToolDef, f: F) -> Result<(), StartError>
    where
        F: Fn(I, CallCx) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
        I: DeserializeOwned + JsonSchema + 'static,
        O: Serialize + JsonSchema + 'static,
    {
        if !self.manifest.does.tools.contains(&def.name) {
            return Err(format!(
                "tool {:?} is not declared in {}'s manifest (does.tools)",
                def.name, self.name
            )
            .into());
        }
        let (input_schema, output_schema, handler) = crate::kernel::tools::typed(f);
        // A checked field that the input does not have would never be checked: refuse it here.
        if let ForSessions::Check { field, .. } = &def.for_sessions
            && input_schema["properties"].get(*field).is_none()
        {
            return Err(format!(
                "tool {:?} checks sessions on input field {field:?}, which its input does not have",
                def.name
            )
            .into());
        }
        let spec = ToolSpec {
            cli: self.manifest.shows_on_cli(&def.name),
            onboarding: def.onboarding,
            module: self.name.to_string(),
            name: def.name,
            description: def.description,
            person_only: def.person_only,
            for_sessions: def.for_sessions,
            for_models: def.for_models,
            input_schema: crate::kernel::tools::schema_text(&input_schema),
            output_schema: crate::kernel::tools::schema_text(&output_schema),
        };
        self.kernel
            .registry()
            .insert(spec, handler, self.health.clone(), def.finishes);
        Ok(())
    }

    /// Register a tool whose handler takes a clone of `state` first, as axum's `State` does:
    /// `ctx.tool_with(ToolDef::new("devices.list", ".."), &devices, list)?` with
    /// `async fn list(d: Devices, _: NoInput, _: CallCx) -> Result<Vec<Device>, ToolError>`.
    pub fn tool_with<S, I, O, F, Fut>(
        &self,
        def: ToolDef,
        state: &S,
        f: F,
    ) -> Result<(), StartError>
    where
        S: Clone + Send + Sync + 'static,
        F: Fn(S, I, CallCx) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
        I: DeserializeOwned + JsonSchema + 'static,
        O: Serialize + JsonSchema + 'static,
    {
        let state = state.clone();
        self.tool(def, move |input: I, cx| f(state.clone(), input, cx))
    }

    /// Run a task that belongs to this module: if it panics, the module is disabled.
    /// It should end when [`Ctx::shutdown`] is cancelled.
    pub fn spawn<F>(&self, fut: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let health = self.health.clone();
        let name = self.name.clone();
        let task = tokio::spawn(fut);
        self.kernel.tasks().spawn(async move {
            if let Err(e) = task.await
                && e.is_panic()
            {
                let why = crate::kernel::tools::panic_message(e.into_panic());
                tracing::error!(module = %name, panic = %why, "a module task panicked; the module is disabled");
                health.disable(format!("a task panicked: {why}"));
            }
        });
    }

    /// This module's due times ([`crate::kernel::deadlines`]): one timer for all of vyred.
    pub fn deadlines(&self) -> ModuleDeadlines {
        ModuleDeadlines::of(self.clone())
    }

    /// Cancelled when vyred stops.
    pub fn shutdown(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Serve the HTTP API on `listener` as vyred serves it on its own, until `stop` (a child of
    /// [`Ctx::shutdown`], so it also fires when vyred stops): the network's listener, inside
    /// its tunnel.
    pub fn serve<L>(&self, listener: L, stop: CancellationToken) -> Result<(), String>
    where
        L: crate::surfaces::api::serve::Serves,
    {
        let app = self
            .kernel
            .app()
            .ok_or("vyred has no HTTP API to serve yet")?;
        let limits = crate::surfaces::api::serve::Limits::of(&self.kernel.config().config.limits);
        self.spawn(crate::surfaces::api::serve::serve(
            listener, app, limits, stop,
        ));
        Ok(())
    }

    /// A tracing span naming this module, for its log lines.
    pub fn span(&self) -> tracing::Span {
        tracing::info_span!("module", name = %self.name)
    }

    /// What runs: version, role, uptime, modules, store, listeners.
    pub async fn kernel_status(&self) -> Result<KernelStatus, StoreError> {
        self.kernel.status().await
    }

    /// The process groups of live Claude Code sessions: the sessions layer registers each
    /// session's group here so that its processes are never taken for a person on the socket.
    pub fn session_processes(&self) -> &crate::kernel::peer::SessionProcesses {
        self.kernel.session_processes()
    }

    /// Whether this module has been disabled (by a panic or a failed start).
    pub fn disabled_reason(&self) -> Option<String> {
        self.health.disabled_reason()
    }

    /// The configuration vyred started with.
    pub fn config(&self) -> &crate::kernel::config::Config {
        &self.kernel.config().config
    }

    /// Box or Local.
    pub fn role(&self) -> crate::kernel::config::Role {
        self.kernel.role()
    }

    /// `VYRE_HOME`.
    pub fn home(&self) -> &crate::kernel::paths::VyreHome {
        self.kernel.home()
    }

    /// The user's HOME (whose `~/.claude` holds Claude Code's own history).
    pub fn user_home(&self) -> std::path::PathBuf {
        self.kernel.user_home()
    }

    /// The HOME sessions run with: what a typed `~` means ([`crate::kernel::folders::sessions_home`]).
    pub fn sessions_home(&self) -> Result<std::path::PathBuf, String> {
        crate::kernel::folders::sessions_home(self.config(), self.user_home())
    }

    /// The `vyre` binary sessions run for their hooks and MCP server, when known.
    pub fn vyre_bin(&self) -> Option<&std::path::PathBuf> {
        self.kernel.vyre_bin()
    }

    /// The person this vyred belongs to, once the onboarding has made them.
    pub fn owner(&self) -> &crate::kernel::owner::Owner {
        self.kernel.owner()
    }

    /// End the onboarding in one transaction: make the owner named `name`, keep the finishing
    /// browser's device (`keep`: its id and the name it asked for) as a `browser`, revoke every
    /// other onboarding device and spend every onboarding link. Refused once there is an owner.
    pub async fn end_onboarding(
        &self,
        name: &str,
        keep: Option<(String, Option<String>)>,
    ) -> Result<crate::kernel::owner::Ended, ToolError> {
        crate::kernel::owner::end_onboarding(&self.kernel, &self.name, name, keep).await
    }

    /// The one-time links that give browsers their devices.
    pub fn links(&self) -> &crate::kernel::links::Links {
        self.kernel.links()
    }

    /// Calls to the paired Vyres that hold a line open here (`kernel::link_calls`).
    pub fn link_calls(&self) -> &crate::kernel::link_calls::LinkCalls {
        self.kernel.link_calls()
    }

    /// The credentials of HTTP callers.
    pub fn devices(&self) -> &crate::kernel::device_tokens::Devices {
        self.kernel.devices()
    }

    /// The loopback HTTP address (`127.0.0.1:<port>`), once bound.
    pub fn http_address(&self) -> Option<String> {
        self.kernel.http_address()
    }

    /// Ask vyred to stop gracefully.
    pub fn request_shutdown(&self) {
        self.kernel.request_shutdown()
    }
}

/// A module's namespace in the store: tables named `<module>_...`, numbered migrations.
pub struct ModuleStore {
    ctx: Ctx,
}

impl ModuleStore {
    /// Bring the module's tables up to the last migration.
    pub async fn migrate(&self, migrations: &'static [Migration]) -> Result<usize, StoreError> {
        let path = self.ctx.kernel.store().path().to_path_buf();
        let name = self.ctx.name.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = crate::kernel::store::open_connection(&path, false)?;
            Ok(crate::kernel::store::migrate(&mut conn, &name, migrations)?)
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// A read on a pooled read connection.
    pub async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Connection) -> Result<T, StoreError> + Send + 'static,
    {
        self.ctx.kernel.store().read(f).await
    }

    /// A write in its own savepoint; events it emits are checked against the manifest and
    /// broadcast after the commit.
    pub async fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteTx<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        let manifest = self.ctx.manifest.clone();
        self.ctx
            .kernel
            .store()
            .write_as(&self.ctx.name, move |tx| {
                tx.restrict_to(manifest);
                f(tx)
            })
            .await
    }
}
