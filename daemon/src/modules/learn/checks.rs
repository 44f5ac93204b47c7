//! Lessons with a check, run as code at the two places a turn can be stopped (spec 7.11): before
//! a tool runs, and before the turn ends. What a check needs to know of the turn so far (the
//! commands that ran, the files changed, how often the end was already refused) is kept here
//! per session, from the tool checks themselves, and let go when the turn ends.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::rules::{Check, is_emoji};
use crate::kernel::shell::{commands, program};

/// A turn's log forgotten after this long without a word from its session.
const FORGET: Duration = Duration::from_secs(6 * 3600);
/// Sessions' logs kept at most.
const SESSIONS: usize = 2000;

/// What one session's turn did so far.
#[derive(Default)]
struct TurnLog {
    /// Each Bash command's words.
    commands: Vec<Vec<String>>,
    /// Files its Edit and Write calls changed.
    files: HashSet<String>,
    /// How often its end was refused for a lesson.
    refused: u32,
    /// Lessons already counted broken in this turn.
    broken: HashSet<i64>,
    seen: Option<Instant>,
}

/// Every session's turn so far.
#[derive(Default)]
pub struct Turns {
    logs: Mutex<HashMap<String, TurnLog>>,
}

/// A lesson as a check sees it.
pub struct Lesson<'a> {
    pub id: i64,
    pub check: &'a Check,
}

/// What one check found: the lesson broken, and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    pub lesson: i64,
    pub what: String,
    /// First time in this turn (counted once per turn).
    pub first: bool,
}

impl Turns {
    fn with<T>(&self, session: &str, f: impl FnOnce(&mut TurnLog) -> T) -> T {
        let mut logs = self.logs.lock().expect("turn logs");
        if logs.len() > SESSIONS {
            logs.retain(|_, l| l.seen.is_some_and(|s| s.elapsed() < FORGET));
        }
        let log = logs.entry(session.to_string()).or_default();
        log.seen = Some(Instant::now());
        f(log)
    }

