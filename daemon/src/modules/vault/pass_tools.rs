//! Passes (ADR 0036): one item shared with another person's Vyre. Relayed by default (the
//! value never leaves this Vyre; their Gate sends their requests to this one's, which fills the
//! value in, and a revoke ends that at once) or sealed (an encrypted copy for a key their Vyre
//! made; a revoke cannot take it back, so the answer says to rotate). `vault.pass.create`,
//! `vault.pass.list`, `vault.pass.revoke`, `vault.pass.key`, `vault.pass.accept` and
//! `vault.offboard`, all PERSON_ONLY; `vault.pass.bind`, for the other Vyre accepting a relayed
//! pass through `POST /v1/pass/bind`. No value, token or key is ever in an event.
//!
//! A relayed pass is taken once: accepting it makes an Ed25519 key on the taking Vyre and binds
//! the pass to its public half at the giver's, so the code alone opens nothing after that (a
//! code that leaked, or was forwarded, is refused as `pass_taken`), and every request through it
//! is signed with that key (`gate.relay`).

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::core::Vault;
use super::pass_code::{
    Relayed, bind_at_giver, check_url, pass_key, read_relayed, relayed_code, token,
};
use super::pass_seal::{self, Keys, SealError};
use super::passes::{self, NewPass, PassInfo, PassKind, Use};
use super::{Kind, VaultValue, valid_item_name};
use crate::kernel::contracts::vault::{PASS_BIND_TOOL, PASS_ENDPOINT_CALLER};
use crate::kernel::events::NewEvent;
use crate::kernel::module::{Ctx, StartError, ToolDef};
use crate::kernel::tools::{Caller, ToolError};

