//! Whether a pasted credential looks like what its choice says, checked before it is stored
//! (issue 18: "abc" was accepted as an API key, and the first session failed later with the
//! API's words). Only the shape is checked, never by calling the API: a key that has the shape
//! and is refused there says so at its first session. Another kind of key (a gateway's) goes
//! into the vault from the terminal: `vyre vault put anthropic-api-key`.

use crate::kernel::tools::{ErrorKind, ToolError};

/// The shortest credential with Anthropic's shape: `sk-ant-api03-` and 20 characters.
const SHORTEST: usize = 33;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KeyShape {
    #[error("the credential is empty")]
    Empty,
    #[error("paste the key alone: it has spaces or line breaks in it")]
    Spaces,
    #[error(
        "this is a setup token (sk-ant-oat…), not an API key: choose “Your Claude subscription” for it"
    )]
    TokenAsKey,
    #[error("this is an API key (sk-ant-api…), not a setup token: choose “An API key” for it")]
    KeyAsToken,
    #[error("an Admin key cannot run sessions: make an API key in the Anthropic Console")]
    AdminKey,
    #[error(
        "this is not an Anthropic API key: they start with sk-ant-api and are much longer (console.anthropic.com, API keys). A gateway's key goes in from a terminal: vyre vault put anthropic-api-key"
    )]
    NotAKey,
    #[error(
        "this is not a setup token: run `claude setup-token` where you are signed in to Claude and paste the sk-ant-oat… line it prints"
    )]
    NotAToken,
}

impl From<KeyShape> for ToolError {
    fn from(e: KeyShape) -> Self {
        ToolError::new(ErrorKind::InvalidInput, "not_a_key", e.to_string())
    }
}

fn plausible(value: &str) -> bool {
    value.len() >= SHORTEST
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// An API key (`api_key`) or a setup token, as pasted (already trimmed).
pub fn check(value: &str, api_key: bool) -> Result<(), KeyShape> {
    if value.is_empty() {
        return Err(KeyShape::Empty);
    }
    if value.chars().any(char::is_whitespace) {
        return Err(KeyShape::Spaces);
    }
    match (api_key, value) {
        (true, v) if v.starts_with("sk-ant-oat") => Err(KeyShape::TokenAsKey),
        (true, v) if v.starts_with("sk-ant-admin") => Err(KeyShape::AdminKey),
        (true, v) if v.starts_with("sk-ant-") && plausible(v) => Ok(()),
        (true, _) => Err(KeyShape::NotAKey),
        (false, v) if v.starts_with("sk-ant-api") => Err(KeyShape::KeyAsToken),
        (false, v) if v.starts_with("sk-ant-oat") && plausible(v) => Ok(()),
        (false, _) => Err(KeyShape::NotAToken),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_credential_must_have_its_kinds_shape() {
        let key = format!("sk-ant-api03-{}", "a1B2_c3-".repeat(4));
        let token = format!("sk-ant-oat01-{}", "Z9y8x7w6".repeat(4));
        assert_eq!(check(&key, true), Ok(()));
        assert_eq!(check(&token, false), Ok(()));
        assert_eq!(check("abc", true), Err(KeyShape::NotAKey));
        assert_eq!(check("sk-ant-api03-short", true), Err(KeyShape::NotAKey));
        assert_eq!(check("abc", false), Err(KeyShape::NotAToken));
        assert_eq!(check("", true), Err(KeyShape::Empty));
        assert_eq!(check(&format!("{key} {key}"), true), Err(KeyShape::Spaces));
        assert_eq!(check(&token, true), Err(KeyShape::TokenAsKey));
        assert_eq!(check(&key, false), Err(KeyShape::KeyAsToken));
        assert_eq!(
            check(&format!("sk-ant-admin01-{}", "x".repeat(40)), true),
            Err(KeyShape::AdminKey)
        );
        assert_eq!(
            check(&format!("sk-ant-api03-{}!", "x".repeat(40)), true),
            Err(KeyShape::NotAKey)
        );
        let e: ToolError = KeyShape::NotAKey.into();
        assert_eq!((e.kind, &*e.code), (ErrorKind::InvalidInput, "not_a_key"));
        assert!(!e.message.contains("abc"), "the value is never echoed");
    }
}
