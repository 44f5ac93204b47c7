//! Masking: where [`super::scan_str`] says yes or no for a whole string, [`mask`] finds each
//! credential's span and masks that span only, keeping the public prefix that names its kind
//! (`sk-ant-`, `ghp_`, `Bearer `, `AKIA`, a PEM header's label) and nothing of its secret part:
//! `echo hi # sk-ant-api03-…` becomes `echo hi # sk-ant-…[redacted]`.
//!
//! So a person approving a command sees the command, and the event log still holds no secret.
//! The result is checked again: should anything in it still look like a credential (a span the
//! detector and the masker disagree on), the whole string is replaced, as before masking.
//!
//! It finds what the detector finds, with the same limits (see the parent module's doc); a
//! credential's span runs to the end of its characters, not just the detector's minimum. One
//! pass, linear in the input: after a span, the scan resumes past its end.

use std::borrow::Cow;

use super::{
    ANTHROPIC, AWS, BEARER, ENTROPY_MIN_LEN, GITHUB, JWT, OPENAI, PEM, SLACK, count, has_at,
    is_bearer_byte, is_key_byte, is_run_byte, is_slack_byte, is_word_byte, looks_random, match_aws,
    match_bearer, match_github, match_jwt, match_pem, match_sk, match_slack, scan_str,
};

/// What replaces a secret part.
pub const MASK: &str = "…[redacted]";

/// What replaces a whole string the masker could not make clean.
pub const WHOLE: &str = "[redacted: this looked like a credential]";

/// One credential inside a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Byte offsets of the credential: `[start, end)`.
    pub start: usize,
    pub end: usize,
    /// The bytes from `start` that are its public prefix, kept when masked.
    pub keep: usize,
    pub kind: &'static str,
}

/// Every credential in `s`, left to right, not overlapping.
pub fn spans(s: &str) -> Vec<Span> {
    let b = s.as_bytes();
    let mut out = known(b);
    // High-entropy runs that no known format covers.
    let mut i = 0;
    let mut next_known = 0;
    let mut random = vec![];
    while i < b.len() {
        if !is_run_byte(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && is_run_byte(b[i]) {
            i += 1;
        }
        while next_known < out.len() && out[next_known].end <= start {
            next_known += 1;
        }
        let overlaps = out.get(next_known).is_some_and(|k| k.start < i);
        if !overlaps && i - start >= ENTROPY_MIN_LEN && looks_random(&b[start..i]) {
            // `NAME=value` is one run: the name stays readable when the value alone is random.
            let start = match b[start..i].iter().position(|&c| c == b'=') {
                Some(eq)
                    if i - (start + eq + 1) >= ENTROPY_MIN_LEN
                        && looks_random(&b[start + eq + 1..i]) =>
                {
                    start + eq + 1
                }
                _ => start,
            };
            random.push(Span {
                start,
                end: i,
                keep: 0,
                kind: super::HIGH_ENTROPY,
            });
        }
    }
    out.extend(random);
    out.sort_by_key(|s| s.start);
    out
}

/// `s` with every credential's secret part masked ([`MASK`]); unchanged when it holds none.
pub fn mask(s: &str) -> Cow<'_, str> {
    let found = spans(s);
    if found.is_empty() {
        return if scan_str(s).is_some() {
            Cow::Borrowed(WHOLE)
        } else {
            Cow::Borrowed(s)
        };
    }
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    for span in &found {
        out.push_str(&s[at..span.start + span.keep]);
        if span.keep == 0 {
            out.push_str(&MASK["…".len()..]);
        } else {
            out.push_str(MASK);
        }
        at = span.end;
    }
    out.push_str(&s[at..]);
    if scan_str(&out).is_some() {
        return Cow::Borrowed(WHOLE);
    }
    Cow::Owned(out)
}

/// The known formats' spans, left to right: tried where each format's first byte appears, and
/// resumed past the end of each one found.
fn known(b: &[u8]) -> Vec<Span> {
    let mut out = vec![];
    let mut i = 0;
    while i < b.len() {
        let found = match b[i] {
            b's' => sk(b, i),
            b'g' => github(b, i),
            b'e' => jwt(b, i),
            b'-' => pem(b, i),
            b'A' => match_aws(b, i).map(|_| (AWS, 4, i + 20)),
            b'x' => match_slack(b, i)
                .map(|_| (SLACK, 5, i + 5 + count(b, i + 5, usize::MAX, is_slack_byte))),
            b'b' | b'B' => match_bearer(b, i).map(|_| {
                (
                    BEARER,
                    7,
                    i + 7 + count(b, i + 7, usize::MAX, is_bearer_byte),
                )
            }),
            _ => None,
        };
        match found {
            Some((kind, keep, end)) => {
                // Whole characters only: a span ends where a character does.
                let end = end.min(b.len());
                out.push(Span {
                    start: i,
                    end,
                    keep,
                    kind,
                });
                i = end;
            }
            None => i += 1,
        }
    }
    out
}

fn sk(b: &[u8], i: usize) -> Option<(&'static str, usize, usize)> {
    let kind = match_sk(b, i)?;
    let keep = if kind == ANTHROPIC { 7 } else { 3 };
    debug_assert!(kind == ANTHROPIC || kind == OPENAI);
    Some((
        kind,
        keep,
        i + keep + count(b, i + keep, usize::MAX, is_key_byte),
    ))
}

