//! `vyre hook <Event>`: what the harness plugin's hooks run. It hands the hook's input (stdin)
//! to vyred and prints what vyred answers. When vyred is not running, or does not answer in
//! time, it prints nothing and exits 0 at once, so Claude Code behaves exactly as without Vyre.

use std::io::Read;
use std::time::Duration;

use serde_json::{Value, json};

use crate::client::Client;

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
    // The Claude Code process this hook runs under (through a shell), for SessionStart's binding.
    let pid = crate::peer::claude_ancestor(std::os::unix::process::parent_id() as i32);
    let body = json!({ "event": event, "input": input, "pid": pid });
    let call = client.call("harness.hook", &body);
    if let Ok(Ok(answer)) = tokio::time::timeout(PATIENCE, call).await
        && !answer["output"].is_null()
    {
        println!("{}", answer["output"]);
    }
    0
}
