//! What a person may see of an item after proving presence (`vault.reveal`, presence.rs): the
//! value opened for them, a `vault.revealed` event that names the item, the field, who and how
//! (never the value), and the passphrase checked without changing the keys.

use super::*;

impl Vault {
    /// Item `name`'s value for a person who proved presence (no grant needed, no use recorded:
    /// [`Vault::revealed`] says it was shown).
    pub async fn open_for_person(&self, name: &str) -> Result<VaultValue, VaultError> {
        let item = name.to_string();
        let row = self
            .ctx
            .store()
            .read(move |c| Ok(items::sealed_by_name(c, &item)?))
            .await?
            .ok_or(VaultError::NotFound)?;
        if row.key_id == items::KEPT_BY_KEY_STORE {
            return self.open_kept(&row).await;
        }
        let ring = {
            let mut keys = self.keys.lock().await;
            self.ring(&mut keys, false).await?
        };
        open_row(&ring, &row)
    }

    /// The `vault.revealed` event: which field of which item was shown to whom, proved how.
    pub async fn revealed(
        &self,
        name: &str,
        field: &str,
        by: &str,
        via: &str,
    ) -> Result<(), VaultError> {
        let data = serde_json::json!({ "item": name, "field": field, "by": by, "via": via });
        self.ctx
            .store()
            .write(move |tx| {
                tx.emit(NewEvent::new("vault.revealed", data))?;
                Ok(())
            })
            .await?;
        Ok(())
    }

    /// Whether `passphrase` is the one that wraps the key file (nothing changes either way).
    pub async fn check_passphrase(&self, passphrase: &Secret) -> Result<bool, VaultError> {
        let store = self.store.clone();
        let doc = blocking(move || store.load())
            .await?
            .ok_or(VaultError::NotWrapped)?;
        let Some(wrap) = doc.passphrase.clone() else {
            return Err(VaultError::NotWrapped);
        };
        let pass = passphrase.clone();
        blocking(move || {
            let kek = derive_kek(pass.expose(), Some(&wrap))?;
            match doc.unlock(Some(&kek)) {
                Ok(_) => Ok(true),
                Err(VaultError::WrongPassphrase) => Ok(false),
                Err(e) => Err(e),
            }
        })
        .await
    }
}
