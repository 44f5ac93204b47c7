//! The Gate's table (spec 7.7): which tool calls would send as the person, spend their money or
//! delete beyond the session's own folder. Pure and quick (it runs before every Bash and MCP
//! call of a session); each row has its test below. What no row names stays allowed; the person
//! adds rows and lets some through in config (`gate.hold`, `gate.pass`, [`Extra`]).

use std::path::{Component, Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::mcp::mcp;
use crate::kernel::shell::{commands, program};

/// Why a call is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// It would send or publish as the person.
    Send,
    /// It would spend their money.
    Spend,
    /// It would delete beyond the session's folder, or something of theirs elsewhere.
    Delete,
}

/// A held call: which row held it and what it does, in a person's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub kind: Kind,
    /// The row: `git-push`, `curl-send`, `mcp-send`, `person:<n>` ...
    pub rule: String,
    /// "git push", "an HTTP POST with curl", "the MCP tool slack.post_message".
    pub what: String,
    /// The words of the simple command that was held (Bash), for where it goes.
    pub words: Vec<String>,
}

/// A row the person adds (`gate.hold`) or a call they let through (`gate.pass`): a command's
/// first words, or a tool name with `*` for any run of characters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Extra {
    /// A command's first words: `fly deploy`, `git push origin my-fork`.
    #[serde(default)]
    pub command: Option<String>,
    /// A tool's name: `mcp__stripe__*`.
    #[serde(default)]
    pub tool: Option<String>,
    /// Why it is held (default send).
    #[serde(default)]
    pub kind: Option<Kind>,
}

/// What the table is asked about: the call and where the session works.
pub struct Call<'a> {
    pub tool: &'a str,
    pub input: &'a Value,
    /// The session's folder: deleting inside it is its own work.
    pub folder: Option<&'a Path>,
}

/// The person's rows, from config.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    pub hold: Vec<Extra>,
    pub pass: Vec<Extra>,
}

/// Commands that publish or send as the person, by their first words (after the program's
/// own options); `*` stands for any one word.
const SENDS: &[(&str, &[&str], Kind, &str)] = &[
    ("git-push", &["git", "push"], Kind::Send, "git push"),
    (
        "git-send-email",
        &["git", "send-email"],
        Kind::Send,
        "git send-email",
    ),
    (
        "gh-pr",
        &["gh", "pr", "create"],
        Kind::Send,
        "a pull request opened with gh",
    ),
    (
        "gh-pr",
        &["gh", "pr", "merge"],
        Kind::Send,
        "a pull request merged with gh",
    ),
    (
        "gh-pr",
        &["gh", "pr", "comment"],
        Kind::Send,
        "a pull request comment with gh",
    ),
    (
        "gh-pr",
        &["gh", "pr", "review"],
        Kind::Send,
        "a pull request review with gh",
    ),
    (
        "gh-pr",
        &["gh", "pr", "close"],
        Kind::Send,
        "a pull request closed with gh",
    ),
    (
        "gh-pr",
        &["gh", "pr", "edit"],
        Kind::Send,
        "a pull request edited with gh",
    ),
    (
        "gh-issue",
        &["gh", "issue", "create"],
        Kind::Send,
        "an issue opened with gh",
    ),
    (
        "gh-issue",
        &["gh", "issue", "comment"],
        Kind::Send,
        "an issue comment with gh",
    ),
    (
        "gh-issue",
        &["gh", "issue", "close"],
        Kind::Send,
        "an issue closed with gh",
    ),
    (
        "gh-issue",
        &["gh", "issue", "edit"],
        Kind::Send,
        "an issue edited with gh",
    ),
    (
        "gh-issue",
        &["gh", "issue", "delete"],
        Kind::Delete,
        "an issue deleted with gh",
    ),
    (
        "gh-release",
        &["gh", "release", "create"],
        Kind::Send,
        "a release published with gh",
    ),
    (
        "gh-release",
        &["gh", "release", "upload"],
        Kind::Send,
        "release files uploaded with gh",
    ),
    (
        "gh-release",
        &["gh", "release", "delete"],
        Kind::Delete,
        "a release deleted with gh",
    ),
    (
        "gh-repo",
        &["gh", "repo", "create"],
        Kind::Send,
        "a repository created with gh",
    ),
    (
        "gh-repo",
        &["gh", "repo", "delete"],
        Kind::Delete,
        "a repository deleted with gh",
    ),
    (
        "gh-repo",
        &["gh", "repo", "archive"],
        Kind::Send,
        "a repository archived with gh",
    ),
    (
        "gh-gist",
        &["gh", "gist", "create"],
        Kind::Send,
        "a gist published with gh",
    ),
    ("publish", &["npm", "publish"], Kind::Send, "npm publish"),
    (
        "publish",
        &["npm", "unpublish"],
        Kind::Delete,
        "npm unpublish",
    ),
    ("publish", &["pnpm", "publish"], Kind::Send, "pnpm publish"),
    ("publish", &["yarn", "publish"], Kind::Send, "yarn publish"),
    (
        "publish",
        &["yarn", "npm", "publish"],
        Kind::Send,
        "yarn npm publish",
    ),
    ("publish", &["bun", "publish"], Kind::Send, "bun publish"),
    (
        "publish",
        &["cargo", "publish"],
        Kind::Send,
        "cargo publish",
    ),
    ("publish", &["cargo", "yank"], Kind::Send, "cargo yank"),
    ("publish", &["twine", "upload"], Kind::Send, "twine upload"),
    (
        "publish",
        &["poetry", "publish"],
        Kind::Send,
        "poetry publish",
    ),
    ("publish", &["uv", "publish"], Kind::Send, "uv publish"),
    ("publish", &["gem", "push"], Kind::Send, "gem push"),
    ("publish", &["docker", "push"], Kind::Send, "docker push"),
    ("publish", &["podman", "push"], Kind::Send, "podman push"),
    ("mail", &["mail"], Kind::Send, "an email"),
    ("mail", &["mailx"], Kind::Send, "an email"),
    ("mail", &["sendmail"], Kind::Send, "an email"),
    ("mail", &["msmtp"], Kind::Send, "an email"),
    ("mail", &["mutt"], Kind::Send, "an email"),
    ("mail", &["swaks"], Kind::Send, "an email"),
];

