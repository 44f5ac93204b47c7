//! vyred's lifecycle: lock the home, open the kernel, bind both listeners, start the modules,
//! serve until asked to stop, then shut down gracefully.
//!
//! Binding and serving are separate steps, so the binary, the tests and the Tauri shell start the
//! daemon the same way and can read the bound address before the first request.

use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, UnixListener};

use crate::kernel::config::{self, ConfigError, Role};
use crate::kernel::events::NewEvent;
use crate::kernel::lock::{HomeLock, LockError};
use crate::kernel::module::Module;
use crate::kernel::paths::VyreHome;
use crate::kernel::store::StoreError;
use crate::kernel::{Kernel, ListenerInfo};
use crate::surfaces::api;
use crate::surfaces::api::quiet;

/// How long calls in flight and module tasks get to finish at shutdown.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error("cannot prepare VYRE_HOME at {path}: {source}")]
    Home {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("cannot open the store: {0}")]
    Store(#[from] StoreError),
    #[error("cannot listen on {what} {addr}: {source}")]
    Bind {
        what: &'static str,
        addr: String,
        source: std::io::Error,
    },
}

/// How to start a vyred.
#[derive(Clone)]
pub struct DaemonOptions {
    pub home: VyreHome,
    /// Overrides config and `VYRE_ROLE` (the `--role` flag).
    pub role: Option<Role>,
    /// Overrides config and `VYRE_PORT`.
    pub port: Option<u16>,
    /// Modules to run besides the built-in ones (tests, the Tauri shell's local modules).
    pub extra_modules: Vec<Arc<dyn Module>>,
    /// The user's HOME whose `~/.claude` is read for history; `HOME` when not given.
    pub user_home: Option<std::path::PathBuf>,
    /// The built web app to serve at `/app/`; found by [`api::app::ui_dir`] when not given.
    pub ui_dir: Option<PathBuf>,
    /// The `vyre` binary sessions run for the harness (hooks, MCP); by default this executable
    /// when it is `vyre`, the `bin/vyre` beside its folder when it is `vyred` (the box image's
    /// privileged copy, ADR 0013), otherwise none and sessions run without the harness.
    pub vyre_bin: Option<PathBuf>,
    /// Run once vyred has been quiet for [`quiet::QUIET`] after a request or an event (`vyre
    /// daemon` gives the allocator's freed pages back to the system there).
    pub when_quiet: Option<fn()>,
}

/// The `vyre` that goes with the executable `exe` (see [`DaemonOptions::vyre_bin`]).
fn vyre_beside(exe: &std::path::Path) -> Option<PathBuf> {
    match exe.file_name()?.to_str()? {
        "vyre" => Some(exe.to_path_buf()),
        "vyred" => Some(exe.parent()?.parent()?.join("bin/vyre")).filter(|b| b.is_file()),
        _ => None,
    }
}

impl DaemonOptions {
    pub fn new(home: VyreHome) -> Self {
        DaemonOptions {
            home,
            role: None,
            port: None,
            extra_modules: Vec::new(),
            user_home: None,
            ui_dir: None,
            vyre_bin: None,
            when_quiet: None,
        }
    }
}

/// A vyred that has bound its listeners and not yet started serving.
pub struct Daemon {
    kernel: Kernel,
    unix: UnixListener,
    tcp: TcpListener,
    http_addr: SocketAddr,
    modules: Vec<Arc<dyn Module>>,
    ui_dir: Option<PathBuf>,
    when_quiet: Option<fn()>,
    _lock: HomeLock,
}

