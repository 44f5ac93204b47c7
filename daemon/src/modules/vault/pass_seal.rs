//! Sealed passes' encryption (ADR 0036): the receiving Vyre makes a one-use X25519 key and
//! gives its public half (`vyre-key-1.…`); the giving Vyre seals the item to it with a key of
//! its own made for that one seal (ECDH, then HKDF-SHA256, then the vault's own
//! XChaCha20-Poly1305 seal), and gives back `vyre-sealed-1.…`; the receiver opens it with the
//! private half, which is then gone. ring's X25519 and HKDF, no home-made cryptography. The
//! private halves live in memory only, for [`KEY_TTL`]: a key a person asked for and did not
//! use goes with the hour or a restart, and a sealed pass made for it can no longer be opened.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use ring::agreement::{self, EphemeralPrivateKey, UnparsedPublicKey, X25519};
use ring::hkdf;
use ring::rand::SystemRandom;
use zeroize::Zeroizing;

use super::seal::{self, Key};

pub const KEY_PREFIX: &str = "vyre-key-1.";
pub const SEALED_PREFIX: &str = "vyre-sealed-1.";
/// How long a key waits for its sealed pass.
pub const KEY_TTL: Duration = Duration::from_secs(3600);
/// The most keys waiting at once.
const MAX_KEYS: usize = 32;
const ID: usize = 8;
const PUBLIC: usize = 32;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SealError {
    #[error("{0}")]
    Malformed(String),
    #[error(
        "this sealed pass was made for a key this Vyre no longer has (a key is good for one pass, for an hour, until vyred restarts); ask for it again with a new `vyre vault pass key`"
    )]
    UnknownKey,
    #[error("this sealed pass does not open: it was altered, or made for another key")]
    DoesNotOpen,
    #[error("{0}")]
    Crypto(String),
}

/// A key waiting for its sealed pass: its private half, its public half, when it was made.
type Waiting = (EphemeralPrivateKey, [u8; PUBLIC], Instant);

/// The keys this Vyre is waiting for sealed passes with (one set, in the tools' environment).
#[derive(Default)]
pub struct Keys {
    waiting: Mutex<HashMap<[u8; ID], Waiting>>,
}

impl Keys {
    /// A new key: its public half as `vyre-key-1.…`, to give to the person who will share.
    pub fn make(&self) -> Result<String, SealError> {
        let rng = SystemRandom::new();
        let private = EphemeralPrivateKey::generate(&X25519, &rng)
            .map_err(|_| SealError::Crypto("no randomness for a key".into()))?;
        let public = private
            .compute_public_key()
            .map_err(|_| SealError::Crypto("the key's public half".into()))?;
        let public: [u8; PUBLIC] = public
            .as_ref()
            .try_into()
            .map_err(|_| SealError::Crypto("the key's public half".into()))?;
        let mut id = [0u8; ID];
        getrandom::fill(&mut id).map_err(|e| SealError::Crypto(format!("no randomness: {e}")))?;
        let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        waiting.retain(|_, (_, _, at)| now.duration_since(*at) < KEY_TTL);
        if waiting.len() >= MAX_KEYS
            && let Some(oldest) = waiting
                .iter()
                .min_by_key(|(_, (_, _, at))| *at)
                .map(|(k, _)| *k)
        {
            waiting.remove(&oldest);
        }
        waiting.insert(id, (private, public, now));
        let mut code = id.to_vec();
        code.extend_from_slice(&public);
        Ok(format!("{KEY_PREFIX}{}", B64.encode(code)))
    }

    /// Open a sealed pass made for one of this Vyre's keys; the key is used up either way
    /// once it was found (a second try of the same pass has nothing to open it with).
    pub fn open(&self, sealed: &str) -> Result<Zeroizing<Vec<u8>>, SealError> {
        let bytes = decode(sealed, SEALED_PREFIX, "a sealed pass")?;
        if bytes.len() < ID + PUBLIC + 1 {
            return Err(SealError::Malformed(
                "a sealed pass that is too short".into(),
            ));
        }
        let id: [u8; ID] = bytes[..ID].try_into().expect("length checked");
        let (private, public, at) = self
            .waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id)
            .ok_or(SealError::UnknownKey)?;
        if at.elapsed() >= KEY_TTL {
            return Err(SealError::UnknownKey);
        }
        let theirs = &bytes[ID..ID + PUBLIC];
        let key = agreement::agree_ephemeral(
            private,
            &UnparsedPublicKey::new(&X25519, theirs),
            |shared| derive(shared, theirs, &public),
        )
        .map_err(|_| SealError::DoesNotOpen)??;
        seal::open(&key, &bytes[ID + PUBLIC..], &aad(&id)).ok_or(SealError::DoesNotOpen)
    }
}

