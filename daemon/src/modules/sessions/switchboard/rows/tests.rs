//! The rows on an in-memory database with the threads module's migrations.

use std::path::PathBuf;

use rusqlite::Connection;
use serde_json::json;

use super::*;
use crate::kernel::contracts::provider::{ProcessIds, Question};
use crate::modules::sessions::switchboard::types::*;

fn db() -> Connection {
    let c = Connection::open_in_memory().unwrap();
    for m in crate::modules::sessions::rows::MIGRATIONS {
        c.execute_batch(m.sql).unwrap();
    }
    c
}

fn request() -> StartRequest {
    StartRequest {
        cwd: PathBuf::from("/work"),
        model: Some("claude-fake".into()),
        effort: Some("high".into()),
        purpose: "chat".into(),
        project: None,
        provider: "claude".into(),
        agent: None,
        mode: PermissionMode::AcceptEdits,
    }
}

#[test]
fn a_send_is_recorded_once() {
    let c = db();
    assert!(claim_sent(&c, "t", "u-1", Via::Turn, None).unwrap());
    assert!(!claim_sent(&c, "t", "u-1", Via::Steer, None).unwrap());
    let sent = super::sent(&c, "u-1").unwrap().unwrap();
    assert_eq!((sent.via, sent.queued), (Via::Turn, None));
    forget_sent(&c, "u-1").unwrap();
    assert!(super::sent(&c, "u-1").unwrap().is_none());
}

#[test]
fn a_run_keeps_its_options_state_and_turns() {
    let c = db();
    runs::insert(&c, "t", &request(), "claude", Some("parent")).unwrap();
    let info = runs::infos(&c, Some("t")).unwrap().pop().unwrap();
    assert_eq!(info.state, ThreadStatus::Starting);
    assert_eq!(info.mode, PermissionMode::AcceptEdits);
    let ids = ProcessIds {
        pid: 10,
        pgid: 10,
        sid: 10,
        pid_namespace: None,
    };
    runs::launched(&c, "t", ids, false).unwrap();
    assert!(
        !runs::history(&c, "t").unwrap(),
        "a new thread has no transcript yet"
    );
    runs::turn_began(&c, "t", 3).unwrap();
    let (req, turns) = runs::options(&c, "t").unwrap().unwrap();
    assert_eq!((req.mode, turns), (PermissionMode::AcceptEdits, 3));
    // Its effort goes with a resume, and a change of it too.
    assert_eq!(req.effort.as_deref(), Some("high"));
    runs::set_effort(&c, "t", Some("low")).unwrap();
    let (req, _) = runs::options(&c, "t").unwrap().unwrap();
    assert_eq!(req.effort.as_deref(), Some("low"));
    runs::set_effort(&c, "t", None).unwrap();
    let info = runs::infos(&c, Some("t")).unwrap().pop().unwrap();
    assert_eq!(info.effort, None);
    assert_eq!(runs::turn_finished(&c, "t", 0.5).unwrap(), 0.5);
    let info = runs::infos(&c, None).unwrap().pop().unwrap();
    assert_eq!((info.state, info.total_cost_usd), (ThreadStatus::Idle, 0.5));
    // Each turn adds what it cost, whichever process of the thread ran it.
    assert_eq!(runs::turn_finished(&c, "t", 0.25).unwrap(), 0.75);
    assert_eq!(runs::spent(&c, "t").unwrap(), 0.75);
    assert_eq!(runs::spent(&c, "nobody").unwrap(), 0.0);
    assert!(runs::history(&c, "t").unwrap());
    runs::turn_began(&c, "t", 4).unwrap();
    assert_eq!(
        runs::stop_left_live(&c).unwrap(),
        vec![("t".to_string(), ThreadStatus::Running, 4)]
    );
    let owner = runs::Owner {
        thread: "t".into(),
        started_by: Some("parent".into()),
        agent: None,
    };
    assert_eq!(runs::owners(&c).unwrap(), vec![owner]);
}

