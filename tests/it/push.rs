//! Web Push (modules/push, ADR 0020) against the fake push service in vyre-fake-api, which checks
//! the VAPID token and opens each message with the subscription's own key, as a browser's push
//! service and the browser would. Who may subscribe, and where to; a test message; a service
//! that says a subscription is gone, and a revoked device, forget it; and, on the real CLI, an
//! ask that reaches every subscription, is answered from a notification by a device, and is
//! withdrawn from the others.

use std::time::Duration;

use serde_json::{Value, json};

use vyre::surfaces::client::Client;

use crate::fake_api::FakeApi;
use crate::fake_api::push::{Received, Subscription};
use crate::support::*;
use crate::threads_e2e::*;

fn subscribe_input(sub: &Subscription) -> Value {
    json!({ "endpoint": sub.endpoint, "keys": { "p256dh": sub.p256dh, "auth": sub.auth } })
}

/// Until the subscription has received `n` messages (within 60 s).
async fn received(api: &FakeApi, id: &str, n: usize) -> Vec<Received> {
    for _ in 0..600 {
        let got = api.push.received(id);
        if got.len() >= n {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "{id} received {} of {n} messages",
        api.push.received(id).len()
    );
}

/// A device "phone" subscribed to the fake push service, and its client.
async fn subscribed_phone(vyred: &InProcess, api: &FakeApi) -> (Subscription, Client) {
    let (_, token) = vyred.device_token("phone").await;
    let phone = vyred.http_client(Some(&token));
    let sub = api.push.subscribe(&api.url(), None);
    phone
        .call("push.subscribe", &subscribe_input(&sub))
        .await
        .unwrap();
    (sub, phone)
}

async fn started(name: &str, api: &FakeApi) -> (TempHome, InProcess) {
    let home = TempHome::new(name);
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    let config = json!({ "push": { "services": [api.url()] } });
    std::fs::write(home.home().config_file(), config.to_string()).unwrap();
    let vyred = InProcess::start(&home, vec![]).await;
    (home, vyred)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_device_subscribes_and_only_to_a_listed_push_service() {
    let api = FakeApi::start().await;
    let (home, vyred) = started("push-who", &api).await;
    let sock = vyred.socket_client();
    let (device, token) = vyred.device_token("phone").await;
    let phone = vyred.http_client(Some(&token));
    let sub = api.push.subscribe(&api.url(), None);

    // The terminal is a person, but not a browser that can show a notification.
    let err = sock
        .call("push.subscribe", &subscribe_input(&sub))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("device_only"), "{err:?}");

    // A subscription that points anywhere else would make vyred post where a caller says.
    for elsewhere in [
        "http://127.0.0.1:9/push/send/x",
        "https://fcm.googleapis.com.evil.example/send/x",
        "http://169.254.169.254/latest/meta-data",
    ] {
        let mut input = subscribe_input(&sub);
        input["endpoint"] = json!(elsewhere);
        let err = phone.call("push.subscribe", &input).await.unwrap_err();
        assert_eq!(
            err.code(),
            Some("push_service_refused"),
            "{elsewhere}: {err:?}"
        );
    }
    let mut input = subscribe_input(&sub);
    input["keys"]["p256dh"] = json!("B".repeat(87));
    let err = phone.call("push.subscribe", &input).await.unwrap_err();
    assert_eq!(err.code(), Some("invalid_input"), "{err:?}");
    assert_eq!(
        sock.call("push.list", &json!({})).await.unwrap(),
        json!([]),
        "nothing refused was kept"
    );

    let made = phone
        .call("push.subscribe", &subscribe_input(&sub))
        .await
        .unwrap();
    assert_eq!(made["device"], device);
    assert_eq!(made["service"], api.url());
    // The same browser again replaces its subscription, not adds one.
    let again = phone
        .call("push.subscribe", &subscribe_input(&sub))
        .await
        .unwrap();
    assert_eq!(again["subscription"], made["subscription"]);
    let listed = phone.call("push.list", &json!({})).await.unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(
        (
            listed[0]["device_name"].as_str(),
            listed[0]["mine"].as_bool()
        ),
        (Some("phone"), Some(true))
    );
    assert!(
        !listed.to_string().contains(&sub.endpoint) && !listed.to_string().contains(&sub.auth),
        "the list never shows an endpoint or a key: {listed}"
    );

    // A test message, as the browser opens it, signed as this vyred.
    let key = sock.call("push.key", &json!({})).await.unwrap();
    let sent = phone.call("push.test", &json!({})).await.unwrap();
    assert_eq!(
        (sent["sent"].as_u64(), sent["failed"].as_u64()),
        (Some(1), Some(0))
    );
    let got = received(&api, &sub.id, 1).await;
    assert_eq!(got[0].payload["kind"], "test");
    assert_eq!(got[0].vapid["k"], key["public_key"]);
    assert_eq!(got[0].vapid["aud"], api.url());
    assert_eq!(got[0].vapid["sub"], "https://vyre.run");
    assert_eq!(got[0].urgency.as_deref(), Some("normal"));

    // The service says the subscription is gone (the person turned notifications off in the
    // browser): it is forgotten.
    api.push.make_gone(&sub.id);
    let sent = phone.call("push.test", &json!({})).await.unwrap();
    assert_eq!(
        (sent["sent"].as_u64(), sent["failed"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(sock.call("push.list", &json!({})).await.unwrap(), json!([]));
    let err = phone.call("push.test", &json!({})).await.unwrap_err();
    assert_eq!(err.code(), Some("not_subscribed"));

    // A revoked device's subscriptions go with it.
    let sub2 = api.push.subscribe(&api.url(), None);
    phone
        .call("push.subscribe", &subscribe_input(&sub2))
        .await
        .unwrap();
    sock.call("devices.revoke", &json!({ "id": device }))
        .await
        .unwrap();
    let mut left = Value::Null;
    for _ in 0..100 {
        left = sock.call("push.list", &json!({})).await.unwrap();
        if left == json!([]) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(left, json!([]), "a revoked device gets no more messages");
    vyred.stop().await;
    let events = stored_events(&home.home().database());
    let whys: Vec<&str> = events
        .iter()
        .filter(|(_, t, _)| t == "push.unsubscribed")
        .filter_map(|(_, _, p)| p["why"].as_str())
        .collect();
    assert_eq!(whys, ["gone", "device_revoked"]);
    assert!(
        !events
            .iter()
            .any(|(_, _, p)| p.to_string().contains(&sub.endpoint)),
        "no event holds an endpoint"
    );
}

/// Another module (the Gate, the planner) notifies every device through `push.notify`; a
/// session or a person cannot, and a module's notice carries its own tag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_module_notifies_every_device_and_nobody_else_may() {
    let api = FakeApi::start().await;
    let home = TempHome::new("push-notify");
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    let config = json!({ "push": { "services": [api.url()] } });
    std::fs::write(home.home().config_file(), config.to_string()).unwrap();
    // A module of the test's own (the planner is a real module now).
    let notifier = Probe::module("notifier", &[], Start::Ok);
    let vyred = InProcess::start(&home, vec![notifier]).await;
    let sock = vyred.socket_client();
    let (sub, phone) = subscribed_phone(&vyred, &api).await;

    let reminder = json!({ "tag": "standup", "title": "Stand-up in 10 minutes", "body": "Notes are in the thread.", "url": "/app/t/abc" });
    // The person's terminal and a device are not modules.
    for refused in [
        sock.call("push.notify", &reminder).await.unwrap_err(),
        phone.call("push.notify", &reminder).await.unwrap_err(),
    ] {
        assert_eq!(refused.code(), Some("modules_only"), "{refused:?}");
    }
    // A module's notice may open only the app.
    for url in ["https://evil.example/", "/app//evil.example", "/elsewhere"] {
        let mut bad = reminder.clone();
        bad["url"] = json!(url);
        let err = sock
            .call(
                "notifier.call",
                &json!({ "tool": "push.notify", "input": bad }),
            )
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some("invalid_input"), "{url}: {err:?}");
    }
    let sent = sock
        .call(
            "notifier.call",
            &json!({ "tool": "push.notify", "input": reminder }),
        )
        .await
        .unwrap();
    assert_eq!(sent["sent"], 1, "{sent}");
    let got = received(&api, &sub.id, 1).await;
    assert_eq!(
        got[0].payload,
        json!({ "v": 1, "kind": "notice", "tag": "notice:notifier:standup", "title": "Stand-up in 10 minutes", "body": "Notes are in the thread.", "url": "/app/t/abc" })
    );
    // Withdrawn under the same tag and Topic.
    sock.call(
        "notifier.call",
        &json!({ "tool": "push.notify", "input": { "tag": "standup", "withdraw": true } }),
    )
    .await
    .unwrap();
    let got = received(&api, &sub.id, 2).await;
    assert_eq!(got[1].payload["kind"], "withdraw");
    assert_eq!(got[1].payload["tag"], "notice:notifier:standup");
    assert!(got[0].topic.is_some() && got[0].topic == got[1].topic);
    vyred.stop().await;
}

/// What falls due reaches the person's phone (issue 23): a reminder, pushed as the planner's
/// notice when it falls due and withdrawn when it is done; one done before it fell due is never
/// pushed; and a watcher turned off after failing says so on the phone, withdrawn when it is
/// turned on again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_falls_due_and_a_watcher_turned_off_reach_the_phone_and_leave_it() {
    let api = FakeApi::start().await;
    let (home, vyred) = started("push-planner", &api).await;
    let sock = vyred.socket_client();
    let (sub, _) = subscribed_phone(&vyred, &api).await;

    // Done before its time: nothing is ever pushed for it.
    let early = sock
        .call(
            "planner.add",
            &json!({ "text": "never pushed", "at": "in 2s" }),
        )
        .await
        .unwrap();
    sock.call("planner.done", &json!({ "item": early["id"] }))
        .await
        .unwrap();
    let due = sock
        .call(
            "planner.add",
            &json!({ "text": "check the deploy", "at": "in 1s", "kind": "alarm" }),
        )
        .await
        .unwrap();
    let id = due["id"].as_i64().unwrap();
    let got = received(&api, &sub.id, 1).await;
    let tag = format!("notice:planner:item:{id}");
    assert_eq!(
        got[0].payload,
        json!({ "v": 1, "kind": "notice", "tag": tag, "title": "Alarm", "body": "check the deploy", "url": "/app/needs" })
    );
    assert_eq!(
        got[0].urgency.as_deref(),
        Some("high"),
        "it wakes the phone"
    );
    // Done in the app: its notice leaves the phone.
    sock.call("planner.done", &json!({ "item": id }))
        .await
        .unwrap();
    let got = received(&api, &sub.id, 2).await;
    assert_eq!(got[1].payload["kind"], "withdraw");
    assert_eq!(got[1].payload["tag"], tag);
    assert_eq!(got[0].topic, got[1].topic, "it replaces the notice");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(
        api.push.received(&sub.id).len(),
        2,
        "the item done early was never pushed: {:?}",
        api.push.received(&sub.id)
    );

    // A watcher failing five times in a row is turned off, and the phone is told why.
    if crate::watchers::runnable() {
        crate::watchers::project(&sock, &home, "Site").await;
        let script = "export async function watch({ log }) { log('fetching'); throw new Error('the feed moved'); }";
        sock.call(
            "watchers.create",
            &json!({ "name": "news", "project": "Site", "schedule": "0 9 * * *", "script": script }),
        )
        .await
        .unwrap();
        sock.call("watchers.resume", &json!({ "name": "news" }))
            .await
            .unwrap();
        for _ in 0..5 {
            let ran = sock
                .call("watchers.run", &json!({ "name": "news" }))
                .await
                .unwrap();
            assert_eq!(ran["ok"], false, "{ran}");
        }
        let got = received(&api, &sub.id, 3).await;
        let off = &got[2].payload;
        assert_eq!(off["tag"], "notice:watchers:off:news", "{off}");
        assert_eq!(off["title"], "Watcher news was turned off");
        assert!(
            off["body"].as_str().unwrap().contains("the feed moved"),
            "{off}"
        );
        assert_eq!(off["url"], "/app/watchers");
        // Turned on again by the person: the notice goes.
        sock.call("watchers.resume", &json!({ "name": "news" }))
            .await
            .unwrap();
        let got = received(&api, &sub.id, 4).await;
        assert_eq!(got[3].payload["kind"], "withdraw");
        assert_eq!(got[3].payload["tag"], "notice:watchers:off:news");
    }
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_push_service_is_tried_again_and_the_key_survives_a_restart() {
    let api = FakeApi::start().await;
    let (home, vyred) = started("push-retry", &api).await;
    let key = vyred
        .socket_client()
        .call("push.key", &json!({}))
        .await
        .unwrap();
    let (_, token) = vyred.device_token("laptop").await;
    let laptop = vyred.http_client(Some(&token));
    let sub = api
        .push
        .subscribe(&api.url(), key["public_key"].as_str().map(String::from));
    laptop
        .call("push.subscribe", &subscribe_input(&sub))
        .await
        .unwrap();
    api.push.fail_next(&[503]);
    let sent = laptop.call("push.test", &json!({})).await.unwrap();
    assert_eq!(sent["sent"], 1, "delivered on the second try: {sent}");
    assert_eq!(received(&api, &sub.id, 1).await.len(), 1);
    vyred.stop().await;

    // The same key after a restart: the subscription (made for it) still takes messages.
    let vyred = InProcess::start(&home, vec![]).await;
    let again = vyred
        .socket_client()
        .call("push.key", &json!({}))
        .await
        .unwrap();
    assert_eq!(again["public_key"], key["public_key"]);
    let laptop = vyred.http_client(Some(&token));
    let sent = laptop.call("push.test", &json!({})).await.unwrap();
    assert_eq!(sent["sent"], 1, "{sent}");
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn an_ask_reaches_every_device_is_answered_from_a_notification_and_withdrawn_elsewhere() {
    let push = FakeApi::start().await;
    let r = rig_configured("push-ask", json!({ "push": { "services": [push.url()] } })).await;
    let mut stream = r.sock.events("types=ask.*,thread.*", None).await.unwrap();
    let (phone_id, phone_token) = r.vyred.device_token("phone").await;
    let (_, laptop_token) = r.vyred.device_token("laptop").await;
    let phone = r.vyred.http_client(Some(&phone_token));
    let laptop = r.vyred.http_client(Some(&laptop_token));
    let (on_phone, on_laptop) = (
        push.push.subscribe(&push.url(), None),
        push.push.subscribe(&push.url(), None),
    );
    phone
        .call("push.subscribe", &subscribe_input(&on_phone))
        .await
        .unwrap();
    laptop
        .call("push.subscribe", &subscribe_input(&on_laptop))
        .await
        .unwrap();
    // The laptop is in use right now; it still gets every message (nothing is held back
    // because a device was recently active).
    laptop.call("threads.list", &json!({})).await.unwrap();

    let thread = start_thread(&r).await;
    r.sock
        .call(
            "threads.rename",
            &json!({ "thread": thread, "title": "Tidy up" }),
        )
        .await
        .unwrap();
    r.sock
        .call(
            "threads.send",
            &json!({ "thread": thread, "text": "RUNBASH touch pushed.txt" }),
        )
        .await
        .unwrap();
    let raised = events_until(&mut stream, |e| e["type"] == "ask.raised").await;
    let ask = of_type(&raised, "ask.raised")[0]["payload"]["ask"]
        .as_str()
        .unwrap()
        .to_string();
    for sub in [&on_phone, &on_laptop] {
        let got = received(&push, &sub.id, 1).await;
        let p = &got[0].payload;
        assert_eq!(p["kind"], "ask");
        assert_eq!(p["ask"], ask.as_str());
        assert_eq!(p["title"], "Allow Bash?");
        assert_eq!(p["body"], "touch pushed.txt\nTidy up");
        assert_eq!(p["actions"], json!(["allow", "deny"]));
        assert_eq!(p["url"], format!("/app/t/{thread}"));
        assert_eq!(got[0].urgency.as_deref(), Some("high"));
        assert!(got[0].topic.as_deref().is_some_and(|t| t.len() == 32));
    }

    // Allow, pressed on the phone's notification: the phone's own credential answers.
    phone
        .call(
            "threads.answer",
            &json!({ "ask": ask, "decision": "allow", "via": "notification" }),
        )
        .await
        .unwrap();
    let answered = events_until(&mut stream, |e| e["type"] == "ask.answered").await;
    let payload = &of_type(&answered, "ask.answered")[0]["payload"];
    assert_eq!(payload["by"], format!("device:{phone_id}"));
    assert_eq!(payload["via"], "notification");
    events_until(&mut stream, |e| e["type"] == "thread.finished").await;
    assert!(
        r.work.join("pushed.txt").exists(),
        "the allowed command ran"
    );

    // Both notifications are taken back, under the ask's topic.
    for sub in [&on_phone, &on_laptop] {
        let got = received(&push, &sub.id, 2).await;
        assert_eq!(got[1].payload["kind"], "withdraw");
        assert_eq!(got[1].payload["tag"], format!("ask:{ask}"));
        assert_eq!(
            got[1].topic, got[0].topic,
            "collapsed with the ask it withdraws"
        );
    }
    // `via` is a word, never a way to answer as someone else.
    let err = phone
        .call(
            "threads.answer",
            &json!({ "ask": ask, "decision": "allow", "via": "terminal" }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("invalid_input"), "{err:?}");
}
