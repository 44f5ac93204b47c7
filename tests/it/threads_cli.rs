//! Which CLI runs and what becomes of its processes: a crashing CLI, a missing or old one, the
//! bundled install, and stopping everything a session started.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;
use crate::threads_e2e::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_that_writes_garbage_and_crashes_mid_turn_fails_the_turn_and_says_why() {
    let (_home, vyred, sock, work) = rig_with_cli("threads-crash", CRASHING_CLI).await;
    let mut stream = sock.events("types=thread.*", None).await.unwrap();
    let thread = sock
        .call("threads.start", &json!({ "cwd": work, "text": "go" }))
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    let events = events_until(&mut stream, |e| e["type"] == "thread.stopped").await;
    let text: String = of_type(&events, "thread.text")
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert_eq!(
        text, "partial ",
        "the garbage line was skipped and the stream went on"
    );
    let states: Vec<&Value> = of_type(&events, "thread.state");
    let failed = states
        .iter()
        .find(|e| e["payload"]["state"] == "failed")
        .expect("the turn failed");
    let error = failed["payload"]["error"].as_str().unwrap();
    assert!(
        error.contains("exited 3") && error.contains("fell over"),
        "{error}"
    );
    assert_eq!(
        states.last().unwrap()["payload"]["state"],
        "idle",
        "failed is followed by idle"
    );
    assert_eq!(events.last().unwrap()["payload"]["reason"], "exited 3");
    let got = sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(
        (got["live"].as_bool(), got["state"].as_str()),
        (Some(false), Some("stopped"))
    );
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_cli_is_a_clear_error_naming_what_to_install() {
    let home = TempHome::new("threads-missing-cli");
    let work = home.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    let config = json!({ "sessions": { "claude": "/nonexistent/bin/claude", "home": home.dir.join("home"), "auth": "login", "spares": 0 } });
    std::fs::write(home.home().config_file(), config.to_string()).unwrap();
    let vyred = InProcess::start(&home, vec![]).await;
    let err = vyred
        .socket_client()
        .call("threads.start", &json!({ "cwd": work }))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("start_failed")
            && err.contains("npm install -g @anthropic-ai/claude-code@2.1.328"),
        "{err}"
    );
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_older_than_the_pinned_version_is_refused_with_what_to_install() {
    let old = "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '2.0.1 (Claude Code)'; exit 0; fi\nexit 1\n";
    let (_home, vyred, sock, work) = rig_with_cli("threads-old-cli", old).await;
    let err = sock
        .call("threads.start", &json!({ "cwd": work }))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("older than 2.1.328")
            && err.contains("npm install -g @anthropic-ai/claude-code@2.1.328"),
        "{err}"
    );
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn bundled_installs_the_pinned_cli_on_first_use_and_says_so() {
    // Needs npm (which `tests/run` has, since it installs the pinned CLI the same way).
    let r = rig_with("threads-bundled", json!({ "claude": "bundled" })).await;
    let Rig {
        home,
        vyred,
        sock,
        work,
        ..
    } = r;
    let mut stream = sock.events("types=claude.*,thread.*", None).await.unwrap();
    let thread = sock
        .call(
            "threads.start",
            &json!({ "cwd": work, "text": "hello bundled" }),
        )
        .await
        .unwrap();
    assert!(thread["thread"].is_string());
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert_eq!(of_type(&events, "claude.install_started").len(), 1);
    assert_eq!(
        of_type(&events, "claude.installed")[0]["payload"]["version"],
        "2.1.328"
    );
    assert!(
        home.vyre_home()
            .join("claude-code/node_modules/.bin/claude")
            .exists()
    );
    let text: String = of_type(&events, "thread.text")
        .iter()
        .filter_map(|e| e["payload"]["delta"].as_str())
        .collect();
    assert!(text.contains("reply to [hello bundled]"), "{text}");
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn stop_takes_every_process_the_session_started_even_detached_ones() {
    let r = rig("threads-orphans").await;
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let thread = start_thread(&r).await;
    // Pids inside the session's sandbox are its own namespace's: the processes are found by
    // their unique arguments instead.
    let command = "RUNBASH (sleep 7600 &); (setsid sleep 7601 &); (sh -c 'setsid env -i sleep 7602 &' &); sleep 0.5; echo started";
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": command }),
        )
        .await
        .unwrap();
    allow_until_finished(&r, &mut stream, &thread).await;
    let sleeping = |arg: &str| -> Vec<i32> {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| {
                std::fs::read(e.path().join("cmdline"))
                    .is_ok_and(|c| c == format!("sleep\0{arg}\0").as_bytes())
            })
            .filter_map(|e| e.file_name().to_str()?.parse().ok())
            .collect()
    };
    let pids: Vec<i32> = ["7600", "7601", "7602"]
        .iter()
        .flat_map(|arg| sleeping(arg))
        .collect();
    let alive = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.contains(") Z "))
            .unwrap_or(false)
    };
    assert!(
        pids.len() == 3 && pids.iter().all(|p| alive(*p)),
        "the session's children run: {pids:?}"
    );
    r.sock
        .call("threads.stop", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || pids.iter().all(|p| !alive(*p))),
        "every one is gone, detached or not: {:?}",
        pids.iter().filter(|p| alive(**p)).collect::<Vec<_>>()
    );
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_becomes_thread_limit() {
    // The real CLI reports rate limits only for subscription sign-ins, which no test can make;
    // a stand-in CLI writes the line the protocol reference describes.
    let cli = r#"#!/bin/sh
if [ "$1" = --version ]; then echo '2.1.328 (Claude Code)'; exit 0; fi
read line
echo '{"type":"control_response","response":{"subtype":"success","request_id":"vyre-1","response":{}}}'
read line
echo '{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1796040000,"rateLimitType":"five_hour"}}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"ok","total_cost_usd":0.001,"usage":{}}'
read line
"#;
    let (_home, vyred, sock, work) = rig_with_cli("threads-limit", cli).await;
    let mut stream = sock.events("types=thread.*", None).await.unwrap();
    sock.call("threads.start", &json!({ "cwd": work, "text": "go" }))
        .await
        .unwrap();
    let events = events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    let limit = of_type(&events, "thread.limit");
    assert_eq!(limit.len(), 1, "{events:?}");
    assert_eq!(
        limit[0]["payload"]["info"]["rate_limit_info"]["rateLimitType"],
        "five_hour"
    );
    vyred.stop().await;
}
