//! A thread's one timeline (issue 18) on the real CLI: everything that happened, in order, the
//! same after vyred restarts, and the same when a surface builds it from a page and the
//! `thread.item`/`thread.text` events after it.

use serde_json::{Value, json};
use vyre::surfaces::client::EventStream;

use crate::adopt::{quiet, terminal_session, wait_sessions};
use crate::support::*;
use crate::threads_e2e::*;

/// Every event seen so far, kept as a surface would keep its stream.
struct Seen {
    stream: EventStream,
    all: Vec<Value>,
}

impl Seen {
    async fn until(&mut self, f: impl Fn(&Value) -> bool) -> Vec<Value> {
        let got = events_until(&mut self.stream, f).await;
        self.all.extend(got.iter().cloned());
        got
    }
    async fn finished(&mut self, thread: &str) -> Vec<Value> {
        self.until(|e| e["type"] == "thread.finished" && e["thread"] == thread)
            .await
    }
}

/// What a surface does with its thread's events after a page: upsert `thread.item` by key,
/// append `thread.text` deltas to the item of their message, cut after a rewind.
fn apply(items: &mut Vec<Value>, e: &Value) {
    let p = &e["payload"];
    match e["type"].as_str() {
        Some("thread.item") => {
            let item = p["item"].clone();
            match items.iter_mut().find(|i| i["key"] == item["key"]) {
                Some(have) => *have = item,
                None => items.push(item),
            }
        }
        Some("thread.text") => {
            let key = format!(
                "m:{}:{}",
                p["message"].as_str().unwrap_or_default(),
                p["block"].as_u64().unwrap_or(0)
            );
            if let (Some(it), Some(d)) = (
                items.iter_mut().find(|i| i["key"] == key),
                p["delta"].as_str(),
            ) {
                let text = format!("{}{d}", it["text"].as_str().unwrap_or_default());
                it["text"] = json!(text);
            }
        }
        Some("thread.rewound") => {
            if let Some(at) = items.iter().position(|i| i["key"] == p["uuid"]) {
                items.truncate(at + 1);
            }
        }
        _ => {}
    }
}

async fn timeline(r: &vyre::surfaces::client::Client, thread: &str) -> Value {
    r.call(
        "threads.timeline",
        &json!({ "thread": thread, "limit": 500 }),
    )
    .await
    .unwrap()
}

fn items(page: &Value) -> Vec<Value> {
    page["items"].as_array().unwrap().clone()
}

/// `kind:first words` of each item: the order at a glance.
fn outline(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .map(|i| {
            let what = match i["kind"].as_str().unwrap() {
                "user" => format!(
                    "{} {}",
                    i["via"].as_str().unwrap(),
                    i["text"].as_str().unwrap()
                ),
                "assistant" | "reasoning" => i["text"].as_str().unwrap().chars().take(24).collect(),
                "tool" => format!(
                    "{} {} {}",
                    i["name"].as_str().unwrap(),
                    i["summary"].as_str().unwrap(),
                    i["status"].as_str().unwrap()
                ),
                "ask" => format!(
                    "{} {}",
                    i["tool"].as_str().unwrap(),
                    i["decision"].as_str().unwrap_or("open")
                ),
                "notice" => i["code"].as_str().unwrap().to_string(),
                other => other.to_string(),
            };
            format!("{}: {what}", i["kind"].as_str().unwrap())
        })
        .collect()
}

