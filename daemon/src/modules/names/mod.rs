//! `names`: this vyred's own name, `<you>.vyre.run`, pointing at its address on the private
//! network, with a certificate for it (spec 7.10; issue 21). The name directory (vyre.run, a
//! small service outside this repository: `docs/directory-api.md`) holds the name's DNS records
//! and nothing else; the certificate comes by ACME's DNS-01 challenge, answered through the
//! directory, so it works although the address is private.
//!
//! - `names.claim {name}` claims the name, points it at the network address, gets the
//!   certificate and starts serving HTTPS at the name inside the tunnel.
//! - `names.use_domain {domain, provider, token | item}` does the same for the person's own
//!   domain, through their DNS provider's API (Cloudflare) with a token kept in the vault.
//! - `names.status` says the name, its certificate's expiry and when it renews.
//! - `names.renew` renews now; a task renews by itself `names.renew_days` before expiry.
//!
//! The network serves HTTPS with what this module provides (`contracts::certificates`).

mod acme;
mod certs;
mod cloudflare;
mod directory;
mod records;

use std::sync::{Arc, RwLock};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio_rustls::rustls::ServerConfig;

use crate::kernel::contracts::certificates::Certificates;
use crate::kernel::events::NewEvent;
use crate::kernel::module::{Ctx, Module, StartFuture, ToolDef};
use crate::kernel::tools::{Caller, ErrorKind, NoInput, ToolError};

use certs::CertDir;
use cloudflare::{Cloudflare, CloudflareError};
use directory::{Claim, Directory, DirectoryError};
use records::{Domain, Records};

pub struct NamesModule;

/// Where the directory lives unless `names.directory` says otherwise.
pub const DIRECTORY: &str = "https://vyre.run";
/// The ACME directory unless `names.acme` says otherwise: Let's Encrypt.
pub const ACME: &str = "https://acme-v02.api.letsencrypt.org/directory";
/// Days before expiry a certificate is renewed, unless `names.renew_days` says otherwise.
pub const RENEW_DAYS: u32 = 30;
/// The vault item `names.use_domain` keeps a Cloudflare token in.
pub const CLOUDFLARE_ITEM: &str = "dns-cloudflare";

/// The certificate being served, shared with the network through the contract.
#[derive(Default)]
struct Serving {
    fqdn: Option<String>,
    config: Option<Arc<ServerConfig>>,
    not_after: Option<i64>,
    error: Option<String>,
}

#[derive(Clone)]
struct Names {
    ctx: Ctx,
    serving: Arc<RwLock<Serving>>,
    /// One claim or renewal at a time.
    busy: Arc<tokio::sync::Mutex<()>>,
    woken: Arc<tokio::sync::Notify>,
}

struct Provided(Arc<RwLock<Serving>>);

