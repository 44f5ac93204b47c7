//! A generated corpus of Claude Code transcripts for the recall benchmark: seeded, so every run
//! writes the same bytes, and shaped like the real CLI's files (`cli-2.1.328.jsonl` in
//! `tests/fixtures/transcripts/`): most of a transcript is lines that say nothing to recall
//! (request blobs of many KB, attachments, queue operations, bookkeeping), between the prompts
//! and the replies it indexes.
//!
//! Each turn is a person's prompt and Claude's reply. A reply may start with a thinking block
//! (its own line, not indexed), call a tool (a `tool_use` line, sometimes after a line of text
//! that is its own message, then the `tool_result`), and come as one or two text lines that share
//! a message id. Words follow a Zipf law over a few hundred common words, with made-up rare words
//! mixed in, so a query can hit most turns or a handful. The generator counts, for each benchmark
//! query, the indexed turns that hold every one of its words, so the search results can be
//! checked.

mod lines;
mod words;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lines::{Session, Writer, js};
pub use lines::{VERSION, prompt_line};
pub use words::Rng;
use words::{Filler, Vocabulary};

/// 2026-01-01T00:00:00Z: the first session starts then.
const EPOCH_MS: i64 = 1_767_225_600_000;

/// How much to write.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub folders: usize,
    pub transcripts: usize,
    /// Prompt and reply pairs, over all transcripts.
    pub turns: usize,
}

pub const FULL: Shape = Shape {
    folders: 100,
    transcripts: 2_000,
    turns: 100_000,
};

pub const QUICK: Shape = Shape {
    folders: 10,
    transcripts: 200,
    turns: 10_000,
};

/// Which kind of query, for the per-kind figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryKind {
    /// One common word: matches many turns, so ranking does most of the work.
    Common,
    /// One rare word: a handful of turns, or none.
    Rare,
    /// Two words, every one must appear.
    Pair,
}

impl QueryKind {
    pub fn name(self) -> &'static str {
        match self {
            QueryKind::Common => "common",
            QueryKind::Rare => "rare",
            QueryKind::Pair => "two-word",
        }
    }
}

/// A benchmark query, with how many indexed turns hold every one of its words.
#[derive(Clone, Debug)]
pub struct Query {
    pub text: String,
    pub kind: QueryKind,
    pub expected: usize,
}

/// One transcript written, to append to later.
pub struct Transcript {
    pub path: PathBuf,
    pub session: String,
    pub cwd: String,
}

/// What was written.
pub struct Corpus {
    pub transcripts: Vec<Transcript>,
    pub folders: usize,
    /// Prompt and reply pairs.
    pub turns: usize,
    /// Turns recall should index: every prompt, and every assistant message with text.
    pub rows: usize,
    pub lines: u64,
    /// Every file's length.
    pub bytes: u64,
    /// The words recall indexes (prompts and replies), in bytes.
    pub text_bytes: u64,
    pub queries: Vec<Query>,
    pub took: Duration,
}

/// The lowercase words FTS5's `unicode61` tokenizer makes of ASCII text.
fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| w.to_ascii_lowercase())
}

/// Counts, for each query, the indexed turns that hold every one of its words.
struct Counter {
    queries: Vec<(Vec<String>, usize)>,
    watched: HashSet<String>,
}

impl Counter {
    fn see(&mut self, text: &str) {
        let found: HashSet<String> = tokens(text).filter(|t| self.watched.contains(t)).collect();
        if found.is_empty() {
            return;
        }
        for (words, n) in &mut self.queries {
            if words.iter().all(|w| found.contains(w)) {
                *n += 1;
            }
        }
    }
}

