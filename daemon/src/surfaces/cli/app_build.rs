//! In a checkout, `vyre up` builds the web app when it is missing or older than its sources, so
//! a newcomer still needs only the one command. An installed vyre (the box image, the Mac app)
//! carries its app already built and skips all of this.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

/// The checkout's `ui/`, when this binary was built from one that is still there.
fn checkout_ui() -> Option<PathBuf> {
    let ui = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui");
    ui.join("package.json").is_file().then_some(ui)
}

/// The newest modification time under `path` (files only), skipping `node_modules`.
fn newest(path: &Path) -> Option<SystemTime> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_file() {
        return meta.modified().ok();
    }
    std::fs::read_dir(path)
        .ok()?
        .flatten()
        .filter(|e| e.file_name() != "node_modules")
        .filter_map(|e| newest(&e.path()))
        .max()
}

/// True when `ui/dist` is missing or older than any of the app's sources.
pub fn stale(ui: &Path) -> bool {
    let built = match std::fs::metadata(ui.join("dist/index.html")).and_then(|m| m.modified()) {
        Ok(t) => t,
        Err(_) => return true,
    };
    let sources = [
        "src",
        "public",
        "index.html",
        "package.json",
        "package-lock.json",
        "vite.config.ts",
        "svelte.config.js",
        "tsconfig.json",
    ];
    sources
        .iter()
        .filter_map(|s| newest(&ui.join(s)))
        .any(|t| t > built)
}

/// Build the app if this is a checkout, it is stale, and nothing points vyred elsewhere.
/// Says what it does; a failure is reported and Vyre starts anyway (the API works without it).
pub fn ensure_built() {
    if std::env::var_os("VYRE_UI_DIR").is_some() {
        return;
    }
    let Some(ui) = checkout_ui() else { return };
    if !stale(&ui) {
        return;
    }
    let npm = |args: &[&str]| {
        Command::new("npm")
            .args(args)
            .current_dir(&ui)
            .stdin(std::process::Stdio::null())
            .status()
    };
    println!("Building the web app in {} ...", ui.display());
    let install_needed = !ui.join("node_modules/.package-lock.json").is_file()
        || newest(&ui.join("package-lock.json"))
            > newest(&ui.join("node_modules/.package-lock.json"));
    // `npm install` with the lock file, not `npm ci`: Vite names a Windows-only optional
    // package that some registries do not carry, which `npm ci` refuses as a lock mismatch.
    let steps: &[&[&str]] = if install_needed {
        &[
            &["install", "--no-audit", "--no-fund", "--loglevel=error"],
            &["run", "build", "--silent"],
        ]
    } else {
        &[&["run", "build", "--silent"]]
    };
    for step in steps {
        match npm(step) {
            Ok(status) if status.success() => {}
            Ok(status) => {
                eprintln!(
                    "vyre: `npm {}` in {} failed ({status}); Vyre starts without the web app",
                    step.join(" "),
                    ui.display()
                );
                return;
            }
            Err(e) => {
                eprintln!(
                    "vyre: the web app needs Node.js and npm to build ({e}); Vyre starts without it"
                );
                return;
            }
        }
    }
}