impl Certificates for Provided {
    fn server_config(&self) -> Option<Arc<ServerConfig>> {
        self.0.read().expect("names").config.clone()
    }
    fn names(&self) -> Vec<String> {
        self.0.read().expect("names").fqdn.iter().cloned().collect()
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimInput {
    /// The name to claim: `alex` makes `alex.vyre.run`. Lowercase letters, digits and inner
    /// hyphens.
    #[schemars(length(min = 1, max = 63), pattern(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"))]
    name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    Cloudflare,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DomainInput {
    /// The person's own name for this Vyre, e.g. `vyre.example.com`: lowercase DNS labels.
    #[schemars(length(min = 3, max = 253))]
    domain: String,
    /// Who holds the domain's DNS.
    provider: Provider,
    /// The provider's API token (Cloudflare: Zone:Read, and DNS:Edit on the zone). Kept in the
    /// vault as `dns-cloudflare`, never shown again.
    #[schemars(length(min = 1, max = 4096))]
    token: Option<String>,
    /// Instead of `token`: the vault item (named `dns-…`) that holds it.
    #[schemars(length(min = 5, max = 128), pattern(r"^dns-"))]
    item: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Status {
    /// The name, e.g. alex.vyre.run, once claimed.
    fqdn: Option<String>,
    /// Who holds the name's records: `directory` (`<you>.vyre.run`) or the person's DNS
    /// provider (`cloudflare`).
    via: Option<String>,
    /// Where the web app opens at the name (through the private network), once its
    /// certificate is served.
    url: Option<String>,
    /// When the certificate expires (ms since the epoch).
    not_after: Option<i64>,
    /// When it renews (ms since the epoch).
    renews_at: Option<i64>,
    /// What went wrong with the last claim or renewal, if it did.
    error: Option<String>,
}

impl Names {
    fn certs(&self) -> CertDir {
        CertDir::new(self.ctx.home().root().join("certs"))
    }

    fn directory(&self) -> Result<Directory, ToolError> {
        let url = self
            .ctx
            .config()
            .names
            .directory
            .clone()
            .unwrap_or_else(|| DIRECTORY.to_string());
        let http = crate::kernel::outbound::Http::new().map_err(ToolError::internal)?;
        Ok(Directory::new(&url, http))
    }

    fn cloudflare_api(&self) -> String {
        self.ctx
            .config()
            .names
            .cloudflare
            .clone()
            .unwrap_or_else(|| cloudflare::API.to_string())
    }

    /// The name this Vyre holds, and who holds its records: the person's own domain first.
    fn held(&self) -> Option<Held> {
        let certs = self.certs();
        if let Some(domain) = certs.load_json::<Domain>("domain.json") {
            return Some(Held::Domain(domain));
        }
        certs.load_json::<Claim>("directory.json").map(Held::Claim)
    }

    /// The records of what is held, ready to be written.
    async fn records(&self, held: Held) -> Result<Records, ToolError> {
        match held {
            Held::Claim(claim) => Ok(Records::Directory(self.directory()?, claim)),
            Held::Domain(domain) => {
                let token = self.ctx.vault().fetch(&domain.item).await?;
                let http = crate::kernel::outbound::Http::new().map_err(ToolError::internal)?;
                let cf = Cloudflare::find(
                    &self.cloudflare_api(),
                    http,
                    token.primary().expose(),
                    &domain.fqdn,
                )
                .await
                .map_err(cloudflare_error)?;
                Ok(Records::Cloudflare(cf))
            }
        }
    }

    fn renew_days(&self) -> i64 {
        i64::from(self.ctx.config().names.renew_days.unwrap_or(RENEW_DAYS))
    }

    fn status(&self) -> Status {
        let s = self.serving.read().expect("names");
        Status {
            fqdn: s.fqdn.clone(),
            via: self.held().map(|h| h.via().to_string()),
            // Only once a certificate is served there: before, the address does not open.
            url: s
                .fqdn
                .as_ref()
                .filter(|_| s.config.is_some())
                .map(|f| format!("https://{f}/app/")),
            not_after: s.not_after,
            renews_at: s.not_after.map(|t| t - self.renew_days() * 86_400_000),
            error: s.error.clone(),
        }
    }

    /// The network's address, which the name points at.
    async fn network_address(&self) -> Result<String, ToolError> {
        let status = self.ctx.call("network.status", json!({})).await?;
        match status["address"].as_str() {
            Some(a) if status["up"] == true => Ok(a.to_string()),
            _ => Err(ToolError::conflict(
                "network_down",
                "the private network is not up: add a device first (network.join), or set network.enabled",
            )),
        }
    }

    async fn claim(&self, input: ClaimInput) -> Result<Status, ToolError> {
        let _one = self.busy.lock().await;
        let certs = self.certs();
        if let Some(domain) = certs.load_json::<Domain>("domain.json") {
            return Err(ToolError::conflict(
                "name_held",
                format!("this Vyre uses its own domain, {}", domain.fqdn),
            ));
        }
        if let Some(held) = certs.load_json::<Claim>("directory.json")
            && held.name != input.name
        {
            return Err(ToolError::conflict(
                "name_held",
                format!("this Vyre already holds {}", held.fqdn),
            ));
        }
        let address = self.network_address().await?;
        let directory = self.directory()?;
        let claim = match certs.load_json::<Claim>("directory.json") {
            Some(held) => held,
            None => {
                let claim = directory
                    .claim(&input.name)
                    .await
                    .map_err(directory_error)?;
                certs
                    .save_json("directory.json", &claim)
                    .map_err(ToolError::internal)?;
                claim
            }
        };
        directory
            .set_address(&claim, &address)
            .await
            .map_err(directory_error)?;
        self.certify(&Records::Directory(directory, claim)).await?;
        Ok(self.status())
    }

    /// Use the person's own domain: its zone found with their token, its A record pointed at
    /// the network address, its certificate issued through the provider's DNS. The token is
    /// tried before it is kept, and kept only in the vault.
    async fn use_domain(&self, input: DomainInput, caller: &Caller) -> Result<Status, ToolError> {
        let _one = self.busy.lock().await;
        let Provider::Cloudflare = input.provider;
        let domain = input.domain.trim().to_ascii_lowercase();
        if !cloudflare::valid_domain(&domain) {
            return Err(ToolError::new(
                ErrorKind::InvalidInput,
                "invalid_domain",
                format!("{domain:?} is not a domain name such as vyre.example.com"),
            ));
        }
        let address = self.network_address().await?;
        let http = crate::kernel::outbound::Http::new().map_err(ToolError::internal)?;
        let (cf, item) = match (input.token, input.item) {
            (Some(token), None) => {
                let cf = Cloudflare::find(&self.cloudflare_api(), http, token.trim(), &domain)
                    .await
                    .map_err(cloudflare_error)?;
                self.ctx
                    .call_as(
                        caller,
                        "vault.put",
                        json!({ "name": CLOUDFLARE_ITEM, "kind": "secret", "value": token.trim(), "replace": true }),
                    )
                    .await?;
                (cf, CLOUDFLARE_ITEM.to_string())
            }
            (None, Some(item)) => {
                self.ctx
                    .call_as(
                        caller,
                        "vault.grant",
                        json!({ "item": item, "to": "module:names" }),
                    )
                    .await?;
                let token = self.ctx.vault().fetch(&item).await?;
                let cf = Cloudflare::find(
                    &self.cloudflare_api(),
                    http,
                    token.primary().expose(),
                    &domain,
                )
                .await
                .map_err(cloudflare_error)?;
                (cf, item)
            }
            _ => {
                return Err(ToolError::new(
                    ErrorKind::InvalidInput,
                    "token_needed",
                    "give the provider's API token (token), or the vault item holding it (item)",
                ));
            }
        };
        if item == CLOUDFLARE_ITEM {
            self.ctx
                .call_as(
                    caller,
                    "vault.grant",
                    json!({ "item": item, "to": "module:names" }),
                )
                .await?;
        }
        cf.set_address(&address).await.map_err(cloudflare_error)?;
        self.certs()
            .save_json(
                "domain.json",
                &Domain {
                    fqdn: domain,
                    provider: "cloudflare".into(),
                    item,
                },
            )
            .map_err(ToolError::internal)?;
        self.certify(&Records::Cloudflare(cf)).await?;
        Ok(self.status())
    }

    /// Get a certificate for the held name and serve it.
    async fn certify(&self, records: &Records) -> Result<(), ToolError> {
        let fqdn = records.fqdn().to_string();
        let result = self.issue(records).await;
        let mut serving = self.serving.write().expect("names");
        if serving.fqdn.as_deref() != Some(&fqdn) {
            // Another name: what was served for the old one is not this name's.
            serving.config = None;
            serving.not_after = None;
        }
        serving.fqdn = Some(fqdn.clone());
        match result {
            Ok(loaded) => {
                serving.config = Some(loaded.config);
                serving.not_after = Some(loaded.not_after);
                serving.error = None;
                drop(serving);
                self.woken.notify_one();
                let ctx = self.ctx.clone();
                let not_after = loaded.not_after;
                tokio::spawn(async move {
                    let _ = ctx
                        .events()
                        .emit(NewEvent::new(
                            "names.certified",
                            json!({ "name": fqdn, "not_after": not_after }),
                        ))
                        .await;
                });
                Ok(())
            }
            Err(e) => {
                serving.error = Some(e.clone());
                Err(ToolError::new(
                    ErrorKind::Unavailable,
                    "certificate_failed",
                    e,
                ))
            }
        }
    }

    async fn issue(&self, records: &Records) -> Result<certs::Loaded, String> {
        let config = &self.ctx.config().names;
        let acme_url = config.acme.clone().unwrap_or_else(|| ACME.to_string());
        let certs = self.certs();
        let saved = certs.load_json("account.json");
        let (account, created) = acme::account(&acme_url, config.acme_ca.as_deref(), saved).await?;
        if let Some(created) = created {
            certs.save_json("account.json", &created)?;
        }
        let issued = acme::issue(&account, records).await?;
        certs.save_cert(records.fqdn(), &issued.chain_pem, &issued.key_pem)
    }

    async fn renew(&self) -> Result<Status, ToolError> {
        let _one = self.busy.lock().await;
        let Some(held) = self.held() else {
            return Err(ToolError::not_found(
                "no_name",
                "this Vyre holds no name yet: names.claim",
            ));
        };
        let records = match self.records(held).await {
            Ok(records) => records,
            Err(e) => {
                self.serving.write().expect("names").error = Some(e.message.clone());
                return Err(e);
            }
        };
        // The name follows the network's address, should that have changed since.
        if let Ok(address) = self.network_address().await
            && let Err(e) = records.set_address(&address).await
        {
            tracing::warn!(error = %e, "the name's address could not be set");
        }
        self.certify(&records).await?;
        Ok(self.status())
    }

    /// Renew `names.renew_days` before expiry; after a failure, try again in an hour.
    async fn renewals(self) {
        let stop = self.ctx.shutdown();
        loop {
            let wait = {
                let s = self.serving.read().expect("names");
                match (s.not_after, &s.error) {
                    (_, Some(_)) if s.fqdn.is_some() => Some(Duration::from_secs(3600)),
                    (Some(t), _) => {
                        let at = t - self.renew_days() * 86_400_000;
                        Some(Duration::from_millis((at - crate::now_ms()).max(0) as u64))
                    }
                    _ => None,
                }
            };
            // Never sleep longer than half a day at once: a clock that jumped is caught up.
            let wait = wait.map(|w| w.min(Duration::from_secs(12 * 3600)));
            tokio::select! {
                () = stop.cancelled() => return,
                () = self.woken.notified() => continue,
                () = async {
                    match wait {
                        Some(w) => tokio::time::sleep(w).await,
                        None => std::future::pending().await,
                    }
                } => {}
            }
            let due = {
                let s = self.serving.read().expect("names");
                s.error.is_some()
                    || s.not_after
                        .is_some_and(|t| t - self.renew_days() * 86_400_000 <= crate::now_ms())
            };
            if due {
                match self.renew().await {
                    Ok(_) => tracing::info!("the certificate was renewed"),
                    Err(e) => {
                        tracing::warn!(error = %e.message, "the certificate could not be renewed; trying again in an hour")
                    }
                }
            }
        }
    }

    /// What was issued before this start.
    fn load(&self) {
        let Some(held) = self.held() else {
            return;
        };
        let fqdn = held.fqdn().to_string();
        let mut serving = self.serving.write().expect("names");
        serving.fqdn = Some(fqdn.clone());
        match self.certs().load_cert(&fqdn) {
            Some(Ok(loaded)) => {
                serving.config = Some(loaded.config);
                serving.not_after = Some(loaded.not_after);
            }
            Some(Err(e)) => serving.error = Some(e),
            None => serving.error = Some("no certificate was issued yet".into()),
        }
    }
}

/// What this Vyre holds: a name from the directory, or the person's own domain.
enum Held {
    Claim(Claim),
    Domain(Domain),
}

impl Held {
    fn fqdn(&self) -> &str {
        match self {
            Held::Claim(c) => &c.fqdn,
            Held::Domain(d) => &d.fqdn,
        }
    }

    fn via(&self) -> &str {
        match self {
            Held::Claim(_) => "directory",
            Held::Domain(d) => &d.provider,
        }
    }
}

fn cloudflare_error(e: CloudflareError) -> ToolError {
    match e {
        CloudflareError::Unreachable(_) => {
            ToolError::new(ErrorKind::Unavailable, "dns_unreachable", e.to_string())
        }
        CloudflareError::Refused(_) => ToolError::refused("dns_refused", e.to_string()),
        CloudflareError::NoZone(_) => ToolError::not_found("no_zone", e.to_string()),
    }
}

fn directory_error(e: DirectoryError) -> ToolError {
    match e {
        DirectoryError::Taken(_) => ToolError::conflict("name_taken", e.to_string()),
        DirectoryError::Unreachable(_) => ToolError::new(
            ErrorKind::Unavailable,
            "directory_unreachable",
            e.to_string(),
        ),
        DirectoryError::Refused(_) => ToolError::refused("directory_refused", e.to_string()),
    }
}

impl Module for NamesModule {
    fn name(&self) -> &str {
        "names"
    }

    fn manifest(&self) -> &str {
        include_str!("module.json")
    }

    fn start(&self, ctx: Ctx) -> StartFuture {
        Box::pin(async move {
            let names = Names {
                ctx: ctx.clone(),
                serving: Arc::default(),
                busy: Arc::default(),
                woken: Arc::default(),
            };
            names.load();
            ctx.provide::<dyn Certificates>(Arc::new(Provided(names.serving.clone())))?;
            ctx.tool_with(
                ToolDef::new(
                    "names.claim",
                    "Claim your name (alex makes alex.vyre.run), point it at this Vyre's address on the private network, get its certificate (ACME, DNS-01) and serve HTTPS at it.",
                )
                .finishes()
                .person_only(),
                &names,
                |n, input: ClaimInput, _| async move { n.claim(input).await },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "names.use_domain",
                    "Use your own domain for this Vyre (e.g. vyre.example.com) instead of <you>.vyre.run: through your DNS provider's API (Cloudflare, with an API token kept in the vault), point it at this Vyre's address on the private network, get its certificate (ACME, DNS-01) and serve HTTPS at it.",
                )
                .finishes()
                .person_only(),
                &names,
                |n, input: DomainInput, cx| async move { n.use_domain(input, &cx.caller).await },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "names.status",
                    "This Vyre's name, its certificate's expiry and when it renews.",
                )
                .onboarding(),
                &names,
                |n, _: NoInput, _| async move { Ok::<_, ToolError>(n.status()) },
            )?;
            ctx.tool_with(
                ToolDef::new("names.renew", "Renew the name's certificate now.")
                    .finishes()
                    .person_only(),
                &names,
                |n, _: NoInput, _| async move { n.renew().await },
            )?;
            ctx.spawn(names.renewals());
            Ok(())
        })
    }
}
