//! Follow the event log: replay what is newer than a given id, then follow the bus live.
//!
//! The follower subscribes to the bus before it reads the log, and skips any id it has already
//! delivered, so nothing is lost in the gap and nothing is delivered twice. When it falls so far
//! behind that the bus has dropped events for it, it goes back to the log from its last id.

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::broadcast::{self, error::RecvError};

use super::{Bus, Event};
use crate::store::{Store, StoreError};

/// Events read from the log per page while catching up.
const PAGE: usize = 512;

/// Which events a listener wants. Empty lists mean everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Exact types, or a prefix written `thread.*`.
    pub types: Vec<String>,
    pub thread: Option<String>,
}

impl Filter {
    pub fn matches(&self, event: &Event) -> bool {
        self.matches_parts(&event.kind, event.thread.as_deref())
    }

    pub fn matches_parts(&self, kind: &str, thread: Option<&str>) -> bool {
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
}

pub struct Follower {
    store: Store,
    rx: broadcast::Receiver<Arc<Event>>,
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

    /// The id of the last event this follower has passed.
    pub fn position(&self) -> i64 {
        self.last
    }

    /// The next matching event and every further one available without waiting, up to `max`.
    /// `None` as [`Follower::next`].
    pub async fn next_batch(&mut self, max: usize) -> Option<Result<Vec<Arc<Event>>, StoreError>> {
        let first = match self.next().await? {
            Ok(event) => event,
            Err(e) => return Some(Err(e)),
        };
        let mut batch = vec![first];
        while batch.len() < max {
            if let Some(end) = self.end
                && (self.last >= end || self.backlog.front().is_some_and(|e| e.id > end))
            {
                break;
            }
            let event = match self.backlog.pop_front() {
                Some(event) => event,
                None if self.catching_up => break,
                None => match self.rx.try_recv() {
                    Ok(event) if event.id <= self.last => continue,
                    Ok(event) => event,
                    Err(broadcast::error::TryRecvError::Lagged(_)) => {
                        self.catching_up = true;
                        break;
                    }
                    Err(_) => break,
                },
            };
            self.last = event.id;
            if self.filter.matches(&event) {
                batch.push(event);
            }
        }
        Some(Ok(batch))
    }

    /// The next matching event. Errors only when the store cannot be read; returns `None` when
    /// the bus is closed (the daemon is stopping).
    pub async fn next(&mut self) -> Option<Result<Arc<Event>, StoreError>> {
        loop {
            if let Some(end) = self.end
                && (self.last >= end || self.backlog.front().is_some_and(|e| e.id > end))
            {
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
                let after = self.last;
                let page = self
                    .store
                    .read(move |conn| super::log::since(conn, after, PAGE))
                    .await;
                match page {
                    Ok(page) => {
                        if page.len() < PAGE {
                            self.catching_up = false;
                        }
                        self.backlog.extend(page.into_iter().map(Arc::new));
                        continue;
                    }
                    Err(e) => return Some(Err(e)),
                }
            }
            match self.rx.recv().await {
                Ok(event) if event.id <= self.last => continue,
                Ok(event) => self.backlog.push_back(event),
                Err(RecvError::Lagged(_)) => self.catching_up = true,
                Err(RecvError::Closed) => return None,
            }
        }
    }
}
