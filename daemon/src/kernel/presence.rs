//! Presence assertions: how one Vyre tells another that a person present on it made a call.
//!
//! A paired Vyre (the Mac) calls the box with its device credential, and that credential alone
//! is not a person: a module or a session's request forwarded by the Mac must not gain a
//! person's powers on the box. When a person on the Mac makes the call (its terminal, its app),
//! the Mac adds an assertion signed with the Ed25519 key it made at pairing, whose public half
//! the box keeps with the Mac's device. The assertion names the device, the tool and the
//! SHA-256 of the exact input bytes, carries the time and a random nonce, and says which of the
//! Mac's callers it vouches for. The box accepts it once, within [`MAX_AGE`] of its own clock,
//! for that call only; the audit then names the Mac's device and that caller.
//!
//! Wire form, in the [`HEADER`] header: `base64url(claim JSON) "." base64url(signature)`, the
//! signature over the claim's bytes as sent.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The request header that carries an assertion.
pub const HEADER: &str = "x-vyre-presence";
/// How far an assertion's time may be from the checking side's clock, either way.
pub const MAX_AGE: Duration = Duration::from_secs(60);
/// The longest header accepted (a claim is a few hundred bytes).
const MAX_LEN: usize = 2048;

/// What an assertion says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// The signing Vyre's device id on the checking side.
    pub device: String,
    /// The tool called.
    pub tool: String,
    /// SHA-256 of the request body, hex.
    pub input: String,
    /// When it was made, ms since the epoch on the signing side's clock.
    pub at: i64,
    /// Random, used once.
    pub nonce: String,
    /// The caller on the signing side it vouches for (`socket:501`, `device:d1a2b3`).
    pub by: String,
}

/// Why an assertion was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PresenceError {
    #[error("the presence assertion is not in the form Vyre writes")]
    Malformed,
    #[error("the presence assertion's signature is not this device's")]
    BadSignature,
    #[error("this device has no key to check a presence assertion with; pair it again")]
    NoKey,
    #[error("the presence assertion is for another device")]
    WrongDevice,
    #[error("the presence assertion is for another call")]
    WrongCall,
    #[error("the presence assertion is too old or from the future (clocks more than 60 s apart?)")]
    Stale,
    #[error("the presence assertion was used already")]
    Replayed,
}

impl PresenceError {
    pub fn code(&self) -> &'static str {
        match self {
            PresenceError::Malformed => "presence_malformed",
            PresenceError::BadSignature => "presence_forged",
            PresenceError::NoKey => "presence_no_key",
            PresenceError::WrongDevice | PresenceError::WrongCall => "presence_mismatch",
            PresenceError::Stale => "presence_stale",
            PresenceError::Replayed => "presence_replayed",
        }
    }
}

/// SHA-256 of a call's body, as a claim carries it.
pub fn digest(body: &[u8]) -> String {
    Sha256::digest(body)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A caller's label as the signing side writes it (`socket:501`, `device:d1a2b3`): it goes into
/// this side's audit, so nothing else is taken.
fn plain_label(by: &str) -> bool {
    by.split_once(':').is_some_and(|(kind, id)| {
        !kind.is_empty()
            && kind.len() <= 16
            && kind.chars().all(|c| c.is_ascii_lowercase())
            && !id.is_empty()
            && id.len() <= 64
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    })
}

/// The signing half, held by the Vyre that makes assertions (in its vault between runs).
pub struct DeviceKey(SigningKey);

impl DeviceKey {
    /// A new key from the OS's random source.
    pub fn generate() -> Result<DeviceKey, getrandom::Error> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed)?;
        let key = DeviceKey(SigningKey::from_bytes(&seed));
        zeroize::Zeroize::zeroize(&mut seed);
        Ok(key)
    }

    /// The secret, base64url, to keep in the vault.
    pub fn secret(&self) -> String {
        B64.encode(self.0.to_bytes())
    }

    /// The key [`DeviceKey::secret`] wrote.
    pub fn from_secret(secret: &str) -> Option<DeviceKey> {
        let bytes = B64.decode(secret.trim()).ok()?;
        let seed: [u8; 32] = bytes.as_slice().try_into().ok()?;
        Some(DeviceKey(SigningKey::from_bytes(&seed)))
    }

    /// The public half, base64url, for the other side to keep.
    pub fn public(&self) -> String {
        B64.encode(self.0.verifying_key().to_bytes())
    }

    /// An assertion that `by`, a person here, makes this call of `tool` with `body`.
    pub fn assert(&self, device: &str, tool: &str, body: &[u8], by: &str) -> String {
        let claim = Claim {
            device: device.to_string(),
            tool: tool.to_string(),
            input: digest(body),
            at: crate::now_ms(),
            nonce: crate::kernel::ids::random_base64url(16),
            by: by.to_string(),
        };
        self.sign(&claim)
    }

    /// The wire form of `claim`, signed.
    pub fn sign(&self, claim: &Claim) -> String {
        let bytes = serde_json::to_vec(claim).expect("a claim serializes");
        let signature = self.0.sign(&bytes);
        format!(
            "{}.{}",
            B64.encode(&bytes),
            B64.encode(signature.to_bytes())
        )
    }
}

