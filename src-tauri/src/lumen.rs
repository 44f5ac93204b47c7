//! Lumen, the capsule: a small undecorated window that stays on top, shown and hidden by a
//! global shortcut, to talk to the assistant, see what needs you and answer asks. It is the
//! same app as the main window, at a phone's width (its layout for small screens), so it loads
//! nothing of its own and wakes by showing a window that is already there.

use tauri::{AppHandle, Manager, Runtime, WebviewUrl, WebviewWindow, WebviewWindowBuilder};

pub const LABEL: &str = "lumen";
pub const WIDTH: f64 = 420.0;
pub const HEIGHT: f64 = 640.0;

/// Lumen, hidden, on the app's local "starting" page until the sign-in points it at vyred.
pub fn build<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<WebviewWindow<R>> {
    WebviewWindowBuilder::new(app, LABEL, WebviewUrl::App("index.html".into()))
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
