//! The menubar (tray) item: what runs, how many questions wait, Open Vyre, Lumen, Quit. Its
//! first lines follow vyred's event stream (no polling): a thread's state or an ask changing
//! recounts.

use std::time::Duration;

use serde_json::{Value, json};
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Runtime};
use vyre::surfaces::client::Client;

pub const OPEN: &str = "open";
pub const LUMEN: &str = "lumen";
pub const QUIT: &str = "quit";

/// What the first two lines say.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Counts {
    pub running: usize,
    pub live: usize,
    pub waiting: usize,
}

impl Counts {
    /// From `threads.list`: a thread `waiting` has a question open for its person.
    pub fn of(threads: &Value) -> Counts {
        let mut c = Counts::default();
        for t in threads.as_array().into_iter().flatten() {
            if t["live"] == true {
                c.live += 1;
            }
            match t["state"].as_str() {
                Some("running") => c.running += 1,
                Some("waiting") => c.waiting += 1,
                _ => {}
            }
        }
        c
    }

    pub fn runs_line(&self) -> String {
        match (self.running, self.live) {
            (0, 0) => "Nothing running".into(),
            (0, n) => format!("{n} session{} idle", plural(n)),
            (r, n) => format!("{r} running, {n} live"),
        }
    }

    pub fn asks_line(&self) -> String {
        match self.waiting {
            0 => "No questions for you".into(),
            n => format!("{n} question{} waiting", plural(n)),
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

pub struct Lines<R: Runtime> {
    runs: MenuItem<R>,
    asks: MenuItem<R>,
}

pub fn build<R: Runtime>(app: &AppHandle<R>, shortcut: &str) -> tauri::Result<Lines<R>> {
    let runs = MenuItem::with_id(app, "runs", "Vyre is starting", false, None::<&str>)?;
    let asks = MenuItem::with_id(app, "asks", "", false, None::<&str>)?;
    let open = MenuItem::with_id(app, OPEN, "Open Vyre", true, None::<&str>)?;
    let lumen = MenuItem::with_id(
        app,
        LUMEN,
        format!("Lumen ({shortcut})"),
        true,
        None::<&str>,
    )?;
    let quit = MenuItem::with_id(app, QUIT, "Quit Vyre", true, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &runs,
            &asks,
            &PredefinedMenuItem::separator(app)?,
            &open,
            &lumen,
            &PredefinedMenuItem::separator(app)?,
            &quit,
        ],
    )?;
    let mut tray = TrayIconBuilder::with_id("vyre")
        .tooltip("Vyre")
        .menu(&menu)
        .on_menu_event(|app, event| match event.id().as_ref() {
            OPEN => crate::show_main(app),
            LUMEN => crate::lumen::toggle(app),
            QUIT => app.exit(0),
            _ => {}
        });
    if let Some(icon) = app.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    tray.build(app)?;
    Ok(Lines { runs, asks })
}

/// Keep the lines current from the event stream; reconnects after a drop.
pub async fn follow<R: Runtime>(lines: Lines<R>, client: Client) {
    loop {
        recount(&lines, &client).await;
        let Ok(mut stream) = client
            .events("types=thread.state,thread.stopped,ask.*", None)
            .await
        else {
            tokio::time::sleep(Duration::from_secs(5)).await;
            continue;
        };
        while let Some(Ok(_)) = stream.next().await {
            recount(&lines, &client).await;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn recount<R: Runtime>(lines: &Lines<R>, client: &Client) {
    if let Ok(threads) = client.call("threads.list", &json!({})).await {
        let c = Counts::of(&threads);
        let _ = lines.runs.set_text(c.runs_line());
        let _ = lines.asks.set_text(c.asks_line());
    }
}

/// The tray of a running app, for tests and the status line.
pub fn exists<R: Runtime>(app: &AppHandle<R>) -> bool {
    app.tray_by_id("vyre").is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_count_what_runs_and_what_waits() {
        let threads = json!([
            { "live": true, "state": "running" },
            { "live": true, "state": "waiting" },
            { "live": true, "state": "idle" },
            { "live": false, "state": "stopped" },
        ]);
        let c = Counts::of(&threads);
        assert_eq!(c.runs_line(), "1 running, 3 live");
        assert_eq!(c.asks_line(), "1 question waiting");
        let none = Counts::of(&json!([]));
        assert_eq!(none.runs_line(), "Nothing running");
        assert_eq!(none.asks_line(), "No questions for you");
        let idle = Counts::of(&json!([{ "live": true, "state": "idle" }]));
        assert_eq!(idle.runs_line(), "1 session idle");
    }
}
