//! What passes need of the sealed items (ADR 0036): an item's value as a sealed pass carries
//! it, an item made from one, and a relayed pass's item opened for one request of the person
//! it was given to. The passes' own rows are in `super::super::passes`.

use rusqlite::OptionalExtension;
use subtle::ConstantTimeEq;

use super::*;
use crate::kernel::contracts::vault::Opened;
use crate::modules::vault::passes;

/// What a sealed pass carries, as JSON inside its seal.
#[derive(Serialize, Deserialize)]
struct Payload {
    kind: Kind,
    plain: Plain,
}

impl Vault {
    /// Item `name`'s id and its value as a sealed pass carries it (JSON, wiped on drop). A pass
    /// this Vyre was given is not passed on.
    pub async fn payload(&self, name: &str) -> Result<(String, Zeroizing<Vec<u8>>), VaultError> {
        let value = self.open_for_person(name).await?;
        if value.kind() == Kind::Pass {
            return Err(VaultError::InvalidName(format!(
                "{name:?} is a pass another Vyre gave this one; it cannot be passed on"
            )));
        }
        let payload = Payload {
            kind: value.kind(),
            plain: Plain::from_value(&value),
        };
        let bytes = Zeroizing::new(serde_json::to_vec(&payload).expect("serializes"));
        Ok((self.item_id(name).await?, bytes))
    }

    /// The id of item `name`.
    pub async fn item_id(&self, name: &str) -> Result<String, VaultError> {
        let item = name.to_string();
        self.ctx
            .store()
            .read(move |c| Ok(items::sealed_by_name(c, &item)?.map(|r| r.id)))
            .await?
            .ok_or(VaultError::NotFound)
    }

    /// A new item `name` from a sealed pass's payload: its kind.
    pub async fn put_payload(
        &self,
        name: &str,
        payload: &[u8],
        meta: serde_json::Value,
    ) -> Result<Kind, VaultError> {
        let payload: Payload = serde_json::from_slice(payload).map_err(|_| {
            VaultError::InvalidName(
                "the sealed pass opened, but what it holds is not an item".into(),
            )
        })?;
        let kind = payload.kind;
        if kind == Kind::Pass {
            return Err(VaultError::InvalidName(
                "a sealed pass cannot hold a pass".into(),
            ));
        }
        self.put_with(name, payload.plain.into_value(kind), false, Some(meta))
            .await?;
        Ok(kind)
    }

    /// A relayed pass's item for one request to `destination`, when `token` is the pass's and
    /// it stands; the use is kept (the pass's uses and `vault.used`). Only the Gate uses one.
    pub async fn open_pass(
        &self,
        grantee: &Grantee,
        pass: &str,
        token: &str,
        destination: &str,
    ) -> Result<Opened, VaultError> {
        if *grantee != Grantee::Module("gate".into()) {
            return Err(VaultError::PassOnlyForGate);
        }
        let id = pass.to_string();
        let standing = self
            .ctx
            .store()
            .read(move |c| Ok(passes::standing(c, &id)?))
            .await?;
        let hash = crate::kernel::device_tokens::hash_token(token);
        // The same answer for an unknown pass, a revoked one and a wrong token.
        let Some(standing) = standing.filter(|s| bool::from(s.token_hash.ct_eq(hash.as_slice())))
        else {
            return Err(VaultError::PassEnded);
        };
        let item_id = standing.item_id.ok_or(VaultError::PassEnded)?;
        let lookup = item_id.clone();
        let row = self
            .ctx
            .store()
            .read(move |c| {
                let name: Option<String> = c
                    .query_row(
                        "SELECT name FROM vault_items WHERE id = ?1",
                        [&lookup],
                        |r| r.get(0),
                    )
                    .optional()?;
                Ok(match name {
                    Some(n) => items::sealed_by_name(c, &n)?,
                    None => None,
                })
            })
            .await?
            .ok_or(VaultError::PassEnded)?;
        let value = if row.key_id == items::KEPT_BY_KEY_STORE {
            self.open_kept(&row).await?
        } else {
            let ring = {
                let mut keys = self.keys.lock().await;
                self.ring(&mut keys, false).await?
            };
            open_row(&ring, &row)?
        };
        let (pass_id, to, dest, item) = (
            pass.to_string(),
            standing.to.clone(),
            destination.to_string(),
            row.name.clone(),
        );
        self.ctx
            .store()
            .write(move |tx| {
                passes::record_use(tx.conn(), &pass_id, &dest)?;
                tx.conn().execute(
                    "UPDATE vault_items SET last_used_at = ?1, last_used_by = ?2 WHERE id = ?3",
                    params![crate::now_ms(), format!("pass:{pass_id} ({to})"), item_id],
                )?;
                tx.emit(NewEvent::new(
                    "vault.used",
                    serde_json::json!({
                        "item": item, "by": format!("pass:{pass_id}"), "to": to,
                        "destination": dest,
                    }),
                ))?;
                Ok(())
            })
            .await?;
        Ok(Opened {
            pass: pass.to_string(),
            item: row.name,
            to: standing.to,
            value,
        })
    }
}
