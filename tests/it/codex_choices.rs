//! What a person chooses for Codex threads, on the real Codex CLI against the fake Responses
//! API: how hard its model thinks (`effort`), the purposes whose sessions run on it, and what
//! its tokens cost (`sessions.prices`).

use serde_json::{Value, json};

use crate::codex::{codex_rig, codex_rig_full};
use crate::threads_e2e::*;

/// How hard Codex's model thinks: asked at the start, it is the turn's reasoning effort; changed,
/// from the next turn; kept for a resume; back to the default, the model's own default; one
/// Codex does not offer is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Codex CLI: tests/run, or VYRE_TEST_CODEX=... cargo test -- --include-ignored"]
async fn a_codex_threads_effort_is_each_turns_reasoning_effort() {
    let (api, r) = codex_rig("codex-effort").await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let providers = r.sock.call("sessions.providers", &json!({})).await.unwrap();
    let codex = providers
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "codex")
        .unwrap();
    assert_eq!(
        codex["efforts"],
        json!(["low", "medium", "high", "xhigh", "max", "ultra"])
    );
    let wrong = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "provider": "codex", "effort": "extreme" }),
        )
        .await
        .unwrap_err();
    assert_eq!(wrong.code(), Some("invalid_input"), "{wrong}");
    let input = json!({ "cwd": r.work, "provider": "codex", "effort": "high", "text": "think" });
    let started = r.sock.call("threads.start", &input).await.unwrap();
    let thread = started["thread"].as_str().unwrap().to_string();
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    // The turn's effort, as Codex says it in the request's turn metadata. (Codex 0.171 keeps
    // the effort a thread's context window began with in the request's own `reasoning`, with
    // `"context": "all_turns"`, and takes a change for the turn: measured by driving it
    // directly, with `turn/start`'s `effort` and with `thread/settings/update` alike.)
    let effort = || {
        let body = api.responses_requests().pop().unwrap().body;
        let turn = body["client_metadata"]["x-codex-turn-metadata"]
            .as_str()
            .unwrap_or("{}")
            .to_string();
        serde_json::from_str::<serde_json::Value>(&turn).unwrap()["reasoning_effort"].clone()
    };
    assert_eq!(effort(), "high");
    let first = api.responses_requests().pop().unwrap().body;
    assert_eq!(first["reasoning"]["effort"], "high");

    r.sock
        .call(
            "threads.effort",
            &json!({ "thread": thread, "effort": "max" }),
        )
        .await
        .unwrap();
    send_until_finished(&r, &mut stream, &thread, "harder").await;
    assert_eq!(effort(), "max");
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(got["effort"], "max");
    r.sock
        .call("threads.stop", &json!({ "thread": thread }))
        .await
        .unwrap();
    events_until(&mut stream, |e| e["type"] == "thread.stopped").await;
    send_until_finished(&r, &mut stream, &thread, "resumed").await;
    assert_eq!(effort(), "max", "kept for the resumed session");
    // A new process begins a new context: the model's requests take it too.
    let resumed = api.responses_requests().pop().unwrap().body;
    assert_eq!(resumed["reasoning"]["effort"], "max");

    r.sock
        .call("threads.effort", &json!({ "thread": thread }))
        .await
        .unwrap();
    send_until_finished(&r, &mut stream, &thread, "as usual").await;
    let default = effort();
    assert!(
        default.is_string() && default != "max",
        "back to the model's default: {default}"
    );
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(got["effort"], serde_json::Value::Null);
    r.vyred.stop().await;
}

/// A purpose can run on Codex (issue 28): a person's choice names the provider, and a start of
/// that purpose naming none (as Lumen's, with purpose `capsule`) runs there with Codex's own
/// default model; one naming Claude Code still gets the purpose's Claude model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Codex CLI: tests/run, or VYRE_TEST_CODEX=... cargo test -- --include-ignored"]
async fn a_purposes_sessions_run_on_the_provider_a_person_chose_for_it() {
    let (_api, r) = codex_rig("codex-purpose").await;
    let wrong = r
        .sock
        .call(
            "sessions.models.set",
            &json!({ "purpose": "capsule", "provider": "nosuch" }),
        )
        .await
        .unwrap_err();
    assert_eq!(wrong.code(), Some("invalid_input"), "{wrong}");
    assert!(wrong.to_string().contains("claude, codex"), "{wrong}");
    let set = r
        .sock
        .call(
            "sessions.models.set",
            &json!({ "purpose": "capsule", "provider": "codex" }),
        )
        .await
        .unwrap();
    assert_eq!(
        set["capsule"],
        json!({ "model": null, "provider": "codex", "source": "set" })
    );
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let input = json!({ "cwd": r.work, "purpose": "capsule", "text": "hello capsule" });
    r.sock.call("threads.start", &input).await.unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let started = &of_type(&events, "thread.started")[0]["payload"];
    assert_eq!(
        (started["provider"].as_str(), started["model"].as_str()),
        (Some("codex"), None),
        "{started}"
    );
    let text: String = of_type(&events, "thread.text")
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert_eq!(text, "reply to [hello capsule]");

    // A start naming Claude Code runs there, with the purpose's Claude default.
    let input = json!({ "cwd": r.work, "purpose": "capsule", "provider": "claude", "text": "hi" });
    r.sock.call("threads.start", &input).await.unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let started = &of_type(&events, "thread.started")[0]["payload"];
    assert_eq!(
        (started["provider"].as_str(), started["model"].as_str()),
        (Some("claude"), Some("haiku")),
        "{started}"
    );
    // Cleared, the purpose is Claude Code's again.
    let cleared = r
        .sock
        .call("sessions.models.set", &json!({ "purpose": "capsule" }))
        .await
        .unwrap();
    assert_eq!(cleared["capsule"]["provider"], "claude");
    r.vyred.stop().await;
}

