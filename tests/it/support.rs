//! What the integration tests share: temp homes, vyred in-process or as a child, clients.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use vyre::daemon::{Daemon, DaemonOptions};
use vyre::kernel::Kernel;
use vyre::kernel::module::Module;
use vyre::kernel::paths::VyreHome;
use vyre::surfaces::client::Client;

pub const BIN: &str = env!("CARGO_BIN_EXE_vyre");

/// A temp folder holding `VYRE_HOME` and a fake `HOME`, removed on drop.
pub struct TempHome {
    pub dir: PathBuf,
}

impl TempHome {
    pub fn new(name: &str) -> TempHome {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("vyre-it-{}-{name}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("home")).unwrap();
        TempHome { dir }
    }
    pub fn vyre_home(&self) -> PathBuf {
        self.dir.join("vyre")
    }
    pub fn home(&self) -> VyreHome {
        VyreHome::at(self.vyre_home())
    }
    pub fn socket_client(&self) -> Client {
        Client::socket(self.home().socket())
    }
    /// The `vyre` binary with this home and nothing from the real one.
    pub fn command(&self) -> Command {
        self.command_of(Path::new(BIN))
    }
    /// [`TempHome::command`] for another build of `vyre` (an older version, say).
    pub fn command_of(&self, bin: &Path) -> Command {
        let mut cmd = Command::new(bin);
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.join("home"))
            .env("VYRE_HOME", self.vyre_home())
            .env("VYRE_PORT", "0")
            // Never the checkout's web app: `vyre up` would build it with npm.
            .env("VYRE_UI_DIR", self.dir.join("no-ui"))
            .env("RUST_LOG", "warn");
        cmd
    }
    pub fn vyre(&self, args: &[&str]) -> Output {
        self.command()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }
    /// Start `vyre daemon` as a child and wait until it answers.
    pub fn spawn_daemon(&self) -> DaemonChild {
        let child = self
            .command()
            .arg("daemon")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut d = DaemonChild { child: Some(child) };
        wait_until(Duration::from_secs(20), || {
            self.home().addr_file().exists() && self.home().socket().exists()
        });
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let client = self.socket_client();
        let ok = rt.block_on(async {
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline {
                if client.get("/v1/health").await.is_ok() {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            false
        });
        assert!(ok, "vyred did not answer: {:?}", d.take_stderr());
        d
    }
    pub fn http_addr(&self) -> std::net::SocketAddr {
        std::fs::read_to_string(self.home().addr_file())
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }
}

impl TempHome {
    /// The pid of a vyred on this home, when one holds its lock and was started with it (its
    /// environment names this `VYRE_HOME`): never a stranger that reused a stale pid.
    pub fn daemon_pid(&self) -> Option<i32> {
        let pid = vyre::kernel::lock::holder(&self.home().lock_file())?;
        let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        let ours = format!("VYRE_HOME={}", self.vyre_home().display());
        environ
            .split(|b| *b == 0)
            .any(|var| var == ours.as_bytes())
            .then_some(pid as i32)
    }

    /// Ends a vyred that `vyre up` started on this home and a failing test left running.
    fn stop_a_left_daemon(&self) {
        use nix::sys::signal::{Signal, kill};
        let Some(pid) = self.daemon_pid() else {
            return;
        };
        let pid = nix::unistd::Pid::from_raw(pid);
        let _ = kill(pid, Signal::SIGTERM);
        if !wait_until(Duration::from_secs(10), || self.daemon_pid().is_none()) {
            let _ = kill(pid, Signal::SIGKILL);
        }
    }
}

impl Drop for TempHome {
    fn drop(&mut self) {
        self.stop_a_left_daemon();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn wait_until(timeout: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// A vyred child process, killed if the test forgets it.
pub struct DaemonChild {
    pub child: Option<Child>,
}

impl DaemonChild {
    pub fn pid(&self) -> i32 {
        self.child.as_ref().unwrap().id() as i32
    }
    pub fn signal(&self, sig: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid()), sig).unwrap();
    }
    /// Wait for it to exit; its status.
    pub fn wait(&mut self, timeout: Duration) -> std::process::ExitStatus {
        let child = self.child.as_mut().unwrap();
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "vyred did not exit in time");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    pub fn take_stderr(&mut self) -> String {
        use std::io::Read;
        let mut s = String::new();
        if let Some(child) = self.child.as_mut()
            && let Some(mut e) = child.stderr.take()
        {
            let _ = child.kill();
            let _ = e.read_to_string(&mut s);
        }
        s
    }
}

impl Drop for DaemonChild {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// vyred running inside the test process, with extra modules.
pub struct InProcess {
    pub kernel: Kernel,
    pub http: std::net::SocketAddr,
    pub socket: PathBuf,
    pub task: tokio::task::JoinHandle<()>,
}

impl InProcess {
    pub async fn start(home: &TempHome, extra: Vec<Arc<dyn Module>>) -> InProcess {
        Self::start_with(home, extra, |_| {}).await
    }

    /// With options changed by `adjust` before binding.
    pub async fn start_with(
        home: &TempHome,
        extra: Vec<Arc<dyn Module>>,
        adjust: impl FnOnce(&mut DaemonOptions),
    ) -> InProcess {
        let mut options = DaemonOptions::new(home.home());
        options.port = Some(0);
        options.extra_modules = extra;
        // Never the real ~/.claude: history is read from the test's own HOME.
        options.user_home = Some(home.dir.join("home"));
        adjust(&mut options);
        // A restart in the same test process can find the lock still held for an instant: a
        // child another test thread is forking holds a copy of every open file until its exec
        // closes them (a whole process never meets this: the OS releases its lock when it exits).
        let mut tries = 0;
        let daemon = loop {
            match Daemon::bind(options.clone()).await {
                Ok(d) => break d,
                Err(vyre::daemon::DaemonError::Lock(_)) if tries < 50 => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("bind: {e:?}"),
            }
        };
        let kernel = daemon.kernel().clone();
        let http = daemon.http_addr();
        let socket = daemon.socket_path();
        let task = tokio::spawn(async move {
            daemon.serve().await.expect("serve");
        });
        let client = Client::socket(&socket);
        let deadline = Instant::now() + Duration::from_secs(20);
        while client.get("/v1/health").await.is_err() {
            assert!(Instant::now() < deadline, "in-process vyred did not answer");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // Modules load before serving starts, so health answering means they are loaded.
        InProcess {
            kernel,
            http,
            socket,
            task,
        }
    }

    pub fn socket_client(&self) -> Client {
        Client::socket(&self.socket)
    }

    pub fn http_client(&self, token: Option<&str>) -> Client {
        Client::http(self.http, token.map(String::from))
    }

    /// A device credential, issued over the socket.
    pub async fn device_token(&self, name: &str) -> (String, String) {
        let added = self
            .socket_client()
            .call("devices.add", &json!({ "name": name }))
            .await
            .unwrap();
        (
            added["device"]["id"].as_str().unwrap().to_string(),
            added["token"].as_str().unwrap().to_string(),
        )
    }

    pub async fn stop(self) {
        self.kernel.request_shutdown();
        tokio::time::timeout(Duration::from_secs(30), self.task)
            .await
            .expect("vyred stops in time")
            .unwrap();
    }
}

/// Every event in a home's store, read directly from the database after vyred stopped.
pub fn stored_events(db: &Path) -> Vec<(i64, String, Value)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT id, type, payload FROM events ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| {
        let payload: String = r.get(2)?;
        Ok((
            r.get(0)?,
            r.get(1)?,
            serde_json::from_str(&payload).unwrap(),
        ))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

/// How a test module behaves when it starts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Start {
    Ok,
    Fail,
    Panic,
    /// Registers a tool its manifest does not declare.
    Undeclared,
    /// Runs a migration that creates a table outside its namespace.
    Trespass,
}

/// A module made for tests: a manifest given as text and a few tools that exercise ctx.
pub struct Probe {
    pub name: String,
    pub manifest: String,
    pub start: Start,
}

impl Probe {
    /// A probe named `name` requiring `requires`, with the standard probe tools.
    pub fn module(name: &str, requires: &[&str], start: Start) -> Arc<dyn Module> {
        let tools: Vec<String> = [
            "emit", "call", "panic", "echo", "note", "notes", "heard", "fetch",
        ]
        .iter()
        .map(|t| format!("{name}.{t}"))
        .collect();
        let manifest = json!({
            "name": name, "version": "0.1.0", "roles": ["box", "local"], "requires": requires,
            "does": { "tools": tools },
            "watches": { "emits": ["probe.pinged", "probe.thread_said"] },
            "shows": { "cli": [name] },
            "needs": { "vault": ["test-*", "declared-only"] }
        });
        Arc::new(Probe {
            name: name.into(),
            manifest: manifest.to_string(),
            start,
        })
    }

    /// A module whose manifest is the given text.
    pub fn with_manifest(name: &str, manifest: &str) -> Arc<dyn Module> {
        Arc::new(Probe {
            name: name.into(),
            manifest: manifest.into(),
            start: Start::Ok,
        })
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmitInput {
    /// How many events.
    pub n: u32,
    /// The event type (default probe.pinged).
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub thread: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallInput {
    pub tool: String,
    pub input: Value,
}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EchoInput {
    pub text: String,
    #[serde(default)]
    pub count: Option<u32>,
    #[serde(default)]
    pub loud: bool,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Nothing {}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FetchInput {
    pub item: String,
    pub expect: String,
}

impl Module for Probe {
    fn name(&self) -> &str {
        &self.name
    }
    fn manifest(&self) -> &str {
        &self.manifest
    }
    fn start(&self, ctx: vyre::kernel::module::Ctx) -> vyre::kernel::module::StartFuture {
        use vyre::kernel::events::NewEvent;
        use vyre::kernel::module::ToolDef;
        use vyre::kernel::store::Migration;
        use vyre::kernel::tools::ToolError;
        let start = self.start;
        let name = self.name.clone();
        Box::pin(async move {
            match start {
                Start::Fail => return Err("the probe was told to fail".into()),
                Start::Panic => panic!("the probe was told to panic"),
                Start::Undeclared => {
                    ctx.tool(
                        ToolDef::new(format!("{name}.secret"), "not declared"),
                        |_: Nothing, _| async { Ok::<_, ToolError>(json!({})) },
                    )?;
                }
                Start::Trespass => {
                    let sql: &'static str = "CREATE TABLE devices_mine (x TEXT)";
                    let list: &'static [Migration] =
                        Box::leak(Box::new([Migration { version: 1, sql }]));
                    ctx.store().migrate(list).await?;
                }
                Start::Ok => {}
            }
            // Its own table, by numbered migrations in its namespace.
            let sql: &'static str = Box::leak(
                format!(
                    "CREATE TABLE {name}_notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL);\
                     CREATE INDEX {name}_notes_text ON {name}_notes(text);"
                )
                .into_boxed_str(),
            );
            let sql2: &'static str = Box::leak(
                format!("ALTER TABLE {name}_notes ADD COLUMN at INTEGER").into_boxed_str(),
            );
            let list: &'static [Migration] = Box::leak(Box::new([
                Migration { version: 1, sql },
                Migration {
                    version: 2,
                    sql: sql2,
                },
            ]));
            ctx.store().migrate(list).await?;
            let c = ctx.clone();
            let table = format!("{name}_notes");
            ctx.tool(
                ToolDef::new(
                    format!("{name}.note"),
                    "Keep a note and say so, atomically.",
                ),
                move |input: EchoInput, _| {
                    let c = c.clone();
                    let table = table.clone();
                    async move {
                        let id = c
                            .store()
                            .write(move |tx| {
                                tx.conn().execute(
                                    &format!("INSERT INTO {table} (text, at) VALUES (?1, 1)"),
                                    [&input.text],
                                )?;
                                let id = tx.conn().last_insert_rowid();
                                tx.emit(NewEvent::new("probe.pinged", json!({ "note": id })))?;
                                if input.loud {
                                    // A failure after the insert and the emit: both must vanish.
                                    return Err(vyre::kernel::store::StoreError::Refused(
                                        "too loud".into(),
                                    ));
                                }
                                Ok(id)
                            })
                            .await?;
                        Ok::<_, ToolError>(id)
                    }
                },
            )?;
            let c = ctx.clone();
            let table = format!("{name}_notes");
            ctx.tool(
                ToolDef::new(format!("{name}.notes"), "Every note."),
                move |_: Nothing, _| {
                    let c = c.clone();
                    let table = table.clone();
                    async move {
                        let notes = c
                            .store()
                            .read(move |conn| {
                                let mut stmt =
                                    conn.prepare(&format!("SELECT text FROM {table} ORDER BY id"))?;
                                let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
                                Ok(rows.collect::<Result<Vec<_>, _>>()?)
                            })
                            .await?;
                        Ok::<_, ToolError>(notes)
                    }
                },
            )?;
            // Fetch a vault item and say whether it holds what the caller expects; never the value.
            let c = ctx.clone();
            ctx.tool(
                ToolDef::new(
                    format!("{name}.fetch"),
                    "Fetch a vault item and compare it.",
                ),
                move |input: FetchInput, _| {
                    let c = c.clone();
                    async move {
                        let value = c
                            .vault()
                            .fetch(&input.item)
                            .await
                            .map_err(ToolError::from)?;
                        let totp = value
                            .totp_now()
                            .map(|r| r.map(|code| code.expose().len()).unwrap_or(0));
                        Ok::<_, ToolError>(json!({
                            "kind": value.kind(),
                            "matches": value.primary().expose() == input.expect,
                            "totp_digits": totp,
                        }))
                    }
                },
            )?;
            // Listen to its own pings, and say how many it heard and the newest id it knows.
            let heard = Arc::new(std::sync::atomic::AtomicU64::new(0));
            let counter = heard.clone();
            ctx.events().on(
                vyre::kernel::events::Filter {
                    types: vec!["probe.pinged".into()],
                    ..Default::default()
                },
                move |_event| {
                    let counter = counter.clone();
                    async move {
                        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                },
            );
            let c = ctx.clone();
            ctx.tool(
                ToolDef::new(format!("{name}.heard"), "How many pings it heard."),
                move |_: Nothing, _| {
                    let heard = heard.clone();
                    let c = c.clone();
                    async move {
                        let since = c.events().since(0, 1000).await?;
                        Ok::<_, ToolError>(json!({
                            "heard": heard.load(std::sync::atomic::Ordering::SeqCst),
                            "latest_id": c.events().latest_id(),
                            "logged": since.len(),
                        }))
                    }
                },
            )?;
            let c = ctx.clone();
            ctx.tool(
                ToolDef::new(format!("{name}.emit"), "Emit n events."),
                move |input: EmitInput, _| {
                    let c = c.clone();
                    async move {
                        let mut ids = Vec::new();
                        for i in 0..input.n {
                            let mut payload = json!({ "i": i });
                            if let Some(note) = &input.note {
                                payload["note"] = json!(note);
                            }
                            let mut event = NewEvent::new(
                                input.kind.clone().unwrap_or("probe.pinged".into()),
                                payload,
                            );
                            event.thread = input.thread.clone();
                            ids.push(c.events().emit(event).await?);
                        }
                        Ok::<_, ToolError>(ids)
                    }
                },
            )?;
            let c = ctx.clone();
            ctx.tool(
                ToolDef::new(format!("{name}.call"), "Call another tool as this module."),
                move |input: CallInput, _| {
                    let c = c.clone();
                    async move { c.call(&input.tool, input.input).await }
                },
            )?;
            ctx.tool(
                ToolDef::new(format!("{name}.panic"), "Panic."),
                |_: Nothing, _| async {
                    if true {
                        panic!("the probe tool was told to panic");
                    }
                    Ok::<Value, ToolError>(json!({}))
                },
            )?;
            ctx.tool(
                // Any caller may ask who it is, sessions included.
                ToolDef::new(format!("{name}.echo"), "Echo the input back.").sessions_open(),
                |input: EchoInput, cx| async move {
                    Ok::<_, ToolError>(json!({ "input": input, "caller": cx.caller }))
                },
            )?;
            Ok(())
        })
    }
}

/// Run git in `dir` as a test's person would (no system config, `dir` as HOME, an identity for
/// commits), asserting it succeeds; its output, trimmed.
pub fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=Person",
            "-c",
            "user.email=person@example.com",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
