//! What a repository's own Claude Code settings cannot change for Vyre's sessions.
//!
//! A project's `.claude/settings.json` and `.claude/settings.local.json` may hold an `env`
//! block, which Claude Code applies to itself, its tools and its hooks. Measured on 2.1.328: a
//! repository's `ANTHROPIC_BASE_URL` sent the session's requests to its server; `HTTPS_PROXY` and
//! `HTTP_PROXY` sent them, with the vault's key, through its proxy; `CLAUDE_CODE_USE_BEDROCK`
//! or `_VERTEX` or `_FOUNDRY` with their base URLs sent them to another provider's address;
//! `ANTHROPIC_API_KEY` replaced the vault's key; `VYRE_SOCKET` and `PATH` reached the hooks (so
//! the floor's hook could be another program); and an `apiKeyHelper` ran a command of its own.
//!
//! The CLI's flag settings (`--settings <json>`) rank above project, local and user settings,
//! key by key, and an empty value reads as unset (measured for each of the above). So every
//! session gets, as flag settings:
//! - every variable Vyre puts in its environment, with the same value (the base URL, the
//!   credential's file descriptor, the `CLAUDE_CODE_*` switches, `PATH`, `VYRE_*`);
//! - the base URL even when Vyre sets none: the Anthropic API's own;
//! - the variables that choose where requests go and through what ([`ROUTING`]): vyred's own
//!   value when it has one, else empty;
//! - when Vyre hands over the credential (on fd 3), the other credential variables
//!   ([`CREDENTIALS`]) empty and `apiKeyHelper` empty. With Claude Code's own login, those stay
//!   as the person's settings say.
//!
//! Nothing secret goes here: the argv is readable by every process of the machine, and the
//! environment Vyre builds holds no secret (the credential is on fd 3).

use std::ffi::OsString;

use serde_json::{Map, Value, json};

/// Where requests go when nothing says otherwise.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// Variables that send the CLI's requests elsewhere, through another server, or past TLS
/// checks. Pinned to vyred's own value, or empty.
pub const ROUTING: &[&str] = &[
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "CLAUDE_CODE_HTTP_PROXY",
    "CLAUDE_CODE_HTTPS_PROXY",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
    "CLAUDE_CODE_USE_GATEWAY",
    "CLAUDE_CODE_USE_MANTLE",
    "CLAUDE_CODE_USE_ANTHROPIC_AWS",
    "CLAUDE_CODE_USE_ANTHROPIC_GOOGLE_CLOUD",
    "ANTHROPIC_UNIX_SOCKET",
    "ANTHROPIC_CUSTOM_HEADERS",
    "NODE_TLS_REJECT_UNAUTHORIZED",
    "NODE_EXTRA_CA_CERTS",
];

/// Credential variables that would replace the one Vyre hands over.
pub const CREDENTIALS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR",
    "CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR",
];

/// The flag settings for a session whose environment is `env` (later entries win, as in the
/// child's own environment); `credential_given` when Vyre hands over the credential.
/// `own` reads vyred's own environment.
pub fn flag_settings(
    env: &[(String, OsString)],
    credential_given: bool,
    own: impl Fn(&str) -> Option<String>,
) -> Value {
    let mut pinned = Map::new();
    for name in ROUTING {
        pinned.insert(name.to_string(), json!(own(name).unwrap_or_default()));
    }
    pinned.insert("ANTHROPIC_BASE_URL".into(), json!(DEFAULT_BASE_URL));
    if credential_given {
        for name in CREDENTIALS {
            pinned.insert(name.to_string(), json!(""));
        }
    }
    for (name, value) in env {
        // A value that is not UTF-8 cannot be said in JSON; it is rare (a PATH) and left out.
        if let Some(value) = value.to_str() {
            pinned.insert(name.clone(), json!(value));
        }
    }
    let mut settings = json!({ "env": pinned });
    if credential_given {
        settings["apiKeyHelper"] = json!("");
    }
    settings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect()
    }

    #[test]
    fn what_vyre_sets_is_pinned_and_the_rest_of_the_route_is_blank_or_vyreds() {
        let s = flag_settings(
            &env(&[
                ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
                ("CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR", "3"),
                ("PATH", "/usr/bin"),
                ("PATH", "/vyre/bin:/usr/bin"),
                ("VYRE_SOCKET", "/s/t.sock"),
            ]),
            true,
            |name| (name == "HTTPS_PROXY").then(|| "http://proxy.example:3128".to_string()),
        );
        let e = &s["env"];
        assert_eq!(e["ANTHROPIC_BASE_URL"], "http://127.0.0.1:9");
        assert_eq!(e["CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR"], "3");
        assert_eq!(e["PATH"], "/vyre/bin:/usr/bin", "the last one wins");
        assert_eq!(e["VYRE_SOCKET"], "/s/t.sock");
        assert_eq!(e["HTTPS_PROXY"], "http://proxy.example:3128");
        assert_eq!(e["HTTP_PROXY"], "");
        assert_eq!(e["CLAUDE_CODE_USE_BEDROCK"], "");
        for name in [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR",
        ] {
            assert_eq!(e[name], "", "{name}");
        }
        assert_eq!(s["apiKeyHelper"], "");
    }

    #[test]
    fn the_base_url_is_pinned_even_when_vyre_sets_none_and_a_login_keeps_its_credentials() {
        let s = flag_settings(&env(&[("HOME", "/h")]), false, |_| None);
        assert_eq!(s["env"]["ANTHROPIC_BASE_URL"], DEFAULT_BASE_URL);
        assert!(s["env"].get("ANTHROPIC_API_KEY").is_none());
        assert!(s.get("apiKeyHelper").is_none());
    }
}
