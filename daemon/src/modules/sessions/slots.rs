//! Concurrency slots (ADR 0030 section 12): how many subagents and teammates run at once, for
//! the whole machine and per project, enforced in the sessions layer so nothing routes around
//! them. A take with no room waits in a fair line (oldest first within a project, projects in
//! turn); every change is an event with the waiter's position.
//!
//! Subagents of Vyre's own sessions wait in the driver's PreToolUse callback hook on the Agent
//! and Task tools (the Switchboard's actor takes and gives back their slots); teammates take and
//! release theirs with the `sessions.slots.*` tools. The process cap (`sessions.max_live`) is
//! separate: it bounds memory, slots bound usage. Slots live in memory: a restart ends every
//! session, and with them every slot.

use std::collections::HashMap;
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::oneshot;

use crate::kernel::config::SlotsConfig;
use crate::kernel::events::NewEvent;
use crate::kernel::module::Ctx;

/// Subagents at once on this machine when `sessions.slots.subagent` is not set.
pub const DEFAULT_SUBAGENTS: u32 = 4;
/// Teammates at once on this machine when `sessions.slots.teammate` is not set.
pub const DEFAULT_TEAMMATES: u32 = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Subagent,
    Teammate,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Subagent => "subagent",
            Kind::Teammate => "teammate",
        }
    }
}

/// The limits in force, per kind: the machine's and, when set, each project's.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Limits {
    pub subagent: usize,
    pub teammate: usize,
    pub per_project_subagent: Option<usize>,
    pub per_project_teammate: Option<usize>,
}

impl Limits {
    pub fn from_config(c: &SlotsConfig) -> Limits {
        Limits {
            subagent: c.subagent.unwrap_or(DEFAULT_SUBAGENTS) as usize,
            teammate: c.teammate.unwrap_or(DEFAULT_TEAMMATES) as usize,
            per_project_subagent: c.per_project.subagent.map(|n| n as usize),
            per_project_teammate: c.per_project.teammate.map(|n| n as usize),
        }
    }
    fn whole(&self, kind: Kind) -> usize {
        match kind {
            Kind::Subagent => self.subagent,
            Kind::Teammate => self.teammate,
        }
    }
    fn per_project(&self, kind: Kind) -> Option<usize> {
        match kind {
            Kind::Subagent => self.per_project_subagent,
            Kind::Teammate => self.per_project_teammate,
        }
    }
}

/// A slot held or waited for.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
pub struct Entry {
    pub slot: String,
    pub kind: Kind,
    pub thread: Option<String>,
    pub project: Option<String>,
    /// When it was asked for (ms).
    pub since: i64,
}

/// The ledger itself: plain data, no I/O, so the fairness rules are tested on their own.
#[derive(Debug)]
pub struct Ledger {
    limits: Limits,
    held: Vec<Entry>,
    /// Waiters in arrival order.
    line: Vec<Entry>,
    /// The project served last, so the next grant goes to the next project in turn.
    last_served: Option<Option<String>>,
    /// Projects in the order they first asked: the turn goes round it.
    cycle: Vec<Option<String>>,
    next: u64,
}

impl Ledger {
    pub fn new(limits: Limits) -> Ledger {
        Ledger {
            limits,
            held: vec![],
            line: vec![],
            last_served: None,
            cycle: vec![],
            next: 0,
        }
    }

    fn fits(&self, e: &Entry) -> bool {
        let of_kind = self.held.iter().filter(|h| h.kind == e.kind);
        if of_kind.clone().count() >= self.limits.whole(e.kind) {
            return false;
        }
        match (self.limits.per_project(e.kind), &e.project) {
            (Some(limit), Some(p)) => {
                of_kind.filter(|h| h.project.as_ref() == Some(p)).count() < limit
            }
            _ => true,
        }
    }

