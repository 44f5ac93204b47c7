//! The Switchboard with one actor over a session that only listens, on a real store: what a
//! send costs the store, counted through the Switchboard's one gateway to it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

use super::actor::Actor;
use super::handle::{Handle, Shown};
use super::*;
use crate::kernel::Kernel;
use crate::kernel::config::{Config, LoadedConfig, Role};
use crate::kernel::contracts::provider::{
    BoxFuture, Exit, Happening, Priority, ProviderError, Session,
};
use crate::kernel::module::{Health, Manifest};
use crate::kernel::paths::VyreHome;

/// Each message a session was given: its uuid and priority.
type Said = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// A session that takes every message and says nothing.
struct Listening {
    said: Said,
}

impl Session for Listening {
    fn ids(&self) -> ProcessIds {
        ProcessIds {
            pid: 1,
            pgid: 1,
            sid: 1,
            pid_namespace: None,
        }
    }
    fn next(&mut self) -> BoxFuture<'_, Option<Happening>> {
        Box::pin(std::future::pending())
    }
    fn send(
        &self,
        _content: Value,
        uuid: &str,
        priority: Option<Priority>,
    ) -> Result<(), ProviderError> {
        let said = (uuid.to_string(), priority.map(|p| p.as_str().to_string()));
        self.said.lock().unwrap().push(said);
        Ok(())
    }
    fn answer(&self, _request: &str, _response: Value) -> Result<(), ProviderError> {
        Ok(())
    }
    fn interrupt(&self) -> BoxFuture<'_, Result<(), ProviderError>> {
        Box::pin(async { Ok(()) })
    }
    fn set_mode(&self, _mode: &str) -> BoxFuture<'_, Result<(), ProviderError>> {
        Box::pin(async { Ok(()) })
    }
    fn set_model(&self, _model: Option<&str>) -> BoxFuture<'_, Result<(), ProviderError>> {
        Box::pin(async { Ok(()) })
    }
    fn stop(self: Box<Self>, _grace: Duration) -> BoxFuture<'static, Exit> {
        Box::pin(async {
            Exit {
                status: Some(0),
                signal: None,
                stderr: String::new(),
            }
        })
    }
    fn exit(self: Box<Self>) -> BoxFuture<'static, Exit> {
        self.stop(Duration::ZERO)
    }
}

/// A folder of the test's own, removed after it.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("vyre-switchboard-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Rig {
    board: Arc<Switchboard>,
    said: Said,
    _dir: TempDir,
}

/// A Switchboard on a fresh store, with thread `t` live on a [`Listening`] session.
async fn rig(name: &str) -> Rig {
    let said = Arc::new(Mutex::new(vec![]));
    let session = Box::new(Listening { said: said.clone() });
    rig_on(name, session, said, |actor, _| actor).await
}

/// A session that takes every message, says what the test gives it to say and notes which of
/// its requests were answered.
struct Scripted {
    says: mpsc::UnboundedReceiver<Happening>,
    listening: Listening,
    answered: Arc<Mutex<Vec<String>>>,
}

impl Session for Scripted {
    fn ids(&self) -> ProcessIds {
        self.listening.ids()
    }
    fn next(&mut self) -> BoxFuture<'_, Option<Happening>> {
        Box::pin(self.says.recv())
    }
    fn send(
        &self,
        content: Value,
        uuid: &str,
        priority: Option<Priority>,
    ) -> Result<(), ProviderError> {
        self.listening.send(content, uuid, priority)
    }
    fn answer(&self, request: &str, _response: Value) -> Result<(), ProviderError> {
        self.answered.lock().unwrap().push(request.to_string());
        Ok(())
    }
    fn interrupt(&self) -> BoxFuture<'_, Result<(), ProviderError>> {
        self.listening.interrupt()
    }
    fn set_mode(&self, mode: &str) -> BoxFuture<'_, Result<(), ProviderError>> {
        self.listening.set_mode(mode)
    }
    fn set_model(&self, model: Option<&str>) -> BoxFuture<'_, Result<(), ProviderError>> {
        self.listening.set_model(model)
    }
    fn stop(self: Box<Self>, grace: Duration) -> BoxFuture<'static, Exit> {
        Box::new(self.listening).stop(grace)
    }
    fn exit(self: Box<Self>) -> BoxFuture<'static, Exit> {
        Box::new(self.listening).exit()
    }
}

