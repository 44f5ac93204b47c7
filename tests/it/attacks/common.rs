//! What the attack files share: the attacker's session and running its script.

use std::path::Path;

use serde_json::json;

use crate::threads_e2e::{Rig, allow_until_finished};

/// The attacker: a new session of project `Mine` in its folder `mine`; its thread.
pub(super) async fn attacker(r: &Rig, mine: &Path) -> String {
    let started = r
        .sock
        .call("threads.start", &json!({ "cwd": mine, "project": "Mine" }))
        .await
        .unwrap();
    started["thread"].as_str().unwrap().to_string()
}

/// Run `text` as a turn of `thread`, allowing its questions, until the turn ends.
pub(super) async fn run_allowed(r: &Rig, thread: &str, text: &str) {
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": text }))
        .await
        .unwrap();
    allow_until_finished(r, &mut stream, thread).await;
}

/// What the attacker's script wrote to `name` in its folder `dir`.
pub(super) fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}
