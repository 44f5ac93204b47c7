//! Temp homes, and starting and stopping a server process (the release vyred, or the Node.js
//! reference) the same way for every benchmark.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::process::{Child, Command};
use vyre::surfaces::client::Client;

/// How long a server gets to answer its first health check, and to stop.
const START_TIMEOUT: Duration = Duration::from_secs(30);
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// A fresh private folder under the system temp dir, removed when dropped.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new(tag: &str) -> Result<TempDir, String> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "vyre-bench-{}-{tag}-{n}-{}",
            std::process::id(),
            vyre::now_ms()
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        Ok(TempDir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Create `vyre_home` (private, as vyred wants it) and write `config` as its `config.json`.
pub fn write_config(vyre_home: &Path, config: &Value) -> Result<(), String> {
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(vyre_home)
        .map_err(|e| format!("cannot create {}: {e}", vyre_home.display()))?;
    let file = vyre::kernel::paths::VyreHome::at(vyre_home).config_file();
    std::fs::write(&file, config.to_string())
        .map_err(|e| format!("cannot write {}: {e}", file.display()))
}

/// Which server to start.
#[derive(Clone)]
pub enum Kind {
    /// `vyre daemon` from this binary's folder.
    Vyred(PathBuf),
    /// `node bench/reference/idle-server.js`.
    Node(PathBuf),
    /// `vyre daemon` run by valgrind's callgrind, which writes every function it ran to `out`
    /// when the daemon exits (`vyre-bench --startup-order`).
    Callgrind { vyre: PathBuf, out: PathBuf },
}

impl Kind {
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Vyred(_) => "vyred",
            Kind::Node(_) => "node reference",
            Kind::Callgrind { .. } => "vyred under callgrind",
        }
    }

    /// Under valgrind a start takes tens of times longer.
    fn start_timeout(&self) -> Duration {
        match self {
            Kind::Callgrind { .. } => START_TIMEOUT * 10,
            _ => START_TIMEOUT,
        }
    }
}

/// `valgrind --tool=callgrind` recording to `out`, with names as the linker sees them.
pub fn callgrind(out: &Path) -> Command {
    let mut c = Command::new("valgrind");
    c.arg("--tool=callgrind")
        .arg("-q")
        .arg("--demangle=no")
        .arg("--compress-strings=no")
        .arg(format!("--callgrind-out-file={}", out.display()));
    c
}

/// The release `vyre` binary next to this one, or how to build it.
pub fn vyred() -> Result<Kind, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let vyre = dir.join("vyre");
    if vyre.is_file() {
        Ok(Kind::Vyred(vyre))
    } else {
        Err(format!(
            "no vyre binary at {}; build it first with `cargo build --release -p vyre`",
            vyre.display()
        ))
    }
}

/// `node` on PATH, with the reference server script; `None` (and why) when node is missing.
pub fn node() -> Result<Kind, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("reference/idle-server.js");
    if !script.is_file() {
        return Err(format!("{} is missing", script.display()));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("node"))
        .find(|p| p.is_file())
        .map(|_| Kind::Node(script))
        .ok_or_else(|| "node is not on PATH; reference columns skipped".to_string())
}

/// A running server on its own temp home.
pub struct Server {
    child: Child,
    pid: u32,
    socket: PathBuf,
    stderr: PathBuf,
    spawned_at: Instant,
    kind: Kind,
    // Last field: removed after the child is gone.
    dir: TempDir,
}

impl Server {
    /// Spawn on a fresh temp home: `VYRE_HOME` and `HOME` are new folders, `VYRE_PORT=0`.
    pub fn spawn(kind: &Kind) -> Result<Server, String> {
        Self::spawn_configured(kind, |_| Ok(None))
    }

