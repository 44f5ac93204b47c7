//! The vault's tools.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::core::{KeyState, StopAfter, Vault};
use super::items::ItemInfo;
use super::keystore::{FileKeyStore, KeyStore, KeychainKeyStore};
use super::{Grantee, VaultError};
use crate::kernel::config::Role;
use crate::kernel::contracts::auth::{self, AuthStatus, ItemReadiness};
use crate::kernel::contracts::secret::{Kind, Secret, VaultValue};
use crate::kernel::module::{Ctx, StartError, ToolDef};
use crate::kernel::tools::ToolError;

/// The key store for this machine: the keychain on `local`, a key file on `box`; config
/// `vault.keystore` (`file` or `keychain`) overrides.
pub fn key_store(ctx: &Ctx) -> Result<Arc<dyn KeyStore>, StartError> {
    let home = ctx.home().clone();
    let configured = ctx
        .config()
        .vault
        .as_ref()
        .and_then(|v| v.get("keystore"))
        .and_then(|v| v.as_str())
        .map(String::from);
    let use_keychain = match configured.as_deref() {
        Some("keychain") => true,
        Some("file") => false,
        Some(other) => {
            return Err(
                format!("vault.keystore must be \"file\" or \"keychain\", not {other:?}").into(),
            );
        }
        None => ctx.role() == Role::Local,
    };
    Ok(if use_keychain {
        Arc::new(KeychainKeyStore::new(home.root())?)
    } else {
        Arc::new(FileKeyStore {
            path: home.root().join("vault").join("master.key"),
        })
    })
}

/// What each kind needs, said in the schema as the tool checks it: a secret (the default) and a
/// note need a `value`, a login its `password`, a card its `number`, an env set its `vars`; none
/// of them empty.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("anyOf" = [
    { "properties": { "kind": { "enum": ["secret", "note", null] }, "value": { "type": "string", "minLength": 1 } }, "required": ["value"] },
    { "properties": { "kind": { "const": "login" }, "password": { "type": "string", "minLength": 1 } }, "required": ["kind", "password"] },
    { "properties": { "kind": { "const": "card" } }, "required": ["kind", "number"] },
    { "properties": { "kind": { "const": "env" }, "vars": { "type": "object", "minProperties": 1 } }, "required": ["kind", "vars"] },
]))]
pub struct PutInput {
    #[schemars(length(min = 1, max = 128), pattern(crate::kernel::tools::shape::ITEM), extend("not" = { "enum": [".", ".."] }))]
    name: String,
    /// secret (default), login, note, card or env (a pass comes by `vault.pass.accept`).
    #[serde(default)]
    #[schemars(extend("not" = { "const": "pass" }))]
    kind: Option<Kind>,
    /// The secret or the note's text.
    #[serde(default)]
    value: Option<Secret>,
    #[serde(default)]
    username: Option<Secret>,
    #[serde(default)]
    password: Option<Secret>,
    /// A login's TOTP seed (base32) or `otpauth://totp/` URI.
    #[serde(default)]
    #[schemars(extend("pattern" = crate::kernel::tools::shape::TOTP))]
    totp: Option<Secret>,
    /// A login's TOTP from its setup QR code: the image (PNG, JPEG, GIF or WebP), base64.
    #[serde(default)]
    #[schemars(length(max = 1_000_000), extend("pattern" = crate::kernel::tools::shape::BASE64))]
    totp_qr: Option<Secret>,
    /// A login's or a card's notes.
    #[serde(default)]
    notes: Option<Secret>,
    /// A card's number (kept as digits).
    #[serde(default)]
    #[schemars(extend("pattern" = crate::kernel::tools::shape::CARD_NUMBER))]
    number: Option<Secret>,
    /// The name on the card.
    #[serde(default)]
    #[schemars(length(max = 200))]
    holder: Option<Secret>,
    /// MM/YY.
    #[serde(default)]
    #[schemars(extend("pattern" = crate::kernel::tools::shape::CARD_EXPIRY))]
    expiry: Option<Secret>,
    /// The card's security code.
    #[serde(default)]
    #[schemars(extend("pattern" = crate::kernel::tools::shape::CARD_CODE))]
    code: Option<Secret>,
    /// An env set's variables by name (`[A-Za-z_][A-Za-z0-9_]*`, at most 100).
    #[serde(default)]
    #[schemars(extend("maxProperties" = 100))]
    vars: Option<std::collections::BTreeMap<String, Secret>>,
    /// Replace the value of an existing item (its grants stay).
    #[serde(default)]
    replace: bool,
}