/// Options that take a value, per program, skipped when finding its subcommand.
fn takes_value(program: &str, option: &str) -> bool {
    match program {
        "git" => matches!(
            option,
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace"
        ),
        "gh" => matches!(option, "-R" | "--repo"),
        "cargo" => matches!(option, "--manifest-path" | "-Z" | "--config" | "-C"),
        "npm" | "pnpm" | "yarn" => {
            matches!(option, "--prefix" | "-C" | "--dir" | "--workspace" | "-w")
        }
        "docker" | "podman" => matches!(option, "-H" | "--host" | "--context" | "-c" | "--config"),
        _ => false,
    }
}

/// A command's program and the words that are not options, in order: `git -C x push -f origin`
/// is `git push origin`.
fn plain_words(words: &[String]) -> Vec<&str> {
    let Some(first) = words.first() else {
        return vec![];
    };
    let prog = program(first);
    let mut out = vec![prog];
    let mut i = 1;
    while let Some(w) = words.get(i) {
        if w.starts_with('-') && w.len() > 1 {
            i += if takes_value(prog, w) { 2 } else { 1 };
            continue;
        }
        out.push(w);
        i += 1;
    }
    out
}

/// Whether the person's command words start `words`.
fn starts(plain: &[&str], prefix: &[&str]) -> bool {
    plain.len() >= prefix.len() && plain.iter().zip(prefix).all(|(w, p)| *p == "*" || w == p)
}

/// `*` globbing for tool names.
fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, rest)) => {
            let Some(tail) = name.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len()).any(|i| tail.is_char_boundary(i) && glob(rest, &tail[i..]))
        }
    }
}

fn extra_matches(e: &Extra, call: &Call<'_>, words: Option<&[&str]>) -> bool {
    if let Some(tool) = &e.tool
        && !glob(tool, call.tool)
    {
        return false;
    }
    if let Some(command) = &e.command {
        let prefix: Vec<&str> = command.split_whitespace().collect();
        return words.is_some_and(|w| starts(w, &prefix));
    }
    e.tool.is_some()
}

