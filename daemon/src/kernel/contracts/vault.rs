//! The vault's contract (spec 7.5, floor rule 8): what a module asks of the vault through the
//! kernel (`ctx.vault().fetch`), and the errors and names every module speaks. The vault module
//! implements [`VaultAccess`] and provides it with `ctx.provide`; no module imports the vault.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use super::secret::VaultValue;
use crate::kernel::store::StoreError;
use crate::kernel::tools::{ErrorKind, ToolError};

#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    #[error("{0}")]
    InvalidName(String),
    #[error("an item named {0:?} exists; add --replace (\"replace\": true) to replace its value")]
    Exists(String),
    #[error("there is no such item in the vault")]
    NotFound,
    #[error("the vault is empty; there is nothing to rotate")]
    Empty,
    #[error("the vault is locked; unlock it with `vyre vault unlock`")]
    Locked,
    #[error("the passphrase is wrong")]
    WrongPassphrase,
    #[error("the vault's keys are not wrapped by a passphrase")]
    NotWrapped,
    #[error("a passphrase must be at least 8 characters")]
    WeakPassphrase,
    #[error(
        "with the keychain holding the key, the keychain's own lock protects it; a passphrase applies to the key file only"
    )]
    PassphraseOnKeychain,
    #[error(
        "the vault's master key is missing ({location}: {why}); the {items} item(s) sealed with it cannot be opened. Restore the key; Vyre never falls back to storing values in plain text"
    )]
    KeyMissing {
        location: String,
        items: i64,
        why: String,
    },
    #[error(
        "item {0:?} cannot be opened: it was altered or truncated (its authentication failed). Other items are not affected; put it again to replace it"
    )]
    Damaged(String),
    #[error("rotation stopped and nothing changed: {0}")]
    RotationFailed(String),
    #[error(
        "{grantee} has no grant on {item:?}; a person grants it with `vyre vault grant {item} <to>`"
    )]
    NotGranted { item: String, grantee: String },
    #[error("module {module} does not declare {item:?} under needs.vault in its module.json")]
    NotDeclared { module: String, item: String },
    #[error(
        "this pass was revoked by the person who gave it, or never was one; ask them for a new one"
    )]
    PassEnded,
    #[error("a relayed pass is used only by the Gate")]
    PassOnlyForGate,
    #[error(
        "this pass was accepted already, by another Vyre or by this one before; a pass is taken once: ask the person who gave it for a new one"
    )]
    PassTaken,
    #[error(
        "this request was sent through the pass before; each is sent once (a replay is refused)"
    )]
    PassReplayed,
    #[error(
        "this request's time is more than five minutes from this Vyre's clock; check the clocks of both machines"
    )]
    PassStale,
    #[error("the vault is not available: {0}")]
    Unavailable(String),
    #[error("{0}")]
    KeyStore(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<VaultError> for ToolError {
    fn from(e: VaultError) -> Self {
        let (kind, code) = match &e {
            VaultError::InvalidName(_) | VaultError::WeakPassphrase => {
                (ErrorKind::InvalidInput, "invalid_input")
            }
            VaultError::Exists(_) => (ErrorKind::Conflict, "exists"),
            VaultError::NotFound => (ErrorKind::NotFound, "unknown_item"),
            VaultError::Empty => (ErrorKind::Conflict, "vault_empty"),
            VaultError::Locked => (ErrorKind::Unavailable, "vault_locked"),
            VaultError::WrongPassphrase => (ErrorKind::Refused, "wrong_passphrase"),
            VaultError::NotWrapped | VaultError::PassphraseOnKeychain => {
                (ErrorKind::Conflict, "no_passphrase")
            }
            VaultError::KeyMissing { .. } => (ErrorKind::Unavailable, "vault_key_missing"),
            VaultError::Damaged(_) => (ErrorKind::Conflict, "item_damaged"),
            VaultError::RotationFailed(_) => (ErrorKind::Conflict, "rotation_failed"),
            VaultError::NotGranted { .. } => (ErrorKind::Refused, "not_granted"),
            VaultError::NotDeclared { .. } => (ErrorKind::Refused, "not_declared"),
            VaultError::PassEnded => (ErrorKind::Refused, "pass_revoked"),
            VaultError::PassOnlyForGate => (ErrorKind::Refused, "not_granted"),
            VaultError::PassTaken => (ErrorKind::Conflict, "pass_taken"),
            VaultError::PassReplayed => (ErrorKind::Refused, "pass_replayed"),
            VaultError::PassStale => (ErrorKind::Refused, "pass_stale"),
            VaultError::Unavailable(_) => (ErrorKind::Unavailable, "vault_unavailable"),
            VaultError::KeyStore(_) => (ErrorKind::Unavailable, "keystore_unavailable"),
            VaultError::Store(_) => {
                return ToolError::from(match e {
                    VaultError::Store(s) => s,
                    _ => unreachable!(),
                });
            }
        };
        ToolError::new(kind, code, e.to_string())
    }
}

/// Who an item is granted to: a module or an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grantee {
    Module(String),
    Agent(String),
    /// A watcher (spec 7.6): its runs get the items a person granted it.
    Watcher(String),
}

