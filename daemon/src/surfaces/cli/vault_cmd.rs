//! `vyre vault ...`: values are read from standard input or a hidden prompt, never from an
//! argument (arguments show in `ps`), and are never printed, except one field by `vyre vault
//! reveal` after the person proved presence with the vault passphrase.

use std::io::{IsTerminal, Read, Write};

use clap::Subcommand;
use serde_json::{Value, json};
use zeroize::{Zeroize, Zeroizing};

use super::fail;
use crate::surfaces::client::Client;

#[derive(Debug, Subcommand)]
pub enum VaultCommand {
    /// Store a credential; the value comes from standard input or a hidden prompt.
    /// A login reads three lines: username, password, and an optional TOTP seed; a card four:
    /// number, the name on it, expiry (MM/YY) and security code; an env set `NAME=value`
    /// lines (a .env file), up to an empty line or the end.
    Put {
        name: String,
        #[arg(long, default_value = "secret", value_parser = ["secret", "login", "note", "card", "env"])]
        kind: String,
        /// Replace the value of an existing item (its grants stay).
        #[arg(long)]
        replace: bool,
        /// A login's TOTP from the QR code its site showed: the image file (PNG, JPEG, GIF or
        /// WebP), read here and sent to vyred, which reads the code; its path is not sent.
        #[arg(long)]
        totp_qr: Option<std::path::PathBuf>,
    },
    /// Names, kinds, grants and last use; never a value.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Delete an item and its grants.
    Delete { name: String },
    /// Let a module (`sessions`), an agent (`agent:<name>`) or a watcher (`watcher:<name>`) use
    /// an item.
    Grant { item: String, to: String },
    /// Take a grant back.
    Revoke { item: String, to: String },
    /// Make a new master key and reseal every item with it, all or nothing.
    Rotate,
    /// Unlock a vault whose key file is wrapped by a passphrase.
    Unlock,
    /// Forget the unlocked keys until the passphrase is given again.
    Lock,
    /// Wrap the key file with a passphrase (asked twice), or remove it with --remove.
    Passphrase {
        #[arg(long)]
        remove: bool,
    },
    /// Where the key lives, whether the vault is unlocked, and this machine's Claude credential.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Import a password manager's export: Bitwarden (JSON or CSV), 1Password (.1pux or CSV),
    /// Chrome, Safari or Firefox (CSV). Says what was imported and what was skipped and why; never a value.
    Import {
        /// The export file (read here; its path is not sent to vyred).
        file: std::path::PathBuf,
        #[arg(long, value_parser = ["bitwarden-json", "bitwarden-csv", "onepassword-1pux", "onepassword-csv", "chrome-csv", "safari-csv", "firefox-csv", "csv"])]
        format: Option<String>,
        /// Say what would be imported and skipped; store nothing.
        #[arg(long)]
        dry_run: bool,
        /// An item whose name is already in the vault: skip (default), rename, or replace.
        #[arg(long, default_value = "skip", value_parser = ["skip", "rename", "replace"])]
        on_duplicate: String,
        /// Put before every imported name.
        #[arg(long)]
        prefix: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Show one field of an item after proving presence with the vault passphrase (asked
    /// hidden, or piped on standard input); the value alone on standard output. Audited.
    Reveal {
        name: String,
        /// password (a login's default), username, totp (the code for now), notes; number (a
        /// card's default), holder, expiry, code; or value (a secret's, a note's, an env set's
        /// default: its NAME=value lines).
        #[arg(long, value_parser = ["value", "username", "password", "totp", "notes", "number", "holder", "expiry", "code"])]
        field: Option<String>,
    },
    /// Share one item with another person's Vyre (relayed or sealed), or take one you were
    /// given.
    #[command(subcommand)]
    Pass(super::vault_pass_cmd::PassCommand),
    /// Revoke every pass a person holds, and list what to rotate and where it was used.
    Offboard {
        person: String,
        /// Say what would be revoked; change nothing.
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
    },
    /// Make a random password (or, with --words, a passphrase from the EFF's word list) and
    /// print it, or store it with --put without showing it.
    Generate {
        /// The password's length (8 to 128; default 20).
        #[arg(long, conflicts_with = "words")]
        length: Option<usize>,
        /// The sets it draws from, each used at least once (default: all four).
        #[arg(long, value_delimiter = ',', value_parser = ["lower", "upper", "digits", "symbols"], conflicts_with = "words")]
        sets: Vec<String>,
        /// Leave out characters read one for another (l 1 I, O 0 o ...).
        #[arg(long, conflicts_with = "words")]
        no_ambiguous: bool,
        /// A passphrase of this many words (4 to 20) instead of a password.
        #[arg(long)]
        words: Option<usize>,
        /// What goes between the words (default -).
        #[arg(long, requires = "words")]
        separator: Option<String>,
        /// Capitalize each word.
        #[arg(long, requires = "words")]
        capitalize: bool,
        /// Store it as a secret item of this name (or as a new value with --replace) instead
        /// of printing it.
        #[arg(long)]
        put: Option<String>,
        #[arg(long, requires = "put")]
        replace: bool,
    },
}

pub async fn run(client: &Client, command: VaultCommand) -> i32 {
    let result = match command {
        VaultCommand::Put {
            name,
            kind,
            replace,
            totp_qr,
        } => super::vault_put::put(client, &name, &kind, replace, totp_qr.as_deref()).await,
        VaultCommand::List { json } => list(client, json).await,
        VaultCommand::Delete { name } => client
            .call("vault.delete", &json!({ "name": name }))
            .await
            .map(|_| println!("Deleted {name}."))
            .map_err(|e| e.to_string()),
        VaultCommand::Grant { item, to } => client
            .call("vault.grant", &json!({ "item": item, "to": to }))
            .await
            .map(|out| println!("Granted {item} to {}.", out["to"].as_str().unwrap_or(&to)))
            .map_err(|e| e.to_string()),
        VaultCommand::Revoke { item, to } => client
            .call("vault.revoke", &json!({ "item": item, "to": to }))
            .await
            .map(|out| {
                let to = out["to"].as_str().unwrap_or(&to).to_string();
                if out["changed"] == true {
                    println!("Revoked {to}'s use of {item}.");
                } else {
                    println!("{to} had no grant on {item}.");
                }
            })
            .map_err(|e| e.to_string()),
        VaultCommand::Rotate => client
            .call("vault.rotate", &json!({}))
            .await
            .map(|out| println!("New master key; {} item(s) resealed.", out["resealed"]))
            .map_err(|e| e.to_string()),
        VaultCommand::Unlock => match read_secret("Vault passphrase: ") {
            Ok(pass) => client
                .call("vault.unlock", &json!({ "passphrase": pass.as_str() }))
                .await
                .map(|_| println!("The vault is unlocked."))
                .map_err(|e| e.to_string()),
            Err(e) => Err(e),
        },
        VaultCommand::Lock => client
            .call("vault.lock", &json!({}))
            .await
            .map(|_| println!("The vault is locked."))
            .map_err(|e| e.to_string()),
        VaultCommand::Passphrase { remove } => passphrase(client, remove).await,
        VaultCommand::Status { json } => status(client, json).await,
        VaultCommand::Reveal { name, field } => reveal(client, &name, field).await,
        VaultCommand::Pass(command) => super::vault_pass_cmd::run(client, command).await,
        VaultCommand::Offboard {
            person,
            dry_run,
            json,
        } => super::vault_pass_cmd::offboard(client, &person, dry_run, json).await,
        VaultCommand::Import {
            file,
            format,
            dry_run,
            on_duplicate,
            prefix,
            json,
        } => {
            let asked = json!({ "format": format, "dry_run": dry_run, "on_duplicate": on_duplicate, "prefix": prefix });
            import(client, &file, asked, json).await
        }
        VaultCommand::Generate {
            length,
            sets,
            no_ambiguous,
            words,
            separator,
            capitalize,
            put,
            replace,
        } => {
            let mut asked = match words {
                Some(n) => json!({ "kind": "passphrase", "words": n, "capitalize": capitalize }),
                None => json!({ "kind": "password", "avoid_ambiguous": no_ambiguous }),
            };
            if let Some(n) = length {
                asked["length"] = json!(n);
            }
            if !sets.is_empty() {
                asked["sets"] = json!(sets);
            }
            if let Some(s) = separator {
                asked["separator"] = json!(s);
            }
            generate(client, asked, put, replace).await
        }
    };
    match result {
        Ok(()) => 0,
        Err(e) => fail(&e),
    }
}

/// `vyre vault import`: the file read here and sent as text; the answer as a person reads it.
async fn import(
    client: &Client,
    file: &std::path::Path,
    mut asked: Value,
    as_json: bool,
) -> Result<(), String> {
    let data =
        Zeroizing::new(std::fs::read(file).map_err(|e| format!("cannot read the export: {e}"))?);
    // A zip (1Password's .1pux) goes as base64; every other export is text.
    let encoded;
    let text = if data.starts_with(b"PK\x03\x04") {
        use base64::Engine;
        encoded = Zeroizing::new(base64::engine::general_purpose::STANDARD.encode(&*data));
        encoded.as_str()
    } else {
        std::str::from_utf8(&data)
            .map_err(|_| "the export is neither text (JSON, CSV) nor a .1pux archive".to_string())?
    };
    if let Some(fields) = asked.as_object_mut() {
        fields.retain(|_, v| !v.is_null());
    }
    asked["data"] = json!(text);
    let answer = client.call("vault.import", &asked).await;
    // The request held every value: wipe its text before going on.
    if let Some(Value::String(s)) = asked.get_mut("data") {
        s.zeroize();
    }
    let out = answer.map_err(|e| e.to_string())?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return Ok(());
    }
    let dry = out["dry_run"] == true;
    let imported = out["imported"].as_array().cloned().unwrap_or_default();
    let skipped = out["skipped"].as_array().cloned().unwrap_or_default();
    let format = out["format"].as_str().unwrap_or("?");
    let verb = if dry { "Would import" } else { "Imported" };
    println!("{verb} {} item(s) from a {format} export.", imported.len());
    for item in imported
        .iter()
        .filter(|i| i["note"].is_string() || i["replaced"] == true)
    {
        let what = match item["note"].as_str() {
            Some(note) => note.to_string(),
            None => "replaced the item of that name".to_string(),
        };
        println!(
            "  {} (at {}): {what}",
            item["name"].as_str().unwrap_or("?"),
            item["at"]
        );
    }
    if !skipped.is_empty() {
        println!("Skipped {}:", skipped.len());
        for s in &skipped {
            let title = s["title"]
                .as_str()
                .map(|t| format!(" {t:?}"))
                .unwrap_or_default();
            println!(
                "  at {}{title}: {}",
                s["at"],
                s["why"].as_str().unwrap_or("?")
            );
        }
    }
    if dry {
        println!("Nothing was stored. Run again without --dry-run to import.");
    }
    Ok(())
}

/// `vyre vault generate`: printed alone on its line (to pipe it), or stored and never shown.
async fn generate(
    client: &Client,
    asked: Value,
    put: Option<String>,
    replace: bool,
) -> Result<(), String> {
    let made = client
        .call("vault.generate", &asked)
        .await
        .map_err(|e| e.to_string())?;
    let value = Zeroizing::new(made["value"].as_str().unwrap_or_default().to_string());
    let bits = made["bits"].as_f64().unwrap_or_default();
    match put {
        None => {
            println!("{}", value.as_str());
            if std::io::stderr().is_terminal() {
                eprintln!("({bits:.0} bits)");
            }
        }
        Some(name) => {
            let input = json!({ "name": name, "kind": "secret", "value": value.as_str(), "replace": replace });
            client
                .call("vault.put", &input)
                .await
                .map_err(|e| e.to_string())?;
            let verb = if replace { "Replaced" } else { "Stored" };
            println!(
                "{verb} {name} (secret, a new value of {bits:.0} bits; not shown). Grant it with `vyre vault grant {name} <module>`."
            );
        }
    }
    Ok(())
}

async fn list(client: &Client, as_json: bool) -> Result<(), String> {
    let items = client
        .call("vault.list", &json!({}))
        .await
        .map_err(|e| e.to_string())?;
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&items).unwrap_or_default()
        );
        return Ok(());
    }
    let items = items.as_array().cloned().unwrap_or_default();
    if items.is_empty() {
        println!("The vault is empty. Store a credential with `vyre vault put <name>`.");
    }
    for i in items {
        let grants: Vec<&str> = i["grants"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let used = match (i["last_used_at"].as_i64(), i["last_used_by"].as_str()) {
            (Some(_), Some(by)) => format!("last used by {by}"),
            _ => "never used".to_string(),
        };
        // What is not secret of a card (last four, expiry) and of an env set (its names).
        let vars: Vec<&str> = i["vars"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let facts = match (i["last4"].as_str(), i["expiry"].as_str()) {
            (Some(last4), Some(exp)) => format!(" (…{last4}, expires {exp})"),
            _ if !vars.is_empty() => format!(" ({})", vars.join(", ")),
            _ => String::new(),
        };
        println!(
            "{:<28} {:<7} {:<30} {used}{facts}",
            i["name"].as_str().unwrap_or("?"),
            i["kind"].as_str().unwrap_or("?"),
            if grants.is_empty() {
                "no grants".to_string()
            } else {
                grants.join(", ")
            }
        );
    }
    Ok(())
}

async fn reveal(client: &Client, name: &str, field: Option<String>) -> Result<(), String> {
    let field = match field {
        Some(f) => f,
        None => {
            let items = client
                .call("vault.list", &json!({}))
                .await
                .map_err(|e| e.to_string())?;
            let kind = items
                .as_array()
                .and_then(|a| a.iter().find(|i| i["name"] == name))
                .and_then(|i| i["kind"].as_str())
                .ok_or_else(|| format!("there is no item named {name:?} in the vault"))?;
            match kind {
                "login" => "password",
                "card" => "number",
                _ => "value",
            }
            .to_string()
        }
    };
    let pass = read_secret("Vault passphrase (to prove it is you): ")?;
    let mut out = client
        .call(
            "vault.reveal",
            &json!({ "name": name, "field": field, "passphrase": pass.as_str() }),
        )
        .await
        .map_err(|e| e.to_string())?;
    let value = out["value"].as_str().unwrap_or("");
    // An env set's lines end in a newline already.
    if value.ends_with('\n') {
        print!("{value}");
    } else {
        println!("{value}");
    }
    if let Some(s) = out["expires_in_s"].as_u64() {
        eprintln!("(changes in {s} s)");
    }
    wipe(&mut out);
    Ok(())
}

async fn passphrase(client: &Client, remove: bool) -> Result<(), String> {
    if remove {
        client
            .call("vault.passphrase", &json!({}))
            .await
            .map_err(|e| e.to_string())?;
        println!("The key file is no longer wrapped by a passphrase.");
        return Ok(());
    }
    let first = read_secret("New vault passphrase: ")?;
    if std::io::stdin().is_terminal() {
        let again = prompt_hidden("Again: ")?;
        if *again != *first {
            return Err("the two passphrases differ; nothing changed".into());
        }
    }
    client
        .call("vault.passphrase", &json!({ "passphrase": first.as_str() }))
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "The key file is wrapped by the passphrase. After a restart, `vyre vault unlock` opens the vault."
    );
    Ok(())
}

