//! History Vyre did not see, from the transcript: what a terminal wrote before a session was
//! adopted or between Vyre's runs, a session only recall knows, and the tool inputs and outputs
//! of threads older than the timeline. Two pure steps: the transcript's entries as items
//! ([`items`]), then where each goes among the items the thread has ([`merge`]).

use std::collections::HashMap;

use super::item::{
    Item, Notice, OUTPUT_CAP, Text, Tool, User, cap_strings, summary_of, text_key, tool_key,
};
use super::words;
use crate::kernel::transcripts::entry::{Block, Entry, What};

/// An item read from the transcript, and whether a terminal wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub item: Item,
    pub terminal: bool,
}

/// A command's exit status from Bash's result: `Exit code N` when it failed, else 0.
pub fn exit_of(name: &str, failed: bool, output: &str) -> Option<i64> {
    if name != "Bash" {
        return None;
    }
    if !failed {
        return Some(0);
    }
    output
        .strip_prefix("Exit code ")
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
}

/// The entries of a transcript's current branch as timeline items, in order.
pub fn items(entries: &[Entry]) -> Vec<Imported> {
    let mut out: Vec<Imported> = vec![];
    let mut tools: HashMap<String, usize> = HashMap::new();
    for e in entries {
        let (Some(uuid), at) = (e.uuid.as_deref(), e.at.unwrap_or(0)) else {
            continue;
        };
        let notice = |level: &str, code: &str, text: String| {
            Item::Notice(Notice {
                key: format!("n:{uuid}"),
                at,
                level: level.into(),
                code: code.into(),
                text,
                retry: None,
                retryable: None,
            })
        };
        let push = |out: &mut Vec<Imported>, item: Item| {
            out.push(Imported {
                item,
                terminal: e.terminal,
            })
        };
        match &e.what {
            What::Prompt { text, images } => push(
                &mut out,
                Item::User(User {
                    key: uuid.into(),
                    at,
                    uuid: uuid.into(),
                    text: text.clone(),
                    via: if e.terminal { "terminal" } else { "person" }.into(),
                    images: *images,
                }),
            ),
            What::Interrupted => push(&mut out, notice("info", "interrupted", "Interrupted.".into())),
            What::ApiError(text) => {
                let said = words::failed_turn(text);
                let mut n = notice("error", said.code, said.text);
                if let Item::Notice(n) = &mut n {
                    n.retryable = Some(said.retryable);
                }
                push(&mut out, n);
            }
            What::Compacted => push(
                &mut out,
                notice(
                    "info",
                    "compacted",
                    "The conversation was compacted here: Claude keeps a summary of what came before.".into(),
                ),
            ),
            What::Blocks { message, blocks } => {
                for b in blocks {
                    let item = match b {
                        Block::Text { index, text } => Item::Assistant(Text {
                            key: text_key(message, *index),
                            at,
                            message: message.clone(),
                            text: text.clone(),
                            done: true,
                            truncated: false,
                        }),
                        Block::Thinking { index, text } => Item::Reasoning(Text {
                            key: text_key(message, *index),
                            at,
                            message: message.clone(),
                            text: text.clone(),
                            done: true,
                            truncated: false,
                        }),
                        Block::ToolUse { id, name, input } => {
                            let (input, cut) =
                                cap_strings(input, super::item::INPUT_STRING_CAP);
                            tools.insert(id.clone(), out.len());
                            Item::Tool(Tool {
                                key: tool_key(id),
                                at,
                                call: id.clone(),
                                parent_call: None,
                                name: name.clone(),
                                summary: summary_of(name, &input, ""),
                                input,
                                input_truncated: cut,
                                status: "running".into(),
                                output: None,
                                output_bytes: None,
                                output_truncated: None,
                                exit: None,
                                duration_ms: None,
                                auto: true,
                            })
                        }
                    };
                    push(&mut out, item);
                }
            }
            What::Results(results) => {
                for r in results {
                    let Some(Imported {
                        item: Item::Tool(t),
                        ..
                    }) = tools.get(&r.call).and_then(|i| out.get_mut(*i))
                    else {
                        continue;
                    };
                    t.status = if r.refused {
                        "denied"
                    } else if r.interrupted {
                        "interrupted"
                    } else if r.failed {
                        "failed"
                    } else {
                        "completed"
                    }
                    .into();
                    t.auto = !r.asked;
                    let (kept, cut) = super::item::cut(&r.output, OUTPUT_CAP);
                    t.output_truncated = Some(cut || r.bytes > kept.len() as u64);
                    t.output = Some(kept);
                    t.output_bytes = Some(r.bytes);
                    t.exit = exit_of(&t.name, r.failed, &r.output);
                    if at >= t.at && t.at > 0 {
                        t.duration_ms = Some((at - t.at) as u64);
                    }
                }
            }
            What::Nothing => {}
        }
    }
    out
}

