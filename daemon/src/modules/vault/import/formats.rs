//! Password managers' exports read into entries: Bitwarden (JSON, unencrypted, and CSV),
//! 1Password (CSV, and `.1pux` in [`super::onepux`]), Chrome, Safari and Firefox (CSV). What cannot be kept is skipped, each with why;
//! nothing here logs or prints a value.
//!
//! The CSV exports differ only in their columns' names, so one reader takes them all by name
//! (title or name, url or website, username, password, notes, and a TOTP column); which app
//! wrote the file is said from its header for the person to check.

use serde_json::Value;
use zeroize::Zeroizing;

use crate::kernel::contracts::secret::{Secret, VaultValue};

/// The largest export read, and the most any one item may hold.
pub const MAX_FILE: usize = 16 << 20;
pub const MAX_ITEM: usize = 1 << 20;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    BitwardenJson,
    BitwardenCsv,
    OnepasswordCsv,
    /// 1Password's `.1pux` (a zip; sent as base64).
    #[serde(rename = "onepassword-1pux")]
    Onepassword1pux,
    ChromeCsv,
    SafariCsv,
    FirefoxCsv,
    /// Another CSV with title, url, username and password columns.
    Csv,
}

/// One item read from an export.
pub struct Entry {
    /// Where it is in the file: its CSV line, or its place in the JSON's `items` (from 1).
    pub at: usize,
    /// Its name in the password manager.
    pub title: String,
    pub value: VaultValue,
    /// The sites of a login: not secret, kept beside the item (`vault.list` shows them).
    pub urls: Vec<String>,
    /// What was changed to keep it (a TOTP kept in the notes ...).
    pub note: Option<String>,
}

/// One item not imported, and why.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Skipped {
    pub at: usize,
    pub title: Option<String>,
    pub why: String,
}