    /// [`Server::spawn`], with the `config.json` that `config` makes from the temp folder (which
    /// holds `home/`, the server's `HOME`, and `vyre/`, its `VYRE_HOME`), if it makes one.
    pub fn spawn_configured(
        kind: &Kind,
        config: impl FnOnce(&Path) -> Result<Option<Value>, String>,
    ) -> Result<Server, String> {
        let dir = TempDir::new(match kind {
            Kind::Vyred(_) | Kind::Callgrind { .. } => "vyred",
            Kind::Node(_) => "node",
        })?;
        let home = dir.path().join("home");
        let vyre_home = dir.path().join("vyre");
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&home)
            .map_err(|e| format!("cannot create {}: {e}", home.display()))?;
        if let Some(config) = config(dir.path())? {
            write_config(&vyre_home, &config)?;
        }
        Self::start(kind, dir)
    }

    /// Start `kind` on `dir`'s home (a fresh one, or one a stopped server left).
    fn start(kind: &Kind, dir: TempDir) -> Result<Server, String> {
        let home = dir.path().join("home");
        let vyre_home = dir.path().join("vyre");
        let stderr = dir.path().join("stderr.log");
        let err_file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&stderr)
            .map_err(|e| format!("cannot open {}: {e}", stderr.display()))?;
        let mut cmd = match kind {
            Kind::Vyred(bin) => {
                let mut c = Command::new(bin);
                c.arg("daemon");
                c
            }
            Kind::Node(script) => {
                let mut c = Command::new("node");
                c.arg(script);
                c
            }
            Kind::Callgrind { vyre, out } => {
                let mut c = callgrind(out);
                c.arg(vyre).arg("daemon");
                c
            }
        };
        cmd.env("VYRE_HOME", &vyre_home)
            .env("HOME", &home)
            .env("VYRE_PORT", "0")
            .env_remove("VYRE_ROLE")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(err_file)
            .kill_on_drop(true);
        let spawned_at = Instant::now();
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", kind.name()))?;
        let pid = child
            .id()
            .ok_or_else(|| format!("{} exited at once", kind.name()))?;
        Ok(Server {
            child,
            pid,
            socket: vyre_home.join("vyred.sock"),
            stderr,
            spawned_at,
            kind: kind.clone(),
            dir,
        })
    }

    /// Stop it ([`Server::stop`]), run `between`, and start it again on the same home, with
    /// what it left there.
    pub async fn restart_after(
        mut self,
        between: impl FnOnce() -> Result<(), String>,
    ) -> Result<Server, String> {
        self.terminate().await?;
        between()?;
        let Server { kind, dir, .. } = self;
        Self::start(&kind, dir)
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Just before the spawn.
    pub fn spawned_at(&self) -> Instant {
        self.spawned_at
    }

    /// The temp folder holding `home/` and `vyre/`.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Poll `GET /v1/health` over the socket every `poll` until it answers; the time from just
    /// before the spawn to that answer.
    pub async fn wait_healthy(&mut self, poll: Duration) -> Result<Duration, String> {
        let client = Client::socket(&self.socket);
        loop {
            if client.get("/v1/health").await.is_ok() {
                return Ok(self.spawned_at.elapsed());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "{} exited ({status}) before answering /v1/health{}",
                    self.kind.name(),
                    self.stderr_tail()
                ));
            }
            if self.spawned_at.elapsed() > self.kind.start_timeout() {
                return Err(format!(
                    "{} did not answer /v1/health within {}s{}",
                    self.kind.name(),
                    self.kind.start_timeout().as_secs(),
                    self.stderr_tail()
                ));
            }
            tokio::time::sleep(poll).await;
        }
    }

    /// SIGTERM, then wait; SIGKILL if it does not stop in time.
    pub async fn stop(mut self) -> Result<(), String> {
        self.terminate().await
    }

    async fn terminate(&mut self) -> Result<(), String> {
        use nix::sys::signal::{Signal, kill};
        use nix::unistd::Pid;
        let _ = kill(Pid::from_raw(self.pid as i32), Signal::SIGTERM);
        match tokio::time::timeout(STOP_TIMEOUT, self.child.wait()).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(format!("cannot wait for {}: {e}", self.kind.name())),
            Err(_) => {
                let _ = self.child.kill().await;
                Err(format!(
                    "{} did not stop within {}s of SIGTERM; killed it",
                    self.kind.name(),
                    STOP_TIMEOUT.as_secs()
                ))
            }
        }
    }

    fn stderr_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(20)..].join("\n");
        if tail.is_empty() {
            String::new()
        } else {
            format!("; its stderr ends with:\n{tail}")
        }
    }
}
