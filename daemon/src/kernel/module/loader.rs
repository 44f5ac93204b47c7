//! The loader: validate every manifest, keep the modules meant for this role and config, order
//! them by `requires`, and start each one. A module that cannot start, for whatever reason, is
//! disabled with the reason and vyred carries on.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde::Serialize;

use super::{Ctx, Health, Manifest, Module};
use crate::kernel::Kernel;
use crate::kernel::events::NewEvent;

/// How long a module's start may take before it is disabled.
const START_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModuleState {
    Starting,
    Started,
    /// Not meant to run here (another role, or turned off in config).
    Skipped,
    /// Meant to run, but could not (bad manifest, missing requirement, failed start, panic).
    Disabled,
}

/// One module as `vyre status` shows it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ModuleStatus {
    pub name: String,
    pub version: Option<String>,
    pub state: ModuleState,
    /// Why it is skipped or disabled.
    pub reason: Option<String>,
    pub tools: Vec<String>,
}

struct Row {
    name: String,
    manifest: Option<Arc<Manifest>>,
    health: Health,
    state: ModuleState,
    reason: Option<String>,
}

/// Every module vyred knows about and how it is doing. Cloneable.
#[derive(Clone, Default)]
pub struct ModuleTable {
    // std RwLock: short reads for status, writes only while loading.
    rows: Arc<RwLock<Vec<Row>>>,
}

impl ModuleTable {
    pub fn snapshot(&self) -> Vec<ModuleStatus> {
        self.rows
            .read()
            .expect("module table")
            .iter()
            .map(|row| {
                let disabled = row.health.disabled_reason();
                let (state, reason) = match (row.state, disabled) {
                    (ModuleState::Skipped, _) => (ModuleState::Skipped, row.reason.clone()),
                    (_, Some(reason)) => (ModuleState::Disabled, Some(reason)),
                    (state, None) => (state, row.reason.clone()),
                };
                ModuleStatus {
                    name: row.name.clone(),
                    version: row.manifest.as_ref().map(|m| m.version.clone()),
                    state,
                    reason,
                    tools: row
                        .manifest
                        .as_ref()
                        .map(|m| m.does.tools.clone())
                        .unwrap_or_default(),
                }
            })
            .collect()
    }

    fn push(&self, row: Row) -> usize {
        let mut rows = self.rows.write().expect("module table");
        rows.push(row);
        rows.len() - 1
    }

    fn set(&self, i: usize, state: ModuleState, reason: Option<String>) {
        let mut rows = self.rows.write().expect("module table");
        rows[i].state = state;
        rows[i].reason = reason.clone();
        if state == ModuleState::Disabled
            && let Some(reason) = reason
        {
            rows[i].health.disable(reason);
        }
    }

    fn state(&self, name: &str) -> Option<ModuleState> {
        let rows = self.rows.read().expect("module table");
        rows.iter()
            .find(|r| r.name == name)
            .map(|r| match r.health.disabled_reason() {
                Some(_) if r.state != ModuleState::Skipped => ModuleState::Disabled,
                _ => r.state,
            })
    }
}

/// A module to start: its row in the table, its manifest, and itself.
type Candidate = (usize, Arc<Manifest>, Arc<dyn Module>);

