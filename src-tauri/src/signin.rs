//! The window is a browser like any other: it reaches vyred over HTTP with a device cookie. The
//! app (the person, on vyred's socket) makes a one-time link, spends it over HTTP itself, and
//! puts the cookie it got into the webview's store; next time the cookie is checked first.

use std::net::SocketAddr;

use http_body_util::BodyExt;
use hyper::Method;
use serde_json::{Value, json};
use tauri::webview::cookie::{Cookie, SameSite};
use tauri::{Runtime, WebviewWindow};
use vyre::client::Client;

const COOKIE: &str = "vyre_device";
/// The user agent the link is spent with; vyred names the device after it.
pub const USER_AGENT: &str = "VyreApp/0.1";

fn base(addr: SocketAddr) -> tauri::Url {
    tauri::Url::parse(&format!("http://{addr}/")).expect("a loopback URL")
}

/// Whether this token is a live device to vyred.
async fn valid(addr: SocketAddr, token: &str) -> bool {
    let cookie = format!("{COOKIE}={token}");
    match Client::http(addr, None)
        .json(Method::GET, "/v1/session", None, &[("cookie", &cookie)])
        .await
    {
        Ok((200, body)) => body["data"]["kind"].is_string(),
        _ => false,
    }
}

/// Spend a fresh link over HTTP; the cookie's value.
async fn redeem(person: &Client, addr: SocketAddr) -> Result<String, String> {
    let link = person
        .call("devices.link", &json!({}))
        .await
        .map_err(|e| format!("cannot make a sign-in link: {e}"))?;
    let token = link["url"]
        .as_str()
        .and_then(|u| u.split("t=").nth(1))
        .ok_or("the link has no token")?
        .to_string();
    let body = serde_json::to_vec(&json!({ "token": token })).map_err(|e| e.to_string())?;
    let res = Client::http(addr, None)
        .send(
            Method::POST,
            "/v1/session/redeem",
            Some(body),
            &[("user-agent", USER_AGENT)],
        )
        .await
        .map_err(|e| format!("cannot sign the window in: {e}"))?;
    let set = res
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let status = res.status();
    let bytes = res
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    if !status.is_success() {
        let answer: Value = serde_json::from_slice(&bytes).unwrap_or_default();
        return Err(format!(
            "vyred refused the sign-in: {}",
            answer["error"]["message"]
                .as_str()
                .unwrap_or("no reason given")
        ));
    }
    set.as_deref()
        .and_then(|s| s.split(';').next())
        .and_then(|kv| kv.strip_prefix("vyre_device="))
        .map(str::to_string)
        .ok_or_else(|| "vyred set no cookie".to_string())
}

/// Make sure the webview holds a valid device cookie for vyred.
pub async fn ensure<R: Runtime>(
    window: &WebviewWindow<R>,
    person: &Client,
    addr: SocketAddr,
) -> Result<(), String> {
    let held = window
        .cookies_for_url(base(addr))
        .unwrap_or_default()
        .into_iter()
        .find(|c| c.name() == COOKIE)
        .map(|c| c.value().to_string());
    if let Some(token) = held
        && valid(addr, &token).await
    {
        return Ok(());
    }
    let token = redeem(person, addr).await?;
    let cookie = Cookie::build((COOKIE, token))
        .domain(addr.ip().to_string())
        .path("/")
        .http_only(true)
        .same_site(SameSite::Strict)
        .max_age(tauri::webview::cookie::time::Duration::days(365))
        .build();
    window
        .set_cookie(cookie)
        .map_err(|e| format!("cannot store the sign-in: {e}"))
}
