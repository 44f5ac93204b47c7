//! The floor plan holds (issue 19): the kernel imports no module, and a module imports no other
//! module. What a module offers others is a tool, an event, or a capability through the kernel
//! (`daemon/src/kernel/contracts`); this test walks the source and fails on any `crate::` or `super::`
//! path that crosses a wall.

use std::path::{Path, PathBuf};

/// The modules' rooms: every folder under `daemon/src/modules/` is one (a test below checks the
/// folder and this list agree). Each may use the kernel and itself, nothing else.
const MODULES: &[&str] = &[
    "modules/devices",
    "modules/files",
    "modules/gate",
    "modules/harness",
    "modules/learn",
    "modules/memory",
    "modules/names",
    "modules/network",
    "modules/onboarding",
    "modules/pairing",
    "modules/planner",
    "modules/projects",
    "modules/push",
    "modules/recall",
    "modules/sessions",
    "modules/system",
    "modules/usage",
    "modules/vault",
    "modules/watchers",
];

/// The one place that knows every module: the list vyred starts (the composition root).
const COMPOSITION_ROOT: &str = "modules/mod.rs";

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file: `sessions/switchboard/mod.rs` is `[sessions, switchboard]`.
fn module_path(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// Which room a crate path (its segments from the crate root) lands in, if a module's; the
/// composition root's list (`crate::modules::modules`) counts as one, which only vyred's start
/// may ask for. (A `super::` inside an inline `mod tests` resolves one level too high here and
/// lands on no room, which the compiler has already checked.)
fn room_of(segments: &[String]) -> Option<&'static str> {
    if segments.len() >= 2 && segments[0] == "modules" && segments[1] == "modules" {
        return Some(COMPOSITION_ROOT);
    }
    MODULES.iter().copied().find(|m| {
        let want: Vec<&str> = m.split('/').collect();
        segments.len() >= want.len() && want.iter().zip(segments).all(|(a, b)| a == b)
    })
}

/// Every path the file names from the crate root, resolved: `crate::a::b`, `crate::{a, b::c}`,
/// and `super::` chains from where the file sits. Comments are left out (a doc link is not an
/// import).
fn crate_paths(text: &str, here: &[String]) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        let bytes = code.as_bytes();
        let mut i = 0;
        while i < code.len() {
            let rest = &code[i..];
            let boundary = i == 0
                || !(bytes[i - 1].is_ascii_alphanumeric()
                    || bytes[i - 1] == b'_'
                    || bytes[i - 1] == b'$');
            if boundary && rest.starts_with("crate::") {
                let after = &rest["crate::".len()..];
                if let Some(group) = after.strip_prefix('{') {
                    // `crate::{a, b::{c, d}}`: each top-level item's first segment.
                    let mut depth = 0;
                    let mut item = String::new();
                    for c in group.chars() {
                        match c {
                            '{' => depth += 1,
                            '}' if depth == 0 => break,
                            '}' => depth -= 1,
                            ',' if depth == 0 => {
                                push_item(&mut out, n, &[], &item);
                                item.clear();
                                continue;
                            }
                            _ => {}
                        }
                        item.push(c);
                    }
                    push_item(&mut out, n, &[], &item);
                } else {
                    push_item(&mut out, n, &[], after);
                }
                i += "crate::".len();
                continue;
            }
            if boundary && rest.starts_with("super::") {
                let mut base: Vec<String> = here.to_vec();
                let mut after = rest;
                while let Some(r) = after.strip_prefix("super::") {
                    base.pop();
                    after = r;
                }
                push_item(&mut out, n, &base, after);
                i += rest.len() - after.len();
                continue;
            }
            i += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    out
}

