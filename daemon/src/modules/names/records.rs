//! Who holds the name's DNS records: the name directory for `<you>.vyre.run`, or the DNS
//! provider of the person's own domain. The ACME challenge and the address go through this one
//! face, whichever it is.

use super::cloudflare::{Cloudflare, CloudflareError};
use super::directory::{Claim, Directory, DirectoryError};

/// The person's own domain, as kept in `VYRE_HOME/certs/domain.json` (the token stays in the
/// vault: only the item's name is here).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Domain {
    pub fqdn: String,
    /// `cloudflare`, the one provider so far.
    pub provider: String,
    /// The vault item holding the provider's API token.
    pub item: String,
}

pub enum Records {
    Directory(Directory, Claim),
    Cloudflare(Cloudflare),
}

impl Records {
    pub fn fqdn(&self) -> &str {
        match self {
            Records::Directory(_, claim) => &claim.fqdn,
            Records::Cloudflare(cf) => &cf.fqdn,
        }
    }

    pub async fn set_address(&self, address: &str) -> Result<(), RecordsError> {
        match self {
            Records::Directory(d, claim) => Ok(d.set_address(claim, address).await?),
            Records::Cloudflare(cf) => Ok(cf.set_address(address).await?),
        }
    }

    pub async fn set_challenge(&self, value: &str) -> Result<(), RecordsError> {
        match self {
            Records::Directory(d, claim) => Ok(d.set_challenge(claim, value).await?),
            Records::Cloudflare(cf) => Ok(cf.set_challenge(value).await?),
        }
    }

    pub async fn clear_challenge(&self) -> Result<(), RecordsError> {
        match self {
            Records::Directory(d, claim) => Ok(d.clear_challenge(claim).await?),
            Records::Cloudflare(cf) => Ok(cf.clear_challenge().await?),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RecordsError {
    #[error(transparent)]
    Directory(#[from] DirectoryError),
    #[error(transparent)]
    Cloudflare(#[from] CloudflareError),
}