    /// A tool is about to run: which lessons it breaks. It is logged for the checks after it
    /// (it runs unless a lesson blocks it, and a blocked call is not counted as run).
    pub fn tool(
        &self,
        session: &str,
        tool: &str,
        input: &Value,
        lessons: &[Lesson<'_>],
    ) -> Vec<Broken> {
        let lines: Vec<Vec<String>> = match (tool, input["command"].as_str()) {
            ("Bash", Some(line)) => commands(line),
            _ => vec![],
        };
        self.with(session, |log| {
            let mut broken = Vec::new();
            for lesson in lessons {
                let what = match lesson.check {
                    Check::Command { words, flags } => lines
                        .iter()
                        .find(|c| {
                            starts(c, words)
                                && (flags.is_empty() || c.iter().any(|w| flags.contains(w)))
                        })
                        .map(|c| format!("the command `{}`", c.join(" "))),
                    Check::Requires { before, ran } => lines
                        .iter()
                        .enumerate()
                        .find(|(i, c)| {
                            starts(c, before)
                                && !log
                                    .commands
                                    .iter()
                                    .chain(&lines[..*i])
                                    .any(|r| ran.iter().any(|p| starts(r, p)))
                        })
                        .map(|(_, c)| {
                            format!(
                                "`{}` before any of the commands it needs ran in this turn",
                                c.join(" ")
                            )
                        }),
                    _ => None,
                };
                if let Some(what) = what {
                    let first = log.broken.insert(lesson.id);
                    broken.push(Broken {
                        lesson: lesson.id,
                        what,
                        first,
                    });
                }
            }
            if broken.is_empty() {
                log.commands.extend(lines);
                if matches!(tool, "Edit" | "Write" | "MultiEdit" | "NotebookEdit")
                    && let Some(path) = input["file_path"]
                        .as_str()
                        .or(input["notebook_path"].as_str())
                {
                    log.files.insert(path.to_string());
                }
            }
            broken
        })
    }

    /// The turn is about to end with `answer`: which lessons it breaks, and how often its end was
    /// already refused in this turn.
    pub fn stop(&self, session: &str, answer: &str, lessons: &[Lesson<'_>]) -> (Vec<Broken>, u32) {
        self.with(session, |log| {
            let mut broken = Vec::new();
            for lesson in lessons {
                let what = match lesson.check {
                    Check::Banned { chars, words } => banned(answer, chars, words),
                    Check::Touches { path } => (!log.files.is_empty()
                        && !log
                            .files
                            .iter()
                            .any(|f| f.rsplit('/').next() == Some(path.as_str())))
                    .then(|| format!("files changed in this turn, and {path} is not one of them")),
                    _ => None,
                };
                if let Some(what) = what {
                    let first = log.broken.insert(lesson.id);
                    broken.push(Broken {
                        lesson: lesson.id,
                        what,
                        first,
                    });
                }
            }
            (broken, log.refused)
        })
    }

    /// The end was refused once more.
    pub fn refused(&self, session: &str) {
        self.with(session, |log| log.refused += 1);
    }

    /// The turn ended: its log goes.
    pub fn ended(&self, session: &str) {
        self.logs.lock().expect("turn logs").remove(session);
    }
}

/// Whether a command's words (its program and the words that are not options) start with `prefix`.
fn starts(command: &[String], prefix: &[String]) -> bool {
    let mut plain = command
        .iter()
        .enumerate()
        .filter(|(i, w)| *i == 0 || !w.starts_with('-'))
        .map(|(i, w)| if i == 0 { program(w) } else { w.as_str() });
    prefix.iter().all(|p| plain.next() == Some(p.as_str()))
}

/// What of `chars` and `words` the answer has, said without repeating it (a banned character
/// quoted back would be read as one more).
fn banned(answer: &str, chars: &[String], words: &[String]) -> Option<String> {
    let mut found: Vec<String> = chars
        .iter()
        .filter(|c| answer.contains(c.as_str()))
        .map(|c| describe(c))
        .collect();
    if chars.iter().any(|c| c.chars().any(is_emoji))
        && answer.chars().any(is_emoji)
        && found.is_empty()
    {
        found.push("emoji".into());
    }
    let lower = answer.to_lowercase();
    for w in words {
        let w = w.to_lowercase();
        let hit = lower.match_indices(&w).any(|(i, _)| {
            let before = lower[..i].chars().next_back();
            let after = lower[i + w.len()..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
        });
        if hit {
            found.push(format!("the word \"{w}\""));
        }
    }
    (!found.is_empty()).then(|| format!("the answer has {}", found.join(", ")))
}

/// A character by its code point and name, never itself.
fn describe(c: &str) -> String {
    let name = match c {
        "\u{2014}" => "EM DASH",
        "\u{2013}" => "EN DASH",
        ";" => "SEMICOLON",
        "!" => "EXCLAMATION MARK",
        "\u{2026}" => "HORIZONTAL ELLIPSIS",
        "\u{201C}" | "\u{201D}" => "a curly double quote",
        "\u{2018}" | "\u{2019}" => "a curly single quote",
        _ => "a character",
    };
    let points: Vec<String> = c.chars().map(|ch| format!("U+{:04X}", ch as u32)).collect();
    format!("{} ({name})", points.join(" "))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::modules::learn::rules::parse;

    fn lesson(id: i64, rule: &str) -> (i64, Check) {
        (
            id,
            parse(rule)
                .check
                .unwrap_or_else(|| panic!("no check for {rule}")),
        )
    }

    #[test]
    fn an_answer_with_a_banned_character_breaks_its_lesson_once_a_turn() {
        let turns = Turns::default();
        let (id, check) = lesson(1, "don't use em dashes");
        let ls = [Lesson { id, check: &check }];
        let (b, refused) = turns.stop("s", "one \u{2014} two", &ls);
        assert_eq!(refused, 0);
        assert_eq!(b[0].what, "the answer has U+2014 (EM DASH)");
        assert!(b[0].first && !b[0].what.contains('\u{2014}'));
        turns.refused("s");
        let (b, refused) = turns.stop("s", "still \u{2014}", &ls);
        assert_eq!((b.len(), b[0].first, refused), (1, false, 1));
        assert!(turns.stop("s", "one, two", &ls).0.is_empty());
        turns.ended("s");
        assert!(
            turns.stop("s", "a \u{2014} b", &ls).0[0].first,
            "a new turn counts again"
        );
    }

    #[test]
    fn banned_words_match_whole_words() {
        let words = vec!["delve".to_string()];
        assert!(banned("Let us Delve in.", &[], &words).is_some());
        assert!(banned("delved", &[], &words).is_none());
        assert!(banned("fine", &[], &words).is_none());
    }

    #[test]
    fn a_command_lesson_and_test_before_commit() {
        let turns = Turns::default();
        let (f, force) = lesson(1, "never force push");
        let (t, tests) = lesson(2, "always run the tests before committing");
        let ls = [
            Lesson {
                id: f,
                check: &force,
            },
            Lesson {
                id: t,
                check: &tests,
            },
        ];
        let bash = |c: &str| json!({ "command": c });
        assert!(
            turns
                .tool("s", "Bash", &bash("git push origin main"), &ls)
                .is_empty()
        );
        let b = turns.tool("s", "Bash", &bash("git push -f origin main"), &ls);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].lesson, 1);
        let b = turns.tool("s", "Bash", &bash("git add . && git commit -m x"), &ls);
        assert_eq!(b[0].lesson, 2, "no test ran in this turn");
        assert!(
            turns
                .tool("s", "Bash", &bash("cargo test -q && git commit -m x"), &ls)
                .is_empty()
        );
        assert!(
            turns
                .tool("s", "Bash", &bash("git commit --amend"), &ls)
                .is_empty(),
            "the test ran earlier"
        );
        turns.ended("s");
        assert_eq!(
            turns.tool("s", "Bash", &bash("git commit -m y"), &ls).len(),
            1
        );
    }

    #[test]
    fn the_changelog_lesson_looks_at_the_files_the_turn_changed() {
        let turns = Turns::default();
        let (id, check) = lesson(3, "always update the changelog");
        let ls = [Lesson { id, check: &check }];
        assert!(turns.stop("s", "done", &ls).0.is_empty(), "nothing changed");
        turns.tool("s", "Edit", &json!({ "file_path": "/w/src/a.rs" }), &[]);
        assert_eq!(turns.stop("s", "done", &ls).0.len(), 1);
        turns.tool(
            "s",
            "Write",
            &json!({ "file_path": "/w/CHANGELOG.md" }),
            &[],
        );
        assert!(turns.stop("s", "done", &ls).0.is_empty());
    }
}
