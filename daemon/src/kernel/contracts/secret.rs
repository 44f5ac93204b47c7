//! Values from the vault in memory: a type that never prints itself and is wiped on drop.
//!
//! `Secret` has no `Display` and no `Serialize`; its `Debug` says `[redacted]`. A value leaves it
//! only through [`Secret::expose`], at the one place that hands it to a child process or a
//! service. It can be deserialized (tool input) so a value typed by a person goes straight into it.

use std::fmt;

use serde::{Deserialize, Deserializer};
use zeroize::{Zeroize, Zeroizing};

/// A credential or other secret text.
#[derive(Clone, Default)]
pub struct Secret(Zeroizing<String>);

impl Secret {
    pub fn new(value: String) -> Self {
        Secret(Zeroizing::new(value))
    }
    /// The value itself. Call only where it must leave vyred (a child's environment, a request).
    pub fn expose(&self) -> &str {
        &self.0
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl PartialEq for Secret {
    fn eq(&self, other: &Self) -> bool {
        // Not constant-time; used by tests, never to check a credential.
        *self.0 == *other.0
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut s = String::deserialize(d)?;
        let secret = Secret::new(std::mem::take(&mut s));
        s.zeroize();
        Ok(secret)
    }
}

impl schemars::JsonSchema for Secret {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Secret".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string", "description": "a secret value; never shown again", "writeOnly": true })
    }
}

/// The kinds of item the vault keeps.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// An API key, a token.
    Secret,
    /// A username, a password and an optional TOTP seed.
    Login,
    /// Secure text.
    Note,
    /// A payment card: its number, holder, expiry and security code.
    Card,
    /// A named group of environment variables, granted as one (to a watcher, say).
    Env,
    /// A relayed pass another person's Vyre gave this one: where to send a request for the
    /// item it shares (their Gate fills the value in); never a value itself.
    Pass,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Secret => "secret",
            Kind::Login => "login",
            Kind::Note => "note",
            Kind::Card => "card",
            Kind::Env => "env",
            Kind::Pass => "pass",
        }
    }
    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "secret" => Some(Kind::Secret),
            "login" => Some(Kind::Login),
            "note" => Some(Kind::Note),
            "card" => Some(Kind::Card),
            "env" => Some(Kind::Env),
            "pass" => Some(Kind::Pass),
            _ => None,
        }
    }
}

/// An item's value, as a module receives it from `ctx.vault().fetch(name)`.
#[derive(Debug, Clone, PartialEq)]
pub enum VaultValue {
    Secret(Secret),
    Login {
        username: Secret,
        password: Secret,
        /// The base32 TOTP seed, when the login has one.
        totp: Option<Secret>,
        /// Its notes (and custom fields an import brought), sealed like the rest.
        notes: Option<Secret>,
    },
    Note(Secret),
    Card {
        number: Secret,
        /// The name on the card.
        holder: Secret,
        /// `MM/YY`.
        expiry: Secret,
        /// The security code (CVC).
        code: Secret,
        notes: Option<Secret>,
    },
    /// Variables by name, sorted, each name a shell variable's (`[A-Za-z_][A-Za-z0-9_]*`).
    Env(Vec<(String, Secret)>),
    /// A relayed pass (ADR 0036): the giver's Vyre, the pass's id there and the Ed25519 key
    /// (its 32-byte seed, base64url) this Vyre bound the pass to when it accepted it; `None`
    /// for a pass accepted before passes were bound, which the giver no longer takes. Used only
    /// by this Vyre's Gate, which signs the request and sends it to the giver's.
    Pass {
        url: String,
        pass: String,
        key: Option<Secret>,
    },
}

impl VaultValue {
    pub fn kind(&self) -> Kind {
        match self {
            VaultValue::Secret(_) => Kind::Secret,
            VaultValue::Login { .. } => Kind::Login,
            VaultValue::Note(_) => Kind::Note,
            VaultValue::Card { .. } => Kind::Card,
            VaultValue::Env(_) => Kind::Env,
            VaultValue::Pass { .. } => Kind::Pass,
        }
    }

    /// The secret of a `secret` item, the password of a `login`, the text of a `note`, a card's
    /// number, an env set's first variable's value (a set is meant to be used whole, as
    /// [`VaultValue::Env`]; one granted where a single value is read gives that one); nothing
    /// for a relayed pass, whose key only signs.
    pub fn primary(&self) -> &Secret {
        static EMPTY: std::sync::LazyLock<Secret> =
            std::sync::LazyLock::new(|| Secret::new(String::new()));
        match self {
            VaultValue::Secret(s) | VaultValue::Note(s) => s,
            VaultValue::Login { password, .. } => password,
            VaultValue::Card { number, .. } => number,
            VaultValue::Env(vars) => vars.first().map_or(&EMPTY, |(_, v)| v),
            VaultValue::Pass { .. } => &EMPTY,
        }
    }

    /// The TOTP code for now, for a login with a seed.
    pub fn totp_now(&self) -> Option<Result<Secret, String>> {
        let VaultValue::Login {
            totp: Some(seed), ..
        } = self
        else {
            return None;
        };
        Some(totp_code(seed, crate::now_ms() as u64 / 1000))
    }
}

/// The six-digit TOTP code (RFC 6238: SHA-1, 30 s steps) of a base32 seed at a Unix time.
pub fn totp_code(seed: &Secret, unix_s: u64) -> Result<Secret, String> {
    let cleaned: Zeroizing<String> = Zeroizing::new(
        seed.expose()
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '-')
            .collect::<String>()
            .to_ascii_uppercase(),
    );
    let bytes = Zeroizing::new(
        totp_rs::Secret::Encoded(cleaned.to_string())
            .to_bytes()
            .map_err(|_| "the TOTP seed is not valid base32".to_string())?,
    );
    let totp = totp_rs::TOTP::new_unchecked(totp_rs::Algorithm::SHA1, 6, 1, 30, bytes.to_vec());
    Ok(Secret::new(totp.generate(unix_s)))
}

/// Whether `name` may be an env set's variable: a shell variable's name.
pub fn valid_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 128
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_never_prints_itself() {
        let s = Secret::new("hunter2-value".into());
        assert_eq!(format!("{s:?}"), "Secret([redacted])");
        let v = VaultValue::Login {
            username: Secret::new("sam".into()),
            password: s.clone(),
            totp: None,
            notes: None,
        };
        let printed = format!("{v:?} {v:#?}");
        assert!(
            !printed.contains("hunter2") && !printed.contains("sam"),
            "{printed}"
        );
        let parsed: Secret = serde_json::from_str("\"from-json\"").unwrap();
        assert_eq!(parsed.expose(), "from-json");
    }

    #[test]
    fn totp_matches_rfc_6238() {
        // RFC 6238 appendix B, SHA-1 seed "12345678901234567890" in base32.
        let seed = Secret::new("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ".into());
        assert_eq!(totp_code(&seed, 59).unwrap().expose(), "287082");
        assert_eq!(totp_code(&seed, 1_111_111_109).unwrap().expose(), "081804");
        assert_eq!(totp_code(&seed, 2_000_000_000).unwrap().expose(), "279037");
        let spaced = Secret::new("gezd gnbv gy3t qojq gezd gnbv gy3t qojq".into());
        assert_eq!(totp_code(&spaced, 59).unwrap().expose(), "287082");
        assert!(totp_code(&Secret::new("not base32!".into()), 59).is_err());
    }
}
