//! `names`: this vyred's own name, `<you>.vyre.run`, pointing at its address on the private
//! network, with a certificate for it (spec 7.10; issue 21). The name directory (vyre.run, a
//! small service outside this repository: `docs/directory-api.md`) holds the name's DNS records
//! and nothing else; the certificate comes by ACME's DNS-01 challenge, answered through the
//! directory, so it works although the address is private.
//!
//! - `names.claim {name}` claims the name, points it at the network address, gets the
//!   certificate and starts serving HTTPS at the name inside the tunnel.
//! - `names.status` says the name, its certificate's expiry and when it renews.
//! - `names.renew` renews now; a task renews by itself `names.renew_days` before expiry.
//!
//! The network serves HTTPS with what this module provides (`contracts::certificates`).

mod acme;
mod certs;
mod directory;

use std::sync::{Arc, RwLock};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio_rustls::rustls::ServerConfig;

use crate::kernel::contracts::certificates::Certificates;
use crate::kernel::events::NewEvent;
use crate::kernel::module::{Ctx, Module, StartFuture, ToolDef};
use crate::kernel::tools::{ErrorKind, NoInput, ToolError};

use certs::CertDir;
use directory::{Claim, Directory, DirectoryError};

pub struct NamesModule;

/// Where the directory lives unless `names.directory` says otherwise.
pub const DIRECTORY: &str = "https://vyre.run";
/// The ACME directory unless `names.acme` says otherwise: Let's Encrypt.
pub const ACME: &str = "https://acme-v02.api.letsencrypt.org/directory";
/// Days before expiry a certificate is renewed, unless `names.renew_days` says otherwise.
pub const RENEW_DAYS: u32 = 30;

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

#[derive(Debug, Serialize, JsonSchema)]
pub struct Status {
    /// The name, e.g. alex.vyre.run, once claimed.
    fqdn: Option<String>,
    /// Where the web app opens at the name (through the private network).
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

    fn renew_days(&self) -> i64 {
        i64::from(self.ctx.config().names.renew_days.unwrap_or(RENEW_DAYS))
    }

    fn status(&self) -> Status {
        let s = self.serving.read().expect("names");
        Status {
            fqdn: s.fqdn.clone(),
            url: s.fqdn.as_ref().map(|f| format!("https://{f}/app/")),
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
        self.certify(&directory, &claim).await?;
        Ok(self.status())
    }

    /// Get a certificate for the claimed name and serve it.
    async fn certify(&self, directory: &Directory, claim: &Claim) -> Result<(), ToolError> {
        let result = self.issue(directory, claim).await;
        let mut serving = self.serving.write().expect("names");
        serving.fqdn = Some(claim.fqdn.clone());
        match result {
            Ok(loaded) => {
                serving.config = Some(loaded.config);
                serving.not_after = Some(loaded.not_after);
                serving.error = None;
                drop(serving);
                self.woken.notify_one();
                let ctx = self.ctx.clone();
                let (fqdn, not_after) = (claim.fqdn.clone(), loaded.not_after);
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

    async fn issue(&self, directory: &Directory, claim: &Claim) -> Result<certs::Loaded, String> {
        let config = &self.ctx.config().names;
        let acme_url = config.acme.clone().unwrap_or_else(|| ACME.to_string());
        let certs = self.certs();
        let saved = certs.load_json("account.json");
        let (account, created) = acme::account(&acme_url, config.acme_ca.as_deref(), saved).await?;
        if let Some(created) = created {
            certs.save_json("account.json", &created)?;
        }
        let issued = acme::issue(&account, directory, claim).await?;
        certs.save_cert(&claim.fqdn, &issued.chain_pem, &issued.key_pem)
    }

    async fn renew(&self) -> Result<Status, ToolError> {
        let _one = self.busy.lock().await;
        let Some(claim) = self.certs().load_json::<Claim>("directory.json") else {
            return Err(ToolError::not_found(
                "no_name",
                "this Vyre holds no name yet: names.claim",
            ));
        };
        let directory = self.directory()?;
        self.certify(&directory, &claim).await?;
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
        let certs = self.certs();
        let Some(claim) = certs.load_json::<Claim>("directory.json") else {
            return;
        };
        let mut serving = self.serving.write().expect("names");
        serving.fqdn = Some(claim.fqdn.clone());
        match certs.load_cert(&claim.fqdn) {
            Some(Ok(loaded)) => {
                serving.config = Some(loaded.config);
                serving.not_after = Some(loaded.not_after);
            }
            Some(Err(e)) => serving.error = Some(e),
            None => serving.error = Some("no certificate was issued yet".into()),
        }
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
