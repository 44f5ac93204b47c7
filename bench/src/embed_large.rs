//! Dense recall's search inside vyred on a large history (issue 22: `recall.search` with both
//! halves on 233k turns, p95 under 25 ms): the release vyred on the recall benchmark's corpus
//! with the model configured, searched over its socket as a client does, by both halves and by
//! words alone (the reference) in the same run.
//!
//! Embedding 233k turns takes hours on two cores, so the vectors are written into the store
//! while vyred is stopped, as its worker would have left them (each turn a real turn's vector
//! leaning towards another's, see `embed_quality::like_real`), under the model's fingerprint.
//! vyred is then started again: it reads them at the first search, which is timed on its own.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use vyre::modules::recall::dense::vectors::{self, Packed};
use vyre::surfaces::client::Client;

use crate::procfs;
use crate::recall_corpus::{self, Rng};
use crate::report::{Against, Report, Val};
use crate::sessions::percentile;
use crate::spawn::{self, Server};

/// Searches of each kind, round-robin over the corpus's queries.
const SEARCHES: usize = 300;

pub async fn run(
    model: &Path,
    reals: &[Packed],
    quick: bool,
    report: &mut Report,
) -> Result<(), String> {
    if reals.is_empty() {
        return Err("no real vectors to make a history's from".into());
    }
    let shape = if quick {
        recall_corpus::QUICK
    } else {
        recall_corpus::FULL
    };
    let vyred = spawn::vyred()?;
    let mut written = None;
    // First the words alone: the embedder off, so only the index is made.
    let mut server = Server::spawn_configured(&vyred, |dir| {
        let projects = vyre::kernel::transcripts::projects_dir(&dir.join("home"));
        written = Some(recall_corpus::generate(
            &projects,
            shape,
            crate::recall::SEED,
        )?);
        nix::unistd::sync();
        Ok(Some(
            json!({ "recall": { "model": model, "embed": false } }),
        ))
    })?;
    let corpus = written.ok_or("the corpus was not written")?;
    eprintln!(
        "embed: indexing {} transcripts...",
        corpus.transcripts.len()
    );
    server.wait_healthy(Duration::from_millis(5)).await?;
    let client = Client::socket(server.socket());
    let turns = indexed(&client).await?;
    let vyre_home = server.dir().join("vyre");
    eprintln!("embed: {turns} turns indexed; writing their vectors...");
    // Stopped while the store is written: vyred is its only writer while it runs.
    let mut server = server
        .restart_after(|| write_vectors(&vyre_home, model, reals, turns))
        .await?;
    server.wait_healthy(Duration::from_millis(5)).await?;
    let client = Client::socket(server.socket());
    let pid = server.pid();
    // A person searches a history that has settled: the memory's curator makes one pass over a
    // new history (its end is one `memory.learned`), and searches during it share the cores.
    eprintln!("embed: waiting for the memory's first pass over the history...");
    let settled = Instant::now();
    let curated = curated(&client).await;

    let search = |q: &str, mode: &str| {
        let client = &client;
        let input = json!({ "query": q, "mode": mode });
        async move {
            let at = Instant::now();
            client
                .call("recall.search", &input)
                .await
                .map_err(|e| format!("recall.search failed: {e}"))?;
            Ok::<f64, String>(at.elapsed().as_secs_f64() * 1000.0)
        }
    };
    let first = search(&corpus.queries[0].text, "both").await?;
    let status = client
        .call("recall.status", &json!({}))
        .await
        .map_err(|e| format!("recall.status failed: {e}"))?;
    if status["dense"]["embedded"].as_i64() != Some(turns) || status["dense"]["loaded"] != true {
        return Err(format!(
            "vyred did not take the vectors written for its {turns} turns: {}",
            status["dense"]
        ));
    }
    let (mut both, mut words) = (Vec::new(), Vec::new());
    for i in 0..SEARCHES {
        let q = &corpus.queries[i % corpus.queries.len()].text;
        both.push(search(q, "both").await?);
        words.push(search(q, "words").await?);
    }
    both.sort_by(f64::total_cmp);
    words.sort_by(f64::total_cmp);
    let rss = procfs::status_kb(pid, "VmRSS").unwrap_or(0) as f64 / 1024.0;
    server.stop().await?;

    for (key, label, p) in [
        ("dense.vyred_233k_search_p50_ms", "p50", 0.5),
        ("dense.vyred_233k_search_p95_ms", "p95", 0.95),
    ] {
        report.row_against(
            Against::FullText,
            key,
            &format!("recall.search in vyred, {turns} turns, both halves, {label} (ms)"),
            Val::Num(percentile(&both, p), 2),
            Val::Num(percentile(&words, p), 2),
            if p > 0.9 { "under 25" } else { "" },
        );
    }
    let none = || Val::Missing("no reference here".into());
    report.row_against(
        Against::Nothing,
        "dense.vyred_233k_first_search_ms",
        "recall.search in vyred, the first after a start (reads the vectors) (ms)",
        Val::Num(first, 1),
        none(),
        "",
    );
    report.row_against(
        Against::Nothing,
        "dense.vyred_233k_rss_mib",
        "vyred RSS with the model and the 233k vectors loaded (MiB)",
        Val::Num(rss, 1),
        none(),
        "let go when idle",
    );
    report.note(format!(
        "dense in vyred, large history: the memory's first pass {} after the restart; searched after it",
        if curated {
            format!("ended {:.0} s", settled.elapsed().as_secs_f64())
        } else {
            "had not ended 10 minutes".to_string()
        }
    ));
    report.note(format!(
        "dense in vyred, large history: target/release/vyre daemon on the recall corpus ({turns} turns); vectors written into its store while it was stopped (made from {} real ones), then {SEARCHES} recall.search calls with mode both and {SEARCHES} with mode words, alternating, one at a time over the socket, round-robin over the corpus's {} queries",
        reals.len(),
        corpus.queries.len()
    ));
    Ok(())
}

