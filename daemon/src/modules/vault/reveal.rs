//! The tools that show a person a value after presence (ADR 0035): `vault.presence.challenge`,
//! `vault.passkey.add`, `vault.passkey.list`, `vault.passkey.remove` and `vault.reveal`, all
//! PERSON_ONLY. The checks themselves are in [`super::presence`].

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::core::Vault;
use super::passkeys::{self, NewPasskey, PasskeyInfo};
use super::presence::{self, Passkey, Presence, PresenceError, Purpose};
use super::{VaultError, VaultValue};
use crate::kernel::events::NewEvent;
use crate::kernel::module::{Ctx, StartError, ToolDef};
use crate::kernel::tools::{ErrorKind, ToolError};

impl From<PresenceError> for ToolError {
    fn from(e: PresenceError) -> Self {
        let kind = match &e {
            PresenceError::Invalid(_) => ErrorKind::InvalidInput,
            PresenceError::NoMethod => ErrorKind::Conflict,
            PresenceError::UnknownPasskey => ErrorKind::NotFound,
            PresenceError::TooManyAttempts(_) => ErrorKind::Busy,
            _ => ErrorKind::Refused,
        };
        ToolError::new(kind, e.code(), e.to_string())
    }
}

/// A field a person may see of an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    /// A secret's or a note's text.
    Value,
    Username,
    Password,
    /// A login's TOTP code for now (never its seed).
    Totp,
    Notes,
    /// A card's.
    Number,
    Holder,
    Expiry,
    Code,
}

impl Field {
    fn as_str(self) -> &'static str {
        match self {
            Field::Value => "value",
            Field::Username => "username",
            Field::Password => "password",
            Field::Totp => "totp",
            Field::Notes => "notes",
            Field::Number => "number",
            Field::Holder => "holder",
            Field::Expiry => "expiry",
            Field::Code => "code",
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChallengeFor {
    /// Adding a passkey.
    Passkey,
    /// Showing `name`'s `field`.
    Reveal,
}

/// A reveal's challenge names the item and the field, said in the schema as the tool checks it.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("anyOf" = [
    { "properties": { "for": { "const": "passkey" } } },
    { "properties": { "for": { "const": "reveal" } }, "required": ["name", "field"] },
]))]
pub struct ChallengeInput {
    #[serde(rename = "for")]
    purpose: ChallengeFor,
    #[serde(default)]
    #[schemars(length(min = 1, max = 128), pattern(crate::kernel::tools::shape::ITEM), extend("not" = { "enum": [".", ".."] }))]
    name: Option<String>,
    #[serde(default)]
    field: Option<Field>,
}

#[derive(Serialize, JsonSchema)]
pub struct ChallengeOutput {
    /// base64url; the WebAuthn challenge, answerable once.
    challenge: String,
    expires_in_s: u64,
    /// The passkeys that may answer (WebAuthn's `allowCredentials`), with their sites.
    passkeys: Vec<PasskeyInfo>,
    /// Whether the vault passphrase may be given instead.
    passphrase: bool,
}

/// What the browser's `navigator.credentials.create` gave, base64url each.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddInput {
    /// What the person calls it ("MacBook Touch ID").
    #[schemars(length(min = 1, max = 80))]
    name: String,
    #[schemars(length(min = 1, max = 1400))]
    credential_id: String,
    #[schemars(length(min = 1, max = 4000))]
    client_data_json: String,
    #[schemars(length(min = 1, max = 8000))]
    authenticator_data: String,
    /// `response.getPublicKey()`: the SubjectPublicKeyInfo.
    #[schemars(length(min = 1, max = 2000))]
    public_key: String,
    /// `response.getPublicKeyAlgorithm()`: -7 (ES256) or -8 (EdDSA).
    alg: i64,
}

/// What the browser's `navigator.credentials.get` gave, base64url each.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Assertion {
    #[schemars(length(min = 1, max = 1400))]
    credential_id: String,
    #[schemars(length(min = 1, max = 4000))]
    client_data_json: String,
    #[schemars(length(min = 1, max = 8000))]
    authenticator_data: String,
    #[schemars(length(min = 1, max = 512))]
    signature: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RevealInput {
    #[schemars(length(min = 1, max = 128), pattern(crate::kernel::tools::shape::ITEM), extend("not" = { "enum": [".", ".."] }))]
    name: String,
    field: Field,
    /// The proof of presence: the vault passphrase ...
    #[serde(default)]
    passphrase: Option<crate::kernel::contracts::secret::Secret>,
    /// ... or a passkey's answer to a `vault.presence.challenge` for this name and field.
    #[serde(default)]
    passkey: Option<Assertion>,
}

