//! The Claude Code CLI's stdout, as bytes, through the daemon's own decoder and translator: the
//! JSON-lines peer with the control protocol (`sessions/wire.rs`) over in-memory pipes, with two
//! of Vyre's control requests in flight (ids `vyre-1` and `vyre-2`, as the corpus answers them),
//! then every message and CLI request through the session's [`Translator`]
//! (`sessions/claude_provider.rs`).
//!
//! Checked beyond "no panic":
//! - no hang: every request in flight is answered or fails once the CLI's stdout closes, and a
//!   request made after that fails at once;
//! - at most one item per line, garbage reported short;
//! - a decoded line, written out again as the CLI would, decodes to the same item;
//! - the happenings keep their contract: a text happening is a delta or the end of its block, of
//!   the message being streamed; a block ends only once per start; a turn that was cancelled
//!   is not ok and carries no error; a tool summary stays short; a question is of its kind.
#![no_main]

use std::sync::LazyLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use vyre::kernel::contracts::provider::Happening;
use vyre::modules::sessions::claude::SLOT_HOOK;
use vyre::modules::sessions::claude_provider::Translator;
use vyre::modules::sessions::wire::{Incoming, Peer, WireError};
use vyre_fuzz::same_value;

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime")
});

/// Longer than any honest wait on in-memory pipes; libFuzzer's own -timeout is the backstop.
const HANG: Duration = Duration::from_secs(5);

/// Requests Vyre has in flight while the bytes arrive.
const IN_FLIGHT: usize = 2;

struct Decoded {
    items: Vec<Incoming>,
    answers: Vec<Result<Value, WireError>>,
}

/// Feed `bytes` to a peer as the CLI's stdout, then close it.
async fn decode(bytes: Vec<u8>, in_flight: usize) -> Decoded {
    let (host_out, cli_in) = tokio::io::duplex(1 << 16);
    let (mut cli_out, host_in) = tokio::io::duplex(1 << 16);
    let (peer, mut incoming) = Peer::start(host_in, host_out);
    let mut cli_in = BufReader::new(cli_in);
    let mut waiting = Vec::new();
    for n in 0..in_flight {
        let p = peer.clone();
        waiting.push(tokio::spawn(async move {
            p.request(json!({ "subtype": "interrupt", "n": n })).await
        }));
        // Read the request off the CLI's stdin: it is registered before it is written, so the
        // bytes below can answer it.
        let mut line = String::new();
        cli_in.read_line(&mut line).await.expect("the request");
        assert!(line.contains(&format!("vyre-{}", n + 1)), "{line}");
    }
    cli_out.write_all(&bytes).await.expect("the pipe");
    drop(cli_out);
    let mut items = Vec::new();
    loop {
        match tokio::time::timeout(HANG, incoming.recv()).await {
            Ok(Some(item)) => items.push(item),
            Ok(None) => break,
            Err(_) => panic!("the peer hung reading {} bytes", bytes.len()),
        }
    }
    let mut answers = Vec::new();
    for (n, w) in waiting.into_iter().enumerate() {
        match tokio::time::timeout(HANG, w).await {
            Ok(answer) => answers.push(answer.expect("the request task")),
            Err(_) => panic!("request vyre-{} hung after the CLI's stdout closed", n + 1),
        }
    }
    // The CLI's stdout is gone but its stdin is still open (`cli_in` lives): a request now must
    // fail at once rather than wait for an answer nobody will read.
    match tokio::time::timeout(HANG, peer.request(json!({ "subtype": "interrupt" }))).await {
        Ok(Err(WireError::Closed)) => {}
        Ok(other) => panic!("a request after the CLI's stdout closed gave {other:?}"),
        Err(_) => panic!("a request after the CLI's stdout closed hung"),
    }
    drop(cli_in);
    Decoded { items, answers }
}

/// The line the CLI would write for an item; `None` for garbage.
fn encode(item: &Incoming) -> Option<String> {
    let value = match item {
        Incoming::Request { id, request } => {
            json!({ "type": "control_request", "request_id": id, "request": request })
        }
        Incoming::Cancel { id } => json!({ "type": "control_cancel_request", "request_id": id }),
        Incoming::Message(m) => m.clone(),
        Incoming::Garbage(_) => return None,
    };
    Some(serde_json::to_string(&value).expect("a Value serializes"))
}

