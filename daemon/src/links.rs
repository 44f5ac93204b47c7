//! One-time links that give a browser its device: `vyre up` prints one for the onboarding while
//! there is no owner, `vyre open` one for another browser once there is. A link's token is
//! 32 random bytes, kept only as its SHA-256, used once, and valid for an hour unless made
//! shorter.

use std::time::Duration;

use rusqlite::{OptionalExtension, params};

use crate::devices::hash_token;
use crate::store::{Store, StoreError};

/// How long a link is valid unless made shorter.
pub const LINK_TTL: Duration = Duration::from_secs(3600);

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    /// The onboarding: a browser that will finish it and become the owner's first device.
    Onboard,
    /// One more browser for an owner who exists.
    Login,
    /// Another Vyre (the Mac) pairing with this one: a code a person types, not a link.
    Pair,
}

impl LinkKind {
    fn as_str(self) -> &'static str {
        match self {
            LinkKind::Onboard => "onboard",
            LinkKind::Login => "login",
            LinkKind::Pair => "pair",
        }
    }

    /// The app's path that redeems it.
    pub fn path(self) -> &'static str {
        match self {
            LinkKind::Onboard => "/onboard",
            LinkKind::Login | LinkKind::Pair => "/login",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("this link was already used; `vyre open` prints a new one")]
    Used,
    #[error("this link has expired; `vyre open` prints a new one")]
    Expired,
    #[error("this link is not valid; `vyre open` prints a new one")]
    Invalid,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A link as issued: the token is shown once.
#[derive(Debug, Clone)]
pub struct Issued {
    pub kind: LinkKind,
    pub token: String,
    pub expires_at: i64,
}

#[derive(Clone)]
pub struct Links {
    store: Store,
}

impl Links {
    pub fn new(store: Store) -> Links {
        Links { store }
    }

    pub async fn issue(&self, kind: LinkKind, ttl: Duration) -> Result<Issued, StoreError> {
        let token = crate::ids::random_base64url(32);
        self.issue_token(kind, &token, ttl).await
    }

    async fn issue_token(
        &self,
        kind: LinkKind,
        token: &str,
        ttl: Duration,
    ) -> Result<Issued, StoreError> {
        let token = token.to_string();
        let hash = hash_token(&token);
        let now = crate::now_ms();
        let expires_at = now + ttl.as_millis() as i64;
        self.store
            .write(move |tx| {
                // Spent and expired links are of no use to anyone: keep the table small.
                tx.conn().execute(
                    "DELETE FROM links WHERE expires_at < ?1 - 86400000",
                    [now],
                )?;
                tx.conn().execute(
                    "INSERT INTO links (token_hash, kind, created_at, expires_at) VALUES (?1, ?2, ?3, ?4)",
                    params![hash.to_vec(), kind.as_str(), now, expires_at],
                )?;
                Ok(())
            })
            .await?;
        Ok(Issued {
            kind,
            token,
            expires_at,
        })
    }

    /// A pairing code a person reads on one screen and types on another: twelve letters and
    /// digits of Crockford's base32 (no I, L, O, U), in groups of four; 60 random bits.
    pub async fn issue_code(&self, ttl: Duration) -> Result<Issued, StoreError> {
        const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
        let mut raw = [0u8; 12];
        getrandom::fill(&mut raw).expect("the OS random source");
        let code: String = raw
            .iter()
            .map(|b| ALPHABET[(*b & 31) as usize] as char)
            .collect();
        let mut issued = self.issue_token(LinkKind::Pair, &code, ttl).await?;
        issued.token = format!("{}-{}-{}", &code[0..4], &code[4..8], &code[8..12]);
        Ok(issued)
    }

    /// Spend a pairing code however it was typed (any case, with or without dashes or spaces).
    pub async fn redeem_code(&self, code: &str) -> Result<LinkKind, LinkError> {
        let normal: String = code
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_uppercase())
            .collect();
        self.redeem(&normal).await
    }

    /// Spend a link: once, before it expires.
    pub async fn redeem(&self, token: &str) -> Result<LinkKind, LinkError> {
        let hash = hash_token(token.trim());
        let now = crate::now_ms();
        let found = self
            .store
            .write(move |tx| {
                let row = tx
                    .conn()
                    .query_row(
                        "SELECT kind, expires_at, used_at FROM links WHERE token_hash = ?1",
                        [hash.to_vec()],
                        |r| {
                            Ok((
                                r.get::<_, String>(0)?,
                                r.get::<_, i64>(1)?,
                                r.get::<_, Option<i64>>(2)?,
                            ))
                        },
                    )
                    .optional()?;
                if let Some((_, expires_at, None)) = &row
                    && *expires_at >= now
                {
                    tx.conn().execute(
                        "UPDATE links SET used_at = ?1 WHERE token_hash = ?2",
                        params![now, hash.to_vec()],
                    )?;
                }
                Ok(row)
            })
            .await?;
        match found {
            None => Err(LinkError::Invalid),
            Some((_, _, Some(_))) => Err(LinkError::Used),
            Some((_, expires_at, None)) if expires_at < now => Err(LinkError::Expired),
            Some((kind, _, None)) => Ok(match kind.as_str() {
                "login" => LinkKind::Login,
                "pair" => LinkKind::Pair,
                _ => LinkKind::Onboard,
            }),
        }
    }
}
