//! The app's Tauri commands: only what needs the OS. The window talks to vyred over HTTP like
//! every other surface.

use serde::Serialize;
use tauri::{AppHandle, Runtime, State};

/// What the app knows of itself, for the window and for tests.
#[derive(Debug, Clone, Serialize)]
pub struct AppStatus {
    /// `embedded` (vyred runs in this app) or `attached` (another process's).
    pub daemon: &'static str,
    pub address: String,
    pub lumen_shortcut: String,
}

#[tauri::command]
pub fn app_status(status: State<'_, AppStatus>) -> AppStatus {
    status.inner().clone()
}

/// Lumen's page hides its own window (Esc, or after answering); whether there was one.
#[tauri::command]
pub fn hide_lumen<R: Runtime>(app: AppHandle<R>) -> bool {
    crate::lumen::hide(&app)
}
