//! The vault itself: keys in memory, sealing and opening items, grants. Rotation, the
//! passphrase and locking are in [`keys`].

mod keys;
mod passes;
mod reveal;

use std::sync::Arc;

use rusqlite::params;
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use super::items::{self, SealedRow};
use super::keystore::{Kek, KeyRing, KeyStore, StoredKeys, derive_kek, new_key_id};
use super::seal::{self, Key};
use super::{Grantee, VaultError, valid_item_name};
use crate::kernel::contracts::secret::{Kind, Secret, VaultValue};
use crate::kernel::events::NewEvent;
use crate::kernel::module::Ctx;
use crate::kernel::store::StoreError;

/// What a sealed item holds, as JSON inside the seal. Wiped on drop.
#[derive(Default, Serialize, Deserialize, Zeroize, ZeroizeOnDrop)]
struct Plain {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    v: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    u: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    p: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    t: String,
    /// A login's or a card's notes.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    n: String,
    /// A card's number, holder, expiry and code.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    cn: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    ch: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    ce: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    cc: String,
    /// An env set's variables, `[name, value]` each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    e: Vec<[String; 2]>,
    /// A relayed pass's giver, its id there and its key (none when taken before passes bound).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pu: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pi: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pk: String,
}

impl Plain {
    fn from_value(value: &VaultValue) -> Plain {
        let text = |s: &Secret| s.expose().to_string();
        let maybe = |s: &Option<Secret>| s.as_ref().map(text).unwrap_or_default();
        // Field by field: a type that wipes itself on drop cannot be built with `..default()`.
        let mut plain = Plain::default();
        match value {
            VaultValue::Secret(s) | VaultValue::Note(s) => plain.v = text(s),
            VaultValue::Login {
                username,
                password,
                totp,
                notes,
            } => {
                plain.u = text(username);
                plain.p = text(password);
                plain.t = maybe(totp);
                plain.n = maybe(notes);
            }
            VaultValue::Card {
                number,
                holder,
                expiry,
                code,
                notes,
            } => {
                plain.cn = text(number);
                plain.ch = text(holder);
                plain.ce = text(expiry);
                plain.cc = text(code);
                plain.n = maybe(notes);
            }
            VaultValue::Env(vars) => {
                plain.e = vars.iter().map(|(k, v)| [k.clone(), text(v)]).collect();
            }
            VaultValue::Pass { url, pass, key } => {
                plain.pu = url.clone();
                plain.pi = pass.clone();
                plain.pk = maybe(key);
            }
        }
        plain
    }

    fn into_value(mut self, kind: Kind) -> VaultValue {
        let take = |s: &mut String| Secret::new(std::mem::take(s));
        match kind {
            Kind::Secret => VaultValue::Secret(take(&mut self.v)),
            Kind::Note => VaultValue::Note(take(&mut self.v)),
            Kind::Login => VaultValue::Login {
                username: take(&mut self.u),
                password: take(&mut self.p),
                totp: (!self.t.is_empty()).then(|| take(&mut self.t)),
                notes: (!self.n.is_empty()).then(|| take(&mut self.n)),
            },
            Kind::Card => VaultValue::Card {
                number: take(&mut self.cn),
                holder: take(&mut self.ch),
                expiry: take(&mut self.ce),
                code: take(&mut self.cc),
                notes: (!self.n.is_empty()).then(|| take(&mut self.n)),
            },
            Kind::Env => VaultValue::Env(
                self.e
                    .iter_mut()
                    .map(|[k, v]| (std::mem::take(k), take(v)))
                    .collect(),
            ),
            Kind::Pass => VaultValue::Pass {
                url: std::mem::take(&mut self.pu),
                pass: std::mem::take(&mut self.pi),
                key: (!self.pk.is_empty()).then(|| take(&mut self.pk)),
            },
        }
    }
}

