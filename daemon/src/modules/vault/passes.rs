//! Passes this Vyre gave (ADR 0036): which item, to whom, relayed or sealed, when revoked, and
//! every use of a relayed one (where the Gate sent it). A relayed pass's token is kept only as
//! its SHA-256, and the Vyre that took it by its public key; nothing here is secret.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

/// How a pass shares its item.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PassKind {
    /// The value never leaves this Vyre: the other side's requests come through this Gate, and
    /// a revoke ends them at once.
    Relayed,
    /// An encrypted copy for the other side's Vyre: a revoke cannot take it back, so the value
    /// must be rotated.
    Sealed,
}

impl PassKind {
    fn as_str(self) -> &'static str {
        match self {
            PassKind::Relayed => "relayed",
            PassKind::Sealed => "sealed",
        }
    }
    fn parse(s: &str) -> PassKind {
        if s == "sealed" {
            PassKind::Sealed
        } else {
            PassKind::Relayed
        }
    }
}

/// A pass as `vault.pass.list` shows it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PassInfo {
    pub id: String,
    /// The item it shares: its name now, or as it was when the pass was made if it is gone.
    pub item: String,
    /// Who it was given to.
    pub to: String,
    pub kind: PassKind,
    pub created_at: i64,
    pub created_by: String,
    pub revoked_at: Option<i64>,
    /// When the other Vyre accepted it (a relayed pass; it is bound to that Vyre from then on).
    pub taken_at: Option<i64>,
    /// Requests the Gate sent with it (relayed passes).
    pub uses: i64,
    pub last_used_at: Option<i64>,
}

/// One place a relayed pass's item was sent, and how often.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Use {
    /// `METHOD https://host/path` as the Gate sent it.
    pub destination: String,
    pub count: i64,
    pub last_at: i64,
}

pub struct NewPass<'a> {
    pub id: &'a str,
    pub item_id: &'a str,
    pub item_name: &'a str,
    pub to: &'a str,
    pub kind: PassKind,
    pub token_hash: Option<&'a [u8]>,
    pub by: &'a str,
}

pub fn add(conn: &Connection, p: &NewPass<'_>) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO vault_passes
             (id, item, item_name, to_person, kind, token_hash, created_at, created_by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            p.id,
            p.item_id,
            p.item_name,
            p.to,
            p.kind.as_str(),
            p.token_hash,
            crate::now_ms(),
            p.by
        ],
    )?;
    Ok(())
}

const SELECT: &str =
    "SELECT p.id, COALESCE(i.name, p.item_name), p.to_person, p.kind, p.created_at, p.created_by,
        p.revoked_at, (SELECT COUNT(*) FROM vault_pass_uses u WHERE u.pass = p.id),
        (SELECT MAX(at) FROM vault_pass_uses u WHERE u.pass = p.id), p.taken_at
    FROM vault_passes p LEFT JOIN vault_items i ON i.id = p.item";

fn info(r: &rusqlite::Row<'_>) -> rusqlite::Result<PassInfo> {
    Ok(PassInfo {
        id: r.get(0)?,
        item: r.get(1)?,
        to: r.get(2)?,
        kind: PassKind::parse(&r.get::<_, String>(3)?),
        created_at: r.get(4)?,
        created_by: r.get(5)?,
        revoked_at: r.get(6)?,
        uses: r.get(7)?,
        last_used_at: r.get(8)?,
        taken_at: r.get(9)?,
    })
}

/// Every pass, newest first.
pub fn list(conn: &Connection) -> rusqlite::Result<Vec<PassInfo>> {
    let mut stmt = conn.prepare(&format!("{SELECT} ORDER BY p.created_at DESC, p.id"))?;
    let rows = stmt.query_map([], info)?;
    rows.collect()
}

pub fn get(conn: &Connection, id: &str) -> rusqlite::Result<Option<PassInfo>> {
    conn.query_row(&format!("{SELECT} WHERE p.id = ?1"), [id], info)
        .optional()
}

/// The passes given to `person` that still stand.
pub fn standing_for(conn: &Connection, person: &str) -> rusqlite::Result<Vec<PassInfo>> {
    let mut stmt = conn.prepare(&format!(
        "{SELECT} WHERE p.to_person = ?1 AND p.revoked_at IS NULL ORDER BY p.created_at, p.id"
    ))?;
    let rows = stmt.query_map([person], info)?;
    rows.collect()
}

/// Revoke one; false when it was revoked already (or is not there).
pub fn revoke(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    let n = conn.execute(
        "UPDATE vault_passes SET revoked_at = ?1 WHERE id = ?2 AND revoked_at IS NULL",
        params![crate::now_ms(), id],
    )?;
    Ok(n == 1)
}

/// A relayed pass that stands: its item's id and name then, the person, the token's hash and
/// the key of the Vyre that took it.
pub struct Standing {
    pub item_id: Option<String>,
    pub item_name: String,
    pub to: String,
    pub token_hash: Vec<u8>,
    pub taker_key: Option<Vec<u8>>,
}

