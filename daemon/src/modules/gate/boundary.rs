//! Credentials at the boundary (spec 7.7: the Gate "adds credentials at the boundary"; floor rule
//! 8: no vault value to a model). A session never holds a value: it asks the Gate to send an HTTP
//! request (`gate.request`) and writes `{{vault:NAME}}` where the credential goes (a header, the
//! URL's query, the body), or `{{vault:NAME/username}}`, `/password`, `/totp` (the code for now)
//! and `/basic` (`username:password` in base64, for an `Authorization: Basic` header) of a login,
//! or `{{vault:NAME/VAR}}`, one variable of an env set.
//! The person approves the request as the session wrote it, references and all; the values are
//! filled in as it goes and masked back into references in the answer the session reads.
//!
//! This file is the pure part: the references, the request's shape, where it may go, masking.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine as _;
use zeroize::Zeroizing;

use crate::kernel::contracts::vault::valid_item_name;

/// How a reference starts.
pub const OPEN: &str = "{{vault:";
/// At most this many items in one request.
pub const MAX_REFS: usize = 8;
/// A value shorter than this could not be masked in the answer without garbling it.
pub const MIN_VALUE: usize = 4;

/// Which part of an item a reference names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Field {
    /// The secret of a `secret` item, the password of a `login`, the text of a `note`.
    Value,
    Username,
    Password,
    /// A login's TOTP code for now.
    Totp,
    /// `username:password` of a login in base64.
    Basic,
    /// One variable of an env set, by its name.
    Var(String),
}

impl Field {
    fn parse(s: &str) -> Option<Field> {
        Some(match s {
            "username" => Field::Username,
            "password" => Field::Password,
            "totp" => Field::Totp,
            "basic" => Field::Basic,
            var if crate::kernel::contracts::secret::valid_var_name(var) => {
                Field::Var(var.to_string())
            }
            _ => return None,
        })
    }
    pub(super) fn as_str(&self) -> Option<&str> {
        match self {
            Field::Value => None,
            Field::Username => Some("username"),
            Field::Password => Some("password"),
            Field::Totp => Some("totp"),
            Field::Basic => Some("basic"),
            Field::Var(v) => Some(v),
        }
    }
}

/// One `{{vault:...}}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ref {
    pub item: String,
    pub field: Field,
}

impl Ref {
    /// The reference as written: what the answer shows in place of the value.
    pub fn placeholder(&self) -> String {
        match self.field.as_str() {
            Some(f) => format!("{OPEN}{}/{f}}}}}", self.item),
            None => format!("{OPEN}{}}}}}", self.item),
        }
    }
}

enum Piece<'a> {
    Text(&'a str),
    Ref(Ref),
}

/// `text` cut into plain text and references; an error says what is wrong with one.
fn pieces(text: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(OPEN) {
        out.push(Piece::Text(&rest[..at]));
        let after = &rest[at + OPEN.len()..];
        let end = after
            .find("}}")
            .ok_or_else(|| format!("a {OPEN} reference is not closed with }}}}"))?;
        let inner = &after[..end];
        // Item names never hold a `/`, so the last one starts a field.
        let (item, field) = match inner.rsplit_once('/') {
            Some((item, f)) => (
                item,
                Field::parse(f).ok_or_else(|| {
                    format!(
                        "{OPEN}{inner}}}}}: the part after / is username, password, totp or basic (a login's), or an env set's variable"
                    )
                })?,
            ),
            None => (inner, Field::Value),
        };
        valid_item_name(item).map_err(|e| format!("{OPEN}{inner}}}}}: {e}"))?;
        out.push(Piece::Ref(Ref {
            item: item.to_string(),
            field,
        }));
        rest = &after[end + 2..];
    }
    out.push(Piece::Text(rest));
    Ok(out)
}

/// The references in `text`, added to `refs`.
pub fn refs(text: &str, refs: &mut BTreeSet<Ref>) -> Result<(), String> {
    for p in pieces(text)? {
        if let Piece::Ref(r) = p {
            refs.insert(r);
        }
    }
    Ok(())
}

/// Whether `text` holds anything that looks like a reference (for a command, which never may).
pub fn mentions(text: &str) -> bool {
    text.contains(OPEN)
}

/// `text` with each reference replaced by its value, through `encode` (percent-encoding in a
/// URL, as it is elsewhere).
pub fn fill(
    text: &str,
    values: &BTreeMap<Ref, Zeroizing<String>>,
    encode: fn(&str) -> String,
) -> Result<Zeroizing<String>, String> {
    let mut out = Zeroizing::new(String::with_capacity(text.len()));
    for p in pieces(text)? {
        match p {
            Piece::Text(t) => out.push_str(t),
            Piece::Ref(r) => {
                let v = values
                    .get(&r)
                    .ok_or_else(|| format!("{} has no value", r.placeholder()))?;
                out.push_str(&encode(v));
            }
        }
    }
    Ok(out)
}

pub fn as_is(s: &str) -> String {
    s.to_string()
}

/// RFC 3986 percent-encoding of everything but the unreserved characters.
pub fn percent(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub const METHODS: &[&str] = &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];
/// Headers the Gate sets itself.
const OWN_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "trailer",
    "keep-alive",
    "proxy-connection",
];

