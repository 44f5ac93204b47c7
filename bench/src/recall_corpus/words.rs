//! The words of the corpus: a seeded random source, the common words (drawn by a Zipf law), the
//! made-up rare ones, prose built from them, and filler for the lines recall never reads.

use std::collections::HashSet;
use std::fmt::Write as _;

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
pub(super) const COMMON: &[&str] = &[
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
pub(super) const SYLLABLES: &[&str] = &[
    "ka", "zu", "vor", "rel", "thi", "mox", "qua", "bri", "sen", "dral", "fyn", "gor", "hul",
    "jex", "kiv", "lum", "nar", "ost", "pex", "ryn", "sul", "tav", "ule", "vex", "wyr", "xan",
    "yol", "zed", "bel", "cyr",
];

/// The words to draw from.
pub(super) struct Vocabulary {
    pub(super) common: Vec<&'static str>,
    /// Cumulative Zipf weights of `common`.
    pub(super) cumulative: Vec<f64>,
    pub(super) rare: Vec<String>,
}

impl Vocabulary {
    pub(super) fn new(rng: &mut Rng, rare_words: usize) -> Vocabulary {
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

    pub(super) fn common(&self, rng: &mut Rng) -> &'static str {
        let x = rng.unit() * self.cumulative[self.cumulative.len() - 1];
        let i = self.cumulative.partition_point(|&c| c < x);
        self.common[i.min(self.common.len() - 1)]
    }

    /// A word as it would be typed: mostly common, sometimes rare (about 3 in 100), sometimes an
    /// identifier or a path made of common words.
    pub(super) fn push_word(&self, rng: &mut Rng, out: &mut String) {
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
    pub(super) fn prose(&self, rng: &mut Rng, words: usize, code: bool) -> String {
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
pub(super) struct Filler(String);

impl Filler {
    pub(super) fn new(rng: &mut Rng, vocab: &Vocabulary, bytes: usize) -> Filler {
        let mut s = String::with_capacity(bytes + 32);
        while s.len() < bytes {
            s.push_str(vocab.common(rng));
            s.push(if rng.chance(0.08) { '.' } else { ' ' });
        }
        Filler(s)
    }

    /// About `len` bytes from a random place.
    pub(super) fn slice(&self, rng: &mut Rng, len: usize) -> &str {
        let len = len.min(self.0.len());
        let at = rng.below(self.0.len() - len + 1);
        &self.0[at..at + len]
    }
}
