//! The first `vyre up` on a Mac (role local) in a terminal, before the onboarding: where should
//! Vyre run? Here, on a box that already runs Vyre (its pairing code), or on a server reached
//! over SSH (`vyre box add`). Piped, or once the onboarding is done or a box is paired, it asks
//! nothing.

use std::io::IsTerminal;

use inquire::{Select, Text};
use serde_json::{Value, json};

use crate::surfaces::client::Client;

const HERE: &str = "Here, on this machine";
const BOX: &str = "On a box that already runs Vyre (type its pairing code)";
const SERVER: &str = "On a server I reach over SSH (installs the box there: vyre box add)";

/// What the person chose.
pub enum Choice {
    /// Go on here: show the onboarding link.
    Here,
    /// Paired with a box, or put Vyre on a server: the onboarding link of this machine is still
    /// printed, since the Mac app and this machine's sessions onboard here too.
    Done,
    /// Something failed; the message was printed. The exit status.
    Failed(i32),
}

/// Ask where Vyre should run when it is this machine's first start in a terminal.
pub async fn ask(client: &Client, health: &Value) -> Choice {
    if health["role"] != "local" || !std::io::stdin().is_terminal() {
        return Choice::Here;
    }
    let status = client.call("system.status", &json!({})).await;
    if status.map(|s| s["onboarded"] == true).unwrap_or(true) {
        return Choice::Here;
    }
    let paired = client.call("pairing.list", &json!({})).await;
    if paired
        .map(|p| p.as_array().is_some_and(|a| !a.is_empty()))
        .unwrap_or(true)
    {
        return Choice::Here;
    }
    println!();
    let Ok(choice) = Select::new("Where should Vyre run?", vec![HERE, BOX, SERVER]).prompt() else {
        return Choice::Here;
    };
    match choice {
        BOX => pair(client).await,
        SERVER => server().await,
        _ => Choice::Here,
    }
}

async fn pair(client: &Client) -> Choice {
    println!("On the box, `vyre pairing code` prints a code for ten minutes; reach the box first");
    println!("(`ssh -N -L 4477:127.0.0.1:4477 user@host`, which `vyre up` on the box prints).");
    let address = Text::new("The box's address:")
        .with_default("127.0.0.1:4477")
        .prompt();
    let code = Text::new("Its pairing code:").prompt();
    let (Ok(address), Ok(code)) = (address, code) else {
        return Choice::Here;
    };
    let input = json!({ "address": address.trim(), "code": code.trim() });
    match client.call("pairing.add", &input).await {
        Ok(paired) => {
            let name = paired["box_name"].as_str().unwrap_or(address.trim());
            println!(
                "Paired with the box {name}. `vyre pairing list` shows it; `vyre pairing remove` ends it."
            );
            Choice::Done
        }
        Err(e) => {
            eprintln!("vyre: the box did not pair: {e}");
            Choice::Failed(1)
        }
    }
}

async fn server() -> Choice {
    let Ok(target) = Text::new("The server, as user@host:").prompt() else {
        return Choice::Here;
    };
    let target = target.trim().to_string();
    if target.is_empty() {
        return Choice::Here;
    }
    match tokio::task::spawn_blocking(move || super::box_cmd::add_to(&target)).await {
        Ok(0) => Choice::Done,
        Ok(code) => Choice::Failed(code),
        Err(e) => {
            eprintln!("vyre: vyre box add failed: {e}");
            Choice::Failed(1)
        }
    }
}
