//! A person's own domain through Cloudflare's DNS API (v4): the name's A record points at the
//! box's private address, and the `_acme-challenge` TXT record answers a DNS-01 challenge. The
//! API token is the person's (a vault item granted to `names`); it needs Zone:Read, to find the
//! zone that holds the name, and DNS:Edit on that zone.

use serde_json::{Value, json};

use crate::kernel::outbound::{Answer, Http};

/// Cloudflare's API unless `names.cloudflare` says otherwise.
pub const API: &str = "https://api.cloudflare.com/client/v4";

/// How long a record is cached: short, so a new address or challenge is seen soon.
const TTL: u32 = 60;

#[derive(Clone)]
pub struct Cloudflare {
    api: String,
    http: Http,
    token: String,
    /// The zone's id.
    zone: String,
    /// The whole name, e.g. `vyre.example.com`.
    pub fqdn: String,
}

#[derive(Debug, thiserror::Error)]
pub enum CloudflareError {
    #[error("Cloudflare cannot be reached: {0}")]
    Unreachable(String),
    #[error("Cloudflare refused: {0}")]
    Refused(String),
    #[error(
        "the token sees no Cloudflare zone holding {0}: add the domain to Cloudflare, or give the token Zone:Read on it"
    )]
    NoZone(String),
}

impl Cloudflare {
    /// The zone that holds `fqdn`: the longest of its suffixes the token can see as a zone.
    pub async fn find(
        api: &str,
        http: Http,
        token: &str,
        fqdn: &str,
    ) -> Result<Cloudflare, CloudflareError> {
        let api = api.trim_end_matches('/').to_string();
        let labels: Vec<&str> = fqdn.split('.').collect();
        for start in 0..labels.len().saturating_sub(1) {
            let candidate = labels[start..].join(".");
            let a = call(
                &http,
                "GET",
                &format!("{api}/zones?name={candidate}"),
                token,
                None,
            )
            .await?;
            if let Some(zone) = a.body["result"]
                .as_array()
                .and_then(|zones| zones.iter().find(|z| z["name"] == candidate.as_str()))
                .and_then(|z| z["id"].as_str())
            {
                return Ok(Cloudflare {
                    api,
                    http,
                    token: token.to_string(),
                    zone: zone.to_string(),
                    fqdn: fqdn.to_string(),
                });
            }
        }
        Err(CloudflareError::NoZone(fqdn.to_string()))
    }

    /// The name's one A record points at `address`; any other A record of the name goes.
    pub async fn set_address(&self, address: &str) -> Result<(), CloudflareError> {
        let record = json!({
            "type": "A", "name": self.fqdn, "content": address, "ttl": TTL,
            // Never through Cloudflare's proxy: the address is private, and only the person's
            // devices, through the tunnel, may reach it.
            "proxied": false,
            "comment": "Vyre: this box on its private network",
        });
        let existing = self.records("A", &self.fqdn).await?;
        let mut kept = false;
        for id in existing {
            if kept {
                self.delete(&id).await?;
            } else {
                self.send("PUT", &format!("/dns_records/{id}"), Some(&record))
                    .await?;
                kept = true;
            }
        }
        if !kept {
            self.send("POST", "/dns_records", Some(&record)).await?;
        }
        Ok(())
    }

    /// Add `value` as the name's `_acme-challenge` TXT record.
    pub async fn set_challenge(&self, value: &str) -> Result<(), CloudflareError> {
        let record = json!({
            "type": "TXT", "name": self.challenge(), "content": value, "ttl": TTL,
            "comment": "Vyre: an ACME DNS-01 challenge",
        });
        self.send("POST", "/dns_records", Some(&record)).await?;
        Ok(())
    }

    /// Remove every `_acme-challenge` TXT record of the name (those an earlier, interrupted
    /// order left too).
    pub async fn clear_challenge(&self) -> Result<(), CloudflareError> {
        for id in self.records("TXT", &self.challenge()).await? {
            self.delete(&id).await?;
        }
        Ok(())
    }

    fn challenge(&self) -> String {
        format!("_acme-challenge.{}", self.fqdn)
    }

    async fn records(&self, kind: &str, name: &str) -> Result<Vec<String>, CloudflareError> {
        let a = self
            .send(
                "GET",
                &format!("/dns_records?type={kind}&name={name}"),
                None,
            )
            .await?;
        Ok(a.body["result"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["name"] == name && r["type"] == kind)
            .filter_map(|r| r["id"].as_str().map(str::to_string))
            .collect())
    }

    async fn delete(&self, id: &str) -> Result<(), CloudflareError> {
        self.send("DELETE", &format!("/dns_records/{id}"), None)
            .await
            .map(drop)
    }

    async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Answer, CloudflareError> {
        let url = format!("{}/zones/{}{path}", self.api, self.zone);
        call(&self.http, method, &url, &self.token, body).await
    }
}

async fn call(
    http: &Http,
    method: &str,
    url: &str,
    token: &str,
    body: Option<&Value>,
) -> Result<Answer, CloudflareError> {
    let a = http
        .json(method, url, Some(token), body)
        .await
        .map_err(CloudflareError::Unreachable)?;
    if a.ok() && a.body["success"] != false {
        return Ok(a);
    }
    Err(CloudflareError::Refused(refusal(&a)))
}

/// Cloudflare's errors, `[{code, message}]`, in one line.
fn refusal(a: &Answer) -> String {
    let said: Vec<String> = a.body["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let message = e["message"].as_str()?;
            Some(match e["code"].as_i64() {
                Some(code) => format!("{message} ({code})"),
                None => message.to_string(),
            })
        })
        .collect();
    if said.is_empty() {
        format!("HTTP {}", a.status)
    } else {
        format!("{} (HTTP {})", said.join("; "), a.status)
    }
}

/// A domain a person may use: lowercase DNS labels, at least two, 253 characters at most.
pub fn valid_domain(domain: &str) -> bool {
    let labels: Vec<&str> = domain.split('.').collect();
    domain.len() <= 253
        && labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
        && !labels
            .last()
            .is_some_and(|tld| tld.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::valid_domain;

    #[test]
    fn a_domain_is_lowercase_labels_and_never_an_address_or_a_query() {
        for good in ["vyre.example.com", "a.b.co.uk", "x-1.example.org"] {
            assert!(valid_domain(good), "{good}");
        }
        for bad in [
            "example",
            "Vyre.example.com",
            "vyre..example.com",
            "-a.example.com",
            "10.0.0.1",
            "a.example.com/evil",
            "a.example.com?x=1",
            "a.example.com&name=b",
            ".example.com",
            "example.com.",
            "",
        ] {
            assert!(!valid_domain(bad), "{bad}");
        }
        assert!(!valid_domain(&format!("{}.com", "a".repeat(64))));
    }
}