/// Where the keys stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeyState {
    /// No key yet: one is made with the first item.
    Empty,
    /// Wrapped by a passphrase and not unlocked.
    Locked,
    Unlocked,
    /// Items exist but their key is not where it should be.
    KeyMissing,
    /// The key store itself cannot be reached (no keychain, an unreadable key file).
    KeystoreUnavailable,
}

struct Keys {
    ring: Option<KeyRing>,
    kek: Option<Kek>,
    /// Whether the stored document is wrapped by a passphrase.
    wrapped: bool,
    /// Why the keys could not be read, if they could not.
    problem: Option<String>,
}

/// Which step of a rotation to stop after, to test that an interrupted one loses nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopAfter {
    Nothing,
    /// The new key is stored beside the old one; no item is resealed.
    NewKeyStored,
    /// Every item is resealed with the new key; the old key is still stored.
    ItemsResealed,
}

/// An item to store ([`Vault::put_many`]).
pub struct NewItem {
    pub name: String,
    pub value: VaultValue,
    /// Replace the value of an existing item (its grants stay); otherwise one is refused.
    pub replace: bool,
    /// Its non-secret facts (`urls`); `None` keeps a replaced item's.
    pub meta: Option<serde_json::Value>,
}

/// An item sealed and ready for its row.
struct Row {
    name: String,
    kind: Kind,
    key_id: String,
    plain: Zeroizing<Vec<u8>>,
    kept: bool,
    replace: bool,
    meta: Option<String>,
    new_id: String,
}

pub struct Vault {
    ctx: Ctx,
    store: Arc<dyn KeyStore>,
    // tokio Mutex: held across key-store I/O and store writes, which are awaited.
    keys: Mutex<Keys>,
}

/// Run key-store I/O (a file, or the keychain's own client) on a blocking thread.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, VaultError> + Send + 'static,
) -> Result<T, VaultError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| VaultError::KeyStore(format!("the key store task failed: {e}")))?
}

impl Vault {
    /// Read the key store; unlock at once unless a passphrase wraps the keys. Finishes or undoes
    /// a rotation that was interrupted.
    pub async fn open(ctx: Ctx, store: Arc<dyn KeyStore>) -> Result<Arc<Vault>, VaultError> {
        let vault = Arc::new(Vault {
            ctx,
            store,
            keys: Mutex::new(Keys {
                ring: None,
                kek: None,
                wrapped: false,
                problem: None,
            }),
        });
        let loaded = {
            let store = vault.store.clone();
            blocking(move || store.load()).await
        };
        let mut keys = vault.keys.lock().await;
        match loaded {
            Ok(Some(doc)) => {
                keys.wrapped = doc.passphrase.is_some();
                if !keys.wrapped {
                    keys.ring = Some(doc.unlock(None)?);
                    vault.settle_rotation(&mut keys).await?;
                }
            }
            Ok(None) => {}
            Err(e) => {
                tracing::error!(error = %e, "the vault's key store cannot be read");
                keys.problem = Some(e.to_string());
            }
        }
        drop(keys);
        Ok(vault)
    }

    pub async fn is_wrapped(&self) -> bool {
        self.keys.lock().await.wrapped
    }

    pub fn location(&self) -> String {
        self.store.location()
    }

    pub async fn state(&self) -> Result<(KeyState, i64), VaultError> {
        let count = self.ctx.store().read(|c| Ok(items::count(c)?)).await?;
        let keys = self.keys.lock().await;
        let state = if keys.ring.is_some() {
            KeyState::Unlocked
        } else if keys.wrapped {
            KeyState::Locked
        } else if keys.problem.is_some() {
            KeyState::KeystoreUnavailable
        } else if count > 0 {
            KeyState::KeyMissing
        } else {
            KeyState::Empty
        };
        Ok((state, count))
    }

