//! Which credential this machine's Claude Code sessions use (ADR 0030 section 4), and whether
//! the vault holds it: `sessions.auth` is `login` (Claude Code's own login), `setup-token`
//! (`claude-setup-token`) or `api-key` (`anthropic-api-key`). The API key is also the fallback
//! when a subscription's limit is reached. Both items are granted to the `sessions` module.

use serde::{Deserialize, Serialize};

use crate::kernel::config::{Config, Role};

pub const SETUP_TOKEN_ITEM: &str = "claude-setup-token";
pub const API_KEY_ITEM: &str = "anthropic-api-key";
pub const SESSIONS_GRANTEE: &str = "module:sessions";
/// Where a mode came from when `sessions.auth` does not say.
pub const DEFAULT_SOURCE: &str = "default for this role";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AuthMode {
    Login,
    SetupToken,
    ApiKey,
}

impl AuthMode {
    pub fn item(self) -> Option<&'static str> {
        match self {
            AuthMode::Login => None,
            AuthMode::SetupToken => Some(SETUP_TOKEN_ITEM),
            AuthMode::ApiKey => Some(API_KEY_ITEM),
        }
    }
}

/// The mode in force and where it came from: `sessions.auth`, else the approved default (the
/// box a setup token, the Mac Claude Code's own login).
pub fn mode(config: &Config, role: Role) -> Result<(AuthMode, &'static str), String> {
    match config.sessions.auth.as_deref() {
        None => Ok((
            match role {
                Role::Box => AuthMode::SetupToken,
                Role::Local => AuthMode::Login,
            },
            DEFAULT_SOURCE,
        )),
        Some("login") => Ok((AuthMode::Login, "sessions.auth")),
        Some("setup-token") => Ok((AuthMode::SetupToken, "sessions.auth")),
        Some("api-key") => Ok((AuthMode::ApiKey, "sessions.auth")),
        Some(v) => Err(format!(
            "sessions.auth must be \"login\", \"setup-token\" or \"api-key\", not {v:?}"
        )),
    }
}

/// The mode in force given what the vault holds: with no `sessions.auth`, a box whose vault has
/// an API key and no setup token uses the key (what a person who pasted only a key in the
/// onboarding means); everything else is [`mode`].
pub fn effective(
    config: &Config,
    role: Role,
    present: impl Fn(&str) -> bool,
) -> Result<(AuthMode, &'static str), String> {
    let (mode, source) = mode(config, role)?;
    if config.sessions.auth.is_none()
        && mode == AuthMode::SetupToken
        && !present(SETUP_TOKEN_ITEM)
        && present(API_KEY_ITEM)
    {
        return Ok((AuthMode::ApiKey, "the only credential in the vault"));
    }
    Ok((mode, source))
}

/// One item's readiness, never its value.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ItemReadiness {
    pub item: String,
    pub present: bool,
    pub granted_to_sessions: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AuthStatus {
    pub mode: Option<AuthMode>,
    pub source: String,
    /// The item the mode needs (none for `login`).
    pub item: Option<ItemReadiness>,
    /// The API key used when the subscription's limit is reached.
    pub fallback: ItemReadiness,
    /// What to do, when something is missing.
    pub advice: Option<String>,
}

pub fn status(
    config: &Config,
    role: Role,
    readiness: impl Fn(&str) -> ItemReadiness,
) -> AuthStatus {
    let fallback = readiness(API_KEY_ITEM);
    let (mode, source) = match effective(config, role, |item| readiness(item).present) {
        Ok((m, s)) => (Some(m), s.to_string()),
        Err(e) => {
            return AuthStatus {
                mode: None,
                source: "sessions.auth".into(),
                item: None,
                fallback,
                advice: Some(e),
            };
        }
    };
    let item = mode.and_then(AuthMode::item).map(&readiness);
    let advice = item.as_ref().and_then(|i| {
        if !i.present {
            Some(format!(
                "store it with `vyre vault put {0}` and grant it with `vyre vault grant {0} sessions`",
                i.item
            ))
        } else if !i.granted_to_sessions {
            Some(format!("grant it with `vyre vault grant {} sessions`", i.item))
        } else {
            None
        }
    });
    AuthStatus {
        mode,
        source,
        item,
        fallback,
        advice,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Config {
        crate::kernel::config::parse(std::path::Path::new("config.json"), text)
            .unwrap()
            .0
    }

    #[test]
    fn a_box_with_only_an_api_key_uses_it_unless_told_otherwise() {
        let only_key = |item: &str| item == API_KEY_ITEM;
        let both = |_: &str| true;
        let none = |_: &str| false;
        let default = config("{}");
        assert_eq!(
            effective(&default, Role::Box, only_key).unwrap().0,
            AuthMode::ApiKey
        );
        assert_eq!(
            effective(&default, Role::Box, both).unwrap().0,
            AuthMode::SetupToken
        );
        assert_eq!(
            effective(&default, Role::Box, none).unwrap().0,
            AuthMode::SetupToken
        );
        assert_eq!(
            effective(&default, Role::Local, only_key).unwrap().0,
            AuthMode::Login
        );
        let told = config(r#"{"sessions": {"auth": "setup-token"}}"#);
        assert_eq!(
            effective(&told, Role::Box, only_key).unwrap().0,
            AuthMode::SetupToken
        );
    }
}
