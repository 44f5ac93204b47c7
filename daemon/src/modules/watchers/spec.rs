//! A watcher as its folder declares it: `VYRE_HOME/watchers/<name>/watcher.json` beside its
//! script (spec 7.6). Read strictly: an unknown key, a name that is not a folder's, a schedule
//! finer than once a minute, an event type outside the watcher's own namespace or a script that
//! is not in the folder is refused in words, and nothing runs.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::kernel::deadlines::cron::Cron;

/// The file in a watcher's folder that declares it.
pub const FILE: &str = "watcher.json";

/// The script a watcher runs when `run` does not say: `watch.js`, exporting
/// `async function watch({vault, since, emit, log})`, run by Node.
pub const DEFAULT_SCRIPT: &str = "watch.js";

/// `watcher.json` as written.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Declared {
    pub name: String,
    /// The project its items are filed into.
    pub project: String,
    /// Cron's five fields (`*/15 * * * *`, `@hourly`), or `webhook`.
    pub schedule: String,
    /// Vault items it reads, each granted by the person before it gets it.
    #[serde(default)]
    pub needs: Vec<String>,
    /// The event type each filed item is told as (`watch.<name>.` and more, or the default).
    #[serde(default)]
    pub emits: Option<String>,
    /// A program and its arguments, run in the folder, speaking JSON lines on stdio; without
    /// it, `watch.js` by Node.
    #[serde(default)]
    pub run: Option<Vec<String>>,
    /// Seconds a run may take (default 60, at most 600).
    #[serde(default)]
    pub timeout_s: Option<u64>,
}

/// When a watcher runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Schedule {
    Cron(Cron),
    /// When its webhook is called.
    Webhook,
}

/// A watcher checked and ready to run.
#[derive(Debug, Clone)]
pub struct Watcher {
    pub name: String,
    pub project: String,
    pub schedule: Schedule,
    pub needs: Vec<String>,
    pub emits: String,
    /// What runs: a program and its arguments (the script's path inside the folder).
    pub run: Run,
    pub timeout_s: u64,
    pub folder: PathBuf,
}

/// The program a run starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Run {
    /// `watch.js` (or the script named) by Node, through Vyre's runner.
    Node { script: PathBuf },
    /// Any program, speaking the protocol itself.
    Command { program: String, args: Vec<String> },
}

/// The longest a run may be given.
pub const MAX_TIMEOUT_S: u64 = 600;
const DEFAULT_TIMEOUT_S: u64 = 60;

/// Whether `name` may be a watcher's (and its folder's, and its vault grantee's) name: 1 to 32
/// of a-z, 0-9 and `-`, starting with a letter.
pub fn valid_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Check what `folder`'s `watcher.json` declared.
pub fn check(declared: Declared, folder: &Path) -> Result<Watcher, String> {
    let name = declared.name;
    if !valid_name(&name) {
        return Err(format!(
            "the name {name:?} is not one Vyre takes: 1 to 32 of a-z, 0-9 and -, starting with a letter"
        ));
    }
    if folder.file_name().and_then(|n| n.to_str()) != Some(name.as_str()) {
        return Err(format!(
            "the watcher {name:?} must sit in a folder of its own name, not {}",
            folder.display()
        ));
    }
    if declared.project.trim().is_empty() {
        return Err("project names where its items are filed: it is empty".into());
    }
    let schedule = match declared.schedule.trim() {
        "webhook" => Schedule::Webhook,
        spec => Schedule::Cron(Cron::parse(spec)?),
    };
    for item in &declared.needs {
        if item.trim().is_empty() || item.len() > 200 {
            return Err(format!("needs names vault items; {item:?} is not one"));
        }
    }
    // Event types take no `-`: `rss-feed` tells its items as `watch.rss_feed.item`.
    let own = format!("watch.{}", name.replace('-', "_"));
    let emits = declared.emits.unwrap_or_else(|| format!("{own}.item"));
    if emits != own && !emits.starts_with(&format!("{own}.")) {
        return Err(format!(
            "emits {emits:?} is outside the watcher's own events: name it {own}.<something>"
        ));
    }
    if !crate::kernel::events::valid_type(&emits) {
        return Err(format!(
            "emits {emits:?} is not an event type: words of a-z, 0-9 and _, each starting with a letter, joined by ."
        ));
    }
    let run = match declared.run {
        None => Run::Node {
            script: inside(folder, DEFAULT_SCRIPT)?,
        },
        Some(argv) if argv.is_empty() => {
            return Err(
                "run is empty: a program and its arguments, e.g. [\"python3\", \"watch.py\"]"
                    .into(),
            );
        }
        Some(argv) if argv.len() == 1 && argv[0].ends_with(".js") => Run::Node {
            script: inside(folder, &argv[0])?,
        },
        Some(mut argv) => {
            let program = argv.remove(0);
            Run::Command {
                program,
                args: argv,
            }
        }
    };
    let timeout_s = declared.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S);
    if !(1..=MAX_TIMEOUT_S).contains(&timeout_s) {
        return Err(format!(
            "timeout_s is {timeout_s}: a run may take 1 to {MAX_TIMEOUT_S} seconds"
        ));
    }
    Ok(Watcher {
        name,
        project: declared.project,
        schedule,
        needs: declared.needs,
        emits,
        run,
        timeout_s,
        folder: folder.to_path_buf(),
    })
}

