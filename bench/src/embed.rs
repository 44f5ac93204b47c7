//! Dense recall's model (issue 22): what embedding turns costs on this machine, with the model
//! a registry package ships (all-MiniLM-L6-v2; `VYRE_EMBED_MODEL`, or where `tests/run` puts
//! it). The turns are the recall benchmark's generated corpus (a tenth of it), read back from
//! its transcripts: the time to load the model and the memory it takes, then turns embedded per
//! second on one thread and on every core, the time per turn (p50, p95), and what the 233,000
//! turns of a large history would take at that rate.
//!
//! No reference runs beside it: sentence-transformers needs torch, which this machine does not
//! have. The model's output is checked against its model card in the daemon's tests.

use std::path::{Path, PathBuf};
use std::time::Instant;

use vyre::modules::recall::embed::Embedder;

use crate::Opts;
use crate::procfs;
use crate::recall_corpus;
use crate::report::{Against, Report, Val};
use crate::sessions::percentile;

/// Turns embedded (a tenth with `--quick`).
const TURNS: usize = 3000;
/// A large history, as recall's benchmark measured one.
const LARGE_HISTORY: f64 = 233_000.0;

fn model_dir() -> PathBuf {
    std::env::var_os("VYRE_EMBED_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/vyre-embed-model/model-0.1.2"))
}

/// The words of the corpus's turns, prompts and replies, in file order.
fn turns_of(dir: &Path, want: usize) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut files: Vec<PathBuf> = walk(dir)?;
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let content = &v["message"]["content"];
            let words = match content.as_str() {
                Some(s) => s.to_string(),
                None => content
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|b| b["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
            };
            if !words.trim().is_empty() {
                out.push(words);
                if out.len() >= want {
                    return Ok(out);
                }
            }
        }
    }
    Ok(out)
}

fn walk(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| e.to_string())? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            out.extend(walk(&path)?);
        } else if path.extension().is_some_and(|x| x == "jsonl") {
            out.push(path);
        }
    }
    Ok(out)
}

pub async fn run(opts: &Opts, report: &mut Report) -> Result<(), String> {
    let dir = model_dir();
    let me = std::process::id();
    let rss_before = procfs::status_kb(me, "VmRSS").unwrap_or(0);
    let started = Instant::now();
    let model = Embedder::load(&dir).map_err(|e| {
        format!("{e}\n(tests/run fetches the model; or set VYRE_EMBED_MODEL to its folder)")
    })?;
    let load_s = started.elapsed().as_secs_f64();
    let rss_model = procfs::status_kb(me, "VmRSS")
        .unwrap_or(0)
        .saturating_sub(rss_before);

    let scratch = std::env::temp_dir().join(format!("vyre-bench-embed-{me}"));
    let _ = std::fs::remove_dir_all(&scratch);
    recall_corpus::generate(&scratch, recall_corpus::QUICK, crate::recall::SEED)?;
    let want = if opts.quick { TURNS / 10 } else { TURNS };
    let texts = turns_of(&scratch, want)?;
    let _ = std::fs::remove_dir_all(&scratch);
    if texts.is_empty() {
        return Err("the corpus has no turns".into());
    }
    let tokens: usize = texts.iter().map(|t| model.tokens(t).len()).sum();

    // One thread, as vyred's background embedding runs.
    let mut times = Vec::with_capacity(texts.len());
    let one = Instant::now();
    for t in &texts {
        let at = Instant::now();
        std::hint::black_box(model.embed(t));
        times.push(at.elapsed().as_secs_f64() * 1000.0);
    }
    let one_rate = texts.len() as f64 / one.elapsed().as_secs_f64();
    times.sort_by(f64::total_cmp);

    // Every core, each its own share.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let all = Instant::now();
    std::thread::scope(|s| {
        for share in texts.chunks(texts.len().div_ceil(cores)) {
            let model = &model;
            s.spawn(move || {
                for t in share {
                    std::hint::black_box(model.embed(t));
                }
            });
        }
    });
    let all_rate = texts.len() as f64 / all.elapsed().as_secs_f64();

    let none = || Val::Missing("no torch here".into());
    report.row_against(
        Against::Nothing,
        "embed.load_s",
        "embed: load the model (s)",
        Val::Num(load_s, 2),
        none(),
        "",
    );
    report.row_against(
        Against::Nothing,
        "embed.model_rss_mib",
        "embed: memory the loaded model takes (MiB)",
        Val::Num(rss_model as f64 / 1024.0, 1),
        none(),
        "unloaded when idle",
    );
    report.row_against(
        Against::Nothing,
        "embed.tokens_per_turn",
        "embed: tokens per turn (mean, at most 256)",
        Val::Num(tokens as f64 / texts.len() as f64, 1),
        none(),
        "",
    );
    report.row_against(
        Against::Nothing,
        "embed.turns_per_s_1",
        "embed: turns per second, one thread",
        Val::Num(one_rate, 1),
        none(),
        "",
    );
    report.row_against(
        Against::Nothing,
        "embed.turns_per_s_all",
        &format!("embed: turns per second, {cores} threads"),
        Val::Num(all_rate, 1),
        none(),
        "",
    );
    report.row_against(
        Against::Nothing,
        "embed.turn_p50_ms",
        "embed: one turn, p50 (ms)",
        Val::Num(percentile(&times, 0.50), 2),
        none(),
        "",
    );
    report.row_against(
        Against::Nothing,
        "embed.turn_p95_ms",
        "embed: one turn, p95 (ms)",
        Val::Num(percentile(&times, 0.95), 2),
        none(),
        "",
    );
    report.row_against(
        Against::Nothing,
        "embed.large_history_min",
        "embed: 233,000 turns on one thread (min)",
        Val::Num(LARGE_HISTORY / one_rate / 60.0, 1),
        none(),
        "",
    );
    report.note(format!(
        "embed: {} turns of the recall corpus, model {}",
        texts.len(),
        dir.display()
    ));
    let reals = crate::embed_quality::run(&model, &texts, opts.quick, report)?;
    drop(model);
    crate::embed_large::run(&dir, &reals, opts.quick, report).await?;
    crate::embed_idle::run(&dir, report).await
}
