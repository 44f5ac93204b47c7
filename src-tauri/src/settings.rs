//! The app's own settings, `VYRE_HOME/app.json`: today only Lumen's shortcut.

use serde::Deserialize;
use vyre::kernel::paths::VyreHome;

pub const DEFAULT_SHORTCUT: &str = "Alt+Space";

#[derive(Debug, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct AppSettings {
    /// The global shortcut that shows and hides Lumen, e.g. "Alt+Space" or "CmdOrCtrl+Shift+K".
    pub lumen_shortcut: Option<String>,
}

impl AppSettings {
    /// The settings, or the defaults when the file is missing; a broken file says why.
    pub fn load(home: &VyreHome) -> Result<AppSettings, String> {
        let path = home.root().join("app.json");
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(AppSettings::default()),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    pub fn shortcut(&self) -> &str {
        self.lumen_shortcut.as_deref().unwrap_or(DEFAULT_SHORTCUT)
    }
}
