//! Where the vault's master keys live, never beside the data: a key file readable only by
//! vyred's user (the box), or the OS keychain through `keyring` (the Mac). Optionally the keys in
//! the file are wrapped by a passphrase (argon2id).
//!
//! The store holds a small JSON document: the current key and, during a rotation, the next one,
//! each with an id that sealed items record, so an interrupted rotation can always be finished or
//! undone.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use super::VaultError;
use super::seal::{self, KdfParams, Key};

/// One key as stored: raw (hex) or wrapped by the passphrase key (hex of a sealed blob).
#[derive(Clone, Serialize, Deserialize)]
pub struct StoredKey {
    pub id: String,
    /// `current` or `next` (a rotation in progress).
    pub state: String,
    pub material: String,
}

/// The passphrase's salt and argon2id costs (neither is secret).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PassphraseWrap {
    pub salt: String,
    pub params: KdfParams,
}

/// The document a key store keeps.
#[derive(Clone, Serialize, Deserialize)]
pub struct StoredKeys {
    pub version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passphrase: Option<PassphraseWrap>,
    pub keys: Vec<StoredKey>,
}

/// The keys in memory, unwrapped.
#[derive(Clone, Debug)]
pub struct KeyRing {
    pub current: (String, Key),
    pub next: Option<(String, Key)>,
}

impl KeyRing {
    pub fn new() -> Result<KeyRing, VaultError> {
        Ok(KeyRing {
            current: (
                new_key_id()?,
                Key::generate().map_err(VaultError::KeyStore)?,
            ),
            next: None,
        })
    }

    pub fn key(&self, id: &str) -> Option<&Key> {
        if self.current.0 == id {
            return Some(&self.current.1);
        }
        self.next.as_ref().filter(|(i, _)| i == id).map(|(_, k)| k)
    }
}

pub fn new_key_id() -> Result<String, VaultError> {
    Ok(format!("k{}", crate::kernel::ids::random_hex(6)))
}

/// The passphrase key with what derived it, kept while the vault is unlocked so that new keys
/// (a rotation) can be wrapped too.
#[derive(Clone, Debug)]
pub struct Kek {
    pub key: Key,
    pub wrap: PassphraseWrap,
}

fn key_aad(id: &str) -> Vec<u8> {
    format!("vyre-vault-key\0{id}").into_bytes()
}

impl StoredKeys {
    /// The keys unwrapped. A wrapped document needs its passphrase key.
    pub fn unlock(&self, kek: Option<&Kek>) -> Result<KeyRing, VaultError> {
        let open = |k: &StoredKey| -> Result<Key, VaultError> {
            let bytes = unhex(&k.material)
                .ok_or_else(|| VaultError::KeyStore(format!("key {} is not valid hex", k.id)))?;
            match (&self.passphrase, kek) {
                (None, _) => Key::from_bytes(&bytes).ok_or_else(|| {
                    VaultError::KeyStore(format!("key {} has the wrong length", k.id))
                }),
                (Some(_), None) => Err(VaultError::Locked),
                (Some(_), Some(kek)) => {
                    let plain = seal::open(&kek.key, &bytes, &key_aad(&k.id))
                        .ok_or(VaultError::WrongPassphrase)?;
                    Key::from_bytes(&plain).ok_or_else(|| {
                        VaultError::KeyStore(format!("key {} has the wrong length", k.id))
                    })
                }
            }
        };
        let current = self
            .keys
            .iter()
            .find(|k| k.state == "current")
            .ok_or_else(|| VaultError::KeyStore("the key store holds no current key".into()))?;
        let next = self.keys.iter().find(|k| k.state == "next");
        Ok(KeyRing {
            current: (current.id.clone(), open(current)?),
            next: match next {
                Some(k) => Some((k.id.clone(), open(k)?)),
                None => None,
            },
        })
    }

    /// The document for `ring`, wrapped by `kek` when there is one.
    pub fn from_ring(ring: &KeyRing, kek: Option<&Kek>) -> Result<StoredKeys, VaultError> {
        let store = |id: &str, key: &Key, state: &str| -> Result<StoredKey, VaultError> {
            let material = match kek {
                None => hex(key.bytes()),
                Some(kek) => hex(&seal::seal(&kek.key, key.bytes(), &key_aad(id))
                    .map_err(VaultError::KeyStore)?),
            };
            Ok(StoredKey {
                id: id.to_string(),
                state: state.to_string(),
                material,
            })
        };
        let mut keys = vec![store(&ring.current.0, &ring.current.1, "current")?];
        if let Some((id, key)) = &ring.next {
            keys.push(store(id, key, "next")?);
        }
        Ok(StoredKeys {
            version: 1,
            passphrase: kek.map(|k| k.wrap.clone()),
            keys,
        })
    }

