//! Presence (floor rule 8, ADR 0035): a value reaches a screen only for a person who just proved
//! they are at their device, for that one value.
//!
//! Two proofs, checked here:
//! - a **passkey** (WebAuthn, in the browser; Touch ID, Windows Hello, a security key, a phone):
//!   vyred issues a challenge bound to the item, the field and the caller, used once within
//!   [`CHALLENGE_TTL`]; the authenticator signs it only after verifying the person (the UV flag),
//!   and vyred checks the signature with the public key kept at registration;
//! - the **vault passphrase** (the terminal, or a browser without a passkey), checked by
//!   unwrapping the key file with it (see `core::keys`), with failures counted: after
//!   [`MAX_FAILURES`] in a row, no passphrase is tried for [`LOCKOUT`].
//!
//! What is checked of an assertion (WebAuthn level 2, 7.2, the parts that apply):
//! `clientDataJSON` has type `webauthn.get`, our challenge and an origin whose host is the
//! passkey's relying party (or under it); `authenticatorData` carries the SHA-256 of that
//! relying party's id and the UP and UV flags; the signature is over `authenticatorData ||
//! SHA-256(clientDataJSON)`; the challenge taken; the signature counter, when the authenticator
//! keeps one, went up.
//! Keys are ES256 (P-256) or EdDSA (Ed25519), which are what vyred asks for at registration.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// How long a challenge may be answered.
pub const CHALLENGE_TTL: Duration = Duration::from_secs(120);
/// Wrong passphrases in a row before they are refused for a while.
pub const MAX_FAILURES: u32 = 5;
/// How long passphrases are refused after [`MAX_FAILURES`].
pub const LOCKOUT: Duration = Duration::from_secs(60);
/// At most this many challenges wait at once; the oldest goes first.
const MAX_PENDING: usize = 64;

/// COSE algorithm ids vyred accepts for a passkey.
pub const ES256: i64 = -7;
pub const EDDSA: i64 = -8;

/// Why a presence proof was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PresenceError {
    #[error("a value is shown only after presence: give the vault passphrase or use a passkey")]
    Required,
    #[error(
        "this vault has no way to prove presence yet: set a vault passphrase (`vyre vault passphrase`) or add a passkey in the app's Vault screen"
    )]
    NoMethod,
    #[error("the presence challenge is unknown, used already or expired; ask for a new one")]
    UnknownChallenge,
    #[error("the presence challenge was made for another {0}")]
    Mismatch(&'static str),
    #[error("the passkey's answer is not valid: {0}")]
    Invalid(String),
    #[error("that passkey is not one of this vault's")]
    UnknownPasskey,
    #[error("the passkey's signature does not check out")]
    BadSignature,
    #[error("the authenticator did not verify the person (no user verification)")]
    NotVerified,
    #[error("the passkey's counter went back: it may have been copied. Remove it and add it again")]
    CounterWentBack,
    #[error("too many wrong passphrases; try again in {0} s")]
    TooManyAttempts(u64),
}

impl PresenceError {
    pub fn code(&self) -> &'static str {
        match self {
            PresenceError::Required => "presence_required",
            PresenceError::NoMethod => "presence_unavailable",
            PresenceError::UnknownChallenge => "presence_challenge_unknown",
            PresenceError::Mismatch(_) => "presence_mismatch",
            PresenceError::Invalid(_) => "presence_invalid",
            PresenceError::UnknownPasskey => "passkey_unknown",
            PresenceError::BadSignature => "presence_forged",
            PresenceError::NotVerified => "presence_not_verified",
            PresenceError::CounterWentBack => "passkey_cloned",
            PresenceError::TooManyAttempts(_) => "too_many_attempts",
        }
    }
}

/// What a challenge is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Purpose {
    /// Adding a passkey.
    Register,
    /// Showing one field of one item.
    Reveal { item: String, field: String },
}

struct Pending {
    purpose: Purpose,
    /// The caller it was issued to (`Caller::label`).
    caller: String,
    until: Instant,
}

#[derive(Default)]
struct State {
    pending: HashMap<String, Pending>,
    failures: u32,
    locked_until: Option<Instant>,
}

/// Challenges waiting for an answer and the passphrase failure count (shared behind an `Arc`).
#[derive(Default)]
pub struct Presence {
    state: Mutex<State>,
}

