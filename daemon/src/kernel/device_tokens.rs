//! Devices: every HTTP caller is a device with a credential (spec 7.10, the API contract).
//!
//! A device token is shown once when it is issued and stored only as its SHA-256. Verification
//! is a lookup in an in-memory table kept in step with the store, so it costs no I/O per
//! request; revoking removes the entry at once and tells open event streams to close.
//!
//! A browser's device (kinds `browser` and `onboarding`) has a second secret, its key, also
//! kept only as a SHA-256: the cookie carries the token to any port of the host, so the token
//! alone proves nothing; only Vyre's own pages hold the key (ADR 0009).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use sha2::{Digest, Sha256};
use tokio::sync::broadcast;

use crate::kernel::events::NewEvent;
use crate::kernel::store::{Store, StoreError, WriteTx};
use crate::kernel::tools::ToolError;

/// A device as lists show it. Never carries the token.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DeviceRecord {
    pub id: String,
    pub name: String,
    pub kind: String,
    pub created_at: i64,
    pub last_seen_at: Option<i64>,
    pub revoked_at: Option<i64>,
}

/// A verified device behind a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceRef {
    pub id: String,
    pub name: String,
    /// `token` (a program's bearer credential), `vyre` (a paired Vyre's), `browser` (a cookie
    /// and a key), or `onboarding` (a browser that may reach only the onboarding until it
    /// finishes).
    pub kind: String,
    /// A browser's key, as its SHA-256; `None` for a program's device (and for a browser
    /// signed in before browsers had keys, which must sign in again).
    pub key_hash: Option<[u8; 32]>,
    /// A paired Vyre's public key, which checks the presence assertions it signs
    /// (`crate::kernel::presence`).
    pub public_key: Option<[u8; 32]>,
}

impl DeviceRef {
    /// Whether this is a browser's device: its token is good only with its key, never alone.
    pub fn is_browser(&self) -> bool {
        is_browser_kind(&self.kind)
    }

    /// Whether `key` is this browser's key, compared in constant time.
    pub fn key_matches(&self, key: &str) -> bool {
        use subtle::ConstantTimeEq;
        match &self.key_hash {
            Some(expected) => bool::from(hash_token(key).ct_eq(expected)),
            None => false,
        }
    }
}

/// Whether a device of this kind is a browser's (its token travels in a cookie).
pub fn is_browser_kind(kind: &str) -> bool {
    kind == BROWSER || kind == ONBOARDING
}

/// A browser's device before the onboarding finishes.
pub const ONBOARDING: &str = "onboarding";
/// A browser's device.
pub const BROWSER: &str = "browser";
/// A paired Vyre's device (the Mac's, on the box).
pub const PAIRED: &str = "vyre";
/// A device on the private network (a phone, a laptop): it is known by its WireGuard key and
/// the address only its tunnel carries, never by a token (`modules/network`, ADR 0018).
pub const NETWORK: &str = "network";

/// How often a device's last-seen time is written at most.
const SEEN_EVERY: Duration = Duration::from_secs(60);

/// Why a device credential was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CredentialError {
    #[error("the device credential is not valid or was revoked")]
    Invalid,
    #[error("a browser's credential works only from Vyre's own pages, never as a bearer token")]
    BrowserToken,
    #[error("a network device is known by its tunnel, never by a token")]
    NetworkToken,
}

/// What ending the onboarding did to the devices.
#[derive(Debug, Default)]
pub struct OnboardingEnded {
    /// The finishing browser, now a `browser`.
    pub promoted: Option<DeviceRecord>,
    /// The other onboarding devices, revoked.
    pub revoked: Vec<String>,
}

#[derive(Clone)]
pub struct Devices {
    store: Store,
    // std locks: held for a map lookup or insert, never across an await.
    active: Arc<RwLock<HashMap<[u8; 32], DeviceRef>>>,
    seen: Arc<Mutex<HashMap<String, Instant>>>,
    revoked: broadcast::Sender<String>,
}