    pub fn to_json(&self) -> Zeroizing<String> {
        Zeroizing::new(serde_json::to_string_pretty(self).expect("the key document serializes"))
    }

    pub fn from_json(text: &str) -> Result<StoredKeys, VaultError> {
        serde_json::from_str(text)
            .map_err(|e| VaultError::KeyStore(format!("the key document is damaged: {e}")))
    }
}

/// Derive the passphrase key for a document (or for a new salt when `wrap` is `None`).
pub fn derive_kek(passphrase: &str, wrap: Option<&PassphraseWrap>) -> Result<Kek, VaultError> {
    let wrap = match wrap {
        Some(w) => w.clone(),
        None => {
            let mut salt = [0u8; 16];
            getrandom::fill(&mut salt).map_err(|e| VaultError::KeyStore(e.to_string()))?;
            PassphraseWrap {
                salt: hex(&salt),
                params: kdf_params(),
            }
        }
    };
    let salt = unhex(&wrap.salt)
        .ok_or_else(|| VaultError::KeyStore("the passphrase salt is damaged".into()))?;
    let key = seal::derive_from_passphrase(passphrase, &salt, &wrap.params)
        .map_err(VaultError::KeyStore)?;
    Ok(Kek { key, wrap })
}

/// argon2id costs for new passphrases. Tests may lower them through `VYRE_TEST_FAST_KDF`.
fn kdf_params() -> KdfParams {
    if cfg!(debug_assertions) && std::env::var_os("VYRE_TEST_FAST_KDF").is_some() {
        KdfParams {
            m_kib: 64,
            t: 1,
            p: 1,
        }
    } else {
        KdfParams::default()
    }
}

/// Where the key document lives, and the items a store keeps as entries of its own.
pub trait KeyStore: Send + Sync {
    /// Where, for messages: `file /path` or `keychain`.
    fn location(&self) -> String;
    /// The document, or `None` when nothing is stored there.
    fn load(&self) -> Result<Option<StoredKeys>, VaultError>;
    fn save(&self, keys: &StoredKeys) -> Result<(), VaultError>;

    /// Whether this store keeps the item `name` itself, as an entry of its own, rather than the
    /// vault sealing it into its table: the OS keychain keeps Claude's credentials, so that on
    /// the Mac they are Keychain items like any other login (ADR 0011).
    fn keeps_item(&self, _name: &str) -> bool {
        false
    }
    /// A kept item's contents, or `None` when the store has no entry for it.
    fn load_item(&self, name: &str) -> Result<Option<Zeroizing<String>>, VaultError> {
        Err(VaultError::KeyStore(format!(
            "{} does not keep items ({name:?})",
            self.location()
        )))
    }
    fn save_item(&self, name: &str, _contents: &str) -> Result<(), VaultError> {
        Err(VaultError::KeyStore(format!(
            "{} does not keep items ({name:?})",
            self.location()
        )))
    }
    /// Forget a kept item; forgetting one that is not there is not an error.
    fn delete_item(&self, _name: &str) -> Result<(), VaultError> {
        Ok(())
    }
}

/// The items the OS keychain keeps itself: Claude Code's credentials.
pub const KEYCHAIN_ITEMS: &[&str] = &[
    crate::kernel::contracts::auth::SETUP_TOKEN_ITEM,
    crate::kernel::contracts::auth::API_KEY_ITEM,
];

/// A key file only vyred's user can read (the box).
pub struct FileKeyStore {
    pub path: PathBuf,
}

impl KeyStore for FileKeyStore {
    fn location(&self) -> String {
        format!("file {}", self.path.display())
    }

