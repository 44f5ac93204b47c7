//! `module.json`: the five verbs (spec section 5.1) plus name, version, roles and requires.

use serde::{Deserialize, Serialize};

use crate::kernel::config::Role;

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Does {
    pub tools: Vec<String>,
    /// Session providers this module registers (ADR 0030 section 5), e.g. `claude`; `acp-*`
    /// declares a family, any `acp-<name>`.
    pub providers: Vec<String>,
    /// Capabilities this module hands others through the kernel (`crate::kernel::contracts`), e.g.
    /// `vault`; one module per capability.
    pub provides: Vec<String>,
    /// This module runs agents (spec section 10): it may fetch vault items a person granted to
    /// an agent (`agent:<name>`), for that agent's sessions.
    pub agents: bool,
    /// This module runs watchers (spec 7.6): it may fetch vault items a person granted to a
    /// watcher (`watcher:<name>`), for that watcher's runs.
    pub watchers: bool,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Watches {
    /// Event types this module emits; emitting any other is refused.
    pub emits: Vec<String>,
    /// Event types it listens to (informational).
    pub on: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Shows {
    pub deck: Vec<String>,
    pub capsule: Vec<String>,
    /// The module's own name (all its tools) or single tool names, offered as `vyre <module> <tool>`.
    pub cli: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Needs {
    pub vault: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Teaches {
    pub memory: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    pub version: String,
    pub roles: Vec<Role>,
    #[serde(default)]
    pub requires: Vec<String>,
    #[serde(default)]
    pub does: Does,
    #[serde(default)]
    pub watches: Watches,
    #[serde(default)]
    pub shows: Shows,
    #[serde(default)]
    pub needs: Needs,
    #[serde(default)]
    pub teaches: Teaches,
}

impl Manifest {
    /// Parse and validate a manifest's text.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let manifest: Manifest = serde_json::from_str(text).map_err(|e| e.to_string())?;
        manifest.validate()?;
        Ok(manifest)
    }

    /// The checks serde cannot make.
    pub fn validate(&self) -> Result<(), String> {
        if !super::valid_module_name(&self.name) {
            return Err(format!(
                "name {:?} must be lowercase letters, digits, '-' or '_', starting with a letter, at most 32 characters",
                self.name
            ));
        }
        if !valid_version(&self.version) {
            return Err(format!(
                "version {:?} must be MAJOR.MINOR.PATCH",
                self.version
            ));
        }
        if self.roles.is_empty() {
            return Err("roles must name at least one of \"box\" and \"local\"".into());
        }
        for (i, r) in self.requires.iter().enumerate() {
            if !super::valid_module_name(r) {
                return Err(format!("requires: {r:?} is not a module name"));
            }
            if *r == self.name {
                return Err("a module cannot require itself".into());
            }
            if self.requires[..i].contains(r) {
                return Err(format!("requires: {r:?} is listed twice"));
            }
        }
        let prefix = format!("{}.", self.name);
        for (i, tool) in self.does.tools.iter().enumerate() {
            if !crate::kernel::tools::valid_name(tool) {
                return Err(format!(
                    "does.tools: {tool:?} is not a tool name (module.tool)"
                ));
            }
            if !tool.starts_with(&prefix) {
                return Err(format!("does.tools: {tool:?} must start with {prefix:?}"));
            }
            if self.does.tools[..i].contains(tool) {
                return Err(format!("does.tools: {tool:?} is listed twice"));
            }
        }
        for (i, p) in self.does.providers.iter().enumerate() {
            // `acp-*`: a family, each named by the person's config (`acp-<name>`).
            let family = p.strip_suffix("-*").is_some_and(super::valid_module_name);
            if !super::valid_module_name(p) && !family {
                return Err(format!("does.providers: {p:?} is not a provider name"));
            }
            if self.does.providers[..i].contains(p) {
                return Err(format!("does.providers: {p:?} is listed twice"));
            }
        }
        for kind in self.watches.emits.iter().chain(&self.watches.on) {
            let bare = kind.strip_suffix(".*").unwrap_or(kind);
            let prefix_ok = kind.ends_with(".*") && super::valid_module_name(bare);
            if !(crate::kernel::events::valid_type(kind) || prefix_ok) {
                return Err(format!(
                    "watches: {kind:?} is not an event type (noun.past-verb)"
                ));
            }
        }
        for entry in &self.shows.cli {
            if *entry != self.name && !self.does.tools.contains(entry) {
                return Err(format!(
                    "shows.cli: {entry:?} must be the module's name or one of its tools in does.tools"
                ));
            }
        }
        Ok(())
    }

    /// Whether `tool` is offered on the command line.
    pub fn shows_on_cli(&self, tool: &str) -> bool {
        self.shows.cli.iter().any(|e| *e == self.name || e == tool)
    }

    /// Whether this module may emit events of type `kind`.
    pub fn may_emit(&self, kind: &str) -> bool {
        self.watches
            .emits
            .iter()
            .any(|e| match e.strip_suffix('*') {
                Some(prefix) => kind.starts_with(prefix),
                None => e == kind,
            })
    }
}

fn valid_version(v: &str) -> bool {
    let core = v.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 9 && p.chars().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{
        "name": "watchers", "version": "0.1.0", "roles": ["box", "local"],
        "requires": ["projects", "vault"],
        "does": { "tools": ["watchers.create", "watchers.list", "watchers.pause"] },
        "watches": { "emits": ["watcher.fired", "watcher.failed"] },
        "shows": { "deck": ["panel:watchers"], "capsule": [], "cli": ["watchers"] },
        "needs": { "vault": ["per-watcher"] },
        "teaches": { "memory": ["watcher.item"] }
    }"#;

    fn with(patch: &str) -> String {
        let mut v: serde_json::Value = serde_json::from_str(GOOD).unwrap();
        let p: serde_json::Value = serde_json::from_str(patch).unwrap();
        for (k, val) in p.as_object().unwrap() {
            if val.is_null() {
                v.as_object_mut().unwrap().remove(k);
            } else {
                v[k] = val.clone();
            }
        }
        v.to_string()
    }

    #[test]
    fn the_spec_example_is_valid() {
        let m = Manifest::parse(GOOD).unwrap();
        assert!(m.shows_on_cli("watchers.list"));
        assert!(m.may_emit("watcher.fired"));
        assert!(!m.may_emit("watcher.deleted"));
        let minimal = Manifest::parse(r#"{"name":"x","version":"1.0.0","roles":["box"]}"#).unwrap();
        assert!(minimal.does.tools.is_empty());
    }

    #[test]
    fn the_validation_table() {
        let cases: &[(&str, String, &str)] = &[
            ("not json", "{name:".into(), "key must be a string"),
            ("not an object", "[]".into(), "expected struct Manifest"),
            (
                "missing name",
                with(r#"{"name":null}"#),
                "missing field `name`",
            ),
            (
                "missing version",
                with(r#"{"version":null}"#),
                "missing field `version`",
            ),
            (
                "missing roles",
                with(r#"{"roles":null}"#),
                "missing field `roles`",
            ),
            (
                "bad name",
                with(r#"{"name":"Watchers!"}"#),
                "name \"Watchers!\"",
            ),
            (
                "long name",
                with(r#"{"name":"abcdefghijabcdefghijabcdefghijabc"}"#),
                "at most 32",
            ),
            (
                "bad version",
                with(r#"{"version":"one"}"#),
                "MAJOR.MINOR.PATCH",
            ),
            (
                "two-part version",
                with(r#"{"version":"1.0"}"#),
                "MAJOR.MINOR.PATCH",
            ),
            ("empty roles", with(r#"{"roles":[]}"#), "at least one"),
            (
                "unknown role",
                with(r#"{"roles":["desk"]}"#),
                "unknown variant `desk`",
            ),
            (
                "unknown key",
                with(r#"{"require":["a"]}"#),
                "unknown field `require`",
            ),
            (
                "unknown verb key",
                with(r#"{"does":{"tool":[]}}"#),
                "unknown field `tool`",
            ),
            (
                "requires itself",
                with(r#"{"requires":["watchers"]}"#),
                "require itself",
            ),
            (
                "requires twice",
                with(r#"{"requires":["a","a"]}"#),
                "listed twice",
            ),
            (
                "bad requirement",
                with(r#"{"requires":["A B"]}"#),
                "not a module name",
            ),
            (
                "tool of another module",
                with(r#"{"does":{"tools":["vault.put"]}}"#),
                "must start with",
            ),
            (
                "bad tool name",
                with(r#"{"does":{"tools":["watchers"]}}"#),
                "not a tool name",
            ),
            (
                "tool twice",
                with(r#"{"does":{"tools":["watchers.a","watchers.a"]}}"#),
                "listed twice",
            ),
            (
                "bad event type",
                with(r#"{"watches":{"emits":["Fired"]}}"#),
                "not an event type",
            ),
            (
                "cli names an undeclared tool",
                with(r#"{"shows":{"cli":["watchers.nope"]}}"#),
                "shows.cli",
            ),
            (
                "wrong type",
                with(r#"{"requires":"vault"}"#),
                "invalid type",
            ),
            (
                "bad provider name",
                with(r#"{"does":{"providers":["Co Dex"]}}"#),
                "not a provider name",
            ),
            (
                "provider twice",
                with(r#"{"does":{"providers":["codex","codex"]}}"#),
                "listed twice",
            ),
            (
                "a family with no stem",
                with(r#"{"does":{"providers":["-*"]}}"#),
                "not a provider name",
            ),
            (
                "a wildcard not after a dash",
                with(r#"{"does":{"providers":["acp*"]}}"#),
                "not a provider name",
            ),
        ];
        // A family of providers named by config is declared by its stem.
        Manifest::parse(&with(r#"{"does":{"providers":["claude","acp-*"]}}"#)).unwrap();
        for (name, text, expected) in cases {
            let err = Manifest::parse(text).expect_err(name);
            assert!(err.contains(expected), "{name}: {err:?} lacks {expected:?}");
        }
    }
}
