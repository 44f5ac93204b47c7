//! The vault's own tests, on a real store in a temp folder and in-memory or mock key stores.

use std::path::PathBuf;
use std::sync::Arc;

use super::keystore::{FileKeyStore, KeyStore, KeychainKeyStore, MemoryKeyStore};
use super::*;
use crate::kernel::Kernel;
use crate::kernel::config::{Config, LoadedConfig, Role};
use crate::kernel::contracts::auth;
use crate::kernel::module::{Ctx, Health, Manifest};
use crate::kernel::paths::VyreHome;

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vyre-vault-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn open(dir: &std::path::Path, store: Arc<dyn KeyStore>) -> (Kernel, Arc<Vault>) {
    let config = LoadedConfig {
        config: Config::default(),
        file: None,
        warnings: vec![],
    };
    let kernel = Kernel::open(VyreHome::at(dir), config, Role::Box)
        .await
        .unwrap();
    let manifest = Arc::new(Manifest::parse(include_str!("module.json")).unwrap());
    let ctx = Ctx::new(kernel.clone(), manifest, Health::default());
    ctx.store().migrate(items::MIGRATIONS).await.unwrap();
    let vault = Vault::open(ctx, store).await.unwrap();
    (kernel, vault)
}

fn secret(s: &str) -> Secret {
    Secret::new(s.to_string())
}

fn user() -> Grantee {
    Grantee::Module("sessions".into())
}

async fn put_three(vault: &Vault) {
    vault
        .put(
            "test-secret",
            VaultValue::Secret(secret("s3cret-value-one")),
            false,
        )
        .await
        .unwrap();
    let login = VaultValue::Login {
        username: secret("sam"),
        password: secret("pass-word-two"),
        totp: Some(secret("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")),
        notes: Some(secret("recovery codes: 1111 2222")),
    };
    vault.put("test-login", login, false).await.unwrap();
    vault
        .put(
            "test-note",
            VaultValue::Note(secret("a note, line one\nline two")),
            false,
        )
        .await
        .unwrap();
    for name in ["test-secret", "test-login", "test-note"] {
        vault.grant(name, &user(), "test").await.unwrap();
    }
}

async fn tamper(kernel: &Kernel, name: &str, how: fn(&mut Vec<u8>)) {
    let name = name.to_string();
    kernel
        .store()
        .write(move |tx| {
            let mut blob: Vec<u8> = tx.conn().query_row(
                "SELECT sealed FROM vault_items WHERE name = ?1",
                [&name],
                |r| r.get(0),
            )?;
            how(&mut blob);
            tx.conn().execute(
                "UPDATE vault_items SET sealed = ?1 WHERE name = ?2",
                rusqlite::params![blob, name],
            )?;
            Ok(())
        })
        .await
        .unwrap();
}

#[tokio::test]
async fn every_kind_round_trips_and_a_duplicate_needs_replace() {
    let dir = temp("round");
    let (kernel, vault) = open(&dir, Arc::new(MemoryKeyStore::default())).await;
    put_three(&vault).await;
    assert_eq!(
        vault.fetch(&user(), "test-secret").await.unwrap(),
        VaultValue::Secret(secret("s3cret-value-one"))
    );
    match vault.fetch(&user(), "test-login").await.unwrap() {
        v @ VaultValue::Login { .. } => {
            let VaultValue::Login {
                username, password, ..
            } = &v
            else {
                unreachable!()
            };
            assert_eq!(
                (username.expose(), password.expose()),
                ("sam", "pass-word-two")
            );
            let VaultValue::Login { notes, .. } = &v else {
                unreachable!()
            };
            assert_eq!(
                notes.as_ref().map(|n| n.expose()),
                Some("recovery codes: 1111 2222"),
                "a login's notes are kept"
            );
            assert_eq!(v.totp_now().unwrap().unwrap().expose().len(), 6);
        }
        other => panic!("a login came back as {other:?}"),
    }
    assert_eq!(
        vault.fetch(&user(), "test-note").await.unwrap(),
        VaultValue::Note(secret("a note, line one\nline two"))
    );

    let err = vault
        .put("test-secret", VaultValue::Secret(secret("other")), false)
        .await
        .unwrap_err();
    assert!(matches!(err, VaultError::Exists(_)), "{err}");
    assert!(
        vault
            .put("test-secret", VaultValue::Secret(secret("other")), true)
            .await
            .unwrap(),
        "replaced"
    );
    assert_eq!(
        vault
            .fetch(&user(), "test-secret")
            .await
            .unwrap()
            .primary()
            .expose(),
        "other",
        "grants survive a replace"
    );
    let list = vault.list().await.unwrap();
    assert_eq!(list.len(), 3);
    assert_eq!(
        list.iter()
            .find(|i| i.name == "test-secret")
            .unwrap()
            .last_used_by
            .as_deref(),
        Some("module:sessions")
    );
    vault.delete("test-note").await.unwrap();
    assert!(matches!(
        vault.fetch(&user(), "test-note").await,
        Err(VaultError::NotFound)
    ));
    kernel.store().close().await;
}

