//! A module's view of the event log: what it emits, and what it reads back.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::Ctx;
use crate::kernel::events::{Event, Filter, Follower, NewEvent};
use crate::kernel::store::StoreError;

/// A module's view of the event log.
pub struct ModuleEvents {
    ctx: Ctx,
}

impl ModuleEvents {
    pub(super) fn new(ctx: Ctx) -> Self {
        ModuleEvents { ctx }
    }

    /// Append an event with this module as its source. The type must be declared under
    /// `watches.emits`, and the payload must carry nothing that looks like a credential.
    pub async fn emit(&self, event: NewEvent) -> Result<i64, StoreError> {
        self.ctx.store().write(move |tx| tx.emit(event)).await
    }

    /// Up to `limit` events after `id`, oldest first.
    pub async fn since(&self, id: i64, limit: usize) -> Result<Vec<Event>, StoreError> {
        self.ctx
            .kernel
            .store()
            .read(move |conn| crate::kernel::events::log::since(conn, id, limit))
            .await
    }

    /// Up to `limit` events after `id` that module `source` emitted with a type starting
    /// `prefix`, oldest first.
    pub async fn since_from(
        &self,
        id: i64,
        source: &str,
        prefix: &str,
        limit: usize,
    ) -> Result<Vec<Event>, StoreError> {
        let (source, prefix) = (source.to_string(), prefix.to_string());
        self.ctx
            .kernel
            .store()
            .read(move |conn| {
                crate::kernel::events::log::since_from(conn, id, &source, &prefix, limit)
            })
            .await
    }

    /// The newest `limit` events of type `kind` this module emitted in `thread`, oldest first.
    pub async fn of_thread(
        &self,
        thread: &str,
        kind: &str,
        limit: usize,
    ) -> Result<Vec<Event>, StoreError> {
        let (thread, source, kind) = (
            thread.to_string(),
            self.ctx.name().to_string(),
            kind.to_string(),
        );
        self.ctx
            .kernel
            .store()
            .read(move |conn| {
                crate::kernel::events::log::of_thread(conn, &thread, &source, &kind, limit)
            })
            .await
    }

    /// The id of the newest event.
    pub fn latest_id(&self) -> i64 {
        self.ctx.kernel.bus().latest_id()
    }

    /// A follower that replays after `since` and then follows live.
    pub fn follow(&self, since: i64, filter: Filter) -> Follower {
        Follower::new(
            self.ctx.kernel.store().clone(),
            self.ctx.kernel.bus(),
            since,
            filter,
        )
    }

    /// Call `f` for each new event that matches `filter`, until vyred stops. A panic in `f`
    /// disables the module.
    pub fn on<F, Fut>(&self, filter: Filter, f: F)
    where
        F: Fn(Arc<Event>) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let mut follower = self.follow(self.latest_id(), filter);
        let stop = self.ctx.shutdown();
        let name = self.ctx.name.clone();
        self.ctx.spawn(async move {
            loop {
                let next = tokio::select! {
                    _ = stop.cancelled() => return,
                    next = follower.next() => next,
                };
                match next {
                    Some(Ok(event)) => f(event).await,
                    Some(Err(e)) => {
                        tracing::warn!(module = %name, error = %e, "cannot read the event log; retrying");
                        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                    }
                    None => return,
                }
            }
        });
    }

    /// Keep up with what module `source` tells under types starting `prefix` (`live` the same
    /// as a filter), from this module's mark in the log: live events are followed first, so none
    /// falls between, and what was told after the mark (while vyred was down, or before this
    /// module existed) is read back page by page. `keep` gets each batch with the mark to move
    /// to; a live event carries one only once the reading back is done, so a stop in the middle
    /// of it leaves nothing behind. An event may come twice (read back and live): `keep` keeps
    /// it once.
    pub fn keep_up<M, K, Fut>(
        &self,
        live: Filter,
        source: &'static str,
        prefix: &'static str,
        mark: M,
        keep: K,
    ) where
        M: FnOnce(&rusqlite::Connection) -> Result<i64, StoreError> + Send + 'static,
        K: Fn(Vec<Arc<Event>>, Option<i64>) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        const PAGE: usize = 256;
        let caught_up = Arc::new(AtomicBool::new(false));
        let (k, done) = (keep.clone(), caught_up.clone());
        self.on(live, move |e| {
            let (k, done) = (k.clone(), done.clone());
            async move {
                let mark = done.load(Ordering::Acquire).then_some(e.id);
                k(vec![e], mark).await;
            }
        });
        let ctx = self.ctx.clone();
        let name = self.ctx.name.clone();
        self.ctx.spawn(async move {
            let end = ctx.events().latest_id();
            let mut after = match ctx.store().read(mark).await {
                Ok(m) => m,
                Err(e) => {
                    return tracing::warn!(module = %name, error = %e, "its mark in the event log cannot be read");
                }
            };
            while after < end {
                let page = match ctx.events().since_from(after, source, prefix, PAGE).await {
                    Ok(p) => p,
                    Err(e) => {
                        return tracing::warn!(module = %name, error = %e, "the event log cannot be read back");
                    }
                };
                let Some(last) = page.last().map(|e| e.id) else {
                    break;
                };
                after = last;
                keep(page.into_iter().map(Arc::new).collect(), Some(last.min(end))).await;
            }
            keep(vec![], Some(end)).await;
            caught_up.store(true, Ordering::Release);
        });
    }
}
