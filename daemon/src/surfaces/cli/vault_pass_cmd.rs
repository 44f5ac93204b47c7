//! `vyre vault pass ...` and `vyre vault offboard`: one item shared with another person's Vyre
//! (ADR 0036). A pass's code lets whoever holds it use the item, so `accept` reads it from
//! standard input or a hidden prompt, never from an argument; `create` prints it once.

use clap::Subcommand;
use serde_json::{Value, json};

use crate::surfaces::client::Client;

#[derive(Debug, Subcommand)]
pub enum PassCommand {
    /// Share an item with a person: relayed (the value stays here; their requests go through
    /// this Gate) unless --sealed-for names the key their Vyre made. Prints the code to give.
    Create {
        item: String,
        /// Who it is for, in your words (an offboarding names them the same way).
        #[arg(long)]
        to: String,
        /// A sealed copy for this key (`vyre-key-1.…`, from their `vyre vault pass key`).
        #[arg(long)]
        sealed_for: Option<String>,
        /// This Vyre's address as their Vyre reaches it (https, or on the private network).
        #[arg(long)]
        url: Option<String>,
    },
    /// The passes this Vyre gave.
    List {
        #[arg(long)]
        json: bool,
    },
    /// End a pass (a sealed one's copy stays with them: rotate the value).
    Revoke { id: String },
    /// A one-use key for receiving a sealed pass, good for an hour.
    Key,
    /// Take a pass someone gave you into this vault as NAME; the code is read from standard
    /// input or a hidden prompt.
    Accept { name: String },
}

pub async fn run(client: &Client, command: PassCommand) -> Result<(), String> {
    let call = |tool: &'static str, input: Value| async move {
        client.call(tool, &input).await.map_err(|e| e.to_string())
    };
    match command {
        PassCommand::Create {
            item,
            to,
            sealed_for,
            url,
        } => {
            let out = call(
                "vault.pass.create",
                json!({ "name": item, "to": to, "sealed_for": sealed_for, "url": url }),
            )
            .await?;
            eprintln!("{}", out["note"].as_str().unwrap_or_default());
            eprintln!(
                "Pass {} ({}):",
                out["id"].as_str().unwrap_or("?"),
                out["kind"].as_str().unwrap_or("?")
            );
            println!("{}", out["code"].as_str().unwrap_or_default());
        }
        PassCommand::List { json } => {
            let out = call("vault.pass.list", json!({})).await?;
            if json {
                println!("{out:#}");
                return Ok(());
            }
            let passes = out.as_array().cloned().unwrap_or_default();
            if passes.is_empty() {
                println!(
                    "No passes given. `vyre vault pass create <item> --to <person>` makes one."
                );
            }
            for p in passes {
                let state = match (p["revoked_at"].as_i64(), p["kind"].as_str()) {
                    (Some(_), _) => "revoked".to_string(),
                    (None, Some("relayed")) if p["taken_at"].is_null() => {
                        "not taken yet".to_string()
                    }
                    (None, _) => format!("{} use(s)", p["uses"]),
                };
                println!(
                    "{}  {} to {}  {}  {state}",
                    p["id"].as_str().unwrap_or("?"),
                    p["item"].as_str().unwrap_or("?"),
                    p["to"].as_str().unwrap_or("?"),
                    p["kind"].as_str().unwrap_or("?"),
                );
            }
        }
        PassCommand::Revoke { id } => {
            let out = call("vault.pass.revoke", json!({ "id": id })).await?;
            if out["revoked"] == false {
                println!("Pass {id} was revoked already.");
            }
            println!("{}", out["note"].as_str().unwrap_or_default());
        }
        PassCommand::Key => {
            let out = call("vault.pass.key", json!({})).await?;
            eprintln!(
                "Give this key to the person who shares an item with you (good for one pass, for an hour):"
            );
            println!("{}", out["key"].as_str().unwrap_or_default());
        }
        PassCommand::Accept { name } => {
            let code = super::vault_cmd::read_secret("Pass code: ")?;
            let out = call(
                "vault.pass.accept",
                json!({ "code": code.as_str(), "name": name }),
            )
            .await?;
            match out["pass"].as_str() {
                Some("relayed") => println!(
                    "Added {name}: a relayed pass from {}. Grant it to the Gate (`vyre vault grant {name} gate`) and sessions use it as {{{{vault:{name}}}}}.",
                    out["from"].as_str().unwrap_or("?")
                ),
                _ => println!(
                    "Added {name} ({}) from a sealed pass.",
                    out["kind"].as_str().unwrap_or("?")
                ),
            }
        }
    }
    Ok(())
}

/// `vyre vault offboard PERSON`.
pub async fn offboard(
    client: &Client,
    person: &str,
    dry_run: bool,
    json: bool,
) -> Result<(), String> {
    let out = client
        .call(
            "vault.offboard",
            &json!({ "person": person, "dry_run": dry_run }),
        )
        .await
        .map_err(|e| e.to_string())?;
    if json {
        println!("{out:#}");
        return Ok(());
    }
    let revoked = out["revoked"].as_array().cloned().unwrap_or_default();
    let verb = if dry_run { "Would revoke" } else { "Revoked" };
    if revoked.is_empty() {
        println!("{person} holds no pass.");
    }
    for p in &revoked {
        println!(
            "{verb} {} ({}, {})",
            p["id"].as_str().unwrap_or("?"),
            p["item"].as_str().unwrap_or("?"),
            p["kind"].as_str().unwrap_or("?")
        );
    }
    for r in out["rotate"].as_array().into_iter().flatten() {
        println!(
            "Rotate {}: {}",
            r["item"].as_str().unwrap_or("?"),
            r["why"].as_str().unwrap_or("")
        );
    }
    for u in out["used"].as_array().into_iter().flatten() {
        for at in u["uses"].as_array().into_iter().flatten() {
            println!(
                "{} was used at {} ({} time(s))",
                u["item"].as_str().unwrap_or("?"),
                at["destination"].as_str().unwrap_or("?"),
                at["count"]
            );
        }
    }
    Ok(())
}