impl From<SealError> for ToolError {
    fn from(e: SealError) -> Self {
        match e {
            SealError::Malformed(_) => ToolError::invalid(e.to_string()),
            SealError::UnknownKey => ToolError::refused("unknown_key", e.to_string()),
            SealError::DoesNotOpen => ToolError::refused("does_not_open", e.to_string()),
            SealError::Crypto(_) => ToolError::internal(e.to_string()),
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateInput {
    /// The item to share.
    #[schemars(length(min = 1, max = 128))]
    pub name: String,
    /// Who it is for, in your words (an offboarding names them the same way).
    #[schemars(length(min = 1, max = 100))]
    pub to: String,
    /// A sealed pass: the key (`vyre-key-1.…`) their Vyre made with `vault.pass.key`. Without
    /// it the pass is relayed.
    #[serde(default)]
    #[schemars(length(max = 200))]
    pub sealed_for: Option<String>,
    /// A relayed pass: this Vyre's address as their Vyre reaches it (https, or an address on
    /// this machine or the private network); this vyred's own listener when not given.
    #[serde(default)]
    #[schemars(length(max = 500))]
    pub url: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct Created {
    id: String,
    kind: PassKind,
    /// What to give the other person (they accept it with `vault.pass.accept`). A relayed
    /// pass's code lets whoever holds it use the item through this Gate until it is revoked;
    /// a sealed one opens only on the Vyre whose key it was made for.
    code: String,
    note: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdInput {
    #[schemars(length(min = 1, max = 64))]
    pub id: String,
}

#[derive(Serialize, JsonSchema)]
struct Revoked {
    id: String,
    /// False when it was revoked already.
    revoked: bool,
    item: String,
    to: String,
    kind: PassKind,
    /// A sealed pass's value is in their Vyre for good: change it where it is used.
    rotate: bool,
    note: String,
}

#[derive(Serialize, JsonSchema)]
struct KeyOutput {
    /// Give it to the person who will share an item: their `vault.pass.create {sealed_for}`.
    key: String,
    expires_in_s: u64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcceptInput {
    /// The code the other person gave (`vyre-pass-1.…` or `vyre-sealed-1.…`).
    #[schemars(length(min = 1, max = 1_100_000))]
    pub code: String,
    /// The name it gets in this vault.
    #[schemars(length(min = 1, max = 128))]
    pub name: String,
}

#[derive(Serialize, JsonSchema)]
struct Accepted {
    name: String,
    /// `relayed`: the value stays with the giver and this Vyre's Gate sends through theirs;
    /// `sealed`: a copy of the value is now in this vault.
    pass: PassKind,
    kind: Kind,
    from: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BindInput {
    /// The pass's id.
    #[schemars(length(min = 1, max = 64))]
    pub pass: String,
    /// Its token, from the code.
    #[schemars(length(min = 1, max = 128))]
    pub token: String,
    /// The public half of the Ed25519 key the accepting Vyre made, base64url (32 bytes).
    #[schemars(length(min = 43, max = 44))]
    pub key: String,
}

#[derive(Serialize, JsonSchema)]
struct Bound {
    /// The item's name at the giver's, as the code said.
    item: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OffboardInput {
    /// The person, as passes name them (`to`).
    #[schemars(length(min = 1, max = 100))]
    pub person: String,
    /// Say what would happen and change nothing.
    #[serde(default)]
    pub dry_run: bool,
}

#[derive(Serialize, JsonSchema)]
struct Offboarded {
    person: String,
    dry_run: bool,
    /// The passes revoked (or that would be).
    revoked: Vec<PassInfo>,
    /// What must be changed where it is used: each item they hold a sealed copy of.
    rotate: Vec<Rotate>,
    /// Where each relayed pass's item was sent by them.
    used: Vec<PassUses>,
}

#[derive(Serialize, JsonSchema)]
struct Rotate {
    item: String,
    why: String,
}

#[derive(Serialize, JsonSchema)]
struct PassUses {
    pass: String,
    item: String,
    uses: Vec<Use>,
}

#[derive(Clone)]
struct Env {
    ctx: Ctx,
    vault: Arc<Vault>,
    keys: Arc<Keys>,
}

fn new_id(prefix: &str) -> Result<String, ToolError> {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).map_err(|e| ToolError::internal(format!("no randomness: {e}")))?;
    Ok(format!(
        "{prefix}{}",
        b.iter().map(|x| format!("{x:02x}")).collect::<String>()
    ))
}

impl Env {
    async fn emit(&self, kind: &str, data: serde_json::Value) {
        if let Err(e) = self.ctx.events().emit(NewEvent::new(kind, data)).await {
            tracing::warn!("the vault could not say {kind}: {e}");
        }
    }

    async fn create(&self, input: CreateInput, by: String) -> Result<Created, ToolError> {
        let to = input.to.trim().to_string();
        if to.is_empty() || to.chars().any(char::is_control) {
            return Err(ToolError::invalid("to: name the person, in words"));
        }
        let id = new_id("p")?;
        let (kind, code, hash, item_id) = match &input.sealed_for {
            Some(key) => {
                let (item_id, payload) = self.vault.payload(&input.name).await?;
                let code = pass_seal::seal_for(key, &payload)?;
                (PassKind::Sealed, code, None, item_id)
            }
            None => {
                // The item must be there and be one this Vyre owns.
                let (item_id, _payload) = self.vault.payload(&input.name).await?;
                let url = match &input.url {
                    Some(u) => check_url(u).map_err(ToolError::invalid)?,
                    None => {
                        let at = self.ctx.http_address().ok_or_else(|| {
                            ToolError::conflict(
                                "no_http",
                                "vyred has no HTTP listener for a relayed pass to reach; give url",
                            )
                        })?;
                        format!("http://{at}")
                    }
                };
                let token = token()?;
                let hash = crate::kernel::device_tokens::hash_token(&token).to_vec();
                let code = relayed_code(&Relayed {
                    v: 1,
                    url,
                    pass: id.clone(),
                    token,
                    item: input.name.clone(),
                });
                (PassKind::Relayed, code, Some(hash), item_id)
            }
        };
        let (pid, name, to2) = (id.clone(), input.name.clone(), to.clone());
        self.ctx
            .store()
            .write(move |tx| {
                passes::add(
                    tx.conn(),
                    &NewPass {
                        id: &pid,
                        item_id: &item_id,
                        item_name: &name,
                        to: &to2,
                        kind,
                        token_hash: hash.as_deref(),
                        by: &by,
                    },
                )?;
                Ok(())
            })
            .await
            .map_err(ToolError::from)?;
        self.emit(
            "vault.pass_created",
            json!({ "pass": id, "item": input.name, "to": to, "kind": kind }),
        )
        .await;
        let note = match kind {
            PassKind::Relayed => format!(
                "Give {to} this code. Their Vyre's Gate sends requests with {:?} through this one; revoking ends that at once.",
                input.name
            ),
            PassKind::Sealed => format!(
                "Give {to} this code; it opens only on the Vyre that made the key. They hold a copy: revoking cannot take it back, so rotate the value then."
            ),
        };
        Ok(Created {
            id,
            kind,
            code,
            note,
        })
    }

    async fn revoke(&self, id: &str) -> Result<Revoked, ToolError> {
        let key = id.to_string();
        let (info, revoked) = self
            .ctx
            .store()
            .write(move |tx| {
                let revoked = passes::revoke(tx.conn(), &key)?;
                Ok((passes::get(tx.conn(), &key)?, revoked))
            })
            .await
            .map_err(ToolError::from)?;
        let info = info.ok_or_else(|| {
            ToolError::not_found(
                "unknown_pass",
                format!("there is no pass {id:?} (`vyre vault pass list`)"),
            )
        })?;
        if revoked {
            self.emit(
                "vault.pass_revoked",
                json!({ "pass": info.id, "item": info.item, "to": info.to, "kind": info.kind }),
            )
            .await;
        }
        let rotate = info.kind == PassKind::Sealed;
        let note = if rotate {
            format!(
                "{} keeps the copy they were given: change {:?} where it is used, then put the new value.",
                info.to, info.item
            )
        } else {
            format!(
                "{}'s requests with {:?} end now; the value never left this Vyre.",
                info.to, info.item
            )
        };
        Ok(Revoked {
            id: info.id,
            revoked,
            item: info.item,
            to: info.to,
            kind: info.kind,
            rotate,
            note,
        })
    }

    async fn accept(&self, input: AcceptInput) -> Result<Accepted, ToolError> {
        valid_item_name(&input.name)?;
        let code = input.code.trim();
        if code.starts_with(pass_seal::SEALED_PREFIX) {
            let payload = self.keys.open(code)?;
            let meta = json!({ "from": "a sealed pass" });
            let kind = self.vault.put_payload(&input.name, &payload, meta).await?;
            self.emit(
                "vault.pass_accepted",
                json!({ "name": input.name, "pass": "sealed", "kind": kind, "from": "a sealed pass" }),
            )
            .await;
            return Ok(Accepted {
                name: input.name,
                pass: PassKind::Sealed,
                kind,
                from: "a sealed pass".into(),
            });
        }
        let r = read_relayed(code)?;
        let url = check_url(&r.url).map_err(ToolError::invalid)?;
        let pass = r.pass.clone();
        let given_here = self
            .ctx
            .store()
            .read(move |c| Ok(passes::get(c, &pass)?.is_some()))
            .await
            .map_err(ToolError::from)?;
        if given_here {
            return Err(ToolError::invalid(
                "this is a pass this Vyre gave: it is for another person's Vyre to accept",
            ));
        }
        // Nothing is kept unless the giver binds the pass to this Vyre's new key.
        self.vault.may_put(&input.name).await?;
        let (seed, public) = pass_key()?;
        bind_at_giver(&url, &r, &public).await?;
        let from = url.clone();
        let value = VaultValue::Pass {
            url,
            pass: r.pass,
            key: Some(seed),
        };
        let meta = json!({ "from": from, "item": r.item });
        if let Err(e) = self
            .vault
            .put_with(&input.name, value, false, Some(meta))
            .await
        {
            // Checked just before the bind, so rare (the vault locked, or the name taken, in
            // between); the pass is this Vyre's at the giver's now and cannot be taken again.
            let mut e = ToolError::from(e);
            e.message = format!(
                "{} The giver's Vyre had already given the pass to this one, so it is used up: \
                 ask for a new pass.",
                e.message
            );
            return Err(e);
        }
        self.emit(
            "vault.pass_accepted",
            json!({ "name": input.name, "pass": "relayed", "kind": Kind::Pass, "from": from }),
        )
        .await;
        Ok(Accepted {
            name: input.name,
            pass: PassKind::Relayed,
            kind: Kind::Pass,
            from,
        })
    }

    /// `vault.pass.bind`: the giving end of an accept.
    async fn bind(&self, input: BindInput) -> Result<Bound, ToolError> {
        let key: [u8; 32] = B64
            .decode(input.key.trim_end_matches('='))
            .ok()
            .and_then(|k| k.try_into().ok())
            .ok_or_else(|| {
                ToolError::invalid("key: 32 bytes of an Ed25519 public key, base64url")
            })?;
        let (item, _to) = self.vault.bind_pass(&input.pass, &input.token, key).await?;
        Ok(Bound { item })
    }

    async fn offboard(&self, input: OffboardInput) -> Result<Offboarded, ToolError> {
        let person = input.person.trim().to_string();
        if person.is_empty() {
            return Err(ToolError::invalid(
                "person: name them as their passes do (`to`)",
            ));
        }
        let (who, dry) = (person.clone(), input.dry_run);
        let (standing, used) = self
            .ctx
            .store()
            .write(move |tx| {
                let standing = passes::standing_for(tx.conn(), &who)?;
                let mut used = Vec::new();
                for p in &standing {
                    if p.kind == PassKind::Relayed {
                        used.push(PassUses {
                            pass: p.id.clone(),
                            item: p.item.clone(),
                            uses: passes::uses(tx.conn(), &p.id)?,
                        });
                    }
                    if !dry {
                        passes::revoke(tx.conn(), &p.id)?;
                    }
                }
                // As they stand now: revoked, when this was not a dry run.
                let mut now = Vec::with_capacity(standing.len());
                for p in standing {
                    now.push(passes::get(tx.conn(), &p.id)?.unwrap_or(p));
                }
                Ok((now, used))
            })
            .await
            .map_err(ToolError::from)?;
        let rotate = standing
            .iter()
            .filter(|p| p.kind == PassKind::Sealed)
            .map(|p| Rotate {
                item: p.item.clone(),
                why: format!("{person} holds a sealed copy (pass {})", p.id),
            })
            .collect();
        if !input.dry_run {
            self.emit("vault.offboarded", json!({ "person": person, "revoked": standing.iter().map(|p| &p.id).collect::<Vec<_>>() }))
                .await;
        }
        Ok(Offboarded {
            person,
            dry_run: input.dry_run,
            revoked: standing,
            rotate,
            used,
        })
    }
}

pub fn register(ctx: &Ctx, vault: Arc<Vault>) -> Result<(), StartError> {
    let env = Env {
        ctx: ctx.clone(),
        vault,
        keys: Arc::new(Keys::default()),
    };
    ctx.tool_with(
        ToolDef::new(
            "vault.pass.create",
            "Share one item with another person's Vyre: relayed (the default: the value stays here and their requests go through this Gate) or sealed (sealed_for: a key their Vyre made). Gives the code to hand them.",
        )
        .finishes()
        .person_only(),
        &env,
        |env, input: CreateInput, cx| async move { env.create(input, cx.caller.label()).await },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "vault.pass.list",
            "The passes this Vyre gave: item, person, relayed or sealed, uses, revoked.",
        )
        .person_only(),
        &env,
        |env, _input: crate::kernel::tools::NoInput, _cx| async move {
            env.ctx
                .store()
                .read(|c| Ok(passes::list(c)?))
                .await
                .map_err(ToolError::from)
        },
    )?;
    ctx.tool_with(
        ToolDef::new("vault.pass.revoke", "End a pass: a relayed one at once; a sealed one's copy stays with them, so the answer says to rotate.")
            .finishes()
            .person_only(),
        &env,
        |env, input: IdInput, _cx| async move { env.revoke(&input.id).await },
    )?;
    ctx.tool_with(
        ToolDef::new("vault.pass.key", "A one-use key for receiving a sealed pass (good for an hour, until vyred restarts): give it to the person who shares.").person_only(),
        &env,
        |env, _input: crate::kernel::tools::NoInput, _cx| async move {
            Ok(KeyOutput { key: env.keys.make()?, expires_in_s: pass_seal::KEY_TTL.as_secs() })
        },
    )?;
    ctx.tool_with(
        ToolDef::new("vault.pass.accept", "Take a pass another person gave (their code) into this vault as name: a relayed one is used through the Gate like any item granted to it; a sealed one becomes an item.")
            .finishes()
            .person_only(),
        &env,
        |env, input: AcceptInput, _cx| async move { env.accept(input).await },
    )?;
    ctx.tool_with(
        ToolDef::new(
            PASS_BIND_TOOL,
            "Bind a relayed pass this Vyre gave to the key of the Vyre accepting it (called by POST /v1/pass/bind with the pass's token): a pass is taken once.",
        )
        .finishes(),
        &env,
        |env, input: BindInput, cx| async move {
            if !matches!(&cx.caller, Caller::Module { name } if name == PASS_ENDPOINT_CALLER) {
                return Err(ToolError::refused(
                    "not_approved",
                    "vault.pass.bind is called by another Vyre accepting a pass, at POST /v1/pass/bind",
                ));
            }
            env.bind(input).await
        },
    )?;
    ctx.tool_with(
        ToolDef::new("vault.offboard", "Revoke every pass a person holds in one action, and list what must be rotated (their sealed copies) and where each relayed item was used.")
            .finishes()
            .person_only(),
        &env,
        |env, input: OffboardInput, _cx| async move { env.offboard(input).await },
    )?;
    Ok(())
}