#[tokio::test]
async fn an_altered_truncated_or_moved_item_is_caught_and_the_others_still_open() {
    let dir = temp("tamper");
    let (kernel, vault) = open(&dir, Arc::new(MemoryKeyStore::default())).await;
    put_three(&vault).await;
    tamper(&kernel, "test-secret", |b| {
        let last = b.len() - 1;
        b[last] ^= 1;
    })
    .await;
    tamper(&kernel, "test-note", |b| b.truncate(b.len() / 2)).await;
    for name in ["test-secret", "test-note"] {
        let err = vault.fetch(&user(), name).await.unwrap_err();
        assert!(matches!(err, VaultError::Damaged(_)), "{name}: {err}");
        assert!(err.to_string().contains("Other items are not affected"));
    }
    assert!(
        vault.fetch(&user(), "test-login").await.is_ok(),
        "the untouched item opens"
    );

    // A valid blob moved onto another item does not open there either.
    kernel
        .store()
        .write(|tx| {
            tx.conn().execute(
                "UPDATE vault_items SET sealed = (SELECT sealed FROM vault_items WHERE name = 'test-login') WHERE name = 'test-secret'",
                [],
            )?;
            Ok(())
        })
        .await
        .unwrap();
    assert!(matches!(
        vault.fetch(&user(), "test-secret").await,
        Err(VaultError::Damaged(_))
    ));
    kernel.store().close().await;
}

#[tokio::test]
async fn grants_are_enforced() {
    let dir = temp("grants");
    let (kernel, vault) = open(&dir, Arc::new(MemoryKeyStore::default())).await;
    vault
        .put(
            "test-secret",
            VaultValue::Secret(secret("value-xyz")),
            false,
        )
        .await
        .unwrap();
    let err = vault.fetch(&user(), "test-secret").await.unwrap_err();
    assert!(matches!(err, VaultError::NotGranted { .. }), "{err}");
    vault.grant("test-secret", &user(), "test").await.unwrap();
    assert!(vault.fetch(&user(), "test-secret").await.is_ok());
    assert!(
        matches!(
            vault
                .fetch(&Grantee::Agent("sessions".into()), "test-secret")
                .await,
            Err(VaultError::NotGranted { .. })
        ),
        "an agent of the same name is another grantee"
    );
    assert!(vault.revoke("test-secret", &user()).await.unwrap());
    assert!(
        !vault.revoke("test-secret", &user()).await.unwrap(),
        "revoking twice changes nothing"
    );
    assert!(matches!(
        vault.fetch(&user(), "test-secret").await,
        Err(VaultError::NotGranted { .. })
    ));
    assert!(matches!(
        vault.grant("nope", &user(), "t").await,
        Err(VaultError::NotFound)
    ));
    kernel.store().close().await;
}