    /// Ask for a slot: held at once (`None`), or waiting at this position.
    pub fn take(
        &mut self,
        kind: Kind,
        thread: Option<String>,
        project: Option<String>,
        now: i64,
    ) -> (String, Option<usize>) {
        self.next += 1;
        let e = Entry {
            slot: format!("slot-{}", self.next),
            kind,
            thread,
            project,
            since: now,
        };
        let slot = e.slot.clone();
        // Into the line, which is served at once as far as there is room: nobody who fits ever
        // waits, and nobody jumps a waiter who fits.
        if !self.cycle.contains(&e.project) {
            self.cycle.push(e.project.clone());
        }
        self.line.push(e);
        self.admit();
        if self.held.iter().any(|h| h.slot == slot) {
            return (slot, None);
        }
        let position = self.position(&slot);
        (slot, position)
    }

    /// Give a slot back, or stop waiting for it. The entry, if there was one.
    pub fn release(&mut self, slot: &str) -> Option<Entry> {
        if let Some(i) = self.held.iter().position(|h| h.slot == slot) {
            return Some(self.held.remove(i));
        }
        let i = self.line.iter().position(|w| w.slot == slot)?;
        Some(self.line.remove(i))
    }

    /// Every slot a thread holds or waits for (its session ended).
    pub fn release_thread(&mut self, thread: &str) -> Vec<Entry> {
        let mine = |e: &Entry| e.thread.as_deref() == Some(thread);
        let mut gone: Vec<Entry> = self.held.iter().filter(|e| mine(e)).cloned().collect();
        gone.extend(self.line.iter().filter(|e| mine(e)).cloned());
        self.held.retain(|e| !mine(e));
        self.line.retain(|e| !mine(e));
        gone
    }

    /// The line in the order it is served: projects in turn, starting after the one served
    /// last, oldest first within each.
    fn order(&self) -> Vec<&Entry> {
        let start = self
            .last_served
            .as_ref()
            .and_then(|last| self.cycle.iter().position(|p| p == last))
            .map_or(0, |i| i + 1);
        let mut projects: Vec<&Option<String>> = self.cycle.iter().collect();
        let n = projects.len();
        projects.rotate_left(start.min(n));
        projects.retain(|p| self.line.iter().any(|w| &w.project == *p));
        let mut queues: Vec<Vec<&Entry>> = projects
            .iter()
            .map(|p| self.line.iter().filter(|w| &w.project == *p).collect())
            .collect();
        let mut order = Vec::with_capacity(self.line.len());
        let mut depth = 0;
        while order.len() < self.line.len() {
            for q in &mut queues {
                if let Some(e) = q.get(depth) {
                    order.push(*e);
                }
            }
            depth += 1;
        }
        order
    }

    /// A waiter's place in the line among waiters of its kind (1 is next).
    pub fn position(&self, slot: &str) -> Option<usize> {
        let kind = self.line.iter().find(|w| w.slot == slot)?.kind;
        self.order()
            .into_iter()
            .filter(|w| w.kind == kind)
            .position(|w| w.slot == slot)
            .map(|i| i + 1)
    }

    /// Grant every waiter that now fits, in the line's order. The newly held entries.
    pub fn admit(&mut self) -> Vec<Entry> {
        let mut granted = vec![];
        loop {
            let next = self
                .order()
                .into_iter()
                .find(|w| self.fits(w))
                .map(|w| w.slot.clone());
            let Some(slot) = next else { break };
            let i = self
                .line
                .iter()
                .position(|w| w.slot == slot)
                .expect("in line");
            let e = self.line.remove(i);
            self.last_served = Some(e.project.clone());
            self.held.push(e.clone());
            granted.push(e);
        }
        // Forget projects with nobody waiting, but keep the turn's place.
        let (line, last) = (&self.line, &self.last_served);
        self.cycle
            .retain(|p| line.iter().any(|w| &w.project == p) || last.as_ref() == Some(p));
        granted
    }

    pub fn view(&self) -> View {
        View {
            limits: self.limits.clone(),
            held: self.held.clone(),
            waiting: self
                .line
                .iter()
                .map(|w| Waiting {
                    position: self.position(&w.slot).unwrap_or(0),
                    entry: w.clone(),
                })
                .collect(),
        }
    }
}

/// What `sessions.slots.list` shows.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct View {
    pub limits: Limits,
    pub held: Vec<Entry>,
    pub waiting: Vec<Waiting>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Waiting {
    #[serde(flatten)]
    pub entry: Entry,
    pub position: usize,
}

