//! Recall (issue 6): what indexing Claude Code's transcripts costs vyred, on a generated corpus
//! ([`crate::recall_corpus`]) of 2,000 transcripts and 100,000 turns in 100 project folders
//! (a tenth with `--quick`), written under the spawned vyred's `HOME/.claude/projects` before it
//! starts.
//!
//! - the full index: from the spawn to the `history.indexed` event that ends the start-up scan;
//! - an appended prompt, from the write to the file to the first `recall.search` that finds it;
//! - `recall.search` latency over a fixed set of queries, as a client over the socket sees it;
//! - vyred's memory once the index settled, its peak, and the store's size on disk.

use std::io::Write as _;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use vyre::surfaces::client::Client;

use crate::Opts;
use crate::procfs;
use crate::recall_corpus::{self, Corpus, QueryKind, Rng};
use crate::report::{Report, Val, group_thousands};
use crate::resume::disk_bytes;
use crate::sessions::{mib, percentile};
use crate::spawn::{self, Server};

/// The corpus's seed: every run writes the same bytes.
pub const SEED: u64 = 0x7ec4_1100_0006;
/// Appended prompts timed.
const APPENDS: usize = 50;
/// Searches timed, round-robin over the queries.
const SEARCHES: usize = 500;
/// How often a client asks whether the appended prompt is searchable yet.
const POLL: Duration = Duration::from_millis(1);
/// The pause between two appended prompts.
const BETWEEN: Duration = Duration::from_millis(50);
/// The wait after the scan before vyred's memory is read.
const SETTLE: Duration = Duration::from_secs(3);
/// How long the full index may take before the benchmark gives up.
const INDEX_TIMEOUT: Duration = Duration::from_secs(900);
/// How long an appended prompt may take to become searchable before the benchmark gives up.
const APPEND_TIMEOUT: Duration = Duration::from_secs(10);

pub async fn run(opts: &Opts, report: &mut Report) -> Result<(), String> {
    let shape = if opts.quick {
        recall_corpus::QUICK
    } else {
        recall_corpus::FULL
    };
    let vyred = spawn::vyred()?;
    // The machine may be shared: what else was running shows in the load average.
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    report.note(format!(
        "recall: load average (1, 5, 15 min) when the benchmark started: {}",
        if load.is_empty() {
            "unknown".to_string()
        } else {
            load.join(", ")
        }
    ));
    eprintln!(
        "recall: writing {} transcripts with {} turns in {} folders...",
        shape.transcripts, shape.turns, shape.folders
    );
    let mut written = None;
    let mut server = Server::spawn_configured(&vyred, |dir| {
        let projects = vyre::kernel::transcripts::projects_dir(&dir.join("home"));
        let corpus = recall_corpus::generate(&projects, shape, SEED)?;
        eprintln!(
            "recall: {:.0} MiB written in {:.1} s; flushing it to disk, then starting vyred...",
            corpus.bytes as f64 / 1048576.0,
            corpus.took.as_secs_f64()
        );
        // Nothing of the corpus is left for the kernel to write back while vyred reads it.
        nix::unistd::sync();
        written = Some(corpus);
        Ok(None)
    })?;
    let corpus = written.ok_or("the corpus was not written")?;
    let pid = server.pid();

    let index = full_index(&mut server, &corpus).await?;
    eprintln!(
        "recall: indexed in {:.1} s; settling {} s...",
        index.took.as_secs_f64(),
        SETTLE.as_secs()
    );
    tokio::time::sleep(SETTLE).await;
    let settled = Memory::read(pid)?;

    let client = Client::socket(server.socket());
    eprintln!("recall: {APPENDS} appended prompts...");
    let appends = appends(&client, &corpus).await?;
    eprintln!("recall: {SEARCHES} searches...");
    let searches = searches(&client, &corpus).await?;
    eprintln!("recall: a 900 KB query...");
    let long = long_queries(&client).await?;
    eprintln!("recall: a project's threads over the whole history...");
    let fence = crate::recall_fence::measure(&client, &corpus, server.dir()).await?;
    let end = Memory::read(pid)?;

    let vyre_home = server.dir().join("vyre");
    let store = Store {
        db: disk_bytes(&vyre_home.join("vyre.db")),
        wal: disk_bytes(&vyre_home.join("vyre.db-wal")),
        shm: disk_bytes(&vyre_home.join("vyre.db-shm")),
    };
    server.stop().await?;

    rows(report, &corpus, &index, &appends, &searches);
    long_rows(report, &long);
    crate::recall_fence::rows(report, &fence);
    memory_rows(report, &settled, &end, &store);
    Ok(())
}

