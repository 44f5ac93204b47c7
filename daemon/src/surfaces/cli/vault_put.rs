//! `vyre vault put`: each kind's fields from a terminal's prompts (hidden for what is secret) or
//! from standard input's lines; never from an argument.

use std::io::IsTerminal;

use serde_json::json;
use zeroize::Zeroizing;

use super::vault_cmd::{prompt_hidden, prompt_visible, read_secret, read_stdin, wipe};
use crate::surfaces::client::Client;

/// Standard input's lines, or one prompt per field (`hidden` ones without echo).
fn fields(asks: &[(&str, bool)]) -> Result<Vec<Zeroizing<String>>, String> {
    if std::io::stdin().is_terminal() {
        return asks
            .iter()
            .map(|(ask, hidden)| match hidden {
                true => prompt_hidden(ask),
                false => prompt_visible(ask).map(Zeroizing::new),
            })
            .collect();
    }
    let all = read_stdin()?;
    let mut lines = all.lines();
    Ok(asks
        .iter()
        .map(|_| {
            Zeroizing::new(
                lines
                    .next()
                    .unwrap_or("")
                    .trim_end_matches('\r')
                    .to_string(),
            )
        })
        .collect())
}

/// An env set's `NAME=value` lines (a .env file: `export ` and quotes around a value allowed,
/// `#` lines skipped), up to an empty line from a terminal or the end of standard input.
fn env_vars() -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let text = if std::io::stdin().is_terminal() {
        eprintln!("NAME=value lines; an empty line ends (values are shown as typed):");
        let mut all = Zeroizing::new(String::new());
        loop {
            let line = prompt_visible("")?;
            if line.is_empty() {
                break;
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    } else {
        read_stdin()?
    };
    let mut vars = serde_json::Map::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((name, value)) = line.split_once('=') else {
            return Err(format!("line {}: not NAME=value", n + 1));
        };
        let value = value.trim();
        let value = [('"', '"'), ('\'', '\'')]
            .iter()
            .find_map(|(a, b)| value.strip_prefix(*a).and_then(|v| v.strip_suffix(*b)))
            .unwrap_or(value);
        vars.insert(name.trim().to_string(), json!(value));
    }
    if vars.is_empty() {
        return Err("no NAME=value line was given; nothing changed".into());
    }
    Ok(vars)
}

pub async fn put(
    client: &Client,
    name: &str,
    kind: &str,
    replace: bool,
    totp_qr: Option<&std::path::Path>,
) -> Result<(), String> {
    let mut input = json!({ "name": name, "kind": kind, "replace": replace });
    if let Some(path) = totp_qr {
        if kind != "login" {
            return Err("--totp-qr is for a login (--kind login)".into());
        }
        use base64::Engine;
        let image = zeroize::Zeroizing::new(
            std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?,
        );
        input["totp_qr"] = json!(base64::engine::general_purpose::STANDARD.encode(&*image));
    }
    match kind {
        "login" => {
            let password = format!("Password for {name}: ");
            let mut asks = vec![("Username: ", false), (password.as_str(), true)];
            // With --totp-qr the TOTP comes from the image.
            if totp_qr.is_none() {
                asks.push((
                    "TOTP seed or otpauth:// URI (optional, Enter for none): ",
                    true,
                ));
            }
            let f = fields(&asks)?;
            input["username"] = json!(f[0].as_str());
            input["password"] = json!(f[1].as_str());
            if let Some(totp) = f.get(2).filter(|t| !t.is_empty()) {
                input["totp"] = json!(totp.as_str());
            }
        }
        "card" => {
            let f = fields(&[
                ("Card number: ", true),
                ("Name on the card: ", false),
                ("Expiry (MM/YY): ", false),
                ("Security code: ", true),
            ])?;
            for (key, value) in ["number", "holder", "expiry", "code"].iter().zip(&f) {
                if !value.is_empty() {
                    input[*key] = json!(value.as_str());
                }
            }
        }
        "env" => input["vars"] = serde_json::Value::Object(env_vars()?),
        _ => {
            let value = read_secret(&format!("Value for {name}: "))?;
            input["value"] = json!(value.as_str());
        }
    }
    let out = client.call("vault.put", &input).await;
    wipe(&mut input);
    let out = out.map_err(|e| e.to_string())?;
    let verb = if out["replaced"] == true {
        "Replaced"
    } else {
        "Stored"
    };
    println!("{verb} {name} ({kind}). Grant it with `vyre vault grant {name} <module>`.");
    Ok(())
}