fn push_item(out: &mut Vec<(usize, Vec<String>)>, line: usize, base: &[String], item: &str) {
    let segments: Vec<String> = item
        .trim()
        .split("::")
        .map(|s| {
            s.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .take_while(|s| !s.is_empty())
        .collect();
    let mut path = base.to_vec();
    path.extend(segments);
    if !path.is_empty() {
        out.push((line + 1, path));
    }
}

#[test]
fn the_kernel_imports_no_module_and_no_module_imports_another() {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(
        files.len() > 100,
        "the walk found the source ({} files)",
        files.len()
    );
    let mut crossings = Vec::new();
    let mut checked = 0;
    for file in &files {
        let rel = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel == COMPOSITION_ROOT {
            continue;
        }
        let here = module_path(&rel);
        let own = room_of(&here);
        let text = std::fs::read_to_string(file).unwrap();
        for (line, path) in crate_paths(&text, &here) {
            checked += 1;
            // vyred's start asks the composition root for the list of modules, and only that.
            if rel == "daemon.rs" && path == ["modules", "modules"] {
                continue;
            }
            let Some(target) = room_of(&path) else {
                continue;
            };
            if Some(target) != own {
                crossings.push(format!(
                    "{rel}:{line}: {} reaches into module {target:?} ({})",
                    own.map_or("the kernel".to_string(), |m| format!("module {m:?}")),
                    path.join("::")
                ));
            }
        }
    }
    assert!(checked > 500, "the walk read the crate paths ({checked})");
    assert!(
        crossings.is_empty(),
        "a wall is crossed; offer a tool, an event or a capability (daemon/src/kernel/contracts) instead:\n{}",
        crossings.join("\n")
    );
}

#[test]
fn the_walk_sees_every_form_of_a_crossing() {
    let here = module_path("modules/harness/mod.rs");
    let found = |text: &str| -> Vec<String> {
        crate_paths(text, &here)
            .into_iter()
            .filter_map(|(_, p)| room_of(&p).map(String::from))
            .collect()
    };
    assert_eq!(
        found("use crate::modules::recall::search;"),
        ["modules/recall"]
    );
    assert_eq!(
        found("let x = crate::modules::sessions::floor::check(a, b);"),
        ["modules/sessions"]
    );
    assert_eq!(
        found("use crate::{kernel::tools::Caller, modules::vault::{Grantee, VaultError}};"),
        ["modules/vault"]
    );
    // `super` in `modules/harness/mod.rs` is `modules`.
    assert_eq!(found("use super::onboarding::x;"), ["modules/onboarding"]);
    assert_eq!(
        crate_paths(
            "use super::hooks::Y;",
            &module_path("modules/harness/brief/mod.rs")
        )[0]
        .1,
        ["modules", "harness", "hooks", "Y"],
        "super from a file inside a module stays inside it"
    );
    assert_eq!(
        crate_paths(
            "use super::super::vault::X;",
            &module_path("modules/sessions/switchboard/mod.rs")
        )[0]
        .1,
        ["modules", "vault", "X"]
    );
    assert_eq!(
        found("use crate::modules::devices::DevicesModule;"),
        ["modules/devices"]
    );
    assert!(
        found("//! see [`crate::modules::sessions::sandbox`]").is_empty(),
        "comments are not imports"
    );
    assert!(found("use crate::kernel::contracts::vault::VaultAccess;").is_empty());
    assert_eq!(
        found("let all = crate::modules::modules(&kernel);"),
        [COMPOSITION_ROOT],
        "the list of modules is a module path too"
    );
}

/// No source file over 600 lines: a file that long holds more than one job (issue 19). The
/// redactor's tables are one job however long they are.
#[test]
fn no_source_file_is_over_600_lines() {
    const LIMIT: usize = 600;
    const ALLOWED: &[&str] = &["kernel/redact.rs"];
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let rel = f
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let lines = std::fs::read_to_string(f).unwrap().lines().count();
            (lines > LIMIT && !ALLOWED.contains(&rel.as_str()))
                .then(|| format!("{rel}: {lines} lines"))
        })
        .collect();
    long.sort();
    assert!(long.is_empty(), "split these by job:\n{}", long.join("\n"));
}

/// The folders show the architecture (issue 19): `kernel/`, `modules/<name>/` and `surfaces/`,
/// and beside them only the crate's root files. Every module folder is a room of the walls test
/// and has its manifest, so a new module cannot land outside the walls.
#[test]
fn the_folders_are_the_architecture() {
    let root = src();
    let mut top: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert_eq!(
        top,
        [
            "daemon.rs",
            "kernel",
            "lib.rs",
            "main.rs",
            "modules",
            "surfaces"
        ]
    );
    let mut rooms: Vec<String> = std::fs::read_dir(root.join("modules"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| format!("modules/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    rooms.sort();
    assert_eq!(rooms, MODULES, "every module folder is a room, and no more");
    for room in MODULES {
        let dir = root.join(room);
        let has_manifest = dir.join("module.json").is_file()
            || std::fs::read_dir(dir.join("manifests")).is_ok_and(|mut d| d.next().is_some());
        assert!(has_manifest, "{room} has its module.json");
    }
}