impl Daemon {
    /// Prepare the home, take the lock, open the store and bind both listeners.
    pub async fn bind(options: DaemonOptions) -> Result<Daemon, DaemonError> {
        keep_out_of_reach();
        let home = options.home;
        home.ensure().map_err(|source| DaemonError::Home {
            path: home.root().display().to_string(),
            source,
        })?;
        let config = config::load(&home.config_file())?;
        for warning in &config.warnings {
            tracing::warn!("{warning}");
        }
        let lock = HomeLock::acquire(&home.lock_file(), home.root())?;
        let role = options.role.unwrap_or_else(|| config.role());
        let port = options.port.unwrap_or_else(|| config.port());
        let explicit_port = options.port.is_some() || config.config.port.is_some();
        let config_bind = config.bind();
        let kernel = Kernel::open(home.clone(), config, role).await?;
        // The HTTP surface serves each owned session on a socket of its own (ADR 0014).
        kernel
            .provide::<dyn crate::kernel::contracts::sockets::SessionSockets>(
                "vyred",
                api::session_socket::SessionSockets::new(&kernel),
            )
            .expect("the first capability of a new kernel");
        let vyre_bin = options.vyre_bin.clone().or_else(|| {
            std::env::current_exe()
                .ok()
                .and_then(|exe| vyre_beside(&exe))
        });
        if let Some(bin) = vyre_bin {
            kernel.set_vyre_bin(bin);
        }
        if let Some(h) = options.user_home.clone() {
            kernel.set_user_home(h);
        }

        // We hold the lock, so a socket file left here is from a vyred that died.
        let socket = home.socket();
        let _ = std::fs::remove_file(&socket);
        let unix = UnixListener::bind(&socket).map_err(|source| DaemonError::Bind {
            what: "socket",
            addr: socket.display().to_string(),
            source,
        })?;
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600)).map_err(
            |source| DaemonError::Bind {
                what: "socket",
                addr: socket.display().to_string(),
                source,
            },
        )?;
        let tcp = bind_http(config_bind, port, explicit_port).await?;
        let bound = tcp.local_addr().map_err(|source| DaemonError::Bind {
            what: "http",
            addr: format!("{config_bind}:{port}"),
            source,
        })?;
        // Bound to every interface (in a container), it is still reached, and linked to, on
        // loopback: the only Host vyred answers.
        let http_addr = if bound.ip().is_unspecified() {
            SocketAddr::from(([127, 0, 0, 1], bound.port()))
        } else {
            bound
        };
        write_private(&home.addr_file(), &format!("{http_addr}\n")).map_err(|source| {
            DaemonError::Home {
                path: home.addr_file().display().to_string(),
                source,
            }
        })?;
        kernel.set_listeners(vec![
            ListenerInfo {
                kind: "socket".into(),
                address: socket.display().to_string(),
            },
            ListenerInfo {
                kind: "http".into(),
                address: http_addr.to_string(),
            },
        ]);
        let mut modules = crate::modules::modules(&kernel);
        modules.extend(options.extra_modules);
        Ok(Daemon {
            kernel,
            unix,
            tcp,
            http_addr,
            modules,
            ui_dir: options.ui_dir.or_else(api::app::ui_dir),
            when_quiet: options.when_quiet,
            _lock: lock,
        })
    }

    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    pub fn http_addr(&self) -> SocketAddr {
        self.http_addr
    }

    pub fn socket_path(&self) -> PathBuf {
        self.kernel.home().socket()
    }

    /// Start the modules and serve until [`Kernel::request_shutdown`]; then let calls in flight
    /// finish, stop the modules, flush the store and remove the socket and address files.
    pub async fn serve(self) -> Result<(), DaemonError> {
        let Daemon {
            kernel,
            unix,
            tcp,
            modules,
            ui_dir,
            when_quiet,
            _lock,
            ..
        } = self;
        let mut app = api::router(kernel.clone(), ui_dir.as_deref());
        if let Some(then) = when_quiet {
            let activity = quiet::Activity::default();
            app = activity.counting(app);
            quiet::spawn(&kernel, &activity, quiet::QUIET, then);
        }
        kernel.set_app(app.clone());
        crate::kernel::module::load_all(&kernel, modules).await;
        let started = NewEvent::new(
            "daemon.started",
            serde_json::json!({
                "version": crate::kernel::VERSION,
                "role": kernel.role(),
                "pid": std::process::id(),
            }),
        );
        if let Err(e) = kernel.store().write(move |tx| tx.emit(started)).await {
            tracing::warn!(error = %e, "cannot record daemon.started");
        }
        tracing::info!(
            home = %kernel.home().root().display(),
            role = %kernel.role(),
            "vyred is serving"
        );

        let stop = kernel.shutdown_token().clone();
        // Each listener with its own connection cap and the header timeout (`limits`).
        let limits = api::serve::Limits::of(&kernel.config().config.limits);
        let serving = async {
            tokio::join!(
                api::serve::serve(unix, app.clone(), limits, stop.clone()),
                api::serve::serve(tcp, app, limits, stop.clone()),
            );
        };
        tokio::pin!(serving);
        // Serve until asked to stop; then give open connections a bounded time to finish.
        tokio::select! {
            _ = &mut serving => {}
            _ = async { stop.cancelled().await; tokio::time::sleep(DRAIN_TIMEOUT).await } => {
                tracing::warn!("connections still open after {}s; closing them", DRAIN_TIMEOUT.as_secs());
            }
        }
        stop.cancel();
        shutdown(&kernel).await;
        Ok(())
    }
}