/// A request as the session wrote it, checked: where it goes, and what it uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    pub method: String,
    pub https: bool,
    /// The host as written, lower case, without brackets.
    pub host: String,
    pub port: u16,
    /// `https://host[:port]/path` without the query (where it goes, in words).
    pub place: String,
    pub refs: BTreeSet<Ref>,
}

/// Check a request: the method, a URL whose scheme, host and port are written out (never a
/// reference, never `user:pass@`), headers the Gate does not set itself, at most
/// [`MAX_REFS`] items.
pub fn shape(
    method: &str,
    url: &str,
    headers: &BTreeMap<String, String>,
    body: Option<&str>,
) -> Result<Shape, String> {
    let method = method.to_string();
    if !METHODS.contains(&method.as_str()) {
        return Err(format!(
            "method {method:?}: the Gate sends {}",
            METHODS.join(", ")
        ));
    }
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| format!("{url:?} is not an absolute http(s) URL"))?;
    let https = match scheme.to_ascii_lowercase().as_str() {
        "https" => true,
        "http" => false,
        other => return Err(format!("the Gate sends over http and https, not {other}")),
    };
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    if authority.contains(OPEN) || authority.contains('{') {
        return Err(
            "the URL's host is written out: a vault reference goes in a header, the path, the query or the body"
                .into(),
        );
    }
    if authority.contains('@') {
        return Err(
            "a URL with user:pass@ would carry a credential in the clear; put it in a header with {{vault:NAME/basic}}"
                .into(),
        );
    }
    if url.contains('#') {
        return Err("a URL's #fragment is never sent; leave it out".into());
    }
    let mut refs_in = BTreeSet::new();
    refs(url, &mut refs_in)?;
    // The URL as it will be parsed, with each reference standing for a plain value.
    let probe = url.replace(OPEN, "vault-").replace("}}", "");
    let uri: hyper::Uri = probe
        .parse()
        .map_err(|e| format!("{url:?} is not a URL: {e}"))?;
    let host = uri
        .host()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| format!("{url:?} names no host"))?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    if headers.len() > 50 {
        return Err("at most 50 headers".into());
    }
    for (name, value) in headers {
        let lower = name.to_ascii_lowercase();
        if hyper::header::HeaderName::from_bytes(name.as_bytes()).is_err() || name.contains('{') {
            return Err(format!("{name:?} is not a header name"));
        }
        if OWN_HEADERS.contains(&lower.as_str()) {
            return Err(format!("the Gate sets {name} itself"));
        }
        if value.contains(['\r', '\n']) {
            return Err(format!("header {name}'s value holds a line break"));
        }
        refs(value, &mut refs_in)?;
    }
    if let Some(body) = body {
        refs(body, &mut refs_in)?;
    }
    let distinct: BTreeSet<&str> = refs_in.iter().map(|r| r.item.as_str()).collect();
    if distinct.len() > MAX_REFS {
        return Err(format!("a request may use at most {MAX_REFS} vault items"));
    }
    let shown_port = match uri.port_u16() {
        Some(p) => format!(":{p}"),
        None => String::new(),
    };
    let path = url[url.find("://").map(|i| i + 3).unwrap_or(0)..]
        .split_once('/')
        .map(|(_, p)| p.split('?').next().unwrap_or(""))
        .unwrap_or("");
    let host_shown = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.clone()
    };
    Ok(Shape {
        method,
        https,
        place: format!(
            "{}://{host_shown}{shown_port}/{path}",
            if https { "https" } else { "http" }
        ),
        host,
        port,
        refs: refs_in,
    })
}

pub use crate::kernel::outbound::private_ip as private;

/// Whether the person listed `host:port` in `gate.local`.
pub fn listed(local: &[String], host: &str, port: u16) -> bool {
    local.iter().any(|l| {
        let l = l.trim().to_ascii_lowercase();
        let (h, p) = match l.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(':') => (h, p.parse::<u16>().ok()),
            _ => (l.as_str(), None),
        };
        h.trim_start_matches('[').trim_end_matches(']') == host && p.is_none_or(|p| p == port)
    })
}

/// Replaces each value the Gate filled in, in every form an answer may echo it (as it is,
/// percent-encoded, in base64, JSON-escaped), with its reference.
#[derive(Default)]
pub struct Masker {
    forms: Vec<(Zeroizing<String>, String)>,
}

impl Masker {
    pub fn add(&mut self, value: &str, placeholder: &str) {
        let json = serde_json::to_string(value).unwrap_or_default();
        let forms = [
            value.to_string(),
            percent(value),
            base64::engine::general_purpose::STANDARD.encode(value),
            base64::engine::general_purpose::STANDARD_NO_PAD.encode(value),
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value),
            json.get(1..json.len().saturating_sub(1))
                .unwrap_or_default()
                .to_string(),
        ];
        for f in forms {
            if f.len() >= MIN_VALUE && !self.forms.iter().any(|(g, _)| **g == f) {
                self.forms
                    .push((Zeroizing::new(f), placeholder.to_string()));
            }
        }
        // The longest first, so a value inside another's form is not masked half-way.
        self.forms.sort_by_key(|(f, _)| std::cmp::Reverse(f.len()));
    }

    pub fn mask(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (form, placeholder) in &self.forms {
            if out.contains(form.as_str()) {
                out = out.replace(form.as_str(), placeholder);
            }
        }
        out
    }
}

#[cfg(test)]
#[path = "boundary_tests.rs"]
mod tests;
