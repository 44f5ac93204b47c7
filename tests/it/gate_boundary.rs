//! Credentials at the boundary on the real CLI (spec 7.7, floor rule 8, issue 24): a session
//! asks the Gate to send a request with `{{vault:NAME}}` where its credential goes; the person
//! sees the request as written and approves it; the service gets the value, the session's model
//! gets the answer with the reference in its place, and the value is nowhere else: not in an
//! event, a log, the store in the clear or the transcript. What the session may not do is
//! refused before anyone is asked, and a call the person did not approve sends nothing.

use std::sync::{Arc, Mutex};

use axum::http::HeaderMap;
use serde_json::{Value, json};
use vyre::surfaces::client::Client;

use crate::threads_e2e::*;

const SERVER: &str = "mcp__plugin_vyre_vyre__";
const VALUE: &str = "svc_live_4f9c2b7e1d8a6b3c5e7f";

/// A service on loopback that keeps what it was sent and echoes the credential back, as a
/// careless API would.
async fn service() -> (u16, Arc<Mutex<Vec<(String, String)>>>) {
    let got: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let keep = got.clone();
    let app = axum::Router::new().fallback(move |headers: HeaderMap, body: String| {
        let keep = keep.clone();
        async move {
            let auth = headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string();
            keep.lock().unwrap().push((auth.clone(), body.clone()));
            (
                [("x-echo", auth.clone())],
                axum::Json(json!({ "you_sent": auth, "body": body })),
            )
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (port, got)
}

fn call(input: Value) -> String {
    format!("CALLTOOL {SERVER}gate_request {input}")
}

/// The text of the last tool result a request to the model carries.
fn tool_result(request: &Value) -> String {
    let mut last = String::new();
    for m in request["messages"].as_array().into_iter().flatten() {
        for block in m["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                last = block["content"].to_string();
            }
        }
    }
    last
}

/// Every file under `dir` that holds `needle`.
fn holding(dir: &std::path::Path, needle: &[u8]) -> Vec<std::path::PathBuf> {
    let mut found = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let Ok(meta) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(p);
            } else if meta.is_file()
                && let Ok(bytes) = std::fs::read(&p)
                && bytes.windows(needle.len()).any(|w| w == needle)
            {
                found.push(p);
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_request_gets_its_credential_at_the_boundary_and_the_session_never_sees_it() {
    let (port, got) = service().await;
    let r = rig_with_harness_configured(
        "gate-boundary",
        json!({ "gate": { "local": [format!("127.0.0.1:{port}")] } }),
    )
    .await;
    for (name, value) in [("svc-token", VALUE), ("other-token", "other_value_123456")] {
        r.sock
            .call("vault.put", &json!({ "name": name, "value": value }))
            .await
            .unwrap();
    }
    r.sock
        .call("vault.grant", &json!({ "item": "svc-token", "to": "gate" }))
        .await
        .unwrap();
    let mut stream = r
        .sock
        .events("types=thread.*,ask.*,gate.*", None)
        .await
        .unwrap();
    let thread = start_thread(&r).await;
    let url = format!("http://127.0.0.1:{port}/hook");
    let request = json!({
        "method": "POST",
        "url": url,
        "headers": { "Authorization": "Bearer {{vault:svc-token}}" },
        "body": "the walrus report",
    });
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": call(request.clone()) }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| {
        matches!(e["type"].as_str(), Some("gate.held" | "ask.raised"))
    })
    .await;
    assert_eq!(events.last().unwrap()["type"], "gate.held", "{events:?}");
    let item = r
        .sock
        .call("gate.held", &json!({ "thread": thread }))
        .await
        .unwrap()[0]
        .clone();
    // What the person sees: where it goes, which item the Gate adds, the words; no value.
    let destination = item["destination"].as_str().unwrap();
    assert!(
        destination.starts_with(&format!("POST {url}")) && destination.contains("svc-token"),
        "{destination}"
    );
    assert!(
        item["content"]
            .as_str()
            .unwrap()
            .contains("Authorization: Bearer {{vault:svc-token}}"),
        "{item}"
    );
    assert_eq!(item["field"], "body");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(
        got.lock().unwrap().is_empty(),
        "nothing sent before approval"
    );

    r.sock
        .call(
            "gate.approve",
            &json!({ "item": item["item"], "edited": "the reviewed walrus report" }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    // The service got the value and the edited words, once.
    assert_eq!(
        *got.lock().unwrap(),
        vec![(
            format!("Bearer {VALUE}"),
            "the reviewed walrus report".to_string()
        )]
    );
    let sent = of_type(&events, "gate.sent");
    assert_eq!(sent.len(), 1, "{events:?}");
    assert_eq!(sent[0]["payload"]["status"], 200);
    assert_eq!(sent[0]["payload"]["vault"], json!(["svc-token"]));
    // The model read the answer with the reference where the service echoed the value.
    let told = r.api.message_requests().last().unwrap().body.clone();
    let result = tool_result(&told);
    assert!(
        result.contains("you_sent") && result.contains("Bearer {{vault:svc-token}}"),
        "{result}"
    );
    assert!(!told.to_string().contains(VALUE), "{told}");

    // The session's own socket, used as a hostile session would: the approval was used once,
    // and a call with no approval sends nothing.
    let socket = r.home.vyre_home().join("s").join(format!("{thread}.sock"));
    let own = Client::socket(&socket);
    let mut again = request.clone();
    again["body"] = json!("the reviewed walrus report");
    for input in [again, request.clone()] {
        let refused = own.call("gate.request", &input).await.unwrap_err();
        assert_eq!(refused.code(), Some("not_approved"), "{refused}");
    }
    assert_eq!(got.lock().unwrap().len(), 1);

    // Refused before anyone is asked: an item not granted to the Gate, a command that names an
    // item, an address on this machine the person did not list.
    let mut not_granted = request.clone();
    not_granted["headers"]["Authorization"] = json!("Bearer {{vault:other-token}}");
    let unlisted = json!({ "method": "GET", "url": "http://127.0.0.1:1/admin" });
    for (text, says) in [
        (call(not_granted), "not granted to the Gate"),
        (
            format!("RUNBASH curl -H 'Authorization: Bearer {{{{vault:svc-token}}}}' {url}"),
            "never holds a vault value",
        ),
        (call(unlisted), "private network"),
    ] {
        r.sock
            .call("threads.send", &json!({ "thread": thread, "text": text }))
            .await
            .unwrap();
        let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
        assert!(
            of_type(&events, "gate.held").is_empty() && of_type(&events, "ask.raised").is_empty(),
            "{text}: {events:?}"
        );
        let told = r.api.message_requests().last().unwrap().body.to_string();
        assert!(told.contains(says), "{text}: {told}");
    }
    assert_eq!(got.lock().unwrap().len(), 1, "nothing more was sent");

    // The value is nowhere in the clear: not the events, the store, the logs, the transcripts.
    r.vyred.stop().await;
    let leaks = holding(&r.home.dir, VALUE.as_bytes());
    assert!(leaks.is_empty(), "the value is in {leaks:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn an_env_set_granted_to_an_agent_is_added_to_its_sessions_requests_and_no_other_sessions() {
    let (port, got) = service().await;
    let r = rig_with_harness_configured(
        "gate-agent",
        json!({ "gate": { "local": [format!("127.0.0.1:{port}")] } }),
    )
    .await;
    // An env set, granted to the agent scout and not to the Gate.
    r.sock
        .call(
            "vault.put",
            &json!({ "name": "deploy", "kind": "env", "vars": { "DEPLOY_TOKEN": VALUE, "REGION": "eu-west-1" } }),
        )
        .await
        .unwrap();
    r.sock
        .call("agents.create", &json!({ "name": "scout" }))
        .await
        .unwrap();
    r.sock
        .call(
            "vault.grant",
            &json!({ "item": "deploy", "to": "agent:scout" }),
        )
        .await
        .unwrap();
    let mut stream = r
        .sock
        .events("types=thread.*,ask.*,gate.*", None)
        .await
        .unwrap();
    let request = json!({
        "method": "POST",
        "url": format!("http://127.0.0.1:{port}/deploy?region={{{{vault:deploy/REGION}}}}"),
        "headers": { "Authorization": "Bearer {{vault:deploy/DEPLOY_TOKEN}}" },
        "body": "ship it",
    });

    // A session that is not scout's: refused before anyone is asked, nothing sent.
    let thread = start_thread(&r).await;
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": call(request.clone()) }),
        )
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        of_type(&events, "gate.held").is_empty() && of_type(&events, "ask.raised").is_empty(),
        "{events:?}"
    );
    let told = r.api.message_requests().last().unwrap().body.to_string();
    assert!(told.contains("not granted to the Gate"), "{told}");

    // Scout's own session: held for the person, then sent with both variables filled in.
    let asked = r
        .sock
        .call(
            "agents.ask",
            &json!({ "agent": "scout", "text": call(request.clone()) }),
        )
        .await
        .unwrap();
    let scouts = asked["thread"].as_str().unwrap().to_string();
    let events = events_until(&mut stream, |e| {
        matches!(e["type"].as_str(), Some("gate.held" | "ask.raised"))
    })
    .await;
    assert_eq!(events.last().unwrap()["type"], "gate.held", "{events:?}");
    let item = r
        .sock
        .call("gate.held", &json!({ "thread": scouts }))
        .await
        .unwrap()[0]
        .clone();
    assert!(
        item["destination"].as_str().unwrap().contains("deploy"),
        "{item}"
    );
    assert!(
        got.lock().unwrap().is_empty(),
        "nothing sent before approval"
    );
    r.sock
        .call("gate.approve", &json!({ "item": item["item"] }))
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| {
        e["type"] == "thread.finished" && e["thread"] == scouts.as_str()
    })
    .await;
    assert_eq!(
        *got.lock().unwrap(),
        vec![(format!("Bearer {VALUE}"), "ship it".to_string())]
    );
    let sent = of_type(&events, "gate.sent");
    assert_eq!(sent[0]["payload"]["status"], 200, "{events:?}");
    let result = tool_result(&r.api.message_requests().last().unwrap().body);
    assert!(
        result.contains("Bearer {{vault:deploy/DEPLOY_TOKEN}}") && !result.contains(VALUE),
        "{result}"
    );
    // The use is the agent's, on record.
    let listed = r.sock.call("vault.list", &json!({})).await.unwrap();
    let deploy = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "deploy")
        .unwrap()
        .clone();
    assert_eq!(deploy["last_used_by"], "agent:scout", "{deploy}");
    r.vyred.stop().await;
    let leaks = holding(&r.home.dir, VALUE.as_bytes());
    assert!(leaks.is_empty(), "the value is in {leaks:?}");
}
