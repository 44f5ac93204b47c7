//! The modules compiled into vyred.

mod devices;
mod system;

use std::sync::Arc;

use crate::kernel::Kernel;
use crate::modules::Module;

pub fn modules(kernel: &Kernel) -> Vec<Arc<dyn Module>> {
    vec![
        Arc::new(system::System),
        Arc::new(devices::DevicesModule::new(kernel.devices().clone())),
        Arc::new(crate::vault::VaultModule),
    ]
}
