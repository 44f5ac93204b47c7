//! The modules compiled into vyred.

mod devices;
mod system;

use std::sync::Arc;

use crate::kernel::Kernel;
use crate::modules::Module;
use crate::sessions::agents::AgentsModule;
use crate::sessions::modules::{SessionsModule, ThreadsModule};

pub fn modules(kernel: &Kernel) -> Vec<Arc<dyn Module>> {
    // The sessions layer's three modules share one router over the kernel's providers.
    let router = Arc::new(crate::sessions::router::Router::new(
        kernel.providers().clone(),
    ));
    vec![
        Arc::new(system::System),
        Arc::new(devices::DevicesModule::new(kernel.devices().clone())),
        Arc::new(crate::vault::VaultModule),
        Arc::new(SessionsModule {
            router: router.clone(),
        }),
        Arc::new(ThreadsModule {
            router: router.clone(),
        }),
        Arc::new(AgentsModule { router }),
        Arc::new(crate::recall::RecallModule),
        Arc::new(crate::projects::ProjectsModule),
        Arc::new(crate::harness::HarnessModule),
        Arc::new(crate::onboarding::OnboardingModule),
        Arc::new(crate::pairing::PairingModule),
    ]
}