/// What a Codex turn costs is the person's price for its model (`sessions.prices`), applied to
/// the tokens Codex reports: the fresh input, the cached input and the output; a model with no
/// price costs nothing said, its tokens still counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Codex CLI: tests/run, or VYRE_TEST_CODEX=... cargo test -- --include-ignored"]
async fn a_codex_turn_costs_what_the_person_priced_its_model_at() {
    // Codex 0.171.0's default model, the one it opens a thread on when none is chosen.
    let price = json!({ "input": 1.0, "cached_input": 0.5, "output": 10.0 });
    let prices = json!({ "prices": { "gpt-6.2-sol": price } });
    let (_api, r) = codex_rig_full("codex-prices", false, prices).await;
    let mut stream = r.sock.events("types=thread.*", None).await.unwrap();
    let input = json!({ "cwd": r.work, "provider": "codex", "text": "what does this cost" });
    let started = r.sock.call("threads.start", &input).await.unwrap();
    let thread = started["thread"].as_str().unwrap().to_string();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let finished = &of_type(&events, "thread.finished")[0]["payload"];
    // The fake API's usage: 100 input tokens of which 20 cached, 12 output.
    let one = (80.0 * 1.0 + 20.0 * 0.5 + 12.0 * 10.0) / 1_000_000.0;
    let cost = finished["cost_usd"].as_f64().unwrap();
    assert!((cost - one).abs() < 1e-12, "{finished}");
    assert_eq!(finished["tokens"]["cache_read_input_tokens"], 20);
    send_until_finished(&r, &mut stream, &thread, "and again").await;
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    let total = got["total_cost_usd"].as_f64().unwrap();
    assert!((total - 2.0 * one).abs() < 1e-12, "{got}");

    // Another model, with no price: its turn's tokens count, and it is said to be unpriced,
    // never to have cost $0; the session's total stays what was priced.
    r.sock
        .call(
            "threads.model",
            &json!({ "thread": thread, "model": "gpt-unpriced" }),
        )
        .await
        .unwrap();
    let events = send_until_finished(&r, &mut stream, &thread, "priceless").await;
    let finished = &of_type(&events, "thread.finished")[0]["payload"];
    assert_eq!(finished["cost_usd"], Value::Null, "{finished}");
    assert_eq!(finished["priced"], false, "{finished}");
    assert!((finished["total_cost_usd"].as_f64().unwrap() - 2.0 * one).abs() < 1e-12);
    assert_eq!(finished["tokens"]["output_tokens"], 12, "{finished}");
    // The usage summary counts it apart: three turns, two priced, one not.
    let summary = wait_for_summary(&r, 3).await;
    assert_eq!(summary["total"]["unpriced_turns"], 1, "{summary}");
    assert!((summary["total"]["cost_usd"].as_f64().unwrap() - 2.0 * one).abs() < 1e-12);

    // Stopped and resumed on the priced model: Codex counts from nothing again, the thread
    // counts on from what it had cost.
    r.sock
        .call(
            "threads.model",
            &json!({ "thread": thread, "model": "gpt-6.2-sol" }),
        )
        .await
        .unwrap();
    r.sock
        .call("threads.stop", &json!({ "thread": thread }))
        .await
        .unwrap();
    let events = send_until_finished(&r, &mut stream, &thread, "back again").await;
    let finished = &of_type(&events, "thread.finished")[0]["payload"];
    assert!((finished["cost_usd"].as_f64().unwrap() - one).abs() < 1e-12);
    assert!((finished["total_cost_usd"].as_f64().unwrap() - 3.0 * one).abs() < 1e-12);

    // An agent's budget is kept only where turns are priced: on Codex's own default model (not
    // Vyre's to know) it is refused, on a priced model it runs.
    r.sock
        .call(
            "agents.create",
            &json!({ "name": "cody", "auth": { "budget_usd": 1.0 } }),
        )
        .await
        .unwrap();
    let agent = json!({ "cwd": r.work, "provider": "codex", "agent": "cody", "text": "hi" });
    let err = r.sock.call("threads.start", &agent).await.unwrap_err();
    assert_eq!(err.code(), Some("budget_unkept"), "{err}");
    let mut priced = agent.clone();
    priced["model"] = json!("gpt-6.2-sol");
    r.sock.call("threads.start", &priced).await.unwrap();
    let events = events_until(&mut stream, |e| {
        e["type"] == "thread.finished" && e["payload"]["priced"] == true
    })
    .await;
    assert!(
        of_type(&events, "thread.finished")
            .iter()
            .all(|f| f["payload"]["ok"] == true)
    );
    // Switched to a model with no price, its turn runs unpriced, and then nothing more does.
    let cody = events.last().unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    r.sock
        .call(
            "threads.model",
            &json!({ "thread": cody, "model": "gpt-unpriced" }),
        )
        .await
        .unwrap();
    send_until_finished(&r, &mut stream, &cody, "priceless").await;
    let send = json!({ "thread": cody, "text": "and more" });
    let err = r.sock.call("threads.send", &send).await.unwrap_err();
    assert_eq!(err.code(), Some("budget_unkept"), "{err}");
    r.vyred.stop().await;
}

/// `usage.summary` once the usage module has kept `turns` turns (it follows the events).
async fn wait_for_summary(r: &crate::threads_e2e::Rig, turns: i64) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let summary = r.sock.call("usage.summary", &json!({})).await.unwrap();
        if summary["total"]["turns"] == turns || std::time::Instant::now() > deadline {
            return summary;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
