//! Latency to the first text delta of a turn: the pinned Claude Code CLI against the fake Messages
//! API, driven directly by vyre's Claude driver (the reference) and through an in-process vyred
//! (`threads.send`, then `thread.text` events over the socket).
//!
//! The direct reference runs twice: with `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`, and in the
//! environment vyred gives its sessions (which lacks it, so the CLI makes a second request per
//! turn). Each session has its own fake API, to count its requests. All three stay up for the
//! whole run and take turns one after another, the order rotating, so that they see the same
//! machine (and each other's leftover work) alike.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use vyre::kernel::contracts::provider::Credential;
use vyre::kernel::contracts::secret::Secret;
use vyre::kernel::paths::VyreHome;
use vyre::modules::sessions::claude::{ClaudeOptions, ClaudeProcess};
use vyre::modules::sessions::wire::Incoming;
use vyre::surfaces::client::{Client, EventStream};

use crate::fake_api::FakeApi;
use crate::inproc::InProcess;
use crate::sessions::{self, KEY, STEP_TIMEOUT};
use crate::sessions_many;
use crate::spawn::{self, TempDir};

/// Milliseconds to the first text delta of each measured turn, sorted, and Messages API
/// requests per turn (warm-up included), for each way of running the CLI.
pub struct Latency {
    /// Direct, with `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`.
    pub direct: Runs,
    /// Direct, in the environment vyred gives its sessions.
    pub direct_vyred_env: Runs,
    pub vyred: Runs,
}

#[derive(Default)]
pub struct Runs {
    pub ms: Vec<f64>,
    pub requests_per_turn: f64,
    /// Milliseconds from the message to the turn's end (the CLI's `result`; vyred's
    /// `thread.finished`), sorted: what the hooks at a turn's end add shows here.
    pub whole_ms: Vec<f64>,
}

pub async fn run(cli: &Path, turns: usize) -> Result<Latency, String> {
    let apis = [
        FakeApi::start().await,
        FakeApi::start().await,
        FakeApi::start().await,
    ];
    let dir = TempDir::new("latency")?;
    let quiet = vec![(
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
        "1".into(),
    )];
    // What vyred adds to the environment it builds (the thread's id); nothing else differs.
    let as_vyred = vec![("VYRE_THREAD".into(), vyre::kernel::ids::uuid_v4().into())];
    let mut direct = Direct::start(cli, &apis[0], &dir, "direct", quiet).await?;
    let mut same_env = match Direct::start(cli, &apis[1], &dir, "direct-env", as_vyred).await {
        Ok(d) => d,
        Err(e) => {
            direct.process.stop(Duration::from_secs(5)).await;
            return Err(e);
        }
    };
    let mut vyred = match Vyred::start(cli, &apis[2], &dir).await {
        Ok(v) => v,
        Err(e) => {
            direct.process.stop(Duration::from_secs(5)).await;
            same_env.process.stop(Duration::from_secs(5)).await;
            return Err(e);
        }
    };
    eprintln!(
        "sessions: 1 + {turns} turns each on 3 sessions (direct, direct in vyred's env, vyred), in rotation..."
    );
    let mut runs: [Runs; 3] = Default::default();
    let result = async {
        // Turn 0 warms all three up and is not counted.
        for i in 0..=turns {
            let text = format!("bench turn {i}");
            for k in 0..3 {
                let which = (i + k) % 3;
                let (ms, whole) = match which {
                    0 => (direct.turn(&text).await?, direct.whole_ms),
                    1 => (same_env.turn(&text).await?, same_env.whole_ms),
                    _ => (vyred.turn(&text).await?, vyred.whole_ms),
                };
                if i > 0 {
                    runs[which].ms.push(ms);
                    runs[which].whole_ms.push(whole);
                }
            }
        }
        Ok::<_, String>(())
    }
    .await;
    direct.process.stop(Duration::from_secs(5)).await;
    same_env.process.stop(Duration::from_secs(5)).await;
    let stopped = vyred.stop().await;
    result?;
    stopped?;
    for (run, api) in runs.iter_mut().zip(&apis) {
        run.ms.sort_by(f64::total_cmp);
        run.whole_ms.sort_by(f64::total_cmp);
        run.requests_per_turn = api.message_requests().len() as f64 / (turns + 1) as f64;
    }
    let [direct, direct_vyred_env, vyred] = runs;
    Ok(Latency {
        direct,
        direct_vyred_env,
        vyred,
    })
}

