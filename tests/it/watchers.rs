//! Watchers (issue 23, spec 7.6), on real Node in a real bubblewrap sandbox: a watcher waits for
//! the person, is tried without filing, files each thing it finds once into its project, runs on
//! its schedule from the kernel's one timer, keeps its vault items out of its log, and is turned
//! off after failures in a row, saying why. Bad declarations and bad runs change nothing.

use std::time::Duration;

use serde_json::{Value, json};
use vyre::surfaces::client::Client;

use crate::support::*;

/// A watcher that finds two things (the same two each time), counts its runs in its cursor,
/// and writes its token into its log.
const FINDS_TWO: &str = r#"
export async function watch({ vault, since, emit, log }) {
  const n = (since ?? 0) + 1;
  log(`run ${n} with ${vault.get('news-token')}`);
  emit({ title: 'First story', url: 'https://example.com/1', id: 'one' });
  emit({ title: 'Second story', body: 'more words', id: 'two' });
  return n;
}
"#;

pub(crate) fn runnable() -> bool {
    let ok = vyre::kernel::jail::bwrap().is_some() && vyre::kernel::jail::find("node").is_some();
    if !ok {
        eprintln!("skipped: watchers need bwrap and node (tests/run installs both)");
    }
    ok
}

async fn events_of(sock: &Client, kind: &str) -> Vec<Value> {
    sock.call("system.events", &json!({ "types": [kind], "limit": 1000 }))
        .await
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

pub(crate) async fn project(sock: &Client, home: &TempHome, name: &str) {
    let dir = home.dir.join(format!("work-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    sock.call("projects.create", &json!({ "name": name, "home": dir }))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_waits_for_the_person_then_files_each_find_once_on_its_schedule() {
    if !runnable() {
        return;
    }
    let home = TempHome::new("watchers-life");
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    project(&sock, &home, "Site").await;
    sock.call(
        "vault.put",
        &json!({ "name": "news-token", "value": "tok-7Hq2-secret-value", "kind": "secret" }),
    )
    .await
    .unwrap();

    let made = sock
        .call(
            "watchers.create",
            &json!({ "name": "news", "project": "Site", "schedule": "* * * * *",
                     "script": FINDS_TWO, "needs": ["news-token"] }),
        )
        .await
        .unwrap();
    assert_eq!(made["paused"], true, "a new watcher waits: {made}");
    assert_eq!(made["waiting"], true, "for the person: {made}");
    assert_eq!(made["next_run_at"], Value::Null);
    assert_eq!(made["created_by"], "person");
    assert_eq!(made["emits"], "watch.news.item");
    let refused = sock
        .call("watchers.run", &json!({ "name": "news" }))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("not on"), "{refused}");
    // What it will run, for the person to read before turning it on.
    let source = sock
        .call("watchers.source", &json!({ "name": "news" }))
        .await
        .unwrap();
    assert_eq!(source["files"][0]["name"], "watcher.json");
    assert!(
        source["files"][0]["text"]
            .as_str()
            .unwrap()
            .contains("news-token")
    );
    assert_eq!(source["files"][1]["name"], "watch.js");
    assert_eq!(source["files"][1]["text"], FINDS_TWO);
    assert_eq!(source["left_out"], 0);
    let read = source["digest"].as_str().unwrap().to_string();
    // Rewritten while the person was reading: turning on what they read is refused.
    sock.call(
        "watchers.create",
        &json!({ "name": "news", "project": "Site", "schedule": "* * * * *", "replace": true,
                 "script": format!("{FINDS_TWO}\n// rewritten"), "needs": ["news-token"] }),
    )
    .await
    .unwrap();
    let e = sock
        .call(
            "watchers.resume",
            &json!({ "name": "news", "digest": read }),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some("changed"), "{e}");
    let still = sock.call("watchers.list", &json!({})).await.unwrap();
    assert_eq!(still[0]["paused"], true, "{still}");
    sock.call(
        "watchers.create",
        &json!({ "name": "news", "project": "Site", "schedule": "* * * * *", "replace": true,
                 "script": FINDS_TWO, "needs": ["news-token"] }),
    )
    .await
    .unwrap();
    let read = sock
        .call("watchers.source", &json!({ "name": "news" }))
        .await
        .unwrap()["digest"]
        .clone();

    // A try, with its vault item as the person's: what it finds, nothing filed, no secret said.
    let tried = sock
        .call("watchers.test", &json!({ "name": "news" }))
        .await
        .unwrap();
    assert_eq!(tried["ok"], false, "not granted yet: {tried}");
    assert!(
        tried["error"].as_str().unwrap().contains("news-token"),
        "{tried}"
    );

    let on = sock
        .call(
            "watchers.resume",
            &json!({ "name": "news", "digest": read }),
        )
        .await
        .unwrap();
    assert_eq!(on["paused"], false);
    assert_eq!(on["waiting"], false);
    let next = on["next_run_at"].as_i64().expect("scheduled");
    let wait = next - vyre::now_ms();
    assert!((0..=60_000).contains(&wait), "at the next minute: {wait}");

    let tried = sock
        .call("watchers.test", &json!({ "name": "news" }))
        .await
        .unwrap();
    assert_eq!(tried["ok"], true, "{tried}");
    assert_eq!(tried["items"].as_array().unwrap().len(), 2);
    assert_eq!(tried["logs"][0], "run 1 with [vault:news-token]");
    let none = sock.call("watchers.items", &json!({})).await.unwrap();
    assert_eq!(
        none["items"].as_array().unwrap().len(),
        0,
        "a try files nothing"
    );

    // Run for real twice: filed once, the cursor moves.
    let ran = sock
        .call("watchers.run", &json!({ "name": "news" }))
        .await
        .unwrap();
    assert_eq!(ran["filed"], 2, "{ran}");
    let again = sock
        .call("watchers.run", &json!({ "name": "news" }))
        .await
        .unwrap();
    assert_eq!(again["filed"], 0, "each find once: {again}");
    assert_eq!(again["since"], 2);
    let items = sock
        .call("watchers.items", &json!({ "project": "Site" }))
        .await
        .unwrap();
    let titles: Vec<&str> = items["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Second story", "First story"], "newest first");
    let told = events_of(&sock, "watch.news.item").await;
    assert_eq!(told.len(), 2);
    assert_eq!(told[0]["project"], "Site");
    assert_eq!(told[0]["payload"]["url"], "https://example.com/1");
    let logs = sock
        .call("watchers.logs", &json!({ "name": "news" }))
        .await
        .unwrap();
    let text = logs.to_string();
    assert!(text.contains("run 2 with [vault:news-token]"), "{text}");
    assert!(!text.contains("tok-7Hq2"), "never the secret: {text}");
    let events = sock
        .call("system.events", &json!({ "limit": 1000 }))
        .await
        .unwrap()
        .to_string();
    assert!(!events.contains("tok-7Hq2"), "nor in any event");
    // What it filed is found by its words, with its watcher, project and link.
    let found = filed(&sock, "more words", 1).await;
    assert_eq!(found[0]["title"], "Second story", "{found:?}");
    assert_eq!(found[0]["watcher"], "news");
    assert_eq!(found[0]["project"], "Site");
    assert!(
        found[0]["snippet"].as_str().unwrap().contains("[more]"),
        "{found:?}"
    );
    let first = filed(&sock, "first", 1).await;
    assert_eq!(first[0]["url"], "https://example.com/1");

    // On its schedule, from the kernel's timer.
    let mut scheduled = false;
    for _ in 0..140 {
        if events_of(&sock, "watcher.ran").await.len() >= 3 {
            scheduled = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(scheduled, "it ran on its schedule within 70 s");
    let listed = sock.call("watchers.list", &json!({})).await.unwrap();
    assert!(
        listed[0]["next_run_at"].as_i64().unwrap() > next,
        "{listed}"
    );
    assert_eq!(listed[0]["filed"], 2);

    // Broken by a rewrite: each failure is told; five in a row turn it off, saying why.
    sock.call(
        "watchers.create",
        &json!({ "name": "news", "project": "Site", "schedule": "@daily", "replace": true,
                 "script": "export async function watch({ log }) { log('fetching the feed'); throw new Error('the feed moved'); }" }),
    )
    .await
    .unwrap();
    let mut last = Value::Null;
    for n in 1..=5 {
        last = sock
            .call("watchers.run", &json!({ "name": "news" }))
            .await
            .unwrap();
        assert_eq!(last["ok"], false, "{last}");
        let failed = events_of(&sock, "watcher.failed").await;
        assert_eq!(failed.len(), n);
        assert_eq!(failed[n - 1]["payload"]["failures"], n as i64);
    }
    assert!(
        last["error"].as_str().unwrap().contains("the feed moved"),
        "{last}"
    );
    assert!(
        !last["error"].as_str().unwrap().contains("exit status"),
        "plain words: {last}"
    );
    let logs = sock
        .call("watchers.logs", &json!({ "name": "news", "limit": 2 }))
        .await
        .unwrap();
    assert_eq!(
        logs["lines"][0]["line"], "fetching the feed",
        "what it said before failing is kept: {logs}"
    );
    assert_eq!(
        logs["lines"][1]["line"], "failed: the feed moved (exit status: 1)",
        "and how it ended: {logs}"
    );
    let off = &sock.call("watchers.list", &json!({})).await.unwrap()[0];
    assert!(
        off["disabled"].as_str().unwrap().contains("the feed moved"),
        "{off}"
    );
    assert_eq!(off["next_run_at"], Value::Null);
    let refused = sock
        .call("watchers.run", &json!({ "name": "news" }))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("not on"), "{refused}");

    // Removed: its folder goes, what it filed stays, and its grant goes back.
    sock.call("watchers.remove", &json!({ "name": "news" }))
        .await
        .unwrap();
    assert!(!home.vyre_home().join("watchers/news").exists());
    let list = sock.call("watchers.list", &json!({})).await.unwrap();
    assert_eq!(list.as_array().unwrap().len(), 0);
    let items = sock.call("watchers.items", &json!({})).await.unwrap();
    assert_eq!(items["items"].as_array().unwrap().len(), 2);
    let revoked = events_of(&sock, "vault.revoked").await;
    assert_eq!(revoked.len(), 1, "{revoked:?}");
    vyred.stop().await;

    // Search's copy lost (as if told while recall was not following): caught up at start, from
    // the events, each item once.
    let db = rusqlite::Connection::open(home.vyre_home().join("vyre.db")).unwrap();
    db.execute_batch("DELETE FROM recall_filed; DELETE FROM recall_marks;")
        .unwrap();
    drop(db);
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let found = filed(&sock, "story", 2).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let again = sock
        .call("recall.filed", &json!({ "query": "story" }))
        .await
        .unwrap();
    assert_eq!(again, json!(found), "each once");
    vyred.stop().await;
}

/// `recall.filed` for `query` once it finds `n` items (within 10 s).
async fn filed(sock: &Client, query: &str, n: usize) -> Vec<Value> {
    let mut found = vec![];
    for _ in 0..100 {
        found = sock
            .call("recall.filed", &json!({ "query": query }))
            .await
            .unwrap()
            .as_array()
            .unwrap()
            .clone();
        if found.len() >= n {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "recall.filed {query:?} found {} of {n}: {found:?}",
        found.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_watchers_and_bad_runs_are_refused_in_words_and_file_nothing() {
    if !runnable() {
        return;
    }
    let home = TempHome::new("watchers-bad");
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    project(&sock, &home, "Site").await;
    let create = |input: Value| {
        let sock = &sock;
        async move { sock.call("watchers.create", &input).await }
    };
    let base = json!({ "name": "w", "project": "Site", "schedule": "@hourly", "script": "x" });
    let with = |k: &str, v: Value| {
        let mut b = base.clone();
        b[k] = v;
        b
    };
    for (input, says) in [
        (with("name", json!("Bad Name")), "is not one Vyre takes"),
        (with("schedule", json!("* * * * * *")), "six fields"),
        (with("project", json!("Nowhere")), "Nowhere"),
        (with("file", json!("../escape.js")), "plain file name"),
        (
            with("emits", json!("thread.turn")),
            "outside the watcher's own",
        ),
        (with("timeout_s", json!(0)), "timeout_s"),
    ] {
        let e = create(input.clone()).await.unwrap_err().to_string();
        assert!(e.contains(says), "{input}: {e}");
    }
    assert!(
        !home.vyre_home().join("watchers/w").exists(),
        "nothing written"
    );

    // Runs that break the protocol, overrun or crash: whole failures, nothing filed.
    for (name, script, says) in [
        (
            "garbage",
            "export async function watch({ emit }) { emit({ title: 'kept?' }); process.stdout.write('not json\\n'); }",
            "line",
        ),
        (
            "forever",
            "export async function watch() { for (;;) {} }",
            "did not finish within 1 s",
        ),
        (
            "exits",
            "export async function watch({ emit }) { emit({ title: 'kept?' }); process.exit(3); }",
            "exit status: 3",
        ),
    ] {
        create(
            json!({ "name": name, "project": "Site", "schedule": "@daily",
                       "script": script, "timeout_s": 1 }),
        )
        .await
        .unwrap();
        sock.call("watchers.resume", &json!({ "name": name }))
            .await
            .unwrap();
        let ran = sock
            .call("watchers.run", &json!({ "name": name }))
            .await
            .unwrap();
        assert_eq!(ran["ok"], false, "{name}: {ran}");
        assert!(
            ran["error"].as_str().unwrap().contains(says),
            "{name}: {ran}"
        );
        assert_eq!(ran["filed"], 0);
    }
    let items = sock.call("watchers.items", &json!({})).await.unwrap();
    assert_eq!(items["items"].as_array().unwrap().len(), 0);
    // A folder broken by hand is listed with why, and does not run.
    std::fs::write(
        home.vyre_home().join("watchers/exits/watcher.json"),
        "{ nope",
    )
    .unwrap();
    let list = sock.call("watchers.list", &json!({})).await.unwrap();
    let broken = list
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == "exits")
        .unwrap();
    assert!(broken["problem"].as_str().is_some(), "{broken}");
    let e = sock
        .call("watchers.run", &json!({ "name": "exits" }))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("watcher.json"), "{e}");
    let e = sock
        .call("watchers.logs", &json!({ "name": "nosuch" }))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("no watcher"), "{e}");
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_runs_its_watcher_with_what_it_was_sent_and_only_with_its_secret() {
    if !runnable() {
        return;
    }
    let home = TempHome::new("watchers-hook");
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    project(&sock, &home, "Shop").await;
    let made = sock
        .call(
            "watchers.create",
            &json!({ "name": "orders", "project": "Shop", "schedule": "webhook",
                     "script": "export async function watch({ webhook, emit }) { emit({ title: `order ${webhook.order}`, id: String(webhook.order) }); }" }),
        )
        .await
        .unwrap();
    let path = made["hook"]
        .as_str()
        .expect("its address, once")
        .to_string();
    assert!(path.starts_with("/v1/hooks/orders/"), "{path}");
    assert_eq!(
        made["next_run_at"],
        Value::Null,
        "a webhook has no schedule"
    );
    let secret = path.rsplit('/').next().unwrap().to_string();
    assert!(secret.len() >= 40, "{secret}");
    let listed = sock.call("watchers.list", &json!({})).await.unwrap();
    assert!(!listed.to_string().contains(&secret), "said once only");
    let db = std::fs::read(home.vyre_home().join("vyre.db")).unwrap();
    assert!(
        !String::from_utf8_lossy(&db).contains(&secret),
        "only its hash is kept"
    );

    // Anyone on the network, with no credential: only the secret opens it.
    let anyone = Client::http(vyred.http, None);
    let post = |path: String, body: &'static str| {
        let anyone = &anyone;
        async move {
            anyone
                .json(
                    hyper::Method::POST,
                    &path,
                    Some(body.as_bytes().to_vec()),
                    &[],
                )
                .await
                .unwrap()
        }
    };
    let (status, body) = post(path.clone(), r#"{"order": 7}"#).await;
    assert_eq!(status, 409, "waits for the person: {body}");
    sock.call("watchers.resume", &json!({ "name": "orders" }))
        .await
        .unwrap();
    for wrong in [
        format!("/v1/hooks/orders/{}x", secret),
        "/v1/hooks/orders/guess".to_string(),
        format!("/v1/hooks/nosuch/{secret}"),
    ] {
        let (status, body) = post(wrong.clone(), r#"{"order": 666}"#).await;
        assert_eq!(status, 404, "{wrong}: {body}");
        assert_eq!(body["error"]["code"], "unknown_hook");
    }
    let (status, body) = post(path.clone(), r#"{"order": 7}"#).await;
    assert_eq!(status, 202, "{body}");
    let mut filed = vec![];
    for _ in 0..100 {
        filed = sock.call("watchers.items", &json!({})).await.unwrap()["items"]
            .as_array()
            .unwrap()
            .clone();
        if !filed.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(filed.len(), 1, "{filed:?}");
    assert_eq!(filed[0]["title"], "order 7");
    // The webhook tool is not a session's, and a person's call needs the secret too.
    let e = sock
        .call(
            "watchers.hook",
            &json!({ "name": "orders", "secret": "guess", "body": {} }),
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("no webhook"), "{e}");
    vyred.stop().await;
}