/// Validate, order and start `modules`. Returns when each has started or been disabled.
pub async fn load_all(kernel: &Kernel, modules: Vec<Arc<dyn Module>>) {
    let table = kernel.modules().clone();
    let role = kernel.role();
    let disabled_in_config: BTreeSet<&str> = kernel
        .config()
        .config
        .modules
        .disable
        .iter()
        .map(String::as_str)
        .collect();

    // 1. Manifests, role and config.
    let mut candidates: BTreeMap<String, Candidate> = BTreeMap::new();
    for module in modules {
        let parsed = Manifest::parse(module.manifest()).and_then(|m| {
            if m.name == module.name() {
                Ok(m)
            } else {
                Err(format!("its manifest names it {:?}", m.name))
            }
        });
        let manifest = match parsed {
            Ok(m) => Arc::new(m),
            Err(reason) => {
                let reason = format!("invalid module.json: {reason}");
                report_disabled(kernel, module.name(), &reason).await;
                let i = table.push(Row {
                    name: module.name().to_string(),
                    manifest: None,
                    health: Health::default(),
                    state: ModuleState::Disabled,
                    reason: None,
                });
                table.set(i, ModuleState::Disabled, Some(reason));
                continue;
            }
        };
        let name = manifest.name.clone();
        if candidates.contains_key(&name) || table.state(&name).is_some() {
            tracing::error!(module = %name, "two modules share this name; the second is ignored");
            continue;
        }
        let skip = if !manifest.roles.contains(&role) {
            Some(format!("not for role {role}"))
        } else if disabled_in_config.contains(name.as_str()) {
            Some("disabled in config.json (modules.disable)".to_string())
        } else {
            None
        };
        let i = table.push(Row {
            name: name.clone(),
            manifest: Some(manifest.clone()),
            health: Health::default(),
            state: if skip.is_some() {
                ModuleState::Skipped
            } else {
                ModuleState::Starting
            },
            reason: skip.clone(),
        });
        if skip.is_none() {
            candidates.insert(name, (i, manifest, module));
        }
    }

    // 2. Order by requires; cycles and missing requirements disable the modules involved.
    let (order, problems) = order(
        &candidates
            .iter()
            .map(|(name, (_, m, _))| (name.clone(), m.requires.clone()))
            .collect(),
    );
    for (name, reason) in problems {
        let (i, _, _) = &candidates[&name];
        table.set(*i, ModuleState::Disabled, Some(reason.clone()));
        report_disabled(kernel, &name, &reason).await;
    }

    // 3. Start in order; a module whose requirement did not start is not started either.
    for name in order {
        let (i, manifest, module) = candidates[&name].clone();
        if let Some(missing) = manifest
            .requires
            .iter()
            .find(|r| table.state(r) != Some(ModuleState::Started))
        {
            let reason = format!("requires {missing}, which did not start");
            table.set(i, ModuleState::Disabled, Some(reason.clone()));
            report_disabled(kernel, &name, &reason).await;
            continue;
        }
        let health = table.rows.read().expect("module table")[i].health.clone();
        let ctx = Ctx::new(kernel.clone(), manifest, health);
        let started = tokio::time::timeout(START_TIMEOUT, tokio::spawn(module.start(ctx))).await;
        let failure = match started {
            Ok(Ok(Ok(()))) => None,
            Ok(Ok(Err(e))) => Some(format!("start failed: {e}")),
            Ok(Err(join)) if join.is_panic() => Some(format!(
                "start panicked: {}",
                crate::kernel::tools::panic_message(join.into_panic())
            )),
            Ok(Err(join)) => Some(format!("start was cancelled: {join}")),
            Err(_) => Some(format!(
                "start took longer than {}s",
                START_TIMEOUT.as_secs()
            )),
        };
        match failure {
            None => {
                table.set(i, ModuleState::Started, None);
                tracing::info!(module = %name, "module started");
            }
            Some(reason) => {
                table.set(i, ModuleState::Disabled, Some(reason.clone()));
                report_disabled(kernel, &name, &reason).await;
            }
        }
    }
}

async fn report_disabled(kernel: &Kernel, name: &str, reason: &str) {
    tracing::error!(module = %name, %reason, "module disabled");
    let event = NewEvent::new(
        "module.disabled",
        serde_json::json!({ "module": name, "reason": reason }),
    );
    if let Err(e) = kernel.store().write(move |tx| tx.emit(event)).await {
        tracing::warn!(error = %e, "cannot record module.disabled");
    }
}