impl Presence {
    /// A new challenge (base64url of 32 random bytes) for `purpose`, answerable once by `caller`.
    pub fn challenge(&self, purpose: Purpose, caller: &str) -> Result<String, String> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| format!("no randomness: {e}"))?;
        let id = B64.encode(bytes);
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        s.pending.retain(|_, p| p.until > now);
        if s.pending.len() >= MAX_PENDING
            && let Some(oldest) = s
                .pending
                .iter()
                .min_by_key(|(_, p)| p.until)
                .map(|(k, _)| k.clone())
        {
            s.pending.remove(&oldest);
        }
        s.pending.insert(
            id.clone(),
            Pending {
                purpose,
                caller: caller.to_string(),
                until: now + CHALLENGE_TTL,
            },
        );
        Ok(id)
    }

    /// Take the challenge `id` (it cannot be answered twice), checking it was made for
    /// `purpose` and `caller`.
    pub fn take(&self, id: &str, purpose: &Purpose, caller: &str) -> Result<(), PresenceError> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let p = s
            .pending
            .remove(id)
            .filter(|p| p.until > Instant::now())
            .ok_or(PresenceError::UnknownChallenge)?;
        if p.caller != caller {
            return Err(PresenceError::Mismatch("caller"));
        }
        match (&p.purpose, purpose) {
            (Purpose::Register, Purpose::Register) => Ok(()),
            (Purpose::Reveal { item: a, field: f }, Purpose::Reveal { item: b, field: g }) => {
                if a != b {
                    Err(PresenceError::Mismatch("item"))
                } else if f != g {
                    Err(PresenceError::Mismatch("field"))
                } else {
                    Ok(())
                }
            }
            _ => Err(PresenceError::Mismatch("purpose")),
        }
    }

    /// Refused while locked out after too many wrong passphrases.
    pub fn may_try_passphrase(&self) -> Result<(), PresenceError> {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match s.locked_until {
            Some(until) if until > Instant::now() => Err(PresenceError::TooManyAttempts(
                (until - Instant::now()).as_secs() + 1,
            )),
            _ => Ok(()),
        }
    }

    /// Count a passphrase's outcome.
    pub fn passphrase_tried(&self, right: bool) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if right {
            s.failures = 0;
            s.locked_until = None;
            return;
        }
        s.failures += 1;
        if s.failures >= MAX_FAILURES {
            s.failures = 0;
            s.locked_until = Some(Instant::now() + LOCKOUT);
        }
    }
}

/// What the browser's `clientDataJSON` says (the fields checked).
#[derive(Deserialize)]
struct ClientData {
    #[serde(rename = "type")]
    kind: String,
    challenge: String,
    origin: String,
}

/// base64url (with or without padding) to bytes.
pub fn b64(what: &str, s: &str) -> Result<Vec<u8>, PresenceError> {
    B64.decode(s.trim_end_matches('='))
        .map_err(|_| PresenceError::Invalid(format!("{what} is not base64url")))
}

/// The host of an origin (`https://name.vyre.run`, `http://localhost:7878`).
fn origin_host(origin: &str) -> Option<&str> {
    let rest = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))?;
    let host = rest.split('/').next()?;
    let host = if host.starts_with('[') {
        host.split_inclusive(']').next()?
    } else {
        host.rsplit_once(':').map_or(host, |(h, _)| h)
    };
    (!host.is_empty()).then_some(host)
}

/// Whether an origin's host is the relying party `rp_id` or under it.
fn origin_matches(origin: &str, rp_id: &str) -> bool {
    origin_host(origin).is_some_and(|h| {
        h.eq_ignore_ascii_case(rp_id)
            || h.to_ascii_lowercase()
                .ends_with(&format!(".{}", rp_id.to_ascii_lowercase()))
    })
}

/// Check `clientDataJSON` for a ceremony of `kind`; its challenge and origin.
fn client_data(raw: &[u8], kind: &str) -> Result<(String, String), PresenceError> {
    let cd: ClientData = serde_json::from_slice(raw)
        .map_err(|_| PresenceError::Invalid("clientDataJSON is not the browser's JSON".into()))?;
    if cd.kind != kind {
        return Err(PresenceError::Invalid(format!(
            "clientDataJSON is for {:?}, not {kind}",
            cd.kind
        )));
    }
    Ok((cd.challenge, cd.origin))
}

/// The flags of authenticator data after checking its relying party hash.
fn auth_data_flags(auth_data: &[u8], rp_id: &str) -> Result<(u8, u32), PresenceError> {
    if auth_data.len() < 37 {
        return Err(PresenceError::Invalid(
            "authenticatorData is too short".into(),
        ));
    }
    if auth_data[..32] != Sha256::digest(rp_id.as_bytes())[..] {
        return Err(PresenceError::Invalid(
            "authenticatorData is for another site".into(),
        ));
    }
    let flags = auth_data[32];
    if flags & 0x01 == 0 || flags & 0x04 == 0 {
        return Err(PresenceError::NotVerified);
    }
    let count = u32::from_be_bytes([auth_data[33], auth_data[34], auth_data[35], auth_data[36]]);
    Ok((flags, count))
}

/// A registration as the browser gives it (`navigator.credentials.create`, the response's
/// `getPublicKey()` and `getAuthenticatorData()`), after the challenge was taken.
pub struct Registration {
    /// The relying party id the passkey is for (its origin's host).
    pub rp_id: String,
    pub alg: i64,
    pub public_key: Vec<u8>,
    pub sign_count: u32,
}