    fn load(&self) -> Result<Option<StoredKeys>, VaultError> {
        // Never through a link, and never more than a key file holds.
        let text = match crate::kernel::nofollow::read(&self.path, 64 * 1024) {
            Ok(bytes) => Zeroizing::new(String::from_utf8(bytes).map_err(|_| {
                VaultError::KeyStore(format!("{} is not UTF-8 text", self.path.display()))
            })?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(VaultError::KeyStore(format!(
                    "cannot read the key file: {e}"
                )));
            }
        };
        let mode = std::fs::symlink_metadata(&self.path)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(0o600);
        if mode & 0o077 != 0 {
            tracing::warn!(path = %self.path.display(), "the vault key file was readable by others; made it 0600");
            let _ = std::fs::set_permissions(&self.path, std::fs::Permissions::from_mode(0o600));
        }
        StoredKeys::from_json(&text).map(Some)
    }

    fn save(&self, keys: &StoredKeys) -> Result<(), VaultError> {
        let err = |e: std::io::Error| {
            VaultError::KeyStore(format!("cannot write {}: {e}", self.path.display()))
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(err)?;
            let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        }
        // A random temp name, renamed over the file and synced with its folder; never through
        // a link.
        crate::kernel::nofollow::write_atomic(&self.path, keys.to_json().as_bytes(), 0o600)
            .map_err(|e| VaultError::KeyStore(format!("cannot write the key file: {e}")))?;
        Ok(())
    }
}

/// The OS keychain (Keychain on the Mac, Secret Service on a Linux desktop), through `keyring`:
/// the master key, and Claude's credentials as entries of their own ([`KEYCHAIN_ITEMS`]).
pub struct KeychainKeyStore {
    entry: keyring::Entry,
    home: PathBuf,
}

/// The keychain's service name for every Vyre entry.
pub const KEYCHAIN_SERVICE: &str = "vyre";

impl KeychainKeyStore {
    /// One entry per `VYRE_HOME`, so two homes never share a key.
    pub fn new(home: &std::path::Path) -> Result<Self, VaultError> {
        let account = format!("vault-master-key:{}", home.display());
        let entry = keyring::Entry::new(KEYCHAIN_SERVICE, &account).map_err(keychain_error)?;
        Ok(KeychainKeyStore {
            entry,
            home: home.to_path_buf(),
        })
    }

    /// The entry of a kept item: account `<item>:<VYRE_HOME>`, service `vyre`.
    pub fn item_account(home: &std::path::Path, name: &str) -> String {
        format!("{name}:{}", home.display())
    }

    fn item_entry(&self, name: &str) -> Result<keyring::Entry, VaultError> {
        keyring::Entry::new(KEYCHAIN_SERVICE, &Self::item_account(&self.home, name))
            .map_err(keychain_error)
    }
}

fn keychain_error(e: keyring::Error) -> VaultError {
    VaultError::KeyStore(format!("the OS keychain is not available: {e}"))
}

impl KeyStore for KeychainKeyStore {
    fn location(&self) -> String {
        "keychain".into()
    }

    fn load(&self) -> Result<Option<StoredKeys>, VaultError> {
        match self.entry.get_password() {
            Ok(text) => {
                let text = Zeroizing::new(text);
                StoredKeys::from_json(&text).map(Some)
            }
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(keychain_error(e)),
        }
    }

    fn save(&self, keys: &StoredKeys) -> Result<(), VaultError> {
        self.entry
            .set_password(&keys.to_json())
            .map_err(keychain_error)
    }

    fn keeps_item(&self, name: &str) -> bool {
        KEYCHAIN_ITEMS.contains(&name)
    }

    fn load_item(&self, name: &str) -> Result<Option<Zeroizing<String>>, VaultError> {
        match self.item_entry(name)?.get_password() {
            Ok(text) => Ok(Some(Zeroizing::new(text))),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(keychain_error(e)),
        }
    }

    fn save_item(&self, name: &str, contents: &str) -> Result<(), VaultError> {
        self.item_entry(name)?
            .set_password(contents)
            .map_err(keychain_error)
    }

    fn delete_item(&self, name: &str) -> Result<(), VaultError> {
        match self.item_entry(name)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(keychain_error(e)),
        }
    }
}

/// Keys in memory only, for tests; [`MemoryKeyStore::keeping_items`] also keeps
/// [`KEYCHAIN_ITEMS`] as the keychain does.
#[derive(Default)]
pub struct MemoryKeyStore {
    doc: Mutex<Option<Zeroizing<String>>>,
    items: Option<Mutex<std::collections::HashMap<String, Zeroizing<String>>>>,
}