    /// The keys, or why they are not there. Makes the first key when the vault is empty.
    async fn ring(&self, keys: &mut Keys, create: bool) -> Result<KeyRing, VaultError> {
        if let Some(ring) = &keys.ring {
            return Ok(ring.clone());
        }
        if keys.wrapped {
            return Err(VaultError::Locked);
        }
        let count = self.ctx.store().read(|c| Ok(items::count(c)?)).await?;
        if let Some(problem) = &keys.problem {
            if count == 0 {
                return Err(VaultError::KeyStore(problem.clone()));
            }
            return Err(VaultError::KeyMissing {
                location: self.store.location(),
                items: count,
                why: problem.clone(),
            });
        }
        if count > 0 {
            return Err(VaultError::KeyMissing {
                location: self.store.location(),
                items: count,
                why: "no key is stored there".into(),
            });
        }
        if !create {
            return Err(VaultError::NotFound);
        }
        let ring = KeyRing::new()?;
        let doc = StoredKeys::from_ring(&ring, None)?;
        let store = self.store.clone();
        blocking(move || store.save(&doc)).await?;
        tracing::info!(location = %self.store.location(), "made the vault's master key");
        keys.ring = Some(ring.clone());
        Ok(ring)
    }

    /// Store an item. A second put of a name needs `replace`; a replaced item keeps its grants.
    pub async fn put(
        &self,
        name: &str,
        value: VaultValue,
        replace: bool,
    ) -> Result<bool, VaultError> {
        self.put_with(name, value, replace, None).await
    }

    /// [`Vault::put`], with the item's non-secret facts (`meta`, e.g. a login's `urls`) set
    /// too; `None` leaves a replaced item's as they were.
    pub async fn put_with(
        &self,
        name: &str,
        value: VaultValue,
        replace: bool,
        meta: Option<serde_json::Value>,
    ) -> Result<bool, VaultError> {
        let new = NewItem {
            name: name.to_string(),
            value,
            replace,
            meta,
        };
        Ok(self.put_many(vec![new]).await?.pop().unwrap_or(false))
    }

    /// Several items in one write, all or none (an import): whether each replaced one.
    pub async fn put_many(&self, new: Vec<NewItem>) -> Result<Vec<bool>, VaultError> {
        for n in &new {
            valid_item_name(&n.name)?;
        }
        let mut keys = self.keys.lock().await;
        let ring = self.ring(&mut keys, true).await?;
        let (ring_key_id, key) = ring.current.clone();
        let mut rows = Vec::with_capacity(new.len());
        for n in new {
            let plain = Zeroizing::new(
                serde_json::to_vec(&Plain::from_value(&n.value)).expect("serializes"),
            );
            // An item the key store keeps (Claude's credentials in the OS keychain) goes there
            // first; its row then carries no seal. A refused second put never reaches the store.
            let kept = self.store.keeps_item(&n.name);
            if kept {
                if !n.replace && self.exists(&n.name).await? {
                    return Err(VaultError::Exists(n.name));
                }
                let (store, item) = (self.store.clone(), n.name.clone());
                let contents = Zeroizing::new(String::from_utf8_lossy(&plain).into_owned());
                blocking(move || store.save_item(&item, &contents)).await?;
            }
            rows.push(Row {
                kind: n.value.kind(),
                key_id: if kept {
                    items::KEPT_BY_KEY_STORE.to_string()
                } else {
                    ring_key_id.clone()
                },
                name: n.name,
                plain,
                kept,
                replace: n.replace,
                meta: n.meta.map(|m| m.to_string()),
                new_id: new_item_id()?,
            });
        }
        let replaced = self
            .ctx
            .store()
            .write(move |tx| {
                let mut replaced = Vec::with_capacity(rows.len());
                for r in &rows {
                    let existing = items::sealed_by_name(tx.conn(), &r.name)?;
                    if existing.is_some() && !r.replace {
                        return Err(StoreError::Refused(format!("exists:{}", r.name)));
                    }
                    let id = existing
                        .as_ref()
                        .map(|e| e.id.clone())
                        .unwrap_or_else(|| r.new_id.clone());
                    let sealed = if r.kept {
                        Vec::new()
                    } else {
                        let aad = items::aad(&id, &r.name, r.kind.as_str(), &r.key_id);
                        seal::seal(&key, &r.plain, &aad).map_err(StoreError::Refused)?
                    };
                    let now = crate::now_ms();
                    tx.conn().execute(
                        "INSERT INTO vault_items (id, name, kind, key_id, sealed, meta, created_at, updated_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, COALESCE(?7, '{}'), ?6, ?6)
                         ON CONFLICT(id) DO UPDATE SET kind = excluded.kind, key_id = excluded.key_id,
                            sealed = excluded.sealed, updated_at = excluded.updated_at,
                            meta = COALESCE(?7, vault_items.meta)",
                        params![id, r.name, r.kind.as_str(), r.key_id, sealed, now, r.meta],
                    )?;
                    tx.emit(NewEvent::new(
                        "vault.stored",
                        serde_json::json!({ "item": r.name, "kind": r.kind.as_str(), "replaced": existing.is_some() }),
                    ))?;
                    replaced.push(existing.is_some());
                }
                Ok(replaced)
            })
            .await
            .map_err(|e| match e {
                StoreError::Refused(m) if m.starts_with("exists:") => VaultError::Exists(m[7..].to_string()),
                e => VaultError::Store(e),
            })?;
        Ok(replaced)
    }

