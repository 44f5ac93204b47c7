//! The name directory's client: the small service at vyre.run that holds `<you>.vyre.run`'s DNS
//! records and nothing else (spec principle "not a hosted service"). Its API is in
//! `docs/directory-api.md`: claim a name (which answers the name's token, kept in
//! `VYRE_HOME/certs/directory.json`, 0600), set its A record to the box's network address, and
//! set or clear its `_acme-challenge` TXT record for a DNS-01 challenge.

use serde_json::json;

use crate::kernel::outbound::Http;

/// A name this vyred holds in the directory.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Claim {
    /// The label claimed, e.g. `alex`.
    pub name: String,
    /// The whole name, e.g. `alex.vyre.run`.
    pub fqdn: String,
    /// The directory's credential for this name.
    pub token: String,
}

#[derive(Clone)]
pub struct Directory {
    pub url: String,
    http: Http,
}

impl Directory {
    pub fn new(url: &str, http: Http) -> Directory {
        Directory {
            url: url.trim_end_matches('/').to_string(),
            http,
        }
    }

    /// Claim `name`; `name_taken` when someone holds it.
    pub async fn claim(&self, name: &str) -> Result<Claim, DirectoryError> {
        let a = self
            .http
            .json(
                "POST",
                &format!("{}/v1/names", self.url),
                None,
                Some(&json!({ "name": name })),
            )
            .await
            .map_err(DirectoryError::Unreachable)?;
        if a.status == 409 {
            return Err(DirectoryError::Taken(name.to_string()));
        }
        if !a.ok() {
            return Err(DirectoryError::Refused(a.error()));
        }
        let claim: Claim = serde_json::from_value(a.body["data"].clone())
            .map_err(|e| DirectoryError::Refused(format!("the directory's answer: {e}")))?;
        Ok(claim)
    }

    /// Point the name at `address` (the box's address on its private network).
    pub async fn set_address(&self, claim: &Claim, address: &str) -> Result<(), DirectoryError> {
        self.put(claim, "a", &json!({ "address": address })).await
    }

    /// Set the name's `_acme-challenge` TXT record to `value`.
    pub async fn set_challenge(&self, claim: &Claim, value: &str) -> Result<(), DirectoryError> {
        self.put(claim, "txt", &json!({ "value": value })).await
    }

    /// Remove the name's `_acme-challenge` TXT record.
    pub async fn clear_challenge(&self, claim: &Claim) -> Result<(), DirectoryError> {
        let a = self
            .http
            .json(
                "DELETE",
                &self.record_url(claim, "txt"),
                Some(&claim.token),
                None,
            )
            .await
            .map_err(DirectoryError::Unreachable)?;
        if a.ok() {
            Ok(())
        } else {
            Err(DirectoryError::Refused(a.error()))
        }
    }

    async fn put(
        &self,
        claim: &Claim,
        record: &str,
        body: &serde_json::Value,
    ) -> Result<(), DirectoryError> {
        let a = self
            .http
            .json(
                "PUT",
                &self.record_url(claim, record),
                Some(&claim.token),
                Some(body),
            )
            .await
            .map_err(DirectoryError::Unreachable)?;
        if a.ok() {
            Ok(())
        } else {
            Err(DirectoryError::Refused(a.error()))
        }
    }

    fn record_url(&self, claim: &Claim, record: &str) -> String {
        format!("{}/v1/names/{}/{record}", self.url, claim.name)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DirectoryError {
    #[error("the name directory cannot be reached: {0}")]
    Unreachable(String),
    #[error("{0:?} is taken: choose another name")]
    Taken(String),
    #[error("the name directory refused: {0}")]
    Refused(String),
}