/// Check a registration; returns the challenge it answers (to be taken by the caller) and what
/// to keep.
pub fn check_registration(
    client_data_json: &[u8],
    authenticator_data: &[u8],
    credential_id: &[u8],
    public_key: &[u8],
    alg: i64,
) -> Result<(String, Registration), PresenceError> {
    let (challenge, origin) = client_data(client_data_json, "webauthn.create")?;
    let rp_id = origin_host(&origin)
        .ok_or_else(|| PresenceError::Invalid(format!("the origin {origin:?} has no host")))?
        .to_ascii_lowercase();
    let (flags, sign_count) = auth_data_flags(authenticator_data, &rp_id)?;
    // Attested credential data (flag AT): AAGUID (16), id length (2), the id.
    if flags & 0x40 == 0 || authenticator_data.len() < 55 {
        return Err(PresenceError::Invalid(
            "authenticatorData carries no credential".into(),
        ));
    }
    let len = u16::from_be_bytes([authenticator_data[53], authenticator_data[54]]) as usize;
    if authenticator_data.get(55..55 + len) != Some(credential_id) {
        return Err(PresenceError::Invalid(
            "the credential id is not the one the authenticator made".into(),
        ));
    }
    verifier(alg, public_key)?;
    Ok((
        challenge,
        Registration {
            rp_id,
            alg,
            public_key: public_key.to_vec(),
            sign_count,
        },
    ))
}

/// A kept passkey, as an assertion is checked against it.
pub struct Passkey<'a> {
    pub rp_id: &'a str,
    pub alg: i64,
    pub public_key: &'a [u8],
    pub sign_count: u32,
}

/// Check an assertion (`navigator.credentials.get`) against a kept passkey; returns the
/// challenge it answers (to be taken by the caller) and the authenticator's counter (for
/// [`check_counter`]).
pub fn check_assertion(
    key: &Passkey<'_>,
    client_data_json: &[u8],
    authenticator_data: &[u8],
    signature: &[u8],
) -> Result<(String, u32), PresenceError> {
    let (challenge, origin) = client_data(client_data_json, "webauthn.get")?;
    if !origin_matches(&origin, key.rp_id) {
        return Err(PresenceError::Invalid(format!(
            "the origin {origin:?} is not the passkey's site {:?}",
            key.rp_id
        )));
    }
    let (_, count) = auth_data_flags(authenticator_data, key.rp_id)?;
    let mut signed = authenticator_data.to_vec();
    signed.extend_from_slice(&Sha256::digest(client_data_json));
    verifier(key.alg, key.public_key)?.verify(&signed, signature)?;
    Ok((challenge, count))
}

/// After the challenge was taken (a replay is said as one): the authenticator's counter must
/// go up, unless it keeps none (0 on both sides: passkeys that sync).
pub fn check_counter(kept: u32, now: u32) -> Result<(), PresenceError> {
    if (now != 0 || kept != 0) && now <= kept {
        return Err(PresenceError::CounterWentBack);
    }
    Ok(())
}

enum Verifier {
    Es256(p256::ecdsa::VerifyingKey),
    EdDsa(ed25519_dalek::VerifyingKey),
}

/// The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410), before the 32-byte key.
const ED25519_SPKI: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

fn verifier(alg: i64, spki: &[u8]) -> Result<Verifier, PresenceError> {
    let bad = || PresenceError::Invalid("the public key is not a key of its algorithm".into());
    match alg {
        ES256 => {
            use p256::pkcs8::DecodePublicKey;
            p256::ecdsa::VerifyingKey::from_public_key_der(spki)
                .map(Verifier::Es256)
                .map_err(|_| bad())
        }
        EDDSA => {
            let raw = spki
                .strip_prefix(&ED25519_SPKI[..])
                .and_then(|k| <[u8; 32]>::try_from(k).ok())
                .ok_or_else(bad)?;
            ed25519_dalek::VerifyingKey::from_bytes(&raw)
                .map(Verifier::EdDsa)
                .map_err(|_| bad())
        }
        other => Err(PresenceError::Invalid(format!(
            "algorithm {other} is not one vyred takes (ES256 -7, EdDSA -8)"
        ))),
    }
}

impl Verifier {
    fn verify(&self, message: &[u8], signature: &[u8]) -> Result<(), PresenceError> {
        let ok = match self {
            Verifier::Es256(key) => {
                use p256::ecdsa::signature::Verifier as _;
                p256::ecdsa::Signature::from_der(signature)
                    .is_ok_and(|sig| key.verify(message, &sig).is_ok())
            }
            Verifier::EdDsa(key) => ed25519_dalek::Signature::from_slice(signature)
                .is_ok_and(|sig| key.verify_strict(message, &sig).is_ok()),
        };
        ok.then_some(()).ok_or(PresenceError::BadSignature)
    }
}

#[doc(hidden)]
#[path = "presence_testing.rs"]
pub mod testing;

#[cfg(test)]
#[path = "presence_tests.rs"]
mod tests;