/// Seal `plain` for the key `key_code` (`vyre-key-1.…`) another Vyre gave.
pub fn seal_for(key_code: &str, plain: &[u8]) -> Result<String, SealError> {
    let code = decode(key_code, KEY_PREFIX, "a pass key")?;
    if code.len() != ID + PUBLIC {
        return Err(SealError::Malformed(format!(
            "a pass key is {KEY_PREFIX} and 40 bytes; this one has {}",
            code.len()
        )));
    }
    let (id, theirs) = code.split_at(ID);
    let rng = SystemRandom::new();
    let mine = EphemeralPrivateKey::generate(&X25519, &rng)
        .map_err(|_| SealError::Crypto("no randomness for a key".into()))?;
    let my_public = mine
        .compute_public_key()
        .map_err(|_| SealError::Crypto("the key's public half".into()))?;
    let my_public = my_public.as_ref().to_vec();
    let key = agreement::agree_ephemeral(mine, &UnparsedPublicKey::new(&X25519, theirs), |s| {
        derive(s, &my_public, theirs)
    })
    .map_err(|_| SealError::Malformed("the pass key is not an X25519 public key".into()))??;
    let sealed = seal::seal(&key, plain, &aad(id)).map_err(SealError::Crypto)?;
    let mut out = id.to_vec();
    out.extend_from_slice(&my_public);
    out.extend_from_slice(&sealed);
    Ok(format!("{SEALED_PREFIX}{}", B64.encode(out)))
}

fn decode(code: &str, prefix: &str, what: &str) -> Result<Vec<u8>, SealError> {
    let body = code
        .trim()
        .strip_prefix(prefix)
        .ok_or_else(|| SealError::Malformed(format!("{what} starts with {prefix}")))?;
    B64.decode(body.trim_end_matches('='))
        .map_err(|_| SealError::Malformed(format!("{what} is not base64url after {prefix}")))
}

fn aad(id: &[u8]) -> Vec<u8> {
    let mut a = b"vyre-sealed-pass-v1\0".to_vec();
    a.extend_from_slice(id);
    a
}

struct Len32;
impl hkdf::KeyType for Len32 {
    fn len(&self) -> usize {
        32
    }
}

/// The seal's key from the shared secret, bound to both public halves (the sealer's first).
fn derive(shared: &[u8], sealer: &[u8], receiver: &[u8]) -> Result<Key, SealError> {
    let mut salt = sealer.to_vec();
    salt.extend_from_slice(receiver);
    let prk = hkdf::Salt::new(hkdf::HKDF_SHA256, &salt).extract(shared);
    let mut out = Zeroizing::new([0u8; 32]);
    prk.expand(&[b"vyre-sealed-pass-v1"], Len32)
        .and_then(|okm| okm.fill(out.as_mut()))
        .map_err(|_| SealError::Crypto("deriving the seal's key".into()))?;
    Key::from_bytes(out.as_ref()).ok_or_else(|| SealError::Crypto("the seal's key".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_pass_opens_once_with_the_key_it_was_made_for() {
        let keys = Keys::default();
        let code = keys.make().unwrap();
        assert!(code.starts_with(KEY_PREFIX));
        let sealed = seal_for(&code, b"the value").unwrap();
        assert!(sealed.starts_with(SEALED_PREFIX));
        assert!(!sealed.contains("the value"));
        assert_eq!(&keys.open(&sealed).unwrap()[..], b"the value");
        assert_eq!(
            keys.open(&sealed).unwrap_err(),
            SealError::UnknownKey,
            "once"
        );
    }

    #[test]
    fn another_vyres_key_an_altered_pass_and_garbage_do_not_open() {
        let (mine, theirs) = (Keys::default(), Keys::default());
        let sealed = seal_for(&theirs.make().unwrap(), b"x").unwrap();
        assert_eq!(mine.open(&sealed).unwrap_err(), SealError::UnknownKey);

        let code = mine.make().unwrap();
        let sealed = seal_for(&code, b"value").unwrap();
        let mut bytes = B64.decode(&sealed[SEALED_PREFIX.len()..]).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        let altered = format!("{SEALED_PREFIX}{}", B64.encode(bytes));
        assert_eq!(mine.open(&altered).unwrap_err(), SealError::DoesNotOpen);

        for bad in [
            "",
            "vyre-key-1.",
            "vyre-key-1.!!",
            "vyre-key-1.AAAA",
            "nope",
        ] {
            assert!(
                matches!(seal_for(bad, b"x"), Err(SealError::Malformed(_))),
                "{bad}"
            );
        }
        for bad in ["", "vyre-sealed-1.AAAA", "vyre-sealed-1.%%"] {
            assert!(
                matches!(mine.open(bad), Err(SealError::Malformed(_))),
                "{bad}"
            );
        }
    }
}