pub fn hash_token(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn record(row: &rusqlite::Row<'_>) -> rusqlite::Result<DeviceRecord> {
    Ok(DeviceRecord {
        id: row.get(0)?,
        name: row.get(1)?,
        kind: row.get(2)?,
        created_at: row.get(3)?,
        last_seen_at: row.get(4)?,
        revoked_at: row.get(5)?,
    })
}

pub fn check_name(name: &str) -> Result<(), ToolError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 64 || name.chars().any(char::is_control) {
        return Err(ToolError::invalid(
            "a device name must be 1 to 64 characters with no control characters",
        ));
    }
    Ok(())
}

const COLUMNS: &str = "id, name, kind, created_at, last_seen_at, revoked_at";

impl Devices {
    /// Load the active devices from the store.
    pub async fn load(store: Store) -> Result<Devices, StoreError> {
        let rows = store
            .read(|conn| {
                let mut stmt = conn.prepare(
                    "SELECT token_hash, id, name, kind, key_hash, public_key FROM devices WHERE revoked_at IS NULL",
                )?;
                let rows = stmt.query_map([], |r| {
                    Ok((
                        r.get::<_, Vec<u8>>(0)?,
                        DeviceRef {
                            id: r.get(1)?,
                            name: r.get(2)?,
                            kind: r.get(3)?,
                            key_hash: r
                                .get::<_, Option<Vec<u8>>>(4)?
                                .and_then(|k| <[u8; 32]>::try_from(k).ok()),
                            public_key: r
                                .get::<_, Option<Vec<u8>>>(5)?
                                .and_then(|k| <[u8; 32]>::try_from(k).ok()),
                        },
                    ))
                })?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            })
            .await?;
        let active = rows
            .into_iter()
            .filter_map(|(hash, device)| Some((<[u8; 32]>::try_from(hash).ok()?, device)))
            .collect();
        let (revoked, _) = broadcast::channel(64);
        Ok(Devices {
            store,
            active: Arc::new(RwLock::new(active)),
            seen: Arc::new(Mutex::new(HashMap::new())),
            revoked,
        })
    }

    /// Issue a program's device credential (a bearer token). The token is returned once and
    /// never stored.
    pub async fn add(&self, name: &str, kind: &str) -> Result<(DeviceRecord, String), ToolError> {
        if is_browser_kind(kind) {
            return Err(ToolError::internal(format!(
                "a {kind} device is made with add_browser, with its key"
            )));
        }
        let (rec, token, _) = self.insert(name, kind, false, None).await?;
        Ok((rec, token))
    }

    /// Issue a paired Vyre's credential, keeping the public key its presence assertions are
    /// checked with.
    pub async fn add_paired(
        &self,
        name: &str,
        public_key: [u8; 32],
    ) -> Result<(DeviceRecord, String), ToolError> {
        let (rec, token, _) = self.insert(name, PAIRED, false, Some(public_key)).await?;
        Ok((rec, token))
    }

    /// Put a device on the private network: known by `public_key` (its WireGuard key). It gets
    /// no usable token: a request is its own only when it comes through its tunnel.
    pub async fn add_network(
        &self,
        name: &str,
        public_key: [u8; 32],
    ) -> Result<DeviceRecord, ToolError> {
        let (rec, _, _) = self.insert(name, NETWORK, false, Some(public_key)).await?;
        Ok(rec)
    }

    /// Issue a browser's device credential: the token (for its cookie) and its key (for Vyre's
    /// own pages), each returned once and stored only as a hash.
    pub async fn add_browser(
        &self,
        name: &str,
        kind: &str,
    ) -> Result<(DeviceRecord, String, String), ToolError> {
        if !is_browser_kind(kind) {
            return Err(ToolError::internal(format!(
                "a {kind} device is not a browser's"
            )));
        }
        let (rec, token, key) = self.insert(name, kind, true, None).await?;
        Ok((rec, token, key.expect("a browser's key")))
    }

