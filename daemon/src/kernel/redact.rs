//! The shared redactor: a credential detector for event payloads.
//!
//! Vyre's event log must never store a credential. Every event payload passes
//! [`check`] before it is written; a payload holding a string (or an object key)
//! that looks like a credential is refused with a [`Finding`] that names where
//! the value sits and what kind of credential it resembles, never the value.
//!
//! What it detects: well-known key formats (Anthropic, OpenAI, GitHub, AWS access
//! key ids, Slack), JWTs, PEM private-key headers, `Bearer <token>` strings, and
//! long high-entropy runs that look like random secrets. Each is found anywhere
//! inside a longer string.
//!
//! [`mask`] (in `redact/mask.rs`) rewrites a string with each credential's secret part masked and
//! the rest kept, for what a person must read whole (an ask's command); [`check`] and
//! [`scan_str`] only answer yes or no.
//!
//! What it does not do:
//! - It is a heuristic, not a guarantee. Secrets without a known prefix that are
//!   short (under 32 chars), low-entropy (passwords, passphrases) or split across
//!   several strings pass. A small share of random 32-40 char secrets also pass
//!   the high-entropy test (it is tuned towards few false positives).
//! - Conversely, long random-looking data that is not secret (base64 blobs,
//!   base64-encoded hashes, mangled C++ symbols, a few digit-dense identifiers
//!   such as `V4L2_MPEG_VIDEO_H264_VUI_SAR_IDC_64x33`) is reported as `high_entropy`.
//! - It does not decode anything: a credential inside base64, URL-encoding or
//!   doubly JSON-encoded text is only caught if the encoded form itself matches.
//! - It looks at JSON strings and object keys only, never numbers or booleans.

mod mask;

pub use mask::{MASK, Span, WHOLE, mask, spans};

use std::fmt;

use serde_json::Value;

/// What was found, never the value itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// JSON pointer (RFC 6901) to the offending string, e.g. "/auth/token" ("" for
    /// the root). Object keys are checked too: the pointer then names the key's
    /// object with the key appended.
    pub path: String,
    /// A short kind name: "anthropic_key", "openai_key", "github_token", "jwt",
    /// "pem_private_key", "bearer_token", "aws_access_key", "slack_token",
    /// "high_entropy".
    pub kind: &'static str,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(
                f,
                "the value at the document root looks like a credential ({})",
                self.kind
            )
        } else {
            write!(
                f,
                "a value at {} looks like a credential ({})",
                self.path, self.kind
            )
        }
    }
}

impl std::error::Error for Finding {}

const ANTHROPIC: &str = "anthropic_key";
const OPENAI: &str = "openai_key";
const GITHUB: &str = "github_token";
const JWT: &str = "jwt";
const PEM: &str = "pem_private_key";
const AWS: &str = "aws_access_key";
const SLACK: &str = "slack_token";
const BEARER: &str = "bearer_token";
const HIGH_ENTROPY: &str = "high_entropy";

/// Minimum length of a run for the high-entropy test.
const ENTROPY_MIN_LEN: usize = 32;
/// Minimum Shannon entropy, in bits per char, of a high-entropy run.
const ENTROPY_MIN_BITS: f64 = 4.0;
/// A run counts as random only if its mean "word" length (see
/// [`looks_random`]) is below `NUM / DEN` = 2.5 chars. Identifiers made of
/// words (camelCase, snake_case, acronyms) sit above that; random strings sit
/// around 1.6-2.0.
const WORD_LEN_NUM: u32 = 5;
const WORD_LEN_DEN: u32 = 2;

/// Check one string. Returns the kind of credential it contains, if any.
///
/// When a string holds several, a known key format wins over a bearer token,
/// which wins over a bare high-entropy run.
pub fn scan_str(s: &str) -> Option<&'static str> {
    let b = s.as_bytes();
    scan_known(b).or_else(|| high_entropy(b).then_some(HIGH_ENTROPY))
}