/// A public key as a device record keeps it: 32 bytes, from base64url.
pub fn parse_public(text: &str) -> Option<[u8; 32]> {
    let bytes = B64.decode(text.trim()).ok()?;
    let key: [u8; 32] = bytes.as_slice().try_into().ok()?;
    VerifyingKey::from_bytes(&key).ok()?;
    Some(key)
}

/// The checking side: what it has accepted, so no assertion counts twice.
#[derive(Default)]
pub struct Ledger {
    // std Mutex: held for a map lookup and insert, never across an await.
    seen: Mutex<HashMap<String, i64>>,
}

impl Ledger {
    /// Accept `header` as a person's presence for `device` (whose public key is `public`)
    /// calling `tool` with `body`, at most once; what it vouches for is returned.
    ///
    /// Nonces are remembered for twice [`MAX_AGE`], longer than an assertion is good for. An
    /// assertion made before this process started is refused, so a restart forgets nothing
    /// that could be replayed.
    pub fn accept(
        &self,
        header: &str,
        device: &str,
        public: Option<&[u8; 32]>,
        tool: &str,
        body: &[u8],
        started_at_ms: i64,
    ) -> Result<Claim, PresenceError> {
        let public = public.ok_or(PresenceError::NoKey)?;
        if header.len() > MAX_LEN {
            return Err(PresenceError::Malformed);
        }
        let (claim_b64, signature_b64) = header
            .trim()
            .split_once('.')
            .ok_or(PresenceError::Malformed)?;
        let claim_bytes = B64
            .decode(claim_b64)
            .map_err(|_| PresenceError::Malformed)?;
        let signature: [u8; 64] = B64
            .decode(signature_b64)
            .ok()
            .and_then(|s| s.as_slice().try_into().ok())
            .ok_or(PresenceError::Malformed)?;
        let key = VerifyingKey::from_bytes(public).map_err(|_| PresenceError::NoKey)?;
        key.verify(&claim_bytes, &Signature::from_bytes(&signature))
            .map_err(|_| PresenceError::BadSignature)?;
        let claim: Claim =
            serde_json::from_slice(&claim_bytes).map_err(|_| PresenceError::Malformed)?;
        if !plain_label(&claim.by) {
            return Err(PresenceError::Malformed);
        }
        if claim.device != device {
            return Err(PresenceError::WrongDevice);
        }
        if claim.tool != tool || claim.input != digest(body) {
            return Err(PresenceError::WrongCall);
        }
        let now = crate::now_ms();
        let window = MAX_AGE.as_millis() as i64;
        // One made before this process started could have been accepted by the one before.
        if (claim.at - now).abs() > window || claim.at < started_at_ms {
            return Err(PresenceError::Stale);
        }
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        seen.retain(|_, expires| *expires > now);
        if seen.contains_key(&claim.nonce) {
            return Err(PresenceError::Replayed);
        }
        if claim.nonce.len() < 16 || claim.nonce.len() > 64 {
            return Err(PresenceError::Malformed);
        }
        seen.insert(claim.nonce.clone(), now + 2 * window);
        Ok(claim)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> (DeviceKey, [u8; 32]) {
        let k = DeviceKey::generate().unwrap();
        let public = parse_public(&k.public()).unwrap();
        (k, public)
    }

    #[test]
    fn an_assertion_is_good_once_for_its_device_and_call() {
        let (k, public) = key();
        let ledger = Ledger::default();
        let started = crate::now_ms() - 120_000;
        let body = br#"{"ask":"a1","decision":"allow"}"#;
        let header = k.assert("d1", "threads.answer", body, "socket:501");
        let claim = ledger
            .accept(
                &header,
                "d1",
                Some(&public),
                "threads.answer",
                body,
                started,
            )
            .unwrap();
        assert_eq!(claim.by, "socket:501");
        assert_eq!(
            ledger.accept(
                &header,
                "d1",
                Some(&public),
                "threads.answer",
                body,
                started
            ),
            Err(PresenceError::Replayed)
        );
        let other = k.assert("d1", "threads.answer", body, "socket:501");
        for (device, tool, input, why) in [
            (
                "d2",
                "threads.answer",
                &body[..],
                PresenceError::WrongDevice,
            ),
            ("d1", "vault.reveal", &body[..], PresenceError::WrongCall),
            ("d1", "threads.answer", b"{}", PresenceError::WrongCall),
        ] {
            assert_eq!(
                ledger.accept(&other, device, Some(&public), tool, input, started),
                Err(why)
            );
        }
        assert_eq!(
            ledger.accept(&other, "d1", None, "threads.answer", body, started),
            Err(PresenceError::NoKey)
        );
    }

    #[test]
    fn a_forged_old_or_garbled_assertion_is_refused() {
        let (k, public) = key();
        let (stranger, _) = key();
        let ledger = Ledger::default();
        let started = crate::now_ms() - 120_000;
        let body = b"{}";
        let forged = stranger.assert("d1", "t.x", body, "socket:1");
        assert_eq!(
            ledger.accept(&forged, "d1", Some(&public), "t.x", body, started),
            Err(PresenceError::BadSignature)
        );
        // A claim changed after signing: the signature no longer holds.
        let good = k.assert("d1", "t.x", body, "socket:1");
        let (claim, sig) = good.split_once('.').unwrap();
        let mut c: Claim = serde_json::from_slice(&B64.decode(claim).unwrap()).unwrap();
        c.by = "device:other".into();
        let tampered = format!("{}.{sig}", B64.encode(serde_json::to_vec(&c).unwrap()));
        assert_eq!(
            ledger.accept(&tampered, "d1", Some(&public), "t.x", body, started),
            Err(PresenceError::BadSignature)
        );
        let mut old = c.clone();
        old.by = "socket:1".into();
        old.at = crate::now_ms() - 61_000;
        assert_eq!(
            ledger.accept(&k.sign(&old), "d1", Some(&public), "t.x", body, started),
            Err(PresenceError::Stale)
        );
        old.at = crate::now_ms() + 61_000;
        assert_eq!(
            ledger.accept(&k.sign(&old), "d1", Some(&public), "t.x", body, started),
            Err(PresenceError::Stale)
        );
        // Made before a restart: refused while the window it was made in is open.
        let just_started = crate::now_ms();
        old.at = just_started - 5_000;
        assert_eq!(
            ledger.accept(
                &k.sign(&old),
                "d1",
                Some(&public),
                "t.x",
                body,
                just_started
            ),
            Err(PresenceError::Stale)
        );
        for garbage in ["", ".", "abc", "a.b", &"x".repeat(5000)] {
            assert_eq!(
                ledger.accept(garbage, "d1", Some(&public), "t.x", body, started),
                Err(PresenceError::Malformed),
                "{garbage:?}"
            );
        }
    }

    #[test]
    fn a_key_survives_the_vault() {
        let (k, _) = key();
        let again = DeviceKey::from_secret(&k.secret()).unwrap();
        assert_eq!(again.public(), k.public());
        assert!(DeviceKey::from_secret("short").is_none());
        assert!(parse_public("not a key").is_none());
    }
}
