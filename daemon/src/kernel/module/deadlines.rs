//! A module's deadlines ([`crate::kernel::deadlines`]): its own keys on the kernel's one timer.

use std::future::Future;
use std::sync::Arc;

use super::Ctx;
use crate::kernel::store::StoreError;

/// A module's deadlines: keys of its own choosing, each due at a time (ms since the epoch).
pub struct ModuleDeadlines {
    ctx: Ctx,
}

impl ModuleDeadlines {
    pub(super) fn of(ctx: Ctx) -> ModuleDeadlines {
        ModuleDeadlines { ctx }
    }

    /// Deadline `key` at `due_at`, replacing its earlier one.
    pub async fn set(&self, key: &str, due_at: i64) -> Result<(), StoreError> {
        self.ctx
            .kernel
            .deadlines()
            .set(&self.ctx.name, key, due_at)
            .await
    }

    /// Drop deadline `key`; true when there was one.
    pub async fn clear(&self, key: &str) -> Result<bool, StoreError> {
        self.ctx.kernel.deadlines().clear(&self.ctx.name, key).await
    }

    /// When deadline `key` is due, if it is set.
    pub async fn due_at(&self, key: &str) -> Result<Option<i64>, StoreError> {
        self.ctx
            .kernel
            .deadlines()
            .due_at(&self.ctx.name, key)
            .await
    }

    /// Call `f` with each deadline as it falls due (and, at the start, once with each that
    /// passed while vyred was down); `f` says whether it handled it. A panic in `f` disables
    /// the module, and a disabled module's deadlines wait in the store.
    pub fn on_due<F, Fut>(&self, f: F)
    where
        F: Fn(crate::kernel::deadlines::Due) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = bool> + Send + 'static,
    {
        use futures_util::FutureExt;
        let ctx = self.ctx.clone();
        let f = Arc::new(f);
        self.ctx.kernel.deadlines().on_due(
            &self.ctx.name,
            Arc::new(move |due| {
                let (ctx, f) = (ctx.clone(), f.clone());
                Box::pin(async move {
                    if ctx.disabled_reason().is_some() {
                        return false;
                    }
                    match std::panic::AssertUnwindSafe(f(due)).catch_unwind().await {
                        Ok(handled) => handled,
                        Err(panic) => {
                            let why = crate::kernel::tools::panic_message(panic);
                            tracing::error!(module = %ctx.name, panic = %why, "a deadline's handler panicked; the module is disabled");
                            ctx.health.disable(format!("a deadline's handler panicked: {why}"));
                            false
                        }
                    }
                })
            }),
        );
    }
}
