//! The kernel: what every part of vyred shares and no module owns. Its libraries are the
//! submodules below; [`Kernel`] is the handle to them (config, store, bus, tools, modules,
//! devices), one cloneable `Arc`. The kernel imports no module (`tests/it/layers.rs`).

pub mod become_user;
pub mod config;
pub mod contracts;
pub mod deadlines;
pub mod device_tokens;
pub mod events;
pub mod floor;
pub mod folders;
pub mod git;
pub mod ids;
pub mod jail;
pub mod link_calls;
pub mod links;
pub mod lock;
pub mod logging;
pub(crate) mod migrations;
pub mod module;
pub mod nofollow;
pub mod outbound;
pub mod owner;
pub mod paths;
pub mod peer;
pub mod presence;
pub mod redact;
pub mod rules;
pub mod shell;
pub mod store;
pub mod tools;
pub mod transcripts;
pub mod unzip;

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Instant;

use serde::Serialize;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::kernel::config::{LoadedConfig, Role};
use crate::kernel::contracts::provider::Providers;
use crate::kernel::contracts::{Capabilities, Capability};
use crate::kernel::device_tokens::Devices;
use crate::kernel::events::Bus;
use crate::kernel::events::streams::Streams;
use crate::kernel::links::Links;
use crate::kernel::module::{ModuleStatus, ModuleTable};
use crate::kernel::owner::Owner;
use crate::kernel::paths::VyreHome;
use crate::kernel::peer::SessionProcesses;
use crate::kernel::store::{Store, StoreError};
use crate::kernel::tools::Registry;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A listener vyred serves on.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ListenerInfo {
    /// `socket` or `http`.
    pub kind: String,
    /// The socket path, or `127.0.0.1:<port>`.
    pub address: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct StoreStatus {
    pub path: String,
    pub size_bytes: u64,
    pub wal_bytes: u64,
    pub events: i64,
    pub latest_event: i64,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ConfigStatus {
    pub file: Option<String>,
    pub warnings: Vec<String>,
}

/// What runs: the answer of `system.status` and `vyre status`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct KernelStatus {
    pub version: String,
    pub role: Role,
    pub pid: u32,
    pub uptime_s: u64,
    pub started_at: i64,
    pub home: String,
    pub modules: Vec<ModuleStatus>,
    pub store: StoreStatus,
    pub listeners: Vec<ListenerInfo>,
    pub config: ConfigStatus,
    /// Open event streams and module listeners.
    pub event_subscribers: usize,
    /// The onboarding has made the owner.
    pub onboarded: bool,
}

struct Inner {
    home: VyreHome,
    config: LoadedConfig,
    role: Role,
    store: Store,
    bus: Bus,
    registry: Registry,
    modules: ModuleTable,
    devices: Devices,
    links: Links,
    /// Calls to paired Vyres down the streams they hold open here.
    link_calls: link_calls::LinkCalls,
    owner: Owner,
    sessions: SessionProcesses,
    /// Open event streams per caller (`limits.streams`).
    streams: Arc<Streams>,
    /// The `vyre` binary sessions run for their hooks and MCP server, when known.
    vyre_bin: std::sync::OnceLock<PathBuf>,
    started: Instant,
    started_at: i64,
    /// The presence assertions accepted so far (`presence`).
    presence: crate::kernel::presence::Ledger,
    /// Every module's due times, and the one timer that hands them over.
    deadlines: deadlines::Deadlines,
    shutdown: CancellationToken,
    tasks: TaskTracker,
    // std RwLock: written once after binding, read by status.
    listeners: RwLock<Vec<ListenerInfo>>,
    /// What modules provide each other (`crate::kernel::contracts`).
    capabilities: Capabilities,
    /// Session providers by name, registered by the modules that declare them.
    providers: Providers,
    /// The user's HOME (whose `~/.claude` holds Claude Code's own history), when not `HOME`.
    user_home: std::sync::OnceLock<PathBuf>,
    /// The HTTP API as served on vyred's listeners, for a module that adds one (the network).
    app: std::sync::OnceLock<axum::Router>,
}

/// The shared state of one vyred. Cheap to clone.
#[derive(Clone)]
pub struct Kernel {
    inner: Arc<Inner>,
}

/// A [`Kernel`] that does not keep it alive.
#[derive(Clone)]
pub struct WeakKernel {
    inner: std::sync::Weak<Inner>,
}

impl WeakKernel {
    /// The kernel, while it lives.
    pub fn upgrade(&self) -> Option<Kernel> {
        self.inner.upgrade().map(|inner| Kernel { inner })
    }
}

impl Kernel {
    /// Open the store (running the kernel's migrations) and load the devices.
    pub async fn open(
        home: VyreHome,
        config: LoadedConfig,
        role: Role,
    ) -> Result<Kernel, StoreError> {
        let bus = Bus::new();
        let path = home.database();
        let store = {
            let bus = bus.clone();
            tokio::task::spawn_blocking(move || Store::open(&path, bus))
                .await
                .map_err(|e| StoreError::Task(e.to_string()))??
        };
        let latest = store.read(crate::kernel::events::log::latest_id).await?;
        bus.set_latest(latest);
        let devices = Devices::load(store.clone()).await?;
        let owner = Owner::load(store.clone()).await?;
        let links = Links::new(store.clone());
        let shutdown = CancellationToken::new();
        let streams = Streams::new(config.config.limits.streams());
        let federated = config.config.link.allow(role);
        let deadlines = deadlines::Deadlines::new(store.clone());
        let tasks = TaskTracker::new();
        tasks.spawn(deadlines.clone().run(shutdown.child_token()));
        Ok(Kernel {
            inner: Arc::new(Inner {
                home,
                config,
                role,
                store,
                bus,
                // Calls in flight end as vyred starts to stop (`tools`).
                registry: Registry::stopped_by(shutdown.child_token()).federating(federated),
                modules: ModuleTable::default(),
                devices,
                links,
                link_calls: Default::default(),
                owner,
                sessions: SessionProcesses::default(),
                streams,
                vyre_bin: std::sync::OnceLock::new(),
                started: Instant::now(),
                started_at: crate::now_ms(),
                presence: Default::default(),
                deadlines,
                shutdown,
                tasks,
                listeners: RwLock::new(Vec::new()),
                capabilities: Capabilities::default(),
                providers: Providers::default(),
                user_home: std::sync::OnceLock::new(),
                app: std::sync::OnceLock::new(),
            }),
        })
    }

    pub fn home(&self) -> &VyreHome {
        &self.inner.home
    }

    /// The user's HOME: where Claude Code keeps its own history (`~/.claude`). `HOME`, unless
    /// the embedder said otherwise before modules started (tests, with a temp HOME).
    pub fn user_home(&self) -> PathBuf {
        self.inner
            .user_home
            .get()
            .cloned()
            .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("/"))
    }

    /// The HTTP API every listener serves, once vyred made it (before the modules start).
    pub fn app(&self) -> Option<axum::Router> {
        self.inner.app.get().cloned()
    }

    pub(crate) fn set_app(&self, app: axum::Router) {
        let _ = self.inner.app.set(app);
    }

    pub(crate) fn set_user_home(&self, home: PathBuf) {
        let _ = self.inner.user_home.set(home);
    }
    pub fn config(&self) -> &LoadedConfig {
        &self.inner.config
    }
    pub fn role(&self) -> Role {
        self.inner.role
    }
    pub fn store(&self) -> &Store {
        &self.inner.store
    }
    pub fn bus(&self) -> &Bus {
        &self.inner.bus
    }
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }
    pub fn modules(&self) -> &ModuleTable {
        &self.inner.modules
    }
    pub fn devices(&self) -> &Devices {
        &self.inner.devices
    }
    /// Process groups of live Claude Code sessions, for the socket's peer check.
    /// The one-time links that give browsers their devices.
    pub fn links(&self) -> &Links {
        &self.inner.links
    }

    /// Calls to paired Vyres that hold a line open here (`link_calls`).
    pub fn link_calls(&self) -> &link_calls::LinkCalls {
        &self.inner.link_calls
    }

    /// Open event streams per caller, and their cap.
    pub fn streams(&self) -> &Arc<Streams> {
        &self.inner.streams
    }

    /// The person this vyred belongs to, once the onboarding has made them.
    pub fn owner(&self) -> &Owner {
        &self.inner.owner
    }

    /// The `vyre` binary a session's hooks and MCP server run: set by the daemon (its own
    /// executable when that is `vyre`), or by whoever embeds it.
    pub fn vyre_bin(&self) -> Option<&PathBuf> {
        self.inner.vyre_bin.get()
    }

    pub(crate) fn set_vyre_bin(&self, bin: PathBuf) {
        let _ = self.inner.vyre_bin.set(bin);
    }

    pub fn session_processes(&self) -> &SessionProcesses {
        &self.inner.sessions
    }
    /// Background tasks of modules, waited for at shutdown.
    pub fn deadlines(&self) -> &deadlines::Deadlines {
        &self.inner.deadlines
    }

    pub fn tasks(&self) -> &TaskTracker {
        &self.inner.tasks
    }
    pub fn shutdown_token(&self) -> &CancellationToken {
        &self.inner.shutdown
    }
    /// Ask vyred to stop gracefully.
    pub fn request_shutdown(&self) {
        self.inner.shutdown.cancel();
    }
    /// Accept a paired Vyre's presence assertion for one call (`presence`).
    pub fn accept_presence(
        &self,
        header: &str,
        device: &crate::kernel::device_tokens::DeviceRef,
        tool: &str,
        body: &[u8],
    ) -> Result<crate::kernel::presence::Claim, crate::kernel::presence::PresenceError> {
        self.inner.presence.accept(
            header,
            &device.id,
            device.public_key.as_ref(),
            tool,
            body,
            self.inner.started_at,
        )
    }

    pub fn uptime_s(&self) -> u64 {
        self.inner.started.elapsed().as_secs()
    }

    /// The session providers modules registered.
    pub fn providers(&self) -> &Providers {
        &self.inner.providers
    }

    /// Hand the kernel capability `C`, as `by` (a module's name, or `vyred` for the daemon's
    /// own); see [`crate::kernel::contracts`].
    pub fn provide<C: Capability + ?Sized>(&self, by: &str, value: Arc<C>) -> Result<(), String> {
        self.inner.capabilities.provide(by, value)
    }

    /// Capability `C`, once its provider has started.
    pub fn get<C: Capability + ?Sized>(&self) -> Option<Arc<C>> {
        self.inner.capabilities.get::<C>()
    }

    /// A handle that does not keep this vyred alive (for what the kernel itself holds).
    pub fn downgrade(&self) -> WeakKernel {
        WeakKernel {
            inner: Arc::downgrade(&self.inner),
        }
    }

    /// The loopback HTTP address (`127.0.0.1:<port>`), once bound.
    pub fn http_address(&self) -> Option<String> {
        self.inner
            .listeners
            .read()
            .expect("listeners")
            .iter()
            .find(|l| l.kind == "http")
            .map(|l| l.address.clone())
    }

    pub(crate) fn set_listeners(&self, listeners: Vec<ListenerInfo>) {
        *self.inner.listeners.write().expect("listeners") = listeners;
    }

    pub async fn status(&self) -> Result<KernelStatus, StoreError> {
        let path = self.inner.store.path().to_path_buf();
        let (events, latest) = self
            .inner
            .store
            .read(|conn| {
                Ok((
                    crate::kernel::events::log::count(conn)?,
                    crate::kernel::events::log::latest_id(conn)?,
                ))
            })
            .await?;
        let size = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let mut wal = path.clone().into_os_string();
        wal.push("-wal");
        Ok(KernelStatus {
            version: VERSION.to_string(),
            role: self.inner.role,
            pid: std::process::id(),
            uptime_s: self.uptime_s(),
            started_at: self.inner.started_at,
            home: self.inner.home.root().display().to_string(),
            modules: self.inner.modules.snapshot(),
            store: StoreStatus {
                path: path.display().to_string(),
                size_bytes: size(&path),
                wal_bytes: size(std::path::Path::new(&wal)),
                events,
                latest_event: latest,
            },
            listeners: self.inner.listeners.read().expect("listeners").clone(),
            config: ConfigStatus {
                file: self
                    .inner
                    .config
                    .file
                    .as_ref()
                    .map(|f| f.display().to_string()),
                warnings: self.inner.config.warnings.clone(),
            },
            event_subscribers: self.inner.bus.subscribers(),
            onboarded: self.inner.owner.exists(),
        })
    }
}
