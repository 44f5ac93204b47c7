//! The windows are browsers like any other: they reach vyred over HTTP with a device cookie and
//! that device's key (ADR 0009). At each start the app (the person, on vyred's socket) makes a
//! one-time link, spends it over HTTP itself, puts the cookie it got into the webview's store
//! (both windows share it), and hands the key to the pages in their first address's fragment
//! (`#vyre-key=...`), which is never sent anywhere: the page keeps it in its origin's storage and
//! takes it out of the address. The app keeps no secret of its own; it remembers only the id of
//! the device it made (`VYRE_HOME/app-device`), so the next start revokes it and the app holds
//! one device, not one per start.

use std::net::SocketAddr;
use std::path::PathBuf;

use http_body_util::BodyExt;
use hyper::Method;
use serde_json::{Value, json};
use tauri::webview::cookie::{Cookie, SameSite};
use tauri::{Runtime, WebviewWindow};
use vyre::kernel::paths::VyreHome;
use vyre::surfaces::client::Client;

const COOKIE: &str = "vyre_device";
/// The user agent the link is spent with; vyred names the device after it.
pub const USER_AGENT: &str = "VyreApp/0.1";

/// The windows' device, signed in.
pub struct SignedIn {
    pub device: String,
    key: String,
}

impl SignedIn {
    /// `page` with the key in its fragment, for a window's first load after the sign-in.
    pub fn with_key(&self, page: tauri::Url) -> tauri::Url {
        let mut url = page;
        url.set_fragment(Some(&format!("vyre-key={}", self.key)));
        url
    }
}

/// What spending a link answered.
struct Redeemed {
    token: String,
    key: String,
    device: String,
}

/// Spend a fresh link over HTTP: the cookie's value, the key and the device's id.
async fn redeem(person: &Client, addr: SocketAddr) -> Result<Redeemed, String> {
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
    let answer: Value = serde_json::from_slice(&bytes).unwrap_or_default();
    if !status.is_success() {
        return Err(format!(
            "vyred refused the sign-in: {}",
            answer["error"]["message"]
                .as_str()
                .unwrap_or("no reason given")
        ));
    }
    let token = set
        .as_deref()
        .and_then(|s| s.split(';').next())
        .and_then(|kv| kv.strip_prefix("vyre_device="))
        .map(str::to_string)
        .ok_or("vyred set no cookie")?;
    let data = &answer["data"];
    let (Some(key), Some(device)) = (data["key"].as_str(), data["device"]["id"].as_str()) else {
        return Err("vyred's answer has no key or device".into());
    };
    Ok(Redeemed {
        token,
        key: key.to_string(),
        device: device.to_string(),
    })
}

/// Where the id of the windows' device is kept between starts (not a secret).
fn device_file(home: &VyreHome) -> PathBuf {
    home.root().join("app-device")
}

/// Sign the windows in: a new device, its cookie in the webview's store, the device of the
/// previous start revoked. Load each window's page with [`SignedIn::with_key`] next.
pub async fn sign_in<R: Runtime>(
    window: &WebviewWindow<R>,
    person: &Client,
    addr: SocketAddr,
    home: &VyreHome,
) -> Result<SignedIn, String> {
    let redeemed = redeem(person, addr).await?;
    let cookie = Cookie::build((COOKIE, redeemed.token))
        .domain(addr.ip().to_string())
        .path("/")
        .http_only(true)
        .same_site(SameSite::Strict)
        .max_age(tauri::webview::cookie::time::Duration::days(365))
        .build();
    window
        .set_cookie(cookie)
        .map_err(|e| format!("cannot store the sign-in: {e}"))?;
    let file = device_file(home);
    if let Ok(previous) = std::fs::read_to_string(&file) {
        let previous = previous.trim();
        if !previous.is_empty() && previous != redeemed.device {
            match person
                .call("devices.revoke", &json!({ "id": previous }))
                .await
            {
                Ok(_) => {}
                Err(e) if e.code() == Some("unknown_device") => {}
                Err(e) => tracing::warn!("cannot revoke the app's previous device: {e}"),
            }
        }
    }
    if let Err(e) = std::fs::write(&file, format!("{}\n", redeemed.device)) {
        tracing::warn!(
            "cannot remember the app's device in {}: {e}",
            file.display()
        );
    }
    Ok(SignedIn {
        device: redeemed.device,
        key: redeemed.key,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_travels_in_the_fragment_only() {
        let signed = SignedIn {
            device: "d1".into(),
            key: "k_ey-0123456789abcdef".into(),
        };
        let url = signed.with_key("http://127.0.0.1:4477/app/lumen".parse().unwrap());
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:4477/app/lumen#vyre-key=k_ey-0123456789abcdef"
        );
        assert_eq!(url.path(), "/app/lumen");
        assert_eq!(url.query(), None);
    }
}
