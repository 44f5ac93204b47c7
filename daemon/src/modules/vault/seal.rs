//! Sealing: XChaCha20-Poly1305 (RustCrypto) with a random 192-bit nonce per seal, and the
//! item's identity as associated data, so a changed byte, a truncated blob or a blob moved to
//! another item is caught when it is opened. No home-made cryptography: this is the AEAD's own
//! construction, used as its documentation says.

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use zeroize::Zeroizing;

/// The format byte in front of every sealed blob.
const FORMAT: u8 = 1;
const NONCE: usize = 24;

/// A 256-bit key, wiped on drop.
#[derive(Clone)]
pub struct Key(Zeroizing<[u8; 32]>);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key([redacted])")
    }
}

impl Key {
    /// A new random key from the OS.
    pub fn generate() -> Result<Key, String> {
        let mut k = Zeroizing::new([0u8; 32]);
        getrandom::fill(k.as_mut()).map_err(|e| format!("no randomness: {e}"))?;
        Ok(Key(k))
    }
    pub fn from_bytes(bytes: &[u8]) -> Option<Key> {
        let mut k = Zeroizing::new([0u8; 32]);
        if bytes.len() != 32 {
            return None;
        }
        k.copy_from_slice(bytes);
        Some(Key(k))
    }
    pub fn bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

/// Seal `plain` under `key`, bound to `aad`.
pub fn seal(key: &Key, plain: &[u8], aad: &[u8]) -> Result<Vec<u8>, String> {
    let cipher = XChaCha20Poly1305::new(key.0.as_ref().into());
    let mut nonce = [0u8; NONCE];
    getrandom::fill(&mut nonce).map_err(|e| format!("no randomness: {e}"))?;
    let sealed = cipher
        .encrypt(XNonce::from_slice(&nonce), Payload { msg: plain, aad })
        .map_err(|_| "sealing failed".to_string())?;
    let mut out = Vec::with_capacity(1 + NONCE + sealed.len());
    out.push(FORMAT);
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&sealed);
    Ok(out)
}

/// Open a blob made by [`seal`] with the same key and associated data. `None` when anything
/// about it is wrong: another key, altered or truncated bytes, other associated data.
pub fn open(key: &Key, blob: &[u8], aad: &[u8]) -> Option<Zeroizing<Vec<u8>>> {
    if blob.len() < 1 + NONCE + 16 || blob[0] != FORMAT {
        return None;
    }
    let cipher = XChaCha20Poly1305::new(key.0.as_ref().into());
    cipher
        .decrypt(
            XNonce::from_slice(&blob[1..1 + NONCE]),
            Payload {
                msg: &blob[1 + NONCE..],
                aad,
            },
        )
        .ok()
        .map(Zeroizing::new)
}

/// Derive a key from a passphrase with argon2id (the RustCrypto `argon2` crate).
pub fn derive_from_passphrase(
    passphrase: &str,
    salt: &[u8],
    params: &KdfParams,
) -> Result<Key, String> {
    let params = argon2::Params::new(params.m_kib, params.t, params.p, Some(32))
        .map_err(|e| e.to_string())?;
    let argon = argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params);
    let mut out = Zeroizing::new([0u8; 32]);
    argon
        .hash_password_into(passphrase.as_bytes(), salt, out.as_mut())
        .map_err(|e| e.to_string())?;
    Ok(Key(out))
}

/// argon2id cost parameters, stored beside the wrapped keys.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KdfParams {
    pub m_kib: u32,
    pub t: u32,
    pub p: u32,
}

impl Default for KdfParams {
    /// OWASP's first recommended argon2id setting: 19 MiB, 2 passes, 1 lane.
    fn default() -> Self {
        KdfParams {
            m_kib: 19_456,
            t: 2,
            p: 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_every_kind_of_damage_is_caught() {
        let key = Key::generate().unwrap();
        let blob = seal(&key, b"the value", b"item-1").unwrap();
        assert_eq!(&open(&key, &blob, b"item-1").unwrap()[..], b"the value");
        assert!(
            open(&Key::generate().unwrap(), &blob, b"item-1").is_none(),
            "another key"
        );
        assert!(
            open(&key, &blob, b"item-2").is_none(),
            "moved to another item"
        );
        assert!(
            open(&key, &blob[..blob.len() - 1], b"item-1").is_none(),
            "truncated"
        );
        for i in 0..blob.len() {
            let mut bad = blob.clone();
            bad[i] ^= 0x01;
            assert!(open(&key, &bad, b"item-1").is_none(), "byte {i} flipped");
        }
        assert_ne!(
            seal(&key, b"the value", b"item-1").unwrap(),
            blob,
            "a fresh nonce each time"
        );
    }

    #[test]
    fn a_passphrase_derives_the_same_key_only_from_itself() {
        let params = KdfParams {
            m_kib: 64,
            t: 1,
            p: 1,
        };
        let a = derive_from_passphrase("correct horse", b"0123456789abcdef", &params).unwrap();
        let b = derive_from_passphrase("correct horse", b"0123456789abcdef", &params).unwrap();
        let c = derive_from_passphrase("wrong horse", b"0123456789abcdef", &params).unwrap();
        assert_eq!(a.bytes(), b.bytes());
        assert_ne!(a.bytes(), c.bytes());
    }
}