/// `file` in `folder`, never outside it (no `..`, no absolute path, no link out).
fn inside(folder: &Path, file: &str) -> Result<PathBuf, String> {
    let p = Path::new(file);
    if p.is_absolute()
        || p.components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Err(format!(
            "the script {file:?} must be a file in the watcher's folder"
        ));
    }
    let full = folder.join(p);
    match std::fs::symlink_metadata(&full) {
        Ok(m) if m.file_type().is_file() => Ok(full),
        Ok(_) => Err(format!(
            "the script {file:?} is not a plain file (a link or a folder)"
        )),
        Err(_) => Err(format!(
            "the script {file:?} is not in the watcher's folder"
        )),
    }
}

/// Read and check `folder/watcher.json`.
pub fn read(folder: &Path) -> Result<Watcher, String> {
    let path = folder.join(FILE);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{} cannot be read: {e}", path.display()))?;
    let declared: Declared = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a watcher's declaration: {e}", path.display()))?;
    check(declared, folder)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(name: &str) -> PathBuf {
        let dir = std::env::temp_dir()
            .join(format!("vyre-watchers-spec-{}", std::process::id()))
            .join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn declared(json: serde_json::Value) -> Declared {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn a_declared_watcher_is_read_with_its_defaults() {
        let dir = folder("gh-issues");
        std::fs::write(dir.join("watch.js"), "export async function watch() {}").unwrap();
        let w = check(
            declared(serde_json::json!({
                "name": "gh-issues", "project": "Site", "schedule": "*/15 * * * *",
                "needs": ["github-token"]
            })),
            &dir,
        )
        .unwrap();
        assert_eq!(w.emits, "watch.gh_issues.item");
        assert_eq!(w.timeout_s, 60);
        assert_eq!(
            w.run,
            Run::Node {
                script: dir.join("watch.js")
            }
        );
        assert!(matches!(w.schedule, Schedule::Cron(_)));
        std::fs::write(dir.join("watch.py"), "print()").unwrap();
        let w = check(
            declared(serde_json::json!({
                "name": "gh-issues", "project": "Site", "schedule": "webhook",
                "run": ["python3", "watch.py"], "emits": "watch.gh_issues.opened"
            })),
            &dir,
        )
        .unwrap();
        assert_eq!(w.schedule, Schedule::Webhook);
        assert_eq!(
            w.run,
            Run::Command {
                program: "python3".into(),
                args: vec!["watch.py".into()]
            }
        );
    }

    #[test]
    fn a_watcher_vyre_would_not_run_is_refused_in_words() {
        let dir = folder("w");
        std::fs::write(dir.join("watch.js"), "").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.join("link.js")).unwrap();
        let base = serde_json::json!({ "name": "w", "project": "P", "schedule": "@hourly" });
        let with = |k: &str, v: serde_json::Value| {
            let mut j = base.clone();
            j[k] = v;
            check(declared(j), &dir).unwrap_err()
        };
        for (err, words) in [
            (with("name", "W!".into()), "not one Vyre takes"),
            (with("name", "other".into()), "folder of its own name"),
            (with("schedule", "* * * * * *".into()), "once a minute"),
            (with("schedule", "every second".into()), "fields"),
            (
                with("emits", "thread.turn".into()),
                "outside the watcher's own events",
            ),
            (with("emits", "watch.w.A B".into()), "is not an event type"),
            (
                with("run", serde_json::json!(["../../x.js"])),
                "a file in the watcher's folder",
            ),
            (
                with("run", serde_json::json!(["link.js"])),
                "not a plain file",
            ),
            (
                with("run", serde_json::json!(["gone.js"])),
                "not in the watcher's folder",
            ),
            (with("run", serde_json::json!([])), "run is empty"),
            (with("timeout_s", 5000.into()), "1 to 600"),
            (with("project", " ".into()), "it is empty"),
        ] {
            assert!(err.contains(words), "{words}: {err}");
        }
        let err = serde_json::from_value::<Declared>(serde_json::json!({
            "name": "w", "project": "P", "schedule": "@hourly", "shell": true
        }))
        .unwrap_err()
        .to_string();
        assert!(err.contains("unknown field"), "{err}");
        assert!(
            read(&folder("none"))
                .unwrap_err()
                .contains("cannot be read")
        );
    }
}