async fn status(client: &Client, as_json: bool) -> Result<(), String> {
    let s = client
        .call("vault.status", &json!({}))
        .await
        .map_err(|e| e.to_string())?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&s).unwrap_or_default());
        return Ok(());
    }
    print!("{}", render_status(&s));
    Ok(())
}

/// The vault's status as a person reads it (also used by `vyre doctor`).
pub fn render_status(s: &Value) -> String {
    let mut out = format!(
        "vault     {} ({} item(s), key in {}{})\n",
        s["state"].as_str().unwrap_or("?").replace('_', " "),
        s["items"],
        s["keystore"].as_str().unwrap_or("?"),
        if s["passphrase"] == true {
            ", wrapped by a passphrase"
        } else {
            ""
        }
    );
    out.push_str(&format!("claude    {}\n", auth_line(&s["claude"])));
    out
}

/// `setup-token (default for this role): claude-setup-token present, granted to sessions`.
pub fn auth_line(c: &Value) -> String {
    let Some(mode) = c["mode"].as_str() else {
        return c["advice"].as_str().unwrap_or("unknown").to_string();
    };
    let item = match c["item"].as_object() {
        None => "Claude Code's own login".to_string(),
        Some(i) => format!(
            "{} {}, {}",
            i["item"].as_str().unwrap_or("?"),
            if i["present"] == true {
                "present"
            } else {
                "missing"
            },
            if i["granted_to_sessions"] == true {
                "granted to sessions"
            } else {
                "not granted to sessions"
            }
        ),
    };
    let fallback = if c["fallback"]["present"] == true {
        "; API key fallback present"
    } else {
        ""
    };
    let advice = c["advice"]
        .as_str()
        .map(|a| format!(" ({a})"))
        .unwrap_or_default();
    format!(
        "{mode} ({}): {item}{fallback}{advice}",
        c["source"].as_str().unwrap_or("?")
    )
}