/// What the thread's timeline has: each item's place and the item.
pub type Have = HashMap<String, (f64, Item)>;

/// An item to write: a new one at `seq`, or one the thread has, filled in where it lacked.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    pub item: Item,
    pub seq: f64,
    pub new: bool,
}

/// What the transcript adds to an item the thread already has: a tool's input and output, a
/// message's images. `None` when it adds nothing.
fn fill(have: &Item, got: &Item) -> Option<Item> {
    match (have, got) {
        (Item::Tool(h), Item::Tool(g)) => {
            let mut t = h.clone();
            if t.input.as_object().is_none_or(|o| o.is_empty()) && g.input.is_object() {
                t.input = g.input.clone();
                t.input_truncated = g.input_truncated;
                t.summary = summary_of(&t.name, &t.input, &t.summary);
            }
            if t.output.is_none() && g.output.is_some() {
                t.output = g.output.clone();
                t.output_bytes = g.output_bytes;
                t.output_truncated = g.output_truncated;
            }
            if t.exit.is_none() {
                t.exit = g.exit;
            }
            if t.duration_ms.is_none() {
                t.duration_ms = g.duration_ms;
            }
            if t.status == "running" && g.status != "running" {
                t.status = g.status.clone();
            }
            (t != *h).then_some(Item::Tool(t))
        }
        (Item::User(h), Item::User(g)) if h.images == 0 && g.images > 0 => {
            let mut u = h.clone();
            u.images = g.images;
            Some(Item::User(u))
        }
        (Item::Assistant(h), Item::Assistant(g)) | (Item::Reasoning(h), Item::Reasoning(g))
            if h.text.is_empty() && !g.text.is_empty() =>
        {
            let mut t = h.clone();
            t.text = g.text.clone();
            Some(match have {
                Item::Assistant(_) => Item::Assistant(t),
                _ => Item::Reasoning(t),
            })
        }
        _ => None,
    }
}