#[tokio::test]
async fn rotation_reseals_everything_or_nothing() {
    let dir = temp("rotate");
    let keys = Arc::new(MemoryKeyStore::default());
    let (kernel, vault) = open(&dir, keys.clone()).await;
    put_three(&vault).await;
    let before = keys.load().unwrap().unwrap().keys[0].id.clone();
    assert_eq!(vault.rotate(StopAfter::Nothing).await.unwrap(), 3);
    let after = keys.load().unwrap().unwrap();
    assert_eq!(after.keys.len(), 1, "only the new key is kept");
    assert_ne!(after.keys[0].id, before);
    for name in ["test-secret", "test-login", "test-note"] {
        assert!(
            vault.fetch(&user(), name).await.is_ok(),
            "{name} opens with the new key"
        );
    }
    // A damaged item stops the rotation before anything changes.
    tamper(&kernel, "test-note", |b| b[5] ^= 1).await;
    let current = keys.load().unwrap().unwrap().keys[0].id.clone();
    let err = vault.rotate(StopAfter::Nothing).await.unwrap_err();
    assert!(matches!(err, VaultError::RotationFailed(_)), "{err}");
    let doc = keys.load().unwrap().unwrap();
    assert_eq!(
        (doc.keys.len(), doc.keys[0].id.clone()),
        (1, current),
        "the old key stays, alone"
    );
    assert!(vault.fetch(&user(), "test-secret").await.is_ok());
    kernel.store().close().await;
}

#[tokio::test]
async fn an_interrupted_rotation_leaves_every_item_usable() {
    for stop in [StopAfter::NewKeyStored, StopAfter::ItemsResealed] {
        let dir = temp(&format!("interrupted-{stop:?}"));
        let keys = Arc::new(MemoryKeyStore::default());
        let (kernel, vault) = open(&dir, keys.clone()).await;
        put_three(&vault).await;
        vault.rotate(stop).await.unwrap();
        assert_eq!(
            keys.load().unwrap().unwrap().keys.len(),
            2,
            "{stop:?}: old and new key both stored"
        );
        // vyred dies here; the next start settles on the key the items use.
        kernel.store().close().await;
        drop(vault);
        let (kernel, vault) = open(&dir, keys.clone()).await;
        assert_eq!(
            keys.load().unwrap().unwrap().keys.len(),
            1,
            "{stop:?}: settled on one key"
        );
        for name in ["test-secret", "test-login", "test-note"] {
            assert!(
                vault.fetch(&user(), name).await.is_ok(),
                "{stop:?}: {name} opens"
            );
        }
        kernel.store().close().await;
    }
}

#[tokio::test]
async fn a_passphrase_locks_the_key_file_and_a_wrong_one_is_refused() {
    let dir = temp("passphrase");
    let keys: Arc<dyn KeyStore> = Arc::new(FileKeyStore {
        path: dir.join("vault/master.key"),
    });
    let (kernel, vault) = open(&dir, keys.clone()).await;
    vault
        .put(
            "test-secret",
            VaultValue::Secret(secret("behind-a-passphrase")),
            false,
        )
        .await
        .unwrap();
    vault.grant("test-secret", &user(), "t").await.unwrap();
    assert!(matches!(
        vault.set_passphrase(Some(&secret("short"))).await,
        Err(VaultError::WeakPassphrase)
    ));
    vault
        .set_passphrase(Some(&secret("a long passphrase")))
        .await
        .unwrap();
    let text = std::fs::read_to_string(dir.join("vault/master.key")).unwrap();
    assert!(text.contains("\"passphrase\""));
    kernel.store().close().await;
    drop(vault);

    let (kernel, vault) = open(&dir, keys.clone()).await;
    assert_eq!(vault.state().await.unwrap().0, KeyState::Locked);
    assert!(matches!(
        vault.fetch(&user(), "test-secret").await,
        Err(VaultError::Locked)
    ));
    assert!(matches!(
        vault.put("x", VaultValue::Secret(secret("y")), false).await,
        Err(VaultError::Locked)
    ));
    assert!(matches!(
        vault.unlock(&secret("the wrong one")).await,
        Err(VaultError::WrongPassphrase)
    ));
    vault.unlock(&secret("a long passphrase")).await.unwrap();
    assert_eq!(
        vault
            .fetch(&user(), "test-secret")
            .await
            .unwrap()
            .primary()
            .expose(),
        "behind-a-passphrase"
    );
    // A rotation while unlocked keeps the new key wrapped too.
    vault.rotate(StopAfter::Nothing).await.unwrap();
    vault.lock().await.unwrap();
    assert!(matches!(
        vault.fetch(&user(), "test-secret").await,
        Err(VaultError::Locked)
    ));
    vault.unlock(&secret("a long passphrase")).await.unwrap();
    vault.set_passphrase(None).await.unwrap();
    kernel.store().close().await;
    drop(vault);
    let (kernel, vault) = open(&dir, keys).await;
    assert_eq!(
        vault.state().await.unwrap().0,
        KeyState::Unlocked,
        "no passphrase any more"
    );
    kernel.store().close().await;
}