/// The start-up scan, as the bench saw it.
struct Index {
    /// From just before the spawn to the `history.indexed` that ended the scan.
    took: Duration,
    /// From the spawn to the first answer of `/v1/health`.
    healthy: Duration,
    /// From the scan's first `history.indexed` to its last, by their `at` (vyred's clock).
    scan_ms: Option<i64>,
    events: usize,
    /// vyred's utime + stime from its start to the end of the scan, in seconds.
    cpu_s: f64,
    /// The same by thread name, in seconds, most first.
    threads: Vec<(String, f64)>,
    status: Value,
}

async fn full_index(server: &mut Server, corpus: &Corpus) -> Result<Index, String> {
    let healthy = server.wait_healthy(Duration::from_millis(1)).await?;
    let client = Client::socket(server.socket());
    // Replayed from the start of the log, so no event is missed however fast the scan is.
    let mut stream = client
        .events("types=history.indexed&since=0", None)
        .await
        .map_err(|e| format!("cannot subscribe to history.indexed: {e}"))?;
    let deadline = tokio::time::Instant::from_std(server.spawned_at() + INDEX_TIMEOUT);
    let (mut first_at, mut events) = (None, 0);
    let (took, last_at) = loop {
        let msg = tokio::time::timeout_at(deadline, stream.next())
            .await
            .map_err(|_| {
                format!(
                    "recall did not finish its scan within {} s",
                    INDEX_TIMEOUT.as_secs()
                )
            })?
            .ok_or("the event stream ended before the scan did")?
            .map_err(|e| format!("the event stream failed: {e}"))?;
        let at = Instant::now();
        let e: Value = serde_json::from_str(&msg.data)
            .map_err(|e| format!("an event that is not JSON: {e}: {}", msg.data))?;
        if e["type"] != "history.indexed" {
            continue;
        }
        events += 1;
        first_at = first_at.or(e["at"].as_i64());
        let p = &e["payload"];
        if p["scanning"] == false && p["total"].as_u64().is_some_and(|t| t > 0) {
            if p["done"] != p["total"] {
                return Err(format!("the scan ended short of its total: {p}"));
            }
            break (at - server.spawned_at(), e["at"].as_i64());
        }
    };
    let (tck, _) = procfs::clk_tck();
    let pid = server.pid();
    let cpu_s = procfs::cpu_ticks(pid).map_err(|e| format!("cannot read vyred's CPU: {e}"))? as f64
        / tck as f64;
    let threads = procfs::thread_cpu_by_name(pid)
        .unwrap_or_default()
        .into_iter()
        .map(|(name, t)| (name, t as f64 / tck as f64))
        .collect();
    let status = client
        .call("recall.status", &json!({}))
        .await
        .map_err(|e| format!("recall.status failed: {e}"))?;
    let total = status["progress"]["total"].as_u64();
    if total != Some(corpus.transcripts.len() as u64) {
        return Err(format!(
            "the scan saw {total:?} transcripts, not {}: {status}",
            corpus.transcripts.len()
        ));
    }
    Ok(Index {
        took,
        healthy,
        scan_ms: first_at.zip(last_at).map(|(a, b)| b - a),
        events,
        cpu_s,
        threads,
        status,
    })
}

/// Appended prompts: milliseconds from the write to the search that found it, sorted.
struct Appends {
    ms: Vec<f64>,
    /// Searches that did not find it yet, over all the appends.
    misses: usize,
}

/// Append a prompt with a word found nowhere else to a transcript (a different one each time),
/// then search for that word every [`POLL`] until it is found.
async fn appends(client: &Client, corpus: &Corpus) -> Result<Appends, String> {
    let mut rng = Rng::new(SEED ^ 0xa99e);
    let mut out = Appends {
        ms: Vec::with_capacity(APPENDS),
        misses: 0,
    };
    let n = corpus.transcripts.len();
    for i in 0..APPENDS {
        let t = &corpus.transcripts[(i * 37 + 11) % n];
        let word = format!("vyrebenchappended{i}");
        // No word of the benchmark's queries, so their expected hits stay right.
        let text = format!("Now look at {word} again please, it moved.");
        let line = recall_corpus::prompt_line(&mut rng, t, &text, vyre::now_ms());
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&t.path)
            .map_err(|e| format!("cannot open {}: {e}", t.path.display()))?;
        let start = Instant::now();
        file.write_all(line.as_bytes())
            .map_err(|e| format!("cannot append to {}: {e}", t.path.display()))?;
        loop {
            let hits = client
                .call("recall.search", &json!({ "query": word, "limit": 1 }))
                .await
                .map_err(|e| format!("recall.search failed: {e}"))?;
            if let Some(hit) = hits.as_array().and_then(|h| h.first()) {
                out.ms.push(start.elapsed().as_secs_f64() * 1000.0);
                if hit["thread"] != t.session.as_str() {
                    return Err(format!("{word} was found in another session: {hit}"));
                }
                break;
            }
            out.misses += 1;
            if start.elapsed() > APPEND_TIMEOUT {
                return Err(format!(
                    "a prompt appended to {} was not searchable within {} s",
                    t.path.display(),
                    APPEND_TIMEOUT.as_secs()
                ));
            }
            tokio::time::sleep(POLL).await;
        }
        drop(file);
        tokio::time::sleep(BETWEEN).await;
    }
    out.ms.sort_by(f64::total_cmp);
    Ok(out)
}

