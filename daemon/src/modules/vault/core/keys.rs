//! The vault's keys over time: rotation (a new master key, every item resealed, all or
//! nothing, settled on the next start when cut), the passphrase that wraps the key file, and
//! locking and unlocking.

use super::*;

impl Vault {
    /// A new master key; every item resealed with it, all or nothing.
    pub async fn rotate(&self, stop_after: StopAfter) -> Result<usize, VaultError> {
        let mut keys = self.keys.lock().await;
        let mut ring = self.ring(&mut keys, false).await.map_err(|e| match e {
            VaultError::NotFound => VaultError::Empty,
            e => e,
        })?;
        // 1. Store the new key beside the old, so that whatever happens next, both are there.
        let next_id = new_key_id()?;
        let next_key = Key::generate().map_err(VaultError::KeyStore)?;
        ring.next = Some((next_id.clone(), next_key.clone()));
        self.save(&ring, keys.kek.as_ref()).await?;
        keys.ring = Some(ring.clone());
        if stop_after == StopAfter::NewKeyStored {
            return Ok(0);
        }
        // 2. Reseal every item in one transaction.
        let reseal_ring = ring.clone();
        let resealed = self
            .ctx
            .store()
            .write(move |tx| {
                let rows = items::all_sealed(tx.conn())?;
                for row in &rows {
                    let value = open_row(&reseal_ring, row)
                        .map_err(|e| StoreError::Refused(e.to_string()))?;
                    let plain = Zeroizing::new(
                        serde_json::to_vec(&Plain::from_value(&value)).expect("serializes"),
                    );
                    let sealed = seal::seal(
                        &next_key,
                        &plain,
                        &items::aad(&row.id, &row.name, &row.kind, &next_id),
                    )
                    .map_err(StoreError::Refused)?;
                    tx.conn().execute(
                        "UPDATE vault_items SET key_id = ?1, sealed = ?2 WHERE id = ?3",
                        params![next_id, sealed, row.id],
                    )?;
                }
                tx.emit(NewEvent::new(
                    "vault.rotated",
                    serde_json::json!({ "items": rows.len() }),
                ))?;
                Ok(rows.len())
            })
            .await;
        let resealed = match resealed {
            Ok(n) => n,
            Err(e) => {
                // Nothing was resealed: forget the new key again.
                ring.next = None;
                self.save(&ring, keys.kek.as_ref()).await?;
                keys.ring = Some(ring);
                return Err(match e {
                    StoreError::Refused(m) => VaultError::RotationFailed(m),
                    e => VaultError::Store(e),
                });
            }
        };
        if stop_after == StopAfter::ItemsResealed {
            return Ok(resealed);
        }
        // 3. The new key becomes the only one.
        self.settle_rotation(&mut keys).await?;
        Ok(resealed)
    }

    /// After a start or a rotation: keep only the key the items use.
    pub(super) async fn settle_rotation(&self, keys: &mut Keys) -> Result<(), VaultError> {
        let Some(mut ring) = keys.ring.clone() else {
            return Ok(());
        };
        let Some((next_id, next_key)) = ring.next.clone() else {
            return Ok(());
        };
        let used = self.ctx.store().read(|c| Ok(items::key_ids(c)?)).await?;
        let uses = |id: &str| used.iter().any(|(k, n)| k == id && *n > 0);
        if uses(&ring.current.0) && uses(&next_id) {
            // Cannot happen with one transaction; keep both rather than lose anything.
            tracing::error!("vault items are sealed with two keys; keeping both");
            return Ok(());
        }
        if uses(&next_id) {
            ring.current = (next_id, next_key);
        }
        ring.next = None;
        self.save(&ring, keys.kek.as_ref()).await?;
        keys.ring = Some(ring);
        Ok(())
    }

    /// An item the key store keeps: its entry there, read as a sealed item's contents are.
    pub(super) async fn open_kept(&self, row: &SealedRow) -> Result<VaultValue, VaultError> {
        let kind = Kind::parse(&row.kind).ok_or_else(|| VaultError::Damaged(row.name.clone()))?;
        let (store, item) = (self.store.clone(), row.name.clone());
        let contents = blocking(move || store.load_item(&item))
            .await?
            .ok_or_else(|| {
                VaultError::KeyStore(format!(
                    "item {:?} is kept in {}, which no longer has it; put it again",
                    row.name,
                    self.store.location()
                ))
            })?;
        let plain: Plain =
            serde_json::from_str(&contents).map_err(|_| VaultError::Damaged(row.name.clone()))?;
        Ok(plain.into_value(kind))
    }

    pub(super) async fn save(&self, ring: &KeyRing, kek: Option<&Kek>) -> Result<(), VaultError> {
        let doc = StoredKeys::from_ring(ring, kek)?;
        let store = self.store.clone();
        blocking(move || store.save(&doc)).await
    }

    /// Unlock keys wrapped by a passphrase.
    pub async fn unlock(&self, passphrase: &Secret) -> Result<(), VaultError> {
        let mut keys = self.keys.lock().await;
        if keys.ring.is_some() {
            return Ok(());
        }
        let store = self.store.clone();
        let doc = blocking(move || store.load())
            .await?
            .ok_or(VaultError::NotWrapped)?;
        let Some(wrap) = doc.passphrase.clone() else {
            return Err(VaultError::NotWrapped);
        };
        let pass = passphrase.clone();
        let kek = blocking(move || derive_kek(pass.expose(), Some(&wrap))).await?;
        keys.ring = Some(doc.unlock(Some(&kek))?);
        keys.kek = Some(kek);
        self.settle_rotation(&mut keys).await?;
        Ok(())
    }

    /// Forget the unwrapped keys (only when a passphrase can bring them back).
    pub async fn lock(&self) -> Result<(), VaultError> {
        let mut keys = self.keys.lock().await;
        if !keys.wrapped {
            return Err(VaultError::NotWrapped);
        }
        keys.ring = None;
        keys.kek = None;
        Ok(())
    }

    /// Set, change or remove the passphrase that wraps the keys (the key file only).
    pub async fn set_passphrase(&self, new: Option<&Secret>) -> Result<(), VaultError> {
        if self.store.location() == "keychain" {
            return Err(VaultError::PassphraseOnKeychain);
        }
        let mut keys = self.keys.lock().await;
        let ring = self.ring(&mut keys, true).await?;
        let kek = match new {
            Some(p) if p.expose().chars().count() < 8 => return Err(VaultError::WeakPassphrase),
            Some(p) => {
                let pass = p.clone();
                Some(blocking(move || derive_kek(pass.expose(), None)).await?)
            }
            None => None,
        };
        self.save(&ring, kek.as_ref()).await?;
        keys.wrapped = kek.is_some();
        keys.kek = kek;
        Ok(())
    }
}
