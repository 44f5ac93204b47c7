//! Lumen, the capsule: a small undecorated window that stays on top, shown and hidden by a
//! global shortcut, to talk to the assistant, see what needs you and answer asks. It shows the
//! app's compact view (`/app/lumen`: one line to the assistant, the last reply, the open asks),
//! which loads only its own code, and wakes by showing a window that is already there. What it
//! opens in a new window (a thread, "Open in Vyre") opens in the main window instead.

use std::net::SocketAddr;

use tauri::webview::NewWindowResponse;
use tauri::{AppHandle, Manager, Runtime, WebviewUrl, WebviewWindow, WebviewWindowBuilder};

pub const LABEL: &str = "lumen";
pub const WIDTH: f64 = 420.0;
pub const HEIGHT: f64 = 640.0;

/// Lumen's page on the daemon at `addr`.
pub fn url(addr: SocketAddr) -> tauri::Url {
    format!("http://{addr}/app/lumen")
        .parse()
        .expect("a loopback URL")
}

/// Where a page Lumen asks to open in a new window goes: a page of the app on the same daemon
/// opens in the main window (and Lumen steps aside); anything else is refused.
pub fn route_new_window(lumen: &tauri::Url, wanted: &tauri::Url) -> Option<tauri::Url> {
    let same_origin = wanted.scheme() == lumen.scheme()
        && wanted.host_str() == lumen.host_str()
        && wanted.port_or_known_default() == lumen.port_or_known_default();
    (same_origin && wanted.path().starts_with("/app/")).then(|| wanted.clone())
}

/// Lumen, hidden, on the app's local "starting" page until the sign-in points it at vyred.
pub fn build<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<WebviewWindow<R>> {
    let opener = app.clone();
    WebviewWindowBuilder::new(app, LABEL, WebviewUrl::App("index.html".into()))
        .on_new_window(move |wanted, _features| {
            let address = opener.state::<crate::commands::AppStatus>().address.clone();
            let here = address.parse().map(url);
            if let Some(target) = here.ok().and_then(|here| route_new_window(&here, &wanted)) {
                let app = opener.clone();
                tauri::async_runtime::spawn(async move {
                    hide(&app);
                    crate::show_main_at(&app, Some(target));
                });
            } else {
                tracing::info!(url = %wanted, "Lumen may not open this window");
            }
            NewWindowResponse::Deny
        })
        .title("Lumen")
        .inner_size(WIDTH, HEIGHT)
        .resizable(false)
        .decorations(false)
        .always_on_top(true)
        .skip_taskbar(true)
        .visible(false)
        .center()
        .build()
}

/// Show Lumen (focused), or hide it when it is showing.
pub fn toggle<R: Runtime>(app: &AppHandle<R>) {
    let Some(window) = app.get_webview_window(LABEL) else {
        return;
    };
    if window.is_visible().unwrap_or(false) {
        let _ = window.hide();
    } else {
        let _ = window.show();
        let _ = window.set_focus();
    }
}

/// Hide Lumen; whether there was a Lumen to hide.
pub fn hide<R: Runtime>(app: &AppHandle<R>) -> bool {
    match app.get_webview_window(LABEL) {
        Some(window) => window.hide().is_ok(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lumen_opens_the_apps_own_pages_in_the_main_window_and_nothing_else() {
        let lumen = url("127.0.0.1:4477".parse().unwrap());
        assert_eq!(lumen.as_str(), "http://127.0.0.1:4477/app/lumen");
        let thread: tauri::Url = "http://127.0.0.1:4477/app/t/abc".parse().unwrap();
        assert_eq!(route_new_window(&lumen, &thread), Some(thread));
        for refused in [
            "http://127.0.0.1:4478/app/t/abc",
            "http://localhost:4477/app/t/abc",
            "https://example.com/app/",
            "http://127.0.0.1:4477/v1/tools/vault.list",
        ] {
            let wanted: tauri::Url = refused.parse().unwrap();
            assert_eq!(route_new_window(&lumen, &wanted), None, "{refused}");
        }
    }
}
