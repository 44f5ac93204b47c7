//! Where the harness plugin (`harness/` in the repository) is: `VYRE_HARNESS_DIR`, else
//! `share/vyre/harness` beside the binary's folder (an install, the box image), else this
//! checkout's `harness/`. It is also a one-plugin marketplace (`.claude-plugin/marketplace.json`,
//! named `vyre`), which is how `vyre harness install` adds it to plain `claude`.

use std::path::{Path, PathBuf};

/// The plugin's id in Claude Code: plugin `vyre` from marketplace `vyre`.
pub const PLUGIN_ID: &str = "vyre@vyre";
pub const MARKETPLACE: &str = "vyre";

pub fn plugin_dir() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("VYRE_HARNESS_DIR").map(PathBuf::from),
        std::env::current_exe()
            .ok()
            .and_then(|exe| Some(exe.parent()?.parent()?.join("share/vyre/harness"))),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|dir| dir.join(".claude-plugin/plugin.json").is_file())
        .map(|dir| dir.canonicalize().unwrap_or(dir))
}
