//! A certificate for a name by ACME's DNS-01 challenge (RFC 8555), which proves control of the
//! name's DNS and so works for a name that points at a private address. The TXT record is set
//! through whoever holds the name's DNS (the directory for `<you>.vyre.run`, the person's DNS
//! provider for their own domain).

use std::path::Path;
use std::time::Duration;

use instant_acme::{
    Account, AccountCredentials, AuthorizationStatus, ChallengeType, Identifier, NewAccount,
    NewOrder, OrderStatus, RetryPolicy,
};

use super::records::Records;

/// A certificate and its key, as PEM.
pub struct Issued {
    pub chain_pem: String,
    pub key_pem: String,
}

/// The ACME account: made once, its credentials kept in `VYRE_HOME/certs/account.json`.
pub async fn account(
    directory_url: &str,
    ca: Option<&Path>,
    saved: Option<AccountCredentials>,
) -> Result<(Account, Option<AccountCredentials>), String> {
    let builder = match ca {
        Some(pem) => Account::builder_with_root(pem),
        None => Account::builder(),
    }
    .map_err(|e| format!("the ACME client: {e}"))?;
    if let Some(saved) = saved {
        let account = builder
            .from_credentials(saved)
            .await
            .map_err(|e| format!("the ACME account: {e}"))?;
        return Ok((account, None));
    }
    let (account, credentials) = builder
        .create(
            &NewAccount {
                contact: &[],
                terms_of_service_agreed: true,
                only_return_existing: false,
            },
            directory_url.to_string(),
            None,
        )
        .await
        .map_err(|e| format!("cannot open an account at {directory_url}: {e}"))?;
    Ok((account, Some(credentials)))
}

/// Order a certificate for the name, answering its DNS-01 challenge through whoever holds its
/// records.
pub async fn issue(account: &Account, records: &Records) -> Result<Issued, String> {
    let identifiers = [Identifier::Dns(records.fqdn().to_string())];
    let mut order = account
        .new_order(&NewOrder::new(&identifiers))
        .await
        .map_err(|e| format!("the certificate order: {e}"))?;
    let mut authorizations = order.authorizations();
    while let Some(authz) = authorizations.next().await {
        let mut authz = authz.map_err(|e| format!("the order's authorization: {e}"))?;
        if authz.status == AuthorizationStatus::Valid {
            continue;
        }
        let mut challenge = authz
            .challenge(ChallengeType::Dns01)
            .ok_or("the certificate authority offers no DNS-01 challenge")?;
        let value = challenge.key_authorization().dns_value();
        records
            .set_challenge(&value)
            .await
            .map_err(|e| e.to_string())?;
        challenge
            .set_ready()
            .await
            .map_err(|e| format!("the DNS-01 challenge: {e}"))?;
    }
    let retries = RetryPolicy::new()
        .initial_delay(Duration::from_millis(250))
        .timeout(Duration::from_secs(90));
    let status = order
        .poll_ready(&retries)
        .await
        .map_err(|e| format!("the certificate order: {e}"))?;
    let _ = records.clear_challenge().await;
    if status != OrderStatus::Ready {
        return Err(format!(
            "the certificate authority did not accept the DNS-01 challenge (order {status:?})"
        ));
    }
    let key_pem = order
        .finalize()
        .await
        .map_err(|e| format!("finishing the order: {e}"))?;
    let chain_pem = order
        .poll_certificate(&retries)
        .await
        .map_err(|e| format!("the certificate: {e}"))?;
    Ok(Issued { chain_pem, key_pem })
}