/// What the person's rows say of one command (its words) or one tool call (no words).
enum Person<'r> {
    /// A `pass` row lets it through.
    Pass,
    /// A `hold` row (its index) holds it.
    Hold(usize, &'r Extra),
    /// No row names it: the built-in table decides.
    Silent,
}

impl Rules {
    fn person(&self, call: &Call<'_>, words: Option<&[&str]>) -> Person<'_> {
        if self.pass.iter().any(|e| extra_matches(e, call, words)) {
            return Person::Pass;
        }
        match self
            .hold
            .iter()
            .enumerate()
            .find(|(_, e)| extra_matches(e, call, words))
        {
            Some((n, e)) => Person::Hold(n, e),
            None => Person::Silent,
        }
    }
}

/// A call a person's `hold` row `n` holds.
fn held_by_person(n: usize, e: &Extra, what: String, words: Vec<String>) -> Held {
    Held {
        kind: e.kind.unwrap_or(Kind::Send),
        rule: format!("person:{n}"),
        what,
        words,
    }
}

/// Whether the table holds `call`, and why.
pub fn classify(call: &Call<'_>, rules: &Rules) -> Option<Held> {
    if call.tool != "Bash" {
        return match rules.person(call, None) {
            Person::Pass => None,
            Person::Hold(n, e) => Some(held_by_person(
                n,
                e,
                format!("the tool {}", call.tool),
                vec![],
            )),
            Person::Silent => mcp(call.tool, call.input),
        };
    }
    let line = call.input["command"].as_str()?;
    for words in commands(line) {
        let plain = plain_words(&words);
        match rules.person(call, Some(&plain)) {
            Person::Pass => continue,
            Person::Hold(n, e) => {
                let what = e.command.clone().unwrap_or_else(|| plain.join(" "));
                return Some(held_by_person(n, e, what, words));
            }
            Person::Silent => {
                if let Some(held) = command(&words, &plain, call.folder) {
                    return Some(held);
                }
            }
        }
    }
    None
}

/// One simple command, by the table.
fn command(words: &[String], plain: &[&str], folder: Option<&Path>) -> Option<Held> {
    let held = |kind, rule: &str, what: &str| {
        Some(Held {
            kind,
            rule: rule.into(),
            what: what.into(),
            words: words.to_vec(),
        })
    };
    if let Some((rule, _, kind, what)) = SENDS.iter().find(|(_, p, _, _)| starts(plain, p)) {
        return held(*kind, rule, what);
    }
    match plain.first().copied()? {
        "curl" if http_sends(words, CURL_DATA, &["-X", "--request"], false) => held(
            Kind::Send,
            "curl-send",
            "an HTTP request that sends data, with curl",
        ),
        "wget" if http_sends(words, WGET_DATA, &["--method"], false) => held(
            Kind::Send,
            "wget-send",
            "an HTTP request that sends data, with wget",
        ),
        "http" | "https" | "xh" | "xhs" if http_sends(words, &[], &[], true) => {
            held(Kind::Send, "httpie-send", "an HTTP request that sends data")
        }
        "gh" if plain.get(1) == Some(&"api") && gh_api_sends(words) => held(
            Kind::Send,
            "gh-api",
            "a GitHub API call that changes something, with gh",
        ),
        "rm" | "rmdir" | "unlink" | "shred" | "trash" | "srm" => {
            outside(plain[1..].iter().copied(), folder)
                .then(|| {
                    held(
                        Kind::Delete,
                        "delete-outside",
                        "deleting files outside the session's folder",
                    )
                })
                .flatten()
        }
        "find"
            if words
                .iter()
                .any(|w| w == "-delete" || w == "-exec" && words.iter().any(|x| x == "rm")) =>
        {
            // `find <paths> ... -delete`: the paths come before the first expression.
            let paths = plain[1..]
                .iter()
                .copied()
                .take_while(|w| !w.starts_with('-'));
            outside(paths, folder)
                .then(|| {
                    held(
                        Kind::Delete,
                        "delete-outside",
                        "deleting files outside the session's folder",
                    )
                })
                .flatten()
        }
        _ => None,
    }
}

/// curl's options that send a body (and so make a POST unless a method is said).
const CURL_DATA: &[&str] = &[
    "-d",
    "--data",
    "--data-raw",
    "--data-binary",
    "--data-urlencode",
    "--data-ascii",
    "-F",
    "--form",
    "--form-string",
    "-T",
    "--upload-file",
    "--json",
];
const WGET_DATA: &[&str] = &["--post-data", "--post-file", "--body-data", "--body-file"];

/// Whether an HTTP client's command sends data beyond this machine: a method other than GET or
/// HEAD (an option, or HTTPie's method word), or a body, to a URL that is not loopback.
fn http_sends(words: &[String], data: &[&str], method: &[&str], httpie: bool) -> bool {
    let mut sends = false;
    let mut urls = Vec::new();
    let mut i = 1;
    while let Some(w) = words.get(i) {
        let (name, glued) = match w.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (w.as_str(), None),
        };
        if data.contains(&name)
            || (name.starts_with("-d") && !name.starts_with("--") && data.contains(&"-d"))
        {
            sends = true;
        }
        let m = if method.contains(&name) {
            glued
                .map(String::from)
                .or_else(|| words.get(i + 1).cloned())
        } else if method.contains(&"-X") && name.starts_with("-X") && name.len() > 2 {
            Some(name[2..].to_string())
        } else {
            None
        };
        if let Some(m) = m
            && !matches!(m.to_ascii_uppercase().as_str(), "GET" | "HEAD" | "OPTIONS")
        {
            sends = true;
        }
        if httpie && i == 1 && matches!(w.as_str(), "POST" | "PUT" | "PATCH" | "DELETE") {
            sends = true;
        }
        if httpie
            && i > 1
            && (w.contains(":=") || (w.contains('=') && !w.starts_with('-') && !w.contains("://")))
        {
            sends = true;
        }
        if !w.starts_with('-') && !w.starts_with('@') {
            urls.push(w.as_str());
        }
        i += 1;
    }
    // The URLs: the words with a scheme, or else the words that look like a host.
    let schemed: Vec<&str> = urls.iter().copied().filter(|u| u.contains("://")).collect();
    let urls: Vec<&str> = if schemed.is_empty() {
        urls.into_iter()
            .filter(|u| u.contains('.') || u.starts_with("localhost") || u.starts_with(':'))
            .collect()
    } else {
        schemed
    };
    sends && (urls.is_empty() || urls.iter().any(|u| !loopback(u)))
}

