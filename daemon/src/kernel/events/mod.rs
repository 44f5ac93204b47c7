//! The event log (spec section 6): append-only rows in `events`, and the in-process bus that
//! tells live listeners about each one after it is committed.
//!
//! Writing goes through the store's writer ([`crate::kernel::store::WriteTx::emit`]); this module owns
//! the row format, the checks every event passes, the bus and the follower that replays the log
//! and then follows the bus without losing or repeating anything.

pub mod follow;
pub mod log;
pub mod streams;

pub use follow::{Fenced, Filter, Follower, Item};

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::broadcast;

/// An event as committed. `payload` stays the JSON text it was stored as.
#[derive(Debug, Serialize)]
pub struct Event {
    pub id: i64,
    pub at: i64,
    #[serde(rename = "type")]
    pub kind: String,
    pub source: String,
    pub project: Option<String>,
    pub thread: Option<String>,
    pub payload: Box<RawValue>,
    /// The event as JSON, made once and shared by every subscriber.
    #[serde(skip)]
    json: OnceLock<String>,
    /// The event as one Server-Sent Events message, made once and shared by every stream.
    #[serde(skip)]
    sse: OnceLock<bytes::Bytes>,
}

impl Event {
    pub fn new(
        id: i64,
        at: i64,
        kind: String,
        source: String,
        project: Option<String>,
        thread: Option<String>,
        payload: Box<RawValue>,
    ) -> Self {
        Event {
            id,
            at,
            kind,
            source,
            project,
            thread,
            payload,
            json: OnceLock::new(),
            sse: OnceLock::new(),
        }
    }

    /// `id: <id>\nevent: <type>\ndata: <json>\n\n`. The JSON is compact, so it has no newline
    /// and fits one `data:` line.
    pub fn sse(&self) -> &bytes::Bytes {
        self.sse.get_or_init(|| {
            let json = self.json();
            let mut out = String::with_capacity(json.len() + self.kind.len() + 32);
            out.push_str("id: ");
            out.push_str(&self.id.to_string());
            out.push_str("\nevent: ");
            out.push_str(&self.kind);
            out.push_str("\ndata: ");
            out.push_str(json);
            out.push_str("\n\n");
            bytes::Bytes::from(out)
        })
    }

    /// The whole event as one line of JSON.
    pub fn json(&self) -> &str {
        self.json
            .get_or_init(|| serde_json::to_string(self).expect("an event always serializes"))
    }

    /// The payload parsed, for listeners that read fields.
    pub fn payload_value(&self) -> Value {
        serde_json::from_str(self.payload.get()).unwrap_or(Value::Null)
    }
}

/// An event to append; `source` comes from whoever emits it, never from here.
#[derive(Debug, Clone, Default)]
pub struct NewEvent {
    pub kind: String,
    pub project: Option<String>,
    pub thread: Option<String>,
    pub payload: Value,
}

impl NewEvent {
    pub fn new(kind: impl Into<String>, payload: Value) -> Self {
        NewEvent {
            kind: kind.into(),
            payload,
            ..Default::default()
        }
    }
    pub fn thread(mut self, thread: impl Into<String>) -> Self {
        self.thread = Some(thread.into());
        self
    }
    pub fn project(mut self, project: impl Into<String>) -> Self {
        self.project = Some(project.into());
        self
    }
}

/// Published batches kept in the bus for slow listeners before they must catch up from the log
/// (at most `BUS_CAPACITY * PUBLISH_CHUNK` events, so memory stays bounded).
const BUS_CAPACITY: usize = 256;
/// Events in one published batch at most.
const PUBLISH_CHUNK: usize = 64;

/// Events committed together, published as one message so that a stream that wants them all can
/// send them as one shared buffer.
#[derive(Debug)]
pub struct Published {
    events: Vec<Arc<Event>>,
    sse: OnceLock<bytes::Bytes>,
}

impl Published {
    /// Never empty; ids ascending.
    pub fn events(&self) -> &[Arc<Event>] {
        &self.events
    }

    /// Every event of the batch as Server-Sent Events, made once and shared by every stream.
    pub fn sse(&self) -> &bytes::Bytes {
        self.sse.get_or_init(|| {
            let mut out = bytes::BytesMut::new();
            for event in &self.events {
                out.extend_from_slice(event.sse());
            }
            out.freeze()
        })
    }
}

/// The in-process bus. Cloneable; every clone publishes to and subscribes from the same channel.
#[derive(Clone)]
pub struct Bus {
    tx: broadcast::Sender<Arc<Published>>,
    latest: Arc<AtomicI64>,
}

impl Default for Bus {
    fn default() -> Self {
        Self::new()
    }
}

impl Bus {
    pub fn new() -> Self {
        let (tx, _) = broadcast::channel(BUS_CAPACITY);
        Bus {
            tx,
            latest: Arc::new(AtomicI64::new(0)),
        }
    }

    /// Called by the writer after a commit, in id order.
    pub(crate) fn publish(&self, events: Vec<Event>) {
        let mut events = events.into_iter().map(Arc::new).peekable();
        while events.peek().is_some() {
            let chunk: Vec<Arc<Event>> = events.by_ref().take(PUBLISH_CHUNK).collect();
            let last = chunk[chunk.len() - 1].id;
            self.latest.store(last, Ordering::Release);
            // No receivers is fine: the log has it.
            let _ = self.tx.send(Arc::new(Published {
                events: chunk,
                sse: OnceLock::new(),
            }));
        }
    }

    /// Seed the latest id from the log at start.
    pub(crate) fn set_latest(&self, id: i64) {
        self.latest.fetch_max(id, Ordering::AcqRel);
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Published>> {
        self.tx.subscribe()
    }

    /// The id of the newest committed event (0 when there is none).
    pub fn latest_id(&self) -> i64 {
        self.latest.load(Ordering::Acquire)
    }

    pub fn subscribers(&self) -> usize {
        self.tx.receiver_count()
    }
}

/// Why an event was refused before it was written.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EventError {
    #[error(
        "event type {0:?} must be <noun>.<past-verb>: lowercase words joined by dots, at most 64 characters"
    )]
    BadType(String),
    #[error("an event payload must be a JSON object")]
    PayloadNotObject,
    #[error("an event payload must be at most {max} bytes (this one is {size})")]
    PayloadTooLarge { size: usize, max: usize },
    #[error("{0}; events never carry credentials")]
    Secret(crate::kernel::redact::Finding),
}

/// `thread.started`, `ask.raised`, `device.revoked`: two or more lowercase words joined by dots.
pub fn valid_type(kind: &str) -> bool {
    kind.len() <= 64
        && kind.split('.').count() >= 2
        && kind.split('.').all(|word| {
            !word.is_empty()
                && word.starts_with(|c: char| c.is_ascii_lowercase())
                && word
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
}