#[derive(Serialize, JsonSchema)]
pub struct PutOutput {
    name: String,
    kind: Kind,
    replaced: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NameInput {
    #[schemars(length(min = 1, max = 128), pattern(crate::kernel::tools::shape::ITEM), extend("not" = { "enum": [".", ".."] }))]
    name: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantInput {
    #[schemars(length(min = 1, max = 128), pattern(crate::kernel::tools::shape::ITEM), extend("not" = { "enum": [".", ".."] }))]
    item: String,
    /// A module (`sessions`, `module:sessions`), an agent (`agent:<name>`) or a watcher
    /// (`watcher:<name>`).
    #[schemars(pattern(crate::kernel::tools::shape::GRANTEE))]
    to: String,
}

#[derive(Serialize, JsonSchema)]
pub struct GrantOutput {
    item: String,
    to: String,
    changed: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PassphraseInput {
    passphrase: Secret,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetPassphraseInput {
    /// The new passphrase; leave it out to remove the passphrase.
    #[serde(default)]
    passphrase: Option<Secret>,
}

#[derive(Serialize, JsonSchema)]
pub struct Done {
    ok: bool,
}

#[derive(Serialize, JsonSchema)]
pub struct Rotated {
    resealed: usize,
}

#[derive(Serialize, JsonSchema)]
pub struct Status {
    state: KeyState,
    keystore: String,
    items: i64,
    passphrase: bool,
    /// Which credential Claude Code sessions on this machine use, and whether it is ready.
    claude: AuthStatus,
}

pub use crate::kernel::contracts::secret::valid_var_name;

/// The non-secret facts `vault.list` shows of a card (its last four digits and expiry) and of
/// an env set (its variables' names).
pub fn meta_of(value: &VaultValue) -> Option<serde_json::Value> {
    match value {
        VaultValue::Card { number, expiry, .. } => {
            let digits = number.expose();
            let last4 = &digits[digits.len().saturating_sub(4)..];
            Some(serde_json::json!({ "last4": last4, "expiry": expiry.expose() }))
        }
        VaultValue::Env(vars) => Some(serde_json::json!({
            "vars": vars.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>()
        })),
        _ => None,
    }
}

fn value_of(input: PutInput) -> Result<(String, VaultValue, bool), VaultError> {
    let kind = input.kind.unwrap_or(Kind::Secret);
    let need = |field: Option<Secret>, what: &str| -> Result<Secret, VaultError> {
        field.filter(|s| !s.is_empty()).ok_or_else(|| {
            VaultError::InvalidName(format!("a {} item needs {what}", kind.as_str()))
        })
    };
    let value = match kind {
        Kind::Secret => VaultValue::Secret(need(input.value, "a value")?),
        Kind::Note => VaultValue::Note(need(input.value, "a value")?),
        Kind::Login => {
            let totp = match (input.totp.filter(|t| !t.is_empty()), input.totp_qr) {
                (Some(_), Some(_)) => {
                    return Err(VaultError::InvalidName(
                        "give the TOTP as a seed or URI (totp) or as its QR code (totp_qr), not both".into(),
                    ));
                }
                (Some(t), None) => super::import::formats::totp_seed(t.expose())
                    .map_err(VaultError::InvalidName)?,
                (None, Some(qr)) => {
                    use base64::Engine;
                    let image = zeroize::Zeroizing::new(
                        base64::engine::general_purpose::STANDARD
                            .decode(qr.expose().trim())
                            .map_err(|_| VaultError::InvalidName("totp_qr is not base64".into()))?,
                    );
                    let uri = zeroize::Zeroizing::new(
                        super::totp_qr::read(&image).map_err(VaultError::InvalidName)?,
                    );
                    super::import::formats::totp_seed(&uri).map_err(VaultError::InvalidName)?
                }
                (None, None) => None,
            };
            let login = VaultValue::Login {
                username: input.username.unwrap_or_default(),
                password: need(input.password, "a password")?,
                totp,
                notes: input.notes.filter(|n| !n.is_empty()),
            };
            if let Some(Err(e)) = login.totp_now() {
                return Err(VaultError::InvalidName(e));
            }
            login
        }
        Kind::Card => {
            let number = need(input.number, "a number")?;
            let digits: String = number
                .expose()
                .chars()
                .filter(char::is_ascii_digit)
                .collect();
            if !(12..=19).contains(&digits.len()) {
                return Err(VaultError::InvalidName(
                    "a card number has 12 to 19 digits".into(),
                ));
            }
            VaultValue::Card {
                number: Secret::new(digits),
                holder: input.holder.unwrap_or_default(),
                expiry: input.expiry.unwrap_or_default(),
                code: input.code.unwrap_or_default(),
                notes: input.notes.filter(|n| !n.is_empty()),
            }
        }
        Kind::Env => {
            let vars = input.vars.unwrap_or_default();
            if vars.is_empty() || vars.len() > 100 {
                return Err(VaultError::InvalidName(
                    "an env set holds 1 to 100 variables".into(),
                ));
            }
            if let Some(bad) = vars.keys().find(|k| !valid_var_name(k)) {
                return Err(VaultError::InvalidName(format!(
                    "{bad:?} is not a variable's name (letters, digits and _, not starting with a digit)"
                )));
            }
            VaultValue::Env(vars.into_iter().collect())
        }
        Kind::Pass => {
            return Err(VaultError::InvalidName(
                "a pass is taken from its giver's code with vault.pass.accept".into(),
            ));
        }
    };
    Ok((input.name, value, input.replace))
}

pub fn register(ctx: &Ctx, vault: Arc<Vault>) -> Result<(), StartError> {
    ctx.tool(
        ToolDef::new(
            "vault.generate",
            "Make a new random password (length, character sets) or passphrase (words from the EFF's list), with its strength in bits; nothing is stored.",
        )
        .sessions_open(),
        |input: super::generate::GenerateInput, _| async move {
            super::generate::generate(&input).map_err(|e| match e {
                super::generate::GenerateError::Invalid(why) => ToolError::invalid(why),
                e => ToolError::internal(e.to_string()),
            })
        },
    )?;
    ctx.tool_with(
        ToolDef::new("vault.put", "Store a credential (secret, login, note, card or env set). The value is sealed at once and shown again only to a person who proves presence (vault.reveal).")
        .finishes().person_only(),
        &vault,
        |v, input: PutInput, _| async move {
                let kind = input.kind.unwrap_or(Kind::Secret);
                // Off the runtime: a TOTP QR image is decoded here.
                let (name, value, replace) = tokio::task::spawn_blocking(move || value_of(input))
                    .await
                    .map_err(ToolError::internal)??;
                let meta = meta_of(&value);
                let replaced = v.put_with(&name, value, replace, meta).await?;
                Ok::<_, ToolError>(PutOutput { name, kind, replaced })
            },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "vault.import",
            "Import a password manager's export (Bitwarden JSON or CSV, 1Password .1pux (base64) or CSV, Chrome, Safari or Firefox CSV): what was imported and what was skipped and why, never a value; dry_run stores nothing.",
        )
        .finishes()
        .person_only(),
        &vault,
        |v, input: super::import::ImportInput, _| async move {
            super::import::import(&v, input).await.map_err(|e| match e {
                super::import::ImportError::Invalid(why) => ToolError::invalid(why),
                super::import::ImportError::Vault(e) => e.into(),
            })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "vault.list",
            "Every item's name, kind, grants and last use; never a value.",
        )
        .sessions_open(),
        &vault,
        |v, _: crate::kernel::tools::NoInput, _| async move {
            Ok::<Vec<ItemInfo>, ToolError>(v.list().await?)
        },
    )?;
    ctx.tool_with(
        ToolDef::new("vault.delete", "Delete an item and its grants.")
            .finishes()
            .person_only(),
        &vault,
        |v, input: NameInput, _| async move {
            v.delete(&input.name).await?;
            Ok::<_, ToolError>(Done { ok: true })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "vault.grant",
            "Let a module, an agent or a watcher use an item.",
        )
        .finishes()
        .person_only(),
        &vault,
        |v, input: GrantInput, cx| async move {
            let to = Grantee::parse(&input.to)?;
            v.grant(&input.item, &to, &cx.caller.label()).await?;
            Ok::<_, ToolError>(GrantOutput {
                item: input.item,
                to: to.to_string(),
                changed: true,
            })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "vault.revoke",
            "Take back a module's, an agent's or a watcher's use of an item.",
        )
        .finishes()
        .person_only(),
        &vault,
        |v, input: GrantInput, _| async move {
            let to = Grantee::parse(&input.to)?;
            let changed = v.revoke(&input.item, &to).await?;
            Ok::<_, ToolError>(GrantOutput {
                item: input.item,
                to: to.to_string(),
                changed,
            })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "vault.rotate",
            "Make a new master key and reseal every item with it, all or nothing.",
        )
        .finishes()
        .person_only(),
        &vault,
        |v, _: crate::kernel::tools::NoInput, _| async move {
            Ok::<_, ToolError>(Rotated {
                resealed: v.rotate(StopAfter::Nothing).await?,
            })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "vault.unlock",
            "Unlock a vault whose key file is wrapped by a passphrase.",
        )
        .finishes()
        .person_only(),
        &vault,
        |v, input: PassphraseInput, _| async move {
            v.unlock(&input.passphrase).await?;
            Ok::<_, ToolError>(Done { ok: true })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "vault.lock",
            "Forget the unlocked keys until the passphrase is given again.",
        )
        .finishes()
        .person_only(),
        &vault,
        |v, _: crate::kernel::tools::NoInput, _| async move {
            v.lock().await?;
            Ok::<_, ToolError>(Done { ok: true })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "vault.passphrase",
            "Wrap the key file with a passphrase (argon2id), change it, or remove it.",
        )
        .finishes()
        .person_only(),
        &vault,
        |v, input: SetPassphraseInput, _| async move {
            v.set_passphrase(input.passphrase.as_ref()).await?;
            Ok::<_, ToolError>(Done { ok: true })
        },
    )?;
    let v = vault;
    let c = ctx.clone();
    ctx.tool_with(
        ToolDef::new("vault.status", "Whether the vault is unlocked, where its key lives, and which Claude credential this machine uses; never a value.")
        .onboarding()
        .sessions_open(),
        &(v, c),
        |(v, c), _: crate::kernel::tools::NoInput, _| async move {
                let (state, items) = v.state().await?;
                let list = v.list().await?;
                let readiness = |name: &str| {
                    let found = list.iter().find(|i| i.name == name);
                    ItemReadiness {
                        item: name.to_string(),
                        present: found.is_some(),
                        granted_to_sessions: found.is_some_and(|i| i.grants.iter().any(|g| g == auth::SESSIONS_GRANTEE)),
                    }
                };
                let claude = auth::status(c.config(), c.role(), readiness);
                Ok::<_, ToolError>(Status {
                    state,
                    keystore: v.location(),
                    items,
                    passphrase: state == KeyState::Locked || v.is_wrapped().await,
                    claude,
                })
            },
    )?;
    Ok(())
}