/// [`rig`] on `session`, its actor made ready by `prepare` (given the test's folder).
async fn rig_on(
    name: &str,
    session: Box<dyn Session>,
    said: Said,
    prepare: impl FnOnce(Actor, &std::path::Path) -> Actor,
) -> Rig {
    let dir = TempDir::new(name);
    let config = LoadedConfig {
        config: Config::default(),
        file: None,
        warnings: vec![],
    };
    let kernel = Kernel::open(VyreHome::at(dir.path()), config, Role::Box)
        .await
        .unwrap();
    let manifest = Arc::new(Manifest::parse(include_str!("../manifests/threads.json")).unwrap());
    let ctx = Ctx::new(kernel, manifest, Health::default());
    ctx.store()
        .migrate(crate::modules::sessions::rows::MIGRATIONS)
        .await
        .unwrap();
    let board = Switchboard::new(
        ctx,
        Arc::new(Router::new(Default::default())),
        Owners::default(),
    );
    let request = StartRequest {
        cwd: dir.path().to_path_buf(),
        model: None,
        effort: None,
        purpose: "chat".into(),
        project: None,
        provider: "listening".into(),
        agent: None,
        mode: PermissionMode::Default,
    };
    board
        .change(move |tx| Ok(rows::runs::insert(tx.conn(), "t", &request, "test", None)?))
        .await
        .unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    let shown = Shown::new(ThreadStatus::Idle);
    let actor = Actor::new(
        board.clone(),
        "t",
        None,
        None,
        0,
        tx.downgrade(),
        shown.clone(),
    );
    let actor = prepare(actor, dir.path());
    let handle = Handle {
        tx,
        ids: session.ids(),
        agent: None,
        shown,
    };
    board.live.lock().unwrap().insert("t".into(), handle);
    tokio::spawn(actor.run(session, rx));
    Rig {
        board,
        said,
        _dir: dir,
    }
}

fn since(before: (u64, u64), now: (u64, u64)) -> (u64, u64) {
    (now.0 - before.0, now.1 - before.1)
}

#[tokio::test]
async fn a_new_turn_costs_one_read_and_one_write_and_a_retry_writes_nothing() {
    let r = rig("turn").await;
    let send = || Message {
        uuid: Some("u-1".into()),
        ..Message::words("hello")
    };
    let before = r.board.work();
    let sent = r.board.send("t", send()).await.unwrap();
    assert_eq!((sent.via, sent.queued), (Via::Turn, None));
    assert_eq!(
        since(before, r.board.work()),
        (1, 1),
        "the uuid looked up once; the send's record, the turn, thread.turn and thread.state in one transaction"
    );
    assert_eq!(*r.said.lock().unwrap(), vec![("u-1".into(), None)]);
    let info = r.board.info("t").await.unwrap().unwrap();
    assert_eq!((info.state, info.turns), (ThreadStatus::Running, 1));

    // The same send retried: its first answer, no second turn, nothing written.
    let before = r.board.work();
    let again = r.board.send("t", send()).await.unwrap();
    assert_eq!((again.uuid.as_str(), again.via), ("u-1", Via::Turn));
    assert_eq!(since(before, r.board.work()), (1, 0));
    assert_eq!(r.said.lock().unwrap().len(), 1);

    // Words while the turn runs: steered (one write), or queued (one write) for its end.
    let before = r.board.work();
    let steered = r.board.send("t", Message::words("and this")).await.unwrap();
    assert_eq!(steered.via, Via::Steer);
    let queued = Message {
        mode: SendMode::Queue,
        ..Message::words("after")
    };
    let queued = r.board.send("t", queued).await.unwrap();
    assert_eq!(queued.via, Via::Queued);
    assert_eq!(since(before, r.board.work()), (0, 2));
    assert_eq!(r.board.queued("t").await.unwrap().len(), 1);
    let said = r.said.lock().unwrap().clone();
    assert_eq!(said.last().unwrap().1.as_deref(), Some("next"));
    assert_eq!(said.len(), 2, "a queued message waits for the turn's end");
}

#[tokio::test]
async fn bad_sends_are_refused_before_the_store() {
    let r = rig("bad").await;
    let before = r.board.work();
    let blank = r.board.send("t", Message::words("  ")).await.unwrap_err();
    assert!(matches!(blank, Error::EmptyText), "{blank}");
    let pictures = Message {
        mode: SendMode::Queue,
        images: vec![serde_json::json!({ "type": "image" })],
        ..Message::words("look")
    };
    let refused = r.board.send("t", pictures).await.unwrap_err();
    assert_eq!(
        crate::kernel::tools::ToolError::from(refused).code,
        "invalid_input"
    );
    assert_eq!(since(before, r.board.work()), (0, 0));
}

