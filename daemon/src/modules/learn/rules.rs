//! From a person's words to a lesson (spec 7.11), without a model: which prompts are
//! corrections ("no", "don't", "never", "always", "I told you", `/vyre remember`), the rule they
//! state, and, when the rule is one of the kinds Vyre can check in code, its check. A rule Vyre
//! cannot check stays a reminder that joins the brief and the prompt.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A check a lesson runs, in code, at one stage of a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    /// Before a turn ends: the answer must not contain these characters or words (words match
    /// whole, ignoring case).
    Banned {
        #[serde(default)]
        chars: Vec<String>,
        #[serde(default)]
        words: Vec<String>,
    },
    /// Before a tool runs: no Bash command that starts with `words` (after its program's
    /// options are set aside), and, when `flags` are given, carries one of them.
    Command {
        words: Vec<String>,
        #[serde(default)]
        flags: Vec<String>,
    },
    /// Before a tool runs: a command that starts with `before` only after one that starts with
    /// any of `ran` ran earlier in the same turn ("test before commit").
    Requires {
        before: Vec<String>,
        ran: Vec<Vec<String>>,
    },
    /// Before a turn ends: when the turn changed files, one of them is named `path`
    /// ("update the changelog").
    Touches { path: String },
}

impl Check {
    /// What it looks at, in words (a lesson's `when`).
    pub fn when(&self) -> String {
        match self {
            Check::Banned { .. } => "every answer".into(),
            Check::Command { words, .. } => format!("a command `{}`", words.join(" ")),
            Check::Requires { before, .. } => format!("before `{}`", before.join(" ")),
            Check::Touches { .. } => "a turn that changes files".into(),
        }
    }
}

/// A rule read from a person's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The sentence that states it.
    pub rule: String,
    pub check: Option<Check>,
}

/// Characters a person names.
const NAMED_CHARS: &[(&[&str], &[&str])] = &[
    (&["em dash", "em-dash", "emdash"], &["\u{2014}"]),
    (&["en dash", "en-dash", "endash"], &["\u{2013}"]),
    (&["semicolon"], &[";"]),
    (&["exclamation mark", "exclamation point"], &["!"]),
    (
        &["smart quote", "curly quote", "typographic quote"],
        &["\u{201C}", "\u{201D}", "\u{2018}", "\u{2019}"],
    ),
    (&["ellipsis character", "ellipses character"], &["\u{2026}"]),
];

/// Words that start a correction.
const CORRECTIONS: &[&str] = &[
    "no,",
    "no.",
    "no!",
    "no ",
    "don't ",
    "dont ",
    "do not ",
    "never ",
    "always ",
    "stop ",
    "i told you",
    "please don't ",
    "please never ",
    "please always ",
    "remember to ",
    "remember: ",
    "from now on",
];

/// Test commands a "test before commit" rule accepts.
const TEST_COMMANDS: &[&[&str]] = &[
    &["cargo", "test"],
    &["cargo", "nextest"],
    &["npm", "test"],
    &["npm", "run", "test"],
    &["pnpm", "test"],
    &["yarn", "test"],
    &["bun", "test"],
    &["pytest"],
    &["python", "-m", "pytest"],
    &["python3", "-m", "pytest"],
    &["go", "test"],
    &["make", "test"],
    &["make", "check"],
    &["tests/run"],
    &["./tests/run"],
];

/// The rule a prompt states, when the prompt is a correction or `/vyre remember`; `None` for
/// any other prompt. The rule is the sentence with the correction in it.
pub fn correction(prompt: &str) -> Option<Parsed> {
    let text = prompt.trim();
    for prefix in ["/vyre remember ", "/vyre:remember ", "/vyre-remember "] {
        if let Some(rule) = text.strip_prefix(prefix) {
            let rule = rule.trim();
            return (!rule.is_empty()).then(|| parse(rule));
        }
    }
    // A long prompt is work, not a correction: only its first sentence may be one.
    let first = sentences(text).into_iter().next()?;
    let lower = first.to_lowercase();
    let starts = CORRECTIONS.iter().any(|c| lower.starts_with(c));
    if !starts || first.chars().count() > 200 {
        return None;
    }
    // "No, use tabs" states its rule after the "no".
    let rule = match lower.strip_prefix("no") {
        Some(rest) if rest.starts_with([',', '.', '!']) => first[2..]
            .trim_start_matches([',', '.', '!', ' '])
            .to_string(),
        _ => first.to_string(),
    };
    let parsed = parse(&rule);
    // A bare "no" or "stop" says nothing to keep.
    (parsed.rule.split_whitespace().count() >= 2).then_some(parsed)
}

