//! `vyre hook <Event>`: what the harness plugin's hooks run. It hands the hook's input (stdin)
//! to vyred and prints what vyred answers. When vyred is not running, or does not answer in
//! time, it prints nothing and exits 0 at once, so Claude Code behaves exactly as without Vyre.

use std::io::Read;
use std::time::Duration;

use serde_json::{Value, json};

use crate::client::Client;

/// The Claude Code process this hook runs under (it runs hooks through a shell): the nearest
/// ancestor whose program is `claude`.
fn claude_ancestor() -> Option<u32> {
    let mut pid = std::os::unix::process::parent_id();
    for _ in 0..8 {
        if pid <= 1 {
            return None;
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let is_claude = cmdline.split(|b| *b == 0).take(2).any(|a| {
            std::path::Path::new(std::str::from_utf8(a).unwrap_or_default())
                .file_name()
                .is_some_and(|n| n == "claude")
        });
        if is_claude {
            return Some(pid);
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The parent is the second field after the command's closing parenthesis.
        pid = stat
            .rsplit_once(')')?
            .1
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
    }
    None
}

/// The longest a hook waits for vyred before it stays out of the way.
const PATIENCE: Duration = Duration::from_secs(3);

pub async fn hook(socket: std::path::PathBuf, event: &str) -> i32 {
    if !socket.exists() {
        return 0;
    }
    let mut raw = String::new();
    let _ = std::io::stdin().read_to_string(&mut raw);
    let input: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
    let client = Client::socket(&socket);
    let body = json!({ "event": event, "input": input, "pid": claude_ancestor() });
    let call = client.call("harness.hook", &body);
    if let Ok(Ok(answer)) = tokio::time::timeout(PATIENCE, call).await
        && !answer["output"].is_null()
    {
        println!("{}", answer["output"]);
    }
    0
}
