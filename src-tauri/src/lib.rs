//! Vyre for the Mac (and Linux desktops): a Tauri shell around the same daemon library the box
//! runs. It starts vyred in Local role in this process (or attaches to one that runs), shows the
//! app from `ui/` in a window as a signed-in device, keeps a menubar item with what runs and what
//! waits, and Lumen, the capsule, on a global shortcut. The vault's master key lives in the OS
//! keychain (Local role's default). Quitting stops the embedded daemon cleanly.

pub mod commands;
pub mod host;
pub mod lumen;
pub mod settings;
pub mod signin;
pub mod tray;

use std::sync::Mutex;

use tauri::{AppHandle, Manager, RunEvent, Runtime, WebviewUrl, WebviewWindowBuilder};
use tauri_plugin_global_shortcut::{GlobalShortcutExt, ShortcutState};
use vyre::kernel::paths::VyreHome;

use commands::AppStatus;
use host::DaemonHost;
use settings::AppSettings;

pub const MAIN: &str = "main";

/// Show the main window, making it when there is none: a closed window is gone, with its web
/// process, so the app in the menubar keeps only Lumen's (ADR 0011).
pub fn show_main<R: Runtime>(app: &AppHandle<R>) {
    show_main_at(app, None);
}

/// [`show_main`], at `url` (a page of the app, e.g. a thread Lumen opens) when given.
pub fn show_main_at<R: Runtime>(app: &AppHandle<R>, url: Option<tauri::Url>) {
    if let Some(window) = app.get_webview_window(MAIN) {
        if let Some(url) = url {
            let _ = window.navigate(url);
        }
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
        return;
    }
    let address = app.state::<AppStatus>().address.clone();
    let Some(url) = url.or_else(|| Some(main_url(address.parse().ok()?))) else {
        return;
    };
    let made = WebviewWindowBuilder::new(app, MAIN, WebviewUrl::External(url))
        .title("Vyre")
        .inner_size(1200.0, 800.0)
        .min_inner_size(390.0, 500.0)
        .build();
    match made {
        Ok(window) => {
            let _ = window.set_focus();
        }
        Err(e) => tracing::warn!("cannot open the window: {e}"),
    }
}

/// The app's page on the daemon at `addr`.
pub fn main_url(addr: std::net::SocketAddr) -> tauri::Url {
    format!("http://{addr}/app/")
        .parse()
        .expect("a loopback URL")
}

/// What every run and test adds to a builder: the app's state and its commands.
pub fn configure<R: Runtime>(builder: tauri::Builder<R>, status: AppStatus) -> tauri::Builder<R> {
    builder
        .manage(status)
        .invoke_handler(tauri::generate_handler![
            commands::app_status,
            commands::hide_lumen
        ])
}

fn fail(message: &str) -> i32 {
    eprintln!("vyre-app: {message}");
    1
}

