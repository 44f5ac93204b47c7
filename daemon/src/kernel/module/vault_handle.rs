//! A module's view of the vault: the items its manifest declares, released one at a time.

use super::ctx::Ctx;

/// A module's view of the vault.
pub struct ModuleVault {
    pub(super) ctx: Ctx,
}

impl ModuleVault {
    /// The value of item `name`. Refused unless the manifest declares it under `needs.vault`
    /// (exactly, or by a prefix written `name*`) and a person granted it to this module.
    pub async fn fetch(
        &self,
        name: &str,
    ) -> Result<
        crate::kernel::contracts::secret::VaultValue,
        crate::kernel::contracts::vault::VaultError,
    > {
        use crate::kernel::contracts::vault::Grantee;
        self.declared(name)?;
        self.access()?
            .fetch(&Grantee::Module(self.ctx.name.to_string()), name)
            .await
    }

    /// Whether [`Self::fetch`] would release item `name`, and its kind, without opening it: for
    /// refusing a use before a person is asked to approve it.
    pub async fn may_fetch(
        &self,
        name: &str,
    ) -> Result<crate::kernel::contracts::secret::Kind, crate::kernel::contracts::vault::VaultError>
    {
        use crate::kernel::contracts::vault::Grantee;
        self.declared(name)?;
        self.access()?
            .may_fetch(&Grantee::Module(self.ctx.name.to_string()), name)
            .await
    }

    /// A relayed pass's item for one request from the person it was given to (ADR 0036): only
    /// for the Gate, which sends it.
    pub async fn open_pass(
        &self,
        pass: &str,
        proof: crate::kernel::contracts::vault::PassProof<'_>,
        destination: &str,
    ) -> Result<crate::kernel::contracts::vault::Opened, crate::kernel::contracts::vault::VaultError>
    {
        use crate::kernel::contracts::vault::Grantee;
        self.access()?
            .open_pass(
                &Grantee::Module(self.ctx.name.to_string()),
                pass,
                proof,
                destination,
            )
            .await
    }

    fn declared(&self, name: &str) -> Result<(), crate::kernel::contracts::vault::VaultError> {
        let declared = self
            .ctx
            .manifest
            .needs
            .vault
            .iter()
            .any(|d| match d.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => d == name,
            });
        if declared {
            Ok(())
        } else {
            Err(crate::kernel::contracts::vault::VaultError::NotDeclared {
                module: self.ctx.name.to_string(),
                item: name.to_string(),
            })
        }
    }

    /// The vault, or why it is not there.
    fn access(
        &self,
    ) -> Result<
        std::sync::Arc<dyn crate::kernel::contracts::vault::VaultAccess>,
        crate::kernel::contracts::vault::VaultError,
    > {
        use crate::kernel::contracts::vault::{VaultAccess, VaultError};
        self.ctx.get::<dyn VaultAccess>().ok_or_else(|| {
            VaultError::Unavailable(
                self.ctx
                    .kernel
                    .modules()
                    .snapshot()
                    .into_iter()
                    .find(|m| m.name == "vault")
                    .and_then(|m| m.reason)
                    .unwrap_or_else(|| "the vault module is not running".into()),
            )
        })
    }

    /// The value of item `name` for agent `agent`: refused unless this module runs agents
    /// (`does.agents` in its manifest) and a person granted the item to `agent:<agent>`.
    pub async fn fetch_for_agent(
        &self,
        agent: &str,
        name: &str,
    ) -> Result<
        crate::kernel::contracts::secret::VaultValue,
        crate::kernel::contracts::vault::VaultError,
    > {
        use crate::kernel::contracts::vault::Grantee;
        let runs_agents = self.ctx.manifest.does.agents;
        self.fetch_for(runs_agents, Grantee::Agent(agent.to_string()), name)
            .await
    }

    /// Whether [`Self::fetch_for_agent`] would release item `name`, and its kind, without
    /// opening it or recording a use.
    pub async fn may_fetch_for_agent(
        &self,
        agent: &str,
        name: &str,
    ) -> Result<crate::kernel::contracts::secret::Kind, crate::kernel::contracts::vault::VaultError>
    {
        use crate::kernel::contracts::vault::{Grantee, VaultError};
        if !self.ctx.manifest.does.agents {
            return Err(VaultError::NotDeclared {
                module: self.ctx.name.to_string(),
                item: name.to_string(),
            });
        }
        self.access()?
            .may_fetch(&Grantee::Agent(agent.to_string()), name)
            .await
    }

    /// The value of item `name` for watcher `watcher`: refused unless this module runs
    /// watchers (`does.watchers` in its manifest) and a person granted the item to
    /// `watcher:<watcher>`.
    pub async fn fetch_for_watcher(
        &self,
        watcher: &str,
        name: &str,
    ) -> Result<
        crate::kernel::contracts::secret::VaultValue,
        crate::kernel::contracts::vault::VaultError,
    > {
        use crate::kernel::contracts::vault::Grantee;
        let runs_watchers = self.ctx.manifest.does.watchers;
        self.fetch_for(runs_watchers, Grantee::Watcher(watcher.to_string()), name)
            .await
    }

    /// Item `name` for `grantee`, when the manifest lets this module act for such grantees.
    async fn fetch_for(
        &self,
        may: bool,
        grantee: crate::kernel::contracts::vault::Grantee,
        name: &str,
    ) -> Result<
        crate::kernel::contracts::secret::VaultValue,
        crate::kernel::contracts::vault::VaultError,
    > {
        use crate::kernel::contracts::vault::VaultError;
        if !may {
            return Err(VaultError::NotDeclared {
                module: self.ctx.name.to_string(),
                item: name.to_string(),
            });
        }
        self.access()?.fetch(&grantee, name).await
    }
}
