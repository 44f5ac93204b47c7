//! The end of the onboarding, in one write transaction: the owner is made (once only), the
//! finishing browser's device becomes a `browser`, every other `onboarding` device is revoked
//! and every unspent onboarding link is spent. Nothing the onboarding handed out outlives it,
//! and two browsers finishing at once cannot both make an owner.

use super::{Owner, OwnerRecord};
use crate::kernel::Kernel;
use crate::kernel::device_tokens::{DeviceRecord, Devices};
use crate::kernel::links::Links;
use crate::kernel::tools::ToolError;

/// What finishing made.
pub struct Ended {
    pub owner: OwnerRecord,
    /// The finishing browser's device, now a `browser`.
    pub device: Option<DeviceRecord>,
}

/// End the onboarding: make the owner named `name`; `keep` is the finishing browser's device
/// id and the name it asked for.
pub async fn end_onboarding(
    kernel: &Kernel,
    module: &str,
    name: &str,
    keep: Option<(String, Option<String>)>,
) -> Result<Ended, ToolError> {
    let name = name.to_string();
    let now = crate::now_ms();
    let done = kernel
        .store()
        .write_as(module, move |tx| {
            let Some(owner) = Owner::create_in(tx, &name, now)? else {
                return Ok(None);
            };
            let keep = keep
                .as_ref()
                .map(|(id, name)| (id.as_str(), name.as_deref()));
            let devices = Devices::end_onboarding_in(tx, keep, now)?;
            Links::end_onboarding_in(tx, now)?;
            Ok(Some((owner, devices)))
        })
        .await?;
    let Some((owner, devices)) = done else {
        return Err(ToolError::conflict(
            "onboarded",
            "the onboarding is finished: Vyre has its owner (change your name in Settings)",
        ));
    };
    kernel.owner().made(owner.clone());
    kernel.devices().onboarding_ended(&devices);
    Ok(Ended {
        owner,
        device: devices.promoted,
    })
}