/// Wait (up to 10 minutes) for the memory's curator to end its pass over the history: its
/// `memory.learned`, told once at a pass's end. True when it came.
async fn curated(client: &Client) -> bool {
    let Ok(mut stream) = client.events("types=memory.learned", None).await else {
        return false;
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(600), stream.next()).await,
        Ok(Some(Ok(_)))
    )
}

/// Wait for the start-up scan to end; the turns recall holds.
async fn indexed(client: &Client) -> Result<i64, String> {
    let started = Instant::now();
    loop {
        if started.elapsed() > Duration::from_secs(600) {
            return Err("recall did not finish its scan within 10 minutes".into());
        }
        if let Ok(s) = client.call("recall.status", &json!({})).await {
            let p = &s["progress"];
            if p["scanning"] == false && p["total"].as_u64().is_some_and(|t| t > 0) {
                return s["turns"]
                    .as_i64()
                    .ok_or_else(|| format!("recall.status without turns: {s}"));
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A vector for every turn in the stopped vyred's store, under `model`'s fingerprint, with
/// the embedder turned on for the next start.
fn write_vectors(
    vyre_home: &Path,
    model: &Path,
    reals: &[Packed],
    turns: i64,
) -> Result<(), String> {
    let fingerprint = vyre::modules::recall::embed::fingerprint(model)
        .map_err(|e| format!("the model in {}: {e}", model.display()))?;
    let err = |e: rusqlite::Error| format!("the store: {e}");
    let mut c = rusqlite::Connection::open(vyre_home.join("vyre.db")).map_err(err)?;
    let ids: Vec<i64> = c
        .prepare("SELECT id FROM recall_turns ORDER BY id")
        .map_err(err)?
        .query_map([], |r| r.get(0))
        .map_err(err)?
        .collect::<Result<_, _>>()
        .map_err(err)?;
    if ids.len() as i64 != turns {
        return Err(format!(
            "the store holds {} turns, recall said {turns}",
            ids.len()
        ));
    }
    let dim = reals[0].codes.len();
    let reals: Vec<Vec<f32>> = reals
        .iter()
        .map(|p| p.codes.iter().map(|&c| c as f32 * p.scale).collect())
        .collect();
    let mut rng = Rng::new(11);
    let tx = c.transaction().map_err(err)?;
    {
        let mut put = tx
            .prepare("INSERT OR REPLACE INTO recall_vectors (id, v) VALUES (?1, ?2)")
            .map_err(err)?;
        for (i, id) in ids.iter().enumerate() {
            let v = crate::embed_quality::lean(
                &reals[i % reals.len()],
                &reals[rng.below(reals.len())],
                &mut rng,
            );
            debug_assert_eq!(v.len(), dim);
            put.execute(rusqlite::params![id, vectors::to_bytes(&vectors::pack(&v))])
                .map_err(err)?;
        }
    }
    tx.execute(
        "INSERT INTO recall_dense (key, value) VALUES ('model', ?1)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [&fingerprint],
    )
    .map_err(err)?;
    tx.commit().map_err(err)?;
    let config = vyre::kernel::paths::VyreHome::at(vyre_home).config_file();
    std::fs::write(
        &config,
        json!({ "recall": { "model": model, "idle_s": 3600 } }).to_string(),
    )
    .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
    Ok(())
}
