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

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The CLI release the lines imitate.
pub const VERSION: &str = "2.1.328";
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

/// SplitMix64: small, fast and good enough to pick words; no dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// A length around `median` with a long tail: log-normal, clamped to `lo..=hi`.
    pub fn length(&mut self, median: f64, spread: f64, lo: usize, hi: usize) -> usize {
        // Box-Muller.
        let (u1, u2) = (self.unit().max(1e-12), self.unit());
        let normal = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        ((median * (spread * normal).exp()).round() as usize).clamp(lo, hi)
    }

    pub fn hex(&mut self, n: usize) -> String {
        let mut s = String::with_capacity(n + 16);
        while s.len() < n {
            let _ = write!(s, "{:016x}", self.next_u64());
        }
        s.truncate(n);
        s
    }

    pub fn uuid(&mut self) -> String {
        let h = self.hex(32);
        format!(
            "{}-{}-4{}-a{}-{}",
            &h[0..8],
            &h[8..12],
            &h[13..16],
            &h[17..20],
            &h[20..32]
        )
    }
}

/// Common words, roughly most frequent first: English glue words and a developer's vocabulary.
/// The word at rank r (from 0) is drawn with weight 1/(r+1).
const COMMON: &[&str] = &[
    "the",
    "to",
    "and",
    "a",
    "of",
    "in",
    "is",
    "it",
    "that",
    "for",
    "this",
    "with",
    "on",
    "be",
    "we",
    "can",
    "you",
    "i",
    "not",
    "are",
    "as",
    "if",
    "file",
    "so",
    "from",
    "but",
    "have",
    "at",
    "or",
    "now",
    "should",
    "will",
    "test",
    "function",
    "when",
    "code",
    "use",
    "there",
    "error",
    "which",
    "then",
    "one",
    "all",
    "an",
    "by",
    "just",
    "let",
    "me",
    "check",
    "would",
    "need",
    "make",
    "what",
    "new",
    "do",
    "add",
    "change",
    "also",
    "value",
    "run",
    "type",
    "its",
    "see",
    "here",
    "build",
    "first",
    "data",
    "same",
    "because",
    "only",
    "return",
    "line",
    "config",
    "into",
    "get",
    "call",
    "case",
    "looks",
    "like",
    "time",
    "path",
    "state",
    "list",
    "after",
    "before",
    "output",
    "update",
    "fix",
    "still",
    "server",
    "module",
    "more",
    "way",
    "request",
    "each",
    "other",
    "them",
    "does",
    "could",
    "string",
    "field",
    "method",
    "struct",
    "error's",
    "test's",
    "client",
    "thread",
    "instead",
    "name",
    "default",
    "right",
    "where",
    "why",
    "our",
    "than",
    "input",
    "version",
    "set",
    "two",
    "works",
    "working",
    "failing",
    "failed",
    "passes",
    "handler",
    "response",
    "write",
    "read",
    "event",
    "events",
    "store",
    "index",
    "query",
    "cache",
    "database",
    "table",
    "schema",
    "migration",
    "column",
    "row",
    "commit",
    "branch",
    "merge",
    "review",
    "issue",
    "bug",
    "crash",
    "panic",
    "log",
    "logs",
    "debug",
    "release",
    "deploy",
    "script",
    "command",
    "flag",
    "option",
    "argument",
    "parameter",
    "variable",
    "constant",
    "import",
    "export",
    "package",
    "dependency",
    "library",
    "crate",
    "trait",
    "impl",
    "enum",
    "match",
    "loop",
    "iterator",
    "vector",
    "map",
    "key",
    "hash",
    "socket",
    "port",
    "connection",
    "timeout",
    "retry",
    "async",
    "await",
    "future",
    "task",
    "spawn",
    "lock",
    "mutex",
    "channel",
    "queue",
    "worker",
    "process",
    "pid",
    "signal",
    "memory",
    "leak",
    "buffer",
    "stream",
    "bytes",
    "encoding",
    "json",
    "parse",
    "parser",
    "token",
    "lexer",
    "syntax",
    "compile",
    "compiler",
    "linker",
    "warning",
    "clippy",
    "format",
    "lint",
    "benchmark",
    "profile",
    "latency",
    "throughput",
    "slow",
    "fast",
    "performance",
    "optimize",
    "allocation",
    "clone",
    "borrow",
    "lifetime",
    "reference",
    "pointer",
    "unsafe",
    "interface",
    "component",
    "render",
    "layout",
    "style",
    "button",
    "page",
    "window",
    "screen",
    "click",
    "keyboard",
    "shortcut",
    "menu",
    "dialog",
    "frontend",
    "backend",
    "endpoint",
    "route",
    "router",
    "middleware",
    "auth",
    "login",
    "password",
    "credential",
    "permission",
    "sandbox",
    "container",
    "docker",
    "image",
    "volume",
    "network",
    "proxy",
    "certificate",
    "upload",
    "download",
    "archive",
    "backup",
    "restore",
    "snapshot",
    "transcript",
    "session",
    "history",
    "search",
    "filter",
    "sort",
    "pagination",
    "offset",
    "limit",
    "cursor",
    "batch",
    "transaction",
    "rollback",
    "retention",
    "cleanup",
    "refactor",
    "rename",
    "extract",
    "inline",
    "helper",
    "utility",
    "wrapper",
    "adapter",
    "fixture",
    "mock",
    "stub",
    "assertion",
    "coverage",
    "regression",
    "flaky",
    "deterministic",
    "seed",
    "random",
    "generator",
    "template",
    "macro",
    "attribute",
    "annotation",
    "documentation",
    "readme",
    "changelog",
    "comment",
    "typo",
    "spelling",
    "sentence",
    "paragraph",
    "heading",
    "markdown",
    "table's",
    "diagram",
    "sketch",
    "draft",
];

