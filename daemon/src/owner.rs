//! The owner: the one person this vyred belongs to, made when the onboarding finishes. Until
//! then a browser can reach nothing but the onboarding.

use std::sync::{Arc, RwLock};

use rusqlite::OptionalExtension;
use serde::Serialize;

use crate::events::NewEvent;
use crate::store::{Store, StoreError};

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct OwnerRecord {
    pub name: String,
    pub created_at: i64,
}

#[derive(Clone)]
pub struct Owner {
    store: Store,
    // std lock: read on every browser request, written once at the onboarding's end.
    cached: Arc<RwLock<Option<OwnerRecord>>>,
}

impl Owner {
    pub async fn load(store: Store) -> Result<Owner, StoreError> {
        let found = store
            .read(|c| {
                Ok(
                    c.query_row("SELECT name, created_at FROM owner WHERE id = 1", [], |r| {
                        Ok(OwnerRecord {
                            name: r.get(0)?,
                            created_at: r.get(1)?,
                        })
                    })
                    .optional()?,
                )
            })
            .await?;
        Ok(Owner {
            store,
            cached: Arc::new(RwLock::new(found)),
        })
    }

    pub fn get(&self) -> Option<OwnerRecord> {
        self.cached.read().expect("owner").clone()
    }

    pub fn exists(&self) -> bool {
        self.cached.read().expect("owner").is_some()
    }

    /// Make the owner, or give the one there is this name.
    pub async fn set(&self, name: &str) -> Result<OwnerRecord, StoreError> {
        let name = name.to_string();
        let now = crate::now_ms();
        let rec = self
            .store
            .write_as("onboarding", move |tx| {
                let created = tx.conn().execute(
                    "INSERT INTO owner (id, name, created_at) VALUES (1, ?1, ?2)
                     ON CONFLICT(id) DO UPDATE SET name = excluded.name",
                    rusqlite::params![name, now],
                )?;
                let rec = tx.conn().query_row(
                    "SELECT name, created_at FROM owner WHERE id = 1",
                    [],
                    |r| {
                        Ok(OwnerRecord {
                            name: r.get(0)?,
                            created_at: r.get(1)?,
                        })
                    },
                )?;
                if created > 0 {
                    tx.emit(NewEvent::new(
                        "owner.set",
                        serde_json::json!({ "name": rec.name }),
                    ))?;
                }
                Ok(rec)
            })
            .await?;
        *self.cached.write().expect("owner") = Some(rec.clone());
        Ok(rec)
    }
}
