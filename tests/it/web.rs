//! Browsers: the one-time links, the device cookie, the onboarding's fence and its finish, and
//! the web app's files.

use std::time::Duration;

use hyper::Method;
use serde_json::{Value, json};

use crate::support::*;

struct Browser {
    client: vyre::surfaces::client::Client,
    cookie: Option<String>,
    /// The key Vyre's page keeps in its origin's storage and sends as `X-Vyre-Key`.
    key: Option<String>,
}

impl Browser {
    fn new(vyred: &InProcess) -> Browser {
        Browser {
            client: vyred.http_client(None),
            cookie: None,
            key: None,
        }
    }

    async fn request(&mut self, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let cookie = self.cookie.clone().map(|c| format!("vyre_device={c}"));
        let mut headers: Vec<(&str, &str)> = vec![];
        if let Some(c) = &cookie {
            headers.push(("cookie", c));
        }
        if let Some(k) = &self.key {
            headers.push(("x-vyre-key", k));
        }
        let res = self
            .client
            .send(
                method,
                path,
                body.map(|b| serde_json::to_vec(&b).unwrap()),
                &headers,
            )
            .await
            .unwrap();
        let status = res.status().as_u16();
        if let Some(set) = res.headers().get("set-cookie") {
            let set = set.to_str().unwrap();
            assert!(set.contains("HttpOnly"), "{set}");
            assert!(set.contains("SameSite=Strict"), "{set}");
            let value = set
                .split(';')
                .next()
                .unwrap()
                .strip_prefix("vyre_device=")
                .unwrap();
            self.cookie = (!value.is_empty()).then(|| value.to_string());
        }
        use http_body_util::BodyExt;
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        let value: Value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        if let Some(key) = value["data"]["key"].as_str() {
            self.key = Some(key.to_string());
        }
        (status, value)
    }

    async fn call(&mut self, tool: &str, input: Value) -> (u16, Value) {
        self.request(Method::POST, &format!("/v1/tools/{tool}"), Some(input))
            .await
    }
}