pub(super) fn wipe(v: &mut Value) {
    match v {
        Value::String(s) => zeroize::Zeroize::zeroize(s),
        Value::Object(map) => map.values_mut().for_each(wipe),
        Value::Array(items) => items.iter_mut().for_each(wipe),
        _ => {}
    }
}

/// A secret from standard input (piped) or a hidden prompt (a terminal). A piped value loses one
/// trailing newline.
pub(super) fn read_secret(prompt: &str) -> Result<Zeroizing<String>, String> {
    if std::io::stdin().is_terminal() {
        let value = prompt_hidden(prompt)?;
        if value.is_empty() {
            return Err("nothing was entered; nothing changed".into());
        }
        return Ok(value);
    }
    let mut value = read_stdin()?;
    if value.ends_with('\n') {
        value.pop();
        if value.ends_with('\r') {
            value.pop();
        }
    }
    if value.is_empty() {
        return Err("standard input was empty; pipe the value in or run this in a terminal".into());
    }
    Ok(value)
}

pub(super) fn read_stdin() -> Result<Zeroizing<String>, String> {
    let mut buf = Zeroizing::new(String::new());
    std::io::stdin()
        .read_to_string(&mut buf)
        .map_err(|e| format!("cannot read standard input: {e}"))?;
    Ok(buf)
}

pub(super) fn prompt_visible(prompt: &str) -> Result<String, String> {
    eprint!("{prompt}");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}

/// Read a line from the terminal with echo off.
pub(super) fn prompt_hidden(prompt: &str) -> Result<Zeroizing<String>, String> {
    use nix::sys::termios::{LocalFlags, SetArg, tcgetattr, tcsetattr};
    let stdin = std::io::stdin();
    eprint!("{prompt}");
    let _ = std::io::stderr().flush();
    let saved = tcgetattr(&stdin).map_err(|e| format!("cannot read the terminal: {e}"))?;
    let mut quiet = saved.clone();
    quiet.local_flags.remove(LocalFlags::ECHO);
    tcsetattr(&stdin, SetArg::TCSANOW, &quiet)
        .map_err(|e| format!("cannot hide the input: {e}"))?;
    let mut line = Zeroizing::new(String::new());
    let read = stdin.read_line(&mut line);
    let _ = tcsetattr(&stdin, SetArg::TCSANOW, &saved);
    eprintln!();
    read.map_err(|e| e.to_string())?;
    while line.ends_with(['\n', '\r']) {
        line.pop();
    }
    Ok(line)
}