/// A session's in-process tools (ADR 0033) as a session gone wrong would use them: a person's
/// tool is neither listed nor run, whatever name it is asked by, and what runs runs as the
/// session's own thread.
#[tokio::test]
async fn a_sessions_host_tools_run_as_that_session_and_never_as_a_person() {
    use crate::kernel::contracts::provider::HostCall;
    use crate::kernel::module::ToolDef;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Empty {}
    let r = rig("host-tools").await;
    let ctx = r.board.ctx.clone();
    let ran = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = ran.clone();
    ctx.tool(
        ToolDef::new("threads.list", "the threads").sessions_open(),
        move |_: Empty, cx| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(cx.caller.label());
                Ok(serde_json::json!({ "caller": cx.caller.label() }))
            }
        },
    )
    .unwrap();
    let answered = Arc::new(Mutex::new(false));
    let flag = answered.clone();
    ctx.tool(
        ToolDef::new("threads.answer", "a person's answer").person_only(),
        move |_: Empty, _cx| {
            let flag = flag.clone();
            async move {
                *flag.lock().unwrap() = true;
                Ok(serde_json::json!({}))
            }
        },
    )
    .unwrap();

    let tools = r.board.host_tools("t");
    assert_eq!(tools.server, "plugin:vyre:vyre");
    let names: Vec<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["threads_list"], "only what a session may call");
    // One copy of the list (its schemas are large) for every session.
    assert!(Arc::ptr_eq(&tools.tools, &r.board.host_tools("u").tools));

    let call = |name: &str, input: Value| HostCall {
        name: name.into(),
        input,
        pid: None,
    };
    let listed = (tools.call)(call("threads_list", serde_json::json!({}))).await;
    assert!(!listed.is_error, "{}", listed.text);
    assert_eq!(ran.lock().unwrap().as_slice(), ["session:t"]);
    // Asked by its MCP name or by Vyre's, a person's tool does not run.
    for name in ["threads_answer", "threads.answer"] {
        let refused = (tools.call)(call(name, serde_json::json!({}))).await;
        assert!(refused.is_error, "{name}: {}", refused.text);
    }
    let odd = (tools.call)(call("threads_list", serde_json::json!([1]))).await;
    assert!(
        odd.is_error && odd.text.contains("invalid_input"),
        "{}",
        odd.text
    );
    assert!(
        !*answered.lock().unwrap(),
        "a person's tool ran for a session"
    );
}

/// What the test says as the session, and the session's requests answered so far.
struct Voice {
    says: mpsc::UnboundedSender<Happening>,
    answered: Arc<Mutex<Vec<String>>>,
}

impl Voice {
    fn say(&self, h: Happening) {
        self.says.send(h).unwrap();
    }