/// Syllables for made-up rare words; none of the results is a common word.
const SYLLABLES: &[&str] = &[
    "ka", "zu", "vor", "rel", "thi", "mox", "qua", "bri", "sen", "dral", "fyn", "gor", "hul",
    "jex", "kiv", "lum", "nar", "ost", "pex", "ryn", "sul", "tav", "ule", "vex", "wyr", "xan",
    "yol", "zed", "bel", "cyr",
];

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

/// The words to draw from.
struct Vocabulary {
    common: Vec<&'static str>,
    /// Cumulative Zipf weights of `common`.
    cumulative: Vec<f64>,
    rare: Vec<String>,
}

impl Vocabulary {
    fn new(rng: &mut Rng, rare_words: usize) -> Vocabulary {
        let mut total = 0.0;
        let cumulative = (0..COMMON.len())
            .map(|r| {
                total += 1.0 / (r as f64 + 1.0);
                total
            })
            .collect();
        let taken: HashSet<&str> = COMMON.iter().copied().collect();
        let mut seen = HashSet::new();
        let mut rare = Vec::with_capacity(rare_words);
        while rare.len() < rare_words {
            let n = rng.range(3, 4);
            let w: String = (0..n)
                .map(|_| SYLLABLES[rng.below(SYLLABLES.len())])
                .collect();
            if !taken.contains(w.as_str()) && seen.insert(w.clone()) {
                rare.push(w);
            }
        }
        Vocabulary {
            common: COMMON.to_vec(),
            cumulative,
            rare,
        }
    }

