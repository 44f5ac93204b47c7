//! Where the harness plugin (`harness/` in the repository) is: `VYRE_HARNESS_DIR`, else
//! an install's folder beside the binary (`share/vyre/harness` for npm, the box image and the .deb;
//! `Contents/Resources/harness` in the Mac's app, see `paths::installed`), else this
//! checkout's `harness/`. It is also a one-plugin marketplace (`.claude-plugin/marketplace.json`,
//! named `vyre`), which is how `vyre harness install` adds it to plain `claude`.

use std::path::{Path, PathBuf};

/// The plugin's id in Claude Code: plugin `vyre` from marketplace `vyre`.
pub const PLUGIN_ID: &str = "vyre@vyre";
pub const MARKETPLACE: &str = "vyre";

pub fn plugin_dir() -> Option<PathBuf> {
    std::env::var_os("VYRE_HARNESS_DIR")
        .map(PathBuf::from)
        .into_iter()
        .chain(crate::kernel::paths::installed_here("harness"))
        .chain([Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness")])
        .find(|dir| dir.join(".claude-plugin/plugin.json").is_file())
        .map(|dir| dir.canonicalize().unwrap_or(dir))
}
