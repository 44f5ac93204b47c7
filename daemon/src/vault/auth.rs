//! Which credential this machine's Claude Code sessions use (ADR 0030 section 4), and whether
//! the vault holds it: `sessions.auth` is `login` (Claude Code's own login), `setup-token`
//! (`claude-setup-token`) or `api-key` (`anthropic-api-key`). The API key is also the fallback
//! when a subscription's limit is reached. Both items are granted to the `sessions` module.

use serde::Serialize;

use crate::config::{LoadedConfig, Role};

pub const SETUP_TOKEN_ITEM: &str = "claude-setup-token";
pub const API_KEY_ITEM: &str = "anthropic-api-key";
pub const SESSIONS_GRANTEE: &str = "module:sessions";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
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
pub fn mode(config: &LoadedConfig, role: Role) -> Result<(AuthMode, &'static str), String> {
    match config.config.sessions.auth.as_deref() {
        None => Ok((
            match role {
                Role::Box => AuthMode::SetupToken,
                Role::Local => AuthMode::Login,
            },
            "default for this role",
        )),
        Some("login") => Ok((AuthMode::Login, "sessions.auth")),
        Some("setup-token") => Ok((AuthMode::SetupToken, "sessions.auth")),
        Some("api-key") => Ok((AuthMode::ApiKey, "sessions.auth")),
        Some(v) => Err(format!(
            "sessions.auth must be \"login\", \"setup-token\" or \"api-key\", not {v:?}"
        )),
    }
}

/// One item's readiness, never its value.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ItemReadiness {
    pub item: String,
    pub present: bool,
    pub granted_to_sessions: bool,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
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
    config: &LoadedConfig,
    role: Role,
    readiness: impl Fn(&str) -> ItemReadiness,
) -> AuthStatus {
    let fallback = readiness(API_KEY_ITEM);
    let (mode, source) = match mode(config, role) {
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