impl MemoryKeyStore {
    pub fn keeping_items() -> MemoryKeyStore {
        MemoryKeyStore {
            doc: Mutex::default(),
            items: Some(Mutex::default()),
        }
    }

    /// A kept item's contents, as the keychain would show them.
    pub fn kept(&self, name: &str) -> Option<Zeroizing<String>> {
        let items = self.items.as_ref()?.lock().expect("memory key store");
        items.get(name).cloned()
    }
}

impl KeyStore for MemoryKeyStore {
    fn location(&self) -> String {
        "memory".into()
    }
    fn load(&self) -> Result<Option<StoredKeys>, VaultError> {
        match &*self.doc.lock().expect("memory key store") {
            Some(text) => StoredKeys::from_json(text).map(Some),
            None => Ok(None),
        }
    }
    fn save(&self, keys: &StoredKeys) -> Result<(), VaultError> {
        *self.doc.lock().expect("memory key store") = Some(keys.to_json());
        Ok(())
    }
    fn keeps_item(&self, name: &str) -> bool {
        self.items.is_some() && KEYCHAIN_ITEMS.contains(&name)
    }
    fn load_item(&self, name: &str) -> Result<Option<Zeroizing<String>>, VaultError> {
        Ok(self.kept(name))
    }
    fn save_item(&self, name: &str, contents: &str) -> Result<(), VaultError> {
        if let Some(items) = &self.items {
            let mut items = items.lock().expect("memory key store");
            items.insert(name.to_string(), Zeroizing::new(contents.to_string()));
        }
        Ok(())
    }
    fn delete_item(&self, name: &str) -> Result<(), VaultError> {
        if let Some(items) = &self.items {
            items.lock().expect("memory key store").remove(name);
        }
        Ok(())
    }
}

pub use crate::kernel::ids::hex;

pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapped_document_opens_only_with_its_passphrase() {
        let ring = KeyRing::new().unwrap();
        let wrap = PassphraseWrap {
            salt: hex(b"0123456789abcdef"),
            params: KdfParams {
                m_kib: 64,
                t: 1,
                p: 1,
            },
        };
        let kek = derive_kek("open sesame", Some(&wrap)).unwrap();
        let doc = StoredKeys::from_ring(&ring, Some(&kek)).unwrap();
        assert!(
            !doc.to_json().contains(&hex(ring.current.1.bytes())),
            "the raw key is not in a wrapped document"
        );
        assert!(matches!(doc.unlock(None), Err(VaultError::Locked)));
        let wrong = derive_kek("open barley", Some(&wrap)).unwrap();
        assert!(matches!(
            doc.unlock(Some(&wrong)),
            Err(VaultError::WrongPassphrase)
        ));
        let opened = doc.unlock(Some(&kek)).unwrap();
        assert_eq!(opened.current.1.bytes(), ring.current.1.bytes());
    }

    #[test]
    fn the_key_file_is_private_and_round_trips() {
        let dir = std::env::temp_dir().join(format!("vyre-keyfile-{}", std::process::id()));
        let store = FileKeyStore {
            path: dir.join("vault/master.key"),
        };
        assert!(store.load().unwrap().is_none());
        let ring = KeyRing::new().unwrap();
        store
            .save(&StoredKeys::from_ring(&ring, None).unwrap())
            .unwrap();
        let mode = std::fs::metadata(&store.path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let back = store.load().unwrap().unwrap().unlock(None).unwrap();
        assert_eq!(back.current.1.bytes(), ring.current.1.bytes());
        std::fs::write(&store.path, "{ not json").unwrap();
        assert!(matches!(store.load(), Err(VaultError::KeyStore(_))));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_keychain_store_works_on_keyrings_mock_backend() {
        keyring::set_default_credential_builder(keyring::mock::default_credential_builder());
        let store = KeychainKeyStore::new(std::path::Path::new("/tmp/some-home")).unwrap();
        assert!(store.load().unwrap().is_none());
        let ring = KeyRing::new().unwrap();
        store
            .save(&StoredKeys::from_ring(&ring, None).unwrap())
            .unwrap();
        let back = store.load().unwrap().unwrap().unlock(None).unwrap();
        assert_eq!(back.current.1.bytes(), ring.current.1.bytes());
    }
}
