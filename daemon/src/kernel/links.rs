//! One-time links that give a browser its device: `vyre up` prints one for the onboarding while
//! there is no owner, `vyre open` one for another browser once there is. A link's token is
//! 32 random bytes, kept only as its SHA-256, used once, and valid for an hour unless made
//! shorter.

use std::time::Duration;

use rusqlite::{OptionalExtension, params};

use crate::kernel::device_tokens::hash_token;
use crate::kernel::store::{Store, StoreError, WriteTx};

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

    fn parse(text: &str) -> LinkKind {
        match text {
            "login" => LinkKind::Login,
            "pair" => LinkKind::Pair,
            _ => LinkKind::Onboard,
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
    /// A real link or code, offered where another kind is spent (a pairing code at a browser's
    /// sign-in, a sign-in link at `/v1/pair`). It is left unspent.
    #[error("this is a {0:?} link, not one that can be spent here")]
    WrongKind(LinkKind),
    /// An onboarding link offered once an owner exists: the onboarding it was made for is over.
    #[error(
        "this onboarding link ended when the onboarding was finished; `vyre open` prints a sign-in link"
    )]
    OnboardingOver,
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
        let token = crate::kernel::ids::random_base64url(32);
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

    /// Spend a link or a code, once, before it expires, if it is of a kind `accept` takes.
    ///
    /// The token is looked up as given and as a pairing code is typed (any case, with or
    /// without dashes or spaces), so that a code offered as a link, or a link as a code, is
    /// recognised and refused as what it is ([`LinkError::WrongKind`]) rather than spent. An
    /// onboarding link is refused once `owner_exists` says the onboarding is over. A refused
    /// token is never spent; the check and the spending happen in one write transaction.
    pub async fn redeem(
        &self,
        token: &str,
        accept: &'static [LinkKind],
        owner_exists: impl Fn() -> bool + Send + 'static,
    ) -> Result<LinkKind, LinkError> {
        let candidates = candidates(token);
        let now = crate::now_ms();
        self.store
            .write(move |tx| {
                let mut found = None;
                for hash in &candidates {
                    found = tx
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
                        .optional()?
                        .map(|row| (*hash, row));
                    if found.is_some() {
                        break;
                    }
                }
                let Some((hash, (kind, expires_at, used_at))) = found else {
                    return Ok(Err(LinkError::Invalid));
                };
                let kind = LinkKind::parse(&kind);
                if !accept.contains(&kind) {
                    return Ok(Err(LinkError::WrongKind(kind)));
                }
                if kind == LinkKind::Onboard && owner_exists() {
                    return Ok(Err(LinkError::OnboardingOver));
                }
                if used_at.is_some() {
                    return Ok(Err(LinkError::Used));
                }
                if expires_at < now {
                    return Ok(Err(LinkError::Expired));
                }
                tx.conn().execute(
                    "UPDATE links SET used_at = ?1 WHERE token_hash = ?2",
                    params![now, hash.to_vec()],
                )?;
                Ok(Ok(kind))
            })
            .await?
    }

    /// End the onboarding's links: every unspent one is spent now, in the transaction that
    /// makes the owner (so none outlives the onboarding).
    pub fn end_onboarding_in(tx: &WriteTx<'_>, now: i64) -> Result<usize, StoreError> {
        Ok(tx.conn().execute(
            "UPDATE links SET used_at = ?1 WHERE kind = 'onboard' AND used_at IS NULL",
            [now],
        )?)
    }
}

/// The hashes a token may be stored under: as given (a link), and as a pairing code is kept
/// (letters and digits only, upper case).
fn candidates(token: &str) -> Vec<[u8; 32]> {
    let raw = token.trim();
    let code: String = raw
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_uppercase())
        .collect();
    let mut out = vec![hash_token(raw)];
    if !code.is_empty() && code != raw {
        out.push(hash_token(&code));
    }
    out
}
