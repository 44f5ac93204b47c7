//! This vyred's VAPID identity (RFC 8292): the P-256 key a push service knows its messages by.
//! A browser subscribes with the public half (`push.key`); each message then carries a token
//! signed with the private half, which the push service checks before it delivers. The key is
//! made once and kept in `VYRE_HOME/push/vapid.p8` (PKCS#8, 0600): a new key would orphan every
//! subscription.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::json;

/// How long a token is good for. RFC 8292 allows at most 24 hours; push services refuse more.
pub const TOKEN_LIFE_S: i64 = 12 * 3600;

pub struct Vapid {
    pair: EcdsaKeyPair,
    rng: SystemRandom,
}

impl Vapid {
    /// The key in `path`: read, or made and written (0600) the first time.
    pub fn load_or_create(path: &Path) -> Result<Vapid, String> {
        let rng = SystemRandom::new();
        let pkcs8 = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
                    .map_err(|_| "cannot make a VAPID key".to_string())?;
                if let Some(dir) = path.parent() {
                    crate::kernel::paths::private_dir(dir)
                        .map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
                }
                crate::kernel::nofollow::write_atomic(path, doc.as_ref(), 0o600)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                doc.as_ref().to_vec()
            }
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &pkcs8, &rng)
            .map_err(|e| format!("{} does not hold a VAPID key: {e}", path.display()))?;
        Ok(Vapid { pair, rng })
    }

    /// The public key as browsers take it for `applicationServerKey`: the uncompressed point,
    /// base64url without padding.
    pub fn public_key(&self) -> String {
        B64.encode(self.pair.public_key().as_ref())
    }

    /// The `Authorization` header for a message to `endpoint`: `vapid t=<JWT>, k=<key>`. The
    /// token's audience is the endpoint's origin, `contact` its subject (a `mailto:` or
    /// `https:` address the push service may write to about this sender).
    pub fn authorization(
        &self,
        endpoint: &str,
        contact: &str,
        now_s: i64,
    ) -> Result<String, String> {
        let audience = origin(endpoint).ok_or_else(|| format!("{endpoint} is not a URL"))?;
        let header = B64.encode(br#"{"typ":"JWT","alg":"ES256"}"#);
        let claims = B64.encode(
            json!({ "aud": audience, "exp": now_s + TOKEN_LIFE_S, "sub": contact }).to_string(),
        );
        let signed = format!("{header}.{claims}");
        let signature = self
            .pair
            .sign(&self.rng, signed.as_bytes())
            .map_err(|_| "cannot sign the VAPID token".to_string())?;
        Ok(format!(
            "vapid t={signed}.{}, k={}",
            B64.encode(signature.as_ref()),
            self.public_key()
        ))
    }
}

/// `scheme://host[:port]` of a URL, lowercased, or None when it is not an http(s) URL.
pub fn origin(url: &str) -> Option<String> {
    let uri: hyper::Uri = url.parse().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    if scheme != "https" && scheme != "http" {
        return None;
    }
    let authority = uri.authority()?;
    if authority.as_str().contains('@') {
        return None;
    }
    let host = authority.host().to_ascii_lowercase();
    Some(match authority.port_u16() {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("vyre-vapid-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn the_key_is_made_once_kept_private_and_signs_a_token_its_public_half_checks() {
        let path = scratch("made").join("push/vapid.p8");
        let made = Vapid::load_or_create(&path).unwrap();
        let again = Vapid::load_or_create(&path).unwrap();
        assert_eq!(made.public_key(), again.public_key(), "kept, not remade");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let public = B64.decode(made.public_key()).unwrap();
        assert_eq!(
            (public.len(), public[0]),
            (65, 4),
            "an uncompressed P-256 point"
        );

        let header = made
            .authorization(
                "https://fcm.googleapis.com/fcm/send/abc",
                "https://vyre.run",
                1000,
            )
            .unwrap();
        let (t, k) = header
            .strip_prefix("vapid t=")
            .and_then(|r| r.split_once(", k="))
            .unwrap();
        assert_eq!(k, made.public_key());
        let (signed, signature) = t.rsplit_once('.').unwrap();
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &public)
            .verify(signed.as_bytes(), &B64.decode(signature).unwrap())
            .expect("the token verifies with the key it names");
        let claims: serde_json::Value =
            serde_json::from_slice(&B64.decode(signed.split('.').nth(1).unwrap()).unwrap())
                .unwrap();
        assert_eq!(claims["aud"], "https://fcm.googleapis.com");
        assert_eq!(claims["sub"], "https://vyre.run");
        assert_eq!(claims["exp"], 1000 + TOKEN_LIFE_S);
    }

    #[test]
    fn a_file_that_is_not_a_key_is_said_not_replaced() {
        let path = scratch("bad").join("vapid.p8");
        std::fs::write(&path, b"not a key").unwrap();
        let err = Vapid::load_or_create(&path).err().unwrap();
        assert!(err.contains("does not hold a VAPID key"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"not a key");
    }

    #[test]
    fn origins_are_scheme_host_and_port_only() {
        assert_eq!(
            origin("https://Web.Push.Apple.com/abc?x=1").as_deref(),
            Some("https://web.push.apple.com")
        );
        assert_eq!(
            origin("http://127.0.0.1:9000/push/send/1").as_deref(),
            Some("http://127.0.0.1:9000")
        );
        assert_eq!(origin("ftp://x/"), None);
        assert_eq!(origin("https://user@evil.example/"), None);
        assert_eq!(origin("not a url"), None);
    }
}