fn same(a: &Incoming, b: &Incoming) -> bool {
    match (a, b) {
        (Incoming::Request { id: i, request: r }, Incoming::Request { id: j, request: s }) => {
            i == j && same_value(r, s)
        }
        (Incoming::Cancel { id: i }, Incoming::Cancel { id: j }) => i == j,
        (Incoming::Message(m), Incoming::Message(n)) => same_value(m, n),
        _ => false,
    }
}

/// Run the items through a translator as a session does and check what comes out.
fn translate(items: &[Incoming]) {
    let mut translator = Translator::default();
    let mut streaming = String::new();
    let mut started = 0usize;
    let mut ended = 0usize;
    for item in items {
        let happenings = match item {
            Incoming::Request { id, request } => {
                let h = Translator::request(id, request);
                match request["subtype"].as_str() {
                    Some("can_use_tool") => {
                        assert!(matches!(h, Some(Happening::Asked(_))), "{h:?}")
                    }
                    Some("hook_callback") if request["callback_id"] == SLOT_HOOK => {
                        assert!(matches!(h, Some(Happening::SlotWanted { .. })), "{h:?}")
                    }
                    _ => assert!(h.is_none(), "{request} is refused, not {h:?}"),
                }
                h.into_iter().collect()
            }
            Incoming::Message(m) => {
                if m["type"] == "stream_event" {
                    match m["event"]["type"].as_str() {
                        Some("message_start") => {
                            streaming = m["event"]["message"]["id"]
                                .as_str()
                                .unwrap_or_default()
                                .to_string();
                            // A new message forgets the blocks left open.
                            started = 0;
                            ended = 0;
                        }
                        Some("content_block_start") => started += 1,
                        _ => {}
                    }
                }
                translator.message(m)
            }
            _ => vec![],
        };
        for h in &happenings {
            match h {
                Happening::Text {
                    message,
                    delta,
                    done,
                    ..
                } => {
                    assert_eq!(delta.is_some(), !done, "{h:?}");
                    assert_eq!(message, &streaming, "text of the message being streamed");
                    if *done {
                        ended += 1;
                        assert!(ended <= started, "a block ended that never started");
                    }
                }
                Happening::ToolStarted { summary, .. } => {
                    assert!(summary.chars().count() <= 121, "{summary:?}")
                }
                Happening::Finished {
                    ok,
                    canceled,
                    error,
                    ..
                } => {
                    assert!(!(*canceled && *ok), "{h:?}");
                    assert!(!(*canceled || *ok) || error.is_none(), "{h:?}");
                    assert!(*ok || *canceled || error.is_some(), "{h:?}");
                }
                Happening::Asked(q) => {
                    let kind = match q.tool.as_str() {
                        "AskUserQuestion" => "question",
                        "ExitPlanMode" => "plan",
                        _ => "tool",
                    };
                    assert_eq!(q.kind, kind);
                }
                _ => {}
            }
        }
        if let Incoming::Message(m) = item
            && m["type"] == "assistant"
        {
            let blocks = m["message"]["content"].as_array().map_or(0, Vec::len);
            assert!(happenings.len() <= blocks);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let lines = data
        .split(|b| *b == b'\n')
        .filter(|l| !String::from_utf8_lossy(l).trim().is_empty())
        .count();
    let decoded = RUNTIME.block_on(decode(data.to_vec(), IN_FLIGHT));
    assert!(decoded.items.len() <= lines, "more items than lines");
    assert_eq!(decoded.answers.len(), IN_FLIGHT);
    for item in &decoded.items {
        if let Incoming::Garbage(g) = item {
            assert!(!g.is_empty() && g.chars().count() <= 200, "{g:?}");
        }
    }
    // Written out again, the lines decode to the same items.
    let again: Vec<&Incoming> = decoded
        .items
        .iter()
        .filter(|i| !matches!(i, Incoming::Garbage(_)))
        .collect();
    let text: String = again
        .iter()
        .filter_map(|i| encode(i))
        .map(|l| l + "\n")
        .collect();
    let redecoded = RUNTIME.block_on(decode(text.into_bytes(), 0));
    assert_eq!(redecoded.items.len(), again.len(), "re-encoded lines");
    for (a, b) in again.iter().zip(&redecoded.items) {
        assert!(same(a, b), "{a:?} came back as {b:?}");
    }
    translate(&decoded.items);
});