pub fn standing(conn: &Connection, id: &str) -> rusqlite::Result<Option<Standing>> {
    conn.query_row(
        "SELECT i.id, p.item_name, p.to_person, p.token_hash, p.taker_key FROM vault_passes p
             LEFT JOIN vault_items i ON i.id = p.item
         WHERE p.id = ?1 AND p.kind = 'relayed' AND p.revoked_at IS NULL
           AND p.token_hash IS NOT NULL",
        [id],
        |r| {
            Ok(Standing {
                item_id: r.get(0)?,
                item_name: r.get(1)?,
                to: r.get(2)?,
                token_hash: r.get(3)?,
                taker_key: r.get(4)?,
            })
        },
    )
    .optional()
}

/// Bind a standing relayed pass to the key of the Vyre that took it; false when it was taken
/// already (a pass is taken once).
pub fn bind(conn: &Connection, id: &str, key: &[u8]) -> rusqlite::Result<bool> {
    let n = conn.execute(
        "UPDATE vault_passes SET taker_key = ?1, taken_at = ?2
         WHERE id = ?3 AND kind = 'relayed' AND revoked_at IS NULL AND taker_key IS NULL",
        params![key, crate::now_ms(), id],
    )?;
    Ok(n == 1)
}

/// What keeping a signed request's nonce found.
#[derive(Debug, PartialEq, Eq)]
pub enum Nonce {
    /// New: kept until `until`.
    Kept,
    /// Seen on this pass within the window: the request is a replay.
    Seen,
    /// The pass carried `max` requests within the window already.
    Full,
}

/// Keep `nonce` for `pass` until `until` (ms), forgetting every nonce whose window closed
/// before `now`: a request's time must be within its window, so one out of it is refused by its
/// time instead. Run inside a write, so two copies of one request cannot both be kept.
pub fn keep_nonce(
    conn: &Connection,
    pass: &str,
    nonce: &str,
    until: i64,
    now: i64,
    max: usize,
) -> rusqlite::Result<Nonce> {
    conn.execute("DELETE FROM vault_pass_nonces WHERE until_ms < ?1", [now])?;
    let seen: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM vault_pass_nonces WHERE pass = ?1 AND nonce = ?2)",
        [pass, nonce],
        |r| r.get(0),
    )?;
    if seen {
        return Ok(Nonce::Seen);
    }
    let recent: i64 = conn.query_row(
        "SELECT COUNT(*) FROM vault_pass_nonces WHERE pass = ?1",
        [pass],
        |r| r.get(0),
    )?;
    if recent >= max as i64 {
        return Ok(Nonce::Full);
    }
    conn.execute(
        "INSERT INTO vault_pass_nonces (pass, nonce, until_ms) VALUES (?1, ?2, ?3)",
        params![pass, nonce, until],
    )?;
    Ok(Nonce::Kept)
}

pub fn record_use(conn: &Connection, pass: &str, destination: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO vault_pass_uses (pass, at, destination) VALUES (?1, ?2, ?3)",
        params![pass, crate::now_ms(), destination],
    )?;
    Ok(())
}

/// Where a pass's item was sent, most recent first.
pub fn uses(conn: &Connection, pass: &str) -> rusqlite::Result<Vec<Use>> {
    let mut stmt = conn.prepare(
        "SELECT destination, COUNT(*), MAX(at) FROM vault_pass_uses WHERE pass = ?1
         GROUP BY destination ORDER BY MAX(at) DESC",
    )?;
    let rows = stmt.query_map([pass], |r| {
        Ok(Use {
            destination: r.get(0)?,
            count: r.get(1)?,
            last_at: r.get(2)?,
        })
    })?;
    rows.collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> Connection {
        let mut c = Connection::open_in_memory().unwrap();
        crate::kernel::store::migrate(&mut c, "vault", super::super::items::MIGRATIONS).unwrap();
        c
    }

    #[test]
    fn a_nonce_is_kept_once_per_pass_until_its_window_closes() {
        let c = conn();
        let now = 1_000_000;
        assert_eq!(
            keep_nonce(&c, "p1", "n1", now + 10, now, 3).unwrap(),
            Nonce::Kept
        );
        // Sent again: seen, however soon.
        assert_eq!(
            keep_nonce(&c, "p1", "n1", now + 10, now + 1, 3).unwrap(),
            Nonce::Seen
        );
        // The same nonce on another pass is another request.
        assert_eq!(
            keep_nonce(&c, "p2", "n1", now + 10, now, 3).unwrap(),
            Nonce::Kept
        );
        // A pass carries at most `max` within a window.
        assert_eq!(
            keep_nonce(&c, "p1", "n2", now + 20, now, 2).unwrap(),
            Nonce::Kept
        );
        assert_eq!(
            keep_nonce(&c, "p1", "n3", now + 20, now, 2).unwrap(),
            Nonce::Full
        );
        // Once n1's window closed it is forgotten (its time refuses it instead), and room is
        // made for new ones.
        assert_eq!(
            keep_nonce(&c, "p1", "n3", now + 30, now + 11, 2).unwrap(),
            Nonce::Kept
        );
        let left: i64 = c
            .query_row("SELECT COUNT(*) FROM vault_pass_nonces", [], |r| r.get(0))
            .unwrap();
        assert_eq!(left, 2, "n1 on both passes dropped, n2 and n3 kept");
    }
}
