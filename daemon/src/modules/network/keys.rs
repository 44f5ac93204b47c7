//! WireGuard keys: the box's own (a file of its own, 0600, made once) and each device's, made
//! when the device joins. Keys travel as WireGuard writes them: 32 bytes in standard base64.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use boringtun::x25519::{PublicKey, StaticSecret};

/// A Curve25519 key pair.
#[derive(Clone)]
pub struct KeyPair {
    pub secret: StaticSecret,
    pub public: PublicKey,
}

impl KeyPair {
    /// A new pair from the OS random source.
    pub fn generate() -> KeyPair {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).expect("the OS random source");
        let secret = StaticSecret::from(bytes);
        zeroize::Zeroize::zeroize(&mut bytes);
        let public = PublicKey::from(&secret);
        KeyPair { secret, public }
    }

    /// The secret as WireGuard writes it (the phone's configuration carries it, once).
    pub fn secret_base64(&self) -> String {
        STANDARD.encode(self.secret.to_bytes())
    }

    pub fn public_base64(&self) -> String {
        encode(self.public.as_bytes())
    }

    /// The box's pair, kept in `path` (0600): read, or made and written the first time.
    pub fn load_or_create(path: &Path) -> Result<KeyPair, String> {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let bytes = decode(text.trim())
                    .ok_or_else(|| format!("{} does not hold a WireGuard key", path.display()))?;
                let secret = StaticSecret::from(bytes);
                let public = PublicKey::from(&secret);
                Ok(KeyPair { secret, public })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let pair = KeyPair::generate();
                if let Some(dir) = path.parent() {
                    crate::kernel::paths::private_dir(dir)
                        .map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
                }
                let text = format!("{}\n", pair.secret_base64());
                crate::kernel::nofollow::write_atomic(path, text.as_bytes(), 0o600)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                Ok(pair)
            }
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }
}

pub fn encode(key: &[u8; 32]) -> String {
    STANDARD.encode(key)
}

/// A key in WireGuard's base64, or nothing when it is not one.
pub fn decode(text: &str) -> Option<[u8; 32]> {
    STANDARD.decode(text).ok()?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_box_key_is_made_once_private_and_read_back_the_same() {
        let dir = std::env::temp_dir().join(format!("vyre-wgkey-{}", std::process::id()));
        let path = dir.join("network").join("wireguard.key");
        let made = KeyPair::load_or_create(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dir_mode, 0o700);
        let again = KeyPair::load_or_create(&path).unwrap();
        assert_eq!(made.public.as_bytes(), again.public.as_bytes());
        std::fs::write(&path, "not a key\n").unwrap();
        assert!(
            KeyPair::load_or_create(&path).is_err(),
            "garbage is refused, not replaced"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn keys_round_trip_through_wireguards_base64() {
        let pair = KeyPair::generate();
        assert_eq!(decode(&pair.public_base64()), Some(*pair.public.as_bytes()));
        assert_eq!(pair.public_base64().len(), 44);
        assert_eq!(decode("c2hvcnQ="), None);
    }
}
