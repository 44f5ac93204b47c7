//! Numbered migrations, one list per namespace (the kernel, then each module).
//!
//! Applied versions are kept in `kernel_migrations`. Each migration runs in its own
//! transaction with its version bump, so a failure leaves the database at the previous version.

use rusqlite::{Connection, params};

/// One migration: its number (1, 2, 3 ...) and the SQL to run.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    pub version: u32,
    pub sql: &'static str,
}

#[derive(Debug, thiserror::Error)]
pub enum MigrationError {
    #[error(
        "migrations of {namespace} must be numbered 1, 2, 3 ... in order (found {found} where {expected} was due)"
    )]
    BadNumbering {
        namespace: String,
        found: u32,
        expected: u32,
    },
    #[error(
        "the database has {namespace} at version {found}, newer than this vyred knows ({known}); upgrade vyre"
    )]
    TooNew {
        namespace: String,
        found: u32,
        known: u32,
    },
    #[error("migration {version} of {namespace} failed: {source}")]
    Failed {
        namespace: String,
        version: u32,
        source: rusqlite::Error,
    },
    #[error(
        "migration {version} of {namespace} touches {object:?}: a module's tables must be named {namespace}_..."
    )]
    OutsideNamespace {
        namespace: String,
        version: u32,
        object: String,
    },
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
}

const BOOKKEEPING: &str = "CREATE TABLE IF NOT EXISTS kernel_migrations (
    namespace TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    at INTEGER NOT NULL
)";

/// The version `namespace` is at (0 when never migrated).
pub fn current_version(conn: &Connection, namespace: &str) -> Result<u32, MigrationError> {
    conn.execute_batch(BOOKKEEPING)?;
    let version = conn
        .query_row(
            "SELECT version FROM kernel_migrations WHERE namespace = ?1",
            [namespace],
            |row| row.get::<_, u32>(0),
        )
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(0),
            e => Err(e),
        })?;
    Ok(version)
}

/// Bring `namespace` up to the last of `migrations`. Returns how many were applied.
pub fn migrate(
    conn: &mut Connection,
    namespace: &str,
    migrations: &[Migration],
) -> Result<usize, MigrationError> {
    for (i, m) in migrations.iter().enumerate() {
        let expected = i as u32 + 1;
        if m.version != expected {
            return Err(MigrationError::BadNumbering {
                namespace: namespace.into(),
                found: m.version,
                expected,
            });
        }
        if namespace != "kernel"
            && let Some(object) = created_outside(namespace, m.sql)
        {
            return Err(MigrationError::OutsideNamespace {
                namespace: namespace.into(),
                version: m.version,
                object,
            });
        }
    }
    let current = current_version(conn, namespace)?;
    let known = migrations.len() as u32;
    if current > known {
        return Err(MigrationError::TooNew {
            namespace: namespace.into(),
            found: current,
            known,
        });
    }
    let mut applied = 0;
    for m in &migrations[current as usize..] {
        let failed = |source| MigrationError::Failed {
            namespace: namespace.into(),
            version: m.version,
            source,
        };
        let tx = conn.transaction().map_err(failed)?;
        tx.execute_batch(m.sql).map_err(failed)?;
        tx.execute(
            "INSERT INTO kernel_migrations (namespace, version, at) VALUES (?1, ?2, ?3)
             ON CONFLICT(namespace) DO UPDATE SET version = excluded.version, at = excluded.at",
            params![namespace, m.version, crate::now_ms()],
        )
        .map_err(failed)?;
        tx.commit().map_err(failed)?;
        applied += 1;
    }
    Ok(applied)
}

/// The first object a migration creates, alters or drops whose name lacks the namespace prefix.
fn created_outside(namespace: &str, sql: &str) -> Option<String> {
    let prefix = format!("{namespace}_");
    let words: Vec<String> = sql
        .split(|c: char| c.is_whitespace() || c == '(' || c == ';')
        .filter(|w| !w.is_empty())
        .map(|w| w.trim_matches(|c| c == '"' || c == '`').to_string())
        .collect();
    let mut i = 0;
    while i < words.len() {
        let w = words[i].to_ascii_uppercase();
        if matches!(w.as_str(), "TABLE" | "INDEX" | "VIEW" | "TRIGGER")
            && i > 0
            && matches!(
                words[i - 1].to_ascii_uppercase().as_str(),
                "CREATE" | "ALTER" | "DROP" | "VIRTUAL" | "UNIQUE" | "TEMP" | "TEMPORARY"
            )
        {
            let mut j = i + 1;
            while j < words.len()
                && matches!(
                    words[j].to_ascii_uppercase().as_str(),
                    "IF" | "NOT" | "EXISTS"
                )
            {
                j += 1;
            }
            if let Some(name) = words.get(j) {
                let name = name.rsplit('.').next().unwrap_or(name);
                if !name.starts_with(&prefix) {
                    return Some(name.to_string());
                }
            }
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_prefix_is_enforced() {
        assert_eq!(
            created_outside("notes", "CREATE TABLE notes_items (id INTEGER)"),
            None
        );
        assert_eq!(
            created_outside(
                "notes",
                "CREATE TABLE IF NOT EXISTS notes_a(x); CREATE INDEX idx ON notes_a(x)"
            ),
            Some("idx".into())
        );
        assert_eq!(
            created_outside("notes", "create virtual table events using fts5(x)"),
            Some("events".into())
        );
        assert_eq!(
            created_outside("notes", "DROP TABLE IF EXISTS \"notes_old\""),
            None
        );
        assert_eq!(
            created_outside("notes", "ALTER TABLE devices ADD COLUMN x"),
            Some("devices".into())
        );
    }
}
