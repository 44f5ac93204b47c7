//! Dense recall's quality and its search cost (issue 22). Quality: a labelled set of questions
//! (`bench/data/recall-quality.json`: realistic turns of a person and Claude, questions asked in
//! other words than the turn that answers them, questions that name an exact token, and turns
//! that share a question's words but not its meaning), mixed into turns of the recall corpus,
//! searched by words alone (every word, then any), by meaning alone and by both fused, through
//! the functions `recall.search` runs. The figure is MRR@10: the mean of 1/place of the first
//! right answer in the top ten (0 when none is there). Full text is the reference column.
//!
//! Cost: the query's embedding (on every core, as a search does), the search of a large history
//! (233,000 turns) in its two steps beside the comparison with every vector, with the share of
//! the exact best the two steps keep, and the store's size per 100k vectors. The large history's
//! vectors are made from the real ones (embedding that many takes hours): each a real turn's
//! leaning towards another's, so they cluster as a history's do.

use std::path::Path;
use std::time::Instant;

use serde_json::Value;
use vyre::modules::recall::dense::vectors::{self, Vectors};
use vyre::modules::recall::embed::Embedder;
use vyre::modules::recall::search;

use crate::recall_corpus::Rng;
use crate::report::{Against, Report, Val};
use crate::sessions::percentile;

/// Turns of the generated corpus mixed in as noise (a tenth with `--quick`).
const NOISE: usize = 2000;
const LARGE_HISTORY: usize = 233_000;
/// What each half ranks before fusion, as `recall.search` does.
const POOL: usize = 50;

struct Query {
    text: String,
    kind: String,
    answers: Vec<i64>,
}

/// MRR@10 of `ranked` (turn ids, best first) against `answers`.
fn reciprocal_rank(ranked: &[i64], answers: &[i64]) -> f64 {
    ranked
        .iter()
        .take(10)
        .position(|id| answers.contains(id))
        .map_or(0.0, |p| 1.0 / (p as f64 + 1.0))
}