/// `v` with every string in it passed through [`mask`]: each credential masked, the rest kept
/// (what an event or a stored copy may hold of a tool call's input).
pub fn mask_value(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(mask(s).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(mask_value).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), mask_value(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Walk a JSON value (object keys and string values, recursively). First finding wins.
///
/// "First" follows the value's own order: array order, and object entries in
/// map order (sorted by key unless serde_json's `preserve_order` is on), each
/// key checked before its value. Recursion depth equals nesting depth, which
/// serde_json's parser caps at 128.
pub fn check(value: &Value) -> Result<(), Finding> {
    walk(value, None)
}

// ---------------------------------------------------------------------------
// JSON walk

/// One step of a JSON pointer, kept on the stack while walking so that no
/// allocation happens unless something is found.
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

struct PathNode<'a> {
    parent: Option<&'a PathNode<'a>>,
    seg: Seg<'a>,
}

fn walk(value: &Value, path: Option<&PathNode<'_>>) -> Result<(), Finding> {
    match value {
        Value::String(s) => found_at(s, path),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let node = PathNode {
                    parent: path,
                    seg: Seg::Index(i),
                };
                walk(item, Some(&node))?;
            }
            Ok(())
        }
        Value::Object(map) => {
            for (key, item) in map {
                let node = PathNode {
                    parent: path,
                    seg: Seg::Key(key),
                };
                found_at(key, Some(&node))?;
                walk(item, Some(&node))?;
            }
            Ok(())
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
    }
}

fn found_at(s: &str, path: Option<&PathNode<'_>>) -> Result<(), Finding> {
    match scan_str(s) {
        None => Ok(()),
        Some(kind) => Err(Finding {
            path: pointer(path),
            kind,
        }),
    }
}

/// Render the path as an RFC 6901 JSON pointer ("~" as "~0", "/" as "~1").
fn pointer(path: Option<&PathNode<'_>>) -> String {
    let mut segs = Vec::new();
    let mut cur = path;
    while let Some(node) = cur {
        segs.push(&node.seg);
        cur = node.parent;
    }
    let mut out = String::new();
    for seg in segs.into_iter().rev() {
        out.push('/');
        match seg {
            Seg::Index(i) => out.push_str(&i.to_string()),
            Seg::Key(k) => {
                for c in k.chars() {
                    match c {
                        '~' => out.push_str("~0"),
                        '/' => out.push_str("~1"),
                        c => out.push(c),
                    }
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Known formats

/// `[A-Za-z0-9_-]`: the tail of Anthropic and OpenAI keys, and base64url.
fn is_key_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn is_slack_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

fn is_upper_or_digit(c: u8) -> bool {
    c.is_ascii_uppercase() || c.is_ascii_digit()
}

/// `[A-Za-z0-9._~+/=-]`: the characters of a bearer token.
fn is_bearer_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'~' | b'+' | b'/' | b'=' | b'-')
}

/// Count the bytes of `b[from..]` matching `pred`, stopping at the first
/// mismatch or after `cap` bytes.
fn count(b: &[u8], from: usize, cap: usize, pred: fn(u8) -> bool) -> usize {
    b.get(from..)
        .unwrap_or_default()
        .iter()
        .take(cap)
        .take_while(|&&c| pred(c))
        .count()
}

fn has_at(b: &[u8], at: usize, needle: &[u8]) -> bool {
    b.get(at..).is_some_and(|rest| rest.starts_with(needle))
}

/// True when position `i` starts a word: the byte before it is not an ASCII
/// letter or digit.
fn word_start(b: &[u8], i: usize) -> bool {
    i == 0 || !b[i - 1].is_ascii_alphanumeric()
}

/// One pass over the bytes, trying each known format where its first byte
/// appears. Returns the highest-priority kind found.
fn scan_known(b: &[u8]) -> Option<&'static str> {
    // Priority: lower is more specific. A bearer token is only kept while we
    // look for something more specific (e.g. "Bearer sk-ant-...").
    let mut best: Option<(u8, &'static str)> = None;
    for i in 0..b.len() {
        let hit = match b[i] {
            b's' => match_sk(b, i),
            b'g' => match_github(b, i),
            b'e' => match_jwt(b, i),
            b'-' => match_pem(b, i),
            b'A' => match_aws(b, i),
            b'x' => match_slack(b, i),
            b'b' | b'B' => match_bearer(b, i),
            _ => None,
        };
        if let Some(kind) = hit {
            let rank = priority(kind);
            if rank == 0 {
                return Some(kind);
            }
            if best.is_none_or(|(r, _)| rank < r) {
                best = Some((rank, kind));
            }
        }
    }
    best.map(|(_, kind)| kind)
}

fn priority(kind: &'static str) -> u8 {
    match kind {
        ANTHROPIC => 0,
        OPENAI => 1,
        GITHUB => 2,
        JWT => 3,
        PEM => 4,
        AWS => 5,
        SLACK => 6,
        _ => 7,
    }
}

/// `sk-ant-` + 20 key chars (Anthropic), else `sk-` + 20 key chars (OpenAI,
/// including `sk-proj-` and `sk-svcacct-`, whose prefixes are key chars).
fn match_sk(b: &[u8], i: usize) -> Option<&'static str> {
    if !word_start(b, i) || !has_at(b, i, b"sk-") {
        return None;
    }
    if has_at(b, i, b"sk-ant-") && count(b, i + 7, 20, is_key_byte) >= 20 {
        return Some(ANTHROPIC);
    }
    (count(b, i + 3, 20, is_key_byte) >= 20).then_some(OPENAI)
}

/// `gh[pousr]_` + 30 alphanumerics, or `github_pat_` + 20 of `[A-Za-z0-9_]`.
fn match_github(b: &[u8], i: usize) -> Option<&'static str> {
    if !word_start(b, i) {
        return None;
    }
    let classic = has_at(b, i, b"gh")
        && matches!(b.get(i + 2), Some(b'p' | b'o' | b'u' | b's' | b'r'))
        && b.get(i + 3) == Some(&b'_')
        && count(b, i + 4, 30, |c| c.is_ascii_alphanumeric()) >= 30;
    let fine_grained = has_at(b, i, b"github_pat_") && count(b, i + 11, 20, is_word_byte) >= 20;
    (classic || fine_grained).then_some(GITHUB)
}

/// Three base64url segments of at least 10 chars joined by dots, the first two
/// starting `eyJ` (base64 of `{"`). Only tried where a base64url run begins, so
/// each run is measured a bounded number of times.
fn match_jwt(b: &[u8], i: usize) -> Option<&'static str> {
    if (i > 0 && is_key_byte(b[i - 1])) || !has_at(b, i, b"eyJ") {
        return None;
    }
    let header = count(b, i, usize::MAX, is_key_byte);
    let p = i + header;
    if header < 10 || b.get(p) != Some(&b'.') || !has_at(b, p + 1, b"eyJ") {
        return None;
    }
    let payload = count(b, p + 1, usize::MAX, is_key_byte);
    let q = p + 1 + payload;
    if payload < 10 || b.get(q) != Some(&b'.') {
        return None;
    }
    (count(b, q + 1, 10, is_key_byte) >= 10).then_some(JWT)
}

