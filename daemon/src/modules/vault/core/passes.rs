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
        self.seen.check(pass, proof.signed, crate::now_ms())?;
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

/// The signed requests each pass was used with lately, so that one sent again (captured on the
/// way, or sent twice) is refused. Kept for [`PASS_SKEW_MS`] either side of now, the window a
/// request's time must fall in; bounded per pass, and in memory (after a restart, a request
/// from before it is refused by its time once the window is past).
#[derive(Default)]
pub(super) struct Seen(std::sync::Mutex<std::collections::HashMap<String, Recent>>);

/// One pass's recent requests: their nonces, and when each expires from the window.
#[derive(Default)]
struct Recent {
    nonces: std::collections::HashSet<String>,
    expiry: std::collections::VecDeque<(i64, String)>,
}

/// Requests one pass may carry within a window; more are refused until older ones leave it.
const MAX_RECENT: usize = 20_000;

/// What the signed text says of itself: when it was signed and its one-use nonce.
#[derive(Deserialize)]
struct Stamp {
    at: i64,
    nonce: String,
}

impl Seen {
    /// Refuse a request whose time is out of the window or whose nonce was seen; keep it.
    fn check(&self, pass: &str, signed: &str, now: i64) -> Result<(), VaultError> {
        let stamp: Stamp = serde_json::from_str(signed).map_err(|_| {
            VaultError::InvalidName("the signed request has no time and nonce".into())
        })?;
        if !(16..=128).contains(&stamp.nonce.len()) {
            return Err(VaultError::InvalidName(
                "the signed request's nonce must be 16 to 128 characters".into(),
            ));
        }
        if (stamp.at - now).abs() > PASS_SKEW_MS {
            return Err(VaultError::PassStale);
        }
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        // Passes that went quiet are forgotten with their window.
        all.retain(|_, r| r.expiry.back().is_some_and(|(until, _)| *until >= now));
        let recent = all.entry(pass.to_string()).or_default();
        while let Some((until, _)) = recent.expiry.front()
            && *until < now
        {
            let (_, nonce) = recent.expiry.pop_front().expect("looked at");
            recent.nonces.remove(&nonce);
        }
        if recent.nonces.contains(&stamp.nonce) {
            return Err(VaultError::PassReplayed);
        }
        if recent.nonces.len() >= MAX_RECENT {
            return Err(VaultError::Unavailable(format!(
                "this pass carried {MAX_RECENT} requests in the last ten minutes; try again shortly"
            )));
        }
        // Refused by its time once it leaves the window; remembered until then.
        let until = stamp.at + PASS_SKEW_MS;
        recent.nonces.insert(stamp.nonce.clone());
        let at = recent.expiry.partition_point(|(u, _)| *u <= until);
        recent.expiry.insert(at, (until, stamp.nonce));
        Ok(())
    }
}

#[cfg(test)]
mod seen_tests {
    use super::*;

    fn signed(at: i64, nonce: &str) -> String {
        serde_json::json!({ "at": at, "nonce": nonce, "request": {} }).to_string()
    }

    #[test]
    fn a_request_is_taken_once_within_its_window_and_refused_outside_it() {
        let seen = Seen::default();
        let now = 1_000_000_000;
        let a = signed(now, "nonce-aaaaaaaaaaaaaaaa");
        seen.check("p1", &a, now).unwrap();
        // Sent again: refused, however soon and from whatever clock.
        assert!(matches!(
            seen.check("p1", &a, now + 1),
            Err(VaultError::PassReplayed)
        ));
        // The same nonce on another pass is another request.
        seen.check("p2", &a, now).unwrap();
        // Out of the window either way: refused by its time.
        for at in [now - PASS_SKEW_MS - 1, now + PASS_SKEW_MS + 1] {
            assert!(matches!(
                seen.check("p1", &signed(at, "nonce-bbbbbbbbbbbbbbbb"), now),
                Err(VaultError::PassStale)
            ));
        }
        // Once the first has left the window it is forgotten, and refused by its time instead.
        let later = now + PASS_SKEW_MS + 1;
        assert!(matches!(
            seen.check("p1", &a, later),
            Err(VaultError::PassStale)
        ));
        seen.check("p1", &signed(later, "nonce-cccccccccccccccc"), later)
            .unwrap();
        let all = seen.0.lock().unwrap();
        assert_eq!(all["p1"].nonces.len(), 1, "the old one was dropped");
        assert!(!all.contains_key("p2"), "a quiet pass is forgotten");
    }

    #[test]
    fn a_nonce_too_short_or_a_text_without_a_stamp_is_refused() {
        let seen = Seen::default();
        for text in [signed(5, "short"), "{}".into(), "not json".into()] {
            assert!(
                matches!(seen.check("p", &text, 5), Err(VaultError::InvalidName(_))),
                "{text}"
            );
        }
    }
}
