//! The onboarding ends cleanly: no link, device or code from it outlives it or reaches past its fence.
//!
//! The attacker is a device the person no longer means to trust: a stale onboarding tab, a link
//! printed before the owner existed (by `vyre open`, or in the log at a start), a pairing code
//! or a sign-in link offered where the other is spent. Each test makes the attack against a
//! real vyred over loopback HTTP and checks the refusal and that nothing changed: no device, the
//! owner as it was, no event.

use std::io::BufRead;
use std::time::Duration;

use hyper::Method;
use serde_json::{Value, json};

use super::browser::{Browser, devices, events_after, newest_event, token_of};
use crate::support::*;

/// A browser in the onboarding: it spent an onboarding link before any owner exists.
async fn onboarding_browser(vyred: &InProcess) -> Browser {
    let link = vyred
        .socket_client()
        .call("devices.link", &json!({}))
        .await
        .unwrap();
    assert_eq!(link["kind"], "onboard");
    let mut browser = Browser::new(vyred.http);
    let (status, body) = browser.redeem(&token_of(&link)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["kind"], "onboard");
    browser
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_onboarding_browser_cannot_make_a_pairing_code_and_pair_itself_a_device() {
    let home = TempHome::new("attack-onboard-pair");
    let vyred = InProcess::start(&home, vec![]).await;
    let person = vyred.socket_client();
    let mut tab = onboarding_browser(&vyred).await;
    let before = newest_event(&person).await;
    let devices_before = devices(&person).await;

    // The attack: a pairing code from inside the fence, then spent at /v1/pair for a device
    // of kind `vyre`, which no fence holds.
    let (status, body) = tab.call("pairing.code", json!({})).await;
    if status == 200 {
        let code = body["data"]["code"].as_str().unwrap().to_string();
        let (paired, answer) = vyred
            .http_client(None)
            .json(
                Method::POST,
                "/v1/pair",
                Some(
                    serde_json::to_vec(
                        &json!({ "code": code, "name": "not a Mac", "key": a_key() }),
                    )
                    .unwrap(),
                ),
                &[],
            )
            .await
            .unwrap();
        panic!(
            "an onboarding browser made a pairing code; /v1/pair then answered {paired}: {answer}"
        );
    }
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("onboarding_only")),
        "{body}"
    );
    for tool in ["pairing.add", "pairing.list", "pairing.remove"] {
        let input = match tool {
            "pairing.add" => json!({ "address": "127.0.0.1:9", "code": "0000-0000-0000" }),
            "pairing.remove" => json!({ "id": "b0000" }),
            _ => json!({}),
        };
        let (status, body) = tab.call(tool, input).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (403, Some("onboarding_only")),
            "{tool}: {body}"
        );
    }
    // Nor a device on the private network (a WireGuard key no fence holds), nor the name.
    for (tool, input) in [
        (
            "network.join",
            json!({ "name": "not a phone", "endpoint": "vyre.example.test:51820" }),
        ),
        ("names.claim", json!({ "name": "alex" })),
    ] {
        let (status, body) = tab.call(tool, input).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (403, Some("onboarding_only")),
            "{tool}: {body}"
        );
    }
    // Its tool list and its event stream leave pairing out too.
    let (_, tools) = tab.request(Method::GET, "/v1/tools", None).await;
    let names: Vec<&str> = tools["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"onboarding.finish"), "{names:?}");
    assert!(
        !names.iter().any(|n| n.starts_with("pairing.")),
        "{names:?}"
    );
    let (status, _) = tab
        .request(Method::GET, "/v1/events?types=pairing.*&follow=false", None)
        .await;
    assert_eq!(status, 403);

    // Nothing changed.
    assert_eq!(devices(&person).await, devices_before);
    assert_eq!(events_after(&person, before).await, Vec::<String>::new());
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_onboarding_link_made_before_the_owner_signs_nobody_in_after_it() {
    let home = TempHome::new("attack-onboard-old-link");
    let vyred = InProcess::start(&home, vec![]).await;
    let person = vyred.socket_client();
    // `vyre open` before anyone finished: an onboarding link, kept (a terminal's scrollback).
    let old = person.call("devices.link", &json!({})).await.unwrap();
    assert_eq!(old["kind"], "onboard");
    let mut tab = onboarding_browser(&vyred).await;
    let (status, body) = tab
        .request(Method::POST, "/v1/session/finish", Some(json!({})))
        .await;
    assert_eq!(status, 200, "{body}");
    let owner = person.call("onboarding.state", &json!({})).await.unwrap()["owner"].clone();

    let before = newest_event(&person).await;
    let devices_before = devices(&person).await;
    let mut late = Browser::new(vyred.http);
    let (status, body) = late.redeem(&token_of(&old)).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("onboarding_over")),
        "{body}"
    );
    assert!(late.cookie.is_none() && late.key.is_none());
    assert_eq!(devices(&person).await, devices_before, "no device");
    assert_eq!(events_after(&person, before).await, Vec::<String>::new());
    assert_eq!(
        person.call("onboarding.state", &json!({})).await.unwrap()["owner"],
        owner
    );

    // After the onboarding, `vyre open` makes sign-in links: a browser device, never an owner.
    let link = person.call("devices.link", &json!({})).await.unwrap();
    assert_eq!(link["kind"], "login");
    let mut other = Browser::new(vyred.http);
    let (status, body) = other.redeem(&token_of(&link)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["kind"], "device");
    assert_eq!(body["data"]["device"]["kind"], "browser");
    vyred.stop().await;
}