#[derive(Serialize, JsonSchema)]
pub struct RevealOutput {
    name: String,
    field: Field,
    value: String,
    /// For a TOTP code: seconds until it changes.
    #[serde(skip_serializing_if = "Option::is_none")]
    expires_in_s: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveInput {
    #[schemars(length(min = 1, max = 1400))]
    id: String,
}

#[derive(Serialize, JsonSchema)]
pub struct PasskeysOutput {
    passkeys: Vec<PasskeyInfo>,
    /// Whether the vault passphrase proves presence too.
    passphrase: bool,
}

#[derive(Serialize, JsonSchema)]
pub struct Removed {
    removed: bool,
}

#[derive(Clone)]
struct Env {
    ctx: Ctx,
    vault: Arc<Vault>,
    presence: Arc<Presence>,
}

impl Env {
    async fn passkeys(&self) -> Result<Vec<PasskeyInfo>, ToolError> {
        Ok(self.ctx.store().read(|c| Ok(passkeys::list(c)?)).await?)
    }

    /// The passkey's answer checked, its challenge taken, its counter kept; its name.
    async fn passkey_proof(
        &self,
        a: &Assertion,
        purpose: &Purpose,
        caller: &str,
    ) -> Result<String, ToolError> {
        let id = a.credential_id.trim_end_matches('=').to_string();
        let lookup = id.clone();
        let row = self
            .ctx
            .store()
            .read(move |c| Ok(passkeys::get(c, &lookup)?))
            .await?
            .ok_or(PresenceError::UnknownPasskey)?;
        let key = Passkey {
            rp_id: &row.rp_id,
            alg: row.alg,
            public_key: &row.public_key,
            sign_count: row.sign_count,
        };
        let (challenge, count) = presence::check_assertion(
            &key,
            &presence::b64("client_data_json", &a.client_data_json)?,
            &presence::b64("authenticator_data", &a.authenticator_data)?,
            &presence::b64("signature", &a.signature)?,
        )?;
        self.presence.take(&challenge, purpose, caller)?;
        presence::check_counter(row.sign_count, count)?;
        self.ctx
            .store()
            .write(move |tx| Ok(passkeys::used(tx.conn(), &id, count)?))
            .await?;
        Ok(row.name)
    }