/// vyred holds the vault's key and every device's secret in memory: no process of its user may
/// attach to it or read its memory and environment (`/proc/<pid>/mem`, `environ`), which a
/// session that runs as the same user could otherwise do (ADR 0014). Also means no core dumps.
fn keep_out_of_reach() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with plain integer arguments changes only this process's dumpable flag.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

async fn shutdown(kernel: &Kernel) {
    tracing::info!("vyred is stopping");
    let drained = tokio::time::timeout(DRAIN_TIMEOUT, async {
        kernel.registry().drain().await;
        kernel.tasks().close();
        kernel.tasks().wait().await;
    })
    .await;
    if drained.is_err() {
        tracing::warn!("some calls or module tasks did not finish in time");
    }
    let stopped = NewEvent::new(
        "daemon.stopped",
        serde_json::json!({ "pid": std::process::id() }),
    );
    if let Err(e) = kernel.store().write(move |tx| tx.emit(stopped)).await {
        tracing::warn!(error = %e, "cannot record daemon.stopped");
    }
    kernel.store().close().await;
    let _ = std::fs::remove_file(kernel.home().socket());
    let _ = std::fs::remove_file(kernel.home().addr_file());
    tracing::info!("vyred stopped");
}

async fn bind_http(
    ip: std::net::IpAddr,
    port: u16,
    explicit: bool,
) -> Result<TcpListener, DaemonError> {
    let bind = |port: u16| TcpListener::bind(SocketAddr::new(ip, port));
    match bind(port).await {
        Ok(l) => Ok(l),
        Err(e) if !explicit && e.kind() == std::io::ErrorKind::AddrInUse => {
            tracing::warn!(
                port,
                "the default port is taken; listening on a free one instead"
            );
            bind(0).await.map_err(|source| DaemonError::Bind {
                what: "http",
                addr: format!("{ip}:0"),
                source,
            })
        }
        Err(source) => Err(DaemonError::Bind {
            what: "http",
            addr: format!("{ip}:{port}"),
            source,
        }),
    }
}

/// Write a file readable only by vyred's user, replacing it atomically (never through a link).
fn write_private(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    crate::kernel::nofollow::write_atomic(path, text.as_bytes(), 0o600)
        .map_err(std::io::Error::other)
}

#[cfg(test)]
mod vyre_bin_tests {
    use super::vyre_beside;

    #[test]
    fn the_harness_runs_the_vyre_beside_vyred_or_vyre_itself() {
        let dir = std::env::temp_dir().join(format!("vyre-beside-{}", std::process::id()));
        let (libexec, bin) = (dir.join("libexec"), dir.join("bin"));
        std::fs::create_dir_all(&libexec).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        let vyred = libexec.join("vyred");
        assert_eq!(vyre_beside(&vyred), None, "no vyre beside it yet");
        std::fs::write(bin.join("vyre"), b"").unwrap();
        assert_eq!(vyre_beside(&vyred), Some(bin.join("vyre")));
        assert_eq!(vyre_beside(&bin.join("vyre")), Some(bin.join("vyre")));
        assert_eq!(vyre_beside(&bin.join("vyre-app")), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