    fn common(&self, rng: &mut Rng) -> &'static str {
        let x = rng.unit() * self.cumulative[self.cumulative.len() - 1];
        let i = self.cumulative.partition_point(|&c| c < x);
        self.common[i.min(self.common.len() - 1)]
    }

    /// A word as it would be typed: mostly common, sometimes rare (about 3 in 100), sometimes an
    /// identifier or a path made of common words.
    fn push_word(&self, rng: &mut Rng, out: &mut String) {
        let roll = rng.unit();
        if roll < 0.03 {
            out.push_str(&self.rare[rng.below(self.rare.len())]);
        } else if roll < 0.045 {
            let _ = write!(out, "`{}_{}`", self.common(rng), self.common(rng));
        } else if roll < 0.05 {
            let _ = write!(out, "src/{}/{}.rs", self.common(rng), self.common(rng));
        } else {
            out.push_str(self.common(rng));
        }
    }

    /// `words` words of prose: sentences of 4 to 18 words, and now and then a paragraph break
    /// or (when `code` is set) a short code block.
    fn prose(&self, rng: &mut Rng, words: usize, code: bool) -> String {
        let mut out = String::with_capacity(words * 7);
        let mut left = words;
        while left > 0 {
            let n = rng.range(4, 18).min(left);
            let start = out.len();
            for i in 0..n {
                if i > 0 {
                    out.push(if rng.chance(0.04) { ',' } else { ' ' });
                    if out.ends_with(',') {
                        out.push(' ');
                    }
                }
                self.push_word(rng, &mut out);
            }
            // Capitalise the sentence.
            if let Some(c) = out[start..].chars().next().filter(char::is_ascii_lowercase) {
                out.replace_range(start..start + 1, &c.to_ascii_uppercase().to_string());
            }
            out.push(if rng.chance(0.1) { '?' } else { '.' });
            left -= n;
            if left > 0 {
                if code && rng.chance(0.06) {
                    out.push_str("\n\n```rust\n");
                    for _ in 0..rng.range(2, 8) {
                        let _ = writeln!(
                            out,
                            "    let {} = {}.{}({});",
                            self.common(rng),
                            self.common(rng),
                            self.common(rng),
                            self.common(rng)
                        );
                    }
                    out.push_str("```\n\n");
                } else if rng.chance(0.15) {
                    out.push_str("\n\n");
                } else {
                    out.push(' ');
                }
            }
        }
        out
    }
}

/// Filler for what recall never reads (system prompts, tool definitions, tool output): words
/// only, with no character that needs escaping in JSON, so any slice can go in a string.
struct Filler(String);

impl Filler {
    fn new(rng: &mut Rng, vocab: &Vocabulary, bytes: usize) -> Filler {
        let mut s = String::with_capacity(bytes + 32);
        while s.len() < bytes {
            s.push_str(vocab.common(rng));
            s.push(if rng.chance(0.08) { '.' } else { ' ' });
        }
        Filler(s)
    }