/// `-----BEGIN <label>-----` where the label contains `PRIVATE KEY` (RSA, EC,
/// DSA, OPENSSH, ENCRYPTED, plain PKCS#8, PGP ... BLOCK).
fn match_pem(b: &[u8], i: usize) -> Option<&'static str> {
    const DASHES: &[u8] = b"-----";
    if !has_at(b, i, DASHES) || !has_at(b, i + DASHES.len(), b"BEGIN ") {
        return None;
    }
    let start = i + DASHES.len() + b"BEGIN ".len();
    let len = count(b, start, 64, |c| {
        c.is_ascii_uppercase() || c.is_ascii_digit() || c == b' '
    });
    if !has_at(b, start + len, DASHES) {
        return None;
    }
    let label = &b[start..start + len];
    label
        .windows(b"PRIVATE KEY".len())
        .any(|w| w == b"PRIVATE KEY")
        .then_some(PEM)
}

/// `AKIA` or `ASIA` + exactly 16 of `[A-Z0-9]`, as a whole word.
fn match_aws(b: &[u8], i: usize) -> Option<&'static str> {
    if !word_start(b, i) || !(has_at(b, i, b"AKIA") || has_at(b, i, b"ASIA")) {
        return None;
    }
    let body = count(b, i + 4, 17, is_upper_or_digit);
    let ends_word = b.get(i + 20).is_none_or(|c| !c.is_ascii_alphanumeric());
    (body == 16 && ends_word).then_some(AWS)
}

/// `xox[bpars]-` + 10 of `[A-Za-z0-9-]`.
fn match_slack(b: &[u8], i: usize) -> Option<&'static str> {
    let hit = word_start(b, i)
        && has_at(b, i, b"xox")
        && matches!(b.get(i + 3), Some(b'b' | b'p' | b'a' | b'r' | b's'))
        && b.get(i + 4) == Some(&b'-')
        && count(b, i + 5, 10, is_slack_byte) >= 10;
    hit.then_some(SLACK)
}