    /// The passphrase checked, with failures counted.
    async fn passphrase_proof(
        &self,
        p: &crate::kernel::contracts::secret::Secret,
    ) -> Result<(), ToolError> {
        self.presence.may_try_passphrase()?;
        match self.vault.check_passphrase(p).await {
            Ok(right) => {
                self.presence.passphrase_tried(right);
                if right {
                    Ok(())
                } else {
                    Err(VaultError::WrongPassphrase.into())
                }
            }
            Err(VaultError::NotWrapped) => Err(PresenceError::NoMethod.into()),
            Err(e) => Err(e.into()),
        }
    }
}

/// One field of a value, as the person sees it.
fn field_of(value: &VaultValue, field: Field) -> Result<(String, Option<u64>), ToolError> {
    let missing = || {
        ToolError::new(
            ErrorKind::NotFound,
            "no_such_field",
            format!(
                "a {} item has no {} field",
                value.kind().as_str(),
                field.as_str()
            ),
        )
    };
    let shown = |s: &crate::kernel::contracts::secret::Secret| s.expose().to_string();
    Ok(match (value, field) {
        (VaultValue::Secret(s) | VaultValue::Note(s), Field::Value) => (shown(s), None),
        (VaultValue::Login { username, .. }, Field::Username) => (shown(username), None),
        (VaultValue::Login { password, .. }, Field::Password) => (shown(password), None),
        (VaultValue::Login { notes: Some(n), .. }, Field::Notes)
        | (VaultValue::Card { notes: Some(n), .. }, Field::Notes) => (shown(n), None),
        (VaultValue::Card { number, .. }, Field::Number) => (shown(number), None),
        (VaultValue::Card { holder, .. }, Field::Holder) => (shown(holder), None),
        (VaultValue::Card { expiry, .. }, Field::Expiry) => (shown(expiry), None),
        (VaultValue::Card { code, .. }, Field::Code) => (shown(code), None),
        // An env set whole, as a .env file says it.
        (VaultValue::Env(vars), Field::Value) => (
            vars.iter()
                .map(|(k, v)| format!("{k}={}\n", v.expose()))
                .collect(),
            None,
        ),
        (VaultValue::Login { .. }, Field::Totp) => {
            let code = value
                .totp_now()
                .ok_or_else(missing)?
                .map_err(|why| ToolError::new(ErrorKind::Conflict, "totp_invalid", why))?;
            let left = 30 - (crate::now_ms() as u64 / 1000) % 30;
            (shown(&code), Some(left))
        }
        _ => return Err(missing()),
    })
}

pub fn register(ctx: &Ctx, vault: Arc<Vault>) -> Result<(), StartError> {
    let env = Env {
        ctx: ctx.clone(),
        vault,
        presence: Arc::new(Presence::default()),
    };
    ctx.tool_with(
        ToolDef::new(
            "vault.presence.challenge",
            "A one-time challenge for a passkey: to add one (for: passkey), or to show one field of one item (for: reveal, with name and field); the passkeys that may answer it.",
        )
        .person_only(),
        &env,
        |env, input: ChallengeInput, cx| async move {
            let purpose = match input.purpose {
                ChallengeFor::Passkey => Purpose::Register,
                ChallengeFor::Reveal => {
                    let (Some(item), Some(field)) = (input.name, input.field) else {
                        return Err(ToolError::invalid("a reveal's challenge needs name and field"));
                    };
                    Purpose::Reveal { item, field: field.as_str().to_string() }
                }
            };
            let challenge = env
                .presence
                .challenge(purpose, &cx.caller.label())
                .map_err(ToolError::internal)?;
            Ok(ChallengeOutput {
                challenge,
                expires_in_s: presence::CHALLENGE_TTL.as_secs(),
                passkeys: env.passkeys().await?,
                passphrase: env.vault.is_wrapped().await,
            })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "vault.passkey.add",
            "Keep a passkey (the browser's answer to a challenge for: passkey) that proves the person's presence from now on.",
        )
        .finishes()
        .person_only(),
        &env,
        |env, input: AddInput, cx| async move {
            let id = presence::b64("credential_id", &input.credential_id)?;
            let (challenge, reg) = presence::check_registration(
                &presence::b64("client_data_json", &input.client_data_json)?,
                &presence::b64("authenticator_data", &input.authenticator_data)?,
                &id,
                &presence::b64("public_key", &input.public_key)?,
                input.alg,
            )?;
            let by = cx.caller.label();
            env.presence.take(&challenge, &Purpose::Register, &by)?;
            let id = input.credential_id.trim_end_matches('=').to_string();
            let name = input.name.trim().to_string();
            let info = PasskeyInfo {
                id: id.clone(),
                name: name.clone(),
                rp_id: reg.rp_id.clone(),
                added_by: by.clone(),
                created_at: crate::now_ms(),
                last_used_at: None,
            };
            let added = env
                .ctx
                .store()
                .write(move |tx| {
                    let added = passkeys::add(
                        tx.conn(),
                        &NewPasskey {
                            id: &id,
                            name: &name,
                            rp_id: &reg.rp_id,
                            alg: reg.alg,
                            public_key: &reg.public_key,
                            sign_count: reg.sign_count,
                            added_by: &by,
                        },
                    )?;
                    if added {
                        tx.emit(NewEvent::new(
                            "vault.passkey_added",
                            serde_json::json!({ "name": name, "rp_id": reg.rp_id, "by": by }),
                        ))?;
                    }
                    Ok(added)
                })
                .await?;
            if !added {
                return Err(ToolError::new(ErrorKind::Conflict, "exists", "this passkey is kept already"));
            }
            Ok(info)
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "vault.passkey.list",
            "The passkeys that prove the person's presence, and whether the vault passphrase does too.",
        )
        .person_only(),
        &env,
        |env, _: crate::kernel::tools::NoInput, _| async move {
            Ok::<_, ToolError>(PasskeysOutput {
                passkeys: env.passkeys().await?,
                passphrase: env.vault.is_wrapped().await,
            })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "vault.passkey.remove",
            "Stop accepting a passkey as presence.",
        )
        .finishes()
        .person_only(),
        &env,
        |env, input: RemoveInput, cx| async move {
            let id = input.id.trim_end_matches('=').to_string();
            let by = cx.caller.label();
            let removed = env
                .ctx
                .store()
                .write(move |tx| {
                    let name = passkeys::remove(tx.conn(), &id)?;
                    if let Some(name) = &name {
                        tx.emit(NewEvent::new(
                            "vault.passkey_removed",
                            serde_json::json!({ "name": name, "by": by }),
                        ))?;
                    }
                    Ok(name.is_some())
                })
                .await?;
            Ok::<_, ToolError>(Removed { removed })
        },
    )?;
    ctx.tool_with(
        ToolDef::new(
            "vault.reveal",
            "Show a person one field of one item (value: a secret's, a note's or an env set's as KEY=value lines; username, password, totp: the code for now, notes; a card's number, holder, expiry, code) after a fresh proof of presence: the vault passphrase, or a passkey's answer to this name and field's challenge. Audited; never in an event.",
        )
        .person_only(),
        &env,
        |env, input: RevealInput, cx| async move {
            let caller = cx.caller.label();
            let field = input.field.as_str();
            let via = match (&input.passkey, &input.passphrase) {
                (Some(a), _) => {
                    let purpose = Purpose::Reveal { item: input.name.clone(), field: field.to_string() };
                    format!("passkey:{}", env.passkey_proof(a, &purpose, &caller).await?)
                }
                (None, Some(p)) => {
                    env.passphrase_proof(p).await?;
                    "passphrase".to_string()
                }
                (None, None) => return Err(PresenceError::Required.into()),
            };
            let value = env.vault.open_for_person(&input.name).await?;
            let (value, expires_in_s) = field_of(&value, input.field)?;
            // Shown only once the showing is on record.
            env.vault.revealed(&input.name, field, &caller, &via).await?;
            Ok(RevealOutput { name: input.name, field: input.field, value, expires_in_s })
        },
    )?;
    Ok(())
}
