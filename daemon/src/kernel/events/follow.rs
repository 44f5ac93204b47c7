//! Follow the event log: replay what is newer than a given id, then follow the bus live.
//!
//! The follower subscribes to the bus before it reads the log, and skips any id it has already
//! passed, so nothing is lost in the gap and nothing is delivered twice. When it falls so far
//! behind that the bus has dropped batches for it, it goes back to the log from its last id.

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::broadcast::{self, error::RecvError, error::TryRecvError};

use super::{Bus, Event, Published};
use crate::kernel::store::{Store, StoreError};

/// Events read from the log per page while catching up.
const PAGE: usize = 512;

/// Which events a listener wants. Empty lists mean everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Exact types, or a prefix written `thread.*`.
    pub types: Vec<String>,
    pub thread: Option<String>,
    /// What the listener may see, whatever it asked for: only events of threads this test
    /// accepts, and none without a thread (a session's stream: the threads it owns).
    pub fence: Option<Fenced>,
}

/// The test a fenced stream applies to each event's thread.
#[derive(Clone)]
pub struct Fenced(pub crate::kernel::tools::fence::ThreadTest);

impl std::fmt::Debug for Fenced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Fenced")
    }
}

impl PartialEq for Fenced {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Fenced {}

impl Filter {
    pub fn matches(&self, event: &Event) -> bool {
        self.matches_parts(&event.kind, event.thread.as_deref())
    }

    pub fn matches_parts(&self, kind: &str, thread: Option<&str>) -> bool {
        if let Some(Fenced(allowed)) = &self.fence
            && !thread.is_some_and(|t| allowed(t))
        {
            return false;
        }
        let type_ok = self.types.is_empty()
            || self.types.iter().any(|t| match t.strip_suffix('*') {
                Some(prefix) => kind.starts_with(prefix),
                None => t == kind,
            });
        let thread_ok = match &self.thread {
            Some(wanted) => thread == Some(wanted.as_str()),
            None => true,
        };
        type_ok && thread_ok
    }

    fn is_everything(&self) -> bool {
        self.types.is_empty() && self.thread.is_none() && self.fence.is_none()
    }
}

/// What [`Follower::next_batch`] hands out: a whole published batch that matched entirely (and
/// can be sent as its shared buffer), or one event.
#[derive(Debug, Clone)]
pub enum Item {
    Batch(Arc<Published>),
    Event(Arc<Event>),
}

impl Item {
    /// The item as Server-Sent Events text.
    pub fn sse(&self) -> &bytes::Bytes {
        match self {
            Item::Batch(p) => p.sse(),
            Item::Event(e) => e.sse(),
        }
    }
}

pub struct Follower {
    store: Store,
    rx: broadcast::Receiver<Arc<Published>>,
    /// The id of the last event looked at (delivered or filtered out).
    last: i64,
    backlog: VecDeque<Arc<Event>>,
    catching_up: bool,
    filter: Filter,
    /// Stop after this id instead of following live.
    end: Option<i64>,
}

impl Follower {
    /// Start after event `since` (use the bus's latest id to see only new events).
    pub fn new(store: Store, bus: &Bus, since: i64, filter: Filter) -> Self {
        Follower {
            rx: bus.subscribe(),
            store,
            last: since,
            backlog: VecDeque::new(),
            catching_up: true,
            filter,
            end: None,
        }
    }

    /// Replay only: end after the newest event committed now, instead of following.
    pub fn until_now(mut self, bus: &Bus) -> Self {
        self.end = Some(bus.latest_id());
        self
    }

    fn at_end(&self) -> bool {
        self.end
            .is_some_and(|end| self.last >= end || self.backlog.front().is_some_and(|e| e.id > end))
    }

    /// The next matching event. Errors only when the store cannot be read; returns `None` when
    /// the bus is closed (the daemon is stopping) or a replay-only follower is done.
    pub async fn next(&mut self) -> Option<Result<Arc<Event>, StoreError>> {
        loop {
            if self.at_end() {
                return None;
            }
            if let Some(event) = self.backlog.pop_front() {
                self.last = event.id;
                if self.filter.matches(&event) {
                    return Some(Ok(event));
                }
                continue;
            }
            if self.catching_up {
                if let Err(e) = self.read_page().await {
                    return Some(Err(e));
                }
                continue;
            }
            match self.rx.recv().await {
                Ok(published) => self.backlog.extend(
                    published
                        .events()
                        .iter()
                        .filter(|e| e.id > self.last)
                        .cloned(),
                ),
                Err(RecvError::Lagged(_)) => self.catching_up = true,
                Err(RecvError::Closed) => return None,
            }
        }
    }

    /// The next matching events, waiting for the first and then taking whatever else is ready,
    /// up to about `max`. A live follower that keeps up gets whole published batches.
    pub async fn next_batch(&mut self, max: usize) -> Option<Result<Vec<Item>, StoreError>> {
        let mut items = Vec::new();
        let mut count = 0;
        while count == 0 {
            if !self.backlog.is_empty() || self.catching_up || self.end.is_some() {
                match self.next().await? {
                    Ok(event) => {
                        items.push(Item::Event(event));
                        count = 1;
                    }
                    Err(e) => return Some(Err(e)),
                }
                continue;
            }
            match self.rx.recv().await {
                Ok(published) => count += self.take(published, &mut items),
                Err(RecvError::Lagged(_)) => self.catching_up = true,
                Err(RecvError::Closed) => return None,
            }
        }
        while count < max && !self.at_end() {
            if let Some(event) = self.backlog.pop_front() {
                self.last = event.id;
                if self.filter.matches(&event) {
                    items.push(Item::Event(event));
                    count += 1;
                }
                continue;
            }
            if self.catching_up || self.end.is_some() {
                break;
            }
            match self.rx.try_recv() {
                Ok(published) => count += self.take(published, &mut items),
                Err(TryRecvError::Lagged(_)) => {
                    self.catching_up = true;
                    break;
                }
                Err(_) => break,
            }
        }
        Some(Ok(items))
    }

    /// Take a published batch: whole when every event is new and wanted, else event by event.
    fn take(&mut self, published: Arc<Published>, items: &mut Vec<Item>) -> usize {
        let events = published.events();
        let whole = events[0].id > self.last
            && (self.filter.is_everything() || events.iter().all(|e| self.filter.matches(e)));
        if whole {
            self.last = events[events.len() - 1].id;
            let n = events.len();
            items.push(Item::Batch(published));
            return n;
        }
        let mut n = 0;
        for event in events {
            if event.id <= self.last {
                continue;
            }
            self.last = event.id;
            if self.filter.matches(event) {
                items.push(Item::Event(event.clone()));
                n += 1;
            }
        }
        n
    }

    async fn read_page(&mut self) -> Result<(), StoreError> {
        let after = self.last;
        let page = self
            .store
            .read(move |conn| super::log::since(conn, after, PAGE))
            .await?;
        if page.len() < PAGE {
            self.catching_up = false;
        }
        self.backlog.extend(page.into_iter().map(Arc::new));
        Ok(())
    }
}
