//! The curator, the graph's only writer (spec 7.4): it reads the turns recall has read, after
//! where it stopped (`recall.turns`), finds what they name ([`super::extract`]) and keeps it
//! with the turn it came from. It runs when recall has read something new (`history.indexed`,
//! `recall.read`), a batch at a time, yielding between batches, off every hook's and tool's
//! path; a restart resumes from the cursor kept with the last batch.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::Notify;

use super::extract;
use super::facts::{self, Wrote};
use crate::kernel::events::NewEvent;
use crate::kernel::module::Ctx;
use crate::kernel::store::StoreError;

/// Turns read per batch.
const BATCH: u32 = 200;
/// A pause between batches, so a first pass over a long history leaves the machine to others.
const BREATHE: Duration = Duration::from_millis(20);
/// How a batch says recall's tool is not there (yet).
const NOT_YET: &str = "not yet: ";

#[derive(Clone)]
pub struct Curator {
    pub ctx: Ctx,
    pub wake: Arc<Notify>,
}

/// A turn as recall hands it on.
struct Turn {
    cursor: i64,
    thread: String,
    key: String,
    role: String,
    text: String,
    at: Option<i64>,
}

/// What one pass over new turns taught the graph, told once at its end.
#[derive(Default)]
struct Learned {
    kinds: BTreeMap<&'static str, u64>,
    threads: std::collections::BTreeSet<String>,
}

impl Curator {
    pub async fn run(self) {
        let stop = self.ctx.shutdown();
        let mut learned = Learned::default();
        let mut absent = Duration::from_millis(250);
        loop {
            let step = match self.batch(&mut learned).await {
                // Caught up: every turn read so far was read for the people named then.
                Ok(false) => self.new_people(&mut learned).await.map(|()| false),
                other => other,
            };
            match step {
                // recall or projects starts after memory (or is disabled): look again, less
                // often each time.
                Err(why) if why.starts_with(NOT_YET) => {
                    tracing::debug!(%why, "a module the curator reads is not serving yet");
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(absent) => {}
                        () = self.wake.notified() => {}
                    }
                    absent = (absent * 2).min(Duration::from_secs(60));
                    continue;
                }
                Ok(true) => {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(BREATHE) => {}
                    }
                    continue;
                }
                Ok(false) => {}
                Err(why) => {
                    tracing::warn!(%why, "the curator could not read recall's turns or the projects' people")
                }
            }
            self.tell(std::mem::take(&mut learned)).await;
            tokio::select! {
                () = stop.cancelled() => return,
                () = self.wake.notified() => {}
            }
        }
    }

    /// `memory.learned` for a whole pass (a first pass over a long history is one event, not
    /// one per batch).
    async fn tell(&self, learned: Learned) {
        let count: u64 = learned.kinds.values().sum();
        if count == 0 {
            return;
        }
        let said = NewEvent::new(
            "memory.learned",
            json!({ "count": count, "kinds": learned.kinds, "threads": learned.threads.len() }),
        );
        if let Err(e) = self.ctx.events().emit(said).await {
            tracing::debug!(error = %e, "memory.learned not recorded");
        }
    }

    /// One batch, what it taught added to `learned`: true when there may be more.
    async fn batch(&self, learned: &mut Learned) -> Result<bool, String> {
        let after = self
            .ctx
            .store()
            .read(facts::cursor)
            .await
            .map_err(|e| e.to_string())?;
        let read = self
            .ctx
            .call("recall.turns", json!({ "after": after, "limit": BATCH }))
            .await
            .map_err(|e| match &*e.code {
                "unknown_tool" => format!("{NOT_YET}{}", e.message),
                _ => e.message,
            })?;
        let turns: Vec<Turn> = read
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(turn_of)
            .collect();
        let Some(last) = turns.last().map(|t| t.cursor) else {
            return Ok(false);
        };
        let full = turns.len() as u32 >= BATCH;
        let people = self.people().await;
        // Finding is plain CPU work: off the runtime's threads.
        let found = tokio::task::spawn_blocking(move || {
            turns
                .into_iter()
                .map(|t| {
                    let mut f = extract::findings(&t.text, t.role == "user");
                    if let Some(names) = people.get(&t.thread) {
                        f.extend(extract::people(&t.text, names));
                    }
                    (t, f)
                })
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|e| e.to_string())?;
        self.keep(found, Some(last), learned).await?;
        Ok(full)
    }
}

