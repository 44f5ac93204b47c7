//! The HTTP API on both listeners: one tool three ways, hostile requests, devices.

use std::time::Duration;

use hyper::Method;
use serde_json::{Value, json};
use vyre::kernel::config::Role;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_tool_over_the_socket_http_and_the_cli_gives_the_same_answer() {
    let home = TempHome::new("three-ways");
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let (_, token) = vyred.device_token("laptop").await;
    let input = json!({ "text": "hello", "count": 3, "loud": true });

    let over_socket = vyred
        .socket_client()
        .call("probe.echo", &input)
        .await
        .unwrap();
    let over_http = vyred
        .http_client(Some(&token))
        .call("probe.echo", &input)
        .await
        .unwrap();
    let out = tokio::task::spawn_blocking({
        let cmd = home.command();
        move || {
            let mut cmd = cmd;
            cmd.args(["probe", "echo", "hello", "--count", "3", "--loud"])
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let over_cli: Value = serde_json::from_slice(&out.stdout).unwrap();

    assert_eq!(over_socket["input"], input);
    assert_eq!(over_http["input"], input);
    assert_eq!(over_cli["input"], input);
    // The same answer; only the verified caller differs, and it is what vyred saw.
    assert_eq!(over_socket["caller"]["kind"], "socket");
    assert_eq!(over_cli["caller"]["kind"], "socket");
    assert_eq!(over_http["caller"]["kind"], "device");
    assert_eq!(over_http["caller"]["name"], "laptop");

    // system.modules, a tool with no caller in its answer, is identical on all three.
    let a = vyred
        .socket_client()
        .call("system.modules", &json!({}))
        .await
        .unwrap();
    let b = vyred
        .http_client(Some(&token))
        .call("system.modules", &json!({}))
        .await
        .unwrap();
    let out = home.vyre(&["system", "modules"]);
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(a, b);
    assert_eq!(a, c);
    // A word that cannot be a module (here one that would add to the listing's query) is an
    // unknown command, as an unknown module is.
    for word in ["system&module=devices", "nope"] {
        let out = home.vyre(&[word, "status"]);
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(said.contains("unknown command"), "{said}");
    }
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_and_hostile_requests_get_a_clear_4xx_and_vyred_stays_healthy() {
    let home = TempHome::new("hostile");
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let (revoked_id, revoked_token) = vyred.device_token("old").await;
    vyred
        .socket_client()
        .call("devices.revoke", &json!({ "id": revoked_id }))
        .await
        .unwrap();
    let (_, token) = vyred.device_token("good").await;
    let addr = vyred.http.to_string();
    let auth = format!("Bearer {token}");
    let bad_auth = format!("Bearer {revoked_token}");
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let huge = format!("{{\"text\": \"{}\"}}", "x".repeat(2 * 1024 * 1024));

    struct Case {
        name: &'static str,
        method: Method,
        path: String,
        body: Option<Vec<u8>>,
        headers: Vec<(&'static str, String)>,
        status: u16,
        code: &'static str,
    }
    let post = |name, path: &str, body: &str, status, code| Case {
        name,
        method: Method::POST,
        path: path.to_string(),
        body: Some(body.as_bytes().to_vec()),
        headers: vec![("authorization", auth.clone())],
        status,
        code,
    };
    let mut cases = vec![
        post(
            "malformed JSON",
            "/v1/tools/probe.echo",
            "{\"text\": ",
            400,
            "malformed_json",
        ),
        post(
            "not an object",
            "/v1/tools/probe.echo",
            "[1,2]",
            400,
            "invalid_input",
        ),
        post(
            "missing field",
            "/v1/tools/probe.echo",
            "{}",
            400,
            "invalid_input",
        ),
        post(
            "wrong type",
            "/v1/tools/probe.echo",
            "{\"text\": 5}",
            400,
            "invalid_input",
        ),
        post(
            "unknown field",
            "/v1/tools/probe.echo",
            "{\"text\": \"a\", \"admin\": true}",
            400,
            "invalid_input",
        ),
        post(
            "negative count",
            "/v1/tools/probe.echo",
            "{\"text\": \"a\", \"count\": -1}",
            400,
            "invalid_input",
        ),
        post(
            "unknown tool",
            "/v1/tools/probe.nothing",
            "{}",
            404,
            "unknown_tool",
        ),
        post(
            "path traversal",
            "/v1/tools/..%2F..%2Fetc%2Fpasswd",
            "{}",
            404,
            "unknown_tool",
        ),
        post(
            "deep nesting",
            "/v1/tools/probe.echo",
            &deep,
            400,
            "malformed_json",
        ),
        post(
            "body too large",
            "/v1/tools/probe.echo",
            &huge,
            413,
            "too_large",
        ),
        post(
            "person-only via a module",
            "/v1/tools/probe.call",
            "{\"tool\": \"devices.add\", \"input\": {\"name\": \"x\"}}",
            403,
            "person_only",
        ),
    ];
    cases.push(Case {
        name: "invalid UTF-8",
        method: Method::POST,
        path: "/v1/tools/probe.echo".into(),
        body: Some(b"{\"text\": \"\xff\xfe\"}".to_vec()),
        headers: vec![("authorization", auth.clone())],
        status: 400,
        code: "malformed_json",
    });
    cases.push(Case {
        name: "no credential",
        method: Method::POST,
        path: "/v1/tools/system.status".into(),
        body: Some(b"{}".to_vec()),
        headers: vec![],
        status: 401,
        code: "unauthenticated",
    });
    cases.push(Case {
        name: "revoked credential",
        method: Method::POST,
        path: "/v1/tools/system.status".into(),
        body: Some(b"{}".to_vec()),
        headers: vec![("authorization", bad_auth.clone())],
        status: 401,
        code: "invalid_credential",
    });
    cases.push(Case {
        name: "made-up credential",
        method: Method::GET,
        path: "/v1/events".into(),
        body: None,
        headers: vec![("authorization", "Bearer vyre_dev_0000".into())],
        status: 401,
        code: "invalid_credential",
    });
    cases.push(Case {
        name: "cross-origin",
        method: Method::POST,
        path: "/v1/tools/system.status".into(),
        body: Some(b"{}".to_vec()),
        headers: vec![
            ("authorization", auth.clone()),
            ("origin", "http://evil.example".into()),
        ],
        status: 403,
        code: "cross_origin",
    });
    cases.push(Case {
        name: "DNS rebinding Host",
        method: Method::POST,
        path: "/v1/tools/system.status".into(),
        body: Some(b"{}".to_vec()),
        headers: vec![
            ("authorization", auth.clone()),
            ("host", "evil.example:80".into()),
        ],
        status: 403,
        code: "bad_host",
    });
    cases.push(Case {
        name: "form post (CSRF shape)",
        method: Method::POST,
        path: "/v1/tools/system.status".into(),
        body: Some(b"a=b".to_vec()),
        headers: vec![
            ("authorization", auth.clone()),
            ("content-type", "application/x-www-form-urlencoded".into()),
        ],
        status: 415,
        code: "unsupported_media_type",
    });
    cases.push(Case {
        name: "GET on a tool",
        method: Method::GET,
        path: "/v1/tools/system.status".into(),
        body: None,
        headers: vec![("authorization", auth.clone())],
        status: 405,
        code: "method_not_allowed",
    });
    cases.push(Case {
        name: "unknown route",
        method: Method::GET,
        path: "/v2/anything".into(),
        body: None,
        headers: vec![],
        status: 404,
        code: "not_found",
    });
    cases.push(Case {
        name: "bad since",
        method: Method::GET,
        path: "/v1/events?since=yesterday".into(),
        body: None,
        headers: vec![("authorization", auth.clone())],
        status: 400,
        code: "invalid_query",
    });
    cases.push(Case {
        name: "bad Last-Event-ID",
        method: Method::GET,
        path: "/v1/events".into(),
        body: None,
        headers: vec![
            ("authorization", auth.clone()),
            ("last-event-id", "-5".into()),
        ],
        status: 400,
        code: "invalid_query",
    });
    cases.push(Case {
        name: "bad types filter",
        method: Method::GET,
        path: "/v1/events?types=DROP%20TABLE".into(),
        body: None,
        headers: vec![("authorization", auth.clone())],
        status: 400,
        code: "invalid_query",
    });
    cases.push(Case {
        name: "unknown query key",
        method: Method::GET,
        path: "/v1/events?sinse=1".into(),
        body: None,
        headers: vec![("authorization", auth.clone())],
        status: 400,
        code: "invalid_query",
    });
    assert!(cases.len() >= 15);

    let raw = vyre::surfaces::client::Client::http(vyred.http, None);
    for case in cases {
        let mut headers: Vec<(&str, &str)> =
            case.headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        if !case.headers.iter().any(|(k, _)| *k == "host") {
            headers.push(("host", addr.as_str()));
        }
        let (status, body) = raw
            .json(case.method.clone(), &case.path, case.body.clone(), &headers)
            .await
            .unwrap();
        assert_eq!(status, case.status, "{}: {body}", case.name);
        assert_eq!(body["error"]["code"], case.code, "{}: {body}", case.name);
        let message = body["error"]["message"].as_str().unwrap_or("");
        assert!(
            message.len() > 10,
            "{}: a message a person understands, got {message:?}",
            case.name
        );
    }
    // Still healthy, and the module still serves: no case above depends on another.
    let health = raw.get("/v1/health").await.unwrap();
    assert_eq!(health["version"], vyre::kernel::VERSION);
    let echo = vyred
        .http_client(Some(&token))
        .call("probe.echo", &json!({ "text": "a" }))
        .await
        .unwrap();
    assert_eq!(echo["input"]["text"], "a");
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_tool_disables_its_module_and_never_vyred() {
    let home = TempHome::new("panic");
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let (_, token) = vyred.device_token("good").await;
    let client = vyred.http_client(Some(&token));
    let (status, body) = client
        .json(
            Method::POST,
            "/v1/tools/probe.panic",
            Some(b"{}".to_vec()),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (500, Some("internal"))
    );
    let message = body["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.len() > 10,
        "a message a person understands: {message:?}"
    );
    assert!(
        !message.contains("panic"),
        "internal detail stays in the log: {message}"
    );
    // Its module is off from then on; the rest of vyred serves.
    let (status, body) = client
        .json(
            Method::POST,
            "/v1/tools/probe.echo",
            Some(br#"{"text": "a"}"#.to_vec()),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (503, Some("module_disabled"))
    );
    let health = vyred.http_client(None).get("/v1/health").await.unwrap();
    assert_eq!(health["version"], vyre::kernel::VERSION);
    let status = client.call("system.status", &json!({})).await.unwrap();
    let probe = status["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "probe")
        .unwrap();
    assert_eq!(probe["state"], "disabled");
    assert!(probe["reason"].as_str().unwrap().contains("panicked"));
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_answers_without_a_credential_and_person_only_tools_are_hidden_from_modules() {
    let home = TempHome::new("health");
    let vyred = InProcess::start(&home, vec![]).await;
    let health = vyred.http_client(None).get("/v1/health").await.unwrap();
    assert_eq!(health["role"], "box");
    assert!(health["uptime_s"].is_u64());
    let tools = vyred.socket_client().get("/v1/tools").await.unwrap();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for expected in [
        "system.status",
        "system.modules",
        "system.events",
        "system.stop",
        "devices.add",
        "devices.list",
        "devices.revoke",
    ] {
        assert!(names.contains(&expected), "{expected} in {names:?}");
    }
    let add = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "devices.add")
        .unwrap();
    assert_eq!(add["person_only"], true);
    assert_eq!(add["input_schema"]["required"], json!(["name"]));
    // A tool's registration only reads its schema; each one published compiles into the
    // check its first call makes.
    for tool in tools.as_array().unwrap() {
        vyre::kernel::tools::InputCheck::new(&tool["input_schema"])
            .unwrap_or_else(|e| panic!("{}: {e}", tool["name"]));
    }
    // One module's tools, as the CLI asks for them: the same entries, only that module's.
    let devices = vyred
        .socket_client()
        .get("/v1/tools?module=devices")
        .await
        .unwrap();
    let of_devices: Vec<&Value> = tools
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["module"] == "devices")
        .collect();
    assert!(of_devices.len() >= 3);
    assert_eq!(
        devices.as_array().unwrap().iter().collect::<Vec<_>>(),
        of_devices
    );
    let none = vyred
        .socket_client()
        .get("/v1/tools?module=nope")
        .await
        .unwrap();
    assert_eq!(none, json!([]));
    // A query it does not know is said, not ignored.
    let (status, body) = vyred
        .socket_client()
        .json(hyper::Method::GET, "/v1/tools?modules=devices", None, &[])
        .await
        .unwrap();
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("invalid_query")),
        "{body}"
    );
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_device_is_refused_at_once_and_its_stream_closes() {
    let home = TempHome::new("revoke");
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let (id, token) = vyred.device_token("phone").await;
    let phone = vyred.http_client(Some(&token));
    let mut stream = phone.events("", None).await.unwrap();
    vyred
        .socket_client()
        .call("probe.emit", &json!({ "n": 1 }))
        .await
        .unwrap();
    let first = tokio::time::timeout(Duration::from_secs(5), stream.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(first.event.as_deref(), Some("probe.pinged"));

    let listed = vyred
        .socket_client()
        .call("devices.list", &json!({}))
        .await
        .unwrap();
    assert!(listed.to_string().contains("phone"));
    assert!(
        !listed.to_string().contains(&token),
        "lists never show a credential"
    );

    vyred
        .socket_client()
        .call("devices.revoke", &json!({ "id": id }))
        .await
        .unwrap();
    // The open stream ends (after the device.revoked event at most)...
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(msg) = stream.next().await {
            if msg.is_err() {
                break;
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the revoked device's stream closed");
    // ...and the credential is refused at once.
    let err = phone.call("system.status", &json!({})).await.unwrap_err();
    assert!(err.to_string().contains("invalid_credential"), "{err}");
    let err = vyred
        .socket_client()
        .call("devices.revoke", &json!({ "id": "nope" }))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("unknown_device"), "{err}");
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_peer_inside_a_session_is_never_a_person() {
    let home = TempHome::new("peer");
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let sock = vyred.socket_client();
    let me = sock
        .call("probe.echo", &json!({ "text": "who" }))
        .await
        .unwrap();
    assert_eq!(me["caller"]["kind"], "socket");

    // The sessions layer registers a session's process group; this test process is in it.
    let pgid = nix::unistd::getpgrp().as_raw();
    vyred
        .kernel
        .session_processes()
        .register("thread-7", pgid, pgid);
    let me = sock
        .call("probe.echo", &json!({ "text": "who" }))
        .await
        .unwrap();
    assert_eq!(
        me["caller"],
        json!({ "kind": "session", "thread": "thread-7" })
    );
    let err = sock
        .call("devices.add", &json!({ "name": "sneaky" }))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("person_only"), "{err}");
    let err = sock.call("system.stop", &json!({})).await.unwrap_err();
    assert!(err.to_string().contains("person_only"), "{err}");
    let tools = sock.get("/v1/tools").await.unwrap();
    assert!(
        tools
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["person_only"] == false),
        "a session is not even shown person-only tools"
    );

    vyred.kernel.session_processes().unregister("thread-7");
    sock.call("devices.add", &json!({ "name": "mine" }))
        .await
        .unwrap();
    vyred.stop().await;
}

/// Every `vyre <module> <tool>` docs/api.md gives for a tool runs: `--help` on it answers, in
/// the role that has the tool (`vyre harness binding` answered `unknown command` with exit 2
/// while the reference gave it, since the harness module did not show its tools on the CLI).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_the_api_reference_gives_for_a_tool_is_one_the_cli_runs() {
    let doc = std::fs::read_to_string(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/api.md"),
    )
    .unwrap();
    // `| `module.tool` | the caller it is for | the command | ...`
    let documented: Vec<(String, Vec<String>)> = doc
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let name = cells[1].strip_prefix('`')?.strip_suffix('`')?;
            let (module, tool) = name.split_once('.')?;
            // Only the generic form; a command of its own (`vyre hook <Event>`) is the CLI's,
            // tested where it is built.
            let generic = format!("`vyre {module} {tool}");
            let after = cells.get(3)?.strip_prefix(generic.as_str())?;
            (after.starts_with(' ') || after.starts_with('`'))
                .then(|| (name.to_string(), vec![module.to_string(), tool.to_string()]))
        })
        .collect();
    assert!(
        documented.len() > 100,
        "the reference's tables were read: {}",
        documented.len()
    );
    let mut tried = std::collections::HashSet::new();
    let mut refused = Vec::new();
    for role in [Role::Box, Role::Local] {
        let home = TempHome::new(&format!("cli-docs-{role:?}"));
        let vyred = InProcess::start_with(&home, vec![], |o| o.role = Some(role)).await;
        let tools = vyred.socket_client().get("/v1/tools").await.unwrap();
        let here: std::collections::HashSet<&str> = tools
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        for (name, words) in &documented {
            if !here.contains(name.as_str()) || !tried.insert(name.clone()) {
                continue;
            }
            let out = tokio::task::block_in_place(|| {
                home.vyre(&[words[0].as_str(), words[1].as_str(), "--help"])
            });
            if !out.status.success() {
                refused.push(format!(
                    "vyre {} {}: {}",
                    words[0],
                    words[1],
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
        }
        vyred.stop().await;
    }
    assert!(tried.len() > 100, "{} commands tried", tried.len());
    assert!(refused.is_empty(), "documented but refused: {refused:#?}");
}
