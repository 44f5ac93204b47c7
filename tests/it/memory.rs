//! Memory (spec 7.4, issue 22): the curator reads what recall read from the person's
//! transcripts and keeps what they name and what the person defined, each with the turn it came
//! from; a project sees only its own threads' facts; a newer meaning of a term supersedes the
//! older without erasing it; a line appended while vyred runs is learned without polling.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use vyre::surfaces::client::Client;

use crate::support::*;

const ALPHA: &str = "0b7e4c1e-0000-4000-8000-00000000a0a1";
const BETA: &str = "0b7e4c1e-0000-4000-8000-00000000b0b1";

pub fn user(session: &str, n: usize, cwd: &Path, text: &str) -> String {
    format!(
        "{}\n",
        json!({
            "type": "user", "sessionId": session, "uuid": format!("{session}-{n}"),
            "cwd": cwd, "timestamp": format!("2026-01-0{n}T00:00:00.000Z"),
            "message": { "role": "user", "content": text }
        })
    )
}

pub fn assistant(session: &str, n: usize, cwd: &Path, text: &str) -> String {
    format!(
        "{}\n",
        json!({
            "type": "assistant", "sessionId": session, "uuid": format!("{session}-a{n}"),
            "cwd": cwd, "timestamp": format!("2026-01-0{n}T00:00:01.000Z"),
            "message": { "id": format!("msg_{session}_{n}"), "role": "assistant",
                "content": [{ "type": "text", "text": text }] }
        })
    )
}

/// `memory.facts` with `input` until `until` holds (within 20 s).
async fn facts_until(sock: &Client, input: Value, until: impl Fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    for _ in 0..200 {
        last = sock.call("memory.facts", &input).await.unwrap();
        if until(&last) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("memory.facts {input} never got there: {last:#}");
}

fn subjects(facts: &Value) -> Vec<String> {
    facts
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["subject"].as_str().unwrap().to_string())
        .collect()
}