impl Curator {
    /// Write what `found` in its turns, counted in `learned`, and move the cursor to `cursor`
    /// in the same write when given.
    async fn keep(
        &self,
        found: Vec<(Turn, Vec<extract::Finding>)>,
        cursor: Option<i64>,
        learned: &mut Learned,
    ) -> Result<(), String> {
        let now = crate::now_ms();
        let (kinds, threads) = self
            .ctx
            .store()
            .write(move |tx| {
                let mut kinds: BTreeMap<&'static str, u64> = BTreeMap::new();
                let mut threads = std::collections::BTreeSet::new();
                for (turn, findings) in &found {
                    for f in findings {
                        match facts::write(tx.conn(), f, &turn.thread, &turn.key, turn.at, now)? {
                            Wrote::Again => {}
                            Wrote::New { id, replaces } => {
                                *kinds.entry(f.kind).or_default() += 1;
                                threads.insert(turn.thread.clone());
                                if let Some(old) = replaces {
                                    let said = NewEvent::new(
                                        "memory.superseded",
                                        json!({ "fact": old, "by": id, "subject": f.subject }),
                                    )
                                    .thread(turn.thread.clone());
                                    // A subject the store takes for a credential is not said.
                                    if let Err(StoreError::Refused(_)) = tx.emit(said) {
                                        tx.emit(
                                            NewEvent::new(
                                                "memory.superseded",
                                                json!({ "fact": old, "by": id }),
                                            )
                                            .thread(turn.thread.clone()),
                                        )?;
                                    }
                                }
                            }
                        }
                    }
                }
                if let Some(last) = cursor {
                    facts::set_cursor(tx.conn(), last)?;
                }
                Ok((kinds, threads))
            })
            .await
            .map_err(|e| e.to_string())?;
        for (kind, n) in kinds {
            *learned.kinds.entry(kind).or_default() += n;
        }
        learned.threads.extend(threads);
        Ok(())
    }

    /// A person added to a project's file after its threads were read: those threads are read
    /// again for the new names alone (what they said of the others is known already), so the
    /// graph does not wait for them to be mentioned anew. A project seen for the first time is
    /// noted as read for the names it has: its turns are read for them as they come.
    async fn new_people(&self, learned: &mut Learned) -> Result<(), String> {
        let projects = self
            .ctx
            .call("projects.list", json!({}))
            .await
            .map_err(|e| match &*e.code {
                "unknown_tool" => format!("{NOT_YET}{}", e.message),
                _ => e.message,
            })?;
        for p in projects.as_array().into_iter().flatten() {
            let Some(project) = p["name"].as_str().map(String::from) else {
                continue;
            };
            let names = names_of(p);
            let q = project.clone();
            let read = self
                .ctx
                .store()
                .read(move |c| facts::people_read(c, &q))
                .await
                .map_err(|e| e.to_string())?;
            let added: Vec<String> = match &read {
                Some(before) => names
                    .iter()
                    .filter(|n| !before.contains(n))
                    .cloned()
                    .collect(),
                None => vec![],
            };
            if read.as_ref() == Some(&names) {
                continue;
            }
            if !added.is_empty() {
                let threads = self
                    .ctx
                    .call("projects.threads", json!({ "project": project }))
                    .await
                    .map_err(|e| e.message)?;
                for thread in threads
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    let Ok(said) = self
                        .ctx
                        .call("recall.thread", json!({ "thread": thread }))
                        .await
                    else {
                        continue;
                    };
                    let (thread, names) = (thread.to_string(), added.clone());
                    let found = tokio::task::spawn_blocking(move || {
                        said["turns"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            // A live turn not in the transcript yet is read when recall reads it.
                            .filter(|t| t["live"] != true)
                            .filter_map(|t| {
                                let turn = Turn {
                                    cursor: 0,
                                    thread: thread.clone(),
                                    key: t["key"].as_str()?.to_string(),
                                    role: t["role"].as_str().unwrap_or("").to_string(),
                                    text: t["text"].as_str().unwrap_or("").to_string(),
                                    at: t["at"].as_i64(),
                                };
                                let f = extract::people(&turn.text, &names);
                                (!f.is_empty()).then_some((turn, f))
                            })
                            .collect::<Vec<_>>()
                    })
                    .await
                    .map_err(|e| e.to_string())?;
                    self.keep(found, None, learned).await?;
                }
            }
            self.ctx
                .store()
                .write(move |tx| facts::set_people_read(tx.conn(), &project, &names))
                .await
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// The people each thread's projects name (project.json's `people`), by thread; only the
    /// threads of projects that name anyone. A project's people are looked for in its own
    /// threads only.
    async fn people(&self) -> HashMap<String, Vec<String>> {
        let mut out: HashMap<String, Vec<String>> = HashMap::new();
        let Ok(projects) = self.ctx.call("projects.list", json!({})).await else {
            return out;
        };
        for p in projects.as_array().into_iter().flatten() {
            let names = names_of(p);
            let Some(project) = p["name"].as_str().filter(|_| !names.is_empty()) else {
                continue;
            };
            let Ok(threads) = self
                .ctx
                .call("projects.threads", json!({ "project": project }))
                .await
            else {
                continue;
            };
            for t in threads
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                let have = out.entry(t.to_string()).or_default();
                for n in &names {
                    if !have.contains(n) {
                        have.push(n.clone());
                    }
                }
            }
        }
        out
    }
}

/// The names of the people a project (as `projects.list` gives it) names.
fn names_of(project: &Value) -> Vec<String> {
    project["people"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x["name"].as_str().map(String::from))
        .collect()
}

fn turn_of(v: &Value) -> Option<Turn> {
    Some(Turn {
        cursor: v["cursor"].as_i64()?,
        thread: v["thread"].as_str()?.to_string(),
        key: v["key"].as_str()?.to_string(),
        role: v["role"].as_str().unwrap_or("").to_string(),
        text: v["text"].as_str().unwrap_or("").to_string(),
        at: v["at"].as_i64(),
    })
}
