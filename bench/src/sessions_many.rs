//! Many concurrent sessions: an in-process vyred with the fake provider of
//! `tests/it/fake_provider.rs` (a real `sh` process per session, replies without a model),
//! 200 threads started with a first message, then all stopped.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::task::JoinSet;
use vyre::kernel::module::Module;
use vyre::kernel::paths::VyreHome;
use vyre::surfaces::client::Client;

use crate::fake_provider::FakeProviderModule;
use crate::inproc::InProcess;
use crate::procfs;
use crate::sessions;
use crate::spawn::{self, TempDir};

const SESSIONS: usize = 200;
/// Calls in flight at once, to start and to stop.
pub const AT_ONCE: usize = 20;

pub struct Many {
    pub sessions: usize,
    /// From the first `threads.start` to the last `thread.finished`.
    pub wall: Duration,
    /// utime+stime of this whole process over `wall`, in seconds.
    pub cpu_s: f64,
    pub rss_before_kb: u64,
    pub rss_after_kb: u64,
    /// From the first `threads.stop` to the last answer.
    pub stop: Duration,
    /// Live sessions `threads.pids` still lists after the stops.
    pub pids_left: usize,
}

pub async fn run() -> Result<Many, String> {
    let me = std::process::id();
    let read_err = |e: std::io::Error| format!("cannot read /proc/self: {e}");
    let rss_before_kb = procfs::status_kb(me, "VmRSS").map_err(read_err)?;

    let dir = TempDir::new("many")?;
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    let vyred = fake_vyred(&dir).await?;
    eprintln!("sessions: {SESSIONS} fake sessions, {AT_ONCE} starts at a time...");
    let result = drive(&vyred.client(), &work, rss_before_kb).await;
    vyred.stop().await?;
    drop(dir);
    result
}

/// An in-process vyred on `dir/vyre` with the fake provider `fake` (module `fakeprov`), and
/// `dir/home` as the sessions' HOME.
pub async fn fake_vyred(dir: &TempDir) -> Result<InProcess, String> {
    let vyre_home = dir.path().join("vyre");
    let config = json!({ "sessions": { "auth": "login", "home": dir.path().join("home"), "max_live": SESSIONS + 10 } });
    spawn::write_config(&vyre_home, &config)?;
    let fake: Arc<dyn Module> = Arc::new(FakeProviderModule {
        module: "fakeprov".into(),
        provider: "fake".into(),
        declare: true,
    });
    InProcess::start(VyreHome::at(vyre_home), vec![fake]).await
}

async fn drive(
    client: &Client,
    work: &std::path::Path,
    rss_before_kb: u64,
) -> Result<Many, String> {
    let me = std::process::id();
    let read_err = |e: std::io::Error| format!("cannot read /proc/self: {e}");
    let mut stream = client
        .events("types=thread.finished", None)
        .await
        .map_err(|e| format!("cannot subscribe: {e}"))?;
    // The reader counts every thread's finish while the starts go on.
    let reader = tokio::spawn(async move {
        let mut finished = HashSet::new();
        while finished.len() < SESSIONS {
            let (e, _) = sessions::next_event(&mut stream).await?;
            if e["payload"]["ok"] != true {
                return Err(format!("a fake turn failed: {e}"));
            }
            finished.insert(e["thread"].as_str().unwrap_or_default().to_string());
        }
        Ok::<_, String>(finished)
    });

    let cpu_before = procfs::cpu_ticks(me).map_err(read_err)?;
    let started_at = Instant::now();
    let input = json!({ "cwd": work, "provider": "fake", "text": "hi" });
    let threads = in_parallel(client, SESSIONS, move |client, _| {
        let input = input.clone();
        async move { sessions::start_thread(&client, input).await }
    })
    .await?
    .into_iter()
    .collect::<HashSet<_>>();
    let finished = reader
        .await
        .map_err(|e| format!("the event reader failed: {e}"))??;
    let wall = started_at.elapsed();
    let cpu_ticks = procfs::cpu_ticks(me).map_err(read_err)? - cpu_before;
    let rss_after_kb = procfs::status_kb(me, "VmRSS").map_err(read_err)?;
    let unknown = finished.iter().filter(|t| !threads.contains(*t)).count();
    if unknown > 0 {
        return Err(format!("{unknown} finished threads were not started here"));
    }

    let stopping = Instant::now();
    let threads: Arc<Vec<String>> = Arc::new(threads.into_iter().collect());
    if threads.len() != SESSIONS {
        return Err(format!(
            "{} distinct threads started, not {SESSIONS}",
            threads.len()
        ));
    }
    in_parallel(client, SESSIONS, move |client, i| {
        let thread = threads[i].clone();
        async move {
            client
                .call("threads.stop", &json!({ "thread": thread }))
                .await
                .map_err(|e| format!("threads.stop failed: {e}"))
        }
    })
    .await?;
    let stop = stopping.elapsed();
    let pids: Value = client
        .call("threads.pids", &json!({}))
        .await
        .map_err(|e| format!("threads.pids failed: {e}"))?;
    Ok(Many {
        sessions: SESSIONS,
        wall,
        cpu_s: cpu_ticks as f64 / procfs::clk_tck().0 as f64,
        rss_before_kb,
        rss_after_kb,
        stop,
        pids_left: pids["pids"].as_array().map_or(usize::MAX, Vec::len),
    })
}

/// `call(client, i)` for every `i` below `n`, [`AT_ONCE`] at a time (the client connects
/// anew for each call); the answers, in no particular order.
async fn in_parallel<T, F, Fut>(client: &Client, n: usize, call: F) -> Result<Vec<T>, String>
where
    T: Send + 'static,
    F: Fn(Client, usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<T, String>> + Send,
{
    let next = Arc::new(AtomicUsize::new(0));
    let call = Arc::new(call);
    let mut workers = JoinSet::new();
    for _ in 0..AT_ONCE {
        let (client, next, call) = (client.clone(), next.clone(), call.clone());
        workers.spawn(async move {
            let mut got = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return Ok::<_, String>(got);
                }
                got.push(call(client.clone(), i).await?);
            }
        });
    }
    let mut all = Vec::with_capacity(n);
    while let Some(done) = workers.join_next().await {
        all.extend(done.map_err(|e| format!("a worker failed: {e}"))??);
    }
    Ok(all)
}
