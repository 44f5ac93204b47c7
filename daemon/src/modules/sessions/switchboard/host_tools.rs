//! Vyre's tools for a session, served by vyred itself (issue 26): what the harness plugin's
//! `vyre mcp` helper used to list and forward, now without a process per session. The session
//! is the caller, bound by vyred to its thread, exactly as on its own socket: PERSON_ONLY tools
//! are neither listed nor callable, and every call takes the registry's one path.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::Switchboard;
use super::lean_schema::lean;
use crate::kernel::contracts::harness::unchecked;
use crate::kernel::contracts::harness::{MCP_SERVER, mcp_name};
use crate::kernel::contracts::provider::{HostAnswer, HostCall, HostHooks, HostTool, HostTools};
use crate::kernel::tools::Caller;

/// The tools a session is listed, and their Vyre names by MCP name: made once and shared, made
/// again only when the tools a session may call change (a module started or stopped).
pub(super) struct HostList {
    /// The Vyre names, sorted: what tells whether the list is still right.
    key: Vec<String>,
    tools: Arc<Vec<HostTool>>,
    names: Arc<HashMap<String, String>>,
}

impl Switchboard {
    /// The tools thread `thread`'s session may call, and how it calls them.
    pub(super) fn host_tools(&self, thread: &str) -> HostTools {
        let listed = Caller::Session {
            thread: Some(thread.to_string()),
            pid: None,
        };
        // PERSON_ONLY tools are listed only to persons already; said again here. Vyre's
        // plumbing stays callable on the session's socket, not offered to its model.
        let mut specs: Vec<_> = self
            .ctx
            .tools_for(&listed)
            .into_iter()
            .filter(|spec| !spec.person_only && spec.for_models)
            .collect();
        specs.sort_by(|a, b| a.name.cmp(&b.name));
        let key: Vec<String> = specs.iter().map(|spec| spec.name.clone()).collect();
        let list = {
            let mut cached = self.host_list.lock().expect("host list");
            match cached.as_ref().filter(|l| l.key == key) {
                Some(list) => list.clone(),
                None => {
                    let list = Arc::new(HostList {
                        tools: Arc::new(
                            specs
                                .iter()
                                .map(|spec| HostTool {
                                    name: mcp_name(&spec.name),
                                    description: spec.description.clone(),
                                    input_schema: match spec.input_tree() {
                                        object @ Value::Object(_) => lean(object),
                                        _ => Value::Object(Default::default()),
                                    },
                                })
                                .collect(),
                        ),
                        names: Arc::new(
                            key.iter()
                                .map(|name| (mcp_name(name), name.clone()))
                                .collect(),
                        ),
                        key,
                    });
                    *cached = Some(list.clone());
                    list
                }
            }
        };
        let (tools, names) = (list.tools.clone(), list.names.clone());
        let hooks = self.hooks(thread);
        let ctx = self.ctx.clone();
        let thread = thread.to_string();
        HostTools {
            server: MCP_SERVER.to_string(),
            tools,
            hooks: Some(hooks),
            call: Arc::new(move |call: HostCall| {
                let (ctx, names, thread) = (ctx.clone(), names.clone(), thread.clone());
                Box::pin(async move {
                    let Some(tool) = names.get(&call.name) else {
                        return HostAnswer {
                            text: format!("Vyre has no tool {} for this session", call.name),
                            is_error: true,
                        };
                    };
                    if !call.input.is_object() {
                        return HostAnswer {
                            text: "a tool's input must be a JSON object (invalid_input)".into(),
                            is_error: true,
                        };
                    }
                    let caller = Caller::Session {
                        thread: Some(thread),
                        pid: call.pid,
                    };
                    match ctx.call_as(&caller, tool, call.input).await {
                        Ok(data) => HostAnswer {
                            text: serde_json::to_string_pretty(&data)
                                .unwrap_or_else(|_| data.to_string()),
                            is_error: false,
                        },
                        // The model reads the refusal and its reason (`person_only` ...).
                        Err(e) => HostAnswer {
                            text: format!("{} ({})", e.message, e.code),
                            is_error: true,
                        },
                    }
                })
            }),
        }
    }

    /// The harness's hooks for thread `thread` (a prompt's memory, lessons and owed brief; the
    /// floor before a tool; a hand-over at a turn's end), asked as the session, as `vyre hook`
    /// asked them on the session's socket. What only adds to a session is left out when the
    /// harness says nothing, cannot be asked or is slow; PreToolUse then denies, saying why.
    fn hooks(&self, thread: &str) -> HostHooks {
        let ctx = self.ctx.clone();
        let thread = thread.to_string();
        Arc::new(move |event: &'static str, input: Value, pid: Option<i32>| {
            let (ctx, thread) = (ctx.clone(), thread.clone());
            Box::pin(async move {
                let caller = Caller::Session {
                    thread: Some(thread),
                    pid,
                };
                let body = serde_json::json!({ "event": event, "input": input, "pid": pid });
                let fails_closed = event == "PreToolUse";
                let patience = if fails_closed {
                    FLOOR_PATIENCE
                } else {
                    PATIENCE
                };
                let asked = ctx.call_as(&caller, "harness.hook", body);
                match tokio::time::timeout(patience, asked).await {
                    Ok(Ok(answer)) => Some(answer["output"].clone()).filter(|o| !o.is_null()),
                    Ok(Err(e)) if fails_closed => Some(unchecked(&e.to_string())),
                    Err(_) if fails_closed => Some(unchecked(&format!(
                        "vyred did not answer within {} s",
                        patience.as_secs()
                    ))),
                    Ok(Err(e)) => {
                        tracing::debug!("the harness's {event} was refused: {e}");
                        None
                    }
                    Err(_) => None,
                }
            })
        })
    }
}

/// As `vyre hook`'s patience: memory, a brief and a hand-over only add to a session, never hold
/// it up long.
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(3);
/// As `vyre hook`'s for the floor, well inside the hook's 10 s in the CLI.
const FLOOR_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);
