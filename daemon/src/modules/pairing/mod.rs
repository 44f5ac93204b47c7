//! Pairing (spec section 1): the Mac's Vyre pairs with a box by a code a person reads on the
//! box (`pairing.code`) and types on the Mac (`pairing.add`). The box makes a device for the Mac
//! (kind `vyre`, revocable there like any device); the Mac keeps its token in its vault (item
//! `box-<id>`, so the keychain on a Mac) and a record of the box. Either side can end it:
//! `pairing.remove` on the Mac revokes its device on the box and forgets the token; revoking the
//! device on the box shows up on the Mac as `revoked`.
//!
//! What pairing is for (spec section 3, `link`): the Mac calls the box's tools through one
//! place, `ctx.remote()` and `pairing.call` ([`remote`]), as its device there, vouching with a
//! signed presence assertion when a person here made the call; and it follows the box's events
//! and republishes those about threads and asks as `pairing.box_event` ([`follow`]). The box
//! calls this machine the other way, down that same stream ([`serve`]). Each side serves the
//! other only the tools its own `link.allow` lists.

mod follow;
mod remote;
mod serve;

use std::net::SocketAddr;
use std::time::Duration;

use hyper::Method;
use rusqlite::{OptionalExtension, params};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::kernel::events::NewEvent;
use crate::kernel::module::{Ctx, Module, StartFuture, ToolDef};
use crate::kernel::store::Migration;
use crate::kernel::tools::{ErrorKind, NoInput, ToolError};
use crate::surfaces::client::Client;

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        sql: "CREATE TABLE pairing_boxes (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        address TEXT NOT NULL,
        device TEXT NOT NULL,
        item TEXT NOT NULL,
        created_at INTEGER NOT NULL
    );",
    },
    Migration {
        version: 2,
        // What the box calls itself, from its answer to the pairing.
        sql: "ALTER TABLE pairing_boxes ADD COLUMN box_name TEXT;",
    },
    Migration {
        version: 3,
        // The last of the box's events republished here (`follow`).
        sql: "ALTER TABLE pairing_boxes ADD COLUMN cursor INTEGER;",
    },
];

/// How long a pairing code works.
pub const CODE_TTL: Duration = Duration::from_secs(600);
/// How long a call to the other Vyre may take.
const REMOTE: Duration = Duration::from_secs(10);

pub struct PairingModule;