#[test]
fn a_queued_message_leaves_the_queue_once() {
    let c = db();
    let one = inbox::insert(&c, "t", "u-1", "first", InboxStatus::Queued, true).unwrap();
    let two = inbox::insert(&c, "t", "u-2", "second", InboxStatus::Queued, false).unwrap();
    let first = inbox::queued(&c, "t", None).unwrap().unwrap();
    assert_eq!(first.queued, one);
    // A person's queued words keep saying so when their turn begins (what Vyre learns from).
    assert_eq!(first.marks(), serde_json::json!({ "by_person": true }));
    assert!(inbox::take(&c, one).unwrap());
    assert!(!inbox::take(&c, one).unwrap());
    let next = inbox::queued(&c, "t", None).unwrap().unwrap();
    assert_eq!((next.queued, next.marks()), (two, serde_json::json!({})));
    assert_eq!(
        inbox::edit(&c, two, "changed").unwrap(),
        Some(("t".into(), "u-2".into()))
    );
    assert_eq!(
        inbox::unqueue(&c, two).unwrap(),
        Some(("t".into(), "u-2".into()))
    );
    assert_eq!(inbox::unqueue(&c, two).unwrap(), None);
    assert_eq!(inbox::thread_of(&c, two).unwrap().as_deref(), Some("t"));
    assert!(inbox::waiting(&c, "t").unwrap().is_empty());
    inbox::insert(&c, "t", "u-3", "held", InboxStatus::Held, false).unwrap();
    assert!(inbox::any_held(&c, "t").unwrap());
    let held = inbox::take_held(&c, "t", InboxStatus::Delivered).unwrap();
    assert_eq!(held.len(), 1);
    assert!(!inbox::any_held(&c, "t").unwrap());
}

#[test]
fn an_ask_is_answered_or_withdrawn_once() {
    let c = db();
    runs::insert(&c, "t", &request(), "claude", None).unwrap();
    let q = Question {
        request: "r-1".into(),
        kind: "tool".into(),
        tool: "Bash".into(),
        tool_use_id: None,
        input: json!({ "command": "ls" }),
        description: None,
        suggestions: json!([]),
    };
    asks::insert(&c, "a-1", "t", Some("t:1"), &q, "ls").unwrap();
    asks::insert(&c, "a-2", "t", Some("t:1"), &q, "ls").unwrap();
    assert_eq!(asks::list(&c, "t", true).unwrap().len(), 2);
    asks::answered(&c, "a-1", Outcome::Always, "person").unwrap();
    let row = asks::get(&c, "a-1").unwrap().unwrap();
    assert_eq!(
        (row.status, row.decision),
        (AskStatus::Answered, Some(Outcome::Always))
    );
    assert_eq!(row.input, json!({ "command": "ls" }));
    assert!(asks::cancel(&c, "a-2").unwrap());
    assert!(!asks::cancel(&c, "a-2").unwrap(), "withdrawn once");
    assert!(
        !asks::cancel(&c, "a-1").unwrap(),
        "an answered ask stays answered"
    );
    assert!(asks::list(&c, "t", true).unwrap().is_empty());
}

#[test]
fn a_projects_threads_are_found_by_its_name_folders_and_picks_alone() {
    let c = db();
    for (thread, cwd, project) in [
        ("home", "/work/site", None),
        ("deep", "/work/site/src/ui", None),
        ("sibling", "/work/site-old", None),
        ("started", "/elsewhere", Some("Site")),
        ("picked", "/tmp", None),
        ("other", "/work/other", Some("Other")),
        ("root", "/", None),
    ] {
        let req = StartRequest {
            cwd: PathBuf::from(cwd),
            project: project.map(String::from),
            ..request()
        };
        runs::insert(&c, thread, &req, "claude", None).unwrap();
    }
    let found = |project: Option<&str>, folders: &[&str], threads: &[&str]| {
        let threads: Vec<String> = threads.iter().map(|t| t.to_string()).collect();
        let mut ids: Vec<String> = runs::belonging(&c, project, folders, &threads)
            .unwrap()
            .into_iter()
            .map(|t| t.thread)
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(
        found(Some("Site"), &["/work/site"], &["picked"]),
        ["deep", "home", "picked", "started"],
        "its folder and inside it, started in it, picked; never /work/site-old"
    );
    assert_eq!(found(None, &["/work/site/"], &[]), ["deep", "home"]);
    assert_eq!(found(Some("Nope"), &[], &[]), Vec::<String>::new());
    assert_eq!(
        found(None, &[], &[]),
        Vec::<String>::new(),
        "asked for nothing"
    );
    assert_eq!(
        found(None, &["/"], &[]).len(),
        7,
        "the root holds every folder"
    );
    // A folder's text with LIKE's or a range's marks in it is only text.
    assert_eq!(
        found(None, &["/work/%"], &["nope'--"]),
        Vec::<String>::new()
    );
}
