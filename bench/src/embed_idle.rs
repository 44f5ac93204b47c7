//! Dense recall inside vyred (issue 22): the release vyred on a small generated history with the
//! model configured, as a person runs it. How fast its worker (one thread at nice 19) embeds the
//! history, vyred's memory while it embeds, after searches by meaning, and once the model and the
//! vectors were let go for being idle (the target: back under 40 MB within a minute).

use std::time::{Duration, Instant};

use serde_json::json;
use vyre::surfaces::client::Client;

use crate::procfs;
use crate::recall_corpus::{self, Shape};
use crate::report::{Against, Report, Val};
use crate::spawn::{self, Server};

/// A small history: enough turns to measure a rate, few enough to embed in a minute or two.
const SHAPE: Shape = Shape {
    folders: 2,
    transcripts: 10,
    turns: 300,
};
/// `recall.idle_s` for the run: the default is 60 s; the bench waits less.
const IDLE_S: u64 = 10;

fn rss_mib(pid: u32) -> f64 {
    procfs::status_kb(pid, "VmRSS").unwrap_or(0) as f64 / 1024.0
}

pub async fn run(model: &std::path::Path, report: &mut Report) -> Result<(), String> {
    let vyred = spawn::vyred()?;
    let model = model.to_path_buf();
    let server = Server::spawn_configured(&vyred, |dir| {
        let projects = vyre::kernel::transcripts::projects_dir(&dir.join("home"));
        recall_corpus::generate(&projects, SHAPE, crate::recall::SEED)?;
        Ok(Some(
            json!({ "recall": { "model": model, "idle_s": IDLE_S } }),
        ))
    })?;
    let pid = server.pid();
    let client = Client::socket(server.socket());
    let started = Instant::now();
    let mut peak_embedding = 0f64;
    let turns = loop {
        if started.elapsed() > Duration::from_secs(900) {
            return Err("vyred did not embed its history within 15 minutes".into());
        }
        if let Ok(s) = client.call("recall.status", &json!({})).await {
            let turns = s["turns"].as_i64().unwrap_or(0);
            if s["dense"]["state"] == "broken" {
                return Err(format!(
                    "vyred cannot use the model: {}",
                    s["dense"]["error"]
                ));
            }
            if turns > 0 && s["dense"]["embedded"].as_i64() == Some(turns) {
                break turns;
            }
        }
        peak_embedding = peak_embedding.max(rss_mib(pid));
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let took = started.elapsed().as_secs_f64();
    let mut times = Vec::new();
    for q in [
        "how did we fix the failing deploy",
        "memory use of the server",
        "a question about tests",
    ] {
        for _ in 0..10 {
            let at = Instant::now();
            client
                .call("recall.search", &json!({ "query": q, "limit": 20 }))
                .await
                .map_err(|e| e.to_string())?;
            times.push(at.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let searching = rss_mib(pid);
    times.sort_by(f64::total_cmp);
    let quiet = Instant::now();
    let mut idle = searching;
    while quiet.elapsed() < Duration::from_secs(IDLE_S + 20) {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let s = client
            .call("recall.status", &json!({}))
            .await
            .map_err(|e| e.to_string())?;
        if s["dense"]["loaded"] == false && s["dense"]["held"] == 0 {
            tokio::time::sleep(Duration::from_secs(1)).await;
            idle = rss_mib(pid);
            break;
        }
    }
    let let_go_after = quiet.elapsed().as_secs_f64();
    server.stop().await?;

    let none = || Val::Missing("no reference here".into());
    let idle_label = format!("dense in vyred: RSS once idle ({IDLE_S} s) and let go (MiB)");
    let rows = [
        (
            "dense.vyred_turns_per_s",
            "dense in vyred: turns embedded per second (one thread, nice 19)",
            turns as f64 / took,
            1,
            "",
        ),
        (
            "dense.vyred_rss_embedding_mib",
            "dense in vyred: RSS while embedding, peak (MiB)",
            peak_embedding,
            1,
            "",
        ),
        (
            "dense.vyred_search_p50_ms",
            "dense in vyred: recall.search, both halves, p50 (ms)",
            crate::sessions::percentile(&times, 0.5),
            2,
            "",
        ),
        (
            "dense.vyred_rss_searching_mib",
            "dense in vyred: RSS after searches (MiB)",
            searching,
            1,
            "",
        ),
        (
            "dense.vyred_rss_idle_mib",
            idle_label.as_str(),
            idle,
            1,
            "under 40",
        ),
    ];
    for (key, label, v, digits, target) in rows {
        report.row_against(
            Against::Nothing,
            key,
            label,
            Val::Num(v, digits),
            none(),
            target,
        );
    }
    report.note(format!(
        "dense in vyred: target/release/vyre daemon on {turns} turns of the generated corpus with recall.model set and recall.idle_s {IDLE_S}; embedded in {took:.1} s; 30 searches (3 questions, mode both); the model and vectors were let go {let_go_after:.1} s after the last search"
    ));
    Ok(())
}
