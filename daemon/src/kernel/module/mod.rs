//! The module contract (spec section 5): a manifest, a start function that receives a [`Ctx`],
//! and the loader that validates, orders, starts and, when something goes wrong, disables them.

mod ctx;
mod deadlines;
mod events;
mod loader;
mod manifest;
mod vault_handle;

pub use ctx::{Ctx, ModuleStore, ToolDef};
pub use deadlines::ModuleDeadlines;
pub use events::ModuleEvents;
pub use loader::{ModuleState, ModuleStatus, ModuleTable, load_all};
pub use manifest::Manifest;
pub use vault_handle::ModuleVault;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

/// What a module's start returns on failure; the text is shown as the reason it is disabled.
pub type StartError = Box<dyn std::error::Error + Send + Sync>;
pub type StartFuture = Pin<Box<dyn Future<Output = Result<(), StartError>> + Send>>;

/// A module compiled into vyred. Its `manifest` is the text of its `module.json`.
pub trait Module: Send + Sync + 'static {
    /// The name it is known by, even when its manifest cannot be read.
    fn name(&self) -> &str;
    /// The text of its `module.json`.
    fn manifest(&self) -> &str;
    /// Register tools, run migrations, spawn listeners. Long work belongs in `ctx.spawn`.
    /// The module stops when `ctx.shutdown()` is cancelled.
    fn start(&self, ctx: Ctx) -> StartFuture;
}

/// Whether a module is healthy; shared by its status row, its tools and its tasks.
#[derive(Clone, Default, Debug)]
pub struct Health {
    // std Mutex: read on every call, held for a moment, never across an await.
    disabled: Arc<Mutex<Option<String>>>,
}

impl Health {
    /// Disable the module. The first reason is kept.
    pub fn disable(&self, reason: impl Into<String>) {
        let mut d = self.disabled.lock().expect("health");
        if d.is_none() {
            *d = Some(reason.into());
        }
    }
    pub fn disabled_reason(&self) -> Option<String> {
        self.disabled.lock().expect("health").clone()
    }
}

/// Lowercase letters, digits, `-` and `_`, starting with a letter, at most 32 characters.
pub fn valid_module_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}
