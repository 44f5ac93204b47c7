//! The daemon the app talks to: the same `vyre` library embedded in Local role and served on
//! this process's runtime, or, when a vyred already runs for this `VYRE_HOME`, that one
//! (attached: the app never starts a second, and never stops one it did not start).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use vyre::daemon::{Daemon, DaemonOptions};
use vyre::kernel::Kernel;
use vyre::kernel::config::Role;
use vyre::kernel::paths::VyreHome;
use vyre::surfaces::client::Client;

pub enum Mode {
    /// Started here; stopped when the app quits.
    Embedded {
        kernel: Kernel,
        task: tauri::async_runtime::JoinHandle<()>,
    },
    /// Another process's vyred.
    Attached,
}

pub struct DaemonHost {
    pub home: VyreHome,
    pub http: SocketAddr,
    pub mode: Mode,
}

impl DaemonHost {
    /// Attach to a running vyred, or bind and serve one in Local role.
    pub async fn start_or_attach(home: VyreHome) -> Result<DaemonHost, String> {
        let client = Client::socket(home.socket());
        if client.get("/v1/health").await.is_ok() {
            let addr = std::fs::read_to_string(home.addr_file())
                .map_err(|e| format!("vyred runs but its address file cannot be read: {e}"))?;
            let http = addr
                .trim()
                .parse()
                .map_err(|e| format!("vyred's address {addr:?} is not an address: {e}"))?;
            tracing::info!(%http, "attached to the running vyred");
            return Ok(DaemonHost {
                home,
                http,
                mode: Mode::Attached,
            });
        }
        let mut options = DaemonOptions::new(home.clone());
        options.role = Some(Role::Local);
        options.vyre_bin = sibling_vyre();
        let daemon = Daemon::bind(options).await.map_err(|e| e.to_string())?;
        let kernel = daemon.kernel().clone();
        let http = daemon.http_addr();
        let task = tauri::async_runtime::spawn(async move {
            if let Err(e) = daemon.serve().await {
                tracing::error!("the embedded vyred stopped: {e}");
            }
        });
        // Serving starts once the modules are loaded: wait until it answers.
        for _ in 0..400 {
            if client.get("/v1/health").await.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        tracing::info!(%http, "started the embedded vyred");
        Ok(DaemonHost {
            home,
            http,
            mode: Mode::Embedded { kernel, task },
        })
    }

    pub fn client(&self) -> Client {
        Client::socket(self.home.socket())
    }

    pub fn embedded(&self) -> bool {
        matches!(self.mode, Mode::Embedded { .. })
    }

    /// Stop the embedded vyred and wait for it (calls in flight finish, the store is flushed);
    /// an attached one is left running.
    pub async fn stop(self) {
        if let Mode::Embedded { kernel, task } = self.mode {
            kernel.request_shutdown();
            if tokio::time::timeout(Duration::from_secs(30), task)
                .await
                .is_err()
            {
                tracing::warn!("the embedded vyred did not stop within 30 s");
            }
        }
    }
}

/// The `vyre` binary beside the app's own (what sessions' hooks and MCP server run).
fn sibling_vyre() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let vyre = exe.parent()?.join("vyre");
    vyre.is_file().then_some(vyre)
}