    async fn insert(
        &self,
        name: &str,
        kind: &str,
        with_key: bool,
        public_key: Option<[u8; 32]>,
    ) -> Result<(DeviceRecord, String, Option<String>), ToolError> {
        check_name(name)?;
        let name = name.trim().to_string();
        let id = format!("d{}", crate::kernel::ids::random_hex(6));
        let token = format!("vyre_dev_{}", crate::kernel::ids::random_hex(32));
        let hash = hash_token(&token);
        let key = with_key.then(|| crate::kernel::ids::random_base64url(32));
        let key_hash = key.as_deref().map(hash_token);
        let at = crate::now_ms();
        let rec = DeviceRecord {
            id: id.clone(),
            name: name.clone(),
            kind: kind.to_string(),
            created_at: at,
            last_seen_at: None,
            revoked_at: None,
        };
        let kind = kind.to_string();
        self.store
            .write_as("devices", move |tx| {
                tx.conn().execute(
                    "INSERT INTO devices (id, name, kind, token_hash, created_at, key_hash, public_key) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![id, name, kind, hash.to_vec(), at, key_hash.map(|k| k.to_vec()), public_key.map(|k| k.to_vec())],
                )?;
                tx.emit(NewEvent::new(
                    "device.added",
                    serde_json::json!({ "device": id, "name": name, "kind": kind }),
                ))?;
                Ok(())
            })
            .await?;
        self.active.write().expect("devices").insert(
            hash,
            DeviceRef {
                id: rec.id.clone(),
                name: rec.name.clone(),
                kind: rec.kind.clone(),
                key_hash,
                public_key,
            },
        );
        Ok((rec, token, key))
    }

    pub async fn list(&self) -> Result<Vec<DeviceRecord>, ToolError> {
        Ok(self
            .store
            .read(|conn| {
                let mut stmt = conn.prepare(&format!(
                    "SELECT {COLUMNS} FROM devices ORDER BY created_at, id"
                ))?;
                let rows = stmt.query_map([], record)?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            })
            .await?)
    }

    /// Revoke a device: its token is refused from now on and its event streams close.
    pub async fn revoke(&self, id: &str) -> Result<DeviceRecord, ToolError> {
        let id = id.to_string();
        let at = crate::now_ms();
        let rec = self
            .store
            .write_as("devices", move |tx| {
                let found = tx
                    .conn()
                    .query_row(
                        &format!("SELECT {COLUMNS} FROM devices WHERE id = ?1"),
                        [&id],
                        record,
                    )
                    .optional()?;
                let Some(mut rec) = found else {
                    return Ok(None);
                };
                if rec.revoked_at.is_none() {
                    tx.conn().execute(
                        "UPDATE devices SET revoked_at = ?1 WHERE id = ?2",
                        params![at, id],
                    )?;
                    tx.emit(NewEvent::new(
                        "device.revoked",
                        serde_json::json!({ "device": id, "name": rec.name }),
                    ))?;
                    rec.revoked_at = Some(at);
                }
                Ok(Some(rec))
            })
            .await?;
        let Some(rec) = rec else {
            return Err(ToolError::not_found(
                "unknown_device",
                "there is no device with that id",
            ));
        };
        self.forget(&rec.id);
        Ok(rec)
    }

    /// Drop a revoked device from the active table and close its event streams.
    fn forget(&self, id: &str) {
        self.active
            .write()
            .expect("devices")
            .retain(|_, d| d.id != id);
        let _ = self.revoked.send(id.to_string());
    }

    /// The device a bearer token belongs to: a program's device, valid and not revoked. A
    /// browser's token is never a bearer token (it is good only with its key).
    pub fn verify_bearer(&self, token: &str) -> Result<DeviceRef, CredentialError> {
        let device = self.find(token).ok_or(CredentialError::Invalid)?;
        if device.is_browser() {
            return Err(CredentialError::BrowserToken);
        }
        if device.kind == NETWORK {
            return Err(CredentialError::NetworkToken);
        }
        self.touch(&device.id);
        Ok(device)
    }

    /// The browser a cookie's token and the page's key belong to: both must be this device's,
    /// the key compared in constant time. A program's token in a cookie has no key.
    pub fn verify_browser(&self, token: &str, key: &str) -> Result<DeviceRef, CredentialError> {
        match self.find(token) {
            Some(device) if device.kind != NETWORK && device.key_matches(key) => {
                self.touch(&device.id);
                Ok(device)
            }
            _ => Err(CredentialError::Invalid),
        }
    }