fn fact<'a>(facts: &'a Value, subject: &str, object: &str) -> &'a Value {
    facts
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["subject"] == subject && f["object"] == object)
        .unwrap_or_else(|| panic!("no {subject} {object} in {facts:#}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_curator_learns_what_each_project_said_and_keeps_it_apart() {
    let home = TempHome::new("memory");
    let (alpha, beta) = (home.dir.join("work/alpha"), home.dir.join("work/beta"));
    std::fs::create_dir_all(&alpha).unwrap();
    std::fs::create_dir_all(&beta).unwrap();
    let transcripts = home.dir.join("home/.claude/projects");
    let (a_dir, b_dir) = (
        transcripts.join("-work-alpha"),
        transcripts.join("-work-beta"),
    );
    std::fs::create_dir_all(&a_dir).unwrap();
    std::fs::create_dir_all(&b_dir).unwrap();
    std::fs::write(
        a_dir.join(format!("{ALPHA}.jsonl")),
        [
            user(ALPHA, 1, &alpha, "Juno is our assistant on the box. Deploy with https://deploy.alpha.example/run?token=s3cr3t-value please."),
            assistant(ALPHA, 1, &alpha, "Done: the repo is https://github.com/alpha-co/billing and Mira is a name I made up."),
            user(ALPHA, 2, &alpha, "Juno is the old name of Lumen, by the way."),
        ]
        .concat(),
    )
    .unwrap();
    std::fs::write(
        b_dir.join(format!("{BETA}.jsonl")),
        user(
            BETA,
            1,
            &beta,
            "Mail ops@beta.example about 203.0.113.9 going down.",
        ),
    )
    .unwrap();

    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    for (name, folder) in [("alpha", &alpha), ("beta", &beta)] {
        sock.call(
            "projects.create",
            &json!({ "name": name, "home": folder.display().to_string() }),
        )
        .await
        .unwrap();
    }

    // The person sees everything, once it is read.
    let all = facts_until(&sock, json!({}), |f| {
        let s = subjects(f);
        s.contains(&"ops@beta.example".to_string())
            && s.iter().filter(|x| *x == "Juno").count() == 2
    })
    .await;
    let s = subjects(&all);
    for want in [
        "https://deploy.alpha.example/run",
        "deploy.alpha.example",
        "github.com/alpha-co/billing",
        "203.0.113.9",
        "beta.example",
    ] {
        assert!(s.contains(&want.to_string()), "{want}: {s:?}");
    }
    assert!(
        !all.to_string().contains("s3cr3t-value"),
        "a URL's token is never kept: {all:#}"
    );
    assert!(
        !s.contains(&"Mira".to_string()),
        "only the person defines terms, not the model"
    );

    // Juno's first meaning held until the second was said; neither is erased.
    let first = fact(&all, "Juno", "our assistant on the box");
    let second = fact(&all, "Juno", "the old name of Lumen, by the way");
    assert_eq!(first["superseded_by"], second["fact"]);
    assert_eq!(first["valid_to"], second["valid_from"]);
    assert_eq!(second["superseded_by"], Value::Null);

    // Each project sees only what its own threads said.
    let a = sock
        .call("memory.facts", &json!({ "project": "alpha" }))
        .await
        .unwrap();
    let b = sock
        .call("memory.facts", &json!({ "project": "beta" }))
        .await
        .unwrap();
    assert!(subjects(&a).contains(&"Juno".to_string()));
    assert!(
        !subjects(&a).contains(&"ops@beta.example".to_string()),
        "{a:#}"
    );
    assert!(subjects(&b).contains(&"ops@beta.example".to_string()));
    assert!(
        !b.to_string().contains("alpha"),
        "nothing of alpha reaches beta: {b:#}"
    );

    // Why: the turn it came from, and where the app opens it.
    let why = sock
        .call("memory.why", &json!({ "fact": first["fact"] }))
        .await
        .unwrap();
    assert_eq!(why["sources"][0]["thread"], ALPHA);
    assert_eq!(why["sources"][0]["turn"], format!("{ALPHA}-1"));
    assert_eq!(why["sources"][0]["url"], format!("/app/t/{ALPHA}"));
    let err = sock
        .call("memory.why", &json!({ "fact": 999_999 }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("unknown_fact"));

    // Pinned comes first; muted is gone unless asked for.
    let repo = fact(&all, "github.com/alpha-co/billing", "");
    sock.call("memory.pin", &json!({ "fact": repo["fact"] }))
        .await
        .unwrap();
    let ip = fact(&all, "203.0.113.9", "");
    sock.call("memory.mute", &json!({ "fact": ip["fact"] }))
        .await
        .unwrap();
    let now = sock.call("memory.facts", &json!({})).await.unwrap();
    assert_eq!(now[0]["subject"], "github.com/alpha-co/billing");
    assert_eq!(now[0]["pinned"], true);
    assert!(!subjects(&now).contains(&"203.0.113.9".to_string()));
    let with_muted = sock
        .call("memory.facts", &json!({ "muted": true, "kind": "address" }))
        .await
        .unwrap();
    assert_eq!(subjects(&with_muted), vec!["203.0.113.9".to_string()]);

    // A line appended while vyred runs is learned, without anyone asking for it.
    let mut more = std::fs::OpenOptions::new()
        .append(true)
        .open(b_dir.join(format!("{BETA}.jsonl")))
        .unwrap();
    std::io::Write::write_all(
        &mut more,
        user(
            BETA,
            2,
            &beta,
            "The runbook is at https://wiki.beta.example/runbook.",
        )
        .as_bytes(),
    )
    .unwrap();
    drop(more);
    facts_until(
        &sock,
        json!({ "project": "beta", "about": "runbook" }),
        |f| f.as_array().is_some_and(|a| !a.is_empty()),
    )
    .await;

    // A restart resumes from where the curator stopped: nothing is learned twice.
    vyred.stop().await;
    let vyred = InProcess::start(&home, vec![]).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let again = vyred
        .socket_client()
        .call("memory.facts", &json!({ "about": "Juno" }))
        .await
        .unwrap();
    assert_eq!(again.as_array().unwrap().len(), 2, "{again:#}");
    assert!(again.as_array().unwrap().iter().all(|f| f["seen"] == 1));
    vyred.stop().await;
    let events = stored_events(&home.home().database());
    assert!(events.iter().any(|(_, t, _)| t == "memory.learned"));
    let superseded: Vec<&Value> = events
        .iter()
        .filter(|(_, t, _)| t == "memory.superseded")
        .map(|(_, _, p)| p)
        .collect();
    assert_eq!(superseded.len(), 1, "{superseded:?}");
    assert_eq!(superseded[0]["subject"], "Juno");
}

/// A person added to a project's file after its threads were read: the turns already read are
/// read again for the new name, so the graph knows where they were mentioned before; the names
/// it knew are not counted twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_added_later_is_found_in_what_was_said_before() {
    let home = TempHome::new("memory-people-later");
    let alpha = home.dir.join("work/alpha");
    std::fs::create_dir_all(alpha.join(".vyre")).unwrap();
    let file = alpha.join(".vyre/project.json");
    std::fs::write(
        &file,
        json!({ "name": "alpha", "people": [{ "name": "Dana Reyes" }] }).to_string(),
    )
    .unwrap();
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    sock.call(
        "projects.create",
        &json!({ "name": "alpha", "home": alpha.display().to_string() }),
    )
    .await
    .unwrap();
    let dir = home.dir.join("home/.claude/projects/-work-alpha");
    std::fs::create_dir_all(&dir).unwrap();
    let transcript = dir.join(format!("{ALPHA}.jsonl"));
    std::fs::write(
        &transcript,
        user(
            ALPHA,
            1,
            &alpha,
            "Priya signed off on the budget with Dana, see https://alpha.example/budget",
        ),
    )
    .unwrap();
    let read = facts_until(&sock, json!({ "project": "alpha" }), |f| {
        subjects(f).contains(&"https://alpha.example/budget".to_string())
    })
    .await;
    let people = |f: &Value| -> Vec<String> {
        f.as_array()
            .unwrap()
            .iter()
            .filter(|x| x["kind"] == "person")
            .map(|x| x["subject"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(people(&read), ["Dana Reyes"], "{read:#}");

    // Priya joins the project's file; the next turn read wakes the curator.
    std::fs::write(
        &file,
        json!({ "name": "alpha", "people": [{ "name": "Dana Reyes" }, { "name": "Priya Natarajan" }] })
            .to_string(),
    )
    .unwrap();
    let mut more = std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap();
    std::io::Write::write_all(
        &mut more,
        user(
            ALPHA,
            2,
            &alpha,
            "the invoice is at https://alpha.example/invoice",
        )
        .as_bytes(),
    )
    .unwrap();
    drop(more);
    let after = facts_until(
        &sock,
        json!({ "project": "alpha", "kind": "person" }),
        |f| f.as_array().unwrap().len() == 2,
    )
    .await;
    let priya = after
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["subject"] == "Priya Natarajan")
        .unwrap_or_else(|| panic!("{after:#}"));
    let why = sock
        .call("memory.why", &json!({ "fact": priya["fact"] }))
        .await
        .unwrap();
    assert!(
        why.to_string().contains("signed off on the budget"),
        "it points at the turn it was said in: {why}"
    );
    let dana = after
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["subject"] == "Dana Reyes")
        .unwrap();
    assert_eq!(dana["seen"], 1, "Dana is not counted again: {dana}");
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_people_a_project_names_are_marked_where_its_own_threads_mention_them() {
    let home = TempHome::new("memory-people");
    let (alpha, beta) = (home.dir.join("work/alpha"), home.dir.join("work/beta"));
    std::fs::create_dir_all(alpha.join(".vyre")).unwrap();
    std::fs::create_dir_all(&beta).unwrap();
    std::fs::write(
        alpha.join(".vyre/project.json"),
        json!({ "name": "alpha", "people": [
            { "name": "Dana Reyes", "email": "dana@alpha.example" },
            { "name": "<img src=x onerror=alert(1)>" },
            { "name": 42 },
        ] })
        .to_string(),
    )
    .unwrap();
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    for (name, folder) in [("alpha", &alpha), ("beta", &beta)] {
        sock.call(
            "projects.create",
            &json!({ "name": name, "home": folder.display().to_string() }),
        )
        .await
        .unwrap();
    }
    let got = sock
        .call("projects.get", &json!({ "project": "alpha" }))
        .await
        .unwrap();
    assert_eq!(got["people"][0]["name"], "Dana Reyes", "{got}");
    assert_eq!(
        got["people"].as_array().unwrap().len(),
        2,
        "a name that is not text is left out: {got}"
    );

    // Written while vyred runs: the curator reads them with the projects as they are now.
    let transcripts = home.dir.join("home/.claude/projects");
    for (dir, id, folder, text) in [
        (
            "-work-alpha",
            ALPHA,
            &alpha,
            "Dana wants the invoice by friday.",
        ),
        (
            "-work-beta",
            BETA,
            &beta,
            "Dana Reyes from the other client called about https://beta.example/status.",
        ),
    ] {
        std::fs::create_dir_all(transcripts.join(dir)).unwrap();
        std::fs::write(
            transcripts.join(dir).join(format!("{id}.jsonl")),
            user(id, 1, folder, text),
        )
        .unwrap();
    }
    let a = facts_until(
        &sock,
        json!({ "project": "alpha", "kind": "person" }),
        |f| !f.as_array().unwrap().is_empty(),
    )
    .await;
    assert_eq!(subjects(&a), ["Dana Reyes"], "{a:#}");
    let why = sock
        .call("memory.why", &json!({ "fact": a[0]["fact"] }))
        .await
        .unwrap();
    assert!(why.to_string().contains(ALPHA), "{why}");
    // Beta names nobody: once its turn is read (its URL is known), the same name there is no
    // person of its project's.
    facts_until(&sock, json!({ "project": "beta" }), |f| {
        subjects(f).contains(&"https://beta.example/status".to_string())
    })
    .await;
    let b = sock
        .call(
            "memory.facts",
            &json!({ "project": "beta", "kind": "person" }),
        )
        .await
        .unwrap();
    assert_eq!(b, json!([]), "{b:#}");
    vyred.stop().await;
}