    pub async fn list(&self) -> Result<Vec<items::ItemInfo>, VaultError> {
        Ok(self.ctx.store().read(|c| Ok(items::list(c)?)).await?)
    }

    async fn exists(&self, name: &str) -> Result<bool, VaultError> {
        let name = name.to_string();
        Ok(self
            .ctx
            .store()
            .read(move |c| Ok(items::sealed_by_name(c, &name)?.is_some()))
            .await?)
    }

    pub async fn delete(&self, name: &str) -> Result<(), VaultError> {
        let item = name.to_string();
        let deleted = self
            .ctx
            .store()
            .write(move |tx| {
                let Some(row) = items::sealed_by_name(tx.conn(), &item)? else {
                    return Ok(None);
                };
                tx.conn()
                    .execute("DELETE FROM vault_items WHERE id = ?1", [&row.id])?;
                tx.emit(NewEvent::new(
                    "vault.deleted",
                    serde_json::json!({ "item": item }),
                ))?;
                Ok(Some(row.key_id == items::KEPT_BY_KEY_STORE))
            })
            .await?;
        match deleted {
            None => Err(VaultError::NotFound),
            Some(false) => Ok(()),
            Some(true) => {
                let (store, item) = (self.store.clone(), name.to_string());
                blocking(move || store.delete_item(&item)).await
            }
        }
    }

    pub async fn grant(&self, name: &str, to: &Grantee, by: &str) -> Result<(), VaultError> {
        let (name, to, by) = (name.to_string(), to.to_string(), by.to_string());
        let found = self
            .ctx
            .store()
            .write(move |tx| {
                let Some(row) = items::sealed_by_name(tx.conn(), &name)? else {
                    return Ok(false);
                };
                let n = tx.conn().execute(
                    "INSERT OR IGNORE INTO vault_grants (item, grantee, granted_at, granted_by) VALUES (?1, ?2, ?3, ?4)",
                    params![row.id, to, crate::now_ms(), by],
                )?;
                if n > 0 {
                    tx.emit(NewEvent::new("vault.granted", serde_json::json!({ "item": name, "to": to })))?;
                }
                Ok(true)
            })
            .await?;
        if found {
            Ok(())
        } else {
            Err(VaultError::NotFound)
        }
    }

