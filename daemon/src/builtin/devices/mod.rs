//! `devices`: issue, list and revoke the credentials HTTP callers use.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::devices::{DeviceRecord, Devices};
use crate::modules::{Ctx, Module, StartFuture, ToolDef};
use crate::tools::ToolError;

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
pub struct ListInput {}

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
            let d = devices.clone();
            ctx.tool(
                ToolDef::new(
                    "devices.add",
                    "Issue a credential for a new device. The token is shown once and stored only as a hash.",
                )
                .person_only(),
                move |input: AddInput, _| {
                    let d = d.clone();
                    async move {
                        let (device, token) = d.add(&input.name, "token").await?;
                        Ok::<_, ToolError>(Added { device, token })
                    }
                },
            )?;
            let d = devices.clone();
            ctx.tool(
                ToolDef::new(
                    "devices.list",
                    "Every device, active and revoked, never with its credential.",
                ),
                move |_: ListInput, _| {
                    let d = d.clone();
                    async move { d.list().await }
                },
            )?;
            let d = devices;
            ctx.tool(
                ToolDef::new(
                    "devices.revoke",
                    "Revoke a device: its credential is refused at once and its open event streams close.",
                )
                .person_only(),
                move |input: RevokeInput, _| {
                    let d = d.clone();
                    async move { d.revoke(&input.id).await }
                },
            )?;
            Ok(())
        })
    }
}