fn find(items: &[Value], f: impl Fn(&Value) -> bool) -> &Value {
    items.iter().find(|i| f(i)).expect("the item")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn the_timeline_lists_a_thread_in_order_the_same_after_a_restart_and_as_its_events_say() {
    let r = rig("timeline").await;
    let Rig {
        home,
        api: _api,
        vyred,
        sock,
        work,
    } = r;
    let mut seen = Seen {
        stream: sock.events("types=thread.*,ask.*", None).await.unwrap(),
        all: vec![],
    };
    let thread = sock
        .call(
            "threads.start",
            &json!({ "cwd": work, "text": "hello there" }),
        )
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    seen.finished(&thread).await;
    let send = |text: &str, mode: &str| {
        let input = json!({ "thread": thread, "text": text, "mode": mode });
        let sock = &sock;
        async move { sock.call("threads.send", &input).await.unwrap() }
    };
    // A read-only command runs without asking, with its output.
    send("RUNBASH echo timeline-out", "steer").await;
    seen.finished(&thread).await;
    // One command allowed, one denied with a reason.
    for (words, decision) in [
        ("RUNBASH touch allowed.txt", "allow"),
        ("RUNBASH touch denied.txt", "deny"),
    ] {
        send(words, "steer").await;
        let raised = seen.until(|e| e["type"] == "ask.raised").await;
        let ask = raised.last().unwrap()["payload"]["ask"].clone();
        let mut answer = json!({ "ask": ask, "decision": decision });
        if decision == "deny" {
            answer["message"] = json!("not that file");
        }
        sock.call("threads.answer", &answer).await.unwrap();
        seen.finished(&thread).await;
    }
    // A steer while a command runs.
    send("RUNBASH sleep 2; echo slept", "steer").await;
    seen.until(|e| e["type"] == "thread.tool" && e["payload"]["phase"] == "started")
        .await;
    let steer = send("and mention the weather", "steer").await;
    assert_eq!(steer["via"], "steer");
    seen.finished(&thread).await;
    // A slow reply, a message queued for after it, an interrupt: the queued one runs next.
    send("count SLOWLY please", "steer").await;
    seen.until(|e| e["type"] == "thread.text" && e["payload"]["delta"].is_string())
        .await;
    // A surface opens the thread mid-stream: its page, then the events after it.
    let mid = timeline(&sock, &thread).await;
    let queued = send("after the interrupt", "queue").await;
    assert_eq!(queued["via"], "queued");
    sock.call("threads.interrupt", &json!({ "thread": thread }))
        .await
        .unwrap();
    seen.finished(&thread).await;
    seen.finished(&thread).await;

    let page = timeline(&sock, &thread).await;
    let got = items(&page);
    // How far the slow reply got before the interrupt depends on timing (one delta or more
    // under load); that it starts, and is cut, is what is checked.
    let said: Vec<String> = outline(&got)
        .into_iter()
        .map(|l| match l.starts_with("assistant: slow0 ") {
            true => "assistant: slow0 ...".to_string(),
            false => l,
        })
        .collect();
    assert_eq!(
        said,
        [
            "user: person hello there",
            "assistant: reply to [hello there]",
            "user: person RUNBASH echo timeline-out",
            "tool: Bash echo timeline-out completed",
            "assistant: tool said: timeline-out",
            "user: person RUNBASH touch allowed.txt",
            "tool: Bash touch allowed.txt completed",
            "ask: Bash allow",
            "assistant: tool said: (Bash complet",
            "user: person RUNBASH touch denied.txt",
            "tool: Bash touch denied.txt denied",
            "ask: Bash deny",
            "assistant: tool said: not that file",
            "user: person RUNBASH sleep 2; echo slept",
            "tool: Bash sleep 2; echo slept completed",
            "user: steer and mention the weather",
            "assistant: tool said: slept",
            "user: person count SLOWLY please",
            "assistant: slow0 ...",
            "notice: interrupted",
            "user: queued after the interrupt",
            "assistant: reply to [after the inte",
        ],
        "{got:#?}"
    );
    let echo = find(&got, |i| i["summary"] == "echo timeline-out");
    assert_eq!(echo["input"]["command"], "echo timeline-out");
    assert_eq!(echo["output"], "timeline-out");
    assert_eq!(
        (echo["exit"].as_i64(), echo["auto"].as_bool()),
        (Some(0), Some(true))
    );
    assert!(echo["duration_ms"].is_u64());
    let allowed = find(&got, |i| i["summary"] == "touch allowed.txt");
    assert_eq!(allowed["auto"], false, "it was asked");
    let denied = find(&got, |i| i["kind"] == "ask" && i["decision"] == "deny");
    assert_eq!(
        (denied["status"].as_str(), denied["message"].as_str()),
        (Some("answered"), Some("not that file"))
    );
    assert_eq!(denied["input"]["command"], "touch denied.txt");
    assert!(
        got.iter()
            .all(|i| i["kind"] != "assistant" || i["done"] == true),
        "nothing left streaming"
    );
    assert!(page["before"].is_null());
    let output = sock
        .call(
            "threads.output",
            &json!({ "thread": thread, "call": echo["call"] }),
        )
        .await
        .unwrap();
    assert_eq!(
        (output["output"].as_str(), output["truncated"].as_bool()),
        (Some("timeline-out"), Some(false))
    );

    // Page + the events after it is the timeline: a surface that opened mid-stream ends where a
    // reload does, item for item. So does one that folds every event from the start.
    let mut built = items(&mid);
    let after = mid["last_event"].as_i64().unwrap();
    for e in seen
        .all
        .iter()
        .filter(|e| e["id"].as_i64().unwrap() > after)
    {
        apply(&mut built, e);
    }
    assert_eq!(built, got, "page + events = the timeline");
    let mut from_start = vec![];
    for e in &seen.all {
        apply(&mut from_start, e);
    }
    assert_eq!(from_start, got, "the events alone = the timeline");

    // Paging back from the newest.
    let newest = sock
        .call("threads.timeline", &json!({ "thread": thread, "limit": 5 }))
        .await
        .unwrap();
    assert_eq!(items(&newest), got[got.len() - 5..]);
    let older = sock
        .call(
            "threads.timeline",
            &json!({ "thread": thread, "limit": 500, "before": newest["before"] }),
        )
        .await
        .unwrap();
    assert_eq!(items(&older), got[..got.len() - 5]);

    // vyred restarts: the same timeline.
    vyred.stop().await;
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    assert_eq!(
        items(&timeline(&sock, &thread).await),
        got,
        "the same after a restart"
    );
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn vyres_own_greeting_is_marked_internal_and_nobody_else_may_mark_words_so() {
    let r = rig("timeline-internal").await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    r.sock
        .call(
            "onboarding.you",
            &json!({ "name": "Sam", "assistant_name": "Juno" }),
        )
        .await
        .unwrap();
    let done = r.sock.call("onboarding.finish", &json!({})).await.unwrap();
    let thread = done["thread"]
        .as_str()
        .expect("the greeting started")
        .to_string();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let page = timeline(&r.sock, &thread).await;
    let got = items(&page);
    assert_eq!(got[0]["kind"], "user");
    assert_eq!(got[0]["via"], "internal", "{got:#?}");
    assert!(got[0]["text"].as_str().unwrap().contains("Greet them"));
    assert_eq!(got[1]["kind"], "assistant");

    // A person (or a session) cannot hide words as Vyre's own.
    for (tool, input) in [
        (
            "threads.send",
            json!({ "thread": thread, "text": "sneaky", "internal": true }),
        ),
        (
            "agents.ask",
            json!({ "agent": "juno", "text": "sneaky", "internal": true }),
        ),
        (
            "threads.start",
            json!({ "cwd": r.work, "text": "sneaky", "internal": true }),
        ),
    ] {
        let err = r.sock.call(tool, &input).await.unwrap_err().to_string();
        assert!(err.contains("internal_for_modules"), "{tool}: {err}");
    }
    let after = items(&timeline(&r.sock, &thread).await);
    assert_eq!(after, got, "nothing was sent");
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_terminal_sessions_history_is_in_its_timeline_before_and_after_it_is_adopted() {
    let r = rig("timeline-adopt").await;
    let folder = r.home.dir.join("work/walrus-project");
    let id = "5d9e8a10-2222-4a2b-9c3d-000000000001";
    terminal_session(&r, &folder, id, "RUNBASH echo from-the-terminal");
    wait_sessions(&r, 1).await;
    quiet(&r, id);
    // Only recall knows it: the timeline is the transcript's, with the tool call and output.
    let before = items(&timeline(&r.sock, id).await);
    assert_eq!(
        outline(&before),
        [
            "user: terminal RUNBASH echo from-the-terminal",
            "tool: Bash echo from-the-terminal completed",
            "assistant: tool said: from-the-term",
        ],
        "{before:#?}"
    );
    assert_eq!(before[1]["output"], "from-the-terminal");

    // Adopted by a message: the terminal's turns first, then Vyre's, nothing twice.
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": id, "text": "and now from vyre" }),
        )
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let after = items(&timeline(&r.sock, id).await);
    assert_eq!(after[..3], before[..], "{after:#?}");
    assert_eq!(
        outline(&after[3..]),
        [
            "user: person and now from vyre",
            "assistant: reply to [and now from v"
        ]
    );
    let err = r
        .sock
        .call(
            "threads.timeline",
            &json!({ "thread": "5d9e8a10-2222-4a2b-9c3d-00000000ffff" }),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown_thread"), "{err}");
    r.vyred.stop().await;
}
