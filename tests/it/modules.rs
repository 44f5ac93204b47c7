//! The module contract end to end: bad manifests, ordering problems, failing and panicking
//! modules are disabled with a reason while vyred keeps serving.

use serde_json::{Value, json};

use crate::support::*;

fn module<'a>(modules: &'a Value, name: &str) -> &'a Value {
    modules
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no module {name} in {modules}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_modules_are_disabled_with_the_reason_and_vyred_keeps_serving() {
    let home = TempHome::new("broken");
    let extra = vec![
        Probe::module("good", &[], Start::Ok),
        Probe::module("needsgood", &["good"], Start::Ok),
        Probe::module("panics", &[], Start::Panic),
        Probe::module("fails", &[], Start::Fail),
        Probe::module("afterfail", &["fails"], Start::Ok),
        Probe::module("sneaky", &[], Start::Undeclared),
        Probe::module("trespass", &[], Start::Trespass),
        Probe::module("ghostly", &["ghost"], Start::Ok),
        Probe::module("cyca", &["cycb"], Start::Ok),
        Probe::module("cycb", &["cyca"], Start::Ok),
        Probe::with_manifest("badjson", "{\"name\": \"badjson\", "),
        Probe::with_manifest(
            "badversion",
            r#"{"name":"badversion","version":"1","roles":["box"]}"#,
        ),
        Probe::with_manifest(
            "misnamed",
            r#"{"name":"other","version":"1.0.0","roles":["box"]}"#,
        ),
        Probe::with_manifest(
            "elsewhere",
            r#"{"name":"elsewhere","version":"1.0.0","roles":["local"]}"#,
        ),
    ];
    let vyred = InProcess::start(&home, extra).await;
    let client = vyred.socket_client();
    let modules = client.call("system.modules", &json!({})).await.unwrap();

    let expect = [
        ("system", "started", ""),
        ("devices", "started", ""),
        ("good", "started", ""),
        ("needsgood", "started", ""),
        (
            "panics",
            "disabled",
            "start panicked: the probe was told to panic",
        ),
        (
            "fails",
            "disabled",
            "start failed: the probe was told to fail",
        ),
        (
            "afterfail",
            "disabled",
            "requires fails, which did not start",
        ),
        ("sneaky", "disabled", "not declared in sneaky's manifest"),
        (
            "trespass",
            "disabled",
            "a module's tables must be named trespass_",
        ),
        ("ghostly", "disabled", "requires ghost"),
        ("cyca", "disabled", "requires cycle: cyca -> cycb -> cyca"),
        ("cycb", "disabled", "requires cycle: cycb -> cyca -> cycb"),
        ("badjson", "disabled", "invalid module.json: EOF"),
        ("badversion", "disabled", "MAJOR.MINOR.PATCH"),
        ("misnamed", "disabled", "its manifest names it \"other\""),
        ("elsewhere", "skipped", "not for role box"),
    ];
    for (name, state, reason) in expect {
        let m = module(&modules, name);
        assert_eq!(m["state"], state, "{name}: {m}");
        if !reason.is_empty() {
            assert!(
                m["reason"].as_str().unwrap_or("").contains(reason),
                "{name}: {m}"
            );
        }
    }
    // Each disabled module left a module.disabled event.
    let events = client
        .call(
            "system.events",
            &json!({ "types": ["module.disabled"], "limit": 100 }),
        )
        .await
        .unwrap();
    assert_eq!(events.as_array().unwrap().len(), 11, "{events}");

    // The healthy modules serve; the dependent one works through its requirement.
    let out = client
        .call("needsgood.echo", &json!({ "text": "still here" }))
        .await
        .unwrap();
    assert_eq!(out["input"]["text"], "still here");
    // A tool of a module that failed to start answers module_disabled, not a crash.
    let err = client
        .call("sneaky.echo", &json!({ "text": "x" }))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("module_disabled") || err.to_string().contains("unknown_tool"),
        "{err}"
    );

    // vyred status renders it for a person.
    let out = home.vyre(&["status"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("panics       disabled: start panicked"),
        "{text}"
    );
    // doctor fails (exit 1) and names the disabled modules.
    let out = home.vyre(&["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("fails is disabled"));
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_module_emits_only_what_it_declares_and_never_a_secret() {
    let home = TempHome::new("emits");
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let client = vyred.socket_client();
    let ids = client.call("probe.emit", &json!({ "n": 2 })).await.unwrap();
    assert_eq!(ids.as_array().unwrap().len(), 2);
    let err = client
        .call("probe.emit", &json!({ "n": 1, "kind": "device.revoked" }))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("does not declare event type"),
        "{err}"
    );
    let token = format!("ghp_{}", "aB3dE5gH7j".repeat(4));
    let err = client
        .call(
            "probe.emit",
            &json!({ "n": 1, "note": format!("use {token}") }),
        )
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("looks like a credential"), "{text}");
    assert!(!text.contains(&token));
    // A module calling a person-only tool is refused, whatever it says.
    let err = client
        .call("probe.call", &json!({ "tool": "system.stop", "input": {} }))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("person_only"), "{err}");
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_can_disable_a_module_and_role_chooses_the_set() {
    let home = TempHome::new("config");
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    std::fs::write(
        home.home().config_file(),
        r#"{ "role": "local", "modules": { "disable": ["probe"] }, "someday": true }"#,
    )
    .unwrap();
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let status = vyred
        .socket_client()
        .call("system.status", &json!({}))
        .await
        .unwrap();
    assert_eq!(status["role"], "local");
    let probe = module(&status["modules"], "probe");
    assert_eq!(probe["state"], "skipped");
    assert!(
        probe["reason"]
            .as_str()
            .unwrap()
            .contains("modules.disable")
    );
    let warnings = status["config"]["warnings"].to_string();
    assert!(warnings.contains("someday"), "{warnings}");
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_module_keeps_its_own_tables_and_writes_rows_and_events_atomically() {
    let home = TempHome::new("module-store");
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let client = vyred.socket_client();
    client
        .call("probe.note", &json!({ "text": "first" }))
        .await
        .unwrap();
    let before = vyred.kernel.bus().latest_id();
    let err = client
        .call("probe.note", &json!({ "text": "second", "loud": true }))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("too loud"), "{err}");
    assert_eq!(
        vyred.kernel.bus().latest_id(),
        before,
        "the failed write's event was never published"
    );
    let notes = client.call("probe.notes", &json!({})).await.unwrap();
    assert_eq!(
        notes,
        json!(["first"]),
        "the failed write's row was rolled back"
    );
    vyred.stop().await;

    // Restarting runs no migration twice and keeps the rows.
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let notes = vyred
        .socket_client()
        .call("probe.notes", &json!({}))
        .await
        .unwrap();
    assert_eq!(notes, json!(["first"]));
    vyred.stop().await;
    let conn = rusqlite::Connection::open(home.home().database()).unwrap();
    let version: u32 = conn
        .query_row(
            "SELECT version FROM kernel_migrations WHERE namespace = 'probe'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(version, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_module_hears_events_through_on_and_reads_them_through_since() {
    let home = TempHome::new("module-on");
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let client = vyred.socket_client();
    client.call("probe.emit", &json!({ "n": 5 })).await.unwrap();
    client
        .call(
            "probe.emit",
            &json!({ "n": 2, "kind": "probe.thread_said" }),
        )
        .await
        .unwrap();
    let mut heard = json!(null);
    for _ in 0..100 {
        heard = client.call("probe.heard", &json!({})).await.unwrap();
        if heard["heard"] == 5 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        heard["heard"], 5,
        "only the filtered type, each once: {heard}"
    );
    assert_eq!(heard["latest_id"], vyred.kernel.bus().latest_id());
    assert_eq!(
        heard["logged"], 8,
        "daemon.started and seven probe events: {heard}"
    );
    vyred.stop().await;
}

/// Every tool a built-in module's `module.json` declares is registered once it runs, and every
/// registered tool is declared by the module that registered it (registering an undeclared one
/// is refused at start), in both roles.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_declared_tool_is_registered_and_every_registered_one_declared() {
    for role in ["box", "local"] {
        let home = TempHome::new(&format!("declared-{role}"));
        std::fs::create_dir_all(home.vyre_home()).unwrap();
        std::fs::write(
            home.home().config_file(),
            json!({ "role": role }).to_string(),
        )
        .unwrap();
        let vyred = InProcess::start(&home, vec![]).await;
        let sock = vyred.socket_client();
        let status = sock.call("system.status", &json!({})).await.unwrap();
        let listed = sock.get("/v1/tools").await.unwrap();
        let registered: Vec<(String, String)> = listed
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["module"].as_str().unwrap().to_string(),
                    t["name"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let mut declared = Vec::new();
        for m in status["modules"].as_array().unwrap() {
            if m["state"] != "started" {
                continue;
            }
            for tool in m["tools"].as_array().unwrap() {
                declared.push((
                    m["name"].as_str().unwrap().to_string(),
                    tool.as_str().unwrap().to_string(),
                ));
            }
        }
        assert!(
            declared.len() > 50,
            "{role}: the built-in modules run: {status}"
        );
        for d in &declared {
            assert!(
                registered.contains(d),
                "{role}: {} declares {} but did not register it",
                d.0,
                d.1
            );
        }
        for r in &registered {
            assert!(
                declared.contains(r),
                "{role}: {} registered {}, which no running module declares",
                r.0,
                r.1
            );
        }
        vyred.stop().await;
    }
}