/// A start order where every module comes after what it requires, and the modules that cannot
/// be ordered with the reason (a missing requirement, or a cycle).
pub(crate) fn order(
    requires: &BTreeMap<String, Vec<String>>,
) -> (Vec<String>, Vec<(String, String)>) {
    let mut problems = Vec::new();
    let mut usable: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, reqs) in requires {
        usable.insert(name, reqs.iter().map(String::as_str).collect());
    }
    // Drop modules whose requirement is not there, and then those that require them.
    loop {
        let missing: Vec<(String, String)> = usable
            .iter()
            .filter_map(|(name, reqs)| {
                reqs.iter()
                    .find(|r| !usable.contains_key(**r))
                    .map(|r| (name.to_string(), r.to_string()))
            })
            .collect();
        if missing.is_empty() {
            break;
        }
        for (name, req) in missing {
            usable.remove(name.as_str());
            let why = if requires.contains_key(&req) {
                format!("requires {req}, which cannot start")
            } else {
                format!("requires {req}, which is not available for this role")
            };
            problems.push((name, why));
        }
    }
    // Kahn's algorithm; what remains is in or behind a cycle.
    let mut order = Vec::new();
    let mut done: BTreeSet<&str> = BTreeSet::new();
    loop {
        let ready: Vec<&str> = usable
            .iter()
            .filter(|(name, reqs)| !done.contains(*name) && reqs.iter().all(|r| done.contains(r)))
            .map(|(name, _)| *name)
            .collect();
        if ready.is_empty() {
            break;
        }
        for name in ready {
            done.insert(name);
            order.push(name.to_string());
        }
    }
    for name in usable.keys().filter(|n| !done.contains(*n)) {
        let cycle = find_cycle(&usable, name, &done);
        problems.push((name.to_string(), cycle));
    }
    (order, problems)
}

fn find_cycle(graph: &BTreeMap<&str, Vec<&str>>, start: &str, done: &BTreeSet<&str>) -> String {
    let mut path = vec![start];
    let mut at = start;
    loop {
        let Some(next) = graph[at].iter().find(|r| !done.contains(**r)) else {
            return "requires a module that cannot start".into();
        };
        if let Some(pos) = path.iter().position(|p| p == next) {
            let mut cycle: Vec<&str> = path[pos..].to_vec();
            cycle.push(next);
            return if pos == 0 {
                format!("requires cycle: {}", cycle.join(" -> "))
            } else {
                format!(
                    "requires {}, which is in a cycle: {}",
                    path[1],
                    cycle.join(" -> ")
                )
            };
        }
        path.push(next);
        at = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &[&str])]) -> BTreeMap<String, Vec<String>> {
        edges
            .iter()
            .map(|(n, r)| (n.to_string(), r.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn orders_by_requires() {
        let (order, problems) = order(&graph(&[
            ("c", &["b"]),
            ("b", &["a"]),
            ("a", &[]),
            ("d", &["a", "c"]),
        ]));
        assert!(problems.is_empty());
        let pos = |n: &str| order.iter().position(|x| x == n).unwrap();
        assert!(pos("a") < pos("b") && pos("b") < pos("c") && pos("c") < pos("d"));
    }

    #[test]
    fn reports_missing_and_cycles() {
        let (order, problems) = order(&graph(&[
            ("a", &[]),
            ("b", &["ghost"]),
            ("c", &["b"]),
            ("x", &["y"]),
            ("y", &["x"]),
            ("z", &["x"]),
        ]));
        assert_eq!(order, vec!["a"]);
        let why: BTreeMap<_, _> = problems.into_iter().collect();
        assert_eq!(
            why["b"],
            "requires ghost, which is not available for this role"
        );
        assert_eq!(why["c"], "requires b, which cannot start");
        assert_eq!(why["x"], "requires cycle: x -> y -> x");
        assert_eq!(why["y"], "requires cycle: y -> x -> y");
        assert!(why["z"].contains("cycle: x -> y -> x"), "{}", why["z"]);
    }
}
