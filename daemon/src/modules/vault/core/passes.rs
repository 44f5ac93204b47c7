//! What passes need of the sealed items (ADR 0036): an item's value as a sealed pass carries
//! it, an item made from one, and a relayed pass's item opened for one request of the person
//! it was given to. The passes' own rows are in `super::super::passes`.

use rusqlite::OptionalExtension;
use subtle::ConstantTimeEq;

use super::*;
use crate::kernel::contracts::vault::{Opened, PASS_SKEW_MS, PassProof, pass_message};
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

    /// Whether a relayed pass could be kept as item `name` now (a free name, an open vault):
    /// asked before the pass is bound at its giver's, since a pass is taken once.
    pub async fn may_put(&self, name: &str) -> Result<(), VaultError> {
        valid_item_name(name)?;
        {
            let mut keys = self.keys.lock().await;
            self.ring(&mut keys, true).await?;
        }
        if self.exists(name).await? {
            return Err(VaultError::Exists(name.to_string()));
        }
        Ok(())
    }

    /// Bind relayed pass `pass` to `key`, the public half of the key the Vyre accepting it
    /// made, when `token` is the pass's and it stands and was not taken: from then on only
    /// requests signed with that key use it, and the code alone opens nothing. The item's name
    /// and the person on success.
    pub async fn bind_pass(
        &self,
        pass: &str,
        token: &str,
        key: [u8; 32],
    ) -> Result<(String, String), VaultError> {
        ed25519_dalek::VerifyingKey::from_bytes(&key)
            .map_err(|_| VaultError::InvalidName("key: not an Ed25519 public key".into()))?;
        let (id, hash) = (
            pass.to_string(),
            crate::kernel::device_tokens::hash_token(token),
        );
        self.ctx
            .store()
            .write(move |tx| {
                // The same answer for an unknown pass, a revoked one and a wrong token.
                let Some(standing) = passes::standing(tx.conn(), &id)?
                    .filter(|s| bool::from(s.token_hash.ct_eq(hash.as_slice())))
                else {
                    return Ok(Err(VaultError::PassEnded));
                };
                if standing.item_id.is_none() {
                    return Ok(Err(VaultError::PassEnded));
                }
                if !passes::bind(tx.conn(), &id, &key)? {
                    return Ok(Err(VaultError::PassTaken));
                }
                tx.emit(NewEvent::new(
                    "vault.pass_taken",
                    serde_json::json!({
                        "pass": id, "item": standing.item_name, "to": standing.to,
                    }),
                ))?;
                Ok(Ok((standing.item_name, standing.to)))
            })
            .await?
    }

    /// A relayed pass's item for one request to `destination`, when `proof` is signed by the
    /// key bound to the pass, is fresh and new, and the pass stands; the use is kept (the
    /// pass's uses and `vault.used`). Only the Gate uses one.
    pub async fn open_pass(
        &self,
        grantee: &Grantee,
        pass: &str,
        proof: PassProof<'_>,
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
        // The same answer for an unknown pass, a revoked one, one never taken and a signature
        // that is not its taker's.
        let Some(standing) = standing.filter(|s| signed_by_taker(s, pass, proof)) else {
            return Err(VaultError::PassEnded);
        };
        self.keep_request(pass, proof.signed).await?;
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

impl Vault {
    /// Refuse a signed request whose time is out of the window or that was sent before; keep
    /// its nonce in the store until its window closes, so that a request captured on the way
    /// is refused after a restart too.
    async fn keep_request(&self, pass: &str, signed: &str) -> Result<(), VaultError> {
        let now = crate::now_ms();
        let stamp = stamp(signed, now)?;
        let pass = pass.to_string();
        let until = stamp.at + PASS_SKEW_MS;
        let kept = self
            .ctx
            .store()
            .write(move |tx| {
                Ok(passes::keep_nonce(
                    tx.conn(),
                    &pass,
                    &stamp.nonce,
                    until,
                    now,
                    MAX_RECENT,
                )?)
            })
            .await?;
        match kept {
            passes::Nonce::Kept => Ok(()),
            passes::Nonce::Seen => Err(VaultError::PassReplayed),
            passes::Nonce::Full => Err(VaultError::Unavailable(format!(
                "this pass carried {MAX_RECENT} requests in the last ten minutes; try again shortly"
            ))),
        }
    }
}

/// Requests one pass may carry within a window; more are refused until older ones leave it.
const MAX_RECENT: usize = 20_000;

/// What the signed text says of itself: when it was signed and its one-use nonce.
#[derive(Debug, Deserialize)]
struct Stamp {
    at: i64,
    nonce: String,
}

/// The signed text's stamp, when it has one whose time is within the window around `now`.
fn stamp(signed: &str, now: i64) -> Result<Stamp, VaultError> {
    let stamp: Stamp = serde_json::from_str(signed)
        .map_err(|_| VaultError::InvalidName("the signed request has no time and nonce".into()))?;
    if !(16..=128).contains(&stamp.nonce.len()) {
        return Err(VaultError::InvalidName(
            "the signed request's nonce must be 16 to 128 characters".into(),
        ));
    }
    if (stamp.at - now).abs() > PASS_SKEW_MS {
        return Err(VaultError::PassStale);
    }
    Ok(stamp)
}

/// Whether `proof` is signed by the key the pass was bound to when it was taken.
fn signed_by_taker(standing: &passes::Standing, pass: &str, proof: PassProof<'_>) -> bool {
    use base64::Engine;
    let Some(key) = standing
        .taker_key
        .as_deref()
        .and_then(|k| <[u8; 32]>::try_from(k).ok())
        .and_then(|k| ed25519_dalek::VerifyingKey::from_bytes(&k).ok())
    else {
        return false;
    };
    let Some(sig) = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(proof.sig)
        .ok()
        .and_then(|b| ed25519_dalek::Signature::from_slice(&b).ok())
    else {
        return false;
    };
    key.verify_strict(&pass_message(pass, proof.signed), &sig)
        .is_ok()
}

#[cfg(test)]
mod stamp_tests {
    use super::*;

    fn signed(at: i64, nonce: &str) -> String {
        serde_json::json!({ "at": at, "nonce": nonce, "request": {} }).to_string()
    }

    #[test]
    fn a_request_out_of_its_window_either_way_is_stale() {
        let now = 1_000_000_000;
        assert_eq!(
            stamp(&signed(now, "nonce-aaaaaaaaaaaaaaaa"), now)
                .unwrap()
                .at,
            now
        );
        for at in [now - PASS_SKEW_MS - 1, now + PASS_SKEW_MS + 1] {
            assert!(matches!(
                stamp(&signed(at, "nonce-bbbbbbbbbbbbbbbb"), now),
                Err(VaultError::PassStale)
            ));
        }
    }

    #[test]
    fn a_nonce_too_short_or_a_text_without_a_stamp_is_refused() {
        for text in [signed(5, "short"), "{}".into(), "not json".into()] {
            assert!(
                matches!(stamp(&text, 5), Err(VaultError::InvalidName(_))),
                "{text}"
            );
        }
    }
}
