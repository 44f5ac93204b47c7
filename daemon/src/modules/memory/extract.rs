//! What the curator finds in a turn, without a model (spec 7.4): the addresses, domains, URLs,
//! emails and repositories a conversation names, the files it names by a full path, and the
//! things the person defines in words of their own ("Juno is our assistant", "we call it the
//! Deck"). Pure: text in, findings out.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

/// One thing found, as the graph keeps it: `subject relation object`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    /// `url`, `domain`, `email`, `repo`, `address`, `path`, `term` or `person`.
    pub kind: &'static str,
    pub subject: String,
    /// `mentioned`, or for a term `is` / `means` / `names`.
    pub relation: &'static str,
    /// What a term is; empty for a mention.
    pub object: String,
    /// The words around it, for the person to recognise it by.
    pub snippet: String,
}

/// The longest subject or object kept: past it, it is not a name but a paste.
const LONGEST: usize = 300;
/// Characters either side of a finding kept as its snippet.
const AROUND: usize = 80;

static URL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"https?://[^\s<>"'`\\\[\]{}|^]+"#).expect("url"));
// Word boundaries are ASCII (`(?-u:\b)`): the names they bound are ASCII, and a Unicode word
// boundary makes the regex crate leave its fast automata for its slowest engine on any text
// with a non-ASCII letter, which a first pass over a long history spent most of its time in.
static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?-u:\b)[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}(?-u:\b)",
    )
    .expect("email")
});
static SSH_REPO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?-u:\b)git@([A-Za-z0-9.-]+):([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?(?-u:\b)",
    )
    .expect("ssh repo")
});
static IPV4: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[^\w.])((?:\d{1,3}\.){3}\d{1,3})(?::(\d{1,5}))?(?:$|[^\w.])").expect("ipv4")
});
static PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[\s`'(\x22])((?:~/|/)(?:[A-Za-z0-9._@+-]+/)+[A-Za-z0-9._@+-]+)")
        .expect("path")
});
/// "Juno is our assistant." at the start of a sentence: a capitalised or `quoted` name, then
/// is / means / stands for, then what it is, to the sentence's end.
static DEFINITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?m)(?:^|[.!?]\s+)(?:`([^`\n]{1,60})`|([A-Z][A-Za-z0-9_-]{1,40}))\s+(is|means|stands for)\s+((?:a|an|the|our|my|your|their)\s+[^.!?\n]{2,200})",
    )
    .expect("definition")
});
/// "we call it Lumen", "I call this the Deck".
static NAMING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)(?:we|i)\s+call\s+(?:it|this|that|them)\s+(?-i:`([^`\n]{1,60})`|(?:the\s+)?([A-Z][A-Za-z0-9_-]{1,40}))")
        .expect("naming")
});

/// Words that start a sentence but never name anything.
const NOT_NAMES: &[&str] = &[
    "This",
    "That",
    "It",
    "There",
    "Here",
    "What",
    "Which",
    "Who",
    "Where",
    "When",
    "Why",
    "How",
    "Everything",
    "Nothing",
    "Something",
    "Anything",
    "One",
    "Each",
    "Every",
    "All",
    "None",
    "He",
    "She",
    "They",
    "We",
    "You",
    "I",
    "Mine",
    "Yours",
    "Today",
    "Now",
    "Then",
    "So",
    "Claude",
    "Assistant",
    "User",
    "Answer",
    "Result",
    "Output",
    "Error",
    "Note",
    "Step",
];

/// Repositories are named on these hosts as `host/owner/name`.
const FORGES: &[&str] = &[
    "github.com",
    "gitlab.com",
    "bitbucket.org",
    "codeberg.org",
    "git.sr.ht",
];

/// What a turn names. `person`: the person wrote it (only they define terms).
pub fn findings(text: &str, person: bool) -> Vec<Finding> {
    let mut out = BTreeSet::new();
    let mut add = |kind, subject: &str, relation, object: &str, at: usize| {
        let subject = subject.trim();
        let object = object.trim();
        if subject.is_empty() || subject.len() > LONGEST || object.len() > LONGEST {
            return;
        }
        out.insert(Finding {
            kind,
            subject: subject.to_string(),
            relation,
            object: object.to_string(),
            snippet: snippet(text, at),
        });
    };
    // What is inside a URL (its user, its path) is the URL's, not an email or a file.
    let urls: Vec<std::ops::Range<usize>> = URL.find_iter(text).map(|m| m.range()).collect();
    let in_url = |at: usize| urls.iter().any(|r| r.contains(&at));
    for m in URL.find_iter(text) {
        let url = m
            .as_str()
            .trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '\'']);
        let Some(rest) = url.split_once("://").map(|x| x.1) else {
            continue;
        };
        let host = rest
            .split(['/', '?', '#'])
            .next()
            .unwrap_or("")
            .rsplit('@')
            .next()
            .unwrap_or("");
        let host = host.split(':').next().unwrap_or("").to_ascii_lowercase();
        if host.is_empty() || !host.contains('.') && host != "localhost" {
            continue;
        }
        add("url", &without_secrets(url), "mentioned", "", m.start());
        if host.parse::<std::net::Ipv4Addr>().is_ok() {
            add("address", &host, "mentioned", "", m.start());
        } else if host != "localhost" {
            add("domain", &host, "mentioned", "", m.start());
        }
        if let Some(repo) = forge_repo(&host, rest) {
            add("repo", &repo, "mentioned", "", m.start());
        }
    }
    for m in SSH_REPO.captures_iter(text) {
        let whole = m.get(0).expect("match");
        let repo = format!("{}/{}/{}", m[1].to_ascii_lowercase(), &m[2], &m[3]);
        add("repo", &repo, "mentioned", "", whole.start());
    }
    for m in EMAIL.find_iter(text) {
        if in_url(m.start()) {
            continue;
        }
        let email = m.as_str();
        // git@github.com:owner/name is a repository, not someone to write to.
        if text[m.end()..].starts_with(':') && email.starts_with("git@") {
            continue;
        }
        add("email", email, "mentioned", "", m.start());
        if let Some((_, domain)) = email.rsplit_once('@') {
            add(
                "domain",
                &domain.to_ascii_lowercase(),
                "mentioned",
                "",
                m.start(),
            );
        }
    }
    for c in IPV4.captures_iter(text) {
        let ip = c.get(1).expect("address");
        if in_url(ip.start()) {
            continue;
        }
        let Ok(addr) = ip.as_str().parse::<std::net::Ipv4Addr>() else {
            continue;
        };
        if addr.is_unspecified() || addr.is_broadcast() {
            continue;
        }
        let shown = match c.get(2) {
            Some(port) if port.as_str().parse::<u16>().is_ok() => {
                format!("{addr}:{}", port.as_str())
            }
            _ => addr.to_string(),
        };
        add("address", &shown, "mentioned", "", ip.start());
    }
    for c in PATH.captures_iter(text) {
        let p = c.get(1).expect("path");
        if in_url(p.start()) {
            continue;
        }
        let path = p.as_str().trim_end_matches(['.', ',', ';', ':']);
        add("path", path, "mentioned", "", p.start());
    }
    if person {
        for c in DEFINITION.captures_iter(text) {
            let Some(name) = c.get(1).or_else(|| c.get(2)) else {
                continue;
            };
            if c.get(2).is_some() && NOT_NAMES.contains(&name.as_str()) {
                continue;
            }
            let relation = match &c[3] {
                "means" => "means",
                "stands for" => "means",
                _ => "is",
            };
            add("term", name.as_str(), relation, &c[4], name.start());
        }
        for c in NAMING.captures_iter(text) {
            let Some(name) = c.get(1).or_else(|| c.get(2)) else {
                continue;
            };
            if NOT_NAMES.contains(&name.as_str()) {
                continue;
            }
            // What was called so: the words before, in the same sentence.
            let before = &text[..c.get(0).expect("match").start()];
            let sentence = before
                .rsplit(['.', '!', '?', '\n'])
                .next()
                .unwrap_or("")
                .trim()
                .trim_end_matches([',', ';', ':', '-'])
                .trim();
            let what = if sentence.is_empty() {
                "a name the person gave"
            } else {
                sentence
            };
            add("term", name.as_str(), "names", what, name.start());
        }
    }
    out.into_iter().collect()
}

/// Names of a URL's query parameters that carry a credential.
const SECRET_PARAMS: &[&str] = &[
    "token",
    "access_token",
    "id_token",
    "refresh_token",
    "key",
    "api_key",
    "apikey",
    "secret",
    "client_secret",
    "password",
    "pass",
    "pwd",
    "sig",
    "signature",
    "auth",
    "code",
    "session",
    "x-amz-signature",
    "x-amz-credential",
    "x-amz-security-token",
];

/// The URL without what would let someone in: its `user:password@`, and a query that carries a
/// token or a signature (the whole query goes: its other parameters mean little without it).
fn without_secrets(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (authority, tail) = match rest.find(['/', '?', '#']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query = query.split('#').next().unwrap_or("");
            let secret = query.split('&').any(|kv| {
                let name = kv.split('=').next().unwrap_or("").to_ascii_lowercase();
                SECRET_PARAMS.contains(&name.as_str())
            });
            if secret {
                path.to_string()
            } else {
                format!("{path}?{query}")
            }
        }
        None => tail.to_string(),
    };
    format!("{scheme}://{host}{tail}")
}

/// `host/owner/name` of a repository's URL on a forge.
fn forge_repo(host: &str, rest: &str) -> Option<String> {
    let host = host.strip_prefix("www.").unwrap_or(host);
    if !FORGES.contains(&host) {
        return None;
    }
    let mut parts = rest.split(['?', '#']).next()?.split('/').skip(1);
    let owner = parts.next().filter(|o| !o.is_empty())?;
    let name = parts.next().filter(|n| !n.is_empty())?;
    let name = name.strip_suffix(".git").unwrap_or(name);
    let ok = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
    };
    (ok(owner) && ok(name)).then(|| format!("{host}/{owner}/{name}"))
}

/// Where a turn mentions the people its project's file names (`names`): a full name, whole
/// words, as written; or the first name alone when it is capitalised, at least three letters,
/// and no other of those people shares it. Either is a mention of the full name.
pub fn people(text: &str, names: &[String]) -> Vec<Finding> {
    let mut out = BTreeSet::new();
    for name in names {
        let first = name.split_whitespace().next().unwrap_or_default();
        let first_alone = first != name
            && first.chars().count() >= 3
            && first.chars().next().is_some_and(char::is_uppercase)
            && names
                .iter()
                .filter(|n| n.split_whitespace().next() == Some(first))
                .count()
                == 1;
        let at = whole_word(text, name)
            .or_else(|| first_alone.then(|| whole_word(text, first)).flatten());
        if let Some(at) = at {
            out.insert(Finding {
                kind: "person",
                subject: name.clone(),
                relation: "mentioned",
                object: String::new(),
                snippet: snippet(text, at),
            });
        }
    }
    out.into_iter().collect()
}

/// Where `word` first stands in `text` as whole words (not inside a longer word).
fn whole_word(text: &str, word: &str) -> Option<usize> {
    if word.is_empty() {
        return None;
    }
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).map(|(at, _)| at).find(|&at| {
        let before = text[..at].chars().next_back().is_none_or(|c| !is_word(c));
        let after = text[at + word.len()..]
            .chars()
            .next()
            .is_none_or(|c| !is_word(c));
        before && after
    })
}

/// The words around byte `at`, on char boundaries, on one line.
fn snippet(text: &str, at: usize) -> String {
    let mut start = at.saturating_sub(AROUND);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + AROUND).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    let words = text[start..end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    // A URL in the words around is kept as a URL fact is: without its credentials.
    let mut s = URL
        .replace_all(&words, |c: &regex::Captures<'_>| without_secrets(&c[0]))
        .into_owned();
    if start > 0 {
        s.insert(0, '…');
    }
    if end < text.len() {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(text: &str, person: bool) -> Vec<(&'static str, String, &'static str, String)> {
        findings(text, person)
            .into_iter()
            .map(|f| (f.kind, f.subject, f.relation, f.object))
            .collect()
    }

    fn has(
        found: &[(&'static str, String, &'static str, String)],
        kind: &str,
        subject: &str,
    ) -> bool {
        found.iter().any(|f| f.0 == kind && f.1 == subject)
    }

    #[test]
    fn addresses_urls_emails_and_repositories_are_found() {
        let found = of(
            "Deploy to https://api.acme.example/v2/items?x=1, then mail ops@acme.example. \
             The code is at https://github.com/acme/billing.git and git@gitlab.com:acme/infra.git; \
             the box is 203.0.113.7:2222 and the config is in /etc/vyre/config.json or ~/work/notes.md.",
            false,
        );
        for (kind, subject) in [
            ("url", "https://api.acme.example/v2/items?x=1"),
            ("domain", "api.acme.example"),
            ("email", "ops@acme.example"),
            ("domain", "acme.example"),
            ("repo", "github.com/acme/billing"),
            ("repo", "gitlab.com/acme/infra"),
            ("address", "203.0.113.7:2222"),
            ("path", "/etc/vyre/config.json"),
            ("path", "~/work/notes.md"),
        ] {
            assert!(has(&found, kind, subject), "{kind} {subject}: {found:#?}");
        }
        // The URL's own path is not a file, and git@ is no one to write to.
        assert!(!has(&found, "path", "/v2/items"), "{found:#?}");
        assert!(
            !found
                .iter()
                .any(|f| f.0 == "email" && f.1.starts_with("git@"))
        );
        // Nothing a person defines from an assistant's words.
        assert!(!found.iter().any(|f| f.0 == "term"));
    }

    #[test]
    fn a_url_is_kept_without_its_credentials() {
        let found = of(
            "see https://bob:hunter2@git.example.org/x and https://s3.example.com/f?X-Amz-Signature=abc&y=1 and https://a.example/p?page=2",
            false,
        );
        assert!(
            has(&found, "url", "https://git.example.org/x"),
            "{found:#?}"
        );
        assert!(has(&found, "url", "https://s3.example.com/f"));
        assert!(has(&found, "url", "https://a.example/p?page=2"));
        assert!(!format!("{found:?}").contains("hunter2"));
    }

    #[test]
    fn the_person_defines_terms_and_sentence_starters_are_not_names() {
        let found = of(
            "Juno is our assistant on the box. This is fine. `vyred` is the daemon that runs it.\n\
             The capsule on the Mac, we call it Lumen. It is a test. SLA means the hours we promise.",
            true,
        );
        let terms: Vec<_> = found.iter().filter(|f| f.0 == "term").cloned().collect();
        assert!(
            terms.contains(&(
                "term",
                "Juno".into(),
                "is",
                "our assistant on the box".into()
            )),
            "{terms:#?}"
        );
        assert!(terms.contains(&(
            "term",
            "vyred".into(),
            "is",
            "the daemon that runs it".into()
        )));
        assert!(terms.contains(&(
            "term",
            "Lumen".into(),
            "names",
            "The capsule on the Mac".into()
        )));
        assert!(terms.contains(&("term", "SLA".into(), "means", "the hours we promise".into())));
        assert!(
            !terms.iter().any(|t| t.1 == "This" || t.1 == "It"),
            "{terms:#?}"
        );
        assert_eq!(
            of("Juno is our assistant.", false),
            vec![],
            "only the person defines"
        );
    }

    #[test]
    fn junk_huge_and_foreign_text_finds_nothing_false_and_never_panics() {
        let junk: String = (0..20_000u32)
            .map(|i| char::from_u32(0x20 + (i * 7919) % 0x2f00).unwrap_or('?'))
            .collect();
        let _ = findings(&junk, true);
        let huge = "a".repeat(512 << 10) + " https://example.org/x " + &"é".repeat(20_000);
        let found = of(&huge, true);
        assert!(has(&found, "url", "https://example.org/x"));
        let versions = of("Version 1.2.3 and 10.0 and v2.4.6.8 and 999.1.1.1", false);
        assert!(!versions.iter().any(|f| f.0 == "address"), "{versions:?}");
        let foreign = of(
            "Le serveur est à https://exemple.fr/été et 東京 は 首都 です。",
            true,
        );
        assert!(
            has(&foreign, "url", "https://exemple.fr/été"),
            "{foreign:?}"
        );
        // A snippet cut in a many-byte character stays whole.
        let f = findings(
            &format!(
                "{}https://a.example/ {}",
                "東".repeat(100),
                "京".repeat(100)
            ),
            false,
        );
        assert!(f.iter().all(|f| f.snippet.starts_with('…')));
    }

    #[test]
    fn the_projects_people_are_found_by_their_full_or_unique_first_name() {
        let names = vec![
            "Dana Reyes".to_string(),
            "Sam Ortiz".to_string(),
            "Sam Lee".to_string(),
            "Al".to_string(),
        ];
        let found =
            |t: &str| -> Vec<String> { people(t, &names).into_iter().map(|f| f.subject).collect() };
        assert_eq!(found("ask Dana Reyes about the invoice"), ["Dana Reyes"]);
        assert_eq!(
            found("Dana said friday"),
            ["Dana Reyes"],
            "a unique first name"
        );
        assert!(
            found("Sam said friday").is_empty(),
            "two Sams: not known which"
        );
        assert_eq!(found("cc Sam Lee"), ["Sam Lee"]);
        assert!(
            found("Danaher and Reyesville").is_empty(),
            "inside other words"
        );
        assert!(found("the dana reyes lowercase").is_empty(), "as written");
        assert!(
            found("Al is away").contains(&"Al".to_string()),
            "a name alone, whole"
        );
        assert!(found("Alan is away").is_empty());
        let f = &people("hi Dana Reyes", &names)[0];
        assert_eq!((f.kind, f.relation), ("person", "mentioned"));
        // Junk and other scripts never panic.
        let names = vec!["Zoë Ångström".to_string(), "李 小龙".to_string()];
        assert_eq!(people("…Zoë Ångström…", &names).len(), 1);
        assert_eq!(
            people("李 小龙は", &names).len(),
            0,
            "followed by a word character"
        );
        assert!(people(&"\u{0}é".repeat(10_000), &names).is_empty());
    }
}
