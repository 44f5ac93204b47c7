//! One line of a Codex rollout through the daemon's reader (`transcripts/rollout.rs`): files a
//! session writes in its own home, so anything may be in them.
//!
//! Checked beyond "no panic":
//! - whitespace around a line changes nothing;
//! - what was read, written out again as Codex 0.171.0 writes it, reads back the same (a
//!   person's or Codex's words with their item id, time and Vyre's thread; a place);
//! - what is said is never blank, and a message id belongs to Codex's words only;
//! - read whole for a timeline (`transcripts/rollout_entries.rs`), the same bytes (as many
//!   lines) give entries that each follow the one before, a tool's result right after its call,
//!   outputs within the cap with their whole size.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use vyre::kernel::transcripts::entry::{Block, What};
use vyre::kernel::transcripts::line::{Line, Role};
use vyre::kernel::transcripts::{rollout, rollout_entries};

fuzz_target!(|data: &[u8]| {
    let read = rollout::parse(data);
    let mut padded = b" \t".to_vec();
    padded.extend_from_slice(data);
    padded.extend_from_slice(b" \r\n");
    assert_eq!(rollout::parse(&padded), read, "whitespace around the line");

    let again = match &read {
        Ok(Line::Said(s)) => {
            assert!(!s.text.trim().is_empty(), "{s:?}");
            assert_eq!(s.message_id.is_some(), s.role == Role::Assistant, "{s:?}");
            let kind = match s.role {
                Role::User => "UserMessage",
                Role::Assistant => "AgentMessage",
            };
            let mut item = json!({ "type": kind, "id": s.uuid, "content": [{ "type": "text", "text": s.text }] });
            if let Some(thread) = &s.session {
                item["client_id"] = json!(format!("vyre:{thread}:m"));
            }
            let mut v = json!({ "type": "event_msg", "payload": { "type": "item_completed", "item": item } });
            let mut expected = s.clone();
            expected.at = None;
            // A time read back is one the CLI's format writes; the line reader's own target
            // checks that format to the millisecond.
            if s.at.is_some()
                && let Ok(text) = std::str::from_utf8(data)
                && let Ok(raw) = serde_json::from_str::<serde_json::Value>(text.trim())
                && let Some(ts) = raw["timestamp"].as_str()
            {
                v["timestamp"] = json!(ts);
                expected.at = s.at;
            }
            Some((v, Line::Said(expected)))
        }
        Ok(Line::Place { cwd, entrypoint }) => {
            let mut payload = json!({});
            if let Some(cwd) = cwd {
                payload["cwd"] = json!(cwd);
            }
            let originator = entrypoint
                .as_deref()
                .and_then(|e| e.strip_prefix("codex:"))
                .expect("a place says it is Codex's");
            if originator != "unknown" {
                payload["originator"] = json!(originator);
            }
            Some((
                json!({ "type": "session_meta", "payload": payload }),
                Line::Place {
                    cwd: cwd.clone(),
                    entrypoint: entrypoint.clone(),
                },
            ))
        }
        Ok(Line::Title(_) | Line::Summary(_)) => panic!("a rollout line read as a title: {read:?}"),
        Ok(Line::Passed) | Err(_) => None,
    };
    if let Some((v, expected)) = again {
        let text = serde_json::to_string(&v).expect("a Value serializes");
        assert_eq!(rollout::parse(text.as_bytes()), Ok(expected), "{text}");
    }

    let entries = rollout_entries::read(data, 16);
    for (i, e) in entries.iter().enumerate() {
        assert!(e.uuid.is_some(), "{e:?}");
        let before = i.checked_sub(1).and_then(|j| entries[j].uuid.clone());
        assert_eq!(e.parent, before, "each entry follows the one before");
        if let What::Results(results) = &e.what {
            let call = match i.checked_sub(1).map(|j| &entries[j].what) {
                Some(What::Blocks { blocks, .. }) => match blocks.as_slice() {
                    [Block::ToolUse { id, .. }] => id.clone(),
                    other => panic!("a result after {other:?}"),
                },
                other => panic!("a result after {other:?}"),
            };
            for r in results {
                assert_eq!(r.call, call);
                assert!(
                    r.output.len() <= 16 && r.bytes >= r.output.len() as u64,
                    "{r:?}"
                );
            }
        }
    }
});