/// Where the transcript's items go. One the thread has stays where it is (filled in); a new one
/// goes right after the transcript item before it, or, with none before it, just before the next
/// one the thread has, or by time among the thread's items. `take_all`: the thread's events do
/// not cover the transcript (a session only recall knows), so every item is new; otherwise
/// only what a terminal wrote is, and the rest is Vyre's own, which its events already hold.
pub fn merge(imported: Vec<Imported>, have: &Have, take_all: bool) -> Vec<Placed> {
    let mut seqs: Vec<(f64, i64)> = have.values().map(|(s, i)| (*s, i.at())).collect();
    seqs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let after = |s: f64| seqs.iter().map(|x| x.0).find(|x| *x > s);
    let before = |s: f64| seqs.iter().rev().map(|x| x.0).find(|x| *x < s);
    let mut out = vec![];
    let mut anchor: Option<f64> = None;
    let mut run: Vec<Item> = vec![];
    let place =
        |run: &mut Vec<Item>, anchor: Option<f64>, next: Option<f64>, out: &mut Vec<Placed>| {
            if run.is_empty() {
                return;
            }
            let n = run.len() as f64;
            let (lo, hi) = match (anchor, next) {
                (Some(a), _) => (a, after(a).unwrap_or(a + n + 1.0)),
                (None, Some(b)) => (before(b).unwrap_or(b - n - 1.0), b),
                (None, None) => {
                    // Nothing in common: by time among what the thread has.
                    let at = run[0].at();
                    match seqs.iter().find(|(_, t)| *t > at) {
                        Some((b, _)) => (before(*b).unwrap_or(b - n - 1.0), *b),
                        None => {
                            let last = seqs.last().map(|x| x.0).unwrap_or(0.0);
                            (last, last + n + 1.0)
                        }
                    }
                }
            };
            for (k, item) in run.drain(..).enumerate() {
                out.push(Placed {
                    item,
                    seq: lo + (hi - lo) * (k as f64 + 1.0) / (n + 1.0),
                    new: true,
                });
            }
        };
    for imp in imported {
        let key = imp.item.key().to_string();
        match have.get(&key) {
            Some((seq, existing)) => {
                place(&mut run, anchor, Some(*seq), &mut out);
                if let Some(filled) = fill(existing, &imp.item) {
                    out.push(Placed {
                        item: filled,
                        seq: *seq,
                        new: false,
                    });
                }
                anchor = Some(anchor.map_or(*seq, |a| a.max(*seq)));
            }
            None if take_all || imp.terminal => run.push(imp.item),
            None => {}
        }
    }
    place(&mut run, anchor, None, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::transcripts::entry;
    use serde_json::json;

    fn fixture_items() -> Vec<Imported> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/transcripts/cli-2.1.328.jsonl");
        let file = std::fs::File::open(path).unwrap();
        items(&entry::current_branch(entry::read(
            std::io::BufReader::new(file),
            OUTPUT_CAP,
        )))
    }

    fn user(key: &str, at: i64) -> Item {
        Item::User(User {
            key: key.into(),
            at,
            uuid: key.into(),
            text: key.into(),
            via: "person".into(),
            images: 0,
        })
    }

    #[test]
    fn a_transcript_reads_as_the_items_a_live_session_makes() {
        let items = fixture_items();
        let keys: Vec<&str> = items.iter().map(|i| i.item.key()).collect();
        assert_eq!(
            keys,
            [
                "9a27f184-c9e8-455e-b995-8ba32a8cdc49",
                "m:msg_fake_1:0",
                "4b1eddbf-6b88-4954-826c-0553c4c49449",
                "tool:toolu_fake_4",
                "m:msg_fake_3:0"
            ]
        );
        match &items[3].item {
            Item::Tool(t) => {
                assert_eq!(
                    (t.summary.as_str(), t.status.as_str()),
                    ("ls -la", "completed")
                );
                assert_eq!(t.exit, Some(0));
                assert!(t.output.as_deref().unwrap().starts_with("total 8"));
                assert!(t.auto, "allowed by a rule, not a person");
                assert!(t.duration_ms.is_some());
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(exit_of("Bash", true, "Exit code 2\nno such file"), Some(2));
    }

    /// A session typed in Claude Code's terminal (bench/ui/compare.mjs): a command run without
    /// asking, one allowed, a file written after asking, one refused with Esc, an API error.
    #[test]
    fn a_terminal_session_reads_with_who_said_yes_and_no() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/transcripts/cli-2.1.328-terminal.jsonl");
        let file = std::fs::File::open(path).unwrap();
        let items = items(&entry::current_branch(entry::read(
            std::io::BufReader::new(file),
            OUTPUT_CAP,
        )));
        let tools: Vec<(String, String, bool)> = items
            .iter()
            .filter_map(|i| match &i.item {
                Item::Tool(t) => Some((t.summary.clone(), t.status.clone(), t.auto)),
                _ => None,
            })
            .collect();
        let row = |s: &str, status: &str, auto: bool| (s.to_string(), status.to_string(), auto);
        assert_eq!(tools[0], row("echo compare-out", "completed", true));
        assert_eq!(tools[1], row("touch allowed.txt", "completed", false));
        assert_eq!(tools[2].1, "completed", "the file written: {:?}", tools[2]);
        assert!(!tools[2].2, "it was asked about");
        assert_eq!(
            tools[3],
            row("touch denied.txt", "denied", false),
            "refused with Esc: denied by the person, not failed and run without asking"
        );
        assert!(
            items
                .iter()
                .any(|i| matches!(&i.item, Item::Notice(n) if n.code == "api_error")),
            "the API's error is a notice"
        );
    }

    #[test]
    fn a_thread_with_nothing_takes_everything_in_order() {
        let placed = merge(fixture_items(), &Have::new(), true);
        assert_eq!(placed.len(), 5);
        assert!(placed.windows(2).all(|w| w[0].seq < w[1].seq));
        assert!(placed.iter().all(|p| p.new));
    }

    #[test]
    fn vyres_own_turns_are_filled_in_and_a_terminals_go_where_they_were() {
        // The thread's events hold u2 (Vyre's turn) with a tool lacking its output; the
        // transcript also has u1 and t1 typed in a terminal before, and u3 after.
        let mut have = Have::new();
        have.insert("u2".into(), (100.0, user("u2", 2000)));
        let bare = Item::Tool(Tool {
            key: "tool:c".into(),
            at: 2100,
            call: "c".into(),
            parent_call: None,
            name: "Bash".into(),
            input: json!({}),
            input_truncated: false,
            summary: String::new(),
            status: "completed".into(),
            output: None,
            output_bytes: None,
            output_truncated: None,
            exit: None,
            duration_ms: None,
            auto: true,
        });
        have.insert("tool:c".into(), (105.0, bare.clone()));
        have.insert("n:107".into(), (107.0, user("n:107", 2200)));
        let mut full = bare.clone();
        if let Item::Tool(t) = &mut full {
            t.input = json!({ "command": "ls" });
            t.output = Some("a".into());
        }
        let imported = vec![
            Imported {
                item: user("u1", 1000),
                terminal: true,
            },
            Imported {
                item: user("t1", 1100),
                terminal: true,
            },
            Imported {
                item: user("u2", 2000),
                terminal: false,
            },
            Imported {
                item: full,
                terminal: false,
            },
            Imported {
                item: user("sdk-only", 2150),
                terminal: false,
            },
            Imported {
                item: user("u3", 3000),
                terminal: true,
            },
        ];
        let placed = merge(imported, &have, false);
        let got: Vec<(&str, bool)> = placed.iter().map(|p| (p.item.key(), p.new)).collect();
        assert_eq!(
            got,
            [("u1", true), ("t1", true), ("tool:c", false), ("u3", true)]
        );
        assert!(placed[0].seq < placed[1].seq && placed[1].seq < 100.0);
        assert!(
            placed[3].seq > 105.0 && placed[3].seq < 107.0,
            "right after the tool"
        );
        match &placed[2].item {
            Item::Tool(t) => {
                assert_eq!((t.summary.as_str(), t.output.as_deref()), ("ls", Some("a")))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn with_nothing_in_common_the_transcript_goes_by_time() {
        let mut have = Have::new();
        have.insert("late".into(), (50.0, user("late", 5000)));
        let placed = merge(
            vec![Imported {
                item: user("early", 1000),
                terminal: true,
            }],
            &have,
            false,
        );
        assert!(placed[0].seq < 50.0);
        let placed = merge(
            vec![Imported {
                item: user("later", 9000),
                terminal: true,
            }],
            &have,
            false,
        );
        assert!(placed[0].seq > 50.0);
    }
}