    /// About `len` bytes from a random place.
    fn slice(&self, rng: &mut Rng, len: usize) -> &str {
        let len = len.min(self.0.len());
        let at = rng.below(self.0.len() - len + 1);
        &self.0[at..at + len]
    }
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

/// JSON string literal.
fn js(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

/// `2026-01-01T00:00:00.000Z` from milliseconds since the epoch (Howard Hinnant's algorithm).
pub fn iso(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// The fields every conversation line of a session ends with.
struct Session {
    id: String,
    cwd: String,
    /// Milliseconds since the epoch of the next line.
    now: i64,
    /// The uuid of the last conversation line, the next one's parent.
    parent: Option<String>,
}

impl Session {
    fn tail(&self) -> String {
        format!(
            r#""userType":"external","entrypoint":"cli","cwd":{},"sessionId":"{}","version":"{VERSION}","gitBranch":"main"}}"#,
            js(&self.cwd),
            self.id
        )
    }

    /// The timestamp of the next line; time moves on by up to `step_ms`.
    fn tick(&mut self, rng: &mut Rng, step_ms: usize) -> String {
        self.now += rng.range(1, step_ms) as i64;
        iso(self.now)
    }

    fn parent_json(&self) -> String {
        self.parent
            .as_deref()
            .map_or_else(|| "null".to_string(), |p| format!("\"{p}\""))
    }
}

/// Writes one transcript's lines.
struct Writer<'a> {
    rng: &'a mut Rng,
    vocab: &'a Vocabulary,
    filler: &'a Filler,
    out: String,
    lines: u64,
}

impl Writer<'_> {
    fn line(&mut self, l: &str) {
        self.out.push_str(l);
        self.out.push('\n');
        self.lines += 1;
    }

    fn queue_operations(&mut self, s: &mut Session) {
        for op in ["enqueue", "dequeue"] {
            let ts = s.tick(self.rng, 3);
            self.line(&format!(
                r#"{{"type":"queue-operation","operation":"{op}","timestamp":"{ts}","sessionId":"{}"}}"#,
                s.id
            ));
        }
    }

    fn prompt(&mut self, s: &mut Session, text: &str, turn: usize) {
        let uuid = self.rng.uuid();
        let prompt_id = self.rng.uuid();
        let ts = s.tick(self.rng, 40);
        let line = format!(
            r#"{{"parentUuid":{},"isSidechain":false,"promptId":"{prompt_id}","type":"user","message":{{"role":"user","content":[{{"text":{},"type":"text"}}]}},"uuid":"{uuid}","timestamp":"{ts}","permissionMode":"default","promptSource":"cli","turnOrigin":"cli","turnPosition":{{"promptIndex":0,"turnIndex":{turn}}},"turnAttributionKey":"{uuid}",{}"#,
            s.parent_json(),
            js(text),
            s.tail()
        );
        self.line(&line);
        s.parent = Some(uuid);
    }

    /// An attachment line: context the CLI adds, never words.
    fn attachment(&mut self, s: &mut Session, attachment: &str, rendered: &str) {
        let uuid = self.rng.uuid();
        let ts = s.tick(self.rng, 5);
        let line = format!(
            r#"{{"parentUuid":{},"isSidechain":false,"attachment":{attachment},"type":"attachment","uuid":"{uuid}","timestamp":"{ts}","rendered":[{{"content":{}}}],"renderedRole":"system",{}"#,
            s.parent_json(),
            js(rendered),
            s.tail()
        );
        self.line(&line);
        s.parent = Some(uuid);
    }

    /// The attachments of a session's first prompt: environment, model, tool and skill
    /// listings (the skill listing is several KB), context, date.
    fn first_attachments(&mut self, s: &mut Session) {
        let env = format!(
            r#"{{"type":"environment","snapshot":{{"workingDirectory":{},"isWorktree":false,"isGitRepo":true,"additionalWorkingDirectories":[],"platform":"linux","shell":"bash","osVersion":"Linux 6.18.44"}}}}"#,
            js(&s.cwd)
        );
        let rendered = format!(
            "<system-reminder>\n# Environment\nYou have been invoked in the following environment: \n - Primary working directory: {}\n - Is a git repository: true\n - Platform: linux\n - Shell: bash\n - {}\n</system-reminder>",
            s.cwd,
            self.filler.slice(self.rng, 700)
        );
        self.attachment(s, &env, &rendered);
        self.attachment(
            s,
            r#"{"type":"model","identity":{"modelId":"claude-opus-5-5","marketingName":"Opus 5.5","knowledgeCutoff":"June 2026"},"text":"You are powered by the model named Opus 5.5. The exact model ID is claude-opus-5-5. Assistant knowledge cutoff is June 2026."}"#,
            "<system-reminder>\nYou are powered by the model named Opus 5.5. The exact model ID is claude-opus-5-5. Assistant knowledge cutoff is June 2026.\n</system-reminder>",
        );
        for (kind, lo, hi) in [
            ("deferred_tools_delta", 900, 1_600),
            ("agent_listing_delta", 1_500, 2_500),
            ("skill_listing", 6_000, 14_000),
        ] {
            let size = self.rng.range(lo, hi);
            let body = format!("<system-reminder>\n{}\n</system-reminder>", {
                self.filler.slice(self.rng, size)
            });
            self.attachment(s, &format!(r#"{{"type":"{kind}"}}"#), &body);
        }
        self.line(&format!(
            r#"{{"type":"atis-latch","atis":"","sessionId":"{}"}}"#,
            s.id
        ));
        self.attachment(s, r#"{"type":"session_context","context":{}}"#, "");
        let date = iso(s.now)[..10].to_string();
        self.attachment(
            s,
            &format!(r#"{{"type":"date","date":"{date}"}}"#),
            &format!("<system-reminder>\nToday's date is {date}.\n</system-reminder>"),
        );
    }

    /// A request blob: one message of an API request, kept by hash.
    fn blob(&mut self, s: &Session, role: &str, text: &str) -> String {
        let hash = self.rng.hex(64);
        let line = format!(
            r#"{{"type":"api-request-blob","sessionId":"{}","hash":"{hash}","message":{{"role":"{role}","content":[{{"type":"text","text":{}}}]}}}}"#,
            s.id,
            js(text)
        );
        self.line(&line);
        hash
    }

    /// An API request: its shape when it changed, its new blobs, then the request line.
    fn request(&mut self, s: &mut Session, blobs: &[(&str, String)], shape: Option<usize>) {
        let shape_hash = self.rng.hex(64);
        let ts = s.tick(self.rng, 20);
        if let Some(size) = shape {
            let shape = self.filler.slice(self.rng, size).to_string();
            self.line(&format!(
                r#"{{"type":"api-request-shape","sessionId":"{}","shapeHash":"{shape_hash}","timestamp":"{ts}","version":"{VERSION}","shape":{}}}"#,
                s.id,
                js(&shape)
            ));
        }
        let hashes: Vec<String> = blobs
            .iter()
            .map(|(role, text)| format!("\"{}\"", self.blob(s, role, text)))
            .collect();
        let id = self.rng.uuid();
        let digest = self.rng.hex(64);
        self.line(&format!(
            r#"{{"type":"api-request","sessionId":"{}","id":"{id}","timestamp":"{ts}","version":"{VERSION}","querySource":"repl_main_thread","shapeHash":"{shape_hash}","params":{{"model":"claude-opus-5-5","betas":["claude-code-20250219","interleaved-thinking-2025-05-14","context-management-2025-06-27","per-turn-control-2026-07-01","mid-conversation-tool-changes-2026-07-01","thinking-token-count-2026-05-13","advanced-tool-use-2025-11-20","effort-2025-11-24","thinking-display-updates-2026-08-18"],"max_tokens":128000,"thinking":{{"type":"adaptive","display":"updates"}},"context_management":{{"edits":[{{"type":"clear_thinking_20251015","keep":"all"}}]}},"output_config":{{"effort":"medium"}}}},"keep":0,"tail":[{}],"cacheControl":[{{"path":["system",0],"value":{{"type":"ephemeral"}}}},{{"path":["system",1],"value":{{"type":"ephemeral"}}}},{{"path":["messages",1,"content",0],"value":{{"type":"ephemeral"}}}}],"requestDigest":"{digest}"}}"#,
            s.id,
            hashes.join(",")
        ));
    }

    /// One assistant line: one content block of message `message`.
    fn assistant(&mut self, s: &mut Session, message: &str, block: &str, stop: &str) {
        let uuid = self.rng.uuid();
        let ts = s.tick(self.rng, 30_000);
        let request = self.rng.hex(24);
        let out_tokens = self.rng.range(8, 2_000);
        let line = format!(
            r#"{{"parentUuid":{},"isSidechain":false,"message":{{"content":[{block}],"id":"{message}","model":"claude-opus-5-5","role":"assistant","stop_reason":"{stop}","stop_sequence":null,"type":"message","usage":{{"input_tokens":6,"cache_creation_input_tokens":812,"cache_read_input_tokens":41234,"output_tokens":{out_tokens},"output_tokens_details":{{"thinking_tokens":0}},"server_tool_use":{{"web_search_requests":0,"web_fetch_requests":0}},"service_tier":"standard","cache_creation":{{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":812}},"inference_geo":"","iterations":[],"speed":"standard","fallback_credit":null}},"stop_details":null}},"apiBlockIndex":0,"requestId":"req_{request}","requestedModel":"claude-opus-5-5","promptCacheRequested":"5m","type":"assistant","uuid":"{uuid}","timestamp":"{ts}","effort":"medium","perTurnEffort":"medium","madeBy":"model",{}"#,
            s.parent_json(),
            s.tail()
        );
        self.line(&line);
        s.parent = Some(uuid);
    }

    fn message_id(&mut self) -> String {
        format!("msg_{}", self.rng.hex(24))
    }

    /// A Bash call and its result: the tool_use line, `tools-used`, the result (the output twice,
    /// as the CLI keeps it), the request that sends it back.
    fn tool_call(&mut self, s: &mut Session, message: &str) {
        let tool = format!("toolu_{}", self.rng.hex(24));
        let command = format!(
            "cargo test -p {} {}",
            self.vocab.common(self.rng),
            self.vocab.common(self.rng)
        );
        self.assistant(
            s,
            message,
            &format!(
                r#"{{"id":"{tool}","input":{{"command":{},"description":"Run the tests"}},"name":"Bash","type":"tool_use"}}"#,
                js(&command)
            ),
            "tool_use",
        );
        self.line(&format!(
            r#"{{"type":"tools-used","tools":["Bash"],"sessionId":"{}"}}"#,
            s.id
        ));
        let size = self.rng.length(900.0, 0.9, 60, 12_000);
        let output = self.filler.slice(self.rng, size).to_string();
        let uuid = self.rng.uuid();
        let ts = s.tick(self.rng, 8_000);
        let tool_use_parent = s.parent_json();
        let line = format!(
            r#"{{"parentUuid":{tool_use_parent},"isSidechain":false,"promptId":"{}","type":"user","message":{{"role":"user","content":[{{"tool_use_id":"{tool}","type":"tool_result","content":{},"is_error":false}}]}},"uuid":"{uuid}","timestamp":"{ts}","toolUseResult":{{"stdout":{},"stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false}},"sandboxed":false,"sourceToolAssistantUUID":{tool_use_parent},"permissionDecision":{{"decision":"accept","source":"config","reasonType":"subcommandResults"}},{}"#,
            self.rng.uuid(),
            js(&output),
            js(&output),
            s.tail()
        );
        self.line(&line);
        s.parent = Some(uuid);
        let shape = self.rng.chance(0.1).then(|| self.rng.range(800, 3_000));
        self.request(s, &[("assistant", command), ("user", output)], shape);
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

/// A prompt line for `t`, to append: the shape of the CLI's, with `text`.
pub fn prompt_line(rng: &mut Rng, t: &Transcript, text: &str, at_ms: i64) -> String {
    let uuid = rng.uuid();
    format!(
        r#"{{"parentUuid":null,"isSidechain":false,"promptId":"{}","type":"user","message":{{"role":"user","content":[{{"text":{},"type":"text"}}]}},"uuid":"{uuid}","timestamp":"{}","permissionMode":"default","promptSource":"cli","turnOrigin":"cli","turnPosition":{{"promptIndex":0,"turnIndex":1}},"turnAttributionKey":"{uuid}","userType":"external","entrypoint":"cli","cwd":{},"sessionId":"{}","version":"{VERSION}","gitBranch":"main"}}"#,
        rng.uuid(),
        js(text),
        iso(at_ms),
        js(&t.cwd),
        t.session
    ) + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use vyre::transcripts::{line, tail};

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
