//! The owner: the one person this vyred belongs to, made when the onboarding finishes. Until
//! then a browser can reach nothing but the onboarding.

mod end;

pub use end::{Ended, end_onboarding};

use std::sync::{Arc, RwLock};

use rusqlite::OptionalExtension;
use serde::Serialize;

use crate::kernel::events::NewEvent;
use crate::kernel::store::{Store, StoreError, WriteTx};

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

    /// Make the owner inside `tx` (the transaction that ends the onboarding): `None` when
    /// there is one already, and then nothing is written. Call [`Owner::made`] after the commit.
    pub fn create_in(
        tx: &mut WriteTx<'_>,
        name: &str,
        now: i64,
    ) -> Result<Option<OwnerRecord>, StoreError> {
        let exists = tx
            .conn()
            .query_row("SELECT 1 FROM owner WHERE id = 1", [], |_| Ok(()))
            .optional()?
            .is_some();
        if exists {
            return Ok(None);
        }
        tx.conn().execute(
            "INSERT INTO owner (id, name, created_at) VALUES (1, ?1, ?2)",
            rusqlite::params![name, now],
        )?;
        tx.emit(NewEvent::new(
            "owner.set",
            serde_json::json!({ "name": name }),
        ))?;
        Ok(Some(OwnerRecord {
            name: name.to_string(),
            created_at: now,
        }))
    }

    /// Remember the owner [`Owner::create_in`] made, once its transaction committed.
    pub fn made(&self, rec: OwnerRecord) {
        *self.cached.write().expect("owner") = Some(rec);
    }

    /// Give the owner there is a new name (Settings); `None` when there is no owner yet.
    pub async fn rename(&self, name: &str) -> Result<Option<OwnerRecord>, StoreError> {
        let name = name.to_string();
        let rec = self
            .store
            .write_as("onboarding", move |tx| {
                let changed = tx
                    .conn()
                    .execute("UPDATE owner SET name = ?1 WHERE id = 1", [&name])?;
                if changed == 0 {
                    return Ok(None);
                }
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
                tx.emit(NewEvent::new(
                    "owner.renamed",
                    serde_json::json!({ "name": rec.name }),
                ))?;
                Ok(Some(rec))
            })
            .await?;
        if let Some(rec) = &rec {
            *self.cached.write().expect("owner") = Some(rec.clone());
        }
        Ok(rec)
    }
}