/// Case-insensitive `bearer`, one space, then 16 bearer-token chars.
fn match_bearer(b: &[u8], i: usize) -> Option<&'static str> {
    let hit = word_start(b, i)
        && b.get(i..i + 6)
            .is_some_and(|w| w.eq_ignore_ascii_case(b"bearer"))
        && b.get(i + 6) == Some(&b' ')
        && count(b, i + 7, 16, is_bearer_byte) >= 16;
    hit.then_some(BEARER)
}

// ---------------------------------------------------------------------------
// High entropy

/// `[A-Za-z0-9+_=-]`: the characters of a high-entropy run.
fn is_run_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'_' | b'=' | b'-')
}

/// Split into runs of [`is_run_byte`] and test each long one.
fn high_entropy(b: &[u8]) -> bool {
    let mut i = 0;
    while i < b.len() {
        if !is_run_byte(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && is_run_byte(b[i]) {
            i += 1;
        }
        if i - start >= ENTROPY_MIN_LEN && looks_random(&b[start..i]) {
            return true;
        }
    }
    false
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Upper,
    Lower,
    Digit,
    Sep,
}

fn class(c: u8) -> Class {
    if c.is_ascii_uppercase() {
        Class::Upper
    } else if c.is_ascii_lowercase() {
        Class::Lower
    } else if c.is_ascii_digit() {
        Class::Digit
    } else {
        Class::Sep
    }
}

/// A run (all bytes ASCII, at least [`ENTROPY_MIN_LEN`] long) looks random when
/// it mixes upper case, lower case and digits, its Shannon entropy is at least
/// [`ENTROPY_MIN_BITS`], and it does not split into word-like tokens. The case
/// test ignores the hex letters A-F / a-f: random base62 text of 32+ chars holds
/// other letters of both cases all but certainly, while hex digests (even mixed
/// case, or glued to a word) do not.
///
/// Entropy alone cannot tell `handleUserAuthenticationCallbackForSession2`
/// (about 4.2 bits/char) from a random 32-char key (about 4.5), so the run is
/// also cut into tokens the way an identifier would be: at separators, between
/// letters and digits, at a lower-to-upper hump, and before the last capital of
/// an acronym followed by lower case ("XMLHttp" -> "XML", "Http"). Identifiers
/// average 2.5+ letters or digits per token; random text, which switches class
/// at most positions, averages under 2.
fn looks_random(run: &[u8]) -> bool {
    let mut counts = [0u32; 128];
    let (mut upper, mut lower, mut digit) = (false, false, false);
    let (mut tokens, mut alnum) = (0u32, 0u32);
    let mut prev = Class::Sep;
    for (idx, &c) in run.iter().enumerate() {
        counts[usize::from(c & 0x7f)] += 1;
        let cls = class(c);
        let boundary = match (prev, cls) {
            (_, Class::Sep) => false,
            (Class::Sep, _)
            | (Class::Digit, Class::Upper | Class::Lower)
            | (Class::Upper | Class::Lower, Class::Digit)
            | (Class::Lower, Class::Upper) => true,
            (Class::Upper, Class::Upper) => run.get(idx + 1).is_some_and(u8::is_ascii_lowercase),
            _ => false,
        };
        match cls {
            // Letters past 'F' / 'f', so a hex digest glued to a word
            // ("DC463A16...2247-secret") does not count as mixed case.
            Class::Upper => upper |= c > b'F',
            Class::Lower => lower |= c > b'f',
            Class::Digit => digit = true,
            Class::Sep => {}
        }
        if cls != Class::Sep {
            alnum += 1;
        }
        if boundary {
            tokens += 1;
        }
        prev = cls;
    }
    if !(upper && lower && digit) {
        return false;
    }
    // Mean token length alnum / tokens < NUM / DEN, in integers.
    if alnum * WORD_LEN_DEN >= tokens * WORD_LEN_NUM {
        return false;
    }
    entropy(&counts, run.len()) >= ENTROPY_MIN_BITS
}

/// Shannon entropy in bits per char of a string of `len` chars with these counts.
fn entropy(counts: &[u32; 128], len: usize) -> f64 {
    let n = len as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests;
