//! The modules compiled into vyred.

pub mod devices;
pub mod files;
pub mod gate;
pub mod harness;
pub mod learn;
pub mod memory;
pub mod names;
pub mod network;
pub mod onboarding;
pub mod pairing;
pub mod planner;
pub mod projects;
pub mod push;
pub mod recall;
pub mod sessions;
pub mod system;
pub mod usage;
pub mod vault;
pub mod watchers;

use std::sync::Arc;

use crate::kernel::Kernel;
use crate::kernel::module::Module;
use crate::modules::sessions::agents::AgentsModule;
use crate::modules::sessions::register::{SessionsModule, ThreadsModule};

pub fn modules(kernel: &Kernel) -> Vec<Arc<dyn Module>> {
    // The sessions layer's three modules share one router over the kernel's providers.
    let router = Arc::new(crate::modules::sessions::router::Router::new(
        kernel.providers().clone(),
    ));
    vec![
        Arc::new(system::System),
        Arc::new(devices::DevicesModule::new(kernel.devices().clone())),
        Arc::new(crate::modules::vault::VaultModule),
        Arc::new(SessionsModule {
            router: router.clone(),
        }),
        Arc::new(ThreadsModule {
            router: router.clone(),
        }),
        Arc::new(AgentsModule { router }),
        Arc::new(crate::modules::recall::RecallModule),
        Arc::new(crate::modules::memory::MemoryModule),
        Arc::new(crate::modules::projects::ProjectsModule),
        Arc::new(crate::modules::planner::PlannerModule),
        Arc::new(crate::modules::watchers::WatchersModule),
        Arc::new(crate::modules::files::FilesModule),
        Arc::new(crate::modules::harness::HarnessModule),
        Arc::new(crate::modules::gate::GateModule),
        Arc::new(crate::modules::learn::LearnModule),
        Arc::new(crate::modules::usage::UsageModule),
        Arc::new(crate::modules::onboarding::OnboardingModule),
        Arc::new(crate::modules::pairing::PairingModule),
        Arc::new(crate::modules::network::NetworkModule),
        Arc::new(crate::modules::names::NamesModule),
        Arc::new(crate::modules::push::PushModule),
    ]
}