/// Whether a URL's host is this machine.
fn loopback(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(v6) = host.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host.split(':').next().unwrap_or("")
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `gh api` changes something with a method other than GET, or with fields (a POST then).
fn gh_api_sends(words: &[String]) -> bool {
    let mut fields = false;
    for (i, w) in words.iter().enumerate() {
        if matches!(
            w.as_str(),
            "-f" | "-F" | "--field" | "--raw-field" | "--input"
        ) {
            fields = true;
        }
        if matches!(w.as_str(), "-X" | "--method") {
            return words
                .get(i + 1)
                .is_some_and(|m| !m.eq_ignore_ascii_case("GET"));
        }
        if let Some(m) = w
            .strip_prefix("--method=")
            .or_else(|| w.strip_prefix("-X"))
            .filter(|m| !m.is_empty())
        {
            return !m.eq_ignore_ascii_case("GET");
        }
    }
    fields
}

/// Whether any of `paths` is outside `folder` (or anywhere, when the folder is not known).
fn outside<'a>(paths: impl Iterator<Item = &'a str>, folder: Option<&Path>) -> bool {
    paths.filter(|p| !p.is_empty()).any(|p| match folder {
        None => p.starts_with('/') || p.starts_with('~') || p.contains(".."),
        Some(folder) => {
            if p.starts_with('~') || p.starts_with('$') {
                return true;
            }
            let joined = folder.join(p);
            !normal(&joined).starts_with(normal(folder))
        }
    })
}

/// A path with `.` and `..` worked out by its words (no file system reads).
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
#[path = "classify_tests.rs"]
mod tests;