#[tokio::test]
async fn a_missing_key_is_a_clear_error_and_never_a_new_key() {
    let dir = temp("missing");
    let path = dir.join("vault/master.key");
    let keys: Arc<dyn KeyStore> = Arc::new(FileKeyStore { path: path.clone() });
    let (kernel, vault) = open(&dir, keys.clone()).await;
    vault
        .put(
            "test-secret",
            VaultValue::Secret(secret("lost-without-its-key")),
            false,
        )
        .await
        .unwrap();
    vault.grant("test-secret", &user(), "t").await.unwrap();
    kernel.store().close().await;
    drop(vault);
    std::fs::remove_file(&path).unwrap();

    let (kernel, vault) = open(&dir, keys).await;
    assert_eq!(vault.state().await.unwrap().0, KeyState::KeyMissing);
    let err = vault.fetch(&user(), "test-secret").await.unwrap_err();
    assert!(matches!(err, VaultError::KeyMissing { .. }), "{err}");
    assert!(err.to_string().contains("never falls back"), "{err}");
    let err = vault
        .put("another", VaultValue::Secret(secret("v")), false)
        .await
        .unwrap_err();
    assert!(
        matches!(err, VaultError::KeyMissing { .. }),
        "no new key is made beside old items: {err}"
    );
    assert!(!path.exists());
    kernel.store().close().await;
}

#[tokio::test]
async fn the_keychain_store_serves_the_vault_on_keyrings_mock() {
    keyring::set_default_credential_builder(keyring::mock::default_credential_builder());
    let dir = temp("keychain-mock");
    let keys: Arc<dyn KeyStore> = Arc::new(KeychainKeyStore::new(&dir).unwrap());
    let (kernel, vault) = open(&dir, keys).await;
    put_three(&vault).await;
    assert_eq!(
        vault
            .fetch(&user(), "test-secret")
            .await
            .unwrap()
            .primary()
            .expose(),
        "s3cret-value-one"
    );
    assert!(matches!(
        vault
            .set_passphrase(Some(&secret("a long passphrase")))
            .await,
        Err(VaultError::PassphraseOnKeychain)
    ));
    kernel.store().close().await;
}

/// The real Secret Service (gnome-keyring under dbus-run-session); `tests/run` runs it with
/// `--include-ignored` inside one, where they are installed. Ignored otherwise, so that a plain
/// `cargo test` says it did not run instead of passing it.
#[test]
#[ignore = "needs a Secret Service: tests/run runs it under dbus-run-session with gnome-keyring"]
fn the_keychain_store_on_the_real_secret_service() {
    let dir = temp("secret-service");
    let ring = keystore::KeyRing::new().unwrap();
    let store = KeychainKeyStore::new(&dir).unwrap();
    store
        .save(&keystore::StoredKeys::from_ring(&ring, None).unwrap())
        .unwrap();
    // A second entry object reads what the first stored: it lives in the keyring, not in us.
    let again = KeychainKeyStore::new(&dir).unwrap();
    let back = again
        .load()
        .unwrap()
        .expect("stored in the Secret Service")
        .unlock(None)
        .unwrap();
    assert_eq!(back.current.1.bytes(), ring.current.1.bytes());

    // Claude's credentials are keychain entries of their own (service `vyre`, account
    // `<item>:<VYRE_HOME>`), which another keychain client sees; forgetting one removes it.
    let token = "sk-ant-oat01-test-not-a-real-token";
    again
        .save_item(auth::SETUP_TOKEN_ITEM, &format!("{{\"v\":\"{token}\"}}"))
        .unwrap();
    let entry = keyring::Entry::new(
        keystore::KEYCHAIN_SERVICE,
        &KeychainKeyStore::item_account(&dir, auth::SETUP_TOKEN_ITEM),
    )
    .unwrap();
    assert!(entry.get_password().unwrap().contains(token));
    assert!(again.keeps_item(auth::API_KEY_ITEM) && !again.keeps_item("github-token"));
    again.delete_item(auth::SETUP_TOKEN_ITEM).unwrap();
    assert!(matches!(entry.get_password(), Err(keyring::Error::NoEntry)));
    assert!(again.load_item(auth::SETUP_TOKEN_ITEM).unwrap().is_none());
    again.delete_item(auth::SETUP_TOKEN_ITEM).unwrap();
}