impl Grantee {
    /// `sessions` or `module:sessions` is a module; `agent:juno` an agent.
    pub fn parse(s: &str) -> Result<Grantee, VaultError> {
        let (grantee, name) = match s.split_once(':') {
            Some(("module", n)) => (Grantee::Module(n.to_string()), n),
            Some(("agent", n)) => (Grantee::Agent(n.to_string()), n),
            Some(("watcher", n)) => (Grantee::Watcher(n.to_string()), n),
            Some(_) => {
                return Err(VaultError::InvalidName(format!(
                    "{s:?}: grant to a module (`sessions`, `module:sessions`), an agent (`agent:<name>`) or a watcher (`watcher:<name>`)"
                )));
            }
            None => (Grantee::Module(s.to_string()), s),
        };
        if !crate::kernel::module::valid_module_name(name) {
            return Err(VaultError::InvalidName(format!(
                "{name:?} is not a module or agent name"
            )));
        }
        Ok(grantee)
    }
}

impl fmt::Display for Grantee {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Grantee::Module(n) => write!(f, "module:{n}"),
            Grantee::Agent(n) => write!(f, "agent:{n}"),
            Grantee::Watcher(n) => write!(f, "watcher:{n}"),
        }
    }
}

/// Item names: 1 to 128 characters, no path separators, no control characters, no leading or
/// trailing space.
pub fn valid_item_name(name: &str) -> Result<(), VaultError> {
    let bad = |why: &str| {
        Err(VaultError::InvalidName(format!(
            "item name {:?} {why}",
            name.chars().take(64).collect::<String>()
        )))
    };
    if name.is_empty() || name.chars().count() > 128 {
        return bad("must be 1 to 128 characters");
    }
    if name.contains(['/', '\\']) {
        return bad("must not contain a path separator");
    }
    if name.chars().any(char::is_control) {
        return bad("must not contain control characters");
    }
    if name.trim() != name || name == "." || name == ".." {
        return bad("must not start or end with a space, or be . or ..");
    }
    Ok(())
}

pub type FetchFuture<'a> =
    Pin<Box<dyn Future<Output = Result<VaultValue, VaultError>> + Send + 'a>>;

/// The tool that runs a relayed pass's request at the giving end (the gate module's), and the
/// caller `POST /v1/pass` calls it as: the endpoint and the module agree on these here.
pub const PASS_RELAY_TOOL: &str = "gate.relay";
pub const PASS_ENDPOINT_CALLER: &str = "pass";
/// The tool that binds a relayed pass to the key of the Vyre that accepts it (the vault
/// module's), called by `POST /v1/pass/bind` as [`PASS_ENDPOINT_CALLER`].
pub const PASS_BIND_TOOL: &str = "vault.pass.bind";

/// How far a relayed request's time may be from the giver's clock, either way.
pub const PASS_SKEW_MS: i64 = 5 * 60 * 1000;

/// A request another Vyre sent with a relayed pass (ADR 0036), signed with the key it bound to
/// the pass when it accepted it. `signed` is the JSON text `{"at", "nonce", "request"}` exactly
/// as it was signed; `sig` is the Ed25519 signature of [`pass_message`], base64url.
#[derive(Clone, Copy)]
pub struct PassProof<'a> {
    pub signed: &'a str,
    pub sig: &'a str,
}

/// What a relayed request's signature covers: a label that says what it is, the pass's id and
/// the signed text, so a signature is good for that one pass and that one text.
pub fn pass_message(pass: &str, signed: &str) -> Vec<u8> {
    let mut m = Vec::with_capacity(32 + pass.len() + signed.len());
    m.extend_from_slice(b"vyre-pass-relay-v1\0");
    m.extend_from_slice(pass.as_bytes());
    m.push(0);
    m.extend_from_slice(signed.as_bytes());
    m
}

pub type PassFuture<'a> = Pin<Box<dyn Future<Output = Result<Opened, VaultError>> + Send + 'a>>;

/// A relayed pass's item, opened for one request another person's Vyre sent through this one's
/// Gate (ADR 0036).
pub struct Opened {
    /// The pass's id.
    pub pass: String,
    /// The item it shares, by its name here.
    pub item: String,
    /// Who it was given to, as the giver named them.
    pub to: String,
    pub value: VaultValue,
}

pub type MayFetchFuture<'a> =
    Pin<Box<dyn Future<Output = Result<super::secret::Kind, VaultError>> + Send + 'a>>;

/// What the kernel hands modules as `ctx.vault()`: implemented by the vault module.
pub trait VaultAccess: Send + Sync {
    fn fetch<'a>(&'a self, grantee: &'a Grantee, name: &'a str) -> FetchFuture<'a>;
    /// Whether `fetch` would release the item (it exists and is granted), and its kind; opens
    /// nothing and records no use.
    fn may_fetch<'a>(&'a self, grantee: &'a Grantee, name: &'a str) -> MayFetchFuture<'a>;
    /// The item of relayed pass `pass`, when `proof` is signed by the key bound to it, is
    /// fresh and was not seen before, and the pass was not revoked, for the Gate (the only
    /// grantee a pass is used by) sending to `destination`; the use is kept.
    fn open_pass<'a>(
        &'a self,
        grantee: &'a Grantee,
        pass: &'a str,
        proof: PassProof<'a>,
        destination: &'a str,
    ) -> PassFuture<'a>;
}

impl super::Capability for dyn VaultAccess {
    const NAME: &'static str = "vault";
}