fn token_of(link: &Value) -> String {
    link["url"]
        .as_str()
        .unwrap()
        .split("t=")
        .nth(1)
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_onboards_through_a_one_time_link_and_becomes_the_owners_device() {
    let home = TempHome::new("web-onboard");
    let vyred = InProcess::start(&home, vec![]).await;
    let person = vyred.socket_client();
    let mut browser = Browser::new(&vyred);

    // Nobody yet: the browser is told so, and nothing else answers it.
    let (status, session) = browser.request(Method::GET, "/v1/session", None).await;
    assert_eq!(status, 200);
    assert_eq!(session["data"]["kind"], Value::Null);
    assert_eq!(session["data"]["onboarded"], false);
    let (status, body) = browser.call("threads.list", json!({})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("unauthenticated"))
    );

    let link = person.call("devices.link", &json!({})).await.unwrap();
    assert_eq!(link["kind"], "onboard");
    let url = link["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("http://{}/onboard?t=", vyred.http)),
        "{url}"
    );
    let token = token_of(&link);

    // Another site cannot spend it.
    let (status, body) = browser
        .client
        .json(
            Method::POST,
            "/v1/session/redeem",
            Some(serde_json::to_vec(&json!({ "token": token })).unwrap()),
            &[("origin", "http://evil.example")],
        )
        .await
        .unwrap();
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("cross_origin"))
    );

    let (status, body) = browser
        .request(
            Method::POST,
            "/v1/session/redeem",
            Some(json!({ "token": token })),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["kind"], "onboard");
    assert!(browser.cookie.is_some());
    // Once only, whoever asks.
    let mut other = Browser::new(&vyred);
    let (status, body) = other
        .request(
            Method::POST,
            "/v1/session/redeem",
            Some(json!({ "token": token })),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("token_used"))
    );
    assert!(other.cookie.is_none());

    // In the onboarding, the browser reaches the onboarding and nothing else.
    let (_, session) = browser.request(Method::GET, "/v1/session", None).await;
    assert_eq!(session["data"]["kind"], "onboard");
    for tool in ["threads.list", "vault.list", "devices.add", "system.status"] {
        let (status, body) = browser.call(tool, json!({})).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (403, Some("onboarding_only")),
            "{tool}"
        );
    }
    let (status, tools) = browser.request(Method::GET, "/v1/tools", None).await;
    assert_eq!(status, 200);
    let names: Vec<&str> = tools["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    // Exactly the tools marked for the onboarding, none of which mints a credential.
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        [
            // What "Your address" shows; network.join and names.claim are not here (the one
            // makes a device, the other needs the owner).
            "names.status",
            "network.status",
            "onboarding.claude",
            "onboarding.done",
            "onboarding.finish",
            "onboarding.skip",
            "onboarding.state",
            "onboarding.you",
            "projects.add-threads",
            "projects.catalog",
            "projects.create",
            "projects.list",
            "recall.status",
            "sessions.claude",
            "vault.status",
        ]
    );
    // The OpenAPI document it is given says the same.
    let (status, doc) = browser.request(Method::GET, "/v1/openapi.json", None).await;
    assert_eq!(status, 200);
    let documented = doc["paths"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|p| p.starts_with("/v1/tools/"))
        .count();
    assert_eq!(documented, names.len());
    let (status, _) = browser
        .request(Method::GET, "/v1/events?types=thread.*&follow=false", None)
        .await;
    assert_eq!(status, 403);

    let (status, state) = browser.call("onboarding.state", json!({})).await;
    assert_eq!(status, 200, "{state}");
    assert_eq!(state["data"]["finished"], false);
    assert_eq!(state["data"]["steps"]["you"], "open");
    assert!(state["data"]["claude"].get("found").is_some());
    let (status, state) = browser
        .call(
            "onboarding.you",
            json!({ "name": "Sam", "assistant_name": "Juno" }),
        )
        .await;
    assert_eq!(status, 200, "{state}");
    assert_eq!(state["data"]["steps"]["you"], "done");
    assert_eq!(state["data"]["names"]["owner"], "Sam");
    let secret = "sk-ant-api03-onboardingtestkey0000000000000000";
    let (status, state) = browser
        .call(
            "onboarding.claude",
            json!({ "mode": "api-key", "value": secret }),
        )
        .await;
    assert_eq!(status, 200, "{state}");
    assert_eq!(state["data"]["steps"]["claude"], "done");
    let (_, state) = browser
        .call("onboarding.skip", json!({ "step": "address" }))
        .await;
    assert_eq!(state["data"]["steps"]["address"], "skipped");
    let (status, body) = browser
        .call("onboarding.skip", json!({ "step": "nope" }))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("invalid_input"))
    );
    // The key is in the vault, granted to sessions, and in no event.
    let items = person.call("vault.list", &json!({})).await.unwrap();
    let item = items
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "anthropic-api-key")
        .expect("the key is stored");
    assert!(
        item["grants"]
            .as_array()
            .unwrap()
            .contains(&json!("module:sessions"))
    );

    let (status, done) = browser
        .request(
            Method::POST,
            "/v1/session/finish",
            Some(json!({ "device_name": "laptop" })),
        )
        .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["data"]["owner"]["name"], "Sam");
    assert_eq!(done["data"]["assistant"], "juno");
    assert_eq!(done["data"]["device"]["kind"], "browser");
    assert_eq!(done["data"]["device"]["name"], "laptop");
    let agents = person.call("agents.list", &json!({})).await.unwrap();
    assert_eq!(agents[0]["name"], "juno");
    assert_eq!(agents[0]["kind"], "assistant");

    // Now a device: the whole API answers it, and the onboarding stays open from Settings.
    let (_, session) = browser.request(Method::GET, "/v1/session", None).await;
    assert_eq!(session["data"]["kind"], "device");
    assert_eq!(session["data"]["owner"]["name"], "Sam");
    let (status, _) = browser.call("threads.list", json!({})).await;
    assert_eq!(status, 200);
    let (_, state) = browser.call("onboarding.state", json!({})).await;
    assert_eq!(state["data"]["finished"], true);

    // A second link is a sign-in for one more browser, a device at once.
    let link = person.call("devices.link", &json!({})).await.unwrap();
    assert_eq!(link["kind"], "login");
    assert!(link["url"].as_str().unwrap().contains("/login?t="));
    let mut phone = Browser::new(&vyred);
    let (status, body) = phone
        .request(
            Method::POST,
            "/v1/session/redeem",
            Some(json!({ "token": token_of(&link) })),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["kind"], "device");
    let (status, _) = phone.call("threads.list", json!({})).await;
    assert_eq!(status, 200);

    // Revoked from Settings: refused at once.
    let phone_id = body["data"]["device"]["id"].as_str().unwrap().to_string();
    let (status, _) = browser
        .call("devices.revoke", json!({ "id": phone_id }))
        .await;
    assert_eq!(status, 200);
    let (status, body) = phone.call("threads.list", json!({})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("invalid_credential"))
    );

    // Signing out forgets the cookie and revokes the device.
    let kept = browser.cookie.clone();
    let (status, _) = browser
        .request(Method::POST, "/v1/session/logout", None)
        .await;
    assert_eq!(status, 200);
    assert!(browser.cookie.is_none());
    browser.cookie = kept;
    let (status, _) = browser.call("threads.list", json!({})).await;
    assert_eq!(status, 401);

    vyred.stop().await;
    let events = stored_events(&home.home().database());
    assert!(events.iter().any(|(_, t, _)| t == "onboarding.finished"));
    assert!(
        events
            .iter()
            .all(|(_, _, p)| !p.to_string().contains(secret)),
        "the secret is in no event"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_or_made_up_link_is_refused() {
    let home = TempHome::new("web-expired");
    let vyred = InProcess::start(&home, vec![]).await;
    let link = vyred
        .socket_client()
        .call("devices.link", &json!({ "ttl_s": 1 }))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let mut browser = Browser::new(&vyred);
    let (status, body) = browser
        .request(
            Method::POST,
            "/v1/session/redeem",
            Some(json!({ "token": token_of(&link) })),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("token_expired"))
    );
    let (status, body) = browser
        .request(
            Method::POST,
            "/v1/session/redeem",
            Some(json!({ "token": "made-up" })),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("invalid_token"))
    );
    assert!(browser.cookie.is_none());
    // A link is only for a person.
    let out = home.vyre(&["devices", "link", "--ttl-s", "0"]);
    assert!(!out.status.success());
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_app_is_served_with_headers_that_keep_other_sites_out() {
    let home = TempHome::new("web-app");
    let ui = home.dir.join("ui");
    std::fs::create_dir_all(ui.join("assets")).unwrap();
    std::fs::write(ui.join("index.html"), "<!doctype html><title>Vyre</title>").unwrap();
    std::fs::write(ui.join("assets/app.js"), "console.log(1)").unwrap();
    let vyred = InProcess::start_with(&home, vec![], |o| o.ui_dir = Some(ui.clone())).await;
    let client = vyred.http_client(None);
    let get = |path: &'static str| {
        let client = client.clone();
        async move {
            let res = client.send(Method::GET, path, None, &[]).await.unwrap();
            let status = res.status().as_u16();
            let headers = res.headers().clone();
            use http_body_util::BodyExt;
            let body = res.into_body().collect().await.unwrap().to_bytes();
            (status, headers, String::from_utf8_lossy(&body).into_owned())
        }
    };
    let (status, headers, _) = get("/").await;
    assert_eq!(status, 303);
    assert_eq!(headers["location"], "/app/");
    for path in [
        "/app/",
        "/app/deck/some-thread",
        "/onboard?t=x",
        "/login?t=y",
    ] {
        let (status, headers, body) = get(path).await;
        assert_eq!(status, 200, "{path}");
        assert!(body.contains("<title>Vyre</title>"), "{path}");
        let csp = headers["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("frame-ancestors 'none'") && csp.contains("connect-src 'self'"));
        assert_eq!(headers["referrer-policy"], "no-referrer");
        // The page is asked for again each time, so a new build shows at once.
        assert_eq!(headers["cache-control"], "no-cache", "{path}");
    }
    // A built file is named by its hash: kept for a year without asking again.
    let (status, headers, body) = get("/app/assets/app.js").await;
    assert_eq!((status, body.as_str()), (200, "console.log(1)"));
    assert_eq!(
        headers["cache-control"],
        "public, max-age=31536000, immutable"
    );
    assert_eq!(headers["x-content-type-options"], "nosniff");
    // A file the build does not have is a 404 kept by nobody, never the page under its name.
    let (status, headers, body) = get("/app/assets/gone-1234.js").await;
    assert_eq!(status, 404);
    assert!(!body.contains("<title>Vyre</title>"));
    assert!(headers.get("cache-control").is_none());
    // The same for a missing file beside the page (a build without a service worker): a
    // browser must not register the page as its worker. A route with a dot is still the page.
    for missing in [
        "/app/sw.js",
        "/app/manifest.webmanifest",
        "/app/icon-192.png",
    ] {
        let (status, _, body) = get(missing).await;
        assert_eq!(status, 404, "{missing}");
        assert!(!body.contains("<title>Vyre</title>"), "{missing}");
    }
    let (status, _, body) = get("/app/t/thread.with.dots").await;
    assert_eq!(status, 200);
    assert!(body.contains("<title>Vyre</title>"));
    vyred.stop().await;

    // Without a built app, a clear answer instead of a blank page.
    let home = TempHome::new("web-no-app");
    let empty = home.dir.join("no-ui");
    std::fs::create_dir_all(&empty).unwrap();
    let vyred = InProcess::start_with(&home, vec![], |o| o.ui_dir = Some(empty.clone())).await;
    let (status, body) = vyred
        .http_client(None)
        .json(Method::GET, "/app/", None, &[])
        .await
        .unwrap();
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (503, Some("app_not_built"))
    );
    vyred.stop().await;
}