    fn find(&self, token: &str) -> Option<DeviceRef> {
        self.active
            .read()
            .expect("devices")
            .get(&hash_token(token))
            .cloned()
    }

    /// End the onboarding's devices inside `tx` (the transaction that makes the owner): the
    /// finishing browser's device, when given, becomes a `browser` (renamed when a name is
    /// given); every other `onboarding` device is revoked. Call [`Devices::onboarding_ended`]
    /// with the answer once the transaction committed.
    pub fn end_onboarding_in(
        tx: &mut WriteTx<'_>,
        keep: Option<(&str, Option<&str>)>,
        now: i64,
    ) -> Result<OnboardingEnded, StoreError> {
        let mut ended = OnboardingEnded::default();
        if let Some((id, name)) = keep {
            let name = name.map(|n| n.trim().to_string());
            tx.conn().execute(
                "UPDATE devices SET kind = ?2, name = COALESCE(?3, name) WHERE id = ?1 AND kind = ?4 AND revoked_at IS NULL",
                params![id, BROWSER, name, ONBOARDING],
            )?;
            let rec = tx
                .conn()
                .query_row(
                    &format!("SELECT {COLUMNS} FROM devices WHERE id = ?1 AND kind = ?2 AND revoked_at IS NULL"),
                    params![id, BROWSER],
                    record,
                )
                .optional()?;
            if let Some(rec) = &rec {
                tx.emit(NewEvent::new(
                    "device.changed",
                    serde_json::json!({ "device": rec.id, "name": rec.name, "kind": rec.kind }),
                ))?;
            }
            ended.promoted = rec;
        }
        let leftover: Vec<(String, String)> = {
            let mut stmt = tx
                .conn()
                .prepare("SELECT id, name FROM devices WHERE kind = ?1 AND revoked_at IS NULL")?;
            let rows = stmt.query_map([ONBOARDING], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        for (id, name) in leftover {
            tx.conn().execute(
                "UPDATE devices SET revoked_at = ?1 WHERE id = ?2",
                params![now, id],
            )?;
            tx.emit(NewEvent::new(
                "device.revoked",
                serde_json::json!({ "device": id, "name": name, "why": "onboarding_over" }),
            ))?;
            ended.revoked.push(id);
        }
        Ok(ended)
    }

    /// Bring the active table in step with [`Devices::end_onboarding_in`]'s committed changes.
    pub fn onboarding_ended(&self, ended: &OnboardingEnded) {
        if let Some(rec) = &ended.promoted {
            for device in self.active.write().expect("devices").values_mut() {
                if device.id == rec.id {
                    device.kind = rec.kind.clone();
                    device.name = rec.name.clone();
                }
            }
        }
        for id in &ended.revoked {
            self.forget(id);
        }
    }

    /// The active device with this id.
    pub fn active(&self, id: &str) -> Option<DeviceRef> {
        self.active
            .read()
            .expect("devices")
            .values()
            .find(|d| d.id == id)
            .cloned()
    }

    /// Whether the device is still active (for long-lived streams).
    pub fn is_active(&self, id: &str) -> bool {
        self.active
            .read()
            .expect("devices")
            .values()
            .any(|d| d.id == id)
    }

    /// Ids of devices as they are revoked.
    pub fn revocations(&self) -> broadcast::Receiver<String> {
        self.revoked.subscribe()
    }

    /// Record that a device was seen, at most once a minute per device.
    pub fn touch(&self, id: &str) {
        let now = Instant::now();
        {
            let mut seen = self.seen.lock().expect("devices seen");
            if seen
                .get(id)
                .is_some_and(|t| now.duration_since(*t) < SEEN_EVERY)
            {
                return;
            }
            seen.insert(id.to_string(), now);
        }
        let store = self.store.clone();
        let id = id.to_string();
        tokio::spawn(async move {
            let at = crate::now_ms();
            let _ = store
                .write(move |tx| {
                    tx.conn().execute(
                        "UPDATE devices SET last_seen_at = ?1 WHERE id = ?2",
                        params![at, id],
                    )?;
                    Ok(())
                })
                .await;
        });
    }
}