/// `vyre daemon` as a child, and the onboarding link it printed at its start.
fn start_printing_link(home: &TempHome) -> (DaemonChild, String) {
    let mut child = home
        .command()
        .arg("daemon")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some(rest) = line.strip_prefix("onboard: ") {
                let _ = tx.send(rest.split_whitespace().next().unwrap_or("").to_string());
            }
        }
    });
    let link = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("vyred prints an onboarding link at its start");
    (DaemonChild { child: Some(child) }, link)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_link_printed_at_a_start_ends_with_the_onboarding() {
    let home = TempHome::new("attack-onboard-start-link");
    let (mut first, printed) = start_printing_link(&home);
    let token = printed.split("t=").nth(1).unwrap().to_string();
    // Restarted before anyone finished: a second link in the log, the first still valid.
    first.signal(nix::sys::signal::Signal::SIGTERM);
    first.wait(Duration::from_secs(30));
    let (_daemon, printed_again) = start_printing_link(&home);
    let second = printed_again.split("t=").nth(1).unwrap().to_string();
    let person = home.socket_client();
    let addr = home.http_addr();

    let mut tab = Browser::new(addr);
    assert_eq!(tab.redeem(&second).await.0, 200);
    tab.call(
        "onboarding.you",
        json!({ "name": "Sam", "assistant_name": "Juno" }),
    )
    .await;
    let (status, body) = tab
        .request(Method::POST, "/v1/session/finish", Some(json!({})))
        .await;
    assert_eq!(status, 200, "{body}");

    let before = newest_event(&person).await;
    let devices_before = devices(&person).await;
    let mut late = Browser::new(addr);
    let (status, body) = late.redeem(&token).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("onboarding_over")),
        "{body}"
    );
    assert!(late.cookie.is_none());
    assert_eq!(devices(&person).await, devices_before);
    assert_eq!(events_after(&person, before).await, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leftover_onboarding_tab_cannot_rename_the_owner_or_promote_itself() {
    let home = TempHome::new("attack-onboard-leftover");
    let vyred = InProcess::start(&home, vec![]).await;
    let person = vyred.socket_client();
    let mut laptop = onboarding_browser(&vyred).await;
    // A second tab (another browser, a phone) that spent another onboarding link and stayed.
    let mut stale = onboarding_browser(&vyred).await;
    laptop
        .call(
            "onboarding.you",
            json!({ "name": "Sam", "assistant_name": "Juno" }),
        )
        .await;
    let (status, done) = laptop
        .request(
            Method::POST,
            "/v1/session/finish",
            Some(json!({ "device_name": "laptop" })),
        )
        .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["data"]["device"]["kind"], "browser");
    // Finishing revoked the other onboarding device.
    let listed = devices(&person).await;
    assert!(
        listed.contains(&("laptop".into(), "browser".into(), false)),
        "{listed:?}"
    );
    assert_eq!(
        listed
            .iter()
            .filter(|(_, kind, revoked)| kind == "onboarding" && !revoked)
            .count(),
        0,
        "{listed:?}"
    );

    let before = newest_event(&person).await;
    let devices_before = devices(&person).await;
    let (status, body) = stale
        .call(
            "onboarding.you",
            json!({ "name": "Mallory", "assistant_name": "Evil" }),
        )
        .await;
    assert_eq!(status, 401, "{body}");
    let (status, body) = stale
        .request(
            Method::POST,
            "/v1/session/finish",
            Some(json!({ "device_name": "mallory" })),
        )
        .await;
    assert_eq!(status, 401, "{body}");
    let (status, body) = stale.call("onboarding.finish", json!({})).await;
    assert_eq!(status, 401, "{body}");
    let (_, session) = stale.request(Method::GET, "/v1/session", None).await;
    assert_eq!(session["data"]["kind"], Value::Null, "{session}");

    // Nothing changed: the owner's name, the devices, the events.
    let state = person.call("onboarding.state", &json!({})).await.unwrap();
    assert_eq!(state["owner"]["name"], "Sam");
    assert_eq!(state["names"]["assistant"], "Juno");
    assert_eq!(devices(&person).await, devices_before);
    assert_eq!(events_after(&person, before).await, Vec::<String>::new());
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_there_is_an_owner_the_onboarding_refuses_to_start_again() {
    let home = TempHome::new("attack-onboard-again");
    let vyred = InProcess::start(&home, vec![]).await;
    let person = vyred.socket_client();
    let mut laptop = onboarding_browser(&vyred).await;
    laptop
        .call(
            "onboarding.you",
            json!({ "name": "Sam", "assistant_name": "Juno" }),
        )
        .await;
    assert_eq!(
        laptop
            .request(Method::POST, "/v1/session/finish", Some(json!({})))
            .await
            .0,
        200
    );

    // A full device (the laptop itself, now a browser) and the person at the terminal: both
    // are told the onboarding is over, and nothing changes.
    let before = newest_event(&person).await;
    let devices_before = devices(&person).await;
    for (tool, input) in [
        (
            "onboarding.you",
            json!({ "name": "Mallory", "assistant_name": "Evil" }),
        ),
        ("onboarding.finish", json!({ "device_name": "again" })),
    ] {
        let (status, body) = laptop.call(tool, input.clone()).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (409, Some("onboarded")),
            "{tool}: {body}"
        );
        let err = person.call(tool, &input).await.unwrap_err();
        assert_eq!(err.code(), Some("onboarded"), "{tool}");
    }
    let (status, body) = laptop
        .request(Method::POST, "/v1/session/finish", Some(json!({})))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("onboarded"))
    );
    let state = person.call("onboarding.state", &json!({})).await.unwrap();
    assert_eq!(state["owner"]["name"], "Sam");
    assert_eq!(state["names"]["owner"], "Sam");
    assert_eq!(devices(&person).await, devices_before);
    assert_eq!(events_after(&person, before).await, Vec::<String>::new());

    // Settings renames the owner with its own tool, which needs the owner to exist.
    let (status, body) = laptop
        .call("onboarding.rename", json!({ "name": "Samantha" }))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["owner"]["name"], "Samantha");
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pairing_code_and_a_sign_in_link_are_not_interchangeable() {
    let home = TempHome::new("attack-onboard-kinds");
    let vyred = InProcess::start(&home, vec![]).await;
    let person = vyred.socket_client();
    person.call("onboarding.finish", &json!({})).await.unwrap();
    let code = person.call("pairing.code", &json!({})).await.unwrap()["code"]
        .as_str()
        .unwrap()
        .to_string();
    let link = person.call("devices.link", &json!({})).await.unwrap();
    let token = token_of(&link);
    let before = newest_event(&person).await;
    let devices_before = devices(&person).await;

    // A pairing code at a browser's sign-in, as printed and as bare letters: refused, not spent.
    for typed in [code.clone(), code.replace('-', ""), code.to_lowercase()] {
        let mut browser = Browser::new(vyred.http);
        let (status, body) = browser.redeem(&typed).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (401, Some("pairing_code")),
            "{typed}: {body}"
        );
        assert!(browser.cookie.is_none());
    }
    // A sign-in link at /v1/pair: refused, not spent.
    let pair = |code: String| {
        let client = vyred.http_client(None);
        async move {
            client
                .json(
                    Method::POST,
                    "/v1/pair",
                    Some(
                        serde_json::to_vec(
                            &json!({ "code": code, "name": "a Mac", "key": a_key() }),
                        )
                        .unwrap(),
                    ),
                    &[],
                )
                .await
                .unwrap()
        }
    };
    let (status, body) = pair(token.clone()).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("sign_in_link")),
        "{body}"
    );
    assert_eq!(devices(&person).await, devices_before, "no device");
    assert_eq!(events_after(&person, before).await, Vec::<String>::new());

    // Each still works where it belongs: nothing was spent by the wrong door.
    let (status, body) = pair(code.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["device"]["kind"], "vyre");
    let mut browser = Browser::new(vyred.http);
    let (status, body) = browser.redeem(&token).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["device"]["kind"], "browser");
    vyred.stop().await;
}

/// A well-formed pairing key, so /v1/pair judges the code.
fn a_key() -> String {
    vyre::kernel::presence::DeviceKey::generate()
        .unwrap()
        .public()
}
