//! Follow the event log: replay what is newer than a given id, then follow the bus live.
//!
//! The follower subscribes to the bus before it reads the log, and skips any id it has already
//! passed, so nothing is lost in the gap and nothing is delivered twice. When it falls so far
//! behind that the bus has dropped batches for it, it reads from the log only what was dropped
//! (up to the oldest batch the bus still holds) and goes on with the bus's shared batches.

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
    /// While catching up after the bus dropped batches: read the log only below this id, the
    /// first of `held`.
    gap_before: Option<i64>,
    /// The first batch the bus gave after dropping some, taken once the gap is read.
    held: Option<Arc<Published>>,
    /// The bus dropped batches for this follower; the next it gives is the oldest it holds.
    lagged: bool,
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
            gap_before: None,
            held: None,
            lagged: false,
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
            if let Some(held) = self.held.take() {
                let after = self.last;
                self.backlog
                    .extend(held.events().iter().filter(|e| e.id > after).cloned());
                continue;
            }
            match self.rx.recv().await {
                Ok(published) => {
                    if let Some(published) = self.after_lag(published) {
                        self.backlog.extend(
                            published
                                .events()
                                .iter()
                                .filter(|e| e.id > self.last)
                                .cloned(),
                        );
                    }
                }
                Err(RecvError::Lagged(_)) => self.lagged = true,
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
            if let Some(held) = self.held.take() {
                count += self.take(held, &mut items);
                continue;
            }
            match self.rx.recv().await {
                Ok(published) => {
                    if let Some(published) = self.after_lag(published) {
                        count += self.take(published, &mut items);
                    }
                }
                Err(RecvError::Lagged(_)) => self.lagged = true,
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
            if let Some(held) = self.held.take() {
                count += self.take(held, &mut items);
                continue;
            }
            match self.rx.try_recv() {
                Ok(published) => match self.after_lag(published) {
                    Some(published) => count += self.take(published, &mut items),
                    None => break,
                },
                Err(TryRecvError::Lagged(_)) => self.lagged = true,
                Err(_) => break,
            }
        }
        Some(Ok(items))
    }

    /// The batch to go on with, or `None` when it comes after batches the bus dropped for this
    /// follower: then it is held, and the follower reads what is missing before it from the log.
    fn after_lag(&mut self, published: Arc<Published>) -> Option<Arc<Published>> {
        if !std::mem::take(&mut self.lagged) {
            return Some(published);
        }
        let first = published.events()[0].id;
        if first <= self.last + 1 {
            return Some(published); // nothing this follower had not already read
        }
        self.catching_up = true;
        self.gap_before = Some(first);
        self.held = Some(published);
        None
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
        // From the last id the backlog reaches: it holds what was read but not yet looked at.
        let after = self.backlog.back().map_or(self.last, |e| e.id);
        let before = self.gap_before;
        let page = self
            .store
            .read(move |conn| match before {
                Some(before) => super::log::between(conn, after, before, PAGE),
                None => super::log::since(conn, after, PAGE),
            })
            .await?;
        let done = page.len() < PAGE;
        self.backlog.extend(page.into_iter().map(Arc::new));
        if done {
            // What comes next is the batch held after the gap (if any), then the bus.
            self.catching_up = false;
            self.gap_before = None;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::events::NewEvent;
    use std::time::Duration;

    fn open(name: &str) -> (Store, Bus) {
        let dir = std::env::temp_dir().join(format!("vyre-follow-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let bus = Bus::new();
        (Store::open(&dir.join("vyre.db"), bus.clone()).unwrap(), bus)
    }

    /// `batches` commits of `per` events each, alternately `test.pinged` and `test.ponged`.
    async fn emit(store: &Store, batches: usize, per: usize) {
        for _ in 0..batches {
            store
                .write(move |tx| {
                    for i in 0..per {
                        let kind = if i % 2 == 0 {
                            "test.pinged"
                        } else {
                            "test.ponged"
                        };
                        tx.emit(NewEvent::new(kind, serde_json::json!({ "i": i })))?;
                    }
                    Ok(())
                })
                .await
                .unwrap();
        }
    }

    /// Everything a follower gives until it has `n` events: their ids, and how many came one by
    /// one (read from the log) rather than in the bus's shared batches.
    async fn read(follower: &mut Follower, n: usize) -> (Vec<i64>, usize) {
        let (mut ids, mut single) = (Vec::new(), 0);
        while ids.len() < n {
            for item in follower.next_batch(100_000).await.unwrap().unwrap() {
                match item {
                    Item::Event(e) => {
                        single += 1;
                        ids.push(e.id);
                    }
                    Item::Batch(p) => ids.extend(p.events().iter().map(|e| e.id)),
                }
            }
        }
        (ids, single)
    }

    #[tokio::test]
    async fn a_follower_the_bus_left_behind_reads_only_what_it_dropped_from_the_log() {
        let (store, bus) = open("lagged");
        let mut all = Follower::new(store.clone(), &bus, 0, Filter::default());
        let mut pings = Follower::new(
            store.clone(),
            &bus,
            0,
            Filter {
                types: vec!["test.pinged".into()],
                ..Filter::default()
            },
        );
        let mut one_by_one = Follower::new(store.clone(), &bus, 0, Filter::default());
        // Each has read the (empty) log and follows the bus.
        for f in [&mut all, &mut pings, &mut one_by_one] {
            let waited = tokio::time::timeout(Duration::from_millis(50), f.next_batch(10)).await;
            assert!(waited.is_err(), "nothing yet");
            assert!(!f.catching_up);
        }
        // Nobody reads while 50 more batches than the bus holds are committed.
        let (dropped, per) = (50, 4);
        emit(&store, crate::kernel::events::BUS_CAPACITY + dropped, per).await;
        let n = (crate::kernel::events::BUS_CAPACITY + dropped) * per;

        let (ids, from_log) = read(&mut all, n).await;
        assert_eq!(
            ids,
            (1..=n as i64).collect::<Vec<_>>(),
            "each once, in order"
        );
        assert_eq!(from_log, dropped * per, "only what the bus dropped");

        let (ids, _) = read(&mut pings, n / 2).await;
        let odd: Vec<i64> = (1..=n as i64).step_by(2).collect();
        assert_eq!(ids, odd, "a filter's events, each once, in order");

        let mut ids = Vec::new();
        while ids.len() < n {
            ids.push(one_by_one.next().await.unwrap().unwrap().id);
        }
        assert_eq!(ids, (1..=n as i64).collect::<Vec<_>>());

        // And they follow live afterwards.
        emit(&store, 1, 2).await;
        let (ids, from_log) = read(&mut all, 2).await;
        assert_eq!((ids, from_log), (vec![n as i64 + 1, n as i64 + 2], 0));
        store.close().await;
    }
}