/// What a take gave.
pub struct Taken {
    pub slot: String,
    /// `None` when held at once; else the place in line, and a signal for when it is held.
    pub position: Option<usize>,
    pub granted: Option<oneshot::Receiver<()>>,
}

/// The ledger with its events and the signals of waiters: the handle the sessions module keeps
/// and the Switchboard reaches through the router.
pub struct Slots {
    ctx: Ctx,
    // std Mutex: bookkeeping only, never held across an await.
    inner: Mutex<Inner>,
}

struct Inner {
    ledger: Ledger,
    signals: HashMap<String, oneshot::Sender<()>>,
    /// The positions last announced, so only changes are events.
    announced: HashMap<String, usize>,
}

impl Slots {
    pub fn new(ctx: Ctx, limits: Limits) -> Slots {
        Slots {
            ctx,
            inner: Mutex::new(Inner {
                ledger: Ledger::new(limits),
                signals: HashMap::new(),
                announced: HashMap::new(),
            }),
        }
    }

    pub fn view(&self) -> View {
        self.inner.lock().expect("slots").ledger.view()
    }

    pub async fn take(&self, kind: Kind, thread: Option<String>, project: Option<String>) -> Taken {
        let (taken, events) = {
            let mut inner = self.inner.lock().expect("slots");
            let (slot, position) =
                inner
                    .ledger
                    .take(kind, thread.clone(), project.clone(), crate::now_ms());
            let granted = position.map(|_| {
                let (tx, rx) = oneshot::channel();
                inner.signals.insert(slot.clone(), tx);
                rx
            });
            let mut events = vec![];
            if position.is_none() {
                events.push((
                    "slot.taken",
                    json!({ "slot": slot, "kind": kind, "project": project, "waited_ms": 0 }),
                    thread.clone(),
                ));
            }
            events.extend(inner.moved());
            (
                Taken {
                    slot,
                    position,
                    granted,
                },
                events,
            )
        };
        self.announce(events).await;
        taken
    }

    /// Give a slot back (or stop waiting for it); whether there was one.
    pub async fn release(&self, slot: &str, reason: &str) -> bool {
        let events = {
            let mut inner = self.inner.lock().expect("slots");
            let Some(e) = inner.ledger.release(slot) else {
                return false;
            };
            inner.signals.remove(slot);
            inner.announced.remove(slot);
            let mut events = vec![released(&e, reason)];
            events.extend(inner.settle());
            events
        };
        self.announce(events).await;
        true
    }

    /// Everything a thread held or waited for: its session ended.
    pub async fn release_thread(&self, thread: &str, reason: &str) {
        let events = {
            let mut inner = self.inner.lock().expect("slots");
            let gone = inner.ledger.release_thread(thread);
            if gone.is_empty() {
                return;
            }
            let mut events = vec![];
            for e in &gone {
                inner.signals.remove(&e.slot);
                inner.announced.remove(&e.slot);
                events.push(released(e, reason));
            }
            events.extend(inner.settle());
            events
        };
        self.announce(events).await;
    }