    /// Wait until the actor answers `request`.
    async fn answered(&self, request: &str) {
        for _ in 0..400 {
            if self.answered.lock().unwrap().iter().any(|r| r == request) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("{request} was never answered");
    }
}

/// Thread `t` followed in `<test folder>/work` (one file in it, read ahead), on a session the
/// test speaks for, whose turn's first snapshot starts `after` the turn begins at the latest.
/// Also the folder.
async fn followed(name: &str, after: Duration) -> (Rig, Voice, std::path::PathBuf) {
    let (says, heard) = mpsc::unbounded_channel();
    let said = Arc::new(Mutex::new(vec![]));
    let answered = Arc::new(Mutex::new(vec![]));
    let session = Box::new(Scripted {
        says: heard,
        listening: Listening { said: said.clone() },
        answered: answered.clone(),
    });
    let r = rig_on(name, session, said, |actor, dir| {
        let work = dir.join("work");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::write(work.join("kept.txt"), "kept\n").unwrap();
        actor.first_snapshot_after(after).following(&work, false)
    })
    .await;
    let work = r._dir.path().join("work");
    (r, Voice { says, answered }, work)
}

/// The driver's check before a Write of `path`, as call `call-<n>` (request `check-<n>`).
fn write_check(n: u32, path: &std::path::Path) -> Happening {
    Happening::Checking {
        request: format!("check-{n}"),
        call: format!("call-{n}"),
        tool: "Write".into(),
        input: serde_json::json!({ "file_path": path, "content": "x" }),
        cwd: None,
    }
}

fn text(delta: &str) -> Happening {
    Happening::Text {
        message: "m".into(),
        block: 0,
        delta: Some(delta.into()),
        done: false,
        reasoning: false,
    }
}

fn finished() -> Happening {
    Happening::Finished {
        ok: true,
        canceled: false,
        error: None,
        total_cost_usd: None,
        tokens: Value::Null,
    }
}

/// The paths of the files turn `turn` of `t` changed, once its changes are recorded.
async fn changed_in(r: &Rig, turn: &str) -> Vec<String> {
    for _ in 0..200 {
        let turn = turn.to_string();
        let files: Option<String> = r
            .board
            .read(move |c| {
                use rusqlite::OptionalExtension;
                Ok(c.query_row(
                    "SELECT files FROM threads_changes WHERE thread = 't' AND turn = ?1",
                    [turn],
                    |row| row.get(0),
                )
                .optional()?)
            })
            .await
            .unwrap();
        if let Some(files) = files {
            let files: Vec<Value> = serde_json::from_str(&files).unwrap();
            return files
                .iter()
                .map(|f| f["path"].as_str().unwrap().to_string())
                .collect();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("turn {turn}'s changes were never recorded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turns_first_snapshot_waits_for_the_sessions_first_answer() {
    let (r, session, work) = followed("first-snapshot", Duration::from_secs(600)).await;
    r.board.send("t", Message::words("hello")).await.unwrap();
    // Long enough for a snapshot taken as the turn began to be done: while the session builds
    // its request, no git runs beside it, so what changes meanwhile is not the turn's.
    tokio::time::sleep(Duration::from_millis(500)).await;
    std::fs::write(work.join("before.txt"), "before the model answered\n").unwrap();
    session.say(text("Hi"));
    // The first tool call is let go once the snapshot the answer started is taken.
    session.say(write_check(1, &work.join("during.txt")));
    session.answered("check-1").await;
    std::fs::write(work.join("during.txt"), "the turn's own\n").unwrap();
    session.say(Happening::ToolEnded {
        call: "call-1".into(),
        failed: false,
        output: String::new(),
        interrupted: false,
    });
    session.say(finished());
    assert_eq!(changed_in(&r, "t:1").await, vec!["during.txt".to_string()]);

    // A turn that ends before it said anything: its snapshot is taken as it ends, so what
    // changed meanwhile is not the turn's (a turn that changed nothing is not recorded).
    r.board.send("t", Message::words("again")).await.unwrap();
    std::fs::write(
        work.join("before-2.txt"),
        "before this turn said anything\n",
    )
    .unwrap();
    session.say(finished());
    // A turn whose first answer is a tool call: the call waits for the snapshot it started.
    r.board
        .send("t", Message::words("and again"))
        .await
        .unwrap();
    session.say(write_check(3, &work.join("during-3.txt")));
    session.answered("check-3").await;
    std::fs::write(work.join("during-3.txt"), "the third turn's own\n").unwrap();
    session.say(finished());
    assert_eq!(
        changed_in(&r, "t:3").await,
        vec!["during-3.txt".to_string()]
    );
    let turns: Vec<String> = r
        .board
        .read(|c| {
            let mut q = c.prepare("SELECT turn FROM threads_changes ORDER BY turn")?;
            let rows = q.query_map([], |row| row.get(0))?;
            Ok(rows.collect::<Result<Vec<String>, _>>()?)
        })
        .await
        .unwrap();
    assert_eq!(turns, vec!["t:1", "t:3"], "the second turn changed nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turns_first_snapshot_starts_after_its_wait_if_the_session_says_nothing() {
    let (r, session, work) = followed("snapshot-due", Duration::from_millis(100)).await;
    r.board.send("t", Message::words("hello")).await.unwrap();
    // The model thinks for a long while: the snapshot was taken when the wait ran out, so what
    // changes now is the turn's.
    tokio::time::sleep(Duration::from_secs(2)).await;
    std::fs::write(work.join("later.txt"), "written while the model thought\n").unwrap();
    session.say(text("Hi"));
    session.say(finished());
    assert_eq!(changed_in(&r, "t:1").await, vec!["later.txt".to_string()]);
}