/// Run the app; the process's exit code.
pub fn run() -> i32 {
    let home = match VyreHome::from_env() {
        Ok(h) => h,
        Err(e) => return fail(&e.to_string()),
    };
    if let Err(e) = home.ensure() {
        return fail(&format!("cannot prepare {}: {e}", home.root().display()));
    }
    let settings = match AppSettings::load(&home) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let _log = vyre::kernel::logging::init(&home, None).ok();
    let signin_home = home.clone();
    let host = match tauri::async_runtime::block_on(DaemonHost::start_or_attach(home)) {
        Ok(h) => h,
        Err(e) => return fail(&e),
    };
    let addr = host.http;
    let person = host.client();
    let status = AppStatus {
        daemon: if host.embedded() {
            "embedded"
        } else {
            "attached"
        },
        address: addr.to_string(),
        lumen_shortcut: settings.shortcut().to_string(),
    };
    let shortcut = settings.shortcut().to_string();
    // `--hidden`: start in the menubar only, as at login; Open Vyre shows the window.
    let hidden = std::env::args().any(|a| a == "--hidden");
    let host = Mutex::new(Some(host));
    let app = configure(tauri::Builder::default(), status)
        .plugin(
            tauri_plugin_global_shortcut::Builder::new()
                .with_handler(|app, _shortcut, event| {
                    if event.state() == ShortcutState::Pressed {
                        lumen::toggle(app);
                    }
                })
                .build(),
        )
        .setup(move |app| {
            let handle = app.handle().clone();
            let lumen = lumen::build(&handle)?;
            let lines = tray::build(&handle, &shortcut)?;
            if let Err(e) = handle.global_shortcut().register(shortcut.as_str()) {
                tracing::warn!("cannot register Lumen's shortcut {shortcut:?}: {e}");
            }
            // Sign the windows in (they share one cookie store and one origin's storage), then
            // load each with the key in its address's fragment and show the app.
            let signing = person.clone();
            let opening = handle.clone();
            tauri::async_runtime::spawn(async move {
                match signin::sign_in(&lumen, &signing, addr, &signin_home).await {
                    Ok(signed) => {
                        let _ = lumen.navigate(signed.with_key(lumen::url(addr)));
                        // A main window the menu opened before the sign-in loads again with it.
                        if !hidden || opening.get_webview_window(MAIN).is_some() {
                            show_main_at(&opening, Some(signed.with_key(main_url(addr))));
                        }
                    }
                    Err(e) => tracing::error!("the window could not sign in: {e}"),
                }
            });
            tauri::async_runtime::spawn(tray::follow(lines, person.clone()));
            // SIGTERM and SIGINT quit as the menu's Quit does.
            let quitting = handle.clone();
            tauri::async_runtime::spawn(async move {
                use tokio::signal::unix::{SignalKind, signal};
                let (Ok(mut term), Ok(mut int)) = (
                    signal(SignalKind::terminate()),
                    signal(SignalKind::interrupt()),
                ) else {
                    return;
                };
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
                quitting.exit(0);
            });
            Ok(())
        })
        .build(tauri::generate_context!());
    let app = match app {
        Ok(a) => a,
        Err(e) => return fail(&format!("cannot start the app: {e}")),
    };
    app.run(move |_app, event| {
        if let RunEvent::Exit = event
            && let Some(host) = host.lock().expect("host").take()
        {
            tauri::async_runtime::block_on(host.stop());
        }
    });
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use tauri::test::{INVOKE_KEY, get_ipc_response, mock_builder, mock_context, noop_assets};

    fn app() -> tauri::App<tauri::test::MockRuntime> {
        configure(
            mock_builder(),
            AppStatus {
                daemon: "embedded",
                address: "127.0.0.1:4477".into(),
                lumen_shortcut: "Alt+Space".into(),
            },
        )
        .build(mock_context(noop_assets()))
        .expect("the app builds")
    }

    fn invoke(
        window: &tauri::WebviewWindow<tauri::test::MockRuntime>,
        cmd: &str,
    ) -> Result<serde_json::Value, serde_json::Value> {
        get_ipc_response(
            window,
            tauri::webview::InvokeRequest {
                cmd: cmd.into(),
                callback: tauri::ipc::CallbackFn(0),
                error: tauri::ipc::CallbackFn(1),
                url: "tauri://localhost".parse().unwrap(),
                body: tauri::ipc::InvokeBody::default(),
                headers: Default::default(),
                invoke_key: INVOKE_KEY.to_string(),
            },
        )
        .map(|b| b.deserialize::<serde_json::Value>().unwrap())
    }

    #[test]
    fn the_status_command_says_where_the_daemon_is_and_lumen_hides() {
        let app = app();
        let main = WebviewWindowBuilder::new(&app, MAIN, WebviewUrl::default())
            .build()
            .unwrap();
        let status = invoke(&main, "app_status").unwrap();
        assert_eq!(status["daemon"], "embedded");
        assert_eq!(status["address"], "127.0.0.1:4477");
        assert_eq!(status["lumen_shortcut"], "Alt+Space");
        // No Lumen yet: nothing to hide.
        assert_eq!(invoke(&main, "hide_lumen").unwrap(), false);
        let _lumen = WebviewWindowBuilder::new(&app, lumen::LABEL, WebviewUrl::default())
            .build()
            .unwrap();
        assert_eq!(invoke(&main, "hide_lumen").unwrap(), true);
        // A command the app does not have is refused.
        assert!(invoke(&main, "no_such_command").is_err());
    }

    #[test]
    fn settings_default_to_alt_space_and_a_broken_file_says_where() {
        let dir = std::env::temp_dir().join(format!("vyre-app-settings-{}", std::process::id()));
        let home = VyreHome::at(&dir);
        home.ensure().unwrap();
        assert_eq!(AppSettings::load(&home).unwrap().shortcut(), "Alt+Space");
        std::fs::write(
            dir.join("app.json"),
            r#"{"lumen_shortcut": "CmdOrCtrl+Shift+K"}"#,
        )
        .unwrap();
        assert_eq!(
            AppSettings::load(&home).unwrap().shortcut(),
            "CmdOrCtrl+Shift+K"
        );
        std::fs::write(dir.join("app.json"), r#"{"lumen": 1}"#).unwrap();
        let err = AppSettings::load(&home).unwrap_err();
        assert!(err.contains("app.json"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