/// Search latencies in milliseconds, sorted: all, and by kind of query.
struct Searches {
    all: Vec<f64>,
    by_kind: Vec<(QueryKind, Vec<f64>)>,
    /// Queries whose hits (with limit 200) differ from what the corpus holds.
    wrong: Vec<String>,
}

async fn searches(client: &Client, corpus: &Corpus) -> Result<Searches, String> {
    let search = |input: Value| async move {
        client
            .call("recall.search", &input)
            .await
            .map_err(|e| format!("recall.search failed: {e}"))
    };
    // First, each query once with the largest limit: the hits must be what the corpus holds.
    // This also warms the store's caches up, as a day's use would.
    let mut wrong = vec![];
    for q in &corpus.queries {
        let hits = search(json!({ "query": q.text, "limit": 200 })).await?;
        let got = hits.as_array().map_or(0, Vec::len);
        if got != q.expected.min(200) {
            wrong.push(format!(
                "{:?} found {got}, the corpus has {}",
                q.text, q.expected
            ));
        }
    }
    let mut all = Vec::with_capacity(SEARCHES);
    let mut by_kind: Vec<(QueryKind, Vec<f64>)> =
        [QueryKind::Common, QueryKind::Rare, QueryKind::Pair]
            .into_iter()
            .map(|k| (k, vec![]))
            .collect();
    for i in 0..SEARCHES {
        let q = &corpus.queries[i % corpus.queries.len()];
        let start = Instant::now();
        search(json!({ "query": q.text })).await?;
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        all.push(ms);
        if let Some((_, v)) = by_kind.iter_mut().find(|(k, _)| *k == q.kind) {
            v.push(ms);
        }
    }
    all.sort_by(f64::total_cmp);
    for (_, v) in &mut by_kind {
        v.sort_by(f64::total_cmp);
    }
    Ok(Searches {
        all,
        by_kind,
        wrong,
    })
}

/// A pasted page as a query: about 900 KB of words, most of them distinct.
const LONG_QUERY_BYTES: usize = 900 * 1024;

/// `recall.search` with a [`LONG_QUERY_BYTES`] query, every word and any word, in ms; and the
/// hits each found.
struct Long {
    all_ms: f64,
    any_ms: f64,
    hits: (usize, usize),
    words: usize,
}

async fn long_queries(client: &Client) -> Result<Long, String> {
    let mut query = String::with_capacity(LONG_QUERY_BYTES + 32);
    let mut words = 0;
    while query.len() < LONG_QUERY_BYTES {
        query.push_str(&format!("pasted{words} "));
        words += 1;
    }
    let timed = |any: bool| {
        let input = json!({ "query": query, "any": any });
        async move {
            let start = Instant::now();
            let hits = client
                .call("recall.search", &input)
                .await
                .map_err(|e| format!("recall.search with a long query failed: {e}"))?;
            Ok::<_, String>((
                start.elapsed().as_secs_f64() * 1000.0,
                hits.as_array().map_or(0, Vec::len),
            ))
        }
    };
    let (all_ms, all_hits) = timed(false).await?;
    let (any_ms, any_hits) = timed(true).await?;
    Ok(Long {
        all_ms,
        any_ms,
        hits: (all_hits, any_hits),
        words,
    })
}

fn long_rows(report: &mut Report, l: &Long) {
    report.row(
        "recall.search_900kb_ms",
        "recall.search, a 900 KB query (ms)",
        Val::Num(l.all_ms, 1),
        none(),
        "bounded: its first 64 words",
    );
    report.row(
        "recall.search_900kb_any_ms",
        "  the same with any: true (ms)",
        Val::Num(l.any_ms, 1),
        none(),
        "",
    );
    report.note(format!(
        "recall long query: one recall.search each with a query of {} distinct words ({} KB, as a long paste the memory hook once sent whole), every word and then any word; recall uses the first {} distinct words (search::MAX_WORDS) and ignores the rest; hits found: {} and {}. Before the cap, 40,000 words took over 3 s and 900 KB ran for minutes",
        group_thousands(&l.words.to_string()),
        LONG_QUERY_BYTES / 1024,
        vyre::modules::recall::search::MAX_WORDS,
        l.hits.0,
        l.hits.1,
    ));
}