#[derive(Serialize, JsonSchema)]
pub struct Code {
    /// Type it on the Mac (`vyre pairing add <address> <code>`); it works once, for ten minutes.
    code: String,
    expires_at: i64,
    /// This Vyre's HTTP address, as the Mac must reach it (through `ssh -L` until the private
    /// network exists).
    address: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddInput {
    /// The box's address, `host:port` (e.g. `127.0.0.1:4477` through an `ssh -L` tunnel).
    #[schemars(pattern(crate::kernel::tools::shape::SOCKET_ADDRESS))]
    address: String,
    /// The code `vyre pairing code` printed on the box.
    code: String,
    /// What the box calls this machine (default: its host name).
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveInput {
    /// The pairing's id, from pairing.list.
    id: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Paired {
    id: String,
    /// What the box calls itself (its host name).
    box_name: Option<String>,
    /// What the box calls this machine.
    name: String,
    address: String,
    /// This machine's device id on the box.
    device: String,
    created_at: i64,
    /// `paired`, `revoked` (the box revoked this machine's device) or `unreachable`; only in
    /// listings.
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<String>,
    /// Whether this machine follows the box's events now (`up`), cannot reach it (`down`), or
    /// was revoked there; only in listings, once the link has tried.
    #[serde(skip_serializing_if = "Option::is_none")]
    link: Option<follow::LinkState>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallInput {
    /// The pairing to call through (pairing.list); optional when there is only one.
    #[serde(default, rename = "box")]
    #[schemars(length(min = 1, max = 64))]
    target: Option<String>,
    /// On the box: the device of a Vyre paired with it (devices.list, kind `vyre`), to call a
    /// tool on that Vyre (the Mac) down the link it holds open; instead of `box`.
    #[serde(default)]
    #[schemars(length(min = 1, max = 64))]
    device: Option<String>,
    /// The other Vyre's tool, e.g. `threads.list`; it serves only those its `link.allow` lists.
    #[schemars(pattern(crate::kernel::tools::shape::TOOL_NAME))]
    tool: String,
    /// The tool's input.
    #[serde(default)]
    input: serde_json::Map<String, serde_json::Value>,
}

#[derive(Serialize, JsonSchema)]
pub struct Unpaired {
    /// The calling Vyre's device here, now revoked.
    device: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Removed {
    id: String,
    /// Whether this machine's device is revoked on the box (now, or by the box before); false
    /// only when the box could not be reached: revoke it there with `vyre devices revoke`.
    revoked_on_box: bool,
    device: String,
}

/// `http://127.0.0.1:4477/` or `127.0.0.1:4477` → the socket address.
pub fn parse_address(text: &str) -> Result<SocketAddr, ToolError> {
    let bare = text
        .trim()
        .trim_start_matches("http://")
        .trim_end_matches('/');
    bare.parse().map_err(|_| {
        ToolError::invalid(format!(
            "{text:?} is not an address: give host:port with an IP, e.g. 127.0.0.1:4477 (names come with the private network)"
        ))
    })
}

pub(crate) fn unreachable(address: &str, why: &str) -> ToolError {
    ToolError::new(
        ErrorKind::Conflict,
        "box_unreachable",
        format!(
            "the box at {address} did not answer ({why}); check that Vyre runs on the box and that the tunnel to it is open"
        ),
    )
}

/// Why a call to the box failed, in words about the box (not this machine's own vyred).
pub(crate) fn why(e: &crate::surfaces::client::ClientError) -> &'static str {
    match e {
        crate::surfaces::client::ClientError::NotRunning(_) => "nothing listens there",
        _ => "the connection failed",
    }
}

const COLUMNS: &str = "id, name, address, device, created_at, item, box_name";

/// A row of `pairing_boxes` (selected as [`COLUMNS`]) and its vault item's name.
fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(Paired, String)> {
    Ok((
        Paired {
            id: r.get(0)?,
            box_name: r.get(6)?,
            name: r.get(1)?,
            address: r.get(2)?,
            device: r.get(3)?,
            created_at: r.get(4)?,
            status: None,
            link: None,
        },
        r.get(5)?,
    ))
}

pub(crate) async fn record(ctx: &Ctx, id: &str) -> Result<Option<(Paired, String)>, ToolError> {
    let id = id.to_string();
    Ok(ctx
        .store()
        .read(move |c| {
            Ok(c.query_row(
                &format!("SELECT {COLUMNS} FROM pairing_boxes WHERE id = ?1"),
                [id],
                row,
            )
            .optional()?)
        })
        .await?)
}

async fn add(
    ctx: &Ctx,
    caller: &crate::kernel::tools::Caller,
    input: AddInput,
) -> Result<Paired, ToolError> {
    let addr = parse_address(&input.address)?;
    let key = crate::kernel::presence::DeviceKey::generate().map_err(ToolError::internal)?;
    let name = input
        .name
        .filter(|n| !n.trim().is_empty())
        .or_else(|| nix::unistd::gethostname().ok()?.into_string().ok())
        .unwrap_or_else(|| "a Vyre".into());
    let body =
        serde_json::to_vec(&json!({ "code": input.code, "name": name, "key": key.public() }))
            .map_err(ToolError::internal)?;
    let answer = tokio::time::timeout(
        REMOTE,
        Client::http(addr, None).json(Method::POST, "/v1/pair", Some(body), &[]),
    )
    .await
    .map_err(|_| unreachable(&input.address, "no answer within 10 s"))?
    .map_err(|e| unreachable(&input.address, why(&e)))?;
    let (status, answer) = answer;
    if status != 200 {
        let code = answer["error"]["code"]
            .as_str()
            .unwrap_or("refused")
            .to_string();
        let message = answer["error"]["message"]
            .as_str()
            .unwrap_or("the box refused the pairing")
            .to_string();
        return Err(ToolError::refused(code, message));
    }
    let data = &answer["data"];
    let (Some(token), Some(device)) = (data["token"].as_str(), data["device"]["id"].as_str())
    else {
        return Err(ToolError::internal("the box's answer has no token"));
    };
    let id = format!("b{}", crate::kernel::ids::random_hex(4));
    let item = format!("box-{id}");
    ctx.call_as(
        caller,
        "vault.put",
        json!({ "name": item, "kind": "secret", "value": token }),
    )
    .await?;
    ctx.call_as(
        caller,
        "vault.grant",
        json!({ "item": item, "to": "module:pairing" }),
    )
    .await?;
    // The key this machine vouches for its person with: only its public half left it.
    let key_item = remote::key_item(&item);
    ctx.call_as(
        caller,
        "vault.put",
        json!({ "name": key_item, "kind": "secret", "value": key.secret() }),
    )
    .await?;
    ctx.call_as(
        caller,
        "vault.grant",
        json!({ "item": key_item, "to": "module:pairing" }),
    )
    .await?;
    let events_from = data["events_from"].as_i64();
    let paired = Paired {
        box_name: data["name"].as_str().map(str::to_string),
        id: id.clone(),
        name: data["device"]["name"].as_str().unwrap_or(&name).to_string(),
        address: addr.to_string(),
        device: device.to_string(),
        created_at: crate::now_ms(),
        status: None,
        link: None,
    };
    let p = paired.clone();
    ctx.store()
        .write(move |tx| {
            tx.conn().execute(
                "INSERT INTO pairing_boxes (id, name, address, device, item, created_at, box_name, cursor) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![p.id, p.name, p.address, p.device, item, p.created_at, p.box_name, events_from],
            )?;
            tx.emit(NewEvent::new(
                "pairing.added",
                json!({ "id": p.id, "address": p.address, "device": p.device }),
            ))?;
            Ok(())
        })
        .await?;
    Ok(paired)
}

/// The box's own answer about this machine's device: paired, revoked or unreachable.
async fn status_of(ctx: &Ctx, paired: &Paired, item: &str) -> String {
    let Ok(addr) = parse_address(&paired.address) else {
        return "unreachable".into();
    };
    let Ok(token) = ctx.vault().fetch(item).await else {
        return "no credential".into();
    };
    let client = Client::http(addr, Some(token.primary().expose().to_string()));
    match tokio::time::timeout(
        Duration::from_secs(3),
        client.json(Method::GET, "/v1/tools", None, &[]),
    )
    .await
    {
        Ok(Ok((200, _))) => "paired".into(),
        Ok(Ok((401, _))) => "revoked".into(),
        _ => "unreachable".into(),
    }
}

/// Every pairing, oldest first, with its vault item's name.
pub(crate) async fn rows(ctx: &Ctx) -> Result<Vec<(Paired, String)>, ToolError> {
    Ok(ctx
        .store()
        .read(|c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {COLUMNS} FROM pairing_boxes ORDER BY created_at"
            ))?;
            let rows = stmt.query_map([], row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await?)
}

async fn list(ctx: &Ctx, followers: &follow::Followers) -> Result<Vec<Paired>, ToolError> {
    let mut out = Vec::new();
    for (mut p, item) in rows(ctx).await? {
        p.status = Some(status_of(ctx, &p, &item).await);
        p.link = followers.state(&p.id);
        out.push(p);
    }
    Ok(out)
}

async fn remove(
    ctx: &Ctx,
    followers: &follow::Followers,
    caller: &crate::kernel::tools::Caller,
    id: &str,
) -> Result<Removed, ToolError> {
    let Some((paired, item)) = record(ctx, id).await? else {
        return Err(ToolError::not_found(
            "unknown_pairing",
            format!("there is no pairing {id:?}; pairing.list shows them"),
        ));
    };
    // Revoke this machine's device on the box with its own credential (a paired Vyre may
    // always end its own pairing); a box out of reach is told later by its person.
    let link = remote::Link { ctx: ctx.clone() };
    let revoked_on_box = match tokio::time::timeout(
        REMOTE,
        crate::kernel::contracts::remote::Remote::call(
            &link,
            Some(id),
            "pairing.unpair",
            json!({}),
            caller,
        ),
    )
    .await
    {
        Ok(Ok(_)) => true,
        // The box had revoked it already: it is revoked there either way.
        Ok(Err(e)) => &*e.code == "invalid_credential",
        Err(_) => false,
    };
    followers.stop(id);
    for name in [remote::key_item(&item), item] {
        if let Err(e) = ctx
            .call_as(caller, "vault.delete", json!({ "name": name }))
            .await
            && &*e.code != "unknown_item"
        {
            return Err(e);
        }
    }
    let (i, device) = (id.to_string(), paired.device.clone());
    ctx.store()
        .write(move |tx| {
            tx.conn()
                .execute("DELETE FROM pairing_boxes WHERE id = ?1", [&i])?;
            tx.emit(NewEvent::new(
                "pairing.removed",
                json!({ "id": i, "device": device, "revoked_on_box": revoked_on_box }),
            ))?;
            Ok(())
        })
        .await?;
    Ok(Removed {
        id: id.to_string(),
        revoked_on_box,
        device: paired.device,
    })
}

impl Module for PairingModule {
    fn name(&self) -> &str {
        "pairing"
    }
    fn manifest(&self) -> &str {
        include_str!("module.json")
    }
    fn start(&self, ctx: Ctx) -> StartFuture {
        Box::pin(async move {
            ctx.store().migrate(MIGRATIONS).await?;
            ctx.tool_with(
                ToolDef::new(
                    "pairing.code",
                    "A code that pairs another Vyre (your Mac) with this one: type it there with pairing.add. Works once, for ten minutes.",
                )
                .finishes()
                .person_only(),
                &ctx,
                |c, _: NoInput, _| async move {
                    let issued = c.links().issue_code(CODE_TTL).await?;
                    Ok::<_, ToolError>(Code {
                        code: issued.token,
                        expires_at: issued.expires_at,
                        address: c.http_address(),
                    })
                },
            )?;
            let followers = follow::Followers::default();
            let state = (ctx.clone(), followers.clone());
            ctx.tool_with(
                ToolDef::new(
                    "pairing.add",
                    "Pair with a box by the code it printed: the box makes a device for this machine, whose credential goes into this machine's vault.",
                )
                .finishes()
                .person_only(),
                &state,
                |(c, f), input: AddInput, cx| async move {
                    let paired = add(&c, &cx.caller, input).await?;
                    f.start(&c, &paired.id);
                    Ok::<_, ToolError>(paired)
                },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "pairing.list",
                    "The boxes this machine is paired with, each with what the box says now (paired, revoked, unreachable) and whether its events reach this machine (link).",
                ),
                &state,
                |(c, f), _: NoInput, _| async move { list(&c, &f).await },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "pairing.remove",
                    "End a pairing: revoke this machine's device on the box and forget its credential.",
                )
                .finishes()
                .person_only(),
                &state,
                |(c, f), input: RemoveInput, cx| async move {
                    remove(&c, &f, &cx.caller, &input.id).await
                },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "pairing.call",
                    "Call a tool on a paired box, as this machine's device there; when a person here calls, the box treats the call as theirs (a signed presence assertion). On the box, `device` calls the Vyre paired with it (the Mac) instead, while it is connected. Each side serves only the tools its link.allow lists.",
                ),
                &ctx,
                |c, input: CallInput, cx| async move {
                    let peer = match (input.target, input.device) {
                        (Some(_), Some(_)) => {
                            return Err(ToolError::invalid(
                                "say `box` (a pairing of this machine) or `device` (a Vyre paired with it), not both",
                            ));
                        }
                        (Some(p), None) | (None, Some(p)) => Some(p),
                        (None, None) => None,
                    };
                    let link = remote::Link { ctx: c };
                    crate::kernel::contracts::remote::Remote::call(
                        &link,
                        peer.as_deref(),
                        &input.tool,
                        serde_json::Value::Object(input.input),
                        &cx.caller,
                    )
                    .await
                },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "pairing.unpair",
                    "A paired Vyre ends its own pairing here: its device is revoked. Only a paired Vyre calls it, with its own credential.",
                )
                .finishes(),
                &ctx,
                |c, _: NoInput, cx| async move {
                    let crate::kernel::tools::Caller::Linked { id, .. } = &cx.caller else {
                        return Err(ToolError::refused(
                            "not_paired_vyre",
                            "only a paired Vyre calls pairing.unpair, to end its own pairing; a person revokes a device with devices.revoke",
                        ));
                    };
                    let device = c.devices().revoke(id).await?;
                    Ok(Unpaired { device: device.id })
                },
            )?;
            ctx.provide::<dyn crate::kernel::contracts::remote::Remote>(std::sync::Arc::new(
                remote::Link { ctx: ctx.clone() },
            ))?;
            for (paired, _) in rows(&ctx).await? {
                followers.start(&ctx, &paired.id);
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_address_the_schema_accepts_parses() {
        for ok in crate::kernel::tools::shape::ADDRESS_EXAMPLES {
            assert!(super::parse_address(ok).is_ok(), "{ok:?} parses");
        }
    }

    #[test]
    fn an_address_is_an_ip_and_a_port_with_or_without_the_scheme() {
        assert_eq!(
            super::parse_address("http://127.0.0.1:4477/")
                .unwrap()
                .to_string(),
            "127.0.0.1:4477"
        );
        assert!(super::parse_address("127.0.0.1:4477").is_ok());
        assert!(super::parse_address("box.example:4477").is_err());
        assert!(super::parse_address("127.0.0.1").is_err());
    }
}
