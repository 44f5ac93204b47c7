//! 1Password's `.1pux` export: a zip whose `export.data` is JSON (accounts, their vaults, their
//! items). It comes base64 in the call's `data` (the file is binary); only `export.data` is
//! read, in memory, never written anywhere, and attached documents are left in the archive.
//!
//! Kept: logins (username and password by their designation, a TOTP from any field's
//! `otpauth://` URI, notes, other fields in the notes, sites), passwords and API credentials
//! (as logins, with their notes), secure notes, credit cards. Archived and deleted items, and other
//! categories, are skipped with why.

use std::io::Cursor;

use base64::Engine;
use serde_json::Value;
use zeroize::Zeroizing;

use super::formats::{
    Entry, Format, FormatError, MAX_FILE, Read, Skipped, append, card_entry, expiry, login_entry,
    note_entry, text,
};
use crate::kernel::unzip;

fn unreadable<T>(why: impl Into<String>) -> Result<T, FormatError> {
    Err(FormatError::Unreadable(why.into()))
}

/// Read a `.1pux`, sent as base64.
pub fn read(data: &str) -> Result<Read, FormatError> {
    let compact: Zeroizing<String> = Zeroizing::new(data.split_whitespace().collect());
    let Ok(zip) = base64::engine::general_purpose::STANDARD.decode(compact.as_bytes()) else {
        return unreadable(
            "a .1pux export is sent as base64 (`vyre vault import` does it); this is not base64",
        );
    };
    let zip = Zeroizing::new(zip);
    let mut file = Cursor::new(zip.as_slice());
    let mut doc = Zeroizing::new(Vec::new());
    let found = unzip::entries(&mut file)
        .and_then(|all| unzip::extract(&mut file, &all, "export.data", MAX_FILE as u64, &mut *doc));
    if let Err(e) = found {
        return unreadable(format!("not a 1Password .1pux export: {e}"));
    }
    let Ok(doc) = serde_json::from_slice::<Value>(&doc) else {
        return unreadable("the .1pux's export.data is not JSON");
    };
    let Some(accounts) = doc["accounts"].as_array() else {
        return unreadable("not a 1Password .1pux export: its data has no \"accounts\"");
    };
    let mut read = Read {
        format: Format::Onepassword1pux,
        entries: Vec::new(),
        skipped: Vec::new(),
    };
    let items = accounts
        .iter()
        .flat_map(|a| a["vaults"].as_array().into_iter().flatten())
        .flat_map(|v| v["items"].as_array().into_iter().flatten());
    for (i, item) in items.enumerate() {
        let at = i + 1;
        let title = text(&item["overview"]["title"]);
        match entry(at, &title, item) {
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

/// A field's value as text, when it is one a person reads as text.
fn field_text(value: &Value) -> Option<String> {
    let (kind, v) = value.as_object()?.iter().next()?;
    match kind.as_str() {
        "string" | "concealed" | "email" | "phone" | "url" | "totp" | "creditCardNumber"
        | "creditCardType" | "menu" => v.as_str().map(String::from),
        "monthYear" | "date" => v.as_i64().map(|n| n.to_string()),
        _ => None,
    }
    .filter(|t| !t.is_empty())
}

/// Every section field of an item: (its id, its title, its value as JSON).
fn fields(item: &Value) -> impl Iterator<Item = (&str, &str, &Value)> {
    item["details"]["sections"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["fields"].as_array().into_iter().flatten())
        .map(|f| {
            (
                f["id"].as_str().unwrap_or_default(),
                f["title"].as_str().unwrap_or_default(),
                &f["value"],
            )
        })
}

/// The text of the section field with this id ("" when there is none).
fn field_by_id(item: &Value, id: &str) -> String {
    fields(item)
        .find(|(fid, _, _)| *fid == id)
        .and_then(|(_, _, v)| field_text(v))
        .unwrap_or_default()
}

fn entry(at: usize, title: &str, item: &Value) -> Result<Entry, String> {
    match item["state"].as_str() {
        Some("archived") => return Err("archived in 1Password".into()),
        Some("deleted") => return Err("deleted in 1Password".into()),
        _ => {}
    }
    let details = &item["details"];
    let mut notes = text(&details["notesPlain"]);
    match item["categoryUuid"].as_str().unwrap_or_default() {
        "001" => {
            let designated = |d: &str| {
                details["loginFields"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|f| f["designation"] == d)
                    .map(|f| text(&f["value"]))
                    .unwrap_or_default()
            };
            let mut totp = String::new();
            for (_, name, value) in fields(item) {
                match (value["totp"].as_str(), field_text(value)) {
                    (Some(uri), _) if totp.is_empty() => totp = uri.to_string(),
                    (_, Some(t)) => append(&mut notes, &format!("{name}: {t}")),
                    _ => {}
                }
            }
            let overview = &item["overview"];
            let mut urls: Vec<String> = overview["urls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|u| text(&u["url"]))
                .filter(|u| !u.is_empty())
                .collect();
            if urls.is_empty() && !text(&overview["url"]).is_empty() {
                urls.push(text(&overview["url"]));
            }
            login_entry(
                at,
                title,
                designated("username"),
                designated("password"),
                totp,
                notes,
                urls,
            )
        }
        "002" => {
            let by_id = |id: &str| field_by_id(item, id);
            // monthYear is YYYYMM.
            let when = by_id("expiry");
            let expires = match when.len() {
                6 => expiry(&when[4..], &when[..4]),
                _ => String::new(),
            };
            card_entry(
                at,
                title,
                [by_id("ccnum"), by_id("cardholder"), expires, by_id("cvv")],
                notes,
            )
        }
        "003" => note_entry(at, title, notes),
        // A password alone, an API credential: kept as logins, so their notes and a
        // credential's username stay with them.
        "005" => login_entry(
            at,
            title,
            String::new(),
            text(&details["password"]),
            String::new(),
            notes,
            Vec::new(),
        ),
        "112" => {
            let by_id = |id: &str| field_by_id(item, id);
            login_entry(
                at,
                title,
                by_id("username"),
                by_id("credential"),
                String::new(),
                notes,
                Vec::new(),
            )
        }
        "004" => Err("an identity: identities are not kept by the vault".into()),
        "006" => Err("a document: files are not kept by the vault".into()),
        "114" => Err("an SSH key: SSH keys are not kept by the vault yet".into()),
        _ => Err(format!(
            "a {} item: this kind is not kept by the vault yet",
            category_name(item["categoryUuid"].as_str().unwrap_or_default())
        )),
    }
}

/// 1Password's name for a category, for a skipped item's why.
fn category_name(uuid: &str) -> &'static str {
    match uuid {
        "100" => "software license",
        "101" => "bank account",
        "102" => "database",
        "103" => "driver license",
        "104" => "outdoor license",
        "105" => "membership",
        "106" => "passport",
        "107" => "rewards program",
        "108" => "social security number",
        "109" => "wireless router",
        "110" => "server",
        "111" => "email account",
        "113" => "medical record",
        "115" => "crypto wallet",
        _ => "1Password",
    }
}

#[cfg(test)]
#[path = "onepux_tests.rs"]
mod tests;
