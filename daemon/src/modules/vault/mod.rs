//! The vault (spec 7.5, floor rule 8, ADR 0030 section 4): credentials sealed at rest, released
//! one item at a time to a module or agent that declared it and that a person granted.
//!
//! - [`seal`]: XChaCha20-Poly1305 sealing and argon2id passphrase keys.
//! - [`keystore`]: where the master keys live (a 0600 key file, or the OS keychain).
//! - [`items`]: the rows (items and grants).
//! - [`core`]: the vault: put, fetch, grants, rotation, locking.
//! - [`generate`]: new passwords and passphrases (`vault.generate`).
//! - [`import`]: password managers' exports (`vault.import`).
//! - [`presence`], [`passkeys`], [`reveal`]: a value shown to a person who just proved presence
//!   (`vault.reveal`, by passkey or passphrase; ADR 0035).
//! - [`passes`], [`pass_seal`], [`pass_tools`]: one item shared with another person's Vyre,
//!   relayed or sealed, and offboarding (ADR 0036).
//!
//! What other modules may know of it is its contract, [`crate::kernel::contracts::vault`] (with the
//! value types in [`crate::kernel::contracts::secret`]); the vault provides [`VaultAccess`] at start.
//!
//! Tools: `vault.put`, `vault.delete`, `vault.grant`, `vault.revoke`, `vault.rotate`,
//! `vault.unlock`, `vault.lock` and `vault.passphrase` are PERSON_ONLY; `vault.list` and
//! `vault.status` never show a value. Modules read values only through `ctx.vault().fetch`.

pub mod core;
pub mod generate;
pub mod import;
pub mod items;
pub mod keystore;
pub mod pass_code;
pub mod pass_seal;
pub mod pass_tools;
pub mod passes;
pub mod passkeys;
pub mod presence;
pub mod reveal;
pub mod seal;
/// Public so that the fuzz targets (`fuzz/`) check these tools' input types.
pub mod tools;
pub mod totp_qr;

pub use self::core::{KeyState, StopAfter, Vault};
pub use crate::kernel::contracts::secret::{Kind, Secret, VaultValue};
pub use crate::kernel::contracts::vault::{
    FetchFuture, Grantee, MayFetchFuture, PassFuture, PassProof, VaultAccess, VaultError,
    valid_item_name,
};

impl VaultAccess for Vault {
    fn fetch<'a>(&'a self, grantee: &'a Grantee, name: &'a str) -> FetchFuture<'a> {
        Box::pin(Vault::fetch(self, grantee, name))
    }
    fn may_fetch<'a>(&'a self, grantee: &'a Grantee, name: &'a str) -> MayFetchFuture<'a> {
        Box::pin(Vault::may_fetch(self, grantee, name))
    }
    fn open_pass<'a>(
        &'a self,
        grantee: &'a Grantee,
        pass: &'a str,
        proof: PassProof<'a>,
        destination: &'a str,
    ) -> PassFuture<'a> {
        Box::pin(Vault::open_pass(self, grantee, pass, proof, destination))
    }
}

/// The built-in module.
pub struct VaultModule;

impl crate::kernel::module::Module for VaultModule {
    fn name(&self) -> &str {
        "vault"
    }
    fn manifest(&self) -> &str {
        include_str!("module.json")
    }
    fn start(&self, ctx: crate::kernel::module::Ctx) -> crate::kernel::module::StartFuture {
        Box::pin(async move {
            ctx.store().migrate(items::MIGRATIONS).await?;
            let store = tools::key_store(&ctx)?;
            let vault = Vault::open(ctx.clone(), store).await?;
            ctx.provide::<dyn VaultAccess>(vault.clone())?;
            tools::register(&ctx, vault.clone())?;
            reveal::register(&ctx, vault.clone())?;
            pass_tools::register(&ctx, vault)?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod name_tests {
    use super::*;

    #[test]
    fn names_and_grantees() {
        for ok in ["anthropic-api-key", "GitHub token", "a.b_c@d", "x"] {
            assert!(valid_item_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "a/b",
            "..",
            "a\\b",
            "tab\there",
            "nl\n",
            " lead",
            "trail ",
            &"x".repeat(129),
        ] {
            assert!(valid_item_name(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            Grantee::parse("sessions").unwrap(),
            Grantee::Module("sessions".into())
        );
        assert_eq!(
            Grantee::parse("agent:juno").unwrap().to_string(),
            "agent:juno"
        );
        assert!(Grantee::parse("person:me").is_err());
        assert!(Grantee::parse("module:Bad Name").is_err());
    }
}