/// vyred's memory, in kB.
struct Memory {
    rss: u64,
    anon: u64,
    hwm: u64,
}

impl Memory {
    fn read(pid: u32) -> Result<Memory, String> {
        let kb = |key: &str| {
            procfs::status_kb(pid, key).map_err(|e| format!("cannot read vyred's {key}: {e}"))
        };
        Ok(Memory {
            rss: kb("VmRSS")?,
            anon: kb("RssAnon")?,
            hwm: kb("VmHWM")?,
        })
    }
}

/// The store's files, in bytes.
struct Store {
    db: u64,
    wal: u64,
    shm: u64,
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1048576.0
}

fn none() -> Val {
    Val::Missing("-".into())
}

fn rows(report: &mut Report, c: &Corpus, index: &Index, a: &Appends, s: &Searches) {
    let rows_indexed = index.status["turns"].as_u64().unwrap_or(0);
    let rows = [
        (
            "recall.corpus_mib",
            format!(
                "corpus: {} transcripts, {} turns, on disk (MiB)",
                c.transcripts.len(),
                c.turns
            ),
            Val::Num(mb(c.bytes), 0),
            String::new(),
        ),
        (
            "recall.index_s",
            "full index: spawn to the end of the scan (s)".to_string(),
            Val::Num(index.took.as_secs_f64(), 2),
            "< 20 on 2 cores".to_string(),
        ),
        (
            "recall.index_turns_per_s",
            "  turns (prompt + reply) per second".to_string(),
            Val::Num(c.turns as f64 / index.took.as_secs_f64(), 0),
            String::new(),
        ),
        (
            "recall.index_mib_per_s",
            "  transcript MiB per second".to_string(),
            Val::Num(mb(c.bytes) / index.took.as_secs_f64(), 0),
            String::new(),
        ),
        (
            "recall.index_cpu_s",
            "  vyred's CPU time to the end of the scan (s)".to_string(),
            Val::Num(index.cpu_s, 1),
            String::new(),
        ),
        (
            "recall.indexed_turns",
            "  turns in the index (recall.status turns)".to_string(),
            Val::Num(rows_indexed as f64, 0),
            format!(
                "{} (every prompt and reply)",
                group_thousands(&c.rows.to_string())
            ),
        ),
        (
            "recall.append_p50_ms",
            "appended prompt to searchable, p50 (ms)".to_string(),
            Val::Num(percentile(&a.ms, 0.5), 1),
            "< 10".to_string(),
        ),
        (
            "recall.append_p95_ms",
            "appended prompt to searchable, p95 (ms)".to_string(),
            Val::Num(percentile(&a.ms, 0.95), 1),
            "< 10".to_string(),
        ),
        (
            "recall.search_p50_ms",
            "recall.search, p50 (ms)".to_string(),
            Val::Num(percentile(&s.all, 0.5), 2),
            String::new(),
        ),
        (
            "recall.search_p95_ms",
            "recall.search, p95 (ms)".to_string(),
            Val::Num(percentile(&s.all, 0.95), 2),
            "< 15".to_string(),
        ),
        (
            "recall.search_p99_ms",
            "recall.search, p99 (ms)".to_string(),
            Val::Num(percentile(&s.all, 0.99), 2),
            String::new(),
        ),
    ];
    for (key, label, val, target) in rows {
        report.row(key, &label, val, none(), &target);
    }
    for (kind, ms) in &s.by_kind {
        let key = match kind {
            QueryKind::Common => "common",
            QueryKind::Rare => "rare",
            QueryKind::Pair => "pair",
        };
        report.row(
            &format!("recall.search_{key}_p95_ms"),
            &format!("  {} queries, p95 (ms)", kind.name()),
            Val::Num(percentile(ms, 0.95), 2),
            none(),
            "",
        );
    }
    report.row(
        "recall.search_hits_right",
        "search hits match the corpus",
        Val::Text(if s.wrong.is_empty() {
            format!("all {} queries", c.queries.len())
        } else {
            format!("{} of {} differ", s.wrong.len(), c.queries.len())
        }),
        none(),
        "every query",
    );

    report.note(format!(
        "recall corpus: {} transcripts in {} project folders under the spawned vyred's HOME/.claude/projects, {} turns (a prompt and its reply; {} turns for recall, which keeps each prompt and each assistant message with text), {} lines, {:.0} MiB ({:.1} MiB of it the words recall indexes), written in {:.1} s from seed {SEED:#x} before vyred started, then flushed with sync(2). Lines are in the shape of Claude Code {}'s: request blobs (the first request's 80 to 160 KB), attachments (the first prompt's skill listing 6 to 14 KB), queue operations, thinking blocks, Bash calls and their results, file-history snapshots",
        c.transcripts.len(),
        c.folders,
        c.turns,
        c.rows,
        c.lines,
        mb(c.bytes),
        mb(c.text_bytes),
        c.took.as_secs_f64(),
        recall_corpus::VERSION,
    ));
    let threads: Vec<String> = index
        .threads
        .iter()
        .filter(|(_, s)| *s >= 0.05)
        .map(|(name, s)| format!("{name} {s:.1} s"))
        .collect();
    report.note(format!(
        "recall full index: target/release/vyre daemon on that HOME, no config.json; from just before the spawn to the receipt of the history.indexed event with scanning: false and done == total ({} events, read with since=0); /v1/health answered after {:.0} ms; the scan took {} by the events' own times. recall.status then: {} sessions, {} files, {} turns, {} broken lines. vyred's CPU by thread to then: {}",
        index.events,
        index.healthy.as_secs_f64() * 1000.0,
        index
            .scan_ms
            .map_or("?".to_string(), |ms| format!("{:.2} s", ms as f64 / 1000.0)),
        index.status["sessions"],
        index.status["files"],
        index.status["turns"],
        index.status["broken"],
        if threads.is_empty() {
            "-".to_string()
        } else {
            threads.join(", ")
        },
    ));
    report.note(format!(
        "recall appends: {} times, each to another transcript, one prompt line (in the CLI's shape, with a word found nowhere else) written with one write(2) in append mode; timed from just before the write to the answer of the first recall.search for that word that finds it, asked over the socket every {} ms, so the figure includes one socket round trip (a new connection per call) and up to one poll interval; {} searches found nothing yet; {} ms between appends",
        a.ms.len(),
        POLL.as_millis(),
        a.misses,
        BETWEEN.as_millis(),
    ));
    let queries: Vec<String> = c
        .queries
        .iter()
        .map(|q| format!("{:?} ({}, {})", q.text, q.kind.name(), q.expected))
        .collect();
    report.note(format!(
        "recall searches: {} recall.search calls, one at a time over the socket (a new connection each, limit 20 by default), round-robin over {} queries, timed from the call to the parsed answer; before them each query ran once with limit 200 and its hits were checked against the corpus. The queries, with their kind and how many turns hold every word: {}",
        s.all.len(),
        c.queries.len(),
        queries.join(", "),
    ));
    for w in &s.wrong {
        report.note(format!("recall search hits differ: {w}"));
    }
}