/// Write the corpus under `projects` (the spawned vyred's `HOME/.claude/projects`): `shape`'s
/// transcripts in its folders, the same bytes for the same `seed`.
pub fn generate(projects: &Path, shape: Shape, seed: u64) -> Result<Corpus, String> {
    let started = Instant::now();
    let mut rng = Rng::new(seed);
    // About one rare word per 5 turns: a rare word is in some 20 turns.
    let vocab = Vocabulary::new(&mut rng, (shape.turns / 5).max(100));
    let filler = Filler::new(&mut rng, &vocab, 1 << 20);
    let queries = queries(&vocab);
    let mut counter = Counter {
        watched: queries
            .iter()
            .flat_map(|q| tokens(&q.text).collect::<Vec<_>>())
            .collect(),
        queries: queries
            .iter()
            .map(|q| (tokens(&q.text).collect(), 0))
            .collect(),
    };

    // Turns per transcript: 5 to 95 (50 on average), adjusted so they add up exactly.
    let mut counts: Vec<usize> = (0..shape.transcripts).map(|_| rng.range(5, 95)).collect();
    let mut sum: usize = counts.iter().sum();
    let mut i = 0;
    while sum != shape.turns {
        let n = counts.len();
        let c = &mut counts[i % n];
        if sum < shape.turns && *c < 120 {
            *c += 1;
            sum += 1;
        } else if sum > shape.turns && *c > 2 {
            *c -= 1;
            sum -= 1;
        }
        i += 1;
    }

    let folders: Vec<(String, String)> = (0..shape.folders)
        .map(|f| {
            let cwd = format!(
                "/home/dev/src/{}-{}-{f}",
                vocab.common(&mut rng),
                vocab.rare[rng.below(vocab.rare.len())]
            );
            (cwd.replace(['/', '.', '_'], "-"), cwd)
        })
        .collect();
    for (folder, _) in &folders {
        let dir = projects.join(folder);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }

    let mut corpus = Corpus {
        transcripts: Vec::with_capacity(shape.transcripts),
        folders: shape.folders,
        turns: shape.turns,
        rows: 0,
        lines: 0,
        bytes: 0,
        text_bytes: 0,
        queries: vec![],
        took: Duration::ZERO,
    };
    let span_ms = 300 * 86_400_000 / shape.transcripts.max(1) as i64;
    for (t, &turns) in counts.iter().enumerate() {
        let (folder, cwd) = &folders[t % folders.len()];
        let mut s = Session {
            id: rng.uuid(),
            cwd: cwd.clone(),
            now: EPOCH_MS + t as i64 * span_ms + rng.below(3_600_000) as i64,
            parent: None,
        };
        let mut w = Writer {
            rng: &mut rng,
            vocab: &vocab,
            filler: &filler,
            out: String::with_capacity(512 * 1024),
            lines: 0,
        };
        for turn in 0..turns {
            w.queue_operations(&mut s);
            // A prompt: usually a sentence or two, now and then something pasted.
            let words = if w.rng.chance(0.05) {
                w.rng.range(100, 400)
            } else {
                w.rng.length(22.0, 0.7, 3, 120)
            };
            let prompt = vocab.prose(w.rng, words, false);
            w.prompt(&mut s, &prompt, turn + 1);
            counter.see(&prompt);
            corpus.rows += 1;
            corpus.text_bytes += prompt.len() as u64;
            let mut blobs: Vec<(&str, String)> = vec![];
            if turn == 0 {
                w.first_attachments(&mut s);
                // The first request carries the system prompt and the tool definitions.
                let system = w.rng.range(20_000, 40_000);
                let tools = w.rng.range(60_000, 120_000);
                blobs.push(("system", w.filler.slice(w.rng, system).to_string()));
                blobs.push(("tools", w.filler.slice(w.rng, tools).to_string()));
            } else if w.rng.chance(0.2) {
                let size = w.rng.range(1_000, 6_000);
                let body = w.filler.slice(w.rng, size).to_string();
                w.attachment(
                    &mut s,
                    r#"{"type":"edited_text_file","filename":"src/lib.rs"}"#,
                    &body,
                );
            }
            let reminder = w.rng.range(300, 2_500);
            let reminder = w.filler.slice(w.rng, reminder).to_string();
            blobs.push(("user", format!("{prompt}\n\n<system-reminder>{reminder}")));
            let shape_size = (turn == 0 || w.rng.chance(0.2)).then(|| w.rng.range(1_500, 4_000));
            w.request(&mut s, &blobs, shape_size);

            let message = w.message_id();
            if w.rng.chance(0.5) {
                let words = w.rng.length(60.0, 0.8, 5, 600);
                let thinking = vocab.prose(w.rng, words, false);
                let signature_len = w.rng.range(300, 900);
                let signature = w.rng.hex(signature_len);
                w.assistant(
                    &mut s,
                    &message,
                    &format!(
                        r#"{{"type":"thinking","thinking":{},"signature":"{signature}"}}"#,
                        js(&thinking)
                    ),
                    "end_turn",
                );
            }
            let mut message = message;
            // Tool calls: sometimes after a line of text that is a message (and a turn) of its
            // own; each result goes back in a new request, answered by a new message.
            for _ in 0..[0, 0, 0, 1, 1, 2][w.rng.below(6)] {
                if w.rng.chance(0.5) {
                    let words = w.rng.length(12.0, 0.5, 3, 40);
                    let text = vocab.prose(w.rng, words, false);
                    w.assistant(
                        &mut s,
                        &message,
                        &format!(r#"{{"text":{},"type":"text"}}"#, js(&text)),
                        "tool_use",
                    );
                    counter.see(&text);
                    corpus.rows += 1;
                    corpus.text_bytes += text.len() as u64;
                }
                w.tool_call(&mut s, &message);
                message = w.message_id();
            }
            // The reply: one text block, or two on two lines of the same message.
            let words = if w.rng.chance(0.08) {
                w.rng.range(400, 900)
            } else {
                w.rng.length(90.0, 0.7, 5, 500)
            };
            let reply = vocab.prose(w.rng, words, true);
            let parts: Vec<&str> = match reply.find("\n\n") {
                Some(at) if w.rng.chance(0.3) => vec![&reply[..at], &reply[at + 2..]],
                _ => vec![reply.as_str()],
            };
            for part in &parts {
                w.assistant(
                    &mut s,
                    &message,
                    &format!(r#"{{"text":{},"type":"text"}}"#, js(part)),
                    "end_turn",
                );
            }
            counter.see(&reply);
            corpus.rows += 1;
            corpus.text_bytes += parts.iter().map(|p| p.len() as u64).sum::<u64>();
            let ts = s.tick(w.rng, 50);
            let snapshot_uuid = w.rng.uuid();
            w.line(&format!(
                r#"{{"type":"file-history-snapshot","messageId":"{snapshot_uuid}","snapshot":{{"messageId":"{snapshot_uuid}","trackedFileBackups":{{}},"timestamp":"{ts}"}},"isSnapshotUpdate":false}}"#
            ));
            w.attachment(&mut s, r#"{"type":"prompt_snapshot","trimmed":true}"#, "");
            let last: String = prompt.chars().take(200).collect();
            let leaf = s.parent.clone().unwrap_or_default();
            w.line(&format!(
                r#"{{"type":"last-prompt","lastPrompt":{},"leafUuid":"{leaf}","sessionId":"{}"}}"#,
                js(&last),
                s.id
            ));
            w.line(&format!(
                r#"{{"type":"atis-latch","atis":"","sessionId":"{}"}}"#,
                s.id
            ));
            if turn == 0 && w.rng.chance(0.1) {
                let title = format!("{} {}", vocab.common(w.rng), vocab.common(w.rng));
                w.line(&format!(
                    r#"{{"type":"custom-title","customTitle":{},"sessionId":"{}"}}"#,
                    js(&title),
                    s.id
                ));
            }
        }
        let path = projects.join(folder).join(format!("{}.jsonl", s.id));
        std::fs::write(&path, w.out.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        corpus.lines += w.lines;
        corpus.bytes += w.out.len() as u64;
        corpus.transcripts.push(Transcript {
            path,
            session: s.id,
            cwd: s.cwd,
        });
    }
    corpus.queries = queries
        .into_iter()
        .zip(counter.queries)
        .map(|(q, (_, n))| Query { expected: n, ..q })
        .collect();
    corpus.took = started.elapsed();
    Ok(corpus)
}

/// The benchmark's queries: common words of several frequencies, rare words, two-word queries,
/// and a word that is nowhere.
fn queries(vocab: &Vocabulary) -> Vec<Query> {
    let q = |text: String, kind| Query {
        text,
        kind,
        expected: 0,
    };
    let rare = |i: usize| vocab.rare[i * 7919 % vocab.rare.len()].clone();
    let mut out = vec![];
    for w in [
        "error",
        "database",
        "migration",
        "timeout",
        "flaky",
        "changelog",
    ] {
        out.push(q(w.to_string(), QueryKind::Common));
    }
    for i in 1..=6 {
        out.push(q(rare(i), QueryKind::Rare));
    }
    out.push(q("vyrebenchnowhere".to_string(), QueryKind::Rare));
    for pair in [
        "failing test",
        "socket timeout",
        "cache migration",
        "deterministic seed",
    ] {
        out.push(q(pair.to_string(), QueryKind::Pair));
    }
    out.push(q(format!("database {}", rare(7)), QueryKind::Pair));
    out.push(q(format!("{} {}", rare(8), rare(9)), QueryKind::Pair));
    out
}

#[cfg(test)]
mod tests {
    use super::lines::iso;
    use super::*;
    use vyre::kernel::transcripts::{line, tail};

    #[test]
    fn formats_times() {
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(EPOCH_MS), "2026-01-01T00:00:00.000Z");
        assert_eq!(
            line::parse_time(&iso(1_796_043_094_220)),
            Some(1_796_043_094_220)
        );
    }

    #[test]
    fn the_same_seed_writes_the_same_corpus_and_the_reader_sees_every_turn() {
        let dir = crate::spawn::TempDir::new("corpus-test").unwrap();
        let shape = Shape {
            folders: 2,
            transcripts: 4,
            turns: 60,
        };
        let a = generate(&dir.path().join("a"), shape, 7).unwrap();
        let b = generate(&dir.path().join("b"), shape, 7).unwrap();
        assert_eq!((a.bytes, a.rows, a.lines), (b.bytes, b.rows, b.lines));
        assert_eq!(a.transcripts.len(), 4);
        let mut prompts = 0;
        let mut messages = HashSet::new();
        let mut lines = 0;
        for t in &a.transcripts {
            let chunk = tail::read_from(&t.path, 0).unwrap();
            assert_eq!(chunk.broken, 0, "every line is JSON");
            lines += chunk.read;
            for l in chunk.lines {
                match l {
                    line::Line::Said(s) if s.role == line::Role::User => prompts += 1,
                    line::Line::Said(s) => {
                        messages.insert(s.message_id.unwrap());
                    }
                    _ => {}
                }
            }
            // Every line is valid JSON, the skipped ones too.
            for l in std::fs::read_to_string(&t.path).unwrap().lines() {
                serde_json::from_str::<serde_json::Value>(l).unwrap();
            }
        }
        assert_eq!(prompts, 60, "one prompt a turn");
        assert_eq!(prompts + messages.len(), a.rows);
        assert_eq!(lines, a.lines);
        let appended = prompt_line(&mut Rng::new(1), &a.transcripts[0], "hello zebra", 0);
        assert!(matches!(
            line::parse(appended.trim_end().as_bytes()),
            Ok(line::Line::Said(s)) if s.text == "hello zebra"
        ));
    }
}
