//! A vyred started inside this process through the library API (`Daemon::bind`, `serve`), on a
//! home the caller prepared, and stopped the way the daemon stops itself.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use vyre::daemon::{Daemon, DaemonError, DaemonOptions};
use vyre::kernel::Kernel;
use vyre::kernel::module::Module;
use vyre::kernel::paths::VyreHome;
use vyre::surfaces::client::Client;

/// How long the daemon gets to answer its first health check, and to stop.
const START_TIMEOUT: Duration = Duration::from_secs(30);
const STOP_TIMEOUT: Duration = Duration::from_secs(60);

pub struct InProcess {
    kernel: Kernel,
    socket: PathBuf,
    serving: tokio::task::JoinHandle<Result<(), DaemonError>>,
}

impl InProcess {
    /// Bind and serve on `home` (no TCP port of its own: `port` 0), with `extra` modules, and
    /// wait until `/v1/health` answers on the socket. Modules load before serving starts.
    pub async fn start(home: VyreHome, extra: Vec<Arc<dyn Module>>) -> Result<InProcess, String> {
        // The user's HOME is a folder of the bench's own, never the machine's ~/.claude.
        let user_home = home.root().join("user-home");
        let mut options = DaemonOptions::new(home);
        options.port = Some(0);
        options.user_home = Some(user_home);
        options.extra_modules = extra;
        let daemon = Daemon::bind(options)
            .await
            .map_err(|e| format!("vyred failed to start in-process: {e}"))?;
        let kernel = daemon.kernel().clone();
        let socket = daemon.socket_path();
        let serving = tokio::spawn(daemon.serve());
        let vyred = InProcess {
            kernel,
            socket,
            serving,
        };
        if let Err(e) = wait_healthy(&vyred.socket).await {
            let _ = vyred.stop().await;
            return Err(e);
        }
        Ok(vyred)
    }

    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    pub fn client(&self) -> Client {
        Client::socket(&self.socket)
    }

    /// Ask for a shutdown and wait for `serve` to return.
    pub async fn stop(self) -> Result<(), String> {
        self.kernel.request_shutdown();
        match tokio::time::timeout(STOP_TIMEOUT, self.serving).await {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(e))) => Err(format!("vyred stopped with an error: {e}")),
            Ok(Err(e)) => Err(format!("vyred's task failed: {e}")),
            Err(_) => Err(format!(
                "vyred did not stop within {}s",
                STOP_TIMEOUT.as_secs()
            )),
        }
    }
}

async fn wait_healthy(socket: &Path) -> Result<(), String> {
    let client = Client::socket(socket);
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        match client.get("/v1/health").await {
            Ok(_) => return Ok(()),
            Err(e) if Instant::now() > deadline => {
                return Err(format!("in-process vyred never answered /v1/health: {e}"));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
        }
    }
}