/// vyred's own path: `turns` turns (after a warm-up) on a thread of the fake provider, which
/// answers inside vyred at once, timed as [`Vyred::turn`] times them.
pub async fn own_path(turns: usize) -> Result<Runs, String> {
    let dir = TempDir::new("own")?;
    let work = folder(&dir, "work")?;
    let vyred = sessions_many::fake_vyred(&dir).await?;
    eprintln!("sessions: 1 + {turns} turns on the fake provider...");
    let mut session = Vyred::attach(vyred, json!({ "cwd": work, "provider": "fake" })).await?;
    let mut ms = Vec::with_capacity(turns);
    let result = async {
        for i in 0..=turns {
            let took = session.turn(&format!("bench turn {i}")).await?;
            if i > 0 {
                ms.push(took);
            }
        }
        Ok::<_, String>(())
    }
    .await;
    let stopped = session.stop().await;
    result?;
    stopped?;
    ms.sort_by(f64::total_cmp);
    Ok(Runs {
        ms,
        requests_per_turn: 0.0,
        whole_ms: Vec::new(),
    })
}

/// A folder inside `dir`, created.
fn folder(dir: &TempDir, name: &str) -> Result<PathBuf, String> {
    let path = dir.path().join(name);
    std::fs::create_dir_all(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    Ok(path)
}

fn is_text_delta(m: &Value) -> bool {
    m["type"] == "stream_event" && m["event"]["delta"]["type"] == "text_delta"
}

/// One CLI process driven by vyre's Claude driver, on its own HOME.
pub(crate) struct Direct {
    pub(crate) process: ClaudeProcess,
    /// The last turn's milliseconds to its `result`.
    pub(crate) whole_ms: f64,
}

impl Direct {
    pub(crate) async fn start(
        cli: &Path,
        api: &FakeApi,
        dir: &TempDir,
        name: &str,
        extra_env: Vec<(String, OsString)>,
    ) -> Result<Direct, String> {
        let options = ClaudeOptions {
            program: cli.to_path_buf(),
            cwd: folder(dir, &format!("{name}-work"))?,
            session_id: vyre::kernel::ids::uuid_v4(),
            resume: false,
            fork_from: None,
            resume_at: None,
            // What vyred passes for a chat thread.
            model: Some(vyre::modules::sessions::models::default_model("chat").into()),
            effort: None,
            permission_mode: "default".into(),
            append_system_prompt: None,
            system_prompt_snapshot: None,
            plugin_dirs: vec![],
            max_budget_usd: None,
            base_url: Some(api.url()),
            credential: Credential::ApiKey(Secret::new(KEY.into())),
            home: folder(dir, &format!("{name}-home"))?,
            run_as: None,
            sandbox: None,
            expose_ro: vec![],
            claude_sandbox: None,
            processes: None,
            extra_env,
            host_tools: None,
        };
        let (process, _init) = ClaudeProcess::start(&options)
            .await
            .map_err(|e| format!("the CLI did not start: {e}"))?;
        Ok(Direct {
            process,
            whole_ms: 0.0,
        })
    }

    /// What a spare is asked once it started (the provider's `prepare`): the context's summary,
    /// which has the CLI build what its first turn sends, then its first turn taken ahead and
    /// held back by the driver's prompt hook (`claude_warm`), as a spare's is.
    pub(crate) async fn prepare(&mut self) -> Result<(), String> {
        self.process
            .peer
            .request(json!({ "subtype": "get_context_usage", "detail": "summary" }))
            .await
            .map_err(|e| format!("the CLI did not prepare: {e}"))?;
        vyre::modules::sessions::claude_warm::hold_back(&mut self.process, None)
            .await
            .map_err(|e| format!("the CLI's first turn was not readied: {e}"))
    }

    /// Write a user message, read until its `result`; the milliseconds to the first text delta.
    pub(crate) async fn turn(&mut self, text: &str) -> Result<f64, String> {
        self.read_turn(text)
            .await
            .map_err(|e| format!("{e}; the CLI's stderr: {}", self.process.stderr_tail()))
    }

    async fn read_turn(&mut self, text: &str) -> Result<f64, String> {
        let content = json!([{ "type": "text", "text": text }]);
        let sent = Instant::now();
        self.process
            .send_user(content, &vyre::kernel::ids::uuid_v4(), None)
            .map_err(|e| format!("cannot write to the CLI: {e}"))?;
        let mut first = None;
        loop {
            let next = tokio::time::timeout(STEP_TIMEOUT, self.process.incoming.recv())
                .await
                .map_err(|_| format!("the CLI said nothing for {}s", STEP_TIMEOUT.as_secs()))?
                .ok_or("the CLI exited")?;
            match next {
                Incoming::Message(m) if first.is_none() && is_text_delta(&m) => {
                    first = Some(sent.elapsed());
                }
                Incoming::Message(m) if m["type"] == "result" => {
                    self.whole_ms = sent.elapsed().as_secs_f64() * 1000.0;
                    break;
                }
                Incoming::Request { id, .. } => {
                    // The fake asks for no tool on plain text; refuse whatever comes.
                    let deny = json!({ "behavior": "deny", "message": "benchmark" });
                    let _ = self.process.peer.respond(&id, deny);
                }
                _ => {}
            }
        }
        let first = first.ok_or("a direct turn ended without a text delta")?;
        Ok(first.as_secs_f64() * 1000.0)
    }
}

/// An in-process vyred with one thread, watched through its event stream.
pub(crate) struct Vyred {
    vyred: InProcess,
    client: Client,
    stream: EventStream,
    thread: String,
    /// The last turn's milliseconds to its `thread.finished`.
    whole_ms: f64,
}

impl Vyred {
    async fn start(cli: &Path, api: &FakeApi, dir: &TempDir) -> Result<Vyred, String> {
        let home = folder(dir, "vyred-home")?;
        let work = folder(dir, "vyred-work")?;
        let vyre_home = dir.path().join("vyre");
        spawn::write_config(&vyre_home, &sessions::claude_config(cli, &api.url(), &home))?;
        let vyred = InProcess::start(VyreHome::at(vyre_home), vec![]).await?;
        if let Err(e) = sessions::add_key(&vyred.client()).await {
            let _ = vyred.stop().await;
            return Err(e);
        }
        Vyred::attach(vyred, json!({ "cwd": work })).await
    }

    /// Subscribe to the thread events, then start a thread with `input` (no first message).
    pub(crate) async fn attach(vyred: InProcess, input: Value) -> Result<Vyred, String> {
        let client = vyred.client();
        let started = async {
            let stream = client
                .events("types=thread.text,thread.finished", None)
                .await
                .map_err(|e| format!("cannot subscribe: {e}"))?;
            let thread = sessions::start_thread(&client, input).await?;
            Ok::<_, String>((stream, thread))
        }
        .await;
        match started {
            Ok((stream, thread)) => Ok(Vyred {
                vyred,
                client,
                stream,
                thread,
                whole_ms: 0.0,
            }),
            Err(e) => {
                let _ = vyred.stop().await;
                Err(e)
            }
        }
    }

    /// `threads.send`, then events until the turn's `thread.finished`; the milliseconds from
    /// calling `threads.send` to the first `thread.text` with a delta.
    pub(crate) async fn turn(&mut self, text: &str) -> Result<f64, String> {
        let input = json!({ "thread": self.thread, "text": text });
        let sent = Instant::now();
        // The answer may come after the first delta: read the stream meanwhile.
        let (answer, first) = tokio::join!(
            self.client.call("threads.send", &input),
            first_delta(&mut self.stream, &self.thread)
        );
        answer.map_err(|e| format!("threads.send failed: {e}"))?;
        let first = first?;
        let finished = until_finished(&mut self.stream, &self.thread).await?;
        self.whole_ms = (finished - sent).as_secs_f64() * 1000.0;
        Ok((first - sent).as_secs_f64() * 1000.0)
    }

    pub(crate) async fn stop(self) -> Result<(), String> {
        let stopped = self
            .client
            .call("threads.stop", &json!({ "thread": self.thread }))
            .await
            .map_err(|e| format!("threads.stop failed: {e}"));
        self.vyred.stop().await?;
        stopped.map(drop)
    }
}

/// When the first `thread.text` event with a delta for `thread` arrived.
async fn first_delta(stream: &mut EventStream, thread: &str) -> Result<Instant, String> {
    loop {
        let (e, at) = sessions::next_event(stream).await?;
        if e["thread"] != thread {
            continue;
        }
        if e["type"] == "thread.finished" {
            return Err(format!("a turn finished without a text delta: {e}"));
        }
        if e["type"] == "thread.text" && e["payload"]["delta"].is_string() {
            return Ok(at);
        }
    }
}

/// When the turn's `thread.finished` arrived.
async fn until_finished(stream: &mut EventStream, thread: &str) -> Result<Instant, String> {
    loop {
        let (e, at) = sessions::next_event(stream).await?;
        if e["thread"] == thread && e["type"] == "thread.finished" {
            return match e["payload"]["ok"].as_bool() {
                Some(true) => Ok(at),
                _ => Err(format!("a turn failed: {e}")),
            };
        }
    }
}
