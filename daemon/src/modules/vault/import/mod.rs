//! `vault.import`: a password manager's export into the vault, with a dry run that says what
//! would be imported and what would be skipped and why. The export's text comes in the call (the
//! CLI reads the file; its path never reaches vyred, so it is stored nowhere) and is wiped from
//! memory after; what comes back names items, never a value.

pub mod formats;
mod onepux;

use std::collections::{HashMap, HashSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::core::NewItem;
use super::{Vault, VaultError, valid_item_name};
use crate::kernel::contracts::secret::Secret;
use formats::{Format, Skipped};

/// What an item of the same name as one already in the vault becomes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnDuplicate {
    /// Left out, and listed as skipped.
    #[default]
    Skip,
    /// Imported as `<name> (2)`, `<name> (3)` ...
    Rename,
    /// Replaces the item's value (its grants stay).
    Replace,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportInput {
    /// The export's whole text (read by the caller; never stored, never logged).
    pub data: Secret,
    /// Which app wrote it; read from the file when left out.
    #[serde(default)]
    pub format: Option<Format>,
    /// Say what would be imported and skipped, and store nothing.
    #[serde(default)]
    pub dry_run: bool,
    #[serde(default)]
    pub on_duplicate: OnDuplicate,
    /// Put before every imported item's name (e.g. `bitwarden/` is refused: no `/`; `bw-`).
    #[serde(default)]
    #[schemars(length(max = 32))]
    pub prefix: Option<String>,
}

/// An item imported (or that would be, in a dry run).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Imported {
    /// Its name in the vault.
    pub name: String,
    pub kind: String,
    /// Where it was in the export (a CSV line, or its place among a JSON export's items).
    pub at: usize,
    /// Its name in the password manager, when the vault's differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// It replaced an item of the same name.
    pub replaced: bool,
    /// What was changed to keep it whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ImportOutput {
    pub format: Format,
    pub dry_run: bool,
    pub imported: Vec<Imported>,
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Vault(#[from] VaultError),
}

/// A vault name for a password manager's title: what the vault refuses in a name (a path
/// separator, a control character, spaces at the ends) made plain, at most 128 characters.
fn name_for(prefix: &str, title: &str, at: usize) -> String {
    let cleaned: String = title
        .chars()
        .map(|c| match c {
            '/' | '\\' => '-',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect();
    let cleaned = cleaned.trim();
    let base = match cleaned {
        "" | "." | ".." => format!("imported-{at}"),
        t => t.to_string(),
    };
    let name: String = format!("{prefix}{base}").chars().take(128).collect();
    name.trim().to_string()
}

/// `name`, or the first of `name (2)`, `name (3)` ... not taken.
/// `name`, or the first `name (n)` not taken. `tried` keeps where each name's search ended, so
/// an export with thousands of items of one title costs one step per item, not a rescan.
fn free_name(name: &str, taken: &HashSet<String>, tried: &mut HashMap<String, u32>) -> String {
    if !taken.contains(name) {
        return name.to_string();
    }
    let from = tried.get(name).copied().unwrap_or(2);
    let (n, candidate) = (from..)
        .map(|n| {
            let suffix = format!(" ({n})");
            let keep = 128 - suffix.chars().count();
            (
                n,
                format!("{}{suffix}", name.chars().take(keep).collect::<String>()),
            )
        })
        .find(|(_, candidate)| !taken.contains(candidate))
        .expect("a free name");
    tried.insert(name.to_string(), n + 1);
    candidate
}

pub async fn import(vault: &Vault, input: ImportInput) -> Result<ImportOutput, ImportError> {
    let prefix = input.prefix.clone().unwrap_or_default();
    if !prefix.is_empty() {
        valid_item_name(&format!("{prefix}x"))
            .map_err(|_| ImportError::Invalid(format!("prefix {prefix:?}: a name cannot hold / or \\ or a control character, or start with a space")))?;
    }
    let read = formats::read(input.data.expose(), input.format)
        .map_err(|e| ImportError::Invalid(e.to_string()))?;
    drop(input.data);
    let existing: HashSet<String> = vault.list().await?.into_iter().map(|i| i.name).collect();
    // Names given in this import, so two items of one name never overwrite each other, and
    // every name taken (the vault's and this import's), grown as names are given.
    let mut given: HashSet<String> = HashSet::new();
    let mut taken = existing.clone();
    let mut tried: HashMap<String, u32> = HashMap::new();
    let mut new: Vec<NewItem> = Vec::new();
    let mut out = ImportOutput {
        format: read.format,
        dry_run: input.dry_run,
        imported: Vec::new(),
        skipped: read.skipped,
    };
    for entry in read.entries {
        let wanted = name_for(&prefix, &entry.title, entry.at);
        let (name, replace) = if given.contains(&wanted) {
            (free_name(&wanted, &taken, &mut tried), false)
        } else if existing.contains(&wanted) {
            match input.on_duplicate {
                OnDuplicate::Skip => {
                    out.skipped.push(Skipped {
                        at: entry.at,
                        title: Some(entry.title),
                        why: format!("an item named {wanted:?} is in the vault (on_duplicate: rename or replace to import it)"),
                    });
                    continue;
                }
                OnDuplicate::Rename => (free_name(&wanted, &taken, &mut tried), false),
                OnDuplicate::Replace => (wanted, true),
            }
        } else {
            (wanted, false)
        };
        taken.insert(name.clone());
        given.insert(name.clone());
        let kind = entry.value.kind().as_str().to_string();
        if !input.dry_run {
            // What is not secret: a login's sites, a card's last four and expiry.
            let meta = match super::tools::meta_of(&entry.value) {
                Some(meta) => Some(meta),
                None => (!entry.urls.is_empty()).then(|| serde_json::json!({ "urls": entry.urls })),
            };
            new.push(NewItem {
                name: name.clone(),
                value: entry.value,
                replace,
                meta,
            });
        }
        out.imported.push(Imported {
            title: (entry.title != name).then_some(entry.title),
            name,
            kind,
            at: entry.at,
            replaced: replace,
            note: entry.note,
        });
    }
    // One write: an import that cannot finish stores nothing.
    if !new.is_empty() {
        vault.put_many(new).await?;
    }
    // In the export's order, as the person would look through it.
    out.skipped.sort_by_key(|s| s.at);
    Ok(out)
}

#[cfg(test)]
mod tests;