    async fn announce(&self, events: Vec<(&'static str, serde_json::Value, Option<String>)>) {
        for (kind, payload, thread) in events {
            let mut event = NewEvent::new(kind, payload);
            if let Some(t) = thread {
                event = event.thread(t);
            }
            if let Err(e) = self.ctx.events().emit(event).await {
                tracing::warn!(kind, error = %e, "slot event not recorded");
            }
        }
    }
}

type Announcement = (&'static str, serde_json::Value, Option<String>);

fn released(e: &Entry, reason: &str) -> Announcement {
    (
        "slot.released",
        json!({ "slot": e.slot, "kind": e.kind, "project": e.project, "reason": reason }),
        e.thread.clone(),
    )
}

impl Inner {
    /// Admit whoever now fits, wake them, and say what moved.
    fn settle(&mut self) -> Vec<Announcement> {
        let now = crate::now_ms();
        let mut events = vec![];
        for e in self.ledger.admit() {
            self.announced.remove(&e.slot);
            if let Some(signal) = self.signals.remove(&e.slot) {
                let _ = signal.send(());
            }
            events.push((
                "slot.taken",
                json!({ "slot": e.slot, "kind": e.kind, "project": e.project, "waited_ms": now - e.since }),
                e.thread.clone(),
            ));
        }
        events.extend(self.moved());
        events
    }

    /// `slot.waiting` for every waiter whose position is new or changed.
    fn moved(&mut self) -> Vec<Announcement> {
        let view = self.ledger.view();
        let mut events = vec![];
        for w in view.waiting {
            if self.announced.get(&w.entry.slot) != Some(&w.position) {
                self.announced.insert(w.entry.slot.clone(), w.position);
                events.push((
                    "slot.waiting",
                    json!({ "slot": w.entry.slot, "kind": w.entry.kind, "project": w.entry.project, "position": w.position }),
                    w.entry.thread.clone(),
                ));
            }
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(subagent: usize, per_project: Option<usize>) -> Limits {
        Limits {
            subagent,
            teammate: 1,
            per_project_subagent: per_project,
            per_project_teammate: None,
        }
    }

    fn take(l: &mut Ledger, project: &str) -> (String, Option<usize>) {
        l.take(
            Kind::Subagent,
            Some(format!("t-{project}")),
            Some(project.to_string()),
            0,
        )
    }

    #[test]
    fn room_is_held_at_once_and_the_rest_wait_in_order() {
        let mut l = Ledger::new(limits(2, None));
        assert_eq!(take(&mut l, "a").1, None);
        assert_eq!(take(&mut l, "a").1, None);
        let (third, pos) = take(&mut l, "a");
        assert_eq!(pos, Some(1));
        let (fourth, pos) = take(&mut l, "a");
        assert_eq!(pos, Some(2));
        // Teammates are another pool.
        assert_eq!(l.take(Kind::Teammate, None, None, 0).1, None);
        assert!(l.admit().is_empty());
        l.release("slot-1").unwrap();
        let granted: Vec<String> = l.admit().into_iter().map(|e| e.slot).collect();
        assert_eq!(granted, vec![third]);
        assert_eq!(l.position(&fourth), Some(1));
        // Waiting can be given up too.
        assert!(l.release(&fourth).is_some());
        assert!(l.release(&fourth).is_none());
    }

    #[test]
    fn projects_take_turns_and_a_project_is_oldest_first() {
        let mut l = Ledger::new(limits(1, None));
        take(&mut l, "a"); // held
        let a2 = take(&mut l, "a").0;
        let a3 = take(&mut l, "a").0;
        let b1 = take(&mut l, "b").0;
        let c1 = take(&mut l, "c").0;
        // a was served last: b, c, then a's oldest, then a's next.
        assert_eq!(l.position(&b1), Some(1));
        assert_eq!(l.position(&c1), Some(2));
        assert_eq!(l.position(&a2), Some(3));
        assert_eq!(l.position(&a3), Some(4));
        let mut served = vec![];
        for _ in 0..4 {
            let held = l.view().held[0].slot.clone();
            l.release(&held);
            served.extend(l.admit().into_iter().map(|e| e.slot));
        }
        assert_eq!(served, vec![b1, c1, a2, a3]);
    }

    #[test]
    fn a_full_project_does_not_hold_up_another() {
        let mut l = Ledger::new(limits(3, Some(1)));
        assert_eq!(take(&mut l, "a").1, None);
        let (a2, pos) = take(&mut l, "a");
        assert_eq!(pos, Some(1), "a's own limit is 1");
        assert_eq!(take(&mut l, "b").1, None, "b goes ahead of a's waiter");
        assert_eq!(l.position(&a2), Some(1));
        assert_eq!(l.view().held.len(), 2);
    }

    #[test]
    fn a_thread_that_ends_gives_back_everything() {
        let mut l = Ledger::new(limits(1, None));
        take(&mut l, "a");
        let (b, _) = take(&mut l, "b");
        let gone = l.release_thread("t-a");
        assert_eq!(gone.len(), 1);
        assert_eq!(l.admit()[0].slot, b);
        assert_eq!(l.release_thread("t-b").len(), 1);
        assert!(l.view().held.is_empty() && l.view().waiting.is_empty());
    }
}