pub struct Read {
    pub format: Format,
    pub entries: Vec<Entry>,
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FormatError {
    #[error("{0}")]
    Unreadable(String),
}

fn unreadable<T>(why: impl Into<String>) -> Result<T, FormatError> {
    Err(FormatError::Unreadable(why.into()))
}

/// Read `data` as `format`, or as what it looks like when `format` is `None`.
pub fn read(data: &str, format: Option<Format>) -> Result<Read, FormatError> {
    if data.len() > MAX_FILE {
        return unreadable(format!(
            "the export is {} MiB; at most {} MiB is read",
            data.len() >> 20,
            MAX_FILE >> 20
        ));
    }
    let data = data.strip_prefix('\u{feff}').unwrap_or(data);
    let looks_json = data.trim_start().starts_with('{');
    // A zip's first bytes, "PK\x03\x04", in base64.
    let looks_zip = data.trim_start().starts_with("UEsDB");
    match format {
        Some(Format::Onepassword1pux) => super::onepux::read(data),
        None if looks_zip => super::onepux::read(data),
        Some(Format::BitwardenJson) => bitwarden_json(data),
        None if looks_json => bitwarden_json(data),
        Some(f) => csv(data, Some(f)),
        None => csv(data, None),
    }
}

fn bitwarden_json(data: &str) -> Result<Read, FormatError> {
    let doc: Zeroizing<String> = Zeroizing::new(data.to_string());
    let Ok(doc) = serde_json::from_str::<Value>(&doc) else {
        return unreadable("the export is not JSON (a Bitwarden JSON export is one object)");
    };
    if doc["encrypted"] == true {
        return unreadable(
            "this Bitwarden export is encrypted: export again as JSON (not \"JSON (Encrypted)\")",
        );
    }
    let Some(items) = doc["items"].as_array() else {
        return unreadable("not a Bitwarden JSON export: it has no \"items\" list");
    };
    let mut read = Read {
        format: Format::BitwardenJson,
        entries: Vec::new(),
        skipped: Vec::new(),
    };
    for (i, item) in items.iter().enumerate() {
        let at = i + 1;
        let title = item["name"].as_str().unwrap_or_default().to_string();
        let skip = |why: &str| Skipped {
            at,
            title: Some(title.clone()).filter(|t| !t.is_empty()),
            why: why.to_string(),
        };
        let mut notes = text(&item["notes"]);
        // Custom fields (hidden ones too) are kept in the notes, which are sealed.
        for field in item["fields"].as_array().into_iter().flatten() {
            let (name, value) = (text(&field["name"]), text(&field["value"]));
            if !name.is_empty() || !value.is_empty() {
                append(&mut notes, &format!("{name}: {value}"));
            }
        }
        let made = match item["type"].as_i64() {
            Some(1) => {
                let login = &item["login"];
                let urls = login["uris"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|u| u["uri"].as_str())
                    .map(String::from)
                    .collect();
                login_entry(
                    at,
                    &title,
                    text(&login["username"]),
                    text(&login["password"]),
                    text(&login["totp"]),
                    notes,
                    urls,
                )
            }
            Some(2) => note_entry(at, &title, notes),
            Some(3) => {
                let card = &item["card"];
                card_entry(
                    at,
                    &title,
                    [
                        text(&card["number"]),
                        text(&card["cardholderName"]),
                        expiry(&text(&card["expMonth"]), &text(&card["expYear"])),
                        text(&card["code"]),
                    ],
                    notes,
                )
            }
            Some(4) => Err("an identity: identities are not kept by the vault".to_string()),
            Some(5) => Err("an SSH key: SSH keys are not kept by the vault yet".to_string()),
            _ => Err("an item of a type this import does not know".to_string()),
        };
        match made {
            Ok(entry) => read.entries.push(entry),
            Err(why) => read.skipped.push(skip(&why)),
        }
    }
    Ok(read)
}

/// A JSON field as text (`null` and absent are empty).
pub(super) fn text(v: &Value) -> String {
    v.as_str().map(String::from).unwrap_or_default()
}

pub(super) fn append(notes: &mut String, line: &str) {
    if !notes.is_empty() {
        notes.push('\n');
    }
    notes.push_str(line);
}

pub(super) fn too_big(parts: &[&str]) -> bool {
    parts.iter().map(|p| p.len()).sum::<usize>() > MAX_ITEM
}

pub(super) fn login_entry(
    at: usize,
    title: &str,
    username: String,
    password: String,
    totp: String,
    mut notes: String,
    urls: Vec<String>,
) -> Result<Entry, String> {
    let (username, password) = (Zeroizing::new(username), Zeroizing::new(password));
    if password.is_empty() {
        return Err("a login without a password".into());
    }
    if too_big(&[&username, &password, &totp, &notes]) {
        return Err(format!("larger than {} MiB", MAX_ITEM >> 20));
    }
    let (seed, note) = match totp_seed(&totp) {
        Ok(seed) => (seed, None),
        Err(why) => {
            // Nothing is lost: the TOTP is kept in the sealed notes, and the person told.
            append(&mut notes, &format!("TOTP: {totp}"));
            (None, Some(format!("its TOTP was kept in its notes: {why}")))
        }
    };
    Ok(Entry {
        at,
        title: title.to_string(),
        value: VaultValue::Login {
            username: Secret::new(username.to_string()),
            password: Secret::new(password.to_string()),
            totp: seed,
            notes: (!notes.is_empty()).then(|| Secret::new(notes)),
        },
        urls: urls
            .into_iter()
            .map(|u| u.trim().to_string())
            .filter(|u| !u.is_empty())
            .collect(),
        note,
    })
}

pub(super) fn note_entry(at: usize, title: &str, notes: String) -> Result<Entry, String> {
    if notes.is_empty() {
        return Err("an empty note".into());
    }
    if notes.len() > MAX_ITEM {
        return Err(format!("larger than {} MiB", MAX_ITEM >> 20));
    }
    Ok(Entry {
        at,
        title: title.to_string(),
        value: VaultValue::Note(Secret::new(notes)),
        urls: Vec::new(),
        note: None,
    })
}

/// `MM/YY` from a month and a year (`8`, `2029` or `29`); empty when either is not one.
pub(super) fn expiry(month: &str, year: &str) -> String {
    match (month.trim().parse::<u8>(), year.trim()) {
        (Ok(m @ 1..=12), y)
            if (y.len() == 4 || y.len() == 2) && y.chars().all(|c| c.is_ascii_digit()) =>
        {
            format!("{m:02}/{}", &y[y.len() - 2..])
        }
        _ => String::new(),
    }
}

/// A card from its number (as digits), holder, expiry (`MM/YY`) and code.
pub(super) fn card_entry(
    at: usize,
    title: &str,
    [number, holder, expiry, code]: [String; 4],
    notes: String,
) -> Result<Entry, String> {
    let number: String = number.chars().filter(char::is_ascii_digit).collect();
    if !(12..=19).contains(&number.len()) {
        return Err("a card without a number of 12 to 19 digits".into());
    }
    if too_big(&[&holder, &code, &notes]) {
        return Err(format!("larger than {} MiB", MAX_ITEM >> 20));
    }
    Ok(Entry {
        at,
        title: title.to_string(),
        value: VaultValue::Card {
            number: Secret::new(number),
            holder: Secret::new(holder),
            expiry: Secret::new(expiry),
            code: Secret::new(code),
            notes: (!notes.is_empty()).then(|| Secret::new(notes)),
        },
        urls: Vec::new(),
        note: None,
    })
}

/// A TOTP column's base32 seed: the seed itself, or the `secret` of an `otpauth://totp/` URI
/// whose codes Vyre makes (SHA-1, 6 digits, 30 s). `Ok(None)` when there is none.
pub fn totp_seed(totp: &str) -> Result<Option<Secret>, String> {
    let totp = totp.trim();
    if totp.is_empty() {
        return Ok(None);
    }
    let seed = if let Some(rest) = totp.strip_prefix("otpauth://") {
        let Some(query) = rest.strip_prefix("totp/").and_then(|r| r.split_once('?')) else {
            return Err("only otpauth://totp/ URIs make codes here".into());
        };
        let mut seed = None;
        for pair in query.1.split('&') {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let v = percent_decode(v);
            match (
                k.to_ascii_lowercase().as_str(),
                v.to_ascii_uppercase().as_str(),
            ) {
                ("secret", _) => seed = Some(v),
                ("algorithm", "SHA1") | ("digits", "6") | ("period", "30") => {}
                ("algorithm" | "digits" | "period", _) => {
                    return Err(format!(
                        "Vyre makes SHA-1, 6-digit, 30 s codes, not {k}={v}"
                    ));
                }
                _ => {}
            }
        }
        seed.ok_or("the otpauth URI has no secret")?
    } else {
        totp.to_string()
    };
    let seed = Secret::new(seed);
    crate::kernel::contracts::secret::totp_code(&seed, 0)?;
    Ok(Some(seed))
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Which column holds what, by the header's names.
struct Columns {
    title: Option<usize>,
    url: Option<usize>,
    username: Option<usize>,
    password: Option<usize>,
    totp: Option<usize>,
    notes: Option<usize>,
    kind: Option<usize>,
}

fn columns(header: &[String]) -> Columns {
    let find = |names: &[&str]| {
        header
            .iter()
            .position(|h| names.contains(&h.trim().to_ascii_lowercase().as_str()))
    };
    Columns {
        title: find(&["title", "name"]),
        url: find(&["url", "website", "login_uri", "urls"]),
        username: find(&["username", "login_username", "user name"]),
        password: find(&["password", "login_password"]),
        totp: find(&["otpauth", "login_totp", "totp", "one-time password"]),
        notes: find(&["notes", "note"]),
        kind: find(&["type"]),
    }
}

fn which_csv(header: &[String]) -> Format {
    let names: Vec<String> = header
        .iter()
        .map(|h| h.trim().to_ascii_lowercase())
        .collect();
    let has = |n: &str| names.iter().any(|h| h == n);
    if has("login_password") {
        Format::BitwardenCsv
    } else if has("guid") && has("httprealm") {
        Format::FirefoxCsv
    } else if has("otpauth") && has("archived") {
        Format::OnepasswordCsv
    } else if has("otpauth") {
        Format::SafariCsv
    } else if has("name") && has("url") && has("password") {
        Format::ChromeCsv
    } else {
        Format::Csv
    }
}

fn csv(data: &str, asked: Option<Format>) -> Result<Read, FormatError> {
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(data.as_bytes());
    let header: Vec<String> = match reader.headers() {
        Ok(h) => h.iter().map(String::from).collect(),
        Err(_) => return unreadable("the export is neither JSON nor CSV with a header line"),
    };
    let cols = columns(&header);
    let Some(password) = cols.password else {
        return unreadable(
            "no password column: a CSV export needs a header with at least a password column (and title or name, url, username)",
        );
    };
    let format = asked.unwrap_or_else(|| which_csv(&header));
    let mut read = Read {
        format,
        entries: Vec::new(),
        skipped: Vec::new(),
    };
    let mut record = ::csv::StringRecord::new();
    loop {
        let at = reader.position().line() as usize;
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(_) => {
                read.skipped.push(Skipped {
                    at,
                    title: None,
                    why: "a line that is not CSV".into(),
                });
                // The reader cannot go on past a broken quote: say so rather than guess.
                break;
            }
        }
        let field = |c: Option<usize>| {
            Zeroizing::new(c.and_then(|c| record.get(c)).unwrap_or("").to_string())
        };
        let url = field(cols.url);
        let title = match field(cols.title).trim() {
            "" => host_of(&url).unwrap_or_default(),
            t => t.to_string(),
        };
        let kind = field(cols.kind).trim().to_ascii_lowercase();
        let made = match kind.as_str() {
            "note" | "securenote" | "secure note" => {
                note_entry(at, &title, field(cols.notes).to_string())
            }
            "" | "login" => login_entry(
                at,
                &title,
                field(cols.username).to_string(),
                field(Some(password)).to_string(),
                field(cols.totp).to_string(),
                field(cols.notes).to_string(),
                url.split(',').map(String::from).collect(),
            ),
            other => Err(format!(
                "an item of type {other:?}, which this import does not keep"
            )),
        };
        match made {
            Ok(entry) => read.entries.push(entry),
            Err(why) => read.skipped.push(Skipped {
                at,
                title: Some(title).filter(|t| !t.is_empty()),
                why,
            }),
        }
    }
    Ok(read)
}

/// A URL's host, to name a login that has no title (Firefox's exports have none).
fn host_of(url: &str) -> Option<String> {
    let rest = url.trim().split_once("://")?.1;
    let host = rest.split(['/', '?', '#']).next()?;
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    (!host.is_empty()).then(|| host.to_string())
}
