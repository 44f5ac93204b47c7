//! A session's Bash cannot use the first-prompt path to get another project's brief or to move a binding.
//!
//! Since ADR 0033's amendment a session Vyre runs is bound, and given its project's brief, at the
//! first prompt of each of its Claude Code processes: vyred decides "first" by comparing the
//! process the prompt came from with the one the session is bound to. A session's own Bash can
//! call the same hook (`vyre hook UserPromptSubmit` on its `VYRE_SOCKET`, or `harness.hook`
//! with a `pid` of its choosing) naming another session and another folder. Played for real on
//! the real CLI with the harness loaded: every such call answers for the attacker's own thread
//! only, gives no brief again, and leaves both bindings, the victim's queue and its events as
//! they were.

use serde_json::{Value, json};

use super::common::{attacker, read, run_allowed};
use super::threads::{snapshot, two_projects, victim};
use crate::support::*;
use crate::threads_e2e::rig_with_harness;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_sessions_bash_cannot_take_another_projects_brief_or_binding_at_a_first_prompt() {
    let r = rig_with_harness("attack-brief").await;
    let (mine, theirs) = two_projects(&r).await;
    let (v, _) = victim(&r, &theirs).await;
    // The victim's first prompt bound it to its own Claude Code, and briefed it.
    let theirs_bound = r
        .sock
        .call("harness.binding", &json!({ "session": v }))
        .await
        .unwrap();
    assert_eq!(theirs_bound["project"], "Theirs", "{theirs_bound}");
    let victim_pid = theirs_bound["pid"].as_u64().expect("the victim is bound");
    let before = snapshot(&r.sock, &v).await;

    let a = attacker(&r, &mine).await;
    let prompt = |pid: Value| {
        json!({ "event": "UserPromptSubmit", "pid": pid, "input": {
            "session_id": v, "cwd": theirs, "prompt": "what is the walrus plan?",
            "hook_event_name": "UserPromptSubmit",
        }})
    };
    let call = |input: Value, out: &str| {
        format!(
            "curl -s --unix-socket \"$VYRE_SOCKET\" -X POST -H 'content-type: application/json' -d '{input}' http://localhost/v1/tools/harness.hook > {out}\n"
        )
    };
    let mut script = String::from("set +e\n");
    // As Claude Code runs the hook, but naming the victim's session and folder.
    script.push_str(&format!(
        "echo '{}' | {BIN} hook UserPromptSubmit > out-cli.json 2>&1\n",
        prompt(Value::Null)["input"]
    ));
    // A process of its choosing: none yet bound (the path's "first"), the victim's, pid 1.
    for (pid, out) in [
        (json!(4_000_000), "out-new.json"),
        (json!(victim_pid), "out-victims.json"),
        (json!(1), "out-init.json"),
    ] {
        script.push_str(&call(prompt(pid), out));
    }
    // And a start naming the victim's process, then a turn's end to take its queued words.
    script.push_str(&call(
        json!({ "event": "SessionStart", "pid": victim_pid, "input": {
            "session_id": v, "cwd": theirs, "hook_event_name": "SessionStart", "source": "startup",
        }}),
        "out-start.json",
    ));
    script.push_str(&call(
        json!({ "event": "Stop", "pid": victim_pid, "input": {
            "session_id": v, "cwd": theirs, "hook_event_name": "Stop", "stop_hook_active": false,
        }}),
        "out-stop.json",
    ));
    std::fs::write(mine.join("attack.sh"), script).unwrap();
    run_allowed(&r, &a, "RUNBASH sh attack.sh").await;

    let own = r
        .sock
        .call("harness.binding", &json!({ "session": a }))
        .await
        .unwrap();
    for out in [
        "out-cli.json",
        "out-new.json",
        "out-victims.json",
        "out-init.json",
        "out-start.json",
        "out-stop.json",
    ] {
        let said = read(&mine, out);
        assert!(
            !said.contains("Theirs") && !said.contains("confidential") && !said.contains(&v),
            "{out} told the attacker of the other project: {said}"
        );
        assert!(
            !said.contains("the victim's own queued words"),
            "{out} handed over the victim's words: {said}"
        );
        assert!(
            !said.contains("\"error\""),
            "{out} is answered, for itself: {said}"
        );
    }
    for out in [
        "out-cli.json",
        "out-new.json",
        "out-victims.json",
        "out-init.json",
    ] {
        let said = read(&mine, out);
        assert!(
            !said.contains("this session belongs to the project"),
            "a forged process made {out} a first prompt, briefed again: {said}"
        );
    }
    // Its SessionStart is answered as its own: its own project's brief, at most.
    let start = read(&mine, "out-start.json");
    assert!(
        !start.contains("belongs to the project") || start.contains("\\\"Mine\\\""),
        "{start}"
    );

    // The victim's binding, queue and events are as they were; the attacker's own binding is
    // its own Claude Code still, in its own project.
    let after = r
        .sock
        .call("harness.binding", &json!({ "session": v }))
        .await
        .unwrap();
    assert_eq!(after, theirs_bound, "the victim's binding moved");
    assert_eq!(snapshot(&r.sock, &v).await, before);
    assert_eq!(own["project"], "Mine", "{own}");
    assert_eq!(own["alive"], true, "bound to a running Claude Code: {own}");
    let own_pid = own["pid"].as_u64().unwrap();
    assert!(
        own_pid != victim_pid && own_pid != 1 && own_pid != 4_000_000,
        "the attacker's binding names a process it chose: {own}"
    );
    // And no binding was made for the victim meanwhile.
    let seen = r
        .sock
        .call(
            "system.events",
            &json!({ "types": ["harness.bound"], "limit": 1000 }),
        )
        .await
        .unwrap();
    let of_victim: Vec<&Value> = seen
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["payload"]["session"] == v.as_str())
        .collect();
    assert_eq!(
        of_victim.len(),
        1,
        "only the victim's own first prompt bound it: {seen}"
    );
    r.vyred.stop().await;
}