#[tokio::test]
async fn claude_credentials_live_in_a_keychain_that_keeps_items_not_in_the_table() {
    let dir = temp("kept");
    let keys = Arc::new(MemoryKeyStore::keeping_items());
    let (kernel, vault) = open(&dir, keys.clone()).await;
    let token = "sk-ant-oat01-kept-by-the-keychain";
    vault
        .put(
            auth::SETUP_TOKEN_ITEM,
            VaultValue::Secret(secret(token)),
            false,
        )
        .await
        .unwrap();
    put_three(&vault).await;
    vault
        .grant(auth::SETUP_TOKEN_ITEM, &user(), "test")
        .await
        .unwrap();
    assert!(keys.kept(auth::SETUP_TOKEN_ITEM).unwrap().contains(token));
    let (key_id, sealed): (String, Vec<u8>) = kernel
        .store()
        .read(|c| {
            Ok(c.query_row(
                "SELECT key_id, sealed FROM vault_items WHERE name = 'claude-setup-token'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?)
        })
        .await
        .unwrap();
    assert_eq!(
        (key_id.as_str(), sealed.len()),
        (items::KEPT_BY_KEY_STORE, 0),
        "the table holds no seal of a kept item"
    );
    let listed = vault.list().await.unwrap();
    let kept: Vec<_> = listed
        .iter()
        .filter(|i| i.in_keychain)
        .map(|i| &i.name)
        .collect();
    assert_eq!(kept, vec![auth::SETUP_TOKEN_ITEM]);
    let fetched = vault.fetch(&user(), auth::SETUP_TOKEN_ITEM).await.unwrap();
    assert_eq!(fetched.primary().expose(), token);
    // A second put without replace is refused before it reaches the keychain.
    let again = vault
        .put(
            auth::SETUP_TOKEN_ITEM,
            VaultValue::Secret(secret("other")),
            false,
        )
        .await
        .unwrap_err();
    assert!(matches!(again, VaultError::Exists(_)), "{again}");
    assert!(keys.kept(auth::SETUP_TOKEN_ITEM).unwrap().contains(token));
    // Rotation reseals the vault's own items and leaves the keychain's alone.
    assert_eq!(vault.rotate(StopAfter::Nothing).await.unwrap(), 3);
    assert_eq!(
        vault
            .fetch(&user(), auth::SETUP_TOKEN_ITEM)
            .await
            .unwrap()
            .primary()
            .expose(),
        token
    );
    // An entry removed behind Vyre's back is a clear error, not garbage.
    keys.delete_item(auth::SETUP_TOKEN_ITEM).unwrap();
    let lost = vault
        .fetch(&user(), auth::SETUP_TOKEN_ITEM)
        .await
        .unwrap_err();
    assert!(lost.to_string().contains("no longer has it"), "{lost}");
    vault
        .put(
            auth::SETUP_TOKEN_ITEM,
            VaultValue::Secret(secret(token)),
            true,
        )
        .await
        .unwrap();
    vault.delete(auth::SETUP_TOKEN_ITEM).await.unwrap();
    assert!(
        keys.kept(auth::SETUP_TOKEN_ITEM).is_none(),
        "deleting the item forgets the entry"
    );
    kernel.store().close().await;
}