pub fn run(
    model: &Embedder,
    noise: &[String],
    quick: bool,
    report: &mut Report,
) -> Result<Vec<vectors::Packed>, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/recall-quality.json");
    let data: Value = serde_json::from_str(
        &std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?,
    )
    .map_err(|e| format!("{}: {e}", path.display()))?;

    // The store as recall keeps it, in memory: the labelled turns, then the noise.
    let mut conn = rusqlite::Connection::open_in_memory().map_err(|e| e.to_string())?;
    vyre::kernel::store::migrate(&mut conn, "recall", vyre::modules::recall::rows::MIGRATIONS)
        .map_err(|e| e.to_string())?;
    let mut texts: Vec<String> = Vec::new();
    let mut id_of = std::collections::HashMap::new();
    for t in data["turns"].as_array().ok_or("no turns")? {
        let text = t["text"].as_str().ok_or("a turn without text")?;
        texts.push(text.to_string());
        id_of.insert(
            t["id"].as_str().unwrap_or_default().to_string(),
            texts.len() as i64,
        );
    }
    let labelled = texts.len();
    let want = if quick { NOISE / 10 } else { NOISE };
    texts.extend(noise.iter().take(want).cloned());
    {
        let tx = conn.transaction().map_err(|e| e.to_string())?;
        for (i, text) in texts.iter().enumerate() {
            tx.execute(
                "INSERT INTO recall_turns (id, session, key, uuid, role, text) VALUES (?1, 'bench', ?2, ?2, 'user', ?3)",
                rusqlite::params![i as i64 + 1, format!("k{i}"), text],
            )
            .map_err(|e| e.to_string())?;
            tx.execute(
                "INSERT INTO recall_fts(rowid, text) VALUES (?1, ?2)",
                rusqlite::params![i as i64 + 1, text],
            )
            .map_err(|e| e.to_string())?;
        }
        tx.commit().map_err(|e| e.to_string())?;
    }
    let queries: Vec<Query> = data["queries"]
        .as_array()
        .ok_or("no queries")?
        .iter()
        .map(|q| Query {
            text: q["query"].as_str().unwrap_or_default().to_string(),
            kind: q["kind"].as_str().unwrap_or_default().to_string(),
            answers: q["answers"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|a| a.as_str().and_then(|a| id_of.get(a)).copied())
                .collect(),
        })
        .collect();

    // Every turn embedded on every core, as the worker would over time.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut packed: Vec<Option<vectors::Packed>> = vec![None; texts.len()];
    std::thread::scope(|s| {
        let chunk = texts.len().div_ceil(cores);
        for (texts, out) in texts.chunks(chunk).zip(packed.chunks_mut(chunk)) {
            s.spawn(move || {
                for (t, o) in texts.iter().zip(out) {
                    let head: String = t
                        .chars()
                        .take(vyre::modules::recall::dense::TEXT_CHARS)
                        .collect();
                    *o = Some(vectors::pack(&model.embed(&head)));
                }
            });
        }
    });
    let mut index = Vectors::new(model.dim());
    for (i, p) in packed.iter().enumerate() {
        if let Some(p) = p {
            index.put(i as i64 + 1, "bench", p);
        }
    }

    // Each way of searching, per kind of question.
    let ways = [
        "words (every word)",
        "words (any word)",
        "meaning",
        "both (every word)",
        "both (any word)",
    ];
    let mut sums: std::collections::BTreeMap<(String, usize), (f64, usize)> = Default::default();
    let mut embed_ms = Vec::new();
    for q in &queries {
        let ranked = |fts: Option<String>| -> Vec<(i64, f64)> {
            fts.and_then(|f| search::ranked(&conn, &f, None, POOL).ok())
                .unwrap_or_default()
        };
        let all = ranked(search::fts_query(&q.text));
        let any = ranked(search::fts_query_any(&q.text));
        let at = Instant::now();
        let v = model.embed_now(&q.text);
        embed_ms.push(at.elapsed().as_secs_f64() * 1000.0);
        let meaning = index.nearest(&v, None, POOL);
        let ids = |f: Vec<search::Found>| f.into_iter().map(|f| f.id).collect::<Vec<_>>();
        let lists = [
            all.iter().map(|x| x.0).collect::<Vec<_>>(),
            any.iter().map(|x| x.0).collect(),
            meaning.iter().map(|x| x.0).collect(),
            ids(search::fuse(&all, &meaning, 10)),
            ids(search::fuse(&any, &meaning, 10)),
        ];
        for (w, list) in lists.iter().enumerate() {
            let rr = reciprocal_rank(list, &q.answers);
            for kind in [q.kind.clone(), "all".to_string()] {
                let e = sums.entry((kind, w)).or_default();
                e.0 += rr;
                e.1 += 1;
            }
        }
    }
    let mrr = |kind: &str, w: usize| {
        sums.get(&(kind.to_string(), w))
            .map_or(0.0, |(s, n)| s / *n as f64)
    };
    for kind in ["all", "paraphrase", "keyword"] {
        let n = sums.get(&(kind.to_string(), 0)).map_or(0, |x| x.1);
        for (w, way) in ways.iter().enumerate().skip(2) {
            // Fusion is compared with the words it fuses; meaning alone with the better words.
            let reference = match w {
                3 => mrr(kind, 0),
                4 => mrr(kind, 1),
                _ => mrr(kind, 0).max(mrr(kind, 1)),
            };
            report.row_against(
                Against::FullText,
                &format!(
                    "dense.mrr10_{}_{}",
                    kind,
                    way.replace([' ', '(', ')'], "_")
                        .replace("__", "_")
                        .trim_end_matches('_')
                ),
                &format!("recall MRR@10, {kind} questions ({n}): {way}"),
                Val::Num(mrr(kind, w), 3),
                Val::Num(reference, 3),
                if kind == "all" && w == 2 {
                    "beat full text by more than 0.195 to 0.142"
                } else {
                    ""
                },
            );
        }
    }
    embed_ms.sort_by(f64::total_cmp);

    // The search's cost at the size of a large history, and what its two steps keep of the
    // exact answer: vectors like real ones (each a real turn's, leaning towards another's,
    // with a little noise), so they cluster as a history's do.
    let reals: Vec<Vec<f32>> = packed
        .iter()
        .flatten()
        .map(|p| p.codes.iter().map(|&c| c as f32 * p.scale).collect())
        .collect();
    let big = like_real(&reals, LARGE_HISTORY, model.dim());
    let questions: Vec<Vec<f32>> = queries.iter().map(|q| model.embed_now(&q.text)).collect();
    let (mut two_ms, mut every_ms, mut fenced_ms) = (Vec::new(), Vec::new(), Vec::new());
    let (mut kept10, mut kept50) = (0usize, 0usize);
    let fence: Vec<String> = (0..20).map(|s| format!("s{s}")).collect();
    for (i, v) in questions
        .iter()
        .cycle()
        .take(if quick { 40 } else { 200 })
        .enumerate()
    {
        let at = Instant::now();
        let two = std::hint::black_box(big.nearest(v, None, POOL));
        two_ms.push(at.elapsed().as_secs_f64() * 1000.0);
        let at = Instant::now();
        let every = std::hint::black_box(big.nearest_exact(v, POOL));
        every_ms.push(at.elapsed().as_secs_f64() * 1000.0);
        let at = Instant::now();
        std::hint::black_box(big.nearest(v, Some(&fence), POOL));
        fenced_ms.push(at.elapsed().as_secs_f64() * 1000.0);
        if i < questions.len() {
            let ids =
                |h: &[(i64, f32)], n: usize| h.iter().take(n).map(|x| x.0).collect::<Vec<_>>();
            let (t10, t50) = (ids(&two, 10), ids(&two, 50));
            kept10 += ids(&every, 10).iter().filter(|id| t10.contains(id)).count();
            kept50 += ids(&every, 50).iter().filter(|id| t50.contains(id)).count();
        }
    }
    for l in [&mut two_ms, &mut every_ms, &mut fenced_ms] {
        l.sort_by(f64::total_cmp);
    }
    for (key, label, k, kept) in [
        ("dense.shortlist_recall10", "the best 10", 10, kept10),
        ("dense.shortlist_recall50", "the best 50", 50, kept50),
    ] {
        report.row_against(
            Against::EveryVector,
            key,
            &format!("recall, 233k vectors: share of {label} the two steps keep"),
            Val::Num(kept as f64 / (k * questions.len()) as f64, 3),
            Val::Num(1.0, 3),
            "",
        );
    }
    for (key, label, p) in [
        ("dense.scan_233k_p50_ms", "p50", 0.5),
        ("dense.scan_233k_p95_ms", "p95", 0.95),
    ] {
        report.row_against(
            Against::EveryVector,
            key,
            &format!("recall: compare with 233k vectors, {label} (ms)"),
            Val::Num(percentile(&two_ms, p), 2),
            Val::Num(percentile(&every_ms, p), 2),
            "",
        );
    }

    // The store's size per 100k vectors, as recall keeps them.
    let file = std::env::temp_dir().join(format!("vyre-bench-vectors-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let bytes = {
        let mut c = rusqlite::Connection::open(&file).map_err(|e| e.to_string())?;
        c.execute_batch("CREATE TABLE recall_vectors (id INTEGER PRIMARY KEY, v BLOB NOT NULL);")
            .map_err(|e| e.to_string())?;
        let tx = c.transaction().map_err(|e| e.to_string())?;
        let one = vectors::to_bytes(packed[0].as_ref().ok_or("nothing embedded")?);
        for id in 0..100_000i64 {
            tx.execute(
                "INSERT INTO recall_vectors (id, v) VALUES (?1, ?2)",
                rusqlite::params![id, one],
            )
            .map_err(|e| e.to_string())?;
        }
        tx.commit().map_err(|e| e.to_string())?;
        drop(c);
        std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0)
    };
    let _ = std::fs::remove_file(&file);

    let none = || Val::Missing("no reference here".into());
    for (key, label, v, target) in [
        (
            "dense.query_embed_p50_ms",
            "recall: embed a question, p50 (ms)",
            percentile(&embed_ms, 0.5),
            "",
        ),
        (
            "dense.query_embed_p95_ms",
            "recall: embed a question, p95 (ms)",
            percentile(&embed_ms, 0.95),
            "",
        ),
        (
            "dense.scan_233k_fenced_p95_ms",
            "recall: the same, fenced to 20 of 2000 sessions, p95 (ms)",
            percentile(&fenced_ms, 0.95),
            "",
        ),
    ] {
        report.row_against(Against::Nothing, key, label, Val::Num(v, 2), none(), target);
    }
    report.row_against(
        Against::Nothing,
        "dense.vectors_233k_mib",
        "recall: vectors of 233k turns in memory (MiB)",
        Val::Num(big.bytes() as f64 / 1_048_576.0, 1),
        none(),
        "let go when idle",
    );
    report.row_against(
        Against::Nothing,
        "dense.store_100k_mib",
        "recall: vectors of 100k turns in the store (MiB)",
        Val::Num(bytes as f64 / 1_048_576.0, 1),
        none(),
        "",
    );
    report.note(format!(
        "recall quality: {} questions over {labelled} labelled turns and {} turns of the generated corpus; MRR@10, the reference column is full text alone",
        queries.len(),
        texts.len() - labelled
    ));
    Ok(packed.into_iter().flatten().collect())
}

/// `n` unit vectors like `reals`, in 2000 sessions.
fn like_real(reals: &[Vec<f32>], n: usize, dim: usize) -> Vectors {
    let mut rng = Rng::new(7);
    let mut big = Vectors::new(dim);
    for id in 0..n {
        let v = lean(
            &reals[id % reals.len()],
            &reals[rng.below(reals.len())],
            &mut rng,
        );
        big.put(id as i64, &format!("s{}", id % 2000), &vectors::pack(&v));
    }
    big
}

/// A unit vector like a real one: `a` leaning towards `b` (by a fifth to a half), with a
/// little noise.
pub fn lean(a: &[f32], b: &[f32], rng: &mut Rng) -> Vec<f32> {
    let by = 0.2 + 0.3 * rng.unit() as f32;
    let v: Vec<f32> = a
        .iter()
        .zip(b)
        .map(|(x, y)| x + by * y + 0.02 * (rng.unit() as f32 - 0.5))
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter().map(|x| x / norm).collect()
}
