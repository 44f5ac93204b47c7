//! What "Always in project" writes, said before it is written (issue 18): an ask carries the
//! rules its answer `always` would add (Claude Code's own suggestions, made safe by
//! `safe_permissions`), where they go, and the same in words.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::switchboard::safe_permissions;

/// Where Claude Code keeps a project's own rules that are not shared (`localSettings`).
pub const LOCAL_SETTINGS: &str = ".claude/settings.local.json";

/// What answering an ask `always` would change.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq, Eq)]
pub struct Always {
    /// Rules allowed from now on, as Claude Code writes them (`Bash(npm test:*)`, `WebFetch`).
    pub rules: Vec<String>,
    /// The file they are written to, in the session's folder.
    pub file: Option<String>,
    /// Folders the session may also work in, and for how long.
    pub directories: Vec<String>,
    /// A permission mode the session switches to.
    pub mode: Option<String>,
    /// All of it in words, for a person about to choose.
    pub text: String,
}

/// What `always` would write for an ask with these suggestions; `None` when it would write
/// nothing (then "always" is no more than "allow").
pub fn of(suggestions: &Value) -> Option<Always> {
    let kept = safe_permissions(suggestions);
    let mut rules = vec![];
    let mut directories = vec![];
    let mut dirs_for = None;
    let mut mode = None;
    let mut mode_for = None;
    for s in kept.as_array().into_iter().flatten() {
        match s["type"].as_str() {
            Some("addRules") if s["behavior"].as_str().unwrap_or("allow") == "allow" => {
                for r in s["rules"].as_array().into_iter().flatten() {
                    let Some(tool) = r["toolName"].as_str() else {
                        continue;
                    };
                    rules.push(match r["ruleContent"].as_str() {
                        Some(content) if !content.is_empty() => format!("{tool}({content})"),
                        _ => tool.to_string(),
                    });
                }
            }
            Some("addDirectories") => {
                directories.extend(
                    s["directories"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(String::from),
                );
                dirs_for = s["destination"].as_str().map(String::from);
            }
            Some("setMode") => {
                mode = s["mode"].as_str().map(String::from);
                mode_for = s["destination"].as_str().map(String::from);
            }
            _ => {}
        }
    }
    if rules.is_empty() && directories.is_empty() && mode.is_none() {
        return None;
    }
    let mut said = vec![];
    if !rules.is_empty() {
        said.push(format!(
            "allows {} from now on, written to {LOCAL_SETTINGS} in this folder",
            rules.join(", ")
        ));
    }
    if !directories.is_empty() {
        said.push(format!(
            "lets it work in {} {}",
            directories.join(", "),
            lasting(dirs_for.as_deref())
        ));
    }
    if let Some(m) = &mode {
        let name = match m.as_str() {
            "acceptEdits" => "Accept edits",
            "plan" => "Plan",
            _ => "Default",
        };
        said.push(format!(
            "switches to the {name} mode {}",
            lasting(mode_for.as_deref())
        ));
    }
    let mut text = said.join("; ");
    if let Some(first) = text.get(0..1) {
        text = first.to_uppercase() + &text[1..];
    }
    text.push('.');
    Some(Always {
        file: (!rules.is_empty()).then(|| LOCAL_SETTINGS.to_string()),
        rules,
        directories,
        mode,
        text,
    })
}

/// Add to an ask's payload what a person reads before answering it: `rule` (what `always`
/// would write, or null) and `destructive` (why the call deserves a second look, or null).
pub fn annotate(payload: &mut Value, tool: &str, input: &Value, suggestions: &Value) {
    payload["rule"] = serde_json::to_value(of(suggestions)).unwrap_or(Value::Null);
    payload["destructive"] = super::caution::destructive(tool, input).into();
}

/// Each ask's suggestions (`threads_asks.suggestions`) for one thread, by ask id.
pub fn suggestions(
    c: &rusqlite::Connection,
    thread: &str,
) -> rusqlite::Result<std::collections::HashMap<String, Value>> {
    let mut stmt =
        c.prepare_cached("SELECT id, suggestions FROM threads_asks WHERE thread = ?1")?;
    let rows = stmt.query_map([thread], |r| {
        let text: String = r.get(1)?;
        Ok((
            r.get::<_, String>(0)?,
            serde_json::from_str(&text).unwrap_or(Value::Null),
        ))
    })?;
    rows.collect()
}

/// For how long a change of this destination holds.
fn lasting(destination: Option<&str>) -> &'static str {
    match destination {
        Some("localSettings") => "from now on (.claude/settings.local.json)",
        Some("projectSettings") => "from now on (.claude/settings.json)",
        Some("userSettings") => "from now on, in every project (~/.claude/settings.json)",
        _ => "for this session",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_bash_rule_is_said_as_claude_code_writes_it() {
        let a = of(&json!([
            { "type": "addRules", "rules": [{ "toolName": "Bash", "ruleContent": "npm test:*" }], "behavior": "allow", "destination": "session" }
        ]))
        .unwrap();
        assert_eq!(a.rules, ["Bash(npm test:*)"]);
        assert_eq!(a.file.as_deref(), Some(LOCAL_SETTINGS));
        assert_eq!(
            a.text,
            "Allows Bash(npm test:*) from now on, written to .claude/settings.local.json in this folder."
        );
    }

    #[test]
    fn folders_and_modes_say_how_long_they_last() {
        let a = of(&json!([
            { "type": "addRules", "rules": [{ "toolName": "WebFetch" }], "behavior": "allow", "destination": "localSettings" },
            { "type": "addDirectories", "directories": ["/srv/data"], "destination": "session" },
            { "type": "setMode", "mode": "acceptEdits", "destination": "session" }
        ]))
        .unwrap();
        assert_eq!(a.rules, ["WebFetch"]);
        assert_eq!(a.directories, ["/srv/data"]);
        assert_eq!(a.mode.as_deref(), Some("acceptEdits"));
        assert!(
            a.text
                .contains("lets it work in /srv/data for this session"),
            "{}",
            a.text
        );
        assert!(
            a.text
                .contains("switches to the Accept edits mode for this session"),
            "{}",
            a.text
        );
        let edits =
            of(&json!([{ "type": "setMode", "mode": "acceptEdits", "destination": "session" }]))
                .unwrap();
        assert_eq!(edits.file, None, "no rule, no file");
    }

    #[test]
    fn an_asks_payload_carries_its_rule_and_its_warning() {
        let mut p = json!({ "ask": "a1" });
        annotate(
            &mut p,
            "Bash",
            &json!({ "command": "rm -rf dist" }),
            &json!([{ "type": "addRules", "rules": [{ "toolName": "Bash", "ruleContent": "rm -rf dist" }], "behavior": "allow", "destination": "session" }]),
        );
        assert_eq!(p["rule"]["rules"], json!(["Bash(rm -rf dist)"]));
        assert_eq!(p["rule"]["file"], LOCAL_SETTINGS);
        assert_eq!(
            p["destructive"],
            "deletes files and folders, with everything in them"
        );
        let mut q = json!({});
        annotate(&mut q, "Read", &json!({ "file_path": "/x" }), &json!([]));
        assert_eq!(q, json!({ "rule": null, "destructive": null }));
    }

    #[test]
    fn what_always_would_never_write_is_not_offered() {
        assert_eq!(of(&json!([])), None);
        assert_eq!(of(&Value::Null), None);
        // Bypass is dropped by safe_permissions, so nothing is left to write.
        assert_eq!(
            of(
                &json!([{ "type": "setMode", "mode": "bypassPermissions", "destination": "session" }])
            ),
            None
        );
        assert_eq!(
            of(
                &json!([{ "type": "addRules", "rules": [{ "toolName": "Bash", "ruleContent": "rm:*" }], "behavior": "deny", "destination": "session" }])
            ),
            None,
            "a deny rule is not what always means"
        );
    }
}