    pub async fn revoke(&self, name: &str, to: &Grantee) -> Result<bool, VaultError> {
        let (name, to) = (name.to_string(), to.to_string());
        let outcome = self
            .ctx
            .store()
            .write(move |tx| {
                let Some(row) = items::sealed_by_name(tx.conn(), &name)? else {
                    return Ok(None);
                };
                let n = tx.conn().execute(
                    "DELETE FROM vault_grants WHERE item = ?1 AND grantee = ?2",
                    params![row.id, to],
                )?;
                if n > 0 {
                    tx.emit(NewEvent::new(
                        "vault.revoked",
                        serde_json::json!({ "item": name, "to": to }),
                    ))?;
                }
                Ok(Some(n > 0))
            })
            .await?;
        outcome.ok_or(VaultError::NotFound)
    }

    /// Item `name`'s sealed row, when it exists and `grantee` holds a grant on it.
    async fn granted_row(&self, grantee: &Grantee, name: &str) -> Result<SealedRow, VaultError> {
        let who = grantee.to_string();
        let item = name.to_string();
        let (row, granted) = self
            .ctx
            .store()
            .read(move |c| {
                let Some(row) = items::sealed_by_name(c, &item)? else {
                    return Ok(None);
                };
                let granted = items::is_granted(c, &row.id, &who)?;
                Ok(Some((row, granted)))
            })
            .await?
            .ok_or(VaultError::NotFound)?;
        if !granted {
            return Err(VaultError::NotGranted {
                item: name.to_string(),
                grantee: grantee.to_string(),
            });
        }
        Ok(row)
    }

    /// Whether `grantee` could fetch item `name` (it exists and is granted), without opening
    /// anything: for a caller that must refuse early, before a person is asked to approve a use.
    pub async fn may_fetch(&self, grantee: &Grantee, name: &str) -> Result<Kind, VaultError> {
        let row = self.granted_row(grantee, name).await?;
        Kind::parse(&row.kind).ok_or_else(|| VaultError::Damaged(name.to_string()))
    }

    /// An item's value for a grantee that holds a grant on it.
    pub async fn fetch(&self, grantee: &Grantee, name: &str) -> Result<VaultValue, VaultError> {
        let row = self.granted_row(grantee, name).await?;
        if row.kind == Kind::Pass.as_str() && *grantee != Grantee::Module("gate".into()) {
            return Err(VaultError::PassOnlyForGate);
        }
        let ring = {
            let mut keys = self.keys.lock().await;
            self.ring(&mut keys, false).await?
        };
        let value = if row.key_id == items::KEPT_BY_KEY_STORE {
            self.open_kept(&row).await?
        } else {
            open_row(&ring, &row)?
        };
        let (id, by) = (row.id.clone(), grantee.to_string());
        let item = name.to_string();
        self.ctx
            .store()
            .write(move |tx| {
                tx.conn().execute(
                    "UPDATE vault_items SET last_used_at = ?1, last_used_by = ?2 WHERE id = ?3",
                    params![crate::now_ms(), by, id],
                )?;
                tx.emit(NewEvent::new(
                    "vault.used",
                    serde_json::json!({ "item": item, "by": by }),
                ))?;
                Ok(())
            })
            .await?;
        Ok(value)
    }
}

fn new_item_id() -> Result<String, VaultError> {
    Ok(format!("i{}", crate::kernel::ids::random_hex(8)))
}

/// Open one sealed row with the key it names.
fn open_row(ring: &KeyRing, row: &SealedRow) -> Result<VaultValue, VaultError> {
    let damaged = || VaultError::Damaged(row.name.clone());
    let kind = Kind::parse(&row.kind).ok_or_else(damaged)?;
    let key = ring
        .key(&row.key_id)
        .ok_or_else(|| VaultError::Damaged(row.name.clone()))?;
    let plain = seal::open(
        key,
        &row.sealed,
        &items::aad(&row.id, &row.name, &row.kind, &row.key_id),
    )
    .ok_or_else(damaged)?;
    let plain: Plain = serde_json::from_slice(&plain).map_err(|_| damaged())?;
    Ok(plain.into_value(kind))
}