fn memory_rows(report: &mut Report, settled: &Memory, end: &Memory, store: &Store) {
    let rows = [
        (
            "recall.rss_indexed_mib",
            "vyred RSS after indexing, settled (MiB)",
            Val::Num(mib(settled.rss), 1),
            "< 60 (bounded)",
        ),
        (
            "recall.rss_anon_indexed_mib",
            "  of which anonymous memory, RssAnon (MiB)",
            Val::Num(mib(settled.anon), 1),
            "",
        ),
        (
            "recall.rss_end_mib",
            "vyred RSS after the appends and searches (MiB)",
            Val::Num(mib(end.rss), 1),
            "",
        ),
        (
            "recall.rss_peak_mib",
            "vyred peak RSS, VmHWM (MiB)",
            Val::Num(mib(end.hwm), 1),
            "",
        ),
        (
            "recall.store_mib",
            "store on disk, vyre.db + -wal (MiB)",
            Val::Num(mb(store.db + store.wal), 1),
            "",
        ),
    ];
    for (key, label, val, target) in rows {
        report.row(key, label, val, none(), target);
    }
    report.note(format!(
        "recall memory and store: VmRSS and RssAnon of vyred's pid {} s after the scan ended, and again after the appends and searches; VmHWM at the end; VmHWM when settled was {:.1} MiB. Store: vyre.db {:.1} MiB, vyre.db-wal {:.1} MiB, vyre.db-shm {:.1} MiB (not counted), read before vyred stopped",
        SETTLE.as_secs(),
        mib(settled.hwm),
        mb(store.db),
        mb(store.wal),
        mb(store.shm),
    ));
}
