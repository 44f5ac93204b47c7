//! `devices`: issue, list and revoke the credentials HTTP callers use.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use std::time::Duration;

use crate::kernel::device_tokens::{DeviceRecord, Devices};
use crate::kernel::links::{LINK_TTL, LinkKind};
use crate::kernel::module::{Ctx, Module, StartFuture, ToolDef};
use crate::kernel::tools::ToolError;

pub struct DevicesModule {
    devices: Devices,
}

impl DevicesModule {
    pub fn new(devices: Devices) -> Self {
        DevicesModule { devices }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddInput {
    /// A name that says which device this is, e.g. "phone".
    #[schemars(length(min = 1, max = 64), pattern(crate::kernel::tools::shape::LABEL))]
    name: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Added {
    device: DeviceRecord,
    /// The credential, shown this once: `Authorization: Bearer <token>`.
    token: String,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkInput {
    /// How long the link stays valid, in seconds (1 to 3600; default 3600).
    #[serde(default)]
    #[schemars(range(min = 1, max = 3600))]
    ttl_s: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Link {
    /// `onboard` while there is no owner, then `login`.
    kind: LinkKind,
    /// Open it in the browser that should become a device; it works once.
    url: String,
    expires_at: i64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RevokeInput {
    /// The device's id, from devices.list.
    id: String,
}

impl Module for DevicesModule {
    fn name(&self) -> &str {
        "devices"
    }

    fn manifest(&self) -> &str {
        include_str!("module.json")
    }

    fn start(&self, ctx: Ctx) -> StartFuture {
        let devices = self.devices.clone();
        Box::pin(async move {
            ctx.tool_with(
                ToolDef::new(
                    "devices.add",
                    "Issue a credential for a new device. The token is shown once and stored only as a hash.",
                )
        .finishes()
                .person_only(),
                &devices,
                |d, input: AddInput, _| async move {
                        let (device, token) = d.add(&input.name, "token").await?;
                        Ok::<_, ToolError>(Added { device, token })
                    },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "devices.list",
                    "Every device, active and revoked, never with its credential.",
                ),
                &devices,
                |d, _: crate::kernel::tools::NoInput, _| async move { d.list().await },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "devices.link",
                    "A one-time link that makes the browser opening it a device: the onboarding while there is no owner, a login once there is. Valid for an hour, once.",
                )
        .finishes()
                .person_only(),
                &ctx,
                |k, input: LinkInput, _| async move {
                        let ttl = match input.ttl_s {
                            None => LINK_TTL,
                            Some(s @ 1..=3600) => Duration::from_secs(s),
                            Some(_) => {
                                return Err(ToolError::invalid("ttl_s must be 1 to 3600 seconds"));
                            }
                        };
                        let kind = if k.owner().exists() {
                            LinkKind::Login
                        } else {
                            LinkKind::Onboard
                        };
                        let Some(address) = k.http_address() else {
                            return Err(ToolError::new(crate::kernel::tools::ErrorKind::Unavailable,
                                "no_http",
                                "vyred has no HTTP listener to link to",
                            ));
                        };
                        let issued = k.links().issue(kind, ttl).await?;
                        Ok(Link {
                            kind,
                            url: format!("http://{address}{}?t={}", kind.path(), issued.token),
                            expires_at: issued.expires_at,
                        })
                    },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "devices.revoke",
                    "Revoke a device: its credential is refused at once and its open event streams close.",
                )
                .finishes()
                .person_only(),
                &devices,
                |d, input: RevokeInput, _| async move { d.revoke(&input.id).await },
            )?;
            Ok(())
        })
    }
}
