//! The planner's items are the person's and their projects' (issue 23): a session reads and
//! changes only those of the projects it works in, never the person's own or another
//! project's, and sets items only in its own project. Played for real: a Vyre session's Bash
//! on the real CLI, calling the planner's tools through its own `VYRE_SOCKET`.

use serde_json::{Value, json};

use super::common::{attacker, run_allowed};
use crate::threads_e2e::rig;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_session_reaches_only_its_own_projects_planner_items() {
    let r = rig("attack-planner").await;
    let (mine, theirs) = (r.work.join("mine"), r.work.join("theirs"));
    for (name, home) in [("Mine", &mine), ("Theirs", &theirs)] {
        std::fs::create_dir_all(home).unwrap();
        r.sock
            .call("projects.create", &json!({ "name": name, "home": home }))
            .await
            .unwrap();
    }
    let add = |input: Value| {
        let sock = &r.sock;
        async move {
            sock.call("planner.add", &input).await.unwrap()["id"]
                .as_i64()
                .unwrap()
        }
    };
    let theirs_item =
        add(json!({ "text": "walrus confidential of theirs", "at": "in 2h", "project": "Theirs" }))
            .await;
    let personal = add(json!({ "text": "walrus confidential of mine alone", "at": "in 2h" })).await;
    let mine_item = add(json!({ "text": "the blue plan", "project": "Mine" })).await;
    let before = r
        .sock
        .call("planner.list", &json!({ "done": true }))
        .await
        .unwrap();

    let a = attacker(&r, &mine).await;
    let mut script = String::from("set +e\n");
    for (tool, input, out) in [
        ("planner.list", json!({}), "list"),
        (
            "planner.list",
            json!({ "project": "Theirs" }),
            "list_theirs",
        ),
        (
            "planner.done",
            json!({ "item": theirs_item }),
            "done_theirs",
        ),
        (
            "planner.snooze",
            json!({ "item": personal, "for": "1m" }),
            "snooze_personal",
        ),
        (
            "planner.remove",
            json!({ "item": personal }),
            "remove_personal",
        ),
        (
            "planner.add",
            json!({ "text": "spam", "at": "in 1m" }),
            "add_personal",
        ),
        (
            "planner.add",
            json!({ "text": "spam", "at": "in 1m", "project": "Theirs" }),
            "add_theirs",
        ),
        (
            "planner.add",
            json!({ "text": "from the session", "at": "in 1h", "project": "Mine" }),
            "add_mine",
        ),
        ("planner.done", json!({ "item": mine_item }), "done_mine"),
        ("planner.opened", json!({}), "opened"),
    ] {
        script.push_str(&format!(
            "curl -s --unix-socket \"$VYRE_SOCKET\" -X POST -H 'content-type: application/json' -d '{input}' http://localhost/v1/tools/{tool} > out-{out}.json\n"
        ));
    }
    script.push_str(
        "curl -s --unix-socket \"$VYRE_SOCKET\" 'http://localhost/v1/events?since=0&follow=false' > out-events.txt\n",
    );
    std::fs::write(mine.join("attack.sh"), script).unwrap();
    run_allowed(&r, &a, "RUNBASH sh attack.sh").await;
    let read = |name: &str| std::fs::read_to_string(mine.join(format!("out-{name}.json"))).unwrap();

    let list = read("list");
    assert!(list.contains("the blue plan"), "its project's: {list}");
    assert!(!list.contains("walrus"), "nothing else: {list}");
    assert!(read("list_theirs").contains("not_your_project"));
    for out in ["done_theirs", "snooze_personal", "remove_personal"] {
        assert!(read(out).contains("unknown_item"), "{out}: {}", read(out));
    }
    assert!(
        read("add_personal").contains("name_a_project"),
        "{}",
        read("add_personal")
    );
    assert!(
        read("add_theirs").contains("not_your_project"),
        "{}",
        read("add_theirs")
    );
    let added: Value = serde_json::from_str(&read("add_mine")).unwrap();
    assert_eq!(added["data"]["created_by"], a.as_str(), "{added}");
    assert!(
        read("done_mine").contains("done_at"),
        "{}",
        read("done_mine")
    );
    let events = std::fs::read_to_string(mine.join("out-events.txt")).unwrap();
    assert!(
        !events.contains("walrus"),
        "no other item's event: {events}"
    );

    // Nothing of the others changed; its own project's changed as it asked.
    let after = r
        .sock
        .call("planner.list", &json!({ "done": true }))
        .await
        .unwrap();
    let of = |list: &Value, id: i64| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|i| i["id"] == id)
            .cloned()
            .unwrap()
    };
    for id in [theirs_item, personal] {
        assert_eq!(of(&after, id), of(&before, id), "item {id} untouched");
    }
    assert!(of(&after, mine_item)["done_at"].is_i64());
    assert_eq!(
        after.as_array().unwrap().len(),
        4,
        "one added, by the session, in Mine"
    );
    r.vyred.stop().await;
}