/// The sentences of `text` (a full stop, question or exclamation mark, or a line ends one).
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        if c == '\n' || ((c == '.' || c == '!' || c == '?') && !cur.trim().is_empty()) {
            if c != '\n' {
                cur.push(c);
            }
            if !cur.trim().is_empty() {
                out.push(cur.trim().to_string());
            }
            cur.clear();
            continue;
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// A rule in words, with the check Vyre can run for it, if any.
pub fn parse(rule: &str) -> Parsed {
    let rule = rule.trim().trim_end_matches(['.', '!']).trim().to_string();
    let lower = rule.to_lowercase();
    let negative = [
        "don't", "dont", "do not", "never", "no ", "stop ", "avoid", "without",
    ]
    .iter()
    .any(|n| lower.contains(n));
    let quoted = quoted(&rule);
    let check = if negative && let Some(chars) = named_chars(&lower) {
        Some(Check::Banned {
            chars,
            words: vec![],
        })
    } else if negative && lower.contains("emoji") {
        Some(Check::Banned {
            chars: EMOJI.iter().map(|c| c.to_string()).collect(),
            words: vec![],
        })
    } else if negative && lower.contains("force push") || lower.contains("force-push") {
        Some(Check::Command {
            words: vec!["git".into(), "push".into()],
            flags: vec!["--force".into(), "-f".into(), "--force-with-lease".into()],
        })
    } else if negative
        && (lower.contains(" run ") || lower.starts_with("run ") || lower.contains(" use "))
        && let Some(q) = quoted.first().filter(|_| lower.contains('`'))
    {
        let mut words: Vec<String> = q.split_whitespace().map(String::from).collect();
        let flags: Vec<String> = words
            .iter()
            .filter(|w| w.starts_with('-'))
            .cloned()
            .collect();
        words.retain(|w| !w.starts_with('-'));
        (!words.is_empty()).then_some(Check::Command { words, flags })
    } else if negative
        && (lower.contains("say") || lower.contains("use") || lower.contains("write"))
        && !quoted.is_empty()
    {
        Some(Check::Banned {
            chars: vec![],
            words: quoted,
        })
    } else if (lower.contains("test") && lower.contains("before") && lower.contains("commit"))
        || (lower.contains("commit") && lower.contains("without") && lower.contains("test"))
    {
        Some(Check::Requires {
            before: vec!["git".into(), "commit".into()],
            ran: TEST_COMMANDS
                .iter()
                .map(|c| c.iter().map(|w| w.to_string()).collect())
                .collect(),
        })
    } else if lower.contains("changelog")
        && (lower.contains("update") || lower.contains("always") || lower.contains("add"))
    {
        Some(Check::Touches {
            path: "CHANGELOG.md".into(),
        })
    } else {
        None
    };
    Parsed { rule, check }
}

/// Emoji and pictographs, by the blocks they live in (a check lists characters, so the common
/// ones are named; a rule about emoji also matches any character in these ranges).
pub const EMOJI: &[&str] = &[
    "\u{1F600}",
    "\u{1F44D}",
    "\u{2705}",
    "\u{1F680}",
    "\u{2728}",
    "\u{1F389}",
];

/// Whether `c` is an emoji or pictograph.
pub fn is_emoji(c: char) -> bool {
    matches!(c as u32, 0x1F300..=0x1FAFF | 0x2600..=0x27BF | 0x1F000..=0x1F2FF)
}

fn named_chars(lower: &str) -> Option<Vec<String>> {
    NAMED_CHARS
        .iter()
        .find(|(names, _)| names.iter().any(|n| lower.contains(n)))
        .map(|(_, chars)| chars.iter().map(|c| c.to_string()).collect())
}

/// The parts of `rule` in quotes or backticks (an apostrophe inside a word is not a quote).
fn quoted(rule: &str) -> Vec<String> {
    let chars: Vec<char> = rule.chars().collect();
    for (open, close) in [
        ('`', '`'),
        ('"', '"'),
        ('\u{201C}', '\u{201D}'),
        ('\'', '\''),
    ] {
        let mut out = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let starts =
                chars[i] == open && (open != '\'' || i == 0 || !chars[i - 1].is_alphanumeric());
            if !starts {
                i += 1;
                continue;
            }
            let Some(j) = (i + 1..chars.len()).find(|&j| {
                chars[j] == close
                    && (close != '\'' || j + 1 == chars.len() || !chars[j + 1].is_alphanumeric())
            }) else {
                break;
            };
            let inner: String = chars[i + 1..j].iter().collect();
            if !inner.trim().is_empty() {
                out.push(inner.trim().to_string());
            }
            i = j + 1;
        }
        if !out.is_empty() {
            return out;
        }
    }
    vec![]
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