fn github(b: &[u8], i: usize) -> Option<(&'static str, usize, usize)> {
    match_github(b, i)?;
    if has_at(b, i, b"github_pat_") {
        return Some((
            GITHUB,
            11,
            i + 11 + count(b, i + 11, usize::MAX, is_word_byte),
        ));
    }
    Some((
        GITHUB,
        4,
        i + 4 + count(b, i + 4, usize::MAX, |c| c.is_ascii_alphanumeric()),
    ))
}

fn jwt(b: &[u8], i: usize) -> Option<(&'static str, usize, usize)> {
    match_jwt(b, i)?;
    let header = count(b, i, usize::MAX, is_key_byte);
    let payload = count(b, i + header + 1, usize::MAX, is_key_byte);
    let sig = i + header + 1 + payload + 1;
    Some((JWT, 3, sig + count(b, sig, usize::MAX, is_key_byte)))
}

/// From the header to the end of its `-----END ...-----` line, or of the string when there is
/// none; the header's label is kept, without the dashes that close it.
fn pem(b: &[u8], i: usize) -> Option<(&'static str, usize, usize)> {
    match_pem(b, i)?;
    let label_start = i + "-----BEGIN ".len();
    let label = count(b, label_start, 64, |c| {
        c.is_ascii_uppercase() || c.is_ascii_digit() || c == b' '
    });
    let keep = label_start + label - i;
    let body = label_start + label + "-----".len();
    let end = match memchr::memmem::find(&b[body..], b"-----END ") {
        Some(at) => {
            let close = body + at + "-----END ".len();
            match memchr::memmem::find(&b[close..], b"-----") {
                Some(dashes) => close + dashes + "-----".len(),
                None => b.len(),
            }
        }
        None => b.len(),
    };
    Some((PEM, keep, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fake values built at run time: no credential sits literally in the source. `key` has
    /// the characters of an Anthropic or OpenAI key's tail, `alnum` letters and digits only.
    fn key(prefix: &str, n: usize) -> String {
        fake(prefix, n, "Ab3dE5gH7jK9mN1pQ2rS4tU6vW8xY0z_-")
    }

    fn alnum(prefix: &str, n: usize) -> String {
        fake(prefix, n, "Ab3dE5gH7jK9mN1pQ2rS4tU6vW8xY0z")
    }

    fn fake(prefix: &str, n: usize, alphabet: &str) -> String {
        let tail: String = alphabet.chars().cycle().take(n).collect();
        format!("{prefix}{tail}")
    }

    #[test]
    fn a_command_stays_readable_with_only_its_key_masked() {
        let k = key("sk-ant-api03-", 60);
        let cmd = format!("echo hi # {k}");
        assert_eq!(mask(&cmd), "echo hi # sk-ant-…[redacted]");
        let cmd = format!(
            "curl -H 'Authorization: Bearer {}' https://x.example/v1",
            key("", 40)
        );
        assert_eq!(
            mask(&cmd),
            "curl -H 'Authorization: Bearer …[redacted]' https://x.example/v1"
        );
        let two = format!("A={} B={} && run", alnum("ghp_", 36), alnum("xoxb-", 30));
        assert_eq!(mask(&two), "A=ghp_…[redacted] B=xoxb-…[redacted] && run");
        let aws = format!("aws_access_key_id = AKIA{}\n", "AB12CD34EF56GH78");
        assert_eq!(mask(&aws), "aws_access_key_id = AKIA…[redacted]\n");
    }

    #[test]
    fn random_runs_and_private_keys_are_masked_whole() {
        let random = "Zq8Lw3Rt9Yx2Kp7Mv4Nb6Hc1Jd5Fg0Sa8Qe3Wr";
        assert!(scan_str(random).is_some());
        assert_eq!(mask(&format!("token={random};")), "token=[redacted];");
        let dashes = "-----";
        let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7";
        let pem = format!(
            "cat > k <<EOF\n{dashes}BEGIN RSA PRIVATE KEY{dashes}\n{body}\n{dashes}END RSA PRIVATE KEY{dashes}\nEOF"
        );
        assert_eq!(
            mask(&pem),
            "cat > k <<EOF\n-----BEGIN RSA PRIVATE KEY…[redacted]\nEOF"
        );
    }

    #[test]
    fn clean_text_is_borrowed_and_masked_text_passes_the_detector() {
        let plain = "ls -la /home/someone && git status";
        assert!(matches!(mask(plain), Cow::Borrowed(s) if s == plain));
        for k in [
            key("sk-ant-api03-", 80),
            key("sk-proj-", 48),
            alnum("github_pat_", 70),
            format!("eyJ{0}.eyJ{0}.{0}", "abcdefghijk"),
        ] {
            let masked = mask(&format!("x {k} y")).into_owned();
            assert_eq!(scan_str(&masked), None, "{masked}");
            assert!(
                masked.starts_with("x ") && masked.ends_with(" y"),
                "{masked}"
            );
        }
    }

    #[test]
    fn masking_is_linear_on_hostile_input() {
        let nasty = "sk-".repeat(50_000) + &"eyJ".repeat(20_000) + &"Bearer ".repeat(10_000);
        let masked = mask(&nasty);
        assert_eq!(scan_str(&masked), None);
    }
}
